//! `trine text-index`: creates the full-text index on the text field, or
//! upgrades an existing one — to ASCII folding (`--ascii-folding`), to a
//! Snowball stemmer (`--stemmer LANG`, or `--stemmer none` to stop
//! stemming) — never silently. The upgrade rebuilds the index in place — no
//! point changes — and then re-encodes the sparse vectors whose tokens the
//! change alters (those of non-ASCII texts for folding alone; every point
//! for a stemmer), so that the sparse encoding normalises as the index
//! does. Re-running it is safe and re-encodes again: points a writer stored
//! with the old normalisation meanwhile are fixed by a second run.

use std::process::ExitCode;

use trine_core::{Fold, Language};
use trine_store::Scan;

use crate::backfill::{self, Pass};
use crate::{CmdResult, Config, open_store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Upgrade the index to fold diacritics to ASCII (`sedinta` finds
    /// `ședința`): rebuild it in place, then re-encode the sparse vectors of
    /// non-ASCII texts
    #[arg(long)]
    pub ascii_folding: bool,
    /// Set the index's Snowball stemmer (`english`, `fr`, ...; `none` stops
    /// stemming) so that inflected forms meet (`meetings` finds
    /// `meeting`): rebuild it in place, then re-encode every sparse vector
    #[arg(long, value_name = "LANG", value_parser = parse_stemmer)]
    pub stemmer: Option<Stemmer>,
    /// Points read and re-encoded per batch during an upgrade
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,
}

/// What `--stemmer` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stemmer {
    None,
    Snowball(Language),
}

fn parse_stemmer(raw: &str) -> Result<Stemmer, String> {
    trine_core::fold::parse_stemmer(raw).map(|s| s.map_or(Stemmer::None, Stemmer::Snowball))
}

impl Args {
    /// The normalisation the index is to have, from the one it has (`None`:
    /// no index yet, made with `new`: trine's default with the configured
    /// stemmer) and what was asked.
    fn target(&self, present: Option<Fold>, new: Fold) -> Fold {
        let base = present.unwrap_or(new);
        let ascii = base.ascii_folding() || self.ascii_folding;
        let stemmer = match self.stemmer {
            None => base.stemmer(),
            Some(Stemmer::None) => None,
            Some(Stemmer::Snowball(language)) => Some(language),
        };
        Fold::of_index(ascii, stemmer)
    }
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let store = open_store(config).await?;
    let field = &config.payload.text;
    let name = store.collection().to_string();
    let info = store.info().await?;
    let present = info
        .as_ref()
        .and_then(|i| i.text_index.as_ref())
        .map(|t| t.fold());
    let new = Fold::default().with_stemmer(config.lexical.stemmer);
    if !args.ascii_folding && args.stemmer.is_none() {
        match present {
            None => {
                store.create_text_index(new).await?;
                println!(
                    "created the full-text index on `{field}` of `{name}` ({})",
                    new.name()
                );
            }
            Some(fold) => {
                println!(
                    "the full-text index on `{field}` of `{name}` is already present ({})",
                    fold.name()
                );
                if !fold.ascii_folding() {
                    println!(
                        "it does not fold diacritics (`sedinta` does not find `ședința`): run \
                         `trine text-index --ascii-folding` to upgrade it"
                    );
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }

    let target = args.target(present, new);
    let rebuilt = store.create_text_index(target).await?;
    println!(
        "{} the full-text index on `{field}` of `{name}` with {}",
        match (present, rebuilt) {
            (None, _) => "created",
            (Some(_), true) => "rebuilt",
            (Some(_), false) => "kept",
        },
        target.name()
    );
    let sparse = info.as_ref().is_some_and(|i| i.sparse_idf);
    if !sparse {
        println!("`{name}` has no sparse vector space: nothing to re-encode");
        return Ok(ExitCode::SUCCESS);
    }
    // Folding changes only the tokens of non-ASCII texts; a stemmer, any.
    let only_non_ascii = args.stemmer.is_none();
    let points = store.info().await?.map_or(0, |i| i.points);
    let pass = Pass {
        scope: Scan::All,
        fold: target,
        batch: usize::from(args.batch),
        goal: points,
        only_non_ascii,
    };
    let done = backfill::encode(store.as_ref(), &pass).await?;
    println!(
        "re-encoded the sparse vectors of {} of {} point(s){}; searches and writes of running \
         services follow the new index within 30 s — run this again after that to re-encode \
         what they wrote meanwhile",
        done.encoded,
        done.read,
        if only_non_ascii {
            " (those with non-ASCII text)"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ascii_folding: bool, stemmer: Option<&str>) -> Args {
        Args {
            ascii_folding,
            stemmer: stemmer.map(|s| parse_stemmer(s).expect("a stemmer")),
            batch: 256,
        }
    }

    #[test]
    fn the_target_keeps_what_is_not_asked() {
        let en = Some(Language::English);
        let fr = Some(Language::French);
        let table: &[(Option<Fold>, bool, Option<&str>, Fold)] = &[
            // present, --ascii-folding, --stemmer, target
            (None, false, None, Fold::ASCII),
            (None, false, Some("fr"), Fold::ASCII.with_stemmer(fr)),
            (Some(Fold::CASE), false, None, Fold::CASE),
            (Some(Fold::CASE), true, None, Fold::ASCII),
            (
                Some(Fold::CASE),
                false,
                Some("english"),
                Fold::CASE.with_stemmer(en),
            ),
            (
                Some(Fold::ASCII.with_stemmer(en)),
                true,
                None,
                Fold::ASCII.with_stemmer(en),
            ),
            (
                Some(Fold::ASCII.with_stemmer(en)),
                false,
                Some("none"),
                Fold::ASCII,
            ),
            (
                Some(Fold::ASCII.with_stemmer(en)),
                false,
                Some("FR"),
                Fold::ASCII.with_stemmer(fr),
            ),
        ];
        for (present, ascii, stemmer, want) in table {
            let got = args(*ascii, *stemmer).target(*present, Fold::ASCII);
            assert_eq!(got, *want, "{present:?} with {ascii} {stemmer:?}");
        }
    }

    #[test]
    fn an_unknown_language_says_which_are_known() {
        let err = parse_stemmer("klingon").expect_err("unknown");
        assert!(err.contains("english"), "{err}");
    }
}

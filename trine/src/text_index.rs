//! `trine text-index`: creates the full-text index on the text field, or
//! upgrades an existing one to ASCII folding (`--ascii-folding`), never
//! silently. The upgrade rebuilds the index in place — no point changes —
//! and then re-encodes the sparse vectors of the points whose text is not
//! plain ASCII, so that the sparse encoding folds as the index does (ASCII
//! text encodes the same under both folds). Re-running it is safe and
//! re-encodes again: points a writer stored with the old fold meanwhile
//! are fixed by a second run.

use std::process::ExitCode;

use trine_core::Fold;
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
    /// Points read and re-encoded per batch during an upgrade
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let store = open_store(config).await?;
    let field = &config.payload.text;
    let name = store.collection().to_string();
    let info = store.info().await?;
    let present = info.as_ref().and_then(|i| i.text_index.clone());
    if !args.ascii_folding {
        match present {
            None => {
                store.create_text_index(Fold::default()).await?;
                println!(
                    "created the full-text index on `{field}` of `{name}` ({})",
                    Fold::default().name()
                );
            }
            Some(t) if !t.ascii_folding => println!(
                "the full-text index on `{field}` of `{name}` is already present; it does not \
                 fold diacritics (`sedinta` does not find `ședința`): run `trine text-index \
                 --ascii-folding` to upgrade it"
            ),
            Some(_) => println!(
                "the full-text index on `{field}` of `{name}` is already present ({})",
                Fold::Ascii.name()
            ),
        }
        return Ok(ExitCode::SUCCESS);
    }

    let rebuilt = store.create_text_index(Fold::Ascii).await?;
    println!(
        "{} the full-text index on `{field}` of `{name}` with {}",
        match (&present, rebuilt) {
            (None, _) => "created",
            (Some(_), true) => "rebuilt",
            (Some(_), false) => "kept",
        },
        Fold::Ascii.name()
    );
    let sparse = info.as_ref().is_some_and(|i| i.sparse_idf);
    if !sparse {
        println!("`{name}` has no sparse vector space: nothing to re-encode");
        return Ok(ExitCode::SUCCESS);
    }
    let points = store.info().await?.map_or(0, |i| i.points);
    let pass = Pass {
        scope: Scan::All,
        fold: Fold::Ascii,
        batch: usize::from(args.batch),
        goal: points,
        only_non_ascii: true,
    };
    let done = backfill::encode(store.as_ref(), &pass).await?;
    println!(
        "re-encoded the sparse vectors of {} of {} point(s) (those with non-ASCII text); \
         searches and writes of running services follow the new fold within 30 s — run this \
         again after that to re-encode what they wrote meanwhile",
        done.encoded, done.read
    );
    Ok(ExitCode::SUCCESS)
}

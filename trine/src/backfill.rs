//! `trine sparse-backfill`: gives every point of a populated collection its
//! sparse encoding (scroll + update vectors; nothing is re-embedded).
//! Idempotent and resumable: it only reads points that lack the encoding.
//! The encoding folds as the collection's text index does.

use std::io::IsTerminal;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use trine_core::Fold;
use trine_core::sparse::encode_text;
use trine_store::{Scan, Store, StoreError};

use crate::{CmdResult, Config, collection_fold, open_store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Points read and updated per batch
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,
    /// Stop after this many points (run again to continue)
    #[arg(long)]
    pub max_points: Option<u64>,
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let store = open_store(config).await?;
    let missing = store.count_missing_sparse().await?;
    if missing == 0 {
        println!(
            "every point of `{}` has its sparse encoding: nothing to do",
            store.collection()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let fold = collection_fold(store.as_ref()).await?;
    let goal = args.max_points.map_or(missing, |m| m.min(missing));
    let pass = Pass {
        scope: Scan::MissingSparse,
        fold,
        batch: usize::from(args.batch),
        goal,
        only_non_ascii: false,
    };
    let done = encode(store.as_ref(), &pass).await?.encoded;
    let left = store.count_missing_sparse().await?;
    println!(
        "encoded {done} point(s) of `{}`; {left} still without a sparse encoding{}",
        store.collection(),
        if left > 0 {
            ": run `trine sparse-backfill` again"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// One pass of sparse encoding over the points of `scope`.
pub struct Pass {
    pub scope: Scan,
    pub fold: Fold,
    pub batch: usize,
    /// Stop after reading this many points.
    pub goal: u64,
    /// Encode only the points whose text is not plain ASCII (the only ones a
    /// change of fold changes).
    pub only_non_ascii: bool,
}

/// What a pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    pub read: u64,
    pub encoded: u64,
}

/// Reads the points of `pass.scope` page by page and writes each its sparse
/// encoding under `pass.fold`, with a progress bar on a terminal.
pub async fn encode(store: &dyn Store, pass: &Pass) -> Result<Encoded, StoreError> {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(pass.goal)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{pos}/{len} points [{bar:30}] {per_sec} eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let mut done = Encoded::default();
    let mut offset = None;
    while done.read < pass.goal {
        let room = usize::try_from(pass.goal - done.read).unwrap_or(usize::MAX);
        let page = store.scan(pass.scope, pass.batch.min(room), offset).await?;
        if page.memories.is_empty() {
            break;
        }
        let read = page.memories.len() as u64;
        let vectors: Vec<_> = page
            .memories
            .iter()
            .filter(|m| !pass.only_non_ascii || !m.text.is_ascii())
            .map(|m| (m.id, encode_text(&m.text, pass.fold)))
            .collect();
        done.encoded += vectors.len() as u64;
        if !vectors.is_empty() {
            store.set_sparse(vectors).await?;
        }
        done.read += read;
        bar.inc(read);
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => break,
        }
    }
    bar.finish_and_clear();
    Ok(done)
}

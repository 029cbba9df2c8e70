//! `trine sparse-backfill`: gives every point of a populated collection its
//! sparse encoding (scroll + update vectors; nothing is re-embedded).
//! Idempotent and resumable: it only reads points that lack the encoding.

use std::io::IsTerminal;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use trine_core::sparse::encode_text;

use crate::{CmdResult, Config, open_store};

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
    let goal = args.max_points.map_or(missing, |m| m.min(missing));
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(goal)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{pos}/{len} points [{bar:30}] {per_sec} eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let mut done = 0u64;
    let mut offset = None;
    while done < goal {
        let room = usize::try_from(goal - done).unwrap_or(usize::MAX);
        let page = store
            .missing_sparse(usize::from(args.batch).min(room), offset)
            .await?;
        if page.memories.is_empty() {
            break;
        }
        let vectors: Vec<_> = page
            .memories
            .iter()
            .map(|m| (m.id, encode_text(&m.text)))
            .collect();
        let n = vectors.len() as u64;
        store.set_sparse(vectors).await?;
        done += n;
        bar.inc(n);
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => break,
        }
    }
    bar.finish_and_clear();
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

//! `trine ingest FILE.jsonl`: one memory a line, batched, with a progress bar
//! on a terminal. Bad lines are reported by number and skipped.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use trine_core::model::{Memory, MemoryInput};
use trine_gateway::Writer;

use crate::{CmdResult, Config, EXIT_PARTIAL, load_embedder, open_store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON-lines file of memories, or `-` for standard input
    pub file: PathBuf,
    /// Memories embedded and written per batch
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub batch: u16,
    /// Skip building indexes after the ingest (do it later with another ingest)
    #[arg(long)]
    pub no_optimize: bool,
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let stdin = args.file.as_os_str() == "-";
    let total = if stdin {
        None
    } else {
        Some(count_lines(&args.file).await?)
    };
    let reader: Box<dyn AsyncBufRead + Unpin + Send> = if stdin {
        Box::new(BufReader::new(tokio::io::stdin()))
    } else {
        let file = tokio::fs::File::open(&args.file)
            .await
            .map_err(|e| format!("cannot open {}: {e}", args.file.display()))?;
        Box::new(BufReader::new(file))
    };

    let embedder = load_embedder(config).await?;
    let store = open_store(config).await?;
    let writer = Writer::new(store.clone(), embedder);
    writer.prepare().await?;

    let bar = progress(total);
    let started = Instant::now();
    let mut lines = reader.lines();
    let mut line_no = 0usize;
    let mut batch: Vec<Memory> = Vec::with_capacity(usize::from(args.batch));
    let (mut stored, mut failed) = (0usize, 0usize);
    while let Some(line) = lines.next_line().await? {
        line_no += 1;
        bar.inc(1);
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(&line) {
            Ok(memory) => batch.push(memory),
            Err(why) => {
                failed += 1;
                bar.suspend(|| eprintln!("line {line_no}: {why}"));
            }
        }
        if batch.len() >= usize::from(args.batch) {
            stored += batch.len();
            write(&writer, std::mem::take(&mut batch), line_no, stored).await?;
        }
    }
    stored += batch.len();
    write(&writer, batch, line_no, stored).await?;
    bar.finish_and_clear();

    let wrote = started.elapsed().as_secs_f64();
    eprintln!(
        "wrote {stored} memories in {wrote:.1} s ({:.0}/s)",
        stored as f64 / wrote.max(1e-9)
    );
    if !args.no_optimize && stored > 0 {
        eprintln!("building indexes …");
        let building = Instant::now();
        store.optimize().await?;
        eprintln!("built indexes in {:.1} s", building.elapsed().as_secs_f64());
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "stored {stored} memories in `{}` ({}) in {secs:.1} s; {failed} line(s) failed",
        store.collection(),
        store.backend(),
    );
    Ok(if failed > 0 {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes one batch; a failure says how far the input was stored.
async fn write(
    writer: &Writer,
    batch: Vec<Memory>,
    line_no: usize,
    stored: usize,
) -> Result<(), String> {
    let size = batch.len();
    writer.write(batch).await.map_err(|e| {
        format!(
            "{e}; the {} memories before line {line_no}'s batch were stored, re-run to resume (ids make it idempotent)",
            stored - size
        )
    })
}

/// One JSON line as a validated memory, or why not.
fn parse_line(line: &str) -> Result<Memory, String> {
    let input: MemoryInput =
        serde_json::from_str(line).map_err(|e| format!("not a memory: {e}"))?;
    input.into_memory()
}

async fn count_lines(path: &PathBuf) -> Result<u64, String> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut lines = BufReader::new(file).lines();
    let mut n = 0;
    while let Some(_line) = lines
        .next_line()
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
    {
        n += 1;
    }
    Ok(n)
}

/// A bar with rate and ETA on a terminal; nothing otherwise.
fn progress(total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = total.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    let template = "{spinner} {pos}/{len} lines [{bar:30}] {per_sec} eta {eta}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

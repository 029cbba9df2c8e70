//! `trine model distill`: a static (Model2Vec-format) model from the installed
//! MiniLM, for bulk ingest and benchmarks. `trine model speed`: MiniLM's
//! throughput on given texts, in texts, tokens and GFLOP a second, against
//! this machine's matrix-product ceiling.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use trine_embed::{MiniLm, StaticEmbedder, Work};

use crate::{CmdResult, Config};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Distill the installed MiniLM into a static model (<models>/static)
    Distill {
        /// Output dimensions (PCA)
        #[arg(long, default_value_t = 256)]
        dims: usize,
        /// Output directory [default: <models>/static]
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Embed texts with MiniLM as `trine ingest` does and print the rate in
    /// texts, tokens and GFLOP a second, against this machine's matrix
    /// product
    Speed {
        /// JSON-lines file with a `text` field a line (memories, as ingest reads them)
        texts: PathBuf,
        /// Texts to embed, from the start of the file
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        limit: u32,
        /// Texts handed to the model at once (as `trine ingest --batch`)
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..=1024))]
        batch: u16,
    },
}

pub async fn run(config: &Config, command: Command) -> CmdResult {
    match command {
        Command::Distill { dims, out } => distill(config, dims, out).await,
        Command::Speed {
            texts,
            limit,
            batch,
        } => speed(config, &texts, limit as usize, usize::from(batch)).await,
    }
}

async fn distill(config: &Config, dims: usize, out: Option<PathBuf>) -> CmdResult {
    let source = config.models.join(MiniLm::DIR);
    let out = out.unwrap_or_else(|| config.models.join(StaticEmbedder::DIR));
    let shown = out.clone();
    tokio::task::spawn_blocking(move || {
        let model = MiniLm::load(&source)?;
        let bar = if std::io::stderr().is_terminal() {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        if let Ok(style) = ProgressStyle::with_template("{pos}/{len} tokens [{bar:30}] eta {eta}") {
            bar.set_style(style);
        }
        let report = |done: usize, total: usize| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        };
        let result = trine_embed::distill::distill(&model, &out, dims, &report);
        bar.finish_and_clear();
        result
    })
    .await??;
    println!(
        "wrote a static model of {dims} dimensions to {}",
        shown.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Reads the first `limit` texts of a JSON-lines file.
fn read_texts(path: &Path, limit: usize) -> Result<Vec<String>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut texts = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("{} line {}: not JSON: {e}", path.display(), n + 1))?;
        let Some(text) = value.get("text").and_then(serde_json::Value::as_str) else {
            return Err(format!(
                "{} line {}: no `text` string",
                path.display(),
                n + 1
            ));
        };
        texts.push(text.to_string());
        if texts.len() == limit {
            break;
        }
    }
    if texts.is_empty() {
        return Err(format!("{}: no texts", path.display()));
    }
    Ok(texts)
}

async fn speed(config: &Config, path: &Path, limit: usize, batch: usize) -> CmdResult {
    let texts = read_texts(path, limit)?;
    let source = config.models.join(MiniLm::DIR);
    let (work, seconds, ceiling) = tokio::task::spawn_blocking(move || {
        let model = MiniLm::load(&source)?;
        let ceiling = model.matmul_gflops(3.0)?;
        let started = Instant::now();
        let mut work = Work::default();
        for chunk in texts.chunks(batch) {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            work.add(model.embed_measured(&refs)?.1);
        }
        Ok::<_, trine_embed::EmbedError>((work, started.elapsed().as_secs_f64(), ceiling))
    })
    .await??;
    print!("{}", render_speed(&work, seconds, ceiling, batch));
    Ok(ExitCode::SUCCESS)
}

/// The speed report for people.
fn render_speed(work: &Work, seconds: f64, ceiling: f64, batch: usize) -> String {
    let per = |n: f64| n / seconds.max(1e-9);
    let gflops = per(work.flops) / 1e9;
    format!(
        "MiniLM on {} texts in batches of {batch} ({} a forward pass), {} threads: {seconds:.1} s\n\
         rate: {:.1} texts/s, {:.0} tokens/s ({:.0} positions/s with padding; padding {:.1} % of the work)\n\
         work: {:.1} MFLOP a real token at this length mix (padding included), {gflops:.1} GFLOP/s\n\
         this machine's f32 matrix product (candle, the model's largest layer over a full batch): {ceiling:.1} GFLOP/s; \
         the model runs at {:.0} % of it\n",
        work.texts,
        trine_embed::MAX_BATCH,
        std::thread::available_parallelism().map_or(1, usize::from),
        per(work.texts as f64),
        per(work.tokens as f64),
        per(work.padded as f64),
        100.0 * (1.0 - work.tokens as f64 / (work.padded as f64).max(1.0)),
        work.flops / (work.tokens as f64).max(1.0) / 1e6,
        100.0 * gflops / ceiling.max(1e-9),
    )
}

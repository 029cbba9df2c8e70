//! `trine model distill`: a static (Model2Vec-format) model from the installed
//! MiniLM, for bulk ingest and benchmarks.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use trine_embed::{MiniLm, StaticEmbedder};

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
}

pub async fn run(config: &Config, command: Command) -> CmdResult {
    let Command::Distill { dims, out } = command;
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

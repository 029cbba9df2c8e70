//! The `trine` command. Thin: parse, set up telemetry, run.

use std::process::ExitCode;

use clap::Parser;

/// The process's allocator (Cargo.toml says why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = trine::Cli::parse();
    trine::main(cli)
}

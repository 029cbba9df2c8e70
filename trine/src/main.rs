//! The `trine` command. Thin: parse, set up telemetry, run.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = trine::Cli::parse();
    trine::main(cli)
}

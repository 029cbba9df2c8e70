//! `trine-fuzz`: runs the fuzz targets for a number of cases or a time, and
//! exits 1 on the first panic or broken invariant of any target, printing its
//! seed to replay.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use trine_fuzz::{Budget, Target};

#[derive(Debug, Parser)]
#[command(name = "trine-fuzz", about = "fuzz trine's input edges")]
struct Args {
    /// Targets to run (terms, filters, timestamps, wire, ingest), comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "terms,filters,timestamps,wire,ingest"
    )]
    target: Vec<String>,
    /// Run this many seconds, round-robin over the targets
    #[arg(long, conflicts_with = "cases")]
    seconds: Option<u64>,
    /// Run this many cases per target (1 with --seed replays a failure)
    #[arg(long)]
    cases: Option<u64>,
    /// The first case's seed
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let targets: Result<Vec<Target>, String> =
        args.target.iter().map(|t| Target::parse(t)).collect();
    let targets = match targets {
        Ok(t) => t,
        Err(why) => {
            eprintln!("trine-fuzz: {why}");
            return ExitCode::from(2);
        }
    };
    let budget = match (args.seconds, args.cases) {
        (_, Some(n)) => Budget::Cases(n),
        (Some(s), None) => Budget::Time(Duration::from_secs(s)),
        (None, None) => Budget::Cases(100_000),
    };
    // Panics are caught and reported with their seed; the default hook's
    // message for each would drown the summary.
    std::panic::set_hook(Box::new(|_| {}));
    let (tallies, failures) = trine_fuzz::run(&targets, args.seed, budget);
    let mut total = 0;
    for t in &tallies {
        total += t.cases;
        let secs = t.elapsed.as_secs_f64();
        println!(
            "{:<11} {:>12} cases in {secs:>7.1} s ({:.0}/s)",
            t.target,
            t.cases,
            t.cases as f64 / secs.max(1e-9)
        );
    }
    println!("{total} inputs, {} failures", failures.len());
    for f in &failures {
        println!(
            "FAILED {} seed {}: {} (replay: trine-fuzz --target {} --seed {} --cases 1)",
            f.target, f.seed, f.why, f.target, f.seed
        );
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

//! `trine-fuzz`: runs the fuzz targets for a number of cases or a time, and
//! exits 1 on the first panic or broken invariant of any target, printing its
//! seed to replay. `--write-corpus DIR` writes the cases of the seeds instead,
//! as the bytes that replay them under libFuzzer (fuzz/corpus).

use std::process::ExitCode;
use std::time::Duration;
use trine_core::Named;

use clap::Parser;
use trine_fuzz::{Budget, Target};

#[derive(Debug, Parser)]
#[command(name = "trine-fuzz", about = "fuzz trine's input edges")]
struct Args {
    /// Targets to run, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "terms,filters,timestamps,wire,ingest,http_json,mcp,keys"
    )]
    target: Vec<String>,
    /// Write --cases seeded cases of each target into DIR/<target>/ as the
    /// bytes that replay them through `cargo fuzz`, and run nothing
    #[arg(long, value_name = "DIR")]
    write_corpus: Option<std::path::PathBuf>,
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
    if let Some(dir) = &args.write_corpus {
        return match write_corpus(dir, &targets, args.seed, args.cases.unwrap_or(32)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("trine-fuzz: {}: {e}", dir.display());
                ExitCode::FAILURE
            }
        };
    }
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

/// `cases` cases of each target from seed `first`, one file each, named by
/// seed; a case whose bytes repeat another's is written once.
fn write_corpus(
    dir: &std::path::Path,
    targets: &[Target],
    first: u64,
    cases: u64,
) -> std::io::Result<()> {
    for target in targets {
        let folder = dir.join(target.name());
        std::fs::create_dir_all(&folder)?;
        let mut seen = std::collections::HashSet::new();
        for seed in first..first.saturating_add(cases) {
            let bytes = target.recorded(seed);
            if seen.insert(bytes.clone()) {
                std::fs::write(folder.join(format!("seed-{seed}")), bytes)?;
            }
        }
        println!(
            "{}: {} seeds in {}",
            target.name(),
            seen.len(),
            folder.display()
        );
    }
    Ok(())
}

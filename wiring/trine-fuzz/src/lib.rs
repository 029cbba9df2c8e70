//! Fuzz targets for trine's input edges. Each target builds its input with a
//! [`Gen`] (random bytes, or structured values with the characters and sizes
//! that break parsers, then mutated) and must neither panic nor break its
//! invariants. Two drivers: a seeded harness that runs millions of cases on
//! the stable toolchain (a failing case is replayed from its seed:
//! `trine-fuzz --target T --seed S --cases 1`), and libFuzzer through
//! `cargo fuzz` (fuzz/), whose bytes drive the generator's choices
//! ([`Target::bytes`]) so that coverage steers them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

mod generate;
mod surfaces;
mod targets;

pub use generate::Gen;

/// An input edge under fuzzing.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Target {
    /// Query terms, tokens, the verbatim check, the gate, the sparse
    /// encoding, the tier rule, the query size check.
    Terms,
    /// Wire filters to domain filters and back.
    Filters,
    /// Wire timestamps and RFC 3339 strings.
    Timestamps,
    /// Every request message decoded from mutated bytes, then converted
    /// as the services convert it (records, ids, fusion options, fusion).
    Wire,
    /// `trine ingest` lines: bytes, UTF-8, JSON, validation.
    Ingest,
    /// HTTP/JSON: search and memories bodies, query strings.
    HttpJson,
    /// MCP's JSON-RPC messages and batches, through the tools.
    Mcp,
    /// The keys file, and keys checked against it.
    Keys,
}

impl Named for Target {
    const WHAT: &'static str = "fuzz target";
}

impl Target {
    /// Runs the case of `seed`: `Err` says which invariant broke.
    pub fn case(self, seed: u64) -> Result<(), String> {
        self.run(&mut Gen::new(seed))
    }

    /// Runs the case whose choices are read from `data` (libFuzzer's input).
    pub fn bytes(self, data: &[u8]) -> Result<(), String> {
        self.run(&mut Gen::from_bytes(data))
    }

    /// The case of `seed` as the bytes that replay it through
    /// [`Target::bytes`]: a seed corpus for libFuzzer.
    pub fn recorded(self, seed: u64) -> Vec<u8> {
        let mut g = Gen::recording(seed);
        let _ = self.run(&mut g);
        g.recorded().to_vec()
    }

    fn run(self, g: &mut Gen) -> Result<(), String> {
        match self {
            Target::Terms => targets::terms(g),
            Target::Filters => targets::filters(g),
            Target::Timestamps => targets::timestamps(g),
            Target::Wire => targets::wire(g),
            Target::Ingest => targets::ingest(g),
            Target::HttpJson => surfaces::http_json(g),
            Target::Mcp => surfaces::mcp(g),
            Target::Keys => surfaces::keys(g),
        }
    }
}

/// A case that panicked or broke an invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub target: &'static str,
    pub seed: u64,
    pub why: String,
}

/// What a run did, per target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub target: &'static str,
    pub cases: u64,
    pub elapsed: Duration,
}

/// How long a run lasts.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// This many cases per target.
    Cases(u64),
    /// Round-robin over the targets until the time is up.
    Time(Duration),
}

/// Cases run per target before the next one's turn, and between clock checks.
const CHUNK: u64 = 1_000;

/// Runs `targets` from seed `first` under `budget`, catching panics; stops at
/// the first failure of each target.
pub fn run(targets: &[Target], first: u64, budget: Budget) -> (Vec<Tally>, Vec<Failure>) {
    run_with(targets, first, budget, Target::case)
}

fn run_with(
    targets: &[Target],
    first: u64,
    budget: Budget,
    case: impl Fn(Target, u64) -> Result<(), String>,
) -> (Vec<Tally>, Vec<Failure>) {
    let mut tallies: Vec<Tally> = targets
        .iter()
        .map(|t| Tally {
            target: t.name(),
            cases: 0,
            elapsed: Duration::ZERO,
        })
        .collect();
    let mut failures: Vec<Failure> = Vec::new();
    let started = Instant::now();
    let mut live: Vec<usize> = (0..targets.len()).collect();
    while !live.is_empty() {
        let mut next = Vec::with_capacity(live.len());
        for &i in &live {
            let target = targets[i];
            let chunk = match budget {
                Budget::Cases(n) => CHUNK.min(n - tallies[i].cases),
                Budget::Time(_) => CHUNK,
            };
            let began = Instant::now();
            let mut failed = false;
            for _ in 0..chunk {
                let seed = first.wrapping_add(tallies[i].cases);
                tallies[i].cases += 1;
                let outcome = catch_unwind(AssertUnwindSafe(|| case(target, seed)))
                    .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_message(&panic))));
                if let Err(why) = outcome {
                    failures.push(Failure {
                        target: target.name(),
                        seed,
                        why,
                    });
                    failed = true;
                    break;
                }
            }
            tallies[i].elapsed += began.elapsed();
            let more = match budget {
                Budget::Cases(n) => tallies[i].cases < n,
                Budget::Time(limit) => started.elapsed() < limit,
            };
            if more && !failed {
                next.push(i);
            }
        }
        live = next;
    }
    (tallies, failures)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_breaks_nothing() {
        let (tallies, failures) = run(Target::all(), 0, Budget::Cases(3_000));
        assert_eq!(failures, []);
        assert!(tallies.iter().all(|t| t.cases == 3_000), "{tallies:?}");
    }

    #[test]
    fn a_panic_or_a_broken_invariant_is_reported_with_its_seed() {
        let targets = [Target::Terms, Target::Wire];
        let (tallies, failures) =
            run_with(&targets, 10, Budget::Cases(2_500), |target, seed| {
                match (target, seed) {
                    (Target::Terms, 1_234) => panic!("boom at {seed}"),
                    (Target::Wire, 2_000) => Err("broken".to_string()),
                    _ => Ok(()),
                }
            });
        let failed: Vec<(&str, u64, &str)> = failures
            .iter()
            .map(|f| (f.target, f.seed, f.why.as_str()))
            .collect();
        assert_eq!(
            failed,
            [
                ("terms", 1_234, "panicked: boom at 1234"),
                ("wire", 2_000, "broken")
            ]
        );
        // Each target stops at its first failure.
        assert_eq!(tallies[0].cases, 1_234 - 10 + 1);
        assert_eq!(tallies[1].cases, 2_000 - 10 + 1);
    }

    #[test]
    fn a_case_is_the_same_from_the_same_seed() {
        for &target in Target::all() {
            for seed in [0, 1, u64::MAX] {
                assert_eq!(target.case(seed), target.case(seed));
            }
        }
        assert!(Target::parse("nope").is_err());
        assert_eq!(Target::parse("http_json"), Ok(Target::HttpJson));
    }

    /// What libFuzzer found, replayed as it found it (fuzz/corpus/*/finding-*;
    /// `scripts/fuzz.sh --check` replays them too).
    #[test]
    fn findings_stay_fixed() {
        let findings: &[(Target, &[u8])] = &[
            (
                // Infinite lexical and NaN semantic scores fused to a NaN score.
                Target::Wire,
                include_bytes!("../../../fuzz/corpus/wire/finding-nonfinite-fused-score"),
            ),
            (
                // A lexical reference of 3e-294 scaled a score to infinity.
                Target::Wire,
                include_bytes!("../../../fuzz/corpus/wire/finding-tiny-lexical-reference"),
            ),
        ];
        for (target, bytes) in findings {
            assert_eq!(target.bytes(bytes), Ok(()), "{target:?}");
        }
    }

    #[test]
    fn recorded_choices_replay_the_seeded_case() {
        for &target in Target::all() {
            for seed in 0..200 {
                let bytes = target.recorded(seed);
                assert_eq!(target.bytes(&bytes), target.case(seed), "{target:?} {seed}");
                // The replay makes the same choices, byte for byte.
                let mut replay = Gen::replaying(&bytes);
                let _ = target.run(&mut replay);
                assert_eq!(replay.recorded(), &bytes[..], "{target:?} {seed}");
            }
            // Bytes of any length, none at all included, build a case.
            assert_eq!(target.bytes(&[]), Ok(()));
            assert!(target.bytes(&[0xff; 64]).is_ok(), "{target:?}");
        }
    }
}

//! What a bench measured: each search's outcome, the percentiles of each
//! stage, the errors by code, the counts budget and the peak memory, as a
//! report in text or JSON.

use super::*;

/// The outcome of one search.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub took: Duration,
    pub outcome: Result<Answer, tonic::Code>,
}

/// What a successful search reported about itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// Each stage's time in milliseconds, as the gateway reported it.
    pub stages: Vec<(String, f64)>,
    pub counts_share: f64,
    pub degraded: bool,
}

/// The peak resident memory in MiB from a `/proc/<pid>/status` text (its
/// `VmHWM` line, in kB).
pub fn peak_rss_mib(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let kib: f64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib / 1024.0)
}

/// This process's peak resident memory in MiB, where `/proc` tells it.
pub(super) fn own_peak_rss_mib() -> Option<f64> {
    peak_rss_mib(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// A search's mesh overhead in milliseconds: the gateway's time beyond its
/// slowest channel call and fusion's own work — the fusion hop, the payload
/// read and the gateway's own code. `None` when the answer lacks the
/// gateway's time or every channel's.
pub fn mesh_overhead(stages: &[(String, f64)]) -> Option<f64> {
    let of = |name: &str| stages.iter().find(|(s, _)| s == name).map(|(_, ms)| *ms);
    let gateway = of("gateway")?;
    let slowest = match (of("lexical"), of("semantic")) {
        (None, None) => return None,
        (a, b) => a.unwrap_or(0.0).max(b.unwrap_or(0.0)),
    };
    Some((gateway - slowest - of("fusion").unwrap_or(0.0)).max(0.0))
}

/// Percentiles of one measure (nearest rank).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub mean: f64,
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (any order); all zero when empty.
    pub fn of(mut values: Vec<f64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let i = (p * values.len() as f64).ceil() as usize;
            values[i.clamp(1, values.len()) - 1]
        };
        Self {
            n: values.len(),
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            max: values[values.len() - 1],
        }
    }
}

/// A whole run's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub target: String,
    pub mode: String,
    pub strategy: String,
    pub concurrency: u16,
    pub rate: Option<f64>,
    pub seconds: f64,
    pub requests: usize,
    pub ok: usize,
    /// Requests a second over the measured time.
    pub throughput: f64,
    /// Failed searches by gRPC code.
    pub errors: BTreeMap<String, usize>,
    /// Open loop: ticks dropped because `concurrency` requests were in flight.
    pub shed: usize,
    pub degraded: usize,
    /// Milliseconds, as the client saw them.
    pub end_to_end: Summary,
    /// Milliseconds per stage, as the gateway reported them.
    pub stages: BTreeMap<String, Summary>,
    /// Milliseconds of each search beyond its slowest channel and fusion's
    /// own work ([`mesh_overhead`]).
    pub mesh_overhead: Summary,
    /// The lexical counts' share of each search's time.
    pub counts_share: Summary,
    /// Searches over the ADR's budget (share > 0.1).
    pub over_budget: usize,
    /// This process's peak resident memory in MiB (`VmHWM`) when the run
    /// ended — the serving process's for the in-process mesh; none against
    /// an endpoint (the servers are other processes) or off Linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<f64>,
    /// The Qdrant server's CPU milliseconds per search over the measured
    /// window (`--server-pids`): what a search costs the shared server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_ms: Option<f64>,
    /// The same load on Qdrant's one-call hybrid, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native: Option<Box<Report>>,
}

impl Report {
    /// Folds the measured samples into figures.
    pub fn of(samples: &[Sample], seconds: f64) -> Self {
        let mut errors = BTreeMap::new();
        let mut stages: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let (mut shares, mut ok, mut degraded) = (Vec::new(), 0, 0);
        let mut overheads = Vec::new();
        for sample in samples {
            match &sample.outcome {
                Ok(answer) => {
                    ok += 1;
                    degraded += usize::from(answer.degraded);
                    shares.push(answer.counts_share);
                    overheads.extend(mesh_overhead(&answer.stages));
                    for (stage, ms) in &answer.stages {
                        stages.entry(stage.clone()).or_default().push(*ms);
                    }
                }
                Err(code) => *errors.entry(format!("{code:?}")).or_insert(0) += 1,
            }
        }
        let over_budget = shares.iter().filter(|s| **s > COUNTS_BUDGET).count();
        Self {
            seconds,
            requests: samples.len(),
            ok,
            throughput: if seconds > 0.0 {
                samples.len() as f64 / seconds
            } else {
                0.0
            },
            errors,
            degraded,
            end_to_end: Summary::of(
                samples
                    .iter()
                    .map(|s| s.took.as_secs_f64() * 1000.0)
                    .collect(),
            ),
            stages: stages
                .into_iter()
                .map(|(stage, ms)| (stage, Summary::of(ms)))
                .collect(),
            counts_share: Summary::of(shares),
            mesh_overhead: Summary::of(overheads),
            over_budget,
            ..Self::default()
        }
    }

    /// The table for people.
    pub fn render(&self) -> String {
        let load = match self.rate {
            Some(rate) => format!("{rate}/s, at most {} in flight", self.concurrency),
            None => format!("concurrency {}", self.concurrency),
        };
        let mut out = format!(
            "trine bench against {}: {} searches in {:.1} s ({:.1}/s), {load}, mode {}, strategy {}\n",
            self.target, self.requests, self.seconds, self.throughput, self.mode, self.strategy
        );
        if self.errors.is_empty() {
            out += "errors: none\n";
        } else {
            let errors: Vec<String> = self
                .errors
                .iter()
                .map(|(code, n)| format!("{code} {n}"))
                .collect();
            out += &format!("errors: {}\n", errors.join(", "));
        }
        if self.shed > 0 {
            out += &format!(
                "shed: {} ticks (the rate outran {} in flight)\n",
                self.shed, self.concurrency
            );
        }
        if self.degraded > 0 {
            out += &format!("degraded answers: {}\n", self.degraded);
        }
        out += &format!(
            "{:<22} {:>9} {:>9} {:>9} {:>9}\n",
            "ms", "p50", "p95", "p99", "mean"
        );
        let row = |name: &str, s: &Summary| {
            format!(
                "{name:<22} {:>9.2} {:>9.2} {:>9.2} {:>9.2}\n",
                s.p50, s.p95, s.p99, s.mean
            )
        };
        out += &row("end to end (client)", &self.end_to_end);
        for (stage, summary) in &self.stages {
            out += &row(stage, summary);
        }
        if self.mesh_overhead.n > 0 {
            out += &row("mesh overhead", &self.mesh_overhead);
        }
        let s = &self.counts_share;
        if self.mode != "native" {
            out += &format!(
                "counts share: p50 {:.3}, p95 {:.3}, p99 {:.3}, max {:.3}; over the budget ({COUNTS_BUDGET}): {} of {}\n",
                s.p50, s.p95, s.p99, s.max, self.over_budget, s.n
            );
        }
        if let Some(ms) = self.server_cpu_ms {
            out += &format!("Qdrant server CPU per search: {ms:.3} ms\n");
        }
        if let Some(mib) = self.peak_rss_mib {
            out += &format!("peak memory of this process (VmHWM): {mib:.0} MiB\n");
        }
        if let Some(native) = &self.native {
            out += "\n";
            out += &native.render();
            let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
            out += &format!(
                "\ntrine / Qdrant native, end to end: p50 {:.2}x, p95 {:.2}x; throughput {:.2}x\n",
                ratio(self.end_to_end.p50, native.end_to_end.p50),
                ratio(self.end_to_end.p95, native.end_to_end.p95),
                ratio(self.throughput, native.throughput),
            );
            if let (Some(trine), Some(native)) = (self.server_cpu_ms, native.server_cpu_ms) {
                out += &format!(
                    "trine / Qdrant native, server CPU per search: {:.2}x\n",
                    ratio(trine, native)
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_memory_from_proc_status() {
        let table = [
            (
                "Name:\ttrine\nVmPeak:\t 900 kB\nVmHWM:\t  524288 kB\nVmRSS:\t 1 kB\n",
                Some(512.0),
            ),
            ("VmHWM:\t1536 kB", Some(1.5)),
            ("VmHWM:\t1536 MB", None),
            ("VmHWM:\tlots kB", None),
            ("VmRSS:\t1024 kB", None),
            ("", None),
        ];
        for (status, want) in table {
            assert_eq!(peak_rss_mib(status), want, "{status:?}");
        }
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(values);
        assert_eq!(
            (s.n, s.p50, s.p95, s.p99, s.max),
            (100, 50.0, 95.0, 99.0, 100.0)
        );
        assert_eq!(s.mean, 50.5);
        let one = Summary::of(vec![7.0]);
        assert_eq!((one.p50, one.p99), (7.0, 7.0));
        assert_eq!(Summary::of(Vec::new()), Summary::default());
    }

    #[test]
    fn the_mesh_overhead_is_the_gateway_beyond_its_slowest_channel_and_fusion() {
        let stages = |pairs: &[(&str, f64)]| -> Vec<(String, f64)> {
            pairs.iter().map(|(s, ms)| (s.to_string(), *ms)).collect()
        };
        type Row<'a> = (&'a [(&'a str, f64)], Option<f64>);
        let table: &[Row<'_>] = &[
            (
                &[
                    ("lexical", 12.0),
                    ("semantic", 9.0),
                    ("fusion", 0.4),
                    ("fusion.call", 1.9),
                    ("payload", 0.6),
                    ("gateway", 15.0),
                ],
                Some(2.6),
            ),
            (&[("semantic", 9.0), ("gateway", 10.0)], Some(1.0)),
            (&[("lexical", 5.0), ("gateway", 4.0)], Some(0.0)),
            (&[("gateway", 4.0)], None),
            (&[("lexical", 5.0)], None),
        ];
        for (pairs, want) in table {
            let got = mesh_overhead(&stages(pairs));
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{pairs:?}: {g}"),
                _ => assert_eq!(got, *want, "{pairs:?}"),
            }
        }
    }

    #[test]
    fn the_report_counts_errors_stages_and_the_budget() {
        let ok = |share: f64, lexical: f64| Sample {
            took: Duration::from_millis(10),
            outcome: Ok(Answer {
                stages: vec![("lexical".to_string(), lexical)],
                counts_share: share,
                degraded: share > 0.5,
            }),
        };
        let samples = vec![
            ok(0.05, 2.0),
            ok(0.2, 4.0),
            ok(0.9, 6.0),
            Sample {
                took: Duration::from_millis(1),
                outcome: Err(tonic::Code::Unavailable),
            },
        ];
        let report = Report::of(&samples, 2.0);
        assert_eq!((report.requests, report.ok, report.degraded), (4, 3, 1));
        assert_eq!(report.throughput, 2.0);
        assert_eq!(report.errors.get("Unavailable"), Some(&1));
        assert_eq!(report.over_budget, 2);
        assert_eq!(report.counts_share.p50, 0.2);
        assert_eq!(report.stages["lexical"].max, 6.0);
        let table = report.render();
        assert!(table.contains("errors: Unavailable 1"), "{table}");
        assert!(table.contains("over the budget (0.1): 2 of 3"), "{table}");
    }
}

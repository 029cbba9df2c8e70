//! `trine bench`: a gRPC load generator against a running gateway, or the
//! mesh in-process. Queries cycle from a file at a fixed concurrency (closed
//! loop) or a fixed rate (open loop); it warms up, measures for a bounded
//! time, stops by itself and prints end-to-end and per-stage percentiles (the
//! stages from each response's timings), the counts share and errors by code.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{Semaphore, mpsc};
use trine_api::v1::{Filters, SearchRequest};
use trine_core::Fold;
use trine_embed::Embedder;
use trine_store::Store;
use trine_telemetry::metrics::COUNTS_BUDGET;

use crate::eval::native_search;
use crate::queries::{self, Query};
use crate::search::parse_mode;
use crate::{CmdResult, Config, load_embedder, local_mesh, open_store, print_report};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Queries, one JSON object a line (`{"query", "tenant", ...}`, the `trine eval` format)
    #[arg(long)]
    pub queries: PathBuf,
    /// A running gateway (e.g. http://127.0.0.1:50051); unset: the mesh in-process
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Requests in flight at once (with --rate: the most in flight)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: u16,
    /// Requests a second (open loop) instead of back-to-back requests
    #[arg(long)]
    pub rate: Option<f64>,
    /// How long to measure, e.g. 500ms, 30s, 2m
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Load before measuring, not counted
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// hybrid, semantic or lexical
    #[arg(long, default_value = "hybrid")]
    pub mode: String,
    /// Lexical strategy (default: the configured one)
    #[arg(long)]
    pub strategy: Option<String>,
    /// Hits per search
    #[arg(long, default_value_t = 10)]
    pub limit: u32,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Also time Qdrant's one-call hybrid (dense + `bm25` or `sparse`
    /// prefetch, Qdrant's RRF) on the same collection, after trine's run
    #[arg(long)]
    pub native: Option<String>,
    /// Only Qdrant's one-call hybrid (with --native), not trine: for the
    /// peak memory of a process that serves native searches alone
    #[arg(long, requires = "native")]
    pub native_only: bool,
    /// Also write the JSON object to this file
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Send each distinct query (text and tenant) at most once, warm-up
    /// included, so that no count is reused from a repeat; the run fails if
    /// the queries run out before the time is up
    #[arg(long)]
    pub no_repeat: bool,
}

/// The requests to send: every query, or with `--no-repeat` each distinct
/// one once, in file order.
fn distinct(requests: Vec<SearchRequest>, no_repeat: bool) -> Vec<SearchRequest> {
    if !no_repeat {
        return requests;
    }
    let mut seen = std::collections::HashSet::new();
    requests
        .into_iter()
        .filter(|r| {
            let tenant = r
                .filters
                .as_ref()
                .map(|f| f.tenant.clone())
                .unwrap_or_default();
            seen.insert((r.query.clone(), tenant))
        })
        .collect()
}

/// Parses `500ms`, `30s`, `2m` (a bare number is seconds).
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(raw.len());
    let (number, unit) = raw.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{raw:?} is not a duration: use e.g. 500ms, 30s or 2m"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("{raw:?}: unknown unit {unit:?}: use ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{raw:?}: {e}"))
}

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
fn own_peak_rss_mib() -> Option<f64> {
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
        }
        out
    }
}

fn request(query: &Query, args: &Args, mode: i32) -> SearchRequest {
    SearchRequest {
        query: query.query.clone(),
        filters: Some(Filters {
            tenant: query.tenant.clone(),
            ..Filters::default()
        }),
        limit: args.limit,
        mode,
        strategy: args.strategy.clone().unwrap_or_default(),
        ..SearchRequest::default()
    }
}

/// What the load runs against: trine's gateway, or Qdrant's one-call
/// hybrid on the same collection.
#[derive(Clone)]
enum Target {
    Trine(trine_mesh::GatewayClient),
    Native {
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        lexical: String,
        /// The collection's fold: the query is encoded as its points are.
        fold: Fold,
        limit: usize,
    },
}

impl Target {
    async fn search(&mut self, request: SearchRequest) -> Sample {
        let started = Instant::now();
        let outcome = match self {
            Self::Trine(client) => client
                .search(request)
                .await
                .map(|r| {
                    let r = r.into_inner();
                    Answer {
                        stages: r.timings.into_iter().map(|t| (t.stage, t.millis)).collect(),
                        counts_share: r.counts_share,
                        degraded: r.degraded,
                    }
                })
                .map_err(|s| s.code()),
            Self::Native {
                store,
                embedder,
                lexical,
                fold,
                limit,
            } => {
                let lexical = (lexical.as_str(), *fold);
                native(store.as_ref(), embedder.as_ref(), lexical, *limit, request).await
            }
        };
        Sample {
            took: started.elapsed(),
            outcome,
        }
    }
}

/// The opened store and embedder of an in-process run, for native's run to reuse.
type Opened = (Arc<dyn Store>, Arc<dyn Embedder>);

/// trine's run: against `--endpoint`, or the mesh started in-process (whose
/// store and embedder come back for native's run); whether `--no-repeat`'s
/// queries ran out.
async fn run_trine(
    config: &Config,
    args: &Args,
    requests: Arc<Vec<SearchRequest>>,
) -> Result<(Report, Option<Opened>, bool), Box<dyn std::error::Error + Send + Sync>> {
    let (target, address, mesh, opened) = match &args.endpoint {
        Some(endpoint) => (endpoint.clone(), endpoint.clone(), None, None),
        None => {
            let local = local_mesh(config).await?;
            (
                "the in-process mesh".to_string(),
                local.mesh.gateway.to_string(),
                Some(local.mesh),
                Some((local.store, local.embedder)),
            )
        }
    };
    let (key, tls) = match &args.endpoint {
        Some(_) => (config.api_key.as_deref(), config.tls.client()?),
        None => (None, None),
    };
    let client = trine_mesh::gateway_client(trine_mesh::channel_tls(&address, tls)?, key)?;
    let (samples, shed, ran_out) = load(Target::Trine(client), requests, args).await;
    let in_process = mesh.is_some();
    if let Some(mesh) = mesh {
        mesh.stop().await?;
    }
    let report = Report {
        target,
        mode: args.mode.clone(),
        strategy: args
            .strategy
            .clone()
            .unwrap_or_else(|| config.lexical.strategy.clone()),
        concurrency: args.concurrency,
        rate: args.rate,
        shed,
        peak_rss_mib: if in_process { own_peak_rss_mib() } else { None },
        ..Report::of(&samples, args.duration.as_secs_f64())
    };
    Ok((report, opened, ran_out))
}

/// One search as a user of Qdrant alone would make it ([`native_search`]).
async fn native(
    store: &dyn Store,
    embedder: &dyn Embedder,
    lexical: (&str, Fold),
    limit: usize,
    request: SearchRequest,
) -> Result<Answer, tonic::Code> {
    let tenant = request.filters.map(|f| f.tenant).unwrap_or_default();
    let found = native_search(store, embedder, lexical, &request.query, &tenant, limit)
        .await
        .map_err(|e| e.code())?;
    Ok(Answer {
        stages: vec![
            ("native.embed".to_string(), found.embed_ms),
            ("native.query".to_string(), found.query_ms),
        ],
        ..Answer::default()
    })
}

/// Runs the load against `target` and returns the samples that started
/// inside the measured window, with the ticks shed.
/// The samples of a run, the open loop's shed ticks, and whether the
/// queries ran out (`--no-repeat`) before the time was up.
async fn load(
    target: Target,
    requests: Arc<Vec<SearchRequest>>,
    args: &Args,
) -> (Vec<Sample>, usize, bool) {
    let started = Instant::now();
    let measure_from = started + args.warmup;
    let until = measure_from + args.duration;
    let next = Arc::new(AtomicUsize::new(0));
    let ran_out = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pick = {
        let (next, ran_out) = (next.clone(), ran_out.clone());
        let requests = requests.clone();
        let no_repeat = args.no_repeat;
        move || {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if no_repeat && i >= requests.len() {
                ran_out.store(true, Ordering::Relaxed);
                return None;
            }
            Some(requests[i % requests.len()].clone())
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Sample)>();
    let mut shed = 0;
    match args.rate {
        None => {
            for _ in 0..args.concurrency {
                let (mut target, tx, pick) = (target.clone(), tx.clone(), pick.clone());
                tokio::spawn(async move {
                    while Instant::now() < until {
                        let Some(request) = pick() else { break };
                        let at = Instant::now();
                        let sample = target.search(request).await;
                        if tx.send((at, sample)).is_err() {
                            break;
                        }
                    }
                });
            }
        }
        Some(rate) => {
            let in_flight = Arc::new(Semaphore::new(usize::from(args.concurrency)));
            let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while Instant::now() < until {
                ticks.tick().await;
                let Ok(permit) = in_flight.clone().try_acquire_owned() else {
                    shed += usize::from(Instant::now() >= measure_from);
                    continue;
                };
                let Some(request) = pick() else { break };
                let (mut target, tx) = (target.clone(), tx.clone());
                tokio::spawn(async move {
                    let at = Instant::now();
                    let sample = target.search(request).await;
                    drop(permit);
                    let _ = tx.send((at, sample));
                });
            }
        }
    }
    drop(tx);
    let mut samples = Vec::new();
    while let Some((at, sample)) = rx.recv().await {
        if at >= measure_from && at < until {
            samples.push(sample);
        }
    }
    (samples, shed, ran_out.load(Ordering::Relaxed))
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let queries = queries::load(&args.queries)?;
    let mode = parse_mode(&args.mode)? as i32;
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(
            format!("--rate {rate}: must be a positive number of requests a second").into(),
        );
    }
    if let Some(kind) = &args.native
        && !matches!(kind.as_str(), "bm25" | "sparse")
    {
        return Err(format!("--native {kind:?}: use bm25 or sparse").into());
    }
    if args.native.is_some() && args.endpoint.is_some() && config.qdrant.is_none() {
        return Err("--native reads the collection itself: run without --endpoint (embedded), or give --qdrant".into());
    }
    let requests = distinct(
        queries.iter().map(|q| request(q, &args, mode)).collect(),
        args.no_repeat,
    );
    if requests.is_empty() {
        return Err(format!("{}: no queries", args.queries.display()).into());
    }
    let requests: Arc<Vec<SearchRequest>> = Arc::new(requests);
    let out_of_queries = || {
        format!(
            "--no-repeat: the {} distinct queries of {} ran out before the warm-up and \
             --duration were over: give more queries or a shorter --duration",
            requests.len(),
            args.queries.display()
        )
    };
    let (trine, opened) = if args.native_only {
        (None, None)
    } else {
        let (report, opened, ran_out) = run_trine(config, &args, requests.clone()).await?;
        if ran_out {
            return Err(out_of_queries().into());
        }
        (Some(report), opened)
    };
    let native = match &args.native {
        Some(lexical) => {
            let (store, embedder) = match opened {
                Some(opened) => opened,
                None => (open_store(config).await?, load_embedder(config).await?),
            };
            let target = Target::Native {
                fold: crate::backfill::collection_fold(store.as_ref()).await?,
                store,
                embedder,
                lexical: lexical.clone(),
                limit: usize::try_from(args.limit).unwrap_or(usize::MAX),
            };
            let (samples, shed, ran_out) = load(target, requests.clone(), &args).await;
            if ran_out {
                return Err(out_of_queries().into());
            }
            Some(Report {
                target: "Qdrant's one-call hybrid on the same collection".to_string(),
                mode: "native".to_string(),
                strategy: lexical.clone(),
                concurrency: args.concurrency,
                rate: args.rate,
                shed,
                peak_rss_mib: own_peak_rss_mib(),
                ..Report::of(&samples, args.duration.as_secs_f64())
            })
        }
        None => None,
    };
    let report = match (trine, native) {
        (Some(trine), native) => Report {
            native: native.map(Box::new),
            ..trine
        },
        (None, Some(native)) => native,
        (None, None) => return Err("--native-only needs --native bm25 or sparse".into()),
    };
    print_report(&report, args.json, args.save.as_deref(), || report.render())?;
    let failed = |r: &Report| r.requests == 0 || !r.errors.is_empty();
    Ok(
        if failed(&report) || report.native.as_deref().is_some_and(failed) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("500ms", Ok(Duration::from_millis(500))),
            ("30s", Ok(Duration::from_secs(30))),
            ("2m", Ok(Duration::from_secs(120))),
            ("1.5", Ok(Duration::from_millis(1500))),
            ("", Err("not a duration")),
            ("5h", Err("unknown unit")),
            ("ms", Err("not a duration")),
        ];
        for (raw, want) in cases {
            match (parse_duration(raw), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{raw}"),
                (Err(e), Err(want)) => assert!(e.contains(want), "{raw}: {e}"),
                (got, want) => panic!("{raw}: {got:?}, wanted {want:?}"),
            }
        }
    }

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
    fn no_repeat_keeps_each_distinct_query_and_tenant_once() {
        let req = |query: &str, tenant: &str| SearchRequest {
            query: query.into(),
            filters: Some(Filters {
                tenant: tenant.into(),
                ..Filters::default()
            }),
            ..SearchRequest::default()
        };
        let all = vec![req("a", "t"), req("b", "t"), req("a", "t"), req("a", "u")];
        assert_eq!(distinct(all.clone(), false), all);
        let once: Vec<(String, String)> = distinct(all, true)
            .into_iter()
            .map(|r| (r.query, r.filters.unwrap().tenant))
            .collect();
        let want =
            [("a", "t"), ("b", "t"), ("a", "u")].map(|(q, t)| (q.to_string(), t.to_string()));
        assert_eq!(once, want);
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

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
use trine_core::Named;

use serde::Serialize;
use tokio::sync::{Semaphore, mpsc};
use trine_api::v1::{Filters, SearchRequest};
use trine_core::Fold;
use trine_embed::Embedder;
use trine_store::{Counted, Filter, Store};
use trine_telemetry::metrics::COUNTS_BUDGET;

use trine_config::{
    CmdResult, Config, collection_fold, load_embedder, local_mesh, open_store, parse_mode,
    print_report,
};

use crate::eval::native_search;
use crate::queries::{self, Query};

mod cpu;
mod report;

use report::own_peak_rss_mib;
pub use report::{Answer, Report, Sample, Summary};

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
    /// The Qdrant server's process ids on this machine, comma-separated
    /// (start-qdrant's TRINE_QDRANT_PIDS): their CPU time per search is
    /// reported beside the wall clock
    #[arg(long, value_delimiter = ',')]
    pub server_pids: Vec<u32>,
}

/// What a run measured: the samples that started inside the measured
/// window, the open loop's shed ticks, whether the queries ran out
/// (`--no-repeat`) before the time was up, and the server's CPU seconds over
/// the window (`--server-pids`).
struct Loaded {
    samples: Vec<Sample>,
    shed: usize,
    ran_out: bool,
    server_cpu: Option<f64>,
}

impl Loaded {
    /// The server's CPU milliseconds per search measured.
    fn server_cpu_ms(&self) -> Option<f64> {
        let searches = self.samples.len().max(1) as f64;
        self.server_cpu.map(|seconds| seconds * 1000.0 / searches)
    }
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
    let (target, client, mesh, opened) = match &args.endpoint {
        Some(endpoint) => {
            let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
            let client = trine_mesh::gateway_client(channel, config.api_key.as_deref())?;
            (endpoint.clone(), client, None, None)
        }
        None => {
            let local = local_mesh(config).await?;
            // `candidates` counts from the statistics and `sparse` is
            // weighted by them (`auto` may resolve to either).
            let strategy = args
                .strategy
                .as_deref()
                .unwrap_or(config.lexical.strategy.name());
            if config.lexical.count_statistics
                && matches!(strategy, "candidates" | "sparse" | "auto")
            {
                // Built now, as `trine serve` builds them (over a server
                // collection too: kept from its change journal).
                local.store.keep_counts();
                frequencies_built(local.store.as_ref(), &requests).await;
            }
            // The gateway's server stack called in this process, as the
            // in-process commands (`search`, `mcp`) call it: native's
            // search is a call in this process too.
            (
                "the in-process mesh".to_string(),
                local.mesh.client()?,
                Some(local.mesh),
                Some((local.store, local.embedder)),
            )
        }
    };
    let loaded = load(Target::Trine(client), requests, args).await?;
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
            .unwrap_or_else(|| config.lexical.strategy.name().to_string()),
        concurrency: args.concurrency,
        rate: args.rate,
        shed: loaded.shed,
        peak_rss_mib: if in_process { own_peak_rss_mib() } else { None },
        server_cpu_ms: loaded.server_cpu_ms(),
        ..Report::of(&loaded.samples, args.duration.as_secs_f64())
    };
    Ok((report, opened, loaded.ran_out))
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

/// The CPU seconds the server's processes `pids` spend from `from` to
/// `until`, measured by a task of its own; none without pids.
fn server_cpu(
    pids: &[u32],
    from: Instant,
    until: Instant,
) -> Option<tokio::task::JoinHandle<Result<f64, String>>> {
    let pids = pids.to_vec();
    (!pids.is_empty()).then(|| {
        tokio::spawn(async move {
            tokio::time::sleep_until(from.into()).await;
            let before = cpu::cpu_seconds(&pids)?;
            tokio::time::sleep_until(until.into()).await;
            Ok(cpu::cpu_seconds(&pids)? - before)
        })
    })
}

/// Runs the load against `target`: what it measured ([`Loaded`]).
async fn load(
    target: Target,
    requests: Arc<Vec<SearchRequest>>,
    args: &Args,
) -> Result<Loaded, String> {
    let started = Instant::now();
    let measure_from = started + args.warmup;
    let until = measure_from + args.duration;
    let server_cpu = server_cpu(&args.server_pids, measure_from, until);
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
    Ok(Loaded {
        samples,
        shed,
        ran_out: ran_out.load(Ordering::Relaxed),
        server_cpu: match server_cpu {
            Some(task) => Some(task.await.map_err(|e| e.to_string())??),
            None => None,
        },
    })
}

/// The store's document frequencies (the embedded store's, or those kept of
/// a server collection) are built once asked (docs/operations.md, "The
/// budget"); until then counts are made in the store. The run measures what
/// a store serves once they are built, and the wait is printed.
async fn frequencies_built(store: &dyn Store, requests: &[SearchRequest]) {
    let Some(tenant) = requests
        .iter()
        .find_map(|r| r.filters.as_ref().map(|f| f.tenant.clone()))
    else {
        return;
    };
    let filter = Filter::tenant(tenant);
    let started = Instant::now();
    let mut waited = false;
    while store.counted(&filter) == Counted::Later {
        if !waited {
            eprintln!(
                "the store's document frequencies are being built; the run starts when they are"
            );
            waited = true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if waited {
        eprintln!(
            "document frequencies built in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let queries = queries::load(&args.queries)?;
    let mode = parse_mode(&args.mode)? as i32;
    check(config, &args)?;
    let requests = distinct(
        queries.iter().map(|q| request(q, &args, mode)).collect(),
        args.no_repeat,
    );
    if requests.is_empty() {
        return Err(format!("{}: no queries", args.queries.display()).into());
    }
    let requests: Arc<Vec<SearchRequest>> = Arc::new(requests);
    let (trine, opened) = if args.native_only {
        (None, None)
    } else {
        let (report, opened, ran_out) = run_trine(config, &args, requests.clone()).await?;
        if ran_out {
            return Err(out_of_queries(&requests, &args).into());
        }
        (Some(report), opened)
    };
    let native = match &args.native {
        Some(lexical) => Some(run_native(config, &args, lexical, opened, requests.clone()).await?),
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

/// The flags that cannot go together, or a `--rate` or `--native` that
/// cannot run.
fn check(config: &Config, args: &Args) -> Result<(), String> {
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(format!(
            "--rate {rate}: must be a positive number of requests a second"
        ));
    }
    if let Some(kind) = &args.native
        && !matches!(kind.as_str(), "bm25" | "sparse")
    {
        return Err(format!("--native {kind:?}: use bm25 or sparse"));
    }
    if args.native.is_some() && args.endpoint.is_some() && config.qdrant.is_none() {
        return Err("--native reads the collection itself: run without --endpoint (embedded), or give --qdrant".into());
    }
    Ok(())
}

/// Why a `--no-repeat` run failed: its distinct queries ran out.
fn out_of_queries(requests: &[SearchRequest], args: &Args) -> String {
    format!(
        "--no-repeat: the {} distinct queries of {} ran out before the warm-up and \
         --duration were over: give more queries or a shorter --duration",
        requests.len(),
        args.queries.display()
    )
}

/// Qdrant's one-call hybrid under the same load, over the in-process run's
/// store and embedder when there was one, else the configured ones.
async fn run_native(
    config: &Config,
    args: &Args,
    lexical: &str,
    opened: Option<Opened>,
    requests: Arc<Vec<SearchRequest>>,
) -> Result<Report, Box<dyn std::error::Error + Send + Sync>> {
    let (store, embedder) = match opened {
        Some(opened) => opened,
        None => (open_store(config).await?, load_embedder(config).await?),
    };
    let target = Target::Native {
        fold: collection_fold(store.as_ref()).await?,
        store,
        embedder,
        lexical: lexical.to_string(),
        limit: usize::try_from(args.limit).unwrap_or(usize::MAX),
    };
    let loaded = load(target, requests.clone(), args).await?;
    if loaded.ran_out {
        return Err(out_of_queries(&requests, args).into());
    }
    Ok(Report {
        target: "Qdrant's one-call hybrid on the same collection".to_string(),
        mode: "native".to_string(),
        strategy: lexical.to_string(),
        concurrency: args.concurrency,
        rate: args.rate,
        shed: loaded.shed,
        peak_rss_mib: own_peak_rss_mib(),
        server_cpu_ms: loaded.server_cpu_ms(),
        ..Report::of(&loaded.samples, args.duration.as_secs_f64())
    })
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
}

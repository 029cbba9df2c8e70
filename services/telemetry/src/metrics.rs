//! One service's Prometheus metrics, and the `/metrics` endpoint that serves
//! them as text (the OpenMetrics text format, which Prometheus scrapes).
//!
//! - `trine_rpc_requests_total{method,code}`, `trine_rpc_errors_total{method,code}`
//! - `trine_rpc_duration_seconds{method}` — a histogram per gRPC method
//! - `trine_stage_duration_seconds{stage}` — a histogram per search stage
//! - `trine_counts_share` — the lexical counts' share of each search's time
//! - `trine_store_duration_seconds{op}` — a histogram per store call
//! - `trine_rpc_in_flight{method}` — calls being answered now
//! - `trine_rpc_shed_total{method}` — calls refused at the in-flight limit
//! - `trine_build_info{service,version}` — 1, naming what runs
//! - `trine_store_retries_total{op,outcome}` — store calls made again
//!   after the store could not be reached: `recovered`, `failed`, or
//!   `throttled` (not made: the retry budget was spent)
//! - `trine_quota_refused_total{quota}` — requests (`rate`) and new
//!   memories (`memories`) refused by a tenant's quota (gateway)
//! - `trine_quota_gateways` — gateways sharing the tenants' request rates
//!   (this one included; 0 where no rate is set)
//! - `trine_frequencies_state{state}` — 1 on the state the document
//!   frequencies are in (`ready`, `building`, `not_kept`), 0 on the others;
//!   `trine_frequencies_tenants`, `_entries`, `_points` — their size once
//!   built (lexical-svc)

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tonic::Code;

/// Every metric family a service serves, by the name its `# TYPE` line
/// gives (a family shows once it has a sample: `trine_rpc_errors` after a
/// failed call, `trine_rpc_shed` after a shed one).
pub const FAMILIES: [&str; 16] = [
    "trine_rpc_requests",
    "trine_rpc_errors",
    "trine_rpc_duration_seconds",
    "trine_rpc_in_flight",
    "trine_rpc_shed",
    "trine_stage_duration_seconds",
    "trine_counts_share",
    "trine_store_duration_seconds",
    "trine_build_info",
    "trine_store_retries",
    "trine_quota_refused",
    "trine_quota_gateways",
    "trine_frequencies_state",
    "trine_frequencies_tenants",
    "trine_frequencies_entries",
    "trine_frequencies_points",
];

/// The states `trine_frequencies_state` names.
pub const FREQUENCIES_STATES: [&str; 3] = ["ready", "building", "not_kept"];

/// The content type of the text served on `/metrics`.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The share of a search's time the lexical counts may take (ADR 0172).
pub const COUNTS_BUDGET: f64 = 0.1;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    method: String,
    code: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    service: String,
    version: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RetryLabels {
    op: String,
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuotaLabels {
    quota: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    op: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds, from 0.25 ms to about 8 s.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
}

/// What a service reads into its gauges as it is scraped.
type Refresh = Box<dyn Fn(&Metrics) + Send + Sync>;

/// The size of the document frequencies, for their gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrequenciesSize {
    pub tenants: u64,
    pub entries: u64,
    pub points: u64,
}

/// One service's metrics.
pub struct Metrics {
    service: String,
    registry: Registry,
    requests: Family<CallLabels, Counter>,
    errors: Family<CallLabels, Counter>,
    rpc_seconds: Histograms<MethodLabels>,
    stage_seconds: Histograms<StageLabels>,
    counts_share: Histogram,
    store_seconds: Histograms<OpLabels>,
    in_flight: Family<MethodLabels, Gauge>,
    shed: Family<MethodLabels, Counter>,
    retries: Family<RetryLabels, Counter>,
    quota_refused: Family<QuotaLabels, Counter>,
    quota_gateways: Gauge,
    frequencies_state: Family<StateLabels, Gauge>,
    frequencies_size: [Gauge; 3],
    refresh: std::sync::Mutex<Vec<Refresh>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

impl Metrics {
    /// Empty metrics of `service` (`gateway`, `lexical-svc`, ...).
    pub fn new(service: &str) -> Arc<Self> {
        let mut metrics = Self {
            service: service.to_string(),
            registry: Registry::with_prefix("trine"),
            requests: Family::<CallLabels, Counter>::default(),
            errors: Family::<CallLabels, Counter>::default(),
            rpc_seconds: Histograms::<MethodLabels>::new_with_constructor(seconds),
            stage_seconds: Histograms::<StageLabels>::new_with_constructor(seconds),
            counts_share: Histogram::new([0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0]),
            store_seconds: Histograms::<OpLabels>::new_with_constructor(seconds),
            in_flight: Family::<MethodLabels, Gauge>::default(),
            shed: Family::<MethodLabels, Counter>::default(),
            retries: Family::<RetryLabels, Counter>::default(),
            quota_refused: Family::<QuotaLabels, Counter>::default(),
            quota_gateways: Gauge::default(),
            frequencies_state: Family::<StateLabels, Gauge>::default(),
            frequencies_size: Default::default(),
            refresh: std::sync::Mutex::new(Vec::new()),
        };
        let build = Family::<BuildLabels, Gauge>::default();
        metrics.register_calls();
        metrics.register_stages();
        metrics.register_serving(&build);
        metrics.register_quota();
        metrics.register_frequencies();
        build
            .get_or_create(&BuildLabels {
                service: service.to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            })
            .set(1);
        Arc::new(metrics)
    }

    /// Registers the grpc calls' families: their counts, errors and time.
    fn register_calls(&mut self) {
        self.registry.register(
            "rpc_requests",
            "grpc calls served, by method and code",
            self.requests.clone(),
        );
        self.registry.register(
            "rpc_errors",
            "grpc calls that ended with a code other than ok",
            self.errors.clone(),
        );
        self.registry.register(
            "rpc_duration_seconds",
            "time to answer a grpc call, by method",
            self.rpc_seconds.clone(),
        );
    }

    /// Registers the search stages' and the store calls' times.
    fn register_stages(&mut self) {
        self.registry.register(
            "stage_duration_seconds",
            "time of each search stage",
            self.stage_seconds.clone(),
        );
        self.registry.register(
            "counts_share",
            "the lexical counts' time over the search's time; the budget is 0.1",
            self.counts_share.clone(),
        );
        self.registry.register(
            "store_duration_seconds",
            "time of each store call, by operation",
            self.store_seconds.clone(),
        );
    }

    /// Registers the calls in flight and shed, `build` (what runs) and the
    /// store's retries.
    fn register_serving(&mut self, build: &Family<BuildLabels, Gauge>) {
        self.registry.register(
            "rpc_in_flight",
            "grpc calls being answered now, by method",
            self.in_flight.clone(),
        );
        self.registry.register(
            "rpc_shed",
            "grpc calls refused at the server's in-flight limit, by method",
            self.shed.clone(),
        );
        self.registry.register(
            "build_info",
            "what runs: the service and trine's version",
            build.clone(),
        );
        self.registry.register(
            "store_retries",
            "store calls made again after the store could not be reached, by operation and outcome",
            self.retries.clone(),
        );
    }

    /// Registers the tenants' quotas: what they refused, and the gateways
    /// sharing the rates.
    fn register_quota(&mut self) {
        self.registry.register(
            "quota_refused",
            "requests (rate) and new memories (memories) refused by a tenant's quota",
            self.quota_refused.clone(),
        );
        self.registry.register(
            "quota_gateways",
            "gateways sharing the tenants' request rates, this one included (0: no rate is set)",
            self.quota_gateways.clone(),
        );
    }

    /// Registers the document frequencies' state and size.
    fn register_frequencies(&mut self) {
        self.registry.register(
            "frequencies_state",
            "1 on the state the document frequencies are in (ready, building, not_kept)",
            self.frequencies_state.clone(),
        );
        for (name, help, gauge) in [
            (
                "frequencies_tenants",
                "tenants the document frequencies hold",
                &self.frequencies_size[0],
            ),
            (
                "frequencies_entries",
                "(tenant, term) and (tenant, dimension) pairs the document frequencies hold, and (term, point) pairs of their postings",
                &self.frequencies_size[1],
            ),
            (
                "frequencies_points",
                "points the document frequencies count",
                &self.frequencies_size[2],
            ),
        ] {
            self.registry.register(name, help, gauge.clone());
        }
    }

    /// Runs `refresh` each time the metrics are encoded, before: how a
    /// service reads a state it does not hear change (the document
    /// frequencies) into its gauges.
    pub fn on_scrape(&self, refresh: impl Fn(&Metrics) + Send + Sync + 'static) {
        match self.refresh.lock() {
            Ok(mut all) => all.push(Box::new(refresh)),
            Err(poisoned) => poisoned.into_inner().push(Box::new(refresh)),
        }
    }

    /// One store call made again, and how it ended.
    pub fn store_retry(&self, op: &str, outcome: &str) {
        self.retries
            .get_or_create(&RetryLabels {
                op: op.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// `n` refused by a tenant's quota of `quota` (`rate`, `memories`).
    pub fn quota_refused(&self, quota: &str, n: u64) {
        self.quota_refused
            .get_or_create(&QuotaLabels {
                quota: quota.to_string(),
            })
            .inc_by(n);
    }

    /// How many gateways share the tenants' request rates.
    pub fn quota_gateways(&self, n: usize) {
        self.quota_gateways
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// The document frequencies' state (one of [`FREQUENCIES_STATES`]) and
    /// size (when built).
    pub fn frequencies(&self, state: &str, size: Option<FrequenciesSize>) {
        for name in FREQUENCIES_STATES {
            self.frequencies_state
                .get_or_create(&StateLabels {
                    state: name.to_string(),
                })
                .set(i64::from(name == state));
        }
        let size = size.unwrap_or(FrequenciesSize {
            tenants: 0,
            entries: 0,
            points: 0,
        });
        for (gauge, n) in
            self.frequencies_size
                .iter()
                .zip([size.tenants, size.entries, size.points])
        {
            gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// A call of `method` begins: in flight until the guard is dropped.
    pub fn begin(self: &Arc<Self>, method: &str) -> InFlight {
        let labels = MethodLabels {
            method: method.to_string(),
        };
        self.in_flight.get_or_create(&labels).inc();
        InFlight {
            metrics: self.clone(),
            labels,
        }
    }

    /// A call of `method` refused at the in-flight limit.
    pub fn shed(&self, method: &str) {
        self.shed
            .get_or_create(&MethodLabels {
                method: method.to_string(),
            })
            .inc();
    }

    /// The service these metrics belong to.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// One gRPC call served.
    pub fn rpc(&self, method: &str, code: Code, took: Duration) {
        let labels = CallLabels {
            method: method.to_string(),
            code: format!("{code:?}"),
        };
        self.requests.get_or_create(&labels).inc();
        if code != Code::Ok {
            self.errors.get_or_create(&labels).inc();
        }
        self.rpc_seconds
            .get_or_create(&MethodLabels {
                method: method.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// One run of a search stage (`lexical.counts`, `semantic.embed`, ...).
    pub fn stage(&self, stage: &str, took: Duration) {
        self.stage_seconds
            .get_or_create(&StageLabels {
                stage: stage.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// One search's counts share.
    pub fn counts_share(&self, share: f64) {
        self.counts_share.observe(share);
    }

    /// One store call (`count`, `scroll`, `get`, `query_dense`, ...).
    pub fn store(&self, op: &str, took: Duration) {
        self.store_seconds
            .get_or_create(&OpLabels { op: op.to_string() })
            .observe(took.as_secs_f64());
    }

    /// The metrics as text.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        match self.refresh.lock() {
            Ok(all) => all.iter().for_each(|refresh| refresh(self)),
            Err(poisoned) => poisoned
                .into_inner()
                .iter()
                .for_each(|refresh| refresh(self)),
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// A call in flight ([`Metrics::begin`]); its end when dropped, whether
/// the call was answered or given up.
#[derive(Debug)]
pub struct InFlight {
    metrics: Arc<Metrics>,
    labels: MethodLabels,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.metrics.in_flight.get_or_create(&self.labels).dec();
    }
}

fn answer(metrics: &Metrics, path: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (status, content_type, body) = match (path, metrics.encode()) {
        ("/metrics", Ok(text)) => (http::StatusCode::OK, CONTENT_TYPE, text),
        ("/metrics", Err(e)) => (
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            format!("cannot encode the metrics: {e}\n"),
        ),
        _ => (
            http::StatusCode::NOT_FOUND,
            "text/plain",
            "not found: metrics are on /metrics\n".to_string(),
        ),
    };
    (status, [(http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// Serves `metrics` on `GET /metrics` (HTTP/1.1) on `listener` until
/// `shutdown` resolves; anything else is 404.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = axum::Router::new().fallback(move |uri: http::Uri| {
        let response = answer(&metrics, uri.path());
        async move { response }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_stage_is_in_the_text() {
        let metrics = Metrics::new("lexical-svc");
        metrics.stage("lexical.counts", Duration::from_millis(3));
        metrics.rpc(
            "/trine.v1.Lexical/Candidates",
            Code::NotFound,
            Duration::ZERO,
        );
        metrics.counts_share(0.05);
        let text = metrics.encode().unwrap();
        assert!(text.contains("trine_stage_duration_seconds_count{stage=\"lexical.counts\"} 1"));
        assert!(text.contains(
            "trine_rpc_errors_total{method=\"/trine.v1.Lexical/Candidates\",code=\"NotFound\"} 1"
        ));
        assert!(text.contains("trine_counts_share_count 1"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn only_metrics_is_served() {
        let metrics = Metrics::new("fusion-svc");
        assert_eq!(answer(&metrics, "/metrics").status(), http::StatusCode::OK);
        assert_eq!(answer(&metrics, "/").status(), http::StatusCode::NOT_FOUND);
    }
}

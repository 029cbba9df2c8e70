//! Observability over the real mesh (four services on loopback ports, real
//! gRPC, the embedded store, the hash embedder): one search is one trace with
//! a span per stage, parent-child across every hop, and each service's
//! `/metrics` is Prometheus text holding the stage histograms.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, SearchResponse};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::{Mesh, MeshConfig};
use trine_store::{EdgeStore, Store};
use trine_telemetry::opentelemetry::Value;
use trine_telemetry::opentelemetry::trace::{SpanId, SpanKind, TraceId};
use trine_telemetry::opentelemetry_sdk::error::OTelSdkResult;
use trine_telemetry::opentelemetry_sdk::trace::{SpanData, SpanExporter};
use trine_telemetry::{Settings, SpanCollector, Telemetry};

/// One subscriber for the whole test binary, exporting into memory.
fn collector() -> Collected {
    static INSTALLED: OnceLock<(Telemetry, Collected)> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let collected = Collected {
                spans: SpanCollector::default(),
                exported: Arc::new(tokio::sync::watch::Sender::new(0)),
            };
            let telemetry = trine_telemetry::init_with_exporter(
                &Settings::new("trine-test"),
                collected.clone(),
            );
            assert!(telemetry.exporting(), "no other subscriber is installed");
            (telemetry, collected)
        })
        .1
        .clone()
}

/// The spans exported so far, and the count of exports, which changes as
/// each span ends (the subscriber exports every span as it ends): what a
/// test waits on for a span to arrive.
#[derive(Debug, Clone)]
struct Collected {
    spans: SpanCollector,
    exported: Arc<tokio::sync::watch::Sender<u64>>,
}

impl SpanExporter for Collected {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let kept = self.spans.export(batch).await;
        self.exported.send_modify(|n| *n += 1);
        kept
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    mesh: Mesh,
    client: MemoryClient<tonic::transport::Channel>,
}

fn record(n: u32, text: &str, tenant: &str) -> Record {
    Record {
        id: format!("00000000-0000-4000-8000-{n:012}"),
        text: text.to_string(),
        tenant: tenant.to_string(),
        source: Some(format!("notes/{n}.md")),
        ..Record::default()
    }
}

/// A mesh over a fresh store holding a few memories of `tenant`, with
/// `/metrics` on free ports.
async fn fixture(tenant: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let config = MeshConfig {
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        ..MeshConfig::default()
    };
    let mesh = trine_testkit::mesh(store, embedder, config).await;
    let mut client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    let records = vec![
        record(1, "The billing retry policy runs every hour.", tenant),
        record(2, "Billing invoices are sent on Mondays.", tenant),
        record(3, "A retry budget keeps the payments queue calm.", tenant),
        record(4, "Lunch is at noon on Fridays.", tenant),
    ];
    trine_testkit::upsert_all(&mut client, records).await;
    Fixture {
        _dir: dir,
        mesh,
        client,
    }
}

async fn search(f: &mut Fixture, query: &str, tenant: &str) -> SearchResponse {
    let answer = f
        .client
        .search(SearchRequest {
            query: query.to_string(),
            filters: Some(Filters {
                tenant: tenant.to_string(),
                ..Filters::default()
            }),
            limit: 4,
            ..SearchRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.degraded, "{:?}", answer.degraded_reasons);
    assert!(!answer.hits.is_empty());
    answer
}

fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

/// The spans of the trace whose `gateway.search` has `tenant`, once the
/// gateway's server span (the root, the last to end) has been exported:
/// looked for again as each span is exported, at most 5 s.
async fn trace_of(collected: &Collected, tenant: &str) -> Vec<SpanData> {
    let mut exported = collected.exported.subscribe();
    let whole = async {
        loop {
            // Seen before the spans are read: an export after the read
            // wakes the wait below.
            exported.borrow_and_update();
            if let Some(trace) = whole_trace(collected.spans.spans(), tenant) {
                return trace;
            }
            exported
                .changed()
                .await
                .expect("the exporter lives as long as the test binary");
        }
    };
    tokio::time::timeout(Duration::from_secs(5), whole)
        .await
        .unwrap_or_else(|_| panic!("no complete trace of the search of {tenant}"))
}

/// Among `spans`, the trace whose `gateway.search` has `tenant`, if its
/// gateway's server span is among them.
fn whole_trace(spans: Vec<SpanData>, tenant: &str) -> Option<Vec<SpanData>> {
    let search = spans.iter().find(|s| {
        s.name == "gateway.search" && attr(s, "tenant") == Some(Value::from(tenant.to_string()))
    })?;
    let trace: TraceId = search.span_context.trace_id();
    let spans: Vec<SpanData> = spans
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect();
    spans
        .iter()
        .any(|s| s.name == "trine.v1.Memory/Search" && s.span_kind == SpanKind::Server)
        .then_some(spans)
}

struct Trace(Vec<SpanData>);

impl Trace {
    fn named(&self, name: &str) -> Vec<&SpanData> {
        self.0.iter().filter(|s| s.name == name).collect()
    }

    fn one(&self, name: &str, kind: SpanKind) -> &SpanData {
        let found: Vec<_> = self
            .named(name)
            .into_iter()
            .filter(|s| s.span_kind == kind)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "one {name} ({kind:?}) span in {:#?}",
            self.names()
        );
        found[0]
    }

    fn span(&self, name: &str) -> &SpanData {
        self.one(name, SpanKind::Internal)
    }

    fn names(&self) -> Vec<String> {
        self.0.iter().map(|s| s.name.to_string()).collect()
    }

    fn id(span: &SpanData) -> SpanId {
        span.span_context.span_id()
    }

    /// `child`'s parent is `parent`.
    fn check_parent(&self, child: &SpanData, parent: &SpanData) {
        assert_eq!(
            child.parent_span_id,
            Self::id(parent),
            "{} is a child of {}",
            child.name,
            parent.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_search_is_one_trace_with_a_span_per_stage() {
    let collector = collector();
    let mut f = fixture("trace-acme").await;
    let answer = search(&mut f, "billing retry", "trace-acme").await;
    let trace = Trace(trace_of(&collector, "trace-acme").await);

    // The root: the gateway's server span, then the search.
    let root = trace.one("trine.v1.Memory/Search", SpanKind::Server);
    assert_eq!(
        root.parent_span_id,
        SpanId::INVALID,
        "the root has no parent"
    );
    let search_span = trace.span("gateway.search");
    trace.check_parent(search_span, root);
    for (key, want) in [
        ("tenant", Value::from("trace-acme".to_string())),
        ("mode", Value::from("hybrid".to_string())),
        ("strategy", Value::from("candidates".to_string())),
        ("terms", Value::I64(2)),
    ] {
        assert_eq!(attr(search_span, key), Some(want), "{key}");
    }
    for key in ["lexical", "semantic", "hits", "limit"] {
        assert!(attr(search_span, key).is_some(), "gateway.search has {key}");
    }
    let Some(Value::F64(share)) = attr(search_span, "counts_share") else {
        panic!("gateway.search carries counts_share");
    };
    assert!((share - answer.counts_share).abs() < 1e-12);
    assert!(share > 0.0 && share < 1.0, "share {share}");

    // Each hop: the gateway's client span, the peer's server span as its
    // (remote) child, the handler's span under it.
    for (rpc, handler) in [
        ("trine.v1.Lexical/Candidates", "lexical.candidates"),
        ("trine.v1.Semantic/Nearest", "semantic.nearest"),
        ("trine.v1.Fusion/Fuse", "fusion"),
    ] {
        let client = trace.one(rpc, SpanKind::Client);
        trace.check_parent(client, search_span);
        let server = trace.one(rpc, SpanKind::Server);
        trace.check_parent(server, client);
        assert!(
            server.parent_span_is_remote,
            "{rpc}: the parent came over the wire"
        );
        trace.check_parent(trace.span(handler), server);
    }

    // The lexical stages.
    let candidates = trace.span("lexical.candidates");
    let counts = trace.span("lexical.counts");
    trace.check_parent(counts, candidates);
    assert_eq!(attr(counts, "terms"), Some(Value::I64(2)));
    let per_term = trace.named("lexical.count");
    assert_eq!(per_term.len(), 2, "one count span per term");
    let mut counted = BTreeMap::new();
    for span in per_term {
        trace.check_parent(span, counts);
        let Some(Value::String(term)) = attr(span, "term") else {
            panic!("lexical.count carries its term");
        };
        let Some(Value::I64(count)) = attr(span, "count") else {
            panic!("lexical.count carries its count");
        };
        counted.insert(term.to_string(), count);
    }
    assert_eq!(
        counted,
        BTreeMap::from([("billing".to_string(), 2), ("retry".to_string(), 2)])
    );
    let read = trace.span("lexical.read");
    trace.check_parent(read, candidates);
    assert!(
        attr(read, "read").is_some(),
        "lexical.read says how many it read"
    );
    // The two phrase reads; "billing retry" has two rare terms, so the
    // rarer one's points are read first and there is no all-terms read.
    trace.check_parent(trace.span("lexical.read.phrase"), read);
    trace.check_parent(trace.span("lexical.read.phrase.sources"), read);
    assert!(
        trace.named("lexical.read.all_terms").is_empty(),
        "no all-terms read: {:?}",
        trace.names()
    );
    let term_reads = trace.named("lexical.read.term");
    assert!(
        !term_reads.is_empty(),
        "the per-term reads: {:?}",
        trace.names()
    );
    for span in term_reads {
        trace.check_parent(span, read);
    }
    let score = trace.span("lexical.score");
    trace.check_parent(score, candidates);
    assert!(attr(score, "candidates").is_some());

    // The semantic stages, fusion and the payload fetch.
    let nearest = trace.span("semantic.nearest");
    trace.check_parent(trace.span("semantic.embed"), nearest);
    trace.check_parent(trace.span("semantic.query"), nearest);
    trace.check_parent(trace.span("gateway.payload"), search_span);

    f.mesh.stop().await.unwrap();
}

/// The samples of an exposition in Prometheus text (OpenMetrics) format,
/// checking each line's grammar: `# HELP|TYPE|UNIT name ...`, `# EOF` last,
/// and `name{label="value",...} number`, every sample of a declared family.
fn parse_exposition(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut families: Vec<String> = Vec::new();
    let mut samples = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"# EOF"),
        "the exposition ends with # EOF"
    );
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    for line in &lines[..lines.len() - 1] {
        if let Some(comment) = line.strip_prefix("# ") {
            let mut parts = comment.splitn(3, ' ');
            let (kind, name) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            assert!(matches!(kind, "HELP" | "TYPE" | "UNIT"), "comment {line:?}");
            assert!(is_name(name), "metric name in {line:?}");
            if kind == "TYPE" {
                let ty = parts.next().unwrap_or("");
                assert!(
                    matches!(
                        ty,
                        "counter"
                            | "gauge"
                            | "histogram"
                            | "summary"
                            | "info"
                            | "unknown"
                            | "stateset"
                            | "gaugehistogram"
                    ),
                    "type in {line:?}"
                );
                families.push(name.to_string());
            }
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("sample {line:?}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("value in {line:?}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series, BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest
                    .strip_suffix('}')
                    .unwrap_or_else(|| panic!("labels in {line:?}"));
                let labels = body
                    .split("\",")
                    .filter(|p| !p.is_empty())
                    .map(|pair| {
                        let (k, v) = pair
                            .split_once("=\"")
                            .unwrap_or_else(|| panic!("label in {line:?}"));
                        assert!(is_name(k), "label name in {line:?}");
                        (k.to_string(), v.trim_end_matches('"').to_string())
                    })
                    .collect();
                (name, labels)
            }
        };
        assert!(is_name(name), "sample name in {line:?}");
        assert!(
            families.iter().any(|f| name == f
                || name
                    .strip_prefix(f.as_str())
                    .is_some_and(
                        |s| ["_total", "_bucket", "_count", "_sum", "_created"].contains(&s)
                    )),
            "{name} belongs to a declared family ({families:?})"
        );
        samples.push((name.to_string(), labels, value));
    }
    samples
}

/// The `_count` of `family` with `label` = `value`.
fn count_of(
    samples: &[(String, BTreeMap<String, String>, f64)],
    family: &str,
    label: &str,
    value: &str,
) -> f64 {
    samples
        .iter()
        .filter(|(name, labels, _)| {
            *name == format!("{family}_count")
                && labels.get(label).map(String::as_str) == Some(value)
        })
        .map(|(_, _, v)| *v)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_service_serves_its_metrics_as_prometheus_text() {
    collector();
    let mut f = fixture("metrics-acme").await;
    search(&mut f, "billing retry", "metrics-acme").await;
    let addrs = f.mesh.metrics.expect("metrics are served");

    let stages = "trine_stage_duration_seconds";
    let store = "trine_store_duration_seconds";
    let gateway = parse_exposition(&trine_testkit::get_metrics(addrs.gateway).await);
    for stage in ["gateway", "lexical", "semantic", "fusion.call", "payload"] {
        assert_eq!(
            count_of(&gateway, stages, "stage", stage),
            1.0,
            "gateway {stage}"
        );
    }
    // The write's ownership read and the search's payload read.
    assert_eq!(count_of(&gateway, store, "op", "get"), 2.0);
    assert_eq!(count_of(&gateway, store, "op", "upsert"), 1.0);
    assert!(
        gateway
            .iter()
            .any(|(n, _, v)| n == "trine_counts_share_count" && *v == 1.0)
    );
    assert!(
        gateway
            .iter()
            .any(|(n, l, v)| n == "trine_rpc_requests_total"
                && l.get("method").map(String::as_str) == Some("/trine.v1.Memory/Search")
                && l.get("code").map(String::as_str) == Some("Ok")
                && *v == 1.0)
    );
    assert_eq!(
        count_of(
            &gateway,
            "trine_rpc_duration_seconds",
            "method",
            "/trine.v1.Memory/Search"
        ),
        1.0
    );

    let lexical = parse_exposition(&trine_testkit::get_metrics(addrs.lexical).await);
    for stage in ["lexical.counts", "lexical.read", "lexical.score"] {
        assert_eq!(
            count_of(&lexical, stages, "stage", stage),
            1.0,
            "lexical {stage}"
        );
    }
    // Each made in the store (`count`), or read from the embedded store's
    // document frequencies (`counted`) once the first count has had them built.
    assert_eq!(
        count_of(&lexical, store, "op", "count") + count_of(&lexical, store, "op", "counted"),
        3.0,
        "N and one per term"
    );

    // The document frequencies are in one state, and counted once built.
    let states: Vec<(&str, f64)> = lexical
        .iter()
        .filter(|(n, _, _)| n == "trine_frequencies_state")
        .map(|(_, l, v)| (l["state"].as_str(), *v))
        .collect();
    assert_eq!(states.len(), 3, "{states:?}");
    assert_eq!(
        states.iter().map(|(_, v)| v).sum::<f64>(),
        1.0,
        "{states:?}"
    );
    let points = lexical
        .iter()
        .find(|(n, _, _)| n == "trine_frequencies_points")
        .map(|(_, _, v)| *v)
        .unwrap();
    if states.contains(&("ready", 1.0)) {
        assert_eq!(points, 4.0, "the fixture's memories");
    } else {
        assert_eq!(points, 0.0);
    }

    let semantic = parse_exposition(&trine_testkit::get_metrics(addrs.semantic).await);
    for stage in ["semantic.embed", "semantic.query"] {
        assert_eq!(
            count_of(&semantic, stages, "stage", stage),
            1.0,
            "semantic {stage}"
        );
    }
    assert_eq!(count_of(&semantic, store, "op", "query_dense"), 1.0);

    let fusion = parse_exposition(&trine_testkit::get_metrics(addrs.fusion).await);
    assert_eq!(count_of(&fusion, stages, "stage", "fusion"), 1.0);

    // A caller's error is counted by its code.
    let bad = f
        .client
        .search(SearchRequest {
            query: " ".to_string(),
            filters: Some(Filters {
                tenant: "metrics-acme".to_string(),
                ..Filters::default()
            }),
            ..SearchRequest::default()
        })
        .await;
    assert_eq!(bad.unwrap_err().code(), tonic::Code::InvalidArgument);
    let gateway = parse_exposition(&trine_testkit::get_metrics(addrs.gateway).await);
    assert!(gateway.iter().any(|(n, l, v)| n == "trine_rpc_errors_total"
        && l.get("code").map(String::as_str) == Some("InvalidArgument")
        && *v == 1.0));
    f.mesh.stop().await.unwrap();
}

/// The metric names an expression reads (`trine_…`), without the series
/// suffixes a family's samples carry.
fn families_read(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = expr;
    while let Some(at) = rest.find("trine_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        let base = ["_bucket", "_count", "_sum", "_total"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(&name);
        names.insert(base.to_string());
    }
    names
}

/// deploy/prometheus-alerts.yml and deploy/grafana-dashboard.json read only
/// metrics trine serves — checked against every service's `/metrics` after
/// a search — and each is well formed: every rule an alert with an
/// expression, a duration and a severity; every panel a query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_alert_rules_and_the_dashboard_read_metrics_trine_serves() {
    collector();
    let mut f = fixture("dashboard-acme").await;
    search(&mut f, "billing retry", "dashboard-acme").await;
    // And a failed call, for the errors' family.
    let refused = f
        .client
        .search(SearchRequest {
            query: "   ".to_string(),
            ..SearchRequest::default()
        })
        .await;
    assert!(refused.is_err());
    let addrs = f.mesh.metrics.expect("metrics are served");
    let mut served: BTreeSet<String> = BTreeSet::new();
    for addr in [addrs.gateway, addrs.lexical, addrs.semantic, addrs.fusion] {
        for line in trine_testkit::get_metrics(addr).await.lines() {
            if let Some(typed) = line.strip_prefix("# TYPE ") {
                served.insert(typed.split(' ').next().unwrap().to_string());
            }
        }
    }
    // Every family served is named in FAMILIES, and every one named is
    // served, but those of events that did not happen: a call shed, a quota
    // refusal, a store call made again.
    let named: BTreeSet<String> = trine_telemetry::metrics::FAMILIES
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert!(served.is_subset(&named), "{served:?} beyond {named:?}");
    let unseen: Vec<&String> = named.difference(&served).collect();
    assert_eq!(
        unseen,
        [
            "trine_quota_refused",
            "trine_rpc_shed",
            "trine_store_retries"
        ],
        "served: {served:?}"
    );

    let deploy = trine_testkit::workspace_dir().join("deploy");
    let rules: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(deploy.join("prometheus-alerts.yml")).unwrap(),
    )
    .unwrap();
    let mut exprs: Vec<String> = Vec::new();
    for group in rules["groups"].as_sequence().unwrap() {
        for rule in group["rules"].as_sequence().unwrap() {
            let alert = rule["alert"].as_str().unwrap();
            assert!(rule["for"].as_str().is_some(), "{alert}: a duration");
            assert!(
                rule["labels"]["severity"].as_str().is_some(),
                "{alert}: a severity"
            );
            exprs.push(rule["expr"].as_str().unwrap().to_string());
        }
    }
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(deploy.join("grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{}: a query", panel["title"]);
        for target in targets {
            exprs.push(target["expr"].as_str().unwrap().to_string());
        }
    }
    let prometheus = std::fs::read_to_string(deploy.join("prometheus.yml")).unwrap();
    assert!(
        prometheus.contains("rule_files"),
        "Prometheus loads the rules"
    );

    let mut unknown = BTreeSet::new();
    for expr in &exprs {
        for family in families_read(expr) {
            if !named.contains(&family) {
                unknown.insert(family);
            }
        }
    }
    assert!(unknown.is_empty(), "read but never served: {unknown:?}");
    assert!(exprs.len() >= 10, "{} expressions", exprs.len());
    f.mesh.stop().await.unwrap();
}

/// Prometheus itself accepts the alert rules and the compose stack's
/// configuration (its `promtool`, from `scripts/fetch-promtool.sh`), the
/// rules where the configuration finds them (`alerts.yml` beside it).
#[test]
fn promtool_accepts_the_alert_rules_and_the_configuration() {
    let promtool = std::env::var_os("TRINE_PROMTOOL_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache/trine/promtool"))
        })
        .map(|dir| dir.join("promtool"))
        .filter(|p| p.is_file());
    let Some(promtool) = promtool else {
        trine_testkit::skipped(
            "promtool's check of the alert rules",
            "run scripts/fetch-promtool.sh",
        );
        return;
    };
    let deploy = trine_testkit::workspace_dir().join("deploy");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        deploy.join("prometheus.yml"),
        dir.path().join("prometheus.yml"),
    )
    .unwrap();
    std::fs::copy(
        deploy.join("prometheus-alerts.yml"),
        dir.path().join("alerts.yml"),
    )
    .unwrap();
    for args in [
        vec!["check", "rules", "alerts.yml"],
        vec!["check", "config", "prometheus.yml"],
    ] {
        let out = std::process::Command::new(&promtool)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "promtool {args:?}: {said}");
        assert!(said.contains("SUCCESS"), "promtool {args:?}: {said}");
    }
}

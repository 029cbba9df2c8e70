//! Client-side balancing toward scaled-out internal services: a peer given
//! as a list of replicas, or as a name resolving to them (a headless
//! service), spreads the calls so that one replica does not take them all.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use trine_api::server::Serving;
use trine_api::v1::lexical_client::LexicalClient;
use trine_api::v1::{CandidatesRequest, Filters};
use trine_embed::{Embedder, HashEmbedder};
use trine_lexical::{LexicalConfig, LexicalService};
use trine_mesh::channel;
use trine_store::{EdgeStore, Store};

/// Starts one lexical-svc replica on `bind` and returns its address and
/// its metrics.
async fn replica(
    store: Arc<dyn Store>,
    bind: &str,
    stop: &watch::Receiver<bool>,
) -> (SocketAddr, Arc<trine_telemetry::Metrics>) {
    let listener = TcpListener::bind(bind).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = LexicalService::new(store, LexicalConfig::default());
    let metrics = service.metrics();
    let mut stop = stop.clone();
    tokio::spawn(trine_lexical::run(
        listener,
        service,
        Serving::default(),
        async move {
            let _ = stop.wait_for(|s| *s).await;
        },
    ));
    (addr, metrics)
}

/// The Candidates calls a replica has answered, from its `/metrics` text.
fn calls(metrics: &trine_telemetry::Metrics) -> u64 {
    metrics
        .encode()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("trine_rpc_requests_total") && l.contains("Candidates"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

fn request() -> CandidatesRequest {
    CandidatesRequest {
        query: "meeting notes".into(),
        filters: Some(Filters {
            tenant: "acme".into(),
            ..Filters::default()
        }),
        ..CandidatesRequest::default()
    }
}

async fn store() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(16));
    trine_gateway::Writer::new(store.clone(), embedder)
        .prepare()
        .await
        .unwrap();
    (dir, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_replicas_shares_the_calls() {
    let (_dir, store) = store().await;
    let (stop, rx) = watch::channel(false);
    let (a, metrics_a) = replica(store.clone(), "127.0.0.1:0", &rx).await;
    let (b, metrics_b) = replica(store.clone(), "127.0.0.1:0", &rx).await;

    let mut client = LexicalClient::new(channel(&format!("{a}, {b}")).unwrap());
    for _ in 0..40 {
        tokio::time::timeout(Duration::from_secs(10), client.candidates(request()))
            .await
            .unwrap()
            .unwrap();
    }
    let (on_a, on_b) = (calls(&metrics_a), calls(&metrics_b));
    assert_eq!(on_a + on_b, 40);
    assert!(
        on_a > 0 && on_b > 0,
        "a {on_a}, b {on_b}: one replica took them all"
    );
    stop.send(true).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_is_resolved_to_its_replicas() {
    let (_dir, store) = store().await;
    let (stop, rx) = watch::channel(false);
    let (a, metrics) = replica(store, "127.0.0.1:0", &rx).await;

    // `localhost` resolves to 127.0.0.1 (and perhaps ::1, where nothing
    // listens: the balancer leaves that address out).
    let mut client = LexicalClient::new(channel(&format!("dns://localhost:{}", a.port())).unwrap());
    for _ in 0..5 {
        tokio::time::timeout(Duration::from_secs(10), client.candidates(request()))
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(calls(&metrics), 5);
    stop.send(true).unwrap();
}

#[tokio::test]
async fn bad_peer_addresses_say_what_to_fix() {
    for (addr, want) in [
        ("127.0.0.1:1,,127.0.0.1:2", "an empty address"),
        ("dns://no-port", "dns://name:port"),
        ("dns://:50052", "dns://name:port"),
    ] {
        let err = channel(addr).unwrap_err().to_string();
        assert!(err.contains(want), "{addr}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_query_is_refused_before_any_work() {
    let (_dir, store) = store().await;
    let (stop, rx) = watch::channel(false);
    let (addr, _) = replica(store, "127.0.0.1:0", &rx).await;
    let mut client = LexicalClient::new(channel(&addr.to_string()).unwrap());
    // Four MiB of distinct words: refused on its size, never split into terms.
    let huge: String = (0..400_000).map(|i| format!("w{i} ")).collect();
    let err = client
        .candidates(CandidatesRequest {
            query: huge,
            ..request()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("bytes, more than the"), "{err:?}");
    stop.send(true).unwrap();
}

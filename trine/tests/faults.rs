//! Faults between the parts (issue 34, point 3): a loopback relay
//! (`trine_testkit::Relay`) between the gateway and each channel, and
//! between the services and a Qdrant server, delays, drops and resets their
//! connections. Every search answers within its caller's deadline (degraded
//! where a channel is out; an error where the store is), no call hangs, the
//! store calls made again stay within the retry budget, and searches answer
//! whole again within seconds of the fault's end.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, SearchResponse, UpsertRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::{MeshConfig, One, PeerAddrs, Service};
use trine_store::{EdgeStore, ServerStore, Store};
use trine_testkit::{Fault, Relay};

/// The caller's deadline of every search here.
const DEADLINE: Duration = Duration::from_millis(1_500);
/// How long after a fault ends searches must answer whole again.
const RECOVERY: Duration = Duration::from_secs(10);
const MEETING: &str = "Meeting 2026-11-11 09:58";

fn records(tenant: &str) -> Vec<Record> {
    let mut records = vec![Record {
        text: format!("{MEETING} in the small room, notes by Ana"),
        tenant: tenant.to_string(),
        ..Record::default()
    }];
    records.extend((0..40).map(|n| Record {
        text: format!("Meeting {n} of the billing team about the retry budget"),
        tenant: tenant.to_string(),
        ..Record::default()
    }));
    records
}

/// One search with the caller's deadline, and how long it took; a call that
/// outlives its deadline by a second is a hung call, and fails the test.
async fn search(
    client: &mut MemoryClient<Channel>,
    tenant: &str,
) -> (Result<SearchResponse, tonic::Status>, Duration) {
    let mut request = tonic::Request::new(SearchRequest {
        query: MEETING.to_string(),
        filters: Some(Filters {
            tenant: tenant.to_string(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    });
    request.set_timeout(DEADLINE);
    let started = Instant::now();
    let answer = tokio::time::timeout(DEADLINE + Duration::from_secs(1), client.search(request))
        .await
        .expect("a search outlived its deadline by a second: a hung call");
    (answer.map(tonic::Response::into_inner), started.elapsed())
}

/// The text of an answer's first hit.
fn first(answer: &SearchResponse) -> &str {
    answer
        .hits
        .first()
        .and_then(|h| h.record.as_ref())
        .map_or("", |r| r.text.as_str())
}

/// Searches until one answers whole (not degraded), within [`RECOVERY`];
/// how long that took. Each search follows the last one's answer (a
/// channel or store connection the fault broke is made again by the call
/// after the one that found it gone), never a timer.
async fn recovered(client: &mut MemoryClient<Channel>, tenant: &str) -> Duration {
    let started = Instant::now();
    loop {
        if let (Ok(answer), _) = search(client, tenant).await
            && !answer.degraded
        {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < RECOVERY,
            "searches not whole again {} s after the fault ended",
            RECOVERY.as_secs()
        );
    }
}

async fn start(one: One, config: &MeshConfig) -> Service {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    Service::start(one, listener, config).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_between_the_gateway_and_its_channels_degrade_within_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let config = MeshConfig::default();
    let lexical = start(
        One::Lexical {
            store: store.clone(),
            embedder: embedder.clone(),
        },
        &config,
    )
    .await;
    let semantic = start(
        One::Semantic {
            store: store.clone(),
            embedder: embedder.clone(),
        },
        &config,
    )
    .await;
    let fusion = start(One::Fusion, &config).await;
    let relays = [
        ("lexical", Relay::start(lexical.addr).await.unwrap()),
        ("semantic", Relay::start(semantic.addr).await.unwrap()),
        ("fusion", Relay::start(fusion.addr).await.unwrap()),
    ];
    let peers = PeerAddrs {
        lexical: relays[0].1.addr().to_string(),
        semantic: relays[1].1.addr().to_string(),
        fusion: relays[2].1.addr().to_string(),
        tls: None,
    };
    let gateway = start(
        One::Gateway {
            store: store.clone(),
            peers,
        },
        &config,
    )
    .await;
    trine_testkit::serving(gateway.addr, "trine.v1.Memory", Duration::from_secs(60)).await;
    let mut client = MemoryClient::connect(format!("http://{}", gateway.addr))
        .await
        .unwrap();
    client
        .upsert(UpsertRequest {
            records: records("acme"),
        })
        .await
        .unwrap();
    recovered(&mut client, "acme").await;

    let faults = [
        Fault::Drop,
        Fault::Reset,
        Fault::Delay(Duration::from_secs(3)),
    ];
    for (name, relay) in &relays {
        for fault in faults {
            relay.set(fault);
            let accepted = relay.accepted();
            let mut searches = 0;
            for _ in 0..3 {
                let (answer, took) = search(&mut client, "acme").await;
                searches += 1;
                let answer = answer.unwrap_or_else(|e| panic!("{name} {fault:?}: {e}"));
                assert!(took <= DEADLINE, "{name} {fault:?}: answered in {took:?}");
                assert!(answer.degraded, "{name} {fault:?}: not degraded");
                let reasons = answer.degraded_reasons.join("; ");
                assert!(reasons.contains(name), "{name} {fault:?}: {reasons}");
                if *name != "lexical" {
                    // The lexical channel answers: the exact match first.
                    assert!(
                        first(&answer).starts_with(MEETING),
                        "{name} {fault:?}: {:?}",
                        first(&answer)
                    );
                }
            }
            // The gateway does not retry a channel within a search: at
            // most a connection a search (and one more) through the relay.
            let opened = relay.accepted() - accepted;
            assert!(
                opened <= searches + 1,
                "{name} {fault:?}: {opened} connections for {searches} searches"
            );
            relay.set(Fault::None);
            let took = recovered(&mut client, "acme").await;
            eprintln!(
                "{name} {fault:?}: whole again after {} ms",
                took.as_millis()
            );
        }
    }
    for service in [gateway, lexical, semantic, fusion] {
        service.stop().await.unwrap();
    }
}

/// The sum of a counter's samples over the lines of `/metrics` texts.
fn total(texts: &[String], prefix: &str) -> f64 {
    texts
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// The store calls made again with this outcome.
fn retries_by(texts: &[String], outcome: &str) -> f64 {
    let label = format!("outcome=\"{outcome}\"");
    texts
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| l.starts_with("trine_store_retries_total") && l.contains(&label))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// The store calls made again (recovered or failed; not those the budget
/// stopped).
fn made(texts: &[String]) -> f64 {
    retries_by(texts, "recovered") + retries_by(texts, "failed")
}

async fn metrics_texts(mesh: &trine_mesh::Mesh) -> Vec<String> {
    let addrs = mesh.metrics.unwrap();
    let mut texts = Vec::new();
    for addr in [addrs.gateway, addrs.lexical, addrs.semantic, addrs.fusion] {
        let body = trine_testkit::get_metrics(addr).await;
        texts.push(body);
    }
    texts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_between_the_services_and_qdrant_are_retried_within_a_budget() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "faults between the services and a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return;
    };
    let url = url.split(',').next().unwrap().trim().trim_end_matches('/');
    let target: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .parse()
        .expect("TRINE_QDRANT_URL is http://ip:port");
    let relay = Relay::start(target).await.unwrap();
    let collection = format!("trine_faults_{}", std::process::id());
    let store: Arc<dyn Store> = Arc::new(
        ServerStore::connect(&format!("http://{}", relay.addr()), &collection)
            .await
            .unwrap(),
    );
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let config = MeshConfig {
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        ..MeshConfig::default()
    };
    let mesh = trine_testkit::mesh(store.clone(), embedder, config).await;
    let mut client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    client
        .upsert(UpsertRequest {
            records: records("acme"),
        })
        .await
        .unwrap();
    recovered(&mut client, "acme").await;

    // A slow network: answers, within the deadline.
    relay.set(Fault::Delay(Duration::from_millis(100)));
    for _ in 0..3 {
        let (answer, took) = search(&mut client, "acme").await;
        let answer = answer.unwrap();
        assert!(took <= DEADLINE, "{took:?}");
        assert!(first(&answer).starts_with(MEETING), "{}", first(&answer));
    }
    relay.set(Fault::None);

    // Qdrant unreachable (each connection reset), then lost (every byte
    // dropped): each search ends within its deadline, answered or not; the
    // calls made again stay within the budget.
    for fault in [Fault::Reset, Fault::Drop] {
        let before = metrics_texts(&mesh).await;
        relay.set(fault);
        let ended = Instant::now() + Duration::from_secs(2);
        let mut searches = 0;
        while Instant::now() < ended {
            let (answer, took) = search(&mut client, "acme").await;
            searches += 1;
            assert!(
                took <= DEADLINE + Duration::from_millis(100),
                "{fault:?}: {took:?}: {answer:?}"
            );
        }
        relay.set(Fault::None);
        let took = recovered(&mut client, "acme").await;
        eprintln!(
            "Qdrant {fault:?}: {searches} searches; whole again after {} ms",
            took.as_millis()
        );
        let after = metrics_texts(&mesh).await;
        let retries = made(&after) - made(&before);
        let throttled = retries_by(&after, "throttled") - retries_by(&before, "throttled");
        let calls = total(&after, "trine_store_duration_seconds_count")
            - total(&before, "trine_store_duration_seconds_count");
        eprintln!(
            "Qdrant {fault:?}: {retries} store calls made again of {calls}, {} not (the budget spent)",
            throttled
        );
        // Each of the three services holding a store has its own budget:
        // about five retries before it throttles, then a tenth of the calls.
        let bound =
            3.0 * (trine_store::Budget::MAX / 2.0 + 2.0) + trine_store::Budget::RATIO * calls;
        assert!(
            retries <= bound,
            "{fault:?}: {retries} retries for {calls} calls"
        );
        if fault == Fault::Reset {
            assert!(retries >= 1.0, "a refused connection is tried again");
        }
    }
    mesh.stop().await.unwrap();
}

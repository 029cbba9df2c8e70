//! Quotas that two gateway replicas enforce together (issue 34, point 4):
//! two gateways — each its own `Quotas`, as two processes have — over one
//! Qdrant server and one set of channels. A tenant's burst, asked of both
//! replicas in turn, is admitted once across the two, not once by each; its
//! memories quota holds across writes through either. Runs when
//! `TRINE_QDRANT_URL` is set.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tonic::Code;
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{GetRequest, Record, UpsertRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_gateway::quota::{Limits, Quotas};
use trine_mesh::{MeshConfig, One, PeerAddrs, Service};
use trine_store::{Op, ServerStore, Store};

const RATE: f64 = 2.0;
const BURST: f64 = 10.0;
const MEMORIES: u64 = 10;

/// A gateway's own quotas: acme has a rate, a burst and a memories quota.
fn quotas() -> Arc<Quotas> {
    let acme = Limits {
        rate: Some(RATE),
        burst: Some(BURST),
        points: Some(MEMORIES),
    };
    Arc::new(Quotas::new(
        Limits::default(),
        HashMap::from([("acme".to_string(), acme)]),
    ))
}

async fn start(one: One, config: &MeshConfig) -> Service {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    Service::start(one, listener, config).await.unwrap()
}

/// The value of an unlabelled gauge in a service's `/metrics`.
async fn gauge(addr: std::net::SocketAddr, name: &str) -> Option<f64> {
    trine_testkit::get_metrics(addr)
        .await
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

fn record(n: u32) -> Record {
    Record {
        id: format!("00000000-0000-4000-8000-{n:012}"),
        text: format!("memory {n} of acme"),
        tenant: "acme".into(),
        ..Record::default()
    }
}

async fn admitted(client: &mut MemoryClient<Channel>) -> bool {
    match client
        .get(GetRequest {
            tenant: "acme".into(),
            ids: vec![record(1).id],
        })
        .await
    {
        Ok(_) => true,
        Err(e) if e.code() == Code::ResourceExhausted => false,
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateway_replicas_share_a_tenants_quotas() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("quotas across gateway replicas", trine_testkit::NO_QDRANT);
        return;
    };
    let url = url.split(',').next().unwrap().trim().to_string();
    let collection = format!("trine_replicas_{}", uuid::Uuid::new_v4().simple());
    let store: Arc<dyn Store> = Arc::new(ServerStore::connect(&url, &collection).await.unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let plain = MeshConfig::default();
    let lexical = start(
        One::Lexical {
            store: store.clone(),
            embedder: embedder.clone(),
        },
        &plain,
    )
    .await;
    let semantic = start(
        One::Semantic {
            store: store.clone(),
            embedder: embedder.clone(),
        },
        &plain,
    )
    .await;
    let fusion = start(One::Fusion, &plain).await;
    let peers = PeerAddrs {
        lexical: lexical.addr.to_string(),
        semantic: semantic.addr.to_string(),
        fusion: fusion.addr.to_string(),
        tls: None,
    };
    let mut gateways = Vec::new();
    let mut heartbeats = Vec::new();
    for _ in 0..2 {
        let config = MeshConfig {
            quotas: Some(quotas()),
            metrics: Some("127.0.0.1:0".parse().unwrap()),
            ..MeshConfig::default()
        };
        // The replica's store, telling the test as each heartbeat ends.
        let noted = trine_testkit::noted(store.clone(), Op::Gateways);
        heartbeats.push(noted.hook().ended());
        let one = One::Gateway {
            store: noted,
            peers: peers.clone(),
        };
        gateways.push(start(one, &config).await);
    }
    // Each replica has heard of the other: its gauge read again after each
    // of its heartbeats (which set it), at most 20 s in all.
    let heard = async {
        for (gateway, beats) in gateways.iter().zip(&mut heartbeats) {
            while gauge(gateway.metrics.unwrap(), "trine_quota_gateways").await != Some(2.0) {
                beats.changed().await.expect("the replica's store lives");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), heard)
        .await
        .expect("the replicas never heard of each other");
    let mut clients = Vec::new();
    for gateway in &gateways {
        clients.push(
            MemoryClient::connect(format!("http://{}", gateway.addr))
                .await
                .unwrap(),
        );
    }

    // Memories: a quota of 10 across writes through either replica.
    for (i, n) in [(0, 1..=6), (1, 7..=12)] {
        let answer = clients[i]
            .upsert(UpsertRequest {
                records: n.map(record).collect(),
            })
            .await
            .unwrap()
            .into_inner();
        if i == 1 {
            assert_eq!(answer.ids.len(), 4, "{answer:?}");
            assert_eq!(answer.failed.len(), 2, "{answer:?}");
            assert!(answer.failed[0].message.contains("quota of 10"));
        }
    }

    // The rate: the burst asked of both in turn, as fast as they answer.
    // Alone, each would admit the whole burst (20 in all); together, the
    // burst and what the rate adds meanwhile.
    let began = Instant::now();
    let mut yes = 0;
    for i in 0..60 {
        if admitted(&mut clients[i % 2]).await {
            yes += 1;
        }
    }
    let took = began.elapsed().as_secs_f64();
    let most = BURST + RATE * took + 2.0;
    eprintln!(
        "replicas: {yes} of 60 admitted in {took:.2} s (burst {BURST}, rate {RATE}/s: at most {most:.1})"
    );
    assert!(
        f64::from(yes) <= most,
        "{yes} admitted in {took:.2} s: the replicas did not share the burst"
    );
    assert!(yes >= 6, "{yes} admitted: the shares are too small");

    for service in gateways.into_iter().chain([lexical, semantic, fusion]) {
        service.stop().await.unwrap();
    }
}

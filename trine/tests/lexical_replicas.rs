//! Two lexical-svc replicas over one Qdrant server, each keeping its own
//! postings of the collection from the change journal (`Tracked`, as two
//! processes do), each behind its own gateway: a write through one gateway
//! is found by the lexical channel of the other replica within
//! [`BOUND`] (its postings read it from the journal: one poll, 200 ms, and
//! the re-read), and neither replica answers one tenant with another's
//! memory. Runs when `TRINE_QDRANT_URL` is set.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Mode, Record, SearchRequest, UpsertRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::{MeshConfig, One, PeerAddrs, Service};
use trine_store::{Op, ServerStore, Store, Tracked};

/// How soon a write through one gateway is found by another replica's
/// lexical channel: docs/operations.md's bound.
const BOUND: Duration = Duration::from_secs(2);

async fn start(one: One, config: &MeshConfig) -> Service {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    Service::start(one, listener, config).await.unwrap()
}

fn record(id: u32, tenant: &str, text: &str) -> Record {
    Record {
        id: format!("00000000-0000-4000-8000-{id:012}"),
        text: text.to_string(),
        tenant: tenant.to_string(),
        ..Record::default()
    }
}

/// The ids a lexical-only search of `tenant` finds.
async fn lexical_ids(client: &mut MemoryClient<Channel>, tenant: &str, query: &str) -> Vec<String> {
    let answer = client
        .search(SearchRequest {
            query: query.to_string(),
            filters: Some(Filters {
                tenant: tenant.to_string(),
                ..Filters::default()
            }),
            mode: Mode::Lexical.into(),
            limit: 20,
            ..SearchRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    answer.hits.into_iter().map(|h| h.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_one_gateway_reaches_the_other_replicas_lexical_channel() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "lexical replicas over a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return;
    };
    let url = url.split(',').next().unwrap().trim().to_string();
    let collection = format!("trine_lexical_replicas_{}", uuid::Uuid::new_v4().simple());
    let plain: Arc<dyn Store> = Arc::new(ServerStore::connect(&url, &collection).await.unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let mut config = MeshConfig::default();
    config.lexical.keep_counts = true;
    let semantic = start(
        One::Semantic {
            store: plain.clone(),
            embedder: embedder.clone(),
        },
        &config,
    )
    .await;
    let fusion = start(One::Fusion, &config).await;
    // The collection (and its journal) the replicas keep, with a memory.
    let spec = trine_store::CollectionSpec {
        embedder: trine_store::EmbedderId {
            name: embedder.name().to_string(),
            dim: embedder.dim(),
        },
        fold: trine_store::Fold::default(),
    };
    plain.ensure_collection(&spec).await.unwrap();
    let first = trine_store::Memory::new(uuid::Uuid::new_v4(), "acme", "first words");
    let dense = embedder
        .embed(std::slice::from_ref(&first.text))
        .await
        .unwrap()
        .remove(0);
    plain
        .upsert(vec![trine_store::Point {
            memory: first,
            dense,
            sparse: None,
            tokens: None,
        }])
        .await
        .unwrap();
    let mut gateways = Vec::new();
    let (mut replicas, mut journal_reads) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let noted = trine_testkit::noted(
            Arc::new(ServerStore::connect(&url, &collection).await.unwrap()),
            Op::Changes,
        );
        journal_reads.push(noted.hook().ended());
        let store: Arc<dyn Store> = Arc::new(Tracked::new(noted));
        let lexical = start(
            One::Lexical {
                store,
                embedder: embedder.clone(),
            },
            &config,
        )
        .await;
        let peers = PeerAddrs {
            lexical: lexical.addr.to_string(),
            semantic: semantic.addr.to_string(),
            fusion: fusion.addr.to_string(),
            tls: None,
        };
        // Each gateway writes through a store of its own, not its replica's.
        let own: Arc<dyn Store> = Arc::new(ServerStore::connect(&url, &collection).await.unwrap());
        gateways.push(start(One::Gateway { store: own, peers }, &config).await);
        replicas.push(lexical);
    }
    let mut clients = Vec::new();
    for gateway in &gateways {
        let client = MemoryClient::connect(format!("http://{}", gateway.addr));
        clients.push(client.await.unwrap());
    }
    for replica in &replicas {
        trine_testkit::serving(replica.addr, "trine.v1.Lexical", Duration::from_secs(60)).await;
    }

    // The same words in two tenants, through gateway 0.
    let written = Instant::now();
    clients[0]
        .upsert(UpsertRequest {
            records: vec![
                record(2, "acme", "omega launch notes"),
                record(3, "globex", "omega launch notes"),
                record(4, "globex", "omega budget"),
            ],
        })
        .await
        .unwrap();
    // Found through gateway 1, whose replica heard of it from the journal:
    // looked for again after each of its journal reads, within the bound.
    let reads = &mut journal_reads[1];
    let found = async {
        loop {
            reads.borrow_and_update();
            if !lexical_ids(&mut clients[1], "acme", "omega")
                .await
                .is_empty()
            {
                return written.elapsed();
            }
            reads.changed().await.expect("the replica's store lives");
        }
    };
    let took = tokio::time::timeout(BOUND, found)
        .await
        .unwrap_or_else(|_| panic!("not found through the other replica within {BOUND:?}"));
    eprintln!("lexical replicas: found through the other replica after {took:?}");

    // Each tenant's own, through either replica.
    for client in &mut clients {
        let acme = lexical_ids(client, "acme", "omega").await;
        assert_eq!(acme, ["00000000-0000-4000-8000-000000000002"]);
        let mut globex = lexical_ids(client, "globex", "omega").await;
        globex.sort();
        assert_eq!(
            globex,
            [
                "00000000-0000-4000-8000-000000000003",
                "00000000-0000-4000-8000-000000000004"
            ]
        );
        assert_eq!(
            lexical_ids(client, "initech", "omega").await,
            Vec::<String>::new()
        );
    }
    for service in gateways
        .into_iter()
        .chain(replicas)
        .chain([semantic, fusion])
    {
        service.stop().await.unwrap();
    }
}

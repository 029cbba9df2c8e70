//! Readiness that means it (docs/operations.md, "The budget"): while lexical-svc's
//! document frequencies are being built, it reports NOT_SERVING and answers
//! no search, the gateway's health follows it, and a search sent meanwhile
//! waits — within its deadline — instead of being answered with counts that
//! each cost a read. The statistics are held back by [`trine_testkit::Gated`], over a real
//! embedded store, for as long as the test needs; the mesh is the real one,
//! over gRPC on loopback.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;
use std::time::Duration;

use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use trine_api::v1::lexical_client::LexicalClient;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{CandidatesRequest, Filters, SearchRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::{MeshConfig, channel};
use trine_store::{EdgeStore, Store};
use trine_testkit::{MEETING, TITLE, gated};

async fn health(addr: std::net::SocketAddr, service: &str) -> ServingStatus {
    let mut client = HealthClient::new(channel(&addr.to_string()).unwrap());
    let asked = HealthCheckRequest {
        service: service.to_string(),
    };
    client.check(asked).await.unwrap().get_ref().status()
}

/// Waits until `service` at `addr` reports `status`, at most a minute:
/// its health's Watch stream, each change as it happens.
async fn until_health(addr: std::net::SocketAddr, service: &str, status: ServingStatus) {
    trine_testkit::until_health(addr, service, status, Duration::from_secs(60)).await;
}

fn title_search(timeout: Duration) -> tonic::Request<SearchRequest> {
    let mut request = tonic::Request::new(SearchRequest {
        query: TITLE.to_string(),
        filters: Some(Filters {
            tenant: "acme".to_string(),
            ..Filters::default()
        }),
        limit: 8,
        ..SearchRequest::default()
    });
    request.set_timeout(timeout);
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_search_is_answered_before_counts_are_cheap() {
    let dir = tempfile::tempdir().unwrap();
    let edge: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let gated = gated(edge);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(64));
    let mesh = trine_testkit::starting_mesh(gated.clone(), embedder, MeshConfig::default()).await;
    let mut client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    let records = trine_testkit::meeting_among(
        "acme",
        |i| format!("Meeting notes {i}: sprint 11 of 2026, at 09:{i:02}."),
        None,
    );
    // Writes are taken while the mesh starts.
    trine_testkit::upsert_all(&mut client, records).await;

    // Starting: lexical-svc and the gateway NOT_SERVING; lexical-svc
    // refuses a search; a search at the gateway waits out its deadline.
    assert_eq!(
        health(mesh.lexical, "trine.v1.Lexical").await,
        ServingStatus::NotServing
    );
    assert_eq!(
        health(mesh.gateway, "trine.v1.Memory").await,
        ServingStatus::NotServing
    );
    let mut lexical = LexicalClient::connect(format!("http://{}", mesh.lexical))
        .await
        .unwrap();
    let refused = lexical
        .candidates(CandidatesRequest {
            query: TITLE.to_string(),
            filters: Some(Filters {
                tenant: "acme".to_string(),
                ..Filters::default()
            }),
            ..CandidatesRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(
        refused.message().contains("document frequencies"),
        "{refused:?}"
    );
    let waited = client
        .search(title_search(Duration::from_millis(500)))
        .await
        .unwrap_err();
    assert_eq!(waited.code(), Code::Unavailable, "{waited:?}");
    assert!(waited.message().contains("starting"), "{waited:?}");
    assert_eq!(
        gated.hook().count_reads(),
        0,
        "no count was read while starting"
    );

    // A search sent while starting is answered once the statistics are
    // built, every count read from them.
    let mut early = client.clone();
    let first =
        tokio::spawn(async move { early.search(title_search(Duration::from_secs(60))).await });
    gated.hook().open();
    let answer = first.await.unwrap().unwrap().into_inner();
    assert_eq!(answer.hits.first().map(|h| h.id.as_str()), Some(MEETING));
    assert_eq!(
        gated.hook().count_reads(),
        0,
        "the first search's counts were read from the statistics"
    );
    eprintln!(
        "the first search's counts share: {:.4}",
        answer.counts_share
    );
    until_health(mesh.lexical, "trine.v1.Lexical", ServingStatus::Serving).await;
    until_health(mesh.gateway, "trine.v1.Memory", ServingStatus::Serving).await;
}

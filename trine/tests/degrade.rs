//! Faults: a channel that is down degrades the answer; no channel at all is
//! UNAVAILABLE; every server answers the gRPC health protocol.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use trine_api::server::Serving;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, UpsertRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_gateway::{MemoryService, Peers, SearchConfig, Searcher, Writer};
use trine_lexical::{LexicalConfig, LexicalService};
use trine_mesh::{MeshConfig, channel};
use trine_store::{EdgeStore, Store};

fn never() -> impl Future<Output = ()> + Send + 'static {
    std::future::pending()
}

/// An address nothing listens on.
async fn dead_addr() -> String {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().to_string()
}

async fn serve_lexical(store: Arc<dyn Store>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let service = LexicalService::new(store, LexicalConfig::default());
    tokio::spawn(trine_lexical::run(l, service, Serving::default(), never()));
    addr
}

/// A gateway whose peers are at the given addresses.
async fn gateway(store: Arc<dyn Store>, lexical: &str, semantic: &str, fusion: &str) -> SocketAddr {
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(64));
    let writer = Writer::new(store.clone(), embedder);
    writer.prepare().await.unwrap();
    let peers = Peers::lazy(
        channel(lexical).unwrap(),
        channel(semantic).unwrap(),
        channel(fusion).unwrap(),
    );
    let config = SearchConfig::default();
    let service = MemoryService::new(writer).with_search(Searcher::new(peers, store, config));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(trine_gateway::run(l, service, Serving::default(), never()));
    addr
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        filters: Some(Filters {
            tenant: "acme".to_string(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_down_degrades_and_none_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let lexical = serve_lexical(store.clone()).await.to_string();
    let (semantic, fusion) = (dead_addr().await, dead_addr().await);

    let addr = gateway(store.clone(), &lexical, &semantic, &fusion).await;
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let record = Record {
        text: "Meeting 2026-11-11 09:58 in the small room".to_string(),
        tenant: "acme".to_string(),
        ..Record::default()
    };
    client
        .upsert(UpsertRequest {
            records: vec![record],
        })
        .await
        .unwrap();

    // semantic-svc and fusion-svc are down: the lexical list answers, fused here.
    let answer = client
        .search(search("Meeting 2026-11-11 09:58"))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.degraded);
    let reasons = answer.degraded_reasons.join("; ");
    assert!(
        reasons.contains("semantic") && reasons.contains("fusion"),
        "{reasons}"
    );
    assert_eq!(answer.hits.len(), 1);
    assert_eq!(answer.hits[0].matched_by, ["lexical", "verbatim"]);

    // No channel at all: UNAVAILABLE, saying why.
    let addr = gateway(store, &dead_addr().await, &semantic, &fusion).await;
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let e = client
        .search(search("Meeting 2026-11-11 09:58"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{}", e.message());
    assert!(
        e.message().contains("no channel answered"),
        "{}",
        e.message()
    );
}

/// Each server reports SERVING; the gateway once its first readiness check
/// has found every channel serving (it starts NOT_SERVING:
/// docs/operations.md, "The budget"), which is waited for on the health
/// service's Watch stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_reports_serving() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(64));
    let mesh = trine_testkit::mesh(store, embedder, MeshConfig::default()).await;
    let servers = [
        (mesh.gateway, "trine.v1.Memory"),
        (mesh.lexical, "trine.v1.Lexical"),
        (mesh.semantic, "trine.v1.Semantic"),
        (mesh.fusion, "trine.v1.Fusion"),
    ];
    for (addr, service) in servers {
        // Its health's Watch stream: the status now, then each change.
        let before = trine_testkit::until_health(
            addr,
            service,
            ServingStatus::Serving,
            std::time::Duration::from_secs(30),
        )
        .await;
        assert!(
            before.iter().all(|s| *s == ServingStatus::NotServing),
            "{service} at {addr}: {before:?} before SERVING"
        );
    }
    mesh.stop().await.unwrap();
}

/// A lexical-svc that answers with no candidates and records the
/// `grpc-timeout` of each call it gets.
#[derive(Clone, Default)]
struct Recording(Arc<std::sync::Mutex<Vec<Option<std::time::Duration>>>>);

#[tonic::async_trait]
impl trine_api::v1::lexical_server::Lexical for Recording {
    async fn candidates(
        &self,
        request: tonic::Request<trine_api::v1::CandidatesRequest>,
    ) -> Result<tonic::Response<trine_api::v1::CandidatesResponse>, tonic::Status> {
        let timeout = trine_api::caller_timeout(request.metadata());
        self.0.lock().unwrap().push(timeout);
        Ok(tonic::Response::new(
            trine_api::v1::CandidatesResponse::default(),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hop_gets_no_longer_than_the_caller_has_left() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let recording = Recording::default();
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let lexical = l.local_addr().unwrap().to_string();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(trine_api::v1::lexical_server::LexicalServer::new(
                recording.clone(),
            ))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l)),
    );
    let (semantic, fusion) = (dead_addr().await, dead_addr().await);
    let addr = gateway(store, &lexical, &semantic, &fusion).await;
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();

    // No deadline from the caller: the hop gets the configured 10 s.
    client.search(search("deploys")).await.unwrap();
    // 1.5 s from the caller: the hop gets what is left of it.
    let mut request = tonic::Request::new(search("deploys"));
    request.set_timeout(std::time::Duration::from_millis(1500));
    client.search(request).await.unwrap();

    let seen = recording.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], Some(SearchConfig::default().channel_deadline));
    let given = seen[1].expect("a grpc-timeout on the hop");
    assert!(
        given <= std::time::Duration::from_millis(1500)
            && given > std::time::Duration::from_millis(500),
        "{given:?}"
    );
}

/// A semantic-svc that embeds with the hash embedder and records the
/// `grpc-timeout` of each Embed call — or fails each with `fail`, when set.
#[derive(Clone, Default)]
struct RecordingEmbeds(
    Arc<std::sync::Mutex<Vec<Option<std::time::Duration>>>>,
    Arc<std::sync::Mutex<Option<tonic::Code>>>,
);

#[tonic::async_trait]
impl trine_api::v1::semantic_server::Semantic for RecordingEmbeds {
    async fn nearest(
        &self,
        _: tonic::Request<trine_api::v1::NearestRequest>,
    ) -> Result<tonic::Response<trine_api::v1::NearestResponse>, tonic::Status> {
        Ok(tonic::Response::new(
            trine_api::v1::NearestResponse::default(),
        ))
    }

    async fn embed(
        &self,
        request: tonic::Request<trine_api::v1::EmbedRequest>,
    ) -> Result<tonic::Response<trine_api::v1::EmbedResponse>, tonic::Status> {
        let timeout = trine_api::caller_timeout(request.metadata());
        self.0.lock().unwrap().push(timeout);
        if let Some(code) = *self.1.lock().unwrap() {
            return Err(tonic::Status::new(code, "told to fail"));
        }
        let request = request.into_inner();
        // As semantic-svc answers: the tokens too where a write asks.
        let embedded = HashEmbedder::new(64)
            .embed_tokens(&request.texts, trine_embed::Side::Memory(None))
            .await
            .unwrap();
        let tokens = if request.tokens == trine_api::v1::TokenSide::Memory as i32 {
            embedded
                .iter()
                .map(|(_, t)| trine_api::tokens_to_wire(t))
                .collect()
        } else {
            Vec::new()
        };
        let vectors = embedded
            .into_iter()
            .map(|(values, _)| trine_api::v1::Vector { values })
            .collect();
        Ok(tonic::Response::new(trine_api::v1::EmbedResponse {
            vectors,
            embedder: "hash".into(),
            dim: 64,
            tokens,
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upserts_embedding_gets_no_longer_than_the_caller_has_left() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let recording = RecordingEmbeds::default();
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let semantic = l.local_addr().unwrap().to_string();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(trine_api::v1::semantic_server::SemanticServer::new(
                recording.clone(),
            ))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l)),
    );
    let embedder = trine_semantic::RemoteEmbedder::connect(channel(&semantic).unwrap())
        .await
        .unwrap();
    let service = MemoryService::new(Writer::new(store, Arc::new(embedder)));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(trine_gateway::run(l, service, Serving::default(), never()));
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let upsert = || UpsertRequest {
        records: vec![Record {
            text: "Meeting 2026-11-11 09:58".into(),
            tenant: "acme".into(),
            ..Record::default()
        }],
    };
    client.upsert(upsert()).await.unwrap();
    let mut request = tonic::Request::new(upsert());
    request.set_timeout(std::time::Duration::from_millis(1500));
    client.upsert(request).await.unwrap();

    // semantic-svc's own code comes through the gateway: its INVALID_ARGUMENT
    // is the caller's, it being unavailable is UNAVAILABLE (not INTERNAL).
    for code in [
        Code::InvalidArgument,
        Code::Unavailable,
        Code::DeadlineExceeded,
    ] {
        *recording.1.lock().unwrap() = Some(code);
        let e = client.upsert(upsert()).await.unwrap_err();
        assert_eq!(e.code(), code, "{}", e.message());
        assert!(e.message().contains("semantic-svc"), "{}", e.message());
    }
    *recording.1.lock().unwrap() = None;

    let seen = recording.0.lock().unwrap().clone();
    // The connect's probe, then one Embed per upsert.
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert_eq!(seen[1], Some(trine_semantic::EMBED_DEADLINE));
    let given = seen[2].expect("a grpc-timeout on the hop");
    assert!(
        given <= std::time::Duration::from_millis(1500)
            && given > std::time::Duration::from_millis(500),
        "{given:?}"
    );
}

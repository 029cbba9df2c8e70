//! gRPC reflection for every client: both versions (v1, and v1alpha that
//! the official Python package and older tools speak), each port listing
//! only the services it serves.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio_stream::StreamExt;
use trine_mesh::MeshConfig;

/// The services a port lists through reflection of one version (`v1` or
/// `v1alpha`: the same messages in two packages).
macro_rules! listed {
    ($name:ident, $version:ident) => {
        async fn $name(addr: std::net::SocketAddr) -> BTreeSet<String> {
            use tonic_reflection::pb::$version::ServerReflectionRequest;
            use tonic_reflection::pb::$version::server_reflection_client::ServerReflectionClient;
            use tonic_reflection::pb::$version::server_reflection_request::MessageRequest;
            use tonic_reflection::pb::$version::server_reflection_response::MessageResponse;
            let channel = trine_mesh::channel(&addr.to_string()).unwrap();
            let mut client = ServerReflectionClient::new(channel);
            let asked = ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            };
            let mut answers = client
                .server_reflection_info(tokio_stream::once(asked))
                .await
                .unwrap()
                .into_inner();
            match answers.next().await.unwrap().unwrap().message_response {
                Some(MessageResponse::ListServicesResponse(list)) => {
                    list.service.into_iter().map(|s| s.name).collect()
                }
                other => panic!("{other:?}"),
            }
        }
    };
}

listed!(listed_v1, v1);
listed!(listed_v1alpha, v1alpha);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_port_reflects_what_it_serves_in_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn trine_store::Store> =
        Arc::new(trine_store::EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder: Arc<dyn trine_embed::Embedder> = Arc::new(trine_embed::HashEmbedder::new(64));
    let mesh = trine_testkit::mesh(store, embedder, MeshConfig::default()).await;
    let always = [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ];
    for (addr, own) in [
        (mesh.gateway, "trine.v1.Memory"),
        (mesh.lexical, "trine.v1.Lexical"),
        (mesh.semantic, "trine.v1.Semantic"),
        (mesh.fusion, "trine.v1.Fusion"),
    ] {
        let want: BTreeSet<String> = always.iter().chain([&own]).map(|s| s.to_string()).collect();
        assert_eq!(listed_v1(addr).await, want, "v1 on {own}'s port");
        assert_eq!(listed_v1alpha(addr).await, want, "v1alpha on {own}'s port");
    }
    mesh.stop().await.unwrap();
}

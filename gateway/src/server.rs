//! Serving the gateway over gRPC, with health and reflection.

use std::future::Future;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::Server;
use tonic::transport::server::Router;
use trine_api::v1::memory_server::MemoryServer;

use crate::service::MemoryService;

/// Adds the gRPC health and reflection services to a router and serves it on
/// `listener` until `shutdown` resolves, then drains in-flight calls.
pub async fn serve_grpc(
    router: Router,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    router
        .serve_with_incoming_shutdown(TcpListenerStream::new(listener), shutdown)
        .await
}

/// Serves the `Memory` service on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    service: MemoryService,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<MemoryServer<MemoryService>>().await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(trine_api::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| tracing::warn!(error = %e, "reflection unavailable"))
        .ok();
    let router = Server::builder()
        .add_service(health_service)
        .add_optional_service(reflection)
        .add_service(MemoryServer::new(service));
    serve_grpc(router, listener, shutdown).await
}

//! Serving a set of gRPC services the way every trine server does: with the
//! health service (each named service SERVING) and reflection, each call in a
//! server span that continues the caller's trace and counted in the service's
//! metrics, until the shutdown future resolves, then draining in-flight calls.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use trine_telemetry::Metrics;
use trine_telemetry::grpc::ServerLayer;

/// Serves `routes` on `listener` until `shutdown` resolves. `names` are the
/// fully qualified service names reported SERVING by the health service;
/// calls are counted in `metrics`.
pub async fn serve(
    routes: Routes,
    names: &[&str],
    metrics: Arc<Metrics>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let (health, health_service) = tonic_health::server::health_reporter();
    for name in names {
        health
            .set_service_status(*name, ServingStatus::Serving)
            .await;
    }
    let mut routes = routes.add_service(health_service);
    match tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
    {
        Ok(reflection) => routes = routes.add_service(reflection),
        Err(e) => tracing::warn!(error = %e, "grpc reflection unavailable"),
    }
    let drained = async move {
        shutdown.await;
        for name in names {
            health
                .set_service_status(*name, ServingStatus::NotServing)
                .await;
        }
    };
    // Without TCP_NODELAY a response of several segments waits for the
    // peer's delayed ACK (~40 ms on Linux).
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    Server::builder()
        .layer(ServerLayer::new(metrics))
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, drained)
        .await
}

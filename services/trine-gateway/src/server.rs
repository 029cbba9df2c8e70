//! Serving the gateway over gRPC.

use std::future::Future;

use tokio::net::TcpListener;
use tonic::server::NamedService;
use tonic::service::Routes;
use trine_api::v1::memory_server::MemoryServer;

use crate::service::MemoryService;

/// Serves the `Memory` service on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    service: MemoryService,
    serving: trine_api::server::Serving,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let names = [<MemoryServer<MemoryService> as NamedService>::NAME];
    let metrics = service.metrics();
    let ready = Some(service.readiness());
    let routes = Routes::new(serving.apply(MemoryServer::new(service)));
    trine_api::server::serve(routes, &names, metrics, serving, listener, ready, shutdown).await
}

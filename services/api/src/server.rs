//! Serving a set of gRPC services the way every trine server does: with the
//! health service (each named service SERVING) and reflection, each call in a
//! server span that continues the caller's trace and counted in the service's
//! metrics, until the shutdown future resolves, then draining in-flight calls.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use prost::Message;
use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use trine_telemetry::Metrics;
use trine_telemetry::grpc::{ServerLayer, Transport};

/// Every path a trine server can answer (`/package.Service/Method`): the
/// methods of trine's protos, of the health service and of reflection, read
/// from their file descriptor sets.
pub fn known_paths() -> HashSet<String> {
    [
        crate::FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
    ]
    .into_iter()
    .filter_map(|bytes| prost_types::FileDescriptorSet::decode(bytes).ok())
    .flat_map(|set| set.file)
    .flat_map(|file| {
        let package = file.package.unwrap_or_default();
        file.service.into_iter().flat_map(move |service| {
            let service_name = match (package.as_str(), service.name.as_deref()) {
                ("", name) => name.unwrap_or_default().to_string(),
                (package, name) => format!("{package}.{}", name.unwrap_or_default()),
            };
            service
                .method
                .into_iter()
                .filter_map(move |m| m.name.map(|name| format!("/{service_name}/{name}")))
        })
    })
    .collect()
}

/// `[server]`: each server's calls in flight (beyond them it sheds with
/// RESOURCE_EXHAUSTED) and largest message, in and out.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub max_in_flight: usize,
    pub max_message_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        let serving = Serving::default();
        Self {
            max_in_flight: serving.max_in_flight,
            max_message_bytes: serving.max_message_bytes,
        }
    }
}

/// How one server serves: calls in flight at once (beyond them it sheds
/// with RESOURCE_EXHAUSTED, health checks aside), the largest message it
/// decodes or sends (each generated server applies it: [`Serving::apply`]),
/// and TLS — its certificate, and with a client CA, client certificates
/// required (mTLS).
#[derive(Debug, Clone)]
pub struct Serving {
    pub max_in_flight: usize,
    pub max_message_bytes: usize,
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

impl Default for Serving {
    fn default() -> Self {
        Self {
            max_in_flight: 256,
            max_message_bytes: 16 << 20,
            tls: None,
        }
    }
}

/// A generated server whose message sizes can be bounded.
pub trait Bounded: Sized {
    fn bounded(self, bytes: usize) -> Self;
}

macro_rules! bounded {
    ($($server:ty),*) => {$(
        impl<T> Bounded for $server {
            fn bounded(self, bytes: usize) -> Self {
                self.max_decoding_message_size(bytes)
                    .max_encoding_message_size(bytes)
            }
        }
    )*};
}

bounded!(
    crate::v1::memory_server::MemoryServer<T>,
    crate::v1::lexical_server::LexicalServer<T>,
    crate::v1::semantic_server::SemanticServer<T>,
    crate::v1::fusion_server::FusionServer<T>
);

impl Serving {
    /// `server` with these message sizes.
    pub fn apply<S: Bounded>(&self, server: S) -> S {
        server.bounded(self.max_message_bytes)
    }
}

/// A service trine serves on a port of its own: the generated server that
/// wraps it, its metrics and, where it has one, its readiness.
pub trait Served: Sized {
    type Server: Bounded
        + tonic::server::NamedService
        + tonic::codegen::Service<
            tonic::codegen::http::Request<tonic::body::Body>,
            Response = tonic::codegen::http::Response<tonic::body::Body>,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static;

    /// The generated server around the service.
    fn server(self) -> Self::Server;

    /// The registry its `/metrics` shows.
    fn metrics(&self) -> Arc<Metrics>;

    /// Whether it is ready to answer ([`Readiness`]); `None`: from the start.
    fn readiness(&self) -> Readiness {
        None
    }
}

/// Serves `service` on `listener` with `serving`'s limits until `shutdown`
/// resolves ([`serve`]): the one way every trine service is run.
pub async fn run<S: Served>(
    listener: TcpListener,
    service: S,
    serving: Serving,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let names = [<S::Server as tonic::server::NamedService>::NAME];
    let metrics = service.metrics();
    let ready = service.readiness();
    let routes = Routes::new(serving.apply(service.server()));
    serve(routes, &names, metrics, serving, listener, ready, shutdown).await
}

/// `service` as a client reaches it in this process ([`Transport::local`]):
/// its generated server with `serving`'s message limits under the same
/// [`ServerLayer`] a port serves it with (trace, metrics, shedding), called
/// directly. The embedded mesh's gateway calls its channels so. `own_task`:
/// each call a task of its own, for a callee whose work may not yield while
/// the caller has another call to make at the same time.
pub fn in_process<S: Served>(service: S, serving: &Serving, own_task: bool) -> Transport {
    let layer = ServerLayer::new(service.metrics(), known_paths()).shedding(serving.max_in_flight);
    let stack = tower_layer::Layer::layer(&layer, serving.apply(service.server()));
    Transport::local(stack, own_task)
}

/// The services every port lists besides its own: health and reflection.
const ADVERTISED_ALWAYS: [&str; 3] = [
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// Whether a server is ready to answer, as its health service reports it:
/// SERVING while the value is true, NOT_SERVING while it is false. `None`:
/// SERVING from the start.
pub type Readiness = Option<tokio::sync::watch::Receiver<bool>>;

fn status_of(ready: bool) -> ServingStatus {
    if ready {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    }
}

/// Serves `routes` on `listener` until `shutdown` resolves. `names` are the
/// fully qualified service names the health service reports, SERVING as
/// `ready` says (then NOT_SERVING while draining); calls are counted in
/// `metrics`; beyond `serving.max_in_flight` calls at once, calls are shed.
pub async fn serve(
    routes: Routes,
    names: &[&str],
    metrics: Arc<Metrics>,
    serving: Serving,
    listener: TcpListener,
    ready: Readiness,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let (health, health_service) = tonic_health::server::health_reporter();
    let now = ready.as_ref().is_none_or(|r| *r.borrow());
    for name in names {
        health.set_service_status(*name, status_of(now)).await;
    }
    // The health follows `ready` until the server drains.
    let follower = ready.map(|mut ready| {
        let (health, names) = (
            health.clone(),
            names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
        );
        tokio::spawn(async move {
            while ready.changed().await.is_ok() {
                let status = status_of(*ready.borrow_and_update());
                for name in &names {
                    health.set_service_status(name, status).await;
                }
            }
        })
    });
    let mut routes = routes.add_service(health_service);
    // Reflection in both versions (the official Python package and older
    // tools speak only v1alpha), each listing only what this port serves.
    let reflection = || {
        let advertised = names.iter().copied().chain(ADVERTISED_ALWAYS);
        advertised.fold(
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(crate::FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET),
            |builder, name| builder.with_service_name(name),
        )
    };
    match (reflection().build_v1(), reflection().build_v1alpha()) {
        (Ok(v1), Ok(v1alpha)) => routes = routes.add_service(v1).add_service(v1alpha),
        (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "grpc reflection unavailable"),
    }
    let drained = async move {
        shutdown.await;
        if let Some(follower) = follower {
            follower.abort();
        }
        for name in names {
            health
                .set_service_status(*name, ServingStatus::NotServing)
                .await;
        }
    };
    // Without TCP_NODELAY a response of several segments waits for the
    // peer's delayed ACK (~40 ms on Linux).
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let mut builder = Server::builder();
    if let Some(tls) = serving.tls {
        builder = builder.tls_config(tls)?;
    }
    builder
        .layer(ServerLayer::new(metrics, known_paths()).shedding(serving.max_in_flight))
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, drained)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_paths_are_every_served_method() {
        let known = known_paths();
        for path in [
            "/trine.v1.Memory/Search",
            "/trine.v1.Memory/Upsert",
            "/trine.v1.Lexical/Candidates",
            "/trine.v1.Semantic/Nearest",
            "/trine.v1.Fusion/Fuse",
            "/grpc.health.v1.Health/Check",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        ] {
            assert!(known.contains(path), "{path} in {known:?}");
        }
        assert!(!known.contains("/trine.v1.Memory/Nope"));
        assert!(known.len() < 64, "a bounded set: {known:?}");
    }
}

//! W3C trace-context through gRPC: the client injects the current span's
//! context into the request metadata ([`Propagate`]), the server extracts it
//! and opens its span as the caller's child ([`ServerLayer`]), so one search
//! is one trace across the four services.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tonic::Code;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::metrics::Metrics;

struct MetadataInjector<'a>(&'a mut MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(key), Ok(value)) = (
            MetadataKey::from_bytes(key.as_bytes()),
            MetadataValue::try_from(value.as_str()),
        ) {
            self.0.insert(key, value);
        }
    }
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// Writes the current span's trace context (`traceparent`, `tracestate`)
/// into outgoing metadata.
pub fn inject(metadata: &mut MetadataMap) {
    let context = Span::current().context();
    TraceContextPropagator::new().inject_context(&context, &mut MetadataInjector(metadata));
}

/// The trace context a request carries (empty when it carries none).
pub fn extract(headers: &http::HeaderMap) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&HeaderExtractor(headers))
}

/// A client interceptor that injects the current span's trace context into
/// every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Propagate;

impl tonic::service::Interceptor for Propagate {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        inject(request.metadata_mut());
        Ok(request)
    }
}

/// A transport whose calls carry the caller's trace context.
pub type Traced = InterceptedService<Transport, Propagate>;

/// Wraps a channel so that its calls carry the trace context.
pub fn traced(channel: Channel) -> Traced {
    InterceptedService::new(Transport::remote(channel), Propagate)
}

/// Wraps a transport so that its calls carry the trace context.
pub fn traced_over(transport: Transport) -> Traced {
    InterceptedService::new(transport, Propagate)
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Answer =
    Pin<Box<dyn Future<Output = Result<http::Response<tonic::body::Body>, BoxError>> + Send>>;

/// How a client reaches a service: a connection ([`Channel`]: loopback or
/// the network), or the service's own server stack in this process — the
/// same codec, limits, trace and metrics, without a socket or HTTP/2
/// framing (the embedded mesh, one process).
#[derive(Clone)]
pub struct Transport(Via);

#[derive(Clone)]
enum Via {
    Remote(Channel),
    /// One call of the stack, in this process.
    Local(Arc<dyn Fn(http::Request<tonic::body::Body>) -> Answer + Send + Sync>),
}

impl Transport {
    /// Calls over `channel`.
    pub fn remote(channel: Channel) -> Self {
        Self(Via::Remote(channel))
    }

    /// The server stack `stack`, called in this process: on the caller's
    /// task, or (`own_task`) each call a task of its own.
    pub fn local<S>(stack: S, own_task: bool) -> Self
    where
        S: tower_service::Service<
                http::Request<tonic::body::Body>,
                Response = http::Response<tonic::body::Body>,
                Error = std::convert::Infallible,
            > + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        // With `own_task`, each call a task of its own, as a call to another
        // process would be: a channel whose work never yields (the
        // postings' reads) must not hold up the caller's other calls,
        // polled on the same task. A call made alone needs no task.
        Self(Via::Local(Arc::new(move |request| -> Answer {
            let mut stack = stack.clone();
            let call = async move {
                std::future::poll_fn(|cx| stack.poll_ready(cx))
                    .await
                    .map_err(|e| Box::new(e) as BoxError)?;
                stack
                    .call(request)
                    .await
                    .map_err(|e| Box::new(e) as BoxError)
            };
            if !own_task {
                return Box::pin(call);
            }
            let task = tokio::spawn(call);
            Box::pin(async move { task.await.map_err(|e| Box::new(e) as BoxError)? })
        })))
    }
}

impl tower_service::Service<http::Request<tonic::body::Body>> for Transport {
    type Response = http::Response<tonic::body::Body>;
    type Error = BoxError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match &mut self.0 {
            Via::Remote(channel) => channel.poll_ready(cx).map_err(Into::into),
            Via::Local(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        match &mut self.0 {
            Via::Remote(channel) => {
                let answer = channel.call(request);
                Box::pin(async move { answer.await.map_err(Into::into) })
            }
            Via::Local(stack) => stack(request),
        }
    }
}

/// The span of an outgoing call to `service`/`method` (e.g.
/// `trine.v1.Lexical`, `Candidates`): enter it (or instrument the call with
/// it) so that [`Propagate`] sends it as the callee's parent.
pub fn client_span(service: &str, method: &str) -> Span {
    tracing::info_span!(
        "grpc.client",
        otel.name = %format!("{service}/{method}"),
        otel.kind = "client",
        rpc.system = "grpc",
        rpc.service = %service,
        rpc.method = %method,
    )
}

/// `/pkg.Service/Method` → (`pkg.Service`, `Method`).
fn rpc_names(path: &str) -> (&str, &str) {
    let path = path.trim_start_matches('/');
    path.split_once('/').unwrap_or((path, ""))
}

/// The gRPC code of a response: in the headers for an error answered at once
/// (trailers-only), otherwise OK (a unary success sends it in the trailers).
fn code_of(headers: &http::HeaderMap) -> Code {
    headers
        .get("grpc-status")
        .map_or(Code::Ok, |v| Code::from_bytes(v.as_bytes()))
}

/// The server side of every trine service: extracts the caller's trace
/// context, runs the call inside a server span that is the caller's child,
/// and counts the call, its code and its latency in [`Metrics`]. With a
/// limit ([`ServerLayer::shedding`]), a call beyond it is answered at once
/// with RESOURCE_EXHAUSTED: load is shed, never queued.
#[derive(Debug, Clone)]
pub struct ServerLayer {
    metrics: Arc<Metrics>,
    known: Arc<HashSet<String>>,
    limit: Option<InFlight>,
}

/// The calls a server runs at once, beyond which it sheds.
#[derive(Debug, Clone)]
struct InFlight {
    permits: Arc<tokio::sync::Semaphore>,
    max: usize,
}

/// Paths never shed: the health check must answer under load, or an
/// orchestrator restarts a busy server.
fn never_shed(path: &str) -> bool {
    path.starts_with("/grpc.health.v1.Health/")
}

impl ServerLayer {
    /// `known`: the paths (`/package.Service/Method`) the server answers. A
    /// call to any other path is counted as [`OTHER_METHOD`], so that
    /// callers cannot grow the registry with made-up paths.
    pub fn new(metrics: Arc<Metrics>, known: HashSet<String>) -> Self {
        Self {
            metrics,
            known: Arc::new(known),
            limit: None,
        }
    }

    /// At most `max` calls at once (health checks aside); the next is
    /// refused with RESOURCE_EXHAUSTED until one finishes.
    pub fn shedding(self, max: usize) -> Self {
        Self {
            limit: Some(InFlight {
                permits: Arc::new(tokio::sync::Semaphore::new(max)),
                max,
            }),
            ..self
        }
    }
}

/// The `method` label of calls to paths the server does not answer.
pub const OTHER_METHOD: &str = "other";

impl<S> tower_layer::Layer<S> for ServerLayer {
    type Service = ServerTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ServerTrace {
            inner,
            metrics: self.metrics.clone(),
            known: self.known.clone(),
            limit: self.limit.clone(),
        }
    }
}

/// The service [`ServerLayer`] wraps around a server's routes.
#[derive(Debug, Clone)]
pub struct ServerTrace<S> {
    inner: S,
    metrics: Arc<Metrics>,
    known: Arc<HashSet<String>>,
    limit: Option<InFlight>,
}

impl<S, ReqBody, ResBody> tower_service::Service<http::Request<ReqBody>> for ServerTrace<S>
where
    S: tower_service::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Default + Send + 'static,
    S::Error: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let path = request.uri().path();
        let path = if self.known.contains(path) {
            path.to_string()
        } else {
            OTHER_METHOD.to_string()
        };
        let (service, method) = rpc_names(&path);
        let span = tracing::info_span!(
            "grpc.server",
            otel.name = %format!("{service}/{method}"),
            otel.kind = "server",
            rpc.system = "grpc",
            rpc.service = %service,
            rpc.method = %method,
            rpc.grpc.status_code = tracing::field::Empty,
        );
        // Without an exporting layer there is no span to parent: fine.
        let _ = span.set_parent(extract(request.headers()));
        let started = Instant::now();
        let metrics = self.metrics.clone();
        let permit = match &self.limit {
            Some(limit) if !never_shed(&path) => match limit.permits.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    let shed = tonic::Status::resource_exhausted(format!(
                        "the server is at its limit of {} calls in flight: retry after a backoff",
                        limit.max
                    ))
                    .into_http::<ResBody>();
                    span.record("rpc.grpc.status_code", Code::ResourceExhausted as i32);
                    metrics.rpc(&path, Code::ResourceExhausted, started.elapsed());
                    metrics.shed(&path);
                    return Box::pin(std::future::ready(Ok(shed)));
                }
            },
            _ => None,
        };
        let in_flight = metrics.begin(&path);
        let call = self.inner.call(request);
        let recorded = span.clone();
        Box::pin(
            async move {
                let result = call.await;
                drop(permit);
                drop(in_flight);
                let code = match &result {
                    Ok(response) => code_of(response.headers()),
                    Err(_) => Code::Unknown,
                };
                recorded.record("rpc.grpc.status_code", code as i32);
                metrics.rpc(&path, code, started.elapsed());
                result
            }
            .instrument(span),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_service_and_method() {
        assert_eq!(
            rpc_names("/trine.v1.Lexical/Candidates"),
            ("trine.v1.Lexical", "Candidates")
        );
        assert_eq!(rpc_names("/odd"), ("odd", ""));
    }

    /// A server that answers every call with an empty OK response.
    #[derive(Clone)]
    struct Answer;

    impl tower_service::Service<http::Request<()>> for Answer {
        type Response = http::Response<()>;
        type Error = std::convert::Infallible;
        type Future = std::future::Ready<Result<http::Response<()>, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: http::Request<()>) -> Self::Future {
            std::future::ready(Ok(http::Response::new(())))
        }
    }

    /// A server whose calls wait until they are released.
    #[derive(Clone)]
    struct Held(Arc<tokio::sync::Semaphore>);

    impl tower_service::Service<http::Request<()>> for Held {
        type Response = http::Response<()>;
        type Error = std::convert::Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: http::Request<()>) -> Self::Future {
            let gate = self.0.clone();
            Box::pin(async move {
                let _released = gate.acquire().await;
                Ok(http::Response::new(()))
            })
        }
    }

    #[test]
    fn calls_beyond_the_limit_are_shed_at_once_and_health_never() {
        use tower_layer::Layer;
        let metrics = Metrics::new("test");
        let known = HashSet::from([
            "/trine.v1.Memory/Search".to_string(),
            "/grpc.health.v1.Health/Check".to_string(),
        ]);
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let mut server = ServerLayer::new(metrics.clone(), known)
            .shedding(2)
            .layer(Held(gate.clone()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut call = |path: &str| {
            let request = http::Request::builder().uri(path).body(()).unwrap();
            tower_service::Service::call(&mut server, request)
        };
        let held = [
            call("/trine.v1.Memory/Search"),
            call("/trine.v1.Memory/Search"),
        ];
        let shed = runtime.block_on(call("/trine.v1.Memory/Search")).unwrap();
        assert_eq!(code_of(shed.headers()), Code::ResourceExhausted);
        let health = call("/grpc.health.v1.Health/Check");
        gate.add_permits(3);
        assert_eq!(
            code_of(runtime.block_on(health).unwrap().headers()),
            Code::Ok
        );
        for call in held {
            assert_eq!(code_of(runtime.block_on(call).unwrap().headers()), Code::Ok);
        }
        // The held calls finished: their places are free again.
        gate.add_permits(1);
        let again = runtime.block_on(call("/trine.v1.Memory/Search")).unwrap();
        assert_eq!(code_of(again.headers()), Code::Ok);
        let text = metrics.encode().unwrap();
        assert!(text.contains("code=\"ResourceExhausted\""), "{text}");
    }

    #[test]
    fn only_known_paths_become_metric_labels() {
        use tower_layer::Layer;
        let metrics = Metrics::new("test");
        let known = HashSet::from(["/trine.v1.Memory/Search".to_string()]);
        let mut server = ServerLayer::new(metrics.clone(), known).layer(Answer);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for path in [
            "/trine.v1.Memory/Search",
            "/made.Up/Path1",
            "/made.Up/Path2",
            "/x",
        ] {
            let request = http::Request::builder().uri(path).body(()).unwrap();
            runtime
                .block_on(tower_service::Service::call(&mut server, request))
                .unwrap();
        }
        let text = metrics.encode().unwrap();
        assert!(
            text.contains("method=\"/trine.v1.Memory/Search\""),
            "{text}"
        );
        assert!(text.contains("method=\"other\""), "{text}");
        assert!(
            !text.contains("made.Up") && !text.contains("\"/x\""),
            "{text}"
        );
    }

    #[test]
    fn the_code_is_read_from_a_trailers_only_answer() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(code_of(&headers), Code::Ok);
        headers.insert("grpc-status", http::HeaderValue::from_static("3"));
        assert_eq!(code_of(&headers), Code::InvalidArgument);
    }
}

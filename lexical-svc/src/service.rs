//! The `Lexical` gRPC service: the edge between the wire and [`candidates`].

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpListener;
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic::{Request, Response, Status};
use trine_api::v1::lexical_server::{Lexical, LexicalServer};
use trine_api::v1::{self, StageTiming};
use trine_api::{filter_from_wire, status};
use trine_core::{ErrorKind, Strategy};
use trine_store::{Metered, Store};
use trine_telemetry::Metrics;

use crate::{LexicalConfig, LexicalError, candidates};

/// Serves the lexical channel over a store.
#[derive(Clone)]
pub struct LexicalService {
    store: Arc<dyn Store>,
    config: LexicalConfig,
    metrics: Arc<Metrics>,
}

impl LexicalService {
    /// A service over `store`, with metrics of its own (store calls timed).
    pub fn new(store: Arc<dyn Store>, config: LexicalConfig) -> Self {
        let metrics = Metrics::new("lexical-svc");
        Self {
            store: Arc::new(Metered::new(store, metrics.clone())),
            config,
            metrics,
        }
    }

    /// The service's metrics, to serve on `/metrics`.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }
}

/// Checks a requested strategy; only `candidates` is served by this build.
fn check_strategy(name: &str) -> Result<(), LexicalError> {
    if name.is_empty() {
        return Ok(());
    }
    match Strategy::parse(name).map_err(LexicalError::UnknownStrategy)? {
        Strategy::Candidates => Ok(()),
        other => Err(LexicalError::NotServed(other.name().to_string())),
    }
}

#[tonic::async_trait]
impl Lexical for LexicalService {
    #[tracing::instrument(
        name = "lexical.candidates",
        skip_all,
        fields(
            tenant = request.get_ref().filters.as_ref().map(|f| f.tenant.as_str()).unwrap_or(""),
            strategy = "candidates",
            terms = trine_telemetry::int(trine_core::terms(&request.get_ref().query).len()),
            cap = tracing::field::Empty,
            candidates = tracing::field::Empty,
        )
    )]
    async fn candidates(
        &self,
        request: Request<v1::CandidatesRequest>,
    ) -> Result<Response<v1::CandidatesResponse>, Status> {
        let request = request.into_inner();
        check_strategy(&request.strategy).map_err(|e| status(e.kind(), e.to_string()))?;
        let filter = filter_from_wire(request.filters.as_ref(), chrono::Utc::now())
            .map_err(|e| status(ErrorKind::InvalidArgument, e))?;
        let cap = match usize::try_from(request.cap).unwrap_or(usize::MAX) {
            0 => self.config.cap,
            cap if cap > self.config.max_cap => {
                return Err(status(
                    ErrorKind::InvalidArgument,
                    format!("cap {cap} is above the maximum {}", self.config.max_cap),
                ));
            }
            cap => cap,
        };
        let span = tracing::Span::current();
        span.record("cap", trine_telemetry::int(cap));
        let started = Instant::now();
        let found = candidates(self.store.as_ref(), &request.query, &filter, cap)
            .await
            .map_err(|e| status(e.kind(), e.to_string()))?;
        span.record("candidates", trine_telemetry::int(found.list.len()));
        for (stage, took) in &found.timings {
            self.metrics.stage(stage, *took);
        }
        self.metrics.stage("lexical", started.elapsed());
        Ok(Response::new(v1::CandidatesResponse {
            candidates: found
                .list
                .iter()
                .map(|c| v1::Candidate {
                    id: c.id.to_string(),
                    score: c.score,
                    verbatim: c.verbatim,
                })
                .collect(),
            strategy: "candidates".to_string(),
            timings: found
                .timings
                .iter()
                .map(|(stage, took)| StageTiming {
                    stage: (*stage).to_string(),
                    millis: took.as_secs_f64() * 1000.0,
                })
                .collect(),
        }))
    }
}

/// Serves the `Lexical` service on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    service: LexicalService,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let names = [<LexicalServer<LexicalService> as NamedService>::NAME];
    let metrics = service.metrics();
    let routes = Routes::new(LexicalServer::new(service));
    trine_api::server::serve(routes, &names, metrics, listener, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_are_checked() {
        assert!(check_strategy("").is_ok());
        assert!(check_strategy("candidates").is_ok());
        assert_eq!(
            check_strategy("bm25").unwrap_err().kind(),
            ErrorKind::Unimplemented
        );
        let unknown = check_strategy("magic").unwrap_err();
        assert_eq!(unknown.kind(), ErrorKind::InvalidArgument);
        assert!(unknown.to_string().contains("magic"));
    }
}

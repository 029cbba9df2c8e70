//! The `Lexical` gRPC service: the edge between the wire and [`candidates`].

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic::{Request, Response, Status};
use trine_api::v1::lexical_server::{Lexical, LexicalServer};
use trine_api::v1::{self, StageTiming};
use trine_api::{filter_from_wire, status};
use trine_core::{ErrorKind, Strategy};
use trine_store::Store;

use crate::{LexicalConfig, LexicalError, candidates};

/// Serves the lexical channel over a store.
#[derive(Clone)]
pub struct LexicalService {
    store: Arc<dyn Store>,
    config: LexicalConfig,
}

impl LexicalService {
    pub fn new(store: Arc<dyn Store>, config: LexicalConfig) -> Self {
        Self { store, config }
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
    #[tracing::instrument(skip_all, fields(tenant = request.get_ref().filters.as_ref().map(|f| f.tenant.as_str()).unwrap_or("")))]
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
        let found = candidates(self.store.as_ref(), &request.query, &filter, cap)
            .await
            .map_err(|e| status(e.kind(), e.to_string()))?;
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
    let routes = Routes::new(LexicalServer::new(service));
    trine_api::server::serve(routes, &names, listener, shutdown).await
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

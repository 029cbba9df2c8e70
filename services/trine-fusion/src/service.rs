//! The `Fusion` gRPC service.

use std::sync::Arc;
use std::time::Instant;
use trine_core::Stage;

use tonic::{Request, Response, Status};
use trine_api::v1::fusion_server::{Fusion, FusionServer};
use trine_api::v1::{self, StageTiming};
use trine_api::{fused_to_wire, fusion_from_wire, invalid};
use trine_core::fusion::{self, LexicalEntry, Lists, Settings};
use trine_core::model::parse_id;
use trine_telemetry::Metrics;

/// The most hits one Fuse may return.
pub const MAX_LIMIT: usize = 1000;

/// Serves fusion; it holds no state but its metrics.
#[derive(Debug, Clone)]
pub struct FusionService {
    settings: Settings,
    metrics: Arc<Metrics>,
}

impl FusionService {
    /// A fusion service with these settings by default (a request's weights
    /// and fusion options override them).
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            metrics: Metrics::new("fusion-svc"),
        }
    }

    /// The service's metrics, to serve on `/metrics`.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }
}

/// Fuses a request's lists under `defaults` with what the request sets: the
/// fusion of the service, and of `trine eval`'s fused configurations (the
/// gateway, when fusion-svc is down, calls `trine_core::fusion::fuse` with
/// the search's settings: the same rules).
pub fn fuse_request(
    request: &v1::FuseRequest,
    defaults: &Settings,
    limit: usize,
) -> Result<Vec<v1::FusedHit>, String> {
    if !(request.lexical_reference.is_finite() && request.lexical_reference >= 0.0) {
        return Err(format!(
            "lexical_reference is {}: give a finite number >= 0 (0: unknown)",
            request.lexical_reference
        ));
    }
    let settings = fusion_from_wire(defaults, request.weights.as_ref(), request.fusion.as_ref())?;
    let entries = |wire: &[v1::Candidate]| {
        wire.iter()
            .map(|c| {
                Ok(LexicalEntry {
                    id: parse_id(&c.id)?,
                    score: c.score,
                    verbatim: c.verbatim,
                })
            })
            .collect::<Result<Vec<_>, String>>()
    };
    let lexical = entries(&request.lexical)?;
    let asked = entries(&request.question_lexical)?;
    let semantic = request
        .semantic
        .iter()
        .map(|n| Ok((parse_id(&n.id)?, n.score)))
        .collect::<Result<Vec<_>, String>>()?;
    let lists = Lists {
        query: &request.query,
        lexical: &lexical,
        semantic: &semantic,
        lexical_reference: request.lexical_reference,
        terms: usize::try_from(request.terms).unwrap_or(usize::MAX),
    };
    let fused = if request.question {
        fusion::fuse_spread(&lists, &asked, &settings, limit)
    } else {
        fusion::fuse(&lists, &settings, limit)
    };
    Ok(fused.iter().map(fused_to_wire).collect())
}

#[tonic::async_trait]
impl Fusion for FusionService {
    #[tracing::instrument(name = "fusion", skip_all, fields(lexical = trine_telemetry::int(request.get_ref().lexical.len()), semantic = trine_telemetry::int(request.get_ref().semantic.len()), hits = tracing::field::Empty))]
    async fn fuse(
        &self,
        request: Request<v1::FuseRequest>,
    ) -> Result<Response<v1::FuseResponse>, Status> {
        let started = Instant::now();
        let request = request.into_inner();
        let limit = usize::try_from(request.limit).unwrap_or(usize::MAX);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(invalid(format!(
                "limit must be 1..={MAX_LIMIT}, not {limit}"
            )));
        }
        let hits = fuse_request(&request, &self.settings, limit).map_err(invalid)?;
        tracing::Span::current().record("hits", trine_telemetry::int(hits.len()));
        self.metrics.stage(Stage::Fusion.name(), started.elapsed());
        Ok(Response::new(v1::FuseResponse {
            hits,
            timings: vec![StageTiming {
                stage: Stage::Fusion.name().to_string(),
                millis: started.elapsed().as_secs_f64() * 1000.0,
            }],
        }))
    }
}

impl trine_api::server::Served for FusionService {
    type Server = FusionServer<FusionService>;

    fn server(self) -> Self::Server {
        FusionServer::new(self)
    }

    fn metrics(&self) -> Arc<Metrics> {
        FusionService::metrics(self)
    }
}

/// Serves the service on `listener` until `shutdown` resolves.
pub use trine_api::server::run;

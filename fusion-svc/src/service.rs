//! The `Fusion` gRPC service.

use std::sync::Arc;
use std::time::Instant;

use tonic::{Request, Response, Status};
use trine_api::v1::fusion_server::{Fusion, FusionServer};
use trine_api::v1::{self, StageTiming};
use trine_api::{fused_to_wire, fusion_from_wire, invalid};
use trine_core::Named;
use trine_core::Stage;
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
/// The largest score magnitude a fusion request may carry: far above any
/// channel's (cosine within ±1, BM25 in the tens), far below where the
/// normalisation's arithmetic overflows.
pub const MAX_SCORE: f64 = 1e12;

/// The smallest non-zero lexical reference (a BM25 full-match score) taken:
/// far below a real one (a term in every one of 10^9 memories scores ~1e-9).
pub const MIN_REFERENCE: f64 = 1e-12;

pub fn fuse_request(
    request: &v1::FuseRequest,
    defaults: &Settings,
    limit: usize,
) -> Result<Vec<v1::FusedHit>, String> {
    // A reference near 0 would scale scores past any bound (found by the
    // wire fuzz target: 3e-294 fused to an infinite score).
    let reference = request.lexical_reference;
    if !(reference == 0.0 || (MIN_REFERENCE..=MAX_SCORE).contains(&reference)) {
        return Err(format!(
            "lexical_reference is {}: give 0 (unknown) or a number from {MIN_REFERENCE:e} to {MAX_SCORE:e}",
            request.lexical_reference
        ));
    }
    let settings = fusion_from_wire(defaults, request.weights.as_ref(), request.fusion.as_ref())?;
    // A score that is not a number, infinite or beyond any channel's has no
    // place in an order: the normalisation's differences would overflow and
    // reach the fused scores as infinities or NaN (found by the wire fuzz
    // target).
    let finite = |list: &str, id: &str, score: f64| {
        if score.is_finite() && score.abs() <= MAX_SCORE {
            Ok(score)
        } else {
            Err(format!(
                "the {list} score of {id} is {score}: give a finite number within ±{MAX_SCORE:e}"
            ))
        }
    };
    let entries = |list: &str, wire: &[v1::Candidate]| {
        wire.iter()
            .map(|c| {
                finite(list, &c.id, c.score)?;
                Ok(LexicalEntry {
                    id: parse_id(&c.id)?,
                    score: c.score,
                    verbatim: c.verbatim,
                })
            })
            .collect::<Result<Vec<_>, String>>()
    };
    let lexical = entries("lexical", &request.lexical)?;
    let asked = entries("question_lexical", &request.question_lexical)?;
    let semantic = request
        .semantic
        .iter()
        .map(|n| Ok((parse_id(&n.id)?, finite("semantic", &n.id, n.score)?)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, score: f64, verbatim: bool) -> v1::Candidate {
        v1::Candidate {
            id: id.into(),
            score,
            verbatim,
        }
    }

    const A: &str = "99b1eae8-49ff-484d-8a6c-020000c55c1c";
    const B: &str = "fb9a081c-dd12-4dcd-89a4-9d0e3e203c0a";

    /// Found by the wire fuzz target: infinite lexical and NaN semantic
    /// scores fused to a NaN score. They are refused, naming the list.
    #[test]
    fn scores_that_are_not_finite_are_refused() {
        for (lexical, semantic, list) in [
            (f64::INFINITY, 0.5, "lexical"),
            (f64::NEG_INFINITY, 0.5, "lexical"),
            (f64::MAX, 0.5, "lexical"),
            (1.0, f64::NAN, "semantic"),
            (1.0, -1e13, "semantic"),
        ] {
            let request = v1::FuseRequest {
                lexical: vec![candidate(A, lexical, true)],
                semantic: vec![v1::Neighbor {
                    id: B.into(),
                    score: semantic,
                }],
                limit: 8,
                ..v1::FuseRequest::default()
            };
            let e = fuse_request(&request, &Settings::default(), 8).unwrap_err();
            assert!(e.contains(&format!("the {list} score")), "{e}");
        }
        // A reference of 3e-294 scaled a score to infinity (wire fuzz target).
        for reference in [3.13151306251402e-294, -1.0, f64::NAN, 1e13] {
            let request = v1::FuseRequest {
                lexical: vec![candidate(A, 1.17, true)],
                lexical_reference: reference,
                limit: 8,
                ..v1::FuseRequest::default()
            };
            let e = fuse_request(&request, &Settings::default(), 8).unwrap_err();
            assert!(e.contains("lexical_reference"), "{e}");
        }
    }

    /// The largest scores taken, either sign, and the smallest, in both
    /// lists and both fusions, fuse to finite scores.
    #[test]
    fn extreme_finite_scores_fuse_to_finite_scores() {
        for question in [false, true] {
            for big in [MAX_SCORE, -MAX_SCORE, f64::MIN_POSITIVE, 5e-324, 0.0] {
                for reference in [MIN_REFERENCE, MAX_SCORE, 0.0] {
                    let request = v1::FuseRequest {
                        lexical: vec![candidate(A, big, true), candidate(B, MAX_SCORE, false)],
                        question_lexical: vec![candidate(B, big, false)],
                        semantic: vec![
                            v1::Neighbor {
                                id: A.into(),
                                score: big,
                            },
                            v1::Neighbor {
                                id: B.into(),
                                score: -MAX_SCORE,
                            },
                        ],
                        lexical_reference: reference,
                        terms: 45,
                        question,
                        limit: 8,
                        ..v1::FuseRequest::default()
                    };
                    let hits = fuse_request(&request, &Settings::default(), 8).unwrap();
                    assert!(!hits.is_empty());
                    assert!(
                        hits.iter().all(|h| h.score.is_finite()),
                        "{big} question {question}: {hits:?}"
                    );
                }
            }
        }
    }
}

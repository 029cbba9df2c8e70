//! The gateway's gRPC edge to its peers: [`Peers`] calls lexical-svc,
//! semantic-svc and fusion-svc with a deadline and the trace context, and
//! turns the domain query into their requests and their answers back into
//! domain lists.

use std::future::Future;
use std::time::Duration;

use tonic::transport::Channel;
use tonic::{Request, Status, async_trait};
use tonic_health::pb::health_client::HealthClient;
use tracing::Instrument;
use trine_api::v1::fusion_client::FusionClient;
use trine_api::v1::lexical_client::LexicalClient;
use trine_api::v1::semantic_client::SemanticClient;
use trine_api::v1::{self};
use trine_api::{filter_to_wire, fused_from_wire, fusion_to_wire, kind_of, timings_from_wire};
use trine_core::ErrorKind;
use trine_core::Named;
use trine_core::fusion::LexicalEntry;
use trine_core::model::parse_id;
use trine_telemetry::grpc::{Traced, Transport, client_span, traced_over};

use crate::query::{
    Channels, FusedList, LexicalList, PeerError, SearchQuery, SemanticList, ToFuse, Unready,
};

/// The gateway's view of the internal services. Every call carries the
/// trace context of its client span.
#[derive(Clone)]
pub struct Peers {
    pub lexical: LexicalClient<Traced>,
    pub semantic: SemanticClient<Traced>,
    pub fusion: FusionClient<Traced>,
    /// Each peer's health service, for readiness.
    health: [(&'static str, &'static str, HealthClient<Channel>); 3],
}

impl Peers {
    /// Clients over lazily connected channels: the gateway starts even when a
    /// peer is down, and degrades until it is back.
    pub fn lazy(lexical: Channel, semantic: Channel, fusion: Channel) -> Self {
        let remote = |c: &Channel| Transport::remote(c.clone());
        Self::over(
            [remote(&lexical), remote(&semantic), remote(&fusion)],
            [lexical, semantic, fusion],
        )
    }

    /// Clients calling lexical-svc, semantic-svc and fusion-svc over
    /// `transports` (in that order; in this process where they are local:
    /// [`trine_api::server::in_process`]), their health asked over
    /// `health`'s channels (where each serves its port).
    pub fn over(transports: [Transport; 3], health: [Channel; 3]) -> Self {
        let [lexical, semantic, fusion] = transports;
        let [lexical_health, semantic_health, fusion_health] = health;
        Self {
            health: [
                (
                    "lexical-svc",
                    "trine.v1.Lexical",
                    HealthClient::new(lexical_health),
                ),
                (
                    "semantic-svc",
                    "trine.v1.Semantic",
                    HealthClient::new(semantic_health),
                ),
                (
                    "fusion-svc",
                    "trine.v1.Fusion",
                    HealthClient::new(fusion_health),
                ),
            ],
            lexical: LexicalClient::new(traced_over(lexical)),
            semantic: SemanticClient::new(traced_over(semantic)),
            fusion: FusionClient::new(traced_over(fusion)),
        }
    }
}

fn peer_error(status: &Status) -> PeerError {
    PeerError {
        kind: kind_of(status.code()),
        message: status.message().to_string(),
    }
}

/// An answer the peer should not have given (an id that is none).
fn malformed(peer: &str, why: String) -> PeerError {
    PeerError {
        kind: ErrorKind::Internal,
        message: format!("{peer} returned {why}"),
    }
}

/// Calls a peer with a deadline (sent as `grpc-timeout`, and enforced here).
async fn call<T, F>(deadline: Duration, rpc: F) -> Result<T, PeerError>
where
    F: Future<Output = Result<tonic::Response<T>, Status>>,
{
    match tokio::time::timeout(deadline, rpc).await {
        Ok(result) => result
            .map(tonic::Response::into_inner)
            .map_err(|s| peer_error(&s)),
        Err(_) => Err(PeerError {
            kind: ErrorKind::DeadlineExceeded,
            message: format!("no answer within {} ms", deadline.as_millis()),
        }),
    }
}

fn with_deadline<T>(message: T, deadline: Duration) -> Request<T> {
    let mut request = Request::new(message);
    request.set_timeout(deadline);
    request
}

#[async_trait]
impl Channels for Peers {
    async fn candidates(
        &self,
        query: &SearchQuery,
        deadline: Duration,
    ) -> Result<LexicalList, PeerError> {
        let message = v1::CandidatesRequest {
            query: query.text.clone(),
            filters: Some(filter_to_wire(&query.filter)),
            cap: 0,
            strategy: query
                .strategy
                .map(|s| s.name().to_string())
                .unwrap_or_default(),
            question: query.question,
        };
        let mut client = self.lexical.clone();
        let answer = call(
            deadline,
            client.candidates(with_deadline(message, deadline)),
        )
        .instrument(client_span("trine.v1.Lexical", "Candidates"))
        .await?;
        if !(answer.reference_score.is_finite() && answer.reference_score >= 0.0) {
            return Err(malformed(
                "lexical-svc",
                format!("a reference score of {}", answer.reference_score),
            ));
        }
        let entries = |wire: &[v1::Candidate]| {
            wire.iter()
                .map(|c| {
                    Ok(LexicalEntry {
                        id: parse_id(&c.id).map_err(|e| malformed("lexical-svc", e))?,
                        score: c.score,
                        verbatim: c.verbatim,
                    })
                })
                .collect::<Result<Vec<_>, PeerError>>()
        };
        let candidates = entries(&answer.candidates)?;
        // Only a question is answered with a question's list.
        let question = if query.question && !answer.question_strategy.is_empty() {
            Some((
                answer.question_strategy,
                entries(&answer.question_candidates)?,
            ))
        } else {
            None
        };
        Ok(LexicalList {
            candidates,
            strategy: answer.strategy,
            reference: answer.reference_score,
            terms: usize::try_from(answer.terms).unwrap_or(usize::MAX),
            question,
            timings: timings_from_wire(&answer.timings),
        })
    }

    async fn nearest(
        &self,
        query: &SearchQuery,
        deadline: Duration,
    ) -> Result<SemanticList, PeerError> {
        let message = v1::NearestRequest {
            query: query.text.clone(),
            filters: Some(filter_to_wire(&query.filter)),
            cap: 0,
            tokens: query.late(),
        };
        let mut client = self.semantic.clone();
        let answer = call(deadline, client.nearest(with_deadline(message, deadline)))
            .instrument(client_span("trine.v1.Semantic", "Nearest"))
            .await?;
        let neighbors = answer
            .neighbors
            .iter()
            .map(|n| {
                parse_id(&n.id)
                    .map(|id| (id, n.score))
                    .map_err(|e| malformed("semantic-svc", e))
            })
            .collect::<Result<_, _>>()?;
        let tokens = answer
            .query_tokens
            .as_ref()
            .map(trine_api::query_tokens_from_wire)
            .transpose()
            .map_err(|e| malformed("semantic-svc", e))?;
        Ok(SemanticList {
            neighbors,
            timings: timings_from_wire(&answer.timings),
            tokens,
        })
    }

    async fn fuse(
        &self,
        query: &SearchQuery,
        lists: ToFuse<'_>,
        deadline: Duration,
    ) -> Result<FusedList, PeerError> {
        let (weights, options) = fusion_to_wire(lists.settings);
        let message = v1::FuseRequest {
            query: query.text.clone(),
            lexical: trine_api::candidates_to_wire(lists.lexical),
            semantic: lists
                .semantic
                .iter()
                .map(|(id, score)| v1::Neighbor {
                    id: id.to_string(),
                    score: *score,
                })
                .collect(),
            limit: u32::try_from(query.fused_limit()).unwrap_or(u32::MAX),
            weights: Some(weights),
            fusion: Some(options),
            lexical_reference: lists.reference,
            terms: u32::try_from(lists.terms).unwrap_or(u32::MAX),
            question: lists.asked.is_some(),
            question_lexical: lists
                .asked
                .map(trine_api::candidates_to_wire)
                .unwrap_or_default(),
        };
        let mut client = self.fusion.clone();
        let answer = call(deadline, client.fuse(with_deadline(message, deadline)))
            .instrument(client_span("trine.v1.Fusion", "Fuse"))
            .await?;
        let hits = answer
            .hits
            .iter()
            .map(|h| fused_from_wire(h).map_err(|e| malformed("fusion-svc", e)))
            .collect::<Result<_, _>>()?;
        Ok(FusedList {
            hits,
            timings: timings_from_wire(&answer.timings),
        })
    }

    async fn ready(&self, deadline: Duration) -> Result<(), Unready> {
        use tonic_health::pb::HealthCheckRequest;
        use tonic_health::pb::health_check_response::ServingStatus;
        let checks = self.health.iter().map(|(name, service, client)| {
            let mut client = client.clone();
            async move {
                let asked = HealthCheckRequest {
                    service: (*service).to_string(),
                };
                // (why, whether the peer answered that it is not serving yet)
                match tokio::time::timeout(deadline, client.check(asked)).await {
                    Ok(Ok(answer)) if answer.get_ref().status() == ServingStatus::Serving => None,
                    Ok(Ok(answer)) => Some((
                        format!("{name} is {}", answer.get_ref().status().as_str_name()),
                        answer.get_ref().status() == ServingStatus::NotServing,
                    )),
                    Ok(Err(s)) => Some((format!("{name}: {}", s.message()), false)),
                    Err(_) => Some((
                        format!("{name} did not answer within {} ms", deadline.as_millis()),
                        false,
                    )),
                }
            }
        });
        let failed: Vec<(String, bool)> = futures::future::join_all(checks)
            .await
            .into_iter()
            .flatten()
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        Err(Unready {
            starting: failed.iter().any(|(_, starting)| *starting),
            why: failed
                .into_iter()
                .map(|(why, _)| why)
                .collect::<Vec<_>>()
                .join("; "),
        })
    }
}

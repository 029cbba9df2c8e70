//! `Memory.Search`: validate, fan out to lexical-svc and semantic-svc in
//! parallel, fuse through fusion-svc, fetch payloads for the final hits only.
//!
//! A channel that fails or misses its deadline degrades the answer (the lists
//! that arrived are fused, `degraded` is set); with no list at all the search
//! is UNAVAILABLE. Errors that are the caller's (INVALID_ARGUMENT, ...) are
//! passed through as they are.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tracing::{Instrument, field};
use trine_api::v1::fusion_client::FusionClient;
use trine_api::v1::lexical_client::LexicalClient;
use trine_api::v1::semantic_client::SemanticClient;
use trine_api::v1::{self, StageTiming};
use trine_api::{filter_from_wire, filter_to_wire, fusion_from_wire, memory_to_wire, status};
use trine_core::model::{check_query_bytes, parse_id};
use trine_core::{ErrorKind, Mode, Stage, Strategy};
use trine_store::{Metered, Store};
use trine_telemetry::grpc::{Traced, client_span, traced};
use trine_telemetry::metrics::COUNTS_BUDGET;
use trine_telemetry::{Metrics, int};

/// The gateway's search settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    pub default_limit: usize,
    pub max_limit: usize,
    /// Longest query, in bytes.
    pub max_query_bytes: usize,
    pub default_mode: Mode,
    /// Deadline of each hop to lexical-svc and semantic-svc.
    pub channel_deadline: Duration,
    /// Deadline of the hop to fusion-svc.
    pub fusion_deadline: Duration,
    /// The fusion's settings: what the gateway validates requests against,
    /// and fuses with when fusion-svc is down (fusion-svc has the same).
    pub fusion: trine_fusion::Settings,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            default_limit: 8,
            max_limit: 100,
            max_query_bytes: 4096,
            default_mode: Mode::Hybrid,
            channel_deadline: Duration::from_secs(10),
            fusion_deadline: Duration::from_secs(2),
            fusion: trine_fusion::Settings::default(),
        }
    }
}

/// The gateway's view of the internal services. Every call carries the
/// trace context of its client span.
#[derive(Clone)]
pub struct Peers {
    pub lexical: LexicalClient<Traced>,
    pub semantic: SemanticClient<Traced>,
    pub fusion: FusionClient<Traced>,
}

impl Peers {
    /// Clients over lazily connected channels: the gateway starts even when a
    /// peer is down, and degrades until it is back.
    pub fn lazy(lexical: Channel, semantic: Channel, fusion: Channel) -> Self {
        Self {
            lexical: LexicalClient::new(traced(lexical)),
            semantic: SemanticClient::new(traced(semantic)),
            fusion: FusionClient::new(traced(fusion)),
        }
    }
}

/// Searches through the mesh.
#[derive(Clone)]
pub struct Searcher {
    peers: Peers,
    /// The store as given; `store` is it with each call timed.
    raw_store: Arc<dyn Store>,
    store: Arc<dyn Store>,
    config: SearchConfig,
    metrics: Arc<Metrics>,
}

/// Logs one structured warning when a search's counts took more than the
/// budget's share of it; says whether they did.
fn check_budget(share: f64, search: Duration, terms: usize, tenant: &str) -> bool {
    let over = share > COUNTS_BUDGET;
    if over {
        tracing::warn!(
            counts_share = share,
            budget = COUNTS_BUDGET,
            search_ms = millis(search),
            terms,
            tenant,
            "search over the counts budget"
        );
    }
    over
}

/// The lexical counts' time over the search's time (0 without counts).
fn counts_share(timings: &[StageTiming], search: Duration) -> f64 {
    let counts: f64 = timings
        .iter()
        .filter(|t| t.stage == Stage::LexicalCounts.name())
        .map(|t| t.millis)
        .sum();
    let total = millis(search);
    if total > 0.0 { counts / total } else { 0.0 }
}

fn invalid(message: impl Into<String>) -> Status {
    status(ErrorKind::InvalidArgument, message)
}

/// Whether a peer's error is the caller's to fix (passed through) rather
/// than a fault to degrade around.
fn is_callers(code: Code) -> bool {
    matches!(
        code,
        Code::InvalidArgument | Code::FailedPrecondition | Code::NotFound | Code::Unimplemented
    )
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Calls a peer with a deadline (sent as `grpc-timeout`, and enforced here).
async fn call<T, F>(deadline: Duration, rpc: F) -> Result<T, Status>
where
    F: Future<Output = Result<tonic::Response<T>, Status>>,
{
    match tokio::time::timeout(deadline, rpc).await {
        Ok(result) => result.map(tonic::Response::into_inner),
        Err(_) => Err(Status::deadline_exceeded(format!(
            "no answer within {} ms",
            deadline.as_millis()
        ))),
    }
}

fn with_deadline<T>(message: T, deadline: Duration) -> Request<T> {
    let mut request = Request::new(message);
    request.set_timeout(deadline);
    request
}

impl Searcher {
    pub fn new(peers: Peers, store: Arc<dyn Store>, config: SearchConfig) -> Self {
        Self::with_metrics_of(peers, store, config, Metrics::new("gateway"))
    }

    fn with_metrics_of(
        peers: Peers,
        store: Arc<dyn Store>,
        config: SearchConfig,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            peers,
            raw_store: store.clone(),
            store: Arc::new(Metered::new(store, metrics.clone())),
            config,
            metrics,
        }
    }

    /// The same searcher recording into `metrics` (the gateway's).
    pub fn with_metrics(self, metrics: Arc<Metrics>) -> Self {
        Self::with_metrics_of(self.peers, self.raw_store, self.config, metrics)
    }

    fn mode(&self, mode: i32) -> Result<Mode, Status> {
        match v1::Mode::try_from(mode) {
            Ok(v1::Mode::Unspecified) => Ok(self.config.default_mode),
            Ok(v1::Mode::Hybrid) => Ok(Mode::Hybrid),
            Ok(v1::Mode::Semantic) => Ok(Mode::Semantic),
            Ok(v1::Mode::Lexical) => Ok(Mode::Lexical),
            Err(_) => Err(invalid(format!(
                "unknown mode {mode}: use hybrid, semantic or lexical"
            ))),
        }
    }

    fn limit(&self, limit: u32) -> Result<usize, Status> {
        match usize::try_from(limit).unwrap_or(usize::MAX) {
            0 => Ok(self.config.default_limit),
            n if n > self.config.max_limit => Err(invalid(format!(
                "limit {n} is above the maximum {}",
                self.config.max_limit
            ))),
            n => Ok(n),
        }
    }

    /// Answers one search. The `gateway.search` span carries the tenant, the
    /// mode, the strategy, the term count, the list sizes and the counts'
    /// share of the search's time (the ADR's budget: at most a tenth).
    #[tracing::instrument(
        name = "gateway.search",
        skip_all,
        fields(
            tenant = request.filters.as_ref().map(|f| f.tenant.as_str()).unwrap_or(""),
            mode = field::Empty,
            strategy = field::Empty,
            terms = field::Empty,
            limit = field::Empty,
            lexical = field::Empty,
            semantic = field::Empty,
            hits = field::Empty,
            degraded = field::Empty,
            counts_share = field::Empty,
        )
    )]
    /// Answers a search within `budget`, the caller's remaining time (its
    /// `grpc-timeout`) when it gave one: no hop is given longer than what is
    /// left of it, nor than the configured deadline of the hop.
    pub async fn search(
        &self,
        request: v1::SearchRequest,
        budget: Option<Duration>,
    ) -> Result<v1::SearchResponse, Status> {
        let started = Instant::now();
        let within = |configured: Duration| -> Result<Duration, Status> {
            let Some(budget) = budget else {
                return Ok(configured);
            };
            match budget.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => Ok(configured.min(left)),
                _ => Err(Status::deadline_exceeded(format!(
                    "the caller's deadline of {} ms has passed",
                    budget.as_millis()
                ))),
            }
        };
        let span = tracing::Span::current();
        let query = request.query.trim();
        if query.is_empty() {
            return Err(invalid("query is empty"));
        }
        check_query_bytes(query, self.config.max_query_bytes).map_err(invalid)?;
        span.record(
            "terms",
            int(trine_core::terms(query, trine_core::Fold::Case).len()),
        );
        let limit = self.limit(request.limit)?;
        let mode = self.mode(request.mode)?;
        fusion_from_wire(
            &self.config.fusion,
            request.weights.as_ref(),
            request.fusion.as_ref(),
        )
        .map_err(invalid)?;
        if !request.strategy.is_empty() {
            Strategy::parse(&request.strategy).map_err(invalid)?;
        }
        let filter =
            filter_from_wire(request.filters.as_ref(), chrono::Utc::now()).map_err(invalid)?;
        let filters = filter_to_wire(&filter);
        span.record("mode", mode.name());
        span.record("limit", int(limit));

        let mut timings: Vec<StageTiming> = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        let deadline = within(self.config.channel_deadline)?;

        let lexical = async {
            if !mode.uses_lexical() {
                return None;
            }
            let began = Instant::now();
            let mut client = self.peers.lexical.clone();
            let message = v1::CandidatesRequest {
                query: query.to_string(),
                filters: Some(filters.clone()),
                cap: 0,
                strategy: request.strategy.clone(),
            };
            let result = call(
                deadline,
                client.candidates(with_deadline(message, deadline)),
            )
            .instrument(client_span("trine.v1.Lexical", "Candidates"))
            .await;
            Some((result, began.elapsed()))
        };
        let semantic = async {
            if !mode.uses_semantic() {
                return None;
            }
            let began = Instant::now();
            let mut client = self.peers.semantic.clone();
            let message = v1::NearestRequest {
                query: query.to_string(),
                filters: Some(filters.clone()),
                cap: 0,
            };
            let result = call(deadline, client.nearest(with_deadline(message, deadline)))
                .instrument(client_span("trine.v1.Semantic", "Nearest"))
                .await;
            Some((result, began.elapsed()))
        };
        let (lexical, semantic) = tokio::join!(lexical, semantic);

        let mut strategy = String::new();
        let mut lexical_reference = 0.0;
        let mut lists = 0;
        let lexical = match lexical {
            None => Vec::new(),
            Some((Ok(answer), took)) => {
                lists += 1;
                strategy = answer.strategy;
                lexical_reference = answer.reference_score;
                timings.push(StageTiming {
                    stage: Stage::Lexical.name().into(),
                    millis: millis(took),
                });
                timings.extend(answer.timings);
                answer.candidates
            }
            Some((Err(e), _)) if is_callers(e.code()) => return Err(e),
            Some((Err(e), _)) => {
                reasons.push(format!("lexical: {}", e.message()));
                Vec::new()
            }
        };
        let semantic = match semantic {
            None => Vec::new(),
            Some((Ok(answer), took)) => {
                lists += 1;
                timings.push(StageTiming {
                    stage: Stage::Semantic.name().into(),
                    millis: millis(took),
                });
                timings.extend(answer.timings);
                answer.neighbors
            }
            Some((Err(e), _)) if is_callers(e.code()) => return Err(e),
            Some((Err(e), _)) => {
                reasons.push(format!("semantic: {}", e.message()));
                Vec::new()
            }
        };
        if lists == 0 {
            return Err(status(
                ErrorKind::Unavailable,
                format!("no channel answered: {}", reasons.join("; ")),
            ));
        }

        span.record("strategy", strategy.as_str());
        span.record("lexical", int(lexical.len()));
        span.record("semantic", int(semantic.len()));
        let mut lexical = lexical;
        if mode == Mode::Lexical || request.no_verbatim {
            // Lexical mode answers from the lexical list only: no verbatim
            // list; and a request may leave it out.
            for candidate in &mut lexical {
                candidate.verbatim = false;
            }
        }
        let began = Instant::now();
        let fuse = v1::FuseRequest {
            query: query.to_string(),
            lexical,
            semantic,
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
            weights: request.weights,
            fusion: request.fusion.clone(),
            lexical_reference,
        };
        let mut fusion = self.peers.fusion.clone();
        let fusion_deadline = within(self.config.fusion_deadline)?;
        let fused = match call(
            fusion_deadline,
            fusion.fuse(with_deadline(fuse.clone(), fusion_deadline)),
        )
        .instrument(client_span("trine.v1.Fusion", "Fuse"))
        .await
        {
            Ok(answer) => {
                timings.extend(answer.timings);
                answer.hits
            }
            Err(e) if is_callers(e.code()) => return Err(e),
            Err(e) => {
                reasons.push(format!("fusion: {} (fused in the gateway)", e.message()));
                trine_fusion::fuse_request(&fuse, &self.config.fusion, limit)
                    .map_err(|e| status(ErrorKind::Internal, e))?
            }
        };
        timings.push(StageTiming {
            stage: Stage::FusionCall.name().into(),
            millis: millis(began.elapsed()),
        });

        let began = Instant::now();
        let ids = fused
            .iter()
            .map(|h| parse_id(&h.id))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| status(ErrorKind::Internal, format!("fusion returned {e}")))?;
        let records: HashMap<_, _> = self
            .store
            .get(&ids)
            .instrument(tracing::info_span!("gateway.payload", ids = int(ids.len())))
            .await
            .map_err(|e| status(e.kind(), e.to_string()))?
            .into_iter()
            .filter(|m| m.tenant == filter.tenant)
            .map(|m| (m.id, m))
            .collect();
        let hits: Vec<v1::Hit> = fused
            .into_iter()
            .zip(ids)
            .filter_map(|(hit, id)| {
                let memory = records.get(&id)?;
                Some(v1::Hit {
                    id: hit.id,
                    score: hit.score,
                    record: Some(memory_to_wire(memory)),
                    matched_by: hit.matched_by,
                    explain: hit.explain,
                })
            })
            .collect();
        timings.push(StageTiming {
            stage: Stage::Payload.name().into(),
            millis: millis(began.elapsed()),
        });
        let took = started.elapsed();
        timings.push(StageTiming {
            stage: Stage::Gateway.name().into(),
            millis: millis(took),
        });
        let share = counts_share(&timings, took);
        span.record("hits", int(hits.len()));
        span.record("degraded", !reasons.is_empty());
        span.record("counts_share", share);
        for t in &timings {
            if Stage::parse(&t.stage).is_some_and(Stage::is_the_gateways) {
                self.metrics.stage(
                    &t.stage,
                    Duration::from_secs_f64(t.millis.max(0.0) / 1000.0),
                );
            }
        }
        if mode.uses_lexical() {
            self.metrics.counts_share(share);
            check_budget(
                share,
                took,
                trine_core::terms(query, trine_core::Fold::Case).len(),
                &filter.tenant,
            );
        }
        if !reasons.is_empty() {
            tracing::warn!(reasons = ?reasons, "degraded search");
        }
        Ok(v1::SearchResponse {
            hits,
            timings,
            degraded: !reasons.is_empty(),
            degraded_reasons: reasons,
            strategy,
            counts_share: share,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(stage: &str, millis: f64) -> StageTiming {
        StageTiming {
            stage: stage.to_string(),
            millis,
        }
    }

    /// The warnings logged while `f` runs, as their fields' text.
    fn warnings(f: impl FnOnce()) -> Vec<String> {
        use std::sync::{Arc, Mutex};
        use tracing_subscriber::layer::{Context, SubscriberExt};

        #[derive(Clone, Default)]
        struct Warnings(Arc<Mutex<Vec<String>>>);
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0 += &format!("{}={value:?} ", field.name());
            }
        }
        impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
            fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
                if *event.metadata().level() == tracing::Level::WARN {
                    let mut fields = Fields(String::new());
                    event.record(&mut fields);
                    self.0.lock().unwrap().push(fields.0);
                }
            }
        }
        let seen = Warnings::default();
        let subscriber = tracing_subscriber::registry().with(seen.clone());
        tracing::subscriber::with_default(subscriber, f);
        seen.0.lock().unwrap().clone()
    }

    #[test]
    fn a_search_over_the_budget_logs_one_structured_warning() {
        let logged = warnings(|| {
            assert!(!check_budget(0.1, Duration::from_millis(40), 2, "acme"));
            assert!(check_budget(0.25, Duration::from_millis(40), 3, "acme"));
        });
        assert_eq!(logged.len(), 1, "{logged:?}");
        for field in [
            "message=search over the counts budget",
            "counts_share=0.25",
            "budget=0.1",
            "search_ms=40.0",
            "terms=3",
            "tenant=\"acme\"",
        ] {
            assert!(logged[0].contains(field), "{field} in {}", logged[0]);
        }
    }

    #[test]
    fn the_counts_share_is_the_counts_time_over_the_search_time() {
        let timings = [
            timing("lexical", 30.0),
            timing("lexical.counts", 5.0),
            timing("lexical.read", 20.0),
        ];
        let share = counts_share(&timings, Duration::from_millis(50));
        assert!((share - 0.1).abs() < 1e-12, "{share}");
        assert_eq!(counts_share(&[], Duration::from_millis(50)), 0.0);
        assert_eq!(counts_share(&timings, Duration::ZERO), 0.0);
    }
}

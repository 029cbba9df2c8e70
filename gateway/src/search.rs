//! `Memory.Search` as the domain runs it: fan a [`SearchQuery`] out to
//! lexical-svc and semantic-svc in parallel, fuse through fusion-svc (or in
//! the gateway when it is down), fetch payloads for the final hits only.
//!
//! A channel that fails or misses its deadline degrades the answer (the lists
//! that arrived are fused, `degraded` is set); with no list at all the search
//! is UNAVAILABLE. Errors that are the caller's (INVALID_ARGUMENT, ...) are
//! passed through as they are. The wire is `service.rs`'s and `peers.rs`'s.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{Instrument, field};
use trine_core::Named;
use trine_core::fusion;
use trine_core::{ErrorKind, Mode, Stage};
use trine_store::Store;
use trine_telemetry::metrics::COUNTS_BUDGET;
use trine_telemetry::{Metrics, int};

use crate::peers::Peers;
use crate::query::{Answer, Channels, PeerError, SearchQuery, Timings, ToFuse, Unready};

mod late;

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
    pub fusion: trine_core::fusion::Settings,
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
            fusion: trine_core::fusion::Settings::default(),
        }
    }
}

/// Searches through the mesh.
#[derive(Clone)]
pub struct Searcher {
    channels: Arc<dyn Channels>,
    /// The store as given; `store` is it with each call timed.
    raw_store: Arc<dyn Store>,
    store: Arc<dyn Store>,
    config: SearchConfig,
    metrics: Arc<Metrics>,
}

/// Logs one structured warning when a search's counts took more than the
/// budget's share of it — its message a sentence that says what to do, its
/// fields the figures; says whether they did.
fn check_budget(share: f64, search: Duration, terms: usize, tenant: &str) -> bool {
    let over = share > COUNTS_BUDGET;
    if over {
        tracing::warn!(
            counts_share = share,
            budget = COUNTS_BUDGET,
            search_ms = millis(search),
            terms,
            tenant,
            "{}",
            over_budget(share)
        );
    }
    over
}

/// The counts budget's warning as a person reads it.
fn over_budget(share: f64) -> String {
    format!(
        "counts took {:.0} % of this search, over the {:.0} % budget: `trine serve` keeps the statistics that make them free (docs/operations.md)",
        share * 100.0,
        COUNTS_BUDGET * 100.0
    )
}

/// The lexical counts' time over the search's time (0 without counts).
fn counts_share(timings: &[(Stage, Duration)], search: Duration) -> f64 {
    let counts: f64 = timings
        .iter()
        .filter(|(stage, _)| *stage == Stage::LexicalCounts)
        .map(|(_, took)| millis(*took))
        .sum();
    let total = millis(search);
    if total > 0.0 { counts / total } else { 0.0 }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The hits within a budget of `max` characters of text: in rank order, the
/// one that crosses it cut there (on a character boundary), the rest left
/// out.
fn within_chars(
    hits: Vec<(trine_core::fusion::Fused, trine_core::model::Memory)>,
    max: Option<usize>,
) -> Vec<(trine_core::fusion::Fused, trine_core::model::Memory)> {
    let Some(mut left) = max else {
        return hits;
    };
    let mut out = Vec::new();
    for (hit, mut memory) in hits {
        if left == 0 {
            break;
        }
        let chars = memory.text.chars().count();
        if chars > left {
            memory.text = memory.text.chars().take(left).collect();
        }
        left = left.saturating_sub(chars);
        out.push((hit, memory));
    }
    out
}

/// A search's failure: the caller's (passed through) or the mesh's.
fn failed(kind: ErrorKind, message: impl Into<String>) -> PeerError {
    PeerError {
        kind,
        message: message.into(),
    }
}

impl Searcher {
    pub fn new(peers: Peers, store: Arc<dyn Store>, config: SearchConfig) -> Self {
        Self::with_channels(Arc::new(peers), store, config)
    }

    /// A searcher over any implementation of the three channels.
    pub fn with_channels(
        channels: Arc<dyn Channels>,
        store: Arc<dyn Store>,
        config: SearchConfig,
    ) -> Self {
        Self::with_metrics_of(channels, store, config, Metrics::new("gateway"))
    }

    fn with_metrics_of(
        channels: Arc<dyn Channels>,
        store: Arc<dyn Store>,
        config: SearchConfig,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            channels,
            raw_store: store.clone(),
            store: trine_store::instrumented(store, &metrics),
            config,
            metrics,
        }
    }

    /// The same searcher recording into `metrics` (the gateway's).
    pub fn with_metrics(self, metrics: Arc<Metrics>) -> Self {
        Self::with_metrics_of(self.channels, self.raw_store, self.config, metrics)
    }

    /// Whether every channel answers (within 2 s each).
    pub async fn ready(&self) -> Result<(), Unready> {
        self.channels.ready(Duration::from_secs(2)).await
    }

    /// The settings a search is checked against.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Answers one search within `budget`, the caller's remaining time (its
    /// `grpc-timeout`) when it gave one: no hop is given longer than what is
    /// left of it, nor than the configured deadline of the hop. The
    /// `gateway.search` span carries the tenant, the mode, the strategy,
    /// whether it was fused as a question, the term count, the list sizes
    /// and the counts' share of the search's time (the ADR's budget: at
    /// most a tenth).
    #[tracing::instrument(
        name = "gateway.search",
        skip_all,
        fields(
            tenant = query.filter.tenant.as_str(),
            mode = query.mode.name(),
            strategy = field::Empty,
            question = field::Empty,
            terms = field::Empty,
            limit = int(query.limit),
            lexical = field::Empty,
            semantic = field::Empty,
            hits = field::Empty,
            degraded = field::Empty,
            counts_share = field::Empty,
        )
    )]
    pub async fn search(
        &self,
        query: &SearchQuery,
        budget: Option<Duration>,
    ) -> Result<Answer, PeerError> {
        let clock = Clock {
            started: Instant::now(),
            budget,
        };
        let mut lists = self.lists(query, &clock).await?;
        let began = Instant::now();
        let fused = self.fuse(query, &mut lists, &clock).await?;
        lists.timings.push((Stage::FusionCall, began.elapsed()));
        let fused = self.late(query, &mut lists, fused, &clock).await;
        let began = Instant::now();
        let hits = self.payload(query, fused, &clock).await?;
        lists.timings.push((Stage::Payload, began.elapsed()));
        Ok(self.answer(query, lists, hits, clock.started.elapsed()))
    }

    /// The channels' lists, asked of both at once within their deadline; a
    /// channel that fails degrades the answer (its reason kept), unless the
    /// failure is the caller's; none answering is UNAVAILABLE.
    async fn lists(&self, query: &SearchQuery, clock: &Clock) -> Result<Gathered, PeerError> {
        let deadline = clock.within(self.config.channel_deadline, CHANNELS_SHARE)?;
        let lexical = async {
            if !query.mode.uses_lexical() {
                return None;
            }
            timed(self.channels.candidates(query, deadline)).await
        };
        let semantic = async {
            if !query.mode.uses_semantic() {
                return None;
            }
            timed(self.channels.nearest(query, deadline)).await
        };
        let (lexical, semantic) = tokio::join!(lexical, semantic);

        let mut lists = Gathered::default();
        let mut answered = 0;
        match lexical {
            None => {}
            Some((Ok(answer), took)) => {
                answered += 1;
                lists.strategy = answer.strategy;
                lists.reference = answer.reference;
                lists.terms = answer.terms;
                lists.question_list = answer.question;
                lists.timings.push((Stage::Lexical, took));
                lists.timings.extend(answer.timings);
                lists.lexical = answer.candidates;
            }
            Some((Err(e), _)) if e.is_callers() => return Err(e),
            Some((Err(e), _)) => lists.reasons.push(format!("lexical: {}", e.message)),
        }
        match semantic {
            None => {}
            Some((Ok(answer), took)) => {
                answered += 1;
                lists.timings.push((Stage::Semantic, took));
                lists.timings.extend(answer.timings);
                lists.semantic = answer.neighbors;
                lists.tokens = answer.tokens;
            }
            Some((Err(e), _)) if e.is_callers() => return Err(e),
            Some((Err(e), _)) => lists.reasons.push(format!("semantic: {}", e.message)),
        }
        if answered == 0 {
            return Err(failed(
                ErrorKind::Unavailable,
                format!("no channel answered: {}", lists.reasons.join("; ")),
            ));
        }
        // A question whose dense list is flat is fused from the question
        // strategy's list, as Qdrant's one call fuses; one whose dense list
        // stands out as any search, the one call's picks spread in.
        if let Some((strategy, list)) = lists.question_list.take() {
            let cosines: Vec<f64> = lists.semantic.iter().map(|(_, s)| *s).collect();
            if fusion::as_question(&cosines, &query.fusion) {
                lists.strategy = strategy;
                lists.lexical = list;
                lists.reference = 0.0;
                lists.question = true;
            } else {
                lists.asked = Some(list);
            }
        }
        let span = tracing::Span::current();
        span.record("strategy", lists.strategy.as_str());
        span.record("question", lists.question);
        span.record("terms", int(lists.terms));
        span.record("lexical", int(lists.lexical.len()));
        span.record("semantic", int(lists.semantic.len()));
        if query.mode == Mode::Lexical || !query.verbatim {
            // Lexical mode answers from the lexical list only: no verbatim
            // list; and a search may leave it out.
            for candidate in &mut lists.lexical {
                candidate.verbatim = false;
            }
        }
        Ok(lists)
    }

    /// The lists fused by fusion-svc within its deadline, or here with the
    /// same settings when it fails (the answer then degraded).
    async fn fuse(
        &self,
        query: &SearchQuery,
        lists: &mut Gathered,
        clock: &Clock,
    ) -> Result<Vec<fusion::Fused>, PeerError> {
        let settings = if lists.question {
            query.fusion.for_questions()
        } else {
            query.fusion
        };
        let to_fuse = ToFuse {
            settings: &settings,
            asked: lists.asked.as_deref(),
            lexical: &lists.lexical,
            semantic: &lists.semantic,
            reference: lists.reference,
            terms: lists.terms,
        };
        let deadline = clock.within(self.config.fusion_deadline, FUSION_SHARE)?;
        match self.channels.fuse(query, to_fuse, deadline).await {
            Ok(answer) => {
                lists.timings.extend(answer.timings);
                Ok(answer.hits)
            }
            Err(e) if e.is_callers() => Err(e),
            Err(e) => {
                lists
                    .reasons
                    .push(format!("fusion: {} (fused in the gateway)", e.message));
                let fusing = fusion::Lists {
                    query: &query.text,
                    lexical: &lists.lexical,
                    semantic: &lists.semantic,
                    lexical_reference: lists.reference,
                    terms: lists.terms,
                };
                let limit = query.fused_limit();
                Ok(match lists.asked.as_deref() {
                    Some(asked) => fusion::fuse_spread(&fusing, asked, &settings, limit),
                    None => fusion::fuse(&fusing, &settings, limit),
                })
            }
        }
    }

    /// The fused hits with their memories (read for these hits only, the
    /// tenant's alone), within the search's character budget; the read
    /// bounded as a channel's hop is (a store that does not answer is
    /// UNAVAILABLE, not a hung call).
    async fn payload(
        &self,
        query: &SearchQuery,
        mut fused: Vec<fusion::Fused>,
        clock: &Clock,
    ) -> Result<Vec<(fusion::Fused, trine_core::model::Memory)>, PeerError> {
        // `min_score` on the score shown: scores never rise down the list,
        // so what it leaves is a first part of the answer.
        if let Some(min) = query.min_score {
            fused.retain(|h| h.score >= min);
        }
        let ids: Vec<_> = fused.iter().map(|h| h.id).collect();
        let deadline = clock.within(self.config.channel_deadline, 1.0)?;
        let read = self
            .store
            .get(&ids)
            .instrument(tracing::info_span!("gateway.payload", ids = int(ids.len())));
        let mut records: HashMap<_, _> = tokio::time::timeout(deadline, read)
            .await
            .map_err(|_| {
                failed(
                    ErrorKind::Unavailable,
                    format!(
                        "the store did not answer the payload read within {} ms",
                        deadline.as_millis()
                    ),
                )
            })?
            .map_err(|e| failed(e.kind(), e.to_string()))?
            .into_iter()
            .filter(|m| m.tenant == query.filter.tenant)
            .map(|m| (m.id, m))
            .collect();
        let hits = fused
            .into_iter()
            .filter_map(|hit| {
                let memory = records.remove(&hit.id)?;
                Some((hit, memory))
            })
            .collect();
        Ok(within_chars(hits, query.max_chars))
    }

    /// The answer, its span, metrics and budget check recorded.
    fn answer(
        &self,
        query: &SearchQuery,
        mut lists: Gathered,
        hits: Vec<(fusion::Fused, trine_core::model::Memory)>,
        took: Duration,
    ) -> Answer {
        lists.timings.push((Stage::Gateway, took));
        let share = counts_share(&lists.timings, took);
        let span = tracing::Span::current();
        span.record("hits", int(hits.len()));
        span.record("degraded", !lists.reasons.is_empty());
        span.record("counts_share", share);
        for (stage, took) in &lists.timings {
            if stage.is_the_gateways() {
                self.metrics.stage(stage.name(), *took);
            }
        }
        if query.mode.uses_lexical() {
            self.metrics.counts_share(share);
            check_budget(share, took, lists.terms, &query.filter.tenant);
        }
        if !lists.reasons.is_empty() {
            tracing::warn!(reasons = ?lists.reasons, "degraded search");
        }
        Answer {
            hits,
            timings: lists.timings,
            reasons: lists.reasons,
            strategy: lists.strategy,
            counts_share: share,
        }
    }
}

/// `call`'s answer and how long it took.
async fn timed<T>(call: impl Future<Output = T>) -> Option<(T, Duration)> {
    let began = Instant::now();
    let answer = call.await;
    Some((answer, began.elapsed()))
}

/// The share of the caller's time left that the channels may take: a
/// channel that does not answer (a network that drops, a peer that hangs)
/// leaves the rest for fusion and the payload, and the answer comes,
/// degraded, within the caller's deadline.
const CHANNELS_SHARE: f64 = 0.75;
/// The share of what is left then that fusion-svc may take (the gateway
/// fuses itself when it does not answer).
const FUSION_SHARE: f64 = 0.5;

/// When a search started, and the caller's time for it.
struct Clock {
    started: Instant,
    budget: Option<Duration>,
}

impl Clock {
    /// A hop's deadline: `configured`, cut to `share` of what is left of the
    /// caller's budget; DEADLINE_EXCEEDED once nothing is.
    fn within(&self, configured: Duration, share: f64) -> Result<Duration, PeerError> {
        let Some(budget) = self.budget else {
            return Ok(configured);
        };
        match budget.checked_sub(self.started.elapsed()) {
            Some(left) if !left.is_zero() => Ok(configured.min(left.mul_f64(share))),
            _ => Err(failed(
                ErrorKind::DeadlineExceeded,
                format!(
                    "the caller's deadline of {} ms has passed",
                    budget.as_millis()
                ),
            )),
        }
    }
}

/// What the channels answered, and what the search gathers on its way.
#[derive(Default)]
struct Gathered {
    lexical: Vec<fusion::LexicalEntry>,
    semantic: Vec<(uuid::Uuid, f64)>,
    /// The lexical strategy that ran.
    strategy: String,
    /// The lexical score of a full match (0: unknown).
    reference: f64,
    /// The query's terms under the collection's fold (the lexical channel's).
    terms: usize,
    /// The question strategy's list and its name, as lexical-svc read it.
    question_list: Option<(String, Vec<fusion::LexicalEntry>)>,
    /// The lexical list is the question strategy's: fused as a question.
    question: bool,
    /// A question whose dense list stands out: the question strategy's
    /// list, spread in (`fusion::fuse_spread`).
    asked: Option<Vec<fusion::LexicalEntry>>,
    timings: Timings,
    /// Why the answer is degraded, one reason a hop.
    reasons: Vec<String>,
    /// The query's tokens, for late interaction (semantic-svc's).
    tokens: Option<trine_core::late::Tokens>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(stage: &str, millis: f64) -> (Stage, Duration) {
        let stage = Stage::of(stage).unwrap();
        (stage, Duration::from_secs_f64(millis / 1000.0))
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
            "message=counts took 25 % of this search, over the 10 % budget: `trine serve` keeps the statistics",
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

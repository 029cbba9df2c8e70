//! The `Lexical` gRPC service: the edge between the wire and the strategies.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tonic::{Request, Response, Status};
use trine_api::v1;
use trine_api::v1::lexical_server::{Lexical, LexicalServer};
use trine_api::{cap_from_wire, filter_from_wire, status, timings_to_wire, to_status};
use trine_core::Named;
use trine_core::Stage;
use trine_core::model::{MAX_QUERY_BYTES, check_query_bytes};
use trine_core::{ErrorKind, Strategy};
use trine_embed::Embedder;
use trine_store::{Keeping, Store};
use trine_telemetry::Metrics;

use crate::readiness::{self, Probe, Ready, Texts, auto};
use crate::{Candidates, Counter, LexicalConfig, LexicalError, LexicalQuery, context, strategies};

/// How long a probe that found the requested strategy ready is trusted.
const READY_FOR: Duration = Duration::from_secs(30);

/// How often the readiness looks at the store's statistics again.
const READINESS_POLL: Duration = Duration::from_millis(50);

/// Serves the lexical channel over a store.
#[derive(Clone)]
pub struct LexicalService {
    store: Arc<dyn Store>,
    embedder: Option<Arc<dyn Embedder>>,
    config: LexicalConfig,
    probed: Arc<Mutex<Option<(Instant, Probe)>>>,
    counter: Arc<Counter>,
    metrics: Arc<Metrics>,
}

impl LexicalService {
    /// A service over `store`, with metrics of its own (store calls timed).
    /// With [`LexicalConfig::keep_counts`], the store's statistics start
    /// being built now.
    pub fn new(store: Arc<dyn Store>, config: LexicalConfig) -> Self {
        if config.keep_counts && config.count_statistics {
            store.keep_counts();
        }
        let metrics = Metrics::new("lexical-svc");
        let watched = store.clone(); // not the metered one: no cycle through the metrics
        metrics.on_scrape(move |metrics| {
            let state = match watched.keeping() {
                Keeping::Ready => "ready",
                Keeping::Building => "building",
                Keeping::Not => "not_kept",
            };
            let size = watched.kept().map(|k| trine_telemetry::FrequenciesSize {
                tenants: k.tenants,
                entries: k.entries,
                points: k.points,
            });
            metrics.frequencies(state, size);
        });
        let store = trine_store::instrumented(store, &metrics);
        Self {
            counter: Arc::new(
                Counter::new(store.clone(), config.count_cache)
                    .with_statistics(config.count_statistics),
            ),
            store,
            embedder: None,
            config,
            probed: Arc::new(Mutex::new(None)),
            metrics,
        }
    }

    /// The service's metrics, to serve on `/metrics`.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Lets the `gate` strategy embed queries (it ranks by dense similarity
    /// inside the gate).
    pub fn with_embedder(self, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            embedder: Some(embedder),
            ..self
        }
    }

    /// Whether the service answers searches: with
    /// [`LexicalConfig::keep_counts`], not while the store's statistics are
    /// being built (built, or not kept at all — then every count is a read
    /// and stays one — it does).
    pub fn counts_ready(&self) -> bool {
        !(self.config.keep_counts
            && self.config.count_statistics
            && self.store.keeping() == Keeping::Building)
    }

    /// [`Self::counts_ready`], followed while the receiver lives: the
    /// health service's readiness (NOT_SERVING while the statistics are
    /// built).
    pub fn readiness(&self) -> tokio::sync::watch::Receiver<bool> {
        let (ready, receiver) = tokio::sync::watch::channel(self.counts_ready());
        let service = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = ready.closed() => break,
                    () = tokio::time::sleep(READINESS_POLL) => {}
                }
                let now = service.counts_ready();
                ready.send_if_modified(|was| std::mem::replace(was, now) != now);
            }
        });
        receiver
    }

    /// The strategy to run, with how to read the collection's texts: `auto`
    /// resolved, and a strategy the collection is not ready for refused with
    /// what makes it ready. A probe that found the strategy ready is trusted
    /// for [`READY_FOR`] (so is its fold: an upgrade of the text index shows
    /// within that time); any other answer is probed again, so that a fix
    /// shows at once.
    pub async fn resolve(&self, requested: Strategy) -> Result<(Strategy, Texts), LexicalError> {
        if requested == Strategy::Off {
            return Ok((requested, Texts::default()));
        }
        let usable = |probe: &Probe| -> Option<(Strategy, Texts)> {
            let strategies = &probe.strategies;
            let chosen = if requested == Strategy::Auto {
                auto(strategies)
            } else {
                requested
            };
            let ready = chosen == Strategy::Off
                || strategies.iter().any(|(s, r)| *s == chosen && r.is_ready());
            ready.then_some((chosen, probe.texts))
        };
        if let Some(chosen) = self.fresh_probe().as_ref().and_then(usable) {
            return Ok(chosen);
        }
        let probe = self.probe_kept().await?;
        if let Some(chosen) = usable(&probe) {
            return Ok(chosen);
        }
        let why = probe
            .strategies
            .into_iter()
            .find_map(|(s, r)| match r {
                Ready::No(why) if s == requested => Some(why),
                _ => None,
            })
            .unwrap_or_else(|| "no strategy is ready".to_string());
        Err(LexicalError::NotReady {
            strategy: requested.name(),
            why,
        })
    }

    /// The last probe, while it is fresh ([`READY_FOR`]), whatever it found.
    fn fresh_probe(&self) -> Option<Probe> {
        self.probed
            .lock()
            .map(|slot| slot.clone())
            .unwrap_or_default()
            .filter(|(at, _)| at.elapsed() < READY_FOR)
            .map(|(_, probe)| probe)
    }

    /// A new probe of the store, kept as the last one.
    async fn probe_kept(&self) -> Result<Probe, LexicalError> {
        let probe = readiness::probe(self.store.as_ref(), self.embedder.is_some()).await?;
        if let Ok(mut slot) = self.probed.lock() {
            *slot = Some((Instant::now(), probe.clone()));
        }
        Ok(probe)
    }

    /// The question strategy, when the collection is ready for it: the last
    /// probe decides while it is fresh ([`READY_FOR`], whatever it found),
    /// else a new one (kept). A collection that is not ready for it (points
    /// not yet encoded: `trine sparse-backfill`) answers its questions as
    /// every other search, with no error.
    pub async fn question_strategy(&self) -> Result<Option<Strategy>, LexicalError> {
        let Some(wanted) = self.config.question_strategy else {
            return Ok(None);
        };
        let probe = match self.fresh_probe() {
            Some(probe) => probe,
            None => self.probe_kept().await?,
        };
        let ready = probe
            .strategies
            .iter()
            .any(|(s, r)| *s == wanted && r.is_ready());
        Ok(ready.then_some(wanted))
    }

    /// The list of `strategy`, and beside it (read at once) the list of
    /// `question`, the question strategy, when one is given: the same list
    /// again when it is the same strategy.
    async fn lists(
        &self,
        strategy: Strategy,
        question: Option<Strategy>,
        q: &LexicalQuery,
    ) -> Result<(Candidates, Option<Candidates>), LexicalError> {
        match question {
            None => Ok((self.list(strategy, q).await?, None)),
            Some(other) if other == strategy => {
                let found = self.list(strategy, q).await?;
                let again = found.clone();
                Ok((found, Some(again)))
            }
            Some(other) => {
                let (found, asked) =
                    tokio::try_join!(self.ranked(strategy, q), self.ranked(other, q))?;
                // Both lists' neighbours in the same two reads.
                let mut both = [found, asked];
                self.widen(q, &mut both).await?;
                let [found, asked] = both;
                Ok((found, Some(asked)))
            }
        }
    }

    /// The lexical list of a resolved strategy, with the phrase reads of
    /// every strategy that reads text, rescored with the messages around
    /// its best hits ([`context::widen`]).
    pub async fn list(
        &self,
        strategy: Strategy,
        q: &LexicalQuery,
    ) -> Result<Candidates, LexicalError> {
        let mut found = [self.ranked(strategy, q).await?];
        self.widen(q, &mut found).await?;
        let [found] = found;
        Ok(found)
    }

    /// The strategy's own list, with the phrase reads of every strategy
    /// that reads text (`candidates` scores them with the rest; the others
    /// add them after their own list).
    async fn ranked(
        &self,
        strategy: Strategy,
        q: &LexicalQuery,
    ) -> Result<Candidates, LexicalError> {
        let store = self.store.as_ref();
        let embedder = self.embedder.as_deref();
        let run = strategies::run(strategy, store, self.counter.as_ref(), embedder, q);
        if matches!(strategy, Strategy::Off | Strategy::Candidates) {
            // `candidates` reads the phrase points itself, before scoring.
            return run.await;
        }
        // The phrase read runs beside the strategy's query, not after it.
        let (found, holders) = tokio::try_join!(run, strategies::phrase_holders(store, q))?;
        Ok(strategies::with_phrase_holders(found, holders, q.cap))
    }

    async fn widen(&self, q: &LexicalQuery, lists: &mut [Candidates]) -> Result<(), LexicalError> {
        let (store, counter) = (self.store.as_ref(), self.counter.as_ref());
        context::widen(store, counter, q, lists, self.config.context).await
    }
}

#[tonic::async_trait]
impl Lexical for LexicalService {
    #[tracing::instrument(
        name = "lexical.candidates",
        skip_all,
        fields(
            tenant = request.get_ref().filters.as_ref().map(|f| f.tenant.as_str()).unwrap_or(""),
            strategy = tracing::field::Empty,
            question = tracing::field::Empty,
            terms = tracing::field::Empty,
            cap = tracing::field::Empty,
            candidates = tracing::field::Empty,
        )
    )]
    async fn candidates(
        &self,
        request: Request<v1::CandidatesRequest>,
    ) -> Result<Response<v1::CandidatesResponse>, Status> {
        let request = request.into_inner();
        let invalid = |e: String| status(ErrorKind::InvalidArgument, e);
        check_query_bytes(&request.query, MAX_QUERY_BYTES).map_err(invalid)?;
        let named = !request.strategy.is_empty();
        let requested = if named {
            Strategy::parse(&request.strategy).map_err(invalid)?
        } else {
            self.config.strategy
        };
        let filter =
            filter_from_wire(request.filters.as_ref(), chrono::Utc::now()).map_err(invalid)?;
        let cap =
            cap_from_wire(request.cap, self.config.cap, self.config.max_cap).map_err(invalid)?;
        let span = tracing::Span::current();
        span.record("cap", trine_telemetry::int(cap));
        let started = Instant::now();
        let failed = to_status::<LexicalError>;
        if requested != Strategy::Off && !self.counts_ready() {
            return Err(failed(LexicalError::Starting));
        }
        let (strategy, texts) = self.resolve(requested).await.map_err(failed)?;
        let question = if request.question && !named {
            self.question_strategy().await.map_err(failed)?
        } else {
            None
        };
        span.record("strategy", strategy.name());
        span.record("question", question.map_or("", Strategy::name));
        // Split once, under the collection's fold.
        let texts = texts.with_common(self.config.common_words);
        let q = LexicalQuery::new(&request.query, texts, filter, cap);
        span.record("terms", trine_telemetry::int(q.terms.len()));
        let (found, asked) = self.lists(strategy, question, &q).await.map_err(failed)?;
        span.record("candidates", trine_telemetry::int(found.list.len()));
        for (stage, took) in &found.timings {
            self.metrics.stage(stage.name(), *took);
        }
        self.metrics.stage(Stage::Lexical.name(), started.elapsed());
        Ok(Response::new(v1::CandidatesResponse {
            candidates: trine_api::candidates_to_wire(&found.list),
            strategy: strategy.name().to_string(),
            timings: timings_to_wire(&found.timings),
            reference_score: found.reference,
            // The tier rule counts every word (a query of one word or more).
            terms: u32::try_from(q.words.len()).unwrap_or(u32::MAX),
            question_candidates: asked
                .as_ref()
                .map(|a| trine_api::candidates_to_wire(&a.list))
                .unwrap_or_default(),
            question_strategy: question.map(|s| s.name().to_string()).unwrap_or_default(),
        }))
    }
}

impl trine_api::server::Served for LexicalService {
    type Server = LexicalServer<LexicalService>;

    fn server(self) -> Self::Server {
        LexicalServer::new(self)
    }

    fn metrics(&self) -> Arc<Metrics> {
        LexicalService::metrics(self)
    }
    fn readiness(&self) -> trine_api::server::Readiness {
        Some(LexicalService::readiness(self))
    }
}

/// Serves the service on `listener` until `shutdown` resolves.
pub use trine_api::server::run;

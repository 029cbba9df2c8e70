//! The `Memory` gRPC service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tonic::{Request, Response, Status};
use trine_api::v1::{self, memory_server};
use trine_api::{
    filter_from_wire, fused_to_wire, fusion_from_wire, ids_from_wire, invalid, memory_from_wire,
    memory_to_wire, status, timings_to_wire, to_status,
};
use trine_core::Named;
use trine_core::model::{Memory, check_query_bytes};
use trine_core::{ErrorKind, Mode, Strategy};
use trine_store::Store;
use trine_telemetry::Metrics;

use crate::auth::{Keys, Scope};
use crate::query::{Answer, SearchQuery, Unready};
use crate::search::{SearchConfig, Searcher};
use crate::writer::Writer;

pub use trine_api::codec::{MAX_IDS, MAX_UPSERT};

/// trine's public service.
#[derive(Clone)]
pub struct MemoryService {
    store: Arc<dyn Store>,
    writer: Writer,
    searcher: Option<Searcher>,
    metrics: Arc<Metrics>,
    /// API keys every call must carry; `None`: no authentication.
    keys: Option<Arc<Keys>>,
    /// Tenants' request rates (and, through the writer, memories held).
    quotas: Option<Arc<crate::quota::Quotas>>,
    /// Where backups are written; `None`: none are taken.
    backups: Option<crate::backups::Backups>,
    /// Whether the service has been ready once: until then a search waits
    /// for it ([`MemoryService::first_ready`]).
    started: Arc<AtomicBool>,
}

/// How often readiness is looked at again while the service is not ready,
/// and while it is.
const UNREADY_POLL: Duration = Duration::from_millis(100);
const READY_POLL: Duration = Duration::from_secs(1);

/// The longest a search waits for the mesh to be ready the first time
/// (within its caller's deadline).
const FIRST_READY_WAIT: Duration = Duration::from_secs(60);

impl MemoryService {
    /// A service that writes and reads; it searches once given a searcher.
    pub fn new(writer: Writer) -> Self {
        let metrics = Metrics::new("gateway");
        let store = trine_store::instrumented(writer.store().clone(), &metrics);
        Self {
            writer: writer
                .with_store(store.clone())
                .with_metrics(metrics.clone()),
            store,
            searcher: None,
            metrics,
            keys: None,
            quotas: None,
            backups: None,
            started: Arc::default(),
        }
    }

    /// Takes backups (`Memory.Backup`) into `backups`.
    pub fn with_backups(self, backups: crate::backups::Backups) -> Self {
        Self {
            backups: Some(backups),
            ..self
        }
    }

    /// Each tenant's requests are admitted at its rate, and its new
    /// memories up to its quota.
    pub fn with_quotas(self, quotas: Arc<crate::quota::Quotas>) -> Self {
        Self {
            writer: self.writer.clone().with_quotas(quotas.clone()),
            quotas: Some(quotas),
            ..self
        }
    }

    /// Every call must carry one of these keys, allowing its operation in
    /// its tenants.
    pub fn with_keys(self, keys: Arc<Keys>) -> Self {
        Self {
            keys: Some(keys),
            ..self
        }
    }

    /// Refuses a call whose key is missing or invalid (UNAUTHENTICATED) or
    /// does not allow `scope` in each of `tenants` (PERMISSION_DENIED).
    /// Empty tenants are left to validation, which names the field.
    fn authorize<'a>(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        scope: Scope,
        tenants: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), Status> {
        let Some(keys) = &self.keys else {
            return Ok(());
        };
        let denied = to_status::<crate::auth::AuthError>;
        let principal = keys.authenticate(metadata).map_err(denied)?;
        for tenant in tenants {
            if !tenant.trim().is_empty() {
                principal.allows(scope, tenant).map_err(denied)?;
            }
        }
        Ok(())
    }

    /// The call's key (when keys are on) allows `scope` in each of
    /// `tenants`, and each tenant is within its request rate.
    fn admit<'a>(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        scope: Scope,
        tenants: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Result<(), Status> {
        self.authorize(metadata, scope, tenants.clone())?;
        if let Some(quotas) = &self.quotas {
            let now = std::time::Instant::now();
            let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
            for tenant in tenants {
                if !tenant.trim().is_empty() && seen.insert(tenant) {
                    quotas.admit(tenant, now).map_err(|why| {
                        self.metrics.quota_refused("rate", 1);
                        status(ErrorKind::ResourceExhausted, why)
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Searches through the mesh; the searcher records into this service's
    /// metrics.
    pub fn with_search(self, searcher: Searcher) -> Self {
        Self {
            searcher: Some(searcher.with_metrics(self.metrics.clone())),
            ..self
        }
    }

    /// Whether the service can answer: the store answers (a collection not
    /// made yet is made by the first write) and, with a searcher, every
    /// channel does; what does not, when not.
    pub async fn ready(&self) -> Result<(), Unready> {
        let down = |why: String| Unready {
            why,
            starting: false,
        };
        match tokio::time::timeout(std::time::Duration::from_secs(2), self.store.info()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(down(format!("the store: {e}"))),
            Err(_) => return Err(down("the store did not answer within 2 s".to_string())),
        }
        match &self.searcher {
            Some(searcher) => searcher.ready().await,
            None => Ok(()),
        }
    }

    /// [`Self::ready`], followed while the receiver lives: the health
    /// service's readiness (NOT_SERVING until every channel answers and
    /// lexical-svc's counts are cheap, and whenever that stops holding).
    pub fn readiness(&self) -> tokio::sync::watch::Receiver<bool> {
        let (ready, receiver) = tokio::sync::watch::channel(false);
        let service = self.clone();
        tokio::spawn(async move {
            loop {
                let now = service.ready().await.is_ok();
                if now {
                    service.started.store(true, Ordering::Release);
                }
                ready.send_if_modified(|was| std::mem::replace(was, now) != now);
                let pause = if now { READY_POLL } else { UNREADY_POLL };
                tokio::select! {
                    () = ready.closed() => break,
                    () = tokio::time::sleep(pause) => {}
                }
            }
        });
        receiver
    }

    /// Until the mesh has been ready once: waits while a channel says it is
    /// starting (lexical-svc answers no search while it builds its document
    /// frequencies), so that no search is answered before counts are cheap
    /// — at most `budget` (the caller's deadline) or [`FIRST_READY_WAIT`],
    /// then UNAVAILABLE, with why. A channel that is down is not waited for:
    /// the search degrades as it would later.
    async fn first_ready(&self, budget: Option<Duration>) -> Result<(), Status> {
        if self.started.load(Ordering::Acquire) {
            return Ok(());
        }
        let limit = budget.map_or(FIRST_READY_WAIT, |b| b.min(FIRST_READY_WAIT));
        let waited = std::time::Instant::now();
        loop {
            match self.ready().await {
                Ok(()) => {
                    self.started.store(true, Ordering::Release);
                    return Ok(());
                }
                Err(unready) if !unready.starting => return Ok(()),
                Err(unready) if waited.elapsed() + UNREADY_POLL >= limit => {
                    return Err(status(
                        ErrorKind::Unavailable,
                        format!("the mesh is starting (retry): {unready}"),
                    ));
                }
                Err(_) => tokio::time::sleep(UNREADY_POLL).await,
            }
        }
    }

    /// The service's metrics, to serve on `/metrics`.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// The memories of `tenant` among `ids`, in the order asked.
    async fn in_tenant(&self, tenant: &str, ids: &[String]) -> Result<Vec<Memory>, Status> {
        if tenant.trim().is_empty() {
            return Err(invalid("tenant is required"));
        }
        if ids.len() > MAX_IDS {
            return Err(invalid(format!(
                "{} ids, more than the {MAX_IDS} allowed",
                ids.len()
            )));
        }
        let ids = ids_from_wire(ids).map_err(invalid)?;
        let found = self.store.get(&ids).await.map_err(to_status)?;
        Ok(found.into_iter().filter(|m| m.tenant == tenant).collect())
    }

    /// Sets the end of validity of `tenant`'s memories among `ids` (`None`:
    /// valid with no end), each rewritten whole through the writer; the ids
    /// changed, in the order asked.
    async fn set_validity(
        &self,
        request: Request<v1::ValidityRequest>,
        until: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Response<v1::ValidityResponse>, Status> {
        self.admit(
            request.metadata(),
            Scope::Write,
            [request.get_ref().tenant.as_str()],
        )?;
        // The embedding hop gets what is left of the caller's deadline.
        let budget = trine_api::caller_timeout(request.metadata());
        let request = request.into_inner();
        trine_api::deadline::scope(budget, self.rewrite_validity(request, until)).await
    }

    async fn rewrite_validity(
        &self,
        request: v1::ValidityRequest,
        until: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Response<v1::ValidityResponse>, Status> {
        let found = self.in_tenant(&request.tenant, &request.ids).await?;
        let memories: Vec<Memory> = found
            .into_iter()
            .map(|m| Memory {
                valid_until: until,
                ..m
            })
            .collect();
        let mut ids: Vec<Option<String>> =
            memories.iter().map(|m| Some(m.id.to_string())).collect();
        if !memories.is_empty() {
            self.writer.prepare().await.map_err(to_status)?;
            for refused in self.writer.write(memories).await.map_err(to_status)? {
                ids[refused.index] = None;
            }
        }
        let ids = ids.into_iter().flatten().collect();
        Ok(Response::new(v1::ValidityResponse { ids }))
    }

    /// An Upsert's records validated, embedded and written: item errors for
    /// the invalid and the refused.
    async fn upsert_records(
        &self,
        records: Vec<v1::Record>,
    ) -> Result<Response<v1::UpsertResponse>, Status> {
        if records.len() > MAX_UPSERT {
            return Err(invalid(format!(
                "{} records, more than the {MAX_UPSERT} allowed in one upsert: send smaller batches",
                records.len()
            )));
        }
        let mut valid = Vec::with_capacity(records.len());
        let mut positions = Vec::with_capacity(records.len());
        let mut failed = Vec::new();
        for (index, record) in records.into_iter().enumerate() {
            let id = record.id.clone();
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            match memory_from_wire(record) {
                Ok(memory) => {
                    valid.push(memory);
                    positions.push(index);
                }
                Err(message) => failed.push(v1::ItemError { index, id, message }),
            }
        }
        let mut ids: Vec<Option<String>> = valid.iter().map(|m| Some(m.id.to_string())).collect();
        self.writer.prepare().await.map_err(to_status)?;
        let refused = self.writer.write(valid).await.map_err(to_status)?;
        for r in refused {
            ids[r.index] = None;
            failed.push(v1::ItemError {
                index: positions[r.index],
                id: r.id.to_string(),
                message: r.reason,
            });
        }
        failed.sort_by_key(|e| e.index);
        let ids = ids.into_iter().flatten().collect();
        Ok(Response::new(v1::UpsertResponse { ids, failed }))
    }
}

/// A search request validated and resolved against the gateway's
/// settings, in the order its fields are checked: the query, its size, the
/// limit, the mode, the fusion, the strategy, the filter.
pub fn query_from_wire(
    request: v1::SearchRequest,
    config: &SearchConfig,
) -> Result<SearchQuery, String> {
    let text = request.query.trim();
    if text.is_empty() {
        return Err("query is empty".into());
    }
    check_query_bytes(text, config.max_query_bytes)?;
    let limit = match usize::try_from(request.limit).unwrap_or(usize::MAX) {
        0 => config.default_limit,
        n if n > config.max_limit => {
            return Err(format!(
                "limit {n} is above the maximum {}",
                config.max_limit
            ));
        }
        n => n,
    };
    let mode = trine_api::mode_from_wire(request.mode)?.unwrap_or(config.default_mode);
    let fusion = fusion_from_wire(
        &config.fusion,
        request.weights.as_ref(),
        request.fusion.as_ref(),
    )?;
    let strategy = if request.strategy.is_empty() {
        None
    } else {
        Some(Strategy::parse(&request.strategy)?)
    };
    let filter = filter_from_wire(request.filters.as_ref(), chrono::Utc::now())?;
    // A question that leaves the strategy, the weights and the method to
    // the services may be answered as a question.
    let question = mode == Mode::Hybrid
        && strategy.is_none()
        && request
            .weights
            .as_ref()
            .is_none_or(|w| [w.lexical, w.semantic, w.verbatim] == [0.0; 3])
        && request.fusion.as_ref().is_none_or(|f| f.method.is_empty())
        && fusion.question_confidence > 0.0
        && trine_core::fusion::is_question(text);
    Ok(SearchQuery {
        text: text.to_string(),
        mode,
        strategy,
        question,
        limit,
        filter,
        fusion,
        verbatim: !request.no_verbatim,
        max_chars: usize::try_from(request.max_chars).ok().filter(|n| *n > 0),
        min_score: min_score(request.min_score)?,
    })
}

/// A search's `min_score`: 0 is none; otherwise a finite number.
fn min_score(raw: f64) -> Result<Option<f64>, String> {
    if !raw.is_finite() {
        return Err(format!("min_score {raw} is not a finite number"));
    }
    Ok((raw != 0.0).then_some(raw))
}

/// A search's answer on the wire.
fn answer_to_wire(answer: Answer) -> v1::SearchResponse {
    let hits = answer
        .hits
        .iter()
        .map(|(fused, memory)| {
            let wire = fused_to_wire(fused);
            v1::Hit {
                id: wire.id,
                score: wire.score,
                record: Some(memory_to_wire(memory)),
                matched_by: wire.matched_by,
                explain: wire.explain,
            }
        })
        .collect();
    v1::SearchResponse {
        hits,
        timings: timings_to_wire(&answer.timings),
        degraded: !answer.reasons.is_empty(),
        degraded_reasons: answer.reasons,
        strategy: answer.strategy,
        counts_share: answer.counts_share,
    }
}

#[tonic::async_trait]
impl memory_server::Memory for MemoryService {
    async fn search(
        &self,
        request: Request<v1::SearchRequest>,
    ) -> Result<Response<v1::SearchResponse>, Status> {
        let tenant = request
            .get_ref()
            .filters
            .as_ref()
            .map(|f| f.tenant.as_str());
        self.admit(request.metadata(), Scope::Read, tenant)?;
        let Some(searcher) = &self.searcher else {
            return Err(status(
                ErrorKind::Unimplemented,
                "this gateway has no search peers configured",
            ));
        };
        let budget = trine_api::caller_timeout(request.metadata());
        self.first_ready(budget).await?;
        let query = query_from_wire(request.into_inner(), searcher.config()).map_err(invalid)?;
        let answer = searcher.search(&query, budget).await.map_err(to_status)?;
        Ok(Response::new(answer_to_wire(answer)))
    }

    #[tracing::instrument(skip_all, fields(records = request.get_ref().records.len()))]
    async fn upsert(
        &self,
        request: Request<v1::UpsertRequest>,
    ) -> Result<Response<v1::UpsertResponse>, Status> {
        self.admit(
            request.metadata(),
            Scope::Write,
            request.get_ref().records.iter().map(|r| r.tenant.as_str()),
        )?;
        // The embedding hop gets what is left of the caller's deadline.
        let budget = trine_api::caller_timeout(request.metadata());
        trine_api::deadline::scope(budget, self.upsert_records(request.into_inner().records)).await
    }

    #[tracing::instrument(skip_all, fields(ids = request.get_ref().ids.len()))]
    async fn delete(
        &self,
        request: Request<v1::DeleteRequest>,
    ) -> Result<Response<v1::DeleteResponse>, Status> {
        self.admit(
            request.metadata(),
            Scope::Write,
            [request.get_ref().tenant.as_str()],
        )?;
        let request = request.into_inner();
        let found = self.in_tenant(&request.tenant, &request.ids).await?;
        let ids: Vec<_> = found.iter().map(|m| m.id).collect();
        self.store.delete(&ids).await.map_err(to_status)?;
        let deleted = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        Ok(Response::new(v1::DeleteResponse { deleted }))
    }

    #[tracing::instrument(skip_all, fields(ids = request.get_ref().ids.len()))]
    async fn forget(
        &self,
        request: Request<v1::ValidityRequest>,
    ) -> Result<Response<v1::ValidityResponse>, Status> {
        self.set_validity(request, Some(chrono::Utc::now())).await
    }

    #[tracing::instrument(skip_all, fields(ids = request.get_ref().ids.len()))]
    async fn restore(
        &self,
        request: Request<v1::ValidityRequest>,
    ) -> Result<Response<v1::ValidityResponse>, Status> {
        self.set_validity(request, None).await
    }

    #[tracing::instrument(skip_all, fields(name = request.get_ref().name.as_str()))]
    async fn backup(
        &self,
        request: Request<v1::BackupRequest>,
    ) -> Result<Response<v1::BackupResponse>, Status> {
        // Every tenant's memories: a key of every tenant.
        self.admit(request.metadata(), Scope::Admin, [crate::auth::ANY_TENANT])?;
        let Some(backups) = &self.backups else {
            return Err(status(
                ErrorKind::FailedPrecondition,
                "this server takes no backups: start it with --backup-dir DIR",
            ));
        };
        let name = request.into_inner().name;
        crate::backups::check_name(&name).map_err(invalid)?;
        let dir = backups.dir.join(&name);
        let manifest = crate::backups::take(self.store.as_ref(), &dir, backups.keys.as_deref())
            .await
            .map_err(to_status)?;
        tracing::info!(path = %dir.display(), points = manifest.points, "backup taken");
        Ok(Response::new(v1::BackupResponse {
            path: dir.display().to_string(),
            collection: manifest.collection,
            points: manifest.points,
            schema: manifest.schema,
            files: manifest.files.len() as u64,
            bytes: manifest.files.iter().map(|f| f.bytes).sum(),
        }))
    }

    #[tracing::instrument(skip_all, fields(ids = request.get_ref().ids.len()))]
    async fn get(
        &self,
        request: Request<v1::GetRequest>,
    ) -> Result<Response<v1::GetResponse>, Status> {
        self.admit(
            request.metadata(),
            Scope::Read,
            [request.get_ref().tenant.as_str()],
        )?;
        let request = request.into_inner();
        let found = self.in_tenant(&request.tenant, &request.ids).await?;
        let records = found.iter().map(memory_to_wire).collect();
        Ok(Response::new(v1::GetResponse { records }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_one_when_it_leaves_strategy_weights_and_method_to_the_services() {
        // (`question`: the question strategy's list is read beside the
        // configured one; the gateway fuses from it where the dense list is
        // flat.)
        let asked = "what did we decide about billing?";
        let base = || v1::SearchRequest {
            query: asked.into(),
            filters: Some(v1::Filters {
                tenant: "acme".into(),
                ..v1::Filters::default()
            }),
            ..v1::SearchRequest::default()
        };
        type Edit = fn(&mut v1::SearchRequest);
        let table: &[(&str, Edit, bool)] = &[
            ("as asked", |_| {}, true),
            ("hybrid named", |r| r.mode = v1::Mode::Hybrid as i32, true),
            (
                "zero weights",
                |r| r.weights = Some(v1::ListWeights::default()),
                true,
            ),
            (
                "options without a method",
                |r| {
                    r.fusion = Some(v1::FusionOptions {
                        rrf_k: 10.0,
                        ..v1::FusionOptions::default()
                    });
                },
                true,
            ),
            (
                "a statement",
                |r| r.query = "billing decision".into(),
                false,
            ),
            (
                "questions off",
                |r| {
                    r.fusion = Some(v1::FusionOptions {
                        question_confidence: Some(0.0),
                        ..v1::FusionOptions::default()
                    });
                },
                false,
            ),
            (
                "a strategy named",
                |r| r.strategy = "candidates".into(),
                false,
            ),
            ("lexical only", |r| r.mode = v1::Mode::Lexical as i32, false),
            (
                "semantic only",
                |r| r.mode = v1::Mode::Semantic as i32,
                false,
            ),
            (
                "weights named",
                |r| {
                    r.weights = Some(v1::ListWeights {
                        semantic: 3.0,
                        ..v1::ListWeights::default()
                    });
                },
                false,
            ),
            (
                "a method named",
                |r| {
                    r.fusion = Some(v1::FusionOptions {
                        method: "score".into(),
                        ..v1::FusionOptions::default()
                    });
                },
                false,
            ),
        ];
        for (case, edit, want) in table {
            let mut request = base();
            edit(&mut request);
            let query = query_from_wire(request, &SearchConfig::default()).unwrap();
            assert_eq!(query.question, *want, "{case}");
        }
    }
}

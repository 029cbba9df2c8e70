//! [`ServerStore`]: the [`Store`] on a Qdrant server, over gRPC (`qdrant-client`).
//!
//! This file is the [`Store`] implementation. `cluster` holds the nodes
//! (which, how a collection is laid out and read, the failover of every
//! call), `ops` the store's own Qdrant calls and `rankings` the rankings of
//! [`Store::query`]. Everything Qdrant-specific is in small pure functions,
//! one module a topic as in `edge/`, unit-tested without a server: `filter`
//! (reads' filters), `convert` (points and payload), `schema` (the
//! collection, its indexes and info), `error` (status codes to store errors).

mod backup;
mod cluster;
mod convert;
mod error;
mod filter;
mod gateways;
mod journal;
mod ops;
mod rankings;
mod rest;
mod schema;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use qdrant_client::qdrant::{
    self as q, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    DatetimeIndexParamsBuilder, DeletePointsBuilder, FloatIndexParamsBuilder, GetPointsBuilder,
    IdfParamsBuilder, IntegerIndexParamsBuilder, KeywordIndexParamsBuilder,
    OptimizersConfigDiffBuilder, PrefetchQueryBuilder, QueryPointsBuilder, RrfBuilder,
    ScrollPointsBuilder, SearchParamsBuilder, SparseVectorParamsBuilder,
    SparseVectorsConfigBuilder, TextIndexParamsBuilder, UpdateCollectionBuilder,
    UpdatePointVectorsBuilder, UpsertPointsBuilder, VectorParamsBuilder, VectorsConfigBuilder,
};
use qdrant_client::{Payload, Qdrant, QdrantError};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

pub use self::cluster::{CHANNELS_PER_NODE, Layout, ReadConsistency};
pub(crate) use self::journal::{RETENTION, micros, now_micros};
use self::{convert::*, error::*, filter::*, schema::*};
use crate::query::{Rankings, check_dim};
use crate::{
    BatchPage, BatchRead, Change, CollectionInfo, CollectionSpec, Counted, DENSE_VECTOR,
    EmbedderId, FieldIndex, Filter, Fold, Hit, Keeping, KeptSize, Memory, NativeLexical,
    PayloadIndex, PayloadRead, PayloadSchema, Point, Query, Result, SPARSE_VECTOR, Scan,
    ScrollPage, SparseVector, Store, StoreError, TOKENS_VECTOR, TermPage, TermPoint, TextIndexInfo,
    TimeBounds, TimeFormat, UPSERT_BATCH,
};
use trine_core::late::Tokens;

/// Environment variable holding the optional Qdrant API key.
const API_KEY_ENV: &str = "TRINE_QDRANT_API_KEY";
/// Collection metadata key recording the embedder's name.
const META_EMBEDDER: &str = "trine_embedder";
/// Collection metadata key recording the embedder's dimension.
const META_DIM: &str = "trine_dim";
/// The collection metadata key of the layout version ([`crate::SCHEMA`]).
const META_SCHEMA: &str = "trine_schema";

const BACKEND: &str = "server";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Per-request deadline: long enough for a `wait(true)` index build on a large collection.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// How long `optimize` waits for the server's background optimizers.
const OPTIMIZE_WAIT: Duration = Duration::from_secs(60 * 60);
const OPTIMIZE_POLL: Duration = Duration::from_secs(2);

/// A trine collection on a Qdrant server.
pub struct ServerStore {
    /// One client per node named (`--qdrant a,b,c`); calls go to `current`
    /// and move on to the next node when it cannot be reached.
    nodes: Vec<(String, Qdrant)>,
    current: AtomicUsize,
    url: String,
    collection: String,
    layout: Layout,
    schema: PayloadSchema,
    /// Dimension of the `dense` vector once known; 0 when not yet read.
    dense_dim: AtomicUsize,
    /// Whether the collection has the `tokens` space: 0 not yet known, 1
    /// no, 2 yes.
    tokens: std::sync::atomic::AtomicU8,
    /// The server's version and what it can do, from its health check.
    engine: trine_core::model::Engine,
    /// How many replicas each read asks; `None`: Qdrant's default.
    read_consistency: Option<q::ReadConsistency>,
    /// The change journal is known to exist (`journal`).
    journal_ready: AtomicBool,
    /// Entries this process journaled (one in so many prunes).
    journaled: AtomicUsize,
    /// The reads a search makes at once go as one batch query.
    batch_reads: bool,
    /// The server's API key, for the REST calls of a backup.
    api_key: Option<String>,
}

impl std::fmt::Debug for ServerStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerStore")
            .field("url", &self.url)
            .field("collection", &self.collection)
            .finish_non_exhaustive()
    }
}

impl ServerStore {
    /// Every read asks `consistency` of each shard's replicas.
    pub fn with_read_consistency(self, consistency: Option<ReadConsistency>) -> Self {
        Self {
            read_consistency: consistency.map(ReadConsistency::wire),
            ..self
        }
    }

    /// The reads a search makes at once as one call (Qdrant's batch query)
    /// rather than side by side.
    pub fn with_batch_reads(self, batch_reads: bool) -> Self {
        Self {
            batch_reads,
            ..self
        }
    }

    /// Creates the collection with `layout` when it does not exist yet.
    pub fn with_layout(self, layout: Layout) -> Self {
        Self { layout, ..self }
    }

    /// Reads and writes the payload with `schema` (where each field lives,
    /// how times are written) instead of trine's own layout: a collection
    /// another tool wrote is searched as it is.
    pub fn with_schema(self, schema: PayloadSchema) -> Result<Self> {
        schema
            .validate()
            .map_err(|why| StoreError::invalid("payload schema", why))?;
        Ok(Self { schema, ..self })
    }
}

#[async_trait]
impl Store for ServerStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn collection(&self) -> &str {
        &self.collection
    }

    async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo> {
        if spec.embedder.name.trim().is_empty() || spec.embedder.dim == 0 {
            return Err(StoreError::invalid(
                "embedder",
                "it needs a name and a dimension above 0",
            ));
        }
        let (info, created) = match self.raw_info().await? {
            Some(info) => (info, false),
            None => {
                let created = self.create_collection(spec).await;
                // Should creating fail because another process created it
                // meanwhile, theirs is checked like any existing collection.
                match (self.raw_info().await?, created) {
                    (Some(info), created) => (info, created.is_ok()),
                    (None, Err(e)) => return Err(e),
                    (None, Ok(())) => return Err(self.no_collection()),
                }
            }
        };
        check_embedder(&self.collection, &info, &spec.embedder)?;
        crate::check_schema(&self.collection, schema_of(&info))?;
        if let Err(e) = self.cap_segments(&info).await {
            // A tunable, not the layout: a key that may not change the
            // collection still opens it.
            tracing::warn!(collection = %self.collection, error = %e, "could not give the collection trine's segment cap");
        }
        for (field, index) in self.schema.indexes() {
            // The source's phrase index only with a new collection: an older
            // one has points without the copy it indexes.
            let now_or_never = index != FieldIndex::Phrase || created;
            if now_or_never && !info.payload_schema.contains_key(field) {
                self.create_index(field, index, spec.fold).await?;
            }
        }
        self.dense_dim.store(spec.embedder.dim, Ordering::Relaxed);
        self.tokens
            .store(1 + u8::from(tokens_of(&info)), Ordering::Relaxed);
        self.info().await?.ok_or_else(|| self.no_collection())
    }

    async fn info(&self) -> Result<Option<CollectionInfo>> {
        let Some(info) = self.raw_info().await? else {
            return Ok(None);
        };
        // The server's `points_count` is approximate: count exactly.
        let request: q::CountPoints = CountPointsBuilder::new(self.collection.as_str())
            .exact(true)
            .into();
        let points = self
            .call(|c| Box::pin(c.count(request.clone())))
            .await?
            .result
            .map_or(0, |r| r.count);
        Ok(Some(describe(
            self.engine.clone(),
            &self.collection,
            &info,
            points,
            &self.schema,
        )))
    }

    async fn create_text_index(&self, fold: Fold) -> Result<bool> {
        let info = self.raw_info().await?.ok_or_else(|| self.no_collection())?;
        let text = self.schema.text.as_str();
        if let Some(schema) = info.payload_schema.get(text) {
            if schema.data_type != q::PayloadSchemaType::Text as i32 {
                return Err(StoreError::invalid(
                    "text index",
                    format!(
                        "field `{}` of collection `{}` already has a {} index; creating the \
                         full-text index would replace it: drop that index first",
                        text,
                        self.collection,
                        schema_kind(schema.data_type)
                    ),
                ));
            }
            if text_index_of(&info, &self.schema).is_some_and(|t| t.fold() == fold) {
                return Ok(false);
            }
        }
        self.create_index(text, FieldIndex::Text, fold).await?;
        // The source's phrases fold as the text's do.
        if source_phrases_of(&info, &self.schema) {
            let copy = self.schema.source_text.clone();
            self.create_index(&copy, FieldIndex::Phrase, fold).await?;
        }
        Ok(true)
    }

    async fn upsert(&self, points: Vec<Point>) -> Result<()> {
        if points.is_empty() {
            return Ok(());
        }
        let want = self.dense_dim().await?;
        for point in &points {
            check_point(&self.collection, point, want)?;
        }
        let tokens = self.tokens_space().await?;
        let total = points.len();
        let mut points = points.into_iter().peekable();
        let mut written = 0;
        loop {
            let batch: Vec<q::PointStruct> = next_batch(&mut points)
                .into_iter()
                .map(|point| point_struct(point, &self.schema, tokens))
                .collect();
            if batch.is_empty() {
                return Ok(());
            }
            let len = batch.len();
            let ids: Vec<Uuid> = batch
                .iter()
                .filter_map(|p| uuid_of(p.id.as_ref()).ok())
                .collect();
            let request: q::UpsertPoints =
                UpsertPointsBuilder::new(self.collection.as_str(), batch)
                    .wait(true)
                    .into();
            if let Err(e) = self
                .call(|c| Box::pin(c.upsert_points(request.clone())))
                .await
            {
                return Err(match e {
                    StoreError::Backend(why) => StoreError::Backend(format!(
                        "points {written}..{} of {total} not written ({written} were): {why}",
                        written + len
                    )),
                    other => other,
                });
            }
            // Landed: the processes keeping statistics hear of it.
            self.journal(ids).await.map_err(|e| {
                StoreError::Backend(format!(
                    "points {written}..{} of {total} written but not journaled (write them again): {e}",
                    written + len
                ))
            })?;
            written += len;
        }
    }

    async fn delete(&self, ids: &[Uuid]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let selector = q::PointsIdsList {
            ids: ids.iter().copied().map(point_id).collect(),
        };
        let request: q::DeletePoints = DeletePointsBuilder::new(self.collection.as_str())
            .points(selector)
            .wait(true)
            .into();
        self.call(|c| Box::pin(c.delete_points(request.clone())))
            .await?;
        self.journal(ids.iter().copied()).await.map_err(|e| {
            StoreError::Backend(format!(
                "deleted but not journaled (delete them again): {e}"
            ))
        })
    }

    async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let points = self.retrieve(ids, true).await?;
        let mut found = HashMap::with_capacity(points.len());
        for p in points {
            let id = uuid_of(p.id.as_ref())?;
            found.insert(id, self.schema.to_memory(id, json_map(p.payload)));
        }
        Ok(ids.iter().filter_map(|id| found.get(id).cloned()).collect())
    }

    async fn count(&self, filter: &Filter) -> Result<u64> {
        self.count_filtered(qdrant_filter(filter, &self.schema)?)
            .await
    }

    /// Never here: the collection is written by other processes (gateways,
    /// `trine ingest`); a [`crate::Tracked`] over this store keeps the
    /// statistics, hearing of their writes through the change journal.
    /// A server keeps no postings (a lexical service's [`crate::Tracked`] does).
    fn kept_terms(&self, _: &Filter, _: Option<Uuid>, _: usize, _: bool) -> Option<TermPage> {
        None
    }

    fn holds_no_phrase(&self, _filter: &Filter) -> bool {
        false
    }

    fn kept_around(&self, _: &Filter, _: &[Uuid], _: u64, _: usize) -> Option<crate::Nearby> {
        None
    }

    fn counted(&self, _filter: &Filter) -> Counted {
        Counted::No
    }

    /// Nothing to build here: a [`crate::Tracked`] over this store keeps them.
    fn keep_counts(&self) {}

    async fn changes(&self, from: i64, limit: usize) -> Result<Option<Vec<Change>>> {
        self.journaled(from, limit).await.map(Some)
    }

    fn kept(&self) -> Option<KeptSize> {
        None
    }

    fn keeping(&self) -> Keeping {
        Keeping::Not
    }

    async fn scroll(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        self.scroll_filtered(qdrant_filter(filter, &self.schema)?, limit, offset)
            .await
    }

    async fn scroll_terms(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        self.scroll_terms_filtered(qdrant_filter(filter, &self.schema)?, limit, offset, source)
            .await
    }

    /// Side by side, or with `batch_reads` one call: Qdrant's batch query,
    /// whose queries 1.19 runs one after another — fewer calls, less CPU a
    /// search, the reads' times added (real text at 40,000, one search at a
    /// time: the lexical read's p50 went from 5.3 to 7.0 ms).
    async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        if self.batch_reads {
            self.read_batch_points(reads).await
        } else {
            crate::side_by_side(self, reads).await
        }
    }

    async fn query(&self, query: Query) -> Result<Vec<Hit>> {
        crate::query::run(self, query).await
    }

    async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        for (_, vector) in &vectors {
            check_sparse(vector)?;
        }
        let mut rest = vectors.into_iter();
        loop {
            let batch: Vec<(Uuid, SparseVector)> = rest.by_ref().take(UPSERT_BATCH).collect();
            if batch.is_empty() {
                return Ok(());
            }
            self.set_sparse_batch(batch).await?;
        }
    }

    async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage> {
        let filter = match scope {
            Scan::All => q::Filter::default(),
            Scan::MissingSparse => no_sparse(),
        };
        self.scroll_filtered(filter, limit, offset).await
    }

    async fn count_missing_sparse(&self) -> Result<u64> {
        self.count_filtered(no_sparse()).await
    }

    /// The server optimizes in the background: wait until the collection is green.
    async fn backup(&self, dir: &Path) -> Result<crate::backup::Manifest> {
        self.take_backup(dir).await
    }

    async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        crate::check_ids(ids)?;
        self.whole_points(ids).await
    }

    async fn gateways(&self, me: &crate::Beat, live: Duration) -> Result<Option<Vec<crate::Beat>>> {
        self.beat(me, live).await.map(Some)
    }

    async fn upgrade(&self) -> Result<Option<u32>> {
        let info = self.raw_info().await?.ok_or_else(|| self.no_collection())?;
        let found = schema_of(&info);
        crate::check_schema(&self.collection, found)?;
        if found == crate::SCHEMA {
            return Ok(None);
        }
        // Version 3: the thread's and seq's indexes, made in place (as
        // `ensure_collection` makes any missing index but the text's).
        for (field, index) in self.schema.indexes() {
            let text = matches!(index, FieldIndex::Text | FieldIndex::Phrase);
            if !text && !info.payload_schema.contains_key(field) {
                self.create_index(field, index, Fold::default()).await?;
            }
        }
        let request: q::UpdateCollection = UpdateCollectionBuilder::new(self.collection.as_str())
            .metadata(schema_metadata())
            .into();
        self.call(|c| Box::pin(c.update_collection(request.clone())))
            .await?;
        Ok(Some(found))
    }

    async fn optimize(&self) -> Result<()> {
        let started = Instant::now();
        let mut nudged = false;
        loop {
            let info = self.raw_info().await?.ok_or_else(|| self.no_collection())?;
            let optimizer_error = info
                .optimizer_status
                .as_ref()
                .filter(|s| !s.ok)
                .map(|s| s.error.clone());
            match q::CollectionStatus::try_from(info.status) {
                Ok(q::CollectionStatus::Green) => return Ok(()),
                Ok(q::CollectionStatus::Red) => {
                    return Err(StoreError::Backend(format!(
                        "collection `{}` is red (optimizer failed: {}): see the qdrant server log",
                        self.collection,
                        optimizer_error.unwrap_or_default()
                    )));
                }
                // Grey: optimizations are pending until an update triggers them.
                Ok(q::CollectionStatus::Grey) if !nudged => {
                    let request: q::UpdateCollection =
                        UpdateCollectionBuilder::new(self.collection.as_str())
                            .optimizers_config(OptimizersConfigDiffBuilder::default())
                            .into();
                    self.call(|c| Box::pin(c.update_collection(request.clone())))
                        .await?;
                    nudged = true;
                }
                _ => {}
            }
            if let Some(why) = optimizer_error {
                return Err(StoreError::Backend(format!(
                    "optimizer of collection `{}` failed: {why}",
                    self.collection
                )));
            }
            if started.elapsed() >= OPTIMIZE_WAIT {
                return Err(StoreError::Backend(format!(
                    "collection `{}` is still optimizing after {} s; searches keep working \
                     meanwhile: run optimize again to keep waiting",
                    self.collection,
                    OPTIMIZE_WAIT.as_secs()
                )));
            }
            tracing::info!(
                collection = %self.collection,
                waited_s = started.elapsed().as_secs(),
                "waiting for qdrant to finish optimizing"
            );
            tokio::time::sleep(OPTIMIZE_POLL).await;
        }
    }
}

/// A test time from RFC 3339 (the submodules' tests share it).
/// The most token values (rows × dimension) one upsert request carries:
/// 16 MiB of f32 on the wire.
const UPSERT_TOKEN_VALUES: usize = 4 << 20;

/// The next points to upsert in one request: at most [`UPSERT_BATCH`], and
/// no more token values than [`UPSERT_TOKEN_VALUES`] (but one point always).
fn next_batch(points: &mut std::iter::Peekable<impl Iterator<Item = Point>>) -> Vec<Point> {
    let mut batch = Vec::new();
    let mut values = 0;
    while batch.len() < UPSERT_BATCH {
        let size = match points.peek() {
            Some(p) => p.tokens.as_ref().map_or(0, |t| t.rows.len()),
            None => break,
        };
        if !batch.is_empty() && values + size > UPSERT_TOKEN_VALUES {
            break;
        }
        values += size;
        batch.extend(points.next());
    }
    batch
}

#[cfg(test)]
fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|e| panic!("bad test time {s}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connect_says_what_is_wrong() {
        // Nothing listens on port 1: the connection is refused at once.
        match ServerStore::connect("http://127.0.0.1:1", "c").await {
            Err(StoreError::Unreachable { url, .. }) => assert_eq!(url, "http://127.0.0.1:1"),
            other => panic!("expected unreachable, got {other:?}"),
        }
        let bad = ServerStore::connect("http://bad host:6334", "c").await;
        assert!(matches!(bad, Err(StoreError::Invalid { .. })), "{bad:?}");
        let unnamed = ServerStore::connect("http://127.0.0.1:1", " ").await;
        assert!(
            matches!(unnamed, Err(StoreError::Invalid { .. })),
            "{unnamed:?}"
        );
    }
}

//! [`ServerStore`]: the [`Store`] on a Qdrant server, over gRPC (`qdrant-client`).
//!
//! Everything Qdrant-specific is in small pure functions at the bottom
//! (filter, payload, index and info conversions), unit-tested without a server.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use qdrant_client::qdrant::{
    self as q, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    DatetimeIndexParamsBuilder, DeletePointsBuilder, FloatIndexParamsBuilder, GetPointsBuilder,
    IdfParamsBuilder, KeywordIndexParamsBuilder, OptimizersConfigDiffBuilder, PrefetchQueryBuilder,
    QueryPointsBuilder, RrfBuilder, ScrollPointsBuilder, SearchParamsBuilder,
    SparseVectorParamsBuilder, SparseVectorsConfigBuilder, TextIndexParamsBuilder,
    UpdateCollectionBuilder, UpdatePointVectorsBuilder, UpsertPointsBuilder, VectorParamsBuilder,
    VectorsConfigBuilder,
};
use qdrant_client::{Payload, Qdrant, QdrantError};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use crate::{
    CollectionInfo, CollectionSpec, DENSE_VECTOR, EmbedderId, FieldIndex, Filter, Fold, Hit,
    Memory, NativeLexical, PayloadIndex, PayloadRead, PayloadSchema, Point, Result, SPARSE_VECTOR,
    Scan, ScrollPage, SparseVector, Store, StoreError, TermPage, TermPoint, TextIndexInfo,
    TimeBounds, TimeFormat, UPSERT_BATCH,
};

/// Environment variable holding the optional Qdrant API key.
const API_KEY_ENV: &str = "TRINE_QDRANT_API_KEY";
/// Collection metadata key recording the embedder's name.
const META_EMBEDDER: &str = "trine_embedder";
/// Collection metadata key recording the embedder's dimension.
const META_DIM: &str = "trine_dim";

const BACKEND: &str = "server";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Per-request deadline: long enough for a `wait(true)` index build on a large collection.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// How long `optimize` waits for the server's background optimizers.
const OPTIMIZE_WAIT: Duration = Duration::from_secs(60 * 60);
const OPTIMIZE_POLL: Duration = Duration::from_secs(2);

/// The nodes `--qdrant` names: a comma-separated list of gRPC URLs, or
/// `dns://name:port`, every address the name resolves to now (a headless
/// service's pods).
async fn node_urls(raw: &str) -> Result<Vec<String>> {
    if let Some(target) = raw.strip_prefix("dns://") {
        let found = tokio::net::lookup_host(target)
            .await
            .map_err(|e| StoreError::Unreachable {
                url: raw.to_string(),
                why: format!("cannot resolve {target}: {e}"),
            })?;
        let mut urls: Vec<String> = found.map(|addr| format!("http://{addr}")).collect();
        urls.sort();
        urls.dedup();
        return Ok(urls);
    }
    Ok(raw
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(String::from)
        .collect())
}

/// Tries of one call across the nodes before it fails (see `ServerStore::call`).
const ATTEMPTS: usize = 4;

/// A call to one node, as `ServerStore::call` runs it.
type Call<'s, T> = std::pin::Pin<
    Box<dyn std::future::Future<Output = std::result::Result<T, QdrantError>> + Send + 's>,
>;

/// How a collection trine creates is spread over a Qdrant cluster; `None`
/// leaves Qdrant's default (one shard, no replica). A collection that exists
/// keeps its layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    pub shards: Option<u32>,
    pub replication_factor: Option<u32>,
    /// Replicas that must acknowledge a write before it is answered
    /// (Qdrant's default: 1, so that a node down leaves writes working).
    pub write_consistency_factor: Option<u32>,
}

/// How many replicas of a shard a read asks, Qdrant's read consistency
/// (default: one replica). With two replicas, anything above one needs both
/// nodes up to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadConsistency {
    /// This many replicas.
    Factor(u64),
    /// Every replica asked; what most of them hold is returned.
    Majority,
    /// Most replicas asked; what all of those hold is returned.
    Quorum,
    /// Every replica asked; what all of them hold is returned.
    All,
}

impl ReadConsistency {
    /// `majority`, `quorum`, `all` or a number of replicas.
    pub fn parse(raw: &str) -> std::result::Result<Self, String> {
        match raw.trim() {
            "majority" => Ok(Self::Majority),
            "quorum" => Ok(Self::Quorum),
            "all" => Ok(Self::All),
            n => match n.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Self::Factor(n)),
                _ => Err(format!(
                    "read_consistency {raw:?}: give majority, quorum, all or a number of replicas >= 1"
                )),
            },
        }
    }

    fn wire(self) -> q::ReadConsistency {
        use q::read_consistency::Value;
        let value = match self {
            Self::Factor(n) => Value::Factor(n),
            Self::Majority => Value::Type(q::ReadConsistencyType::Majority as i32),
            Self::Quorum => Value::Type(q::ReadConsistencyType::Quorum as i32),
            Self::All => Value::Type(q::ReadConsistencyType::All as i32),
        };
        q::ReadConsistency { value: Some(value) }
    }
}

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
    /// The server's version and what it can do, from its health check.
    engine: trine_core::model::Engine,
    /// How many replicas each read asks; `None`: Qdrant's default.
    read_consistency: Option<q::ReadConsistency>,
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
    /// Connects to the Qdrant server at `url` (gRPC, e.g. `http://localhost:6334`),
    /// with the API key from `TRINE_QDRANT_API_KEY` if set, and checks that it answers.
    pub async fn connect(url: &str, collection: &str) -> Result<ServerStore> {
        let api_key = std::env::var(API_KEY_ENV)
            .ok()
            .filter(|key| !key.trim().is_empty());
        Self::connect_with_key(url, collection, api_key).await
    }

    /// As [`Self::connect`], with the server's API key given (`None`: none).
    pub async fn connect_with_key(
        url: &str,
        collection: &str,
        api_key: Option<String>,
    ) -> Result<ServerStore> {
        if collection.trim().is_empty() {
            return Err(StoreError::invalid(
                "collection name",
                "it is empty: pass `--collection NAME`",
            ));
        }
        let urls = node_urls(url).await?;
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        if urls.is_empty() {
            return Err(StoreError::invalid(
                "qdrant url",
                "it is empty: give a node's gRPC address, e.g. http://localhost:6334",
            ));
        }
        let mut nodes = Vec::with_capacity(urls.len());
        for node in &urls {
            let client = Qdrant::from_url(node)
                .api_key(api_key.clone())
                .connect_timeout(CONNECT_TIMEOUT)
                .timeout(REQUEST_TIMEOUT)
                .skip_compatibility_check()
                .build()
                .map_err(|e| match e {
                    QdrantError::InvalidUri(e) => StoreError::invalid(
                        "qdrant url",
                        format!("`{node}` ({e}): use the gRPC address, e.g. http://localhost:6334"),
                    ),
                    other => StoreError::Unreachable {
                        url: node.to_string(),
                        why: why(&other),
                    },
                })?;
            nodes.push((node.to_string(), client));
        }
        // One node answering is enough: the others are failed over to later.
        let mut version = None;
        let mut current = 0;
        let mut reasons = Vec::new();
        for (i, (node, client)) in nodes.iter().enumerate() {
            match client.health_check().await {
                Ok(health) => {
                    version = Some(health.version);
                    current = i;
                    break;
                }
                Err(e) => reasons.push(format!("{node}: {}", why(&e))),
            }
        }
        let Some(version) = version else {
            return Err(StoreError::Unreachable {
                url: url.to_string(),
                why: reasons.join("; "),
            });
        };
        Ok(ServerStore {
            engine: trine_core::model::Engine::qdrant(&version),
            nodes,
            current: AtomicUsize::new(current),
            url: url.to_string(),
            collection: collection.to_string(),
            layout: Layout::default(),
            schema: PayloadSchema::default(),
            dense_dim: AtomicUsize::new(0),
            read_consistency: None,
        })
    }

    /// Every read asks `consistency` of each shard's replicas.
    pub fn with_read_consistency(self, consistency: Option<ReadConsistency>) -> Self {
        Self {
            read_consistency: consistency.map(ReadConsistency::wire),
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

    /// The store error of a failed client call on this collection.
    /// Runs `op` on a node, moving on to the next node named when one cannot
    /// be reached (unavailable, a failed connect, a deadline) or fails inside
    /// the cluster (an internal error), with a growing pause between tries — at most [`ATTEMPTS`] tries (and one per node),
    /// about 1.5 s of pauses. The node that answered is tried first next time.
    /// Every call trine makes is idempotent (upserts by id, deletes, reads).
    async fn call<'s, T>(&'s self, op: impl Fn(&'s Qdrant) -> Call<'s, T>) -> Result<T> {
        let n = self.nodes.len();
        let first = self.current.load(Ordering::Relaxed) % n;
        let mut pause = Duration::from_millis(100);
        let tries = ATTEMPTS.max(n);
        let mut last = None;
        for attempt in 0..tries {
            let i = (first + attempt) % n;
            let (node, client) = &self.nodes[i];
            match op(client).await {
                Ok(answer) => {
                    if i != first {
                        self.current.store(i, Ordering::Relaxed);
                        tracing::warn!(node = %node, "qdrant: failed over to another node");
                    }
                    return Ok(answer);
                }
                Err(e) => match client_error(e, node, &self.collection) {
                    // A node down, or a cluster between states (a replica
                    // restarting: "Local shard 2 not found", "1 of 1 read
                    // operations failed"): another try, on the next node.
                    err @ (StoreError::Unreachable { .. } | StoreError::Backend(_)) => {
                        last = Some(err);
                        if attempt + 1 < tries {
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(1));
                        }
                    }
                    other => return Err(other),
                },
            }
        }
        Err(last.unwrap_or_else(|| StoreError::Backend("no qdrant node to call".into())))
    }

    fn no_collection(&self) -> StoreError {
        StoreError::NoCollection(self.collection.clone())
    }

    /// The server's collection info, or `None` when the collection does not exist.
    async fn raw_info(&self) -> Result<Option<q::CollectionInfo>> {
        let name = self.collection.as_str();
        match self.call(|c| Box::pin(c.collection_info(name))).await {
            Ok(resp) => resp.result.map(Some).ok_or_else(|| {
                StoreError::Backend(format!(
                    "the server sent no info for collection `{}`",
                    self.collection
                ))
            }),
            Err(StoreError::NoCollection(_)) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The dimension of the `dense` vector, read once from the server.
    async fn dense_dim(&self) -> Result<usize> {
        let known = self.dense_dim.load(Ordering::Relaxed);
        if known != 0 {
            return Ok(known);
        }
        let info = self.raw_info().await?.ok_or_else(|| self.no_collection())?;
        let dim = dense_dim_of(&info).ok_or_else(|| no_dense_vector(&self.collection))?;
        self.dense_dim.store(dim, Ordering::Relaxed);
        Ok(dim)
    }

    async fn create_collection(&self, spec: &CollectionSpec) -> Result<()> {
        let request: q::CreateCollection =
            create_request(&self.collection, spec, self.layout).into();
        self.call(|c| Box::pin(c.create_collection(request.clone())))
            .await
            .map(|_| ())
    }

    /// Creates the payload index `index` on `field`, waiting until it is built.
    async fn create_index(&self, field: &str, index: FieldIndex, fold: Fold) -> Result<()> {
        let (field_type, params) = index_params(index, self.schema.time_format, fold);
        let request: q::CreateFieldIndexCollection =
            CreateFieldIndexCollectionBuilder::new(self.collection.as_str(), field, field_type)
                .field_index_params(params)
                .wait(true)
                .into();
        self.call(|c| Box::pin(c.create_field_index(request.clone())))
            .await
            .map(|_| ())
    }

    /// The exact number of points matching `filter`.
    async fn count_filtered(&self, filter: q::Filter) -> Result<u64> {
        let request: q::CountPoints = CountPointsBuilder::new(self.collection.as_str())
            .filter(filter)
            .exact(true)
            .into();
        let request = q::CountPoints {
            read_consistency: self.read_consistency,
            ..request
        };
        let resp = self.call(|c| Box::pin(c.count(request.clone()))).await?;
        resp.result.map(|r| r.count).ok_or_else(|| {
            StoreError::Backend(format!(
                "the server sent no count for `{}`",
                self.collection
            ))
        })
    }

    /// Up to `limit` points matching `filter` with the payload and vectors
    /// asked for, in ascending id order from `offset` (inclusive), and the
    /// offset of the next page.
    async fn scroll_points(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
        payload: impl Into<q::with_payload_selector::SelectorOptions>,
        vectors: impl Into<q::with_vectors_selector::SelectorOptions>,
    ) -> Result<(Vec<q::RetrievedPoint>, Option<Uuid>)> {
        let limit = u32::try_from(limit)
            .ok()
            .filter(|l| *l > 0)
            .ok_or_else(|| {
                StoreError::invalid("scroll limit", format!("{limit}: use 1 to {}", u32::MAX))
            })?;
        let mut request = ScrollPointsBuilder::new(self.collection.as_str())
            .filter(filter)
            .limit(limit)
            .with_payload(payload)
            .with_vectors(vectors);
        if let Some(offset) = offset {
            request = request.offset(point_id(offset));
        }
        let request = q::ScrollPoints {
            read_consistency: self.read_consistency,
            ..request.into()
        };
        let resp = self.call(|c| Box::pin(c.scroll(request.clone()))).await?;
        let next_offset = match resp.next_page_offset {
            Some(id) => Some(uuid_of(Some(&id))?),
            None => None,
        };
        Ok((resp.result, next_offset))
    }

    /// Up to `limit` memories matching `filter`, in ascending id order from
    /// `offset` (inclusive).
    async fn scroll_filtered(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        let (points, next_offset) = self
            .scroll_points(filter, limit, offset, true, false)
            .await?;
        let memories = points
            .into_iter()
            .map(|p| {
                let id = uuid_of(p.id.as_ref())?;
                Ok(self.schema.to_memory(id, json_map(p.payload)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ScrollPage {
            memories,
            next_offset,
        })
    }

    /// The payload selector of the source alone: what the term scroll and a
    /// `PayloadRead::Source` query read of each point.
    fn source_only(&self) -> q::PayloadIncludeSelector {
        q::PayloadIncludeSelector {
            fields: vec![self.schema.source.clone()],
        }
    }

    /// Up to `limit` points matching `filter` with their `sparse` vector and
    /// source only, in ascending id order from `offset` (inclusive).
    async fn scroll_terms_filtered(
        &self,
        filter: q::Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<TermPage> {
        let payload = self.source_only();
        let vectors = q::VectorsSelector {
            names: vec![SPARSE_VECTOR.to_string()],
        };
        let (points, next_offset) = self
            .scroll_points(filter, limit, offset, payload, vectors)
            .await?;
        let points = points
            .into_iter()
            .map(|p| {
                let id = uuid_of(p.id.as_ref())?;
                Ok(TermPoint {
                    id,
                    source: self.schema.to_memory(id, json_map(p.payload)).source,
                    tf: p.vectors.and_then(sparse_output),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(TermPage {
            points,
            next_offset,
        })
    }

    /// The points with these ids, without vectors; with payload if asked.
    async fn retrieve(&self, ids: &[Uuid], with_payload: bool) -> Result<Vec<q::RetrievedPoint>> {
        let point_ids: Vec<q::PointId> = ids.iter().copied().map(point_id).collect();
        let request: q::GetPoints = GetPointsBuilder::new(self.collection.as_str(), point_ids)
            .with_payload(with_payload)
            .with_vectors(false)
            .into();
        let request = q::GetPoints {
            read_consistency: self.read_consistency,
            ..request
        };
        let resp = self
            .call(|c| Box::pin(c.get_points(request.clone())))
            .await?;
        Ok(resp.result)
    }

    /// Which of `ids` are points of the collection.
    async fn existing(&self, ids: &[Uuid]) -> Result<HashSet<Uuid>> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let found = self.retrieve(ids, false).await?;
        found.iter().map(|p| uuid_of(p.id.as_ref())).collect()
    }

    /// Replaces the `sparse` vector of the points of `batch` that exist.
    ///
    /// The server refuses an update naming a missing point, so the batch is
    /// narrowed to the existing points first; should the update still fail
    /// because points were deleted meanwhile, it is narrowed again and
    /// retried (each retry has fewer points, so this ends).
    async fn set_sparse_batch(&self, mut batch: Vec<(Uuid, SparseVector)>) -> Result<()> {
        let ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
        let found = self.existing(&ids).await?;
        batch.retain(|(id, _)| found.contains(id));
        loop {
            if batch.is_empty() {
                return Ok(());
            }
            let points: Vec<q::PointVectors> = batch
                .iter()
                .map(|(id, vector)| sparse_point_vectors(*id, vector))
                .collect();
            let request: q::UpdatePointVectors =
                UpdatePointVectorsBuilder::new(self.collection.as_str(), points)
                    .wait(true)
                    .into();
            let Err(err) = self
                .call(|c| Box::pin(c.update_vectors(request.clone())))
                .await
            else {
                return Ok(());
            };
            let ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
            let found = self.existing(&ids).await?;
            if found.len() == batch.len() {
                return Err(err);
            }
            batch.retain(|(id, _)| found.contains(id));
        }
    }

    /// Runs a query and turns its points into hits.
    async fn run_query(
        &self,
        request: QueryPointsBuilder,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let request = q::QueryPoints {
            read_consistency: self.read_consistency,
            ..request.into()
        };
        let resp = self.call(|c| Box::pin(c.query(request.clone()))).await?;
        resp.result
            .into_iter()
            .map(|p| scored_hit(p, payload, &self.schema))
            .collect()
    }

    /// A query request on this collection: filter, limit, payload.
    fn query_request(
        &self,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<QueryPointsBuilder> {
        let request = QueryPointsBuilder::new(self.collection.as_str())
            .filter(qdrant_filter(filter, &self.schema)?)
            .limit(limit as u64);
        Ok(match payload {
            PayloadRead::Nothing => request.with_payload(false),
            PayloadRead::Source => request.with_payload(self.source_only()),
            PayloadRead::Memory => request.with_payload(true),
        })
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
        let info = match self.raw_info().await? {
            Some(info) => info,
            None => {
                let created = self.create_collection(spec).await;
                // Should creating fail because another process created it
                // meanwhile, theirs is checked like any existing collection.
                match (self.raw_info().await?, created) {
                    (Some(info), _) => info,
                    (None, Err(e)) => return Err(e),
                    (None, Ok(())) => return Err(self.no_collection()),
                }
            }
        };
        check_embedder(&self.collection, &info, &spec.embedder)?;
        for (field, index) in self.schema.indexes() {
            if !info.payload_schema.contains_key(field) {
                self.create_index(field, index, Fold::default()).await?;
            }
        }
        self.dense_dim.store(spec.embedder.dim, Ordering::Relaxed);
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
            let folds = text_index_of(&info, &self.schema).is_some_and(|t| t.ascii_folding);
            if folds == fold.ascii_folding() {
                return Ok(false);
            }
        }
        self.create_index(text, FieldIndex::Text, fold).await?;
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
        let total = points.len();
        let mut structs = points
            .into_iter()
            .map(|point| point_struct(point, &self.schema));
        let mut written = 0;
        loop {
            let batch: Vec<q::PointStruct> = structs.by_ref().take(UPSERT_BATCH).collect();
            if batch.is_empty() {
                return Ok(());
            }
            let len = batch.len();
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
            .await
            .map(|_| ())
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
    ) -> Result<TermPage> {
        self.scroll_terms_filtered(qdrant_filter(filter, &self.schema)?, limit, offset)
            .await
    }

    async fn query_dense(
        &self,
        vector: Vec<f32>,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        let want = self.dense_dim().await?;
        if vector.len() != want {
            return Err(StoreError::DimensionMismatch {
                collection: self.collection.clone(),
                got: vector.len(),
                want,
            });
        }
        let request = self
            .query_request(filter, limit, payload)?
            .query(q::Query::new_nearest(q::VectorInput::new_dense(vector)))
            .using(DENSE_VECTOR);
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.run_query(request, payload).await
    }

    async fn query_text(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        if query.trim().is_empty() {
            return Err(StoreError::invalid("text query", "it is empty"));
        }
        let request = self.query_request(filter, limit, payload)?;
        if let Some(why) = self.engine.lacks_text_scoring() {
            return Err(StoreError::Unsupported(why));
        }
        let request = request
            .query(q::Query::new_text(query))
            .using(self.schema.text.as_str())
            .params(tenant_idf(&self.schema, &filter.tenant));
        if limit == 0 {
            return Ok(Vec::new());
        }
        match self.run_query(request, payload).await {
            Ok(hits) => Ok(hits),
            Err(err @ (StoreError::Invalid { .. } | StoreError::Backend(_))) => {
                // A refused BM25 query most likely means no scored text index: say so.
                match self.raw_info().await {
                    Ok(Some(info))
                        if !text_index_of(&info, &self.schema).is_some_and(|t| t.scoring) =>
                    {
                        Err(StoreError::NoTextIndex(self.collection.clone()))
                    }
                    _ => Err(err),
                }
            }
            Err(err) => Err(err),
        }
    }

    async fn query_sparse(
        &self,
        vector: SparseVector,
        filter: &Filter,
        limit: usize,
        payload: PayloadRead,
    ) -> Result<Vec<Hit>> {
        check_sparse(&vector)?;
        let empty = vector.indices.is_empty();
        let request = self
            .query_request(filter, limit, payload)?
            .query(q::Query::new_nearest(q::VectorInput::new_sparse(
                vector.indices,
                vector.values,
            )))
            .using(SPARSE_VECTOR)
            .params(tenant_idf(&self.schema, &filter.tenant));
        if limit == 0 || empty {
            return Ok(Vec::new());
        }
        self.run_query(request, payload).await
    }

    async fn query_native_hybrid(
        &self,
        dense: Vec<f32>,
        lexical: NativeLexical,
        filter: &Filter,
        prefetch: usize,
        rrf_k: usize,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        let want = self.dense_dim().await?;
        if dense.len() != want {
            return Err(StoreError::DimensionMismatch {
                collection: self.collection.clone(),
                got: dense.len(),
                want,
            });
        }
        let conditions = qdrant_filter(filter, &self.schema)?;
        let lexical = match lexical {
            NativeLexical::Bm25(text) => {
                if text.trim().is_empty() {
                    return Err(StoreError::invalid("text query", "it is empty"));
                }
                if let Some(why) = self.engine.lacks_text_scoring() {
                    return Err(StoreError::Unsupported(why));
                }
                PrefetchQueryBuilder::default()
                    .query(q::Query::new_text(text))
                    .using(self.schema.text.as_str())
            }
            NativeLexical::Sparse(vector) => {
                check_sparse(&vector)?;
                PrefetchQueryBuilder::default()
                    .query(q::Query::new_nearest(q::VectorInput::new_sparse(
                        vector.indices,
                        vector.values,
                    )))
                    .using(SPARSE_VECTOR)
            }
        };
        let lexical = lexical
            .filter(conditions.clone())
            .params(tenant_idf(&self.schema, &filter.tenant))
            .limit(prefetch as u64);
        let dense = PrefetchQueryBuilder::default()
            .query(q::Query::new_nearest(q::VectorInput::new_dense(dense)))
            .using(DENSE_VECTOR)
            .filter(conditions)
            .limit(prefetch as u64);
        let rrf_k = u32::try_from(rrf_k)
            .map_err(|_| StoreError::invalid("rrf k", "it is above 4,294,967,295"))?;
        let request = self
            .query_request(filter, limit, PayloadRead::Nothing)?
            .prefetch(vec![dense.build(), lexical.build()])
            .query(q::Query::new_rrf(RrfBuilder::with_k(rrf_k)));
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.run_query(request, PayloadRead::Nothing).await
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

// ---------------------------------------------------------------------------
// Errors

/// gRPC status codes (tonic's `Code` as i32; tonic is not a direct dependency).
mod code {
    pub const INVALID_ARGUMENT: i32 = 3;
    pub const DEADLINE_EXCEEDED: i32 = 4;
    pub const NOT_FOUND: i32 = 5;
    pub const PERMISSION_DENIED: i32 = 7;
    pub const INTERNAL: i32 = 13;
    pub const UNAVAILABLE: i32 = 14;
    pub const UNAUTHENTICATED: i32 = 16;
}

/// The store error of a failed client call.
/// The request that creates a trine collection: the named dense and sparse
/// (IDF) vectors, the embedder in the metadata, the cluster layout.
fn create_request(
    collection: &str,
    spec: &CollectionSpec,
    layout: Layout,
) -> CreateCollectionBuilder {
    let mut vectors = VectorsConfigBuilder::default();
    vectors.add_named_vector_params(
        DENSE_VECTOR,
        VectorParamsBuilder::new(spec.embedder.dim as u64, q::Distance::Cosine),
    );
    let mut sparse = SparseVectorsConfigBuilder::default();
    sparse.add_named_vector_params(
        SPARSE_VECTOR,
        SparseVectorParamsBuilder::default().modifier(q::Modifier::Idf),
    );
    let mut request = CreateCollectionBuilder::new(collection)
        .vectors_config(vectors)
        .sparse_vectors_config(sparse)
        .metadata(embedder_metadata(&spec.embedder));
    if let Some(shards) = layout.shards {
        request = request.shard_number(shards);
    }
    if let Some(factor) = layout.replication_factor {
        request = request.replication_factor(factor);
    }
    if let Some(factor) = layout.write_consistency_factor {
        request = request.write_consistency_factor(factor);
    }
    request
}

fn client_error(e: QdrantError, url: &str, collection: &str) -> StoreError {
    match e {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => {
            status_error(i32::from(status.code()), status.message(), url, collection)
        }
        QdrantError::InvalidUri(e) => StoreError::invalid("qdrant url", format!("`{url}`: {e}")),
        other => StoreError::Backend(other.to_string()),
    }
}

/// The store error of a gRPC status from the server (or the client's channel).
fn status_error(code: i32, message: &str, url: &str, collection: &str) -> StoreError {
    let unreachable = |why: String| StoreError::Unreachable {
        url: url.to_string(),
        why,
    };
    match code {
        code::NOT_FOUND if message.to_lowercase().contains("collection") => {
            StoreError::NoCollection(collection.to_string())
        }
        code::UNAVAILABLE | code::DEADLINE_EXCEEDED => unreachable(message.to_string()),
        // The client's channel reports a failed connect as `Internal`.
        code::INTERNAL if message.starts_with("Failed to connect") => {
            unreachable(message.to_string())
        }
        code::UNAUTHENTICATED | code::PERMISSION_DENIED => unreachable(format!(
            "{message}: set {API_KEY_ENV} to a key the server accepts"
        )),
        code::INVALID_ARGUMENT => StoreError::invalid("request", message.to_string()),
        _ => StoreError::Backend(format!("{message} (grpc code {code})")),
    }
}

/// A short reason for a client error, for [`StoreError::Unreachable`].
fn why(e: &QdrantError) -> String {
    match e {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => status.message().to_string(),
        other => other.to_string(),
    }
}

fn no_dense_vector(collection: &str) -> StoreError {
    StoreError::invalid(
        "collection",
        format!(
            "`{collection}` has no `{DENSE_VECTOR}` vector: it was not created by trine; \
             use another `--collection`"
        ),
    )
}

// ---------------------------------------------------------------------------
// Filters

/// The Qdrant filter of a read. The tenant is always a `must`; an empty
/// `any_terms` gate and blank terms or phrases are refused.
fn qdrant_filter(f: &Filter, layout: &PayloadSchema) -> Result<q::Filter> {
    let mut must = vec![keyword(&layout.tenant, &f.tenant)];
    if !f.projects.is_empty() {
        must.push(any_keyword(&layout.project, &f.projects));
    }
    if !f.kinds.is_empty() {
        must.push(any_keyword(&layout.kind, &f.kinds));
    }
    if let Some(prefix) = &f.source_prefix {
        must.push(q::Condition::matches_prefix(
            layout.source.as_str(),
            prefix.clone(),
        ));
    }
    let format = layout.time_format;
    if f.created_from.is_some() || f.created_until.is_some() {
        let range = TimeBounds {
            gte: f.created_from,
            lt: f.created_until,
            ..TimeBounds::default()
        };
        must.push(time_range(&layout.created_at, range, format));
    }
    if let Some(at) = f.valid_at {
        // (valid_from absent OR valid_from <= T) AND (valid_until absent OR valid_until > T)
        let (from, until) = TimeBounds::validity_at(at);
        must.push(open_or(&layout.valid_from, from, format));
        must.push(open_or(&layout.valid_until, until, format));
    }
    for term in &f.all_terms {
        must.push(q::Condition::matches_text(
            layout.text.as_str(),
            non_blank("all_terms term", term)?,
        ));
    }
    if let Some(any) = &f.any_terms {
        if any.is_empty() {
            return Err(StoreError::invalid(
                "filter",
                "any_terms is empty: an empty lexical gate would match nothing; \
                 leave it unset for no term condition",
            ));
        }
        let gate = any
            .iter()
            .map(|t| {
                Ok(q::Condition::matches_text(
                    layout.text.as_str(),
                    non_blank("any_terms term", t)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        must.push(q::Filter::should(gate).into());
    }
    if let Some(phrase) = &f.phrase {
        must.push(q::Condition::matches_phrase(
            layout.text.as_str(),
            non_blank("phrase", phrase)?,
        ));
    }
    Ok(q::Filter::must(must))
}

/// The search params restricting IDF statistics to the tenant's points.
fn tenant_idf(layout: &PayloadSchema, tenant: &str) -> SearchParamsBuilder {
    let corpus = q::Filter::must([keyword(&layout.tenant, tenant)]);
    SearchParamsBuilder::default().idf(IdfParamsBuilder::new().corpus(corpus))
}

fn keyword(key: &str, value: &str) -> q::Condition {
    q::Condition::matches(key, q::r#match::MatchValue::Keyword(value.to_string()))
}

fn any_keyword(key: &str, values: &[String]) -> q::Condition {
    let strings = q::RepeatedStrings {
        strings: values.to_vec(),
    };
    q::Condition::matches(key, q::r#match::MatchValue::Keywords(strings))
}

/// A range over times as the collection writes them: a datetime range on
/// RFC 3339 strings, a numeric range on Unix numbers.
fn time_range(key: &str, b: TimeBounds, format: TimeFormat) -> q::Condition {
    match format {
        TimeFormat::Rfc3339 => q::Condition::datetime_range(
            key,
            q::DatetimeRange {
                gte: b.gte.map(timestamp),
                gt: b.gt.map(timestamp),
                lt: b.lt.map(timestamp),
                lte: b.lte.map(timestamp),
            },
        ),
        TimeFormat::UnixSeconds | TimeFormat::UnixMillis => {
            let n = |t: Option<DateTime<Utc>>| t.map(|t| format.number(t));
            q::Condition::range(
                key,
                q::Range {
                    gte: n(b.gte),
                    gt: n(b.gt),
                    lt: n(b.lt),
                    lte: n(b.lte),
                },
            )
        }
    }
}

/// `key` is absent, or within `range`.
fn open_or(key: &str, range: TimeBounds, format: TimeFormat) -> q::Condition {
    q::Filter::should([q::Condition::is_empty(key), time_range(key, range, format)]).into()
}

fn non_blank(what: &'static str, s: &str) -> Result<String> {
    if s.trim().is_empty() {
        Err(StoreError::invalid(what, "it is blank: drop it"))
    } else {
        Ok(s.to_string())
    }
}

fn timestamp(t: DateTime<Utc>) -> q::Timestamp {
    q::Timestamp {
        seconds: t.timestamp(),
        nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(999_999_999),
    }
}

// ---------------------------------------------------------------------------
// Points and payload

fn point_id(id: Uuid) -> q::PointId {
    q::PointId::from(id.to_string())
}

/// The `sparse` vector of a point read back, if it has one (in either of the
/// forms a server sends: the `vector` oneof, or the older `data` and
/// `indices`).
#[allow(deprecated)]
fn sparse_output(vectors: q::VectorsOutput) -> Option<SparseVector> {
    let Some(q::vectors_output::VectorsOptions::Vectors(named)) = vectors.vectors_options else {
        return None;
    };
    let output = named.vectors.get(SPARSE_VECTOR)?;
    match &output.vector {
        Some(q::vector_output::Vector::Sparse(s)) => Some(SparseVector {
            indices: s.indices.clone(),
            values: s.values.clone(),
        }),
        Some(_) => None,
        None => output.indices.as_ref().map(|i| SparseVector {
            indices: i.data.clone(),
            values: output.data.clone(),
        }),
    }
}

fn uuid_of(id: Option<&q::PointId>) -> Result<Uuid> {
    match id.and_then(|id| id.point_id_options.as_ref()) {
        Some(q::point_id::PointIdOptions::Uuid(s)) => Uuid::parse_str(s)
            .map_err(|e| StoreError::Backend(format!("point id `{s}` is not a uuid: {e}"))),
        Some(q::point_id::PointIdOptions::Num(n)) => Err(StoreError::Backend(format!(
            "point id {n} is a number: trine collections use uuid ids"
        ))),
        None => Err(StoreError::Backend(
            "a point came back without id".to_string(),
        )),
    }
}

/// Refuses a point whose vectors do not fit the collection.
fn check_point(collection: &str, point: &Point, want: usize) -> Result<()> {
    if point.dense.len() != want {
        return Err(StoreError::DimensionMismatch {
            collection: collection.to_string(),
            got: point.dense.len(),
            want,
        });
    }
    match &point.sparse {
        Some(sparse) => check_sparse(sparse),
        None => Ok(()),
    }
}

fn check_sparse(v: &SparseVector) -> Result<()> {
    if v.indices.len() != v.values.len() {
        return Err(StoreError::invalid(
            "sparse vector",
            format!(
                "{} indices but {} values: give one value per index",
                v.indices.len(),
                v.values.len()
            ),
        ));
    }
    Ok(())
}

/// The update of a point's `sparse` vector alone.
fn sparse_point_vectors(id: Uuid, vector: &SparseVector) -> q::PointVectors {
    let vectors = q::NamedVectors::default().add_vector(
        SPARSE_VECTOR,
        q::Vector::new_sparse(vector.indices.clone(), vector.values.clone()),
    );
    q::PointVectors {
        id: Some(point_id(id)),
        vectors: Some(vectors.into()),
    }
}

/// The points, of every tenant, with no `sparse` vector. A point written
/// with an empty sparse vector has one (Qdrant stores it; no query finds it),
/// so it is not matched.
fn no_sparse() -> q::Filter {
    q::Filter::must_not([q::Condition::has_vector(SPARSE_VECTOR)])
}

fn point_struct(point: Point, layout: &PayloadSchema) -> q::PointStruct {
    let id = point_id(point.memory.id);
    let mut vectors =
        q::NamedVectors::default().add_vector(DENSE_VECTOR, q::Vector::new_dense(point.dense));
    if let Some(s) = point.sparse {
        vectors = vectors.add_vector(SPARSE_VECTOR, q::Vector::new_sparse(s.indices, s.values));
    }
    q::PointStruct::new(id, vectors, Payload::from(layout.to_payload(&point.memory)))
}

/// The payload of a memory: `model::keys`, datetimes as RFC 3339 UTC strings,
/// metadata as a JSON object, absent options omitted.
fn json_map(payload: HashMap<String, q::Value>) -> Map<String, Json> {
    payload
        .into_iter()
        .map(|(k, v)| (k, v.into_json()))
        .collect()
}

fn scored_hit(p: q::ScoredPoint, payload: PayloadRead, layout: &PayloadSchema) -> Result<Hit> {
    let id = uuid_of(p.id.as_ref())?;
    let memory =
        (payload != PayloadRead::Nothing).then(|| layout.to_memory(id, json_map(p.payload)));
    Ok(Hit {
        id,
        score: p.score,
        source: memory.as_ref().and_then(|m| m.source.clone()),
        memory: memory.filter(|_| payload == PayloadRead::Memory),
    })
}

// ---------------------------------------------------------------------------
// Collection: indexes, embedder, info

/// The field type and index params of an index. Text and time indexes
/// build no extra HNSW links (DESIGN.md §8: that halves optimize time); times
/// are datetimes, or floats when the collection writes Unix numbers.
fn index_params(
    index: FieldIndex,
    format: TimeFormat,
    fold: Fold,
) -> (q::FieldType, q::payload_index_params::IndexParams) {
    match index {
        FieldIndex::Text => (
            q::FieldType::Text,
            TextIndexParamsBuilder::new(q::TokenizerType::Word)
                .lowercase(true)
                .ascii_folding(fold.ascii_folding())
                .phrase_matching(true)
                .bm25_scoring()
                .enable_hnsw(false)
                .build()
                .into(),
        ),
        FieldIndex::Tenant => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default()
                .is_tenant(true)
                .build()
                .into(),
        ),
        FieldIndex::Keyword => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default().build().into(),
        ),
        FieldIndex::KeywordPrefix => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default()
                .prefix(true)
                .build()
                .into(),
        ),
        FieldIndex::Time if format == TimeFormat::Rfc3339 => (
            q::FieldType::Datetime,
            DatetimeIndexParamsBuilder::default()
                .enable_hnsw(false)
                .build()
                .into(),
        ),
        FieldIndex::Time => (
            q::FieldType::Float,
            FloatIndexParamsBuilder::default()
                .enable_hnsw(false)
                .build()
                .into(),
        ),
    }
}

/// The collection metadata recording the embedder.
fn embedder_metadata(e: &EmbedderId) -> HashMap<String, Json> {
    HashMap::from([
        (META_EMBEDDER.to_string(), Json::from(e.name.clone())),
        (META_DIM.to_string(), Json::from(e.dim)),
    ])
}

/// The embedder recorded in collection metadata, if any.
fn embedder_of(metadata: &HashMap<String, q::Value>) -> Option<EmbedderId> {
    let name = metadata.get(META_EMBEDDER)?.clone().into_json();
    let dim = metadata.get(META_DIM)?.clone().into_json();
    Some(EmbedderId {
        name: name.as_str()?.to_string(),
        dim: usize::try_from(dim.as_u64()?).ok()?,
    })
}

/// Refuses an existing collection written by another embedder (or, when no
/// embedder is recorded, with a `dense` vector of another dimension).
fn check_embedder(collection: &str, info: &q::CollectionInfo, wanted: &EmbedderId) -> Result<()> {
    let recorded = info.config.as_ref().and_then(|c| embedder_of(&c.metadata));
    match recorded {
        Some(found) if found != *wanted => Err(StoreError::EmbedderMismatch {
            collection: collection.to_string(),
            found: found.name,
            found_dim: found.dim,
            wanted: wanted.name.clone(),
            wanted_dim: wanted.dim,
        }),
        Some(_) => Ok(()),
        None => match dense_dim_of(info) {
            Some(dim) if dim == wanted.dim => Ok(()),
            Some(dim) => Err(StoreError::DimensionMismatch {
                collection: collection.to_string(),
                got: wanted.dim,
                want: dim,
            }),
            None => Err(no_dense_vector(collection)),
        },
    }
}

fn params_of(info: &q::CollectionInfo) -> Option<&q::CollectionParams> {
    info.config.as_ref()?.params.as_ref()
}

fn dense_dim_of(info: &q::CollectionInfo) -> Option<usize> {
    match params_of(info)?.vectors_config.as_ref()?.config.as_ref()? {
        q::vectors_config::Config::ParamsMap(m) => {
            usize::try_from(m.map.get(DENSE_VECTOR)?.size).ok()
        }
        q::vectors_config::Config::Params(_) => None,
    }
}

fn sparse_idf_of(info: &q::CollectionInfo) -> bool {
    params_of(info)
        .and_then(|p| p.sparse_vectors_config.as_ref())
        .and_then(|c| c.map.get(SPARSE_VECTOR))
        .is_some_and(|s| s.modifier == Some(q::Modifier::Idf as i32))
}

/// The full-text index on the text field, if there is one.
fn text_index_of(info: &q::CollectionInfo, layout: &PayloadSchema) -> Option<TextIndexInfo> {
    let schema = info.payload_schema.get(&layout.text)?;
    if schema.data_type != q::PayloadSchemaType::Text as i32 {
        return None;
    }
    let params = match schema.params.as_ref()?.index_params.as_ref()? {
        q::payload_index_params::IndexParams::TextIndexParams(p) => p,
        _ => return None,
    };
    Some(TextIndexInfo {
        tokenizer: tokenizer_name(params.tokenizer).to_string(),
        lowercase: params.lowercase.unwrap_or(true),
        phrase_matching: params.phrase_matching.unwrap_or(false),
        ascii_folding: params.ascii_folding.unwrap_or(false),
        scoring: params.scoring.is_some(),
    })
}

fn tokenizer_name(tokenizer: i32) -> &'static str {
    match q::TokenizerType::try_from(tokenizer) {
        Ok(q::TokenizerType::Word) => "word",
        Ok(q::TokenizerType::Whitespace) => "whitespace",
        Ok(q::TokenizerType::Prefix) => "prefix",
        Ok(q::TokenizerType::Multilingual) => "multilingual",
        Ok(q::TokenizerType::Code) => "code",
        Ok(q::TokenizerType::Unknown) | Err(_) => "unknown",
    }
}

fn schema_kind(data_type: i32) -> &'static str {
    match q::PayloadSchemaType::try_from(data_type) {
        Ok(q::PayloadSchemaType::Keyword) => "keyword",
        Ok(q::PayloadSchemaType::Integer) => "integer",
        Ok(q::PayloadSchemaType::Float) => "float",
        Ok(q::PayloadSchemaType::Geo) => "geo",
        Ok(q::PayloadSchemaType::Text) => "text",
        Ok(q::PayloadSchemaType::Bool) => "bool",
        Ok(q::PayloadSchemaType::Datetime) => "datetime",
        Ok(q::PayloadSchemaType::Uuid) => "uuid",
        Ok(q::PayloadSchemaType::UnknownType) | Err(_) => "unknown",
    }
}

/// What `trine doctor` reports of a server collection holding `points` points.
fn describe(
    engine: trine_core::model::Engine,
    name: &str,
    info: &q::CollectionInfo,
    points: u64,
    layout: &PayloadSchema,
) -> CollectionInfo {
    let mut payload_indexes: Vec<PayloadIndex> = info
        .payload_schema
        .iter()
        .map(|(field, schema)| PayloadIndex {
            field: field.clone(),
            kind: schema_kind(schema.data_type).to_string(),
        })
        .collect();
    payload_indexes.sort_by(|a, b| a.field.cmp(&b.field));
    CollectionInfo {
        name: name.to_string(),
        backend: BACKEND.to_string(),
        embedder: info.config.as_ref().and_then(|c| embedder_of(&c.metadata)),
        dense_dim: dense_dim_of(info),
        sparse_idf: sparse_idf_of(info),
        points,
        segments: usize::try_from(info.segments_count).unwrap_or(usize::MAX),
        payload_indexes,
        text_index: text_index_of(info, layout),
        engine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::keys;
    use crate::payload::PayloadSchema;
    use chrono::TimeZone;
    use serde_json::json;
    use trine_core::model::Engine;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(|e| panic!("bad test time {s}: {e}"))
    }

    fn tenant_cond() -> q::Condition {
        keyword(keys::TENANT, "acme")
    }

    #[test]
    fn filter_translation() {
        let at = t("2026-11-11T09:58:00Z");
        let ts = timestamp(at);
        let cases: Vec<(&str, Filter, Vec<q::Condition>)> = vec![
            ("tenant only", Filter::tenant("acme"), vec![tenant_cond()]),
            (
                "tenant with spaces stays a keyword",
                Filter::tenant("a b"),
                vec![q::Condition::matches(
                    keys::TENANT,
                    q::r#match::MatchValue::Keyword("a b".into()),
                )],
            ),
            (
                "projects and kinds match any",
                Filter {
                    projects: vec!["p1".into(), "p2".into()],
                    kinds: vec!["note".into()],
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches(keys::PROJECT, vec!["p1".to_string(), "p2".to_string()]),
                    q::Condition::matches(keys::KIND, vec!["note".to_string()]),
                ],
            ),
            (
                "source prefix",
                Filter {
                    source_prefix: Some("git:".into()),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_prefix(keys::SOURCE, "git:"),
                ],
            ),
            (
                "created range is [from, until)",
                Filter {
                    created_from: Some(at),
                    created_until: Some(at),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::datetime_range(
                        keys::CREATED_AT,
                        q::DatetimeRange {
                            gte: Some(ts),
                            lt: Some(ts),
                            ..Default::default()
                        },
                    ),
                ],
            ),
            (
                "valid at T, either side open",
                Filter {
                    valid_at: Some(at),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Filter::should([
                        q::Condition::is_empty(keys::VALID_FROM),
                        q::Condition::datetime_range(
                            keys::VALID_FROM,
                            q::DatetimeRange {
                                lte: Some(ts),
                                ..Default::default()
                            },
                        ),
                    ])
                    .into(),
                    q::Filter::should([
                        q::Condition::is_empty(keys::VALID_UNTIL),
                        q::Condition::datetime_range(
                            keys::VALID_UNTIL,
                            q::DatetimeRange {
                                gt: Some(ts),
                                ..Default::default()
                            },
                        ),
                    ])
                    .into(),
                ],
            ),
            (
                "all terms: one text condition each",
                Filter {
                    all_terms: vec!["meeting".into(), "2026".into()],
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_text(keys::TEXT, "meeting"),
                    q::Condition::matches_text(keys::TEXT, "2026"),
                ],
            ),
            (
                "any terms: a nested should gate",
                Filter {
                    any_terms: Some(vec!["a1".into(), "b2".into()]),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Filter::should([
                        q::Condition::matches_text(keys::TEXT, "a1"),
                        q::Condition::matches_text(keys::TEXT, "b2"),
                    ])
                    .into(),
                ],
            ),
            (
                "phrase",
                Filter {
                    phrase: Some("exact words".into()),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_phrase(keys::TEXT, "exact words"),
                ],
            ),
        ];
        for (name, filter, must) in cases {
            let got = qdrant_filter(&filter, &PayloadSchema::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got, q::Filter::must(must), "{name}");
        }
    }

    #[test]
    fn filter_refusals() {
        let cases: Vec<(&str, Filter)> = vec![
            (
                "empty gate",
                Filter {
                    any_terms: Some(vec![]),
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank gate term",
                Filter {
                    any_terms: Some(vec![" ".into()]),
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank all term",
                Filter {
                    all_terms: vec!["".into()],
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank phrase",
                Filter {
                    phrase: Some("  ".into()),
                    ..Filter::tenant("acme")
                },
            ),
        ];
        for (name, filter) in cases {
            match qdrant_filter(&filter, &PayloadSchema::default()) {
                Err(StoreError::Invalid { .. }) => {}
                other => panic!("{name}: expected invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn idf_corpus_is_the_tenant() {
        let params: q::SearchParams = tenant_idf(&PayloadSchema::default(), "acme").build();
        let corpus = params.idf.and_then(|i| i.corpus);
        assert_eq!(corpus, Some(q::Filter::must([tenant_cond()])));
    }

    fn full_memory() -> Memory {
        let mut metadata = Map::new();
        metadata.insert("a".into(), json!({"b": [1, 2.5, "c"], "d": null}));
        Memory {
            id: Uuid::from_u128(7),
            text: "Meeting 2026-11-11 09:58".into(),
            source: Some("git:log".into()),
            tenant: "acme".into(),
            project: Some("p".into()),
            kind: Some("note".into()),
            created_at: Some(t("2026-11-11T09:58:00Z")),
            valid_from: Some(t("2026-01-01T00:00:00.123456789Z")),
            valid_until: Some(
                Utc.timestamp_opt(1_900_000_000, 0)
                    .single()
                    .unwrap_or_default(),
            ),
            metadata: Some(metadata),
        }
    }

    #[test]
    fn payload_round_trips_through_qdrant_values() {
        let cases = [
            full_memory(),
            Memory::new(Uuid::from_u128(8), "acme", "only text"),
        ];
        for m in cases {
            let qdrant: HashMap<String, q::Value> =
                Payload::from(PayloadSchema::default().to_payload(&m)).into();
            assert_eq!(
                PayloadSchema::default().to_memory(m.id, json_map(qdrant)),
                m
            );
        }
    }

    #[test]
    fn payload_layout() {
        let p = PayloadSchema::default().to_payload(&full_memory());
        assert_eq!(p[keys::CREATED_AT], json!("2026-11-11T09:58:00Z"));
        assert_eq!(p[keys::VALID_FROM], json!("2026-01-01T00:00:00.123456789Z"));
        assert_eq!(p[keys::TENANT], json!("acme"));
        assert!(p[keys::METADATA].is_object());

        let minimal = PayloadSchema::default().to_payload(&Memory {
            metadata: None,
            source: None,
            valid_until: None,
            ..full_memory()
        });
        for key in [keys::METADATA, keys::SOURCE, keys::VALID_UNTIL] {
            assert!(!minimal.contains_key(key), "{key} should be omitted");
        }
    }

    #[test]
    fn payload_tolerates_missing_and_odd_keys() {
        let id = Uuid::from_u128(9);
        let cases: Vec<(Json, Memory)> = vec![
            (json!({}), Memory::new(id, "", "")),
            (
                json!({"text": "x", "tenant": "t", "created_at": "yesterday",
                       "metadata": [1], "project": 3, "valid_until": null, "extra": 1}),
                Memory::new(id, "t", "x"),
            ),
            (
                json!({"text": "x", "tenant": "t", "created_at": "2026-11-11T10:58:00+01:00"}),
                Memory {
                    created_at: Some(t("2026-11-11T09:58:00Z")),
                    ..Memory::new(id, "t", "x")
                },
            ),
        ];
        for (payload, want) in cases {
            let Json::Object(map) = payload else {
                panic!("test payload must be an object")
            };
            assert_eq!(PayloadSchema::default().to_memory(id, map), want);
        }
    }

    #[test]
    fn a_new_collection_takes_the_layout() {
        let spec = CollectionSpec {
            embedder: EmbedderId {
                name: "m".into(),
                dim: 4,
            },
        };
        let plain = create_request("c", &spec, Layout::default()).build();
        assert_eq!((plain.shard_number, plain.replication_factor), (None, None));
        let layout = Layout {
            shards: Some(3),
            replication_factor: Some(2),
            write_consistency_factor: Some(1),
        };
        let spread = create_request("c", &spec, layout).build();
        assert_eq!(spread.shard_number, Some(3));
        assert_eq!(spread.replication_factor, Some(2));
        assert_eq!(spread.write_consistency_factor, Some(1));
        for (raw, want) in [
            ("majority", Ok(ReadConsistency::Majority)),
            ("quorum", Ok(ReadConsistency::Quorum)),
            ("all", Ok(ReadConsistency::All)),
            ("2", Ok(ReadConsistency::Factor(2))),
        ] {
            assert_eq!(ReadConsistency::parse(raw), want);
        }
        assert!(ReadConsistency::parse("0").is_err());
        assert!(ReadConsistency::parse("most").is_err());
        assert_eq!(spread.collection_name, "c");
    }

    #[tokio::test]
    async fn nodes_are_a_list_or_what_a_name_resolves_to() {
        assert_eq!(
            node_urls("http://a:6334, http://b:6334,").await.unwrap(),
            ["http://a:6334", "http://b:6334"]
        );
        assert_eq!(
            node_urls("dns://127.0.0.1:6334").await.unwrap(),
            ["http://127.0.0.1:6334"]
        );
        assert!(node_urls("dns://no-such-host.invalid:6334").await.is_err());
    }

    #[test]
    fn point_ids() {
        let id = Uuid::from_u128(0xdead_beef);
        assert_eq!(uuid_of(Some(&point_id(id))).ok(), Some(id));
        assert!(uuid_of(Some(&q::PointId::from(5u64))).is_err());
        assert!(uuid_of(Some(&q::PointId::from("nope"))).is_err());
        assert!(uuid_of(None).is_err());
    }

    #[test]
    fn sparse_back_fill_requests() {
        let id = Uuid::from_u128(3);
        let v = SparseVector {
            indices: vec![4, 1],
            values: vec![0.5, 2.0],
        };
        let update = sparse_point_vectors(id, &v);
        assert_eq!(update.id, Some(point_id(id)));
        let Some(q::vectors::VectorsOptions::Vectors(named)) =
            update.vectors.and_then(|v| v.vectors_options)
        else {
            panic!("named vectors expected")
        };
        let names: Vec<&str> = named.vectors.keys().map(String::as_str).collect();
        assert_eq!(names, [SPARSE_VECTOR], "only the sparse vector is sent");
        assert_eq!(
            named.vectors.get(SPARSE_VECTOR),
            Some(&q::Vector::new_sparse(vec![4, 1], vec![0.5, 2.0]))
        );
        assert_eq!(
            no_sparse(),
            q::Filter {
                must_not: vec![q::Condition::has_vector(SPARSE_VECTOR)],
                ..Default::default()
            },
            "no tenant condition: the back-fill spans every tenant"
        );
    }

    #[test]
    fn point_vectors_are_checked() {
        let point = |dense: usize, sparse: Option<(usize, usize)>| Point {
            memory: full_memory(),
            dense: vec![0.5; dense],
            sparse: sparse.map(|(i, v)| SparseVector {
                indices: (0..i as u32).collect(),
                values: vec![1.0; v],
            }),
        };
        assert!(check_point("c", &point(4, None), 4).is_ok());
        assert!(check_point("c", &point(4, Some((2, 2))), 4).is_ok());
        assert!(matches!(
            check_point("c", &point(3, None), 4),
            Err(StoreError::DimensionMismatch {
                got: 3,
                want: 4,
                ..
            })
        ));
        assert!(matches!(
            check_point("c", &point(4, Some((2, 1))), 4),
            Err(StoreError::Invalid { .. })
        ));
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn status_codes_map_to_store_errors() {
        let cases: Vec<(i32, &str, fn(&StoreError) -> bool)> = vec![
            (
                code::NOT_FOUND,
                "Not found: Collection `c` doesn't exist!",
                |e| matches!(e, StoreError::NoCollection(c) if c == "c"),
            ),
            (
                code::UNAVAILABLE,
                "connection refused",
                |e| matches!(e, StoreError::Unreachable { url, .. } if url == "http://q:6334"),
            ),
            (code::DEADLINE_EXCEEDED, "timeout", |e| {
                matches!(e, StoreError::Unreachable { .. })
            }),
            (
                code::INTERNAL,
                "Failed to connect to http://q:6334/: refused",
                |e| matches!(e, StoreError::Unreachable { .. }),
            ),
            (
                code::UNAUTHENTICATED,
                "bad key",
                |e| matches!(e, StoreError::Unreachable { why, .. } if why.contains(API_KEY_ENV)),
            ),
            (code::INVALID_ARGUMENT, "Wrong input", |e| {
                matches!(e, StoreError::Invalid { .. })
            }),
            (code::INTERNAL, "service internal error", |e| {
                matches!(e, StoreError::Backend(_))
            }),
            (code::NOT_FOUND, "No point with id", |e| {
                matches!(e, StoreError::Backend(_))
            }),
        ];
        for (code, message, ok) in cases {
            let e = status_error(code, message, "http://q:6334", "c");
            assert!(ok(&e), "{code} {message}: {e:?}");
        }
    }

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

    #[test]
    fn index_kinds() {
        use q::payload_index_params::IndexParams as P;
        let rfc = TimeFormat::Rfc3339;
        let (ty, params) = index_params(FieldIndex::Text, rfc, Fold::Ascii);
        assert_eq!(ty, q::FieldType::Text);
        let P::TextIndexParams(p) = params else {
            panic!("text index expected")
        };
        assert_eq!(p.tokenizer, q::TokenizerType::Word as i32);
        assert_eq!((p.lowercase, p.phrase_matching), (Some(true), Some(true)));
        assert_eq!(
            p.scoring.map(|s| s.r#type),
            Some(q::TextScoringType::Bm25 as i32)
        );

        let keyword = |index| match index_params(index, rfc, Fold::Ascii) {
            (q::FieldType::Keyword, P::KeywordIndexParams(p)) => p,
            other => panic!("keyword index expected, got {other:?}"),
        };
        assert_eq!(keyword(FieldIndex::Tenant).is_tenant, Some(true));
        assert!(keyword(FieldIndex::KeywordPrefix).prefix.is_some());
        assert!(keyword(FieldIndex::Keyword).prefix.is_none());
        assert!(matches!(
            index_params(FieldIndex::Time, rfc, Fold::Ascii),
            (q::FieldType::Datetime, P::DatetimeIndexParams(_))
        ));
        assert!(matches!(
            index_params(FieldIndex::Time, TimeFormat::UnixMillis, Fold::Ascii),
            (q::FieldType::Float, P::FloatIndexParams(_))
        ));
    }

    fn server_info(
        metadata: HashMap<String, Json>,
        dense: u64,
        text_scoring: bool,
    ) -> q::CollectionInfo {
        let vectors = q::VectorsConfig {
            config: Some(q::vectors_config::Config::ParamsMap(q::VectorParamsMap {
                map: HashMap::from([(
                    DENSE_VECTOR.to_string(),
                    VectorParamsBuilder::new(dense, q::Distance::Cosine).build(),
                )]),
            })),
        };
        let sparse = q::SparseVectorConfig {
            map: HashMap::from([(
                SPARSE_VECTOR.to_string(),
                SparseVectorParamsBuilder::default()
                    .modifier(q::Modifier::Idf)
                    .build(),
            )]),
        };
        let mut text = TextIndexParamsBuilder::new(q::TokenizerType::Word)
            .lowercase(true)
            .phrase_matching(true);
        if text_scoring {
            text = text.bm25_scoring();
        }
        let schema = |ty: q::PayloadSchemaType, params: q::payload_index_params::IndexParams| {
            q::PayloadSchemaInfo {
                data_type: ty as i32,
                params: Some(q::PayloadIndexParams {
                    index_params: Some(params),
                }),
                points: None,
            }
        };
        q::CollectionInfo {
            status: q::CollectionStatus::Green as i32,
            segments_count: 3,
            config: Some(q::CollectionConfig {
                params: Some(q::CollectionParams {
                    vectors_config: Some(vectors),
                    sparse_vectors_config: Some(sparse),
                    ..Default::default()
                }),
                metadata: metadata.into_iter().map(|(k, v)| (k, v.into())).collect(),
                ..Default::default()
            }),
            payload_schema: HashMap::from([
                (
                    keys::TEXT.to_string(),
                    schema(q::PayloadSchemaType::Text, text.build().into()),
                ),
                (
                    keys::TENANT.to_string(),
                    schema(
                        q::PayloadSchemaType::Keyword,
                        index_params(FieldIndex::Tenant, TimeFormat::Rfc3339, Fold::Ascii).1,
                    ),
                ),
            ]),
            ..Default::default()
        }
    }

    fn embedder(name: &str, dim: usize) -> EmbedderId {
        EmbedderId {
            name: name.into(),
            dim,
        }
    }

    #[test]
    fn describes_a_collection() {
        let minilm = embedder("minilm", 384);
        let info = server_info(embedder_metadata(&minilm), 384, true);
        let got = describe(
            Engine::qdrant("1.20.0"),
            "mem",
            &info,
            42,
            &PayloadSchema::default(),
        );
        assert_eq!(got.name, "mem");
        assert_eq!(got.backend, "server");
        assert_eq!(got.embedder, Some(minilm));
        assert_eq!(got.dense_dim, Some(384));
        assert!(got.sparse_idf);
        assert_eq!((got.points, got.segments), (42, 3));
        let indexes: Vec<(&str, &str)> = got
            .payload_indexes
            .iter()
            .map(|i| (i.field.as_str(), i.kind.as_str()))
            .collect();
        assert_eq!(indexes, [("tenant", "keyword"), ("text", "text")]);
        assert_eq!(
            got.text_index,
            Some(TextIndexInfo {
                tokenizer: "word".into(),
                lowercase: true,
                phrase_matching: true,
                ascii_folding: false,
                scoring: true,
            })
        );
        let unscored = describe(
            Engine::qdrant("1.20.0"),
            "mem",
            &server_info(HashMap::new(), 8, false),
            0,
            &PayloadSchema::default(),
        );
        assert_eq!(unscored.embedder, None);
        assert_eq!(unscored.text_index.map(|t| t.scoring), Some(false));
        assert!(got.engine.text_scoring);
    }

    #[test]
    fn embedder_checks() {
        let minilm = embedder("minilm", 384);
        let recorded = server_info(embedder_metadata(&minilm), 384, true);
        assert!(check_embedder("c", &recorded, &minilm).is_ok());
        assert!(matches!(
            check_embedder("c", &recorded, &embedder("bge", 384)),
            Err(StoreError::EmbedderMismatch { found, found_dim: 384, .. }) if found == "minilm"
        ));
        assert!(matches!(
            check_embedder("c", &recorded, &embedder("minilm", 768)),
            Err(StoreError::EmbedderMismatch { .. })
        ));
        let foreign = server_info(HashMap::new(), 384, true);
        assert!(check_embedder("c", &foreign, &minilm).is_ok());
        assert!(matches!(
            check_embedder("c", &foreign, &embedder("bge", 768)),
            Err(StoreError::DimensionMismatch {
                got: 768,
                want: 384,
                ..
            })
        ));
        assert!(check_embedder("c", &q::CollectionInfo::default(), &minilm).is_err());
    }
}

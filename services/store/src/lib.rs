//! Storage on Qdrant: one [`Store`] trait, two implementations.
//!
//! - [`EdgeStore`]: Qdrant's engine in-process (`qdrant-edge`) on a data
//!   directory, the embedded default. Its calls are synchronous and run on
//!   `spawn_blocking`, never on the async executor.
//! - [`ServerStore`]: a Qdrant server over gRPC (`qdrant-client`).
//!
//! Both pass one contract test suite (`tests/contract.rs`).
#![forbid(unsafe_code)]

pub mod backup;
mod edge;
mod error;
mod kept_reads;
mod metered;
mod model;
pub mod payload;
mod query;
mod retrying;
mod server;
mod text_match;
mod tracked;
mod wrap;

use std::sync::Arc;

use async_trait::async_trait;
use uuid::Uuid;

pub use edge::{EdgeStore, Restored};
pub use error::{Result, StoreError};
pub use kept_reads::{read_kept, scroll_kept, scroll_terms_kept};
pub use metered::{Metered, Timing};
pub use model::*;
pub use payload::{FieldIndex, PayloadSchema, TimeBounds, TimeFormat};
pub use query::{NativeLexical, Query, Ranking};
pub use retrying::{BACKOFF, Budget, Outcome, RETRIES, Retries, Retrying};
pub use server::{CHANNELS_PER_NODE, Layout, ReadConsistency, ServerStore};
pub use tracked::{Keeper, Tracked};
use wrap::store_api;
pub use wrap::{BoxFuture, Call, Run};

/// `store` as a service uses it: each call made again when the store could
/// not be reached ([`Retrying`]), and timed, retries included ([`Metered`]),
/// into the service's `metrics`.
pub fn instrumented(
    store: Arc<dyn Store>,
    metrics: &Arc<trine_telemetry::Metrics>,
) -> Arc<dyn Store> {
    let retrying: Arc<dyn Store> = Arc::new(Retrying::new(store, metrics.clone()));
    Arc::new(Metered::new(retrying, metrics.clone()))
}

/// The reads of a batch made side by side, each its own call.
pub async fn side_by_side<S: Store + ?Sized>(
    store: &S,
    reads: &[BatchRead],
) -> Result<Vec<BatchPage>> {
    futures::future::try_join_all(reads.iter().map(|read| async move {
        Ok(match read {
            BatchRead::Terms {
                filter,
                limit,
                source,
            } => BatchPage::Terms(store.scroll_terms(filter, *limit, None, *source).await?),
            BatchRead::Memories { filter, limit } => {
                BatchPage::Memories(store.scroll(filter, *limit, None).await?.memories)
            }
        })
    }))
    .await
}
pub use trine_core::postings::Nearby;
pub use trine_core::{Fold, Language};

/// Which points an administrative [`Store::scan`] reads, over every tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Every point.
    All,
    /// The points without a `sparse` vector.
    MissingSparse,
}

/// What [`Store::counted`] knows of a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The exact count, from the statistics.
    Exact(u64),
    /// The statistics are being built: count in the store, ask again later.
    Later,
    /// The statistics do not decide this filter, or none are kept.
    No,
}

impl Counted {
    pub fn exact(self) -> Option<u64> {
        match self {
            Self::Exact(n) => Some(n),
            Self::Later | Self::No => None,
        }
    }
}

/// One write as a store's change journal holds it ([`Store::changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The entry's own id.
    pub key: Uuid,
    /// When the write landed, by the writer's clock (µs since the epoch).
    pub seq: i64,
    /// The points it wrote or deleted.
    pub ids: Vec<Uuid>,
}

/// Where a store is with the statistics that make counts cheap
/// ([`Store::counted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeping {
    /// Built: a count of the tenant or of one term needs no read.
    Ready,
    /// Being built: counts go to the store meanwhile, at a read each.
    Building,
    /// None kept, none being built (not asked for, not kept by this store,
    /// or a build that failed: counts go to the store).
    Not,
}

/// How large the statistics of [`Store::counted`] are, once built: what an
/// operator's dashboard shows of them (`trine_frequencies_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeptSize {
    /// Tenants with at least one point.
    pub tenants: u64,
    /// Distinct (tenant, term) and (tenant, sparse dimension) pairs, and
    /// the (term, point) pairs of the postings where they are kept.
    pub entries: u64,
    /// Points counted in.
    pub points: u64,
}

impl KeptSize {
    /// The size of `frequencies`.
    pub fn of(frequencies: &trine_core::Frequencies) -> Self {
        Self {
            tenants: frequencies.tenants() as u64,
            entries: (frequencies.entries() + frequencies.postings()) as u64,
            points: frequencies.points(),
        }
    }
}

/// A gateway's heartbeat ([`Store::gateways`]): who, when (µs since the
/// epoch, by its clock), and the requests each rate-limited tenant made of
/// it since its last beat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Beat {
    pub id: Uuid,
    pub at: i64,
    pub demand: std::collections::BTreeMap<String, u64>,
}

/// Refuses a filter naming more than [`MAX_FILTER_IDS`] points.
fn check_ids(ids: &[Uuid]) -> Result<()> {
    if ids.len() > MAX_FILTER_IDS {
        return Err(StoreError::invalid(
            "filter",
            format!(
                "ids names {} points, more than the {MAX_FILTER_IDS} allowed",
                ids.len()
            ),
        ));
    }
    Ok(())
}

/// Refuses a filter naming more than [`MAX_FILTER_SPANS`] spans of threads,
/// a blank thread or a span that ends before it starts.
fn check_spans(spans: &[Span]) -> Result<()> {
    if spans.len() > MAX_FILTER_SPANS {
        return Err(StoreError::invalid(
            "filter",
            format!(
                "spans names {} stretches of threads, more than the {MAX_FILTER_SPANS} allowed",
                spans.len()
            ),
        ));
    }
    if let Some(bad) = spans
        .iter()
        .find(|s| s.thread.trim().is_empty() || s.from > s.to)
    {
        return Err(StoreError::invalid(
            "filter",
            format!(
                "the span {:?} {}..={} names no thread or ends before it starts",
                bad.thread, bad.from, bad.to
            ),
        ));
    }
    Ok(())
}

/// The version of the collection layout this trine writes and reads, kept
/// in each collection (Edge: `trine.json`; a server: the collection's
/// metadata, `trine_schema`): 1, unrecorded, is what trine 0.1.0 wrote; 2
/// records it, so that backups name it and `trine restore` refuses
/// another, and `trine upgrade` moves a collection from 1 to 2 in place
/// (no point rewritten). A collection of a later version is refused for
/// writes.
pub const SCHEMA: u32 = 3;

/// What changed in each version after the first, for `trine doctor`.
pub const SCHEMA_CHANGES: [(u32, &str); 2] = [
    (
        2,
        "the layout version is recorded in the collection (it was not), so that backups name it and restore refuses another; no point changes",
    ),
    (
        3,
        "memories may name their thread and their place in it: a keyword index on `thread` and an integer index on `seq`; no point changes (a memory without a thread stands alone)",
    ),
];

/// Refuses a collection recorded at a later layout version than this
/// trine's.
pub fn check_schema(collection: &str, recorded: u32) -> Result<()> {
    if recorded > SCHEMA {
        return Err(StoreError::NewerSchema {
            collection: collection.to_string(),
            found: recorded,
            known: SCHEMA,
        });
    }
    Ok(())
}

/// Points per write batch, for callers that stream many points.
pub const UPSERT_BATCH: usize = 256;

/// The largest segment Qdrant's optimizers build in a trine collection, in
/// kilobytes (Edge and server alike). Qdrant's own cap (256 MB a CPU)
/// counts every vector a segment holds, and the `tokens` space weighs 10 to
/// 75 times the dense vectors (a memory's word pieces, each a vector of the
/// dense dimension in half precision) while no graph is ever built over
/// it: under that cap 40,000 Debian texts with the static model's tokens
/// took three segments where the same memories without tokens take one,
/// and every search walked three dense graphs (embedded, concurrency 16:
/// 12.4 → 22.6 ms p50; docs/benchmarks.md, "Late interaction's cost").
/// At 16 GB a segment holds about as many points as Qdrant's cap gives a
/// collection without tokens (within a factor of two, by embedder).
pub const MAX_SEGMENT_KB: usize = 16_000_000;

store_api! {
    /// A trine collection in Qdrant. Every read takes a [`Filter`], whose tenant is
    /// always applied: no result, count or statistic crosses it.
    pub trait Store {
        /// `edge` or `server`.
        fn backend(&self) -> &'static str;

        /// The collection's name.
        fn collection(&self) -> &str;

        /// The exact number of points within `filter` where the store keeps
        /// statistics that decide it without a read (the embedded store's
        /// per-tenant document frequencies: `trine_core::Frequencies`); else
        /// [`Store::count`] it. No default: a wrapper that forgot to pass it on
        /// would count every term in the store.
        fn counted(&self, filter: &Filter) -> Counted;

        /// Starts building the statistics [`Store::counted`] reads, where the
        /// store keeps them and has not yet, instead of at the first count: what
        /// a server does before it takes searches. Returns at once.
        fn keep_counts(&self);

        /// Whether the statistics [`Store::counted`] reads are built, being
        /// built, or not kept: what a lexical service's readiness waits for.
        fn keeping(&self) -> Keeping;

        /// The size of the statistics [`Store::counted`] reads while they are
        /// built ([`Keeping::Ready`]); `None` otherwise. No default, as
        /// [`Store::counted`].
        fn kept(&self) -> Option<KeptSize>;

        /// A term read ([`Store::scroll_terms`]) answered from the postings this
        /// process keeps of the collection, where they alone decide it (the
        /// tenant and its terms: `trine_core::Frequencies::term_page`): the
        /// embedded store's, a lexical service's over a server collection
        /// ([`Tracked`]). The same page the store would read; `None`: read it.
        fn kept_terms(&self, filter: &Filter, offset: Option<Uuid>, limit: usize, source: bool) -> Option<TermPage>;

        /// Whether the kept postings show that no point within `filter` holds
        /// its phrase or source phrase: its read would be empty. False where
        /// they cannot tell.
        fn holds_no_phrase(&self, filter: &Filter) -> bool;

        /// The places of a search's best hits `tops` and every message
        /// within twice `window` of them in their threads (at most `limit`),
        /// from the postings this process keeps, where they alone decide
        /// `filter` (the tenant: `trine_core::Frequencies::around`): the
        /// embedded store's, a lexical service's over a server collection
        /// ([`Tracked`]). What the lexical channel's context reads without a
        /// call; `None`: read the store.
        fn kept_around(&self, filter: &Filter, tops: &[Uuid], window: u64, limit: usize) -> Option<Nearby>;
    }
    calls {
        /// Creates the collection when missing (dense `dense` of the embedder's
        /// dimension, cosine; sparse `sparse` with IDF; the full-text index on the
        /// text with phrase matching and BM25 scoring; keyword indexes on tenant,
        /// project, kind, source; datetime indexes on created_at, valid_from,
        /// valid_until) and records the embedder. An existing collection written by
        /// another embedder is refused with [`StoreError::EmbedderMismatch`].
        EnsureCollection:
        async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo>;

        /// What the collection is, or `None` when it does not exist.
        Info:
        async fn info(&self) -> Result<Option<CollectionInfo>>;

        /// Makes the full-text index on the text field exist with this fold:
        /// creates it when missing, rebuilds it in place when it folds otherwise
        /// (an upgrade the operator asked for: `trine text-index
        /// --ascii-folding`), else does nothing. No point changes. Returns
        /// whether it created or rebuilt the index.
        CreateTextIndex:
        async fn create_text_index(&self, fold: Fold) -> Result<bool>;

        /// Inserts or replaces points by id. Acknowledged when durable.
        Upsert:
        async fn upsert(&self, points: Vec<Point>) -> Result<()>;

        /// Deletes points by id; ids that do not exist are ignored.
        Delete:
        async fn delete(&self, ids: &[Uuid]) -> Result<()>;

        /// The memories with these ids, in the order asked; missing ids are left out.
        Get:
        async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>>;

        /// The exact number of points matching the filter.
        Count:
        async fn count(&self, filter: &Filter) -> Result<u64>;

        /// The writes journaled at or after `from` (µs since the epoch, by the
        /// writers' clocks), oldest first, at most `limit`; `None` where the
        /// store keeps no journal (the embedded store: its one process hears
        /// every write itself). A server collection journals each write trine
        /// makes once it has landed, so that a process keeping statistics over
        /// it ([`Tracked`]) hears of what every other process wrote.
        Changes:
        async fn changes(&self, from: i64, limit: usize) -> Result<Option<Vec<Change>>>;

        /// Up to `limit` points matching the filter with what BM25 needs of each —
        /// its sparse encoding — and, with `source`, its source, never its text,
        /// in ascending point-id order from `offset` (inclusive): the lexical
        /// channel's reads.
        ScrollTerms:
        async fn scroll_terms(&self, filter: &Filter, limit: usize, offset: Option<Uuid>, source: bool) -> Result<TermPage>;

        /// Each read's first page, as [`Store::scroll_terms`] and
        /// [`Store::scroll`] read it, in the order asked: the reads a search can
        /// make at once: side by side ([`side_by_side`]) unless the store does
        /// better (Edge: in one blocking task; a server asked to batch them: one
        /// call, Qdrant's batch query).
        ReadBatch:
        async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>>;

        /// Up to `limit` memories matching the filter, in ascending point-id order,
        /// starting at `offset` (inclusive).
        Scroll:
        async fn scroll(&self, filter: &Filter, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage>;

        /// The `limit` best points of the query's filter under its ranking,
        /// each with the payload the query asks ([`Query`]). Every store runs
        /// [`Query::check`] first, so that both refuse the same input alike.
        Query(query.ranking.op()):
        async fn query(&self, query: Query) -> Result<Vec<Hit>>;

        /// Replaces the `sparse` vector of existing points, leaving their dense
        /// vector and payload as they are; ids that do not exist are skipped.
        /// Acknowledged when durable.
        SetSparse:
        async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()>;

        /// Up to `limit` memories of every tenant — all of them, or those whose
        /// point has no `sparse` vector — in ascending point-id order from
        /// `offset` (inclusive). An administrative read (sparse back-fill, the
        /// re-encoding of an upgraded fold), not a search.
        Scan:
        async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage>;

        /// The exact number of points, over every tenant, with no `sparse` vector.
        CountMissingSparse:
        async fn count_missing_sparse(&self) -> Result<u64>;

        /// Builds indexes (HNSW, immutable text index) after a bulk ingest. Reads
        /// and writes keep working meanwhile.
        Optimize:
        async fn optimize(&self) -> Result<()>;

        /// Copies the collection into `dir` (made by
        /// [`backup::prepare`]: new and empty) while it serves: Edge, a
        /// consistent copy of its directory (writes wait meanwhile); a server,
        /// Qdrant's snapshot of the collection on each node. Returns what was
        /// copied, for [`backup::seal`].
        Backup:
        async fn backup(&self, dir: &std::path::Path) -> Result<backup::Manifest>;

        /// Those of `ids` that exist, whole — memory, dense and sparse vectors —
        /// in the order asked, over every tenant: an administrative read (a
        /// backup's check), not a search.
        Points:
        async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>>;

        /// Publishes this gateway's heartbeat and returns those of every
        /// gateway heard within `live`, `me`'s included, where gateways in
        /// several processes share the store (a server: a sibling collection,
        /// `<collection>__trine_gateways`); `None` where one process is all
        /// there is (the embedded store). How replicas of the gateway share a
        /// tenant's request rate.
        Gateways:
        async fn gateways(&self, me: &Beat, live: std::time::Duration) -> Result<Option<Vec<Beat>>>;

        /// Records [`SCHEMA`] in a collection of an earlier layout version
        /// (`trine upgrade`), changing nothing else; returns the version it
        /// had, or `None` where it was current. A later one is refused.
        Upgrade:
        async fn upgrade(&self) -> Result<Option<u32>>;
    }
}

//! [`EdgeStore`]: the [`Store`] on Qdrant Edge, Qdrant's engine in-process.
//!
//! A collection is a directory under the data directory:
//! - `<data_dir>/<collection>/shard/`: the Edge shard;
//! - `<data_dir>/<collection>/trine.json`: the embedder that wrote it;
//! - `<data_dir>/<collection>/tenants.json`: whether none, one or many
//!   tenants were ever written into it ([`tenants`]);
//! - `<data_dir>/<collection>/lock`: held exclusively while a store is open.
//!
//! Every Edge call is synchronous and runs on `spawn_blocking`. The shard is
//! created whole in `shard.tmp/` and renamed into place, so `shard/` exists
//! only complete, with every payload index.

mod backup;
mod collection;

pub use backup::Restored;
mod convert;
mod filter;
mod kept;
mod optimize;
mod rank;
mod schema;
mod shard;
mod tenants;

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use qdrant_edge as qe;
use uuid::Uuid;

use crate::{
    BatchPage, BatchRead, Change, CollectionInfo, CollectionSpec, Counted, DENSE_VECTOR,
    EmbedderId, Filter, Fold, Hit, Keeping, KeptSize, Memory, NativeLexical, PayloadRead,
    PayloadSchema, Point, Query, Result, SPARSE_VECTOR, Scan, ScrollPage, SparseVector, Store,
    StoreError, TermPage, TermPoint,
};
use schema::io;
use trine_core::Document;

const SHARD_DIR: &str = "shard";
/// The `qdrant-edge` crate trine is built with.
const EDGE_VERSION: &str = "0.9";
const NEW_SHARD_DIR: &str = "shard.tmp";
const LOCK_FILE: &str = "lock";

/// The sparse space without Qdrant's IDF modifier, holding the same vectors
/// as `sparse`: where the document frequencies are kept, the `sparse`
/// ranking is a query of it weighted by trine ([`kept::Kept::idf_weighted`]),
/// the same scores without the modifier's pass over the tenant's points.
/// Collections created before it have only `sparse`, and rank there.
const SPARSE_TF_VECTOR: &str = "sparse_tf";

/// The smallest `hnsw_ef` of a dense query: HNSW's beam width, for recall.
/// Measured on 8,000 uniform random 384-dim vectors (a hard case): recall@10
/// 0.75-0.84 at 128, 0.93 at 256 (2.4 ms), 0.99 at 512 (5.4 ms).
const MIN_HNSW_EF: usize = 256;

/// A trine collection in a Qdrant Edge shard on a data directory.
pub struct EdgeStore {
    inner: Arc<Inner>,
}

struct Inner {
    /// [`OPTIMIZE_AFTER`], or what [`EdgeStore::with_optimize_after`] set.
    optimize_after: std::sync::atomic::AtomicU64,
    name: String,
    schema: Arc<PayloadSchema>,
    /// `<data_dir>/<collection>`.
    dir: PathBuf,
    state: Mutex<State>,
}

/// What is open. Fields drop in order: the shard flushes before the lock is
/// released.
#[derive(Default)]
struct State {
    open: Option<Arc<Open>>,
    lock: Option<File>,
}

/// An open shard.
struct Open {
    shard: qe::EdgeShard,
    schema: Arc<PayloadSchema>,
    /// The text index scores with BM25: `query_text` may run.
    text_scoring: AtomicBool,
    /// The shard has the `sparse_tf` space ([`SPARSE_TF_VECTOR`]).
    sparse_tf: bool,
    /// The shard has the `tokens` space ([`crate::TOKENS_VECTOR`]).
    tokens: bool,
    /// The document frequencies, and the lock that orders writes.
    kept: kept::Kept,
    /// Whether none, one or many tenants were ever written into the shard.
    tenants: tenants::Tenants,
    /// Held by what rewrites the shard's files wholesale (optimize) and
    /// what copies them (backup): never both at once.
    maintenance: Mutex<()>,
    /// Points written since the shard was last optimized.
    unoptimized: std::sync::atomic::AtomicU64,
    /// An optimization started by writes is running (a watch: what a
    /// caller waits on).
    optimizing: tokio::sync::watch::Sender<bool>,
}

/// Points written, by default, after which a write starts an optimization
/// of the shard in the background ([`EdgeStore::with_optimize_after`]):
/// Qdrant Edge indexes nothing by itself, and a search scans what was
/// written since the last optimization one vector at a time — an hour of 5
/// writes a second at 385,000 memories took its p50 from 7.1 to 9.2 ms.
/// Qdrant's server indexes a segment past a like size (its indexing
/// threshold, 10,000 KB of vectors).
pub const OPTIMIZE_AFTER: u64 = 10_000;

impl EdgeStore {
    /// [`Store::keeping`] now and as it changes (the document frequencies
    /// built, being built, dropped); `None` before the collection exists.
    pub fn keeping_changes(&self) -> Option<tokio::sync::watch::Receiver<Keeping>> {
        let open = self.inner.opened().ok()?;
        Some(open.kept.keeping_changes())
    }

    /// Opens the collection `collection` under `data_dir`, taking its lock.
    ///
    /// A collection that does not exist yet is not created (nor its
    /// directory) until [`Store::ensure_collection`]. Blocking: loading a
    /// large shard takes seconds.
    pub fn open(data_dir: &Path, collection: &str) -> Result<Self> {
        Self::open_with(data_dir, collection, PayloadSchema::default())
    }

    /// [`EdgeStore::open`] with the payload layout `schema` (where each field
    /// lives, how times are written) instead of trine's own.
    pub fn open_with(data_dir: &Path, collection: &str, schema: PayloadSchema) -> Result<Self> {
        check_name(collection)?;
        schema
            .validate()
            .map_err(|why| StoreError::invalid("payload schema", why))?;
        let schema = Arc::new(schema);
        let dir = data_dir.join(collection);
        let mut state = State::default();
        if dir.is_dir() {
            state.lock = Some(lock(&dir)?);
            if dir.join(SHARD_DIR).is_dir() {
                state.open = Some(Arc::new(Open::load(&dir, schema.clone())?));
            }
        }
        Ok(Self {
            inner: Arc::new(Inner {
                optimize_after: std::sync::atomic::AtomicU64::new(OPTIMIZE_AFTER),
                name: collection.to_string(),
                schema,
                dir,
                state: Mutex::new(state),
            }),
        })
    }

    /// Runs `op` on the open shard on a blocking thread.
    async fn with_shard<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Open, &Inner) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        blocking(move || {
            let open = inner.opened()?;
            op(&open, &inner)
        })
        .await
    }
}

/// Locks `mutex`, recovering it from a panic elsewhere: every value the
/// store keeps under a lock is updated whole, never left half-done.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait]
impl Store for EdgeStore {
    fn backend(&self) -> &'static str {
        "edge"
    }

    fn collection(&self) -> &str {
        &self.inner.name
    }

    async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo> {
        let inner = self.inner.clone();
        let spec = spec.clone();
        blocking(move || {
            let open = inner.ensure(&spec)?;
            inner.info(&open)
        })
        .await
    }

    async fn info(&self) -> Result<Option<CollectionInfo>> {
        let inner = self.inner.clone();
        blocking(move || {
            let Some(open) = inner.state().open.clone() else {
                return Ok(None);
            };
            inner.info(&open).map(Some)
        })
        .await
    }

    async fn create_text_index(&self, fold: Fold) -> Result<bool> {
        self.with_shard(move |open, _| {
            let writing = open.kept.writing();
            let info = open.shard.info().map_err(backend)?;
            let present = schema::text_index_info(&info, &open.schema);
            if present.is_some_and(|t| t.fold() == fold) {
                return Ok(false);
            }
            // Statistics made under the old index are dropped, whatever
            // comes of the writes.
            open.kept.reset(&writing);
            open.write(schema::create_index(
                &open.schema.text,
                schema::text_index(fold),
            )?)?;
            // The source's phrases fold as the text's do.
            if schema::source_phrases(&info, &open.schema) {
                open.write(schema::create_index(
                    &open.schema.source_text,
                    schema::phrase_index(fold),
                )?)?;
            }
            open.text_scoring.store(true, Ordering::Release);
            Ok(true)
        })
        .await
    }

    async fn upsert(&self, points: Vec<Point>) -> Result<()> {
        let n = points.len() as u64;
        self.with_shard(move |open, inner| open.upsert(inner, points))
            .await?;
        self.written(n);
        Ok(())
    }

    async fn delete(&self, ids: &[Uuid]) -> Result<()> {
        let ids = ids.to_vec();
        self.with_shard(move |open, _| open.delete(&ids)).await
    }

    async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        let ids = ids.to_vec();
        self.with_shard(move |open, _| open.get(&ids)).await
    }

    fn keep_counts(&self) {
        if let Ok(open) = self.inner.opened()
            && let Some(number) = open.kept.build_now()
        {
            kept::start(&open, number);
        }
    }

    /// None: this process is the store's only writer.
    async fn changes(&self, _from: i64, _limit: usize) -> Result<Option<Vec<Change>>> {
        Ok(None)
    }

    /// From the shard's kept postings, without sources (those are read
    /// from the shard: [`Store::scroll_terms`] joins them to the page).
    fn kept_terms(
        &self,
        filter: &Filter,
        offset: Option<Uuid>,
        limit: usize,
        source: bool,
    ) -> Option<TermPage> {
        // Refused as the shard would refuse the read, where it would.
        (!source
            && check_limit(limit).is_ok()
            && filter::to_qdrant(filter, &self.inner.schema).is_ok())
        .then(|| self.kept_page(filter, offset, limit))
        .flatten()
    }

    fn holds_no_phrase(&self, filter: &Filter) -> bool {
        self.phrase_absent(filter)
    }

    /// From the shard's kept postings, where the filter is one the shard
    /// would take.
    fn kept_around(
        &self,
        filter: &Filter,
        tops: &[Uuid],
        window: u64,
        limit: usize,
    ) -> Option<crate::Nearby> {
        filter::to_qdrant(filter, &self.inner.schema).ok()?;
        let open = self.inner.opened().ok()?;
        open.kept.around(filter, tops, window, limit)
    }

    fn keeping(&self) -> Keeping {
        self.inner
            .opened()
            .map_or(Keeping::Not, |open| open.kept.keeping())
    }

    fn kept(&self) -> Option<KeptSize> {
        self.inner.opened().ok().and_then(|open| open.kept.size())
    }

    fn counted(&self, filter: &Filter) -> Counted {
        if filter.tenant.trim().is_empty() {
            // Refused by `count`, with the reason.
            return Counted::No;
        }
        let Ok(open) = self.inner.opened() else {
            return Counted::No;
        };
        let (count, build) = open.kept.count(filter);
        if let Some(number) = build {
            kept::start(&open, number);
        }
        count
    }

    async fn count(&self, filter: &Filter) -> Result<u64> {
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        self.with_shard(move |open, _| open.count(Some(filter)))
            .await
    }

    async fn scroll(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        check_limit(limit)?;
        let none = self.phrase_absent(filter);
        let filter = filter::to_qdrant(filter, &self.inner.schema)?;
        if none {
            return Ok(ScrollPage {
                memories: Vec::new(),
                next_offset: None,
            });
        }
        self.with_shard(move |open, _| open.scroll(filter, limit, offset))
            .await
    }

    async fn scroll_terms(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        check_limit(limit)?;
        // Checked as the shard would, even where the postings answer.
        let checked = filter::to_qdrant(filter, &self.inner.schema)?;
        let kept = match (self.kept_page(filter, offset, limit), source) {
            (Some(page), false) => return Ok(page),
            (kept, _) => kept,
        };
        self.with_shard(move |open, _| match kept {
            Some(page) => open.with_sources(page, source),
            None => open.scroll_terms(checked, limit, offset, source),
        })
        .await
    }

    /// In one blocking task, one read after another: the engine is in this
    /// process, so side by side would only add threads.
    async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        let reads = reads
            .iter()
            .map(|read| {
                check_limit(read.limit())?;
                let kept = match read {
                    BatchRead::Terms { filter, limit, .. } => {
                        self.kept_page(filter, None, *limit).map(BatchPage::Terms)
                    }
                    BatchRead::Memories { filter, .. } => self
                        .phrase_absent(filter)
                        .then(|| BatchPage::Memories(Vec::new())),
                };
                let filter = filter::to_qdrant(read.filter(), &self.inner.schema)?;
                Ok((read.clone(), filter, kept))
            })
            .collect::<Result<Vec<_>>>()?;
        // Answered whole from the postings: no store call.
        if reads.iter().all(|(read, _, kept)| {
            kept.is_some() && !matches!(read, BatchRead::Terms { source: true, .. })
        }) {
            return Ok(reads.into_iter().filter_map(|(_, _, kept)| kept).collect());
        }
        self.with_shard(move |open, _| {
            reads
                .into_iter()
                .map(|(read, filter, kept)| match (read, kept) {
                    (BatchRead::Terms { source, .. }, Some(BatchPage::Terms(page))) => {
                        open.with_sources(page, source).map(BatchPage::Terms)
                    }
                    (_, Some(page)) => Ok(page),
                    (BatchRead::Terms { limit, source, .. }, None) => open
                        .scroll_terms(filter, limit, None, source)
                        .map(BatchPage::Terms),
                    (BatchRead::Memories { limit, .. }, None) => open
                        .scroll(filter, limit, None)
                        .map(|page| BatchPage::Memories(page.memories)),
                })
                .collect()
        })
        .await
    }

    async fn query(&self, query: Query) -> Result<Vec<Hit>> {
        crate::query::run(self, query).await
    }

    async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.with_shard(move |open, _| open.set_sparse(vectors))
            .await
    }

    async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage> {
        check_limit(limit)?;
        let filter = match scope {
            Scan::All => qe::Filter::default(),
            Scan::MissingSparse => no_sparse(),
        };
        self.with_shard(move |open, _| open.scroll(filter, limit, offset))
            .await
    }

    async fn count_missing_sparse(&self) -> Result<u64> {
        self.with_shard(|open, _| open.count(Some(no_sparse())))
            .await
    }

    async fn optimize(&self) -> Result<()> {
        self.with_shard(|open, _| {
            let _maintenance = locked(&open.maintenance);
            open.unoptimized.store(0, Ordering::Release);
            open.shard.optimize().map_err(backend)?;
            open.shard.flush().map_err(backend)
        })
        .await
    }

    async fn backup(&self, dir: &Path) -> Result<crate::backup::Manifest> {
        let dir = dir.to_path_buf();
        self.with_shard(move |open, inner| backup::take(open, inner, &dir))
            .await
    }

    async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        crate::check_ids(ids)?;
        let ids = ids.to_vec();
        self.with_shard(move |open, _| open.points(&ids)).await
    }

    /// One process holds the embedded store: its gateway is the only one.
    async fn gateways(
        &self,
        _me: &crate::Beat,
        _live: std::time::Duration,
    ) -> Result<Option<Vec<crate::Beat>>> {
        Ok(None)
    }

    async fn upgrade(&self) -> Result<Option<u32>> {
        self.with_shard(|open, inner| {
            let found = schema::read_schema(&inner.dir)?;
            crate::check_schema(&inner.name, found)?;
            if found == crate::SCHEMA {
                return Ok(None);
            }
            // Version 3: the thread's and seq's indexes, made in place.
            let info = open.shard.info().map_err(backend)?;
            let present = schema::payload_index_list(&info);
            for (key, params) in schema::missing_indexes(&open.schema, &present) {
                open.write(schema::create_index(key, params)?)?;
            }
            schema::write_schema(&inner.dir)?;
            Ok(Some(found))
        })
        .await
    }
}

/// The points, of every tenant, with no `sparse` vector. A point upserted
/// with an empty sparse vector has one (Qdrant stores it, though no query
/// finds it), so it is not matched.
fn no_sparse() -> qe::Filter {
    qe::Filter::new_must_not(qe::Condition::HasVector(qe::HasVectorCondition::from(
        SPARSE_VECTOR.to_string(),
    )))
}

/// Runs a synchronous Edge call off the async executor.
async fn blocking<T, F>(op: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    tokio::task::spawn_blocking(op)
        .await
        .map_err(|e| StoreError::Backend(format!("edge task failed: {e}")))?
}

/// Takes the collection's lock, or says who holds it.
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked(dir.to_path_buf())),
        Err(TryLockError::Error(source)) => Err(StoreError::Io { path, source }),
    }
}

/// A collection name is one plain directory name.
fn check_name(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control);
    if plain {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "collection name",
            format!("{name:?} must be a plain directory name (no slashes, not empty)"),
        ))
    }
}

fn check_limit(limit: usize) -> Result<()> {
    if limit == 0 {
        return Err(StoreError::invalid(
            "limit",
            "the limit is 0: ask for at least one",
        ));
    }
    Ok(())
}

/// An Edge error: the request's fault when Edge says so, else the backend's.
fn backend(error: qe::OperationError) -> StoreError {
    match error {
        qe::OperationError::ValidationError { description } => {
            StoreError::invalid("request", description)
        }
        other => StoreError::Backend(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_names_are_plain() {
        for good in ["memories", "a.b", "t-1_x"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    fn spec(dim: usize) -> CollectionSpec {
        CollectionSpec {
            embedder: EmbedderId {
                name: "e".into(),
                dim,
            },
            fold: Fold::default(),
        }
    }

    /// A server about to take searches builds the statistics at once, not at
    /// the first count.
    #[tokio::test]
    async fn keep_counts_starts_the_build_without_a_count() {
        let data = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(data.path(), "kept").expect("open");
        store.ensure_collection(&spec(4)).await.expect("ensure");
        let open = store.inner.opened().expect("open");
        assert!(!open.kept.begun(), "nothing asked yet");
        store.keep_counts();
        assert!(open.kept.begun(), "begun by keep_counts alone");
    }

    /// Writes made while the document frequencies are built (a page of 8
    /// points at a time in unit tests) land in them: once built, they count
    /// what the store counts.
    #[tokio::test]
    async fn writes_during_the_frequencies_build_are_counted() {
        let data = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(data.path(), "kept").expect("open");
        store.ensure_collection(&spec(4)).await.expect("ensure");
        let words = ["alpha", "beta", "gamma", "delta"];
        let memory = |i: usize| {
            let text = format!("{} {} item{}", words[i % 4], words[(i / 4) % 4], i % 7);
            Memory::new(Uuid::new_v4(), ["acme", "globex"][i % 2], text)
        };
        let point = |memory: Memory| Point {
            memory,
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: None,
            tokens: None,
        };
        let first: Vec<Memory> = (0..3_000).map(memory).collect();
        let points = first.iter().cloned().map(point).collect();
        store.upsert(points).await.expect("upsert");

        let probe = Filter::tenant("acme");
        assert_eq!(
            store.counted(&probe),
            Counted::Later,
            "the first ask starts the build"
        );
        let mut during = 0;
        while store.counted(&probe) == Counted::Later {
            // One point rewritten into another tenant and text, one new, one
            // deleted.
            let i = during;
            let rewritten = Memory {
                tenant: "globex".into(),
                text: format!("epsilon {}", words[i % 4]),
                ..first[(i * 13) % first.len()].clone()
            };
            let written = vec![point(rewritten), point(memory(i + 10_000))];
            store.upsert(written).await.expect("write");
            let gone = first[(i * 7 + 3) % first.len()].id;
            store.delete(&[gone]).await.expect("delete");
            during += 1;
            assert!(during < 100_000, "the statistics were never built");
        }
        assert!(
            during > 0,
            "no write landed while the statistics were built"
        );

        for tenant in ["acme", "globex", "nobody"] {
            let mut filters = vec![Filter::tenant(tenant)];
            for term in words.iter().chain(&["epsilon", "item3", "absent"]) {
                filters.push(Filter {
                    all_terms: vec![term.to_string()],
                    ..Filter::tenant(tenant)
                });
            }
            for filter in filters {
                let exact = store.count(&filter).await.expect("count");
                assert_eq!(
                    store.counted(&filter),
                    Counted::Exact(exact),
                    "{filter:?} after {during} writes"
                );
            }
        }
    }

    /// A term read answered from the kept postings is the shard's own
    /// scroll: the same points, vectors, sources and next offset, for every
    /// filter they decide — after writes made while they were built and
    /// after them (rewrites into another tenant, deletes).
    #[tokio::test]
    async fn term_reads_from_the_postings_are_the_shards() {
        let data = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(data.path(), "kept").expect("open");
        store.ensure_collection(&spec(4)).await.expect("ensure");
        let words = ["alpha", "beta", "gamma", "delta", "omega"];
        let memory = |i: usize| {
            let text = format!(
                "{} {} {} item{}",
                words[i % 5],
                words[(i / 5) % 5],
                words[(i / 25) % 5],
                i % 7
            );
            Memory {
                source: Some(format!("src/{i}")),
                ..Memory::new(Uuid::new_v4(), ["acme", "globex"][i % 2], text)
            }
        };
        let point = |memory: Memory| Point {
            sparse: (!memory.text.len().is_multiple_of(3))
                .then(|| trine_core::sparse::encode_text(&memory.text, Fold::default())),
            memory,
            dense: vec![1.0, 0.0, 0.0, 0.0],
            tokens: None,
        };
        let first: Vec<Memory> = (0..1_500).map(memory).collect();
        store
            .upsert(first.iter().cloned().map(point).collect())
            .await
            .expect("upsert");
        let write = |round: usize| {
            let rewritten = Memory {
                tenant: "globex".into(),
                text: format!("epsilon {}", words[round % 5]),
                ..first[(round * 13) % first.len()].clone()
            };
            (
                vec![point(rewritten), point(memory(round + 10_000))],
                first[(round * 7 + 3) % first.len()].id,
            )
        };
        store.keep_counts();
        let mut round = 0;
        while store.keeping() != Keeping::Ready {
            let (written, gone) = write(round);
            store.upsert(written).await.expect("write");
            store.delete(&[gone]).await.expect("delete");
            round += 1;
            assert!(round < 100_000, "the statistics were never built");
        }
        let same = |when: &'static str| {
            let store = &store;
            async move {
                let mut filters = Vec::new();
                for tenant in ["acme", "globex", "nobody"] {
                    for (all, none) in [
                        (&["alpha"][..], &[][..]),
                        (&["epsilon"], &[]),
                        (&["beta", "gamma"], &[]),
                        (&["item3", "delta", "omega"], &[]),
                        (&["alpha"], &["beta"]),
                        (&["gamma"], &["alpha", "item1", "absent"]),
                        (&["absent"], &[]),
                    ] {
                        let terms = |t: &[&str]| t.iter().map(|t| t.to_string()).collect();
                        let filter = Filter {
                            all_terms: terms(all),
                            no_terms: terms(none),
                            ..Filter::tenant(tenant)
                        };
                        filters.push(filter.clone());
                        filters.push(Filter {
                            valid_at: Some(chrono::Utc::now()),
                            ..filter
                        });
                    }
                }
                for filter in filters {
                    for (limit, offset) in [
                        (3, None),
                        (40, None),
                        (4_000, None),
                        (7, Some(Uuid::from_u128(u128::MAX / 3))),
                    ] {
                        for source in [false, true] {
                            let kept =
                                store.kept_page(&filter, offset, limit).unwrap_or_else(|| {
                                    panic!("{when}: the postings decide {filter:?}")
                                });
                            let kept = store
                                .with_shard(move |open, _| open.with_sources(kept, source))
                                .await
                                .expect("sources");
                            let q =
                                filter::to_qdrant(&filter, &store.inner.schema).expect("filter");
                            let shard = store
                                .with_shard(move |open, _| {
                                    open.scroll_terms(q, limit, offset, source)
                                })
                                .await
                                .expect("scroll");
                            assert_eq!(
                                kept, shard,
                                "{when}: {filter:?}, limit {limit}, from {offset:?}, source {source}"
                            );
                        }
                    }
                }
                // A phrase read (of texts, of sources) the postings show
                // empty is, and one they cannot decide is the shard's.
                for tenant in ["acme", "globex"] {
                    let phrases = [
                        "alpha beta",
                        "beta alpha",
                        "epsilon omega",
                        "absent alpha",
                        "item3",
                    ];
                    let sources = ["src 12", "src 13", "src", "src 99999", "12 src"];
                    let texts = phrases.map(|p| Filter {
                        phrase: Some(p.to_string()),
                        ..Filter::tenant(tenant)
                    });
                    let in_sources = sources.map(|p| Filter {
                        source_phrase: Some(p.to_string()),
                        ..Filter::tenant(tenant)
                    });
                    for filter in texts.into_iter().chain(in_sources) {
                        let read = store.scroll(&filter, 5_000, None).await.expect("scroll");
                        let q = filter::to_qdrant(&filter, &store.inner.schema).expect("filter");
                        let shard = store
                            .with_shard(move |open, _| open.scroll(q, 5_000, None))
                            .await
                            .expect("scroll");
                        assert_eq!(read, shard, "{when}: {filter:?}");
                    }
                }
            }
        };
        same("built under writes").await;
        for more in round..round + 40 {
            let (written, gone) = write(more);
            store.upsert(written).await.expect("write");
            store.delete(&[gone]).await.expect("delete");
        }
        same("after more writes").await;
        // A filter the postings do not decide goes to the store.
        let projects = Filter {
            all_terms: vec!["alpha".into()],
            projects: vec!["p".into()],
            ..Filter::tenant("acme")
        };
        assert_eq!(store.kept_page(&projects, None, 10), None);
    }

    /// Where the document frequencies are kept, a `sparse` query is weighted
    /// by trine and ranked in `sparse_tf`: the same points and scores as the
    /// IDF space gives with the tenant as its corpus, after writes, deletes,
    /// rewrites into another tenant and sparse back-fills made during the
    /// build and after it.
    #[tokio::test]
    async fn weighted_sparse_queries_rank_as_the_idf_space() {
        use trine_core::sparse::{encode_query, encode_text};
        let data = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(data.path(), "kept").expect("open");
        store.ensure_collection(&spec(4)).await.expect("ensure");
        let words = ["alpha", "beta", "gamma", "delta", "omega"];
        // The tenants hold the words in different proportions: an IDF over
        // both would rank differently from each one's own.
        let memory = |i: usize| {
            let tenant = ["acme", "globex"][i % 2];
            let text = match tenant {
                "acme" => format!("{} {} {}", words[i % 5], words[(i / 5) % 2], words[i % 3]),
                _ => format!("{} {} {}", words[4 - i % 3], words[(i / 3) % 5], words[0]),
            };
            Memory::new(Uuid::new_v4(), tenant, text)
        };
        // Every third point is written without its sparse vector, to be
        // back-filled later.
        let point = |memory: Memory, i: usize| Point {
            sparse: (!i.is_multiple_of(3)).then(|| encode_text(&memory.text, Fold::CASE)),
            memory,
            dense: vec![1.0, 0.0, 0.0, 0.0],
            tokens: None,
        };
        let first: Vec<Memory> = (0..600).map(memory).collect();
        let points = first
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, m)| point(m, i))
            .collect();
        store.upsert(points).await.expect("upsert");
        let backfill = |from: usize| {
            first
                .iter()
                .enumerate()
                .skip(from)
                .step_by(3)
                .take(20)
                .filter(|(i, _)| i.is_multiple_of(3))
                .map(|(_, m)| (m.id, encode_text(&m.text, Fold::CASE)))
                .collect::<Vec<_>>()
        };

        store.keep_counts();
        let mut round = 0;
        let write = async |round: usize| {
            let i = round * 17;
            let rewritten = Memory {
                tenant: ["globex", "acme"][round % 2].into(),
                text: format!("omega {}", words[round % 5]),
                ..first[(i * 13) % first.len()].clone()
            };
            let written = vec![point(rewritten, 1), point(memory(i + 10_000), i)];
            store.upsert(written).await.expect("write");
            store
                .delete(&[first[(i * 7 + 1) % first.len()].id])
                .await
                .expect("delete");
            store
                .set_sparse(backfill(round * 60 % 600))
                .await
                .expect("backfill");
        };
        while store.counted(&Filter::tenant("acme")) == Counted::Later {
            write(round).await;
            round += 1;
            assert!(round < 100_000, "the statistics were never built");
        }
        for after in 0..3 {
            write(round + after).await;
        }

        let open = store.inner.opened().expect("open");
        assert!(open.sparse_tf, "a new collection has the sparse_tf space");
        let queries = [
            "alpha",
            "alpha beta",
            "omega gamma delta",
            "beta omega absent",
            "absent",
        ];
        for tenant in ["acme", "globex", "nobody"] {
            let filter = Filter::tenant(tenant);
            let qfilter = filter::to_qdrant(&filter, &open.schema).expect("filter");
            let corpus = filter::tenant_only(&filter, &open.schema).expect("corpus");
            for query in queries {
                let vector = encode_query(query, Fold::CASE);
                let idf = open
                    .query(
                        rank::nearest(
                            convert::to_sparse(vector.clone()).expect("v"),
                            SPARSE_VECTOR,
                        ),
                        qfilter.clone(),
                        rank::idf_within(corpus.clone()),
                        1_000,
                        PayloadRead::Nothing,
                    )
                    .expect("idf query");
                let weighted = open.kept.idf_weighted(tenant, &vector).expect("built");
                let tf = open
                    .query(
                        rank::nearest(convert::to_sparse(weighted).expect("v"), SPARSE_TF_VECTOR),
                        qfilter.clone(),
                        qe::SearchParams::default(),
                        1_000,
                        PayloadRead::Nothing,
                    )
                    .expect("tf query");
                let same = |got: &[Hit], what: &str| {
                    let differ = got.len() != idf.len()
                        || got
                            .iter()
                            .zip(&idf)
                            .any(|(a, b)| (a.id, a.score) != (b.id, b.score));
                    assert!(
                        !differ,
                        "{tenant}: {query:?} {what} after {round} rounds: {} hits, first {:?}; the IDF space {} hits, first {:?}",
                        got.len(),
                        got.first().map(|h| h.score),
                        idf.len(),
                        idf.first().map(|h| h.score),
                    );
                };
                same(&tf, "in sparse_tf");
                let (served, _) = rank::sparse_query(
                    &open,
                    tenant,
                    &vector,
                    convert::to_sparse(vector.clone()).expect("v"),
                    corpus.clone(),
                )
                .expect("query");
                assert!(
                    matches!(&served, qe::ScoringQuery::Vector(qe::QueryEnum::Nearest(q))
                        if q.using.as_deref() == Some(SPARSE_TF_VECTOR)),
                    "served from sparse_tf once built: {served:?}"
                );
                let served = store
                    .query(Query::sparse(vector, &filter, 1_000))
                    .await
                    .expect("query");
                same(&served, "as served");
                if tenant != "nobody" && query != "absent" {
                    assert!(!idf.is_empty(), "{tenant}: {query:?} finds points");
                }
            }
        }
    }

    /// A collection made before `sparse_tf` existed is written and ranked
    /// as before: its `sparse` queries stay in the IDF space.
    #[tokio::test]
    async fn a_shard_without_sparse_tf_ranks_in_the_idf_space() {
        let data = tempfile::tempdir().expect("tempdir");
        let dir = data.path().join("old");
        let config = qe::EdgeConfig::builder()
            .vector(
                DENSE_VECTOR,
                qe::EdgeVectorParams::builder(4, qe::Distance::Cosine).build(),
            )
            .sparse_vector(
                SPARSE_VECTOR,
                qe::EdgeSparseVectorParams::builder()
                    .modifier(qe::Modifier::Idf)
                    .build(),
            )
            .build();
        qe::EdgeShard::new(&dir.join(SHARD_DIR), config)
            .expect("an old shard")
            .flush()
            .expect("flush");
        let store = EdgeStore::open(data.path(), "old").expect("open");
        store.ensure_collection(&spec(4)).await.expect("adopted");
        store
            .create_text_index(Fold::CASE)
            .await
            .expect("text index");
        let points = (0..20)
            .map(|i| {
                let memory = Memory::new(Uuid::new_v4(), "acme", format!("alpha item{i}"));
                Point {
                    sparse: Some(trine_core::sparse::encode_text(&memory.text, Fold::CASE)),
                    memory,
                    dense: vec![1.0, 0.0, 0.0, 0.0],
                    tokens: None,
                }
            })
            .collect();
        store
            .upsert(points)
            .await
            .expect("written without sparse_tf");
        store.keep_counts();
        while store.counted(&Filter::tenant("acme")) == Counted::Later {
            tokio::task::yield_now().await;
        }
        let open = store.inner.opened().expect("open");
        assert!(!open.sparse_tf);
        let vector = trine_core::sparse::encode_query("alpha item3", Fold::CASE);
        let corpus = filter::tenant_only(&Filter::tenant("acme"), &open.schema).expect("corpus");
        let (query, params) = rank::sparse_query(
            &open,
            "acme",
            &vector,
            convert::to_sparse(vector.clone()).expect("v"),
            corpus,
        )
        .expect("q");
        assert!(
            matches!(&query, qe::ScoringQuery::Vector(qe::QueryEnum::Nearest(q))
                if q.using.as_deref() == Some(SPARSE_VECTOR)),
            "{query:?}"
        );
        assert!(params.idf.is_some(), "the tenant is the IDF corpus");
        let hits = store
            .query(Query::sparse(vector, &Filter::tenant("acme"), 5))
            .await
            .expect("query");
        assert_eq!(hits.len(), 5);
        assert!(hits[0].score > hits[1].score, "item3 first: {hits:?}");
    }

    /// BM25 of the only tenant ever written takes the text index's
    /// statistics over the whole shard: the same points and scores as with
    /// the tenant as the corpus. Once another tenant is written — whose words
    /// would weigh differently — the tenant is the corpus again, also after
    /// a reload.
    #[tokio::test]
    async fn a_sole_tenants_bm25_takes_the_whole_shards_statistics() {
        let data = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(data.path(), "sole").expect("open");
        store.ensure_collection(&spec(4)).await.expect("ensure");
        store
            .create_text_index(Fold::CASE)
            .await
            .expect("text index");
        let words = ["alpha", "beta", "gamma", "delta"];
        let point = |tenant: &str, text: String| Point {
            memory: Memory::new(Uuid::new_v4(), tenant, text),
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: None,
            tokens: None,
        };
        let acme: Vec<Point> = (0..60)
            .map(|i| {
                let text = format!("{} {} {}", words[i % 4], words[(i / 4) % 3], words[i % 2]);
                point("acme", text)
            })
            .collect();
        let deleted = acme[7].memory.id;
        store.upsert(acme).await.expect("upsert");
        store.delete(&[deleted]).await.expect("delete");
        let ranked = async |store: &EdgeStore, query: &str, scoped: bool| {
            let open = store.inner.opened().expect("open");
            let filter = Filter::tenant("acme");
            let qfilter = filter::to_qdrant(&filter, &open.schema).expect("filter");
            let params = match scoped {
                true => rank::idf_within(filter::tenant_only(&filter, &open.schema).expect("c")),
                false => qe::SearchParams::default(),
            };
            let field = filter::path(&open.schema.text).expect("path");
            let text = qe::TextQueryBuilder::new(field, query).build();
            let direct = open
                .query(text, qfilter, params, 100, PayloadRead::Nothing)
                .expect("query");
            let served = store
                .query(Query::text(query, &filter, 100))
                .await
                .expect("served");
            let pairs = |hits: &[Hit]| hits.iter().map(|h| (h.id, h.score)).collect::<Vec<_>>();
            (pairs(&direct), pairs(&served))
        };
        let queries = ["alpha", "alpha gamma", "delta beta gamma"];
        let open = store.inner.opened().expect("open");
        assert!(open.tenants.sole("acme").is_some(), "acme alone");
        for query in queries {
            let (scoped, served) = ranked(&store, query, true).await;
            let (whole, _) = ranked(&store, query, false).await;
            assert!(!scoped.is_empty(), "{query:?}");
            assert_eq!(served, scoped, "{query:?}: served as scoped");
            assert_eq!(whole, scoped, "{query:?}: the shard is the tenant");
        }

        // globex says "alpha" in every memory: over both tenants, "alpha"
        // weighs less against the others than over acme alone.
        let globex = (0..40)
            .map(|i| point("globex", format!("alpha {}", words[1 + i % 3])))
            .collect();
        store.upsert(globex).await.expect("upsert");
        assert!(open.tenants.sole("acme").is_none(), "acme no longer alone");
        let check = async |store: &EdgeStore| {
            for query in queries {
                let (scoped, served) = ranked(store, query, true).await;
                let (whole, _) = ranked(store, query, false).await;
                assert_eq!(served, scoped, "{query:?}: the tenant is the corpus");
                assert_ne!(whole, scoped, "{query:?}: globex changes the statistics");
            }
        };
        check(&store).await;
        drop(open);
        drop(store);
        let store = EdgeStore::open(data.path(), "sole").expect("reopen");
        let open = store.inner.opened().expect("open");
        assert!(open.tenants.sole("acme").is_none(), "recorded on disk");
        check(&store).await;
    }

    #[tokio::test]
    async fn segments_are_capped_at_trines_size_made_or_opened() {
        let cap = |store: &EdgeStore| {
            let open = store.inner.opened().expect("open");
            let config = open.shard.config();
            config.optimizers.as_ref().and_then(|o| o.max_segment_size)
        };
        let data = tempfile::tempdir().expect("tempdir");
        let made = EdgeStore::open(data.path(), "made").expect("open");
        made.ensure_collection(&spec(4)).await.expect("create");
        assert_eq!(cap(&made), Some(crate::MAX_SEGMENT_KB), "a new collection");

        // A shard made with Qdrant's own cap takes trine's when trine opens it.
        let shard = qe::EdgeShard::new(
            &data.path().join("older").join(SHARD_DIR),
            qe::EdgeConfig::builder()
                .vector(
                    crate::DENSE_VECTOR,
                    qe::EdgeVectorParams::builder(4, qe::Distance::Cosine).build(),
                )
                .build(),
        )
        .expect("create a shard with Qdrant's defaults");
        assert_eq!(
            shard
                .config()
                .optimizers
                .as_ref()
                .and_then(|o| o.max_segment_size),
            None
        );
        shard.flush().expect("flush");
        drop(shard);
        let older = EdgeStore::open(data.path(), "older").expect("open");
        assert_eq!(
            cap(&older),
            Some(crate::MAX_SEGMENT_KB),
            "an older shard opened"
        );
    }

    /// A shard another tool made: vectors, no payload index, no `trine.json`.
    fn foreign_shard(dir: &Path) {
        let shard = qe::EdgeShard::new(&dir.join(SHARD_DIR), schema::new_config(&spec(4)))
            .expect("create a bare shard");
        shard.flush().expect("flush");
    }

    #[tokio::test]
    async fn a_foreign_shard_is_adopted_and_gets_its_text_index_on_demand() {
        let data = tempfile::tempdir().expect("tempdir");
        foreign_shard(&data.path().join("foreign"));
        let store = EdgeStore::open(data.path(), "foreign").expect("open");
        let info = store.info().await.expect("info").expect("exists");
        assert_eq!(info.embedder, None, "nothing recorded yet");
        assert_eq!(info.text_index, None, "no text index yet");

        let err = store
            .query(Query::text("x", &Filter::tenant("t"), 5))
            .await
            .expect_err("no text index");
        assert!(matches!(err, StoreError::NoTextIndex(_)), "{err}");
        assert!(err.to_string().contains("trine text-index"), "{err}");

        let err = store
            .ensure_collection(&spec(8))
            .await
            .expect_err("wrong dim");
        assert!(
            matches!(err, StoreError::EmbedderMismatch { found_dim: 4, .. }),
            "{err}"
        );
        let info = store.ensure_collection(&spec(4)).await.expect("adopted");
        assert_eq!(
            info.embedder,
            Some(spec(4).embedder),
            "recorded on adoption"
        );

        assert!(
            store.create_text_index(Fold::CASE).await.expect("create"),
            "created"
        );
        assert!(
            !store.create_text_index(Fold::CASE).await.expect("again"),
            "present"
        );
        let info = store.info().await.expect("info").expect("exists");
        let text = info.text_index.expect("a text index");
        assert!(text.scoring && text.phrase_matching, "{text:?}");
        assert!(!text.ascii_folding, "{text:?}");
        assert!(
            store.create_text_index(Fold::ASCII).await.expect("upgrade"),
            "rebuilt with folding"
        );
        let info = store.info().await.expect("info").expect("exists");
        let text = info.text_index.expect("a text index");
        assert!(text.ascii_folding && text.scoring, "{text:?}");
        let hits = store
            .query(Query::text("x", &Filter::tenant("t"), 5))
            .await
            .expect("bm25 now runs");
        assert!(hits.is_empty());
    }

    #[test]
    fn opening_a_missing_collection_creates_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EdgeStore::open(dir.path(), "absent").expect("open");
        assert!(!dir.path().join("absent").exists());
        assert_eq!(store.collection(), "absent");
    }
}

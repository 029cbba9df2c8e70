//! A store whose statistics a test holds back: [`Gated`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use async_trait::async_trait;
use trine_core::model::{
    CollectionInfo, CollectionSpec, Filter, Hit, Memory, Point, ScrollPage, SparseVector, TermPage,
};
use trine_store::{
    BatchPage, BatchRead, Change, Counted, Fold, Keeping, KeptSize, Query, Result, Scan, Store,
};
use uuid::Uuid;

/// A real store (every call goes to it) whose document frequencies read as
/// still being built until [`Gated::open`]: what a server sees in the
/// seconds after it starts over a large collection, held for as long as a
/// test needs. It also counts the counts that went to the store, and can
/// hold its queries ([`Gated::stall`]): a store that stops answering.
pub struct Gated {
    inner: Arc<dyn Store>,
    held: AtomicBool,
    reads: AtomicU64,
    /// True: every `query` waits until it turns false.
    stalled: tokio::sync::watch::Sender<bool>,
    /// The queries waiting now.
    waiting: AtomicU64,
}

impl Gated {
    /// `inner`, its statistics held back.
    pub fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            held: AtomicBool::new(true),
            reads: AtomicU64::new(0),
            stalled: tokio::sync::watch::Sender::new(false),
            waiting: AtomicU64::new(0),
        })
    }

    /// Every `query` from now on waits, unanswered, until [`Gated::release`].
    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }

    /// The waiting queries go on, and the next ones are answered.
    pub fn release(&self) {
        self.stalled.send_replace(false);
    }

    /// How many queries wait now.
    pub fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The statistics are what the store says from now on.
    pub fn open(&self) {
        self.held.store(false, Ordering::SeqCst);
    }

    /// The counts made in the store so far (each a read).
    pub fn count_reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    fn held(&self) -> bool {
        self.held.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Store for Gated {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn collection(&self) -> &str {
        self.inner.collection()
    }
    async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo> {
        self.inner.ensure_collection(spec).await
    }
    async fn info(&self) -> Result<Option<CollectionInfo>> {
        self.inner.info().await
    }
    async fn create_text_index(&self, fold: Fold) -> Result<bool> {
        self.inner.create_text_index(fold).await
    }
    async fn upsert(&self, points: Vec<Point>) -> Result<()> {
        self.inner.upsert(points).await
    }
    async fn delete(&self, ids: &[Uuid]) -> Result<()> {
        self.inner.delete(ids).await
    }
    async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        self.inner.get(ids).await
    }
    async fn count(&self, filter: &Filter) -> Result<u64> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.count(filter).await
    }
    fn counted(&self, filter: &Filter) -> Counted {
        if self.held() {
            return Counted::Later;
        }
        self.inner.counted(filter)
    }
    fn keep_counts(&self) {
        self.inner.keep_counts();
    }
    async fn changes(&self, from: i64, limit: usize) -> Result<Option<Vec<Change>>> {
        self.inner.changes(from, limit).await
    }
    fn kept(&self) -> Option<KeptSize> {
        if self.held() {
            return None;
        }
        self.inner.kept()
    }
    fn keeping(&self) -> Keeping {
        if self.held() {
            return Keeping::Building;
        }
        self.inner.keeping()
    }
    async fn scroll_terms(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        self.inner.scroll_terms(filter, limit, offset, source).await
    }
    async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        self.inner.read_batch(reads).await
    }
    async fn scroll(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        self.inner.scroll(filter, limit, offset).await
    }
    async fn query(&self, query: Query) -> Result<Vec<Hit>> {
        let mut stalled = self.stalled.subscribe();
        if *stalled.borrow() {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            // An error: the sender is gone with the store; answer then.
            let _ = stalled.wait_for(|s| !*s).await;
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        self.inner.query(query).await
    }
    async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        self.inner.set_sparse(vectors).await
    }
    async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage> {
        self.inner.scan(scope, limit, offset).await
    }
    async fn count_missing_sparse(&self) -> Result<u64> {
        self.inner.count_missing_sparse().await
    }
    async fn optimize(&self) -> Result<()> {
        self.inner.optimize().await
    }
    async fn backup(&self, dir: &std::path::Path) -> Result<trine_store::backup::Manifest> {
        self.inner.backup(dir).await
    }
    async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        self.inner.points(ids).await
    }
    async fn upgrade(&self) -> Result<Option<u32>> {
        self.inner.upgrade().await
    }
    async fn gateways(
        &self,
        me: &trine_store::Beat,
        live: std::time::Duration,
    ) -> Result<Option<Vec<trine_store::Beat>>> {
        self.inner.gateways(me, live).await
    }
}

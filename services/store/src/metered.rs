//! A [`Store`] that times every call into a service's metrics
//! (`trine_store_duration_seconds{op}`).

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use trine_telemetry::Metrics;
use uuid::Uuid;

use crate::{
    BatchPage, BatchRead, Change, CollectionInfo, CollectionSpec, Counted, Filter, Fold, Hit,
    Keeping, KeptSize, Memory, Point, Query, Result, Scan, ScrollPage, SparseVector, Store,
    TermPage,
};

/// Wraps a store; each call's latency is recorded under its operation.
pub struct Metered {
    inner: Arc<dyn Store>,
    metrics: Arc<Metrics>,
}

impl Metered {
    pub fn new(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }

    async fn timed<T>(&self, op: &str, call: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let out = call.await;
        self.metrics.store(op, started.elapsed());
        out
    }
}

#[async_trait]
impl Store for Metered {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }

    fn collection(&self) -> &str {
        self.inner.collection()
    }

    async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo> {
        self.timed("ensure_collection", self.inner.ensure_collection(spec))
            .await
    }

    async fn info(&self) -> Result<Option<CollectionInfo>> {
        self.timed("info", self.inner.info()).await
    }

    async fn create_text_index(&self, fold: Fold) -> Result<bool> {
        self.timed("create_text_index", self.inner.create_text_index(fold))
            .await
    }

    fn keep_counts(&self) {
        self.inner.keep_counts();
    }

    async fn changes(&self, from: i64, limit: usize) -> Result<Option<Vec<Change>>> {
        self.inner.changes(from, limit).await
    }

    fn keeping(&self) -> Keeping {
        self.inner.keeping()
    }

    fn kept(&self) -> Option<KeptSize> {
        self.inner.kept()
    }

    /// Timed as `counted` where the statistics answered (a count the store
    /// did not have to make), not timed where they did not (then the caller
    /// counts, timed as `count`).
    fn counted(&self, filter: &Filter) -> Counted {
        let started = Instant::now();
        let counted = self.inner.counted(filter);
        if let Counted::Exact(_) = counted {
            self.metrics.store("counted", started.elapsed());
        }
        counted
    }

    async fn upsert(&self, points: Vec<Point>) -> Result<()> {
        self.timed("upsert", self.inner.upsert(points)).await
    }

    async fn delete(&self, ids: &[Uuid]) -> Result<()> {
        self.timed("delete", self.inner.delete(ids)).await
    }

    async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        self.timed("set_sparse", self.inner.set_sparse(vectors))
            .await
    }

    async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage> {
        self.timed("scan", self.inner.scan(scope, limit, offset))
            .await
    }

    async fn count_missing_sparse(&self) -> Result<u64> {
        self.timed("count_missing_sparse", self.inner.count_missing_sparse())
            .await
    }

    async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        self.timed("get", self.inner.get(ids)).await
    }

    async fn count(&self, filter: &Filter) -> Result<u64> {
        self.timed("count", self.inner.count(filter)).await
    }

    async fn scroll(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        self.timed("scroll", self.inner.scroll(filter, limit, offset))
            .await
    }

    async fn scroll_terms(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        self.timed(
            "scroll_terms",
            self.inner.scroll_terms(filter, limit, offset, source),
        )
        .await
    }

    async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        self.timed("read_batch", self.inner.read_batch(reads)).await
    }

    async fn query(&self, query: Query) -> Result<Vec<Hit>> {
        let op = query.ranking.op();
        self.timed(op, self.inner.query(query)).await
    }

    async fn optimize(&self) -> Result<()> {
        self.timed("optimize", self.inner.optimize()).await
    }
    async fn backup(&self, dir: &std::path::Path) -> Result<crate::backup::Manifest> {
        self.timed("backup", self.inner.backup(dir)).await
    }

    async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        self.timed("points", self.inner.points(ids)).await
    }

    async fn upgrade(&self) -> Result<Option<u32>> {
        self.timed("upgrade", self.inner.upgrade()).await
    }
    async fn gateways(
        &self,
        me: &crate::Beat,
        live: std::time::Duration,
    ) -> Result<Option<Vec<crate::Beat>>> {
        self.timed("gateways", self.inner.gateways(me, live)).await
    }
}

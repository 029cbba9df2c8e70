//! A [`Store`] that tries a call again, after a growing pause, when the
//! store could not be reached ([`StoreError::Unreachable`]: a connection
//! refused or reset, a node restarting) or failed inside (a
//! [`StoreError::Backend`] error: a cluster between states, "Local shard
//! not found"), a bounded number of times, under a budget that keeps
//! retries from multiplying an outage ([`Budget`], the scheme of gRPC's
//! retry throttling). A server store moves on to the next node within each
//! try; the pauses are here. Every call of the trait is safe to make twice: reads, and
//! writes by id (an upsert or delete made again leaves the same state).
//! Each retry is counted in the service's metrics by its outcome
//! (`trine_store_retries_total{op,outcome}`).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use trine_telemetry::Metrics;
use uuid::Uuid;

use crate::{
    BatchPage, BatchRead, Change, CollectionInfo, CollectionSpec, Counted, Filter, Fold, Hit,
    Keeping, KeptSize, Memory, Point, Query, Result, Scan, ScrollPage, SparseVector, Store,
    StoreError, TermPage,
};

/// Retries after the first attempt, at most.
pub const RETRIES: u32 = 3;
/// The wait before the first retry; each next one waits twice as long
/// (100, 200, 400 ms: 0.7 s in all).
pub const BACKOFF: Duration = Duration::from_millis(100);

/// The retry budget: `tokens` out of [`Budget::MAX`]. A call that could
/// not reach the store takes one; a call that did gives back
/// [`Budget::RATIO`]. Retries are made only while more than half the
/// tokens are left: in a long outage about one call in ten is retried
/// (the ratio), the others fail at their first attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    tokens: f64,
}

impl Default for Budget {
    fn default() -> Self {
        Self { tokens: Self::MAX }
    }
}

impl Budget {
    pub const MAX: f64 = 10.0;
    pub const RATIO: f64 = 0.1;

    /// One attempt's outcome: reached the store or not.
    pub fn record(&mut self, reached: bool) {
        self.tokens = if reached {
            (self.tokens + Self::RATIO).min(Self::MAX)
        } else {
            (self.tokens - 1.0).max(0.0)
        };
    }

    /// Whether a retry may be made now.
    pub fn allows(&self) -> bool {
        self.tokens > Self::MAX / 2.0
    }
}

/// How a retry ended, as the metric's `outcome` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The retry reached the store (whatever its answer).
    Recovered,
    /// The retry could not reach it either.
    Failed,
    /// Not made: the budget was spent.
    Throttled,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Self::Recovered => "recovered",
            Self::Failed => "failed",
            Self::Throttled => "throttled",
        }
    }
}

/// Wraps a store; a call that could not reach it is made again (see the
/// module).
pub struct Retrying {
    inner: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    budget: Mutex<Budget>,
}

/// Whether trying again may answer otherwise.
fn transient(result: &Result<impl Sized>) -> bool {
    matches!(
        result,
        Err(StoreError::Unreachable { .. } | StoreError::Backend(_))
    )
}

impl Retrying {
    pub fn new(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Self {
            inner,
            metrics,
            budget: Mutex::new(Budget::default()),
        }
    }

    fn budget(&self) -> std::sync::MutexGuard<'_, Budget> {
        match self.budget.lock() {
            Ok(budget) => budget,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    async fn retried<T, F, Fut>(&self, op: &str, call: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut result = call().await;
        let mut wait = BACKOFF;
        for attempt in 0..=RETRIES {
            let failed = transient(&result);
            self.budget().record(!failed);
            if attempt > 0 {
                let outcome = if failed {
                    Outcome::Failed
                } else {
                    Outcome::Recovered
                };
                self.metrics.store_retry(op, outcome.name());
            }
            if !failed || attempt == RETRIES {
                break;
            }
            if !self.budget().allows() {
                self.metrics.store_retry(op, Outcome::Throttled.name());
                break;
            }
            tokio::time::sleep(wait).await;
            wait *= 2;
            result = call().await;
        }
        result
    }
}

#[async_trait]
impl Store for Retrying {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn collection(&self) -> &str {
        self.inner.collection()
    }
    async fn ensure_collection(&self, spec: &CollectionSpec) -> Result<CollectionInfo> {
        self.retried("ensure_collection", || self.inner.ensure_collection(spec))
            .await
    }
    async fn info(&self) -> Result<Option<CollectionInfo>> {
        self.retried("info", || self.inner.info()).await
    }
    async fn create_text_index(&self, fold: Fold) -> Result<bool> {
        self.retried("create_text_index", || self.inner.create_text_index(fold))
            .await
    }
    async fn upsert(&self, points: Vec<Point>) -> Result<()> {
        self.retried("upsert", || self.inner.upsert(points.clone()))
            .await
    }
    async fn delete(&self, ids: &[Uuid]) -> Result<()> {
        self.retried("delete", || self.inner.delete(ids)).await
    }
    async fn get(&self, ids: &[Uuid]) -> Result<Vec<Memory>> {
        self.retried("get", || self.inner.get(ids)).await
    }
    async fn count(&self, filter: &Filter) -> Result<u64> {
        self.retried("count", || self.inner.count(filter)).await
    }
    fn counted(&self, filter: &Filter) -> Counted {
        self.inner.counted(filter)
    }
    fn keep_counts(&self) {
        self.inner.keep_counts();
    }
    async fn changes(&self, from: i64, limit: usize) -> Result<Option<Vec<Change>>> {
        self.retried("changes", || self.inner.changes(from, limit))
            .await
    }
    fn keeping(&self) -> Keeping {
        self.inner.keeping()
    }
    fn kept(&self) -> Option<KeptSize> {
        self.inner.kept()
    }
    async fn scroll_terms(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
        source: bool,
    ) -> Result<TermPage> {
        self.retried("scroll_terms", || {
            self.inner.scroll_terms(filter, limit, offset, source)
        })
        .await
    }
    async fn read_batch(&self, reads: &[BatchRead]) -> Result<Vec<BatchPage>> {
        self.retried("read_batch", || self.inner.read_batch(reads))
            .await
    }
    async fn scroll(
        &self,
        filter: &Filter,
        limit: usize,
        offset: Option<Uuid>,
    ) -> Result<ScrollPage> {
        self.retried("scroll", || self.inner.scroll(filter, limit, offset))
            .await
    }
    async fn query(&self, query: Query) -> Result<Vec<Hit>> {
        self.retried("query", || self.inner.query(query.clone()))
            .await
    }
    async fn set_sparse(&self, vectors: Vec<(Uuid, SparseVector)>) -> Result<()> {
        self.retried("set_sparse", || self.inner.set_sparse(vectors.clone()))
            .await
    }
    async fn scan(&self, scope: Scan, limit: usize, offset: Option<Uuid>) -> Result<ScrollPage> {
        self.retried("scan", || self.inner.scan(scope, limit, offset))
            .await
    }
    async fn count_missing_sparse(&self) -> Result<u64> {
        self.retried("count_missing_sparse", || self.inner.count_missing_sparse())
            .await
    }
    async fn optimize(&self) -> Result<()> {
        self.retried("optimize", || self.inner.optimize()).await
    }
    /// Not made again: a backup is long, and its caller sees why it failed.
    async fn backup(&self, dir: &std::path::Path) -> Result<crate::backup::Manifest> {
        self.inner.backup(dir).await
    }
    async fn points(&self, ids: &[Uuid]) -> Result<Vec<Point>> {
        self.retried("points", || self.inner.points(ids)).await
    }
    async fn upgrade(&self) -> Result<Option<u32>> {
        self.retried("upgrade", || self.inner.upgrade()).await
    }
    async fn gateways(
        &self,
        me: &crate::Beat,
        live: std::time::Duration,
    ) -> Result<Option<Vec<crate::Beat>>> {
        self.inner.gateways(me, live).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_stops_retries_in_an_outage_and_refills_on_success() {
        let mut budget = Budget::default();
        // (reached, retry allowed after it)
        let table = [
            (false, true),  // 9
            (false, true),  // 8
            (false, true),  // 7
            (false, true),  // 6
            (false, false), // 5: half, no more retries
            (false, false), // 4
            (true, false),  // 4.1
        ];
        for (i, (reached, allows)) in table.into_iter().enumerate() {
            budget.record(reached);
            assert_eq!(budget.allows(), allows, "step {i}");
        }
        // Successes refill it: about ten calls a retry.
        for _ in 0..10 {
            budget.record(true);
        }
        assert!(budget.allows());
        assert!(budget.tokens <= Budget::MAX);
    }
}

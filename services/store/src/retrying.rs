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

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use trine_telemetry::Metrics;

use crate::{Around, Call, Op, Result, Run, Store, StoreError, Wrapped};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
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
        self.into()
    }
}

/// The hook that makes a call again when the store could not be reached
/// (see the module).
pub struct Retries {
    metrics: Arc<Metrics>,
    budget: Mutex<Budget>,
}

/// A store whose calls are made again when it could not be reached (see
/// the module).
pub type Retrying = Wrapped<Retries>;

impl Retrying {
    pub fn new(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Wrapped::with(
            inner,
            Retries {
                metrics,
                budget: Mutex::new(Budget::default()),
            },
        )
    }
}

/// Whether trying again may answer otherwise.
fn transient(result: &Result<impl Sized>) -> bool {
    matches!(
        result,
        Err(StoreError::Unreachable { .. } | StoreError::Backend(_))
    )
}

impl Retries {
    fn budget(&self) -> std::sync::MutexGuard<'_, Budget> {
        match self.budget.lock() {
            Ok(budget) => budget,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[async_trait]
impl Around for Retries {
    /// A backup is not made again (it is long, and its caller sees why it
    /// failed), nor a gateway's heartbeat (the next beat is the retry).
    async fn around<'a, T: Send + 'a>(&'a self, call: Call, run: &'a Run<'a, T>) -> Result<T> {
        if matches!(call.op, Op::Backup | Op::Gateways) {
            return run().await;
        }
        let op = call.op.name();
        let mut result = run().await;
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
            result = run().await;
        }
        result
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

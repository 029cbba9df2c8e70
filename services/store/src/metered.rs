//! A [`Store`] that times every call into a service's metrics
//! (`trine_store_duration_seconds{op}`).

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use trine_telemetry::Metrics;

use crate::{Around, Call, Counted, Filter, Op, Result, Run, Store, Wrapped};

/// The hook that times each call of a store under its label.
pub struct Timing {
    metrics: Arc<Metrics>,
}

/// A store whose calls are timed (see the module).
pub type Metered = Wrapped<Timing>;

impl Metered {
    pub fn new(inner: Arc<dyn Store>, metrics: Arc<Metrics>) -> Self {
        Wrapped::with(inner, Timing { metrics })
    }
}

#[async_trait]
impl Around for Timing {
    /// Each call timed, retries included, but the change journal's reads
    /// (a keeper's poll, not a service's work).
    async fn around<'a, T: Send + 'a>(&'a self, call: Call, run: &'a Run<'a, T>) -> Result<T> {
        if call.op == Op::Changes {
            return run().await;
        }
        let started = Instant::now();
        let out = run().await;
        self.metrics.store(call.label, started.elapsed());
        out
    }

    /// Timed as `counted` where the statistics answered (a count the store
    /// did not have to make), not timed where they did not (then the caller
    /// counts, timed as `count`).
    fn counted<'s>(&'s self, inner: &'s Arc<dyn Store>, filter: &Filter) -> Counted {
        let started = Instant::now();
        let counted = inner.counted(filter);
        if let Counted::Exact(_) = counted {
            self.metrics.store("counted", started.elapsed());
        }
        counted
    }
}

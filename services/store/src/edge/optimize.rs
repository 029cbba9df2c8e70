//! The shard's optimization started by writes: past a number of points
//! written since the last ([`OPTIMIZE_AFTER`]), one runs in the background
//! on a thread of its own, and what a caller watches of it.

use super::*;

impl EdgeStore {
    /// Starts an optimization in the background once `points` have been
    /// written since the last ([`OPTIMIZE_AFTER`] by default; 0: never).
    pub fn with_optimize_after(self, points: u64) -> Self {
        self.inner.optimize_after.store(points, Ordering::Relaxed);
        self
    }

    /// Points written since the shard was last optimized.
    pub fn unoptimized(&self) -> u64 {
        self.inner
            .opened()
            .map_or(0, |open| open.unoptimized.load(Ordering::Acquire))
    }

    /// Whether an optimization started by writes is running.
    pub fn optimizing(&self) -> bool {
        self.inner
            .opened()
            .is_ok_and(|open| *open.optimizing.borrow())
    }

    /// [`EdgeStore::optimizing`] now and as it changes; `None` before the
    /// collection exists.
    pub fn optimizing_changes(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        let open = self.inner.opened().ok()?;
        Some(open.optimizing.subscribe())
    }

    /// `n` points were written: past the threshold, an optimization starts
    /// on a thread of its own at the search threads' lower priority, holding
    /// the maintenance lock and a duplicate of the collection's lock (so no
    /// other process opens the shard before it ends, even if this store is
    /// dropped meanwhile). Searches and writes go on.
    pub(super) fn written(&self, n: u64) {
        let after = self.inner.optimize_after.load(Ordering::Relaxed);
        let Ok(open) = self.inner.opened() else {
            return;
        };
        let total = open.unoptimized.fetch_add(n, Ordering::AcqRel) + n;
        if after == 0 || total < after || open.optimizing.send_replace(true) {
            return;
        }
        let held = self
            .inner
            .state()
            .lock
            .as_ref()
            .and_then(|lock| lock.try_clone().ok());
        let name = self.inner.name.clone();
        let started = std::thread::Builder::new()
            .name("edge-optimize".to_string())
            .spawn(move || {
                schema::below_services_here("the background optimization");
                let began = std::time::Instant::now();
                let optimized = {
                    let _maintenance = locked(&open.maintenance);
                    open.unoptimized.store(0, Ordering::Release);
                    open.shard
                        .optimize()
                        .and_then(|_| open.shard.flush())
                        .map_err(backend)
                };
                match optimized {
                    Ok(()) => tracing::info!(
                        collection = %name,
                        points = total,
                        seconds = began.elapsed().as_secs_f64(),
                        "the shard was optimized after the points written since the last time"
                    ),
                    Err(e) => tracing::warn!(collection = %name, error = %e, "a background optimization failed; the next writes start another"),
                }
                open.optimizing.send_replace(false);
                drop(held);
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "cannot start the background optimization");
            if let Ok(open) = self.inner.opened() {
                open.optimizing.send_replace(false);
            }
        }
    }
}

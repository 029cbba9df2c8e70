//! A store whose statistics a test holds back: [`Gated`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use async_trait::async_trait;
use tokio::sync::watch;
use trine_core::model::Filter;
use trine_store::{Around, Call, Counted, Keeping, KeptSize, Op, Result, Run, Store, Wrapped};

/// A real store (every call goes to it) whose document frequencies read as
/// still being built until [`Gate::open`]: what a server sees in the
/// seconds after it starts over a large collection, held for as long as a
/// test needs. It also counts the counts that went to the store, and can
/// hold its queries ([`Gate::stall`]): a store that stops answering. The
/// gate is its hook: `gated.hook().open()`.
pub type Gated = Wrapped<Gate>;

/// `inner`, its statistics held back ([`Gated`]).
pub fn gated(inner: Arc<dyn Store>) -> Arc<Gated> {
    Arc::new(Wrapped::with(
        inner,
        Gate {
            held: AtomicBool::new(true),
            reads: AtomicU64::new(0),
            stalled: watch::Sender::new(false),
            waiting: watch::Sender::new(0),
        },
    ))
}

/// What [`Gated`] holds back, and how a test opens it.
pub struct Gate {
    held: AtomicBool,
    reads: AtomicU64,
    /// True: every `query` waits until it turns false.
    stalled: watch::Sender<bool>,
    /// The queries waiting now; a test waits on its changes.
    waiting: watch::Sender<u64>,
}

impl Gate {
    /// Every `query` from now on waits, unanswered, until [`Gate::release`].
    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }

    /// The waiting queries go on, and the next ones are answered.
    pub fn release(&self) {
        self.stalled.send_replace(false);
    }

    /// How many queries wait now.
    pub fn waiting(&self) -> u64 {
        *self.waiting.borrow()
    }

    /// Returns once at least `n` queries wait (at once, when the query
    /// that makes them `n` begins to wait: no polling).
    pub async fn until_waiting(&self, n: u64) {
        let mut waiting = self.waiting.subscribe();
        // An error: the sender is gone, which `&self` rules out.
        let _ = waiting.wait_for(|w| *w >= n).await;
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
impl Around for Gate {
    /// Counts are counted; a query waits while the store is stalled.
    async fn around<'a, T: Send + 'a>(&'a self, call: Call, run: &'a Run<'a, T>) -> Result<T> {
        match call.op {
            Op::Count => {
                self.reads.fetch_add(1, Ordering::SeqCst);
            }
            Op::Query => {
                let mut stalled = self.stalled.subscribe();
                if *stalled.borrow() {
                    self.waiting.send_modify(|w| *w += 1);
                    // An error: the sender is gone with the store; answer then.
                    let _ = stalled.wait_for(|s| !*s).await;
                    self.waiting.send_modify(|w| *w -= 1);
                }
            }
            _ => {}
        }
        run().await
    }
    fn counted<'s>(&'s self, inner: &'s Arc<dyn Store>, filter: &Filter) -> Counted {
        if self.held() {
            return Counted::Later;
        }
        inner.counted(filter)
    }
    fn kept<'s>(&'s self, inner: &'s Arc<dyn Store>) -> Option<KeptSize> {
        if self.held() {
            return None;
        }
        inner.kept()
    }
    fn keeping<'s>(&'s self, inner: &'s Arc<dyn Store>) -> Keeping {
        if self.held() {
            return Keeping::Building;
        }
        inner.keeping()
    }
}

//! The document frequencies an open shard keeps ([`Frequencies`]), so that
//! the `candidates` counts need no read ([`Store::counted`]).
//!
//! They are built from the shard on a thread of their own, below the
//! services' priority, when a count first asks for them — not when the shard
//! opens: `trine ingest` and one-shot commands never pay for them — and then
//! every write keeps them up to date.
//!
//! Exact by construction: every write runs under the writes lock and moves
//! the epoch. A build whose scan a write overlapped (the epoch moved) is
//! thrown away, and a count at least [`RETRY`] later starts another; so the
//! statistics are those of a scan no write overlapped, and then each write,
//! in order, with the versions it replaced taken out (read under the writes
//! lock just before it) and its own put in. A write that did not read what it
//! replaced (it began before the statistics were ready) or that failed drops
//! them: counts go to the store until the next build. Statistics are kept
//! only for the text index trine creates on its own layout
//! ([`schema::trines_text_index`]), where trine's split is the index's.

use std::sync::{Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use trine_core::Frequencies;

use super::*;

/// The least time between the end of a build that did not finish and the
/// start of the next: under a steady stream of writes, builds are thrown
/// away and counts go to the store.
const RETRY: Duration = Duration::from_secs(5);

/// Points a build reads at once.
const PAGE: usize = 4_096;

/// The statistics of one open shard, and the lock that orders its writes.
pub(super) struct Kept {
    state: Mutex<State>,
    writes: Mutex<()>,
}

struct State {
    status: Status,
    /// Moves with every write.
    epoch: u64,
}

enum Status {
    /// Not built: a count starts a build, [`RETRY`] after the last one
    /// ended at the earliest.
    Unkept {
        ended: Option<Instant>,
    },
    Building,
    Ready(Frequencies),
    /// The text index is not trine's own: the store counts.
    Off,
}

/// A write in progress: holds the writes lock; `ready` says whether the
/// statistics were ready when it began (then it reads what it replaces).
pub(super) struct Writing<'a> {
    _order: MutexGuard<'a, ()>,
    pub(super) ready: bool,
}

impl Default for Kept {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                status: Status::Unkept { ended: None },
                epoch: 0,
            }),
            writes: Mutex::new(()),
        }
    }
}

impl Kept {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every update leaves `State` whole: recover it from a panic elsewhere.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The count of `filter` where the statistics decide it; and whether the
    /// caller is to start a build ([`start`]), which this marks as begun.
    pub(super) fn count(&self, filter: &Filter) -> (Counted, bool) {
        let mut state = self.state();
        match &state.status {
            Status::Ready(frequencies) => {
                let count = frequencies
                    .count(filter)
                    .map_or(Counted::No, Counted::Exact);
                (count, false)
            }
            Status::Unkept { ended } if ended.is_none_or(|at| at.elapsed() >= RETRY) => {
                state.status = Status::Building;
                (Counted::Later, true)
            }
            Status::Building => (Counted::Later, false),
            Status::Unkept { .. } | Status::Off => (Counted::No, false),
        }
    }

    /// Begins a write: takes the writes lock.
    pub(super) fn writing(&self) -> Writing<'_> {
        let order = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        let ready = matches!(self.state().status, Status::Ready(_));
        Writing {
            _order: order,
            ready,
        }
    }

    /// A write is done (`Ok`) or failed (`Err`). Done: `replaced` are the
    /// versions it replaced, read as it began (`None`: not read), `written`
    /// the memories it wrote.
    pub(super) fn written(
        &self,
        _writing: &Writing<'_>,
        outcome: std::result::Result<(Option<&[Memory]>, &[Memory]), ()>,
    ) {
        let mut state = self.state();
        state.epoch = state.epoch.wrapping_add(1);
        let Status::Ready(frequencies) = &mut state.status else {
            return;
        };
        match outcome {
            Ok((Some(replaced), written)) => {
                for memory in replaced {
                    frequencies.remove(memory);
                }
                for memory in written {
                    frequencies.add(memory);
                }
            }
            Ok((None, _)) | Err(()) => state.status = Status::Unkept { ended: None },
        }
    }

    /// The index changed (or may have): statistics made for the old one are
    /// dropped, and the next count starts a build.
    pub(super) fn reset(&self, _writing: &Writing<'_>) {
        let mut state = self.state();
        state.epoch = state.epoch.wrapping_add(1);
        state.status = Status::Unkept { ended: None };
    }

    fn epoch(&self) -> u64 {
        self.state().epoch
    }

    /// A build ends: `Some` statistics scanned while the epoch stayed at
    /// `epoch`, or `None` (thrown away, failed, or an index that is not
    /// trine's: `off`).
    fn ended(&self, epoch: u64, built: Option<Frequencies>, off: bool) -> bool {
        let mut state = self.state();
        if !matches!(state.status, Status::Building) {
            return false;
        }
        state.status = match built {
            Some(frequencies) if state.epoch == epoch => Status::Ready(frequencies),
            _ if off => Status::Off,
            _ => Status::Unkept {
                ended: Some(Instant::now()),
            },
        };
        matches!(state.status, Status::Ready(_))
    }
}

/// Starts building the statistics of `open` on a thread of its own; the
/// thread holds the shard only while it reads a page, and stops when the
/// store has closed it.
pub(super) fn start(open: &Arc<Open>) {
    let open = Arc::downgrade(open);
    let spawned = std::thread::Builder::new()
        .name("trine-frequencies".to_string())
        .spawn(move || {
            schema::below_services_here("building the document frequencies");
            build(&open);
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start a thread to build the document frequencies; counts go to the store");
    }
}

fn build(open: &Weak<Open>) {
    let started = Instant::now();
    let Some(first) = open.upgrade() else {
        return;
    };
    let epoch = first.kept.epoch();
    let fold = match first.shard.info() {
        Ok(info) => schema::trines_text_index(&info, &first.schema),
        Err(e) => {
            tracing::warn!(error = %e, "reading the shard's indexes failed; counts go to the store");
            first.kept.ended(epoch, None, false);
            return;
        }
    };
    let Some(fold) = fold else {
        tracing::info!("the text index is not the one trine creates: counts go to the store");
        first.kept.ended(epoch, None, true);
        return;
    };
    drop(first);
    let mut frequencies = Frequencies::new(fold);
    let mut offset = None;
    loop {
        let Some(open) = open.upgrade() else {
            return;
        };
        if open.kept.epoch() != epoch {
            tracing::debug!("a write overlapped the document frequencies' scan: thrown away");
            open.kept.ended(epoch, None, false);
            return;
        }
        let page = match open.scan_for_frequencies(PAGE, offset) {
            Ok(page) => page,
            Err(e) => {
                tracing::warn!(error = %e, "building the document frequencies failed; counts go to the store");
                open.kept.ended(epoch, None, false);
                return;
            }
        };
        for memory in &page.memories {
            frequencies.add(memory);
        }
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => {
                let (points, tenants, entries) = (
                    frequencies.points(),
                    frequencies.tenants(),
                    frequencies.entries(),
                );
                if open.kept.ended(epoch, Some(frequencies), false) {
                    tracing::info!(
                        points,
                        tenants,
                        terms = entries,
                        seconds = started.elapsed().as_secs_f64(),
                        "document frequencies built: counts need no read"
                    );
                }
                return;
            }
        }
    }
}

//! The document frequencies an open shard keeps ([`Frequencies`]), so that
//! the `candidates` counts need no read ([`Store::counted`]).
//!
//! They are built from the shard on a thread of their own, below the
//! services' priority, when a count first asks for them or a server says it
//! will ask ([`Store::keep_counts`]) — not when the shard opens: `trine
//! ingest` and one-shot commands never pay for them — and then every write
//! keeps them up to date.
//!
//! Exact by construction, with writes going on: every write runs under the
//! writes lock, and so does each page the build reads (in ascending id
//! order), after which the build's bound is where the next page starts:
//! every id below it has been read. A write reads the versions it replaces
//! under that lock, and applies itself (those versions out, its own in) to
//! the statistics when they are ready, and while they are built to the ids
//! below the bound: the pages still to read will hold the others as they
//! are. (The bound is the next page's first id, not the last id read: a
//! point written between the two would otherwise be in neither.) So a write waits for at most one page
//! read (4,096 points), and the build finishes under any stream of writes. A
//! write that failed drops them: counts go to the store until a count starts
//! the next build ([`RETRY`] later at the earliest). Statistics are kept
//! only for the text index trine creates on its own layout
//! ([`schema::trines_text_index`]), where trine's split is the index's, and
//! the ids compared with the bound are the UUIDs trine writes.

use std::sync::{Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use trine_core::{Document, Frequencies};

use super::*;

/// The least time between the end of a build that did not finish and the
/// start of the next.
const RETRY: Duration = Duration::from_secs(5);

/// Points a build reads at once: what a write may have to wait for (a few
/// in unit tests, so that writes land between pages).
const PAGE: usize = if cfg!(test) { 8 } else { 4_096 };

/// The statistics of one open shard, and the lock that orders its writes.
pub(super) struct Kept {
    state: Mutex<State>,
    writes: Mutex<()>,
    /// [`Kept::keeping`] as it changes, told as each change is made (the
    /// state's guard tells it when dropped): what a caller waits on.
    keeping: tokio::sync::watch::Sender<Keeping>,
}

/// The state, locked; tells what it became when dropped.
struct Locked<'a> {
    state: MutexGuard<'a, State>,
    keeping: &'a tokio::sync::watch::Sender<Keeping>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let now = keeping_of(&self.state.status);
        self.keeping.send_if_modified(|was| {
            let changed = *was != now;
            *was = now;
            changed
        });
    }
}

fn keeping_of(status: &Status) -> Keeping {
    match status {
        Status::Ready(_) => Keeping::Ready,
        Status::Building(_) => Keeping::Building,
        Status::Unkept { .. } | Status::Off => Keeping::Not,
    }
}

struct State {
    status: Status,
    /// Numbers the builds: a build that finds another under way stops.
    builds: u64,
}

enum Status {
    /// Not built: a count starts a build, [`RETRY`] after the last one
    /// ended at the earliest.
    Unkept {
        ended: Option<Instant>,
    },
    Building(Build),
    Ready(Frequencies),
    /// The text index is not trine's own: the store counts.
    Off,
}

struct Build {
    number: u64,
    /// What is read so far, behind a lock of its own: adding a page takes
    /// long, and a count (which only asks whether the build is done) must
    /// not wait for it.
    read: Arc<Mutex<Read>>,
}

#[derive(Default)]
struct Read {
    /// Unset until the build has checked the index.
    frequencies: Option<Frequencies>,
    /// Every id below it is read (where the next page starts); `None`:
    /// nothing read yet.
    bound: Option<Uuid>,
}

/// A write in progress: holds the writes lock; `reads` says whether it is
/// to read what it replaces (statistics ready or being built).
pub(super) struct Writing<'a> {
    _order: MutexGuard<'a, ()>,
    pub(super) reads: bool,
}

impl Default for Kept {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                status: Status::Unkept { ended: None },
                builds: 0,
            }),
            writes: Mutex::new(()),
            keeping: tokio::sync::watch::Sender::new(Keeping::Not),
        }
    }
}

impl Kept {
    fn state(&self) -> Locked<'_> {
        Locked {
            state: locked(&self.state),
            keeping: &self.keeping,
        }
    }

    /// [`Kept::keeping`] now and as it changes.
    pub(super) fn keeping_changes(&self) -> tokio::sync::watch::Receiver<Keeping> {
        self.keeping.subscribe()
    }

    fn order(&self) -> MutexGuard<'_, ()> {
        locked(&self.writes)
    }

    /// The count of `filter` where the statistics decide it; and the number
    /// of a build the caller is to start ([`start`]), marked as begun.
    pub(super) fn count(&self, filter: &Filter) -> (Counted, Option<u64>) {
        let mut state = self.state();
        if let Status::Ready(frequencies) = &state.status {
            let count = frequencies
                .count(filter)
                .map_or(Counted::No, Counted::Exact);
            return (count, None);
        }
        match new_build(&mut state) {
            Some(number) => (Counted::Later, Some(number)),
            None if matches!(state.status, Status::Building(_)) => (Counted::Later, None),
            None => (Counted::No, None),
        }
    }

    /// The number of a build the caller is to start ([`start`]) now, marked
    /// as begun; `None` where they are built, being built or not to be.
    pub(super) fn build_now(&self) -> Option<u64> {
        new_build(&mut self.state())
    }

    /// `read` of the statistics, once built; `None` until then.
    fn ready<T>(&self, read: impl FnOnce(&Frequencies) -> T) -> Option<T> {
        match &self.state().status {
            Status::Ready(frequencies) => Some(read(frequencies)),
            _ => None,
        }
    }

    /// `query` weighted by the IDF of its dimensions over the tenant's
    /// points ([`Frequencies::idf_weighted`]); `None` until the statistics
    /// are built.
    pub(super) fn idf_weighted(&self, tenant: &str, query: &SparseVector) -> Option<SparseVector> {
        self.ready(|frequencies| frequencies.idf_weighted(tenant, query))
    }

    /// A term read answered from the postings, where they decide it
    /// ([`Frequencies::term_page`]); `None` until the statistics are built.
    pub(super) fn term_page(
        &self,
        filter: &Filter,
        offset: Option<Uuid>,
        limit: usize,
    ) -> Option<trine_core::postings::Page> {
        self.ready(|frequencies| frequencies.term_page(filter, offset, limit))
            .flatten()
    }

    /// The places of `tops` and the messages around them, where the
    /// postings decide the filter ([`Frequencies::around`]); `None` until
    /// the statistics are built.
    pub(super) fn around(
        &self,
        filter: &Filter,
        tops: &[Uuid],
        window: u64,
        limit: usize,
    ) -> Option<crate::Nearby> {
        self.ready(|frequencies| frequencies.around(filter, tops, window, limit))
            .flatten()
    }

    /// Whether the postings show that no point within `filter` holds its
    /// phrase ([`Frequencies::holds_no_phrase`]); false until built.
    pub(super) fn holds_no_phrase(&self, filter: &Filter) -> bool {
        self.ready(|frequencies| frequencies.holds_no_phrase(filter))
            .unwrap_or(false)
    }

    /// The statistics' size, once built.
    pub(super) fn size(&self) -> Option<crate::KeptSize> {
        self.ready(crate::KeptSize::of)
    }

    /// Whether the statistics are built, being built, or neither.
    pub(super) fn keeping(&self) -> Keeping {
        keeping_of(&self.state().status)
    }

    /// Whether a build has begun or ended with statistics.
    #[cfg(test)]
    pub(super) fn begun(&self) -> bool {
        matches!(self.state().status, Status::Building(_) | Status::Ready(_))
    }

    /// Begins a write: takes the writes lock.
    pub(super) fn writing(&self) -> Writing<'_> {
        let order = self.order();
        let reads = matches!(self.state().status, Status::Ready(_) | Status::Building(_));
        Writing {
            _order: order,
            reads,
        }
    }

    /// A write is done (`Ok`) or failed (`Err`). Done: `replaced` are the
    /// versions it replaced, read as it began (`None`: not read), `written`
    /// the memories it wrote.
    pub(super) fn written(
        &self,
        _writing: &Writing<'_>,
        outcome: std::result::Result<(Option<&[Document]>, &[Document]), ()>,
    ) {
        let mut state = self.state();
        let dropped = match (&mut state.status, outcome) {
            (Status::Ready(frequencies), Ok((Some(replaced), written))) => {
                apply(frequencies, replaced, written, |_| true);
                false
            }
            (Status::Building(build), Ok((replaced, written))) => {
                // The build's pages are read under the writes lock this
                // write holds: the bound stands still meanwhile.
                let read = build.read.clone();
                drop(state);
                let mut read = locked(&read);
                let Read { frequencies, bound } = &mut *read;
                let dropped = match (frequencies, *bound, replaced) {
                    // Nothing read yet: the pages will hold this write.
                    (_, None, _) => false,
                    (Some(frequencies), Some(bound), Some(replaced)) => {
                        apply(frequencies, replaced, written, |id| id < bound);
                        false
                    }
                    _ => true,
                };
                drop(read);
                state = self.state();
                dropped
            }
            (Status::Ready(_) | Status::Building(_), _) => true,
            (Status::Unkept { .. } | Status::Off, _) => false,
        };
        if dropped {
            state.status = Status::Unkept {
                ended: Some(Instant::now()),
            };
        }
    }

    /// The index changed (or may have): statistics made for the old one, or
    /// being made, are dropped, and the next count starts a build.
    pub(super) fn reset(&self, _writing: &Writing<'_>) {
        self.state().status = Status::Unkept { ended: None };
    }
}

/// Marks a build as begun where none is kept, being built or ended within
/// [`RETRY`], and returns its number.
fn new_build(state: &mut State) -> Option<u64> {
    match &state.status {
        Status::Unkept { ended } if ended.is_none_or(|at| at.elapsed() >= RETRY) => {
            state.builds += 1;
            let number = state.builds;
            state.status = Status::Building(Build {
                number,
                read: Arc::default(),
            });
            Some(number)
        }
        _ => None,
    }
}

/// Counts out the `replaced` versions and in the `written` ones, of the ids
/// `within` takes.
fn apply(
    frequencies: &mut Frequencies,
    replaced: &[Document],
    written: &[Document],
    within: impl Fn(Uuid) -> bool,
) {
    frequencies.remove_all(replaced.iter().filter(|d| within(d.memory.id)));
    frequencies.add_all(written.iter().filter(|d| within(d.memory.id)));
}

/// Starts build `number` of the statistics of `open` on a thread of its
/// own; the thread holds the shard only while it reads a page, and stops
/// when the store has closed it or another build has begun.
pub(super) fn start(open: &Arc<Open>, number: u64) {
    let open = Arc::downgrade(open);
    let spawned = std::thread::Builder::new()
        .name("trine-frequencies".to_string())
        .spawn(move || {
            schema::below_services_here("building the document frequencies");
            build(&open, number);
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start a thread to build the document frequencies; counts go to the store");
    }
}

/// What a build does next.
enum Next {
    Read(Option<Uuid>),
    Stop,
}

fn build(open: &Weak<Open>, number: u64) {
    let started = Instant::now();
    let Some(first) = open.upgrade() else {
        return;
    };
    let (fold, sources) = match first.shard.info() {
        Ok(info) => {
            let fold = schema::trines_text_index(&info, &first.schema);
            let sources =
                fold.is_some_and(|fold| schema::trines_source_index(&info, &first.schema, fold));
            (fold, sources)
        }
        Err(e) => {
            tracing::warn!(error = %e, "reading the shard's indexes failed; counts go to the store");
            first.kept.end(number, None);
            return;
        }
    };
    let Some(fold) = fold else {
        tracing::info!("the text index is not the one trine creates: counts go to the store");
        first.kept.end(number, Some(Status::Off));
        return;
    };
    if !first.kept.begin(number, fold, sources) {
        return;
    }
    drop(first);
    let mut offset = None;
    loop {
        let Some(open) = open.upgrade() else {
            return;
        };
        match open.kept.page(&open, number, offset, started) {
            Next::Read(next) => offset = next,
            Next::Stop => return,
        }
    }
}

impl Kept {
    /// The build `number` has checked the index: it counts with `fold`.
    /// False: another build has begun, or the statistics were dropped.
    fn begin(&self, number: u64, fold: Fold, sources: bool) -> bool {
        match &self.state().status {
            Status::Building(build) if build.number == number => {
                locked(&build.read).frequencies = Some(Frequencies::with_postings(fold, sources));
                true
            }
            _ => false,
        }
    }

    /// Build `number` ends without statistics: `Off`, or to be tried again.
    fn end(&self, number: u64, status: Option<Status>) {
        let mut state = self.state();
        if matches!(&state.status, Status::Building(b) if b.number == number) {
            state.status = status.unwrap_or(Status::Unkept {
                ended: Some(Instant::now()),
            });
        }
    }

    /// Reads the page of build `number` from `offset` under the writes lock,
    /// counts it in and moves the bound to the next page's first id; the
    /// last page makes the statistics ready.
    fn page(&self, open: &Open, number: u64, offset: Option<Uuid>, started: Instant) -> Next {
        let _order = self.order();
        let read = match &self.state().status {
            Status::Building(build) if build.number == number => build.read.clone(),
            _ => return Next::Stop,
        };
        let (documents, next_offset) = match open.scan_for_frequencies(PAGE, offset) {
            Ok(page) => page,
            Err(e) => {
                tracing::warn!(error = %e, "building the document frequencies failed; counts go to the store");
                self.end(number, None);
                return Next::Stop;
            }
        };
        // Counted in under the build's own lock: counts meanwhile see
        // `Later` without waiting.
        let mut read = locked(&read);
        let Some(frequencies) = read.frequencies.as_mut() else {
            return Next::Stop;
        };
        frequencies.add_all(&documents);
        if next_offset.is_some() {
            read.bound = next_offset;
            return Next::Read(next_offset);
        }
        let Some(mut frequencies) = read.frequencies.take() else {
            return Next::Stop;
        };
        frequencies.shrink();
        drop(read);
        let mut state = self.state();
        if !matches!(&state.status, Status::Building(b) if b.number == number) {
            return Next::Stop;
        }
        tracing::info!(
            points = frequencies.points(),
            tenants = frequencies.tenants(),
            terms = frequencies.entries(),
            postings = frequencies.postings(),
            seconds = started.elapsed().as_secs_f64(),
            "document frequencies built: counts need no read"
        );
        state.status = Status::Ready(frequencies);
        Next::Stop
    }
}

/// The kept postings' answers as the store gives them.
impl EdgeStore {
    /// A term read answered from the kept postings, where they decide it
    /// (statistics built; a plain filter: [`trine_core::Frequencies::term_page`]),
    /// without sources: the same points, vectors and next offset as the
    /// shard's scroll.
    pub(super) fn kept_page(
        &self,
        filter: &Filter,
        offset: Option<Uuid>,
        limit: usize,
    ) -> Option<TermPage> {
        if filter.tenant.trim().is_empty() {
            return None;
        }
        let page = self
            .inner
            .opened()
            .ok()?
            .kept
            .term_page(filter, offset, limit)?;
        Some(TermPage {
            points: page
                .points
                .into_iter()
                .map(|p| TermPoint {
                    id: p.id,
                    source: None,
                    tf: p.sparse,
                })
                .collect(),
            next_offset: page.next,
        })
    }

    /// Whether the kept postings show that no point within `filter` holds
    /// its phrase: its read is empty without a store call.
    pub(super) fn phrase_absent(&self, filter: &Filter) -> bool {
        !filter.tenant.trim().is_empty()
            && self
                .inner
                .opened()
                .is_ok_and(|open| open.kept.holds_no_phrase(filter))
    }
}

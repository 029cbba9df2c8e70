//! [`Tracked`]: the per-tenant document frequencies of a collection that
//! other processes write, and each token's points (the postings), kept in
//! this one — so that a count of the tenant or of one term
//! ([`Store::counted`]), and the candidates' term reads
//! ([`Store::kept_terms`], [`Store::holds_no_phrase`]), are no server call
//! on a server store too.
//!
//! Built from a scan of the collection when [`Store::keep_counts`] asks,
//! then kept current from the store's change journal ([`Store::changes`]):
//! every write trine makes to a server collection, from any process, is
//! journaled (its ids) once it has landed. Every [`POLL`] the keeper reads
//! the entries since its cursor (less [`OVERLAP`], for writers whose clocks
//! or journal appends lag; an entry is applied once, by its key), reads
//! those points again and counts the version it had counted out and the
//! current one in. Re-reading instead of trusting a delta makes it right
//! whatever the order the writes landed in, and whichever process made
//! them: the statistics converge on what the collection holds, at most one
//! poll (and the journal append) behind a write.
//!
//! So that a changed point's old version can be counted out, the keeper
//! remembers what it counted of each point ([`Tally`]: tenant, validity
//! bound, distinct tokens; about the tokens' bytes, see
//! [`Tracked::kept_bytes`]). The scan starts after the cursor is set, so a
//! write landing during the build is re-read after it. Statistics are kept
//! only where the collection has a text index trine's split agrees with; a
//! keeper that falls further behind than the journal's retention, cannot
//! build, or finds the text index folding otherwise (an upgrade: `trine
//! text-index`) drops them (counts go to the store) and builds them again.
//!
//! Writes made around trine (another tool writing the collection) are not
//! journaled and are not seen: the collection is trine's to write.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use trine_core::model::{Filter, Memory, SparseVector, TermPage, TermPoint};
use trine_core::sparse::encode_text;
use trine_core::{Fold, Frequencies, Tally};
use uuid::Uuid;

use crate::server::{RETENTION, micros, now_micros};
use crate::{
    Around, Call, Change, Counted, Keeping, KeptSize, Op, Result, Run, Scan, Store, StoreError,
    Wrapped,
};

/// How often the journal is read.
pub const POLL: Duration = Duration::from_millis(200);
/// Why the keeper waits: no collection yet.
const NOT_MADE: &str = "the collection does not exist yet";
/// How long a write through the keeper's store waits for it to count the
/// write ([`Shared::caught_up`]).
const WRITE_WAIT: Duration = Duration::from_secs(2);
/// How far before its cursor the keeper reads the journal again.
const OVERLAP: Duration = Duration::from_secs(10);
/// Points scanned at once while building; journal entries read at once.
const PAGE: usize = 1_024;
/// Ids read again at once.
const REREAD: usize = 256;
/// The largest page a kept read answers: a server's scroll takes no more.
const MAX_READ: usize = u32::MAX as usize;
/// The least time between a failed build and the next.
const RETRY: Duration = Duration::from_secs(5);
/// Every so many polls the text index is looked at again: one folded
/// otherwise (`trine text-index --stemmer`) makes the statistics rebuilt.
const INDEX_EVERY: u32 = 25;

/// The hook that keeps a store's document frequencies in this process,
/// hearing of every trine write through the store's change journal (see
/// the module).
pub struct Keeper {
    shared: Arc<Shared>,
}

/// A store whose document frequencies this process keeps (see the module).
pub type Tracked = Wrapped<Keeper>;

struct Shared {
    state: Mutex<State>,
    /// The keeper's clock (µs) when the last read of the journal it
    /// applied began: every write journaled before it is counted.
    applied: tokio::sync::watch::Sender<i64>,
    /// Wakes the keeper to read the journal now: a write through this store.
    poke: tokio::sync::Notify,
}

enum State {
    Unkept,
    /// The first build: a lexical-svc answers no search meanwhile.
    Building,
    /// Built before, dropped, being built again: counts go to the store
    /// meanwhile, and the service keeps answering.
    Rebuilding,
    Ready(Book),
    /// No text index, or no journal: counts go to the store.
    Off,
}

/// What the keeper knows: the statistics with each token's points (and
/// each source token's), what it counted of each point, and each point's
/// source (what a term read that brings sources hands out).
struct Book {
    frequencies: Frequencies,
    points: HashMap<Uuid, Tally>,
    sources: HashMap<Uuid, Box<str>>,
    bytes: usize,
}

impl Book {
    fn new(fold: Fold) -> Self {
        Self {
            frequencies: Frequencies::with_postings(fold, true),
            points: HashMap::new(),
            sources: HashMap::new(),
            bytes: 0,
        }
    }

    /// Each of `changes` is now its memory (`None`: deleted): the versions
    /// counted before out, the new ones in, each list in one merge. A
    /// point's vector is the one trine writes of its text under the index's
    /// fold (`sparse::encode_text`), so a term read answered here brings the
    /// counts the server's read would: the stored vector, or for a point
    /// written without one, its text's (which a read would fetch).
    fn set_all(&mut self, changes: &[(Uuid, Option<Memory>)]) {
        let old: Vec<Tally> = changes
            .iter()
            .filter_map(|(id, _)| self.points.remove(id))
            .collect();
        self.frequencies
            .remove_tallies(&old.iter().collect::<Vec<_>>());
        for (id, _) in changes {
            self.bytes -= self.sources.remove(id).map_or(0, |s| s.len());
        }
        self.bytes -= old.iter().map(Tally::bytes).sum::<usize>();
        let fold = self.frequencies.fold();
        let new: Vec<(&Memory, Tally, SparseVector)> = changes
            .iter()
            .filter_map(|(_, memory)| memory.as_ref())
            .map(|m| (m, self.frequencies.tally(m), encode_text(&m.text, fold)))
            .collect();
        let counted: Vec<(&Tally, Option<&SparseVector>)> =
            new.iter().map(|(_, t, v)| (t, Some(v))).collect();
        self.frequencies.add_tallies(&counted);
        for (memory, tally, vector) in new {
            self.bytes += tally.bytes() + vector.indices.len() * VECTOR_ENTRY;
            self.points.insert(memory.id, tally);
            if let Some(source) = &memory.source {
                self.bytes += source.len();
                self.sources.insert(memory.id, source.as_str().into());
            }
        }
    }

    /// A term read from the postings, where they decide it.
    fn term_page(
        &self,
        filter: &Filter,
        offset: Option<Uuid>,
        limit: usize,
        source: bool,
    ) -> Option<TermPage> {
        let page = self.frequencies.term_page(filter, offset, limit)?;
        let points = page.points.into_iter().map(|p| TermPoint {
            source: source
                .then(|| self.sources.get(&p.id).map(|s| s.to_string()))
                .flatten(),
            id: p.id,
            tf: p.sparse,
        });
        Some(TermPage {
            points: points.collect(),
            next_offset: page.next,
        })
    }
}

/// The bytes a vector's entry takes where the postings keep it (a
/// dimension and its count).
const VECTOR_ENTRY: usize = 8;

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Tracked {
    pub fn new(inner: Arc<dyn Store>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::Unkept),
            applied: tokio::sync::watch::Sender::new(i64::MIN),
            poke: tokio::sync::Notify::new(),
        });
        Wrapped::with(inner, Keeper { shared })
    }

    /// The bytes the keeper holds for its points' tallies, vectors and
    /// sources (0 until built; the postings' lists are [`Store::kept`]'s
    /// entries).
    pub fn kept_bytes(&self) -> usize {
        match &*locked(&self.hook().shared.state) {
            State::Ready(book) => book.bytes,
            _ => 0,
        }
    }
}

impl Shared {
    /// Until the next read of the journal is due: [`POLL`], or sooner for
    /// a write through this store.
    async fn wait_for_poll(&self) {
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = self.poke.notified() => {}
        }
    }

    /// After a write through this store: until the keeper has applied a
    /// read of the journal begun after it (the write was journaled before
    /// it returned), so that this process reads its own writes; at most
    /// [`WRITE_WAIT`], after which the statistics lag as for another
    /// process's write.
    async fn caught_up(&self) {
        if !matches!(*locked(&self.state), State::Ready(_)) {
            return;
        }
        let written = now_micros();
        let mut applied = self.applied.subscribe();
        self.poke.notify_one();
        let _ = tokio::time::timeout(WRITE_WAIT, applied.wait_for(|began| *began > written)).await;
    }
}

/// The keeper: builds, then follows the journal, while the store lives.
async fn keep(inner: Weak<dyn Store>, shared: Weak<Shared>) {
    loop {
        let (Some(store), Some(state)) = (inner.upgrade(), shared.upgrade()) else {
            return;
        };
        match follow(store.as_ref(), &state).await {
            Ok(()) => return,
            Err(why) if why == NOT_MADE => {
                tracing::info!(
                    "the collection does not exist yet: its document frequencies are built once it does"
                );
                *locked(&state.state) = State::Rebuilding;
            }
            Err(why) => {
                tracing::warn!(%why, "the document frequencies of a server collection were dropped; counts go to the store until they are built again");
                *locked(&state.state) = State::Rebuilding;
            }
        }
        drop((store, state));
        tokio::time::sleep(RETRY).await;
    }
}

/// Builds the statistics and follows the journal; `Ok` when there is
/// nothing to keep (no text index, no journal) or the `Tracked` is gone.
async fn follow(store: &dyn Store, shared: &Arc<Shared>) -> std::result::Result<(), String> {
    let started = Instant::now();
    let Some(fold) = text_fold(store, shared).await? else {
        return Ok(());
    };
    let overlap = micros(OVERLAP);
    let mut cursor = now_micros() - overlap;
    if store
        .changes(cursor, 1)
        .await
        .map_err(|e| e.to_string())?
        .is_none()
    {
        *locked(&shared.state) = State::Off;
        return Ok(());
    }
    let mut book = scan_collection(store, fold).await?;
    let mut applied: HashMap<Uuid, i64> = HashMap::new();
    let mut first = true;
    let mut polls: u32 = 0;
    loop {
        // The keeper's is the last hold: the `Tracked` is gone.
        if Arc::strong_count(shared) == 1 {
            return Ok(());
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(INDEX_EVERY)
            && let Ok(info) = store.info().await
            && info.and_then(|i| i.text_index).map(|t| t.fold()) != Some(fold)
        {
            return Err("the text index changed".to_string());
        }
        let behind = now_micros() - cursor;
        if behind > micros(RETENTION) {
            return Err(format!("{} s behind the journal", behind / 1_000_000));
        }
        let began = now_micros();
        let current = match reread(store, &mut cursor, overlap, &mut applied).await {
            Ok(current) => current,
            // The journal was dropped (a restore replaced the collection):
            // what it held is no longer what was counted.
            Err(StoreError::NoCollection(_)) if !first => {
                return Err("the change journal is gone (the collection was restored?)".to_string());
            }
            Err(e) if !first => {
                // The statistics stand as they are; the next poll reads
                // from the same cursor (until it is too far behind).
                tracing::warn!(error = %e, "reading the change journal failed");
                shared.wait_for_poll().await;
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        if !apply(shared, &mut book, &current, first, fold, started) {
            return Ok(());
        }
        shared.applied.send_replace(began);
        first = false;
        shared.wait_for_poll().await;
    }
}

/// How the collection's text index folds, where trine counts as it does;
/// `None` (and the statistics off) where there is none such.
async fn text_fold(
    store: &dyn Store,
    shared: &Arc<Shared>,
) -> std::result::Result<Option<Fold>, String> {
    let Some(info) = store.info().await.map_err(|e| e.to_string())? else {
        // Not made yet (a lexical service started before the first write):
        // built once it is, counts going to the store meanwhile.
        return Err(NOT_MADE.to_string());
    };
    match info.text_index {
        Some(index) if index.tokenizer == "word" && index.lowercase => Ok(Some(index.fold())),
        _ => {
            tracing::info!("no text index trine counts as the index does: counts go to the store");
            *locked(&shared.state) = State::Off;
            Ok(None)
        }
    }
}

/// The statistics of the whole collection, scanned a page at a time.
async fn scan_collection(store: &dyn Store, fold: Fold) -> std::result::Result<Book, String> {
    let mut book = Book::new(fold);
    let mut offset = None;
    loop {
        let page = store
            .scan(Scan::All, PAGE, offset)
            .await
            .map_err(|e| e.to_string())?;
        let changes: Vec<(Uuid, Option<Memory>)> =
            page.memories.into_iter().map(|m| (m.id, Some(m))).collect();
        book.set_all(&changes);
        offset = page.next_offset;
        if offset.is_none() {
            return Ok(book);
        }
    }
}

/// Counts the points read again: on the `first` poll into `book`, which
/// then becomes the statistics the keeper serves; after, into those.
/// `false` when they are no longer kept (the keeper stops).
fn apply(
    shared: &Shared,
    book: &mut Book,
    current: &[(Uuid, Option<Memory>)],
    first: bool,
    fold: Fold,
    started: Instant,
) -> bool {
    let mut state = locked(&shared.state);
    if first {
        book.set_all(current);
        tracing::info!(
            points = book.points.len(),
            tenants = book.frequencies.tenants(),
            terms = book.frequencies.entries(),
            bytes = book.bytes,
            seconds = started.elapsed().as_secs_f64(),
            "document frequencies built over the server collection: counts need no call"
        );
        *state = State::Ready(std::mem::replace(book, Book::new(fold)));
    } else if let State::Ready(kept) = &mut *state {
        kept.set_all(current);
    } else {
        return false;
    }
    true
}

/// The points journaled since `cursor` (less `overlap`) by entries not
/// applied yet, read again (`None`: deleted); the cursor moves to the last
/// entry's stamp.
async fn reread(
    store: &dyn Store,
    cursor: &mut i64,
    overlap: i64,
    applied: &mut HashMap<Uuid, i64>,
) -> Result<Vec<(Uuid, Option<Memory>)>> {
    let now = now_micros();
    let mut ids: HashSet<Uuid> = HashSet::new();
    let mut from = *cursor - overlap;
    let mut keys = Vec::new();
    loop {
        let changes: Vec<Change> = store.changes(from, PAGE).await?.unwrap_or_default();
        // A full page moves `from` on (a page of one stamp cannot: appends
        // are a round trip each, never a thousand in one microsecond).
        let full = changes.len() == PAGE && changes.last().is_some_and(|c| c.seq > from);
        for change in changes {
            from = from.max(change.seq);
            if !applied.contains_key(&change.key) {
                keys.push((change.key, change.seq));
                ids.extend(change.ids);
            }
        }
        if !full {
            break;
        }
    }
    let ids: Vec<Uuid> = ids.into_iter().collect();
    let mut current: Vec<(Uuid, Option<Memory>)> = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(REREAD) {
        let found = store.get(chunk).await?;
        let mut found: HashMap<Uuid, Memory> = found.into_iter().map(|m| (m.id, m)).collect();
        current.extend(chunk.iter().map(|id| (*id, found.remove(id))));
    }
    // Only now, with every point read again, are the entries applied; and
    // the journal is read up to now (less the writers' allowed lag).
    for (key, seq) in keys {
        applied.insert(key, seq);
        *cursor = (*cursor).max(seq);
    }
    *cursor = (*cursor).max(now - overlap);
    applied.retain(|_, seq| *seq >= *cursor - 2 * overlap);
    Ok(current)
}

/// Every call passes through (a write waits until the keeper has counted
/// it); the statistics and postings are the keeper's.
#[async_trait::async_trait]
impl Around for Keeper {
    async fn around<'a, T: Send + 'a>(&'a self, call: Call, run: &'a Run<'a, T>) -> Result<T> {
        let done = run().await?;
        if matches!(call.op, Op::Upsert | Op::Delete | Op::SetSparse) {
            self.shared.caught_up().await;
        }
        Ok(done)
    }

    /// From the kept statistics once built (a tenant, or one term).
    fn counted<'s>(&'s self, inner: &'s Arc<dyn Store>, filter: &Filter) -> Counted {
        if filter.tenant.trim().is_empty() {
            return Counted::No;
        }
        match &*locked(&self.shared.state) {
            State::Ready(book) => book
                .frequencies
                .count(filter)
                .map_or(Counted::No, Counted::Exact),
            State::Building | State::Rebuilding => Counted::Later,
            State::Unkept | State::Off => inner.counted(filter),
        }
    }
    /// Starts the keeper (once).
    fn keep_counts<'s>(&'s self, inner: &'s Arc<dyn Store>) {
        let mut state = locked(&self.shared.state);
        if !matches!(*state, State::Unkept) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                "no async runtime to keep the document frequencies on: counts go to the store"
            );
            return;
        };
        *state = State::Building;
        let inner: Weak<dyn Store> = Arc::downgrade(inner);
        runtime.spawn(keep(inner, Arc::downgrade(&self.shared)));
    }
    fn kept<'s>(&'s self, inner: &'s Arc<dyn Store>) -> Option<KeptSize> {
        match &*locked(&self.shared.state) {
            State::Ready(book) => Some(KeptSize::of(&book.frequencies)),
            State::Unkept | State::Off => inner.kept(),
            State::Building | State::Rebuilding => None,
        }
    }
    /// From the kept postings once built (a tenant and its terms).
    fn kept_terms<'s>(
        &'s self,
        inner: &'s Arc<dyn Store>,
        filter: &Filter,
        offset: Option<Uuid>,
        limit: usize,
        source: bool,
    ) -> Option<TermPage> {
        if filter.tenant.trim().is_empty() || limit == 0 || limit > MAX_READ {
            return None;
        }
        match &*locked(&self.shared.state) {
            State::Ready(book) => book.term_page(filter, offset, limit, source),
            State::Unkept | State::Off => inner.kept_terms(filter, offset, limit, source),
            State::Building | State::Rebuilding => None,
        }
    }
    /// From the kept postings once built (a tenant's threads).
    fn kept_around<'s>(
        &'s self,
        inner: &'s Arc<dyn Store>,
        filter: &Filter,
        tops: &[Uuid],
        window: u64,
        limit: usize,
    ) -> Option<crate::Nearby> {
        if filter.tenant.trim().is_empty() {
            return None;
        }
        match &*locked(&self.shared.state) {
            State::Ready(book) => book.frequencies.around(filter, tops, window, limit),
            State::Unkept | State::Off => inner.kept_around(filter, tops, window, limit),
            State::Building | State::Rebuilding => None,
        }
    }
    fn holds_no_phrase<'s>(&'s self, inner: &'s Arc<dyn Store>, filter: &Filter) -> bool {
        if filter.tenant.trim().is_empty() {
            return false;
        }
        match &*locked(&self.shared.state) {
            State::Ready(book) => book.frequencies.holds_no_phrase(filter),
            State::Unkept | State::Off => inner.holds_no_phrase(filter),
            State::Building | State::Rebuilding => false,
        }
    }
    fn keeping<'s>(&'s self, inner: &'s Arc<dyn Store>) -> Keeping {
        match &*locked(&self.shared.state) {
            State::Ready(_) => Keeping::Ready,
            State::Building => Keeping::Building,
            State::Rebuilding => Keeping::Not,
            State::Unkept | State::Off => inner.keeping(),
        }
    }
}

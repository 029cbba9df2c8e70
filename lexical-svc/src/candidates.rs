//! The `candidates` strategy over a store.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use trine_core::Stage;

use futures::future::try_join_all;
use tracing::{Instrument, field};
use trine_core::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use trine_core::model::{Filter, MAX_FILTER_IDS, Memory, SparseVector, TermPage, TermPoint};
use trine_core::terms::{self, terms};
use trine_core::{ErrorKind, Fold, Verbatim, sparse};
use trine_store::{BatchPage, BatchRead, Store, StoreError};
use trine_telemetry::int;
use uuid::Uuid;

use crate::Texts;
use crate::counts::Counter;

/// A failed lexical read.
#[derive(Debug, thiserror::Error)]
pub enum LexicalError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    UnknownStrategy(String),
    #[error("lexical strategy `{strategy}` is not ready on this collection: {why}")]
    NotReady { strategy: &'static str, why: String },
    #[error(
        "the query {0:?} has no salient token for the lexical gate: an empty gate never matches everything; use another strategy or a more specific query"
    )]
    EmptyGate(String),
    #[error("the gate strategy ranks by dense similarity, and this lexical-svc has no embedder")]
    NoEmbedder,
    #[error("embedding the query for the gate failed: {0}")]
    Embed(String),
    #[error("strategy `auto` must be resolved before it runs")]
    Unresolved,
    #[error(
        "lexical-svc is building its document frequencies, without which every count is a read: retry once its health reports SERVING"
    )]
    Starting,
}

impl LexicalError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Store(e) => e.kind(),
            Self::UnknownStrategy(_) | Self::EmptyGate(_) => ErrorKind::InvalidArgument,
            Self::NotReady { .. } | Self::NoEmbedder => ErrorKind::FailedPrecondition,
            Self::Embed(_) | Self::Unresolved => ErrorKind::Internal,
            Self::Starting => ErrorKind::Unavailable,
        }
    }
}

impl trine_core::Kinded for LexicalError {
    fn kind(&self) -> trine_core::ErrorKind {
        LexicalError::kind(self)
    }
}

/// One lexical candidate: the type fusion takes.
pub use trine_core::fusion::LexicalEntry as Candidate;

/// The lexical list, best first, and what its stages took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    pub list: Vec<Candidate>,
    /// The count of each term within the filters, in query order (exact,
    /// or reused from the count cache: [`crate::CountCacheConfig`]).
    pub term_counts: Vec<(String, u64)>,
    /// Points within the filters.
    pub total: u64,
    /// The BM25 score of a full match ([`bm25::reference`]); 0 when the
    /// strategy does not score BM25 itself.
    pub reference: f64,
    /// `lexical.counts`, `lexical.read`, `lexical.score`.
    pub timings: Vec<(Stage, Duration)>,
}

fn with_terms(filter: &Filter, terms: &[String]) -> Filter {
    Filter {
        all_terms: terms.to_vec(),
        ..filter.clone()
    }
}

/// Reads and scores at most `cap` candidates for `query` within `filter`,
/// counting through `counter` (exact counts over the same store, the large
/// ones maybe cached).
pub async fn candidates(
    store: &dyn Store,
    counter: &Counter,
    query: &str,
    texts: Texts,
    filter: &Filter,
    cap: usize,
) -> Result<Candidates, LexicalError> {
    let fold = texts.fold;
    let terms = terms::bounded(terms(query, fold), terms::MAX_COUNTED_TERMS);
    // Where the phrase reads find the sources holding the query, the other
    // reads bring no source.
    let sources = texts.reads_sources(terms.len());
    if terms.is_empty() || cap == 0 {
        return Ok(Candidates::default());
    }

    // The counts (N and one per term: exact, the large ones maybe from the
    // count cache) run concurrently with each other and with the sources'
    // phrase read; they plan the other reads ([`Plan`]). Each stage is a
    // span: `lexical.counts` (one `lexical.count` child per term, carrying
    // its count and whether it was cached or kept by the store),
    // `lexical.read` (the phrase reads, the all-terms read where the plan
    // has one, the per-term reads), `lexical.score`.
    let term_filters: Vec<Filter> = terms
        .iter()
        .map(|t| with_terms(filter, std::slice::from_ref(t)))
        .collect();
    let counts_span = tracing::info_span!(
        "lexical.counts",
        terms = int(terms.len()),
        total = field::Empty
    );
    let read_span = tracing::info_span!("lexical.read", read = field::Empty);
    let counts = async {
        let started = Instant::now();
        let per_term = try_join_all(terms.iter().zip(&term_filters).map(|(term, f)| {
            let span = tracing::info_span!(
                "lexical.count",
                term = %term,
                count = field::Empty,
                cached = field::Empty,
                kept = field::Empty
            );
            async move {
                let count = counter.count(f).await?;
                let span = tracing::Span::current();
                span.record("count", int(count.value));
                span.record("cached", count.cached);
                span.record("kept", count.kept);
                Ok::<_, StoreError>(count.value)
            }
            .instrument(span)
        }));
        let (total, per_term) = tokio::try_join!(counter.count(filter), per_term)?;
        let total = total.value;
        tracing::Span::current().record("total", int(total));
        Ok::<_, StoreError>((total, per_term, started.elapsed()))
    }
    .instrument(counts_span);
    // Beyond the ADR: the points holding the query as a phrase are read
    // first, so that the cap never drops a verbatim match (the all-terms set
    // follows point-id order and can exceed the cap): the text's, and the
    // source's (a source holds the query without the text holding its
    // terms). The reads the plan makes at once go to the store together
    // (`Store::read_batch`).
    let multi = terms.len() >= 2;
    let in_sources = multi && texts.source_phrases;
    let read_started = Instant::now();
    let rest = async {
        let (total, per_term, counts_took) = counts.await?;
        // Each term's points, rarest first, while room is left.
        let mut order: Vec<(usize, u64)> = per_term
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, count)| count > 0)
            .collect();
        order.sort_by_key(|&(i, count)| (count, i));
        let plan = Plan::of(multi, &per_term, cap);
        let terms_apart = Apart {
            store,
            filter,
            query,
            terms: &terms,
            cap,
            sources,
            span: &read_span,
        };
        if plan != Plan::AllTerms {
            let (in_texts, in_sources, read) = terms_apart
                .read(&order, plan == Plan::RarestFirst, in_sources)
                .await?;
            return Ok((total, per_term, counts_took, in_texts, in_sources, read));
        }
        // Every term is common: the all-terms read first (as the ADR says),
        // and in the same round the first page of the rarest term's read,
        // with room for the whole cap (the all-terms read may bring none), so
        // that its new points are the ones read after it ([`read_term`]), and
        // the sources' phrase read.
        let mut read = Reads::new(cap);
        let mut order = order.into_iter();
        let term = |(i, count): (usize, u64)| Term {
            span: tracing::info_span!(parent: &read_span, "lexical.read.term", term = %terms[i], count = int(count), read = field::Empty),
            filter: &term_filters[i],
        };
        let next = order.next().map(term);
        let mut batch = vec![BatchRead::Terms {
            filter: with_terms(filter, &terms),
            limit: cap,
            source: sources,
        }];
        batch.extend(next.as_ref().map(|t| BatchRead::Terms {
            filter: t.filter.clone(),
            limit: cap,
            source: sources,
        }));
        batch.extend(in_sources.then(|| terms_apart.in_sources()));
        let mut pages = terms_apart.batch(&batch).await?;
        let page = answer(pages.next().and_then(BatchPage::terms))?;
        tracing::info_span!(parent: &read_span, "lexical.read.all_terms", terms = int(terms.len()), read = int(page.points.len()));
        let next_page = match &next {
            Some(_) => Some(answer(pages.next().and_then(BatchPage::terms))?),
            None => None,
        };
        let in_sources = terms_apart.sources_found(in_sources, pages.next())?;
        // Short of the cap, the read holds the whole all-terms set: the
        // text's phrase read is asked of its points; full, of the whole index.
        let complete = page.points.len() < cap;
        read.extend(page.points.into_iter().map(Read::from));
        let in_texts = terms_apart
            .phrase_among(complete.then(|| read.ids()))
            .instrument(
                tracing::info_span!(parent: &read_span, "lexical.read.phrase", read = field::Empty),
            );
        // The other terms' reads, beside the text's phrase read: they leave
        // room for none of its holders, which go first in the merge below,
        // and the merge keeps the first `cap` — the same points as reading
        // the terms after the phrase read, at the cost of as many more points
        // read as the phrase read finds outside the all-terms set.
        let terms_read = async {
            if let (Some(t), Some(page)) = (&next, next_page) {
                let before = read.list.len();
                read_term(store, t.filter, sources, &mut read, page)
                    .instrument(t.span.clone())
                    .await?;
                t.span.record("read", int(read.list.len() - before));
            }
            for t in order.map(term) {
                if read.full() {
                    break;
                }
                let before = read.list.len();
                let page = t.page(store, read.room(), None, sources).await?;
                read_term(store, t.filter, sources, &mut read, page)
                    .instrument(t.span.clone())
                    .await?;
                t.span.record("read", int(read.list.len() - before));
            }
            Ok::<_, StoreError>(read.list)
        };
        let (in_texts, read) = tokio::try_join!(in_texts, terms_read)?;
        Ok::<_, StoreError>((total, per_term, counts_took, in_texts, in_sources, read))
    };
    let (total, per_term, counts_took, in_texts, in_sources, rest) = rest.await?;
    // The phrase holders first (read with their texts; the text's, then the
    // source's), then the rest.
    let mut seen: HashSet<Uuid> = HashSet::new();
    let mut read: Vec<Read> = in_texts
        .into_iter()
        .chain(in_sources)
        .map(Read::from)
        .chain(rest)
        .filter(|r| seen.insert(r.id))
        .take(cap)
        .collect();
    // Texts are read only where BM25 or the verbatim check cannot do without:
    // points without trine's sparse encoding, and every point of a single-term
    // query that is not that term alone (the verbatim check then needs the text).
    let verbatim = Verbatim::new(query, fold);
    let single = terms.len() == 1;
    let term_alone = single && verbatim.is_token(&terms[0]);
    let lacking: Vec<Uuid> = read
        .iter()
        .filter(|r| r.text.is_none() && (r.tf.is_none() || (single && !term_alone)))
        .map(|r| r.id)
        .collect();
    if !lacking.is_empty() {
        let texts: HashMap<Uuid, String> = store
            .get(&lacking)
            .instrument(tracing::info_span!(parent: &read_span, "lexical.read.texts", read = int(lacking.len())))
            .await?
            .into_iter()
            .map(|m| (m.id, m.text))
            .collect();
        for r in &mut read {
            if r.text.is_none() {
                r.text = texts.get(&r.id).cloned();
            }
        }
    }
    read_span.record("read", int(read.len()));
    drop(read_span);
    let read_took = read_started.elapsed();

    let score_span = tracing::info_span!("lexical.score", candidates = int(read.len()));
    let scoring = score_span.enter();
    let started = Instant::now();
    let keys = bm25::keys(&terms, fold);
    let counts: Vec<TermCounts> = read.iter().map(|r| r.counts(&keys, fold)).collect();
    let stats = CorpusStats {
        n: total,
        avg_len: average_len(&counts),
        df: terms
            .iter()
            .cloned()
            .zip(per_term.iter().copied())
            .collect::<HashMap<_, _>>(),
    };
    let reference = bm25::reference(&terms, &stats);
    let mut list: Vec<Candidate> = read
        .iter()
        .zip(&counts)
        .map(|(r, c)| Candidate {
            id: r.id,
            score: bm25::score_counts(&terms, c, &stats, Bm25Params::default()),
            verbatim: match &r.text {
                Some(text) => verbatim.matches(text, r.source.as_deref()),
                // Every point read for a single term holds it as a token; a
                // point the phrase index did not return holds a query of
                // several terms at most in its source — never, where the
                // phrase index covers the sources (none was read).
                None => {
                    (term_alone && c.tf.iter().all(|tf| *tf > 0))
                        || r.source.as_deref().is_some_and(|s| verbatim.in_text(s))
                }
            },
        })
        .collect();
    list.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    let score_took = started.elapsed();
    drop(scoring);

    Ok(Candidates {
        list,
        term_counts: terms.into_iter().zip(per_term).collect(),
        total,
        reference,
        timings: vec![
            (Stage::LexicalCounts, counts_took),
            (Stage::LexicalRead, read_took),
            (Stage::LexicalScore, score_took),
        ],
    })
}

/// How the text's phrase read is planned, from the counts: every text
/// holding the phrase holds each term, so the holders are among the points
/// holding every term (the all-terms set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// One term, or a term no point holds: no text holds the phrase.
    NoPhrase,
    /// The rarest term's points fit in the cap: they are read first, whole,
    /// and hold the all-terms set, found from their term frequencies — the
    /// all-terms read would bring nothing more, and the phrase read is asked
    /// of those points alone. The points read are the same as reading the
    /// all-terms set first: it lies within the rarest term's.
    RarestFirst,
    /// Every term is common: the all-terms read goes first (as the ADR
    /// says), and the phrase read is asked of its points where it came back
    /// short of the cap, of the whole index where it filled it.
    AllTerms,
}

impl Plan {
    fn of(multi: bool, per_term: &[u64], cap: usize) -> Self {
        let rarest = per_term.iter().copied().min().unwrap_or(0);
        if !multi || rarest == 0 {
            Self::NoPhrase
        } else if usize::try_from(rarest).is_ok_and(|n| n <= cap) {
            Self::RarestFirst
        } else {
            Self::AllTerms
        }
    }
}

/// The term reads of the plans without an all-terms read
/// ([`Plan::NoPhrase`], [`Plan::RarestFirst`]), made at once, in one round:
/// each term's points that no term read before it (rarer) holds
/// (`Filter::no_terms`), at most the room the rarer terms can leave — `cap`
/// less the largest of their counts. Taken in order they are the points
/// the reads one after the other would take: a read brings no point an
/// earlier one brought, and the room left before it is at most its limit.
/// A read that filled its limit while room is left (a count was stale) goes
/// on from where it stopped, in order.
struct Apart<'a> {
    store: &'a dyn Store,
    filter: &'a Filter,
    query: &'a str,
    terms: &'a [String],
    cap: usize,
    sources: bool,
    span: &'a tracing::Span,
}

/// The reads of [`Apart`] for the terms in `order` (term, count; rarest
/// first): the position of each term read in `order` and at most how many
/// points it reads — `cap` less the largest count of the rarer terms, which
/// leave at most that much room; none once the rarer terms fill the cap.
fn limits(order: &[(usize, u64)], cap: usize) -> Vec<(usize, usize)> {
    let mut reads = Vec::with_capacity(order.len());
    let mut largest = 0u64;
    for (k, &(_, count)) in order.iter().enumerate() {
        let limit = cap.saturating_sub(usize::try_from(largest).unwrap_or(cap));
        if limit == 0 {
            break;
        }
        reads.push((k, limit));
        largest = largest.max(count);
    }
    reads
}

/// A read of a batch as asked: a store that answers a batch with fewer
/// pages, or another kind, is broken.
fn answer<T>(found: Option<T>) -> Result<T, StoreError> {
    found.ok_or_else(|| {
        StoreError::Backend("the store answered a batch of reads out of shape".to_string())
    })
}

/// One term's read of [`Apart`]: its filter and at most how many points.
struct TermRead {
    filter: Filter,
    limit: usize,
    span: tracing::Span,
}

impl Apart<'_> {
    /// The reads of the terms in `order` (rarest first): each term's
    /// filter without the rarer terms, and its limit ([`limits`]).
    fn plan(&self, order: &[(usize, u64)]) -> Vec<TermRead> {
        limits(order, self.cap)
            .into_iter()
            .map(|(k, limit)| {
                let (i, count) = order[k];
                let term = &self.terms[i];
                TermRead {
                    filter: Filter {
                        all_terms: vec![term.clone()],
                        no_terms: order[..k]
                            .iter()
                            .map(|&(j, _)| self.terms[j].clone())
                            .collect(),
                        ..self.filter.clone()
                    },
                    limit,
                    span: tracing::info_span!(parent: self.span, "lexical.read.term", term = %term, count = int(count), limit = int(limit), read = field::Empty),
                }
            })
            .collect()
    }

    /// The batch read of `reads`, under a `lexical.read.batch` span: the
    /// pages in the order asked.
    async fn batch(
        &self,
        reads: &[BatchRead],
    ) -> Result<std::vec::IntoIter<BatchPage>, StoreError> {
        let span =
            tracing::info_span!(parent: self.span, "lexical.read.batch", reads = int(reads.len()));
        let pages = self.store.read_batch(reads).instrument(span).await?;
        Ok(pages.into_iter())
    }

    /// The sources' phrase read.
    fn in_sources(&self) -> BatchRead {
        BatchRead::Memories {
            filter: in_source(self.filter, self.query),
            limit: self.cap,
        }
    }

    /// What the sources' phrase read found, where it was made.
    fn sources_found(
        &self,
        made: bool,
        page: Option<BatchPage>,
    ) -> Result<Vec<Memory>, StoreError> {
        if !made {
            return Ok(Vec::new());
        }
        let found = answer(page.and_then(BatchPage::memories))?;
        tracing::info_span!(parent: self.span, "lexical.read.phrase.sources", read = int(found.len()));
        Ok(found)
    }

    /// One batch: the terms' reads, the text's phrase read (with
    /// `phrase`: every text holding the phrase holds each term, so where
    /// the rarest term's points fit in the cap the phrase filter alone
    /// reads among them) and the sources' (with `in_sources`). The text's
    /// phrase holders, the sources', and the terms' points in turn.
    async fn read(
        &self,
        order: &[(usize, u64)],
        phrase: bool,
        in_sources: bool,
    ) -> Result<(Vec<Memory>, Vec<Memory>, Vec<Read>), StoreError> {
        let reads = self.plan(order);
        let mut batch: Vec<BatchRead> = reads
            .iter()
            .map(|r| BatchRead::Terms {
                filter: r.filter.clone(),
                limit: r.limit,
                source: self.sources,
            })
            .collect();
        batch.extend(phrase.then(|| BatchRead::Memories {
            filter: in_text(self.filter, self.query),
            limit: self.cap,
        }));
        batch.extend(in_sources.then(|| self.in_sources()));
        if batch.is_empty() {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        }
        let mut pages = self.batch(&batch).await?;
        let mut read = Reads::new(self.cap);
        let mut unfinished = Vec::new();
        for term in &reads {
            let page = answer(pages.next().and_then(BatchPage::terms))?;
            term.span.record("read", int(page.points.len()));
            if page.points.len() >= term.limit
                && let Some(offset) = page.next_offset
            {
                unfinished.push((term, offset));
            }
            read.extend(page.points.into_iter().map(Read::from));
        }
        let in_texts = if phrase {
            let found = answer(pages.next().and_then(BatchPage::memories))?;
            tracing::info_span!(parent: self.span, "lexical.read.phrase", read = int(found.len()));
            found
        } else {
            Vec::new()
        };
        let in_sources = self.sources_found(in_sources, pages.next())?;
        for (term, offset) in unfinished {
            if read.full() {
                break;
            }
            let page = self
                .store
                .scroll_terms(&term.filter, read.room(), Some(offset), self.sources)
                .instrument(term.span.clone())
                .await?;
            read_term(self.store, &term.filter, self.sources, &mut read, page).await?;
        }
        Ok((in_texts, in_sources, read.list))
    }

    /// The memories holding the query as a phrase in their text, among
    /// `ids` where given (none: the whole index).
    async fn phrase_among(&self, ids: Option<Vec<Uuid>>) -> Result<Vec<Memory>, StoreError> {
        let ids = match ids {
            Some(ids) if ids.is_empty() => return Ok(Vec::new()),
            Some(ids) if ids.len() <= MAX_FILTER_IDS => Some(ids),
            _ => None,
        };
        let holders = Filter {
            ids,
            ..in_text(self.filter, self.query)
        };
        let memories = self.store.scroll(&holders, self.cap, None).await?.memories;
        tracing::Span::current().record("read", int(memories.len()));
        Ok(memories)
    }
}

/// The points read so far, each once, in the order read, at most `cap`.
struct Reads {
    cap: usize,
    seen: HashSet<Uuid>,
    list: Vec<Read>,
}

impl Reads {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            seen: HashSet::new(),
            list: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= self.cap
    }

    fn room(&self) -> usize {
        self.cap.saturating_sub(self.list.len())
    }

    fn extend(&mut self, reads: impl IntoIterator<Item = Read>) {
        for r in reads {
            if self.full() {
                break;
            }
            if self.seen.insert(r.id) {
                self.list.push(r);
            }
        }
    }

    fn ids(&self) -> Vec<Uuid> {
        self.list.iter().map(|r| r.id).collect()
    }
}

/// One term's read: its span and its filter.
struct Term<'a> {
    span: tracing::Span,
    filter: &'a Filter,
}

impl Term<'_> {
    /// One page of the term's points, in point-id order from `offset`.
    async fn page(
        &self,
        store: &dyn Store,
        limit: usize,
        offset: Option<Uuid>,
        sources: bool,
    ) -> Result<TermPage, StoreError> {
        store
            .scroll_terms(self.filter, limit, offset, sources)
            .instrument(self.span.clone())
            .await
    }
}

/// Takes one term's points into `read`, from its first page (`page`) on in
/// point-id order, until `read` is full; whether every point was read. The
/// first page may have been read beside an earlier read, with room for what
/// that read would leave: its new points are then the first of the term's
/// not read before — the same points as reading it afterwards — and where
/// they are too few, the next pages follow.
async fn read_term(
    store: &dyn Store,
    filter: &Filter,
    sources: bool,
    read: &mut Reads,
    page: TermPage,
) -> Result<bool, StoreError> {
    let mut page = page;
    loop {
        read.extend(page.points.into_iter().map(Read::from));
        let Some(offset) = page.next_offset else {
            return Ok(true);
        };
        if read.full() {
            return Ok(false);
        }
        page = store
            .scroll_terms(filter, read.room(), Some(offset), sources)
            .await?;
    }
}

/// The memories holding `query` as a phrase of tokens within `filter`: the
/// text's phrase index, and the source's where the collection has one —
/// two reads side by side, the text's first; at most `cap`. (One filter of
/// either phrase reads far slower: at 194,513 real memories the phrase
/// read's p95 went from 6 to 195 ms.)
pub(crate) async fn phrase_reads(
    store: &dyn Store,
    query: &str,
    texts: Texts,
    filter: &Filter,
    cap: usize,
) -> Result<Vec<Memory>, StoreError> {
    let in_text = in_text(filter, query);
    if !texts.source_phrases {
        return Ok(store.scroll(&in_text, cap, None).await?.memories);
    }
    let in_source = in_source(filter, query);
    let (text, source) = tokio::try_join!(
        store.scroll(&in_text, cap, None),
        store.scroll(&in_source, cap, None)
    )?;
    let mut seen = HashSet::new();
    Ok(text
        .memories
        .into_iter()
        .chain(source.memories)
        .filter(|m| seen.insert(m.id))
        .take(cap)
        .collect())
}

/// `filter`, and the text holds `query` as a phrase.
fn in_text(filter: &Filter, query: &str) -> Filter {
    Filter {
        phrase: Some(query.to_string()),
        ..filter.clone()
    }
}

/// `filter`, and the source holds `query` as a phrase.
fn in_source(filter: &Filter, query: &str) -> Filter {
    Filter {
        source_phrase: Some(query.to_string()),
        ..filter.clone()
    }
}

/// The average length in tokens of the texts read: BM25's `avgdl`, estimated
/// on the candidates (Qdrant keeps no length statistics trine can read).
fn average_len(counts: &[TermCounts]) -> f64 {
    if counts.is_empty() {
        return 0.0;
    }
    let total: usize = counts.iter().map(|c| c.len).sum();
    total as f64 / counts.len() as f64
}

/// One candidate as read: the phrase reads carry the text; the others carry
/// the sparse encoding (term frequencies) and the source, the text only when
/// it had to be read.
struct Read {
    id: Uuid,
    source: Option<String>,
    text: Option<String>,
    tf: Option<SparseVector>,
}

impl Read {
    /// BM25's counts: from the text when it was read, else from the sparse
    /// encoding (the same counts: `TermCounts::of_sparse`).
    fn counts(&self, keys: &[String], fold: Fold) -> TermCounts {
        match (&self.text, &self.tf) {
            (Some(text), _) => TermCounts::of_text(keys, text, fold),
            (None, Some(tf)) => TermCounts::of_sparse(keys, tf),
            (None, None) => TermCounts::of_text(keys, "", fold),
        }
    }
}

impl From<Memory> for Read {
    fn from(m: Memory) -> Self {
        Self {
            id: m.id,
            source: m.source,
            text: Some(m.text),
            tf: None,
        }
    }
}

impl From<TermPoint> for Read {
    fn from(p: TermPoint) -> Self {
        Self {
            id: p.id,
            source: p.source,
            text: None,
            // Only trine's encoding is read as term frequencies: another
            // tool's sparse vectors (fractional weights) send us to the text.
            tf: p.tf.filter(sparse::is_term_frequencies),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_follows_the_rarest_count() {
        // (several terms, the counts, cap, plan)
        let table: &[(bool, &[u64], usize, Plan)] = &[
            (false, &[3], 256, Plan::NoPhrase),
            (true, &[3, 0, 9], 256, Plan::NoPhrase),
            (true, &[300, 256], 256, Plan::RarestFirst),
            (true, &[1, 10_000], 256, Plan::RarestFirst),
            (true, &[257, 10_000], 256, Plan::AllTerms),
            (true, &[3, 9], 2, Plan::AllTerms),
        ];
        for (multi, counts, cap, want) in table {
            assert_eq!(
                Plan::of(*multi, counts, *cap),
                *want,
                "{counts:?} cap {cap}"
            );
        }
    }

    #[test]
    fn each_term_is_read_with_the_room_the_rarer_ones_can_leave() {
        // (the counts, rarest first; cap; each read's position and limit)
        type Row = (&'static [u64], usize, &'static [(usize, usize)]);
        let table: &[Row] = &[
            (&[3], 256, &[(0, 256)]),
            (&[300], 256, &[(0, 256)]),
            (&[10, 20, 30], 256, &[(0, 256), (1, 246), (2, 236)]),
            (&[5, 4196, 8575], 256, &[(0, 256), (1, 251)]),
            (&[256, 300], 256, &[(0, 256)]),
            (&[255, 300, 400], 256, &[(0, 256), (1, 1)]),
            (&[], 256, &[]),
        ];
        for (counts, cap, want) in table {
            let order: Vec<(usize, u64)> = counts.iter().copied().enumerate().collect();
            assert_eq!(limits(&order, *cap), *want, "{counts:?} cap {cap}");
        }
    }

    #[test]
    fn the_reads_keep_each_point_once_up_to_the_cap() {
        let point = |n: u128, text: Option<&str>| Read {
            id: Uuid::from_u128(n),
            source: None,
            text: None,
            tf: text.map(|t| sparse::encode_text(t, Fold::ASCII)),
        };
        let mut read = Reads::new(3);
        read.extend([
            point(1, Some("the billing retry")),
            point(2, Some("billing alone")),
            point(1, Some("read twice")),
            point(3, None),
            point(4, Some("past the cap: billing retry")),
        ]);
        assert!(read.full());
        assert_eq!(read.ids(), [1, 2, 3].map(Uuid::from_u128));
        assert_eq!(read.room(), 0);
    }
}

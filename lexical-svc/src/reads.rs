//! The reads of the `candidates` strategy: the plan the counts make, the
//! reads of each plan (in one round where they can go at once), each point
//! once up to the cap, and the phrase reads.

use std::collections::HashSet;

use tracing::{Instrument, field};
use trine_core::Fold;
use trine_core::bm25::TermCounts;
use trine_core::model::{Filter, MAX_FILTER_IDS, Memory, TermPage, TermPoint};
use trine_core::sparse::TermVector;
use trine_store::{BatchPage, BatchRead, Store, StoreError, scroll_kept, scroll_terms_kept};
use trine_telemetry::int;
use uuid::Uuid;

use crate::query::LexicalQuery;

/// What the reads found: the text's phrase holders, the source's, and the
/// terms' points in the order read.
pub(crate) struct Found {
    pub(crate) in_texts: Vec<Memory>,
    pub(crate) in_sources: Vec<Memory>,
    pub(crate) rest: Vec<Read>,
}

/// The reads the counts plan ([`Plan`]). Beyond the ADR, the points holding
/// the query as a phrase are read too, so that the cap never drops a
/// verbatim match (the all-terms set follows point-id order and can exceed
/// the cap): the text's, and the source's (a source holds the query without
/// the text holding its terms). The reads a plan makes at once go to the
/// store together (`Store::read_batch`).
pub(crate) async fn read(
    store: &dyn Store,
    q: &LexicalQuery,
    terms: &[String],
    per_term: &[u64],
    span: &tracing::Span,
) -> Result<Found, StoreError> {
    // The phrase reads look for the query's words, not only its scored
    // terms: a holder of the phrase holds each of them too.
    let multi = q.is_phrase();
    let apart = Apart {
        store,
        q,
        terms,
        sources: q.texts.reads_sources(q.words.len()),
        span,
    };
    let in_sources = multi && q.texts.source_phrases;
    let order = rarest_first(per_term);
    match Plan::of(multi, per_term, q.cap) {
        Plan::AllTerms => apart.all_terms_first(order, in_sources).await,
        plan => {
            apart
                .read(&order, plan == Plan::RarestFirst, in_sources)
                .await
        }
    }
}

/// The terms' positions with their counts, rarest first (ties in query
/// order), those no point holds left out.
fn rarest_first(per_term: &[u64]) -> Vec<(usize, u64)> {
    let mut order: Vec<(usize, u64)> = per_term
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, count)| count > 0)
        .collect();
    order.sort_by_key(|&(i, count)| (count, i));
    order
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
    q: &'a LexicalQuery,
    /// The terms counted, in query order.
    terms: &'a [String],
    /// The term reads bring each point's source.
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
        limits(order, self.q.cap)
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
                        ..self.q.filter.clone()
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
        let pages = trine_store::read_kept(self.store, reads)
            .instrument(span)
            .await?;
        Ok(pages.into_iter())
    }

    /// The sources' phrase read.
    fn in_sources(&self) -> BatchRead {
        BatchRead::Memories {
            filter: self.q.in_source(),
            limit: self.q.cap,
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
    ) -> Result<Found, StoreError> {
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
            filter: self.q.in_text(),
            limit: self.q.cap,
        }));
        batch.extend(in_sources.then(|| self.in_sources()));
        if batch.is_empty() {
            return Ok(Found {
                in_texts: Vec::new(),
                in_sources: Vec::new(),
                rest: Vec::new(),
            });
        }
        let mut pages = self.batch(&batch).await?;
        let mut read = Reads::new(self.q.cap);
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
            let page = scroll_terms_kept(
                self.store,
                &term.filter,
                read.room(),
                Some(offset),
                self.sources,
            )
            .instrument(term.span.clone())
            .await?;
            read_term(self.store, &term.filter, self.sources, &mut read, page).await?;
        }
        Ok(Found {
            in_texts,
            in_sources,
            rest: read.list,
        })
    }

    /// The reads of [`Plan::AllTerms`] (every term is common): the
    /// all-terms read first (as the ADR says), and in the same round the
    /// first page of the rarest term's read, with room for the whole cap
    /// (the all-terms read may bring none), so that its new points are the
    /// ones read after it ([`read_term`]), and the sources' phrase read.
    /// Then the text's phrase read — of the all-terms points where that read
    /// came back short of the cap, of the whole index where it filled it —
    /// beside the other terms' reads: they leave room for none of its
    /// holders, which go first ([`phrase_first`]), and the first `cap` are
    /// kept — the same points as reading the terms after the phrase read, at
    /// the cost of as many more points read as the phrase read finds outside
    /// the all-terms set.
    async fn all_terms_first(
        &self,
        order: Vec<(usize, u64)>,
        in_sources: bool,
    ) -> Result<Found, StoreError> {
        let (store, cap, sources) = (self.store, self.q.cap, self.sources);
        let mut read = Reads::new(cap);
        // One term scored (the query's other words common): the all-terms
        // read is that term's read, and no other term is read.
        let order = if self.terms.len() > 1 {
            order
        } else {
            Vec::new()
        };
        let mut order = order.into_iter();
        let term = |(i, count): (usize, u64)| Term {
            span: tracing::info_span!(parent: self.span, "lexical.read.term", term = %self.terms[i], count = int(count), read = field::Empty),
            filter: self.q.with_terms(std::slice::from_ref(&self.terms[i])),
        };
        let next = order.next().map(term);
        let mut batch = vec![BatchRead::Terms {
            filter: self.q.with_terms(self.terms),
            limit: cap,
            source: sources,
        }];
        batch.extend(next.as_ref().map(|t| BatchRead::Terms {
            filter: t.filter.clone(),
            limit: cap,
            source: sources,
        }));
        batch.extend(in_sources.then(|| self.in_sources()));
        let mut pages = self.batch(&batch).await?;
        let page = answer(pages.next().and_then(BatchPage::terms))?;
        tracing::info_span!(parent: self.span, "lexical.read.all_terms", terms = int(self.terms.len()), read = int(page.points.len()));
        let next_page = match &next {
            Some(_) => Some(answer(pages.next().and_then(BatchPage::terms))?),
            None => None,
        };
        let in_sources = self.sources_found(in_sources, pages.next())?;
        let complete = page.points.len() < cap;
        read.extend(page.points.into_iter().map(Read::from));
        let in_texts = self.phrase_among(complete.then(|| read.ids())).instrument(
            tracing::info_span!(parent: self.span, "lexical.read.phrase", read = field::Empty),
        );
        let terms_read = async {
            if let (Some(t), Some(page)) = (&next, next_page) {
                let before = read.list.len();
                read_term(store, &t.filter, sources, &mut read, page)
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
                read_term(store, &t.filter, sources, &mut read, page)
                    .instrument(t.span.clone())
                    .await?;
                t.span.record("read", int(read.list.len() - before));
            }
            Ok::<_, StoreError>(read.list)
        };
        let (in_texts, rest) = tokio::try_join!(in_texts, terms_read)?;
        Ok(Found {
            in_texts,
            in_sources,
            rest,
        })
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
            ..self.q.in_text()
        };
        let memories = scroll_kept(self.store, &holders, self.q.cap).await?;
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
            seen: HashSet::with_capacity(cap.min(MAX_FILTER_IDS)),
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
struct Term {
    span: tracing::Span,
    filter: Filter,
}

impl Term {
    /// One page of the term's points, in point-id order from `offset`.
    async fn page(
        &self,
        store: &dyn Store,
        limit: usize,
        offset: Option<Uuid>,
        sources: bool,
    ) -> Result<TermPage, StoreError> {
        scroll_terms_kept(store, &self.filter, limit, offset, sources)
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
        page = scroll_terms_kept(store, filter, read.room(), Some(offset), sources).await?;
    }
}

/// The memories holding `query` as a phrase of tokens within `filter`: the
/// text's phrase index, and the source's where the collection has one —
/// two reads side by side, the text's first; at most `cap`. (One filter of
/// either phrase reads far slower: at 194,513 real memories the phrase
/// read's p95 went from 6 to 195 ms.)
pub(crate) async fn phrase_reads(
    store: &dyn Store,
    q: &LexicalQuery,
) -> Result<Vec<Memory>, StoreError> {
    let in_text = q.in_text();
    if !q.texts.source_phrases {
        return scroll_kept(store, &in_text, q.cap).await;
    }
    let in_source = q.in_source();
    let (text, source) = tokio::try_join!(
        scroll_kept(store, &in_text, q.cap),
        scroll_kept(store, &in_source, q.cap)
    )?;
    let mut seen = HashSet::new();
    Ok(text
        .into_iter()
        .chain(source)
        .filter(|m| seen.insert(m.id))
        .take(q.cap)
        .collect())
}

/// One candidate as read: the phrase reads carry the text; the others carry
/// the sparse encoding (term frequencies) and the source, the text only when
/// it had to be read.
pub(crate) struct Read {
    pub(crate) id: Uuid,
    pub(crate) source: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) tf: Option<std::sync::Arc<TermVector>>,
}

impl Read {
    /// BM25's counts: from the text when it was read, else from the sparse
    /// encoding (the same counts: `TermCounts::of_vector`).
    pub(crate) fn counts(&self, keys: &[String], fold: Fold) -> TermCounts {
        if let Some(text) = &self.text {
            return TermCounts::of_text(keys, text, fold);
        }
        self.tf
            .as_ref()
            .and_then(|tf| TermCounts::of_vector(keys, tf))
            .unwrap_or_else(|| TermCounts::of_text(keys, "", fold))
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
            tf: p.tf.filter(|tf| tf.tokens().is_some()),
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
            tf: text.map(|t| {
                std::sync::Arc::new(TermVector::new(&trine_core::sparse::encode_text(
                    t,
                    Fold::ASCII,
                )))
            }),
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

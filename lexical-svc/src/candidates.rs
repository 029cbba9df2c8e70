//! The `candidates` strategy over a store, as named stages: the counts, the
//! reads they plan ([`crate::reads`]), the phrase holders first, the texts
//! where they are needed, the BM25 scores.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use trine_core::Stage;

use futures::future::try_join_all;
use tracing::{Instrument, field};
use trine_core::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use trine_core::model::{Filter, MAX_FILTER_IDS};
use trine_core::{ErrorKind, Verbatim};
use trine_store::{Store, StoreError};
use trine_telemetry::int;
use uuid::Uuid;

use crate::Texts;
use crate::counts::Counter;
use crate::query::LexicalQuery;
use crate::reads::{Found, Read, read};

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
    let q = LexicalQuery::new(query, texts, filter.clone(), cap);
    read_candidates(store, counter, &q).await
}

/// The `candidates` strategy for `q`, in its stages — each a span:
/// [`count`] (`lexical.counts`: N and one count per term, which plan the
/// reads), [`read`] (`lexical.read`: the phrase reads, the all-terms read
/// where the plan has one, the per-term reads; then [`phrase_first`] and
/// [`fill_texts`]), [`score`] (`lexical.score`: BM25 and the verbatim
/// flags).
pub async fn read_candidates(
    store: &dyn Store,
    counter: &Counter,
    q: &LexicalQuery,
) -> Result<Candidates, LexicalError> {
    let terms = q.counted_terms();
    if terms.is_empty() || q.cap == 0 {
        return Ok(Candidates::default());
    }
    let read_span = tracing::info_span!("lexical.read", read = field::Empty);
    let read_started = Instant::now();
    let counts = count(counter, q, &terms).await?;
    let found = read(store, q, &terms, &counts.per_term, &read_span).await?;
    // A query the phrase reads find held keeps every word, common ones too
    // (docs/search.md, "Common words"): its words are counted and scored.
    let held = !found.in_texts.is_empty() || !found.in_sources.is_empty();
    let (terms, counts) = if held && q.terms.len() < q.words.len() {
        let words = q.counted_words();
        let all = count(counter, q, &words).await?;
        let took = counts.took + all.took;
        (words, Counts { took, ..all })
    } else {
        (terms, counts)
    };
    let mut read = phrase_first(found, q.cap);
    let verbatim = q.verbatim();
    fill_texts(store, &verbatim, &q.words, &mut read, &read_span).await?;
    read_span.record("read", int(read.len()));
    drop(read_span);
    let read_took = read_started.elapsed();

    let started = Instant::now();
    let (list, reference) = score(q, &verbatim, &terms, &read, &counts);
    Ok(Candidates {
        list,
        term_counts: terms.into_iter().zip(counts.per_term).collect(),
        total: counts.total,
        reference,
        timings: vec![
            (Stage::LexicalCounts, counts.took),
            (Stage::LexicalRead, read_took),
            (Stage::LexicalScore, started.elapsed()),
        ],
    })
}

/// What the counts found: N, each term's count (in query order), and how
/// long they took.
pub(crate) struct Counts {
    pub(crate) total: u64,
    pub(crate) per_term: Vec<u64>,
    pub(crate) took: Duration,
}

/// The counts (N and one per term: exact, the large ones maybe from the
/// count cache), all at once, under `lexical.counts` — one `lexical.count`
/// child per term, carrying its count and whether it was cached or kept by
/// the store.
pub(crate) async fn count(
    counter: &Counter,
    q: &LexicalQuery,
    terms: &[String],
) -> Result<Counts, StoreError> {
    let span = tracing::info_span!(
        "lexical.counts",
        terms = int(terms.len()),
        total = field::Empty
    );
    async {
        let started = Instant::now();
        let per_term = try_join_all(terms.iter().map(|term| {
            let filter = q.with_terms(std::slice::from_ref(term));
            let span = tracing::info_span!(
                "lexical.count",
                term = %term,
                count = field::Empty,
                cached = field::Empty,
                kept = field::Empty
            );
            async move {
                let count = counter.count(&filter).await?;
                let span = tracing::Span::current();
                span.record("count", int(count.value));
                span.record("cached", count.cached);
                span.record("kept", count.kept);
                Ok::<_, StoreError>(count.value)
            }
            .instrument(span)
        }));
        let (total, per_term) = tokio::try_join!(counter.count(&q.filter), per_term)?;
        tracing::Span::current().record("total", int(total.value));
        Ok(Counts {
            total: total.value,
            per_term,
            took: started.elapsed(),
        })
    }
    .instrument(span)
    .await
}

/// The phrase holders first (read with their texts; the text's, then the
/// source's), then the rest, each point once, at most `cap`.
fn phrase_first(found: Found, cap: usize) -> Vec<Read> {
    let mut seen: HashSet<Uuid> = HashSet::with_capacity(cap.min(MAX_FILTER_IDS));
    found
        .in_texts
        .into_iter()
        .chain(found.in_sources)
        .map(Read::from)
        .chain(found.rest)
        .filter(|r| seen.insert(r.id))
        .take(cap)
        .collect()
}

/// Reads the texts BM25 or the verbatim check cannot do without: points
/// without trine's sparse encoding, and every point of a single-word query
/// that is not that word alone (the verbatim check then needs the text).
/// `words` are every term of the query ([`LexicalQuery::words`]).
async fn fill_texts(
    store: &dyn Store,
    verbatim: &Verbatim,
    words: &[String],
    read: &mut [Read],
    span: &tracing::Span,
) -> Result<(), StoreError> {
    let single = words.len() == 1;
    let term_alone = single && verbatim.is_token(&words[0]);
    let lacking: Vec<Uuid> = read
        .iter()
        .filter(|r| r.text.is_none() && (r.tf.is_none() || (single && !term_alone)))
        .map(|r| r.id)
        .collect();
    if lacking.is_empty() {
        return Ok(());
    }
    let texts: HashMap<Uuid, String> = store
        .get(&lacking)
        .instrument(
            tracing::info_span!(parent: span, "lexical.read.texts", read = int(lacking.len())),
        )
        .await?
        .into_iter()
        .map(|m| (m.id, m.text))
        .collect();
    for r in read.iter_mut() {
        if r.text.is_none() {
            r.text = texts.get(&r.id).cloned();
        }
    }
    Ok(())
}

/// Each point read scored with BM25 (document frequencies from the counts,
/// N the count within the filters, the average length estimated on the
/// points read) and flagged verbatim, best first; and the score of a full
/// match ([`bm25::reference`]).
fn score(
    q: &LexicalQuery,
    verbatim: &Verbatim,
    terms: &[String],
    read: &[Read],
    counts: &Counts,
) -> (Vec<Candidate>, f64) {
    let _span = tracing::info_span!("lexical.score", candidates = int(read.len())).entered();
    let fold = q.fold();
    let term_alone = q.words.len() == 1 && verbatim.is_token(&q.words[0]);
    let keys = bm25::keys(terms, fold);
    let tfs: Vec<TermCounts> = read.iter().map(|r| r.counts(&keys, fold)).collect();
    let stats = CorpusStats {
        n: counts.total,
        avg_len: average_len(&tfs),
        df: terms
            .iter()
            .cloned()
            .zip(counts.per_term.iter().copied())
            .collect::<HashMap<_, _>>(),
    };
    let reference = bm25::reference(terms, &stats);
    let mut list: Vec<Candidate> = read
        .iter()
        .zip(&tfs)
        .map(|(r, c)| Candidate {
            id: r.id,
            score: bm25::score_counts(terms, c, &stats, Bm25Params::default()),
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
    (list, reference)
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

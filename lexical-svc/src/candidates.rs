//! The `candidates` strategy over a store.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use trine_core::Stage;

use futures::future::try_join_all;
use tracing::{Instrument, field};
use trine_core::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use trine_core::model::{Filter, Memory, SparseVector, TermPoint};
use trine_core::terms::{self, terms};
use trine_core::{ErrorKind, Fold, Verbatim, sparse};
use trine_store::{Store, StoreError};
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
}

impl LexicalError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Store(e) => e.kind(),
            Self::UnknownStrategy(_) | Self::EmptyGate(_) => ErrorKind::InvalidArgument,
            Self::NotReady { .. } | Self::NoEmbedder => ErrorKind::FailedPrecondition,
            Self::Embed(_) | Self::Unresolved => ErrorKind::Internal,
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
    // count cache) run concurrently with each other, with the all-terms read
    // and with the phrase read. Each stage is a span: `lexical.counts` (one
    // `lexical.count` child per term, carrying its count and whether it was
    // cached or kept by the store), `lexical.read` (the phrase and all-terms reads, then the
    // per-term reads), `lexical.score`.
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
    let all_terms = async {
        let started = Instant::now();
        let points = if terms.len() >= 2 {
            store
                .scroll_terms(&with_terms(filter, &terms), cap, None, sources)
                .await?
                .points
        } else {
            Vec::new()
        };
        tracing::Span::current().record("read", int(points.len()));
        Ok::<_, StoreError>((points, started))
    }
    .instrument(tracing::info_span!(parent: &read_span, "lexical.read.all_terms", terms = int(terms.len()), read = field::Empty));
    // Beyond the ADR: the points holding the query as a phrase are read
    // first, so that the cap never drops a verbatim match (the all-terms set
    // follows point-id order and can exceed the cap).
    let phrase = async {
        let memories = if terms.len() >= 2 {
            phrase_reads(store, query, texts, filter, cap).await?
        } else {
            Vec::new()
        };
        tracing::Span::current().record("read", int(memories.len()));
        Ok::<_, StoreError>(memories)
    }
    .instrument(
        tracing::info_span!(parent: &read_span, "lexical.read.phrase", read = field::Empty),
    );
    // While room is left: each term's points, rarest first. These reads
    // start as soon as the counts and the all-terms read are in, beside the
    // phrase read (often the slowest of the three: two scrolls); they leave
    // room for none of its holders, which go first in the merge below, and
    // the merge keeps the first `cap` — the same points as reading the terms
    // after the phrase read, at the cost of as many more points read as the
    // phrase read finds outside the all-terms set.
    let rest = async {
        let ((total, per_term, counts_took), (all_terms, read_started)) =
            tokio::try_join!(counts, all_terms)?;
        let mut seen: HashSet<Uuid> = HashSet::new();
        let mut read: Vec<Read> = all_terms
            .into_iter()
            .map(Read::from)
            .filter(|r| seen.insert(r.id))
            .take(cap)
            .collect();
        let mut order: Vec<(usize, u64)> = per_term.iter().copied().enumerate().collect();
        order.sort_by_key(|&(i, count)| (count, i));
        for (i, count) in order {
            if read.len() >= cap {
                break;
            }
            if count == 0 {
                continue;
            }
            let span = tracing::info_span!(parent: &read_span, "lexical.read.term", term = %terms[i], count = int(count), read = field::Empty);
            let before = read.len();
            async {
                let mut offset = None;
                while read.len() < cap {
                    let page = store
                        .scroll_terms(&term_filters[i], cap - read.len(), offset, sources)
                        .await?;
                    read.extend(
                        page.points
                            .into_iter()
                            .map(Read::from)
                            .filter(|r| seen.insert(r.id)),
                    );
                    match page.next_offset {
                        Some(next) => offset = Some(next),
                        None => break,
                    }
                }
                Ok::<_, StoreError>(())
            }
            .instrument(span.clone())
            .await?;
            span.record("read", int(read.len() - before));
        }
        Ok::<_, StoreError>((total, per_term, counts_took, read_started, read))
    };
    let (phrase, (total, per_term, counts_took, read_started, rest)) =
        tokio::try_join!(phrase, rest)?;
    // The phrase holders first (read with their texts), then the rest.
    let mut seen: HashSet<Uuid> = HashSet::new();
    let mut read: Vec<Read> = phrase
        .into_iter()
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
    let counts: Vec<TermCounts> = read.iter().map(|r| r.counts(&terms, fold)).collect();
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
    let in_text = Filter {
        phrase: Some(query.to_string()),
        ..filter.clone()
    };
    if !texts.source_phrases {
        return Ok(store.scroll(&in_text, cap, None).await?.memories);
    }
    let in_source = Filter {
        source_phrase: Some(query.to_string()),
        ..filter.clone()
    };
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
    fn counts(&self, terms: &[String], fold: Fold) -> TermCounts {
        match (&self.text, &self.tf) {
            (Some(text), _) => TermCounts::of_text(terms, text, fold),
            (None, Some(tf)) => TermCounts::of_sparse(terms, tf),
            (None, None) => TermCounts::of_text(terms, "", fold),
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

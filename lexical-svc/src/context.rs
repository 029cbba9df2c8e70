//! The messages around the best hits ([`trine_core::context`]), read and
//! scored for any strategy's list: the places of its best hits and the
//! stretches of their threads — from the postings the store keeps where
//! they decide the search's filter ([`Store::kept_around`]: no call), else
//! one read by id for the places and one for every span at once, within the
//! search's filters — then the list rescored with each window's BM25. A
//! question's two lists share the reads.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use tracing::{Instrument, field};
use trine_core::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use trine_core::context::{self, Context, Member, Place, Scoring};
use trine_core::model::{Filter, Memory};
use trine_core::sparse::TermVector;
use trine_core::{Fold, Stage, terms};
use trine_store::Store;
use trine_telemetry::int;
use uuid::Uuid;

use crate::candidates::count;
use crate::query::LexicalQuery;
use crate::{Candidate, Candidates, Counter, LexicalError};

/// Each list rescored with the windows of its best hits, the messages next
/// to them joining it (at most `q.cap` in all); the lists share the two
/// reads (a question's two lists: the strategy's and the question
/// strategy's). A list stays as it is where the context is off or none of
/// its best hits names a thread and a place.
pub async fn widen(
    store: &dyn Store,
    counter: &Counter,
    q: &LexicalQuery,
    lists: &mut [Candidates],
    context: Context,
) -> Result<(), LexicalError> {
    let tops: Vec<Vec<Uuid>> = lists
        .iter()
        .map(|l| l.list.iter().take(context.top).map(|c| c.id).collect())
        .collect();
    if context.is_off() || q.cap == 0 || tops.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let started = Instant::now();
    let span = tracing::info_span!(
        "lexical.context",
        placed = field::Empty,
        read = field::Empty,
        joined = field::Empty,
        kept = field::Empty
    );
    let around = around(store, q, &tops, context, &span).await?;
    let mut joined = 0usize;
    if let Some((places, read)) = around {
        for (found, tops) in lists.iter_mut().zip(&tops) {
            let places: Vec<Place> = tops
                .iter()
                .filter_map(|id| places.get(id).cloned())
                .collect();
            if places.is_empty() {
                continue;
            }
            let (terms, stats) = statistics(counter, q, found).await?;
            let keys = bm25::keys(&terms, q.fold());
            let members: Vec<Member> = read
                .iter()
                .map(|(id, place, content)| Member {
                    id: *id,
                    place: place.clone(),
                    counts: content.counts(&keys, q.fold()),
                })
                .collect();
            let own: Vec<_> = found.list.iter().map(|c| (c.id, c.score)).collect();
            let scoring = Scoring {
                terms: &terms,
                stats: &stats,
                params: Bm25Params::default(),
            };
            let widened = context::widen(&own, &places, &members, scoring, context);
            let verbatim: HashMap<_, _> = found.list.iter().map(|c| (c.id, c.verbatim)).collect();
            let before = found.list.len();
            found.list = widened
                .into_iter()
                .take(q.cap)
                .map(|(id, score)| Candidate {
                    id,
                    score,
                    verbatim: verbatim.get(&id).copied().unwrap_or(false),
                })
                .collect();
            joined += found.list.len().saturating_sub(before);
        }
    }
    span.record("joined", int(joined));
    let took = started.elapsed();
    for found in lists.iter_mut() {
        found.timings.push((Stage::LexicalContext, took));
    }
    Ok(())
}

/// What a window member's query-term counts are read from: its text (read
/// from the store) or its `sparse` vector (kept: the same counts,
/// [`TermCounts::of_vector`]).
enum Content {
    Text(String),
    Vector(Arc<TermVector>),
}

impl Content {
    fn counts(&self, keys: &[String], fold: Fold) -> TermCounts {
        match self {
            Self::Text(text) => TermCounts::of_text(keys, text, fold),
            // Only term-frequency vectors are kept ([`kept_around`]).
            Self::Vector(v) => TermCounts::of_vector(keys, v).unwrap_or(TermCounts {
                tf: vec![0; keys.len()],
                len: 0,
            }),
        }
    }
}

/// The places of the best hits and the messages around them, each with its
/// place and what its counts are read from.
type Around = (HashMap<Uuid, Place>, Vec<(Uuid, Place, Content)>);

/// The best hits of every list, each once.
fn top_ids(tops: &[Vec<Uuid>]) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = tops.iter().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The places of the best hits and the messages around them: from the
/// postings the store keeps where it answers ([`kept_around`]), else read
/// ([`read_around`]), under the context's span.
async fn around(
    store: &dyn Store,
    q: &LexicalQuery,
    tops: &[Vec<Uuid>],
    context: Context,
    span: &tracing::Span,
) -> Result<Option<Around>, LexicalError> {
    let ids = top_ids(tops);
    if let Some(kept) = span.in_scope(|| kept_around(store, q, &ids, context)) {
        span.record("kept", true);
        return Ok(kept);
    }
    read_around(store, q, &ids, context)
        .instrument(span.clone())
        .await
}

/// [`read_around`] answered from the postings the store keeps, where they
/// decide the search's filter and every message around holds trine's
/// term-frequency vector (else `None`: read). `Some(None)`: no best hit has
/// a place.
fn kept_around(
    store: &dyn Store,
    q: &LexicalQuery,
    ids: &[Uuid],
    context: Context,
) -> Option<Option<Around>> {
    let kept = store.kept_around(&q.filter, ids, context.window, context::MAX_SPAN_READ)?;
    let current = tracing::Span::current();
    current.record("placed", int(kept.places.len()));
    if kept.places.is_empty() {
        return Some(None);
    }
    let mut members = Vec::with_capacity(kept.members.len());
    for (id, place, vector) in kept.members {
        let vector = vector.filter(|v| v.tokens().is_some())?;
        members.push((id, place, Content::Vector(vector)));
    }
    current.record("read", int(members.len()));
    Some(Some((kept.places, members)))
}

/// The places of the best hits (one read by id: cheaper than a filtered
/// read on Edge, and the ids are the search's own), then — where one has a
/// place — every message of the stretches around
/// them, within the search's filters (one read), each with its place.
async fn read_around(
    store: &dyn Store,
    q: &LexicalQuery,
    ids: &[Uuid],
    context: Context,
) -> Result<Option<Around>, LexicalError> {
    let places: HashMap<Uuid, Place> = store
        .get(ids)
        .await?
        .iter()
        .filter_map(|m| Some((m.id, Place::of(m)?)))
        .collect();
    tracing::Span::current().record("placed", int(places.len()));
    if places.is_empty() {
        return Ok(None);
    }
    let spans = context::spans(places.values(), context.window);
    let limit = context::read_limit(&spans);
    let around = Filter {
        spans: Some(spans),
        ..q.filter.clone()
    };
    let read: Vec<(Uuid, Place, Content)> = store
        .scroll(&around, limit, None)
        .await?
        .memories
        .into_iter()
        .filter_map(|m: Memory| Some((m.id, Place::of(&m)?, Content::Text(m.text))))
        .collect();
    tracing::Span::current().record("read", int(read.len()));
    Ok(Some((places, read)))
}

/// The terms the list was scored on and their statistics within the
/// filters: the `candidates` strategy's own counts, or counted here (cached
/// as every count is) for the strategies that rank in the store.
async fn statistics(
    counter: &Counter,
    q: &LexicalQuery,
    found: &Candidates,
) -> Result<(Vec<String>, CorpusStats), LexicalError> {
    let (terms, n, per_term) = if found.term_counts.is_empty() {
        let terms = terms::bounded(q.terms.clone(), terms::MAX_COUNTED_TERMS);
        let counts = count(counter, q, &terms).await?;
        (terms, counts.total, counts.per_term)
    } else {
        let (terms, per_term) = found.term_counts.iter().cloned().unzip();
        (terms, found.total, per_term)
    };
    let df = terms.iter().cloned().zip(per_term).collect();
    Ok((
        terms,
        CorpusStats {
            n,
            avg_len: 0.0,
            df,
        },
    ))
}

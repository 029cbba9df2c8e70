//! The lexical strategies other than `candidates` (docs/design.md §3), and the
//! phrase reads that put points holding the query as a phrase in the list
//! before the cap can drop them.

use std::collections::HashSet;
use std::time::{Duration, Instant};
use trine_core::Stage;

use uuid::Uuid;

use trine_core::model::{Filter, Hit, PayloadRead};
use trine_core::{Strategy, Verbatim, gate, sparse};
use trine_embed::Embedder;
use trine_store::{Query, Store};

use crate::candidates::read_candidates;
use crate::query::LexicalQuery;
use crate::reads::phrase_reads;
use crate::{Candidate, Candidates, Counter, LexicalError, Texts};

/// What a strategy's query reads of each hit for the verbatim check: the
/// whole memory only for a single-term query that is not that term alone
/// (`Ședința.`: the text decides); otherwise the source alone — every hit of
/// a lone term holds it as a token, and a query of several terms is found in
/// the texts by the phrase reads ([`phrase_holders`]), so only the source
/// is left to check — or nothing, where the phrase reads find the sources too.
fn read_for(verbatim: &Verbatim, terms: &[String], texts: Texts) -> PayloadRead {
    match terms {
        [term] if !verbatim.is_token(term) => PayloadRead::Memory,
        _ if texts.reads_sources(terms.len()) => PayloadRead::Source,
        _ => PayloadRead::Nothing,
    }
}

/// The strategy's hits as candidates, each flagged verbatim from what was
/// read ([`read_for`]); the phrase reads flag the texts holding a query of
/// several terms afterwards.
fn verbatim_list(verbatim: &Verbatim, terms: &[String], hits: Vec<Hit>) -> Vec<Candidate> {
    let term_alone = matches!(terms, [term] if verbatim.is_token(term));
    hits.into_iter()
        .map(|h| Candidate {
            id: h.id,
            score: f64::from(h.score),
            verbatim: match &h.memory {
                Some(m) => verbatim.matches(&m.text, m.source.as_deref()),
                None => term_alone || h.source.as_deref().is_some_and(|s| verbatim.in_text(s)),
            },
        })
        .collect()
}

/// Runs one strategy (never `auto`: resolve it first) for `q`, reading at
/// most `q.cap` points ranked by the strategy.
pub async fn run(
    strategy: Strategy,
    store: &dyn Store,
    counter: &Counter,
    embedder: Option<&dyn Embedder>,
    q: &LexicalQuery,
) -> Result<Candidates, LexicalError> {
    if q.is_empty() {
        return Ok(Candidates::default());
    }
    let started = Instant::now();
    let verbatim = q.verbatim();
    let read = read_for(&verbatim, &q.words, q.texts);
    let (filter, cap) = (&q.filter, q.cap);
    let hits = match strategy {
        Strategy::Candidates => return read_candidates(store, counter, q).await,
        Strategy::Off => return Ok(Candidates::default()),
        Strategy::Auto => return Err(LexicalError::Unresolved),
        Strategy::Bm25 => {
            store
                .query(Query::text(q.terms.join(" "), filter, cap).with_payload(read))
                .await?
        }
        Strategy::Sparse => {
            let vector = sparse::encode_terms(&q.terms, q.fold());
            store
                .query(Query::sparse(vector, filter, cap).with_payload(read))
                .await?
        }
        Strategy::Gate => {
            let tokens = gate::salient_tokens(&q.text, q.fold());
            if tokens.is_empty() {
                return Err(LexicalError::EmptyGate(q.text.clone()));
            }
            let embedder = embedder.ok_or(LexicalError::NoEmbedder)?;
            let vector = embedder
                .embed(std::slice::from_ref(&q.text))
                .await
                .map_err(|e| LexicalError::Embed(e.to_string()))?
                .into_iter()
                .next()
                .ok_or_else(|| LexicalError::Embed("no vector for the query".to_string()))?;
            let gated = Filter {
                any_terms: Some(tokens),
                ..filter.clone()
            };
            store
                .query(Query::dense(vector, &gated, cap).with_payload(read))
                .await?
        }
    };
    Ok(Candidates {
        list: verbatim_list(&verbatim, &q.words, hits),
        term_counts: Vec::new(),
        total: 0,
        reference: 0.0,
        timings: vec![(Stage::LexicalRead, started.elapsed())],
    })
}

/// The points holding the query as a phrase: ids from the phrase index —
/// of the texts, and of the sources where they have one — within the
/// filters (at most `cap`), each confirmed by the verbatim check as
/// docs/design.md §4 says, and the read's time; none for a single term. It runs
/// beside the strategy's own query ([`with_phrase_holders`] merges).
pub async fn phrase_holders(
    store: &dyn Store,
    q: &LexicalQuery,
) -> Result<Option<(Vec<Uuid>, Duration)>, LexicalError> {
    if !q.is_phrase() || q.cap == 0 {
        return Ok(None);
    }
    let started = Instant::now();
    let memories = phrase_reads(store, q).await?;
    let verbatim = q.verbatim();
    let holders = memories
        .iter()
        .filter(|m| verbatim.matches(&m.text, m.source.as_deref()))
        .map(|m| m.id)
        .collect();
    Ok(Some((holders, started.elapsed())))
}

/// Flags the strategy's hits that hold the query as a phrase (it read no
/// texts) and adds the holders its list lacks, after it, keeping at most
/// `cap`: a verbatim match is kept even when the cap would drop it.
pub fn with_phrase_holders(
    mut found: Candidates,
    holders: Option<(Vec<Uuid>, Duration)>,
    cap: usize,
) -> Candidates {
    let Some((holders, took)) = holders else {
        return found;
    };
    let holding: HashSet<Uuid> = holders.iter().copied().collect();
    for candidate in &mut found.list {
        candidate.verbatim |= holding.contains(&candidate.id);
    }
    let listed: HashSet<Uuid> = found.list.iter().map(|c| c.id).collect();
    let extra: Vec<Candidate> = holders
        .into_iter()
        .filter(|id| !listed.contains(id))
        .map(|id| Candidate {
            id,
            score: 0.0,
            verbatim: true,
        })
        .collect();
    // Over the cap: the strategy's lowest plain candidates make room.
    let mut overflow = (found.list.len() + extra.len()).saturating_sub(cap);
    let mut i = found.list.len();
    while overflow > 0 && i > 0 {
        i -= 1;
        if !found.list[i].verbatim {
            found.list.remove(i);
            overflow -= 1;
        }
    }
    found.list.extend(extra);
    found.list.truncate(cap);
    found.timings.push((Stage::LexicalPhrase, took));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// A list from (id, verbatim) pairs, best first.
    fn list(items: &[(u128, bool)]) -> Candidates {
        Candidates {
            list: items
                .iter()
                .enumerate()
                .map(|(rank, &(n, verbatim))| Candidate {
                    id: id(n),
                    score: 10.0 - rank as f64,
                    verbatim,
                })
                .collect(),
            ..Candidates::default()
        }
    }

    #[test]
    fn phrase_holders_are_flagged_added_and_kept_within_the_cap() {
        // (list, holders (None: a single term), cap, expected (id, verbatim) in order)
        type Row = (
            &'static [(u128, bool)],
            Option<&'static [u128]>,
            usize,
            &'static [(u128, bool)],
        );
        let table: [Row; 6] = [
            // A single term: the list as the strategy made it.
            (&[(1, true), (2, false)], None, 8, &[(1, true), (2, false)]),
            // Listed holders are flagged where they rank.
            (
                &[(1, false), (2, false), (3, false)],
                Some(&[2]),
                8,
                &[(1, false), (2, true), (3, false)],
            ),
            // Holders the list lacks follow it.
            (
                &[(1, false), (2, false)],
                Some(&[9, 2]),
                8,
                &[(1, false), (2, true), (9, true)],
            ),
            // Over the cap: the lowest plain candidates make room.
            (
                &[(1, false), (2, false), (3, false)],
                Some(&[8, 9]),
                3,
                &[(1, false), (8, true), (9, true)],
            ),
            // A verbatim candidate is never dropped for a holder; the cap still holds.
            (
                &[(1, true), (2, true)],
                Some(&[9]),
                2,
                &[(1, true), (2, true)],
            ),
            // No holder found: nothing changes.
            (&[(1, false)], Some(&[]), 8, &[(1, false)]),
        ];
        for (before, holders, cap, want) in table {
            let holders = holders.map(|h| (h.iter().map(|&n| id(n)).collect(), Duration::ZERO));
            let got = with_phrase_holders(list(before), holders.clone(), cap);
            let got: Vec<(Uuid, bool)> = got.list.iter().map(|c| (c.id, c.verbatim)).collect();
            let want: Vec<(Uuid, bool)> = want.iter().map(|&(n, v)| (id(n), v)).collect();
            assert_eq!(got, want, "{before:?} with {holders:?}, cap {cap}");
        }
    }
}

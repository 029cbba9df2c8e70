#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! `candidates` scores BM25 from the points' sparse encodings, reading texts
//! only where it must, and ranks exactly as scoring the texts does: the same
//! scores, the same order, the same verbatim flags — for points with trine's
//! encoding, without one, and with another tool's (fractional) sparse vector;
//! and the same whether the sources are read or found by their phrase index;
//! a query's common words left out of the scores, never out of the flags.

mod support;

use std::collections::HashMap;

use trine_core::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use trine_core::model::{Filter, Memory, Point, SparseVector};
use trine_core::{Fold, Language, Verbatim, common, sparse, terms};
use trine_lexical::{CountCacheConfig, Counter, Texts, candidates};
use uuid::Uuid;

const TENANT: &str = "acme";

/// (text, source, how its sparse vector is written)
const TEXTS: &[(&str, Option<&str>, Encoding)] = &[
    (
        "Meeting 2026-11-11 09:58\nBună ziua, începem ședința.",
        Some("recording/0b85ed4a/chunk-1"),
        Encoding::Trine,
    ),
    (
        "Meeting 2026-11-12 09:58 about the billing retry",
        None,
        Encoding::Trine,
    ),
    (
        "billing retry billing retry, the billing job again",
        None,
        Encoding::Trine,
    ),
    (
        "the billing job retried at 09:58 on 2026-11-11",
        None,
        Encoding::None,
    ),
    (
        "a retry of the job after the billing outage",
        Some("git/billing.md"),
        Encoding::Foreign,
    ),
    ("Ședința de lucru: bugetul pe 2026", None, Encoding::Trine),
    ("sedinta noua, fara diacritice", None, Encoding::None),
    (
        "commit 943a48b fixed the billing retry",
        None,
        Encoding::Trine,
    ),
    ("unrelated words about lunch", None, Encoding::Trine),
    // The query is in the source alone, once as a phrase of tokens, once not.
    (
        "notes of the standup",
        Some("calendar/Billing  Retry.md"),
        Encoding::Trine,
    ),
    (
        "the billing retry notes",
        Some("calendar/billing-retry.md"),
        Encoding::Trine,
    ),
];

#[derive(Clone, Copy)]
enum Encoding {
    Trine,
    None,
    Foreign,
}

const QUERIES: &[&str] = &[
    "Meeting 2026-11-11 09:58",
    "billing retry",
    "billing",
    "sedinta",
    "ședință 2026",
    "943a48b",
    "943a48b?",
    "billing job",
    "lunch outage retry",
    // Common words: scored on `billing`, `job`; `about lunch` is held as a
    // phrase, so scored on both words; `lunch about` on `lunch` alone.
    "what did the billing job do",
    "about lunch",
    "lunch about",
];

#[tokio::test]
async fn scores_from_sparse_encodings_equal_scores_from_texts() {
    let (_dir, store, info) = support::new_collection().await;
    assert!(
        info.source_phrases,
        "a new collection indexes its sources' phrases"
    );
    let points: Vec<Point> = TEXTS
        .iter()
        .map(|(text, source, encoding)| Point {
            memory: Memory {
                source: source.map(str::to_string),
                ..Memory::new(Uuid::new_v4(), TENANT, *text)
            },
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: match encoding {
                Encoding::Trine => Some(sparse::encode_text(text, Fold::ASCII)),
                Encoding::None => None,
                Encoding::Foreign => Some(SparseVector {
                    indices: vec![sparse::token_id("billing"), 7],
                    values: vec![0.42, 1.3],
                }),
            },
            tokens: None,
        })
        .collect();
    let texts: HashMap<Uuid, Memory> = points
        .iter()
        .map(|p| (p.memory.id, p.memory.clone()))
        .collect();
    store.upsert(points).await.unwrap();
    let counter = Counter::new(store.clone(), CountCacheConfig::default());
    let filter = Filter::tenant(TENANT);

    let read = Texts {
        fold: Fold::ASCII,
        source_phrases: false,
        common: Some(Language::English),
    };
    let phrased = Texts {
        source_phrases: true,
        ..read
    };
    for (query, texts_read) in QUERIES.iter().flat_map(|q| [(q, read), (q, phrased)]) {
        let found = candidates(store.as_ref(), &counter, query, texts_read, &filter, 256)
            .await
            .unwrap();
        if texts_read.source_phrases {
            // The phrase index of the sources flags what reading them does,
            // and adds the points holding the query in their source alone,
            // which no term read reaches: a verbatim match is never lost.
            let reading = candidates(store.as_ref(), &counter, query, read, &filter, 256)
                .await
                .unwrap();
            let flags = |list: &[trine_lexical::Candidate]| -> HashMap<Uuid, bool> {
                list.iter().map(|c| (c.id, c.verbatim)).collect()
            };
            let (phrased_flags, read_flags) = (flags(&found.list), flags(&reading.list));
            for (id, verbatim) in &phrased_flags {
                match read_flags.get(id) {
                    Some(flag) => assert_eq!(flag, verbatim, "{query:?}: {:?}", texts[id].text),
                    None => assert!(*verbatim, "{query:?}: only a verbatim match is added"),
                }
            }
            assert!(
                read_flags.keys().all(|id| phrased_flags.contains_key(id)),
                "{query:?}: nothing read is lost"
            );
        }
        assert!(!found.list.is_empty(), "{query:?} finds something");
        // The same figures from the texts themselves.
        // A query some text or source holds as a phrase is scored on every
        // word; another on its words without the common ones.
        let words = terms(query, Fold::ASCII);
        let phrase = Verbatim::new(query, Fold::ASCII);
        let held = words.len() >= 2 && TEXTS.iter().any(|(t, s, _)| phrase.matches(t, *s));
        let terms = if held {
            words
        } else {
            common::scored(query, &words, Fold::ASCII, Some(Language::English))
        };
        let keys = bm25::keys(&terms, Fold::ASCII);
        let counts: Vec<TermCounts> = found
            .list
            .iter()
            .map(|c| TermCounts::of_text(&keys, &texts[&c.id].text, Fold::ASCII))
            .collect();
        let stats = CorpusStats {
            n: found.total,
            avg_len: counts.iter().map(|c| c.len).sum::<usize>() as f64 / counts.len() as f64,
            df: found.term_counts.iter().cloned().collect(),
        };
        let verbatim = Verbatim::new(query, Fold::ASCII);
        for (c, counts) in found.list.iter().zip(&counts) {
            let memory = &texts[&c.id];
            let want = bm25::score_counts(&terms, counts, &stats, Bm25Params::default());
            assert!(
                (c.score - want).abs() < 1e-9,
                "{query:?}: {:?} scores {} from its encoding, {want} from its text",
                memory.text,
                c.score
            );
            assert_eq!(
                c.verbatim,
                verbatim.matches(&memory.text, memory.source.as_deref()),
                "{query:?}: the verbatim flag of {:?}",
                memory.text
            );
        }
        let mut sorted = found.list.clone();
        sorted.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        assert_eq!(found.list, sorted, "{query:?}: best first");
    }
}

/// With the cap reached, the list is the phrase holders (the text's, then
/// the source's), then the all-terms points, then each term's points rarest
/// first in point-id order — whether the term reads wait for the phrase
/// read or run beside it.
#[tokio::test]
async fn the_cap_keeps_the_holders_then_the_rarest_terms_points_in_id_order() {
    let (_dir, store, _) = support::new_collection().await;
    // (id, text, source): `billing` is in 3 points, `retry` in 11.
    let mut rows: Vec<(u128, String, Option<&str>)> = vec![
        (5, "standup notes".into(), Some("calendar/billing retry.md")),
        (20, "the billing retry".into(), None),
        (31, "billing only one".into(), None),
        (32, "billing only two".into(), None),
    ];
    rows.extend((21..=30).map(|n| (n, format!("retry alone {n}"), None)));
    let points: Vec<Point> = rows
        .iter()
        .map(|(id, text, source)| Point {
            memory: Memory {
                source: source.map(str::to_string),
                ..Memory::new(Uuid::from_u128(*id), TENANT, text.as_str())
            },
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: Some(sparse::encode_text(text, Fold::ASCII)),
            tokens: None,
        })
        .collect();
    store.upsert(points).await.unwrap();
    let counter = Counter::new(store.clone(), CountCacheConfig::default());
    let texts = Texts {
        fold: Fold::ASCII,
        source_phrases: true,
        common: None,
    };
    // (cap, the ids listed). Where `billing` (3 points) exceeds the cap,
    // the all-terms read goes first; where it fits, its points are read
    // first and hold the all-terms set (20).
    let table: [(usize, &[u128]); 5] = [
        // The all-terms read fills the cap: the phrase read asks the whole
        // index, and the text's holder comes first.
        (1, &[20]),
        // The holders (20 by its text, 5 by its source) and nothing else.
        (2, &[20, 5]),
        // Then `billing`, the rarer term, in id order (20 is listed already).
        (4, &[20, 5, 31, 32]),
        // Then `retry`, in id order.
        (6, &[20, 5, 31, 32, 21, 22]),
        // Everything holding a term, and the source's holder.
        (
            256,
            &[5, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32],
        ),
    ];
    for (cap, want) in table {
        let found = candidates(
            store.as_ref(),
            &counter,
            "billing retry",
            texts,
            &Filter::tenant(TENANT),
            cap,
        )
        .await
        .unwrap();
        let mut got: Vec<u128> = found.list.iter().map(|c| c.id.as_u128()).collect();
        got.sort_unstable();
        let mut want = want.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "cap {cap}");
        for c in &found.list {
            let holder = [5, 20].contains(&c.id.as_u128());
            assert_eq!(
                c.verbatim, holder,
                "cap {cap}: the verbatim flag of {}",
                c.id
            );
        }
    }

    // A term no point holds: no text holds the phrase, and the other term's
    // points are all read.
    let found = candidates(
        store.as_ref(),
        &counter,
        "billing nowhere",
        texts,
        &Filter::tenant(TENANT),
        256,
    )
    .await
    .unwrap();
    let mut got: Vec<u128> = found.list.iter().map(|c| c.id.as_u128()).collect();
    got.sort_unstable();
    assert_eq!(got, [20, 31, 32]);
    assert!(found.list.iter().all(|c| !c.verbatim));
}

/// Whatever the counts and the cap, the points listed are those of the
/// reads one after the other: the phrase holders, the all-terms points,
/// then each term's points rarest first, in point-id order, each point
/// once, the first `cap` — though the terms are read side by side, each
/// without the rarer terms' points.
#[tokio::test]
async fn the_terms_read_side_by_side_list_the_points_of_the_reads_in_turn() {
    let (_dir, store, _) = support::new_collection().await;
    // Five words of falling frequency; point n holds word w where n is a
    // multiple of w's step, in an order that makes some phrases.
    let words = ["alpha", "bravo", "charlie", "delta", "echo"];
    let steps = [2u128, 3, 5, 7, 11];
    let texts: Vec<(u128, String)> = (1..=400u128)
        .map(|n| {
            let mut held: Vec<&str> = words
                .iter()
                .zip(steps)
                .filter(|&(_, step)| n % step == 0)
                .map(|(w, _)| *w)
                .collect();
            if n % 4 == 0 {
                held.reverse();
            }
            (n, format!("{} filler{}", held.join(" "), n % 13))
        })
        .collect();
    let points: Vec<Point> = texts
        .iter()
        .map(|(n, text)| Point {
            memory: Memory::new(Uuid::from_u128(*n), TENANT, text.as_str()),
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: Some(sparse::encode_text(text, Fold::ASCII)),
            tokens: None,
        })
        .collect();
    store.upsert(points).await.unwrap();
    let counter = Counter::new(store.clone(), CountCacheConfig::default());
    let texts_of = Texts {
        fold: Fold::ASCII,
        source_phrases: true,
        common: None,
    };
    let holds = |text: &str, word: &str| text.split(' ').any(|w| w == word);
    let queries = [
        "alpha bravo",
        "bravo alpha",
        "charlie delta",
        "delta echo alpha",
        "echo charlie bravo alpha",
        "alpha nowhere",
        "echo",
        "delta charlie",
    ];
    for query in queries {
        let query_words: Vec<&str> = query.split(' ').collect();
        let of = |word: &str| -> Vec<u128> {
            texts
                .iter()
                .filter(|(_, text)| holds(text, word))
                .map(|(n, _)| *n)
                .collect()
        };
        let holders: Vec<u128> = if query_words.len() > 1 {
            texts
                .iter()
                .filter(|(_, text)| text.contains(query))
                .map(|(n, _)| *n)
                .collect()
        } else {
            Vec::new()
        };
        let every: Vec<u128> = texts
            .iter()
            .filter(|(_, text)| query_words.iter().all(|w| holds(text, w)))
            .map(|(n, _)| *n)
            .collect();
        let mut by_count: Vec<(usize, Vec<u128>)> =
            query_words.iter().map(|w| of(w)).enumerate().collect();
        by_count.sort_by_key(|(i, points)| (points.len(), *i));
        for cap in [1usize, 5, 20, 60, 130, 256] {
            let mut seen = std::collections::HashSet::new();
            let want: std::collections::BTreeSet<u128> = holders
                .iter()
                .chain(&every)
                .chain(by_count.iter().flat_map(|(_, points)| points))
                .copied()
                .filter(|n| seen.insert(*n))
                .take(cap)
                .collect();
            let found = candidates(
                store.as_ref(),
                &counter,
                query,
                texts_of,
                &Filter::tenant(TENANT),
                cap,
            )
            .await
            .unwrap();
            let got: std::collections::BTreeSet<u128> =
                found.list.iter().map(|c| c.id.as_u128()).collect();
            assert_eq!(got, want, "{query:?} cap {cap}");
        }
    }
}

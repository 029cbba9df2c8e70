//! `trine_core::terms` and the full-text index on the text split text the
//! same way (docs/design.md §2): every term we make can match, and pieces of a
//! different split cannot.
//!
//! Each string is one memory's text in an Edge collection. For each:
//! - each term of `terms(s)` alone (`all_terms = [term]`) finds it;
//! - all its terms together find it;
//! - its tokens joined by spaces, as a phrase, find it (tokens, not terms:
//!   terms drop repeats, and a phrase needs every word in order);
//! - pieces a different tokenizer would index (finer or coarser splits,
//!   prefixes) find nothing.
//!
//! A `MatchText` query is split by the index's own tokenizer, so a coarser
//! piece such as `foo_bar` is split into `foo` and `bar` before matching and
//! would match: that `foo` alone matches already shows the index splits at
//! `_`. The negative rows are therefore pieces that survive the query-side
//! split unchanged: a finer split (`deb`, `edin`) or a fused one (`foobar`).
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;

use std::collections::BTreeSet;

use trine_store::{CollectionSpec, EdgeStore, EmbedderId, Filter, Fold, Memory, Point, Store};
use uuid::Uuid;

const TENANT: &str = "tokens";

/// The text, the terms we expect of it, and pieces that must not match.
const TABLE: &[(&str, &[&str], &[&str])] = &[
    (
        "Meeting 2026-11-11 09:58",
        &["meeting", "2026", "11", "09", "58"],
        &["meet", "20261111", "0958", "9", "202"],
    ),
    (
        "CVE-2023-4863",
        &["cve", "2023", "4863"],
        &["cve2023", "cve20234863", "486", "ve"],
    ),
    (
        "ședință",
        &["sedinta"],
        &["edin", "sedin", "ședin", "ț", "sedintaa"],
    ),
    (
        "foo_bar.baz",
        &["foo", "bar", "baz"],
        &["foobar", "barbaz", "fo", "ba"],
    ),
    (
        "1:2.36-9+deb12u4",
        &["1", "2", "36", "9", "deb12u4"],
        &["deb", "u4", "12u4", "deb12", "236", "3"],
    ),
];

#[tokio::test]
async fn terms_and_the_text_index_split_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = collection(dir.path()).await;
    let texts: Vec<String> = TABLE.iter().map(|(text, _, _)| text.to_string()).collect();
    let ids = store_texts(&store, &texts).await;

    for ((text, want_terms, foreign), id) in TABLE.iter().zip(&ids) {
        let terms = trine_core::terms(text, Fold::ASCII);
        assert_eq!(terms, *want_terms, "terms of {text:?}");

        for term in &terms {
            let found = matching(
                &store,
                Filter {
                    all_terms: vec![term.clone()],
                    ..base()
                },
            )
            .await;
            assert!(
                found.contains(id),
                "term {term:?} of {text:?} finds it in the index"
            );
        }
        let found = matching(
            &store,
            Filter {
                all_terms: terms.clone(),
                ..base()
            },
        )
        .await;
        assert_eq!(
            found,
            vec![*id],
            "all terms of {text:?} find it, and only it"
        );

        let phrase = trine_core::tokens(text, Fold::ASCII)
            .collect::<Vec<_>>()
            .join(" ");
        let found = matching(
            &store,
            Filter {
                phrase: Some(phrase.clone()),
                ..base()
            },
        )
        .await;
        assert_eq!(
            found,
            vec![*id],
            "the phrase {phrase:?} of {text:?} finds it"
        );

        for piece in *foreign {
            let found = matching(
                &store,
                Filter {
                    all_terms: vec![piece.to_string()],
                    ..base()
                },
            )
            .await;
            assert!(
                !found.contains(id),
                "{piece:?} is not a token of {text:?}, yet the index matches it"
            );
        }
    }
}

/// Non-ASCII letters and digits of the blocks Lucene's ASCII folding maps
/// (Latin-1 to Latin Extended, IPA, phonetic extensions, Latin Extended
/// Additional, super- and subscripts, letterlike and enclosed forms, Latin
/// Extended C-E, ligatures, fullwidth forms), with Greek and Cyrillic as
/// letters that must stay as they are.
fn folding_candidates() -> Vec<char> {
    let ranges = [
        0x0080..=0x052F,
        0x1D00..=0x1EFF,
        0x2070..=0x24FF,
        0x2C60..=0x2C7F,
        0xA720..=0xA7FF,
        0xAB30..=0xAB6F,
        0xFB00..=0xFB06,
        0xFF10..=0xFF5A,
    ];
    ranges
        .into_iter()
        .flatten()
        .filter_map(char::from_u32)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// Every folded character is indexed alone, next to every ASCII token of
/// one or two letters or digits (what characters fold to). For each
/// character, the points the index finds for it — the index folds the query
/// as it folds the texts — must be exactly those whose token trine folds to
/// the same string: so the index folds the character to what trine does.
/// And where trine's fold is plain letters and digits, searching for it
/// finds the character's point.
#[tokio::test]
async fn ascii_folding_agrees_with_the_index_character_by_character() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = collection(dir.path()).await;
    let info = store.info().await.expect("info").expect("exists");
    assert!(
        info.text_index.is_some_and(|t| t.ascii_folding),
        "a new collection folds"
    );

    let alnum: Vec<char> = ('a'..='z').chain('0'..='9').collect();
    let mut texts: Vec<String> = alnum.iter().map(char::to_string).collect();
    for a in &alnum {
        texts.extend(alnum.iter().map(|b| format!("{a}{b}")));
    }
    let chars = folding_candidates();
    texts.extend(chars.iter().map(char::to_string));
    let ids = store_texts(&store, &texts).await;
    let folded: Vec<String> = texts.iter().map(|t| Fold::ASCII.apply(t)).collect();

    let mut disagree = Vec::new();
    for c in &chars {
        let token = c.to_string();
        let mine = Fold::ASCII.apply(&token);
        let want: BTreeSet<Uuid> = folded
            .iter()
            .zip(&ids)
            .filter(|(f, _)| **f == mine)
            .map(|(_, id)| *id)
            .collect();
        let got = found(&store, &token).await;
        let own = ids[texts.iter().position(|t| *t == token).unwrap()];
        let by_fold_ok = !mine.chars().all(|c| c.is_ascii_alphanumeric())
            || found(&store, &mine).await.contains(&own);
        if got != want || !by_fold_ok {
            let index: Vec<&str> = got
                .iter()
                .filter_map(|id| ids.iter().position(|i| i == id))
                .map(|i| texts[i].as_str())
                .collect();
            disagree.push(format!(
                "U+{:04X} {c:?}: trine folds to {mine:?}, the index matches it with {index:?}",
                u32::from(*c)
            ));
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of {} characters fold otherwise than the index:\n{}",
        disagree.len(),
        chars.len(),
        disagree.join("\n")
    );
}

/// An Edge collection of trine's layout (its text index folds).
async fn collection(dir: &std::path::Path) -> Arc<EdgeStore> {
    let store = Arc::new(EdgeStore::open(dir, "tokens").expect("open"));
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "none".into(),
            dim: 4,
        },
        fold: Fold::default(),
    };
    store.ensure_collection(&spec).await.expect("ensure");
    store
}

/// Stores one memory per text; their ids, in order.
async fn store_texts(store: &Arc<EdgeStore>, texts: &[String]) -> Vec<Uuid> {
    let points: Vec<Point> = texts
        .iter()
        .map(|text| Point {
            memory: Memory::new(Uuid::new_v4(), TENANT, text.clone()),
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: None,
            tokens: None,
        })
        .collect();
    let ids = points.iter().map(|p| p.memory.id).collect();
    for batch in points.chunks(512) {
        store.upsert(batch.to_vec()).await.expect("upsert");
    }
    ids
}

/// The ids of the points holding `term`, as the index matches it.
async fn found(store: &Arc<EdgeStore>, term: &str) -> BTreeSet<Uuid> {
    let filter = Filter {
        all_terms: vec![term.to_string()],
        ..base()
    };
    let page = store.scroll(&filter, 1000, None).await.expect("scroll");
    page.memories.into_iter().map(|m| m.id).collect()
}

fn base() -> Filter {
    Filter::tenant(TENANT)
}

/// The ids matching the filter (there are only a few points).
async fn matching(store: &Arc<EdgeStore>, filter: Filter) -> Vec<Uuid> {
    let page = store.scroll(&filter, 100, None).await.expect("scroll");
    let n = store.count(&filter).await.expect("count");
    assert_eq!(n, page.memories.len() as u64, "count and scroll agree");
    page.memories.into_iter().map(|m| m.id).collect()
}

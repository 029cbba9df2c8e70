//! `trine_core::terms` and the full-text index on the text split text the
//! same way (DESIGN.md §1): every term we make can match, and pieces of a
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

use trine_store::{CollectionSpec, EdgeStore, EmbedderId, Filter, Memory, Point, Store};
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
    ("ședință", &["ședință"], &["edin", "sedinta", "ședin", "ț"]),
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
    let store = Arc::new(EdgeStore::open(dir.path(), "tokens").expect("open"));
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "none".into(),
            dim: 4,
        },
    };
    store.ensure_collection(&spec).await.expect("ensure");

    let mut ids = Vec::new();
    let mut points = Vec::new();
    for (text, _, _) in TABLE {
        let id = Uuid::new_v4();
        ids.push(id);
        points.push(Point {
            memory: Memory {
                id,
                text: text.to_string(),
                source: None,
                tenant: TENANT.into(),
                project: None,
                kind: None,
                created_at: None,
                valid_from: None,
                valid_until: None,
                metadata: None,
            },
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: None,
        });
    }
    store.upsert(points).await.expect("upsert");

    for ((text, want_terms, foreign), id) in TABLE.iter().zip(&ids) {
        let terms = trine_core::terms(text);
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

        let phrase = trine_core::tokens(text).collect::<Vec<_>>().join(" ");
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

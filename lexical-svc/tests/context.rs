#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! The messages around a hit (`trine_core::context`) through the lexical
//! channel's lists, on an embedded store: the reply next to the message
//! that holds the words joins the list below it, under every strategy that
//! ranks text; never a message of another tenant, or one the filters leave
//! out; nothing changes for memories without a thread, or with the context
//! off.

mod support;

use std::sync::Arc;

use trine_core::context::Context;
use trine_core::model::{Filter, Memory, Point};
use trine_core::{Fold, Strategy, sparse};
use trine_lexical::{LexicalConfig, LexicalQuery, LexicalService, Texts};
use trine_store::Store;
use uuid::Uuid;

/// (id, tenant, project, thread and seq, text)
type Row = (
    u128,
    &'static str,
    &'static str,
    Option<(&'static str, u64)>,
    &'static str,
);

const ROWS: &[Row] = &[
    (
        1,
        "acme",
        "a",
        Some(("s1", 0)),
        "Did you sign up for the pottery class?",
    ),
    (
        2,
        "acme",
        "a",
        Some(("s1", 1)),
        "Yes, every Tuesday at the community centre",
    ),
    (
        3,
        "acme",
        "a",
        Some(("s1", 2)),
        "Nice. How is your dog doing?",
    ),
    (4, "acme", "a", Some(("s1", 3)), "He chewed my shoes again"),
    // Another project's message next to the class in another thread.
    (
        5,
        "acme",
        "a",
        Some(("s2", 5)),
        "The pottery class was cancelled",
    ),
    (
        6,
        "acme",
        "b",
        Some(("s2", 6)),
        "Then let us meet on Friday",
    ),
    // Alone: no thread.
    (7, "acme", "a", None, "pottery glaze recipes"),
    (8, "acme", "a", None, "glaze chemistry notes"),
    // The same thread name in another tenant.
    (
        9,
        "other",
        "a",
        Some(("s1", 1)),
        "a secret of the other tenant",
    ),
];

/// The rows as points.
fn points() -> Vec<Point> {
    ROWS.iter()
        .map(|(id, tenant, project, place, text)| Point {
            memory: Memory {
                project: Some((*project).to_string()),
                thread: place.map(|(t, _)| t.to_string()),
                seq: place.map(|(_, s)| s),
                ..Memory::new(Uuid::from_u128(*id), *tenant, *text)
            },
            dense: vec![1.0, 0.0, 0.0, 0.0],
            sparse: Some(sparse::encode_text(text, Fold::ASCII)),
            tokens: None,
        })
        .collect()
}

async fn store() -> (tempfile::TempDir, Arc<dyn Store>) {
    let (dir, store, _) = support::new_collection().await;
    store.upsert(points()).await.unwrap();
    (dir, store)
}

async fn list(
    store: &Arc<dyn Store>,
    context: Context,
    strategy: Strategy,
    filter: Filter,
) -> Vec<u128> {
    let found = scored(store, context, strategy, filter).await;
    let scores: Vec<f64> = found.iter().map(|(_, score)| *score).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "{strategy:?}: best first: {scores:?}"
    );
    found.into_iter().map(|(id, _)| id).collect()
}

/// The lexical channel's list for "pottery class" under `strategy`: each
/// id with its score.
async fn scored(
    store: &Arc<dyn Store>,
    context: Context,
    strategy: Strategy,
    filter: Filter,
) -> Vec<(u128, f64)> {
    let config = LexicalConfig {
        context,
        ..LexicalConfig::default()
    };
    let service = LexicalService::new(store.clone(), config);
    let texts = Texts {
        fold: Fold::ASCII,
        source_phrases: false,
        common: None,
    };
    let q = LexicalQuery::new("pottery class", texts, filter, 256);
    let found = service.list(strategy, &q).await.unwrap();
    found
        .list
        .iter()
        .map(|c| (c.id.as_u128(), c.score))
        .collect()
}

#[tokio::test]
async fn the_reply_joins_below_the_message_that_holds_the_words() {
    let (_dir, store) = store().await;
    // One message each side (the default reaches two): 3 stays out.
    let on = Context {
        window: 1,
        weight: 0.5,
        top: 32,
    };
    let off = Context { window: 0, ..on };
    let acme = Filter::tenant("acme");
    let in_a = Filter {
        projects: vec!["a".into()],
        ..Filter::tenant("acme")
    };
    for strategy in [Strategy::Candidates, Strategy::Sparse, Strategy::Bm25] {
        let alone = list(&store, off, strategy, acme.clone()).await;
        let mut holders = alone.clone();
        holders.sort_unstable();
        assert_eq!(
            holders,
            vec![1, 5, 7],
            "{strategy:?}: off, the holders only"
        );

        let got = list(&store, on, strategy, acme.clone()).await;
        let at = |n: u128| got.iter().position(|id| *id == n);
        // 2 answers 1; 6 answers 5: each joins, below its holder. 3 is two
        // messages from a holder; 8 has no thread; 9 is another tenant's.
        assert!(at(2).is_some() && at(1) < at(2), "{strategy:?}: {got:?}");
        assert!(at(6).is_some() && at(5) < at(6), "{strategy:?}: {got:?}");
        for never in [3, 4, 8, 9] {
            assert_eq!(at(never), None, "{strategy:?}: {never} in {got:?}");
        }

        // The filters hold for the neighbours too: 6 is project b's.
        let got = list(&store, on, strategy, in_a.clone()).await;
        assert!(
            got.contains(&2) && !got.contains(&6),
            "{strategy:?}: {got:?}"
        );
    }
}

/// A store whose postings answer nothing around a hit: the context reads.
struct Reading;

impl trine_store::Around for Reading {
    fn kept_around<'s>(
        &'s self,
        _: &'s Arc<dyn Store>,
        _: &Filter,
        _: &[Uuid],
        _: u64,
        _: usize,
    ) -> Option<trine_store::Nearby> {
        None
    }
}

#[tokio::test]
async fn kept_windows_rank_as_the_read_ones() {
    let (_dir, edge, _) = support::new_edge().await;
    let store: Arc<dyn Store> = edge.clone();
    store.upsert(points()).await.unwrap();
    let mut keeping = edge.keeping_changes().expect("the collection exists");
    store.keep_counts();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        keeping.wait_for(|k| *k == trine_store::Keeping::Ready),
    )
    .await
    .expect("the postings were built within a minute")
    .expect("the store lives");
    let hit = [Uuid::from_u128(1)];
    let kept = store
        .kept_around(&Filter::tenant("acme"), &hit, 1, 100)
        .expect("the postings decide a tenant's threads");
    let mut members: Vec<u128> = kept.members.iter().map(|m| m.0.as_u128()).collect();
    members.sort_unstable();
    assert_eq!(
        members,
        vec![1, 2, 3],
        "seq 0..=2 of s1, never the other tenant's"
    );
    assert_eq!(
        store.kept_around(&Filter::tenant("other"), &hit, 1, 100),
        Some(trine_store::Nearby::default()),
        "another tenant's hit has no place here"
    );

    let reading: Arc<dyn Store> = Arc::new(trine_store::Wrapped::with(store.clone(), Reading));
    let in_a = Filter {
        projects: vec!["a".into()],
        ..Filter::tenant("acme")
    };
    for strategy in [Strategy::Candidates, Strategy::Sparse, Strategy::Bm25] {
        for filter in [Filter::tenant("acme"), in_a.clone()] {
            let on = Context::default();
            // Scores to 9 decimals (the kept counts come from the vectors,
            // the read ones from the texts).
            let to_9 = |list: Vec<(u128, f64)>| -> Vec<(u128, String)> {
                list.into_iter()
                    .map(|(id, score)| (id, format!("{score:.9}")))
                    .collect()
            };
            assert_eq!(
                to_9(scored(&store, on, strategy, filter.clone()).await),
                to_9(scored(&reading, on, strategy, filter.clone()).await),
                "{strategy:?} {filter:?}: kept and read windows rank alike"
            );
        }
    }
}

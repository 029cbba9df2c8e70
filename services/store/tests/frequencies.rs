//! The embedded store's document frequencies ([`Store::counted`]) against its
//! own exact counts ([`Store::count`]), through every kind of write: new
//! points, a point rewritten into another text and tenant, a batch that
//! writes one id twice, deletes (of unknown ids too), a reopen, and a text
//! index rebuilt with another fold. Wherever the statistics answer, they
//! answer what the store counts; where they cannot decide (a validity view
//! over bounded memories, any other condition), they do not answer.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use trine_store::{
    CollectionSpec, Counted, EdgeStore, EmbedderId, Filter, Fold, Keeping, Memory, Point, Store,
};
use uuid::Uuid;

fn spec() -> CollectionSpec {
    CollectionSpec {
        embedder: EmbedderId {
            name: "frequencies-test".into(),
            dim: 4,
        },
        fold: Fold::default(),
    }
}

fn memory(tenant: &str, text: &str) -> Memory {
    Memory::new(Uuid::new_v4(), tenant, text)
}

fn point(memory: Memory) -> Point {
    Point {
        memory,
        dense: vec![1.0, 0.0, 0.0, 0.0],
        sparse: None,
        tokens: None,
    }
}

async fn put(store: &dyn Store, memories: Vec<Memory>) {
    store
        .upsert(memories.into_iter().map(point).collect())
        .await
        .unwrap();
}

fn now() -> Option<DateTime<Utc>> {
    Some(Utc::now())
}

fn term(tenant: &str, term: &str) -> Filter {
    Filter {
        all_terms: vec![term.to_string()],
        ..Filter::tenant(tenant)
    }
}

const TENANTS: &[&str] = &["acme", "globex", "bounded", "nobody"];
const TERMS: &[&str] = &[
    "meeting", "2026", "11", "09", "58", "notes", "release", "sedinta", "lucru", "absent",
];

async fn open(dir: &Path) -> Arc<EdgeStore> {
    let store = Arc::new(EdgeStore::open(dir, "frequencies").unwrap());
    store.ensure_collection(&spec()).await.unwrap();
    store
}

/// Waits until the statistics answer: the first ask starts their build, and
/// the store says when it ends.
async fn ready(store: &EdgeStore) {
    let mut keeping = store.keeping_changes().expect("the collection exists");
    if store.counted(&Filter::tenant("acme")).exact().is_none() {
        tokio::time::timeout(
            Duration::from_secs(60),
            keeping.wait_for(|k| *k == Keeping::Ready),
        )
        .await
        .expect("the statistics were built within a minute")
        .expect("the store lives");
    }
    assert!(store.counted(&Filter::tenant("acme")).exact().is_some());
}

/// Every filter of the table: the statistics answer what the store counts,
/// or, where they cannot decide, nothing.
async fn agree(store: &dyn Store, when: &str) {
    for tenant in TENANTS {
        let mut filters = vec![(Filter::tenant(*tenant), true)];
        for t in TERMS {
            filters.push((term(tenant, t), true));
        }
        // A validity view is decided only where no memory is bounded.
        let valid = *tenant != "bounded";
        filters.push((
            Filter {
                valid_at: now(),
                ..term(tenant, "meeting")
            },
            valid,
        ));
        filters.push((
            Filter {
                valid_at: now(),
                ..Filter::tenant(*tenant)
            },
            valid,
        ));
        // Other conditions: never.
        filters.push((
            Filter {
                kinds: vec!["note".into()],
                ..term(tenant, "meeting")
            },
            false,
        ));
        filters.push((
            Filter {
                all_terms: vec!["meeting".into(), "notes".into()],
                ..Filter::tenant(*tenant)
            },
            false,
        ));
        for (filter, decided) in filters {
            let exact = store.count(&filter).await.unwrap();
            let kept = store.counted(&filter).exact();
            if decided {
                assert_eq!(kept, Some(exact), "{when}: {filter:?}");
            } else {
                assert_eq!(kept, None, "{when}: {filter:?}");
            }
        }
    }
}

#[tokio::test]
async fn kept_counts_are_the_stores_counts_through_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let rewritten = memory("acme", "Meeting notes, 2026-11-11");
    let deleted = memory("globex", "meeting 09:58 release");
    put(
        store.as_ref(),
        vec![
            memory("acme", "Meeting 2026-11-11 09:58"),
            memory("acme", "release notes for 11"),
            memory("acme", "Ședință de lucru"),
            rewritten.clone(),
            deleted.clone(),
            memory("globex", "meeting meeting MEETING"),
            memory("bounded", "meeting in 2026"),
            Memory {
                valid_until: now(),
                ..memory("bounded", "release meeting")
            },
        ],
    )
    .await;
    // Not built until a count asks; then built from the shard.
    assert_eq!(store.counted(&Filter::tenant("acme")), Counted::Later);
    ready(&store).await;
    agree(store.as_ref(), "built").await;

    put(
        store.as_ref(),
        vec![memory("acme", "58 notes"), memory("nobody", "lucru")],
    )
    .await;
    agree(store.as_ref(), "new points").await;

    // Rewritten into another text and tenant.
    put(
        store.as_ref(),
        vec![Memory {
            tenant: "globex".into(),
            text: "release 09".into(),
            ..rewritten.clone()
        }],
    )
    .await;
    agree(store.as_ref(), "rewritten").await;

    // One id twice in a batch: the last version stands.
    let twice = memory("acme", "first version: release");
    put(
        store.as_ref(),
        vec![
            twice.clone(),
            Memory {
                text: "second version: meeting".into(),
                ..twice.clone()
            },
        ],
    )
    .await;
    agree(store.as_ref(), "one id twice").await;

    store
        .delete(&[deleted.id, rewritten.id, deleted.id, Uuid::new_v4()])
        .await
        .unwrap();
    agree(store.as_ref(), "deleted").await;

    // Reopened: built again from the shard.
    drop(store);
    let store = open(dir.path()).await;
    ready(&store).await;
    agree(store.as_ref(), "reopened").await;

    // The text index folded otherwise: the old statistics are dropped, and
    // the new ones fold as the new index does.
    assert!(store.create_text_index(Fold::CASE).await.unwrap());
    assert_eq!(store.counted(&term("acme", "sedinta")), Counted::Later);
    ready(&store).await;
    assert_eq!(store.counted(&term("acme", "ședință")), Counted::Exact(1));
    assert_eq!(store.counted(&term("acme", "sedinta")), Counted::Exact(0));
    agree(store.as_ref(), "folded otherwise").await;
}

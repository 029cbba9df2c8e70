#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! The count cache over a real embedded store: large counts are reused until
//! their time is up, small ones and other filters are counted afresh.

use std::time::Duration;

use trine_core::model::{CollectionSpec, EmbedderId, Filter, Memory, Point};
use trine_lexical::{CountCacheConfig, Counter};
use trine_store::{EdgeStore, Store};
use uuid::Uuid;

fn point(tenant: &str, text: &str) -> Point {
    Point {
        memory: Memory {
            id: Uuid::new_v4(),
            text: text.to_string(),
            source: None,
            tenant: tenant.to_string(),
            project: None,
            kind: None,
            created_at: None,
            valid_from: None,
            valid_until: None,
            metadata: None,
        },
        dense: vec![1.0, 0.0, 0.0, 0.0],
        sparse: None,
    }
}

fn term(tenant: &str, term: &str) -> Filter {
    Filter {
        all_terms: vec![term.to_string()],
        ..Filter::tenant(tenant)
    }
}

#[tokio::test]
async fn large_counts_are_reused_until_the_ttl_and_small_ones_never() {
    let dir = tempfile::tempdir().unwrap();
    let store = EdgeStore::open(dir.path(), "counts").unwrap();
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "counts-test".into(),
            dim: 4,
        },
    };
    store.ensure_collection(&spec).await.unwrap();
    let mut points: Vec<Point> = (0..5).map(|_| point("acme", "common words")).collect();
    points.push(point("acme", "rare words"));
    points.push(point("globex", "common words"));
    store.upsert(points).await.unwrap();

    let ttl = Duration::from_millis(400);
    let counter = Counter::new(CountCacheConfig { ttl, min_count: 3 });
    let count = |filter: Filter| {
        let (store, counter) = (&store, &counter);
        async move {
            let c = counter.count(store, &filter).await.unwrap();
            (c.value, c.cached)
        }
    };
    assert_eq!(count(term("acme", "common")).await, (5, false));
    assert_eq!(count(term("acme", "rare")).await, (1, false));
    assert_eq!(count(term("globex", "common")).await, (1, false));

    // Two more common points: the large count is reused, the small ones are
    // counted again, the other tenant's count is its own.
    let more = vec![point("acme", "common rare"), point("globex", "common")];
    store.upsert(more).await.unwrap();
    assert_eq!(count(term("acme", "common")).await, (5, true));
    assert_eq!(count(term("acme", "rare")).await, (2, false));
    assert_eq!(count(term("globex", "common")).await, (2, false));

    tokio::time::sleep(ttl).await;
    assert_eq!(count(term("acme", "common")).await, (6, false));
    assert_eq!(count(term("acme", "common")).await, (6, true));

    let off = Counter::new(CountCacheConfig::OFF);
    let filter = term("acme", "common");
    assert!(!off.count(&store, &filter).await.unwrap().cached);
    assert!(!off.count(&store, &filter).await.unwrap().cached);
}

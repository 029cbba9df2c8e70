#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! The count cache over a real embedded store: large counts are reused until
//! their time is up, small ones and other filters are counted afresh.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use trine_core::model::{CollectionSpec, EmbedderId, Filter, Memory, Point};
use trine_lexical::{CountCacheConfig, Counter};
use trine_store::{Counted, EdgeStore, Keeping, Store};
use uuid::Uuid;

// Of one kind, counted with a kind condition: a filter the store's document
// frequencies do not decide (they would answer the plain ones with no count
// to cache), so that every count here is the cache's or the store's.
fn point(tenant: &str, text: &str) -> Point {
    Point {
        memory: Memory {
            kind: Some("note".to_string()),
            ..Memory::new(Uuid::new_v4(), tenant, text)
        },
        dense: vec![1.0, 0.0, 0.0, 0.0],
        sparse: None,
        tokens: None,
    }
}

fn term(tenant: &str, term: &str) -> Filter {
    Filter {
        all_terms: vec![term.to_string()],
        kinds: vec!["note".to_string()],
        ..Filter::tenant(tenant)
    }
}

/// An embedded collection in `dir`.
async fn collection(dir: &std::path::Path) -> Arc<EdgeStore> {
    let store = Arc::new(EdgeStore::open(dir, "counts").unwrap());
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "counts-test".into(),
            dim: 4,
        },
        fold: trine_store::Fold::default(),
    };
    store.ensure_collection(&spec).await.unwrap();
    store
}

#[tokio::test]
async fn large_counts_are_reused_refreshed_in_the_background_and_small_ones_never() {
    let dir = tempfile::tempdir().unwrap();
    let store = collection(dir.path()).await;
    let mut points: Vec<Point> = (0..5).map(|_| point("acme", "common words")).collect();
    points.push(point("acme", "rare words"));
    points.push(point("globex", "common words"));
    store.upsert(points).await.unwrap();

    let ttl = Duration::from_millis(500);
    // Time moves by hand: the test never sleeps through a ttl.
    let t0 = Instant::now();
    let elapsed = Arc::new(AtomicU64::new(0));
    // Each read of the clock is told: the background refresh reads it as
    // it stores the count it made.
    let (clock_read, mut clock_reads) = tokio::sync::watch::channel(0_u64);
    let clock = {
        let elapsed = elapsed.clone();
        Arc::new(move || {
            clock_read.send_modify(|n| *n += 1);
            t0 + Duration::from_millis(elapsed.load(Ordering::SeqCst))
        })
    };
    let pass = |d: Duration| {
        elapsed.fetch_add(u64::try_from(d.as_millis()).unwrap(), Ordering::SeqCst);
    };
    let counter =
        Counter::new(store.clone(), CountCacheConfig { ttl, min_count: 3 }).with_clock(clock);
    let count = |filter: Filter| {
        let counter = &counter;
        async move {
            let c = counter.count(&filter).await.unwrap();
            (c.value, c.cached)
        }
    };
    assert_eq!(count(term("acme", "common")).await, (5, false));
    assert_eq!(count(term("acme", "rare")).await, (1, false));
    assert_eq!(count(term("globex", "common")).await, (1, false));
    // A term no point holds is kept too (counting it scans the tenant).
    assert_eq!(count(term("acme", "absent")).await, (0, false));
    assert_eq!(count(term("acme", "absent")).await, (0, true));

    // More points: the large count is reused, the small ones are counted
    // again, the other tenant's count is its own.
    let more = vec![point("acme", "common rare"), point("globex", "common")];
    store.upsert(more).await.unwrap();
    assert_eq!(count(term("acme", "common")).await, (5, true));
    assert_eq!(count(term("acme", "rare")).await, (2, false));
    assert_eq!(count(term("globex", "common")).await, (2, false));

    // After `ttl` the stale count still answers while it is recounted in
    // the background; the next search gets the new count from the cache.
    pass(ttl);
    assert_eq!(count(term("acme", "common")).await, (5, true));
    // The refresh lands: wait for it (the clock stands still meanwhile),
    // asking again after each read of the clock that is not the test's own
    // (the refresh's, as it stores its count; on this one-thread runtime
    // the test runs again only after the refresh has stored it).
    let landed = async {
        loop {
            let refreshed = count(term("acme", "common")).await;
            // The count above read the clock: seen, not waited for.
            clock_reads.borrow_and_update();
            if refreshed == (6, true) {
                return refreshed;
            }
            clock_reads.changed().await.unwrap();
        }
    };
    let refreshed = tokio::time::timeout(Duration::from_secs(10), landed)
        .await
        .expect("the refresh never landed");
    assert_eq!(refreshed, (6, true));

    // Unused for 2 × `ttl`: counted afresh.
    store.upsert(vec![point("acme", "common")]).await.unwrap();
    pass(ttl * 2);
    assert_eq!(count(term("acme", "common")).await, (7, false));

    let off = Counter::new(store.clone(), CountCacheConfig::OFF);
    let filter = term("acme", "common");
    assert!(!off.count(&filter).await.unwrap().cached);
    assert!(!off.count(&filter).await.unwrap().cached);
}

#[tokio::test]
async fn counts_come_from_the_stores_statistics_unless_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let store = collection(dir.path()).await;
    store
        .upsert(vec![point("acme", "common words"), point("acme", "rare")])
        .await
        .unwrap();
    let plain = Filter {
        all_terms: vec!["common".into()],
        ..Filter::tenant("acme")
    };

    // Turned off: counted in the store, and the statistics never asked for
    // (the first ask, below, is the one that starts their build).
    let off = Counter::new(store.clone(), CountCacheConfig::OFF).with_statistics(false);
    let c = off.count(&plain).await.unwrap();
    assert_eq!((c.value, c.kept), (1, false));
    assert_eq!(store.counted(&plain), Counted::Later);

    // On (the default): once built, read from them. The first count asks
    // for them; the store says when they are built.
    let on = Counter::new(store.clone(), CountCacheConfig::OFF);
    let mut keeping = store.keeping_changes().expect("the collection exists");
    let c = on.count(&plain).await.unwrap();
    assert_eq!(c.value, 1);
    if !c.kept {
        tokio::time::timeout(
            Duration::from_secs(60),
            keeping.wait_for(|k| *k == Keeping::Ready),
        )
        .await
        .expect("the statistics were built within a minute")
        .expect("the store lives");
        let c = on.count(&plain).await.unwrap();
        assert_eq!((c.value, c.kept), (1, true));
    }
}

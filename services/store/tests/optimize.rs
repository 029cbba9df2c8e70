//! The embedded store optimizes its shard in the background once enough
//! points were written since the last time (`EdgeStore::with_optimize_after`;
//! Qdrant Edge indexes nothing by itself): reads and writes go on meanwhile,
//! and the count of points written since drops back.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::time::Duration;

use trine_store::{CollectionSpec, EdgeStore, EmbedderId, Filter, Fold, Memory, Point, Store};
use uuid::Uuid;

const DIM: usize = 8;

fn points(from: u32, n: u32) -> Vec<Point> {
    (from..from + n)
        .map(|i| {
            let mut dense = vec![0.0; DIM];
            dense[i as usize % DIM] = 1.0;
            Point {
                memory: Memory::new(
                    Uuid::from_u128(u128::from(i) + 1),
                    "acme",
                    format!("note {i}"),
                ),
                dense,
                sparse: None,
                tokens: None,
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_past_the_threshold_optimize_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let store = EdgeStore::open(dir.path(), "memories")
        .unwrap()
        .with_optimize_after(100);
    store
        .ensure_collection(&CollectionSpec {
            embedder: EmbedderId {
                name: "test".into(),
                dim: DIM,
            },
            fold: Fold::default(),
        })
        .await
        .unwrap();
    store.upsert(points(0, 60)).await.unwrap();
    assert_eq!(
        store.unoptimized(),
        60,
        "below the threshold: nothing started"
    );
    assert!(!store.optimizing());
    // Past it: an optimization starts; reads and writes go on meanwhile.
    store.upsert(points(60, 60)).await.unwrap();
    let filter = Filter {
        tenant: "acme".into(),
        ..Filter::default()
    };
    let mut optimizing = store.optimizing_changes().expect("the collection exists");
    let mut written = 120;
    // Reads and writes while it runs, each answered whole.
    while *optimizing.borrow() && written < 160 {
        assert_eq!(store.count(&filter).await.unwrap(), u64::from(written));
        store.upsert(points(written, 10)).await.unwrap();
        written += 10;
    }
    tokio::time::timeout(
        Duration::from_secs(60),
        optimizing.wait_for(|running| !*running),
    )
    .await
    .expect("the optimization ended within a minute")
    .expect("the store lives");
    assert!(store.unoptimized() < 100, "{}", store.unoptimized());
    assert_eq!(store.count(&filter).await.unwrap(), u64::from(written));
    let got = store.get(&[Uuid::from_u128(1)]).await.unwrap();
    assert_eq!(got[0].text, "note 0");
}

//! [`Tracked`] over a real Qdrant server: the document frequencies one
//! process keeps of a collection that another process writes, heard of
//! through the change journal, answer what the server counts — after the
//! build, and after every kind of write the other process makes (new points,
//! a point rewritten into another text and tenant, deletes, a new tenant) —
//! and never a count of one tenant with another's points. Runs when
//! `TRINE_QDRANT_URL` is set.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use trine_store::{
    CollectionSpec, Counted, EmbedderId, Filter, Fold, Keeping, Memory, Op, Point, ServerStore,
    Store, Tracked,
};
use uuid::Uuid;

const WORDS: [&str; 5] = ["alpha", "beta", "gamma", "delta", "shared"];

fn spec() -> CollectionSpec {
    CollectionSpec {
        embedder: EmbedderId {
            name: "tracked-test".into(),
            dim: 4,
        },
        fold: Fold::default(),
    }
}

fn point(memory: Memory) -> Point {
    Point {
        memory,
        dense: vec![1.0, 0.0, 0.0, 0.0],
        sparse: None,
    }
}

fn text(i: usize) -> String {
    format!(
        "{} {} shared item{}",
        WORDS[i % 4],
        WORDS[(i / 4) % 4],
        i % 3
    )
}

fn filters(tenants: &[&str]) -> Vec<Filter> {
    let mut out = Vec::new();
    for tenant in tenants {
        out.push(Filter::tenant(*tenant));
        for word in WORDS.iter().chain(&["item0", "item2", "absent"]) {
            out.push(Filter {
                all_terms: vec![(*word).to_string()],
                ..Filter::tenant(*tenant)
            });
        }
    }
    out
}

/// Waits (at most a minute) until every filter's kept count is the
/// server's own count, looking again after each read of the journal.
async fn until_counts_agree(
    kept: &Tracked,
    writer: &dyn Store,
    filters: &[Filter],
    reads: &mut watch::Receiver<u64>,
) {
    let mut wrong = Vec::new();
    let agreed = async {
        loop {
            // Seen before looking: a read that ends meanwhile wakes the wait.
            reads.borrow_and_update();
            wrong.clear();
            for f in filters {
                let counted = writer.count(f).await.unwrap();
                let held = kept.counted(f);
                if held != Counted::Exact(counted) {
                    wrong.push(format!(
                        "{} {:?}: kept {held:?}, server {counted}",
                        f.tenant, f.all_terms
                    ));
                }
            }
            if wrong.is_empty() {
                return;
            }
            reads.changed().await.expect("the keeper's store lives");
        }
    };
    if tokio::time::timeout(Duration::from_secs(60), agreed)
        .await
        .is_err()
    {
        panic!("kept counts never agreed: {wrong:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_counts_follow_another_processs_writes() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("kept counts over a Qdrant server", trine_testkit::NO_QDRANT);
        return;
    };
    let collection = format!("trine_tracked_{}", Uuid::new_v4().simple());
    // Two processes' stores: one writes, the other keeps the counts.
    let writer = ServerStore::connect(&url, &collection).await.unwrap();
    writer.ensure_collection(&spec()).await.unwrap();
    let acme: Vec<Memory> = (0..24)
        .map(|i| Memory::new(Uuid::new_v4(), "acme", text(i)))
        .collect();
    let globex: Vec<Memory> = (0..7)
        .map(|i| Memory::new(Uuid::new_v4(), "globex", text(i + 1)))
        .collect();
    writer
        .upsert(acme.iter().chain(&globex).cloned().map(point).collect())
        .await
        .unwrap();

    // The keeper's reads of the change journal, counted as they end: after
    // each, what it holds may have changed, so the test looks again then
    // (the keeper reads on its own schedule; no timer here).
    let inner = trine_testkit::noted(
        Arc::new(ServerStore::connect(&url, &collection).await.unwrap()),
        Op::Changes,
    );
    let mut reads = inner.hook().ended();
    let kept = Tracked::new(inner);
    assert_eq!(kept.keeping(), Keeping::Not, "nothing kept until asked");
    kept.keep_counts();
    let built = async {
        loop {
            reads.borrow_and_update();
            if kept.keeping() == Keeping::Ready {
                return;
            }
            assert_eq!(kept.keeping(), Keeping::Building);
            reads.changed().await.expect("the keeper's store lives");
        }
    };
    tokio::time::timeout(Duration::from_secs(60), built)
        .await
        .expect("never built");
    assert!(kept.kept_bytes() > 0);
    let all = filters(&["acme", "globex", "initech"]);
    until_counts_agree(&kept, &writer, &all, &mut reads).await;
    // Each tenant its own: `shared` is in every text of both.
    assert_eq!(kept.counted(&filters(&["acme"])[5]), Counted::Exact(24));
    assert_eq!(kept.counted(&filters(&["globex"])[5]), Counted::Exact(7));

    // The other process writes on: a point rewritten into another text and
    // tenant, deletes (one id unknown), new points in a new tenant.
    let mut moved = acme[0].clone();
    moved.tenant = "globex".into();
    moved.text = "gamma gamma item2 nothing shared".into();
    writer.upsert(vec![point(moved)]).await.unwrap();
    writer
        .delete(&[acme[1].id, acme[2].id, globex[0].id, Uuid::new_v4()])
        .await
        .unwrap();
    let initech: Vec<Point> = (0..5)
        .map(|i| point(Memory::new(Uuid::new_v4(), "initech", text(i + 2))))
        .collect();
    writer.upsert(initech).await.unwrap();
    until_counts_agree(&kept, &writer, &all, &mut reads).await;

    // A filter the statistics do not decide goes to the store.
    let by_kind = Filter {
        kinds: vec!["note".into()],
        ..Filter::tenant("acme")
    };
    assert_eq!(kept.counted(&by_kind), Counted::No);
}

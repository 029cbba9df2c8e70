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
        tokens: None,
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

/// Another process's keeper of `collection`, with its reads of the change
/// journal counted as they end: after each, what it holds may have changed,
/// so a test looks again then (the keeper reads on its own schedule; no
/// timer in the tests).
async fn keeper(url: &str, collection: &str) -> (Tracked, watch::Receiver<u64>) {
    let inner = trine_testkit::noted(
        Arc::new(ServerStore::connect(url, collection).await.unwrap()),
        Op::Changes,
    );
    let reads = inner.hook().ended();
    (Tracked::new(inner), reads)
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

    let (kept, mut reads) = keeper(&url, &collection).await;
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

/// Each term read, named, with the points it found in order and their
/// sources.
type Reads = Vec<(String, Vec<(Uuid, Option<String>)>)>;

/// Every term read of `tenants`' words answered from the kept postings.
fn kept_reads(kept: &Tracked, tenants: &[&str]) -> Reads {
    filters(tenants)
        .into_iter()
        .filter(|f| !f.all_terms.is_empty())
        .map(|f| {
            let page = kept.kept_terms(&f, None, 1_000, true);
            let points = page.map_or_else(Vec::new, |p| {
                p.points.into_iter().map(|p| (p.id, p.source)).collect()
            });
            (format!("{} {:?}", f.tenant, f.all_terms), points)
        })
        .collect()
}

/// The same reads, of the server.
async fn server_reads(store: &dyn Store, tenants: &[&str]) -> Reads {
    let mut out = Vec::new();
    for f in filters(tenants)
        .into_iter()
        .filter(|f| !f.all_terms.is_empty())
    {
        let page = store.scroll_terms(&f, 1_000, None, true).await.unwrap();
        let points = page.points.into_iter().map(|p| (p.id, p.source)).collect();
        out.push((format!("{} {:?}", f.tenant, f.all_terms), points));
    }
    out
}

/// Waits (at most a minute) until every term read the keeper answers is
/// the server's own, looking again after each read of the journal.
async fn until_reads_agree(
    kept: &Tracked,
    writer: &dyn Store,
    tenants: &[&str],
    reads: &mut watch::Receiver<u64>,
) {
    let mut last = (Vec::new(), Vec::new());
    let agreed = async {
        loop {
            reads.borrow_and_update();
            last = (
                kept_reads(kept, tenants),
                server_reads(writer, tenants).await,
            );
            if last.0 == last.1 {
                return;
            }
            reads.changed().await.expect("the keeper's store lives");
        }
    };
    if tokio::time::timeout(Duration::from_secs(60), agreed)
        .await
        .is_err()
    {
        panic!(
            "kept reads never agreed: kept {:#?}, server {:#?}",
            last.0, last.1
        );
    }
}

/// A keeper over a server collection that two other processes write at
/// once, each its own tenant, with the same words: while they write, no
/// term read it answers holds a point of the other tenant; once they are
/// done, its reads are the server's, sources included. A write through
/// the keeper's own store is read back at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_postings_follow_concurrent_writers_within_each_tenant() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "kept postings over a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return;
    };
    let collection = format!("trine_tracked_{}", Uuid::new_v4().simple());
    let first = ServerStore::connect(&url, &collection).await.unwrap();
    first.ensure_collection(&spec()).await.unwrap();
    let seed = Uuid::new_v4();
    first
        .upsert(vec![point(Memory::new(seed, "acme", text(0)))])
        .await
        .unwrap();
    let (kept, mut reads) = keeper(&url, &collection).await;
    kept.keep_counts();
    let ready = async {
        while kept.keeping() != Keeping::Ready {
            reads.changed().await.expect("the keeper's store lives");
        }
    };
    tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("never built");

    let writes = |tenant: &'static str| {
        let url = url.clone();
        let collection = collection.clone();
        tokio::spawn(async move {
            let writer = ServerStore::connect(&url, &collection).await.unwrap();
            let mut ids = Vec::new();
            for batch in 0..12 {
                let points: Vec<Point> = (0..6)
                    .map(|i| {
                        // One thread named alike in both tenants.
                        let memory = Memory {
                            source: Some(format!("{tenant}/notes-{batch}.md")),
                            thread: Some("chat".into()),
                            seq: Some((batch * 6 + i) as u64),
                            ..Memory::new(Uuid::new_v4(), tenant, text(batch * 6 + i))
                        };
                        ids.push(memory.id);
                        point(memory)
                    })
                    .collect();
                writer.upsert(points).await.unwrap();
                if batch % 4 == 3 {
                    writer.delete(&ids[ids.len() - 2..]).await.unwrap();
                }
            }
            ids
        })
    };
    let (acme, globex) = (writes("acme"), writes("globex"));
    let mut looked = 0;
    while !(acme.is_finished() && globex.is_finished()) {
        reads.changed().await.expect("the keeper's store lives");
        // Each writer's sources name its tenant; the first point, acme's,
        // has none.
        for tenant in ["acme", "globex"] {
            for (read, points) in kept_reads(&kept, &[tenant]) {
                for (id, source) in points {
                    let own = match &source {
                        Some(source) => source.starts_with(&format!("{tenant}/")),
                        None => tenant == "acme" && id == seed,
                    };
                    assert!(own, "{read}: {id} ({source:?}) is another tenant's");
                }
            }
        }
        looked += 1;
    }
    let (acme, globex) = (acme.await.unwrap(), globex.await.unwrap());
    assert!(acme.len() == 72 && globex.len() == 72, "every write made");
    assert!(looked > 0, "looked while they wrote");
    until_reads_agree(&kept, &first, &["acme", "globex", "initech"], &mut reads).await;

    // The messages around a hit: the keeper's stretches are the server's,
    // each tenant's own thread "chat" only.
    for (tenant, ids) in [("acme", &acme), ("globex", &globex)] {
        let top = ids[10];
        let near = kept
            .kept_around(&Filter::tenant(tenant), &[top], 1, 100)
            .expect("the postings decide a tenant's threads");
        let place = near
            .places
            .get(&top)
            .expect("the hit has its place")
            .clone();
        assert_eq!((place.thread.as_str(), place.seq), ("chat", 10));
        let around = Filter {
            spans: Some(trine_core::context::spans([&place], 1)),
            ..Filter::tenant(tenant)
        };
        let mut want: Vec<Uuid> = first
            .scroll(&around, 100, None)
            .await
            .unwrap()
            .memories
            .iter()
            .map(|m| m.id)
            .collect();
        let mut got: Vec<Uuid> = near.members.iter().map(|m| m.0).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got.len(), 5, "{tenant}: seq 8..=12");
        assert_eq!(got, want, "{tenant}: the server's stretch");
        assert!(got.iter().all(|id| ids.contains(id)), "{tenant}'s own");
    }

    // Read back at once: the write waited until the keeper counted it.
    let own = Memory {
        source: Some("initech/own.md".into()),
        ..Memory::new(Uuid::new_v4(), "initech", "omega alpha")
    };
    kept.upsert(vec![point(own.clone())]).await.unwrap();
    let omega = Filter {
        all_terms: vec!["omega".into()],
        ..Filter::tenant("initech")
    };
    let page = kept.kept_terms(&omega, None, 10, true).expect("decided");
    let found: Vec<(Uuid, Option<String>)> =
        page.points.into_iter().map(|p| (p.id, p.source)).collect();
    assert_eq!(found, [(own.id, own.source.clone())]);
    kept.delete(&[own.id]).await.unwrap();
    assert_eq!(kept.kept_terms(&omega, None, 10, true).unwrap().points, []);
}

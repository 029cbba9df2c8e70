#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! The semantic channel's blend of the messages around its best hits
//! (`[context] semantic`), on an embedded store with the hash embedder: the
//! nearest hit and its neighbour take the mean of their window; a message
//! out of the window or without a thread keeps its own similarity; never a
//! point of another tenant.

use std::collections::HashMap;
use std::sync::Arc;

use trine_core::context::Context;
use trine_core::model::{CollectionSpec, EmbedderId, Filter, Memory, Point};
use trine_core::{Fold, sparse};
use trine_embed::{Embedder, HashEmbedder};
use trine_semantic::{Ask, nearest};
use trine_store::{EdgeStore, Store};
use uuid::Uuid;

/// (id, tenant, thread and seq, text)
type Row = (
    u128,
    &'static str,
    Option<(&'static str, u64)>,
    &'static str,
);

const ROWS: &[Row] = &[
    (
        1,
        "acme",
        Some(("s1", 0)),
        "pottery class on tuesday evenings",
    ),
    (2, "acme", Some(("s1", 1)), "zebra umbrella xylophone"),
    (3, "acme", Some(("s1", 5)), "quartz marmalade violin"),
    (4, "acme", None, "walrus lantern oboe"),
    (9, "other", Some(("s1", 1)), "yak kettle bassoon"),
];

#[tokio::test]
async fn the_nearest_hit_and_its_neighbour_take_their_windows_mean() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder = HashEmbedder::new(64);
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: embedder.name().to_string(),
            dim: 64,
        },
        fold: Fold::default(),
    };
    store.ensure_collection(&spec).await.unwrap();
    let texts: Vec<String> = ROWS.iter().map(|r| r.3.to_string()).collect();
    let vectors = embedder.embed(&texts).await.unwrap();
    let points = ROWS
        .iter()
        .zip(vectors)
        .map(|((id, tenant, place, text), dense)| Point {
            memory: Memory {
                thread: place.map(|(t, _)| t.to_string()),
                seq: place.map(|(_, s)| s),
                ..Memory::new(Uuid::from_u128(*id), *tenant, *text)
            },
            dense,
            sparse: Some(sparse::encode_text(text, Fold::ASCII)),
            tokens: None,
        })
        .collect();
    store.upsert(points).await.unwrap();
    let acme = Filter::tenant("acme");
    let ask = |context: Context, cap: usize| {
        let (store, embedder, acme) = (store.clone(), embedder.clone(), acme.clone());
        async move {
            nearest(
                store.as_ref(),
                &embedder,
                "pottery class",
                &acme,
                Ask {
                    cap,
                    context,
                    tokens: None,
                },
            )
            .await
            .unwrap()
            .list
        }
    };
    let on = Context {
        window: 1,
        weight: 1.0,
        top: 1,
    };
    let scores = |list: Vec<(Uuid, f32)>| -> HashMap<u128, f32> {
        list.into_iter().map(|(id, s)| (id.as_u128(), s)).collect()
    };
    let off = scores(ask(Context { weight: 0.0, ..on }, 10).await);
    let got = ask(on, 10).await;
    assert!(
        got.windows(2).all(|w| w[0].1 >= w[1].1),
        "best first: {got:?}"
    );
    let on = scores(got);
    assert_eq!(
        off.keys().copied().max(),
        Some(4),
        "the tenant's points: {off:?}"
    );
    assert!(
        !on.contains_key(&9),
        "never the other tenant's thread: {on:?}"
    );
    // 1 (the nearest, seq 0) and 2 (its neighbour) are blended with their
    // windows, {1, 2} both; 3 (four away) and 4 (no thread) keep their own.
    let window = (off[&1] + off[&2]) / 2.0;
    for (id, want) in [
        (1, (off[&1] + window) / 2.0),
        (2, (off[&2] + window) / 2.0),
        (3, off[&3]),
        (4, off[&4]),
    ] {
        assert!(
            (on[&id] - want).abs() < 1e-6,
            "{id}: {} against {want}",
            on[&id]
        );
    }
}

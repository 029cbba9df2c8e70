#![allow(clippy::unwrap_used, dead_code)] // test helpers fail loudly; each test file uses its own
//! What the lexical channel's integration tests share.

use std::sync::Arc;

use trine_core::Fold;
use trine_core::model::{CollectionInfo, CollectionSpec, EmbedderId};
use trine_store::{EdgeStore, Store};

/// A new collection on an embedded store (4-dimensional vectors), with its
/// directory and what the store says of it.
pub async fn new_collection() -> (tempfile::TempDir, Arc<dyn Store>, CollectionInfo) {
    let (dir, edge, info) = new_edge().await;
    let store: Arc<dyn Store> = edge;
    (dir, store, info)
}

/// The same, as the embedded store itself (for what it offers beside the
/// trait: when its postings are built).
pub async fn new_edge() -> (tempfile::TempDir, Arc<EdgeStore>, CollectionInfo) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "none".into(),
            dim: 4,
        },
        fold: Fold::default(),
    };
    let info = store.ensure_collection(&spec).await.unwrap();
    (dir, store, info)
}

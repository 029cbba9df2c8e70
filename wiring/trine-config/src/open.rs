//! What a configuration names, opened: the store (a Qdrant server or the
//! embedded engine), the embedder, and the four services in-process over
//! them.

use std::sync::Arc;

use trine_core::Fold;
use trine_embed::Embedder;
use trine_store::{EdgeStore, ServerStore, Store, StoreError};

use crate::Config;

/// The configured Qdrant server's store (`qdrant` set), as configured.
pub async fn connect_server(config: &Config) -> Result<ServerStore, trine_store::StoreError> {
    let url = config.qdrant.as_deref().ok_or_else(|| {
        trine_store::StoreError::invalid("qdrant url", "none is configured: pass --qdrant URL")
    })?;
    let layout = trine_store::Layout {
        shards: config.shards,
        replication_factor: config.replication_factor,
        write_consistency_factor: config.write_consistency_factor,
    };
    ServerStore::connect_with_key(url, &config.collection, config.qdrant_api_key.clone())
        .await?
        .with_layout(layout)
        .with_read_consistency(config.read_consistency)
        .with_batch_reads(config.batch_reads)
        .with_schema(config.payload.clone())
}

/// Opens the configured store: a Qdrant server when `qdrant` is set, else the
/// embedded engine on the data directory.
pub async fn open_store(config: &Config) -> Result<Arc<dyn Store>, trine_store::StoreError> {
    let schema = config.payload.clone();
    Ok(match &config.qdrant {
        Some(_) => {
            // The document frequencies are kept (by a lexical-svc that asks
            // for them) where the text index is trine's own.
            let trines_layout = schema == trine_store::PayloadSchema::default();
            let server: Arc<dyn Store> = Arc::new(connect_server(config).await?);
            if trines_layout {
                Arc::new(trine_store::Tracked::new(server))
            } else {
                server
            }
        }
        None => {
            let data = config.data.clone();
            let collection = config.collection.clone();
            let store = tokio::task::spawn_blocking(move || {
                EdgeStore::open_with(&data, &collection, schema)
            })
            .await
            .map_err(|e| trine_store::StoreError::Backend(e.to_string()))??;
            Arc::new(store)
        }
    })
}

/// Loads the configured embedder (the model files for `minilm`/`static`).
pub async fn load_embedder(config: &Config) -> Result<Arc<dyn Embedder>, trine_embed::EmbedError> {
    let kind = config.embedder;
    let models = config.models.clone();
    tokio::task::spawn_blocking(move || trine_embed::load(kind, &models))
        .await
        .map_err(|e| trine_embed::EmbedError::Inference(e.to_string()))?
}

/// The four services in-process, each on a loopback port, over the
/// configured store and embedder (commands run without `--endpoint`), with
/// the store and embedder for the commands that also read them directly.
pub struct LocalMesh {
    pub mesh: trine_mesh::Mesh,
    pub store: Arc<dyn Store>,
    pub embedder: Arc<dyn Embedder>,
}

/// Starts the [`LocalMesh`] of `config`.
pub async fn local_mesh(
    config: &Config,
) -> Result<LocalMesh, Box<dyn std::error::Error + Send + Sync>> {
    let store = open_store(config).await?;
    let embedder = load_embedder(config).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mesh =
        trine_mesh::Mesh::start(listener, store.clone(), embedder.clone(), config.mesh()).await?;
    Ok(LocalMesh {
        mesh,
        store,
        embedder,
    })
}

/// The fold of the collection's text index (trine's default without one).
pub async fn collection_fold(store: &dyn Store) -> Result<Fold, StoreError> {
    Ok(store
        .info()
        .await?
        .and_then(|info| info.text_index)
        .map_or(Fold::default(), |t| t.fold()))
}

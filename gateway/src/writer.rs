//! Writing memories: embed their texts, encode their sparse vectors, build
//! points, upsert.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use trine_core::model::{CollectionSpec, EmbedderId, Memory, Point};
use trine_core::{ErrorKind, Fold};
use trine_embed::{EmbedError, Embedder};
use trine_store::{Store, StoreError};

/// A failed write.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("embedding failed: {0}")]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("embedder `{name}` returned {got} vectors for {want} texts")]
    VectorCount {
        name: String,
        got: usize,
        want: usize,
    },
}

impl WriteError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Embed(e) => e.kind(),
            Self::Store(e) => e.kind(),
            Self::VectorCount { .. } => ErrorKind::Internal,
        }
    }
}

/// Writes memories into one collection with one embedder.
#[derive(Clone)]
pub struct Writer {
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    /// Set once the collection is known to exist with this embedder.
    prepared: Arc<OnceCell<()>>,
    /// The collection's fold (its text index's), and when it was read.
    fold: Arc<Mutex<Option<(Instant, Fold)>>>,
}

/// How long the collection's fold is trusted before it is read again: an
/// upgrade by `trine text-index --ascii-folding` shows within this time.
pub const FOLD_FOR: Duration = Duration::from_secs(30);

impl Writer {
    pub fn new(store: Arc<dyn Store>, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            store,
            embedder,
            prepared: Arc::new(OnceCell::new()),
            fold: Arc::new(Mutex::new(None)),
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The collection spec of this writer's embedder.
    pub fn spec(&self) -> CollectionSpec {
        CollectionSpec {
            embedder: EmbedderId {
                name: self.embedder.name().to_string(),
                dim: self.embedder.dim(),
            },
        }
    }

    /// Creates the collection when missing; refuses one written by another
    /// embedder. Checks the store once per writer.
    pub async fn prepare(&self) -> Result<(), WriteError> {
        self.prepared
            .get_or_try_init(|| async {
                self.store.ensure_collection(&self.spec()).await.map(drop)
            })
            .await?;
        Ok(())
    }

    /// The fold of the collection's text index (trine's default when it has
    /// none), read at most every [`FOLD_FOR`]: the sparse encoding folds as
    /// the index does.
    async fn fold(&self) -> Result<Fold, WriteError> {
        let cached = self
            .fold
            .lock()
            .ok()
            .and_then(|slot| *slot)
            .filter(|(at, _)| at.elapsed() < FOLD_FOR);
        if let Some((_, fold)) = cached {
            return Ok(fold);
        }
        let fold = self
            .store
            .info()
            .await?
            .and_then(|info| info.text_index)
            .map_or(Fold::default(), |t| Fold::of_index(t.ascii_folding));
        if let Ok(mut slot) = self.fold.lock() {
            *slot = Some((Instant::now(), fold));
        }
        Ok(fold)
    }

    /// Embeds and stores validated memories, replacing any with the same ids.
    /// Returns when the store has made them durable.
    pub async fn write(&self, memories: Vec<Memory>) -> Result<(), WriteError> {
        let points = self.points(memories).await?;
        self.upsert(points).await
    }

    /// The points `memories` become — embedded, with the sparse encoding of
    /// the collection's fold — not yet stored: a bulk ingest embeds the next
    /// batch while [`Self::upsert`] stores this one.
    pub async fn points(&self, memories: Vec<Memory>) -> Result<Vec<Point>, WriteError> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<String> = memories.iter().map(|m| m.text.clone()).collect();
        let vectors = self.embedder.embed(&texts).await?;
        let fold = self.fold().await?;
        if vectors.len() != memories.len() {
            return Err(WriteError::VectorCount {
                name: self.embedder.name().to_string(),
                got: vectors.len(),
                want: memories.len(),
            });
        }
        Ok(memories
            .into_iter()
            .zip(vectors)
            .map(|(memory, dense)| Point {
                sparse: Some(trine_core::sparse::encode_text(&memory.text, fold)),
                memory,
                dense,
            })
            .collect())
    }

    /// Stores points made by [`Self::points`]; returns when they are durable.
    pub async fn upsert(&self, points: Vec<Point>) -> Result<(), WriteError> {
        if points.is_empty() {
            return Ok(());
        }
        self.store.upsert(points).await?;
        Ok(())
    }
}

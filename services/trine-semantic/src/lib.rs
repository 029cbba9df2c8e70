//! semantic-svc: the semantic channel (`Semantic.Nearest`) and embeddings for
//! writes (`Semantic.Embed`). The query is embedded and the nearest `cap`
//! points within the same filters are read by cosine similarity.
#![forbid(unsafe_code)]

mod remote;
mod service;

use std::time::{Duration, Instant};
use trine_core::Stage;

use tracing::Instrument;
use trine_core::ErrorKind;
use trine_core::model::Filter;
use trine_embed::{EmbedError, Embedder};
use trine_store::{Query, Store, StoreError};
use uuid::Uuid;

pub use remote::{EMBED_DEADLINE, RemoteEmbedder};
pub use service::{SemanticService, run};

/// The semantic channel's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticConfig {
    /// Neighbours read when a request does not say (DESIGN.md: 256).
    pub cap: usize,
    /// The most neighbours a request may ask for.
    pub max_cap: usize,
    /// The most texts one Embed call may carry.
    pub max_embed: usize,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        Self {
            cap: 256,
            max_cap: 4096,
            max_embed: 1024,
        }
    }
}

/// A failed semantic read.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SemanticError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Embed(e) => e.kind(),
            Self::Store(e) => e.kind(),
        }
    }
}

impl trine_core::Kinded for SemanticError {
    fn kind(&self) -> trine_core::ErrorKind {
        SemanticError::kind(self)
    }
}

/// The semantic list, nearest first, and what its stages took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nearest {
    pub list: Vec<(Uuid, f32)>,
    /// `semantic.embed`, `semantic.query`.
    pub timings: Vec<(Stage, Duration)>,
}

/// Embeds `query` and reads the nearest `cap` points within `filter`.
pub async fn nearest(
    store: &dyn Store,
    embedder: &dyn Embedder,
    query: &str,
    filter: &Filter,
    cap: usize,
) -> Result<Nearest, SemanticError> {
    let started = Instant::now();
    let vector = embedder
        .embed(&[query.to_string()])
        .instrument(tracing::info_span!(
            "semantic.embed",
            embedder = embedder.name()
        ))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| EmbedError::Inference("no vector for the query".to_string()))?;
    let embed_took = started.elapsed();
    let started = Instant::now();
    let span = tracing::info_span!(
        "semantic.query",
        cap = trine_telemetry::int(cap),
        neighbors = tracing::field::Empty
    );
    let hits = store
        .query(Query::dense(vector, filter, cap))
        .instrument(span.clone())
        .await?;
    span.record("neighbors", trine_telemetry::int(hits.len()));
    Ok(Nearest {
        list: hits.into_iter().map(|h| (h.id, h.score)).collect(),
        timings: vec![
            (Stage::SemanticEmbed, embed_took),
            (Stage::SemanticQuery, started.elapsed()),
        ],
    })
}

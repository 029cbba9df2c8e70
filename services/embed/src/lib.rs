//! Sentence embedders, run in-process.
//!
//! - [`MiniLm`] (`minilm`, the default): sentence-transformers
//!   all-MiniLM-L6-v2 on candle; mean pooling, L2-normalised, 256 tokens.
//! - [`StaticEmbedder`] (`static`): a Model2Vec-format model (a table of token
//!   vectors; an embedding is the normalised mean of its tokens' rows),
//!   thousands of times faster, for bulk ingest and benchmarks.
//! - [`HashEmbedder`] (`hash`): feature-hashed tokens, for fast tests only.
#![forbid(unsafe_code)]

mod bert;
pub mod distill;
mod error;
mod hash;
mod minilm;
mod static_model;
mod tokens;
mod vector;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

pub use error::{EmbedError, Result};
pub use hash::HashEmbedder;
pub use minilm::{MiniLm, Work};
pub use static_model::{StaticConfig, StaticEmbedder};
pub use tokens::Side;
pub use trine_core::late::Tokens;

/// The most texts one inference batch holds.
pub const MAX_BATCH: usize = 16;

/// Turns texts into unit-length dense vectors.
#[async_trait]
pub trait Embedder: Send + Sync + 'static {
    /// A stable name recorded in the collection (`minilm`, `static`, `hash`).
    fn name(&self) -> &str;

    /// The vectors' dimension.
    fn dim(&self) -> usize;

    /// One L2-normalised vector per text, in order. Inference runs off the
    /// async executor, in batches of at most [`MAX_BATCH`] texts.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;

    /// Each text's vector, as [`Embedder::embed`] gives it, and its tokens
    /// for late interaction on `side` ([`trine_core::late`]; which pieces:
    /// [`Side`]), from the same pass.
    async fn embed_tokens(&self, texts: &[String], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>>;
}

/// The embedders trine knows by name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum EmbedderKind {
    #[strum(serialize = "minilm")]
    MiniLm,
    Static,
    Hash,
}

impl Named for EmbedderKind {
    const WHAT: &'static str = "embedder";
}

impl EmbedderKind {
    /// The embedder of a name (the collection records [`Named::name`]);
    /// the error is the crate's own.
    pub fn parse(name: &str) -> Result<Self> {
        <Self as Named>::parse(name).map_err(|_| EmbedError::UnknownEmbedder(name.to_string()))
    }

    /// trine's default fusion for a collection of this embedder's vectors:
    /// the static embedder's cosines are on another scale
    /// ([`trine_core::fusion::Settings::for_static`]).
    pub fn fusion(self) -> trine_core::fusion::Settings {
        match self {
            Self::Static => trine_core::fusion::Settings::for_static(),
            Self::MiniLm | Self::Hash => trine_core::fusion::Settings::default(),
        }
    }
}

/// Loads the named embedder from the models directory (`models/` by default):
/// `minilm` from `<models>/all-MiniLM-L6-v2/`, `static` from `<models>/static/`.
pub fn load(kind: EmbedderKind, models_dir: &Path) -> Result<Arc<dyn Embedder>> {
    Ok(match kind {
        EmbedderKind::MiniLm => Arc::new(MiniLm::load(&models_dir.join(MiniLm::DIR))?),
        EmbedderKind::Static => {
            Arc::new(StaticEmbedder::load(&models_dir.join(StaticEmbedder::DIR))?)
        }
        EmbedderKind::Hash => Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM)),
    })
}

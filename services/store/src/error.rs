use std::path::PathBuf;

use trine_core::ErrorKind;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What can go wrong in a store. Messages say what to fix.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("collection `{0}` does not exist: ingest memories first (`trine ingest FILE`)")]
    NoCollection(String),

    #[error(
        "collection `{collection}` was written by embedder `{found}` ({found_dim} dimensions), \
         not `{wanted}` ({wanted_dim}): use `--embedder {found}` or another `--collection`"
    )]
    EmbedderMismatch {
        collection: String,
        found: String,
        found_dim: usize,
        wanted: String,
        wanted_dim: usize,
    },

    #[error("vector of {got} dimensions for collection `{collection}` of {want}")]
    DimensionMismatch {
        collection: String,
        got: usize,
        want: usize,
    },

    #[error("collection `{0}` has no full-text index on the text field: run `trine text-index`")]
    NoTextIndex(String),

    #[error(
        "collection `{collection}` has layout version {found}, written by a later trine than this one \
         (which knows up to {known}): run that trine, or restore a backup of this version"
    )]
    NewerSchema {
        collection: String,
        found: u32,
        known: u32,
    },

    #[error("invalid {what}: {why}")]
    Invalid { what: &'static str, why: String },

    /// The engine cannot do this (an older Qdrant server): what it needs.
    #[error("{0}: use the candidates, sparse or gate strategy")]
    Unsupported(String),

    #[error(
        "the data directory {0} is in use by another trine process (a running `trine serve`?): \
         stop it, or talk to it with `--endpoint`"
    )]
    Locked(PathBuf),

    #[error("cannot reach qdrant at {url}: {why}")]
    Unreachable { url: String, why: String },

    #[error("storage i/o on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("qdrant: {0}")]
    Backend(String),
}

impl StoreError {
    pub fn invalid(what: &'static str, why: impl Into<String>) -> Self {
        Self::Invalid {
            what,
            why: why.into(),
        }
    }

    /// The error's kind, for the one mapping to gRPC codes.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::NoCollection(_) => ErrorKind::NotFound,
            Self::EmbedderMismatch { .. }
            | Self::NewerSchema { .. }
            | Self::NoTextIndex(_)
            | Self::Locked(_)
            | Self::Unsupported(_) => ErrorKind::FailedPrecondition,
            Self::DimensionMismatch { .. } | Self::Invalid { .. } => ErrorKind::InvalidArgument,
            Self::Unreachable { .. } => ErrorKind::Unavailable,
            Self::Io { .. } | Self::Backend(_) => ErrorKind::Internal,
        }
    }
}

impl trine_core::Kinded for StoreError {
    fn kind(&self) -> trine_core::ErrorKind {
        StoreError::kind(self)
    }
}

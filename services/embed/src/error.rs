//! The embedders' error type.

use std::path::PathBuf;

use trine_core::ErrorKind;

/// What went wrong while loading or running an embedder.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// An embedder name trine does not know.
    #[error("unknown embedder {0:?}: use one of {names}", names = <crate::EmbedderKind as strum::VariantNames>::VARIANTS.join("|"))]
    UnknownEmbedder(String),

    /// A model file is not installed.
    #[error("model file {} is missing: {hint}", path.display())]
    MissingModel {
        path: PathBuf,
        /// How to install it, e.g. "run scripts/fetch-model.sh".
        hint: &'static str,
    },

    /// A model file exists but cannot be used.
    #[error("model file {} is unusable ({reason}): reinstall it (scripts/fetch-model.sh for minilm, distill again for static)", path.display())]
    BadModel { path: PathBuf, reason: String },

    /// The forward pass or tokenisation failed.
    #[error("inference failed: {0}")]
    Inference(String),

    /// A request the embedder cannot serve (e.g. a zero dimension).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Writing a model (distillation) failed.
    #[error("cannot write {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },

    /// A remote embedder (semantic-svc) failed, with the kind it said: its
    /// INVALID_ARGUMENT stays the caller's error, it being down stays
    /// UNAVAILABLE.
    #[error("{message}")]
    Peer { kind: ErrorKind, message: String },
}

/// The embedders' result type.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;

impl EmbedError {
    /// The kind of failure, for mapping to API status codes.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::UnknownEmbedder(_) | Self::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Self::MissingModel { .. } | Self::BadModel { .. } => ErrorKind::FailedPrecondition,
            Self::Inference(_) | Self::Write { .. } => ErrorKind::Internal,
            Self::Peer { kind, .. } => *kind,
        }
    }

    /// An inference error from anything printable.
    pub(crate) fn inference(err: impl std::fmt::Display) -> Self {
        Self::Inference(err.to_string())
    }

    /// A bad-model error for `path` from anything printable.
    pub(crate) fn bad_model(path: &std::path::Path, err: impl std::fmt::Display) -> Self {
        Self::BadModel {
            path: path.to_path_buf(),
            reason: err.to_string(),
        }
    }
}

impl trine_core::Kinded for EmbedError {
    fn kind(&self) -> trine_core::ErrorKind {
        EmbedError::kind(self)
    }
}

impl From<candle_core::Error> for EmbedError {
    fn from(err: candle_core::Error) -> Self {
        Self::inference(err)
    }
}

/// Fails with [`EmbedError::MissingModel`] unless `path` is a file.
pub(crate) fn require_file(path: &std::path::Path, hint: &'static str) -> Result<()> {
    if path.is_file() {
        Ok(())
    } else {
        Err(EmbedError::MissingModel {
            path: path.to_path_buf(),
            hint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_fix() {
        let unknown = EmbedError::UnknownEmbedder("bert".into()).to_string();
        assert!(unknown.contains("minilm|static|hash"), "{unknown}");
        let missing = EmbedError::MissingModel {
            path: PathBuf::from("models/x/model.safetensors"),
            hint: "run scripts/fetch-model.sh",
        }
        .to_string();
        assert!(missing.contains("models/x/model.safetensors"), "{missing}");
        assert!(missing.contains("scripts/fetch-model.sh"), "{missing}");
        assert_eq!(
            EmbedError::UnknownEmbedder(String::new()).kind(),
            ErrorKind::InvalidArgument
        );
    }
}

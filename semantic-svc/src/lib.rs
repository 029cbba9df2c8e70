//! The Semantic service: nearest neighbours and embeddings (arrives with the search mesh).
#![forbid(unsafe_code)]

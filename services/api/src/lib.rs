//! trine's gRPC API, generated from `proto/trine/v1/` — the one crate that
//! owns the protos — and the one mapping of error kinds to gRPC codes.
#![forbid(unsafe_code)]

pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("trine.v1");
}

/// The encoded file descriptor set, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("trine_descriptor");

pub mod codec;
mod convert;
pub mod json;
pub mod server;
mod status;
pub mod tls;
mod tokens;

pub use convert::*;
pub use status::{code_of, http_status_of, invalid, kind_of, status, to_status};
pub use tokens::{
    MAX_TEXT_TOKENS, MAX_TOKEN_DIM, query_tokens_from_wire, tokens_from_wire, tokens_to_wire,
};

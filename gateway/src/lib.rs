//! The gateway: trine's public `Memory` service.
//!
//! It validates requests at the edge, turns wire types into domain types and
//! back, and writes through [`Writer`] — the same code `trine ingest` uses.
//! Search fans out to lexical-svc and semantic-svc and fuses through
//! fusion-svc ([`Searcher`], on the domain [`query::SearchQuery`]); the wire
//! is known only to the edges: `service.rs` (the `Memory` server, where a
//! request becomes a query and an answer a response), `peers.rs` (the
//! clients of the three services), and the other surfaces over the same
//! service — `rest.rs` (HTTP/JSON), `mcp.rs`, `explain.rs` — and `server.rs`
//! (serving it).
#![forbid(unsafe_code)]

pub mod auth;
pub mod backups;
pub mod explain;
pub mod mcp;
mod peers;
pub mod query;
pub mod quota;
pub mod rest;
mod search;
mod server;
mod service;
mod writer;

pub use peers::Peers;
pub use search::{SearchConfig, Searcher};
pub use server::run;
pub use service::MemoryService;
pub use service::query_from_wire;
pub use writer::{WriteError, Writer};

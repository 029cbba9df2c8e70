//! The gateway: trine's public `Memory` service.
//!
//! It validates requests at the edge, turns wire types into domain types and
//! back, and writes through [`Writer`] — the same code `trine ingest` uses.
//! Search fans out to lexical-svc and semantic-svc and fuses through
//! fusion-svc ([`Searcher`]).
#![forbid(unsafe_code)]

pub mod auth;
pub mod quota;
mod search;
mod server;
mod service;
mod writer;

pub use search::{Peers, SearchConfig, Searcher};
pub use server::run;
pub use service::MemoryService;
pub use writer::{WriteError, Writer};

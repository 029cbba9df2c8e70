//! The gateway: trine's public `Memory` service.
//!
//! It validates requests at the edge, turns wire types into domain types and
//! back, and writes through [`Writer`] — the same code `trine ingest` uses.
//! Search arrives with the search mesh.
#![forbid(unsafe_code)]

mod server;
mod service;
mod writer;

pub use server::{run, serve_grpc};
pub use service::MemoryService;
pub use writer::{WriteError, Writer};

//! fusion-svc: `Fusion.Fuse` — the lexical and semantic lists with the
//! verbatim evidence, fused by `trine_core::fusion` under the service's
//! settings (`[fusion]`) and what a search asks for. Holds no state and reads
//! no store.
#![forbid(unsafe_code)]

mod service;

pub use service::{FusionService, fuse_request, run};
pub use trine_core::fusion::Settings;

//! The domain types live in `trine-core`; the store speaks them.
pub use trine_core::model::*;

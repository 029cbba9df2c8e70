//! trine's evaluation and benchmarking tools, the `trine eval`, `trine
//! bench` and `trine refusals` commands: each module's `Args` (the flags)
//! and `run`, which the `trine` binary dispatches into. They run the mesh
//! in-process, or call a running gateway, over what `trine-config` opens.
#![forbid(unsafe_code)]

pub mod bench;
pub mod eval;
mod queries;
pub mod refusals;

//! Pure search algorithms of trine: query terms, the verbatim check, BM25 over
//! a candidate set, reciprocal rank fusion and the explain record.
//!
//! Nothing here does IO; every function is a rule of docs/design.md and is
//! tested table-driven.
#![forbid(unsafe_code)]

pub mod bm25;
pub mod common;
pub mod context;
mod error;
pub mod eval;
pub mod fold;
pub mod frequencies;
pub mod fusion;
pub mod gate;
pub mod late;
pub mod model;
pub mod named;
pub mod parsed;
pub mod postings;
pub mod sparse;
pub mod stage;
pub mod strategy;
pub mod terms;
pub mod verbatim;

pub use common::CommonWords;
pub use error::{ErrorKind, Kinded};
pub use fold::{Fold, Language};
pub use frequencies::{Document, Frequencies, Tally};
pub use named::Named;
pub use stage::Stage;
pub use strategy::{Mode, Strategy};
pub use terms::{terms, tokens};
pub use verbatim::Verbatim;

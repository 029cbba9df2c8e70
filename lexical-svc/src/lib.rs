//! lexical-svc: the lexical channel (`Lexical.Candidates`).
//!
//! Strategy `candidates` is ADR 0172's: at most `cap` points within the
//! filters — with two terms or more, first the points holding every term;
//! then, while room is left, each term's points, rarest term first by an
//! exact count — scored with BM25 over exact document frequencies. Each
//! candidate carries the verbatim flag, computed here where the text is.
#![forbid(unsafe_code)]

mod candidates;
mod service;

pub use candidates::{Candidate, Candidates, LexicalError, candidates};
pub use service::{LexicalService, run};

/// The lexical channel's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalConfig {
    /// Candidates read when a request does not say (DESIGN.md: 256).
    pub cap: usize,
    /// The most candidates a request may ask for.
    pub max_cap: usize,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        Self {
            cap: 256,
            max_cap: 4096,
        }
    }
}

//! lexical-svc: the lexical channel (`Lexical.Candidates`).
//!
//! Strategy `candidates` is ADR 0172's: at most `cap` points within the
//! filters — with two terms or more, first the points holding every term;
//! then, while room is left, each term's points, rarest term first by an
//! exact count — scored with BM25 over exact document frequencies. Each
//! candidate carries the verbatim flag, computed here where the text is.
//! Counts of at least `count_cache.min_count` points are reused for up to
//! `count_cache.ttl` ([`counts`]): the ADR's budget at 400,000 points.
//!
//! The other strategies of docs/design.md §3 (`bm25`, `sparse`, `gate`, `off`,
//! `auto`) run here too, each refused with the command that makes the
//! collection ready when it is not; every strategy that reads text also reads
//! the points holding the query as a phrase before the cap can drop them.
#![forbid(unsafe_code)]

use trine_core::context::Context;
use trine_core::{CommonWords, Strategy};

mod candidates;
mod context;
pub mod counts;
mod query;
pub mod readiness;
mod reads;
mod service;
mod settings;
mod strategies;

pub use candidates::{Candidate, Candidates, LexicalError, candidates, read_candidates};
pub use counts::{Clock, CountCacheConfig, Counter};
pub use query::LexicalQuery;
pub use readiness::{Ready, Texts};
pub use service::{LexicalService, run};
pub use settings::Settings;
pub use strategies::{phrase_holders, with_phrase_holders};

/// The lexical channel's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalConfig {
    /// Candidates read when a request does not say (docs/design.md §3: 256).
    pub cap: usize,
    /// The most candidates a request may ask for.
    pub max_cap: usize,
    /// The strategy of requests that do not name one.
    pub strategy: Strategy,
    /// The strategy of questions that name none (a request's `question`),
    /// when the collection is ready for it; `None`: `strategy`, as every
    /// other request. The gateway fuses its list as Qdrant's one call does.
    pub question_strategy: Option<Strategy>,
    /// Which counts of the `candidates` strategy are reused, and how long.
    pub count_cache: CountCacheConfig,
    /// The `candidates` counts are read from the store's statistics where
    /// it keeps them (the embedded store's document frequencies).
    pub count_statistics: bool,
    /// The store's statistics are built as the service starts, and until
    /// they are it answers no search (UNAVAILABLE; its health NOT_SERVING):
    /// what `trine serve` asks. Off, a first count starts their build and
    /// counts go to the store meanwhile (one-shot commands).
    pub keep_counts: bool,
    /// The common words a query's scoring and read leave out
    /// (`trine_core::common`); the index's language by default
    /// (docs/search.md, "Common words").
    pub common_words: CommonWords,
    /// The messages around the best hits ([`trine_core::context`]): a
    /// thread's message is ranked by its own text and its window.
    pub context: Context,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        Self {
            cap: 256,
            max_cap: 4096,
            strategy: Strategy::Candidates,
            question_strategy: Some(Strategy::Sparse),
            count_cache: CountCacheConfig::default(),
            count_statistics: true,
            keep_counts: false,
            common_words: CommonWords::Auto,
            context: Context::default(),
        }
    }
}

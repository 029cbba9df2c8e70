//! A search as the gateway runs it: the domain types of [`crate::Searcher`],
//! converted from the wire once, at the edge (`service.rs`), and back.

use std::time::Duration;

use tonic::async_trait;
use trine_core::fusion::{Fused, LexicalEntry, Settings};
use trine_core::model::{Filter, Memory};
use trine_core::{ErrorKind, Mode, Stage, Strategy};
use uuid::Uuid;

/// One search, validated: every field resolved against the gateway's
/// settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// The query text, trimmed, within the size allowed.
    pub text: String,
    pub mode: Mode,
    /// The lexical strategy asked for; `None`: lexical-svc's own.
    pub strategy: Option<Strategy>,
    /// A question (`fusion::is_question`) naming neither a strategy, weights
    /// nor a fusion method, under a fusion that fuses questions
    /// (`question_confidence` > 0): lexical-svc reads its question
    /// strategy's list too, and the question is fused from that list as
    /// Qdrant's one call fuses when its dense list is flat
    /// (`fusion::as_question`).
    pub question: bool,
    pub limit: usize,
    pub filter: Filter,
    /// The fusion: the gateway's `[fusion]` with what the search sets.
    pub fusion: Settings,
    /// Whether the verbatim evidence (the tier and the third list) counts.
    pub verbatim: bool,
    /// At most this many characters of memory text in the answer.
    pub max_chars: Option<usize>,
    /// Only the hits whose shown score is at least this.
    pub min_score: Option<f64>,
}

impl SearchQuery {
    /// Whether late interaction judges this search's first hits again
    /// ([`trine_core::late`]): a hybrid search under a fusion that gives it
    /// a vote, not shaped like a title or an identifier.
    pub fn late(&self) -> bool {
        self.mode == Mode::Hybrid
            && self.fusion.late_weight > 0.0
            && self.fusion.late_depth > 1
            && trine_core::late::judged(&self.text)
    }

    /// How many hits fusion is asked for: the limit, or the late depth
    /// where late interaction judges more.
    pub fn fused_limit(&self) -> usize {
        if self.late() {
            self.limit.max(self.fusion.late_depth)
        } else {
            self.limit
        }
    }
}

/// Timed stages, in the order they ran.
pub type Timings = Vec<(Stage, Duration)>;

/// lexical-svc's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalList {
    pub candidates: Vec<LexicalEntry>,
    /// The strategy that ran.
    pub strategy: String,
    /// The lexical score of a full match (0: unknown).
    pub reference: f64,
    /// The query's terms as the channel split it, under the collection's fold.
    pub terms: usize,
    /// The question strategy's list, read beside it for a question, and
    /// that strategy's name.
    pub question: Option<(String, Vec<LexicalEntry>)>,
    pub timings: Timings,
}

/// semantic-svc's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SemanticList {
    pub neighbors: Vec<(Uuid, f64)>,
    pub timings: Timings,
    /// The query's tokens, when the search asked for them.
    pub tokens: Option<trine_core::late::Tokens>,
}

/// fusion-svc's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FusedList {
    pub hits: Vec<Fused>,
    pub timings: Timings,
}

/// A peer's failure: what kind, and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerError {
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl trine_core::Kinded for PeerError {
    fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl PeerError {
    /// Whether the error is the caller's to fix (passed through) rather than
    /// a fault to degrade around.
    pub fn is_callers(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::InvalidArgument
                | ErrorKind::FailedPrecondition
                | ErrorKind::NotFound
                | ErrorKind::Unimplemented
        )
    }
}

/// The lists a search fuses.
#[derive(Debug, Clone, Copy)]
pub struct ToFuse<'a> {
    /// The fusion of these lists: the search's, or its question fusion.
    pub settings: &'a Settings,
    /// A question whose dense list stands out: the question strategy's
    /// list, whose one-call fusion fills the first eight
    /// (`fusion::fuse_spread`).
    pub asked: Option<&'a [LexicalEntry]>,
    pub lexical: &'a [LexicalEntry],
    pub semantic: &'a [(Uuid, f64)],
    pub reference: f64,
    /// The query's terms under the collection's fold (the lexical channel's).
    pub terms: usize,
}

/// The three internal services as the searcher calls them, each within a
/// deadline; `Peers` is their gRPC implementation.
#[async_trait]
pub trait Channels: Send + Sync {
    async fn candidates(
        &self,
        query: &SearchQuery,
        deadline: Duration,
    ) -> Result<LexicalList, PeerError>;

    async fn nearest(
        &self,
        query: &SearchQuery,
        deadline: Duration,
    ) -> Result<SemanticList, PeerError>;

    async fn fuse(
        &self,
        query: &SearchQuery,
        lists: ToFuse<'_>,
        deadline: Duration,
    ) -> Result<FusedList, PeerError>;

    /// Whether every channel answers its health check as serving within
    /// `deadline`; what does not, when one does not.
    async fn ready(&self, deadline: Duration) -> Result<(), Unready>;
}

/// Why the mesh is not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unready {
    /// What is not ready, and why.
    pub why: String,
    /// A channel answered that it is not serving yet (lexical-svc building
    /// its document frequencies): it is starting, not down.
    pub starting: bool,
}

impl std::fmt::Display for Unready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// A search's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The fused hits with their memories, best first.
    pub hits: Vec<(Fused, Memory)>,
    pub timings: Timings,
    /// Why it is degraded (a channel that failed); empty: whole.
    pub reasons: Vec<String>,
    /// The lexical strategy that ran.
    pub strategy: String,
    /// The lexical counts' share of the search's time.
    pub counts_share: f64,
}

//! The stages of a search whose times are reported (`SearchResponse.timings`,
//! each service's `trine_stage_seconds`, the counts budget): one enum shared
//! by the services, so that no stage is named twice. On the wire a stage is
//! its name.

use crate::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

/// A timed stage of one search; its name is that of the channel, then the
/// step (`lexical.counts`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
pub enum Stage {
    /// The gateway's call to lexical-svc, as the gateway saw it.
    #[strum(serialize = "lexical")]
    Lexical,
    /// The corpus and term counts (the ADR's budget is their share).
    #[strum(serialize = "lexical.counts")]
    LexicalCounts,
    /// The reads of the candidates.
    #[strum(serialize = "lexical.read")]
    LexicalRead,
    /// BM25 and the verbatim check over the candidates.
    #[strum(serialize = "lexical.score")]
    LexicalScore,
    /// The phrase read of a strategy other than `candidates`.
    #[strum(serialize = "lexical.phrase")]
    LexicalPhrase,
    /// The read of the messages around the best hits and their rescoring
    /// ([`crate::context`]).
    #[strum(serialize = "lexical.context")]
    LexicalContext,
    /// The gateway's call to semantic-svc.
    #[strum(serialize = "semantic")]
    Semantic,
    /// The query's embedding.
    #[strum(serialize = "semantic.embed")]
    SemanticEmbed,
    /// The nearest-neighbour query.
    #[strum(serialize = "semantic.query")]
    SemanticQuery,
    /// The read of the messages around the best hits and the blend
    /// ([`crate::context`]).
    #[strum(serialize = "semantic.context")]
    SemanticContext,
    /// fusion-svc's own work.
    #[strum(serialize = "fusion")]
    Fusion,
    /// The gateway's call to fusion-svc (or its own fusion when it is down).
    #[strum(serialize = "fusion.call")]
    FusionCall,
    /// Late interaction: the store's MaxSim over the first hits' tokens
    /// ([`crate::late`]).
    #[strum(serialize = "late")]
    Late,
    /// The payload read of the final hits.
    #[strum(serialize = "payload")]
    Payload,
    /// The whole search in the gateway.
    #[strum(serialize = "gateway")]
    Gateway,
}

impl Named for Stage {
    const WHAT: &'static str = "stage";
}

impl Stage {
    /// The stage of a name, if it is one.
    pub fn of(name: &str) -> Option<Self> {
        name.parse().ok()
    }

    /// The stages the gateway itself times (the others come from its peers).
    pub fn is_the_gateways(self) -> bool {
        matches!(
            self,
            Self::Lexical
                | Self::Semantic
                | Self::FusionCall
                | Self::Late
                | Self::Payload
                | Self::Gateway
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_has_one_name_that_parses_back() {
        let mut names = std::collections::HashSet::new();
        for &stage in Stage::all() {
            assert!(names.insert(stage.name()), "{stage:?} named twice");
            assert_eq!(Stage::of(stage.name()), Some(stage));
        }
        assert_eq!(Stage::of("lexical.count"), None);
        let gateways: Vec<&str> = Stage::all()
            .iter()
            .filter(|s| s.is_the_gateways())
            .map(|s| s.name())
            .collect();
        assert_eq!(
            gateways,
            [
                "lexical",
                "semantic",
                "fusion.call",
                "late",
                "payload",
                "gateway"
            ]
        );
    }
}

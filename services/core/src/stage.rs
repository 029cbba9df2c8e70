//! The stages of a search whose times are reported (`SearchResponse.timings`,
//! each service's `trine_stage_seconds`, the counts budget): one enum shared
//! by the services, so that no stage is named twice. On the wire a stage is
//! its name.

/// A timed stage of one search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The gateway's call to lexical-svc, as the gateway saw it.
    Lexical,
    /// The corpus and term counts (the ADR's budget is their share).
    LexicalCounts,
    /// The reads of the candidates.
    LexicalRead,
    /// BM25 and the verbatim check over the candidates.
    LexicalScore,
    /// The phrase read of a strategy other than `candidates`.
    LexicalPhrase,
    /// The read of the messages around the best hits and their rescoring
    /// ([`crate::context`]).
    LexicalContext,
    /// The gateway's call to semantic-svc.
    Semantic,
    /// The query's embedding.
    SemanticEmbed,
    /// The nearest-neighbour query.
    SemanticQuery,
    /// The read of the messages around the best hits and the blend
    /// ([`crate::context`]).
    SemanticContext,
    /// fusion-svc's own work.
    Fusion,
    /// The gateway's call to fusion-svc (or its own fusion when it is down).
    FusionCall,
    /// The payload read of the final hits.
    Payload,
    /// The whole search in the gateway.
    Gateway,
}

impl Stage {
    pub const ALL: [Stage; 14] = [
        Self::Lexical,
        Self::LexicalCounts,
        Self::LexicalRead,
        Self::LexicalScore,
        Self::LexicalPhrase,
        Self::LexicalContext,
        Self::Semantic,
        Self::SemanticEmbed,
        Self::SemanticQuery,
        Self::SemanticContext,
        Self::Fusion,
        Self::FusionCall,
        Self::Payload,
        Self::Gateway,
    ];

    /// Its name on the wire and in metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Lexical => "lexical",
            Self::LexicalCounts => "lexical.counts",
            Self::LexicalRead => "lexical.read",
            Self::LexicalScore => "lexical.score",
            Self::LexicalPhrase => "lexical.phrase",
            Self::LexicalContext => "lexical.context",
            Self::Semantic => "semantic",
            Self::SemanticEmbed => "semantic.embed",
            Self::SemanticQuery => "semantic.query",
            Self::SemanticContext => "semantic.context",
            Self::Fusion => "fusion",
            Self::FusionCall => "fusion.call",
            Self::Payload => "payload",
            Self::Gateway => "gateway",
        }
    }

    /// The stage of a name, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The stages the gateway itself times (the others come from its peers).
    pub fn is_the_gateways(self) -> bool {
        matches!(
            self,
            Self::Lexical | Self::Semantic | Self::FusionCall | Self::Payload | Self::Gateway
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_has_one_name_that_parses_back() {
        let mut names = std::collections::HashSet::new();
        for stage in Stage::ALL {
            assert!(names.insert(stage.name()), "{stage:?} named twice");
            assert_eq!(Stage::parse(stage.name()), Some(stage));
        }
        assert_eq!(Stage::parse("lexical.count"), None);
        let gateways: Vec<&str> = Stage::ALL
            .into_iter()
            .filter(|s| s.is_the_gateways())
            .map(Stage::name)
            .collect();
        assert_eq!(
            gateways,
            ["lexical", "semantic", "fusion.call", "payload", "gateway"]
        );
    }
}

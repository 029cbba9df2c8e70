//! The lexical strategies (docs/design.md §3) and search modes (§7), by name.

use crate::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

/// What the lexical channel does.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Strategy {
    Candidates,
    Bm25,
    Sparse,
    Gate,
    Off,
    Auto,
}

impl Named for Strategy {
    const WHAT: &'static str = "lexical strategy";
}

/// Which lists answer a search.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Mode {
    /// Lexical, semantic and verbatim lists.
    Hybrid,
    /// The semantic list only.
    Semantic,
    /// The lexical strategy's list only.
    Lexical,
}

impl Named for Mode {
    const WHAT: &'static str = "mode";
}

impl Mode {
    pub fn uses_lexical(self) -> bool {
        self != Self::Semantic
    }

    pub fn uses_semantic(self) -> bool {
        self != Self::Lexical
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let strategies: Vec<&str> = Strategy::all().iter().map(|s| s.name()).collect();
        assert_eq!(
            strategies,
            ["candidates", "bm25", "sparse", "gate", "off", "auto"]
        );
        let modes: Vec<&str> = Mode::all().iter().map(|m| m.name()).collect();
        assert_eq!(modes, ["hybrid", "semantic", "lexical"]);
        for s in Strategy::all() {
            assert_eq!(Strategy::parse(s.name()), Ok(*s));
        }
        assert!(
            Strategy::parse("magic")
                .unwrap_err()
                .contains("candidates, bm25")
        );
        assert!(Mode::parse("fuzzy").is_err());
    }
}

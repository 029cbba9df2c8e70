//! The lexical strategies (docs/design.md §3) and search modes (§7), by name.

/// What the lexical channel does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    Candidates,
    Bm25,
    Sparse,
    Gate,
    Off,
    Auto,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Self::Candidates,
        Self::Bm25,
        Self::Sparse,
        Self::Gate,
        Self::Off,
        Self::Auto,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Candidates => "candidates",
            Self::Bm25 => "bm25",
            Self::Sparse => "sparse",
            Self::Gate => "gate",
            Self::Off => "off",
            Self::Auto => "auto",
        }
    }

    /// Parses a strategy name; the error lists the known ones.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
                format!(
                    "unknown lexical strategy {name:?}: use one of {}",
                    known.join(", ")
                )
            })
    }
}

/// Which lists answer a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Lexical, semantic and verbatim lists.
    Hybrid,
    /// The semantic list only.
    Semantic,
    /// The lexical strategy's list only.
    Lexical,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Hybrid => "hybrid",
            Self::Semantic => "semantic",
            Self::Lexical => "lexical",
        }
    }

    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "hybrid" => Ok(Self::Hybrid),
            "semantic" => Ok(Self::Semantic),
            "lexical" => Ok(Self::Lexical),
            other => Err(format!(
                "unknown mode {other:?}: use hybrid, semantic or lexical"
            )),
        }
    }

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
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.name()), Ok(s));
        }
        for m in [Mode::Hybrid, Mode::Semantic, Mode::Lexical] {
            assert_eq!(Mode::parse(m.name()), Ok(m));
        }
        assert!(
            Strategy::parse("magic")
                .unwrap_err()
                .contains("candidates, bm25")
        );
        assert!(Mode::parse("fuzzy").is_err());
    }
}

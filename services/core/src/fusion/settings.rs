//! What decides a fusion: the method, the normalisation, the weights and
//! the per-query settings, trine's defaults, and the one range check.

use crate::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

/// How the lists are combined.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Method {
    Rrf,
    Score,
    Dbsf,
}

impl Named for Method {
    const WHAT: &'static str = "fusion method";
}

/// How score fusion puts a channel's scores on one scale.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Normalization {
    /// On each channel's own fixed scale: lexical scores over the query's
    /// full-match score (its reference, else the list's top), cosines from
    /// the floor to 1.
    Absolute,
    FixedFloor,
    MinMax,
    ZScore,
}

impl Named for Normalization {
    const WHAT: &'static str = "normalization";
}

/// Per-list weights. The verbatim weight is the third list's vote (0: no
/// vote, the tier alone carries the verbatim evidence).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub lexical: f64,
    pub semantic: f64,
    pub verbatim: f64,
}

/// The largest per-query weighting strength a search may ask for.
pub const MAX_ADAPTIVE: f64 = 8.0;

/// The largest vote late interaction may be given.
pub const MAX_LATE_WEIGHT: f64 = 16.0;

/// The semantic confidence at which `semantic_confidence` leaves the
/// semantic weight as configured.
pub const CONFIDENCE_PIVOT: f64 = 0.5;

/// The largest lexical power a search may ask for.
pub const MAX_LEXICAL_POWER: f64 = 8.0;

/// Everything that decides a fusion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub method: Method,
    /// RRF's constant.
    pub rrf_k: f64,
    pub normalization: Normalization,
    pub weights: Weights,
    /// Cosine's fixed floor in `fixed_floor` normalisation (BM25's is 0).
    pub semantic_floor: f64,
    /// Whether verbatim matches can form the tier.
    pub tier: bool,
    /// At most this many verbatim candidates form the tier for a query that
    /// is not shaped like a title or identifier.
    pub tier_max: usize,
    /// Strength β of per-query weighting; 0: the weights as given.
    pub adaptive: f64,
    /// Score fusion raises each normalised lexical score to this power
    /// (sign kept): above 1, a candidate matching a small share of the
    /// query's terms counts for less than its share; 1: linear.
    pub lexical_power: f64,
    /// Strength γ of semantic trust in score fusion: the semantic weight
    /// times `(confidence / CONFIDENCE_PIVOT)^γ`; 0: off. RRF and DBSF keep
    /// their weights as given.
    pub semantic_confidence: f64,
    /// A question (`super::is_question`) whose dense list's confidence is
    /// below this is fused as Qdrant's one call fuses, from the question
    /// strategy's list ([`Settings::for_questions`]); 0: never.
    pub question_confidence: f64,
    /// Late interaction ([`crate::late`]): the vote of the first hits'
    /// MaxSim order beside their fused order's 1 (0: off).
    pub late_weight: f64,
    /// How many of the fused list's first hits late interaction judges.
    pub late_depth: usize,
}

impl Settings {
    /// RRF at `k` with the given weights and no tier: the fusion of earlier
    /// releases (k = 60, verbatim 2) and of the ADR.
    pub fn rrf(k: f64, weights: Weights) -> Self {
        Self {
            method: Method::Rrf,
            rrf_k: k,
            weights,
            tier: false,
            semantic_confidence: 0.0,
            ..Self::default()
        }
    }
}

impl Default for Settings {
    /// trine's default fusion (docs/design.md §7; the measurements are in
    /// docs/fusion.md).
    fn default() -> Self {
        Self {
            method: Method::Score,
            rrf_k: 60.0,
            normalization: Normalization::Absolute,
            weights: Weights {
                lexical: 1.0,
                semantic: 2.0,
                verbatim: 0.0,
            },
            semantic_floor: 0.2,
            tier: true,
            tier_max: 3,
            adaptive: 0.0,
            lexical_power: 2.0,
            semantic_confidence: 1.5,
            question_confidence: 0.3,
            late_weight: 2.0,
            late_depth: crate::late::DEPTH,
        }
    }
}

impl Settings {
    /// trine's default fusion for a collection of `static` embeddings (the
    /// default, [`Settings::default`], is MiniLM's). The `absolute`
    /// normalisation scales cosine from a floor measured on MiniLM, the
    /// default embedder, and squares the lexical share (a question's common
    /// words matched in a memory count for little beside its meaning);
    /// semantic trust (γ 1.5 at weight 2) gives the dense list its weight
    /// where its first stands out and hands the lead to the lexical list
    /// where it is flat (French text, short chat messages). On the `static`
    /// embedder (a weaker semantic channel with another cosine scale)
    /// z-scores with per-query weighting of both channels rank ordinary
    /// questions best. Chosen on the tune halves of five development sets
    /// (`scripts/fusion-study.py`), reported on the held-back halves in
    /// docs/quality.md.
    pub fn for_static() -> Self {
        Self {
            normalization: Normalization::ZScore,
            weights: Weights {
                lexical: 1.0,
                semantic: 2.0,
                verbatim: 0.0,
            },
            adaptive: 1.0,
            lexical_power: 1.0,
            semantic_confidence: 0.0,
            question_confidence: 0.0,
            late_weight: 0.5,
            ..Self::default()
        }
    }

    /// The fusion of a question's lists when it is fused as a question
    /// ([`super::as_question`]): Qdrant's own one-call hybrid — RRF at this
    /// fusion's `rrf_k`, the dense and the lexical list weighing the same,
    /// no verbatim vote — with the verbatim tier kept as configured. Where
    /// the dense list is flat (questions about a conversation's short
    /// messages), that fusion of the dense and the sparse list found more
    /// answers than score fusion of the candidates (docs/search.md,
    /// "Questions").
    pub fn for_questions(&self) -> Self {
        Self {
            method: Method::Rrf,
            weights: Weights {
                lexical: 1.0,
                semantic: 1.0,
                verbatim: 0.0,
            },
            adaptive: 0.0,
            semantic_confidence: 0.0,
            ..*self
        }
    }

    /// Every number within its range — the one check of the config file,
    /// the flags and the wire alike, each saying it in its own words.
    pub fn check(&self) -> Result<(), OutOfRange> {
        let out = |key, value, want| Err(OutOfRange { key, value, want });
        for (key, w) in [
            ("lexical_weight", self.weights.lexical),
            ("semantic_weight", self.weights.semantic),
            ("verbatim_weight", self.weights.verbatim),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return out(key, w, "a finite number >= 0".to_string());
            }
        }
        if !(self.rrf_k.is_finite() && self.rrf_k > 0.0) {
            return out(
                "rrf_k",
                self.rrf_k,
                "a finite number > 0 (e.g. 60)".to_string(),
            );
        }
        if !(self.semantic_floor.is_finite() && (-1.0..1.0).contains(&self.semantic_floor)) {
            return out(
                "semantic_floor",
                self.semantic_floor,
                "a cosine in [-1, 1)".to_string(),
            );
        }
        for (key, beta) in [
            ("adaptive", self.adaptive),
            ("semantic_confidence", self.semantic_confidence),
        ] {
            if !(beta.is_finite() && (0.0..=MAX_ADAPTIVE).contains(&beta)) {
                return out(key, beta, format!("0 (off) to {MAX_ADAPTIVE}"));
            }
        }
        let theta = self.question_confidence;
        if !(theta.is_finite() && (0.0..=1.0).contains(&theta)) {
            return out(
                "question_confidence",
                theta,
                "a confidence in [0, 1] (0: off)".to_string(),
            );
        }
        let late = self.late_weight;
        if !(late.is_finite() && (0.0..=MAX_LATE_WEIGHT).contains(&late)) {
            return out("late_weight", late, format!("0 (off) to {MAX_LATE_WEIGHT}"));
        }
        if self.late_depth > crate::late::MAX_DEPTH {
            return out(
                "late_depth",
                self.late_depth as f64,
                format!("at most {}", crate::late::MAX_DEPTH),
            );
        }
        let power = self.lexical_power;
        if !(power.is_finite() && power > 0.0 && power <= MAX_LEXICAL_POWER) {
            return out(
                "lexical_power",
                power,
                format!("a number above 0, at most {MAX_LEXICAL_POWER} (1: linear)"),
            );
        }
        Ok(())
    }
}

/// A fusion setting out of its range: which ([`Settings::check`]'s key, as
/// the config file names it), its value, and what to give instead.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub key: &'static str,
    pub value: f64,
    pub want: String,
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is {}: give {}", self.key, self.value, self.want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_documented_ones() {
        let methods: Vec<&str> = Method::all().iter().map(|m| m.name()).collect();
        assert_eq!(methods, ["rrf", "score", "dbsf"]);
        let scales: Vec<&str> = Normalization::all().iter().map(|n| n.name()).collect();
        assert_eq!(scales, ["absolute", "fixed_floor", "min_max", "z_score"]);
        assert_eq!(
            Method::parse("borda"),
            Err("unknown fusion method \"borda\": use rrf, score or dbsf".to_string())
        );
    }
}

//! The config file's `[fusion]`: a fusion's settings, each optional, over
//! a base.

use crate::named::Named;
use serde::Deserializer;

use crate::parsed::parsed;

use super::{Method, Normalization, Settings, Weights};

fn method<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Method>, D::Error> {
    parsed(d, "fusion.method", Method::parse).map(Some)
}

fn normalization<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Normalization>, D::Error> {
    parsed(d, "fusion.normalization", Normalization::parse).map(Some)
}

/// The config file's `[fusion]`: each setting a fusion may change, over a
/// base (the embedder's default); a search may override each over the wire
/// (docs/design.md §7).
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Partial {
    /// rrf, score or dbsf.
    #[serde(deserialize_with = "method")]
    pub method: Option<Method>,
    /// Score fusion's normalisation: absolute, fixed_floor, min_max or z_score.
    #[serde(deserialize_with = "normalization")]
    pub normalization: Option<Normalization>,
    /// RRF's k.
    pub rrf_k: Option<f64>,
    /// Cosine's floor in the absolute and fixed_floor normalisations (BM25's is 0).
    pub semantic_floor: Option<f64>,
    /// Verbatim matches rank above the rest when the tier rule holds.
    pub tier: Option<bool>,
    /// A query not shaped like a title or identifier forms the tier when at
    /// most this many candidates hold it verbatim.
    pub tier_max: Option<usize>,
    /// Per-query weighting strength (0: off).
    pub adaptive: Option<f64>,
    /// Score fusion raises each normalised lexical score to this power (1: linear).
    pub lexical_power: Option<f64>,
    /// The semantic weight times (its list's confidence / 0.5)^this (0: off).
    pub semantic_confidence: Option<f64>,
    /// A question whose dense list's confidence is below this is fused as
    /// Qdrant's one call fuses, from the question strategy's list (0: never).
    pub question_confidence: Option<f64>,
    /// Late interaction's vote beside the fused order's 1 (0: off).
    pub late_weight: Option<f64>,
    /// How many of the fused list's first hits late interaction judges.
    pub late_depth: Option<usize>,
    pub lexical_weight: Option<f64>,
    pub semantic_weight: Option<f64>,
    /// The verbatim list's vote (0: the tier alone).
    pub verbatim_weight: Option<f64>,
}

impl Partial {
    /// The settings these make over `base`, or what is out of range.
    pub fn over(&self, base: Settings) -> Result<Settings, String> {
        let settings = Settings {
            method: self.method.unwrap_or(base.method),
            rrf_k: self.rrf_k.unwrap_or(base.rrf_k),
            normalization: self.normalization.unwrap_or(base.normalization),
            weights: Weights {
                lexical: self.lexical_weight.unwrap_or(base.weights.lexical),
                semantic: self.semantic_weight.unwrap_or(base.weights.semantic),
                verbatim: self.verbatim_weight.unwrap_or(base.weights.verbatim),
            },
            semantic_floor: self.semantic_floor.unwrap_or(base.semantic_floor),
            tier: self.tier.unwrap_or(base.tier),
            tier_max: self.tier_max.unwrap_or(base.tier_max),
            adaptive: self.adaptive.unwrap_or(base.adaptive),
            lexical_power: self.lexical_power.unwrap_or(base.lexical_power),
            semantic_confidence: self.semantic_confidence.unwrap_or(base.semantic_confidence),
            question_confidence: self.question_confidence.unwrap_or(base.question_confidence),
            late_weight: self.late_weight.unwrap_or(base.late_weight),
            late_depth: self.late_depth.unwrap_or(base.late_depth),
        };
        settings.check().map_err(|e| format!("[fusion] {e}"))?;
        Ok(settings)
    }
}

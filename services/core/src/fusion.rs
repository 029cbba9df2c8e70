//! Fusion (docs/design.md §7): the verbatim tier first, then the lexical
//! and semantic lists fused by one of three methods.
//!
//! - **The verbatim tier.** A lexical candidate that holds the whole query
//!   verbatim ranks above every other hit when the query has two terms or more
//!   and the evidence is specific: the query is shaped like a title or an
//!   identifier (a token mixing letters and digits, or alphanumeric runs
//!   joined by punctuation: `2026-11-11`, `CVE-2023-4863`, `foo_bar.qux`), or
//!   it is verbatim in at most `tier_max` candidates (a rare phrase). A common
//!   phrase (`error handling` in dozens of memories) forms no tier and floods
//!   nothing. Within the tier, and below it, hits keep the fused order.
//! - **Methods.** `rrf`: `Σ weight / (k + rank)` over the lists (the verbatim
//!   list is a third list when its weight is above 0: the ADR's arithmetic);
//!   `score`: a convex combination `Σ weight · norm(score) / Σ weight` with
//!   each channel normalised — `fixed_floor` (`(s − floor) / (top − floor)`,
//!   BM25's floor 0 and cosine's configured floor, clamped to [0, 1]),
//!   `min_max` or `z_score`; `dbsf`: Qdrant's distribution-based score fusion
//!   (each list scaled from mean − 3σ to mean + 3σ, clamped, summed). A point
//!   missing from a list gets that list's lowest normalised value (0, or the
//!   list's lowest z-score).
//! - **Partial matches** (`lexical_power` = p): score fusion raises each
//!   normalised lexical score to the power p, sign kept. Under `absolute` a
//!   candidate's value is its share of the query's full-match score, so at
//!   p = 2 a candidate holding a fifth of the query (common words of a
//!   question) adds a twenty-fifth, while a full match still adds 1.
//! - **Per-query weighting** (`adaptive` = β > 0): each channel's weight is
//!   multiplied by `(ε + confidence)^β`, where a list's confidence is the gap
//!   between its first and tenth score over the first score's distance to
//!   the floor — a list whose top stands out is trusted more.
//! - **Semantic trust** (`semantic_confidence` = γ > 0, score fusion): the
//!   semantic weight alone is multiplied by `(confidence / 0.5)^γ`. A dense
//!   list whose first stands out (a question in the embedder's language,
//!   about text like its training text) keeps or gains its weight; a flat
//!   one (another language, short chat messages all about equally near)
//!   loses it to the lexical channel.
//!
//! Ties break by point id. Every hit carries, for every list that holds it,
//! its rank, raw score and normalised score (the explain).
//!
//! `fuse` runs in stages, each a function of its own: `resolve` (the lists
//! deduplicated, the verbatim list, whether it votes and forms the tier),
//! `weigh` (each list's weight for this query), `scale_lists` (each list's
//! values before its weight: the RRF term or the normalised score),
//! `explain` (one hit a point, with its placings and tier membership),
//! `combine` (the fused score: weight times value over the voting weights,
//! absent values added), `rank` (the tier first, then the score, ties by
//! id; the best `limit` kept) and [`lift_tier`] (the score shown).

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use crate::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

/// The three lists.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    EnumString,
    IntoStaticStr,
    VariantNames,
    VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum ListKind {
    Lexical,
    Semantic,
    Verbatim,
}

impl Named for ListKind {
    const WHAT: &'static str = "list";
}

/// A hit's place in one list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placing {
    /// 1 for the first.
    pub rank: u32,
    /// The list's raw score (BM25, cosine; the lexical score for verbatim).
    pub score: f64,
    /// What the method made of it before the list's weight: the RRF term
    /// `1 / (k + rank)`, or the normalised score.
    pub normalized: f64,
}

/// A fused hit with its explain.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub id: Uuid,
    /// The score shown: never below the score of a hit after it
    /// ([`lift_tier`]); what a caller sorts, merges and thresholds by.
    pub score: f64,
    /// The fusion's own score of the hit, before the tier's lift: what
    /// `explain` shows beside each list's.
    pub fused: f64,
    /// In the verbatim tier: ranked above every hit that is not.
    pub tier: bool,
    /// Where the hit stood in each list that holds it, in `ListKind` order.
    pub placings: Vec<(ListKind, Placing)>,
    /// Where late interaction placed it, when it was judged again
    /// ([`crate::late::rerank`]: its MaxSim order, score and RRF term).
    pub late: Option<Placing>,
}

impl Fused {
    fn new(id: Uuid) -> Self {
        Self {
            id,
            score: 0.0,
            fused: 0.0,
            tier: false,
            placings: Vec::new(),
            late: None,
        }
    }

    pub fn placing(&self, kind: ListKind) -> Option<Placing> {
        self.placings
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| *p)
    }

    /// The names of the lists that hold this hit.
    pub fn matched_by(&self) -> Vec<&'static str> {
        self.placings.iter().map(|(k, _)| k.name()).collect()
    }
}

mod partial;
mod question;
mod scaling;
mod settings;
mod shape;

pub use partial::Partial;
pub use question::{QUESTION_KEEP, QUESTION_SPREAD, as_question, fuse_spread};
pub use scaling::confidence;
use scaling::{Normalised, dbsf, lexical_confidence, normalise};
pub use settings::{
    CONFIDENCE_PIVOT, MAX_ADAPTIVE, MAX_LATE_WEIGHT, MAX_LEXICAL_POWER, Method, Normalization,
    OutOfRange, Settings, Weights,
};
pub use shape::{QUESTION_MAX_WORDS, TierReason, is_question, shaped, tier_rule};

/// A lexical candidate as fusion sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalEntry {
    pub id: Uuid,
    pub score: f64,
    pub verbatim: bool,
}

/// What fusion is given: the query and the two channels' lists, best first.
#[derive(Debug, Clone, Copy)]
pub struct Lists<'a> {
    pub query: &'a str,
    pub lexical: &'a [LexicalEntry],
    pub semantic: &'a [(Uuid, f64)],
    /// The lexical score of a full match for this query (BM25's reference,
    /// `bm25::reference`); 0 when unknown.
    pub lexical_reference: f64,
    /// How many terms the query has under the collection's fold, as the
    /// lexical channel split it (`crate::terms(query, fold).len()`).
    pub terms: usize,
}

/// Fuses the lists under `settings` and returns the best `limit` hits: the
/// stages below, in order.
pub fn fuse(lists: &Lists<'_>, settings: &Settings, limit: usize) -> Vec<Fused> {
    let resolved = resolve(lists, settings);
    let weights = weigh(lists, settings, resolved.votes);
    let table = scale_lists(&resolved, weights, settings, lists.lexical_reference);
    let mut hits = explain(&table, resolved.tier);
    combine(&mut hits, &table, settings.method);
    let mut hits = rank(hits, limit);
    lift_tier(&mut hits);
    hits
}

/// The lists fusion ranks, each id once, best first, with raw scores.
#[derive(Debug, Clone, PartialEq)]
struct Resolved {
    lexical: Vec<(Uuid, f64)>,
    semantic: Vec<(Uuid, f64)>,
    /// The lexical entries that hold the query verbatim, in lexical order;
    /// none for a single term unless it forms an identifier's tier.
    verbatim: Vec<(Uuid, f64)>,
    /// Whether the verbatim list votes: the query has two terms or more.
    votes: bool,
    /// Whether the verbatim list's members form the tier ([`tier_rule`]).
    tier: bool,
}

/// One list as fusion ranks it: ids best first (each once) with raw scores.
fn dedup(entries: impl Iterator<Item = (Uuid, f64)>) -> Vec<(Uuid, f64)> {
    let mut seen = HashSet::new();
    entries.filter(|(id, _)| seen.insert(*id)).collect()
}

/// Stage 1: the lists deduplicated (a point counts at its first place), the
/// verbatim list (the lexical entries of a point any of whose entries holds
/// the query verbatim), and whether it votes and forms the tier.
fn resolve(lists: &Lists<'_>, settings: &Settings) -> Resolved {
    let lexical = dedup(lists.lexical.iter().map(|c| (c.id, c.score)));
    let semantic = dedup(lists.semantic.iter().copied());
    let verbatim_ids: HashSet<Uuid> = lists
        .lexical
        .iter()
        .filter(|c| c.verbatim)
        .map(|c| c.id)
        .collect();
    let holding: Vec<(Uuid, f64)> = lexical
        .iter()
        .copied()
        .filter(|(id, _)| verbatim_ids.contains(id))
        .collect();
    // A single term has no verbatim list (the ADR: the lexical list already is
    // that term), except as the tier of an identifier; it never votes.
    let votes = lists.terms >= 2;
    let identifier = !votes
        && tier_rule(lists.query, lists.terms, holding.len(), settings)
            == Some(TierReason::Identifier);
    let verbatim = if votes || identifier {
        holding
    } else {
        Vec::new()
    };
    let tier = tier_rule(lists.query, lists.terms, verbatim.len(), settings).is_some();
    Resolved {
        lexical,
        semantic,
        verbatim,
        votes,
        tier,
    }
}

/// Stage 2: the three lists' weights for this query — the channels' own
/// ([`channel_weights`]) and the verbatim list's vote, none (0) when it does
/// not vote or is given below 0.
fn weigh(lists: &Lists<'_>, settings: &Settings, votes: bool) -> Weights {
    let (lexical, semantic) = channel_weights(lists, settings);
    let verbatim = if votes {
        settings.weights.verbatim
    } else {
        0.0
    };
    Weights {
        lexical,
        semantic,
        verbatim: verbatim.max(0.0),
    }
}

/// The effective lexical and semantic weights of one query.
fn channel_weights(lists: &Lists<'_>, settings: &Settings) -> (f64, f64) {
    let Weights {
        mut lexical,
        mut semantic,
        ..
    } = settings.weights;
    if settings.adaptive <= 0.0
        && (settings.semantic_confidence <= 0.0 || settings.method != Method::Score)
    {
        return (lexical, semantic);
    }
    const EPSILON: f64 = 0.05;
    let lexical_scores: Vec<f64> = lists.lexical.iter().map(|c| c.score).collect();
    let semantic_scores: Vec<f64> = lists.semantic.iter().map(|(_, s)| *s).collect();
    let semantic_confidence = confidence(&semantic_scores, settings.semantic_floor);
    if settings.adaptive > 0.0 {
        let boost = |c: f64| (EPSILON + c).powf(settings.adaptive);
        lexical *= boost(lexical_confidence(&lexical_scores));
        semantic *= boost(semantic_confidence);
    }
    if settings.semantic_confidence > 0.0 && settings.method == Method::Score {
        semantic *= (semantic_confidence / CONFIDENCE_PIVOT).powf(settings.semantic_confidence);
    }
    (lexical, semantic)
}

/// One list with its weight and its normalised values.
struct Scaled<'a> {
    kind: ListKind,
    weight: f64,
    list: &'a [(Uuid, f64)],
    normalised: Normalised,
}

/// Stage 3: each list with its weight and its values, in `ListKind` order.
/// The verbatim list without a vote (weight 0) is still reported in the
/// explain.
fn scale_lists<'a>(
    resolved: &'a Resolved,
    weights: Weights,
    settings: &Settings,
    lexical_reference: f64,
) -> [Scaled<'a>; 3] {
    [
        (ListKind::Lexical, weights.lexical, &resolved.lexical[..]),
        (ListKind::Semantic, weights.semantic, &resolved.semantic[..]),
        (ListKind::Verbatim, weights.verbatim, &resolved.verbatim[..]),
    ]
    .map(|(kind, weight, list)| {
        let scores: Vec<f64> = list.iter().map(|(_, s)| *s).collect();
        Scaled {
            kind,
            weight,
            list,
            normalised: scale(kind, &scores, settings, lexical_reference),
        }
    })
}

/// One list's values (raw `scores` best first): the RRF term
/// `1 / (k + rank)`, or the normalised score — the lexical channel's over
/// `lexical_reference` under `absolute`, raised to the lexical power.
fn scale(
    kind: ListKind,
    scores: &[f64],
    settings: &Settings,
    lexical_reference: f64,
) -> Normalised {
    match settings.method {
        Method::Rrf => Normalised {
            values: (1..=scores.len())
                .map(|rank| 1.0 / (settings.rrf_k + rank as f64))
                .collect(),
            absent: 0.0,
        },
        // The verbatim list is a flag: every member scores 1.
        _ if kind == ListKind::Verbatim => Normalised {
            values: vec![1.0; scores.len()],
            absent: 0.0,
        },
        Method::Dbsf => dbsf(scores),
        Method::Score => {
            let (floor, ceiling) = if kind == ListKind::Semantic {
                (settings.semantic_floor, 1.0)
            } else {
                (0.0, lexical_reference)
            };
            let mut scaled = normalise(scores, settings.normalization, floor, ceiling);
            if kind == ListKind::Lexical && settings.lexical_power != 1.0 {
                let power = |v: f64| v.signum() * v.abs().powf(settings.lexical_power);
                scaled.values.iter_mut().for_each(|v| *v = power(*v));
                scaled.absent = power(scaled.absent);
            }
            scaled
        }
    }
}

/// Stage 4: the explain record — one hit a point, in the order the lists
/// first hold them, with its rank, raw score and value in every list that
/// holds it (in `ListKind` order), in the tier when `tier` and the verbatim
/// list holds it. Its score is 0 until [`combine`].
fn explain(table: &[Scaled<'_>], tier: bool) -> Vec<Fused> {
    let capacity = table.iter().map(|t| t.list.len()).sum();
    let mut at: HashMap<Uuid, usize> = HashMap::with_capacity(capacity);
    let mut hits: Vec<Fused> = Vec::with_capacity(capacity);
    for t in table {
        for (i, ((id, raw), value)) in t.list.iter().zip(&t.normalised.values).enumerate() {
            let n = *at.entry(*id).or_insert_with(|| {
                hits.push(Fused::new(*id));
                hits.len() - 1
            });
            hits[n].placings.push((
                t.kind,
                Placing {
                    rank: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    score: *raw,
                    normalized: *value,
                },
            ));
        }
    }
    for hit in &mut hits {
        hit.placings.sort_by_key(|(kind, _)| *kind);
        hit.tier = tier && hit.placing(ListKind::Verbatim).is_some();
    }
    hits
}

/// What the weighted values are divided by: score fusion is a convex
/// combination, divided by the voting weights (a list with a weight above 0
/// and an entry); RRF and DBSF, or no vote: 1.
fn divisor(table: &[Scaled<'_>], method: Method) -> f64 {
    let total_weight: f64 = table
        .iter()
        .filter(|t| t.weight > 0.0 && !t.list.is_empty())
        .map(|t| t.weight)
        .sum();
    match method {
        Method::Score if total_weight > 0.0 => total_weight,
        _ => 1.0,
    }
}

/// Stage 5: each hit's fused score, also kept as [`Fused::fused`] — in the
/// table's order, `weight · value / divisor` for each list that holds it,
/// then for each voting list that lacks it, that list's absent value.
fn combine(hits: &mut [Fused], table: &[Scaled<'_>], method: Method) {
    let divisor = divisor(table, method);
    for hit in hits.iter_mut() {
        for t in table {
            if let Some(placing) = hit.placing(t.kind) {
                hit.score += t.weight * placing.normalized / divisor;
            }
        }
        // A point missing from a voting list gets that list's absent value.
        for t in table {
            if t.weight <= 0.0 || t.list.is_empty() || t.normalised.absent == 0.0 {
                continue;
            }
            if hit.placing(t.kind).is_none() {
                hit.score += t.weight * t.normalised.absent / divisor;
            }
        }
        hit.fused = hit.score;
    }
}

/// The order of the hits, a total one: the tier first, then the score,
/// best first; ties by id.
fn by_rank(a: &Fused, b: &Fused) -> Ordering {
    b.tier
        .cmp(&a.tier)
        .then(b.score.total_cmp(&a.score))
        .then(a.id.cmp(&b.id))
}

/// Stage 6: the best `limit` hits in order ([`by_rank`]): picked out first,
/// then only they sorted.
fn rank(mut hits: Vec<Fused>, limit: usize) -> Vec<Fused> {
    if limit == 0 {
        return Vec::new();
    }
    if hits.len() > limit {
        hits.select_nth_unstable_by(limit - 1, by_rank);
        hits.truncate(limit);
    }
    hits.sort_by(by_rank);
    hits
}

/// How far the lowest tier hit's shown score stands above the best of the
/// rest: visible at four decimals, as the CLI prints scores.
pub const TIER_STEP: f64 = 1e-3;

/// The scores shown for `hits` in their order (the tier first, each part
/// best first): every tier hit's score lifted by one amount, so that the
/// lowest of the tier stands [`TIER_STEP`] above the best of the rest — a
/// tier hit's score says it outranks the rest, and no score is below one
/// after it. The fused scores stay in [`Fused::fused`].
pub fn lift_tier(hits: &mut [Fused]) {
    let rest_best = hits
        .iter()
        .filter(|h| !h.tier)
        .map(|h| h.score)
        .reduce(f64::max);
    let tier_low = hits
        .iter()
        .filter(|h| h.tier)
        .map(|h| h.score)
        .reduce(f64::min);
    let (Some(rest_best), Some(tier_low)) = (rest_best, tier_low) else {
        return;
    };
    let lift = rest_best - tier_low + TIER_STEP;
    if lift > 0.0 {
        for hit in hits.iter_mut().filter(|h| h.tier) {
            hit.score += lift;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_scores_never_rise_and_the_tier_stands_above_the_rest() {
        let hit = |n: u128, score: f64, tier: bool| Fused {
            score,
            fused: score,
            tier,
            ..Fused::new(Uuid::from_u128(n))
        };
        // (hits in answer order: fused score, in the tier; the scores shown)
        type Row = (&'static [(f64, bool)], &'static [f64]);
        let table: &[Row] = &[
            // The tier's fused scores below the rest's: lifted by one amount.
            (
                &[(0.13, true), (0.10, true), (1.00, false), (0.73, false)],
                &[1.031, 1.001, 1.00, 0.73],
            ),
            // Already above by more than the step: unchanged.
            (&[(2.0, true), (1.0, false)], &[2.0, 1.0]),
            // Above by less than the step: lifted to the step.
            (&[(1.0004, true), (1.0, false)], &[1.001, 1.0]),
            // No tier, or nothing but the tier: unchanged.
            (&[(0.9, false), (0.5, false)], &[0.9, 0.5]),
            (&[(0.2, true), (0.1, true)], &[0.2, 0.1]),
            (&[], &[]),
        ];
        for (hits, want) in table {
            let mut fused: Vec<Fused> = hits
                .iter()
                .enumerate()
                .map(|(i, &(score, tier))| hit(i as u128, score, tier))
                .collect();
            lift_tier(&mut fused);
            let got: Vec<f64> = fused.iter().map(|h| h.score).collect();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(*want) {
                assert!((g - w).abs() < 1e-9, "{hits:?}: {got:?}, wanted {want:?}");
            }
            assert!(got.windows(2).all(|w| w[0] >= w[1]), "{got:?}");
            for (h, &(score, _)) in fused.iter().zip(*hits) {
                assert_eq!(h.fused, score, "the fused score is kept");
            }
        }
    }

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn lex(entries: &[(u128, f64, bool)]) -> Vec<LexicalEntry> {
        entries
            .iter()
            .map(|&(n, score, verbatim)| LexicalEntry {
                id: id(n),
                score,
                verbatim,
            })
            .collect()
    }

    fn sem(entries: &[(u128, f64)]) -> Vec<(Uuid, f64)> {
        entries.iter().map(|&(n, s)| (id(n), s)).collect()
    }

    fn order(hits: &[Fused]) -> Vec<u128> {
        hits.iter().map(|h| h.id.as_u128()).collect()
    }

    fn run(
        query: &str,
        l: &[(u128, f64, bool)],
        s: &[(u128, f64)],
        settings: &Settings,
    ) -> Vec<Fused> {
        let (l, s) = (lex(l), sem(s));
        fuse(
            &Lists {
                query,
                lexical: &l,
                semantic: &s,
                lexical_reference: 0.0,
                terms: crate::terms(query, crate::Fold::CASE).len(),
            },
            settings,
            100,
        )
    }

    const ADR: Weights = Weights {
        lexical: 1.0,
        semantic: 1.0,
        verbatim: 1.0,
    };

    /// Score fusion at equal weights, floor 0, no tier: the arithmetic of
    /// the tables below, whatever the defaults are.
    fn equal(normalization: Normalization) -> Settings {
        Settings {
            method: Method::Score,
            normalization,
            weights: Weights {
                lexical: 1.0,
                semantic: 1.0,
                verbatim: 0.0,
            },
            semantic_floor: 0.0,
            tier: false,
            lexical_power: 1.0,
            semantic_confidence: 0.0,
            ..Settings::default()
        }
    }

    #[test]
    fn rrf_keeps_the_adrs_arithmetic() {
        let settings = Settings::rrf(60.0, ADR);
        // First in lexical and verbatim: 2/61; first in semantic only: 1/61.
        let hits = run(
            "Meeting 2026-11-11 09:58",
            &[(7, 9.0, true), (1, 3.0, false)],
            &[(2, 0.8)],
            &settings,
        );
        assert_eq!(order(&hits), [7, 2, 1]);
        assert!((hits[0].score - 2.0 / 61.0).abs() < 1e-12);
        assert!((hits[1].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(hits[0].matched_by(), ["lexical", "verbatim"]);
        let p = hits[0].placing(ListKind::Lexical).unwrap();
        assert_eq!((p.rank, p.score), (1, 9.0));
        assert!((p.normalized - 1.0 / 61.0).abs() < 1e-12);
        // A one-term query has no third list.
        let hits = run("meeting", &[(7, 9.0, true)], &[], &settings);
        assert_eq!(hits[0].matched_by(), ["lexical"]);
        // k and weights are the settings'.
        let k2 = Settings::rrf(2.0, ADR);
        let hits = run("a b", &[(1, 1.0, false)], &[(2, 0.5)], &k2);
        assert!((hits[0].score - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_question_is_fused_as_one_where_its_dense_list_is_flat() {
        // Ten cosines from `first` down to `tenth`: confidence
        // (first - tenth) / (first - 0.2).
        let list = |first: f64, tenth: f64| -> Vec<f64> {
            (0..10u32)
                .map(|i| first - (first - tenth) * f64::from(i) / 9.0)
                .collect()
        };
        let minilm = Settings::default();
        let table: &[(&str, Vec<f64>, bool)] = &[
            ("flat: 0.1", list(0.6, 0.56), true),
            ("just below: 0.275", list(0.6, 0.49), true),
            ("just above: 0.325", list(0.6, 0.47), false),
            ("a first that stands out: 0.75", list(0.8, 0.35), false),
            ("the first at the floor", list(0.2, 0.1), true),
            ("one neighbour", list(0.9, 0.9)[..1].to_vec(), true),
            ("no dense list", Vec::new(), true),
        ];
        for (case, semantic, want) in table {
            assert_eq!(as_question(semantic, &minilm), *want, "{case}");
        }
        // Off at 0: the static embedder's default.
        assert_eq!(Settings::for_static().question_confidence, 0.0);
        assert!(!as_question(&list(0.6, 0.59), &Settings::for_static()));
        let bad = Settings {
            question_confidence: 1.5,
            ..minilm
        };
        assert_eq!(bad.check().unwrap_err().key, "question_confidence");
    }

    #[test]
    fn a_confident_question_keeps_its_first_five_and_spreads_the_one_calls_picks() {
        let s = Settings::default();
        let query = "what did we decide about billing?";
        // Own fusion: lexical 1..=10 (candidates), dense 1..=10 in the same
        // order: it ranks 1, 2, 3, ...
        let lexical: Vec<(u128, f64, bool)> =
            (1..=10).map(|n| (n, 20.0 - n as f64, false)).collect();
        let dense: Vec<(u128, f64)> = (1..=10).map(|n| (n, 0.9 - n as f64 / 100.0)).collect();
        // The question strategy's list: 40, 41, 7, 42 (40, 41 only here).
        let asked = lex(&[
            (40, 5.0, false),
            (41, 4.0, false),
            (7, 3.0, false),
            (42, 2.0, false),
        ]);
        let (l, d) = (lex(&lexical), sem(&dense));
        let lists = Lists {
            query,
            lexical: &l,
            semantic: &d,
            lexical_reference: 0.0,
            terms: crate::terms(query, crate::Fold::CASE).len(),
        };
        let own = fuse(&lists, &s, 100);
        assert_eq!(order(&own)[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        // The one call: 1 (dense 1 + nothing), 40 ... ranked by RRF 1:1.
        let one_call = fuse(
            &Lists {
                lexical: &asked,
                lexical_reference: 0.0,
                ..lists
            },
            &s.for_questions(),
            8,
        );
        let spread = fuse_spread(&lists, &asked, &s, 100);
        let ids = order(&spread);
        assert_eq!(ids[..QUESTION_KEEP], [1, 2, 3, 4, 5]);
        // Then the one call's best not yet in, in its order, up to eight.
        let picks: Vec<u128> = order(&one_call)
            .into_iter()
            .filter(|id| ![1, 2, 3, 4, 5].contains(id))
            .take(QUESTION_SPREAD - QUESTION_KEEP)
            .collect();
        assert_eq!(ids[QUESTION_KEEP..QUESTION_SPREAD], picks[..]);
        // Then the rest of its own fusion, each hit once, nothing lost.
        let mut all = ids.clone();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), ids.len());
        assert_eq!(ids.len(), own.len() + 2, "40 and 41 or 42 join: {ids:?}");
        // Scores never rise; a hit its own fusion holds keeps its explain.
        assert!(spread.windows(2).all(|w| w[0].score >= w[1].score));
        for hit in &spread {
            if let Some(o) = own.iter().find(|o| o.id == hit.id) {
                assert_eq!(hit.placings, o.placings);
            }
        }
        assert_eq!(fuse_spread(&lists, &asked, &s, 3).len(), 3);
        // Every tier member is kept first, more than five too.
        let verbatim: Vec<(u128, f64, bool)> =
            (1..=10).map(|n| (n, 20.0 - n as f64, n >= 4)).collect();
        let l = lex(&verbatim);
        let shaped = "what happened on 2026-11-11?";
        let tiered = Lists {
            query: shaped,
            lexical: &l,
            terms: crate::terms(shaped, crate::Fold::CASE).len(),
            ..lists
        };
        let spread = fuse_spread(&tiered, &asked, &s, 100);
        assert!(spread[..7].iter().all(|h| h.tier), "{:?}", order(&spread));
        let first_pick = order(&one_call)
            .into_iter()
            .find(|id| !(4..=10).contains(id));
        assert_eq!(Some(order(&spread)[7]), first_pick);
        assert!(!spread[7].tier);
    }

    #[test]
    fn questions_fuse_as_qdrants_one_call_with_the_tier_kept() {
        for base in [Settings::default(), Settings::for_static()] {
            let q = base.for_questions();
            assert_eq!(q.method, Method::Rrf);
            assert_eq!(q.rrf_k, base.rrf_k);
            assert_eq!(
                (q.weights.lexical, q.weights.semantic, q.weights.verbatim),
                (1.0, 1.0, 0.0)
            );
            assert_eq!((q.tier, q.tier_max), (base.tier, base.tier_max));
            assert_eq!(q.check(), Ok(()));
        }
        let q = Settings::default().for_questions();
        // 1/61 + 1/63 for the row in both lists beats either list's first.
        let hits = run(
            "what did we decide about billing?",
            &[(1, 9.0, false), (2, 8.0, false), (3, 7.0, false)],
            &[(4, 0.9), (5, 0.8), (3, 0.7)],
            &q,
        );
        assert_eq!(order(&hits), [3, 1, 4, 2, 5]);
        assert!((hits[0].score - (1.0 / 63.0 + 1.0 / 63.0)).abs() < 1e-12);
        // A rare verbatim holder still comes first.
        let hits = run(
            "what did we decide about billing?",
            &[(1, 9.0, false), (2, 8.0, true)],
            &[(1, 0.9)],
            &q,
        );
        assert_eq!(order(&hits), [2, 1]);
        assert!(hits[0].tier);
        let off = Settings {
            tier: false,
            ..Settings::default()
        };
        assert!(!off.for_questions().tier);
    }

    #[test]
    fn rows_near_the_top_of_two_lists_beat_a_row_first_in_one_under_rrf() {
        // The ADR: a row first in one list only (1/61) loses to any row within
        // about 60 places of the top of both lists: 2/(60+r) > 1/61 iff r < 62.
        let table: &[(u128, bool)] =
            &[(1, true), (30, true), (61, true), (62, false), (100, false)];
        for &(r, beats) in table {
            let mut lexical: Vec<(u128, f64, bool)> =
                (1..r).map(|n| (n + 10_000, 1.0, false)).collect();
            lexical.push((1000, 1.0, false));
            let mut semantic = vec![(1, 1.0)];
            semantic.extend((1..r - 1).map(|n| (n + 20_000, 1.0)));
            semantic.push((1000, 1.0));
            let hits = run("x y", &lexical, &semantic, &Settings::rrf(60.0, ADR));
            let pos = |x: u128| order(&hits).iter().position(|&h| h == x).unwrap();
            assert_eq!(pos(1000) < pos(1), beats, "both lists at rank {r}");
        }
    }

    #[test]
    fn each_normalisation_on_a_table() {
        // (normalisation, raw scores best first, floor, normalised values, absent)
        type Row<'a> = (Normalization, &'a [f64], f64, &'a [f64], f64);
        let table: &[Row] = &[
            (
                Normalization::FixedFloor,
                &[8.0, 4.0, 2.0],
                0.0,
                &[1.0, 0.5, 0.25],
                0.0,
            ),
            (
                Normalization::FixedFloor,
                &[0.8, 0.5],
                0.2,
                &[1.0, 0.5],
                0.0,
            ),
            // Below the floor clamps to 0; a top at or below the floor gives 0.
            (
                Normalization::FixedFloor,
                &[0.8, 0.1],
                0.2,
                &[1.0, 0.0],
                0.0,
            ),
            (
                Normalization::FixedFloor,
                &[0.1, 0.05],
                0.2,
                &[0.0, 0.0],
                0.0,
            ),
            (Normalization::FixedFloor, &[0.0], 0.0, &[0.0], 0.0),
            // Equal scores: all at the top.
            (
                Normalization::FixedFloor,
                &[3.0, 3.0],
                0.0,
                &[1.0, 1.0],
                0.0,
            ),
            (
                Normalization::MinMax,
                &[8.0, 4.0, 2.0],
                0.0,
                &[1.0, 1.0 / 3.0, 0.0],
                0.0,
            ),
            (Normalization::MinMax, &[5.0], 0.0, &[1.0], 0.0),
            (Normalization::MinMax, &[2.0, 2.0], 0.0, &[1.0, 1.0], 0.0),
            (Normalization::ZScore, &[3.0, 1.0], 0.0, &[1.0, -1.0], -1.0),
            (Normalization::ZScore, &[4.0, 4.0], 0.0, &[1.0, 1.0], 0.0),
            (Normalization::ZScore, &[5.0], 0.0, &[1.0], 0.0),
            (Normalization::ZScore, &[], 0.0, &[], 0.0),
        ];
        for (how, scores, floor, want, absent) in table {
            let got = normalise(scores, *how, *floor, 0.0);
            assert_eq!(got.values.len(), want.len(), "{how:?} {scores:?}");
            for (g, w) in got.values.iter().zip(*want) {
                assert!(
                    (g - w).abs() < 1e-12,
                    "{how:?} {scores:?}: {:?}",
                    got.values
                );
            }
            assert!((got.absent - absent).abs() < 1e-12, "{how:?} {scores:?}");
        }
    }

    #[test]
    fn absolute_normalisation_keeps_each_channels_own_scale() {
        // BM25 over the query's full-match score, above 1 where it scores
        // more (its order kept); cosine from the floor to 1.
        let got = normalise(&[6.0, 3.0, 12.0, 16.0], Normalization::Absolute, 0.0, 8.0);
        assert_eq!(got.values, [0.75, 0.375, 1.5, 2.0]);
        let got = normalise(&[0.6, 0.2, 0.1], Normalization::Absolute, 0.2, 1.0);
        assert!((got.values[0] - 0.5).abs() < 1e-12);
        assert_eq!(&got.values[1..], [0.0, 0.0]);
        // A weak lexical top stays weak, and a strong semantic first wins.
        let settings = Settings {
            semantic_floor: 0.2,
            ..equal(Normalization::Absolute)
        };
        let (l, s) = (lex(&[(1, 2.0, false)]), sem(&[(2, 0.7), (1, 0.3)]));
        let lists = Lists {
            query: "how do we deploy",
            lexical: &l,
            semantic: &s,
            lexical_reference: 10.0,
            terms: crate::terms("how do we deploy", crate::Fold::CASE).len(),
        };
        let hits = fuse(&lists, &settings, 10);
        assert_eq!(order(&hits), [2, 1]);
        // ((0.7 − 0.2) / 0.8) / 2 and (2 / 10 + (0.3 − 0.2) / 0.8) / 2.
        assert!((hits[0].score - 0.3125).abs() < 1e-12, "{hits:?}");
        assert!((hits[1].score - 0.1625).abs() < 1e-12, "{hits:?}");
    }

    #[test]
    fn the_first_hits_are_the_whole_ranking_cut() {
        // Ties on score (equal lexical scores, no semantic) and a tier
        // (verbatim holders of two terms) among 40 lexical and 30 semantic
        // entries; each method.
        let l: Vec<(u128, f64, bool)> = (0..40)
            .map(|n| (n, f64::from((n % 7) as u8), n % 5 == 0))
            .collect();
        let s: Vec<(u128, f64)> = (20..50).map(|n| (n, 0.9 - n as f64 / 100.0)).collect();
        let (l, s) = (lex(&l), sem(&s));
        for method in [Method::Score, Method::Rrf, Method::Dbsf] {
            let settings = Settings {
                method,
                ..Settings::default()
            };
            let lists = Lists {
                query: "red deploy",
                lexical: &l,
                semantic: &s,
                lexical_reference: 6.0,
                terms: 2,
            };
            let all = fuse(&lists, &settings, 1000);
            assert_eq!(all.len(), 50);
            for limit in [0, 1, 3, 8, 49, 50, 60] {
                let first = fuse(&lists, &settings, limit);
                assert_eq!(
                    order(&first),
                    order(&all[..limit.min(all.len())]),
                    "{method:?}, limit {limit}"
                );
                assert_eq!(first, all[..first.len()], "{method:?}, limit {limit}");
            }
        }
    }

    #[test]
    fn the_lexical_power_shrinks_partial_matches_and_keeps_full_ones() {
        // (power, lexical scores over a full-match score of 10, the lexical
        // values fusion adds, the absent value) under `absolute`.
        type Row<'a> = (f64, &'a [f64], &'a [f64]);
        let table: &[Row] = &[
            (1.0, &[10.0, 5.0, 2.0], &[1.0, 0.5, 0.2]),
            (2.0, &[10.0, 5.0, 2.0], &[1.0, 0.25, 0.04]),
            (3.0, &[10.0, 5.0], &[1.0, 0.125]),
            // Above the full-match score stays above 1, order kept.
            (2.0, &[20.0, 10.0], &[4.0, 1.0]),
            // Equal scores stay equal; one entry; nothing.
            (2.0, &[5.0, 5.0], &[0.25, 0.25]),
            (2.0, &[5.0], &[0.25]),
            (2.0, &[], &[]),
        ];
        for &(power, scores, want) in table {
            let settings = Settings {
                lexical_power: power,
                normalization: Normalization::Absolute,
                ..equal(Normalization::Absolute)
            };
            let l: Vec<(u128, f64, bool)> = scores
                .iter()
                .enumerate()
                .map(|(i, &s)| (i as u128 + 1, s, false))
                .collect();
            let l = lex(&l);
            let lists = Lists {
                query: "why did the app crash",
                lexical: &l,
                semantic: &[],
                lexical_reference: 10.0,
                terms: crate::terms("why did the app crash", crate::Fold::CASE).len(),
            };
            let hits = fuse(&lists, &settings, 10);
            let got: Vec<f64> = hits
                .iter()
                .map(|h| h.placing(ListKind::Lexical).unwrap().normalized)
                .collect();
            assert_eq!(got.len(), want.len(), "power {power} {scores:?}");
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-12, "power {power} {scores:?}: {got:?}");
            }
        }
        // z-scores keep their sign: -1 stays the lowest, and is the absent value.
        let settings = Settings {
            lexical_power: 2.0,
            ..equal(Normalization::ZScore)
        };
        let hits = run(
            "a b",
            &[(1, 3.0, false), (2, 1.0, false)],
            &[(3, 0.5), (1, 0.4)],
            &settings,
        );
        let p = |id: u128| {
            hits.iter()
                .find(|h| h.id.as_u128() == id)
                .and_then(|h| h.placing(ListKind::Lexical))
                .map(|p| p.normalized)
        };
        assert_eq!((p(1), p(2), p(3)), (Some(1.0), Some(-1.0), None));
        // Point 3 (absent from lexical, −1 squared with its sign) scores
        // (−1 + 1) / 2, point 2 (−1, absent from semantic: −1) scores −1.
        let score = |id: u128| hits.iter().find(|h| h.id.as_u128() == id).unwrap().score;
        assert!(
            (score(3) - 0.0).abs() < 1e-12 && (score(2) + 1.0).abs() < 1e-12,
            "{hits:?}"
        );
    }

    /// The sample's q33 at MiniLM's default: memories matching a few common
    /// words of a question (a fifth of its full-match score) no longer pass
    /// the memory that answers it, first by meaning and absent from lexical.
    #[test]
    fn common_words_of_a_question_do_not_pass_its_answer() {
        let l = lex(&[(1, 1.875, false), (2, 1.382, false)]);
        let s = sem(&[(1, 0.4749), (9, 0.4602), (2, 0.4408)]);
        let lists = Lists {
            query: "why did the iPhone app crash when opening it last month?",
            lexical: &l,
            semantic: &s,
            lexical_reference: 10.0,
            terms: crate::terms(
                "why did the iPhone app crash when opening it last month?",
                crate::Fold::CASE,
            )
            .len(),
        };
        // The lexical power alone (this short list's confidence is not the
        // real one's: semantic trust off).
        let squared = Settings {
            semantic_confidence: 0.0,
            ..Settings::default()
        };
        let linear = Settings {
            lexical_power: 1.0,
            ..squared
        };
        assert_eq!(order(&fuse(&lists, &linear, 10)), [1, 2, 9]);
        assert_eq!(order(&fuse(&lists, &squared, 10)), [1, 9, 2]);
    }

    /// Semantic trust: the semantic weight times (confidence / 0.5)^γ, the
    /// lexical weight as configured.
    #[test]
    fn semantic_trust_follows_the_dense_lists_confidence() {
        // (semantic scores best first, γ, the semantic weight it leaves of 2)
        let table: &[(&[f64], f64, f64)] = &[
            // First 0.7, tenth 0.45 over floor 0.2: confidence 0.5, the pivot.
            (
                &[0.7, 0.6, 0.6, 0.55, 0.5, 0.5, 0.5, 0.5, 0.5, 0.45],
                1.5,
                2.0,
            ),
            // Confidence 1 (tenth at the floor): 2 · 2^1.5.
            (
                &[0.7, 0.6, 0.5, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.2],
                1.5,
                2.0 * 2f64.powf(1.5),
            ),
            // Flat (chat messages all about as near): confidence 0.125.
            (
                &[0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.55],
                1.5,
                2.0 * 0.25f64.powf(1.5),
            ),
            // One neighbour: no confidence, no semantic vote.
            (&[0.9], 1.5, 0.0),
            // Off: the weight as given.
            (
                &[0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.55],
                0.0,
                2.0,
            ),
        ];
        for (scores, gamma, want) in table {
            let semantic: Vec<(Uuid, f64)> = scores
                .iter()
                .enumerate()
                .map(|(i, s)| (id(i as u128 + 1), *s))
                .collect();
            let lexical = lex(&[(1, 3.0, false)]);
            let lists = Lists {
                query: "what did kate cook",
                lexical: &lexical,
                semantic: &semantic,
                lexical_reference: 6.0,
                terms: crate::terms("what did kate cook", crate::Fold::CASE).len(),
            };
            let settings = Settings {
                semantic_confidence: *gamma,
                ..Settings::default()
            };
            let (l, s) = channel_weights(&lists, &settings);
            assert!((l - 1.0).abs() < 1e-12, "{scores:?}: lexical {l}");
            assert!(
                (s - want).abs() < 1e-9,
                "{scores:?} γ {gamma}: semantic {s}, want {want}"
            );
        }
        // RRF keeps the weights it is given (the ADR's arithmetic).
        let flat: Vec<(Uuid, f64)> = (1..=10).map(|i| (id(i), 0.6)).collect();
        let rrf = Settings {
            method: Method::Rrf,
            ..Settings::default()
        };
        let lists = Lists {
            query: "what did kate cook",
            lexical: &[],
            semantic: &flat,
            lexical_reference: 0.0,
            terms: crate::terms("what did kate cook", crate::Fold::CASE).len(),
        };
        assert_eq!(channel_weights(&lists, &rrf), (1.0, 2.0));
    }

    #[test]
    fn dbsf_scales_by_three_sigmas() {
        let got = dbsf(&[3.0, 1.0]);
        // mean 2, σ 1: 3 ↦ (3 − −1) / 6 = 2/3, 1 ↦ 1/3.
        assert!((got.values[0] - 2.0 / 3.0).abs() < 1e-12);
        assert!((got.values[1] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(dbsf(&[5.0]).values, [0.5]);
        assert_eq!(dbsf(&[2.0, 2.0]).values, [0.5, 0.5]);
        assert!(dbsf(&[]).values.is_empty());
    }

    #[test]
    fn score_fusion_is_a_convex_combination() {
        let settings = equal(Normalization::FixedFloor);
        // Lexical: 1 → 1.0, 2 → 0.5. Semantic (floor 0): 2 → 1.0, 3 → 0.9.
        let hits = run(
            "deploy billing",
            &[(1, 10.0, false), (2, 5.0, false)],
            &[(2, 0.5), (3, 0.45)],
            &settings,
        );
        assert_eq!(order(&hits), [2, 1, 3]);
        assert!((hits[0].score - 0.75).abs() < 1e-12, "{hits:?}");
        assert!((hits[1].score - 0.5).abs() < 1e-12);
        assert!((hits[2].score - 0.45).abs() < 1e-12);
        let p = hits[0].placing(ListKind::Lexical).unwrap();
        assert_eq!((p.rank, p.score, p.normalized), (2, 5.0, 0.5));
        // One list only: its normalised order, its weight alone divides.
        let hits = run("deploy", &[], &[(3, 0.4), (4, 0.2)], &settings);
        assert_eq!(order(&hits), [3, 4]);
        assert!((hits[0].score - 1.0).abs() < 1e-12);
        // Empty lists: nothing.
        assert!(run("deploy", &[], &[], &settings).is_empty());
        // Equal fused scores break by id.
        let hits = run("x y", &[(9, 1.0, false)], &[(4, 0.7)], &settings);
        assert_eq!(order(&hits), [4, 9]);
    }

    #[test]
    fn a_first_in_one_channel_beats_the_middle_of_both() {
        // The RRF k = 60 failure the fusion redesign fixes: rows in the middle
        // of both lists beat the semantic channel's clear first under RRF
        // (2/(60 + r) > 1/61 for r < 61), not under score fusion, where BM25
        // decays and the semantic first stands out.
        let lexical: Vec<(u128, f64, bool)> = (0..30)
            .map(|i| (100 + i, 10.0 / (i as f64 + 1.0), false))
            .collect();
        let mut semantic: Vec<(u128, f64)> = vec![(1, 0.9)];
        semantic.extend((0..30).map(|i| (100 + i, 0.45 - 0.005 * i as f64)));
        let pos = |hits: &[Fused], n: u128| order(hits).iter().position(|&x| x == n).unwrap();
        let rrf = run(
            "how billing retries",
            &lexical,
            &semantic,
            &Settings::rrf(60.0, ADR),
        );
        assert!(pos(&rrf, 1) > 10, "{:?}", order(&rrf));
        let score = run(
            "how billing retries",
            &lexical,
            &semantic,
            &equal(Normalization::FixedFloor),
        );
        // Only the row first in lexical and second in semantic stays above it.
        assert_eq!(pos(&score, 1), 1, "{:?}", order(&score));
        // trine's default (BM25 over its full-match score, cosine from 0.2,
        // the semantic channel weighted 2 and trusted more for a first that
        // stands out as this one does) puts it first.
        let default = run(
            "how billing retries",
            &lexical,
            &semantic,
            &Settings::default(),
        );
        assert_eq!(pos(&default, 1), 0, "{:?}", order(&default));
    }

    #[test]
    fn the_tier_rule() {
        let s = Settings::default();
        let terms = |query: &str| crate::terms(query, crate::Fold::CASE).len();
        // (query, verbatim candidates, reason)
        let table: &[(&str, usize, Option<TierReason>)] = &[
            ("Meeting 2026-11-11 09:58", 1, Some(TierReason::Shaped)),
            ("Meeting 2026-11-11 09:58", 40, Some(TierReason::Shaped)),
            ("CVE-2023-4863 fix", 2, Some(TierReason::Shaped)),
            (
                "billing::payment::retry_policy now",
                9,
                Some(TierReason::Shaped),
            ),
            ("libc6 upgrade", 5, Some(TierReason::Shaped)),
            ("the quick brown fox", 1, Some(TierReason::Rare)),
            ("the quick brown fox", 3, Some(TierReason::Rare)),
            ("error handling", 4, None),
            ("error handling", 200, None),
            ("error handling", 0, None),
            ("meeting", 1, None),
            ("the meeting", 1, None),
            ("943a48b", 1, Some(TierReason::Identifier)),
            ("0b85ed4a", 3, Some(TierReason::Identifier)),
            ("0b85ed4a", 4, None),
            ("ipv6", 40, None),
            ("2026", 1, None),
        ];
        for (query, verbatim, want) in table {
            assert_eq!(
                tier_rule(query, terms(query), *verbatim, &s),
                *want,
                "{query} with {verbatim}"
            );
        }
        let off = Settings { tier: false, ..s };
        let meeting = "Meeting 2026-11-11 09:58";
        assert_eq!(tier_rule(meeting, terms(meeting), 1, &off), None);
        let shapes: &[(&str, bool)] = &[
            ("Meeting 2026-11-11 09:58", true),
            ("OPS-1432", true),
            ("v2.14.3", true),
            ("foo_bar.qux", true),
            ("python3", true),
            ("how do we deploy billing at night?", false),
            ("error handling", false),
            ("ședință de lucru", false),
        ];
        for (query, want) in shapes {
            assert_eq!(shaped(query), *want, "{query}");
        }
    }

    #[test]
    fn questions_are_short_and_asked() {
        let words = |n: usize| format!("what {}?", vec!["word"; n - 1].join(" "));
        let (at_most, over) = (words(QUESTION_MAX_WORDS), words(QUESTION_MAX_WORDS + 1));
        assert_eq!(at_most.split_whitespace().count(), QUESTION_MAX_WORDS);
        let cases: &[(&str, bool)] = &[
            ("What are Kate's hobbies?", true),
            ("When did Kate start skiing", true),
            ("how do we deploy billing at night", true),
            ("WHERE is the backup kept", true),
            ("Does Kate work full-time or part-time?", true),
            ("Quand la réunion a-t-elle eu lieu ?", true),
            ("Wann war das Treffen？", true),
            ("  who?  ", true),
            ("¿Dónde está la copia?", true),
            (&at_most, true),
            (&over, false),
            ("Meeting 2026-11-11 09:58", false),
            ("library for parsing XML documents", false),
            ("whatever happened to the backups", false),
            ("somehow the build broke", false),
            ("", false),
            ("?", true),
            ("   ", false),
        ];
        for (query, want) in cases {
            assert_eq!(is_question(query), *want, "{query:?}");
        }
    }

    #[test]
    fn the_tier_puts_exact_matches_first_in_fused_order() {
        let s = Settings::default();
        // The title's transcript is lexical #3 and nowhere in the semantic list.
        let hits = run(
            "Meeting 2026-11-11 09:58",
            &[(1, 9.0, false), (2, 8.0, false), (3, 2.0, true)],
            &[(1, 0.9), (2, 0.8)],
            &s,
        );
        assert_eq!(order(&hits), [3, 1, 2]);
        assert!(hits[0].tier && !hits[1].tier);
        assert_eq!(hits[0].matched_by(), ["lexical", "verbatim"]);
        // A rare single identifier forms the tier, though no semantic list holds it.
        let hits = run("943a48b", &[(3, 2.0, true)], &[(1, 0.9), (2, 0.8)], &s);
        assert_eq!(order(&hits)[0], 3);
        assert!(hits[0].tier);
        // A single plain term forms none, and a single term never votes twice.
        let hits = run("lisbon", &[(3, 2.0, true)], &[(1, 0.9), (2, 0.8)], &s);
        assert!(hits.iter().all(|h| !h.tier));
        let rrf = Settings {
            method: Method::Rrf,
            weights: Weights {
                lexical: 1.0,
                semantic: 1.0,
                verbatim: 2.0,
            },
            semantic_confidence: 0.0,
            ..s
        };
        let hits = run("lisbon", &[(3, 2.0, true)], &[(3, 0.9)], &rrf);
        assert!(
            (hits[0].score - 2.0 / 61.0).abs() < 1e-12,
            "{}",
            hits[0].score
        );
        // A common phrase forms no tier: the fused order stands.
        let common: Vec<(u128, f64, bool)> = (1..=6).map(|i| (i, 10.0 - i as f64, i > 1)).collect();
        let hits = run("error handling", &common, &[(1, 0.9)], &s);
        assert_eq!(order(&hits)[0], 1);
        assert!(hits.iter().all(|h| !h.tier));
        // A rare phrase does.
        let rare = [(1, 9.0, false), (2, 1.0, true)];
        let hits = run("error handling", &rare, &[(1, 0.9)], &s);
        assert_eq!(order(&hits), [2, 1]);
    }

    #[test]
    fn a_lone_lexical_hit_counts_under_z_scores() {
        // The static default (z-scores, adaptive weights): one memory holds
        // the query's rare word and no other holds any; ten dense
        // neighbours know nothing of it, the lone hit not among them.
        let dense: Vec<(u128, f64)> = (1..=10).map(|i| (i, 0.5 - 0.01 * i as f64)).collect();
        let hits = run(
            "lunch lisbon offsite",
            &[(99, 12.0, false)],
            &dense,
            &Settings::for_static(),
        );
        let at = order(&hits).iter().position(|id| *id == 99);
        assert!(at.is_some_and(|at| at < 8), "{:?}", order(&hits));
    }

    #[test]
    fn per_query_weighting_trusts_the_list_whose_top_stands_out() {
        // Lexical: flat; semantic: a clear first.
        assert_eq!(confidence(&[], 0.0), 0.0);
        assert_eq!(confidence(&[1.0], 0.0), 0.0);
        assert!((confidence(&[1.0, 0.5], 0.0) - 0.5).abs() < 1e-12);
        // The lexical list's: one hit above BM25's floor stands out entirely.
        for (scores, want) in [
            (&[][..], 0.0),
            (&[7.5][..], 1.0),
            (&[0.0][..], 0.0),
            (&[1.0, 0.5][..], 0.5),
        ] {
            assert!(
                (lexical_confidence(scores) - want).abs() < 1e-12,
                "{scores:?}"
            );
        }
        let flat: Vec<(u128, f64, bool)> = (1..=10)
            .map(|i| (i, 5.0 - 0.01 * i as f64, false))
            .collect();
        let semantic = [(20, 0.9), (21, 0.3), (1, 0.29)];
        let fixed = Settings {
            weights: Weights {
                lexical: 2.0,
                semantic: 1.0,
                verbatim: 0.0,
            },
            ..Settings::default()
        };
        let hits = run("x y z", &flat, &semantic, &fixed);
        assert_eq!(order(&hits)[0], 1, "{:?}", order(&hits));
        let adaptive = Settings {
            adaptive: 1.0,
            ..fixed
        };
        let hits = run("x y z", &flat, &semantic, &adaptive);
        assert_eq!(order(&hits)[0], 20, "{:?}", order(&hits));
    }

    #[test]
    fn duplicates_count_at_their_first_place() {
        let hits = run(
            "x",
            &[(1, 3.0, false), (1, 2.0, false), (2, 1.0, false)],
            &[],
            &Settings::default(),
        );
        assert_eq!(order(&hits), [1, 2]);
        assert_eq!(hits[1].placing(ListKind::Lexical).unwrap().rank, 2);
    }

    #[test]
    fn names_parse_and_refuse() {
        for m in [Method::Rrf, Method::Score, Method::Dbsf] {
            assert_eq!(Method::parse(m.name()), Ok(m));
        }
        for n in [
            Normalization::FixedFloor,
            Normalization::MinMax,
            Normalization::ZScore,
        ] {
            assert_eq!(Normalization::parse(n.name()), Ok(n));
        }
        assert!(
            Method::parse("borda")
                .unwrap_err()
                .contains("rrf, score or dbsf")
        );
        assert!(Normalization::parse("l2").unwrap_err().contains("min_max"));
    }

    fn ids(list: &[(u128, f64)]) -> Vec<(Uuid, f64)> {
        list.iter().map(|&(n, s)| (id(n), s)).collect()
    }

    fn close(got: &[f64], want: &[f64]) -> bool {
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12)
    }

    #[test]
    fn resolve_dedups_the_lists_and_decides_the_verbatim_list_and_the_tier() {
        // (query, lexical, semantic; the lexical, semantic and verbatim lists,
        // whether the verbatim list votes, whether it forms the tier)
        type Row<'a> = (
            &'a str,
            &'a [(u128, f64, bool)],
            &'a [(u128, f64)],
            (
                &'a [(u128, f64)],
                &'a [(u128, f64)],
                &'a [(u128, f64)],
                bool,
                bool,
            ),
        );
        let table: &[Row] = &[
            // A point counts at its first place; it holds the query verbatim
            // if any of its entries does. Two holders of two terms: rare.
            (
                "deploy billing",
                &[(1, 3.0, false), (1, 2.0, true), (2, 1.0, true)],
                &[(3, 0.9), (3, 0.8), (1, 0.5)],
                (
                    &[(1, 3.0), (2, 1.0)],
                    &[(3, 0.9), (1, 0.5)],
                    &[(1, 3.0), (2, 1.0)],
                    true,
                    true,
                ),
            ),
            // A common phrase: the list votes, no tier.
            (
                "error handling",
                &[
                    (1, 4.0, true),
                    (2, 3.0, true),
                    (3, 2.0, false),
                    (4, 1.0, true),
                    (5, 0.5, true),
                ],
                &[],
                (
                    &[(1, 4.0), (2, 3.0), (3, 2.0), (4, 1.0), (5, 0.5)],
                    &[],
                    &[(1, 4.0), (2, 3.0), (4, 1.0), (5, 0.5)],
                    true,
                    false,
                ),
            ),
            // A shaped query: the tier however many hold it.
            (
                "Meeting 2026-11-11 09:58",
                &[
                    (1, 4.0, true),
                    (2, 3.0, true),
                    (3, 2.0, true),
                    (4, 1.0, true),
                ],
                &[(9, 0.7)],
                (
                    &[(1, 4.0), (2, 3.0), (3, 2.0), (4, 1.0)],
                    &[(9, 0.7)],
                    &[(1, 4.0), (2, 3.0), (3, 2.0), (4, 1.0)],
                    true,
                    true,
                ),
            ),
            // A single plain term: no verbatim list.
            (
                "lisbon",
                &[(3, 2.0, true)],
                &[(1, 0.9)],
                (&[(3, 2.0)], &[(1, 0.9)], &[], false, false),
            ),
            // A rare identifier: the tier, without a vote.
            (
                "943a48b",
                &[(3, 2.0, true), (4, 1.0, false)],
                &[],
                (&[(3, 2.0), (4, 1.0)], &[], &[(3, 2.0)], false, true),
            ),
            // A common one: neither.
            (
                "0b85ed4a",
                &[
                    (1, 4.0, true),
                    (2, 3.0, true),
                    (3, 2.0, true),
                    (4, 1.0, true),
                ],
                &[],
                (
                    &[(1, 4.0), (2, 3.0), (3, 2.0), (4, 1.0)],
                    &[],
                    &[],
                    false,
                    false,
                ),
            ),
            // Nothing held verbatim; nothing at all.
            (
                "deploy billing",
                &[(1, 3.0, false)],
                &[(1, 0.9)],
                (&[(1, 3.0)], &[(1, 0.9)], &[], true, false),
            ),
            ("deploy billing", &[], &[], (&[], &[], &[], true, false)),
        ];
        for (query, l, s, (lexical, semantic, verbatim, votes, tier)) in table {
            let (l, s) = (lex(l), sem(s));
            let lists = Lists {
                query,
                lexical: &l,
                semantic: &s,
                lexical_reference: 0.0,
                terms: crate::terms(query, crate::Fold::CASE).len(),
            };
            let want = Resolved {
                lexical: ids(lexical),
                semantic: ids(semantic),
                verbatim: ids(verbatim),
                votes: *votes,
                tier: *tier,
            };
            assert_eq!(resolve(&lists, &Settings::default()), want, "{query}");
        }
    }

    #[test]
    fn weigh_gives_each_list_its_weight_for_the_query() {
        let given = Settings {
            weights: ADR,
            adaptive: 0.0,
            semantic_confidence: 0.0,
            ..Settings::default()
        };
        let minus = Settings {
            weights: Weights {
                verbatim: -1.0,
                ..ADR
            },
            ..given
        };
        // Lexical confidence 0.5; semantic (floor 0.2) 0.5, and 1.
        let (half, half_cos, sure_cos) = (
            [(1, 1.0), (2, 0.5)],
            [(3, 0.6), (4, 0.4)],
            [(3, 0.6), (4, 0.2)],
        );
        // (settings, lexical, semantic, whether the verbatim list votes;
        // the lexical, semantic and verbatim weights)
        type Row<'a> = (
            Settings,
            &'a [(u128, f64)],
            &'a [(u128, f64)],
            bool,
            [f64; 3],
        );
        let table: &[Row] = &[
            (given, &half, &half_cos, true, [1.0, 1.0, 1.0]),
            // A single term never votes twice.
            (given, &half, &half_cos, false, [1.0, 1.0, 0.0]),
            // A weight below 0 is no vote.
            (minus, &half, &half_cos, true, [1.0, 1.0, 0.0]),
            // Per-query weighting: each times (0.05 + confidence).
            (
                Settings::for_static(),
                &half,
                &half_cos,
                true,
                [0.55, 1.1, 0.0],
            ),
            // Semantic trust: the semantic weight times (confidence / 0.5)^1.5.
            (Settings::default(), &half, &half_cos, true, [1.0, 2.0, 0.0]),
            (
                Settings::default(),
                &half,
                &sure_cos,
                true,
                [1.0, 2.0 * 2f64.powf(1.5), 0.0],
            ),
        ];
        for (settings, l, s, votes, want) in table {
            let l: Vec<(u128, f64, bool)> = l.iter().map(|&(n, s)| (n, s, false)).collect();
            let (l, s) = (lex(&l), sem(s));
            let lists = Lists {
                query: "x y",
                lexical: &l,
                semantic: &s,
                lexical_reference: 0.0,
                terms: 2,
            };
            let w = weigh(&lists, settings, *votes);
            let got = [w.lexical, w.semantic, w.verbatim];
            assert!(
                close(&got, want),
                "{settings:?} {votes}: {got:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn scale_gives_each_lists_values_before_its_weight() {
        let k61 = [1.0 / 61.0, 1.0 / 62.0, 1.0 / 63.0];
        // (method, normalisation, list, lexical power, lexical reference,
        // raw scores; values, absent value)
        type Row<'a> = (
            Method,
            Normalization,
            ListKind,
            f64,
            f64,
            &'a [f64],
            &'a [f64],
            f64,
        );
        use ListKind::{Lexical, Semantic, Verbatim};
        use Method::{Dbsf, Rrf, Score};
        use Normalization::{Absolute, FixedFloor, ZScore};
        let table: &[Row] = &[
            // RRF: 1 / (k + rank), whatever the scores and the list.
            (
                Rrf,
                Absolute,
                Lexical,
                2.0,
                0.0,
                &[9.0, 3.0, 1.0],
                &k61,
                0.0,
            ),
            (
                Rrf,
                Absolute,
                Semantic,
                1.0,
                0.0,
                &[0.1, 0.1],
                &k61[..2],
                0.0,
            ),
            (Rrf, Absolute, Verbatim, 1.0, 0.0, &[9.0], &k61[..1], 0.0),
            // The verbatim list is a flag under score fusion and DBSF.
            (
                Score,
                Absolute,
                Verbatim,
                2.0,
                10.0,
                &[9.0, 3.0],
                &[1.0, 1.0],
                0.0,
            ),
            (
                Dbsf,
                Absolute,
                Verbatim,
                1.0,
                0.0,
                &[9.0, 3.0],
                &[1.0, 1.0],
                0.0,
            ),
            // DBSF: mean − 3σ to mean + 3σ.
            (
                Dbsf,
                Absolute,
                Semantic,
                1.0,
                0.0,
                &[3.0, 1.0],
                &[2.0 / 3.0, 1.0 / 3.0],
                0.0,
            ),
            // Absolute: the lexical reference, the list's top when 0; cosine
            // from the floor (0.2) to 1; the power on the lexical list only.
            (
                Score,
                Absolute,
                Lexical,
                2.0,
                10.0,
                &[10.0, 5.0],
                &[1.0, 0.25],
                0.0,
            ),
            (
                Score,
                Absolute,
                Lexical,
                1.0,
                0.0,
                &[8.0, 4.0],
                &[1.0, 0.5],
                0.0,
            ),
            (
                Score,
                Absolute,
                Semantic,
                2.0,
                10.0,
                &[0.6, 0.2],
                &[0.5, 0.0],
                0.0,
            ),
            // Fixed floor: the list's top whatever the reference.
            (
                Score,
                FixedFloor,
                Lexical,
                1.0,
                10.0,
                &[8.0, 4.0],
                &[1.0, 0.5],
                0.0,
            ),
            // z-scores keep their sign under the power, the absent value too.
            (
                Score,
                ZScore,
                Lexical,
                2.0,
                0.0,
                &[3.0, 1.0],
                &[1.0, -1.0],
                -1.0,
            ),
            (
                Score,
                ZScore,
                Semantic,
                3.0,
                0.0,
                &[3.0, 1.0],
                &[1.0, -1.0],
                -1.0,
            ),
            (Score, ZScore, Lexical, 2.0, 0.0, &[], &[], 0.0),
        ];
        for &(method, normalization, kind, lexical_power, reference, scores, want, absent) in table
        {
            let settings = Settings {
                method,
                normalization,
                lexical_power,
                rrf_k: 60.0,
                semantic_floor: 0.2,
                ..Settings::default()
            };
            let got = scale(kind, scores, &settings, reference);
            let case = format!("{method:?} {normalization:?} {kind:?} {scores:?}");
            assert!(close(&got.values, want), "{case}: {:?}", got.values);
            assert_eq!(got.absent, absent, "{case}");
        }
    }

    #[test]
    fn scale_lists_puts_each_list_with_its_weight_and_values() {
        let resolved = Resolved {
            lexical: ids(&[(1, 8.0), (2, 4.0)]),
            semantic: ids(&[(2, 0.6), (3, 0.4)]),
            verbatim: ids(&[(2, 4.0)]),
            votes: true,
            tier: false,
        };
        let weights = Weights {
            lexical: 1.0,
            semantic: 2.0,
            verbatim: 0.0,
        };
        let rrf = [1.0 / 61.0, 1.0 / 62.0];
        // (method; the lexical, semantic and verbatim values)
        type Row<'a> = (Method, [&'a [f64]; 3]);
        let table: &[Row] = &[
            (Method::Rrf, [&rrf, &rrf, &rrf[..1]]),
            (Method::Score, [&[1.0, 0.5], &[1.0, 0.5], &[1.0]]),
            (
                Method::Dbsf,
                [&[2.0 / 3.0, 1.0 / 3.0], &[2.0 / 3.0, 1.0 / 3.0], &[1.0]],
            ),
        ];
        for (method, want) in table {
            let settings = Settings {
                method: *method,
                normalization: Normalization::FixedFloor,
                lexical_power: 1.0,
                semantic_floor: 0.2,
                ..Settings::default()
            };
            let got = scale_lists(&resolved, weights, &settings, 0.0);
            let kinds: Vec<ListKind> = got.iter().map(|t| t.kind).collect();
            assert_eq!(kinds, ListKind::all(), "{method:?}");
            let w: Vec<f64> = got.iter().map(|t| t.weight).collect();
            assert_eq!(w, [1.0, 2.0, 0.0], "{method:?}");
            for ((t, list), values) in got
                .iter()
                .zip([&resolved.lexical, &resolved.semantic, &resolved.verbatim])
                .zip(want)
            {
                assert_eq!(t.list, &list[..], "{method:?} {:?}", t.kind);
                assert!(
                    close(&t.normalised.values, values),
                    "{method:?} {:?}: {:?}",
                    t.kind,
                    t.normalised.values
                );
            }
        }
    }

    /// A table of three lists: each (weight, entries (id, raw, value), absent).
    type Spec<'a> = [(f64, &'a [(u128, f64, f64)], f64); 3];

    fn table_of<'a>(spec: &Spec<'_>, lists: &'a [Vec<(Uuid, f64)>]) -> Vec<Scaled<'a>> {
        ListKind::all()
            .iter()
            .zip(spec)
            .zip(lists)
            .map(|((&kind, &(weight, entries, absent)), list)| Scaled {
                kind,
                weight,
                list,
                normalised: Normalised {
                    values: entries.iter().map(|e| e.2).collect(),
                    absent,
                },
            })
            .collect()
    }

    fn lists_of(spec: &Spec<'_>) -> Vec<Vec<(Uuid, f64)>> {
        spec.iter()
            .map(|(_, entries, _)| entries.iter().map(|&(n, raw, _)| (id(n), raw)).collect())
            .collect()
    }

    #[test]
    fn explain_records_each_points_placings_and_tier() {
        let spec: Spec = [
            (1.0, &[(1, 8.0, 1.0), (2, 4.0, 0.5)], 0.0),
            (2.0, &[(3, 0.9, 1.0), (2, 0.8, 0.75)], 0.0),
            (0.0, &[(2, 4.0, 1.0)], 0.0),
        ];
        let (lex_at, sem_at, verb_at) = (ListKind::Lexical, ListKind::Semantic, ListKind::Verbatim);
        let at = |rank, score, normalized| Placing {
            rank,
            score,
            normalized,
        };
        // (the tier formed; each point (id, in the tier, placings) by id)
        type Row = (bool, Vec<(u128, bool, Vec<(ListKind, Placing)>)>);
        let table: Vec<Row> = vec![
            (
                true,
                vec![
                    (1, false, vec![(lex_at, at(1, 8.0, 1.0))]),
                    (
                        2,
                        true,
                        vec![
                            (lex_at, at(2, 4.0, 0.5)),
                            (sem_at, at(2, 0.8, 0.75)),
                            (verb_at, at(1, 4.0, 1.0)),
                        ],
                    ),
                    (3, false, vec![(sem_at, at(1, 0.9, 1.0))]),
                ],
            ),
            (
                false,
                vec![
                    (1, false, vec![(lex_at, at(1, 8.0, 1.0))]),
                    (
                        2,
                        false,
                        vec![
                            (lex_at, at(2, 4.0, 0.5)),
                            (sem_at, at(2, 0.8, 0.75)),
                            (verb_at, at(1, 4.0, 1.0)),
                        ],
                    ),
                    (3, false, vec![(sem_at, at(1, 0.9, 1.0))]),
                ],
            ),
        ];
        let lists = lists_of(&spec);
        for (tier, want) in table {
            let mut got = explain(&table_of(&spec, &lists), tier);
            got.sort_by_key(|h| h.id);
            let want: Vec<Fused> = want
                .into_iter()
                .map(|(n, tier, placings)| Fused {
                    tier,
                    placings,
                    ..Fused::new(id(n))
                })
                .collect();
            assert_eq!(got, want, "tier {tier}");
        }
        let none = lists_of(&[(1.0, &[], 0.0); 3]);
        assert!(explain(&table_of(&[(1.0, &[], 0.0); 3], &none), true).is_empty());
    }

    #[test]
    fn divisor_is_the_sum_of_the_voting_weights_under_score_fusion() {
        let one: &[(u128, f64, f64)] = &[(1, 1.0, 1.0)];
        // (method, each list's weight and whether it has an entry; divisor)
        type Row = (Method, [(f64, bool); 3], f64);
        let table: &[Row] = &[
            (Method::Score, [(1.0, true), (2.0, true), (0.0, true)], 3.0),
            (Method::Score, [(1.0, true), (2.0, true), (1.5, true)], 4.5),
            // An empty list does not vote.
            (Method::Score, [(1.0, true), (2.0, false), (1.0, true)], 2.0),
            // No vote: 1.
            (Method::Score, [(0.0, true), (0.0, true), (0.0, false)], 1.0),
            (
                Method::Score,
                [(1.0, false), (2.0, false), (0.0, false)],
                1.0,
            ),
            // RRF and DBSF add the weighted values as they are.
            (Method::Rrf, [(1.0, true), (2.0, true), (1.0, true)], 1.0),
            (Method::Dbsf, [(1.0, true), (2.0, true), (0.0, true)], 1.0),
        ];
        for (method, weights, want) in table {
            let spec: Spec = weights.map(|(w, held)| (w, if held { one } else { &[] }, 0.0));
            let lists = lists_of(&spec);
            let got = divisor(&table_of(&spec, &lists), *method);
            assert_eq!(got, *want, "{method:?} {weights:?}");
        }
    }

    #[test]
    fn combine_weighs_the_values_and_adds_the_absent_ones() {
        // (method, the lists; each point's fused score, by id)
        type Row<'a> = (Method, Spec<'a>, &'a [(u128, f64)]);
        let table: &[Row] = &[
            // Convex: (1 · 1 + 1 · 0) / 2 ...
            (
                Method::Score,
                [
                    (1.0, &[(1, 9.0, 1.0), (2, 3.0, 0.5)], 0.0),
                    (1.0, &[(2, 0.8, 1.0), (3, 0.7, 0.9)], 0.0),
                    (0.0, &[(2, 3.0, 1.0)], 0.0),
                ],
                &[(1, 0.5), (2, 0.75), (3, 0.45)],
            ),
            // Weighted: (2 · 1) / 3 and (1 · 1) / 3.
            (
                Method::Score,
                [
                    (1.0, &[(1, 9.0, 1.0)], 0.0),
                    (2.0, &[(2, 0.8, 1.0)], 0.0),
                    (0.0, &[], 0.0),
                ],
                &[(1, 1.0 / 3.0), (2, 2.0 / 3.0)],
            ),
            // z-scores: a point a voting list lacks gets its lowest.
            (
                Method::Score,
                [
                    (1.0, &[(1, 3.0, 1.0), (2, 1.0, -1.0)], -1.0),
                    (1.0, &[(3, 0.9, 1.0), (1, 0.1, -1.0)], -1.0),
                    (0.0, &[], 0.0),
                ],
                &[(1, 0.0), (2, -1.0), (3, 0.0)],
            ),
            // ... but not from a list without a vote.
            (
                Method::Score,
                [
                    (1.0, &[(1, 3.0, 1.0), (2, 1.0, -1.0)], -1.0),
                    (0.0, &[(3, 0.9, 1.0)], -1.0),
                    (0.0, &[], 0.0),
                ],
                &[(1, 1.0), (2, -1.0), (3, -1.0)],
            ),
            // RRF: the weighted terms summed, the verbatim list's vote too.
            (
                Method::Rrf,
                [
                    (1.0, &[(1, 9.0, 1.0 / 61.0), (2, 3.0, 1.0 / 62.0)], 0.0),
                    (1.0, &[(1, 0.8, 1.0 / 61.0)], 0.0),
                    (2.0, &[(2, 3.0, 1.0 / 61.0)], 0.0),
                ],
                &[(1, 2.0 / 61.0), (2, 1.0 / 62.0 + 2.0 / 61.0)],
            ),
        ];
        for (method, spec, want) in table {
            let lists = lists_of(spec);
            let scaled = table_of(spec, &lists);
            let mut hits = explain(&scaled, false);
            combine(&mut hits, &scaled, *method);
            hits.sort_by_key(|h| h.id);
            let got: Vec<(u128, f64)> = hits.iter().map(|h| (h.id.as_u128(), h.score)).collect();
            assert_eq!(got.len(), want.len(), "{method:?}: {got:?}");
            for ((g_id, g), (w_id, w)) in got.iter().zip(*want) {
                assert!(g_id == w_id && (g - w).abs() < 1e-12, "{method:?}: {got:?}");
            }
            assert!(hits.iter().all(|h| h.fused == h.score), "{method:?}");
        }
    }

    #[test]
    fn rank_puts_the_tier_first_then_the_score_then_the_id() {
        // (hits: id, score, in the tier; limit; the ids in order)
        type Row<'a> = (&'a [(u128, f64, bool)], usize, &'a [u128]);
        let table: &[Row] = &[
            (
                &[(1, 0.5, false), (2, 0.9, false), (3, 0.1, true)],
                10,
                &[3, 2, 1],
            ),
            // Equal scores break by id.
            (
                &[(9, 0.5, false), (4, 0.5, false), (6, 0.5, true)],
                10,
                &[6, 4, 9],
            ),
            // The best `limit`, the tier first.
            (
                &[
                    (1, -1.0, false),
                    (2, 0.0, false),
                    (3, 0.2, true),
                    (4, 0.3, true),
                ],
                3,
                &[4, 3, 2],
            ),
            (
                &[(1, 0.1, false), (2, 0.3, false), (3, 0.2, false)],
                1,
                &[2],
            ),
            (&[(1, 0.1, false), (2, 0.3, false)], 2, &[2, 1]),
            (&[(1, 0.1, false)], 0, &[]),
            (&[], 5, &[]),
        ];
        for (hits, limit, want) in table {
            let hits: Vec<Fused> = hits
                .iter()
                .map(|&(n, score, tier)| Fused {
                    score,
                    fused: score,
                    tier,
                    ..Fused::new(id(n))
                })
                .collect();
            let got = rank(hits, *limit);
            assert_eq!(order(&got), *want, "limit {limit}");
        }
    }
}

//! A list's scores on one scale: score fusion's normalisations
//! ([`normalise`]), DBSF's scaling ([`dbsf`]) and a list's confidence for
//! per-query weighting ([`confidence`]).

use super::Normalization;

/// A list's scores normalised; `absent` is the value of a point it lacks.
pub(super) struct Normalised {
    pub(super) values: Vec<f64>,
    pub(super) absent: f64,
}

fn mean_std(scores: &[f64]) -> (f64, f64) {
    let n = scores.len() as f64;
    let mean = scores.iter().sum::<f64>() / n;
    let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Normalises one channel's raw scores (best first) for score fusion.
/// `ceiling` is the channel's fixed top for `absolute` (0: the list's top).
pub(super) fn normalise(
    scores: &[f64],
    how: Normalization,
    floor: f64,
    ceiling: f64,
) -> Normalised {
    if scores.is_empty() {
        return Normalised {
            values: Vec::new(),
            absent: 0.0,
        };
    }
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let low = scores.iter().copied().fold(f64::INFINITY, f64::min);
    // Scores from `floor` (0) to `top` (1), none below 0; nothing above the
    // floor: 0. A score above a fixed top stays above 1 (BM25 over its
    // full-match score), keeping its order.
    let from_floor = |top: f64| Normalised {
        values: scores
            .iter()
            .map(|s| {
                if top > floor {
                    ((s - floor) / (top - floor)).max(0.0)
                } else {
                    0.0
                }
            })
            .collect(),
        absent: 0.0,
    };
    match how {
        Normalization::Absolute => from_floor(if ceiling > floor { ceiling } else { top }),
        Normalization::FixedFloor => from_floor(top),
        Normalization::MinMax => Normalised {
            values: scores
                .iter()
                .map(|s| {
                    if top > low {
                        (s - low) / (top - low)
                    } else {
                        1.0
                    }
                })
                .collect(),
            absent: 0.0,
        },
        Normalization::ZScore => {
            let (mean, std) = mean_std(scores);
            if std <= 0.0 {
                // Every score is the list's best (one hit, or ties): each
                // one unit above the points the list does not hold, which
                // a spread of zero would leave level with them.
                return Normalised {
                    values: vec![1.0; scores.len()],
                    absent: 0.0,
                };
            }
            let values: Vec<f64> = scores.iter().map(|s| (s - mean) / std).collect();
            let absent = values.iter().copied().fold(f64::INFINITY, f64::min);
            Normalised { values, absent }
        }
    }
}

/// Qdrant's DBSF scaling: mean − 3σ ↦ 0, mean + 3σ ↦ 1, clamped; equal
/// scores ↦ 0.5.
pub(super) fn dbsf(scores: &[f64]) -> Normalised {
    let (mean, std) = if scores.is_empty() {
        (0.0, 0.0)
    } else {
        mean_std(scores)
    };
    Normalised {
        values: scores
            .iter()
            .map(|s| {
                if std > 0.0 {
                    ((s - (mean - 3.0 * std)) / (6.0 * std)).clamp(0.0, 1.0)
                } else {
                    0.5
                }
            })
            .collect(),
        absent: 0.0,
    }
}

/// The lexical list's confidence: as [`confidence`] from BM25's floor (0),
/// except that one hit above it stands out entirely (every point the read
/// did not find scores the floor), where [`confidence`] has no tenth.
pub fn lexical_confidence(scores: &[f64]) -> f64 {
    match scores {
        [only] if *only > 0.0 => 1.0,
        _ => confidence(scores, 0.0),
    }
}

/// A list's confidence for per-query weighting: the gap between its first
/// and its tenth (or last) score over the first score's distance to `floor`,
/// in [0, 1]; 0 for fewer than two entries.
pub fn confidence(scores: &[f64], floor: f64) -> f64 {
    if scores.len() < 2 {
        return 0.0;
    }
    let (first, tenth) = (scores[0], scores[scores.len().min(10) - 1]);
    if first <= floor {
        return 0.0;
    }
    ((first - tenth) / (first - floor)).clamp(0.0, 1.0)
}

//! `--weights` and `--fusion` specs: the other fusions an eval runs,
//! checked against the service's defaults as a search's would be.

use super::*;
use trine_core::Named;

/// `LEXICAL:SEMANTIC:VERBATIM` list weights, each > 0.
pub(super) fn parse_weights(raw: &str) -> Result<v1::ListWeights, String> {
    let bad =
        || format!("--weights {raw:?}: give LEXICAL:SEMANTIC:VERBATIM, each > 0 (e.g. 1:2:2)");
    let parts: Vec<f64> = raw
        .split(':')
        .map(|p| p.parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [lexical, semantic, verbatim] if parts.iter().all(|w| w.is_finite() && *w > 0.0) => {
            Ok(v1::ListWeights {
                lexical: *lexical,
                semantic: *semantic,
                verbatim: *verbatim,
            })
        }
        _ => Err(bad()),
    }
}

/// A `--fusion` spec: METHOD[/KEY=VALUE...] as weights and fusion options
/// (checked against the service's defaults as a search's would be).
pub(super) fn parse_fusion(
    raw: &str,
) -> Result<(Option<v1::ListWeights>, Option<v1::FusionOptions>), String> {
    let bad = |why: String| format!("--fusion {raw:?}: {why}");
    let mut parts = raw.split('/');
    let method = parts.next().unwrap_or_default();
    let mut options = v1::FusionOptions::default();
    let mut weights = None;
    match method {
        "default" => {}
        m => {
            trine_core::fusion::Method::parse(m).map_err(bad)?;
            options.method = m.to_string();
        }
    }
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("{part:?} is not KEY=VALUE")))?;
        set_option(key, value, &mut options, &mut weights).map_err(bad)?;
    }
    trine_api::fusion_from_wire(
        &trine_fusion::Settings::default(),
        weights.as_ref(),
        Some(&options),
    )
    .map_err(bad)?;
    Ok((weights, Some(options)))
}

/// Sets one KEY=VALUE of a `--fusion` spec; the error says what is wrong
/// with it.
fn set_option(
    key: &str,
    value: &str,
    options: &mut v1::FusionOptions,
    weights: &mut Option<v1::ListWeights>,
) -> Result<(), String> {
    let number = || {
        value
            .parse::<f64>()
            .map_err(|_| format!("{key}={value:?} is not a number"))
    };
    match key {
        "k" => {
            options.rrf_k = number()?;
            if !(options.rrf_k.is_finite() && options.rrf_k > 0.0) {
                return Err(format!("k={value}: RRF's k must be > 0"));
            }
        }
        "norm" => options.normalization = value.to_string(),
        "tier" => {
            options.tier = Some(match value {
                "on" => true,
                "off" => false,
                _ => return Err(format!("tier={value:?}: use on or off")),
            })
        }
        "tier_max" => {
            options.tier_max = Some(
                value
                    .parse()
                    .map_err(|_| format!("tier_max={value:?} is not a count"))?,
            )
        }
        "adaptive" => options.adaptive = Some(number()?),
        "floor" => options.semantic_floor = Some(number()?),
        "power" => options.lexical_power = Some(number()?),
        "confidence" => options.semantic_confidence = Some(number()?),
        "questions" => options.question_confidence = Some(number()?),
        "late" => options.late_weight = Some(number()?),
        "w" => {
            let parts: Vec<f64> = value
                .split(':')
                .map(|p| p.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("w={value:?}: give LEXICAL:SEMANTIC:VERBATIM"))?;
            let [lexical, semantic, verbatim] = parts[..] else {
                return Err(format!("w={value:?}: give LEXICAL:SEMANTIC:VERBATIM"));
            };
            *weights = Some(v1::ListWeights {
                lexical,
                semantic,
                verbatim,
            });
        }
        other => {
            return Err(format!(
                "unknown key {other:?}: use k, norm, tier, tier_max, adaptive, floor, power, confidence or w"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_specs_parse_and_refuse() {
        let (w, o) = parse_fusion("rrf/k=60/w=1:1:2/tier=off").unwrap();
        let o = o.unwrap();
        assert_eq!(
            (o.method.as_str(), o.rrf_k, o.tier),
            ("rrf", 60.0, Some(false))
        );
        assert_eq!(w.unwrap().verbatim, 2.0);
        let (_, o) = parse_fusion("score/norm=z_score/adaptive=1/tier_max=5/floor=0.1").unwrap();
        let o = o.unwrap();
        assert_eq!(o.normalization, "z_score");
        assert_eq!(
            (o.adaptive, o.tier_max, o.semantic_floor),
            (Some(1.0), Some(5), Some(0.1))
        );
        assert_eq!(parse_fusion("default").unwrap().1.unwrap().method, "");
        for (spec, want) in [
            ("borda", "unknown fusion method"),
            ("rrf/k=0", "k must be > 0"),
            ("rrf/k", "KEY=VALUE"),
            ("score/norm=l2", "unknown normalization"),
            ("score/tier=maybe", "on or off"),
            ("score/w=1:2", "LEXICAL:SEMANTIC:VERBATIM"),
            ("score/x=1", "unknown key"),
        ] {
            let err = parse_fusion(spec).unwrap_err();
            assert!(err.contains(want), "{spec}: {err}");
        }
        let names: Vec<String> = configurations(&args(
            "--modes hybrid --strategies bm25 --verbatim on --fusion dbsf --native none",
        ))
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
        assert_eq!(names, ["hybrid/bm25", "fused/bm25/dbsf"]);
    }
}

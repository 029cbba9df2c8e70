//! The configurations an eval runs, from its arguments: each mode ×
//! lexical strategy × verbatim list, weights and fusion, and Qdrant's own
//! hybrid.

use super::*;

/// How one configuration answers a query.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Runner {
    Trine {
        mode: v1::Mode,
        strategy: String,
        no_verbatim: bool,
        /// The lists' weights; `None`: the service's defaults.
        weights: Option<v1::ListWeights>,
    },
    /// A hybrid answer fused here from the channels' lists under these
    /// weights and fusion options.
    Fused {
        strategy: String,
        weights: Option<v1::ListWeights>,
        fusion: Option<v1::FusionOptions>,
    },
    Native(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Configuration {
    pub(super) name: String,
    pub(super) runner: Runner,
}

/// The configurations the arguments ask for, in a stable order.
pub(super) fn configurations(args: &Args) -> Result<Vec<Configuration>, String> {
    let mut out = Vec::new();
    for mode in &args.modes {
        let parsed = parse_mode(mode)?;
        let trine = |strategy: &str, no_verbatim: bool, weights| Runner::Trine {
            mode: parsed,
            strategy: strategy.to_string(),
            no_verbatim,
            weights,
        };
        match parsed {
            v1::Mode::Semantic => out.push(Configuration {
                name: "semantic".into(),
                runner: trine("", false, None),
            }),
            v1::Mode::Lexical => {
                for strategy in &args.strategies {
                    out.push(Configuration {
                        name: format!("lexical/{strategy}"),
                        runner: trine(strategy, false, None),
                    });
                }
            }
            _ => {
                for strategy in &args.strategies {
                    for verbatim in &args.verbatim {
                        let (suffix, no_verbatim, weight) = verbatim_run(verbatim)?;
                        out.push(Configuration {
                            name: format!("hybrid/{strategy}{suffix}"),
                            runner: trine(strategy, no_verbatim, weight),
                        });
                    }
                    for triple in &args.weights {
                        out.push(Configuration {
                            name: format!("hybrid/{strategy}/w{triple}"),
                            runner: trine(strategy, false, Some(parse_weights(triple)?)),
                        });
                    }
                    for spec in &args.fusion {
                        let (weights, fusion) = parse_fusion(spec)?;
                        out.push(Configuration {
                            name: format!("fused/{strategy}/{spec}"),
                            runner: Runner::Fused {
                                strategy: strategy.clone(),
                                weights,
                                fusion,
                            },
                        });
                    }
                }
            }
        }
    }
    for native in &args.native {
        match native.as_str() {
            "none" => {}
            "bm25" | "sparse" => out.push(Configuration {
                name: format!("qdrant-native/{native}"),
                runner: Runner::Native(native.clone()),
            }),
            other => return Err(format!("--native {other:?}: use bm25, sparse or none")),
        }
    }
    if out.is_empty() {
        return Err("no configuration to run: give --modes or --native".into());
    }
    Ok(out)
}

/// A `--verbatim` value as a hybrid run: the name's suffix, whether the
/// verbatim list is left out, and the weights that set its weight.
fn verbatim_run(verbatim: &str) -> Result<(String, bool, Option<v1::ListWeights>), String> {
    Ok(match verbatim {
        "on" => (String::new(), false, None),
        "off" => ("/no-verbatim".to_string(), true, None),
        other => match other.parse::<f64>() {
            Ok(w) if w.is_finite() && w > 0.0 => {
                let weights = v1::ListWeights {
                    verbatim: w,
                    ..v1::ListWeights::default()
                };
                (format!("/verbatim-x{other}"), false, Some(weights))
            }
            _ => {
                return Err(format!(
                    "--verbatim {other:?}: use on, off or a weight (e.g. on,off,1)"
                ));
            }
        },
    })
}

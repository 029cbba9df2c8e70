//! `--baseline FILE`: this run against an earlier one saved with `--save`
//! (another build, another configuration, the same queries): per
//! configuration that ran in both and per kind of query, now minus then,
//! paired query by query (by qid), with the paired bootstrap's interval and
//! the verdict "not worse" when the interval reaches 0 or above.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::report::{ConfigReport, RESAMPLES, interval, verdict};
use super::*;

/// The largest saved report read (a report of every configuration over a few
/// thousand queries is a few MB).
pub const MAX_BASELINE_BYTES: u64 = 256 << 20;

/// What `--baseline` reads of a saved report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Baseline {
    /// Ranks were read to this depth: a rank below it is unknown (`null`).
    pub depth: usize,
    pub configurations: Vec<SavedConfiguration>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SavedConfiguration {
    pub name: String,
    pub error: Option<String>,
    pub queries: Vec<QueryResult>,
}

/// Reads a report saved by `trine eval --save`, checking its size first.
pub fn load(path: &Path) -> Result<Baseline, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read the baseline {shown}: {e}"))?
        .len();
    if size > MAX_BASELINE_BYTES {
        return Err(format!(
            "the baseline {shown} is {size} bytes, more than a saved report's {MAX_BASELINE_BYTES}: \
             give the file `trine eval --save` wrote"
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the baseline {shown}: {e}"))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("the baseline {shown} is not a report of `trine eval --save`: {e}"))
}

/// One configuration on one kind of query, now against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub configuration: String,
    pub kind: String,
    pub queries: usize,
    /// The baseline's MRR and success@k on these queries, then this run's.
    pub mrr_then: f64,
    pub mrr_now: f64,
    pub success_at_k_then: f64,
    pub success_at_k_now: f64,
    /// Now minus then, with the paired bootstrap's 95 % interval.
    pub mrr: Difference,
    pub success_at_k: Difference,
    /// "not worse" (both intervals reach 0 or above) or "WORSE".
    pub verdict: String,
}

/// Refuses a baseline of other queries before any configuration runs: the
/// pairing of [`against_baseline`] on the run's queries, all unranked.
pub fn check_before(
    baseline: &Baseline,
    names: &[String],
    queries: &[crate::queries::Query],
    k: usize,
    depth: usize,
) -> Result<(), String> {
    let unranked: Vec<QueryResult> = queries
        .iter()
        .map(|q| QueryResult {
            qid: q.qid.clone(),
            kind: q.kind.clone().unwrap_or_else(|| "-".into()),
            ranks: vec![None; q.gold.len()],
        })
        .collect();
    let shells: Vec<ConfigReport> = names
        .iter()
        .map(|name| ConfigReport::of(name.clone(), unranked.clone(), k, 0.0))
        .collect();
    matched(&shells, baseline, k, depth).map(|_| ())
}

/// Every configuration of this run that also ran in the baseline, per kind
/// (and `all`), paired by qid. Ranks below the shallower of the two runs'
/// depths count as absent in both. Refuses a baseline run on other queries:
/// a query of this run it lacks, or holds with another kind or another
/// number of gold ids.
pub fn against_baseline(
    configurations: &[ConfigReport],
    baseline: &Baseline,
    k: usize,
    depth: usize,
) -> Result<Vec<Change>, String> {
    Ok(matched(configurations, baseline, k, depth)?
        .into_iter()
        .flat_map(|(now, pairs)| {
            now.by_kind
                .keys()
                .map(|kind| change(&now.name, kind, &pairs))
                .collect::<Vec<_>>()
        })
        .collect())
}

/// Each configuration of this run that ran in the baseline too, with its
/// queries paired; refused when none did or the queries differ.
fn matched<'a>(
    configurations: &'a [ConfigReport],
    baseline: &Baseline,
    k: usize,
    depth: usize,
) -> Result<Vec<(&'a ConfigReport, Vec<Pair<'a>>)>, String> {
    if baseline.depth < k {
        return Err(format!(
            "the baseline read ranks to {}, fewer than this run's --k {k}: \
             compare runs of the same --k",
            baseline.depth
        ));
    }
    let depth = depth.min(baseline.depth);
    let mut out = Vec::new();
    for now in configurations.iter().filter(|c| c.error.is_none()) {
        let Some(then) = baseline
            .configurations
            .iter()
            .find(|c| c.name == now.name && c.error.is_none())
        else {
            continue;
        };
        out.push((now, paired(now, then, k, depth)?));
    }
    if out.is_empty() {
        let names: Vec<&str> = baseline
            .configurations
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        return Err(format!(
            "no configuration of this run ran in the baseline (it holds {}): \
             run the same --modes and --strategies",
            names.join(", ")
        ));
    }
    Ok(out)
}

/// One query's kind, its figures now and then.
type Pair<'a> = (&'a str, QueryScore, QueryScore);

/// Each query of `now` beside the baseline's, by qid, both cut at `depth`.
fn paired<'a>(
    now: &'a ConfigReport,
    then: &SavedConfiguration,
    k: usize,
    depth: usize,
) -> Result<Vec<Pair<'a>>, String> {
    let clip = |ranks: &[Option<usize>]| -> Vec<Option<usize>> {
        ranks.iter().map(|r| r.filter(|&r| r <= depth)).collect()
    };
    let saved: HashMap<&str, &QueryResult> =
        then.queries.iter().map(|q| (q.qid.as_str(), q)).collect();
    let mut pairs = Vec::with_capacity(now.queries.len());
    for q in &now.queries {
        let Some(s) = saved.get(q.qid.as_str()) else {
            return Err(format!(
                "query {} is not in the baseline's {}: compare runs of the same queries \
                 (and the same --split)",
                q.qid, now.name
            ));
        };
        if s.kind != q.kind || s.ranks.len() != q.ranks.len() {
            return Err(format!(
                "query {} differs from the baseline's (kind {}, {} gold ids there; \
                 kind {}, {} here): compare runs of the same queries",
                q.qid,
                s.kind,
                s.ranks.len(),
                q.kind,
                q.ranks.len()
            ));
        }
        pairs.push((
            q.kind.as_str(),
            QueryScore::of(&clip(&q.ranks), k),
            QueryScore::of(&clip(&s.ranks), k),
        ));
    }
    Ok(pairs)
}

/// One kind (or `all`) of one configuration: then, now, the difference.
fn change(configuration: &str, kind: &str, pairs: &[Pair]) -> Change {
    let of = |f: fn(&QueryScore) -> f64, now: bool| -> Vec<f64> {
        pairs
            .iter()
            .filter(|(k, ..)| kind == "all" || *k == kind)
            .map(|(_, a, b)| f(if now { a } else { b }))
            .collect()
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (rr_now, rr_then) = (
        of(|s| s.reciprocal_rank, true),
        of(|s| s.reciprocal_rank, false),
    );
    let (sk_now, sk_then) = (of(|s| s.success_at_k, true), of(|s| s.success_at_k, false));
    let mrr = paired_bootstrap(&rr_now, &rr_then, RESAMPLES);
    let success_at_k = paired_bootstrap(&sk_now, &sk_then, RESAMPLES);
    let verdict = verdict(&mrr, &success_at_k);
    Change {
        configuration: configuration.into(),
        kind: kind.into(),
        queries: rr_now.len(),
        mrr_then: mean(&rr_then),
        mrr_now: mean(&rr_now),
        success_at_k_then: mean(&sk_then),
        success_at_k_now: mean(&sk_now),
        mrr,
        success_at_k,
        verdict: verdict.into(),
    }
}

/// The table: each configuration's kinds, then and now, with the verdict.
pub fn render(changes: &[Change], source: &str, k: usize) -> String {
    let mut out = format!(
        "\nagainst the baseline {source} (now minus then; paired bootstrap, {RESAMPLES} resamples, 95 % interval):\n"
    );
    out += &format!(
        "{:<34} {:<12} {:>4} {:>13} {:>26} {:>13} {:>26}  verdict\n",
        "configuration",
        "kind",
        "n",
        "MRR then→now",
        "ΔMRR [interval]",
        format!("s@{k} then→now"),
        format!("Δs@{k} [interval]")
    );
    for c in changes {
        out += &format!(
            "{:<34} {:<12} {:>4} {:>13} {:>26} {:>13} {:>26}  {}\n",
            c.configuration,
            c.kind,
            c.queries,
            format!("{:.3}→{:.3}", c.mrr_then, c.mrr_now),
            interval(&c.mrr),
            format!("{:.3}→{:.3}", c.success_at_k_then, c.success_at_k_now),
            interval(&c.success_at_k),
            c.verdict
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(ranks: &[(&str, &str, Option<usize>)]) -> Vec<QueryResult> {
        ranks
            .iter()
            .map(|(qid, kind, rank)| QueryResult {
                qid: (*qid).into(),
                kind: (*kind).into(),
                ranks: vec![*rank],
            })
            .collect()
    }

    fn now(name: &str, ranks: &[(&str, &str, Option<usize>)]) -> ConfigReport {
        ConfigReport::of(name.into(), results(ranks), 8, 0.0)
    }

    fn then(name: &str, ranks: &[(&str, &str, Option<usize>)]) -> SavedConfiguration {
        SavedConfiguration {
            name: name.into(),
            error: None,
            queries: results(ranks),
        }
    }

    #[test]
    fn paired_by_qid_per_kind() {
        // The baseline holds more queries, in another order; only this run's count.
        let baseline = Baseline {
            depth: 100,
            configurations: vec![then(
                "hybrid/default",
                &[
                    ("x", "title", Some(1)),
                    ("q2", "question", Some(1)),
                    ("q1", "question", Some(1)),
                    ("t", "title", Some(3)),
                ],
            )],
        };
        let run = [
            now(
                "hybrid/default",
                &[
                    ("q1", "question", Some(2)),
                    ("q2", "question", Some(1)),
                    ("t", "title", Some(1)),
                ],
            ),
            // Not in the baseline: not compared.
            now("semantic", &[("q1", "question", Some(1))]),
        ];
        let out = against_baseline(&run, &baseline, 8, 100).unwrap();
        let of = |kind: &str| out.iter().find(|c| c.kind == kind).unwrap();
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(out.iter().all(|c| c.configuration == "hybrid/default"));
        // Questions: 1 and 1 then, 1/2 and 1 now.
        let q = of("question");
        assert_eq!(q.queries, 2);
        assert!((q.mrr_then - 1.0).abs() < 1e-12 && (q.mrr_now - 0.75).abs() < 1e-12);
        assert!((q.mrr.mean + 0.25).abs() < 1e-12);
        assert_eq!(q.success_at_k.mean, 0.0);
        // The title rose from 3 to 1.
        assert!((of("title").mrr.mean - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(of("title").verdict, "not worse");
        assert_eq!(of("all").queries, 3);
    }

    #[test]
    fn a_worse_run_is_called_worse() {
        let qids: Vec<String> = (0..40).map(|i| format!("q{i}")).collect();
        let rows = |rank: Option<usize>| -> Vec<(&str, &str, Option<usize>)> {
            qids.iter()
                .map(|q| (q.as_str(), "question", rank))
                .collect()
        };
        let baseline = Baseline {
            depth: 100,
            configurations: vec![then("hybrid/default", &rows(Some(1)))],
        };
        let out =
            against_baseline(&[now("hybrid/default", &rows(None))], &baseline, 8, 100).unwrap();
        assert!(out.iter().all(|c| c.verdict == "WORSE"), "{out:?}");
        let text = render(&out, "before.json", 8);
        assert!(text.contains("against the baseline before.json"), "{text}");
        assert!(text.contains("1.000→0.000"), "{text}");
    }

    #[test]
    fn ranks_below_the_shallower_depth_count_as_absent() {
        // Then read to 10, the gold at 20 now: both absent, no change.
        let baseline = Baseline {
            depth: 10,
            configurations: vec![then("semantic", &[("q", "question", None)])],
        };
        let out = against_baseline(
            &[now("semantic", &[("q", "question", Some(20))])],
            &baseline,
            8,
            100,
        )
        .unwrap();
        assert_eq!(out[0].mrr.mean, 0.0);
    }

    #[test]
    fn a_baseline_of_other_queries_is_refused() {
        let baseline = |rows: &[(&str, &str, Option<usize>)]| Baseline {
            depth: 100,
            configurations: vec![then("hybrid/default", rows)],
        };
        let run = [now("hybrid/default", &[("q1", "question", Some(1))])];
        let cases: [(Baseline, usize, &str); 4] = [
            (
                baseline(&[("q9", "question", Some(1))]),
                8,
                "query q1 is not in the baseline",
            ),
            (
                baseline(&[("q1", "title", Some(1))]),
                8,
                "kind title, 1 gold ids there",
            ),
            (
                baseline(&[("q1", "question", Some(1))]),
                200,
                "fewer than this run's --k 200",
            ),
            (
                Baseline {
                    depth: 100,
                    configurations: vec![then("semantic", &[("q1", "question", Some(1))])],
                },
                8,
                "no configuration of this run ran in the baseline (it holds semantic)",
            ),
        ];
        for (b, k, want) in cases {
            let err = against_baseline(&run, &b, k, 100).unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn a_saved_report_reads_back() {
        let report = Report {
            k: 8,
            depth: 100,
            queries: 1,
            configurations: vec![now("hybrid/default", &[("q1", "question", Some(2))])],
            against_better: Vec::new(),
            baseline: None,
            against_baseline: Vec::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
        let read = load(&path).unwrap();
        assert_eq!(read.depth, 100);
        assert_eq!(read.configurations[0].queries[0].ranks, [Some(2)]);
        std::fs::write(&path, "{\"k\": 8}").unwrap();
        let err = load(&path).unwrap_err();
        assert!(
            err.contains("is not a report of `trine eval --save`"),
            "{err}"
        );
        let err = load(&dir.path().join("missing.json")).unwrap_err();
        assert!(err.contains("cannot read the baseline"), "{err}");
    }
}

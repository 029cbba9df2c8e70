//! What an eval reports: each configuration's figures per kind of query,
//! hybrid against the better single channel (paired bootstrap), and the
//! text table.

use super::*;

/// One query's result under one configuration (read back by `--baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct QueryResult {
    pub qid: String,
    pub kind: String,
    /// The rank of each gold id (from 1), `null` when not in the first `depth`.
    pub ranks: Vec<Option<usize>>,
}

/// One configuration's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigReport {
    pub name: String,
    /// Why the configuration could not run (e.g. a strategy not ready).
    pub error: Option<String>,
    /// Per kind of query, and `all`.
    pub by_kind: BTreeMap<String, Aggregate>,
    pub queries: Vec<QueryResult>,
    pub mean_ms: f64,
}

impl ConfigReport {
    pub(super) fn of(name: String, results: Vec<QueryResult>, k: usize, mean_ms: f64) -> Self {
        let mut kinds: BTreeMap<String, Vec<QueryScore>> = BTreeMap::new();
        for r in &results {
            let score = QueryScore::of(&r.ranks, k);
            kinds.entry("all".into()).or_default().push(score);
            kinds.entry(r.kind.clone()).or_default().push(score);
        }
        Self {
            name,
            error: None,
            by_kind: kinds
                .into_iter()
                .map(|(kind, scores)| (kind, Aggregate::of(&scores)))
                .collect(),
            queries: results,
            mean_ms,
        }
    }
}

/// The whole evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub k: usize,
    pub depth: usize,
    pub queries: usize,
    pub configurations: Vec<ConfigReport>,
    /// Each hybrid configuration against the better single channel, per kind.
    pub against_better: Vec<Comparison>,
    /// The saved report of `--baseline`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Each configuration that ran in the baseline too, now against then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub against_baseline: Vec<super::baseline::Change>,
}

/// Bootstrap resamples of the comparison with the better channel.
pub const RESAMPLES: usize = 1000;

/// One hybrid configuration against the better of lexical-only (same
/// strategy) and semantic-only on one kind of query (better: higher MRR).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub configuration: String,
    pub kind: String,
    /// The better channel's configuration.
    pub better: String,
    /// Hybrid minus the better channel, with the paired bootstrap's 95 %
    /// interval.
    pub mrr: Difference,
    pub success_at_k: Difference,
}

/// Each hybrid configuration (`hybrid/S...`, `fused/S/...`) against the better
/// of `lexical/S` and `semantic` on each kind, where both ran; the default
/// (`S` = `default`, whose questions may take another strategy's list)
/// against the best of `semantic` and every `lexical/...` run.
pub fn against_better(configurations: &[ConfigReport], k: usize) -> Vec<Comparison> {
    let ran = |name: &str| {
        configurations
            .iter()
            .find(|c| c.name == name && c.error.is_none())
    };
    let per_query = |c: &ConfigReport, kind: &str, f: fn(&QueryScore) -> f64| -> Vec<f64> {
        c.queries
            .iter()
            .filter(|q| kind == "all" || q.kind == kind)
            .map(|q| f(&QueryScore::of(&q.ranks, k)))
            .collect()
    };
    let mut out = Vec::new();
    for c in configurations.iter().filter(|c| c.error.is_none()) {
        let mut path = c.name.split('/');
        let (Some(family), Some(strategy)) = (path.next(), path.next()) else {
            continue;
        };
        if family != "hybrid" && family != "fused" {
            continue;
        }
        let lexical: Vec<&ConfigReport> = if strategy == super::DEFAULT_STRATEGY {
            configurations
                .iter()
                .filter(|x| x.name.starts_with("lexical/") && x.error.is_none())
                .collect()
        } else {
            ran(&format!("lexical/{strategy}")).into_iter().collect()
        };
        let Some(semantic) = ran("semantic") else {
            continue;
        };
        if lexical.is_empty() {
            continue;
        }
        for kind in c.by_kind.keys() {
            let mrr_of = |x: &ConfigReport| x.by_kind.get(kind).map_or(0.0, |a| a.mrr);
            // The first of the best: lexical before semantic on a tie.
            let better = lexical
                .iter()
                .copied()
                .chain([semantic])
                .fold(None::<&ConfigReport>, |best, x| match best {
                    Some(b) if mrr_of(b) >= mrr_of(x) => Some(b),
                    _ => Some(x),
                })
                .unwrap_or(semantic);
            out.push(Comparison {
                configuration: c.name.clone(),
                kind: kind.clone(),
                better: better.name.clone(),
                mrr: paired_bootstrap(
                    &per_query(c, kind, |s| s.reciprocal_rank),
                    &per_query(better, kind, |s| s.reciprocal_rank),
                    RESAMPLES,
                ),
                success_at_k: paired_bootstrap(
                    &per_query(c, kind, |s| s.success_at_k),
                    &per_query(better, kind, |s| s.success_at_k),
                    RESAMPLES,
                ),
            });
        }
    }
    out
}

pub(super) fn rank_text(rank: Option<usize>, depth: usize) -> String {
    rank.map_or(format!(">{depth}"), |r| r.to_string())
}

/// The tables for people.
pub fn render(report: &Report, ranks: bool) -> String {
    let k = report.k;
    let mut out = format!(
        "trine eval: {} queries, k = {k}, nDCG@{NDCG_AT}, ranks read to {}\n\n",
        report.queries, report.depth
    );
    out += &render_figures(report);
    if !report.against_better.is_empty() {
        out += &render_against_better(report);
    }
    if let Some(source) = &report.baseline {
        out += &super::baseline::render(&report.against_baseline, source, k);
    }
    out += &render_misses(report);
    if ranks {
        out += &render_ranks(report);
    }
    out
}

/// Each configuration's figures, a row per kind of query.
fn render_figures(report: &Report) -> String {
    let k = report.k;
    let mut out = format!(
        "{:<34} {:<12} {:>4} {:>6} {:>6} {:>6} {:>8} {:>6} {:>8}\n",
        "configuration",
        "kind",
        "n",
        "s@1",
        format!("s@{k}"),
        "MRR",
        format!("nDCG@{NDCG_AT}"),
        format!("R@{k}"),
        "ms/query"
    );
    for c in &report.configurations {
        if let Some(why) = &c.error {
            out += &format!("{:<34} not run: {why}\n", c.name);
            continue;
        }
        for (i, (kind, a)) in c.by_kind.iter().enumerate() {
            let name = if i == 0 { c.name.as_str() } else { "" };
            let ms = if i == 0 {
                format!("{:.1}", c.mean_ms)
            } else {
                String::new()
            };
            out += &format!(
                "{name:<34} {kind:<12} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>8.3} {:>6.3} {ms:>8}\n",
                a.queries, a.success_at_1, a.success_at_k, a.mrr, a.ndcg_at_10, a.recall_at_k
            );
        }
    }
    out
}

/// Each hybrid configuration against the better single channel, with the
/// verdict.
fn render_against_better(report: &Report) -> String {
    let k = report.k;
    let mut out = format!(
        "\nagainst the better single channel (hybrid minus it; paired bootstrap, {RESAMPLES} resamples, 95 % interval):\n"
    );
    out += &format!(
        "{:<34} {:<12} {:<22} {:>26} {:>26}  verdict\n",
        "configuration",
        "kind",
        "better channel",
        "ΔMRR [interval]",
        format!("Δs@{k} [interval]")
    );
    for c in &report.against_better {
        let verdict = verdict(&c.mrr, &c.success_at_k);
        out += &format!(
            "{:<34} {:<12} {:<22} {:>26} {:>26}  {verdict}\n",
            c.configuration,
            c.kind,
            c.better,
            interval(&c.mrr),
            interval(&c.success_at_k)
        );
    }
    out
}

/// "not worse" when both paired intervals reach 0 or above, else "WORSE".
pub(super) fn verdict(mrr: &Difference, success_at_k: &Difference) -> &'static str {
    if mrr.not_worse() && success_at_k.not_worse() {
        "not worse"
    } else {
        "WORSE"
    }
}

/// A paired difference with its interval: `+0.012 [-0.004, +0.030]`.
pub(super) fn interval(d: &Difference) -> String {
    format!("{:+.3} [{:+.3}, {:+.3}]", d.mean, d.low, d.high)
}

/// The gold ids each configuration that ran left outside the top k.
fn render_misses(report: &Report) -> String {
    let k = report.k;
    let mut out = format!("\ngold ids outside the top {k}:\n");
    for c in report.configurations.iter().filter(|c| c.error.is_none()) {
        let missed: Vec<String> = c
            .queries
            .iter()
            .flat_map(|q| {
                q.ranks
                    .iter()
                    .filter(|r| r.is_none_or(|r| r > k))
                    .map(|r| format!("{} {}", q.qid, rank_text(*r, report.depth)))
            })
            .collect();
        let missed = if missed.is_empty() {
            "none".to_string()
        } else {
            missed.join(", ")
        };
        out += &format!("  {}: {missed}\n", c.name);
    }
    out
}

/// The rank of each query's first gold id under every configuration that
/// ran (`--ranks`).
fn render_ranks(report: &Report) -> String {
    let mut out = "\nrank of each query's first gold id:\n".to_string();
    let ran: Vec<&ConfigReport> = report
        .configurations
        .iter()
        .filter(|c| c.error.is_none())
        .collect();
    out += &format!("{:<8}", "qid");
    for c in &ran {
        out += &format!(" {:>w$}", c.name, w = c.name.len().max(5));
    }
    out += "\n";
    for (i, q) in ran
        .first()
        .map_or(&[][..], |c| &c.queries[..])
        .iter()
        .enumerate()
    {
        out += &format!("{:<8}", q.qid);
        for c in &ran {
            let rank = c
                .queries
                .get(i)
                .and_then(|q| q.ranks.first().copied().flatten());
            out += &format!(
                " {:>w$}",
                rank_text(rank, report.depth),
                w = c.name.len().max(5)
            );
        }
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_is_compared_with_the_better_channel_per_kind() {
        let result = |qid: &str, kind: &str, rank: Option<usize>| QueryResult {
            qid: qid.into(),
            kind: kind.into(),
            ranks: vec![rank],
        };
        // One configuration's report: the title's rank, then the question's.
        let report = |name: &str, title: usize, question: usize| {
            let results = vec![
                result("t", "title", Some(title)),
                result("q", "question", Some(question)),
            ];
            ConfigReport::of(name.into(), results, 8, 0.0)
        };
        // Titles: lexical is better; questions: semantic is.
        let lexical = report("lexical/candidates", 1, 9);
        let semantic = report("semantic", 5, 1);
        let hybrid = report("hybrid/candidates", 1, 2);
        let out = against_better(&[hybrid, lexical, semantic], 8);
        let of = |kind: &str| out.iter().find(|c| c.kind == kind).unwrap();
        assert_eq!(of("title").better, "lexical/candidates");
        assert_eq!(of("title").mrr.mean, 0.0);
        assert_eq!(of("question").better, "semantic");
        assert!((of("question").mrr.mean + 0.5).abs() < 1e-12);
        assert!(!of("question").mrr.not_worse());
        assert!(of("question").success_at_k.not_worse());
        // No single-channel runs: no comparison.
        let alone = ConfigReport::of(
            "hybrid/bm25".into(),
            vec![result("t", "title", Some(1))],
            8,
            0.0,
        );
        assert!(against_better(&[alone], 8).is_empty());
    }

    #[test]
    fn the_default_is_compared_with_the_best_of_every_channel_run() {
        let result = |rank: usize| QueryResult {
            qid: "q".into(),
            kind: "question".into(),
            ranks: vec![Some(rank)],
        };
        let report =
            |name: &str, rank: usize| ConfigReport::of(name.into(), vec![result(rank)], 8, 0.0);
        let runs = [
            report("hybrid/default", 2),
            report("hybrid/candidates", 2),
            report("lexical/default", 4),
            report("lexical/candidates", 4),
            report("lexical/sparse", 1),
            report("semantic", 3),
        ];
        let out = against_better(&runs, 8);
        let of = |name: &str| out.iter().find(|c| c.configuration == name).unwrap();
        // The default meets the sparse list, the better of all lexical runs;
        // a named strategy meets its own.
        assert_eq!(of("hybrid/default").better, "lexical/sparse");
        assert!((of("hybrid/default").mrr.mean + 0.5).abs() < 1e-12);
        assert_eq!(of("hybrid/candidates").better, "semantic");
        // A tie goes to the lexical run.
        let tie = [
            report("hybrid/default", 1),
            report("lexical/default", 1),
            report("semantic", 1),
        ];
        assert_eq!(against_better(&tie, 8)[0].better, "lexical/default");
    }

    #[test]
    fn the_report_shows_figures_misses_and_ranks() {
        let results = vec![
            QueryResult {
                qid: "q1".into(),
                kind: "title".into(),
                ranks: vec![Some(1)],
            },
            QueryResult {
                qid: "q2".into(),
                kind: "semantic".into(),
                ranks: vec![None],
            },
        ];
        let c = ConfigReport::of("hybrid/candidates".into(), results, 10, 3.0);
        assert_eq!(c.by_kind["all"].queries, 2);
        assert_eq!(c.by_kind["title"].success_at_1, 1.0);
        assert_eq!(c.by_kind["semantic"].mrr, 0.0);
        let mut failed = ConfigReport::of("hybrid/sparse".into(), Vec::new(), 10, 0.0);
        failed.error = Some("query q1: FailedPrecondition: run `trine sparse-backfill`".into());
        let report = Report {
            k: 10,
            depth: 100,
            queries: 2,
            configurations: vec![c, failed],
            against_better: Vec::new(),
            baseline: None,
            against_baseline: Vec::new(),
        };
        let text = render(&report, true);
        assert!(text.contains("hybrid/candidates: q2 >100"), "{text}");
        assert!(
            text.contains("not run: query q1: FailedPrecondition"),
            "{text}"
        );
        let row = text.lines().find(|l| l.starts_with("q1 ")).unwrap();
        assert!(row.ends_with(" 1"), "{text}");
    }
}

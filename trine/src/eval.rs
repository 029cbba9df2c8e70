//! `trine eval --queries FILE`: every query under each configuration
//! (mode × lexical strategy × verbatim list on/off), and Qdrant's own
//! one-call hybrid on the same collection; per configuration and per kind of
//! query: success@1, success@k, MRR, nDCG@10, recall@k, and where each gold
//! id ranks when it is outside the top k. Runs the mesh in-process over the
//! configured store (embedded, or a Qdrant server with `--qdrant`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{self, Filters, SearchRequest};
use trine_core::eval::{Aggregate, NDCG_AT, QueryScore, gold_ranks};
use trine_core::model::Filter;
use trine_embed::Embedder;
use trine_store::{NativeLexical, Store};

use crate::mesh::channel;
use crate::queries::{self, Query};
use crate::search::parse_mode;
use crate::{CmdResult, Config, LocalMesh, local_mesh, print_report};

/// Qdrant's RRF counts positions from 0: trine's k = 60 is 61 there.
pub const NATIVE_RRF_K: usize = 61;

/// Points each prefetch of Qdrant's hybrid reads: trine's channel caps.
pub const NATIVE_PREFETCH: usize = 256;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Queries with their gold ids, one JSON object a line:
    /// {"qid", "query", "tenant", "gold": [ids], "kind"?}
    #[arg(long)]
    pub queries: PathBuf,
    /// Modes to run (comma-separated): hybrid, semantic, lexical
    #[arg(long, value_delimiter = ',', default_value = "hybrid,semantic")]
    pub modes: Vec<String>,
    /// Lexical strategies of the hybrid and lexical runs (comma-separated)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "candidates,bm25,sparse,gate"
    )]
    pub strategies: Vec<String>,
    /// Hybrid runs with the verbatim list at the service's weight (on),
    /// without it (off), or at a given weight (e.g. 1): comma-separated
    #[arg(long, value_delimiter = ',', default_value = "on,off")]
    pub verbatim: Vec<String>,
    /// Hybrid runs at these list weights too, LEXICAL:SEMANTIC:VERBATIM
    /// (comma-separated, e.g. 1:2:2,0.5:1:2)
    #[arg(long, value_delimiter = ',')]
    pub weights: Vec<String>,
    /// Qdrant's one-call hybrid to compare with (comma-separated): bm25,
    /// sparse, or none
    #[arg(long, value_delimiter = ',', default_value = "bm25,sparse")]
    pub native: Vec<String>,
    /// The k of success@k and recall@k
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Hits read per query (at most 100): a gold id below is "> depth"
    #[arg(long, default_value_t = 100)]
    pub depth: usize,
    /// Also print the rank of each query's first gold id under every configuration
    #[arg(long)]
    pub ranks: bool,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON object to this file
    #[arg(long)]
    pub save: Option<PathBuf>,
}

/// How one configuration answers a query.
#[derive(Debug, Clone, PartialEq)]
enum Runner {
    Trine {
        mode: v1::Mode,
        strategy: String,
        no_verbatim: bool,
        /// The lists' weights; `None`: the service's defaults.
        weights: Option<v1::ListWeights>,
    },
    Native(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Configuration {
    name: String,
    runner: Runner,
}

/// `LEXICAL:SEMANTIC:VERBATIM` list weights, each > 0.
fn parse_weights(raw: &str) -> Result<v1::ListWeights, String> {
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

/// The configurations the arguments ask for, in a stable order.
fn configurations(args: &Args) -> Result<Vec<Configuration>, String> {
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
                        let (suffix, no_verbatim, weight) = match verbatim.as_str() {
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
                        };
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

/// One query's result under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    fn of(name: String, results: Vec<QueryResult>, k: usize, mean_ms: f64) -> Self {
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
}

struct Targets {
    client: MemoryClient<Channel>,
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
}

async fn answer(
    targets: &mut Targets,
    runner: &Runner,
    query: &Query,
    args: &Args,
) -> Result<Vec<String>, String> {
    match runner {
        Runner::Trine {
            mode,
            strategy,
            no_verbatim,
            weights,
        } => {
            let request = SearchRequest {
                query: query.query.clone(),
                filters: Some(Filters {
                    tenant: query.tenant.clone(),
                    ..Filters::default()
                }),
                limit: u32::try_from(args.depth).unwrap_or(u32::MAX),
                mode: *mode as i32,
                strategy: strategy.clone(),
                no_verbatim: *no_verbatim,
                weights: *weights,
            };
            let response = targets
                .client
                .search(request)
                .await
                .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
                .into_inner();
            if response.degraded {
                return Err(format!(
                    "degraded answer: {}",
                    response.degraded_reasons.join("; ")
                ));
            }
            Ok(response.hits.into_iter().map(|h| h.id).collect())
        }
        Runner::Native(kind) => {
            let found = native_search(
                targets.store.as_ref(),
                targets.embedder.as_ref(),
                kind,
                &query.query,
                &query.tenant,
                args.depth,
            )
            .await
            .map_err(|e| e.message().to_string())?;
            Ok(found.ids.into_iter().map(|id| id.to_string()).collect())
        }
    }
}

/// What Qdrant's one-call hybrid answered, and how long its parts took.
pub struct NativeFound {
    pub ids: Vec<uuid::Uuid>,
    pub embed_ms: f64,
    pub query_ms: f64,
}

/// One search as a user of Qdrant alone would make it: embed the query,
/// then one Query API call — a dense prefetch and a `bm25` (or `sparse`)
/// prefetch of [`NATIVE_PREFETCH`] points within the tenant and the validity
/// view at now, fused by Qdrant's RRF at [`NATIVE_RRF_K`].
pub async fn native_search(
    store: &dyn Store,
    embedder: &dyn Embedder,
    lexical: &str,
    query: &str,
    tenant: &str,
    limit: usize,
) -> Result<NativeFound, tonic::Status> {
    let ms = |since: Instant| since.elapsed().as_secs_f64() * 1000.0;
    let started = Instant::now();
    let dense = embedder
        .embed(&[query.to_string()])
        .await
        .map_err(|e| tonic::Status::internal(e.to_string()))?
        .into_iter()
        .next()
        .ok_or_else(|| tonic::Status::internal("the embedder returned no vector"))?;
    let embed_ms = ms(started);
    let lexical = match lexical {
        "sparse" => NativeLexical::Sparse(trine_core::sparse::encode_query(query)),
        _ => NativeLexical::Bm25(trine_core::terms(query).join(" ")),
    };
    let filter = Filter {
        valid_at: Some(chrono::Utc::now()),
        ..Filter::tenant(tenant)
    };
    let started = Instant::now();
    let hits = store
        .query_native_hybrid(
            dense,
            lexical,
            &filter,
            NATIVE_PREFETCH,
            NATIVE_RRF_K,
            limit,
        )
        .await
        .map_err(|e| trine_api::status(e.kind(), e.to_string()))?;
    Ok(NativeFound {
        ids: hits.into_iter().map(|h| h.id).collect(),
        embed_ms,
        query_ms: ms(started),
    })
}

async fn run_configuration(
    targets: &mut Targets,
    configuration: &Configuration,
    queries: &[Query],
    args: &Args,
) -> ConfigReport {
    let mut results = Vec::new();
    let started = Instant::now();
    for query in queries {
        match answer(targets, &configuration.runner, query, args).await {
            Ok(ids) => results.push(QueryResult {
                qid: query.qid.clone(),
                kind: query.kind.clone().unwrap_or_else(|| "-".into()),
                ranks: gold_ranks(&ids, &query.gold),
            }),
            Err(why) => {
                let mut report = ConfigReport::of(configuration.name.clone(), Vec::new(), 0, 0.0);
                report.error = Some(format!("query {}: {why}", query.qid));
                return report;
            }
        }
    }
    let mean_ms = started.elapsed().as_secs_f64() * 1000.0 / queries.len().max(1) as f64;
    ConfigReport::of(configuration.name.clone(), results, args.k, mean_ms)
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let queries = queries::load(&args.queries)?;
    if let Some(q) = queries.iter().find(|q| q.gold.is_empty()) {
        return Err(format!("query {} has no gold id to evaluate against", q.qid).into());
    }
    if !(1..=100).contains(&args.depth) || args.k == 0 || args.k > args.depth {
        return Err("need 1 <= --k <= --depth <= 100".into());
    }
    let configurations = configurations(&args)?;
    let LocalMesh {
        mesh,
        store,
        embedder,
    } = local_mesh(config).await?;
    let mut targets = Targets {
        client: MemoryClient::new(channel(&mesh.gateway.to_string())?),
        store,
        embedder,
    };
    let mut reports = Vec::new();
    for configuration in &configurations {
        eprintln!("eval: {} …", configuration.name);
        reports.push(run_configuration(&mut targets, configuration, &queries, &args).await);
    }
    mesh.stop().await?;
    let report = Report {
        k: args.k,
        depth: args.depth,
        queries: queries.len(),
        configurations: reports,
    };
    print_report(&report, args.json, args.save.as_deref(), || {
        render(&report, args.ranks)
    })?;
    Ok(if report.configurations.iter().any(|c| c.error.is_some()) {
        ExitCode::from(crate::EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

fn rank_text(rank: Option<usize>, depth: usize) -> String {
    rank.map_or(format!(">{depth}"), |r| r.to_string())
}

/// The tables for people.
pub fn render(report: &Report, ranks: bool) -> String {
    let k = report.k;
    let mut out = format!(
        "trine eval: {} queries, k = {k}, nDCG@{NDCG_AT}, ranks read to {}\n\n",
        report.queries, report.depth
    );
    out += &format!(
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
    out += &format!("\ngold ids outside the top {k}:\n");
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
    if ranks {
        out += "\nrank of each query's first gold id:\n";
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
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(line: &str) -> Args {
        Cli::parse_from(format!("eval --queries q.jsonl {line}").split_whitespace()).args
    }

    #[test]
    fn the_configurations_asked_for() {
        let names = |line: &str| -> Vec<String> {
            configurations(&args(line))
                .unwrap()
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(
            names("--strategies candidates,bm25 --native sparse"),
            [
                "hybrid/candidates",
                "hybrid/candidates/no-verbatim",
                "hybrid/bm25",
                "hybrid/bm25/no-verbatim",
                "semantic",
                "qdrant-native/sparse"
            ]
        );
        assert_eq!(
            names("--modes lexical,semantic --strategies gate --native none"),
            ["lexical/gate", "semantic"]
        );
        assert_eq!(
            names("--strategies sparse --verbatim off,1.5 --modes hybrid --native none"),
            ["hybrid/sparse/no-verbatim", "hybrid/sparse/verbatim-x1.5"]
        );
        let configs = configurations(&args(
            "--strategies bm25 --verbatim on --weights 1:2:2 --modes hybrid --native none",
        ))
        .unwrap();
        assert_eq!(configs[1].name, "hybrid/bm25/w1:2:2");
        let Runner::Trine { weights, .. } = &configs[1].runner else {
            panic!("{configs:?}")
        };
        assert_eq!(weights.unwrap().semantic, 2.0);
        let bad = [
            ("--modes fuzzy", "unknown mode"),
            ("--verbatim maybe", "--verbatim"),
            ("--verbatim 0", "--verbatim"),
            ("--weights 1:2", "LEXICAL:SEMANTIC:VERBATIM"),
            ("--weights 1:0:2", "each > 0"),
            ("--native dbsf", "--native"),
        ];
        for (line, want) in bad {
            let err = configurations(&args(line)).unwrap_err();
            assert!(err.contains(want), "{line}: {err}");
        }
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

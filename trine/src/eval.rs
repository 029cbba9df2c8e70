//! `trine eval --queries FILE`: every query under each configuration
//! (mode × lexical strategy × verbatim list on/off), and Qdrant's own
//! one-call hybrid on the same collection; per configuration and per kind of
//! query: success@1, success@k, MRR, nDCG@10, recall@k, and where each gold
//! id ranks when it is outside the top k. Runs the mesh in-process over the
//! configured store (embedded, or a Qdrant server with `--qdrant`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tonic::transport::Channel;
use trine_api::v1::lexical_client::LexicalClient;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::semantic_client::SemanticClient;
use trine_api::v1::{self, Filters, SearchRequest};
use trine_core::Fold;
use trine_core::eval::{Aggregate, Difference, NDCG_AT, QueryScore, gold_ranks, paired_bootstrap};
use trine_core::model::Filter;
use trine_embed::Embedder;
use trine_store::{NativeLexical, Store};

use crate::queries::{self, Query};
use crate::search::parse_mode;
use crate::{CmdResult, Config, LocalMesh, local_mesh, print_report};
use trine_mesh::channel;

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
    /// Hybrid runs under other fusions, each fused from the same two channel
    /// lists of a query (read once per query and strategy, then fused as
    /// fusion-svc would): METHOD[/KEY=VALUE...] with METHOD rrf, score, dbsf
    /// or default (the configured `[fusion]`), KEYs k, norm (fixed_floor,
    /// min_max, z_score), tier (on, off), tier_max, adaptive, floor, power, w
    /// (LEXICAL:SEMANTIC:VERBATIM). Repeatable; e.g. --fusion rrf/k=60/w=1:1:2
    /// --fusion score/norm=min_max/w=1:2:0
    #[arg(long)]
    pub fusion: Vec<String>,
    /// Only the queries of this half of a development set: tune or held
    #[arg(long)]
    pub split: Option<String>,
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

/// A `--fusion` spec: METHOD[/KEY=VALUE...] as weights and fusion options
/// (checked against the service's defaults as a search's would be).
fn parse_fusion(raw: &str) -> Result<(Option<v1::ListWeights>, Option<v1::FusionOptions>), String> {
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
        let number = || {
            value
                .parse::<f64>()
                .map_err(|_| bad(format!("{key}={value:?} is not a number")))
        };
        match key {
            "k" => {
                options.rrf_k = number()?;
                if !(options.rrf_k.is_finite() && options.rrf_k > 0.0) {
                    return Err(bad(format!("k={value}: RRF's k must be > 0")));
                }
            }
            "norm" => options.normalization = value.to_string(),
            "tier" => {
                options.tier = Some(match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(format!("tier={value:?}: use on or off"))),
                })
            }
            "tier_max" => {
                options.tier_max = Some(
                    value
                        .parse()
                        .map_err(|_| bad(format!("tier_max={value:?} is not a count")))?,
                )
            }
            "adaptive" => options.adaptive = Some(number()?),
            "floor" => options.semantic_floor = Some(number()?),
            "power" => options.lexical_power = Some(number()?),
            "w" => {
                let parts: Vec<f64> = value
                    .split(':')
                    .map(|p| p.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad(format!("w={value:?}: give LEXICAL:SEMANTIC:VERBATIM")))?;
                let [lexical, semantic, verbatim] = parts[..] else {
                    return Err(bad(format!("w={value:?}: give LEXICAL:SEMANTIC:VERBATIM")));
                };
                weights = Some(v1::ListWeights {
                    lexical,
                    semantic,
                    verbatim,
                });
            }
            other => {
                return Err(bad(format!(
                    "unknown key {other:?}: use k, norm, tier, tier_max, adaptive, floor, power or w"
                )));
            }
        }
    }
    trine_api::fusion_from_wire(
        &trine_fusion::Settings::default(),
        weights.as_ref(),
        Some(&options),
    )
    .map_err(bad)?;
    Ok((weights, Some(options)))
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
    /// Each hybrid configuration against the better single channel, per kind.
    pub against_better: Vec<Comparison>,
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
/// of `lexical/S` and `semantic` on each kind, where both ran.
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
        let (Some(lexical), Some(semantic)) =
            (ran(&format!("lexical/{strategy}")), ran("semantic"))
        else {
            continue;
        };
        for kind in c.by_kind.keys() {
            let mrr_of = |x: &ConfigReport| x.by_kind.get(kind).map_or(0.0, |a| a.mrr);
            let better = if mrr_of(lexical) >= mrr_of(semantic) {
                lexical
            } else {
                semantic
            };
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

struct Targets {
    client: MemoryClient<Channel>,
    lexical: LexicalClient<Channel>,
    semantic: SemanticClient<Channel>,
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    /// The fusion-svc defaults, for the `--fusion` runs.
    fusion: trine_fusion::Settings,
    /// The collection's fold, for the native runs' query encoding.
    fold: Fold,
    /// Each query's channel lists, read once: by (qid, strategy) for the
    /// lexical list, by qid for the semantic one.
    lexical_lists: HashMap<(String, String), (Vec<v1::Candidate>, f64)>,
    semantic_lists: HashMap<String, Vec<v1::Neighbor>>,
}

impl Targets {
    /// A query's two channel lists, as the gateway would ask for them.
    async fn lists(
        &mut self,
        query: &Query,
        strategy: &str,
    ) -> Result<(Vec<v1::Candidate>, f64, Vec<v1::Neighbor>), String> {
        let filters = Filters {
            tenant: query.tenant.clone(),
            ..Filters::default()
        };
        let key = (query.qid.clone(), strategy.to_string());
        if !self.lexical_lists.contains_key(&key) {
            let answer = self
                .lexical
                .candidates(v1::CandidatesRequest {
                    query: query.query.clone(),
                    filters: Some(filters.clone()),
                    cap: 0,
                    strategy: strategy.to_string(),
                })
                .await
                .map_err(|s| format!("lexical: {:?}: {}", s.code(), s.message()))?
                .into_inner();
            self.lexical_lists
                .insert(key.clone(), (answer.candidates, answer.reference_score));
        }
        if !self.semantic_lists.contains_key(&query.qid) {
            let answer = self
                .semantic
                .nearest(v1::NearestRequest {
                    query: query.query.clone(),
                    filters: Some(filters),
                    cap: 0,
                })
                .await
                .map_err(|s| format!("semantic: {:?}: {}", s.code(), s.message()))?
                .into_inner();
            self.semantic_lists
                .insert(query.qid.clone(), answer.neighbors);
        }
        let (lexical, reference) = self.lexical_lists[&key].clone();
        Ok((lexical, reference, self.semantic_lists[&query.qid].clone()))
    }
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
                fusion: None,
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
        Runner::Fused {
            strategy,
            weights,
            fusion,
        } => {
            let (lexical, lexical_reference, semantic) = targets.lists(query, strategy).await?;
            let request = v1::FuseRequest {
                query: query.query.trim().to_string(),
                lexical,
                semantic,
                limit: u32::try_from(args.depth).unwrap_or(u32::MAX),
                weights: *weights,
                fusion: fusion.clone(),
                lexical_reference,
            };
            let hits = trine_fusion::fuse_request(&request, &targets.fusion, args.depth)?;
            Ok(hits.into_iter().map(|h| h.id).collect())
        }
        Runner::Native(kind) => {
            let found = native_search(
                targets.store.as_ref(),
                targets.embedder.as_ref(),
                (kind, targets.fold),
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
    (lexical, fold): (&str, Fold),
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
        "sparse" => NativeLexical::Sparse(trine_core::sparse::encode_query(query, fold)),
        _ => NativeLexical::Bm25(trine_core::terms(query, fold).join(" ")),
    };
    let filter = Filter {
        valid_at: Some(chrono::Utc::now()),
        ..Filter::tenant(tenant)
    };
    let started = Instant::now();
    let hits = store
        .query(trine_store::Query::native_hybrid(
            dense,
            lexical,
            &filter,
            NATIVE_PREFETCH,
            NATIVE_RRF_K,
            limit,
        ))
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
    let mut queries = queries::load(&args.queries)?;
    if let Some(split) = &args.split {
        queries.retain(|q| q.split.as_deref() == Some(split.as_str()));
        if queries.is_empty() {
            return Err(format!(
                "no query of {} is in the split {split:?}",
                args.queries.display()
            )
            .into());
        }
    }
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
    let fold = crate::backfill::collection_fold(store.as_ref()).await?;
    let mut targets = Targets {
        client: MemoryClient::new(channel(&mesh.gateway.to_string())?),
        lexical: LexicalClient::new(channel(&mesh.lexical.to_string())?),
        semantic: SemanticClient::new(channel(&mesh.semantic.to_string())?),
        fold,
        store,
        embedder,
        fusion: config.mesh().search.fusion,
        lexical_lists: HashMap::new(),
        semantic_lists: HashMap::new(),
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
        against_better: against_better(&reports, args.k),
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
    if !report.against_better.is_empty() {
        out += &format!(
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
        let show = |d: &Difference| format!("{:+.3} [{:+.3}, {:+.3}]", d.mean, d.low, d.high);
        for c in &report.against_better {
            let verdict = if c.mrr.not_worse() && c.success_at_k.not_worse() {
                "not worse"
            } else {
                "WORSE"
            };
            out += &format!(
                "{:<34} {:<12} {:<22} {:>26} {:>26}  {verdict}\n",
                c.configuration,
                c.kind,
                c.better,
                show(&c.mrr),
                show(&c.success_at_k)
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

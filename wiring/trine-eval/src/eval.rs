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
use trine_core::model::{Filter, PayloadRead};
use trine_embed::Embedder;
use trine_store::{NativeLexical, Store};

use trine_config::{
    CmdResult, Config, EXIT_PARTIAL, LocalMesh, collection_fold, local_mesh, parse_mode,
    print_report,
};
use trine_mesh::channel;

use crate::queries::{self, Query};

mod baseline;
mod configuration;
mod lists;
mod report;
mod spec;

use configuration::{Configuration, Runner, configurations};
use lists::{late_of, write_lists};
use report::{ConfigReport, QueryResult, Report, against_better, render};
use spec::{parse_fusion, parse_weights};

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
    /// Lexical strategies of the hybrid and lexical runs (comma-separated);
    /// `default`: none named, as a search that names none (the configured
    /// strategy, and the question strategy for questions)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "default,candidates,bm25,sparse,gate"
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
    /// min_max, z_score), tier (on, off), tier_max, adaptive, floor, power,
    /// confidence (semantic_confidence), questions (question_confidence),
    /// w (LEXICAL:SEMANTIC:VERBATIM). Repeatable; e.g. --fusion rrf/k=60/w=1:1:2
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
    /// Also write each query's two channel lists under each of
    /// `--strategies` to this file, one JSON object a line (`qid`, `kind`,
    /// `query`, `gold`, `strategy`, `reference`, `terms`, `lexical`: [[id, score,
    /// verbatim]], `semantic`: [[id, cosine]]; for a question under the
    /// default strategy `question_strategy` and `question_lexical`, the
    /// question strategy's list; `late`: [[id, MaxSim]] of the hits late
    /// interaction judged in the hybrid search), for studying fusions offline
    #[arg(long)]
    pub lists: Option<PathBuf>,
    /// A report an earlier run saved (`--save`: another build or
    /// configuration, the same queries): each configuration that ran in both
    /// is compared with it per kind, now minus then, paired query by query,
    /// with the verdict "not worse" or "WORSE"
    #[arg(long)]
    pub baseline: Option<PathBuf>,
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
    lexical_lists: HashMap<(String, String), LexicalLine>,
    semantic_lists: HashMap<String, Vec<v1::Neighbor>>,
    /// Each query's tokens, as semantic-svc gave them with its list.
    query_tokens: HashMap<String, Option<v1::TokenRows>>,
}

/// A query's lexical list as lexical-svc answered it: the candidates, the
/// reference score, the term count, and the question strategy's list read
/// beside it for a question (with that strategy's name).
type LexicalLine = (
    Vec<v1::Candidate>,
    f64,
    u32,
    Option<(String, Vec<v1::Candidate>)>,
);

/// The `--strategies` name of the strategy a search gets when it names none
/// (the configured one, and the question strategy for questions).
pub const DEFAULT_STRATEGY: &str = "default";

/// A `--strategies` name as a request carries it.
fn on_wire(strategy: &str) -> &str {
    if strategy == DEFAULT_STRATEGY {
        ""
    } else {
        strategy
    }
}

impl Targets {
    /// A query's two channel lists, as the gateway would ask for them.
    async fn lists(
        &mut self,
        query: &Query,
        strategy: &str,
    ) -> Result<(LexicalLine, Vec<v1::Neighbor>), String> {
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
                    strategy: on_wire(strategy).to_string(),
                    // As the gateway asks, under the configured fusion.
                    question: strategy == DEFAULT_STRATEGY
                        && self.fusion.question_confidence > 0.0
                        && trine_core::fusion::is_question(query.query.trim()),
                })
                .await
                .map_err(|s| format!("lexical: {:?}: {}", s.code(), s.message()))?
                .into_inner();
            self.lexical_lists.insert(
                key.clone(),
                (
                    answer.candidates,
                    answer.reference_score,
                    answer.terms,
                    (!answer.question_strategy.is_empty())
                        .then_some((answer.question_strategy, answer.question_candidates)),
                ),
            );
        }
        if !self.semantic_lists.contains_key(&query.qid) {
            let answer = self
                .semantic
                .nearest(v1::NearestRequest {
                    query: query.query.clone(),
                    filters: Some(filters),
                    cap: 0,
                    tokens: true,
                })
                .await
                .map_err(|s| format!("semantic: {:?}: {}", s.code(), s.message()))?
                .into_inner();
            self.semantic_lists
                .insert(query.qid.clone(), answer.neighbors);
            self.query_tokens
                .insert(query.qid.clone(), answer.query_tokens);
        }
        Ok((
            self.lexical_lists[&key].clone(),
            self.semantic_lists[&query.qid].clone(),
        ))
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
                strategy: on_wire(strategy).to_string(),
                no_verbatim: *no_verbatim,
                weights: *weights,
                fusion: None,
                max_chars: 0,
                min_score: 0.0,
            };
            searched(targets, request).await
        }
        Runner::Fused {
            strategy,
            weights,
            fusion,
        } => {
            fused(
                targets,
                query,
                strategy,
                (*weights, fusion.as_ref()),
                args.depth,
            )
            .await
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

/// One search through the gateway; its failure as the status said it.
async fn search(
    targets: &mut Targets,
    request: SearchRequest,
) -> Result<v1::SearchResponse, String> {
    targets
        .client
        .search(request)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| format!("{:?}: {}", s.code(), s.message()))
}

/// The hits' ids of a search through the gateway; a degraded answer is an
/// error.
async fn searched(targets: &mut Targets, request: SearchRequest) -> Result<Vec<String>, String> {
    let response = search(targets, request).await?;
    if response.degraded {
        return Err(format!(
            "degraded answer: {}",
            response.degraded_reasons.join("; ")
        ));
    }
    Ok(response.hits.into_iter().map(|h| h.id).collect())
}

/// The hits' ids of a hybrid answer fused here from the query's channel
/// lists under `strategy`, with these weights and fusion options.
async fn fused(
    targets: &mut Targets,
    query: &Query,
    strategy: &str,
    (weights, fusion): (Option<v1::ListWeights>, Option<&v1::FusionOptions>),
    depth: usize,
) -> Result<Vec<String>, String> {
    let ((mut lexical, mut lexical_reference, terms, asked), semantic) =
        targets.lists(query, strategy).await?;
    // As the gateway: a question, under a fusion that names neither
    // a method nor weights, is fused from the question strategy's
    // list as a question where its dense list is flat, and has that
    // list's one-call picks spread in where it stands out.
    let mut base = targets.fusion;
    let settings = trine_api::fusion_from_wire(&base, weights.as_ref(), fusion)?;
    let cosines: Vec<f64> = semantic.iter().map(|n| n.score).collect();
    let mut spread = None;
    if let Some((_, list)) = asked
        && weights.is_none()
        && fusion.is_none_or(|f| f.method.is_empty())
    {
        if trine_core::fusion::as_question(&cosines, &settings) {
            lexical = list;
            lexical_reference = 0.0;
            base = base.for_questions();
        } else {
            spread = Some(list);
        }
    }
    let request = v1::FuseRequest {
        query: query.query.trim().to_string(),
        lexical,
        semantic,
        limit: u32::try_from(depth).unwrap_or(u32::MAX),
        weights,
        fusion: fusion.cloned(),
        lexical_reference,
        terms,
        question: spread.is_some(),
        question_lexical: spread.unwrap_or_default(),
    };
    let hits = trine_fusion::fuse_request(&request, &base, depth)?;
    let mut hits: Vec<trine_core::fusion::Fused> = hits
        .iter()
        .map(trine_api::fused_from_wire)
        .collect::<Result<_, _>>()?;
    // As the gateway: the first hits judged again by late interaction.
    let tokens = targets.query_tokens.get(&query.qid).cloned().flatten();
    if let Some(tokens) = tokens
        .filter(|_| settings.late_weight > 0.0 && trine_core::late::judged(query.query.trim()))
    {
        let tokens = trine_api::query_tokens_from_wire(&tokens)?;
        let scores = late_of(targets, query, tokens, &hits, settings.late_depth).await?;
        trine_core::late::rerank(
            &mut hits,
            &scores,
            settings.late_weight,
            settings.rrf_k,
            settings.late_depth,
        );
    }
    Ok(hits.into_iter().map(|h| h.id.to_string()).collect())
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
/// view at now, fused by Qdrant's RRF at [`NATIVE_RRF_K`], the hits read
/// with their memories in the same call (trine's search returns its hits'
/// records too: the gateway's `payload` stage).
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
        .query(
            trine_store::Query::native_hybrid(
                dense,
                lexical,
                &filter,
                NATIVE_PREFETCH,
                NATIVE_RRF_K,
                limit,
            )
            .with_payload(PayloadRead::Memory),
        )
        .await
        .map_err(trine_api::to_status)?;
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
    let saved = args.baseline.as_deref().map(baseline::load).transpose()?;
    if let Some(saved) = &saved {
        let names: Vec<String> = configurations.iter().map(|c| c.name.clone()).collect();
        baseline::check_before(saved, &names, &queries, args.k, args.depth)?;
    }
    let LocalMesh {
        mesh,
        store,
        embedder,
    } = local_mesh(config).await?;
    let fold = collection_fold(store.as_ref()).await?;
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
        query_tokens: HashMap::new(),
    };
    if let Some(path) = &args.lists {
        write_lists(&mut targets, &queries, (&args.strategies, args.depth), path).await?;
    }
    let mut reports = Vec::new();
    for configuration in &configurations {
        eprintln!("eval: {} …", configuration.name);
        reports.push(run_configuration(&mut targets, configuration, &queries, &args).await);
    }
    mesh.stop().await?;
    // Checked before the run: what can fail now is every configuration in
    // common having failed here, which the report itself shows.
    let against_baseline = match &saved {
        Some(saved) => baseline::against_baseline(&reports, saved, args.k, args.depth)
            .unwrap_or_else(|why| {
                eprintln!("eval: not compared with the baseline: {why}");
                Vec::new()
            }),
        None => Vec::new(),
    };
    let report = Report {
        k: args.k,
        depth: args.depth,
        queries: queries.len(),
        against_better: against_better(&reports, args.k),
        configurations: reports,
        baseline: args.baseline.as_ref().map(|p| p.display().to_string()),
        against_baseline,
    };
    print_report(&report, args.json, args.save.as_deref(), || {
        render(&report, args.ranks)
    })?;
    Ok(if report.configurations.iter().any(|c| c.error.is_some()) {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

/// The arguments of `trine eval --queries q.jsonl LINE` (the tests').
#[cfg(test)]
fn args(line: &str) -> Args {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    Cli::parse_from(format!("eval --queries q.jsonl {line}").split_whitespace()).args
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

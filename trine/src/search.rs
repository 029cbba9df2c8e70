//! `trine search QUERY`: in-process over the configured store (the mesh
//! started in this process, its gateway called without a socket), or
//! against a running gateway with `--endpoint`.

use std::process::ExitCode;

use serde_json::Value;
use trine_api::timestamp;
use trine_api::v1::{self, Filters, SearchRequest};
pub use trine_config::parse_mode;
use trine_core::model::parse_time;

use crate::{CmdResult, Config, local_mesh};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The query
    pub query: String,
    /// The tenant to search in
    #[arg(long, env = "TRINE_TENANT")]
    pub tenant: String,
    /// hybrid, semantic or lexical
    #[arg(long, default_value = "hybrid")]
    pub mode: String,
    /// Lexical strategy (default: the configured one)
    #[arg(long)]
    pub strategy: Option<String>,
    /// Hits to return
    #[arg(long, default_value_t = 8)]
    pub limit: u32,
    /// Only these projects (repeatable)
    #[arg(long = "project")]
    pub projects: Vec<String>,
    /// Only these kinds (repeatable)
    #[arg(long = "kind")]
    pub kinds: Vec<String>,
    /// Only sources starting with this
    #[arg(long)]
    pub source_prefix: Option<String>,
    /// Only the memories of this thread (a conversation or session id)
    #[arg(long)]
    pub thread: Option<String>,
    /// Created at or after this RFC 3339 time
    #[arg(long)]
    pub created_from: Option<String>,
    /// Created before this RFC 3339 time
    #[arg(long)]
    pub created_until: Option<String>,
    /// The validity view's time (default: now)
    #[arg(long)]
    pub valid_at: Option<String>,
    /// Leave out the verbatim evidence (the tier and the third list)
    #[arg(long)]
    pub no_verbatim: bool,
    /// At most this many characters of memory text in the answer (an
    /// agent's context budget): the hit that crosses it cut, the rest left out
    #[arg(long, default_value_t = 0)]
    pub max_chars: u32,
    /// Only the hits whose score (as printed) is at least this
    #[arg(long, default_value_t = 0.0)]
    pub min_score: f64,
    /// Fusion of this search: rrf, score or dbsf [default: the configured `[fusion]`]
    #[arg(long)]
    pub fusion: Option<String>,
    /// RRF's k (with --fusion rrf)
    #[arg(long)]
    pub rrf_k: Option<f64>,
    /// Score fusion's normalisation: fixed_floor, min_max or z_score
    #[arg(long)]
    pub normalization: Option<String>,
    /// The verbatim tier: on or off
    #[arg(long)]
    pub tier: Option<String>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Show each hit's place in each list and every stage's time
    #[arg(long)]
    pub explain: bool,
    /// A running gateway (e.g. http://127.0.0.1:50051) instead of in-process
    #[arg(long)]
    pub endpoint: Option<String>,
}

/// The search's fusion options from the flags; `None` when none is given.
fn fusion(args: &Args) -> Result<Option<v1::FusionOptions>, String> {
    if args.fusion.is_none()
        && args.rrf_k.is_none()
        && args.normalization.is_none()
        && args.tier.is_none()
    {
        return Ok(None);
    }
    let tier = match args.tier.as_deref() {
        None => None,
        Some("on") => Some(true),
        Some("off") => Some(false),
        Some(other) => return Err(format!("--tier {other:?}: use on or off")),
    };
    Ok(Some(v1::FusionOptions {
        method: args.fusion.clone().unwrap_or_default(),
        rrf_k: args.rrf_k.unwrap_or(0.0),
        normalization: args.normalization.clone().unwrap_or_default(),
        tier,
        ..v1::FusionOptions::default()
    }))
}

fn request(args: &Args) -> Result<SearchRequest, String> {
    let mode = parse_mode(&args.mode)?;
    let time = |field: &str, raw: &Option<String>| {
        parse_time(field, raw.as_deref()).map(|t| t.map(timestamp))
    };
    Ok(SearchRequest {
        query: args.query.clone(),
        filters: Some(Filters {
            tenant: args.tenant.clone(),
            projects: args.projects.clone(),
            kinds: args.kinds.clone(),
            source_prefix: args.source_prefix.clone().unwrap_or_default(),
            created_from: time("--created-from", &args.created_from)?,
            created_until: time("--created-until", &args.created_until)?,
            valid_at: time("--valid-at", &args.valid_at)?,
            thread: args.thread.clone().unwrap_or_default(),
        }),
        limit: args.limit,
        mode: mode as i32,
        strategy: args.strategy.clone().unwrap_or_default(),
        no_verbatim: args.no_verbatim,
        max_chars: args.max_chars,
        min_score: args.min_score,
        weights: None,
        fusion: fusion(args)?,
    })
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let request = request(&args)?;
    let response = match &args.endpoint {
        Some(endpoint) => {
            let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
            let key = config.api_key.as_deref();
            ask(trine_mesh::gateway_client(channel, key)?, request).await?
        }
        None => {
            let mesh = local_mesh(config).await?.mesh;
            let answer = ask(mesh.client()?, request).await;
            mesh.stop().await?;
            answer?
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&response))?);
    } else {
        print!("{}", render(&response, args.explain));
    }
    Ok(ExitCode::SUCCESS)
}

async fn ask(
    mut client: trine_mesh::GatewayClient,
    request: SearchRequest,
) -> Result<v1::SearchResponse, String> {
    client
        .search(request)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| format!("search failed ({:?}): {}", s.code(), s.message()))
}

/// The `--json` object: the same JSON as the gateway's `POST /v1/search`
/// answers (`trine_api::json::search_response_to_json`).
pub fn to_json(response: &v1::SearchResponse) -> Value {
    trine_api::json::search_response_to_json(response)
}

fn render(response: &v1::SearchResponse, explain: bool) -> String {
    let mut out = String::new();
    if response.hits.is_empty() {
        out.push_str("no hits\n");
    }
    for (i, hit) in response.hits.iter().enumerate() {
        let record = hit.record.clone().unwrap_or_default();
        let first_line: String = record
            .text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(100)
            .collect();
        out += &format!("{:>2}. {:.4}  {first_line}\n", i + 1, hit.score);
        let source = record.source.as_deref().unwrap_or("-");
        let thread = trine_api::json::thread_place(&record)
            .map(|place| format!("  {place}"))
            .unwrap_or_default();
        out += &format!(
            "    {}  [{}]  {source}{thread}\n",
            hit.id,
            hit.matched_by.join(", ")
        );
        if explain {
            let e = hit.explain.unwrap_or_default();
            let show = |name: &str, entry: &Option<v1::ListEntry>| match entry {
                Some(x) => format!("{name} #{} ({:.4} → {:.4})", x.rank, x.score, x.normalized),
                None => format!("{name} -"),
            };
            let late = e
                .late
                .map(|x| format!("  late #{} (MaxSim {:.4})", x.rank, x.score))
                .unwrap_or_default();
            out += &format!(
                "    {}  {}  {}  fused {:.4}{}{late}\n",
                show("lexical", &e.lexical),
                show("semantic", &e.semantic),
                show("verbatim", &e.verbatim),
                e.fused,
                if e.tier { "  [verbatim tier]" } else { "" }
            );
        }
    }
    if response.degraded {
        out += &format!("degraded: {}\n", response.degraded_reasons.join("; "));
    }
    if explain {
        let stages: Vec<String> = response
            .timings
            .iter()
            .map(|t| format!("{} {:.1} ms", t.stage, t.millis))
            .collect();
        out += &format!("timings: {}\n", stages.join(", "));
        out += &format!(
            "counts share: {:.3} of the search (budget {})\n",
            response.counts_share,
            trine_telemetry::metrics::COUNTS_BUDGET
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_explain_show_the_counts_share() {
        let response = v1::SearchResponse {
            counts_share: 0.25,
            ..v1::SearchResponse::default()
        };
        assert_eq!(to_json(&response)["counts_share"], json!(0.25));
        let text = render(&response, true);
        assert!(
            text.contains("counts share: 0.250 of the search (budget 0.1)"),
            "{text}"
        );
        assert!(!render(&response, false).contains("counts share"));
    }

    #[test]
    fn explain_shows_raw_normalised_and_fused_scores_and_the_tier() {
        let response = v1::SearchResponse {
            hits: vec![v1::Hit {
                id: "h".into(),
                score: 0.75,
                explain: Some(v1::Explain {
                    lexical: Some(v1::ListEntry {
                        rank: 2,
                        score: 5.0,
                        normalized: 0.5,
                    }),
                    semantic: None,
                    verbatim: Some(v1::ListEntry {
                        rank: 1,
                        score: 5.0,
                        normalized: 1.0,
                    }),
                    tier: true,
                    fused: 0.4,
                    late: Some(v1::ListEntry {
                        rank: 3,
                        score: 7.25,
                        normalized: 2.0 / 63.0,
                    }),
                }),
                ..v1::Hit::default()
            }],
            ..v1::SearchResponse::default()
        };
        let text = render(&response, true);
        assert!(text.contains(" 1. 0.7500"), "{text}");
        assert!(text.contains("lexical #2 (5.0000 → 0.5000)"), "{text}");
        assert!(text.contains("semantic -"), "{text}");
        assert!(text.contains("[verbatim tier]"), "{text}");
        assert!(text.contains("fused 0.4000"), "{text}");
        assert!(text.contains("late #3 (MaxSim 7.2500)"), "{text}");
        let json = to_json(&response);
        assert_eq!(
            json["hits"][0]["lists"]["lexical"]["normalized"],
            json!(0.5)
        );
        assert_eq!(json["hits"][0]["tier"], json!(true));
        assert_eq!(json["hits"][0]["fused"], json!(0.4));
        assert_eq!(json["hits"][0]["lists"]["late"]["rank"], json!(3));
    }
}

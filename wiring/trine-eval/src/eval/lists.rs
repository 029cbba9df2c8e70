//! `--lists`: each query's channel lists under each strategy, with the late
//! scores of its hybrid search, for studying fusions offline; and the late
//! interaction a `--fusion` run is judged by, as the gateway judges.

use super::*;

/// One query's channel lists under one strategy (`--lists`).
#[derive(Serialize)]
struct ListsLine<'a> {
    qid: &'a str,
    kind: Option<&'a str>,
    query: &'a str,
    gold: &'a [String],
    strategy: &'a str,
    reference: f64,
    /// The query's terms under the collection's fold (the lexical channel's).
    terms: u32,
    /// For a question, the question strategy's name and list, read beside
    /// the lexical list (fused from, as a question, when the dense list is
    /// flat).
    question_strategy: Option<&'a str>,
    question_lexical: Option<Vec<(&'a str, f64, bool)>>,
    lexical: Vec<(&'a str, f64, bool)>,
    semantic: Vec<(&'a str, f64)>,
    /// The MaxSim score of each hit late interaction judged in the hybrid
    /// search of this strategy (none: not judged).
    late: Vec<(String, f64)>,
}

/// Writes every query's channel lists under each strategy, one line each,
/// with the late scores of the hybrid search to `depth`.
pub(super) async fn write_lists(
    targets: &mut Targets,
    queries: &[Query],
    (strategies, depth): (&[String], usize),
    path: &std::path::Path,
) -> Result<(), String> {
    let mut out = String::new();
    for query in queries {
        for strategy in strategies {
            let ((lexical, reference, terms, asked), semantic) =
                targets.lists(query, strategy).await?;
            let late = late_scores(targets, query, strategy, depth).await?;
            let line = ListsLine {
                late,
                terms,
                question_strategy: asked.as_ref().map(|(name, _)| name.as_str()),
                question_lexical: asked.as_ref().map(|(_, list)| {
                    list.iter()
                        .map(|c| (c.id.as_str(), c.score, c.verbatim))
                        .collect()
                }),
                qid: &query.qid,
                kind: query.kind.as_deref(),
                query: &query.query,
                gold: &query.gold,
                strategy,
                reference,
                lexical: lexical
                    .iter()
                    .map(|c| (c.id.as_str(), c.score, c.verbatim))
                    .collect(),
                semantic: semantic.iter().map(|n| (n.id.as_str(), n.score)).collect(),
            };
            out.push_str(&serde_json::to_string(&line).map_err(|e| e.to_string())?);
            out.push('\n');
        }
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The hits late interaction judged in the hybrid search of `strategy`
/// through the gateway, each with its MaxSim score.
async fn late_scores(
    targets: &mut Targets,
    query: &Query,
    strategy: &str,
    depth: usize,
) -> Result<Vec<(String, f64)>, String> {
    let request = SearchRequest {
        query: query.query.clone(),
        filters: Some(Filters {
            tenant: query.tenant.clone(),
            ..Filters::default()
        }),
        limit: u32::try_from(depth).unwrap_or(u32::MAX),
        mode: v1::Mode::Hybrid as i32,
        strategy: on_wire(strategy).to_string(),
        ..SearchRequest::default()
    };
    let response = search(targets, request).await?;
    Ok(response
        .hits
        .into_iter()
        .filter_map(|h| Some((h.id, h.explain?.late?.score)))
        .collect())
}

/// The store's MaxSim of the query's tokens with each of the first `depth`
/// hits outside the tier, as the gateway's late stage asks it.
pub(super) async fn late_of(
    targets: &Targets,
    query: &Query,
    tokens: trine_core::late::Tokens,
    hits: &[trine_core::fusion::Fused],
    depth: usize,
) -> Result<HashMap<uuid::Uuid, f64>, String> {
    let ids = trine_core::late::scored_ids(hits, depth);
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let filter = trine_core::model::Filter::tenant(&query.tenant);
    let scored = targets
        .store
        .query(trine_store::Query::late(tokens, &ids, &filter))
        .await
        .map_err(|e| format!("late interaction: {e}"))?;
    Ok(scored
        .into_iter()
        .map(|h| (h.id, f64::from(h.score)))
        .collect())
}

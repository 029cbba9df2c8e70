//! The search's late interaction stage (docs/search.md, "Late
//! interaction"): the fused list's first hits judged again by MaxSim over
//! their tokens, which the store computes for the ids it is given.

use std::collections::HashMap;
use std::time::Instant;

use tracing::Instrument;
use trine_core::fusion::Fused;
use trine_core::{Stage, late};
use trine_store::Query;
use trine_telemetry::int;

use super::{CHANNELS_SHARE, Clock, Gathered, Searcher};
use crate::query::SearchQuery;

impl Searcher {
    /// `hits` judged again when the search asks for it ([`SearchQuery::late`])
    /// and semantic-svc gave the query's tokens, then cut to the search's
    /// limit. A store that fails or does not answer in time leaves the fused
    /// order, the answer degraded with the reason.
    pub(super) async fn late(
        &self,
        query: &SearchQuery,
        lists: &mut Gathered,
        mut hits: Vec<Fused>,
        clock: &Clock,
    ) -> Vec<Fused> {
        let tokens = lists
            .tokens
            .take()
            .filter(|t| query.late() && !t.is_empty());
        if let Some(tokens) = tokens {
            let began = Instant::now();
            match self.maxsim(query, tokens, &hits, clock).await {
                Ok(scores) => late::rerank(
                    &mut hits,
                    &scores,
                    query.fusion.late_weight,
                    query.fusion.rrf_k,
                    query.fusion.late_depth,
                ),
                Err(why) => lists
                    .reasons
                    .push(format!("late interaction: {why} (the fused order kept)")),
            }
            lists.timings.push((Stage::Late, began.elapsed()));
        }
        hits.truncate(query.limit);
        hits
    }

    /// The MaxSim score of each of the first `late_depth` hits outside the
    /// tier (one store query, within the search's filter and tenant).
    async fn maxsim(
        &self,
        query: &SearchQuery,
        tokens: late::Tokens,
        hits: &[Fused],
        clock: &Clock,
    ) -> Result<HashMap<uuid::Uuid, f64>, String> {
        let ids = late::scored_ids(hits, query.fusion.late_depth);
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let deadline = clock
            .within(self.config.channel_deadline, CHANNELS_SHARE)
            .map_err(|e| e.message)?;
        let read = self
            .store
            .query(Query::late(tokens, &ids, &query.filter))
            .instrument(tracing::info_span!("gateway.late", ids = int(ids.len())));
        let scored = tokio::time::timeout(deadline, read)
            .await
            .map_err(|_| {
                format!(
                    "the store did not answer within {} ms",
                    deadline.as_millis()
                )
            })?
            .map_err(|e| e.to_string())?;
        Ok(scored
            .into_iter()
            .map(|h| (h.id, f64::from(h.score)))
            .collect())
    }
}

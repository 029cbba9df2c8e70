//! semantic-svc: the semantic channel (`Semantic.Nearest`) and embeddings for
//! writes (`Semantic.Embed`). The query is embedded and the nearest `cap`
//! points within the same filters are read by cosine similarity.
#![forbid(unsafe_code)]

mod remote;
mod service;

use std::time::{Duration, Instant};
use trine_core::Stage;

use tracing::Instrument;
use trine_core::ErrorKind;
use trine_core::context::{self, Context, Near, Place};
use trine_core::model::{Filter, PayloadRead};
use trine_embed::{EmbedError, Embedder, Side, Tokens};
use trine_store::{Query, Store, StoreError};
use uuid::Uuid;

pub use remote::{EMBED_DEADLINE, RemoteEmbedder};
pub use service::{SemanticService, run};

/// The semantic channel's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticConfig {
    /// Neighbours read when a request does not say (docs/design.md §6: 256).
    pub cap: usize,
    /// The most neighbours a request may ask for.
    pub max_cap: usize,
    /// The most texts one Embed call may carry.
    pub max_embed: usize,
    /// The messages around the best hits ([`trine_core::context`]): a
    /// thread's message is ranked by its own similarity and its window's.
    pub context: Context,
    /// The language whose common words a query's tokens leave out (late
    /// interaction, [`trine_core::late`]; none: every word): the lexical
    /// channel's.
    pub language: Option<trine_core::Language>,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        Self {
            cap: 256,
            max_cap: 4096,
            max_embed: 1024,
            context: Context::channels().1,
            language: Some(trine_core::Language::English),
        }
    }
}

/// A failed semantic read.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SemanticError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Embed(e) => e.kind(),
            Self::Store(e) => e.kind(),
        }
    }
}

impl trine_core::Kinded for SemanticError {
    fn kind(&self) -> trine_core::ErrorKind {
        SemanticError::kind(self)
    }
}

/// The semantic list, nearest first, and what its stages took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nearest {
    pub list: Vec<(Uuid, f32)>,
    /// `semantic.embed`, `semantic.query`.
    pub timings: Vec<(Stage, Duration)>,
    /// The query's tokens, when asked for ([`Ask::tokens`]).
    pub tokens: Option<Tokens>,
}

/// What a nearest-neighbour read asks beyond the query: how many, the
/// messages around the best hits, and the query's tokens for late
/// interaction (`Some(language)`: leaving out that language's common words).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ask {
    pub cap: usize,
    pub context: Context,
    pub tokens: Option<Option<trine_core::Language>>,
}

/// Embeds `query` and reads the nearest `cap` points within `filter`, then
/// blends in the windows of the best of them that name a thread
/// ([`around`]).
pub async fn nearest(
    store: &dyn Store,
    embedder: &dyn Embedder,
    query: &str,
    filter: &Filter,
    ask: Ask,
) -> Result<Nearest, SemanticError> {
    let Ask { cap, context, .. } = ask;
    let started = Instant::now();
    let (vector, tokens) = embed_query(embedder, query, ask.tokens)
        .instrument(tracing::info_span!(
            "semantic.embed",
            embedder = embedder.name()
        ))
        .await?;
    let embed_took = started.elapsed();
    let started = Instant::now();
    let span = tracing::info_span!(
        "semantic.query",
        cap = trine_telemetry::int(cap),
        neighbors = tracing::field::Empty
    );
    let hits = store
        .query(Query::dense(vector.clone(), filter, cap))
        .instrument(span.clone())
        .await?;
    span.record("neighbors", trine_telemetry::int(hits.len()));
    let list: Vec<(Uuid, f32)> = hits.into_iter().map(|h| (h.id, h.score)).collect();
    let query_took = started.elapsed();
    let started = Instant::now();
    let (list, widened) = around(store, &vector, filter, list, cap, context)
        .instrument(tracing::info_span!("semantic.context"))
        .await?;
    let mut timings = vec![
        (Stage::SemanticEmbed, embed_took),
        (Stage::SemanticQuery, query_took),
    ];
    if widened {
        timings.push((Stage::SemanticContext, started.elapsed()));
    }
    Ok(Nearest {
        list,
        timings,
        tokens,
    })
}

/// The query's vector, and with `tokens` its tokens from the same pass.
async fn embed_query(
    embedder: &dyn Embedder,
    query: &str,
    tokens: Option<Option<trine_core::Language>>,
) -> Result<(Vec<f32>, Option<Tokens>), EmbedError> {
    let texts = [query.to_string()];
    let first = match tokens {
        Some(language) => embedder
            .embed_tokens(&texts, Side::Query(language))
            .await?
            .into_iter()
            .next()
            .map(|(v, t)| (v, Some(t))),
        None => embedder
            .embed(&texts)
            .await?
            .into_iter()
            .next()
            .map(|v| (v, None)),
    };
    first.ok_or_else(|| EmbedError::Inference("no vector for the query".to_string()))
}

/// `list` blended with the windows of its best hits
/// ([`trine_core::context::blend`]): the places of its best `context.top`
/// (one read by id), then every message of the
/// stretches around them with its similarity to `vector` (one query, within
/// `filter`); at most `cap`, and whether anything was read around.
async fn around(
    store: &dyn Store,
    vector: &[f32],
    filter: &Filter,
    list: Vec<(Uuid, f32)>,
    cap: usize,
    context: Context,
) -> Result<(Vec<(Uuid, f32)>, bool), StoreError> {
    if context.is_off() || list.is_empty() {
        return Ok((list, false));
    }
    let tops: Vec<Uuid> = list.iter().take(context.top).map(|(id, _)| *id).collect();
    // By id: cheaper than a filtered read on Edge, and the ids are the
    // search's own.
    let places: Vec<Place> = store
        .get(&tops)
        .await?
        .iter()
        .filter_map(Place::of)
        .collect();
    if places.is_empty() {
        return Ok((list, true));
    }
    let spans = context::spans(&places, context.window);
    let limit = context::read_limit(&spans);
    let within = Filter {
        spans: Some(spans),
        ..filter.clone()
    };
    let near: Vec<Near> = store
        .query(Query::dense(vector.to_vec(), &within, limit).with_payload(PayloadRead::Memory))
        .await?
        .into_iter()
        .filter_map(|h| {
            Some(Near {
                id: h.id,
                place: Place::of(h.memory.as_ref()?)?,
                similarity: f64::from(h.score),
            })
        })
        .collect();
    let own: Vec<(Uuid, f64)> = list.iter().map(|(id, s)| (*id, f64::from(*s))).collect();
    let blended = context::blend(&own, &places, &near, context)
        .into_iter()
        .take(cap)
        // A blend of similarities is one too: within f32's range.
        .map(|(id, s)| (id, s as f32))
        .collect();
    Ok((blended, true))
}

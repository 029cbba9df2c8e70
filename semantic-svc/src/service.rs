//! The `Semantic` gRPC service.

use std::sync::Arc;
use std::time::Instant;

use tonic::{Request, Response, Status};
use trine_api::v1;
use trine_api::v1::semantic_server::{Semantic, SemanticServer};
use trine_api::{
    cap_from_wire, filter_from_wire, invalid, timings_to_wire, to_status, tokens_to_wire,
};
use trine_core::Named;
use trine_core::Stage;
use trine_core::model::{MAX_QUERY_BYTES, check_query_bytes};
use trine_embed::{Embedder, Side};
use trine_store::Store;
use trine_telemetry::Metrics;

use crate::{Ask, SemanticConfig, nearest};

/// Serves the semantic channel over a store and an embedder.
#[derive(Clone)]
pub struct SemanticService {
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    config: SemanticConfig,
    metrics: Arc<Metrics>,
}

impl SemanticService {
    /// A service over `store`, with metrics of its own (store calls timed).
    pub fn new(store: Arc<dyn Store>, embedder: Arc<dyn Embedder>, config: SemanticConfig) -> Self {
        let metrics = Metrics::new("semantic-svc");
        Self {
            store: trine_store::instrumented(store, &metrics),
            embedder,
            config,
            metrics,
        }
    }

    /// The service's metrics, to serve on `/metrics`.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }
}

#[tonic::async_trait]
impl Semantic for SemanticService {
    #[tracing::instrument(
        name = "semantic.nearest",
        skip_all,
        fields(
            tenant = request.get_ref().filters.as_ref().map(|f| f.tenant.as_str()).unwrap_or(""),
            neighbors = tracing::field::Empty,
        )
    )]
    async fn nearest(
        &self,
        request: Request<v1::NearestRequest>,
    ) -> Result<Response<v1::NearestResponse>, Status> {
        let request = request.into_inner();
        if request.query.trim().is_empty() {
            return Err(invalid("query is empty"));
        }
        check_query_bytes(&request.query, MAX_QUERY_BYTES).map_err(invalid)?;
        let filter =
            filter_from_wire(request.filters.as_ref(), chrono::Utc::now()).map_err(invalid)?;
        let cap =
            cap_from_wire(request.cap, self.config.cap, self.config.max_cap).map_err(invalid)?;
        let started = Instant::now();
        let ask = Ask {
            cap,
            context: self.config.context,
            tokens: request.tokens.then_some(self.config.language),
        };
        let found = nearest(
            self.store.as_ref(),
            self.embedder.as_ref(),
            &request.query,
            &filter,
            ask,
        )
        .await
        .map_err(to_status)?;
        tracing::Span::current().record("neighbors", trine_telemetry::int(found.list.len()));
        for (stage, took) in &found.timings {
            self.metrics.stage(stage.name(), *took);
        }
        self.metrics
            .stage(Stage::Semantic.name(), started.elapsed());
        Ok(Response::new(v1::NearestResponse {
            neighbors: found
                .list
                .iter()
                .map(|(id, score)| v1::Neighbor {
                    id: id.to_string(),
                    score: f64::from(*score),
                })
                .collect(),
            timings: timings_to_wire(&found.timings),
            query_tokens: found.tokens.as_ref().map(tokens_to_wire),
        }))
    }

    #[tracing::instrument(name = "semantic.embed_texts", skip_all, fields(texts = trine_telemetry::int(request.get_ref().texts.len())))]
    async fn embed(
        &self,
        request: Request<v1::EmbedRequest>,
    ) -> Result<Response<v1::EmbedResponse>, Status> {
        let request = request.into_inner();
        let texts = request.texts;
        if texts.len() > self.config.max_embed {
            return Err(invalid(format!(
                "{} texts, more than the {} allowed in one call",
                texts.len(),
                self.config.max_embed
            )));
        }
        let side = side_from_wire(request.tokens, &request.language).map_err(invalid)?;
        let (vectors, tokens) = match side {
            None => (
                self.embedder.embed(&texts).await.map_err(to_status)?,
                Vec::new(),
            ),
            Some(side) => self
                .embedder
                .embed_tokens(&texts, side)
                .await
                .map_err(to_status)?
                .into_iter()
                .map(|(v, t)| (v, tokens_to_wire(&t)))
                .unzip(),
        };
        Ok(Response::new(v1::EmbedResponse {
            vectors: vectors
                .into_iter()
                .map(|values| v1::Vector { values })
                .collect(),
            embedder: self.embedder.name().to_string(),
            dim: u32::try_from(self.embedder.dim()).unwrap_or(u32::MAX),
            tokens,
        }))
    }
}

impl trine_api::server::Served for SemanticService {
    type Server = SemanticServer<SemanticService>;

    fn server(self) -> Self::Server {
        SemanticServer::new(self)
    }

    fn metrics(&self) -> Arc<Metrics> {
        SemanticService::metrics(self)
    }
}

/// The tokens an Embed call asks for: none, a memory's or a query's, each
/// leaving out `language`'s common words (empty: none).
fn side_from_wire(raw: i32, language: &str) -> Result<Option<Side>, String> {
    let language = if language.trim().is_empty() {
        None
    } else {
        Some(language.parse::<trine_core::Language>()?)
    };
    match v1::TokenSide::try_from(raw) {
        Ok(v1::TokenSide::None) => Ok(None),
        Ok(v1::TokenSide::Memory) => Ok(Some(Side::Memory(language))),
        Ok(v1::TokenSide::Query) => Ok(Some(Side::Query(language))),
        Err(_) => Err(format!("token side {raw}: give NONE, MEMORY or QUERY")),
    }
}

/// Serves the service on `listener` until `shutdown` resolves.
pub use trine_api::server::run;

//! An [`Embedder`] that asks semantic-svc (`Semantic.Embed`): how the gateway
//! embeds writes in the mesh, through the same `Writer` as `trine ingest`.

use async_trait::async_trait;
use tonic::transport::Channel;
use trine_api::v1::EmbedRequest;
use trine_api::v1::semantic_client::SemanticClient;
use trine_embed::{EmbedError, Embedder, Result};

/// Embeds through a semantic-svc peer. Name and dimension are the peer's.
#[derive(Clone)]
pub struct RemoteEmbedder {
    client: SemanticClient<Channel>,
    name: String,
    dim: usize,
}

impl RemoteEmbedder {
    /// Asks the peer once for its embedder's name and dimension.
    pub async fn connect(channel: Channel) -> Result<Self> {
        let mut client = SemanticClient::new(channel);
        let probe = client
            .embed(EmbedRequest {
                texts: vec!["probe".to_string()],
            })
            .await
            .map_err(|s| EmbedError::Inference(format!("semantic-svc: {}", s.message())))?
            .into_inner();
        Ok(Self {
            client,
            name: probe.embedder,
            dim: usize::try_from(probe.dim).unwrap_or(0),
        })
    }
}

#[async_trait]
impl Embedder for RemoteEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut client = self.client.clone();
        let response = client
            .embed(EmbedRequest {
                texts: texts.to_vec(),
            })
            .await
            .map_err(|s| EmbedError::Inference(format!("semantic-svc: {}", s.message())))?;
        Ok(response
            .into_inner()
            .vectors
            .into_iter()
            .map(|v| v.values)
            .collect())
    }
}

//! An [`Embedder`] that asks semantic-svc (`Semantic.Embed`): how the gateway
//! embeds writes in the mesh, through the same `Writer` as `trine ingest`.

use async_trait::async_trait;
use tonic::transport::Channel;
use trine_api::v1::semantic_client::SemanticClient;
use trine_api::v1::{EmbedRequest, EmbedResponse, TokenSide};
use trine_core::ErrorKind;
use trine_embed::{EmbedError, Embedder, MAX_BATCH, Result, Side, Tokens};

/// The longest an Embed call may take when its caller set no deadline: an
/// Upsert's largest batch (1,024 long texts) with MiniLM on two cores.
pub const EMBED_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// semantic-svc's error, keeping what its code says: the caller's mistakes
/// stay the caller's, a peer down stays UNAVAILABLE.
fn peer_error(s: tonic::Status) -> EmbedError {
    use tonic::Code;
    let kind = match s.code() {
        Code::InvalidArgument | Code::OutOfRange => ErrorKind::InvalidArgument,
        Code::FailedPrecondition => ErrorKind::FailedPrecondition,
        Code::Unavailable | Code::Cancelled => ErrorKind::Unavailable,
        Code::DeadlineExceeded => ErrorKind::DeadlineExceeded,
        Code::ResourceExhausted => ErrorKind::ResourceExhausted,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        _ => ErrorKind::Internal,
    };
    EmbedError::Peer {
        kind,
        message: format!("semantic-svc: {}", s.message()),
    }
}

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
        let mut client = SemanticClient::new(channel).max_decoding_message_size(16 << 20);
        let probe = client
            .embed(EmbedRequest {
                texts: vec!["probe".to_string()],
                ..EmbedRequest::default()
            })
            .await
            .map_err(peer_error)?
            .into_inner();
        Ok(Self {
            client,
            name: probe.embedder,
            dim: usize::try_from(probe.dim).unwrap_or(0),
        })
    }
}

impl RemoteEmbedder {
    /// One Embed call within what is left of the caller's deadline, at most
    /// [`EMBED_DEADLINE`]: sent as grpc-timeout and enforced here.
    async fn call(&self, texts: &[String], message: EmbedRequest) -> Result<EmbedResponse> {
        let mut client = self.client.clone();
        let deadline = trine_api::deadline::left(EMBED_DEADLINE);
        let mut request = tonic::Request::new(message);
        request.set_timeout(deadline);
        let response = tokio::time::timeout(deadline, client.embed(request))
            .await
            .map_err(|_| EmbedError::Peer {
                kind: ErrorKind::DeadlineExceeded,
                message: format!(
                    "semantic-svc did not embed {} texts within {} ms",
                    texts.len(),
                    deadline.as_millis()
                ),
            })?
            .map_err(peer_error)?;
        Ok(response.into_inner())
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
        let response = self
            .call(
                texts,
                EmbedRequest {
                    texts: texts.to_vec(),
                    ..EmbedRequest::default()
                },
            )
            .await?;
        Ok(response.vectors.into_iter().map(|v| v.values).collect())
    }

    /// In calls of at most [`MAX_BATCH`] texts: a batch's tokens stay well
    /// within a message (16 × 256 rows of 384 half floats: 3 MiB).
    async fn embed_tokens(&self, texts: &[String], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>> {
        let tokens = match side {
            Side::Memory(_) => TokenSide::Memory,
            Side::Query(_) => TokenSide::Query,
        };
        let language = side
            .language()
            .map(|l| l.name().to_string())
            .unwrap_or_default();
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_BATCH) {
            let request = EmbedRequest {
                texts: chunk.to_vec(),
                tokens: tokens as i32,
                language: language.clone(),
            };
            let response = self.call(chunk, request).await?;
            if response.tokens.len() != response.vectors.len() {
                return Err(EmbedError::Inference(format!(
                    "semantic-svc returned {} token lists for {} vectors",
                    response.tokens.len(),
                    response.vectors.len()
                )));
            }
            for (vector, rows) in response.vectors.into_iter().zip(&response.tokens) {
                let tokens = trine_api::tokens_from_wire(rows, trine_api::MAX_TEXT_TOKENS)
                    .map_err(|e| EmbedError::Inference(format!("semantic-svc's tokens: {e}")))?;
                out.push((vector.values, tokens));
            }
        }
        Ok(out)
    }
}

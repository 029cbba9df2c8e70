//! `trine mcp`: trine's memory as MCP tools over stdio (what an agent's
//! desktop app launches): one JSON-RPC message a line on stdin, each answer
//! a line on stdout, logs on stderr. The tools (`trine_gateway::mcp`) call a
//! running gateway (`--endpoint`, with `--api-key`), or the mesh this
//! process starts on the configured store.

use std::process::ExitCode;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tonic::{Status, async_trait};
use trine_api::v1;
use trine_gateway::mcp::{Backend, handle_line};
use trine_mesh::GatewayClient;

use crate::{CmdResult, Config, local_mesh};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A running gateway's gRPC address (e.g. http://127.0.0.1:50051);
    /// without it the mesh runs in this process on `--data` / `--qdrant`
    #[arg(long, env = "TRINE_ENDPOINT")]
    pub endpoint: Option<String>,
}

/// The gateway over gRPC, with the process's API key on every call.
struct Remote(GatewayClient);

#[async_trait]
impl Backend for Remote {
    async fn search(&self, r: v1::SearchRequest) -> Result<v1::SearchResponse, Status> {
        self.0
            .clone()
            .search(r)
            .await
            .map(tonic::Response::into_inner)
    }

    async fn upsert(&self, r: v1::UpsertRequest) -> Result<v1::UpsertResponse, Status> {
        self.0
            .clone()
            .upsert(r)
            .await
            .map(tonic::Response::into_inner)
    }

    async fn get(&self, r: v1::GetRequest) -> Result<v1::GetResponse, Status> {
        self.0.clone().get(r).await.map(tonic::Response::into_inner)
    }

    async fn forget(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        self.0
            .clone()
            .forget(r)
            .await
            .map(tonic::Response::into_inner)
    }

    async fn restore(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        self.0
            .clone()
            .restore(r)
            .await
            .map(tonic::Response::into_inner)
    }
}

/// Answers stdin's messages until it ends.
async fn session(backend: &dyn Backend) -> Result<(), String> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Some(line) = lines
        .next_line()
        .await
        .map_err(|e| format!("cannot read stdin: {e}"))?
    {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(answer) = handle_line(backend, &line).await {
            out.write_all(answer.as_bytes())
                .await
                .and(out.write_all(b"\n").await)
                .and(out.flush().await)
                .map_err(|e| format!("cannot write stdout: {e}"))?;
        }
    }
    Ok(())
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    match &args.endpoint {
        Some(endpoint) => {
            let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
            let client = trine_mesh::gateway_client(channel, config.api_key.as_deref())?;
            session(&Remote(client)).await?;
        }
        None => {
            let mesh = local_mesh(config).await?.mesh;
            let client = mesh.client()?;
            let ended = session(&Remote(client)).await;
            mesh.stop().await?;
            ended?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `trine get|forget|restore|delete ID... --tenant T`: the memory verbs for
//! operators, through a gateway (`--endpoint`) or the mesh in-process. Get
//! prints each memory as JSON, one a line; the others say which ids they
//! changed.

use std::process::ExitCode;

use trine_api::v1;
use trine_mesh::GatewayClient;

use crate::{CmdResult, Config, local_mesh};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memories' ids
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// Whose memories
    #[arg(long)]
    pub tenant: String,
    /// A running gateway's gRPC address; without it the mesh runs in this
    /// process on `--data` / `--qdrant`
    #[arg(long, env = "TRINE_ENDPOINT")]
    pub endpoint: Option<String>,
}

/// Which verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Forget,
    Restore,
    Delete,
}

async fn call(client: &mut GatewayClient, verb: Verb, args: &Args) -> Result<bool, String> {
    let (tenant, ids) = (args.tenant.clone(), args.ids.clone());
    let failed = |s: tonic::Status| format!("{:?}: {}", s.code(), s.message());
    let (done, asked) = match verb {
        Verb::Get => {
            let answer = client
                .get(v1::GetRequest { tenant, ids })
                .await
                .map_err(failed)?
                .into_inner();
            for record in &answer.records {
                println!("{}", trine_api::json::record_to_json(record));
            }
            (answer.records.len(), args.ids.len())
        }
        Verb::Forget | Verb::Restore => {
            let request = v1::ValidityRequest { tenant, ids };
            let answer = if verb == Verb::Forget {
                client.forget(request).await
            } else {
                client.restore(request).await
            }
            .map_err(failed)?
            .into_inner();
            let what = if verb == Verb::Forget {
                "forgot"
            } else {
                "restored"
            };
            for id in &answer.ids {
                println!("{what} {id}");
            }
            (answer.ids.len(), args.ids.len())
        }
        Verb::Delete => {
            let answer = client
                .delete(v1::DeleteRequest { tenant, ids })
                .await
                .map_err(failed)?
                .into_inner();
            println!("deleted {}", answer.deleted);
            (usize::try_from(answer.deleted).unwrap_or(0), args.ids.len())
        }
    };
    if done < asked {
        eprintln!(
            "{} of the {asked} ids are not memories of tenant {}",
            asked - done,
            args.tenant
        );
    }
    Ok(done == asked)
}

pub async fn run(config: &Config, verb: Verb, args: Args) -> CmdResult {
    let all = match &args.endpoint {
        Some(endpoint) => {
            let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
            let mut client = trine_mesh::gateway_client(channel, config.api_key.as_deref())?;
            call(&mut client, verb, &args).await?
        }
        None => {
            let mesh = local_mesh(config).await?.mesh;
            let mut client = mesh.client()?;
            let done = call(&mut client, verb, &args).await;
            mesh.stop().await?;
            done?
        }
    };
    // Some ids not found: exit 3, as ingest does for lines it skipped.
    Ok(if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

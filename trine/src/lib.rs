//! The `trine` command line: each subcommand is a small function over the
//! library crates. `main.rs` only parses and calls [`main`]. The
//! configuration and what opens it are `trine-config`'s (re-exported here:
//! [`Config`], [`config`]); `eval`, `bench` and `refusals` are
//! `trine-eval`'s.
#![forbid(unsafe_code)]

mod backfill;
mod backup;
mod doctor;
mod ingest;
mod keys;
mod mcp;
mod memory;
mod model;
mod progress;
pub mod search;
mod serve;
mod text_index;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use trine_eval::{bench, eval, refusals};

pub use trine_config::config;
pub use trine_config::{
    CmdResult, Config, EXIT_PARTIAL, Overrides, connect_server, load_embedder, open_store,
};
use trine_config::{collection_fold, local_mesh};

/// Hybrid search for agent memory, stored in Qdrant.
#[derive(Debug, Parser)]
#[command(name = "trine", version, about)]
pub struct Cli {
    #[command(flatten)]
    pub overrides: Overrides,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Store memories from a JSON-lines file (`-` for standard input);
    /// `upsert` is the same
    #[command(alias = "upsert")]
    Ingest(ingest::Args),
    /// Print memories by id, as JSON lines
    Get(memory::Args),
    /// Invalidate memories: searches leave them out from now on; kept, and
    /// `restore` brings them back
    Forget(memory::Args),
    /// Make forgotten memories valid again
    Restore(memory::Args),
    /// Delete memories for good
    Delete(memory::Args),
    /// Report the collection: schema, indexes, embedder, point count
    Doctor(doctor::Args),
    /// Create the full-text index on the text field (idempotent, never
    /// destructive), or upgrade it to fold diacritics (`--ascii-folding`)
    TextIndex(text_index::Args),
    /// Back up the collection and the keys file, restore a backup, check one
    #[command(subcommand)]
    Backup(backup::Command),
    /// Upgrade a collection written by an earlier trine to this one's
    /// layout version, in place (`trine doctor` says when it is needed)
    Upgrade,
    /// Model tools
    #[command(subcommand)]
    Model(model::Command),
    /// API keys of the gateway: add, list, revoke
    #[command(subcommand)]
    Keys(keys::Command),
    /// Run the services: all four in one process, or one role
    Serve(serve::Args),
    /// Serve trine's memory as MCP tools over stdio (for an agent's MCP
    /// configuration): search, remember, get, forget, restore, health
    Mcp(mcp::Args),
    /// Search memories: in-process, or against a running gateway (--endpoint)
    Search(search::Args),
    /// Give every point its sparse encoding (for the `sparse` strategy)
    SparseBackfill(backfill::Args),
    /// Load a gateway with searches for a bounded time and print the latencies
    Bench(bench::Args),
    /// Rank quality of each configuration on queries with known answers
    Eval(eval::Args),
    /// Time the refusal of hostile requests (a 4 MiB query, a 10,000-project
    /// filter, metadata bombs, 100,000 ids): decoding and the gateway's
    /// handler, in-process, then the code over gRPC
    Refusals(refusals::Args),
    /// Ask a server's gRPC health service; exit 0 when it is SERVING (for
    /// container health checks)
    Health(HealthArgs),
}

#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// The server, `host:port` or a URL
    pub addr: String,
    /// One service's status (e.g. trine.v1.Memory) instead of the server's
    #[arg(long, default_value = "")]
    pub service: String,
}

/// Threads of the blocking pool (tokio's default is 512).
pub const MAX_BLOCKING_THREADS: usize = 64;

/// Runs a parsed command line and says how it ended.
pub fn main(cli: Cli) -> ExitCode {
    let config = match Config::load(&cli.overrides) {
        Ok(config) => config,
        Err(e) => return fail(&e),
    };
    // Store and embedder calls run on the blocking pool: bounded, so that a
    // burst of calls (itself bounded by each server's in-flight limit)
    // queues for a thread instead of starting hundreds.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&e),
    };
    // The OTLP exporter's channel lives on the runtime: start it there, and
    // flush it (drop the guard) before the runtime ends.
    let telemetry = {
        let _entered = runtime.enter();
        // A person reads the commands' warnings; a collector, a service's.
        let format = cli.overrides.log_format.unwrap_or(match cli.command {
            Command::Serve(_) => trine_telemetry::LogFormat::Auto,
            _ => trine_telemetry::LogFormat::Plain,
        });
        trine_telemetry::init(&trine_telemetry::Settings {
            service: service_name(&cli.command).to_string(),
            filter: config.log.clone(),
            otlp_endpoint: config.otlp_endpoint.clone(),
            format,
        })
    };
    let telemetry = match telemetry {
        Ok(telemetry) => telemetry,
        Err(e) => return fail(&e),
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Ingest(args) => ingest::run(&config, args).await,
            Command::Doctor(args) => doctor::run(&config, args).await,
            Command::TextIndex(args) => text_index::run(&config, args).await,
            Command::Backup(command) => backup::run(&config, command).await,
            Command::Upgrade => backup::upgrade(&config).await,
            Command::Model(command) => model::run(&config, command).await,
            Command::Keys(command) => keys::run(&config, command),
            Command::Serve(args) => serve::run(&config, args).await,
            Command::Mcp(args) => mcp::run(&config, args).await,
            Command::Get(args) => memory::run(&config, memory::Verb::Get, args).await,
            Command::Forget(args) => memory::run(&config, memory::Verb::Forget, args).await,
            Command::Restore(args) => memory::run(&config, memory::Verb::Restore, args).await,
            Command::Delete(args) => memory::run(&config, memory::Verb::Delete, args).await,
            Command::Search(args) => search::run(&config, args).await,
            Command::SparseBackfill(args) => backfill::run(&config, args).await,
            Command::Bench(args) => bench::run(&config, args).await,
            Command::Eval(args) => eval::run(&config, args).await,
            Command::Health(args) => health(&config, args).await,
            Command::Refusals(args) => refusals::run(args).await,
        }
    });
    {
        let _entered = runtime.enter();
        drop(telemetry);
    }
    match outcome {
        Ok(code) => code,
        Err(e) => fail(e.as_ref()),
    }
}

/// The `service.name` of exported spans: the role a `serve` runs, else `trine`.
fn service_name(command: &Command) -> &'static str {
    match command {
        Command::Serve(args) => args.role.service_name(),
        _ => "trine",
    }
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

async fn health(config: &Config, args: HealthArgs) -> CmdResult {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut client = HealthClient::new(trine_mesh::channel_tls(&args.addr, config.tls.client()?)?);
    let asked = HealthCheckRequest {
        service: args.service.clone(),
    };
    let answer = tokio::time::timeout(std::time::Duration::from_secs(5), client.check(asked))
        .await
        .map_err(|_| format!("{}: no health answer within 5 s", args.addr))?
        .map_err(|s| format!("{}: {:?}: {}", args.addr, s.code(), s.message()))?;
    let status = answer.into_inner().status();
    println!("{}", status.as_str_name());
    Ok(if status == ServingStatus::Serving {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

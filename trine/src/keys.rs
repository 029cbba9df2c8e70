//! `trine keys add|list|revoke`: the API keys a gateway checks calls
//! against, in the keys file (`--keys-file`, default `DATA/keys.json`). A
//! running gateway rereads the file when it changes.

use std::process::ExitCode;
use trine_core::Named;

use trine_gateway::auth::{KeyFile, Scope};

use crate::{CmdResult, Config};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Make a key and print it (once: only its hash is kept)
    Add {
        /// What the key is for, shown in lists
        #[arg(long, default_value = "")]
        name: String,
        /// A tenant the key holds (repeat for several; `*`: every tenant)
        #[arg(long = "tenant", required = true)]
        tenants: Vec<String>,
        /// read, write, admin (comma-separated)
        #[arg(long = "scope", value_delimiter = ',', required = true)]
        scopes: Vec<String>,
    },
    /// The keys: id, name, scopes, tenants, made, revoked
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its id: refused from the gateway's next call
    Revoke { id: String },
}

pub fn run(config: &Config, command: Command) -> CmdResult {
    let path = config.keys_path();
    let mut file = KeyFile::load(&path)?;
    match command {
        Command::Add {
            name,
            tenants,
            scopes,
        } => {
            let scopes = scopes
                .iter()
                .map(|s| Scope::parse(s))
                .collect::<Result<Vec<_>, _>>()?;
            let (key, record) = file.add(&name, scopes, tenants)?;
            file.save(&path)?;
            eprintln!(
                "added key {} to {} — it is shown once, keep it:",
                record.id,
                path.display()
            );
            println!("{key}");
        }
        Command::List { json } => {
            if json {
                println!("{}", serde_json::to_string_pretty(&file.keys)?);
            } else {
                println!(
                    "{:<9} {:<16} {:<18} {:<24} {:<21} revoked",
                    "id", "name", "scopes", "tenants", "made"
                );
                for k in &file.keys {
                    let scopes: Vec<&str> = k.scopes.iter().map(|s| s.name()).collect();
                    println!(
                        "{:<9} {:<16} {:<18} {:<24} {:<21} {}",
                        k.id,
                        k.name,
                        scopes.join(","),
                        k.tenants.join(","),
                        k.created_at.format("%Y-%m-%d %H:%M:%S"),
                        k.revoked_at.map_or_else(
                            || "-".to_string(),
                            |t| t.format("%Y-%m-%d %H:%M:%S").to_string()
                        )
                    );
                }
            }
        }
        Command::Revoke { id } => {
            let revoked = file.revoke(&id)?.clone();
            file.save(&path)?;
            println!(
                "revoked key {} ({}) in {}",
                revoked.id,
                revoked.name,
                path.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `trine backup`: `create` a backup of the collection — embedded, a
//! consistent copy of its directory; over a Qdrant server, its snapshot on
//! every node — with the keys file beside it; `restore` one (the services
//! stopped; the collection it replaces kept aside on the embedded store);
//! `check` one (every file against its manifest). `trine upgrade` moves a
//! collection of an earlier layout version to this trine's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use trine_api::v1;
use trine_store::backup;
use trine_store::{EdgeStore, SCHEMA};

use crate::{CmdResult, Config, connect_server, open_store};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Back the collection up into a new directory, while trine serves:
    /// embedded, a consistent copy of the collection (writes wait while it
    /// is copied); over a Qdrant server (--qdrant, every node named), its
    /// snapshot on each node. The keys file is copied beside it
    Create(CreateArgs),
    /// Restore a backup as the collection, with the services stopped:
    /// embedded, the collection it replaces is moved aside
    /// (DATA/COLLECTION.replaced-TIME), never deleted; over a server, each
    /// node's snapshot is uploaded back to it. A backup of another layout
    /// version is refused
    Restore(RestoreArgs),
    /// Check a backup: its manifest, and every file against it
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The new directory (with --endpoint: a name, written under the
    /// server's --backup-dir)
    pub dir: String,
    /// A running gateway's gRPC address: it takes the backup while it
    /// serves (the embedded store is held by it); needs an admin key of
    /// every tenant
    #[arg(long, env = "TRINE_ENDPOINT")]
    pub endpoint: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The backup's directory
    pub dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The backup's directory
    pub dir: PathBuf,
}

pub async fn run(config: &Config, command: Command) -> CmdResult {
    match command {
        Command::Create(args) => create(config, args).await,
        Command::Restore(args) => restore(config, &args.dir).await,
        Command::Check(args) => {
            let manifest = backup::open(&args.dir)?;
            print_manifest(&args.dir, &manifest);
            println!("ok: every file matches the manifest");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_manifest(dir: &Path, m: &backup::Manifest) {
    let bytes: u64 = m.files.iter().map(|f| f.bytes).sum();
    println!(
        "backup {}: collection `{}` ({}), {} points, layout version {}, taken {} by trine {}; {} files, {bytes} bytes{}",
        dir.display(),
        m.collection,
        m.backend,
        m.points,
        m.schema,
        m.taken_at,
        m.trine,
        m.files.len(),
        if m.files.iter().any(|f| f.path == backup::KEYS) {
            "; the keys file"
        } else {
            ""
        }
    );
}

async fn create(config: &Config, args: CreateArgs) -> CmdResult {
    if let Some(endpoint) = &args.endpoint {
        let channel = trine_mesh::channel_tls(endpoint, config.tls.client()?)?;
        let mut client = trine_mesh::gateway_client(channel, config.api_key.as_deref())?;
        let answer = client
            .backup(v1::BackupRequest {
                name: args.dir.clone(),
            })
            .await
            .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
            .into_inner();
        println!(
            "backup {} (on the server): collection `{}`, {} points, layout version {}; {} files, {} bytes",
            answer.path,
            answer.collection,
            answer.points,
            answer.schema,
            answer.files,
            answer.bytes
        );
        return Ok(ExitCode::SUCCESS);
    }
    let store = open_store(config).await?;
    let dir = PathBuf::from(&args.dir);
    let keys = config.keys_path();
    let manifest = trine_gateway::backups::take(store.as_ref(), &dir, Some(keys.as_path())).await?;
    print_manifest(&dir, &manifest);
    Ok(ExitCode::SUCCESS)
}

async fn restore(config: &Config, dir: &Path) -> CmdResult {
    let manifest = backup::open(dir)?;
    print_manifest(dir, &manifest);
    match &config.qdrant {
        Some(_) => {
            let store = connect_server(config).await?;
            let points = store.restore(dir).await?;
            println!(
                "restored `{}` on the Qdrant server: {points} points (a lexical-svc keeping counts rebuilds them)",
                config.collection
            );
        }
        None => {
            let (data, collection, from) = (
                config.data.clone(),
                config.collection.clone(),
                dir.to_path_buf(),
            );
            let restored =
                tokio::task::spawn_blocking(move || EdgeStore::restore(&data, &collection, &from))
                    .await??;
            println!(
                "restored `{}` in {}: {} points",
                config.collection,
                config.data.display(),
                restored.points
            );
            if let Some(aside) = restored.replaced {
                println!(
                    "the collection it replaced is kept at {} (delete it when you no longer need it)",
                    aside.display()
                );
            }
        }
    }
    let keys = dir.join(backup::KEYS);
    if keys.is_file() {
        println!("{}", restore_keys(&keys, &config.keys_path())?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The backup's keys file put where the gateway reads keys, owner-only, when
/// none is there; the current one is never replaced (keys revoked since the
/// backup stay revoked). Says which it did.
fn restore_keys(from: &Path, current: &Path) -> std::io::Result<String> {
    if current.exists() {
        return Ok(format!(
            "kept the current keys file {}; the backup's is {}",
            current.display(),
            from.display()
        ));
    }
    if let Some(parent) = current.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(from, current)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(current, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(format!("restored the keys file {}", current.display()))
}

/// `trine upgrade`: records this trine's layout version in a collection of
/// an earlier one, in place.
pub async fn upgrade(config: &Config) -> CmdResult {
    let store = open_store(config).await?;
    match store.upgrade().await? {
        None => println!(
            "collection `{}` is at layout version {SCHEMA}, this trine's: nothing to do",
            config.collection
        ),
        Some(from) => {
            println!(
                "collection `{}` upgraded from layout version {from} to {SCHEMA}:",
                config.collection
            );
            for (version, change) in trine_store::SCHEMA_CHANGES {
                if version > from {
                    println!("  {version}: {change}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_keeps_the_current_keys_file() {
        let dir = tempfile::tempdir().unwrap();
        let (backed_up, current) = (
            dir.path().join("backup-keys.json"),
            dir.path().join("keys/keys.json"),
        );
        std::fs::write(&backed_up, "{\"keys\": [\"old\"]}").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&backed_up, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        // None there: the backup's, owner-only.
        let said = restore_keys(&backed_up, &current).unwrap();
        assert!(said.starts_with("restored the keys file"), "{said}");
        assert_eq!(
            std::fs::read(&current).unwrap(),
            std::fs::read(&backed_up).unwrap()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&current).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // One there: kept as it is.
        std::fs::write(&current, "{\"keys\": []}").unwrap();
        let said = restore_keys(&backed_up, &current).unwrap();
        assert!(said.starts_with("kept the current keys file"), "{said}");
        assert_eq!(std::fs::read_to_string(&current).unwrap(), "{\"keys\": []}");
    }
}

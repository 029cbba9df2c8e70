//! Backup and restore of an Edge collection: a consistent copy of its
//! directory taken while it serves (writes and optimization wait while the
//! files are copied; searches go on), and a restore into a data directory
//! no process holds, the collection it replaces kept beside it.

use chrono::Utc;

use super::*;
use crate::backup::{self as b, Manifest};

/// Where a backup keeps the copy of an Edge collection named `name`.
fn copy_dir(name: &str) -> String {
    format!("edge/{name}")
}

/// Copies the open collection into `dir` (prepared, empty) with writes and
/// optimization held; the manifest of what was copied (not yet sealed).
pub(super) fn take(open: &Open, inner: &Inner, dir: &Path) -> Result<Manifest> {
    let _writes = open.kept.writing();
    let _maintenance = locked(&open.maintenance);
    open.shard.flush().map_err(backend)?;
    let info = inner.info(open)?;
    let sub = copy_dir(&inner.name);
    b::copy_dir(&inner.dir, &dir.join(&sub), &[LOCK_FILE, NEW_SHARD_DIR])?;
    Ok(Manifest {
        format: b::FORMAT,
        trine: env!("CARGO_PKG_VERSION").to_string(),
        schema: info.schema,
        backend: "edge".into(),
        collection: inner.name.clone(),
        embedder: info.embedder,
        points: info.points,
        taken_at: Utc::now().to_rfc3339(),
        files: b::list(dir, &sub)?,
        nodes: Vec::new(),
    })
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Points in the restored collection (those of the manifest).
    pub points: u64,
    /// Where the collection it replaced was moved, when there was one.
    pub replaced: Option<PathBuf>,
}

impl EdgeStore {
    /// Restores the backup in `backup` (checked: [`crate::backup::open`])
    /// as the collection `collection` under `data_dir`. A collection there
    /// is moved aside (`<collection>.replaced-<time>`), never deleted; one
    /// that a process holds is refused ([`StoreError::Locked`]). The
    /// restored collection is opened and its points counted against the
    /// manifest before this returns.
    pub fn restore(data_dir: &Path, collection: &str, backup: &Path) -> Result<Restored> {
        check_name(collection)?;
        let manifest = b::open(backup)?;
        if manifest.backend != "edge" {
            return Err(StoreError::invalid(
                "backup",
                format!(
                    "it is of a Qdrant server's collection ({}): restore it with --qdrant",
                    manifest.nodes.join(", ")
                ),
            ));
        }
        let source = b::within(backup, &copy_dir(&manifest.collection))?;
        let target = data_dir.join(collection);
        let staging = data_dir.join(format!("{collection}.restoring"));
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        b::copy_dir(&source, &staging, &[])?;
        let replaced = if target.exists() {
            // Held while it is moved: no process has it open.
            let held = lock(&target)?;
            let aside = data_dir.join(format!(
                "{collection}.replaced-{}",
                Utc::now().format("%Y%m%dT%H%M%S%.3f")
            ));
            fs::rename(&target, &aside).map_err(io(&target))?;
            drop(held);
            Some(aside)
        } else {
            None
        };
        fs::rename(&staging, &target).map_err(io(&target))?;
        schema::sync_dir(data_dir)?;
        let store = EdgeStore::open(data_dir, collection)?;
        let points = store
            .inner
            .opened()
            .and_then(|open| open.count(None))
            .unwrap_or(0);
        if points != manifest.points {
            return Err(StoreError::Backend(format!(
                "the restored collection holds {points} points, the backup {}: the copy is not whole",
                manifest.points
            )));
        }
        Ok(Restored { points, replaced })
    }
}

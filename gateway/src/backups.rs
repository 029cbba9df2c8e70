//! Backups taken while the gateway serves (`Memory.Backup`): a new
//! directory under the server's backup directory, named by the caller, with
//! the store's copy of the collection, the keys file beside it, and the
//! manifest ([`trine_store::backup`]).

use std::path::{Path, PathBuf};

use trine_api::codec::MAX_BACKUP_NAME_BYTES;
use trine_store::Store;
use trine_store::backup::{self, Manifest};

/// Where a gateway writes backups, and the keys file it copies into each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backups {
    pub dir: PathBuf,
    /// The gateway's keys file, when it checks keys.
    pub keys: Option<PathBuf>,
}

/// Refuses a backup name that is not a plain name.
pub fn check_name(name: &str) -> Result<(), String> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if name.is_empty() || name.len() > MAX_BACKUP_NAME_BYTES || !plain || name.starts_with('.') {
        return Err(format!(
            "backup name {name:?}: give 1 to {MAX_BACKUP_NAME_BYTES} letters, digits, '.', '-' or '_', not starting with '.'"
        ));
    }
    Ok(())
}

/// A backup of `store` into `dir` (new or empty), with the keys file
/// `keys` copied beside it when there is one; sealed with its manifest.
pub async fn take(
    store: &dyn Store,
    dir: &Path,
    keys: Option<&Path>,
) -> Result<Manifest, trine_store::StoreError> {
    backup::prepare(dir)?;
    let manifest = store.backup(dir).await?;
    if let Some(keys) = keys.filter(|k| k.is_file()) {
        let to = dir.join(backup::KEYS);
        std::fs::copy(keys, &to)
            .map_err(|source| trine_store::StoreError::Io { path: to, source })?;
    }
    backup::seal(dir, manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_taken() {
        for ok in ["nightly", "2026-12-05T00.30", "a_b-c.d"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(MAX_BACKUP_NAME_BYTES + 1);
        for bad in ["", "../etc", "a/b", ".hidden", "a b", long.as_str(), "é"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}

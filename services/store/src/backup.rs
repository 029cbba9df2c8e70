//! Backups of a collection: what [`crate::Store::backup`] writes into a
//! directory, the manifest that names it (`manifest.json`), and the checks
//! a restore makes before it touches anything.
//!
//! A backup directory holds `manifest.json`, the collection's data — Edge:
//! `edge/<collection>/`, a consistent copy of the collection's directory
//! (the shard and trine's records); a server: `server/node-<i>.snapshot`,
//! Qdrant's snapshot of the collection on each node — and, when the
//! gateway checks keys, `keys.json`. Every file is listed in the manifest
//! with its size and SHA-256, checked before a restore.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use trine_core::model::EmbedderId;

use crate::{Result, SCHEMA, StoreError};

/// The manifest's own version: what this trine writes and reads.
pub const FORMAT: u32 = 1;
/// The manifest's file name in a backup directory.
pub const MANIFEST: &str = "manifest.json";
/// The keys file's name in a backup directory.
pub const KEYS: &str = "keys.json";

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The trine that took it.
    pub trine: String,
    /// The collection's layout version ([`SCHEMA`]).
    pub schema: u32,
    /// `edge` or `server`.
    pub backend: String,
    pub collection: String,
    pub embedder: Option<EmbedderId>,
    /// Points in the collection when it was taken.
    pub points: u64,
    /// When it was taken (RFC 3339).
    pub taken_at: String,
    /// Every file of the backup but the manifest, as paths under the
    /// backup directory.
    pub files: Vec<BackupFile>,
    /// A server backup: the node each snapshot was taken on, in the order
    /// of the store's nodes.
    #[serde(default)]
    pub nodes: Vec<String>,
}

/// One file of a backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupFile {
    /// Its path under the backup directory (`/`-separated).
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A new, empty directory for a backup: `dir` is created, or must be empty.
pub fn prepare(dir: &Path) -> Result<()> {
    if dir.exists() {
        let mut entries = fs::read_dir(dir).map_err(io(dir))?;
        if entries.next().is_some() {
            return Err(StoreError::invalid(
                "backup directory",
                format!(
                    "{} is not empty: give a new directory, a backup never overwrites",
                    dir.display()
                ),
            ));
        }
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(io(dir))
}

/// The SHA-256 of the file at `path`, as hex, and its size.
pub fn digest(path: &Path) -> Result<(String, u64)> {
    let mut file = fs::File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        bytes += n as u64;
    }
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    Ok((hex, bytes))
}

/// Every file under `root/sub`, listed with its digest, paths relative to
/// `root`, sorted.
pub fn list(root: &Path, sub: &str) -> Result<Vec<BackupFile>> {
    let mut files = Vec::new();
    let mut stack = vec![root.join(sub)];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(io(&dir))? {
            let path = entry.map_err(io(&dir))?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let (sha256, bytes) = digest(&path)?;
                let relative = path
                    .strip_prefix(root)
                    .map_err(|e| StoreError::Backend(e.to_string()))?;
                let parts: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                files.push(BackupFile {
                    path: parts.join("/"),
                    bytes,
                    sha256,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Copies the directory `from` into `to` (created), file by file, leaving
/// out the entries named in `skip` at its top.
pub fn copy_dir(from: &Path, to: &Path, skip: &[&str]) -> Result<()> {
    fs::create_dir_all(to).map_err(io(to))?;
    for entry in fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if source.is_dir() {
            copy_dir(&source, &target, &[])?;
        } else {
            fs::copy(&source, &target).map_err(io(&source))?;
        }
    }
    Ok(())
}

/// Writes the manifest of a backup whose data and keys are in `dir`,
/// adding the keys file to its list when there is one.
pub fn seal(dir: &Path, mut manifest: Manifest) -> Result<Manifest> {
    if dir.join(KEYS).is_file() {
        let (sha256, bytes) = digest(&dir.join(KEYS))?;
        manifest.files.push(BackupFile {
            path: KEYS.to_string(),
            bytes,
            sha256,
        });
    }
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| StoreError::Backend(format!("cannot encode the manifest: {e}")))?;
    let path = dir.join(MANIFEST);
    fs::write(&path, json).map_err(io(&path))?;
    Ok(manifest)
}

/// The manifest of the backup in `dir`, checked: a format and a layout
/// version this trine restores, and every file present and whole.
pub fn open(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let bytes = fs::read(&path).map_err(|e| {
        StoreError::invalid(
            "backup",
            format!(
                "{}: {e}: give the directory `trine backup` wrote",
                path.display()
            ),
        )
    })?;
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::invalid(
            "backup",
            format!("{} is not a manifest: {e}", path.display()),
        )
    })?;
    check(&manifest)?;
    for file in &manifest.files {
        let path = within(dir, &file.path)?;
        let (sha256, bytes) = digest(&path).map_err(|_| {
            StoreError::invalid(
                "backup",
                format!("{} is missing: the backup is incomplete", file.path),
            )
        })?;
        if sha256 != file.sha256 || bytes != file.bytes {
            return Err(StoreError::invalid(
                "backup",
                format!(
                    "{} differs from the manifest ({bytes} bytes, sha256 {sha256}; the manifest says {} bytes, {}): the backup is damaged",
                    file.path, file.bytes, file.sha256
                ),
            ));
        }
    }
    Ok(manifest)
}

/// Refuses a manifest of another format or layout version than this
/// trine's.
pub fn check(manifest: &Manifest) -> Result<()> {
    if manifest.format != FORMAT {
        return Err(StoreError::invalid(
            "backup",
            format!(
                "its manifest is format {}, this trine reads format {FORMAT}: restore it with trine {}",
                manifest.format, manifest.trine
            ),
        ));
    }
    if manifest.schema != SCHEMA {
        return Err(StoreError::invalid(
            "backup",
            format!(
                "it holds a collection of layout version {} (taken by trine {}); this trine writes version {SCHEMA}: restore it with trine {}, then upgrade it with this one (`trine upgrade`)",
                manifest.schema, manifest.trine, manifest.trine
            ),
        ));
    }
    Ok(())
}

/// `dir/path`, refusing a path that leaves `dir`.
pub fn within(dir: &Path, path: &str) -> Result<PathBuf> {
    let relative = Path::new(path);
    let plain = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain {
        return Err(StoreError::invalid(
            "backup",
            format!("the manifest names {path:?}, outside the backup"),
        ));
    }
    Ok(dir.join(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            format: FORMAT,
            trine: "0.1.0".into(),
            schema: SCHEMA,
            backend: "edge".into(),
            collection: "memories".into(),
            embedder: None,
            points: 0,
            taken_at: "2026-12-05T00:00:00Z".into(),
            files: Vec::new(),
            nodes: Vec::new(),
        }
    }

    #[test]
    fn another_format_or_layout_version_is_refused() {
        // (format, schema, refused because)
        let table = [
            (FORMAT, SCHEMA, None),
            (FORMAT + 1, SCHEMA, Some("format")),
            (FORMAT, SCHEMA - 1, Some("layout version 2")),
            (FORMAT, SCHEMA + 1, Some("layout version 4")),
        ];
        for (format, schema, refused) in table {
            let m = Manifest {
                format,
                schema,
                ..manifest()
            };
            match (check(&m), refused) {
                (Ok(()), None) => {}
                (Err(e), Some(why)) => assert!(e.to_string().contains(why), "{e}"),
                (got, want) => panic!("{format} {schema}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn a_damaged_or_incomplete_backup_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("edge/c")).unwrap();
        fs::write(dir.path().join("edge/c/a"), b"one").unwrap();
        let files = list(dir.path(), "edge").unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "edge/c/a");
        seal(
            dir.path(),
            Manifest {
                files,
                ..manifest()
            },
        )
        .unwrap();
        assert!(open(dir.path()).is_ok());
        fs::write(dir.path().join("edge/c/a"), b"two").unwrap();
        assert!(
            open(dir.path())
                .unwrap_err()
                .to_string()
                .contains("damaged")
        );
        fs::remove_file(dir.path().join("edge/c/a")).unwrap();
        assert!(
            open(dir.path())
                .unwrap_err()
                .to_string()
                .contains("incomplete")
        );
    }

    #[test]
    fn a_path_outside_the_backup_is_refused() {
        let dir = Path::new("/b");
        assert!(within(dir, "edge/c/a").is_ok());
        assert!(within(dir, "../etc/passwd").is_err());
        assert!(within(dir, "/etc/passwd").is_err());
    }

    #[test]
    fn a_backup_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        prepare(&dir.path().join("new")).unwrap();
        prepare(&dir.path().join("new")).unwrap();
        fs::write(dir.path().join("new/x"), b"x").unwrap();
        assert!(prepare(&dir.path().join("new")).is_err());
    }
}

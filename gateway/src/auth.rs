//! API keys: who a caller is, and which tenants and operations that allows.
//!
//! A key is `trine_<id>_<secret>`: `id` (8 hex digits) names it in lists and
//! revocations, `secret` (64 hex digits, 244 random bits) is shown once,
//! when the key is made. The keys file (JSON, written owner-only) holds each
//! key's id, name, scopes, tenants, times and the SHA-256 of the whole key —
//! never the key. A server reloads the file when it changes, so a key added
//! or revoked with `trine keys` counts from the next call.
//!
//! Scopes: `read` (Search, Get), `write` (Upsert, Delete), `admin` (both).
//! Tenants: the key's list; `*` is every tenant.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use trine_core::ErrorKind;
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};
use uuid::Uuid;

/// What a key may do.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    EnumString,
    IntoStaticStr,
    VariantNames,
    VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Named for Scope {
    const WHAT: &'static str = "scope";
}

/// Every tenant, in a key's tenant list.
pub const ANY_TENANT: &str = "*";

/// One key as the keys file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRecord {
    pub id: String,
    pub name: String,
    /// SHA-256 of the whole key, lowercase hex.
    pub sha256: String,
    pub scopes: Vec<Scope>,
    pub tenants: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The keys file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFile {
    pub keys: Vec<KeyRecord>,
}

/// Why a call is refused, or the keys file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("keys file {path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl AuthError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            AuthError::Unauthenticated(_) => ErrorKind::Unauthenticated,
            AuthError::PermissionDenied(_) => ErrorKind::PermissionDenied,
            AuthError::File { .. } => ErrorKind::Internal,
            AuthError::Invalid(_) => ErrorKind::InvalidArgument,
        }
    }
}

impl trine_core::Kinded for AuthError {
    fn kind(&self) -> trine_core::ErrorKind {
        AuthError::kind(self)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

fn digest(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Equal strings, compared in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The id of a well-formed key (`trine_<8 hex>_<64 hex>`).
pub fn key_id(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("trine_")?;
    let (id, secret) = rest.split_once('_')?;
    let hexes = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hexes(id, 8) && hexes(secret, 64)).then_some(id)
}

impl KeyFile {
    /// Makes a key: the key itself (shown once) and its record.
    pub fn add(
        &mut self,
        name: &str,
        scopes: Vec<Scope>,
        tenants: Vec<String>,
    ) -> Result<(String, KeyRecord), AuthError> {
        if scopes.is_empty() {
            return Err(AuthError::Invalid(
                "give at least one --scope (read, write, admin)".into(),
            ));
        }
        if tenants.is_empty() || tenants.iter().any(|t| t.trim().is_empty()) {
            return Err(AuthError::Invalid(
                "give at least one --tenant (a tenant's name, or * for every tenant)".into(),
            ));
        }
        for tenant in &tenants {
            trine_core::model::check_label("tenant", tenant).map_err(AuthError::Invalid)?;
        }
        let id = loop {
            let id = Uuid::new_v4().simple().to_string()[..8].to_string();
            if !self.keys.iter().any(|k| k.id == id) {
                break id;
            }
        };
        let secret = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
        let key = format!("trine_{id}_{secret}");
        let record = KeyRecord {
            id,
            name: name.to_string(),
            sha256: digest(&key),
            scopes,
            tenants,
            created_at: Utc::now(),
            revoked_at: None,
        };
        self.keys.push(record.clone());
        Ok((key, record))
    }

    /// Revokes the key `id`; revoking a revoked key changes nothing.
    pub fn revoke(&mut self, id: &str) -> Result<&KeyRecord, AuthError> {
        let record = self.keys.iter_mut().find(|k| k.id == id).ok_or_else(|| {
            AuthError::Invalid(format!("no key {id:?}: `trine keys list` shows the ids"))
        })?;
        record.revoked_at.get_or_insert_with(Utc::now);
        Ok(record)
    }

    /// Who `key` is, or why it is refused.
    pub fn authenticate(&self, key: &str) -> Result<Principal, AuthError> {
        let unknown =
            || AuthError::Unauthenticated("the API key is not known: ask for a valid key".into());
        let id = key_id(key).ok_or_else(|| {
            AuthError::Unauthenticated(
                "the API key is malformed: a key reads trine_<id>_<secret>".into(),
            )
        })?;
        let record = self.keys.iter().find(|k| k.id == id).ok_or_else(unknown)?;
        if !same(&record.sha256, &digest(key)) {
            return Err(unknown());
        }
        if let Some(when) = record.revoked_at {
            return Err(AuthError::Unauthenticated(format!(
                "the API key {id} was revoked at {}",
                when.to_rfc3339()
            )));
        }
        Ok(Principal {
            key: record.id.clone(),
            scopes: record.scopes.clone(),
            tenants: record.tenants.clone(),
        })
    }

    /// Reads the keys file; a missing file holds no keys. A file that every
    /// user may read, or others than its owner may write, is refused: whoever
    /// can write it grants themselves any tenant, and its names, scopes and
    /// tenants are the deployment's map.
    pub fn load(path: &Path) -> Result<Self, AuthError> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(file_error(path, e.to_string())),
        };
        check_private(path)?;
        Self::parse(&text).map_err(|message| file_error(path, message))
    }

    /// A keys file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Writes the keys file whole (a temporary file renamed over it), readable
    /// by its owner only.
    pub fn save(&self, path: &Path) -> Result<(), AuthError> {
        let io = |e: std::io::Error| file_error(path, e.to_string());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("json.tmp");
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp).map_err(io)?;
        let text = serde_json::to_vec_pretty(self).map_err(|e| file_error(path, e.to_string()))?;
        file.write_all(&text).map_err(io)?;
        file.sync_all().map_err(io)?;
        fs::rename(&tmp, path).map_err(io)
    }
}

/// Refuses a keys file that any user may read or write, or its group may
/// write (the mode bits `0o027`), as ssh refuses a private key. Its group
/// may read it: Kubernetes gives a secret to a non-root pod that way
/// (`fsGroup`, mode 0440).
fn check_private(path: &Path) -> Result<(), AuthError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path)
            .map_err(|e| file_error(path, e.to_string()))?
            .permissions()
            .mode();
        if mode & 0o027 != 0 {
            return Err(file_error(
                path,
                format!(
                    "its mode is {:o}: any user may read it, or others than its owner \
                     may write it; run `chmod 600 {}`",
                    mode & 0o777,
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}

fn file_error(path: &Path, message: String) -> AuthError {
    AuthError::File {
        path: path.display().to_string(),
        message,
    }
}

/// The caller a key names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub key: String,
    pub scopes: Vec<Scope>,
    pub tenants: Vec<String>,
}

impl Principal {
    /// Whether this caller may do `scope` in `tenant`, or why not.
    pub fn allows(&self, scope: Scope, tenant: &str) -> Result<(), AuthError> {
        let scoped = self.scopes.iter().any(|&s| s == scope || s == Scope::Admin);
        if !scoped {
            return Err(AuthError::PermissionDenied(format!(
                "the API key {} lacks the {} scope",
                self.key,
                scope.name()
            )));
        }
        if !self.tenants.iter().any(|t| t == tenant || t == ANY_TENANT) {
            return Err(AuthError::PermissionDenied(format!(
                "the API key {} does not hold tenant {tenant:?}",
                self.key
            )));
        }
        Ok(())
    }
}

/// When the keys file was last written: modification time, size, inode (a
/// save renames a new file over the old).
type Stamp = (SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some((
        m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        m.len(),
        inode,
    ))
}

/// The keys a server checks calls against: the keys file, read again when it
/// changes (its modification time or size), so that `trine keys add` and
/// `revoke` count from the next call.
#[derive(Debug)]
pub struct Keys {
    path: PathBuf,
    cached: Mutex<(Option<Stamp>, Arc<KeyFile>)>,
}

impl Keys {
    /// The keys of `path`, read now (so that a broken file fails at start).
    pub fn open(path: &Path) -> Result<Self, AuthError> {
        let keys = Self {
            path: path.to_path_buf(),
            cached: Mutex::new((None, Arc::new(KeyFile::default()))),
        };
        keys.current()?;
        Ok(keys)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keys as the file holds them now.
    pub fn current(&self) -> Result<Arc<KeyFile>, AuthError> {
        let stamp = stamp(&self.path);
        let mut cached = self
            .cached
            .lock()
            .map_err(|_| file_error(&self.path, "the keys cache was poisoned".into()))?;
        if cached.0.is_none() || cached.0 != stamp {
            let file = Arc::new(KeyFile::load(&self.path)?);
            *cached = (stamp, file);
        }
        Ok(cached.1.clone())
    }

    /// Who the call's key (`authorization: Bearer KEY`, or `x-api-key`) is.
    pub fn authenticate(
        &self,
        metadata: &tonic::metadata::MetadataMap,
    ) -> Result<Principal, AuthError> {
        let key = metadata
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .or_else(|| metadata.get("x-api-key").and_then(|v| v.to_str().ok()))
            .ok_or_else(|| {
                AuthError::Unauthenticated(
                    "no API key: send `authorization: Bearer KEY` (trine: --api-key or TRINE_API_KEY)"
                        .into(),
                )
            })?;
        self.current()?.authenticate(key.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_by_their_hash_scope_and_tenants() {
        let mut file = KeyFile::default();
        let (reader, r) = file
            .add("ci", vec![Scope::Read], vec!["acme".into()])
            .unwrap();
        let (writer, _) = file
            .add(
                "ingest",
                vec![Scope::Write],
                vec!["acme".into(), "globex".into()],
            )
            .unwrap();
        let (admin, _) = file
            .add("ops", vec![Scope::Admin], vec![ANY_TENANT.into()])
            .unwrap();
        assert_eq!(key_id(&reader), Some(r.id.as_str()));
        assert!(
            !serde_json::to_string(&file).unwrap().contains(&reader),
            "the key is never stored"
        );

        let read = file.authenticate(&reader).unwrap();
        let write = file.authenticate(&writer).unwrap();
        let ops = file.authenticate(&admin).unwrap();
        let table = [
            (&read, Scope::Read, "acme", true),
            (&read, Scope::Read, "globex", false),
            (&read, Scope::Write, "acme", false),
            (&write, Scope::Write, "globex", true),
            (&write, Scope::Read, "acme", false),
            (&ops, Scope::Write, "anyone", true),
            (&ops, Scope::Read, "anyone", true),
        ];
        for (who, scope, tenant, ok) in table {
            let got = who.allows(scope, tenant);
            assert_eq!(got.is_ok(), ok, "{who:?} {scope:?} {tenant}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.kind(), ErrorKind::PermissionDenied);
            }
        }

        // A forged secret with a known id, a malformed key, an unknown id.
        let forged = format!(
            "{}{}",
            &reader[..reader.len() - 1],
            if reader.ends_with('0') { '1' } else { '0' }
        );
        for bad in [
            forged.as_str(),
            "trine_123",
            "nope",
            "trine_00000000_0000000000000000000000000000000000000000000000000000000000000000",
        ] {
            let e = file.authenticate(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unauthenticated, "{bad}: {e}");
        }
        file.revoke(&r.id).unwrap();
        let e = file.authenticate(&reader).unwrap_err();
        assert!(e.to_string().contains("was revoked"), "{e}");
        assert!(file.revoke("ffffffff").is_err());
        assert!(file.add("x", vec![], vec!["acme".into()]).is_err());
        assert!(file.add("x", vec![Scope::Read], vec![]).is_err());
        assert_eq!(Scope::parse("write"), Ok(Scope::Write));
        assert!(Scope::parse("root").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_keys_file_others_may_read_or_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.json");
        KeyFile::default().save(&path).unwrap();
        for (mode, refused) in [
            (0o600, false),
            (0o400, false),
            (0o700, false),
            (0o640, false),
            (0o440, false),
            (0o660, true),
            (0o644, true),
            (0o604, true),
            (0o620, true),
            (0o602, true),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            match KeyFile::load(&path) {
                Ok(_) => assert!(!refused, "{mode:o} was taken"),
                Err(e) => {
                    assert!(refused, "{mode:o} was refused: {e}");
                    assert_eq!(e.kind(), ErrorKind::Internal);
                    let text = e.to_string();
                    assert!(text.contains("chmod 600"), "{text}");
                    assert!(text.contains(&format!("{mode:o}")), "{text}");
                }
            }
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Keys::open(&path).is_err(), "a server does not start on it");
    }

    #[test]
    fn the_file_is_reread_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.json");
        let keys = Keys::open(&path).unwrap();
        assert!(keys.current().unwrap().keys.is_empty(), "no file: no keys");

        let mut file = KeyFile::default();
        let (key, record) = file
            .add("ci", vec![Scope::Read], vec!["acme".into()])
            .unwrap();
        file.save(&path).unwrap();
        assert_eq!(
            keys.current().unwrap().authenticate(&key).unwrap().key,
            record.id
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        file.revoke(&record.id).unwrap();
        file.save(&path).unwrap();
        assert!(
            keys.current().unwrap().authenticate(&key).is_err(),
            "revoked from the next call"
        );

        let mut metadata = tonic::metadata::MetadataMap::new();
        assert_eq!(
            keys.authenticate(&metadata).unwrap_err().kind(),
            ErrorKind::Unauthenticated
        );
        metadata.insert("authorization", format!("Bearer {key}").parse().unwrap());
        assert!(
            keys.authenticate(&metadata)
                .unwrap_err()
                .to_string()
                .contains("revoked")
        );

        fs::write(&path, "not json").unwrap();
        assert!(matches!(keys.current(), Err(AuthError::File { .. })));
    }
}

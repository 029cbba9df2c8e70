//! TLS from PEM files: the config file's `[tls]`, or a Kubernetes TLS
//! Secret's directory, made into tonic's server and client TLS.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The config file's `[tls]`: PEM files. `cert` and `key`: this process's certificate — its
/// server serves TLS (with `--role all`, the gateway's public port) and it
/// presents it as its client certificate to peers. `client_ca`: the server
/// requires client certificates signed by it (mTLS). `ca`: the CA a gateway,
/// `trine search`, `bench` or `health` trusts for the servers it calls, which
/// it then calls over TLS.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub client_ca: Option<PathBuf>,
    pub ca: Option<PathBuf>,
}

fn pem(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("[tls] {what} {}: {e}", path.display()))
}

impl Settings {
    /// The files of a directory laid out as a Kubernetes TLS Secret mounted
    /// (`tls.crt`, `tls.key`, and `ca.crt` when the issuer gives it): this
    /// process's certificate, and the CA both trusted for the servers it
    /// calls and required of its clients — one CA for the whole mesh.
    pub fn from_secret(dir: &Path) -> Self {
        let ca = Some(dir.join("ca.crt")).filter(|path| path.is_file());
        Self {
            cert: Some(dir.join("tls.crt")),
            key: Some(dir.join("tls.key")),
            client_ca: ca.clone(),
            ca,
        }
    }

    fn identity(&self) -> Result<Option<tonic::transport::Identity>, String> {
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => Ok(Some(tonic::transport::Identity::from_pem(
                pem("cert", cert)?,
                pem("key", key)?,
            ))),
            (None, None) => Ok(None),
            _ => Err("[tls] cert and key go together: give both, or neither".to_string()),
        }
    }

    /// The server's TLS, when `cert` and `key` are given.
    pub fn server(&self) -> Result<Option<tonic::transport::ServerTlsConfig>, String> {
        let Some(identity) = self.identity()? else {
            if self.client_ca.is_some() {
                return Err("[tls] client_ca needs the server's own cert and key".to_string());
            }
            return Ok(None);
        };
        let mut tls = tonic::transport::ServerTlsConfig::new().identity(identity);
        if let Some(ca) = &self.client_ca {
            tls = tls.client_ca_root(tonic::transport::Certificate::from_pem(pem(
                "client_ca",
                ca,
            )?));
        }
        Ok(Some(tls))
    }

    /// The TLS of calls to servers, when `ca` is given: that CA trusted, this
    /// process's certificate presented when it has one.
    pub fn client(&self) -> Result<Option<tonic::transport::ClientTlsConfig>, String> {
        let Some(ca) = &self.ca else {
            return Ok(None);
        };
        let mut tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(pem("ca", ca)?));
        if let Some(identity) = self.identity()? {
            tls = tls.identity(identity);
        }
        Ok(Some(tls))
    }
}

//! The config file's `[quotas]`, `[tls]`, `[server]` and `[serve]` sections.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[quotas]`: every tenant's defaults, and `[quotas.tenant.NAME]` for one
/// tenant; unset or 0: no limit.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuotasSection {
    /// Requests a second per tenant.
    pub rate: Option<f64>,
    /// Requests at once above the rate (default: one second's worth).
    pub burst: Option<f64>,
    /// Memories a tenant may hold.
    pub points: Option<u64>,
    pub tenant: std::collections::BTreeMap<String, TenantQuota>,
}

/// One tenant's quotas, over the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TenantQuota {
    pub rate: Option<f64>,
    pub burst: Option<f64>,
    pub points: Option<u64>,
}

impl QuotasSection {
    fn limits(
        rate: Option<f64>,
        burst: Option<f64>,
        points: Option<u64>,
    ) -> trine_gateway::quota::Limits {
        trine_gateway::quota::Limits {
            rate,
            burst,
            points,
        }
    }

    /// The quotas, or `None` when the section sets none.
    pub fn quotas(&self) -> Option<trine_gateway::quota::Quotas> {
        if *self == Self::default() {
            return None;
        }
        let tenants = self
            .tenant
            .iter()
            .map(|(name, q)| (name.clone(), Self::limits(q.rate, q.burst, q.points)))
            .collect();
        Some(trine_gateway::quota::Quotas::new(
            Self::limits(self.rate, self.burst, self.points),
            tenants,
        ))
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        let each = std::iter::once(("[quotas]".to_string(), self.rate, self.burst)).chain(
            self.tenant
                .iter()
                .map(|(name, q)| (format!("[quotas.tenant.{name}]"), q.rate, q.burst)),
        );
        for (section, rate, burst) in each {
            if rate.is_some_and(|r| !(r.is_finite() && r >= 0.0)) {
                return Err(format!(
                    "{section} rate must be a number of requests a second >= 0 (0: no limit)"
                ));
            }
            if burst.is_some_and(|b| !(b.is_finite() && b >= 1.0)) {
                return Err(format!("{section} burst must be at least 1"));
            }
        }
        Ok(())
    }
}

/// `[tls]`: PEM files. `cert` and `key`: this process's certificate — its
/// server serves TLS (with `--role all`, the gateway's public port) and it
/// presents it as its client certificate to peers. `client_ca`: the server
/// requires client certificates signed by it (mTLS). `ca`: the CA a gateway,
/// `trine search`, `bench` or `health` trusts for the servers it calls, which
/// it then calls over TLS.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsSection {
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub client_ca: Option<PathBuf>,
    pub ca: Option<PathBuf>,
}

fn pem(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("[tls] {what} {}: {e}", path.display()))
}

impl TlsSection {
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

/// `[server]`: each server's calls in flight (beyond them it sheds with
/// RESOURCE_EXHAUSTED) and largest message, in and out.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSection {
    pub max_in_flight: usize,
    pub max_message_bytes: usize,
}

impl Default for ServerSection {
    fn default() -> Self {
        let serving = trine_api::server::Serving::default();
        Self {
            max_in_flight: serving.max_in_flight,
            max_message_bytes: serving.max_message_bytes,
        }
    }
}

/// Whether the public service requires API keys: `auto` — on when it
/// listens beyond loopback —, `on`, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    #[default]
    Auto,
    On,
    Off,
}

/// `[serve]`: where `trine serve` listens, and its keys and backups; its
/// flags and their `TRINE_*` variables override each.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeSection {
    /// The public gRPC address (the gateway's with `--role all`).
    pub listen: String,
    /// The HTTP/JSON surface's address, or `off`.
    pub http: String,
    /// The `/metrics` address (with `--role all`, the gateway's; the three
    /// internal services take the next ports), or `off`.
    pub metrics: String,
    /// API keys on the public service.
    pub auth: AuthMode,
    /// Where the gateway writes the backups it is asked for, or `off`;
    /// unset: `backups` in the data directory.
    pub backup_dir: Option<String>,
}

impl Default for ServeSection {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:50051".to_string(),
            http: "off".to_string(),
            metrics: "127.0.0.1:9464".to_string(),
            auth: AuthMode::Auto,
            backup_dir: None,
        }
    }
}

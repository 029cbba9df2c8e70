//! The config file's `[tls]`, `[server]` and `[serve]` sections, and
//! `[quotas]` (the gateway's own settings).

use serde::Deserialize;

/// `[quotas]`, the gateway's own settings.
pub type QuotasSection = trine_gateway::quota::Settings;

/// `[quotas.tenant.NAME]`, the gateway's own.
pub type TenantQuota = trine_gateway::quota::Limits;

/// `[tls]`, the serving crate's own TLS settings.
pub type TlsSection = trine_api::tls::Settings;

/// `[server]`, the serving crate's own settings.
pub type ServerSection = trine_api::server::Settings;

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

//! The services wired together, in one place for every way trine runs
//! them: [`spawn`] starts the whole mesh in one process or one role, for
//! `trine serve`, for the commands that run in-process (search, bench,
//! eval without `--endpoint`) and for the tests; [`channel_tls`] reaches a
//! peer (an address, replicas, or a `dns://` name). The command-line crate
//! holds commands only: it opens the store and loads the embedder from its
//! configuration and hands them here.
#![forbid(unsafe_code)]

mod channel;
mod error;
mod mesh;
mod role;

use std::net::SocketAddr;
use std::sync::Arc;

use trine_gateway::SearchConfig;
use trine_lexical::LexicalConfig;
use trine_semantic::SemanticConfig;

pub use channel::{ApiKey, GatewayClient, channel, channel_tls, gateway_client, remote_embedder};
pub use error::MeshError;
pub use mesh::{GRACE, Mesh, MetricsAddrs, Running, Service, spawn};
pub use role::{Launch, One, PeerAddrs, PeerSettings, Role, gateway_service, peers};

/// Settings of every service in the mesh.
#[derive(Debug, Clone, Default)]
pub struct MeshConfig {
    pub lexical: LexicalConfig,
    pub semantic: SemanticConfig,
    pub search: SearchConfig,
    /// Where to serve each service's `/metrics`: the gateway on this address,
    /// lexical-svc, semantic-svc and fusion-svc on the next three ports (each
    /// on a free port when the port is 0). `None`: not served.
    pub metrics: Option<SocketAddr>,
    /// Where the gateway serves its HTTP/JSON surface (`trine_gateway::rest`);
    /// `None`: not served.
    pub http: Option<SocketAddr>,
    /// Each server's calls in flight and largest message.
    pub serving: trine_api::server::Serving,
    /// API keys the gateway checks every call against; `None`: none.
    pub keys: Option<Arc<trine_gateway::auth::Keys>>,
    /// Where the gateway writes backups (`Memory.Backup`); `None`: it
    /// takes none.
    pub backups: Option<trine_gateway::backups::Backups>,
    /// Tenants' request rates and memories held; `None`: no limits.
    pub quotas: Option<Arc<trine_gateway::quota::Quotas>>,
    /// The stemmer of a collection the gateway creates; `None`: none.
    pub stemmer: Option<trine_store::Language>,
    /// How long the services drain their calls once told to stop; `None`:
    /// [`GRACE`].
    pub grace: Option<std::time::Duration>,
}

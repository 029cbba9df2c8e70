//! Each service built from what it runs on, once, for every way trine runs
//! it: one role of `trine serve`, or a part of the whole mesh in one
//! process ([`crate::Mesh`]).

use std::sync::Arc;
use std::time::Duration;

use tonic::transport::{Channel, ClientTlsConfig};
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};
use trine_embed::Embedder;
use trine_fusion::FusionService;
use trine_gateway::{MemoryService, Peers, Searcher, Writer};
use trine_lexical::LexicalService;
use trine_semantic::SemanticService;
use trine_store::Store;
use trine_telemetry::grpc::Transport;

use crate::channel::{channel_tls, remote_embedder};
use crate::{MeshConfig, MeshError};

/// Which service a process runs: all four, or one; its name is the one in
/// `trine serve --role NAME`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, EnumString, IntoStaticStr, VariantNames, VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum Role {
    All,
    Gateway,
    Lexical,
    Semantic,
    Fusion,
}

impl Named for Role {
    const WHAT: &'static str = "role";
}

impl Role {
    /// The role of a name, or what names there are.
    pub fn parse(name: &str) -> Result<Self, MeshError> {
        <Self as Named>::parse(name).map_err(MeshError::Role)
    }

    /// The service's name, the `service.name` of its spans.
    pub fn service_name(self) -> &'static str {
        match self {
            Self::All => "trine",
            Self::Gateway => "gateway",
            Self::Lexical => "lexical-svc",
            Self::Semantic => "semantic-svc",
            Self::Fusion => "fusion-svc",
        }
    }

    /// The gRPC service it serves, whose health says whether it is ready
    /// (the whole mesh: the gateway's).
    pub fn grpc_service(self) -> &'static str {
        use trine_api::v1::{fusion_server, lexical_server, memory_server, semantic_server};
        match self {
            Self::All | Self::Gateway => memory_server::SERVICE_NAME,
            Self::Lexical => lexical_server::SERVICE_NAME,
            Self::Semantic => semantic_server::SERVICE_NAME,
            Self::Fusion => fusion_server::SERVICE_NAME,
        }
    }
}

/// The config file's `[peers]`: where a gateway finds the internal
/// services (`host:port`, a URL, a list, or `dns://name:port`).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PeerSettings {
    pub lexical: Option<String>,
    pub semantic: Option<String>,
    pub fusion: Option<String>,
}

/// Where a gateway finds lexical-svc, semantic-svc and fusion-svc: each an
/// address, a list of replicas or a `dns://` name ([`channel_tls`]).
#[derive(Debug, Clone, Default)]
pub struct PeerAddrs {
    pub lexical: String,
    pub semantic: String,
    pub fusion: String,
    /// The TLS of calls to them; `None`: plain.
    pub tls: Option<ClientTlsConfig>,
}

/// One service with exactly what it runs on: a store and an embedder for
/// lexical-svc and semantic-svc, a store and its peers for the gateway,
/// nothing for fusion-svc (which holds no data).
#[derive(Clone)]
pub enum One {
    Gateway {
        store: Arc<dyn Store>,
        peers: PeerAddrs,
    },
    Lexical {
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
    },
    Semantic {
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
    },
    Fusion,
}

impl One {
    /// Its role.
    pub fn role(&self) -> Role {
        match self {
            Self::Gateway { .. } => Role::Gateway,
            Self::Lexical { .. } => Role::Lexical,
            Self::Semantic { .. } => Role::Semantic,
            Self::Fusion => Role::Fusion,
        }
    }
}

/// What one process runs: the whole mesh over one store and one embedder,
/// or one service ([`One`]).
#[derive(Clone)]
pub enum Launch {
    All {
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
    },
    One(One),
}

/// How long a gateway waits for semantic-svc, its embedder of writes, to
/// answer at start.
const SEMANTIC_WAIT: Duration = Duration::from_secs(30);

pub(crate) fn lexical(
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    config: &MeshConfig,
) -> LexicalService {
    LexicalService::new(store, config.lexical.clone()).with_embedder(embedder)
}

pub(crate) fn semantic(
    store: Arc<dyn Store>,
    embedder: Arc<dyn Embedder>,
    config: &MeshConfig,
) -> SemanticService {
    SemanticService::new(store, embedder, config.semantic.clone())
}

pub(crate) fn fusion(config: &MeshConfig) -> FusionService {
    FusionService::new(config.search.fusion)
}

/// The gateway over its peers' channels: searches fan out to them, writes
/// are embedded by semantic-svc on `semantic`, with the mesh's keys and
/// quotas.
pub(crate) async fn gateway(
    peers: Peers,
    semantic: Channel,
    store: Arc<dyn Store>,
    config: &MeshConfig,
) -> Result<MemoryService, MeshError> {
    let writes = remote_embedder(semantic, SEMANTIC_WAIT).await?;
    Ok(gateway_service(peers, Arc::new(writes), store, config))
}

/// The gateway over `peers`, its writes embedded by `writes`, with the
/// mesh's keys and quotas.
pub fn gateway_service(
    peers: Peers,
    writes: Arc<dyn Embedder>,
    store: Arc<dyn Store>,
    config: &MeshConfig,
) -> MemoryService {
    let writer = Writer::new(store.clone(), writes)
        .with_stemmer(config.stemmer)
        .with_common_words(config.semantic.language);
    let mut service = MemoryService::new(writer).with_search(Searcher::new(
        peers,
        store.clone(),
        config.search.clone(),
    ));
    if let Some(keys) = config.keys.clone() {
        service = service.with_keys(keys);
    }
    if let Some(backups) = config.backups.clone() {
        service = service.with_backups(backups);
    }
    if let Some(quotas) = config.quotas.clone() {
        if quotas.has_rates() {
            // Replicas over one server split each tenant's rate between them.
            tokio::spawn(trine_gateway::quota::keep_shares(
                Arc::downgrade(&quotas),
                Arc::downgrade(&store),
                service.metrics(),
            ));
        }
        service = service.with_quotas(quotas);
    }
    service
}

/// The gateway's peers from their addresses, and the channel to
/// semantic-svc among them (the embedder of writes).
pub fn peers(addrs: &PeerAddrs) -> Result<(Peers, Channel), MeshError> {
    peers_over(addrs, None)
}

/// As [`peers`], the searches' calls made over `local` where given
/// (lexical-svc, semantic-svc, fusion-svc in this process:
/// [`trine_api::server::in_process`]); health checks and writes' embeddings
/// still go to the addresses.
pub(crate) fn peers_over(
    addrs: &PeerAddrs,
    local: Option<[Transport; 3]>,
) -> Result<(Peers, Channel), MeshError> {
    let channel = |addr: &str| channel_tls(addr, addrs.tls.clone());
    let channels = [
        channel(&addrs.lexical)?,
        channel(&addrs.semantic)?,
        channel(&addrs.fusion)?,
    ];
    let semantic = channels[1].clone();
    let peers = match local {
        Some(local) => Peers::over(local, channels),
        None => {
            let [lexical, semantic, fusion] = channels;
            Peers::lazy(lexical, semantic, fusion)
        }
    };
    Ok((peers, semantic))
}

//! The four services wired together: all in one process (each on its own
//! loopback port, talking real gRPC, over one shared store), or one role.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use trine_embed::Embedder;
use trine_fusion::FusionService;
use trine_gateway::{MemoryService, Peers, SearchConfig, Searcher, Writer};
use trine_lexical::{LexicalConfig, LexicalService};
use trine_semantic::{RemoteEmbedder, SemanticConfig, SemanticService};
use trine_store::Store;

/// A gateway's client that sends an API key with every call.
pub type GatewayClient = trine_api::v1::memory_client::MemoryClient<
    tonic::service::interceptor::InterceptedService<Channel, ApiKey>,
>;

/// Sends `authorization: Bearer KEY` with each call, when there is a key.
#[derive(Debug, Clone, Default)]
pub struct ApiKey(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for ApiKey {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// A client of the gateway on `channel`, sending `key` (if any).
pub fn gateway_client(channel: Channel, key: Option<&str>) -> Result<GatewayClient, String> {
    let value = key
        .map(|k| {
            format!("Bearer {k}")
                .parse()
                .map_err(|_| "the API key holds characters a header cannot carry".to_string())
        })
        .transpose()?;
    Ok(trine_api::v1::memory_client::MemoryClient::with_interceptor(channel, ApiKey(value)))
}

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
    /// Each server's calls in flight and largest message.
    pub serving: trine_api::server::Serving,
    /// API keys the gateway checks every call against; `None`: none.
    pub keys: Option<Arc<trine_gateway::auth::Keys>>,
    /// Tenants' request rates and memories held; `None`: no limits.
    pub quotas: Option<Arc<trine_gateway::quota::Quotas>>,
}

/// Where each service of a mesh serves `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsAddrs {
    pub gateway: SocketAddr,
    pub lexical: SocketAddr,
    pub semantic: SocketAddr,
    pub fusion: SocketAddr,
}

type Served = JoinHandle<Result<(), tonic::transport::Error>>;
type MetricsServed = JoinHandle<std::io::Result<()>>;

/// Binds the `/metrics` listener of the `index`-th service (0 = gateway).
async fn bind_metrics(base: SocketAddr, index: u16) -> Result<TcpListener, String> {
    let mut addr = base;
    if base.port() != 0 {
        addr.set_port(base.port().checked_add(index).ok_or_else(|| {
            format!(
                "metrics port {} leaves no room for four services",
                base.port()
            )
        })?);
    }
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))
}

/// A running mesh. Dropping it without [`Mesh::stop`] leaves the services
/// running until the runtime ends.
pub struct Mesh {
    pub gateway: SocketAddr,
    pub lexical: SocketAddr,
    pub semantic: SocketAddr,
    pub fusion: SocketAddr,
    /// Where each service serves `/metrics`, when asked to.
    pub metrics: Option<MetricsAddrs>,
    stop: watch::Sender<bool>,
    tasks: Vec<(&'static str, Served)>,
    metrics_tasks: Vec<(&'static str, MetricsServed)>,
}

/// A shutdown future for one service: resolves when the mesh stops.
fn stopped(rx: &watch::Receiver<bool>) -> impl Future<Output = ()> + Send + 'static {
    let mut rx = rx.clone();
    async move {
        // An error means the sender is gone: stop as well.
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// How often a `dns://` peer's name is resolved again.
const RESOLVE_EVERY: Duration = Duration::from_secs(5);

/// The client TLS of calls to peers, when there is one.
type Tls = Option<tonic::transport::ClientTlsConfig>;

/// One peer's endpoint; with `tls`, over TLS (`host:port` becomes https).
fn endpoint(addr: &str, tls: &Tls) -> Result<Endpoint, String> {
    let url = match (addr.contains("://"), tls) {
        (true, _) => addr.to_string(),
        (false, None) => format!("http://{addr}"),
        (false, Some(_)) => format!("https://{addr}"),
    };
    if tls.is_some() && url.starts_with("http://") {
        return Err(format!(
            "peer address {url:?} is plain http but [tls] ca is set: give https:// or host:port"
        ));
    }
    let endpoint = Endpoint::from_shared(url.clone())
        .map(|e| e.connect_timeout(Duration::from_secs(2)))
        .map_err(|e| format!("peer address {url:?}: {e}"))?;
    match tls {
        Some(tls) => endpoint
            .tls_config(tls.clone())
            .map_err(|e| format!("peer address {url:?}: TLS: {e}")),
        None => Ok(endpoint),
    }
}

/// A lazily connected channel to a peer, balancing the calls over its
/// replicas (so that one pod does not take all traffic):
/// - `host:port` or a URL: one peer;
/// - `a:1,b:2,...`: these replicas, calls spread over the ready ones;
/// - `dns://name:port`: every address the name resolves to (a Kubernetes
///   headless service), resolved again every 5 s, replicas added and
///   removed as they come and go. Needs a Tokio runtime.
pub fn channel(addr: &str) -> Result<Channel, String> {
    channel_tls(addr, None)
}

/// As [`channel`], over TLS when `tls` is given (a `dns://` name is the name
/// the peers' certificates must carry).
pub fn channel_tls(addr: &str, tls: Tls) -> Result<Channel, String> {
    if let Some(target) = addr.strip_prefix("dns://") {
        let host = target.rsplit_once(':').map_or(target, |(host, _)| host);
        let tls = tls.map(|t| t.domain_name(host));
        return dns_channel(target, tls);
    }
    let addrs: Vec<&str> = addr.split(',').map(str::trim).collect();
    if addrs.iter().any(|a| a.is_empty()) {
        return Err(format!(
            "peer address {addr:?}: an empty address in the list"
        ));
    }
    match addrs.as_slice() {
        [one] => Ok(endpoint(one, &tls)?.connect_lazy()),
        many => {
            let endpoints = many
                .iter()
                .map(|a| endpoint(a, &tls))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Channel::balance_list(endpoints.into_iter()))
        }
    }
}

fn dns_channel(target: &str, tls: Tls) -> Result<Channel, String> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| format!("dns://{target}: resolving needs a running Tokio runtime"))?;
    if !target
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
    {
        return Err(format!("peer address dns://{target}: give dns://name:port"));
    }
    let (channel, changes) = Channel::balance_channel::<SocketAddr>(64);
    let target = target.to_string();
    runtime.spawn(async move {
        let mut known: HashSet<SocketAddr> = HashSet::new();
        // Ends when every clone of the channel is gone.
        while !changes.is_closed() {
            match tokio::net::lookup_host(target.as_str()).await {
                Ok(found) => {
                    let found: HashSet<SocketAddr> = found.collect();
                    for gone in known.difference(&found) {
                        if changes.send(Change::Remove(*gone)).await.is_err() {
                            return;
                        }
                    }
                    for new in found.difference(&known) {
                        let Ok(endpoint) = endpoint(&new.to_string(), &tls) else {
                            continue;
                        };
                        if changes.send(Change::Insert(*new, endpoint)).await.is_err() {
                            return;
                        }
                    }
                    known = found;
                }
                // Keep the replicas known; a later lookup may answer.
                Err(e) => tracing::warn!(%target, error = %e, "resolving a peer failed"),
            }
            tokio::time::sleep(RESOLVE_EVERY).await;
        }
    });
    Ok(channel)
}

/// Connects the embedder of writes to semantic-svc, waiting up to `wait` for
/// it to answer.
pub async fn remote_embedder(channel: Channel, wait: Duration) -> Result<RemoteEmbedder, String> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match RemoteEmbedder::connect(channel.clone()).await {
            Ok(embedder) => return Ok(embedder),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(format!("semantic-svc did not answer: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

impl Mesh {
    /// Starts all four services: the gateway on `gateway`, the others on
    /// loopback ports of their own, over one store and one embedder.
    pub async fn start(
        gateway: TcpListener,
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        config: MeshConfig,
    ) -> Result<Self, String> {
        let (stop, rx) = watch::channel(false);
        let bind = || TcpListener::bind("127.0.0.1:0");
        let io = |e: std::io::Error| format!("cannot bind a loopback port: {e}");
        let (lexical_l, semantic_l, fusion_l) = (
            bind().await.map_err(io)?,
            bind().await.map_err(io)?,
            bind().await.map_err(io)?,
        );
        let addr = |l: &TcpListener| l.local_addr().map_err(io);
        let (lexical, semantic, fusion, gateway_addr) = (
            addr(&lexical_l)?,
            addr(&semantic_l)?,
            addr(&fusion_l)?,
            addr(&gateway)?,
        );

        // The internal services listen on loopback, in this process: TLS is
        // for the gateway's public port.
        let internal = trine_api::server::Serving {
            tls: None,
            ..config.serving.clone()
        };
        let mut tasks: Vec<(&'static str, Served)> = Vec::new();
        let mut registries = Vec::new();
        let service = LexicalService::new(store.clone(), config.lexical.clone())
            .with_embedder(embedder.clone());
        registries.push(("lexical", service.metrics()));
        tasks.push((
            "lexical",
            tokio::spawn(trine_lexical::run(
                lexical_l,
                service,
                internal.clone(),
                stopped(&rx),
            )),
        ));
        let service = SemanticService::new(store.clone(), embedder, config.semantic.clone());
        registries.push(("semantic", service.metrics()));
        tasks.push((
            "semantic",
            tokio::spawn(trine_semantic::run(
                semantic_l,
                service,
                internal.clone(),
                stopped(&rx),
            )),
        ));
        let service = FusionService::new(config.search.fusion);
        registries.push(("fusion", service.metrics()));
        tasks.push((
            "fusion",
            tokio::spawn(trine_fusion::run(
                fusion_l,
                service,
                internal.clone(),
                stopped(&rx),
            )),
        ));

        let peers = Peers::lazy(
            channel(&lexical.to_string())?,
            channel(&semantic.to_string())?,
            channel(&fusion.to_string())?,
        );
        let writes =
            remote_embedder(channel(&semantic.to_string())?, Duration::from_secs(30)).await?;
        let writer = Writer::new(store.clone(), Arc::new(writes));
        let mut service = MemoryService::new(writer).with_search(Searcher::new(
            peers,
            store,
            config.search.clone(),
        ));
        if let Some(keys) = config.keys.clone() {
            service = service.with_keys(keys);
        }
        if let Some(quotas) = config.quotas.clone() {
            service = service.with_quotas(quotas);
        }
        registries.insert(0, ("gateway", service.metrics()));
        tasks.push((
            "gateway",
            tokio::spawn(trine_gateway::run(
                gateway,
                service,
                config.serving.clone(),
                stopped(&rx),
            )),
        ));

        let mut metrics = None;
        let mut metrics_tasks: Vec<(&'static str, MetricsServed)> = Vec::new();
        if let Some(base) = config.metrics {
            let mut addrs = Vec::new();
            for (index, (name, registry)) in (0u16..).zip(registries) {
                let listener = bind_metrics(base, index).await?;
                addrs.push(listener.local_addr().map_err(io)?);
                metrics_tasks.push((
                    name,
                    tokio::spawn(trine_telemetry::metrics::serve(
                        listener,
                        registry,
                        stopped(&rx),
                    )),
                ));
            }
            if let [gateway, lexical, semantic, fusion] = addrs[..] {
                metrics = Some(MetricsAddrs {
                    gateway,
                    lexical,
                    semantic,
                    fusion,
                });
            }
        }
        Ok(Self {
            gateway: gateway_addr,
            lexical,
            semantic,
            fusion,
            metrics,
            stop,
            tasks,
            metrics_tasks,
        })
    }

    /// Signals every service to stop, then waits for each to drain.
    pub async fn stop(self) -> Result<(), String> {
        let _ = self.stop.send(true);
        let mut failures = Vec::new();
        for (name, task) in self.tasks {
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!("{name}: {e}")),
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
        for (name, task) in self.metrics_tasks {
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!("{name} metrics: {e}")),
                Err(e) => failures.push(format!("{name} metrics: {e}")),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }
}

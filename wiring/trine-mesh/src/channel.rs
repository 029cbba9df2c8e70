//! Channels to peers (one address, a list of replicas, or every address a
//! `dns://` name resolves to, again every 5 s), the embedder of writes on
//! semantic-svc, and the gateway's client that sends an API key.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use trine_semantic::RemoteEmbedder;
use trine_telemetry::grpc::Transport;

use crate::MeshError;

/// A gateway's client that sends an API key with every call: over a
/// channel, or to the gateway of a mesh in this process ([`Mesh::client`]).
///
/// [`Mesh::client`]: crate::Mesh::client
pub type GatewayClient = trine_api::v1::memory_client::MemoryClient<
    tonic::service::interceptor::InterceptedService<Transport, ApiKey>,
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
pub fn gateway_client(channel: Channel, key: Option<&str>) -> Result<GatewayClient, MeshError> {
    over(Transport::remote(channel), key)
}

/// A client of the gateway over `transport`, sending `key` (if any).
pub(crate) fn over(transport: Transport, key: Option<&str>) -> Result<GatewayClient, MeshError> {
    let value = key
        .map(|k| {
            format!("Bearer {k}").parse().map_err(|_| {
                MeshError::Address("the API key holds characters a header cannot carry".to_string())
            })
        })
        .transpose()?;
    Ok(trine_api::v1::memory_client::MemoryClient::with_interceptor(transport, ApiKey(value)))
}

/// How often a `dns://` peer's name is resolved again.
const RESOLVE_EVERY: Duration = Duration::from_secs(5);

/// The client TLS of calls to peers, when there is one.
type Tls = Option<tonic::transport::ClientTlsConfig>;

/// One peer's endpoint; with `tls`, over TLS (`host:port` becomes https).
fn endpoint(addr: &str, tls: &Tls) -> Result<Endpoint, MeshError> {
    let url = match (addr.contains("://"), tls) {
        (true, _) => addr.to_string(),
        (false, None) => format!("http://{addr}"),
        (false, Some(_)) => format!("https://{addr}"),
    };
    if tls.is_some() && url.starts_with("http://") {
        return Err(MeshError::Address(format!(
            "peer address {url:?} is plain http but [tls] ca is set: give https:// or host:port"
        )));
    }
    let endpoint = Endpoint::from_shared(url.clone())
        .map(|e| e.connect_timeout(Duration::from_secs(2)))
        .map_err(|e| MeshError::Address(format!("peer address {url:?}: {e}")))?;
    match tls {
        Some(tls) => endpoint
            .tls_config(tls.clone())
            .map_err(|e| MeshError::Address(format!("peer address {url:?}: TLS: {e}"))),
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
pub fn channel(addr: &str) -> Result<Channel, MeshError> {
    channel_tls(addr, None)
}

/// As [`channel`], over TLS when `tls` is given (a `dns://` name is the name
/// the peers' certificates must carry).
pub fn channel_tls(addr: &str, tls: Tls) -> Result<Channel, MeshError> {
    if let Some(target) = addr.strip_prefix("dns://") {
        let host = target.rsplit_once(':').map_or(target, |(host, _)| host);
        let tls = tls.map(|t| t.domain_name(host));
        return dns_channel(target, tls);
    }
    let addrs: Vec<&str> = addr.split(',').map(str::trim).collect();
    if addrs.iter().any(|a| a.is_empty()) {
        return Err(MeshError::Address(format!(
            "peer address {addr:?}: an empty address in the list"
        )));
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

fn dns_channel(target: &str, tls: Tls) -> Result<Channel, MeshError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        MeshError::Address(format!(
            "dns://{target}: resolving needs a running Tokio runtime"
        ))
    })?;
    if !target
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
    {
        return Err(MeshError::Address(format!(
            "peer address dns://{target}: give dns://name:port"
        )));
    }
    let (channel, changes) = Channel::balance_channel::<SocketAddr>(64);
    let target = target.to_string();
    runtime.spawn(async move {
        let mut known: HashSet<SocketAddr> = HashSet::new();
        // Ends when every clone of the channel is gone.
        while !changes.is_closed() {
            match tokio::net::lookup_host(target.as_str()).await {
                Ok(found) => {
                    let found = reachable(found.collect()).await;
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

/// How long a resolved address has to accept a connection to be balanced to.
const PROBE: Duration = Duration::from_millis(500);

/// The addresses a name resolves to that accept a TCP connection now: a
/// replica address nothing listens on (`localhost` resolving to `::1` as
/// well as `127.0.0.1`, a pod gone) would fail every call the balancer
/// sends it, so it is left out until a later resolution finds it answering.
async fn reachable(found: HashSet<SocketAddr>) -> HashSet<SocketAddr> {
    let mut open = HashSet::with_capacity(found.len());
    for addr in found {
        let probe = tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(addr)).await;
        if matches!(probe, Ok(Ok(_))) {
            open.insert(addr);
        }
    }
    open
}

/// Connects the embedder of writes to semantic-svc, waiting up to `wait` for
/// it to answer.
pub async fn remote_embedder(
    channel: Channel,
    wait: Duration,
) -> Result<RemoteEmbedder, MeshError> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match RemoteEmbedder::connect(channel.clone()).await {
            Ok(embedder) => return Ok(embedder),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(MeshError::Peer(format!("semantic-svc did not answer: {e}")));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

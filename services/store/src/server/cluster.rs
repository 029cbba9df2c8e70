//! The nodes of a Qdrant server or cluster: which ones `--qdrant` names,
//! how trine's collection is laid out over them and read from them, and
//! the one place a call moves on to the next node when one fails.

use super::*;

/// The nodes `--qdrant` names: a comma-separated list of gRPC URLs, or
/// `dns://name:port`, every address the name resolves to now (a headless
/// service's pods).
pub(super) async fn node_urls(raw: &str) -> Result<Vec<String>> {
    if let Some(target) = raw.strip_prefix("dns://") {
        let found = tokio::net::lookup_host(target)
            .await
            .map_err(|e| StoreError::Unreachable {
                url: raw.to_string(),
                why: format!("cannot resolve {target}: {e}"),
            })?;
        let mut urls: Vec<String> = found.map(|addr| format!("http://{addr}")).collect();
        urls.sort();
        urls.dedup();
        return Ok(urls);
    }
    Ok(raw
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(String::from)
        .collect())
}

/// The HTTP/2 connections the client keeps to each node, calls spread over
/// them in turn (each multiplexes its calls).
pub const CHANNELS_PER_NODE: usize = 3;

/// Connects every channel of `client`'s pool: one call on each, in turn
/// (the pool hands its channels out round robin, connecting one on first
/// use). A node that does not answer is left to connect on use.
async fn warm(client: &Qdrant) {
    for _ in 0..CHANNELS_PER_NODE {
        if client.health_check().await.is_err() {
            return;
        }
    }
}

/// A client for each node, its pool of [`CHANNELS_PER_NODE`] channels not
/// connected yet.
fn clients(urls: &[&str], api_key: &Option<String>) -> Result<Vec<(String, Qdrant)>> {
    let mut nodes = Vec::with_capacity(urls.len());
    for node in urls {
        let mut config = Qdrant::from_url(node)
            .api_key(api_key.clone())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .skip_compatibility_check();
        config.set_pool_size(CHANNELS_PER_NODE);
        let client = config.build().map_err(|e| match e {
            QdrantError::InvalidUri(e) => StoreError::invalid(
                "qdrant url",
                format!("`{node}` ({e}): use the gRPC address, e.g. http://localhost:6334"),
            ),
            other => StoreError::Unreachable {
                url: node.to_string(),
                why: why(&other, node),
            },
        })?;
        nodes.push((node.to_string(), client));
    }
    Ok(nodes)
}

/// The version of the first node, in order, that answers a health check,
/// and its index; none answering, `url` is unreachable, each node's reason
/// given.
async fn first_answer(url: &str, nodes: &[(String, Qdrant)]) -> Result<(String, usize)> {
    let mut reasons = Vec::new();
    for (i, (node, client)) in nodes.iter().enumerate() {
        match client.health_check().await {
            Ok(health) => return Ok((health.version, i)),
            Err(e) => reasons.push(format!("{node}: {}", why(&e, node))),
        }
    }
    Err(StoreError::Unreachable {
        url: url.to_string(),
        why: reasons.join("; "),
    })
}

/// A call to one node, as `ServerStore::call` runs it.
pub(super) type Call<'s, T> = std::pin::Pin<
    Box<dyn std::future::Future<Output = std::result::Result<T, QdrantError>> + Send + 's>,
>;

/// How a collection trine creates is spread over a Qdrant cluster; `None`
/// leaves Qdrant's default (one shard, no replica). A collection that exists
/// keeps its layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    pub shards: Option<u32>,
    pub replication_factor: Option<u32>,
    /// Replicas that must acknowledge a write before it is answered
    /// (Qdrant's default: 1, so that a node down leaves writes working).
    pub write_consistency_factor: Option<u32>,
}

/// How many replicas of a shard a read asks, Qdrant's read consistency
/// (default: one replica). With two replicas, anything above one needs both
/// nodes up to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadConsistency {
    /// This many replicas.
    Factor(u64),
    /// Every replica asked; what most of them hold is returned.
    Majority,
    /// Most replicas asked; what all of those hold is returned.
    Quorum,
    /// Every replica asked; what all of them hold is returned.
    All,
}

impl ReadConsistency {
    /// `majority`, `quorum`, `all` or a number of replicas.
    pub fn parse(raw: &str) -> std::result::Result<Self, String> {
        match raw.trim() {
            "majority" => Ok(Self::Majority),
            "quorum" => Ok(Self::Quorum),
            "all" => Ok(Self::All),
            n => match n.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Self::Factor(n)),
                _ => Err(format!(
                    "read_consistency {raw:?}: give majority, quorum, all or a number of replicas >= 1"
                )),
            },
        }
    }

    pub(super) fn wire(self) -> q::ReadConsistency {
        use q::read_consistency::Value;
        let value = match self {
            Self::Factor(n) => Value::Factor(n),
            Self::Majority => Value::Type(q::ReadConsistencyType::Majority as i32),
            Self::Quorum => Value::Type(q::ReadConsistencyType::Quorum as i32),
            Self::All => Value::Type(q::ReadConsistencyType::All as i32),
        };
        q::ReadConsistency { value: Some(value) }
    }
}

impl ServerStore {
    /// Connects to the Qdrant server at `url` (gRPC, e.g. `http://localhost:6334`),
    /// with the API key from `TRINE_QDRANT_API_KEY` if set, and checks that it answers.
    pub async fn connect(url: &str, collection: &str) -> Result<ServerStore> {
        let api_key = std::env::var(API_KEY_ENV)
            .ok()
            .filter(|key| !key.trim().is_empty());
        Self::connect_with_key(url, collection, api_key).await
    }

    /// As [`Self::connect`], with the server's API key given (`None`: none).
    pub async fn connect_with_key(
        url: &str,
        collection: &str,
        api_key: Option<String>,
    ) -> Result<ServerStore> {
        if collection.trim().is_empty() {
            return Err(StoreError::invalid(
                "collection name",
                "it is empty: pass `--collection NAME`",
            ));
        }
        let urls = node_urls(url).await?;
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        if urls.is_empty() {
            return Err(StoreError::invalid(
                "qdrant url",
                "it is empty: give a node's gRPC address, e.g. http://localhost:6334",
            ));
        }
        let nodes = clients(&urls, &api_key)?;
        // One node answering is enough: the others are failed over to later.
        let (version, current) = first_answer(url, &nodes).await?;
        // Every channel connected now rather than by the first searches: the
        // node that answered, before this returns; the others (failed over to
        // later) in the background, so that one down does not hold the start.
        warm(&nodes[current].1).await;
        for (i, (_, client)) in nodes.iter().enumerate() {
            if i != current {
                let client = client.clone();
                tokio::spawn(async move { warm(&client).await });
            }
        }
        Ok(ServerStore {
            engine: trine_core::model::Engine::qdrant(&version),
            nodes,
            current: AtomicUsize::new(current),
            url: url.to_string(),
            collection: collection.to_string(),
            layout: Layout::default(),
            schema: PayloadSchema::default(),
            dense_dim: AtomicUsize::new(0),
            tokens: std::sync::atomic::AtomicU8::new(0),
            read_consistency: None,
            journal_ready: AtomicBool::new(false),
            batch_reads: false,
            journaled: AtomicUsize::new(0),
            api_key,
        })
    }

    /// Runs `op` on a node, moving on at once to the next node named when
    /// one cannot be reached (unavailable, a failed connect, a deadline) or
    /// fails inside the cluster (an internal error): one try a node. The
    /// node that answered is tried first next time. Trying again after a
    /// pause, under a budget, is the service's ([`crate::Retrying`]).
    /// Every call trine makes is idempotent (upserts by id, deletes, reads).
    pub(super) async fn call<'s, T>(&'s self, op: impl Fn(&'s Qdrant) -> Call<'s, T>) -> Result<T> {
        let n = self.nodes.len();
        let first = self.current.load(Ordering::Relaxed) % n;
        let mut last = None;
        for attempt in 0..n {
            let i = (first + attempt) % n;
            let (node, client) = &self.nodes[i];
            match op(client).await {
                Ok(answer) => {
                    if i != first {
                        self.current.store(i, Ordering::Relaxed);
                        tracing::warn!(node = %node, "qdrant: failed over to another node");
                    }
                    return Ok(answer);
                }
                Err(e) => match client_error(e, node, &self.collection) {
                    // A node down, or a cluster between states (a replica
                    // restarting: "Local shard 2 not found", "1 of 1 read
                    // operations failed"): another try, on the next node.
                    err @ (StoreError::Unreachable { .. } | StoreError::Backend(_)) => {
                        last = Some(err);
                    }
                    other => return Err(other),
                },
            }
        }
        Err(last.unwrap_or_else(|| StoreError::Backend("no qdrant node to call".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn nodes_are_a_list_or_what_a_name_resolves_to() {
        assert_eq!(
            node_urls("http://a:6334, http://b:6334,").await.unwrap(),
            ["http://a:6334", "http://b:6334"]
        );
        assert_eq!(
            node_urls("dns://127.0.0.1:6334").await.unwrap(),
            ["http://127.0.0.1:6334"]
        );
        assert!(node_urls("dns://no-such-host.invalid:6334").await.is_err());
    }
}

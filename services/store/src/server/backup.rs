//! Backup and restore of a server collection over Qdrant's snapshots: a
//! snapshot of the collection taken on every node (each holds its own
//! shards), downloaded from the node's REST port and deleted there; a
//! restore uploads each node's snapshot back to that node, as Qdrant
//! recovers a cluster's collection. Every node must be named
//! (`--qdrant a,b,c`, or a `dns://` name that resolves to all).

use chrono::Utc;

use super::rest;
use super::*;
use crate::backup::{self as b, Manifest};

/// How long a restore waits, after each node's snapshot, for every replica
/// of the restored collection to be active again.
const SHARDS_ACTIVE_WAIT: Duration = Duration::from_secs(120);

fn snapshot_file(i: usize) -> String {
    format!("server/node-{i}.snapshot")
}

impl ServerStore {
    /// The REST address of each node, in the order of the nodes.
    fn rest_urls(&self) -> Result<Vec<String>> {
        self.nodes
            .iter()
            .map(|(url, _)| rest::rest_of(url))
            .collect()
    }

    /// Refuses a backup or restore that would leave out nodes holding
    /// shards of the collection.
    async fn every_node_named(&self) -> Result<()> {
        let request = q::CollectionClusterInfoRequest {
            collection_name: self.collection.clone(),
        };
        let info = self
            .call(|c| Box::pin(c.collection_cluster_info(request.clone())))
            .await?;
        let mut peers: HashSet<u64> = info.remote_shards.iter().map(|s| s.peer_id).collect();
        if !info.local_shards.is_empty() {
            peers.insert(info.peer_id);
        }
        if peers.len() > self.nodes.len() {
            return Err(StoreError::invalid(
                "qdrant url",
                format!(
                    "the collection's shards are on {} nodes and {} are named: name every node (`--qdrant http://a:6334,http://b:6334,...`), each keeps its own shards' snapshot",
                    peers.len(),
                    self.nodes.len()
                ),
            ));
        }
        Ok(())
    }

    /// The collection's shards and transfers as `node` (its `client`) sees
    /// them.
    async fn cluster_info_of(
        &self,
        node: &str,
        client: &Qdrant,
    ) -> Result<q::CollectionClusterInfoResponse> {
        client
            .collection_cluster_info(q::CollectionClusterInfoRequest {
                collection_name: self.collection.clone(),
            })
            .await
            .map_err(|e| client_error(e, node, &self.collection))
    }

    /// Waits until every node reports every replica of the collection
    /// active (after a restore, replicas recover and sync).
    async fn all_shards_active(&self, wait: Duration) -> Result<()> {
        let started = Instant::now();
        let active = q::ReplicaState::Active as i32;
        loop {
            let mut pending = Vec::new();
            for (node, client) in &self.nodes {
                let info = self.cluster_info_of(node, client).await?;
                let state =
                    |s: i32| q::ReplicaState::try_from(s).map_or("unknown", |s| s.as_str_name());
                pending.extend(
                    info.local_shards
                        .iter()
                        .filter(|s| s.state != active)
                        .map(|s| format!("shard {} on {node}: {}", s.shard_id, state(s.state))),
                );
                pending.extend(
                    info.remote_shards
                        .iter()
                        .filter(|s| s.state != active)
                        .map(|s| {
                            format!(
                                "shard {} on peer {}: {}",
                                s.shard_id,
                                s.peer_id,
                                state(s.state)
                            )
                        }),
                );
                pending.extend(info.shard_transfers.iter().map(|t| {
                    format!(
                        "a transfer of shard {} from peer {} to {} under way",
                        t.shard_id, t.from, t.to
                    )
                }));
            }
            if pending.is_empty() {
                return Ok(());
            }
            if started.elapsed() > wait {
                return Err(StoreError::Backend(format!(
                    "restored, but replicas are not active after {} s ({}): see the Qdrant logs",
                    wait.as_secs(),
                    pending.join(", ")
                )));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Uploads each node's snapshot of `backup` to its node (REST `rest`)
    /// with this recovery priority, waiting after each until every replica
    /// is active: two at once would contend for the same shards.
    async fn upload_each(&self, backup: &Path, rest: &[String], priority: &str) -> Result<()> {
        for (i, rest) in rest.iter().enumerate() {
            let url = format!(
                "{rest}/collections/{}/snapshots/upload?priority={priority}&wait=true",
                self.collection
            );
            let file = b::within(backup, &snapshot_file(i))?;
            rest::upload(&url, self.api_key.as_deref(), &file).await?;
            self.all_shards_active(SHARDS_ACTIVE_WAIT).await?;
        }
        Ok(())
    }

    /// Whether every shard's replicas, on every node, hold as many points.
    async fn replicas_agree(&self) -> Result<bool> {
        let mut counts: HashMap<u32, HashSet<u64>> = HashMap::new();
        for (node, client) in &self.nodes {
            let info = self.cluster_info_of(node, client).await?;
            for shard in &info.local_shards {
                counts
                    .entry(shard.shard_id)
                    .or_default()
                    .insert(shard.points_count);
            }
        }
        Ok(counts.values().all(|held| held.len() == 1))
    }

    pub(super) async fn take_backup(&self, dir: &Path) -> Result<Manifest> {
        let info = self.info().await?.ok_or_else(|| self.no_collection())?;
        self.every_node_named().await?;
        let rest = self.rest_urls()?;
        let api_key = self.api_key.as_deref();
        std::fs::create_dir_all(dir.join("server")).map_err(|source| StoreError::Io {
            path: dir.join("server"),
            source,
        })?;
        for (i, ((node, client), rest)) in self.nodes.iter().zip(&rest).enumerate() {
            let created = client
                .create_snapshot(q::CreateSnapshotRequest {
                    collection_name: self.collection.clone(),
                })
                .await
                .map_err(|e| client_error(e, node, &self.collection))?;
            let name = created
                .snapshot_description
                .map(|d| d.name)
                .ok_or_else(|| StoreError::Backend(format!("{node}: no snapshot was made")))?;
            let url = format!("{rest}/collections/{}/snapshots/{name}", self.collection);
            let downloaded = rest::download(&url, api_key, &dir.join(snapshot_file(i))).await;
            // The node keeps no copy, whether the download worked or not.
            let deleted = client
                .delete_snapshot(q::DeleteSnapshotRequest {
                    collection_name: self.collection.clone(),
                    snapshot_name: name.clone(),
                })
                .await;
            downloaded?;
            if let Err(e) = deleted {
                tracing::warn!(%node, snapshot = %name, error = %why(&e, node), "a snapshot was left on the node");
            }
        }
        Ok(Manifest {
            format: b::FORMAT,
            trine: env!("CARGO_PKG_VERSION").to_string(),
            schema: info.schema,
            backend: BACKEND.into(),
            collection: self.collection.clone(),
            embedder: info.embedder,
            points: info.points,
            taken_at: Utc::now().to_rfc3339(),
            files: b::list(dir, "server")?,
            nodes: self.nodes.iter().map(|(url, _)| url.clone()).collect(),
        })
    }

    /// Restores the backup in `backup` (checked: [`crate::backup::open`])
    /// as this store's collection: each node's snapshot uploaded to the
    /// node in the same place of the list (the collection is replaced, or
    /// created, with the snapshot's configuration). The change journal is
    /// dropped: a lexical-svc keeping counts over the collection finds it
    /// gone and rebuilds them; a writer makes it again. Returns the points
    /// it holds, once every replica is active, checked against the
    /// manifest.
    pub async fn restore(&self, backup: &Path) -> Result<u64> {
        let manifest = b::open(backup)?;
        if manifest.backend != BACKEND {
            return Err(StoreError::invalid(
                "backup",
                "it is of an embedded collection: restore it without --qdrant (into --data)",
            ));
        }
        if manifest.nodes.len() != self.nodes.len() {
            return Err(StoreError::invalid(
                "backup",
                format!(
                    "it was taken on {} nodes ({}) and {} are named: restore onto a cluster of as many nodes, named in the same order",
                    manifest.nodes.len(),
                    manifest.nodes.join(", "),
                    self.nodes.len()
                ),
            ));
        }
        let rest = self.rest_urls()?;
        // Each node takes back its own shards as the backup took them, with
        // no sync between replicas: no shard transfer can stall the restore
        // (with `snapshot` priority the other nodes' newer replicas were
        // synced from the restored one, and a transfer could leave a replica
        // inactive past the wait, in about one full test run of three).
        let quiet = self.upload_each(backup, &rest, "no_sync").await;
        if quiet.is_err() || !self.replicas_agree().await? {
            // A write made while the backup's snapshots were taken, node
            // after node, is on some replicas only (or a replica was left
            // inactive): each node's snapshot again as the source of its
            // shards, the other replicas synced from it, so that every
            // replica of a shard holds the same.
            self.upload_each(backup, &rest, "snapshot")
                .await
                .map_err(|again| match &quiet {
                    Err(first) => StoreError::Backend(format!(
                        "{first}; uploaded again, each node the source of its shards: {again}"
                    )),
                    Ok(()) => again,
                })?;
        }
        self.clear_journal().await?;
        let points = self.info().await?.map_or(0, |i| i.points);
        if points != manifest.points {
            return Err(StoreError::Backend(format!(
                "the restored collection holds {points} points, the backup {}: a node's snapshot did not recover",
                manifest.points
            )));
        }
        Ok(points)
    }
}

//! A 3-node Qdrant cluster that loses a node: the mesh over `--qdrant` naming
//! every node (3 shards, 2 replicas each) under a bounded load of searches
//! and writes while node 0 — the first named, the one every call goes to
//! first — is killed with SIGKILL and then restarted on its storage. Prints
//! the failed searches by code (goal 0) and checks that every acknowledged
//! write is there once the node is back. Runs when the test command started
//! the cluster (`TRINE_QDRANT_CLUSTER_URLS`, `_PIDS`, `_DIR`).
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Mutex;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, UpsertRequest};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::MeshConfig;
use trine_store::{Layout, ReadConsistency, ServerStore, Store};

type Client = MemoryClient<tonic::transport::Channel>;

struct Cluster {
    urls: String,
    pids: Vec<u32>,
    dir: String,
}

fn cluster() -> Option<Cluster> {
    let urls = std::env::var("TRINE_QDRANT_CLUSTER_URLS").ok()?;
    let pids = std::env::var("TRINE_QDRANT_CLUSTER_PIDS").ok()?;
    let dir = std::env::var("TRINE_QDRANT_CLUSTER_DIR").ok()?;
    Some(Cluster {
        urls,
        pids: pids.split(',').map(|p| p.parse().unwrap()).collect(),
        dir,
    })
}

/// Starts node `i` again on its storage (../shared/qdrant/restart-qdrant-node)
/// and records the cluster's pids where the test command stops them from.
fn restart(cluster: &mut Cluster, i: usize) {
    let script = trine_testkit::workspace_dir().join("../shared/qdrant/restart-qdrant-node");
    let pids: Vec<String> = cluster.pids.iter().map(u32::to_string).collect();
    let out = std::process::Command::new(script)
        .arg(i.to_string())
        .env("TRINE_QDRANT_DIR", &cluster.dir)
        .env("TRINE_QDRANT_PIDS", pids.join(","))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "restart node {i}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let list = line.trim().trim_start_matches("export TRINE_QDRANT_PIDS=");
    cluster.pids = list.split(',').map(|p| p.parse().unwrap()).collect();
    std::fs::write(format!("{}/pids", cluster.dir), list).unwrap();
}

fn search(i: u64) -> SearchRequest {
    SearchRequest {
        query: format!("deploy {} of the cluster service", i % 40),
        filters: Some(Filters {
            tenant: "acme".into(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    }
}

/// Writes batches of new memories until told to stop; returns the ids acknowledged.
async fn write(
    mut client: Client,
    stop: Arc<AtomicBool>,
    failed: Arc<Mutex<BTreeMap<String, usize>>>,
) -> Vec<String> {
    let mut acked = Vec::new();
    for batch in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let records: Vec<Record> = (0..8)
            .map(|i| Record {
                id: format!("00000000-0000-4000-8000-{:012}", batch * 8 + i),
                text: format!(
                    "deploy {} of the cluster service, batch {batch}",
                    (batch + i) % 40
                ),
                tenant: "acme".into(),
                ..Record::default()
            })
            .collect();
        let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        match client.upsert(UpsertRequest { records }).await {
            Ok(answer) if answer.get_ref().failed.is_empty() => acked.extend(ids),
            Ok(answer) => panic!("items refused: {:?}", answer.get_ref().failed),
            Err(e) => {
                *failed
                    .lock()
                    .await
                    .entry(format!("upsert {:?}", e.code()))
                    .or_default() += 1
            }
        }
    }
    acked
}

/// Searches until told to stop; returns how many.
async fn read(
    mut client: Client,
    stop: Arc<AtomicBool>,
    failed: Arc<Mutex<BTreeMap<String, usize>>>,
) -> u64 {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        match client.search(search(n)).await {
            Ok(answer) if !answer.get_ref().degraded => {}
            Ok(answer) => {
                *failed
                    .lock()
                    .await
                    .entry(format!(
                        "degraded: {}",
                        answer.get_ref().degraded_reasons.join("; ")
                    ))
                    .or_default() += 1;
            }
            Err(e) => {
                *failed
                    .lock()
                    .await
                    .entry(format!("search {:?}", e.code()))
                    .or_default() += 1
            }
        }
        n += 1;
    }
    n
}

/// `n` searches in a row (they pace the test), failures counted.
async fn searches(client: &mut Client, n: u64, failed: &Mutex<BTreeMap<String, usize>>) {
    for i in 0..n {
        if let Err(e) = client.search(search(i)).await {
            *failed
                .lock()
                .await
                .entry(format!("search {:?}", e.code()))
                .or_default() += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_survives_its_first_node_killed_and_restarted() {
    let Some(mut cluster) = cluster() else {
        trine_testkit::skipped(
            "the 3-node cluster test",
            "the test command starts one from ../shared/qdrant",
        );
        return;
    };
    let collection = format!("trine_cluster_{}", uuid::Uuid::new_v4().simple());
    let store = ServerStore::connect(&cluster.urls, &collection)
        .await
        .unwrap()
        .with_layout(Layout {
            shards: Some(3),
            replication_factor: Some(2),
            write_consistency_factor: Some(1),
        })
        // Sent on every read (one replica: a node down leaves reads working).
        .with_read_consistency(Some(ReadConsistency::Factor(1)));
    let store: Arc<dyn Store> = Arc::new(store);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(64));
    let mesh = trine_testkit::mesh(store, embedder, MeshConfig::default()).await;
    let client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let failed: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let writer = tokio::spawn(write(client.clone(), stop.clone(), failed.clone()));
    let reader = tokio::spawn(read(client.clone(), stop.clone(), failed.clone()));
    let mut probe = client.clone();
    searches(&mut probe, 20, &failed).await;

    // Node 0, the first named: SIGKILL, load goes on, then back on its storage.
    std::process::Command::new("kill")
        .args(["-9", &cluster.pids[0].to_string()])
        .status()
        .unwrap();
    searches(&mut probe, 40, &failed).await;
    restart(&mut cluster, 0);
    searches(&mut probe, 40, &failed).await;
    stop.store(true, Ordering::Relaxed);
    let acked = writer.await.unwrap();
    let searched = reader.await.unwrap();

    let failed = failed.lock().await.clone();
    let summary = format!(
        "cluster: {searched} searches and {} acknowledged writes under load, node 0 (the first named) killed -9 and restarted; failed calls: {}",
        acked.len(),
        if failed.is_empty() {
            "0".to_string()
        } else {
            format!("{failed:?}")
        }
    );
    eprintln!("{summary}");
    assert!(!acked.is_empty() && searched > 0);
    let mut client = client;
    let got = trine_testkit::get_all(&mut client, "acme", &acked).await;
    assert_eq!(got.len(), acked.len(), "every acknowledged write is there");
    // The test command prints it after the tests.
    std::fs::write(
        format!("{}/summary", cluster.dir),
        format!("{summary}; acknowledged writes lost: 0\n"),
    )
    .unwrap();
    assert!(failed.is_empty(), "failed calls: {failed:?}");
    mesh.stop().await.unwrap();
}

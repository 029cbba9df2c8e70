//! Backup and restore (issue 34, point 1), as an operator runs them: the
//! sample ingested, a backup taken — embedded, from `trine serve` while it
//! serves (`trine backup create NAME --endpoint`); over a Qdrant server,
//! its snapshot — then memories written, changed and deleted, then the
//! backup restored: every memory's text, payload and vectors are exactly
//! those at the backup, and those written after it are gone. A backup of
//! another layout version, or a damaged one, is refused before anything is
//! touched.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use trine_store::{EdgeStore, Point, ServerStore, Store};
use uuid::Uuid;

fn trine(data: &Path) -> Command {
    trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{cmd:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sample() -> PathBuf {
    trine_testkit::workspace_dir().join("samples/memories.jsonl")
}

/// The sample's ids, and those of the memories written after the backup.
fn ids() -> (Vec<Uuid>, Vec<Uuid>) {
    let sample = std::fs::read_to_string(sample()).unwrap();
    let ids = sample
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().parse().unwrap()
        })
        .collect();
    let later = (1..=5).map(|n| Uuid::from_u128(0xbac0_0000 + n)).collect();
    (ids, later)
}

/// Memories written after the backup: five new, and the first sample
/// memory of `tenant` changed.
fn later_file(dir: &Path, changed: Uuid, tenant: &str) -> PathBuf {
    let (_, later) = ids();
    let mut lines: Vec<String> = later
        .iter()
        .map(|id| {
            serde_json::json!({"id": id.to_string(), "tenant": tenant, "text": format!("written after the backup {id}")})
                .to_string()
        })
        .collect();
    lines.push(
        serde_json::json!({"id": changed.to_string(), "tenant": tenant, "text": "changed after the backup"})
            .to_string(),
    );
    let path = dir.join("later.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// The first sample memory (its id and tenant) and another of the same
/// tenant, to change and to delete.
fn victims(points: &[Point]) -> (Uuid, Uuid, String) {
    let tenant = points[0].memory.tenant.clone();
    let other = points
        .iter()
        .skip(1)
        .find(|p| p.memory.tenant == tenant)
        .unwrap();
    (points[0].memory.id, other.memory.id, tenant)
}

/// Compares two states point by point: text, payload and every vector.
fn same_state(restored: &[Point], backed_up: &[Point]) {
    assert_eq!(restored.len(), backed_up.len(), "points");
    for (r, b) in restored.iter().zip(backed_up) {
        assert_eq!(r.memory, b.memory, "memory {}", b.memory.id);
        assert_eq!(r.dense, b.dense, "dense vector of {}", b.memory.id);
        assert_eq!(r.sparse, b.sparse, "sparse vector of {}", b.memory.id);
        assert_eq!(r.tokens, b.tokens, "tokens of {}", b.memory.id);
        assert!(!b.dense.is_empty() && b.sparse.is_some());
        assert!(
            b.tokens.as_ref().is_some_and(|t| !t.is_empty()),
            "{} was written with its tokens",
            b.memory.id
        );
    }
}

/// Two messages of one thread, written beside the sample in the embedded
/// test: a backup keeps their thread and place.
fn threaded_file(dir: &Path) -> (PathBuf, Vec<Uuid>) {
    let ids: Vec<Uuid> = (1..=2).map(|n| Uuid::from_u128(0xbac1_0000 + n)).collect();
    let lines: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(seq, id)| {
            serde_json::json!({"id": id.to_string(), "text": format!("message {seq} of the standup thread"),
                "tenant": "acme", "thread": "standup-2026-11-11", "seq": seq})
            .to_string()
        })
        .collect();
    let path = dir.join("threaded.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    (path, ids)
}

fn all_ids() -> Vec<Uuid> {
    let (mut ids, later) = ids();
    ids.extend(later);
    ids
}

#[test]
fn an_embedded_backup_taken_while_serving_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    run(trine(&data).arg("ingest").arg(sample()));
    let (threaded, threaded_ids) = threaded_file(dir.path());
    run(trine(&data).arg("ingest").arg(&threaded));
    let with_threads = || {
        let mut ids = all_ids();
        ids.extend(threaded_ids.iter().copied());
        ids
    };
    let backed_up = {
        let store = EdgeStore::open(&data, "memories").unwrap();
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(store.points(&with_threads()))
            .unwrap()
    };
    assert_eq!(backed_up.len(), ids().0.len() + threaded_ids.len());
    let places: Vec<(Option<&str>, Option<u64>)> = backed_up
        .iter()
        .filter(|p| threaded_ids.contains(&p.memory.id))
        .map(|p| (p.memory.thread.as_deref(), p.memory.seq))
        .collect();
    assert_eq!(
        places,
        [
            (Some("standup-2026-11-11"), Some(0)),
            (Some("standup-2026-11-11"), Some(1))
        ],
        "the backup holds the thread and the place"
    );

    let backups = dir.path().join("backups");
    let mut server = {
        let mut cmd = trine(&data);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--metrics", "off"])
            .arg("--backup-dir")
            .arg(&backups);
        trine_testkit::Served::start(cmd)
    };
    let endpoint = format!("http://{}", server.addr);
    let said = run(trine(&data).args(["backup", "create", "nightly", "--endpoint", &endpoint]));
    assert!(
        said.contains(&format!("{} points", backed_up.len())),
        "{said}"
    );
    // A name is all a caller gives: no path.
    let refused = fails(trine(&data).args(["backup", "create", "../x", "--endpoint", &endpoint]));
    assert!(refused.contains("backup name"), "{refused}");

    // Written, changed and deleted after the backup, through the server.
    let (changed, deleted, tenant) = victims(&backed_up);
    run(trine(&data)
        .arg("ingest")
        .arg(later_file(dir.path(), changed, &tenant))
        .args(["--endpoint", &endpoint]));
    run(trine(&data).args([
        "delete",
        &deleted.to_string(),
        "--tenant",
        &tenant,
        "--endpoint",
        &endpoint,
    ]));
    trine_testkit::terminate(server.child.id());
    assert!(server.child.wait().unwrap().success());

    let backup = backups.join("nightly");
    let said = run(trine(&data).args(["backup", "check"]).arg(&backup));
    assert!(said.contains("every file matches"), "{said}");
    let said = run(trine(&data).args(["backup", "restore"]).arg(&backup));
    assert!(said.contains("kept at"), "{said}");

    let store = EdgeStore::open(&data, "memories").unwrap();
    let restored = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(store.points(&with_threads()))
        .unwrap();
    same_state(&restored, &backed_up);
    drop(store);

    // A backup of another layout version is refused, nothing touched.
    let manifest = backup.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let older = text.replace(
        &format!("\"schema\": {}", trine_store::SCHEMA),
        "\"schema\": 1",
    );
    assert_ne!(older, text);
    std::fs::write(&manifest, older).unwrap();
    let refused = fails(trine(&data).args(["backup", "restore"]).arg(&backup));
    assert!(refused.contains("layout version 1"), "{refused}");
    std::fs::write(&manifest, text).unwrap();
    // A damaged one too.
    let shard_file = std::fs::read_dir(backup.join("edge/memories"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_file())
        .unwrap();
    std::fs::write(&shard_file, b"damaged").unwrap();
    let refused = fails(trine(&data).args(["backup", "restore"]).arg(&backup));
    assert!(refused.contains("damaged"), "{refused}");
}

#[test]
fn a_server_backup_restores_exactly() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "backup and restore on a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return;
    };
    let url = url.split(',').next().unwrap().trim().to_string();
    server_backup_restores_exactly(&url, "");
}

/// On a 3-node cluster, shards 3, replication 2: a snapshot of every node.
#[test]
fn a_cluster_backup_restores_exactly() {
    let Ok(urls) = std::env::var("TRINE_QDRANT_CLUSTER_URLS") else {
        trine_testkit::skipped(
            "backup and restore on a Qdrant cluster",
            "set TRINE_QDRANT_CLUSTER_URLS to run it",
        );
        return;
    };
    server_backup_restores_exactly(&urls, "shards = 3\nreplication_factor = 2\n");
}

/// Backs up, changes and restores a collection of the server at `url`
/// created with the configuration `layout` (TOML).
/// Drops a test's collections when the test ends, passed or not: left on a
/// cluster, one being synced weighs on the tests after it (the cluster test
/// restarts a node and waits for its shards).
struct Dropped {
    grpc: String,
    collection: String,
}

impl Drop for Dropped {
    fn drop(&mut self) {
        for name in [
            self.collection.clone(),
            format!("{}__trine_changes", self.collection),
        ] {
            drop_collection(&self.grpc, &name);
        }
    }
}

fn server_backup_restores_exactly(url: &str, layout: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("trine.toml");
    std::fs::write(&config, layout).unwrap();
    let data = dir.path().join("data");
    let collection = format!(
        "trine_backup_{}_{}",
        std::process::id(),
        url.matches(',').count()
    );
    let _dropped = Dropped {
        grpc: url.split(',').next().unwrap().to_string(),
        collection: collection.clone(),
    };
    let server = |cmd: &mut Command| {
        cmd.args(["--qdrant", url, "--collection", &collection])
            .arg("--config")
            .arg(&config);
    };
    let mut ingest = trine(&data);
    server(&mut ingest);
    run(ingest.arg("ingest").arg(sample()));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        runtime
            .block_on(ServerStore::connect(url, &collection))
            .unwrap(),
    );
    let backed_up = runtime.block_on(store.points(&all_ids())).unwrap();
    assert_eq!(backed_up.len(), ids().0.len());

    if let Some((first, _)) = url.split_once(',') {
        // One node named of three: its snapshot holds its shards only.
        let mut create = trine(&data);
        create.args(["--qdrant", first, "--collection", &collection]);
        let refused = fails(
            create
                .args(["backup", "create"])
                .arg(dir.path().join("one")),
        );
        assert!(refused.contains("name every node"), "{refused}");
    }
    let backup = dir.path().join("backup");
    let mut create = trine(&data);
    server(&mut create);
    let said = run(create.args(["backup", "create"]).arg(&backup));
    assert!(
        said.contains(&format!("{} points", backed_up.len())),
        "{said}"
    );
    for i in 0..=url.matches(',').count() {
        assert!(backup.join(format!("server/node-{i}.snapshot")).is_file());
    }

    let (changed, deleted, tenant) = victims(&backed_up);
    let mut ingest = trine(&data);
    server(&mut ingest);
    run(ingest
        .arg("ingest")
        .arg(later_file(dir.path(), changed, &tenant)));
    let mut delete = trine(&data);
    server(&mut delete);
    run(delete.args(["delete", &deleted.to_string(), "--tenant", &tenant]));
    assert_ne!(
        runtime.block_on(store.points(&all_ids())).unwrap().len(),
        backed_up.len()
    );

    // A process that wrote (and journaled) before the restore...
    runtime
        .block_on(store.upsert(vec![backed_up[1].clone()]))
        .unwrap();
    let mut restore = trine(&data);
    server(&mut restore);
    let said = run(restore.args(["backup", "restore"]).arg(&backup));
    assert!(said.contains("restored"), "{said}");
    // ... writes after it too: the journal the restore dropped is made again.
    runtime
        .block_on(store.upsert(vec![backed_up[1].clone()]))
        .unwrap();
    let restored = runtime.block_on(store.points(&all_ids())).unwrap();
    same_state(&restored, &backed_up);
}

/// Deletes a collection through the REST port of the node whose gRPC
/// address is `grpc` (the port before it); best effort (it runs in `Drop`).
fn drop_collection(grpc: &str, name: &str) {
    use std::io::{Read, Write};
    let (host, port) = grpc
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .rsplit_once(':')
        .unwrap();
    let rest = format!("{host}:{}", port.parse::<u16>().unwrap() - 1);
    let Ok(mut stream) = std::net::TcpStream::connect(&rest) else {
        return;
    };
    let _ = write!(
        stream,
        "DELETE /collections/{name}?timeout=60 HTTP/1.1\r\nHost: {rest}\r\nConnection: close\r\n\r\n"
    );
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    if !answer.starts_with("HTTP/1.1 200") {
        eprintln!("dropping {name}: {answer}");
    }
}

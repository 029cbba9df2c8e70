//! kill -9 of `trine serve` during a write load, on the embedded store, as a
//! crash looks to trine: after each restart every acknowledged write is there
//! (upserts present with their text, deletes gone), the store opens, the
//! text index answers, and writers carry on where they were cut off. And
//! kill -9 of `trine ingest` during its index build: the next run finishes.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::{HashMap, HashSet};
use std::path::Path;

use tokio::sync::mpsc;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{DeleteRequest, Filters, Record, SearchRequest, UpsertRequest};

type Client = MemoryClient<tonic::transport::Channel>;

/// Kills, each after a different number of acknowledged batches.
const ROUNDS: u64 = 8;
/// Concurrent writers, each on its own ids.
const WRITERS: u64 = 3;
const BATCH: u64 = 8;
const TENANT: &str = "acme";

/// The acknowledged batches of round `round` before its kill: from the first
/// batch (writes still starting) to fifty.
fn kill_after(round: u64) -> u64 {
    1 + 7 * round
}

fn serve(data: &Path) -> trine_testkit::Served {
    let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data);
    cmd.args(["serve", "--listen", "127.0.0.1:0"]);
    trine_testkit::Served::start(cmd)
}

async fn connect(addr: &str) -> Client {
    MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

/// What a writer was told had happened, and the delete it is about to ask
/// for: a kill before the answer leaves that memory either way.
enum Ack {
    Upserted(Vec<(String, String)>),
    Deleting(String),
    Deleted(String),
}

fn id(round: u64, writer: u64, batch: u64, item: u64) -> String {
    format!(
        "00000000-{round:04}-4{writer:03}-8000-{:012}",
        batch * BATCH + item
    )
}

/// Upserts batches of new memories, and deletes one of its own earlier
/// memories every third batch, until the server goes away; sends each
/// acknowledged write on `acks`.
async fn write(addr: String, round: u64, writer: u64, acks: mpsc::UnboundedSender<Ack>) {
    let mut client = connect(&addr).await;
    let mut mine: Vec<String> = Vec::new();
    for batch in 0.. {
        if batch % 3 == 2
            && let Some(victim) = mine.pop()
        {
            let _ = acks.send(Ack::Deleting(victim.clone()));
            let asked = DeleteRequest {
                tenant: TENANT.to_string(),
                ids: vec![victim.clone()],
            };
            match client.delete(asked).await {
                Ok(_) => {
                    let _ = acks.send(Ack::Deleted(victim));
                }
                Err(_) => return,
            }
        }
        let records: Vec<Record> = (0..BATCH)
            .map(|item| Record {
                id: id(round, writer, batch, item),
                text: format!(
                    "crash round {round} writer {writer} batch {batch} item {item} of the load"
                ),
                tenant: TENANT.to_string(),
                ..Record::default()
            })
            .collect();
        let written: Vec<(String, String)> = records
            .iter()
            .map(|r| (r.id.clone(), r.text.clone()))
            .collect();
        match client.upsert(UpsertRequest { records }).await {
            Ok(answer) => {
                assert!(answer.get_ref().failed.is_empty(), "{answer:?}");
                mine.extend(written.iter().map(|(id, _)| id.clone()));
                let _ = acks.send(Ack::Upserted(written));
            }
            Err(_) => return,
        }
    }
}

/// Every acknowledged upsert is there with its text; every acknowledged
/// delete is gone; the last memory written is found first by its text.
async fn check(client: &mut Client, present: &HashMap<String, String>, deleted: &HashSet<String>) {
    let ids: Vec<String> = present.keys().cloned().collect();
    let got = trine_testkit::get_all(client, TENANT, &ids).await;
    let found: HashMap<&str, &str> = got
        .iter()
        .map(|r| (r.id.as_str(), r.text.as_str()))
        .collect();
    for id in &ids {
        assert_eq!(
            found.get(id.as_str()).copied(),
            Some(present[id].as_str()),
            "acknowledged memory {id} after the restart"
        );
    }
    let deleted: Vec<String> = deleted.iter().cloned().collect();
    let got = trine_testkit::get_all(client, TENANT, &deleted).await;
    assert!(got.is_empty(), "acknowledged deletes came back: {got:?}");
    if let Some((id, text)) = present.iter().max_by_key(|(id, _)| id.as_str()) {
        let answer = client
            .search(SearchRequest {
                query: text.clone(),
                limit: 3,
                filters: Some(Filters {
                    tenant: TENANT.to_string(),
                    ..Filters::default()
                }),
                ..SearchRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            answer.hits.first().map(|h| h.id.as_str()),
            Some(id.as_str()),
            "{answer:?}"
        );
    }
}

/// What must be there after a restart: acknowledged upserts, less the
/// memories under a delete (unknown until it is acknowledged); acknowledged
/// deletes must be gone.
fn record(ack: Ack, present: &mut HashMap<String, String>, deleted: &mut HashSet<String>) {
    match ack {
        Ack::Upserted(written) => present.extend(written),
        Ack::Deleting(id) => {
            present.remove(&id);
        }
        Ack::Deleted(id) => {
            deleted.insert(id);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_write_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut present: HashMap<String, String> = HashMap::new();
    let mut deleted: HashSet<String> = HashSet::new();
    for round in 0..ROUNDS {
        let mut server = serve(&data);
        let mut client = connect(&server.addr).await;
        check(&mut client, &present, &deleted).await;

        let (tx, mut acks) = mpsc::unbounded_channel();
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| tokio::spawn(write(server.addr.clone(), round, w, tx.clone())))
            .collect();
        drop(tx);
        // Kill mid-load, after a different number of batches each round.
        let kill_after = kill_after(round);
        let mut batches = 0;
        while batches < kill_after {
            let ack = acks.recv().await.expect("the writers run until the kill");
            batches += u64::from(matches!(ack, Ack::Upserted(_)));
            record(ack, &mut present, &mut deleted);
        }
        server.child.kill().unwrap(); // SIGKILL
        server.child.wait().unwrap();
        // Writes acknowledged before the kill landed.
        while let Some(ack) = acks.recv().await {
            record(ack, &mut present, &mut deleted);
        }
        for writer in writers {
            writer.await.unwrap();
        }
    }

    let server = serve(&data);
    let mut client = connect(&server.addr).await;
    check(&mut client, &present, &deleted).await;
    let acknowledged: u64 = (0..ROUNDS).map(kill_after).sum::<u64>() * BATCH;
    assert!(
        present.len() as u64 >= acknowledged / 2,
        "{}",
        present.len()
    );
    assert!(!deleted.is_empty());
    drop(client);
    drop(server);

    let doctor = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report:#}");
    assert!(report["info"]["points"].as_u64().unwrap() >= present.len() as u64);
}

/// A file of `n` notes of [`TENANT`] (ids `00000000-0000-4000-8000-<i>`)
/// and, last in id order, `planted` (id `ffffffff-…`).
fn corpus(dir: &Path, n: usize, planted: &str) -> std::path::PathBuf {
    use std::io::Write;
    let file = dir.join("memories.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    for i in 0..n {
        let line = serde_json::json!({
            "id": format!("00000000-0000-4000-8000-{i:012}"),
            "tenant": TENANT,
            "text": format!("note {i}: the deploy of service {} took {} minutes", i % 97, i % 13),
        });
        writeln!(out, "{line}").unwrap();
    }
    let line = serde_json::json!({"id": PLANTED, "tenant": TENANT, "text": planted});
    writeln!(out, "{line}").unwrap();
    file
}

const PLANTED: &str = "ffffffff-ffff-4fff-bfff-ffffffffffff";

/// Runs `cmd` (its stdout and stderr read together, line by line) until a
/// line starts with `until`, then kills it with SIGKILL: every line it
/// wrote before it died.
fn kill_at(cmd: &mut std::process::Command, until: &str) -> Vec<String> {
    use std::io::{BufRead, BufReader};
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let mut said = Vec::new();
    for line in rx.iter() {
        let reached = line.starts_with(until);
        said.push(line);
        if reached {
            child.kill().unwrap();
            break;
        }
    }
    child.wait().unwrap();
    said.extend(rx.iter());
    assert!(
        said.iter().any(|l| l.starts_with(until)),
        "it reached {until:?}: {said:?}"
    );
    said
}

fn doctor(data: &Path) -> serde_json::Value {
    let out = trine_testkit::run_ok(
        trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data).args(["doctor", "--json"]),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first hit of `query` in [`TENANT`], searched with `args` too.
fn first_hit(data: &Path, query: &str, args: &[&str]) -> serde_json::Value {
    let out = trine_testkit::run_ok(
        trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
            .args(["search", "--tenant", TENANT, "--json"])
            .args(args)
            .arg(query),
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    answer["hits"][0]["id"].clone()
}

/// Above the engine's indexing threshold: building the indexes, or
/// re-encoding every point, takes seconds.
const N: usize = 25_000;

/// kill -9 of `trine ingest` while it builds the indexes, every memory
/// written: every write outlives the kill, and the next run of the same
/// ingest finishes the job — it writes nothing twice (the ids are the
/// file's), builds the indexes, and every memory is there and found.
#[test]
fn a_kill_during_the_index_build_is_finished_by_the_next_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = corpus(
        dir.path(),
        N,
        "Meeting 2026-11-11 09:58 about the billing migration",
    );
    let ingest = || {
        let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data);
        cmd.arg("ingest").arg(&file);
        cmd
    };
    let said = kill_at(&mut ingest(), "building indexes");
    assert!(
        !said.iter().any(|l| l.starts_with("built indexes")),
        "killed before the build ended: {said:?}"
    );
    assert_eq!(
        doctor(&data)["info"]["points"],
        N + 1,
        "every write outlived the kill"
    );

    let next = trine_testkit::run_ok(&mut ingest());
    let stderr = String::from_utf8_lossy(&next.stderr);
    let stdout = String::from_utf8_lossy(&next.stdout);
    assert!(stderr.contains("built indexes"), "{stderr}");
    assert!(
        stdout.contains(&format!("stored {} memories", N + 1)),
        "{stdout}"
    );
    let report = doctor(&data);
    assert_eq!(
        report["info"]["points"],
        N + 1,
        "nothing lost, nothing twice"
    );
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(first_hit(&data, "Meeting 2026-11-11 09:58", &[]), PLANTED);
}

/// kill -9 of `trine text-index --stemmer english` while it re-encodes the
/// sparse vectors of every point under the rebuilt index: the next run
/// keeps the index and re-encodes every point, so that the last point in
/// id order — the furthest from done when it died — is found by a word
/// only its stem shares.
#[test]
fn a_kill_during_the_re_encoding_is_finished_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = corpus(dir.path(), N, "The runners kept running all night");
    trine_testkit::run_ok(
        trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data)
            .arg("ingest")
            .arg(&file),
    );
    let upgrade = || {
        let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data);
        cmd.args(["text-index", "--stemmer", "english"]);
        cmd
    };
    let said = kill_at(&mut upgrade(), "rebuilt the full-text index");
    assert!(
        !said.iter().any(|l| l.starts_with("re-encoded")),
        "killed before the re-encoding ended: {said:?}"
    );
    let stemmed = ["--mode", "lexical", "--strategy", "sparse"];
    assert_ne!(
        first_hit(&data, "run", &stemmed),
        PLANTED,
        "the last point was not re-encoded yet"
    );

    let next = trine_testkit::run_ok(&mut upgrade());
    let stdout = String::from_utf8_lossy(&next.stdout);
    assert!(stdout.contains("kept the full-text index"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "re-encoded the sparse vectors of {0} of {0}",
            N + 1
        )),
        "{stdout}"
    );
    assert_eq!(doctor(&data)["info"]["points"], N + 1, "nothing lost");
    assert_eq!(first_hit(&data, "run", &stemmed), PLANTED);
}

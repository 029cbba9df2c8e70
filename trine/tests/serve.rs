//! `trine serve`, then `trine search --endpoint ... --json` and `trine bench
//! --endpoint ...`, as a user runs them: the real binary on the bundled
//! sample corpus.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::process::Command;

fn trine(data: &Path) -> Command {
    trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
}

/// Starts `trine serve` on a free loopback port.
fn serve(data: &Path) -> trine_testkit::Served {
    let mut cmd = trine(data);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
    ]);
    trine_testkit::Served::start(cmd)
}

/// The headline title and its id, from the sample's queries file: in acme
/// `Meeting 2026-11-11 09:58` is a long transcript among ten memories holding
/// every term of its title, far down the lexical list (BM25's length
/// normalisation); the verbatim list at its default weight puts it first.
fn sample_title() -> (String, String) {
    let queries =
        std::fs::read_to_string(trine_testkit::workspace_dir().join("samples/queries.jsonl"))
            .expect("samples/queries.jsonl");
    for line in queries.lines() {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        if q["kind"] == "title" && q["tenant"] == "acme" && q["query"] == "Meeting 2026-11-11 09:58"
        {
            return (
                q["query"].as_str().unwrap().to_string(),
                q["gold"][0].as_str().unwrap().to_string(),
            );
        }
    }
    panic!("the sample has the title query");
}

#[test]
fn serve_then_search_finds_the_meeting_first() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let sample = trine_testkit::workspace_dir().join("samples/memories.jsonl");
    let ingest = trine(&data).arg("ingest").arg(&sample).output().unwrap();
    assert!(
        ingest.status.success(),
        "{}",
        String::from_utf8_lossy(&ingest.stderr)
    );

    let mut server = serve(&data);
    let addr = server.addr.clone();
    let (title, gold) = sample_title();

    let out = trine(&data)
        .args([
            "search",
            "--endpoint",
            &format!("http://{addr}"),
            "--tenant",
            "acme",
            "--json",
            &title,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hits"][0]["id"], gold.as_str(), "{answer:#}");
    let matched = answer["hits"][0]["matched_by"].as_array().unwrap();
    assert!(
        matched.contains(&"lexical".into()) && matched.contains(&"verbatim".into()),
        "{matched:?}"
    );
    assert_eq!(answer["hits"][0]["lists"]["verbatim"]["rank"], 1);
    assert_eq!(answer["degraded"], false);
    assert!(answer["timings"]["gateway"].as_f64().unwrap() > 0.0);

    // The data directory is held by the server: say so, and suggest --endpoint.
    let out = trine(&data)
        .args(["search", "--tenant", "acme", &title])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--endpoint"), "{stderr}");

    // `trine bench` against the server, closed and open loop: it runs for
    // the time asked, stops by itself and reports every stage.
    let queries = trine_testkit::workspace_dir().join("samples/queries.jsonl");
    for load in [["--concurrency", "2"], ["--rate", "20"]] {
        let out = trine(&data)
            .args([
                "bench",
                "--endpoint",
                &format!("http://{addr}"),
                "--queries",
            ])
            .arg(&queries)
            .args(["--duration", "1s", "--warmup", "200ms", "--json"])
            .args(load)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{load:?}: {stderr}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(report["requests"].as_u64().unwrap() > 0, "{report:#}");
        assert_eq!(report["errors"], serde_json::json!({}), "{report:#}");
        for stage in ["gateway", "lexical.counts", "semantic.query", "fusion"] {
            assert!(
                report["stages"][stage]["n"].as_u64().unwrap() > 0,
                "{stage}: {report:#}"
            );
        }
        assert!(
            report["counts_share"]["p50"].as_f64().unwrap() > 0.0,
            "{report:#}"
        );
    }

    // The health check of container images: SERVING, for the server and a
    // service it serves; an unknown service is an error.
    let health = |extra: &[&str]| {
        trine(&data)
            .args(["health", &addr])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = health(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "SERVING");
    assert!(health(&["--service", "trine.v1.Memory"]).status.success());
    assert!(!health(&["--service", "no.such.Service"]).status.success());
    // The ready line names every service's own port, and each serves.
    let ready = &server.ready;
    assert_eq!(ready["role"], "all", "{ready}");
    let mut ports = vec![addr.clone()];
    for (service, name) in [
        ("lexical", "trine.v1.Lexical"),
        ("semantic", "trine.v1.Semantic"),
        ("fusion", "trine.v1.Fusion"),
    ] {
        let at = ready[service].as_str().unwrap().to_string();
        let out = trine(&data)
            .args(["health", &at, "--service", name])
            .output()
            .unwrap();
        assert!(out.status.success(), "{service} at {at}: {out:?}");
        ports.push(at);
    }
    ports.push(ready["metrics"].as_str().unwrap().to_string());
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), 5, "five listeners, five ports: {ready}");

    // SIGTERM drains and exits cleanly.
    trine_testkit::terminate(server.child.id());
    let status = server.child.wait().unwrap();
    assert!(status.success(), "serve exited with {status}");
    assert!(!health(&[]).status.success(), "nothing serves any more");
}

/// `[serve]` in the config file says where `trine serve` listens, each key
/// under its flag: the file's HTTP surface and metrics are served, and
/// `--metrics off` wins over the file.
#[test]
fn the_serve_section_of_the_file_is_served_under_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trine.toml");
    std::fs::write(
        &file,
        "[serve]\nlisten = \"127.0.0.1:0\"\nhttp = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\nauth = \"off\"\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let from_file = |extra: &[&str]| {
        let mut cmd = trine(&data);
        cmd.arg("--config").arg(&file).arg("serve").args(extra);
        trine_testkit::Served::start(cmd)
    };
    let served = from_file(&[]);
    assert!(served.ready["http"].is_string(), "{}", served.ready);
    assert!(served.ready["metrics"].is_string(), "{}", served.ready);
    drop(served);
    let served = from_file(&["--metrics", "off"]);
    assert!(served.ready["http"].is_string(), "{}", served.ready);
    assert!(served.ready["metrics"].is_null(), "{}", served.ready);
}

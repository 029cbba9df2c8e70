//! `trine ingest`, `trine doctor` and `trine text-index` as a user runs them:
//! the real binary on an embedded store in a temporary directory.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::io::Write;
use std::path::Path;
use std::process::Output;

fn trine(data: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data);
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("start trine");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("run trine")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A thousand memories, three of them malformed (at lines 10, 500 and 1000).
fn thousand_lines() -> String {
    let mut out = String::new();
    for i in 1..=1000u32 {
        let line = match i {
            10 => r#"{"text": "no tenant here"}"#.to_string(),
            500 => "this is not json".to_string(),
            1000 => format!(r#"{{"id": "not-a-uuid", "text": "memory {i}", "tenant": "acme"}}"#),
            _ => format!(
                r#"{{"id": "00000000-0000-4000-8000-{i:012}", "text": "memory {i} about deploys", "tenant": "acme", "source": "notes/{i}.md", "created_at": "2026-11-11T10:11:43Z"}}"#
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn doctor_points(data: &Path) -> u64 {
    let out = trine(data, &["doctor", "--json"], None);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor json: {e}: {}", text(&out.stdout)));
    report["info"]["points"]
        .as_u64()
        .expect("points in doctor's report")
}

#[test]
fn ingest_stores_the_good_lines_and_reports_the_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("memories.jsonl");
    std::fs::write(&file, thousand_lines()).unwrap();

    let first = trine(&data, &["ingest", file.to_str().unwrap()], None);
    let stderr = text(&first.stderr);
    assert_eq!(
        first.status.code(),
        Some(3),
        "partial failure exit code; stderr: {stderr}"
    );
    let reports: Vec<&str> = stderr.lines().filter(|l| l.starts_with("line ")).collect();
    for line in [10, 500, 1000] {
        assert!(
            reports
                .iter()
                .any(|r| r.starts_with(&format!("line {line}: "))),
            "line {line} reported in: {stderr}"
        );
    }
    assert_eq!(reports.len(), 3, "exactly three reports: {stderr}");
    assert!(
        text(&first.stdout).contains("stored 997 memories"),
        "{}",
        text(&first.stdout)
    );
    assert_eq!(doctor_points(&data), 997);

    let again = trine(&data, &["ingest", file.to_str().unwrap()], None);
    assert_eq!(again.status.code(), Some(3));
    assert_eq!(
        doctor_points(&data),
        997,
        "re-ingesting the same ids changes nothing"
    );
}

#[test]
fn ingest_reads_standard_input_and_derives_stable_ids() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = "{\"text\": \"Meeting 2026-11-11 09:58\", \"tenant\": \"acme\"}\n\n{\"text\": \"other\", \"tenant\": \"globex\"}\n";
    let out = trine(&data, &["ingest", "-"], Some(input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = trine(&data, &["ingest", "-"], Some(input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        doctor_points(&data),
        2,
        "memories without ids are not duplicated"
    );
}

#[test]
fn doctor_reports_a_missing_collection_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = trine(dir.path(), &["doctor"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stdout).contains("trine ingest"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn doctor_reports_a_healthy_collection() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = "{\"text\": \"hello\", \"tenant\": \"acme\"}\n";
    assert!(trine(&data, &["ingest", "-"], Some(input)).status.success());
    let out = trine(&data, &["doctor", "--json"], None);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["info"]["embedder"]["name"], "hash");
    assert_eq!(report["info"]["text_index"]["phrase_matching"], true);
    assert_eq!(report["info"]["text_index"]["scoring"], true);
    assert_eq!(report["info"]["sparse_idf"], true);
    assert_eq!(
        report["info"]["sparse_tf"], true,
        "a new embedded collection"
    );
    assert_eq!(report["info"]["one_tenant"], true, "acme alone");

    let out = trine(&data, &["text-index"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("already present"),
        "{}",
        text(&out.stdout)
    );

    let human = trine(&data, &["doctor"], None);
    assert!(
        text(&human.stdout).contains("status      ok"),
        "{}",
        text(&human.stdout)
    );
    assert!(
        text(&human.stdout).contains("sparse_tf present"),
        "{}",
        text(&human.stdout)
    );
    assert!(
        text(&human.stdout).contains("one tenant ever written"),
        "{}",
        text(&human.stdout)
    );

    let input = "{\"text\": \"hello\", \"tenant\": \"globex\"}\n";
    assert!(trine(&data, &["ingest", "-"], Some(input)).status.success());
    let human = trine(&data, &["doctor"], None);
    assert!(
        text(&human.stdout).contains("bm25 gathers the statistics over the tenant"),
        "{}",
        text(&human.stdout)
    );
}

#[test]
fn another_embedder_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = "{\"text\": \"hello\", \"tenant\": \"acme\"}\n";
    assert!(trine(&data, &["ingest", "-"], Some(input)).status.success());
    let out = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
        .arg("--data")
        .arg(&data)
        .args(["--embedder", "static", "--models"])
        .arg(dir.path().join("no-models"))
        .args(["doctor"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stdout).contains("--embedder hash"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn another_layout_is_written_read_and_checked_as_configured() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("layout.toml");
    std::fs::write(
        &config,
        "[payload]\ntext = \"content\"\ntenant = \"owner\"\ncreated_at = \"ts\"\ntime_format = \"unix_seconds\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let input = concat!(
        "{\"text\": \"quarterly billing review\", \"tenant\": \"acme\", \"created_at\": \"2026-11-11T09:58:00Z\"}\n",
        "{\"text\": \"standup notes\", \"tenant\": \"acme\", \"created_at\": \"2025-01-01T00:00:00Z\"}\n",
    );
    let out = trine(&data, &["--config", config, "ingest", "-"], Some(input));
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Doctor checks the configured layout's indexes: nothing missing.
    let out = trine(&data, &["--config", config, "doctor", "--json"], None);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["problems"], serde_json::json!([]), "{report:#}");

    // Searches read it back through the layout, time filters included.
    let search = |extra: &[&str]| {
        let mut args = vec!["--config", config, "search", "--tenant", "acme", "--json"];
        args.extend_from_slice(extra);
        args.push("billing review");
        let out = trine(&data, &args, None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let answer = search(&[]);
    assert_eq!(answer["hits"][0]["text"], "quarterly billing review");
    let answer = search(&["--created-from", "2026-01-01T00:00:00Z"]);
    let hits = answer["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{answer:#}");

    // Under trine's own layout the same data has none of the fields it needs.
    let out = trine(&data, &["doctor", "--json"], None);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = report["problems"].to_string();
    assert!(problems.contains("no text index on `text`"), "{problems}");
}

#[test]
fn model_speed_reports_the_rate_against_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let texts = trine_testkit::workspace_dir().join("samples/memories.jsonl");
    let out = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
        .arg("--models")
        .arg(trine_testkit::models_dir())
        .args(["model", "speed"])
        .arg(&texts)
        .args(["--limit", "20", "--batch", "8"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    for want in [
        "MiniLM on 20 texts in batches of 8",
        "tokens/s",
        "GFLOP/s",
        "% of it",
    ] {
        assert!(stdout.contains(want), "{want:?} in: {stdout}");
    }

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let out = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
        .arg("--models")
        .arg(trine_testkit::models_dir())
        .args(["model", "speed"])
        .arg(&empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no texts"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ingest_never_replaces_another_tenants_memory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let id = "00000000-0000-4000-8000-0000000000a1";
    let acme =
        format!("{{\"id\": \"{id}\", \"text\": \"acme's own memory\", \"tenant\": \"acme\"}}\n");
    assert!(trine(&data, &["ingest", "-"], Some(&acme)).status.success());

    let hostile = format!(
        "{{\"text\": \"globex's own memory\", \"tenant\": \"globex\"}}\n{{\"id\": \"{id}\", \"text\": \"globex overwriting acme\", \"tenant\": \"globex\"}}\n"
    );
    let out = trine(&data, &["ingest", "-"], Some(&hostile));
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a refused line is a failed line: {stderr}"
    );
    assert!(
        stderr.contains(&format!("line 2: id {id} is held by another tenant")),
        "{stderr}"
    );
    assert!(
        text(&out.stdout).contains("stored 1 memories"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(doctor_points(&data), 2);

    let found = trine(
        &data,
        &["search", "--tenant", "acme", "--json", "acme's own memory"],
        None,
    );
    let found = text(&found.stdout);
    assert!(found.contains("acme's own memory"), "{found}");
    assert!(!found.contains("overwriting"), "{found}");
}

#[test]
fn ingest_skips_invalid_utf8_and_over_long_lines_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("memories.jsonl");
    let good = |i: u32| {
        format!(r#"{{"text": "memory {i} about deploys", "tenant": "acme"}}"#).into_bytes()
    };
    let mut bytes = Vec::new();
    bytes.extend(good(1));
    bytes.extend(b"\n{\"text\": \"caf\xe9 latin-1\", \"tenant\": \"acme\"}\n");
    bytes.extend(good(3));
    bytes.push(b'\n');
    // Line 4: nine MiB, longer than any memory's line may be.
    bytes.extend(br#"{"tenant": "acme", "text": ""#);
    bytes.extend(std::iter::repeat_n(b'a', 9 << 20));
    bytes.extend(b"\"}\n");
    bytes.extend(good(5));
    std::fs::write(&file, bytes).unwrap();

    let out = trine(&data, &["ingest", file.to_str().unwrap()], None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "partial failure: {stderr}");
    assert!(
        stderr.contains("line 2: not UTF-8: invalid bytes at byte 13 of the line"),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 4: the line is 9437214 bytes, more than the 8388608 allowed"),
        "{stderr}"
    );
    assert!(
        text(&out.stdout).contains("stored 3 memories"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(doctor_points(&data), 3);
}

/// `trine doctor` on a Qdrant server (`TRINE_QDRANT_URL`): the server's
/// version decides what is offered; on 1.19 BM25 text scoring is named as
/// needing 1.20, nothing advises deleting an index, and the report is ok.
#[test]
fn doctor_on_a_server_names_what_its_version_lacks() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("doctor on a Qdrant server", trine_testkit::NO_QDRANT);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let collection = format!("trine_doctor_{}", uuid::Uuid::new_v4().simple());
    let on_server = [
        "--qdrant",
        url.as_str(),
        "--collection",
        collection.as_str(),
    ];
    let line = "{\"text\": \"Meeting 2026-11-11 09:58\", \"tenant\": \"acme\"}\n";
    let out = trine(
        &data,
        &[&on_server[..], &["ingest", "-"]].concat(),
        Some(line),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = trine(
        &data,
        &[&on_server[..], &["doctor", "--json"]].concat(),
        None,
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let all = report.to_string();
    assert!(!all.contains("delete"), "no destructive advice: {report:#}");
    assert_eq!(report["ok"], true, "{report:#}");
    let bm25 = report["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["strategy"] == "bm25")
        .unwrap();
    if report["info"]["engine"]["text_scoring"] == false {
        let missing = bm25["missing"].as_str().unwrap();
        assert!(missing.contains("needs Qdrant 1.20"), "{missing}");
        assert!(
            report["advice"].to_string().contains("needs Qdrant 1.20"),
            "{report:#}"
        );
    } else {
        assert_eq!(bm25["ready"], true, "{report:#}");
    }
}

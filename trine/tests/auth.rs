//! API keys as an operator and a client use them: `trine keys add|list|
//! revoke`, `trine serve --auth`, `trine search --endpoint --api-key`.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn trine(data: &Path) -> Command {
    trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
}

fn run(data: &Path, args: &[&str]) -> Output {
    trine(data).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn add_key(data: &Path, tenant: &str, scope: &str) -> String {
    let out = run(
        data,
        &[
            "keys", "add", "--name", "test", "--tenant", tenant, "--scope", scope,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

#[test]
fn keys_made_listed_and_revoked_with_the_cli_bind_callers_to_tenants() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut ingest = trine(&data)
        .args(["ingest", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ingest
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"text\": \"Meeting 2026-11-11 09:58\", \"tenant\": \"acme\"}\n")
        .unwrap();
    assert!(ingest.wait().unwrap().success());

    let reader = add_key(&data, "acme", "read");
    assert!(reader.starts_with("trine_"), "{reader}");
    let listed = run(&data, &["keys", "list", "--json"]);
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = keys[0]["id"].as_str().unwrap().to_string();
    assert!(reader.starts_with(&format!("trine_{id}_")));
    assert!(keys[0]["revoked_at"].is_null());
    let stored = std::fs::read_to_string(data.join("keys.json")).unwrap();
    assert!(!stored.contains(&reader), "only the key's hash is stored");

    let mut cmd = trine(&data);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "off",
        "--auth",
        "on",
    ]);
    // Everything the server may log, so that the check below can fail.
    cmd.env("RUST_LOG", "debug");
    let server = trine_testkit::Served::start(cmd);
    let endpoint = format!("http://{}", server.addr);
    let search = |tenant: &str, key: Option<&str>| {
        let mut cmd = trine(&data);
        cmd.args([
            "search",
            "--endpoint",
            &endpoint,
            "--tenant",
            tenant,
            "--json",
        ]);
        if let Some(key) = key {
            cmd.args(["--api-key", key]);
        }
        cmd.arg("Meeting 2026-11-11 09:58").output().unwrap()
    };

    let out = search("acme", None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Unauthenticated"),
        "{}",
        text(&out.stderr)
    );
    let out = search("acme", Some(&reader));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hits"].as_array().unwrap().len(), 1, "{answer:#}");
    let out = search("globex", Some(&reader));
    assert!(
        text(&out.stderr).contains("PermissionDenied"),
        "{}",
        text(&out.stderr)
    );

    // Revoked: the running server refuses it from the next call.
    let out = run(&data, &["keys", "revoke", &id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = search("acme", Some(&reader));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("revoked"),
        "{}",
        text(&out.stderr)
    );
    let listed = run(&data, &["keys", "list", "--json"]);
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(keys[0]["revoked_at"].is_string());

    // A key is never printed, by the server or in the error a client reads:
    // not the revoked one, not one forged on a real id.
    let secret = reader.rsplit('_').next().unwrap();
    let forged = format!("trine_{id}_{}", "0".repeat(secret.len()));
    let out = search("acme", Some(&forged));
    assert!(!out.status.success());
    let client = text(&out.stderr);
    assert!(
        !client.contains(&forged) && !client.contains(secret),
        "{client}"
    );
    let printed = server.printed();
    assert!(
        printed.contains("DEBUG"),
        "the server logged at debug: {printed}"
    );
    for (what, needle) in [
        ("a key", reader.as_str()),
        ("a secret", secret),
        ("a forged key", forged.as_str()),
    ] {
        assert!(
            !printed.contains(needle),
            "the server printed {what}: {printed}"
        );
    }
    drop(server);

    // Beyond loopback, keys are on by default: without a live key, serve
    // refuses to start and says how to add one.
    let out = run(
        &data,
        &["serve", "--listen", "0.0.0.0:0", "--metrics", "off"],
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("holds no live API key") && stderr.contains("trine keys add"),
        "{stderr}"
    );
}

/// The Qdrant API key (flag, environment or config file) is never printed:
/// not at trace level, not in the error when the server cannot be reached or
/// refuses the call.
#[test]
fn the_qdrant_api_key_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "qk-never-printed-5f1c2a";
    let mut urls = vec!["http://127.0.0.1:9".to_string()];
    match std::env::var("TRINE_QDRANT_URL") {
        Ok(url) => urls.push(url.split(',').next().unwrap().trim().to_string()),
        Err(_) => trine_testkit::skipped(
            "the Qdrant key against a live server",
            trine_testkit::NO_QDRANT,
        ),
    }
    for url in urls {
        for args in [
            vec!["search", "meeting", "--tenant", "acme"],
            vec!["doctor"],
        ] {
            let out = trine(dir.path())
                .env("RUST_LOG", "trace")
                .env("TRINE_QDRANT_API_KEY", secret)
                .args(["--qdrant", &url, "--collection", "trine_key_never_printed"])
                .args(&args)
                .output()
                .unwrap();
            let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert!(!printed.is_empty(), "{url} {args:?}: said nothing");
            assert!(
                !printed.contains(secret),
                "{url} {args:?} printed the Qdrant key:\n{printed}"
            );
        }
    }
}

//! An MCP client trine did not write — the official MCP Python SDK from
//! PyPI (`.ci/run` installs it into `~/.cache/trine/pylib`) — against `trine
//! mcp` over stdio and `trine serve --http` over streamable HTTP: it lists
//! the tools, finds the sample's planted title first through `search`, and a
//! memory stored through `remember` is found by the next search, hidden by
//! `forget` and back after `restore`.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Where the MCP SDK is installed (`TRINE_PYTHONPATH`, else
/// `~/.cache/trine/pylib`), when `python3` can import it from there.
fn sdk() -> Option<PathBuf> {
    let path = std::env::var_os("TRINE_PYTHONPATH")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/trine/pylib"))
        })?;
    let ok = Command::new("python3")
        .args(["-c", "import mcp.client.stdio, mcp.client.streamable_http"])
        .env("PYTHONPATH", &path)
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(path)
}

fn sample(data: &Path) {
    trine_testkit::ingest_sample(env!("CARGO_BIN_EXE_trine"), data);
}

/// The planted title's gold id, from the sample's queries.
fn gold() -> String {
    let queries =
        std::fs::read_to_string(trine_testkit::workspace_dir().join("samples/queries.jsonl"))
            .unwrap();
    queries
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|q| q["query"] == trine_testkit::TITLE && q["tenant"] == "acme")
        .map(|q| q["gold"][0].as_str().unwrap().to_string())
        .expect("the sample plants the title")
}

fn client(sdk: &Path, args: &[&str]) -> Value {
    let script = trine_testkit::workspace_dir().join("trine/tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .env("PYTHONPATH", sdk)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn check(seen: &Value) {
    assert_eq!(seen["server"], "trine", "{seen}");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in ["search", "remember", "get", "forget", "restore", "health"] {
        assert!(tools.contains(&tool), "{tool} in {tools:?}");
    }
    assert_eq!(
        seen["title_hits"][0],
        gold().as_str(),
        "the title first: {seen}"
    );
    assert!(
        seen["title_text"]
            .as_str()
            .unwrap()
            .starts_with(trine_testkit::TITLE),
        "{seen}"
    );
    let id = &seen["remembered"];
    let has = |step: &str| seen[step].as_array().unwrap().contains(id);
    assert!(has("after_remember"), "found after remember: {seen}");
    assert!(!has("after_forget"), "hidden after forget: {seen}");
    assert!(has("after_restore"), "back after restore: {seen}");
    assert_eq!(seen["other_tenant_is_error"], true, "{seen}");
}

#[test]
fn an_mcp_client_uses_trine_over_stdio() {
    let Some(sdk) = sdk() else {
        trine_testkit::skipped(
            "the MCP SDK client",
            "pip install --target ~/.cache/trine/pylib mcp",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    sample(&data);
    let seen = client(
        &sdk,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_trine"),
            data.to_str().unwrap(),
            trine_testkit::TITLE,
        ],
    );
    check(&seen);
}

#[test]
fn an_mcp_client_uses_trine_over_streamable_http() {
    let Some(sdk) = sdk() else {
        trine_testkit::skipped(
            "the MCP SDK client",
            "pip install --target ~/.cache/trine/pylib mcp",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = trine_testkit::serve_sample(env!("CARGO_BIN_EXE_trine"), &data);
    let url = format!("http://{}/mcp", served.ready["http"].as_str().unwrap());
    check(&client(&sdk, &["http", &url, trine_testkit::TITLE]));
}

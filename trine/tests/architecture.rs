//! The architecture's dependency rules, read from `cargo metadata`: a crate
//! that reaches for what its role forbids fails here, not in review.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::{BTreeMap, BTreeSet};

/// Each workspace crate and the crates it depends on (normal dependencies).
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(trine_testkit::workspace_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn each_crate_depends_only_on_what_its_role_allows() {
    let deps = dependencies();
    let of = |name: &str| deps.get(name).unwrap_or_else(|| panic!("no crate {name}"));
    // (crate, what it must never depend on, why)
    let rules: &[(&str, &[&str], &str)] = &[
        (
            "trine-core",
            &[
                "tokio",
                "tonic",
                "prost",
                "qdrant-client",
                "qdrant-edge",
                "hyper",
                "trine-store",
            ],
            "the pure algorithms do no IO",
        ),
        (
            "trine-fusion",
            &["trine-store", "trine-embed", "qdrant-client", "qdrant-edge"],
            "fusion-svc holds no data and embeds nothing",
        ),
        (
            "trine-lexical",
            &["trine-semantic", "trine-fusion", "trine-gateway"],
            "lexical-svc knows no other service",
        ),
        (
            "trine-semantic",
            &["trine-lexical", "trine-fusion", "trine-gateway"],
            "semantic-svc knows no other service",
        ),
        (
            "trine-gateway",
            &["trine-lexical", "trine-semantic", "trine-fusion"],
            "the gateway reaches its peers over gRPC only",
        ),
        (
            "trine-api",
            &["trine-store", "trine-embed", "qdrant-client", "qdrant-edge"],
            "the wire crate converts, it stores nothing",
        ),
        (
            "trine-store",
            &["tonic", "trine-api", "trine-gateway"],
            "the store knows no service and no wire type",
        ),
    ];
    for (krate, forbidden, why) in rules {
        let bad: Vec<&&str> = forbidden
            .iter()
            .filter(|f| of(krate).contains(**f))
            .collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}: {why}");
    }
}

/// The command-line crate holds commands only: every service is built and
/// started in `trine-mesh` (`spawn`, `Mesh`, `Service`), never in
/// `trine/src`.
#[test]
fn the_cli_builds_no_service() {
    let src = trine_testkit::workspace_dir().join("trine/src");
    let forbidden = [
        "Service::new(",
        "Searcher::new(",
        "Peers::lazy(",
        "trine_lexical::run(",
        "trine_semantic::run(",
        "trine_fusion::run(",
        "trine_gateway::run(",
    ];
    let mut found = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for f in forbidden {
                    if text.contains(f) {
                        found.push(format!("{}: {f}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "services built in the CLI crate: {found:?}"
    );
}

//! deploy/compose.yaml parsed and checked: a 3-node Qdrant cluster, the four
//! services each in its container built from its Dockerfile stage, the
//! config every service mounts accepted by trine with peers, ports and the
//! cluster layout that match the stack, Prometheus scraping every service,
//! traces through the collector to Jaeger. `docker compose config` checks
//! it too where docker is installed.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_yaml::Value;

fn deploy() -> PathBuf {
    trine_testkit::workspace_dir().join("deploy")
}

fn yaml(name: &str) -> Value {
    serde_yaml::from_str(&std::fs::read_to_string(deploy().join(name)).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_sequence()
        .map(|s| s.iter().map(|x| x.as_str().unwrap()).collect())
        .unwrap_or_default()
}

/// The value after `flag` in a command.
fn arg<'a>(command: &[&'a str], flag: &str) -> &'a str {
    let i = command.iter().position(|a| *a == flag).unwrap();
    command[i + 1]
}

#[test]
fn the_stack_is_consistent() {
    let compose = yaml("compose.yaml");
    let services = compose["services"].as_mapping().unwrap();
    let names: BTreeSet<&str> = services.keys().map(|k| k.as_str().unwrap()).collect();
    for want in [
        "qdrant-0",
        "qdrant-1",
        "qdrant-2",
        "gateway",
        "lexical",
        "semantic",
        "fusion",
        "otel-collector",
        "jaeger",
        "prometheus",
    ] {
        assert!(names.contains(want), "{want} in {names:?}");
    }

    // Qdrant in distributed mode: node 0 starts, the others bootstrap from it.
    for i in 0..3 {
        let node = &compose["services"][format!("qdrant-{i}").as_str()];
        assert_eq!(node["environment"]["QDRANT__CLUSTER__ENABLED"], "true");
        let command = strings(&node["command"]);
        assert_eq!(arg(&command, "--uri"), format!("http://qdrant-{i}:6335"));
        if i > 0 {
            assert_eq!(arg(&command, "--bootstrap"), "http://qdrant-0:6335");
        }
    }

    // The config every trine service mounts is one trine accepts.
    let config = trine::Config::load(&trine::Overrides {
        config: Some(deploy().join("trine.toml")),
        ..trine::Overrides::default()
    })
    .unwrap();
    assert_eq!(config.qdrant.as_deref(), Some("http://qdrant-0:6334"));
    assert_eq!(
        (config.shards, config.replication_factor),
        (Some(3), Some(2))
    );
    let collector = config.otlp_endpoint.as_deref().unwrap();
    assert_eq!(collector, "http://otel-collector:4317");

    let dockerfile = std::fs::read_to_string(deploy().join("Dockerfile")).unwrap();
    let prometheus = yaml("prometheus.yml");
    let scraped: BTreeSet<&str> = prometheus["scrape_configs"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|job| strings(&job["static_configs"][0]["targets"]))
        .collect();
    for role in ["gateway", "lexical", "semantic", "fusion"] {
        let service = &compose["services"][role];
        assert_eq!(service["build"]["target"], role);
        assert_eq!(service["build"]["dockerfile"], "deploy/Dockerfile");
        assert!(
            dockerfile.contains(&format!("FROM runtime AS {role}\n")),
            "a `{role}` stage in deploy/Dockerfile"
        );
        let command = strings(&service["command"]);
        assert_eq!(arg(&command, "--role"), role);
        assert_eq!(arg(&command, "--config"), "/etc/trine/trine.toml");
        let mounted = strings(&service["volumes"]);
        assert!(
            mounted.contains(&"./trine.toml:/etc/trine/trine.toml:ro"),
            "{role}"
        );
        let port = arg(&command, "--listen").rsplit(':').next().unwrap();
        let health = strings(&service["healthcheck"]["test"]);
        assert_eq!(health[..3], ["CMD", "trine", "health"], "{role}");
        assert!(
            health[3].ends_with(&format!(":{port}")),
            "{role}: health on its port"
        );
        // Its own service's status, which says when it is still starting.
        assert_eq!(
            arg(&health, "--service"),
            trine_mesh::Role::parse(role).unwrap().grpc_service(),
            "{role}: the health of its service"
        );
        let metrics = arg(&command, "--metrics").rsplit(':').next().unwrap();
        assert!(
            scraped.contains(format!("{role}:{metrics}").as_str()),
            "{role} scraped"
        );
        // The gateway's peers are these containers on their listen ports.
        let peer = match role {
            "lexical" => config.peers.lexical.as_deref(),
            "semantic" => config.peers.semantic.as_deref(),
            "fusion" => config.peers.fusion.as_deref(),
            _ => continue,
        };
        assert_eq!(peer, Some(format!("{role}:{port}").as_str()));
        assert!(strings(&compose["services"]["gateway"]["depends_on"]).contains(&role));
    }

    // Traces: the collector exports to Jaeger, which takes OTLP.
    let otel = yaml("otel-collector.yaml");
    assert_eq!(otel["exporters"]["otlp/jaeger"]["endpoint"], "jaeger:4317");
    assert_eq!(
        compose["services"]["jaeger"]["environment"]["COLLECTOR_OTLP_ENABLED"],
        "true"
    );
}

#[test]
fn docker_compose_accepts_the_file() {
    let available = std::process::Command::new("docker")
        .args(["compose", "version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !available {
        eprintln!("skipped: `docker compose config` (docker compose is not installed)");
        return;
    }
    let out = std::process::Command::new("docker")
        .args(["compose", "-f"])
        .arg(deploy().join("compose.yaml"))
        .args(["config", "--quiet"])
        .env("QDRANT_API_KEY", "a-key-for-the-check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker compose config: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

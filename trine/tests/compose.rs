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

    let prometheus = yaml("prometheus.yml");
    let scraped: BTreeSet<&str> = prometheus["scrape_configs"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|job| strings(&job["static_configs"][0]["targets"]))
        .collect();

    // Qdrant in distributed mode: node 0 starts, the others bootstrap from it.
    for i in 0..3 {
        let node = &compose["services"][format!("qdrant-{i}").as_str()];
        assert_eq!(node["environment"]["QDRANT__CLUSTER__ENABLED"], "true");
        let command = strings(&node["command"]);
        // Ports of its own (6333+10i, ...), so that host networking works.
        let p2p = 6335 + 10 * i;
        assert_eq!(arg(&command, "--uri"), format!("http://qdrant-{i}:{p2p}"));
        if i > 0 {
            let env = &node["environment"];
            assert_eq!(env["QDRANT__CLUSTER__P2P__PORT"], p2p.to_string().as_str());
            assert_eq!(
                env["QDRANT__SERVICE__GRPC_PORT"],
                (p2p - 1).to_string().as_str()
            );
            assert_eq!(
                env["QDRANT__SERVICE__HTTP_PORT"],
                (p2p - 2).to_string().as_str()
            );
        }
        let http = 6333 + 10 * i;
        assert!(
            scraped.contains(format!("qdrant-{i}:{http}").as_str()),
            "qdrant-{i} scraped"
        );
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
        trine_testkit::skipped("`docker compose config`", "docker compose is not installed");
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

/// compose.loopback.yaml, what deploy/smoke.sh brings up beside compose.yaml,
/// holds only what host networking changes: every service on the host's
/// network (none left on a network the others are not on), every name the
/// stack calls another by resolved to loopback, Qdrant bound to loopback and
/// its image replaceable, published ports reset; no command, no config.
#[test]
fn the_loopback_override_holds_only_the_network_differences() {
    let base = yaml("compose.yaml");
    let text = std::fs::read_to_string(deploy().join("compose.loopback.yaml")).unwrap();
    let mut loopback: Value = serde_yaml::from_str(&text).unwrap();
    // Its `<<:` merge keys; a second pass for those inside an anchor.
    loopback.apply_merge().unwrap();
    loopback.apply_merge().unwrap();
    let services = base["services"].as_mapping().unwrap();
    let overridden = loopback["services"].as_mapping().unwrap();
    let names = |m: &serde_yaml::Mapping| -> BTreeSet<String> {
        m.keys().map(|k| k.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(
        names(overridden),
        names(services),
        "every service, no other"
    );

    // Every name a service is reached by: the config's addresses and Qdrant's
    // peer URIs.
    let config = std::fs::read_to_string(deploy().join("trine.toml")).unwrap();
    let mut reached: BTreeSet<String> = BTreeSet::new();
    for (name, _) in services {
        let name = name.as_str().unwrap();
        if config.contains(&format!("{name}:")) || text.contains(&format!("http://{name}:")) {
            reached.insert(name.to_string());
        }
        let command = strings(&base["services"][name]["command"]);
        for flag in ["--uri", "--bootstrap"] {
            if let Some(i) = command.iter().position(|a| *a == flag) {
                let host = command[i + 1].trim_start_matches("http://");
                reached.insert(host.split(':').next().unwrap().to_string());
            }
        }
    }
    for name in [
        "qdrant-0", "qdrant-1", "qdrant-2", "lexical", "semantic", "fusion",
    ] {
        assert!(reached.contains(name), "{name} is reached by name");
    }

    for (name, service) in overridden {
        let name = name.as_str().unwrap();
        assert_eq!(service["network_mode"], "host", "{name}");
        let hosts: BTreeSet<&str> = strings(&service["extra_hosts"]).into_iter().collect();
        for host in &reached {
            assert!(
                hosts.contains(format!("{host}:127.0.0.1").as_str()),
                "{name}: {host} resolves to loopback"
            );
        }
        for key in service.as_mapping().unwrap().keys() {
            let key = key.as_str().unwrap();
            let allowed = match key {
                "network_mode" | "extra_hosts" | "ports" => true,
                "image" | "environment" => name.starts_with("qdrant-"),
                _ => false,
            };
            assert!(allowed, "{name}: `{key}` is not a network difference");
        }
        if let Some(env) = service["environment"].as_mapping() {
            for (key, value) in env {
                let key = key.as_str().unwrap();
                assert!(
                    key == "QDRANT__SERVICE__HOST" && value == "127.0.0.1"
                        || key == "QDRANT__TELEMETRY_DISABLED" && value == "true",
                    "{name}: {key} is not a network difference"
                );
            }
        }
        // Published ports mean nothing on the host's network: reset.
        if !base["services"][name]["ports"].is_null() {
            assert!(
                matches!(&service["ports"], Value::Tagged(t) if t.tag == "!reset"),
                "{name}: its ports reset"
            );
        }
    }
}

//! The Kubernetes manifests of k8s/ checked as a reviewer would: every
//! Deployment has probes, limits and a matching Service; the ports in trine's
//! config match the container ports; the NetworkPolicies select the right
//! pods; the config the pods mount is one trine accepts, with the model path
//! the images bake; graceful shutdown fits the grace period.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::Value;

fn k8s() -> PathBuf {
    trine_testkit::workspace_dir().join("k8s")
}

/// Every document of every YAML file of a kustomization (resources listed
/// there, recursively), checking that each file of the directory is listed.
fn documents(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    let kustomization: Value = serde_yaml::from_str(&text).unwrap();
    let resources: Vec<&str> = kustomization["resources"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let mut files: BTreeSet<String> = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".yaml") && name != "kustomization.yaml" {
            files.insert(name);
        }
    }
    let listed: BTreeSet<String> = resources
        .iter()
        .filter(|r| r.ends_with(".yaml"))
        .map(|r| r.to_string())
        .collect();
    assert_eq!(
        listed,
        files,
        "{}: every manifest is a resource",
        dir.display()
    );
    let mut docs = Vec::new();
    for resource in resources {
        let path = dir.join(resource);
        if path.is_dir() {
            docs.extend(documents(&path));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).unwrap();
            if !value.is_null() {
                docs.push(value);
            }
        }
    }
    docs
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn name(doc: &Value) -> &str {
    doc["metadata"]["name"].as_str().unwrap()
}

fn labels(map: &Value) -> BTreeMap<String, String> {
    map.as_mapping()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.as_str().unwrap().to_string(),
                        v.as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a label selector (matchLabels and matchExpressions `In`) selects
/// a pod with these labels.
fn selects(selector: &Value, pod: &BTreeMap<String, String>) -> bool {
    let labels_ok = labels(&selector["matchLabels"])
        .iter()
        .all(|(k, v)| pod.get(k) == Some(v));
    let expressions_ok = selector["matchExpressions"]
        .as_sequence()
        .map(|exprs| {
            exprs.iter().all(|e| {
                assert_eq!(e["operator"], "In", "only In is used");
                let values: Vec<&str> = e["values"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                pod.get(e["key"].as_str().unwrap())
                    .is_some_and(|v| values.contains(&v.as_str()))
            })
        })
        .unwrap_or(true);
    labels_ok && expressions_ok
}

fn pod_labels(workload: &Value) -> BTreeMap<String, String> {
    labels(&workload["spec"]["template"]["metadata"]["labels"])
}

/// The named container ports of a workload: name → number.
fn container_ports(workload: &Value) -> BTreeMap<String, u64> {
    workload["spec"]["template"]["spec"]["containers"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|c| c["ports"].as_sequence().unwrap().iter())
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["containerPort"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The value after `flag` in a container's args.
fn arg<'a>(container: &'a Value, flag: &str) -> Option<&'a str> {
    let args: Vec<&str> = container["args"]
        .as_sequence()?
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let i = args.iter().position(|a| *a == flag)?;
    args.get(i + 1).copied()
}

/// The pod the workload named `name` runs, by its Deployment or StatefulSet.
fn workload<'a>(docs: &'a [Value], name_: &str) -> &'a Value {
    docs.iter()
        .find(|d| (d["kind"] == "Deployment" || d["kind"] == "StatefulSet") && name(d) == name_)
        .unwrap_or_else(|| panic!("no workload {name_}"))
}

#[test]
fn deployments_have_probes_limits_and_a_matching_service() {
    let docs = documents(&k8s().join("base"));
    let deployments = kind(&docs, "Deployment");
    assert_eq!(deployments.len(), 4, "gateway, lexical, semantic, fusion");
    let services = kind(&docs, "Service");
    for d in &deployments {
        let pod = pod_labels(d);
        assert!(
            selects(&d["spec"]["selector"], &pod),
            "{}: its selector selects its pods",
            name(d)
        );
        let ports = container_ports(d);
        for c in d["spec"]["template"]["spec"]["containers"]
            .as_sequence()
            .unwrap()
        {
            for probe in ["readinessProbe", "livenessProbe"] {
                let port = c[probe]["grpc"]["port"].as_u64();
                assert_eq!(
                    port,
                    ports.get("grpc").copied(),
                    "{}: a gRPC health {probe} on the grpc port",
                    name(d)
                );
            }
            // Ready when its own service serves (NOT_SERVING while it
            // starts); alive while the server answers.
            let role = trine_mesh::Role::parse(c["name"].as_str().unwrap()).unwrap();
            assert_eq!(
                c["readinessProbe"]["grpc"]["service"].as_str(),
                Some(role.grpc_service()),
                "{}: readiness asks its service",
                name(d)
            );
            assert!(
                c["livenessProbe"]["grpc"]["service"].is_null(),
                "{}",
                name(d)
            );
            for bound in ["requests", "limits"] {
                for resource in ["cpu", "memory"] {
                    assert!(
                        !c["resources"][bound][resource].is_null(),
                        "{}: {bound}.{resource}",
                        name(d)
                    );
                }
            }
            // The address it listens on is the grpc container port.
            let listen = arg(c, "--listen").unwrap();
            let port: u64 = listen.rsplit(':').next().unwrap().parse().unwrap();
            assert_eq!(Some(port), ports.get("grpc").copied(), "{}", name(d));
            let metrics = arg(c, "--metrics").unwrap();
            let port: u64 = metrics.rsplit(':').next().unwrap().parse().unwrap();
            assert_eq!(Some(port), ports.get("metrics").copied(), "{}", name(d));
            assert_eq!(arg(c, "--role"), Some(c["name"].as_str().unwrap()));
        }
        let service = services
            .iter()
            .find(|s| name(s) == name(d))
            .unwrap_or_else(|| panic!("{}: a Service of the same name", name(d)));
        let selector = labels(&service["spec"]["selector"]);
        assert!(
            !selector.is_empty() && selector.iter().all(|(k, v)| pod.get(k) == Some(v)),
            "{}: the Service selects the Deployment's pods",
            name(d)
        );
        for p in service["spec"]["ports"].as_sequence().unwrap() {
            let target = p["targetPort"].as_str().unwrap();
            assert!(
                ports.contains_key(target),
                "{}: service port {target} is a container port",
                name(d)
            );
        }
        // Graceful shutdown: the preStop pause fits well inside the grace
        // period, leaving the drain time.
        let spec = &d["spec"]["template"]["spec"];
        let grace = spec["terminationGracePeriodSeconds"].as_u64().unwrap();
        let pause = spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
            .as_u64()
            .unwrap();
        assert!(
            pause + 20 <= grace,
            "{}: {pause} s pause, {grace} s grace",
            name(d)
        );
        // trine cuts its drain off within the grace period, before the
        // kubelet kills it.
        assert!(
            pause + trine_mesh::GRACE.as_secs() <= grace,
            "{}: {pause} s pause and trine's {} s drain within {grace} s",
            name(d),
            trine_mesh::GRACE.as_secs()
        );
        assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "{}", name(d));
    }
    // Internal services are headless: the gateway balances over their pods.
    for internal in ["lexical-svc", "semantic-svc", "fusion-svc"] {
        let s = services.iter().find(|s| name(s) == internal).unwrap();
        assert_eq!(s["spec"]["clusterIP"], "None", "{internal} is headless");
    }
    let scaled: BTreeSet<&str> = kind(&docs, "HorizontalPodAutoscaler")
        .iter()
        .map(|h| {
            let target = h["spec"]["scaleTargetRef"]["name"].as_str().unwrap();
            workload(&docs, target);
            target
        })
        .collect();
    assert_eq!(
        scaled,
        BTreeSet::from(["gateway", "lexical-svc", "semantic-svc"])
    );
    for d in deployments.iter().chain(kind(&docs, "StatefulSet").iter()) {
        let pod = pod_labels(d);
        assert!(
            kind(&docs, "PodDisruptionBudget")
                .iter()
                .any(|p| selects(&p["spec"]["selector"], &pod)),
            "{}: a PodDisruptionBudget",
            name(d)
        );
    }
}

#[test]
fn the_config_is_trines_and_its_peers_and_model_path_exist() {
    let docs = documents(&k8s().join("base"));
    let config_map = kind(&docs, "ConfigMap")
        .into_iter()
        .find(|c| name(c) == "trine-config")
        .unwrap();
    let toml_text = config_map["data"]["trine.toml"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trine.toml");
    std::fs::write(&path, toml_text).unwrap();
    let config = trine::Config::load(&trine::Overrides {
        config: Some(path),
        ..trine::Overrides::default()
    })
    .unwrap();

    // Each peer is dns://<service>:<port> of a Service and its grpc port.
    let services = kind(&docs, "Service");
    for (role, peer) in [
        ("lexical", &config.peers.lexical),
        ("semantic", &config.peers.semantic),
        ("fusion", &config.peers.fusion),
    ] {
        let peer = peer.as_deref().unwrap();
        let target = peer.strip_prefix("dns://").unwrap();
        let (host, port) = target.rsplit_once(':').unwrap();
        let port: u64 = port.parse().unwrap();
        let service = services.iter().find(|s| name(s) == host).unwrap();
        let grpc = service["spec"]["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "grpc")
            .unwrap();
        assert_eq!(grpc["port"].as_u64(), Some(port), "{role}");
        assert_eq!(
            container_ports(workload(&docs, host)).get("grpc"),
            Some(&port),
            "{role}: the pods listen where the peer points"
        );
    }
    // The Qdrant URL is the qdrant Service's gRPC port.
    let url = config.qdrant.as_deref().unwrap();
    let qdrant = services.iter().find(|s| name(s) == "qdrant").unwrap();
    let grpc = qdrant["spec"]["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "grpc")
        .unwrap();
    assert_eq!(
        url,
        format!("http://qdrant:{}", grpc["port"].as_u64().unwrap())
    );

    // The roles that embed run the images that bake the model where the
    // config says it is.
    let dockerfile =
        std::fs::read_to_string(trine_testkit::workspace_dir().join("deploy/Dockerfile")).unwrap();
    let models = config.models.to_str().unwrap();
    for (deployment, stage) in [("lexical-svc", "lexical"), ("semantic-svc", "semantic")] {
        let image =
            workload(&docs, deployment)["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap();
        assert!(
            image.starts_with(&format!("registry.example.com/trine/{stage}:")),
            "{deployment}: {image}, built from the {stage} stage into the user's registry"
        );
        let section = dockerfile
            .split("\nFROM ")
            .find(|s| s.contains(&format!(" AS {stage}\n")))
            .unwrap_or_else(|| panic!("a `{stage}` stage in deploy/Dockerfile"));
        assert!(
            section.contains(&format!(" {models}/all-MiniLM-L6-v2")),
            "the {stage} image bakes the model into {models}"
        );
    }
}

#[test]
fn network_policies_select_the_right_pods() {
    let docs = documents(&k8s().join("base"));
    let policies = kind(&docs, "NetworkPolicy");
    let pods: BTreeMap<&str, BTreeMap<String, String>> = [
        "gateway",
        "lexical-svc",
        "semantic-svc",
        "fusion-svc",
        "qdrant",
    ]
    .into_iter()
    .map(|w| (w, pod_labels(workload(&docs, w))))
    .collect();

    // Which pods may reach `to` on its port named `port`, by the policies
    // that select `to` (no policy selecting it: everyone).
    let allowed = |to: &str, port: &str| -> BTreeSet<&str> {
        let selecting: Vec<&&Value> = policies
            .iter()
            .filter(|p| selects(&p["spec"]["podSelector"], &pods[to]))
            .collect();
        if selecting.is_empty() {
            return pods.keys().copied().collect();
        }
        let mut from = BTreeSet::new();
        for policy in selecting {
            for rule in policy["spec"]["ingress"].as_sequence().unwrap() {
                let port_ok = rule["ports"]
                    .as_sequence()
                    .is_none_or(|ports| ports.iter().any(|p| p["port"] == port));
                if !port_ok {
                    continue;
                }
                match rule["from"].as_sequence() {
                    None => from.extend(pods.keys().copied()),
                    Some(peers) => {
                        for (pod, labels) in &pods {
                            if peers.iter().any(|p| selects(&p["podSelector"], labels)) {
                                from.insert(*pod);
                            }
                        }
                    }
                }
            }
        }
        from
    };
    for internal in ["lexical-svc", "semantic-svc", "fusion-svc"] {
        assert_eq!(
            allowed(internal, "grpc"),
            BTreeSet::from(["gateway"]),
            "{internal}"
        );
        assert_eq!(
            allowed(internal, "metrics").len(),
            pods.len(),
            "{internal} scraped"
        );
    }
    for port in ["grpc", "http"] {
        assert_eq!(
            allowed("qdrant", port),
            BTreeSet::from(["gateway", "lexical-svc", "semantic-svc"]),
            "qdrant {port}"
        );
    }
    assert_eq!(allowed("qdrant", "p2p"), BTreeSet::from(["qdrant"]));
    assert_eq!(allowed("gateway", "grpc").len(), pods.len());
}

#[test]
fn the_overlay_builds_on_the_base() {
    let overlay = k8s().join("overlays/production");
    let text = std::fs::read_to_string(overlay.join("kustomization.yaml")).unwrap();
    let kustomization: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(kustomization["resources"][0], "../../base");
    let base = documents(&k8s().join("base"));
    let images: BTreeSet<String> = kind(&base, "Deployment")
        .iter()
        .map(|d| {
            let image = d["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap();
            image.split(':').next().unwrap().to_string()
        })
        .collect();
    let pinned: BTreeSet<String> = kustomization["images"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(pinned, images, "the overlay pins every trine image");
    for patch in kustomization["patches"].as_sequence().unwrap() {
        let target = &patch["target"];
        assert!(
            base.iter()
                .any(|d| d["kind"] == target["kind"] && name(d) == target["name"].as_str().unwrap()),
            "patch target {target:?} exists in the base"
        );
    }
}

/// The gateway listens beyond loopback, so `serve --auth auto` requires API
/// keys: its keys file is the mounted `trine-api-keys` Secret, read-only.
#[test]
fn the_gateway_reads_its_api_keys_from_a_secret() {
    let docs = documents(&k8s().join("base"));
    let gateway = workload(&docs, "gateway");
    let spec = &gateway["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert!(
        arg(c, "--auth").is_none_or(|mode| mode != "off"),
        "the public gateway never runs without keys"
    );
    let file = c["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "TRINE_KEYS_FILE")
        .and_then(|e| e["value"].as_str())
        .expect("TRINE_KEYS_FILE");
    let mount = c["volumeMounts"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|m| file.starts_with(&format!("{}/", m["mountPath"].as_str().unwrap())))
        .expect("the keys file is on a mounted volume");
    assert_eq!(mount["readOnly"], true);
    let volume = spec["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    assert_eq!(volume["secret"]["secretName"], "trine-api-keys");
}

/// Every service that reaches Qdrant, and Qdrant itself, takes the API key
/// from the same Secret; the collection is spread over the 3-node cluster.
#[test]
fn the_qdrant_key_comes_from_a_secret_and_the_layout_fits_the_cluster() {
    let docs = documents(&k8s().join("base"));
    let from_secret = |workload: &Value, var: &str| {
        workload["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_sequence()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == var)
            .map(|e| {
                e["valueFrom"]["secretKeyRef"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
    };
    for name in ["gateway", "lexical-svc", "semantic-svc"] {
        assert_eq!(
            from_secret(workload(&docs, name), "TRINE_QDRANT_API_KEY").as_deref(),
            Some("trine-qdrant"),
            "{name}"
        );
    }
    assert_eq!(
        from_secret(workload(&docs, "fusion-svc"), "TRINE_QDRANT_API_KEY"),
        None,
        "fusion-svc holds no data"
    );
    assert_eq!(
        from_secret(workload(&docs, "qdrant"), "QDRANT__SERVICE__API_KEY").as_deref(),
        Some("trine-qdrant")
    );
    let config_map = kind(&docs, "ConfigMap")[0];
    let config: toml::Value =
        toml::from_str(config_map["data"]["trine.toml"].as_str().unwrap()).unwrap();
    assert_eq!(config["shards"].as_integer(), Some(3));
    assert_eq!(config["replication_factor"].as_integer(), Some(2));
    let dockerfile =
        std::fs::read_to_string(trine_testkit::workspace_dir().join("deploy/Dockerfile")).unwrap();
    assert!(
        !dockerfile.contains("protobuf-compiler") && !dockerfile.contains("libprotobuf-dev"),
        "protoc and its well-known types come from crates.io (protoc-bin-vendored), not apt"
    );
    assert!(
        trine_testkit::workspace_dir()
            .join(".dockerignore")
            .exists()
    );
}

/// `kubectl` and `kubernetes-validate` as `scripts/fetch-k8s-tools.sh`
/// installs them (`$TRINE_K8S_TOOLS`, default `~/.cache/trine/k8s`).
struct SchemaTools {
    kubectl: PathBuf,
    python_path: PathBuf,
}

/// The Kubernetes version the manifests are held against.
const KUBERNETES: &str = "1.37.0";

fn schema_tools() -> Option<SchemaTools> {
    let root = match std::env::var_os("TRINE_K8S_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/trine/k8s"),
    };
    let tools = SchemaTools {
        kubectl: root.join("bin/kubectl"),
        python_path: root.join("py"),
    };
    (tools.kubectl.is_file() && tools.python_path.join("kubernetes_validate").is_dir())
        .then_some(tools)
}

/// `kubectl kustomize DIR`: what `kubectl apply -k DIR` would apply.
fn render(tools: &SchemaTools, dir: &Path) -> String {
    let out = std::process::Command::new(&tools.kubectl)
        .arg("kustomize")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `kubernetes-validate --strict` (unknown fields refused) of `yaml`:
/// whether every document passed, and what the validator said.
fn validate(tools: &SchemaTools, yaml: &str, name: &str) -> (bool, String) {
    let file = std::env::temp_dir().join(format!("trine-k8s-{}-{name}.yaml", std::process::id()));
    std::fs::write(&file, yaml).unwrap();
    let out = std::process::Command::new("python3")
        .args([
            "-m",
            "kubernetes_validate",
            "--strict",
            "--quiet",
            "-k",
            KUBERNETES,
        ])
        .arg(&file)
        .env("PYTHONPATH", &tools.python_path)
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// Every kustomization (the base and each overlay) as kustomize renders it,
/// every document held against Kubernetes' own schemas.
#[test]
fn every_kustomization_renders_and_passes_kubernetes_schemas() {
    let Some(tools) = schema_tools() else {
        trine_testkit::skipped(
            "the manifests against Kubernetes' schemas",
            "run scripts/fetch-k8s-tools.sh",
        );
        return;
    };
    let mut dirs = vec![k8s().join("base")];
    for entry in std::fs::read_dir(k8s().join("overlays")).unwrap() {
        dirs.push(entry.unwrap().path());
    }
    for dir in dirs {
        let yaml = render(&tools, &dir);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let documents = yaml.matches("\nkind: ").count() + usize::from(yaml.starts_with("kind: "));
        assert!(documents > 10, "{name}: {documents} documents rendered");
        let (passed, said) = validate(&tools, &yaml, &name);
        assert!(
            passed,
            "{name} fails Kubernetes {KUBERNETES}'s schemas:\n{said}"
        );
    }
}

/// The check can fail: a misspelt field, a string where a number goes and a
/// field at the wrong level each fail it, naming the resource.
#[test]
fn a_wrong_field_name_or_type_fails_the_schemas() {
    let Some(tools) = schema_tools() else {
        trine_testkit::skipped("the schemas' refusals", "run scripts/fetch-k8s-tools.sh");
        return;
    };
    let yaml = render(&tools, &k8s().join("overlays/production"));
    for (what, from, to) in [
        ("a misspelt field", "periodSeconds:", "periodSecond:"),
        (
            "a string for a number",
            "minReplicas: 3",
            "minReplicas: \"three\"",
        ),
        (
            "a list for a map",
            "app.kubernetes.io/part-of: trine",
            "- trine",
        ),
    ] {
        assert!(yaml.contains(from), "{what}: the rendering has {from:?}");
        let broken = yaml.replacen(from, to, 1);
        let (passed, said) = validate(&tools, &broken, "broken");
        assert!(!passed, "{what} ({from:?} → {to:?}) passed the schemas");
        assert!(
            said.contains("did not validate for resource"),
            "{what}: the validator names the resource: {said}"
        );
    }
}

/// The TLS overlay as rendered: every service runs with `--tls-dir` on the
/// mounted `trine-tls` Secret, and its probes are `trine health` over that
/// TLS — readiness asking the service's own status, liveness the server's —
/// on the container's gRPC port (the kubelet's gRPC probes speak plaintext).
#[test]
fn the_tls_overlay_mounts_the_secret_and_probes_over_tls() {
    let Some(tools) = schema_tools() else {
        trine_testkit::skipped(
            "the TLS overlay as rendered",
            "run scripts/fetch-k8s-tools.sh",
        );
        return;
    };
    let yaml = render(&tools, &k8s().join("overlays/tls"));
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&yaml)
        .map(|doc| Value::deserialize(doc).unwrap())
        .collect();
    let deployments = kind(&docs, "Deployment");
    assert_eq!(deployments.len(), 4);
    for deployment in deployments {
        let who = name(deployment);
        let pod = &deployment["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        let args: Vec<&str> = container["args"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let dir = arg(container, "--tls-dir").unwrap_or_else(|| panic!("{who}: --tls-dir"));
        assert_eq!(&args[..2], ["--tls-dir", dir], "{who}: a global flag first");
        let mount = container["volumeMounts"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|m| m["mountPath"] == dir)
            .unwrap_or_else(|| panic!("{who}: {dir} mounted"));
        let volume = pod["volumes"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|v| v["name"] == mount["name"])
            .unwrap();
        assert_eq!(volume["secret"]["secretName"], "trine-tls", "{who}");

        let port = container_ports(deployment)["grpc"];
        let service = match who {
            "gateway" => "trine.v1.Memory",
            "lexical-svc" => "trine.v1.Lexical",
            "semantic-svc" => "trine.v1.Semantic",
            "fusion-svc" => "trine.v1.Fusion",
            other => panic!("unexpected Deployment {other}"),
        };
        let command = |probe: &str| -> Vec<String> {
            let probe = &container[probe];
            assert!(probe["grpc"].is_null(), "{who}: no plaintext gRPC probe");
            probe["exec"]["command"]
                .as_sequence()
                .unwrap_or_else(|| panic!("{who}: an exec probe"))
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        };
        let at = format!("localhost:{port}");
        assert_eq!(
            command("readinessProbe"),
            [
                "trine",
                "--tls-dir",
                dir,
                "health",
                "--service",
                service,
                &at
            ],
            "{who}"
        );
        assert_eq!(
            command("livenessProbe"),
            ["trine", "--tls-dir", dir, "health", &at],
            "{who}"
        );
    }
}

/// Every trine pod runs as uid 10001, non-root, with a read-only root and no
/// privilege escalation; the gateway's keys Secret is mounted 0440 under
/// `fsGroup` 10001 (readable by trine, passing its keys-file mode check);
/// the image's final user is the same uid.
#[test]
fn trine_pods_run_unprivileged_and_read_their_keys_as_their_group() {
    let docs = documents(&k8s().join("base"));
    for role in ["gateway", "lexical-svc", "semantic-svc", "fusion-svc"] {
        let spec = &workload(&docs, role)["spec"]["template"]["spec"];
        let pod = &spec["securityContext"];
        assert_eq!(pod["runAsNonRoot"], true, "{role}");
        assert_eq!(pod["runAsUser"].as_u64(), Some(10001), "{role}");
        for c in spec["containers"].as_sequence().unwrap() {
            let sc = &c["securityContext"];
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{role}");
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{role}");
        }
    }
    let spec = &workload(&docs, "gateway")["spec"]["template"]["spec"];
    assert_eq!(spec["securityContext"]["fsGroup"].as_u64(), Some(10001));
    assert!(
        spec["volumes"]
            .as_sequence()
            .unwrap()
            .iter()
            .any(|v| v["secret"]["secretName"] == "trine-api-keys")
    );
    // Kubernetes reads YAML 1.1, where a leading zero is octal (serde_yaml
    // reads 1.2): the mode is read from the text.
    let text = std::fs::read_to_string(k8s().join("base/gateway.yaml")).unwrap();
    let after = &text[text.find("secretName: trine-api-keys").unwrap()..];
    let written = after
        .lines()
        .find_map(|l| l.trim().strip_prefix("defaultMode:"))
        .unwrap()
        .trim();
    assert!(written.starts_with('0'), "an octal mode: {written}");
    let mode = u32::from_str_radix(written, 8).unwrap();
    assert_eq!(mode, 0o440, "mode {mode:o}");
    assert_eq!(
        mode & 0o027,
        0,
        "trine refuses a keys file of mode {mode:o}"
    );

    let dockerfile =
        std::fs::read_to_string(trine_testkit::workspace_dir().join("deploy/Dockerfile")).unwrap();
    let users: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.trim().strip_prefix("USER "))
        .collect();
    assert_eq!(users, ["10001:10001"], "the image runs as trine's uid");
}

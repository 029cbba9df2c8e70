//! TLS with certificates generated for the test (openssl): a server with a
//! client CA refuses a client without a certificate, with one from another
//! CA, and a plaintext one, and answers one whose certificate the CA signed —
//! `trine serve` as a process, and the gateway's hop to fusion-svc; and trine
//! as a client of a Qdrant server with TLS on.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use tokio::net::TcpListener;
use trine::config::TlsSection;
use trine_api::server::Serving;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, UpsertRequest};
use trine_embed::HashEmbedder;
use trine_gateway::{MemoryService, Peers, SearchConfig, Searcher, Writer};
use trine_lexical::{LexicalConfig, LexicalService};
use trine_mesh::{channel, channel_tls};
use trine_store::{EdgeStore, Store};

fn openssl(dir: &Path, args: &[String]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// A CA (`NAME-ca.crt`) and a certificate it signs for 127.0.0.1 and
/// localhost, for servers and clients alike (`NAME.crt`, `NAME.key`).
fn pki(dir: &Path, name: &str) {
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    openssl(
        dir,
        &words(&format!(
            "req -x509 {ec} -keyout {name}-ca.key -out {name}-ca.crt -days 2 -subj /CN={name}-ca \
             -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
        )),
    );
    openssl(
        dir,
        &words(&format!(
            "req {ec} -keyout {name}.key -out {name}.csr -subj /CN=trine-node"
        )),
    );
    std::fs::write(
        dir.join(format!("{name}.ext")),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        dir,
        &words(&format!(
            "x509 -req -in {name}.csr -CA {name}-ca.crt -CAkey {name}-ca.key -CAcreateserial \
             -out {name}.crt -days 2 -extfile {name}.ext"
        )),
    );
}

/// The certificates of a test, or `None` (said) when openssl is missing.
fn certificates() -> Option<tempfile::TempDir> {
    if Command::new("openssl").arg("version").output().is_err() {
        trine_testkit::skipped(
            "no openssl to generate the test's certificates",
            "apt install openssl",
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), "mesh");
    pki(dir.path(), "stranger");
    Some(dir)
}

fn tls(dir: &Path, cert: Option<&str>, ca: Option<&str>, client_ca: Option<&str>) -> TlsSection {
    let file = |name: &str| Some(dir.join(name));
    TlsSection {
        cert: cert.and_then(|c| file(&format!("{c}.crt"))),
        key: cert.and_then(|c| file(&format!("{c}.key"))),
        ca: ca.and_then(|c| file(&format!("{c}.crt"))),
        client_ca: client_ca.and_then(|c| file(&format!("{c}.crt"))),
    }
}

fn toml(dir: &Path, name: &str, section: &TlsSection) -> PathBuf {
    let mut text = "[tls]\n".to_string();
    for (key, value) in [
        ("cert", &section.cert),
        ("key", &section.key),
        ("ca", &section.ca),
        ("client_ca", &section.client_ca),
    ] {
        if let Some(path) = value {
            text.push_str(&format!("{key} = {:?}\n", path.display().to_string()));
        }
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `trine serve --role fusion` on a free loopback port, as `configure`
/// sets it up (its TLS).
fn serve_fusion(data: &Path, configure: impl FnOnce(&mut Command)) -> trine_testkit::Served {
    let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data);
    configure(&mut cmd);
    cmd.args([
        "serve",
        "--role",
        "fusion",
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "off",
    ]);
    trine_testkit::Served::start(cmd)
}

/// `trine health [ARGS] ADDR` against `served`, as `configure` sets it up.
fn trine_health(
    data: &Path,
    served: &trine_testkit::Served,
    args: &[&str],
    configure: impl FnOnce(&mut Command),
) -> std::process::Output {
    let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data);
    configure(&mut cmd);
    cmd.arg("health")
        .args(args)
        .arg(&served.addr)
        .output()
        .unwrap()
}

/// With `[tls]` securing gRPC, a plain HTTP surface beyond loopback is
/// refused at start, saying what to do instead.
#[test]
fn plain_http_beyond_loopback_is_refused_beside_tls() {
    let Some(certs) = certificates() else { return };
    let dir = certs.path();
    let server = toml(dir, "server", &tls(dir, Some("mesh"), None, None));
    let data = dir.join("data");
    let out = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data)
        .arg("--config")
        .arg(&server)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "off",
            "--http",
            "0.0.0.0:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("TLS-terminating proxy"), "{stderr}");
}

#[test]
fn a_server_with_a_client_ca_answers_only_clients_it_signed() {
    let Some(certs) = certificates() else { return };
    let dir = certs.path();
    let server = toml(
        dir,
        "server",
        &tls(dir, Some("mesh"), None, Some("mesh-ca")),
    );
    let data = dir.join("data");
    let served = serve_fusion(&data, |cmd| {
        cmd.arg("--config").arg(&server);
    });
    let health = |config: Option<PathBuf>| {
        trine_health(&data, &served, &[], |cmd| {
            if let Some(config) = config {
                cmd.arg("--config").arg(config);
            }
        })
    };
    let signed = toml(
        dir,
        "signed",
        &tls(dir, Some("mesh"), Some("mesh-ca"), None),
    );
    let out = health(Some(signed));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "SERVING");
    for (who, config) in [
        (
            "no client certificate",
            Some(toml(
                dir,
                "anonymous",
                &tls(dir, None, Some("mesh-ca"), None),
            )),
        ),
        (
            "another CA's certificate",
            Some(toml(
                dir,
                "stranger",
                &tls(dir, Some("stranger"), Some("mesh-ca"), None),
            )),
        ),
        ("plaintext", None),
    ] {
        let out = health(config);
        assert!(!out.status.success(), "{who}: refused");
    }
}

/// `--tls-dir` (`TRINE_TLS_DIR`), as the Kubernetes TLS overlay mounts a
/// Secret (`tls.crt`, `tls.key`, `ca.crt`): the server requires a client
/// certificate the CA signed, and `trine health` given the same directory —
/// the overlay's exec probe — presents one and trusts the server; without it,
/// or with another CA's directory, the probe fails.
#[test]
fn a_secret_directory_serves_mutual_tls_and_the_probe_passes_it() {
    let Some(certs) = certificates() else { return };
    let dir = certs.path();
    let secret = |name: &str, cert: &str, ca: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        for (from, to) in [
            (format!("{cert}.crt"), "tls.crt"),
            (format!("{cert}.key"), "tls.key"),
            (format!("{ca}.crt"), "ca.crt"),
        ] {
            std::fs::copy(dir.join(from), path.join(to)).unwrap();
        }
        path
    };
    let mesh = secret("secret-mesh", "mesh", "mesh-ca");
    let stranger = secret("secret-stranger", "stranger", "stranger-ca");
    let data = dir.join("data");
    let served = serve_fusion(&data, |cmd| {
        cmd.env("TRINE_TLS_DIR", &mesh);
    });
    let probe = |secret: Option<&Path>| {
        trine_health(&data, &served, &["--service", "trine.v1.Fusion"], |cmd| {
            cmd.env_remove("TRINE_TLS_DIR");
            if let Some(secret) = secret {
                cmd.env("TRINE_TLS_DIR", secret);
            }
        })
    };
    let out = probe(Some(&mesh));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "SERVING");
    for (who, secret) in [
        ("plaintext", None),
        ("another CA", Some(stranger.as_path())),
    ] {
        assert!(!probe(secret).status.success(), "{who}: refused");
    }
}

async fn never() {
    std::future::pending::<()>().await;
}

/// A gateway over `store` whose fusion-svc is at `fusion` (reached with
/// `tls`), lexical-svc plain at `lexical`, semantic-svc nowhere.
async fn gateway(
    store: Arc<dyn Store>,
    lexical: SocketAddr,
    fusion: SocketAddr,
    tls: &TlsSection,
) -> MemoryClient<tonic::transport::Channel> {
    let nowhere = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let peers = Peers::lazy(
        channel(&lexical.to_string()).unwrap(),
        channel(&nowhere.to_string()).unwrap(),
        channel_tls(
            &format!("localhost:{}", fusion.port()),
            tls.client().unwrap(),
        )
        .unwrap(),
    );
    let writer = Writer::new(store.clone(), Arc::new(HashEmbedder::new(64)));
    let service = MemoryService::new(writer).with_search(Searcher::new(
        peers,
        store,
        SearchConfig::default(),
    ));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(trine_gateway::run(l, service, Serving::default(), never()));
    MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_reaches_fusion_svc_over_mutual_tls() {
    let Some(certs) = certificates() else { return };
    let dir = certs.path();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(&dir.join("data"), "memories").unwrap());
    Writer::new(store.clone(), Arc::new(HashEmbedder::new(64)))
        .prepare()
        .await
        .unwrap();

    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let lexical = l.local_addr().unwrap();
    tokio::spawn(trine_lexical::run(
        l,
        LexicalService::new(store.clone(), LexicalConfig::default()),
        Serving::default(),
        never(),
    ));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let fusion = l.local_addr().unwrap();
    let serving = Serving {
        tls: tls(dir, Some("mesh"), None, Some("mesh-ca"))
            .server()
            .unwrap(),
        ..Serving::default()
    };
    tokio::spawn(trine_fusion::run(
        l,
        trine_fusion::FusionService::new(trine_fusion::Settings::default()),
        serving,
        never(),
    ));

    let search = || SearchRequest {
        query: "Meeting 2026-11-11 09:58".into(),
        filters: Some(Filters {
            tenant: "acme".into(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    };
    let mut signed = gateway(
        store.clone(),
        lexical,
        fusion,
        &tls(dir, Some("mesh"), Some("mesh-ca"), None),
    )
    .await;
    signed
        .upsert(UpsertRequest {
            records: vec![Record {
                text: "Meeting 2026-11-11 09:58".into(),
                tenant: "acme".into(),
                ..Record::default()
            }],
        })
        .await
        .unwrap();
    let answer = signed.search(search()).await.unwrap().into_inner();
    assert_eq!(answer.hits.len(), 1);
    let reasons = answer.degraded_reasons.join("; ");
    assert!(
        !reasons.contains("fusion"),
        "fusion-svc answered over mTLS: {reasons}"
    );
    assert!(
        answer.timings.iter().any(|t| t.stage == "fusion"),
        "fusion-svc's own timing came back"
    );

    // Without a client certificate the hop is refused: the gateway fuses
    // itself and says why.
    let mut anonymous = gateway(
        store,
        lexical,
        fusion,
        &tls(dir, None, Some("mesh-ca"), None),
    )
    .await;
    let answer = anonymous.search(search()).await.unwrap().into_inner();
    let reasons = answer.degraded_reasons.join("; ");
    assert!(reasons.contains("fusion"), "{reasons}");
}

/// The Qdrant binary the test command's server runs (`QDRANT_BIN`, else where
/// `../shared/qdrant/start-qdrant` unpacks it), or `None` (said).
fn qdrant_binary() -> Option<PathBuf> {
    let path = std::env::var_os("QDRANT_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
            Some(cache.join("trine-qdrant/qdrant-1.19.0"))
        });
    match path {
        Some(path) if path.is_file() => Some(path),
        _ => {
            trine_testkit::skipped(
                "Qdrant over https://",
                "no Qdrant binary: set QDRANT_BIN, or run ../shared/qdrant/start-qdrant once",
            );
            None
        }
    }
}

/// A Qdrant server with TLS on (its certificate signed by `qdrant-ca.crt`),
/// stopped on drop; ready once its log says the gRPC API listens.
struct TlsQdrant {
    child: std::process::Child,
    grpc: u16,
}

impl Drop for TlsQdrant {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_tls_qdrant(bin: &Path, dir: &Path) -> TlsQdrant {
    use std::io::BufRead;
    let (http, grpc) = (free_port(), free_port());
    let storage = dir.join("qdrant-storage");
    let child = Command::new(bin)
        .current_dir(dir)
        .env("QDRANT__SERVICE__HOST", "127.0.0.1")
        .env("QDRANT__SERVICE__HTTP_PORT", http.to_string())
        .env("QDRANT__SERVICE__GRPC_PORT", grpc.to_string())
        .env("QDRANT__SERVICE__ENABLE_TLS", "true")
        .env("QDRANT__TLS__CERT", dir.join("qdrant.crt"))
        .env("QDRANT__TLS__KEY", dir.join("qdrant.key"))
        .env("QDRANT__STORAGE__STORAGE_PATH", storage.join("data"))
        .env("QDRANT__STORAGE__SNAPSHOTS_PATH", storage.join("snapshots"))
        .env("QDRANT__TELEMETRY_DISABLED", "true")
        .env("QDRANT__LOG_LEVEL", "INFO")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped on drop from here, also when it fails to start.
    let mut qdrant = TlsQdrant { child, grpc };
    // Two threads read its output to the end (so that it never blocks on a
    // full pipe) and say when the gRPC API listens, or send what it said
    // when it stops.
    let (said, heard) = std::sync::mpsc::channel();
    let readers: [Box<dyn std::io::Read + Send>; 2] = [
        Box::new(qdrant.child.stdout.take().unwrap()),
        Box::new(qdrant.child.stderr.take().unwrap()),
    ];
    for reader in readers {
        let said = said.clone();
        std::thread::spawn(move || {
            let mut log = Vec::new();
            for line in std::io::BufReader::new(reader)
                .lines()
                .map_while(Result::ok)
            {
                if line.contains("gRPC listening") {
                    let _ = said.send(Ok(()));
                }
                log.push(line);
            }
            let _ = said.send(Err(log.join("\n")));
        });
    }
    let mut logs = Vec::new();
    while logs.len() < 2 {
        match heard.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(Ok(())) => return qdrant,
            Ok(Err(log)) => logs.push(log),
            Err(e) => panic!("Qdrant with TLS did not say it serves within 120 s: {e}"),
        }
    }
    panic!(
        "Qdrant with TLS stopped before serving:\n{}",
        logs.join("\n")
    );
}

/// trine reaches a Qdrant server over `https://`: the server's certificate is
/// checked against the system's roots, or the CA that `SSL_CERT_FILE` names.
/// A server it cannot verify is refused with an error naming
/// `SSL_CERT_FILE`; plaintext `http://` to the TLS port is refused too.
#[test]
fn qdrant_over_https_is_verified_and_answers() {
    let Some(bin) = qdrant_binary() else { return };
    let Some(dir) = certificates() else { return };
    pki(dir.path(), "qdrant");
    let qdrant = start_tls_qdrant(&bin, dir.path());
    let data = dir.path().join("data");
    let collection = ["--collection", "trine_over_https"];
    let at = |scheme: &str, ca: Option<&str>| {
        let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data);
        cmd.env_remove("SSL_CERT_DIR").env_remove("SSL_CERT_FILE");
        if let Some(ca) = ca {
            cmd.env("SSL_CERT_FILE", dir.path().join(format!("{ca}.crt")));
        }
        cmd.arg("--qdrant")
            .arg(format!("{scheme}://127.0.0.1:{}", qdrant.grpc))
            .args(collection);
        cmd
    };
    let mut ingest = at("https", Some("qdrant-ca"));
    ingest
        .args(["ingest", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = ingest.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"{\"text\": \"Meeting 2026-11-11 09:58\", \"tenant\": \"acme\"}\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "ingest over https: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = trine_testkit::run_ok(at("https", Some("qdrant-ca")).args([
        "search",
        "Meeting 2026-11-11 09:58",
        "--tenant",
        "acme",
    ]));
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(found.contains("Meeting 2026-11-11 09:58"), "{found}");

    for (scheme, ca, why, hint) in [
        (
            "https",
            None,
            "a server no trusted root signed",
            "SSL_CERT_FILE",
        ),
        (
            "https",
            Some("stranger-ca"),
            "a server another CA signed",
            "SSL_CERT_FILE",
        ),
        // The client sees the server's TLS alert as an HTTP/2 error (with
        // a hint to use https://), a transport error or a cancelled call.
        (
            "http",
            None,
            "plaintext to the TLS port",
            "cannot reach qdrant",
        ),
    ] {
        let out = at(scheme, ca)
            .args(["search", "Meeting", "--tenant", "acme"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        let error = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{why}: answered\n{said}");
        assert!(!said.contains("Meeting 2026-11-11"), "{why}: {said}");
        assert!(
            error.contains(hint),
            "{why}: the error does not say {hint:?}: {error}"
        );
    }
}

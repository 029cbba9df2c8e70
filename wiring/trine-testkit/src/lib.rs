//! Helpers that start trine's real parts in-process for tests.
#![forbid(unsafe_code)]

mod gated;
mod noted;
pub mod relay;
mod skip;
pub use gated::{Gate, Gated, gated};
pub use noted::{Noted, Noting, noted};
pub use relay::{Fault, Relay};
pub use skip::{NO_QDRANT, SKIPPED_ENV, skipped};
/// A health status, as [`until_health`] waits for one.
pub use tonic_health::pb::health_check_response::ServingStatus;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's models directory (`TRINE_MODELS` overrides it).
pub fn models_dir() -> PathBuf {
    std::env::var_os("TRINE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"))
}

/// The workspace's root directory.
pub fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `trine` binary at `bin` (a test's `env!("CARGO_BIN_EXE_trine")`) on
/// the embedded store in `data` with the hash embedder, whatever the
/// caller's environment says about a server or a config file.
pub fn trine_cli(bin: &str, data: &Path) -> Command {
    let mut cmd = trine_command(bin);
    cmd.arg("--data").arg(data).args(["--embedder", "hash"]);
    cmd
}

/// The `trine` binary at `bin` without the caller's server or config file
/// (`TRINE_QDRANT_URL`, which the test command sets for the server tests,
/// and `TRINE_CONFIG`): it runs on what its arguments say.
pub fn trine_command(bin: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_remove("TRINE_QDRANT_URL")
        .env_remove("TRINE_CONFIG");
    cmd
}

/// Runs `cmd` to the end and asserts it succeeded (its stderr in the
/// message); its output.
pub fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The offline mirror of the fusion (`scripts/fusion-study.py check`, the
/// hash embedder's defaults) over a `trine eval --lists` dump and the same
/// run's `--save` report: it must rank the gold of all `queries` queries as
/// trine's default fusion did.
///
/// # Panics
/// When python3 cannot run the script, or the mirror disagrees.
pub fn assert_fusion_mirror_agrees(lists: &Path, report: &Path, queries: usize) {
    let out = Command::new("python3")
        .arg(workspace_dir().join("scripts/fusion-study.py"))
        .args(["check", "--embedder", "hash", "--lists"])
        .arg(lists)
        .arg("--report")
        .arg(report)
        .output()
        .expect("run python3 scripts/fusion-study.py");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains(&format!("{queries} of {queries} queries ranked")),
        "fusion-study check: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A running `trine serve` child process, killed (SIGKILL) and reaped when
/// dropped, so that a failing test leaves nothing behind.
pub struct Served {
    pub child: std::process::Child,
    /// The address of its public service (the gateway's, or the role's).
    pub addr: String,
    /// Its whole ready line (`serve --ready-json`).
    pub ready: serde_json::Value,
    printed: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    /// Starts `cmd` (a `trine ... serve --listen 127.0.0.1:0 ...` command)
    /// with `--ready-json` and reads the ready line it prints on stdout once
    /// its listeners are bound. Its stderr and later output are read as it
    /// prints them (it never blocks on a full pipe) and kept: [`Self::printed`].
    ///
    /// # Panics
    /// When it cannot start, or exits before saying where it serves.
    pub fn start(mut cmd: Command) -> Self {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        let mut child = cmd
            .arg("--ready-json")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start trine serve");
        let printed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let keep = |printed: &std::sync::Arc<std::sync::Mutex<String>>| {
            let printed = printed.clone();
            move |line: std::io::Result<String>| {
                if let (Ok(line), Ok(mut all)) = (line, printed.lock()) {
                    all.push_str(&line);
                    all.push('\n');
                }
            }
        };
        let stderr = child.stderr.take().expect("serve's stderr is piped");
        let on_stderr = keep(&printed);
        std::thread::spawn(move || BufReader::new(stderr).lines().for_each(on_stderr));
        let stdout = child.stdout.take().expect("serve's stdout is piped");
        let mut lines = BufReader::new(stdout).lines();
        let line = lines
            .next()
            .expect("serve printed its ready line before exiting")
            .expect("read serve's stdout");
        let ready: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("ready line {line:?}: {e}"));
        let addr = ready["addr"]
            .as_str()
            .unwrap_or_else(|| panic!("ready line without addr: {line}"))
            .to_string();
        let on_stdout = keep(&printed);
        std::thread::spawn(move || lines.for_each(on_stdout));
        Self {
            child,
            addr,
            ready,
            printed,
        }
    }

    /// What it has printed so far, a line at a time: its stderr from the
    /// start, its stdout after the ready line.
    pub fn printed(&self) -> String {
        self.printed
            .lock()
            .map(|all| all.clone())
            .unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The records of `tenant` among `ids` through a gateway, asked in Gets of
/// at most the most ids one Get may carry.
///
/// # Panics
/// When a Get fails.
pub async fn get_all(
    client: &mut trine_api::v1::memory_client::MemoryClient<tonic::transport::Channel>,
    tenant: &str,
    ids: &[String],
) -> Vec<trine_api::v1::Record> {
    let mut records = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(trine_api::codec::MAX_IDS) {
        let got = client
            .get(trine_api::v1::GetRequest {
                tenant: tenant.to_string(),
                ids: chunk.to_vec(),
            })
            .await
            .expect("a Get through the gateway");
        records.extend(got.into_inner().records);
    }
    records
}

/// The whole mesh in this process, as `trine serve` runs it — its
/// collection made ready, the embedded document frequencies built at start
/// (`keep_counts`), the gateway and the three services each on a free
/// loopback port, talking real gRPC — returned once the gateway's health
/// says SERVING, as an orchestrator would wait for it.
///
/// # Panics
/// When the collection cannot be made ready, a service cannot start, or the
/// mesh is not ready within a minute.
pub async fn mesh(
    store: std::sync::Arc<dyn trine_store::Store>,
    embedder: std::sync::Arc<dyn trine_embed::Embedder>,
    config: trine_mesh::MeshConfig,
) -> trine_mesh::Mesh {
    let mesh = starting_mesh(store, embedder, config).await;
    serving(
        mesh.gateway,
        "trine.v1.Memory",
        std::time::Duration::from_secs(60),
    )
    .await;
    mesh
}

/// [`mesh`], returned as soon as it listens: still starting (its health
/// NOT_SERVING while lexical-svc builds the document frequencies).
///
/// # Panics
/// When the collection cannot be made ready or a service cannot start.
pub async fn starting_mesh(
    store: std::sync::Arc<dyn trine_store::Store>,
    embedder: std::sync::Arc<dyn trine_embed::Embedder>,
    mut config: trine_mesh::MeshConfig,
) -> trine_mesh::Mesh {
    config.lexical.keep_counts = true; // as `trine serve` runs it
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    trine_mesh::Mesh::start(listener, store, embedder, config)
        .await
        .expect("the mesh starts")
}

/// Waits until `service`'s health at `addr` says SERVING ([`until_health`]).
///
/// # Panics
/// When it does not within `within`, or its health cannot be watched.
pub async fn serving(addr: std::net::SocketAddr, service: &str, within: std::time::Duration) {
    until_health(addr, service, ServingStatus::Serving, within).await;
}

/// Watches `service`'s health at `addr` until it says `status`: the
/// health service's Watch stream, which sends the status of the moment and
/// then each change as it happens (no polling). Returns the statuses it
/// said before, in order. `addr` must be listening (bound) already.
///
/// # Panics
/// When it does not say `status` within `within`, the service is not
/// registered there, or the stream ends first.
pub async fn until_health(
    addr: std::net::SocketAddr,
    service: &str,
    status: ServingStatus,
    within: std::time::Duration,
) -> Vec<ServingStatus> {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let watched = async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("a loopback address")
            .connect_lazy();
        let asked = HealthCheckRequest {
            service: service.to_string(),
        };
        let mut changes = HealthClient::new(channel)
            .watch(asked)
            .await
            .unwrap_or_else(|e| panic!("watching the health of {service} at {addr}: {e}"))
            .into_inner();
        let mut before = Vec::new();
        loop {
            let said = changes
                .message()
                .await
                .unwrap_or_else(|e| panic!("the health of {service} at {addr}: {e}"))
                .unwrap_or_else(|| {
                    panic!("the health of {service} at {addr} ended before {status:?}: {before:?}")
                })
                .status();
            if said == status {
                return before;
            }
            before.push(said);
        }
    };
    tokio::time::timeout(within, watched)
        .await
        .unwrap_or_else(|_| panic!("{service} at {addr} not {status:?} within {within:?}"))
}

/// Stores `records` through the gateway `client` talks to, asserting none
/// was refused.
///
/// # Panics
/// When the call fails or a record is refused.
pub async fn upsert_all(
    client: &mut trine_api::v1::memory_client::MemoryClient<tonic::transport::Channel>,
    records: Vec<trine_api::v1::Record>,
) {
    let stored = client
        .upsert(trine_api::v1::UpsertRequest { records })
        .await
        .expect("the upsert is answered")
        .into_inner();
    assert!(stored.failed.is_empty(), "{:?}", stored.failed);
}

/// ADR 0172's headline query: a meeting's title, every term of it common.
pub const TITLE: &str = "Meeting 2026-11-11 09:58";
/// The id of the meeting that holds [`TITLE`].
pub const MEETING: &str = "ffffffff-ffff-4fff-bfff-ffffffffffff";

/// The ADR's situation in `tenant`: 30 filler records (`filler(i)`, ids
/// `00000000-0000-4000-8000-<i>`), then the meeting transcript [`MEETING`]
/// whose first line is [`TITLE`], from `source`.
pub fn meeting_among(
    tenant: &str,
    filler: impl Fn(u32) -> String,
    source: Option<&str>,
) -> Vec<trine_api::v1::Record> {
    use trine_api::v1::Record;
    let mut out: Vec<Record> = (1..=30u32)
        .map(|i| Record {
            id: format!("00000000-0000-4000-8000-{i:012}"),
            text: filler(i),
            tenant: tenant.into(),
            ..Record::default()
        })
        .collect();
    out.push(Record {
        id: MEETING.into(),
        text: format!("{TITLE}\nBună ziua tuturor, începem ședința de astăzi despre buget."),
        tenant: tenant.into(),
        source: source.map(String::from),
        ..Record::default()
    });
    out
}

/// The bundled sample ingested into `data` (the hash embedder), as `trine
/// ingest` stores it.
///
/// # Panics
/// When the ingest fails.
pub fn ingest_sample(bin: &str, data: &Path) {
    let sample = workspace_dir().join("samples/memories.jsonl");
    let out = trine_cli(bin, data)
        .arg("ingest")
        .arg(&sample)
        .output()
        .expect("run trine ingest");
    assert!(out.status.success(), "ingest of the sample: {out:?}");
}

/// `trine serve` on free loopback ports, the HTTP surface on too, no
/// metrics: the arguments the HTTP, MCP and explain tests start it with.
pub const SERVE_HTTP: [&str; 7] = [
    "serve",
    "--listen",
    "127.0.0.1:0",
    "--metrics",
    "off",
    "--http",
    "127.0.0.1:0",
];

/// The sample ingested into `data`, then `trine serve` on it with every
/// port free, the HTTP surface (`--http`) on too, no metrics.
pub fn serve_sample(bin: &str, data: &Path) -> Served {
    ingest_sample(bin, data);
    let mut cmd = trine_cli(bin, data);
    cmd.args(SERVE_HTTP);
    Served::start(cmd)
}

/// The body of a service's `GET /metrics` (HTTP/1.1), checked to be
/// answered 200 as OpenMetrics text.
///
/// # Panics
/// When the service cannot be reached or answers otherwise.
pub async fn get_metrics(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the metrics port answers");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: trine\r\nConnection: close\r\n\r\n")
        .await
        .expect("a request written");
    let mut raw = String::new();
    stream
        .read_to_string(&mut raw)
        .await
        .expect("an answer read");
    let (head, body) = raw.split_once("\r\n\r\n").expect("an http answer");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    body.to_string()
}

/// Sends SIGTERM to the process `pid` (a served child), without a `kill`
/// command (a bare machine may have none).
///
/// # Panics
/// When `pid` is not a process id or the signal cannot be sent.
pub fn terminate(pid: u32) {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .expect("a process id");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM sent");
}

/// `curl` of `method` on `url`, with a JSON `body` and `Authorization:
/// Bearer KEY` when given: the HTTP status and the answer's text.
///
/// # Panics
/// When curl cannot run or cannot reach `url`.
pub fn curl(
    method: &str,
    url: &str,
    body: Option<&serde_json::Value>,
    key: Option<&str>,
) -> (u16, String) {
    let mut cmd = std::process::Command::new("curl");
    cmd.args(["-sS", "-X", method, "-w", "\n%{http_code}", url]);
    if let Some(key) = key {
        cmd.args(["-H", &format!("authorization: Bearer {key}")]);
    }
    if let Some(body) = body {
        cmd.args(["-H", "content-type: application/json", "--data-binary"])
            .arg(body.to_string());
    }
    let out = cmd
        .output()
        .expect("curl runs (the test command installs it)");
    assert!(
        out.status.success(),
        "curl {method} {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (answer, code) = text.rsplit_once('\n').expect("curl wrote the status");
    (
        code.trim().parse().expect("an HTTP status"),
        answer.to_string(),
    )
}

/// Whether `curl` runs here; when not, says which test is skipped and why.
pub fn curl_or_skip(test: &str) -> bool {
    let there = std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !there {
        crate::skipped(test, "no curl: apt-get install curl");
    }
    there
}

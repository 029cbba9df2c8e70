//! Overload on loopback: `trine serve` with a small in-flight limit under
//! bursts far above it answers or sheds every call at once
//! (RESOURCE_EXHAUSTED, never a queue, never a hung call), keeps answering
//! its health check, and its memory stays flat from burst to burst.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::time::Duration;

use tonic::Code;
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, UpsertRequest};

const LIMIT: usize = 4;
const BURSTS: usize = 10;
const CALLS: usize = 256;
const CONNECTIONS: usize = 8;

fn serve(data: &Path) -> trine_testkit::Served {
    let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data);
    cmd.args(["--max-in-flight", &LIMIT.to_string()])
        .args(["serve", "--listen", "127.0.0.1:0"]);
    trine_testkit::Served::start(cmd)
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn search(i: usize) -> tonic::Request<SearchRequest> {
    let mut request = tonic::Request::new(SearchRequest {
        query: format!("deploy {} of the service", i % 50),
        limit: 10,
        filters: Some(Filters {
            tenant: "acme".to_string(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    });
    // A call that neither answers nor is shed within this would be hung.
    request.set_timeout(Duration::from_secs(30));
    request
}

/// One burst: every call at once over the connections; (answered, shed).
async fn burst(clients: &[MemoryClient<Channel>]) -> (usize, usize) {
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let mut client = clients[i % clients.len()].clone();
            tokio::spawn(async move { client.search(search(i)).await })
        })
        .collect();
    let (mut answered, mut shed) = (0, 0);
    for call in calls {
        match call.await.unwrap() {
            Ok(_) => answered += 1,
            Err(e) if e.code() == Code::ResourceExhausted => {
                assert!(e.message().contains("limit of 4 calls"), "{}", e.message());
                shed += 1;
            }
            Err(e) => panic!("neither answered nor shed: {:?} {}", e.code(), e.message()),
        }
    }
    (answered, shed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_far_above_the_limit_are_answered_or_shed_with_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("data"));
    let url = format!("http://{}", server.addr);
    let mut channels = Vec::new();
    for _ in 0..CONNECTIONS {
        // One connection each: the burst arrives on several at once.
        channels.push(
            Channel::from_shared(url.clone())
                .unwrap()
                .connect()
                .await
                .unwrap(),
        );
    }
    let clients: Vec<_> = channels.iter().cloned().map(MemoryClient::new).collect();
    let records = (0..200)
        .map(|i| Record {
            text: format!("deploy {} of the service went out at {i}:00", i % 50),
            tenant: "acme".to_string(),
            ..Record::default()
        })
        .collect();
    clients[0]
        .clone()
        .upsert(UpsertRequest { records })
        .await
        .unwrap();

    let mut health = tonic_health::pb::health_client::HealthClient::new(channels[0].clone());
    let (mut answered, mut shed) = (0, 0);
    let mut baseline = 0;
    for n in 0..BURSTS {
        let during = {
            let mut health = health.clone();
            tokio::spawn(async move {
                health
                    .check(tonic_health::pb::HealthCheckRequest::default())
                    .await
            })
        };
        let (a, s) = burst(&clients).await;
        let during = during.await.unwrap().expect("health answers under load");
        assert_eq!(during.into_inner().status, 1, "SERVING");
        answered += a;
        shed += s;
        if n == 2 {
            baseline = rss_kib(server.child.id());
        }
    }
    let after = rss_kib(server.child.id());
    eprintln!(
        "{answered} answered, {shed} shed of {} calls; rss {baseline} KiB after burst 3, {after} KiB after burst {BURSTS}",
        BURSTS * CALLS
    );
    assert!(answered > 0 && shed > 0, "{answered} answered, {shed} shed");
    assert!(
        after <= baseline + 32 * 1024,
        "memory grew from {baseline} KiB to {after} KiB over {} bursts",
        BURSTS - 3
    );
    // After the bursts, nothing is left in flight: every call is answered.
    let (a, s) = {
        let mut client = clients[0].clone();
        let mut ok = 0;
        for i in 0..20 {
            ok += usize::from(client.search(search(i)).await.is_ok());
        }
        (ok, 20 - ok)
    };
    assert_eq!((a, s), (20, 0));
    health
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .unwrap();
}

/// `trine refusals` (the bench of hostile requests) as a check of codes, not
/// times: each hostile request is refused INVALID_ARGUMENT in-process and
/// over gRPC, saying why.
#[test]
fn hostile_requests_are_refused_as_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &dir.path().join("data"))
        .args(["refusals", "--iterations", "3", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refusals = report.as_array().unwrap();
    assert_eq!(refusals.len(), 4, "{report:#}");
    for r in refusals {
        assert_eq!(r["code"], "InvalidArgument", "{r:#}");
        assert_eq!(r["wire_code"], "InvalidArgument", "{r:#}");
        assert!(
            r["message"].as_str().unwrap().contains("more than"),
            "{r:#}"
        );
        assert_eq!(r["total"]["n"], 3, "{r:#}");
    }
}

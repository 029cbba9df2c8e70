//! The mesh as deployed: `trine serve --role lexical|semantic|fusion|gateway`
//! as four OS processes over a Qdrant server (`TRINE_QDRANT_URL`, which the
//! test command sets from ../shared/qdrant). Writes go through the gateway;
//! the title comes first and another tenant's copy of it never shows; each
//! internal service killed in turn degrades the answers as it should, and
//! once restarted on its port the answers are whole again — the gateway
//! never restarted.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, SearchResponse, UpsertRequest};
use trine_testkit::Served;

use trine_testkit::{MEETING, TITLE};
const DECOY: &str = "eeeeeeee-eeee-4eee-beee-eeeeeeeeeeee";

struct Roles {
    url: String,
    collection: String,
}

impl Roles {
    /// Starts one role on `listen`; the gateway also gets its peers.
    fn start(&self, role: &str, listen: &str, peers: Option<[&str; 3]>) -> Served {
        let mut cmd = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"));
        cmd.args(["--qdrant", &self.url, "--collection", &self.collection])
            .args(["--embedder", "hash", "--log", "error"])
            .args([
                "serve",
                "--role",
                role,
                "--listen",
                listen,
                "--metrics",
                "off",
            ]);
        if let Some([lexical, semantic, fusion]) = peers {
            cmd.args(["--lexical-addr", lexical, "--semantic-addr", semantic])
                .args(["--fusion-addr", fusion]);
        }
        Served::start(cmd)
    }
}

fn memories() -> Vec<Record> {
    // Every title term is common: the filler holds "Meeting" too.
    let filler = |i: u32| {
        format!(
            "Meeting notes {i} of sprint 11 in 2026, logged at 09:{:02}; the deploy went fine.",
            10 + i
        )
    };
    let mut out = trine_testkit::meeting_among("acme", filler, None);
    // Another tenant holds the very same title: it must never show in acme.
    out.push(Record {
        id: DECOY.into(),
        text: TITLE.into(),
        tenant: "globex".into(),
        ..Record::default()
    });
    out
}

async fn search(client: &mut MemoryClient<tonic::transport::Channel>) -> SearchResponse {
    let answer = client
        .search(SearchRequest {
            query: TITLE.into(),
            filters: Some(Filters {
                tenant: "acme".into(),
                ..Filters::default()
            }),
            ..SearchRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        answer.hits.iter().all(|h| h.id != DECOY),
        "another tenant's memory: {answer:?}"
    );
    answer
}

/// Once `service` at `addr` says SERVING (its health's Watch stream: a
/// restarted peer listening, lexical-svc's document frequencies built),
/// searches until the answer is whole again — each search after the last
/// answered degraded (the gateway's channel reconnects on the call after
/// the one that found the old connection gone), at most `tries` searches;
/// the last answer.
async fn whole_once_serving(
    client: &mut MemoryClient<tonic::transport::Channel>,
    addr: &str,
    service: &str,
    tries: usize,
) -> SearchResponse {
    trine_testkit::until_health(
        addr.parse().unwrap(),
        service,
        trine_testkit::ServingStatus::Serving,
        std::time::Duration::from_secs(60),
    )
    .await;
    let mut last = search(client).await;
    for _ in 0..tries {
        if !last.degraded {
            break;
        }
        last = search(client).await;
    }
    last
}

fn port(addr: &str) -> String {
    format!("127.0.0.1:{}", addr.rsplit(':').next().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_answer_degrade_and_recover() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("the four-process mesh", trine_testkit::NO_QDRANT);
        return;
    };
    let roles = Roles {
        url,
        collection: format!("trine_four_{}", uuid::Uuid::new_v4().simple()),
    };
    let mut lexical = roles.start("lexical", "127.0.0.1:0", None);
    let mut semantic = roles.start("semantic", "127.0.0.1:0", None);
    let mut fusion = roles.start("fusion", "127.0.0.1:0", None);
    let (l, s, f) = (
        port(&lexical.addr),
        port(&semantic.addr),
        port(&fusion.addr),
    );
    let gateway = roles.start("gateway", "127.0.0.1:0", Some([&l, &s, &f]));
    let mut client = MemoryClient::connect(format!("http://{}", gateway.addr))
        .await
        .unwrap();
    let stored = client
        .upsert(UpsertRequest {
            records: memories(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(stored.failed.is_empty(), "{stored:?}");

    // Bulk ingest through the deployed mesh: `trine ingest --endpoint`.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("more.jsonl");
    let ids: Vec<String> = (1..=3)
        .map(|i| format!("dddddddd-0000-4000-8000-{i:012}"))
        .collect();
    let mut lines: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"id": "{id}", "text": "ingested through the gateway {id}", "tenant": "acme"}}"#
            )
        })
        .collect();
    lines.insert(1, r#"{"text": "no tenant"}"#.to_string());
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
        .args(["ingest", "--endpoint", &format!("http://{}", gateway.addr)])
        .arg(&file)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(3), "one bad line: {stdout}{stderr}");
    assert!(stderr.contains("line 2: "), "{stderr}");
    assert!(
        stdout.contains("stored 3 memories through the gateway"),
        "{stdout}"
    );
    let got = client
        .get(trine_api::v1::GetRequest {
            tenant: "acme".into(),
            ids: ids.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.records.len(), 3);

    // The gateway SERVING: every peer answers, lexical-svc's counts are cheap.
    let whole = whole_once_serving(&mut client, &gateway.addr, "trine.v1.Memory", 5).await;
    assert!(!whole.degraded, "{:?}", whole.degraded_reasons);
    assert_eq!(whole.hits[0].id, MEETING, "{whole:?}");
    assert!(whole.hits[0].matched_by.contains(&"verbatim".to_string()));

    // semantic-svc down: the lexical list answers, the title still first.
    drop(semantic);
    let answer = search(&mut client).await;
    assert!(answer.degraded);
    assert!(
        answer.degraded_reasons.join(" ").contains("semantic"),
        "{answer:?}"
    );
    assert_eq!(answer.hits[0].id, MEETING);
    semantic = roles.start("semantic", &s, None);
    let back = whole_once_serving(&mut client, &semantic.addr, "trine.v1.Semantic", 5).await;
    assert!(
        !back.degraded,
        "semantic-svc back: {:?}",
        back.degraded_reasons
    );

    // lexical-svc down: the semantic list answers alone.
    drop(lexical);
    let answer = search(&mut client).await;
    assert!(answer.degraded);
    assert!(
        answer.degraded_reasons.join(" ").contains("lexical"),
        "{answer:?}"
    );
    assert!(!answer.hits.is_empty());
    assert!(
        answer.hits.iter().all(|h| h.matched_by == ["semantic"]),
        "{answer:?}"
    );
    lexical = roles.start("lexical", &l, None);
    let back = whole_once_serving(&mut client, &lexical.addr, "trine.v1.Lexical", 5).await;
    assert!(
        !back.degraded,
        "lexical-svc back: {:?}",
        back.degraded_reasons
    );

    // fusion-svc down: the gateway fuses with the same code, and says so.
    drop(fusion);
    let answer = search(&mut client).await;
    assert!(
        answer
            .degraded_reasons
            .join(" ")
            .contains("fused in the gateway"),
        "{answer:?}"
    );
    assert_eq!(answer.hits[0].id, MEETING);
    fusion = roles.start("fusion", &f, None);
    let back = whole_once_serving(&mut client, &fusion.addr, "trine.v1.Fusion", 5).await;
    assert!(!back.degraded, "{:?}", back.degraded_reasons);
    assert_eq!(back.hits[0].id, MEETING);
    drop((lexical, semantic, fusion, gateway));
}

//! The gateway's HTTP/JSON surface as a user reaches it: `curl` against
//! `trine serve --http`, the same hits as gRPC for the same search, the
//! memory calls, the errors, the keys, and `/readyz` turning unready when
//! the store stops answering.
#![allow(clippy::unwrap_used)] // test helpers fail loudly
use serde_json::{Value, json};
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, SearchRequest};
use trine_testkit::Served;

/// `curl` of `method` on `url` with a JSON `body`: the HTTP status and the
/// answer as JSON.
fn curl(method: &str, url: &str, body: Option<&Value>) -> (u16, Value) {
    curl_with(method, url, body, None)
}

/// [`curl`] with `Authorization: Bearer KEY` when a key is given.
fn curl_with(method: &str, url: &str, body: Option<&Value>, key: Option<&str>) -> (u16, Value) {
    let (code, json) = trine_testkit::curl(method, url, body, key);
    (
        code,
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{url}: {e}: {json}")),
    )
}

fn http_of(served: &Served) -> String {
    format!(
        "http://{}",
        served.ready["http"].as_str().expect("an http address")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_as_grpc_does() {
    if !trine_testkit::curl_or_skip("http_answers_as_grpc_does") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = trine_testkit::serve_sample(env!("CARGO_BIN_EXE_trine"), &data);
    let http = http_of(&served);

    // The same search over HTTP and over gRPC: the same hits.
    let title = trine_testkit::TITLE;
    let (code, answer) = curl(
        "POST",
        &format!("{http}/v1/search"),
        Some(&json!({"query": title, "tenant": "acme", "limit": 8})),
    );
    assert_eq!(code, 200, "{answer}");
    let mut client = MemoryClient::connect(format!("http://{}", served.addr))
        .await
        .unwrap();
    let grpc = client
        .search(SearchRequest {
            query: title.into(),
            filters: Some(Filters {
                tenant: "acme".into(),
                ..Filters::default()
            }),
            limit: 8,
            ..SearchRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let hits = answer["hits"].as_array().unwrap();
    assert_eq!(hits.len(), grpc.hits.len(), "{answer}");
    assert!(!hits.is_empty());
    for (h, g) in hits.iter().zip(&grpc.hits) {
        assert_eq!(h["id"], g.id.as_str());
        assert!((h["score"].as_f64().unwrap() - g.score).abs() < 1e-12);
        assert_eq!(h["matched_by"], json!(g.matched_by));
    }
    assert!(
        hits[0]["matched_by"]
            .as_array()
            .unwrap()
            .contains(&json!("verbatim")),
        "the title first, by its verbatim evidence: {answer}"
    );

    // Store, read, find, delete.
    let (code, stored) = curl(
        "POST",
        &format!("{http}/v1/memories"),
        Some(&json!({"records": [
            {"text": "the zebra migration runbook, step by step", "tenant": "acme"},
            {"text": "a memory without a tenant"},
        ]})),
    );
    assert_eq!(code, 200, "{stored}");
    assert_eq!(stored["ids"].as_array().unwrap().len(), 1, "{stored}");
    assert_eq!(stored["failed"][0]["index"], 1, "{stored}");
    let id = stored["ids"][0].as_str().unwrap().to_string();
    let (code, got) = curl("GET", &format!("{http}/v1/memories/{id}?tenant=acme"), None);
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["text"], "the zebra migration runbook, step by step");
    let (code, _) = curl(
        "GET",
        &format!("{http}/v1/memories/{id}?tenant=globex"),
        None,
    );
    assert_eq!(code, 404, "another tenant's memory is not found");
    let (_, found) = curl(
        "POST",
        &format!("{http}/v1/search"),
        Some(&json!({"query": "zebra migration runbook", "tenant": "acme", "mode": "lexical"})),
    );
    assert_eq!(found["hits"][0]["id"], id.as_str(), "{found}");

    // Forget hides it from now on, yet a read as of before still finds it
    // (the validity view); restore, here through the CLI, brings it back.
    let before = chrono::Utc::now().to_rfc3339();
    let zebra = |at: Option<&str>| {
        let mut body =
            json!({"query": "zebra migration runbook", "tenant": "acme", "mode": "lexical"});
        if let Some(at) = at {
            body["valid_at"] = json!(at);
        }
        let (_, found) = curl("POST", &format!("{http}/v1/search"), Some(&body));
        found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == id.as_str())
    };
    let (code, forgot) = curl(
        "POST",
        &format!("{http}/v1/memories/{id}/forget?tenant=acme"),
        None,
    );
    assert_eq!(code, 200, "{forgot}");
    assert!(!zebra(None), "forgotten: not found now");
    assert!(zebra(Some(&before)), "found as of before it was forgotten");
    let cli = |verb: &str| {
        trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
            .args([verb, &id, "--tenant", "acme", "--endpoint"])
            .arg(format!("http://{}", served.addr))
            .output()
            .unwrap()
    };
    let restored = cli("restore");
    assert!(restored.status.success(), "{restored:?}");
    assert!(String::from_utf8_lossy(&restored.stdout).contains(&format!("restored {id}")));
    assert!(zebra(None), "restored: found again");
    let got = cli("get");
    let record: Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(record["text"], "the zebra migration runbook, step by step");
    let (code, _) = curl(
        "POST",
        &format!("{http}/v1/memories/{id}/forget?tenant=globex"),
        None,
    );
    assert_eq!(code, 404, "another tenant cannot forget it");

    // A size budget: at most this many characters of text in the answer.
    let (_, budgeted) = curl(
        "POST",
        &format!("{http}/v1/search"),
        Some(&json!({"query": title, "tenant": "acme", "max_chars": 300})),
    );
    let texts: usize = budgeted["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["text"].as_str().unwrap().chars().count())
        .sum();
    assert!(texts <= 300 && texts > 0, "{texts} characters: {budgeted}");
    assert_eq!(
        budgeted["hits"][0]["id"], answer["hits"][0]["id"],
        "the same first hit"
    );

    let (code, deleted) = curl(
        "DELETE",
        &format!("{http}/v1/memories/{id}?tenant=acme"),
        None,
    );
    assert_eq!(
        (code, deleted["deleted"].as_u64()),
        (200, Some(1)),
        "{deleted}"
    );
    let (code, _) = curl("GET", &format!("{http}/v1/memories/{id}?tenant=acme"), None);
    assert_eq!(code, 404);

    // Errors: the gRPC code's meaning, as JSON that says what to fix.
    let (code, e) = curl(
        "POST",
        &format!("{http}/v1/search"),
        Some(&json!({"tenant": "acme"})),
    );
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (400, Some("INVALID_ARGUMENT")),
        "{e}"
    );
    assert!(
        e["error"]["message"].as_str().unwrap().contains("query"),
        "{e}"
    );
    let (code, e) = curl(
        "POST",
        &format!("{http}/v1/search"),
        Some(&json!({"query": "x", "tenant": ""})),
    );
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (400, Some("INVALID_ARGUMENT")),
        "{e}"
    );
    let (code, e) = curl("GET", &format!("{http}/nowhere"), None);
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (404, Some("NOT_FOUND")),
        "{e}"
    );
    let (code, _) = curl("GET", &format!("{http}/v1/search"), None);
    assert_eq!(code, 405);

    // Health, readiness and the document.
    assert_eq!(curl("GET", &format!("{http}/healthz"), None).0, 200);
    let (code, ready) = curl("GET", &format!("{http}/readyz"), None);
    assert_eq!(
        (code, ready["status"].as_str()),
        (200, Some("ready")),
        "{ready}"
    );
    let (code, doc) = curl("GET", &format!("{http}/v1/openapi.json"), None);
    assert_eq!(code, 200);
    assert!(doc["paths"]["/v1/search"]["post"].is_object());
}

/// A TCP relay to `upstream` on a free loopback port: the store's address
/// as the gateway knows it. Dropping it stops the address answering: the
/// listener and every relayed connection end.
struct Relay {
    addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            // Dropped with the task: every relayed connection is aborted.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                connections.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Self { addr, task }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The store is the test command's Qdrant (`TRINE_QDRANT_URL`), reached
/// through a relay; shutting the relay stops the store's address answering,
/// as a stopped server's does.
/// Threads over HTTP and gRPC, against a served mesh: written with their
/// place, read back with every hit, a search restricted to one thread of
/// the tenant (the same name in another tenant is another thread), and a
/// bad `seq` or `thread` refused naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_are_written_read_back_and_searched_one_at_a_time() {
    if !trine_testkit::curl_or_skip("threads_are_written_read_back_and_searched_one_at_a_time") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = trine_testkit::serve_sample(env!("CARGO_BIN_EXE_trine"), &data);
    let http = http_of(&served);
    let long = "t".repeat(257);
    let (code, stored) = curl(
        "POST",
        &format!("{http}/v1/memories"),
        Some(&json!({"records": [
            {"text": "Kate: are you going to the quokka support group tonight?", "tenant": "acme", "thread": "chat-9", "seq": 0},
            {"text": "Sam: yes, the quokka group meets at the library", "tenant": "acme", "thread": "chat-9", "seq": 1},
            {"text": "Kate: the quokka photos from the zoo", "tenant": "acme", "thread": "chat-10", "seq": 0},
            {"text": "Lee: the quokka group of another tenant", "tenant": "globex", "thread": "chat-9", "seq": 0},
            {"text": "a bad place", "tenant": "acme", "thread": "chat-9", "seq": -1},
            {"text": "a fractional place", "tenant": "acme", "thread": "chat-9", "seq": 1.5},
            {"text": "a long thread", "tenant": "acme", "thread": long},
        ]})),
    );
    assert_eq!(code, 200, "{stored}");
    assert_eq!(stored["ids"].as_array().unwrap().len(), 4, "{stored}");
    let failed = stored["failed"].as_array().unwrap();
    let why = |i: usize| failed[i]["message"].as_str().unwrap().to_string();
    assert_eq!(failed.len(), 3, "{stored}");
    assert!(
        why(0).contains("seq -1 is not a non-negative integer"),
        "{stored}"
    );
    assert!(why(1).contains("seq 1.5"), "{stored}");
    assert!(why(2).contains("thread is 257 bytes"), "{stored}");

    let search = |body: Value| {
        let (code, found) = curl("POST", &format!("{http}/v1/search"), Some(&body));
        assert_eq!(code, 200, "{found}");
        found["hits"].as_array().unwrap().clone()
    };
    let hits = search(json!({"query": "quokka group", "tenant": "acme", "thread": "chat-9"}));
    let places: Vec<(String, u64)> = hits
        .iter()
        .map(|h| {
            (
                h["thread"].as_str().unwrap().to_string(),
                h["seq"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(places.len(), 2, "the thread's two messages: {hits:?}");
    assert!(places.iter().all(|(t, _)| t == "chat-9"), "{places:?}");
    assert!(
        hits.iter()
            .all(|h| !h["text"].as_str().unwrap().starts_with("Lee")),
        "another tenant's thread of the same name is not this one"
    );
    let everywhere = search(json!({"query": "quokka", "tenant": "acme", "mode": "lexical"}));
    assert_eq!(everywhere.len(), 3, "no thread: every thread of the tenant");

    // gRPC: the record carries its thread and place.
    let mut client = MemoryClient::connect(format!("http://{}", served.addr))
        .await
        .unwrap();
    let first = stored["ids"][1].as_str().unwrap().to_string();
    let got = client
        .get(trine_api::v1::GetRequest {
            tenant: "acme".into(),
            ids: vec![first],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.records[0].thread.as_deref(), Some("chat-9"));
    assert_eq!(got.records[0].seq, Some(1));
    let refused = client
        .search(SearchRequest {
            query: "quokka".into(),
            filters: Some(Filters {
                tenant: "acme".into(),
                thread: "x".repeat(300),
                ..Filters::default()
            }),
            ..SearchRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("filters.thread"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_turns_unready_when_the_store_stops() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("/readyz with the store stopped", trine_testkit::NO_QDRANT);
        return;
    };
    let upstream = url.trim_start_matches("http://").to_string();
    let relay = Relay::start(upstream).await;
    let collection = format!("trine_readyz_{}", uuid::Uuid::new_v4().simple());
    let mut cmd = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"));
    cmd.args(["--qdrant", &format!("http://{}", relay.addr)])
        .args(["--collection", &collection, "--embedder", "hash"])
        .args(trine_testkit::SERVE_HTTP);
    let served = tokio::task::spawn_blocking(move || Served::start(cmd))
        .await
        .unwrap();
    let http = http_of(&served);
    let get = |path: &'static str| {
        let url = format!("{http}{path}");
        tokio::task::spawn_blocking(move || curl("GET", &url, None))
    };
    // Ready once lexical-svc has built the collection's document
    // frequencies; until then unready, saying it is starting.
    let (code, ready) = get("/readyz").await.unwrap();
    if code != 200 {
        assert_eq!(
            (code, &ready["starting"]),
            (503, &serde_json::json!(true)),
            "{ready}"
        );
    }
    // The gateway's gRPC health says what /readyz says (both ask the same
    // readiness): its Watch stream, NOT_SERVING until SERVING.
    let before = trine_testkit::until_health(
        served.addr.parse().unwrap(),
        "trine.v1.Memory",
        trine_testkit::ServingStatus::Serving,
        std::time::Duration::from_secs(60),
    )
    .await;
    assert!(
        before
            .iter()
            .all(|s| *s == trine_testkit::ServingStatus::NotServing),
        "{before:?}"
    );
    let (code, ready) = get("/readyz").await.unwrap();
    assert_eq!(
        (code, &ready["status"]),
        (200, &serde_json::json!("ready")),
        "{ready}"
    );
    drop(relay);
    let (code, unready) = get("/readyz").await.unwrap();
    assert_eq!(code, 503, "{unready}");
    assert_eq!(unready["status"], "unready");
    assert!(
        unready["reason"].as_str().unwrap().contains("store"),
        "{unready}"
    );
    // The process itself still answers.
    assert_eq!(get("/healthz").await.unwrap().0, 200);
}

#[test]
fn http_and_mcp_over_http_take_the_grpc_keys() {
    if !trine_testkit::curl_or_skip("http_and_mcp_over_http_take_the_grpc_keys") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let bin = env!("CARGO_BIN_EXE_trine");
    trine_testkit::ingest_sample(bin, &data);
    let out = trine_testkit::trine_cli(bin, &data)
        .args([
            "keys", "add", "--name", "t", "--tenant", "acme", "--scope", "read",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut cmd = trine_testkit::trine_cli(bin, &data);
    cmd.args(trine_testkit::SERVE_HTTP).args(["--auth", "on"]);
    let served = Served::start(cmd);
    let http = http_of(&served);
    let search = |tenant: &str| json!({"query": trine_testkit::TITLE, "tenant": tenant});
    let url = format!("{http}/v1/search");
    let (code, e) = curl_with("POST", &url, Some(&search("acme")), None);
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (401, Some("UNAUTHENTICATED")),
        "{e}"
    );
    let (code, e) = curl_with("POST", &url, Some(&search("acme")), Some("trine_bad_key"));
    assert_eq!(code, 401, "{e}");
    let (code, found) = curl_with("POST", &url, Some(&search("acme")), Some(&key));
    assert_eq!(code, 200, "{found}");
    assert!(!found["hits"].as_array().unwrap().is_empty());
    let (code, e) = curl_with("POST", &url, Some(&search("globex")), Some(&key));
    assert_eq!(
        (code, e["error"]["code"].as_str()),
        (403, Some("PERMISSION_DENIED")),
        "{e}"
    );
    // A read key writes nothing.
    let (code, e) = curl_with(
        "POST",
        &format!("{http}/v1/memories"),
        Some(&json!({"records": [{"text": "x", "tenant": "acme"}]})),
        Some(&key),
    );
    assert_eq!(code, 403, "{e}");
    // MCP over HTTP: the tool call is the same Memory call, refused alike.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": search("acme")}});
    let (_, refused) = curl_with("POST", &format!("{http}/mcp"), Some(&call), None);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let (_, answered) = curl_with("POST", &format!("{http}/mcp"), Some(&call), Some(&key));
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    // Health stays open for probes.
    assert_eq!(curl("GET", &format!("{http}/healthz"), None).0, 200);
}

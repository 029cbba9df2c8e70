//! Scores that agree with the order, on every surface: the sample's title
//! query (its meeting in the verbatim tier, whose fused score is below the
//! rest's) answered by `trine serve` over gRPC, HTTP/JSON, MCP over HTTP,
//! the explain page and the CLI — each answer sorted by score is the answer
//! as given, the tier hit first with a score above every other, and the
//! fused score still in the explain.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use serde_json::{Value, json};
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, SearchRequest};
use trine_testkit::TITLE;

/// The ids of an answer as given, and sorted by their scores (a stable
/// sort, best first): the same when no score is below one after it.
fn sorted_by_score(surface: &str, hits: &[(String, f64)], meeting: &str) {
    assert!(hits.len() >= 2, "{surface}: an answer of several hits");
    let mut sorted = hits.to_vec();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(
        sorted, hits,
        "{surface}: the order by score is the order given"
    );
    assert_eq!(hits[0].0, meeting, "{surface}: the meeting first");
    assert!(
        hits[0].1 > hits[1].1,
        "{surface}: the tier hit's score stands above the rest: {hits:?}"
    );
}

/// The answer's text of `curl` on `url`, answered 200.
fn curl(method: &str, url: &str, body: Option<&Value>) -> String {
    let (code, answer) = trine_testkit::curl(method, url, body, None);
    assert_eq!(code, 200, "{method} {url}: {answer}");
    answer
}

fn json_hits(answer: &Value) -> Vec<(String, f64)> {
    answer["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("hits in {answer}"))
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap().to_string(),
                h["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The sample's title query over gRPC: 8 hits of acme, at least `min_score`.
fn title(min_score: f64) -> SearchRequest {
    SearchRequest {
        query: TITLE.into(),
        filters: Some(Filters {
            tenant: "acme".into(),
            ..Filters::default()
        }),
        limit: 8,
        min_score,
        ..SearchRequest::default()
    }
}

/// (id, score) of a gRPC answer's hits, in its order.
fn grpc_hits(answer: &trine_api::v1::SearchResponse) -> Vec<(String, f64)> {
    answer
        .hits
        .iter()
        .map(|h| (h.id.clone(), h.score))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_surface_answers_the_title_with_scores_in_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = trine_testkit::serve_sample(env!("CARGO_BIN_EXE_trine"), &data);
    let http = format!("http://{}", served.ready["http"].as_str().unwrap());
    let endpoint = format!("http://{}", served.addr);

    // gRPC, and the fused score kept in the explain.
    let mut client = MemoryClient::connect(endpoint.clone()).await.unwrap();
    let answer = client.search(title(0.0)).await.unwrap().into_inner();
    let hits = grpc_hits(&answer);
    let first = answer.hits[0].explain.unwrap();
    assert!(first.tier, "the meeting is in the tier");
    let meeting = answer.hits[0].id.clone();
    sorted_by_score("gRPC", &hits, &meeting);
    assert!(
        first.fused < answer.hits[1].score,
        "this query's point: the tier hit's own fused score ({}) is below the next hit's ({})",
        first.fused,
        answer.hits[1].score
    );

    // min_score on the score shown: the first part of the same answer.
    let threshold = hits[2].1;
    let kept = hits.iter().filter(|h| h.1 >= threshold).count();
    let above = client.search(title(threshold)).await.unwrap().into_inner();
    assert_eq!(
        grpc_hits(&above),
        hits[..kept].to_vec(),
        "gRPC min_score {threshold}"
    );
    let nan = client.search(title(f64::NAN)).await.unwrap_err();
    assert_eq!(nan.code(), tonic::Code::InvalidArgument, "{nan:?}");
    assert!(nan.message().contains("min_score"), "{nan:?}");

    // The CLI against the gateway.
    let cli = |endpoint: Option<&str>| {
        let mut cmd = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), &data);
        cmd.args(["search", "--json", "--tenant", "acme", TITLE]);
        if let Some(endpoint) = endpoint {
            cmd.args(["--endpoint", endpoint]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    sorted_by_score("CLI over gRPC", &json_hits(&cli(Some(&endpoint))), &meeting);

    // HTTP/JSON, MCP over HTTP and the explain page, through curl.
    if trine_testkit::curl_or_skip("the HTTP/JSON, MCP and explain-page surfaces") {
        over_http(&http, &hits, threshold, &meeting);
    }

    // The CLI in process on the same data, once the server has stopped.
    drop(served);
    sorted_by_score("CLI in process", &json_hits(&cli(None)), &meeting);
}

/// The answers over HTTP: HTTP/JSON (with `min_score`), MCP and the explain
/// page; `hits` are gRPC's, `threshold` a score among them.
fn over_http(http: &str, hits: &[(String, f64)], threshold: f64, meeting: &str) {
    let kept = hits.iter().filter(|h| h.1 >= threshold).count();
    // HTTP/JSON.
    let body = json!({"query": TITLE, "tenant": "acme", "limit": 8});
    let answer: Value =
        serde_json::from_str(&curl("POST", &format!("{http}/v1/search"), Some(&body))).unwrap();
    sorted_by_score("HTTP/JSON", &json_hits(&answer), meeting);
    assert!(answer["hits"][0]["fused"].as_f64().is_some(), "{answer}");
    let body = json!({"query": TITLE, "tenant": "acme", "limit": 8, "min_score": threshold});
    let answer: Value =
        serde_json::from_str(&curl("POST", &format!("{http}/v1/search"), Some(&body))).unwrap();
    assert_eq!(json_hits(&answer), hits[..kept].to_vec(), "HTTP min_score");

    // MCP over HTTP.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": TITLE, "tenant": "acme"}}});
    let answer: Value =
        serde_json::from_str(&curl("POST", &format!("{http}/mcp"), Some(&call))).unwrap();
    sorted_by_score(
        "MCP",
        &json_hits(&answer["result"]["structuredContent"]),
        meeting,
    );

    // The explain page: each row's rank and score as printed.
    let page = curl(
        "GET",
        &format!("{http}/explain?query=Meeting+2026-11-11+09%3A58&tenant=acme"),
        None,
    );
    let table = page
        .split("<table class=\"hits\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .unwrap_or_else(|| panic!("the hits' table: {page}"));
    let scores: Vec<f64> = table
        .split("<tr><td>")
        .skip(1)
        .filter_map(|row| row.split("</td><td>").nth(1))
        .map(|cell| cell.split('<').next().unwrap().parse().unwrap())
        .collect();
    assert!(scores.len() >= 2, "rows on the explain page: {page}");
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "explain page: {scores:?}"
    );
    assert!(scores[0] > scores[1], "explain page: {scores:?}");
    assert!(page.contains("fused "), "the fused score shown");
}

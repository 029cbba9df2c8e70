//! Every lexical strategy end to end on the embedded store, the refusals
//! that name their fix, and `trine sparse-backfill` / `trine doctor`.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::sync::Arc;

use tonic::Code;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{Filters, Record, SearchRequest, UpsertRequest};
use trine_core::model::{CollectionSpec, EmbedderId, Memory, Point};
use trine_embed::{Embedder, HashEmbedder};
use trine_mesh::{Mesh, MeshConfig};
use trine_store::{EdgeStore, Fold, Store};
use uuid::Uuid;

use trine_testkit::{MEETING, TITLE};

fn memories() -> Vec<Record> {
    let filler = |i: u32| {
        format!(
            "Ticket {i} of sprint 11 in 2026, logged at 09:{:02}; the deploy of service {i} went fine.",
            10 + i
        )
    };
    trine_testkit::meeting_among("acme", filler, Some("recording/0b85ed4a/chunk-1"))
}

fn search(query: &str, strategy: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        filters: Some(Filters {
            tenant: "acme".into(),
            ..Filters::default()
        }),
        strategy: strategy.into(),
        ..SearchRequest::default()
    }
}

async fn mesh(store: Arc<dyn Store>) -> (Mesh, MemoryClient<tonic::transport::Channel>) {
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(64));
    let mut config = MeshConfig::default();
    config.lexical.cap = 8;
    config.semantic.cap = 8;
    let mesh = trine_testkit::mesh(store, embedder, config).await;
    let client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    (mesh, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_title_comes_first_under_every_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    every_strategy(store).await;
}

/// A collection in another tool's layout (its own keys, Unix-second
/// times), searched as it is under every strategy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_title_comes_first_under_every_strategy_in_another_layout() {
    let layout = trine_store::PayloadSchema {
        text: "body".into(),
        source: "origin".into(),
        tenant: "owner".into(),
        created_at: "ts".into(),
        valid_from: "from_ts".into(),
        valid_until: "until_ts".into(),
        time_format: trine_store::TimeFormat::UnixSeconds,
        ..trine_store::PayloadSchema::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = EdgeStore::open_with(dir.path(), "memories", layout).unwrap();
    every_strategy(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_title_comes_first_under_every_strategy_on_a_server() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped("strategies on a Qdrant server", trine_testkit::NO_QDRANT);
        return;
    };
    let collection = format!("trine_strategies_{}", uuid::Uuid::new_v4().simple());
    let store = trine_store::ServerStore::connect(&url, &collection)
        .await
        .expect("connect to the qdrant server");
    eprintln!("strategies on {url}, collection {collection}");
    every_strategy(Arc::new(store)).await;
}

/// The same search under each strategy, through the mesh over `store`.
async fn every_strategy(store: Arc<dyn Store>) {
    let (mesh, mut client) = mesh(store.clone()).await;
    client
        .upsert(UpsertRequest {
            records: memories(),
        })
        .await
        .unwrap();
    let engine = store.info().await.unwrap().unwrap().engine;

    for strategy in ["candidates", "bm25", "sparse", "gate", "auto"] {
        if strategy == "bm25" && !engine.text_scoring {
            // An older server (Qdrant 1.19): refused, naming what it needs.
            let e = client.search(search(TITLE, strategy)).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{}", e.message());
            assert!(e.message().contains("needs Qdrant 1.20"), "{}", e.message());
            assert!(!e.message().contains("delete"), "{}", e.message());
            continue;
        }
        let answer = client
            .search(search(TITLE, strategy))
            .await
            .unwrap()
            .into_inner();
        let expected = if strategy == "auto" {
            "candidates"
        } else {
            strategy
        };
        assert_eq!(answer.strategy, expected);
        assert!(
            !answer.degraded,
            "{strategy}: {:?}",
            answer.degraded_reasons
        );
        let first = &answer.hits[0];
        assert_eq!(first.id, MEETING, "{strategy}: {:#?}", answer.hits);
        assert!(
            first.matched_by.contains(&"verbatim".to_string()),
            "{strategy}: {:?}",
            first.matched_by
        );
    }
    let off = client
        .search(search(TITLE, "off"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(off.strategy, "off");
    assert!(
        off.hits.iter().all(|h| h.matched_by == ["semantic"]),
        "off has no lexical list"
    );

    // A query without terms has no lexical list under any strategy; one with
    // terms but no salient token would make an empty gate: an error, never
    // match-all.
    let answer = client
        .search(search("a an of", "gate"))
        .await
        .unwrap()
        .into_inner();
    assert!(
        answer.hits.iter().all(|h| h.matched_by == ["semantic"]),
        "no terms: no lexical list"
    );
    let e = client.search(search("go up", "gate")).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{}", e.message());
    assert!(e.message().contains("empty gate"), "{}", e.message());
    mesh.stop().await.unwrap();
}

/// Points written by a tool that does not encode sparse vectors.
async fn write_without_sparse(data: &Path, n: u32) {
    let store = EdgeStore::open(data, "memories").unwrap();
    let embedder = HashEmbedder::new(HashEmbedder::DEFAULT_DIM);
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: embedder.name().into(),
            dim: embedder.dim(),
        },
        fold: Fold::default(),
    };
    store.ensure_collection(&spec).await.unwrap();
    let points: Vec<Point> = (0..n)
        .map(|i| {
            let text = format!("memory {i} about the deploy of service {i}");
            Point {
                dense: embedder.embed_one(&text),
                sparse: None,
                memory: Memory::new(Uuid::from_u128(u128::from(i) + 1), "acme", text),
                tokens: None,
            }
        })
        .collect();
    store.upsert(points).await.unwrap();
}

fn trine(data: &Path, args: &[&str]) -> (bool, String, String) {
    let out = trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn doctor_strategy(data: &Path, strategy: &str) -> serde_json::Value {
    let (_, stdout, _) = trine(data, &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    report["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["strategy"] == strategy)
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_is_refused_until_backfilled_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    write_without_sparse(&data, 600).await;

    // Refused, naming the count missing and the command to run.
    let (ok, _, stderr) = trine(
        &data,
        &[
            "search",
            "--tenant",
            "acme",
            "--strategy",
            "sparse",
            "deploy service",
        ],
    );
    assert!(!ok);
    assert!(
        stderr.contains("600 of 600 points have no sparse encoding"),
        "{stderr}"
    );
    assert!(stderr.contains("trine sparse-backfill"), "{stderr}");
    let sparse = doctor_strategy(&data, "sparse");
    assert_eq!(sparse["ready"], false);
    assert!(
        sparse["missing"]
            .as_str()
            .unwrap()
            .contains("trine sparse-backfill")
    );
    assert_eq!(doctor_strategy(&data, "bm25")["ready"], true);
    // A question that names no strategy is answered all the same, by the
    // configured strategy, while the collection is not ready for the
    // question strategy.
    let question = "what was the deploy of service 7?";
    assert_eq!(answered_by(&data, &[question]), "candidates");

    // Interrupted half-way, then run again: every point encoded exactly once.
    let (ok, stdout, stderr) = trine(
        &data,
        &["sparse-backfill", "--batch", "64", "--max-points", "300"],
    );
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("encoded 300 point(s)") && stdout.contains("300 still without"),
        "{stdout}"
    );
    let (ok, stdout, stderr) = trine(&data, &["sparse-backfill", "--batch", "64"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("encoded 300 point(s)") && stdout.contains("0 still without"),
        "{stdout}"
    );
    let (ok, stdout, _) = trine(&data, &["sparse-backfill"]);
    assert!(ok);
    assert!(
        stdout.contains("nothing to do"),
        "a second run does nothing: {stdout}"
    );
    assert_eq!(doctor_strategy(&data, "sparse")["ready"], true);

    let (ok, stdout, stderr) = trine(
        &data,
        &[
            "search",
            "--tenant",
            "acme",
            "--strategy",
            "sparse",
            "--json",
            "memory 7 deploy",
        ],
    );
    assert!(ok, "{stderr}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["strategy"], "sparse");
    assert_eq!(answer["hits"][0]["id"], Uuid::from_u128(8).to_string());

    // Once it is, a question that names no strategy and whose dense list is
    // flat (the hash embedder's is, here) is fused from the sparse list;
    // other searches, and questions naming a strategy, are not.
    assert_eq!(answered_by(&data, &[question]), "sparse");
    assert_eq!(answered_by(&data, &["deploy of service 7"]), "candidates");
    assert_eq!(
        answered_by(&data, &["--strategy", "candidates", question]),
        "candidates"
    );
    assert_eq!(
        answered_by(&data, &["--mode", "lexical", question]),
        "candidates"
    );
}

/// The strategy that answered `trine search` with these arguments.
fn answered_by(data: &Path, args: &[&str]) -> String {
    let mut all = vec!["search", "--tenant", "acme", "--json"];
    all.extend_from_slice(args);
    let (ok, stdout, stderr) = trine(data, &all);
    assert!(ok, "{args:?}: {stderr}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    answer["strategy"].as_str().unwrap().to_string()
}

fn search_json(data: &Path, mode: &str, strategy: &str, query: &str) -> serde_json::Value {
    let (ok, stdout, stderr) = trine(
        data,
        &[
            "search",
            "--tenant",
            "acme",
            "--mode",
            mode,
            "--strategy",
            strategy,
            "--json",
            query,
        ],
    );
    assert!(ok, "{strategy} {query:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

fn hit_ids(answer: &serde_json::Value) -> Vec<String> {
    answer["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

/// The sample memories in a new collection at `data`, written through the
/// gateway's writer after its text index is rebuilt with `fold` (when
/// given); the index as the collection was created with it.
async fn sample_collection(data: &Path, fold: Option<Fold>) -> trine_store::TextIndexInfo {
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(data, "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    let writer = trine_gateway::Writer::new(store.clone(), embedder);
    writer.prepare().await.unwrap();
    let created = store.info().await.unwrap().unwrap().text_index.unwrap();
    if let Some(fold) = fold {
        assert!(store.create_text_index(fold).await.unwrap());
    }
    let memories = memories()
        .into_iter()
        .map(|r| Memory {
            source: r.source,
            ..Memory::new(r.id.parse().unwrap(), r.tenant, r.text)
        })
        .collect();
    writer.write(memories).await.unwrap();
    created
}

/// A collection that does not stem does not match a query in other
/// inflections; `trine text-index --stemmer en` upgrades it — index
/// rebuilt, every sparse vector re-encoded — and then every lexical
/// strategy matches them while the title keeps its verbatim tier;
/// `--stemmer none` undoes it, and a writer configured with a language
/// creates a stemming collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_stems_once_upgraded_and_stops_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let created = sample_collection(&data, None).await;
    assert_eq!(created.stemmer, None, "trine's default stems not");
    // The tickets say `Ticket`, `logged`, `deploy`.
    let inflected = "tickets logging deployed";
    let finds_nothing = |data: &Path| {
        for strategy in ["candidates", "bm25", "sparse"] {
            let answer = search_json(data, "lexical", strategy, inflected);
            assert!(
                hit_ids(&answer).is_empty(),
                "{strategy}: unstemmed: {answer}"
            );
        }
    };
    finds_nothing(&data);

    let (ok, stdout, stderr) = trine(&data, &["text-index", "--stemmer", "en"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("rebuilt the full-text index")
            && stdout.contains("english stemming")
            && stdout.contains("re-encoded the sparse vectors of 31 of 31 point(s);"),
        "every point re-encoded: {stdout}"
    );
    let (_, report, _) = trine(&data, &["doctor"]);
    assert!(report.contains("english"), "{report}");
    for strategy in ["candidates", "bm25", "sparse"] {
        let answer = search_json(&data, "lexical", strategy, inflected);
        let hits = hit_ids(&answer);
        assert!(
            !hits.is_empty() && !hits.contains(&MEETING.to_string()),
            "{strategy}: stemmed, the tickets answer: {answer}"
        );
        // The title keeps its verbatim tier.
        let answer = search_json(&data, "hybrid", strategy, TITLE);
        let first = &answer["hits"][0];
        assert_eq!(first["id"], MEETING, "{strategy}: {answer}");
        assert!(
            first["matched_by"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("verbatim")),
            "{strategy}: {answer}"
        );
    }

    let (ok, stdout, stderr) = trine(&data, &["text-index", "--stemmer", "none"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("rebuilt the full-text index"), "{stdout}");
    finds_nothing(&data);

    // A collection made with a stemmer configured stems from the start.
    let fresh = dir.path().join("fresh");
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(&fresh, "memories").unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(HashEmbedder::DEFAULT_DIM));
    trine_gateway::Writer::new(store.clone(), embedder)
        .with_stemmer(Some(trine_core::Language::French))
        .prepare()
        .await
        .unwrap();
    let info = store.info().await.unwrap().unwrap();
    assert_eq!(
        info.text_index.unwrap().stemmer,
        Some(trine_core::Language::French)
    );
}

/// A collection made before folding (its text index only lowercases) does
/// not match a query typed without diacritics; `trine text-index
/// --ascii-folding` upgrades it — index rebuilt, sparse vectors of the
/// non-ASCII texts re-encoded — and then every lexical strategy and the
/// verbatim check match across diacritics. Never silently: doctor advises it,
/// and a new collection folds from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_collection_folds_diacritics_once_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // As a collection made before folding was.
    let created = sample_collection(&data, Some(Fold::CASE)).await;
    assert!(created.ascii_folding, "a new collection folds");
    let typed = "sedinta de astazi";
    for strategy in ["candidates", "bm25", "sparse"] {
        let answer = search_json(&data, "lexical", strategy, "sedinta astazi");
        assert!(
            !hit_ids(&answer).contains(&MEETING.to_string()),
            "{strategy}: unfolded, `sedinta astazi` finds nothing: {answer}"
        );
    }
    let (_, report, _) = trine(&data, &["doctor"]);
    assert!(
        report.contains("advice") && report.contains("trine text-index --ascii-folding"),
        "{report}"
    );

    let (ok, stdout, stderr) = trine(&data, &["text-index", "--ascii-folding"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("rebuilt the full-text index"), "{stdout}");
    assert!(
        stdout.contains("re-encoded the sparse vectors of 1 of 31 point(s)"),
        "only the one non-ASCII text: {stdout}"
    );
    let (_, report, _) = trine(&data, &["doctor"]);
    assert!(!report.contains("advice"), "{report}");

    for query in [typed, "ședință de astăzi", "ȘEDINȚA DE ASTĂZI"] {
        for strategy in ["candidates", "bm25", "sparse"] {
            let answer = search_json(&data, "lexical", strategy, "sedinta astazi");
            assert_eq!(answer["hits"][0]["id"], MEETING, "{strategy}: {answer}");
            // Hybrid: the one point holding the query verbatim forms the tier.
            let answer = search_json(&data, "hybrid", strategy, query);
            let first = &answer["hits"][0];
            assert_eq!(first["id"], MEETING, "{strategy} {query:?}: {answer}");
            assert!(
                first["matched_by"]
                    .as_array()
                    .unwrap()
                    .contains(&serde_json::json!("verbatim")),
                "{strategy} {query:?}: the folded text holds the folded query: {answer}"
            );
        }
    }

    let (ok, stdout, stderr) = trine(&data, &["text-index", "--ascii-folding"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("kept the full-text index")
            && stdout.contains("re-encoded the sparse vectors of 1 of 31"),
        "a second run rebuilds nothing and re-encodes again: {stdout}"
    );
}

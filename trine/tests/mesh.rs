//! ADR 0172's validation over the real mesh: the four services on loopback
//! ports, real gRPC, the embedded store and the MiniLM embedder.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;

use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{self, Filters, Record, SearchRequest};
use trine_core::model::Filter;
use trine_embed::EmbedderKind;
use trine_mesh::{Mesh, MeshConfig};
use trine_store::{EdgeStore, Store};

use trine_testkit::{MEETING, TITLE};
const MEETING_ELSEWHERE: &str = "00000000-0000-4000-8000-000000000000";
const POLICY: &str = "00000000-0000-4000-8000-0000000000aa";

/// A long Romanian transcript whose first line is its title.
fn transcript() -> String {
    let body = "Bună ziua tuturor, începem ședința de astăzi. Andrei prezintă stadiul \
        migrării bazei de date și spune că mai sunt două tabele de mutat. Maria întreabă \
        dacă echipa de suport a fost anunțată despre fereastra de mentenanță. Discutăm \
        despre bugetul pentru trimestrul următor și despre angajarea unui nou inginer. \
        Ioana propune să amânăm lansarea aplicației mobile cu o săptămână, pentru că \
        testele de regresie nu sunt gata. Toată lumea este de acord. Mulțumesc, ne vedem \
        săptămâna viitoare la aceeași oră.";
    format!("{TITLE}\n{body} {body} {body}")
}

/// Thirty memories holding the title's common terms, none of them the title.
fn common(i: u32) -> String {
    let texts = [
        "Deploy of the billing service finished at 09:12 on 2026-10-03 without errors.",
        "Invoice batch 58 was sent to the payments provider; retries are scheduled for 11 UTC.",
        "The on-call rotation for 2026 is published; swap requests go to the ops channel.",
        "Disk usage on the database host reached 58 percent after the nightly backup.",
        "Release train 11 ships the new onboarding flow and the pricing page changes.",
        "Customer call moved to 09:30; they want a demo of the export feature first.",
    ];
    let text = texts[(i as usize) % texts.len()];
    format!(
        "{text} Ticket {i} of sprint 11 in 2026, logged at 09:{:02}.",
        10 + i
    )
}

fn record(id: &str, text: String, tenant: &str, source: &str) -> Record {
    Record {
        id: id.to_string(),
        text,
        tenant: tenant.to_string(),
        source: Some(source.to_string()),
        project: Some("meetings".to_string()),
        ..Record::default()
    }
}

fn search(query: &str, tenant: &str) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        filters: Some(Filters {
            tenant: tenant.to_string(),
            ..Filters::default()
        }),
        limit: 8,
        ..SearchRequest::default()
    }
}

/// `n` of acme's notes (`common(i)`, ids `00000000-0000-4000-8000-<i>`).
fn fillers(n: u32) -> Vec<Record> {
    (1..=n)
        .map(|i| {
            let id = format!("00000000-0000-4000-8000-{i:012}");
            record(&id, common(i), "acme", &format!("notes/{i}.md"))
        })
        .collect()
}

async fn gateway_client(mesh: &Mesh) -> MemoryClient<tonic::transport::Channel> {
    MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    mesh: Mesh,
    client: MemoryClient<tonic::transport::Channel>,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder = trine_embed::load(EmbedderKind::MiniLm, &trine_testkit::models_dir())
        .expect("the MiniLM model (run scripts/fetch-model.sh)");
    let mut config = MeshConfig::default();
    config.lexical.cap = 8;
    config.semantic.cap = 8;
    let mesh = trine_testkit::mesh(store.clone(), embedder, config).await;
    let mut client = gateway_client(&mesh).await;

    let mut records = fillers(30);
    records.push(record(
        MEETING,
        transcript(),
        "acme",
        "recording/0b85ed4a/chunk-1",
    ));
    records.push(record(
        MEETING_ELSEWHERE,
        transcript(),
        "globex",
        "recording/0b85ed4a/chunk-1",
    ));
    let policy = "How the billing retry policy works, kept in markdown (md) next to the code.";
    records.push(record(
        POLICY,
        policy.to_string(),
        "acme",
        "docs/billing/retry_policy.md",
    ));
    trine_testkit::upsert_all(&mut client, records).await;
    Fixture {
        _dir: dir,
        store,
        mesh,
        client,
    }
}

/// Every count made afresh (docs/design.md §5: the count cache off).
fn no_cache(store: Arc<dyn Store>) -> trine_lexical::Counter {
    trine_lexical::Counter::new(store, trine_lexical::CountCacheConfig::OFF)
}

fn lists(hit: &v1::Hit) -> Vec<&str> {
    hit.matched_by.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adr_0172_validation() {
    let mut f = fixture().await;
    let terms = trine_core::terms(TITLE, trine_core::Fold::ASCII);

    // The old order: the first `cap` points holding any term, in point-id order.
    let old = f
        .store
        .scroll(
            &Filter {
                any_terms: Some(terms.clone()),
                ..Filter::tenant("acme")
            },
            8,
            None,
        )
        .await
        .unwrap();
    assert_eq!(old.memories.len(), 8);
    assert!(
        old.memories.iter().all(|m| m.id.to_string() != MEETING),
        "with the old order the meeting is not read"
    );

    // The new order reads it, and under RRF (k = 60) the title query ranks it
    // first with the ADR's 2/61 at equal weights (lexical #1 + verbatim #1)...
    let rrf = |verbatim: f64| SearchRequest {
        weights: Some(v1::ListWeights {
            lexical: 1.0,
            semantic: 1.0,
            verbatim,
        }),
        fusion: Some(v1::FusionOptions {
            method: "rrf".into(),
            rrf_k: 60.0,
            tier: Some(false),
            ..v1::FusionOptions::default()
        }),
        ..search(TITLE, "acme")
    };
    let answer = f.client.search(rrf(1.0)).await.unwrap().into_inner();
    assert_eq!(answer.hits[0].id, MEETING, "hits: {:#?}", answer.hits);
    assert!((answer.hits[0].score - 2.0 / 61.0).abs() < 1e-9);
    // ... and with 1/61 + 2/61 at a verbatim weight of 2 (the earlier default).
    let answer = f.client.search(rrf(2.0)).await.unwrap().into_inner();
    assert!((answer.hits[0].score - 3.0 / 61.0).abs() < 1e-9);
    // By default the verbatim match forms the tier: first, whatever the scores.
    let answer = f
        .client
        .search(search(TITLE, "acme"))
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.degraded, "{:?}", answer.degraded_reasons);
    let first = &answer.hits[0];
    assert_eq!(first.id, MEETING, "hits: {:#?}", answer.hits);
    assert!(first.explain.unwrap().tier);
    assert!(answer.hits[1..].iter().all(|h| !h.explain.unwrap().tier));
    assert_eq!(lists(first), ["lexical", "verbatim"]);
    let explain = first.explain.unwrap();
    assert_eq!(explain.lexical.unwrap().rank, 1);
    assert_eq!(explain.verbatim.unwrap().rank, 1);
    assert!(
        explain.semantic.is_none(),
        "the meeting is semantically unrelated"
    );
    let stages: Vec<&str> = answer.timings.iter().map(|t| t.stage.as_str()).collect();
    for stage in [
        "lexical.counts",
        "lexical.read",
        "lexical.score",
        "semantic.embed",
        "semantic.query",
        "fusion",
        "payload",
        "gateway",
    ] {
        assert!(stages.contains(&stage), "{stage} in {stages:?}");
    }

    // The other modes keep their meaning.
    let mut semantic = search(TITLE, "acme");
    semantic.mode = v1::Mode::Semantic as i32;
    let answer = f.client.search(semantic).await.unwrap().into_inner();
    assert!(answer.hits.iter().all(|h| lists(h) == ["semantic"]));
    assert!(answer.hits.iter().all(|h| h.id != MEETING));
    let mut lexical = search(TITLE, "acme");
    lexical.mode = v1::Mode::Lexical as i32;
    let answer = f.client.search(lexical).await.unwrap().into_inner();
    assert_eq!(answer.hits[0].id, MEETING);
    assert_eq!(lists(&answer.hits[0]), ["lexical"]);

    // Without the verbatim evidence the title scores as lexical #1 alone:
    // 1/61 under RRF, no tier.
    let plain = SearchRequest {
        no_verbatim: true,
        ..rrf(1.0)
    };
    let answer = f.client.search(plain).await.unwrap().into_inner();
    let hit = answer.hits.iter().find(|h| h.id == MEETING).unwrap();
    assert_eq!(lists(hit), ["lexical"]);
    assert!(!hit.explain.unwrap().tier);
    assert!((hit.score - 1.0 / 61.0).abs() < 1e-9, "score {}", hit.score);

    f.mesh.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbatim_rules_and_the_tenant_boundary() {
    let mut f = fixture().await;

    // A one-term query has no third list.
    let answer = f
        .client
        .search(search("ședința", "acme"))
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.degraded, "{:?}", answer.degraded_reasons);
    let meeting = answer
        .hits
        .iter()
        .find(|h| h.id == MEETING)
        .expect("meeting found");
    assert!(
        !lists(meeting).contains(&"verbatim"),
        "{:?}",
        meeting.matched_by
    );

    // Different case and extra spaces still match verbatim.
    let answer = f
        .client
        .search(search("  MEETING   2026-11-11 \t 09:58 ", "acme"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.hits[0].id, MEETING);
    assert!(lists(&answer.hits[0]).contains(&"verbatim"));

    // A match in the source counts: the candidate is read by the terms in its
    // text, the query appears verbatim only in its source.
    let answer = f
        .client
        .search(search("billing/retry_policy.md", "acme"))
        .await
        .unwrap()
        .into_inner();
    let policy = answer
        .hits
        .iter()
        .find(|h| h.id == POLICY)
        .expect("policy note found");
    assert!(
        lists(policy).contains(&"verbatim"),
        "{:?}",
        policy.matched_by
    );
    assert_eq!(answer.hits[0].id, POLICY);

    // The copy in another tenant is never returned, counted or used for statistics.
    for query in [TITLE, "ședința", "bună ziua tuturor"] {
        let answer = f
            .client
            .search(search(query, "acme"))
            .await
            .unwrap()
            .into_inner();
        assert!(
            answer.hits.iter().all(|h| h.id != MEETING_ELSEWHERE),
            "{query}"
        );
    }
    let found = trine_lexical::candidates(
        f.store.as_ref(),
        &no_cache(f.store.clone()),
        TITLE,
        trine_lexical::Texts {
            fold: trine_core::Fold::ASCII,
            source_phrases: true,
            common: Some(trine_core::Language::English),
        },
        &Filter::tenant("acme"),
        8,
    )
    .await
    .unwrap();
    assert_eq!(found.total, 32, "N counts the tenant's points only");
    assert_eq!(
        found.term_counts[0],
        ("meeting".to_string(), 1),
        "df stays within the tenant"
    );
    let globex = f
        .client
        .search(search(TITLE, "globex"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(globex.hits.len(), 1);
    assert_eq!(globex.hits[0].id, MEETING_ELSEWHERE);

    f.mesh.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_says_what_to_fix() {
    let mut f = fixture().await;
    let table: Vec<(SearchRequest, &str)> = vec![
        (search("   ", "acme"), "query is empty"),
        (search(&"x".repeat(5000), "acme"), "bytes"),
        (search(TITLE, ""), "tenant"),
        (
            SearchRequest {
                limit: 1000,
                ..search(TITLE, "acme")
            },
            "limit",
        ),
        (
            SearchRequest {
                mode: 42,
                ..search(TITLE, "acme")
            },
            "mode",
        ),
        (
            SearchRequest {
                strategy: "magic".into(),
                ..search(TITLE, "acme")
            },
            "strategy",
        ),
        (
            SearchRequest {
                weights: Some(v1::ListWeights {
                    semantic: -1.0,
                    ..v1::ListWeights::default()
                }),
                ..search(TITLE, "acme")
            },
            "weight of the semantic list is -1",
        ),
        (
            SearchRequest {
                fusion: Some(v1::FusionOptions {
                    method: "borda".into(),
                    ..v1::FusionOptions::default()
                }),
                ..search(TITLE, "acme")
            },
            "unknown fusion method \"borda\"",
        ),
        (
            SearchRequest {
                fusion: Some(v1::FusionOptions {
                    rrf_k: -5.0,
                    ..v1::FusionOptions::default()
                }),
                ..search(TITLE, "acme")
            },
            "fusion.rrf_k is -5",
        ),
    ];
    for (request, want) in table {
        let e = f.client.search(request).await.unwrap_err();
        assert_eq!(
            e.code(),
            tonic::Code::InvalidArgument,
            "{want}: {}",
            e.message()
        );
        assert!(e.message().contains(want), "{want}: {}", e.message());
    }
    f.mesh.stop().await.unwrap();
}

/// The collection's fold everywhere a query is split. Under each fold the
/// lexical channel reports the terms `trine_core::terms` makes under it, the
/// index finds what those terms name, and the verbatim tier counts the same
/// terms: "Café cafe" is one term folded to ASCII (a single plain word, no
/// tier) and two under case folding alone (a rare phrase: the tier);
/// "running runs" one term stemmed, two not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collections_fold_splits_every_query() {
    use trine_api::v1::CandidatesRequest;
    use trine_api::v1::lexical_client::LexicalClient;
    use trine_core::Fold;
    use trine_store::{CollectionSpec, EmbedderId};

    const HOLDER: &str = "00000000-0000-4000-8000-0000000000a1";
    const ACCENTED: &str = "00000000-0000-4000-8000-0000000000a2";
    let english = Fold::ASCII.with_stemmer(Some(trine_core::Language::English));
    for (fold, query, terms, tier) in [
        (Fold::CASE, "Café cafe", 2, true),
        (Fold::ASCII, "Café cafe", 1, false),
        (Fold::ASCII, "running runs", 2, true),
        (english, "running runs", 1, false),
    ] {
        let case = format!("{fold:?}, {query:?}");
        assert_eq!(trine_core::terms(query, fold).len(), terms, "{case}");
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
        let embedder: Arc<dyn trine_embed::Embedder> = Arc::new(trine_embed::HashEmbedder::new(64));
        let spec = CollectionSpec {
            embedder: EmbedderId {
                name: embedder.name().to_string(),
                dim: embedder.dim(),
            },
            fold,
        };
        store.ensure_collection(&spec).await.unwrap();
        let mesh = trine_testkit::mesh(store.clone(), embedder, MeshConfig::default()).await;
        let mut client = gateway_client(&mesh).await;
        let mut records = fillers(12);
        records.push(record(
            HOLDER,
            "Café cafe corner: running runs daily".into(),
            "acme",
            "notes/holder.md",
        ));
        records.push(record(
            ACCENTED,
            "Only the Café, nothing else".into(),
            "acme",
            "notes/accented.md",
        ));
        trine_testkit::upsert_all(&mut client, records).await;

        // The lexical channel splits the query under the collection's fold.
        let mut lexical = LexicalClient::connect(format!("http://{}", mesh.lexical))
            .await
            .unwrap();
        let answer = lexical
            .candidates(CandidatesRequest {
                query: query.to_string(),
                filters: search(query, "acme").filters,
                cap: 0,
                strategy: String::new(),
                question: false,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(answer.terms as usize, terms, "{case}: the channel's terms");

        // The index folds as the terms do: "CAFE" names the accented memory
        // only where accents fold.
        let plain = client
            .search(SearchRequest {
                mode: v1::Mode::Lexical as i32,
                ..search("CAFE", "acme")
            })
            .await
            .unwrap()
            .into_inner();
        let folds_accents = fold != Fold::CASE;
        assert_eq!(
            plain.hits.iter().any(|h| h.id == ACCENTED),
            folds_accents,
            "{case}: the index under the fold"
        );

        // The tier counts the channel's terms.
        let answer = client
            .search(search(query, "acme"))
            .await
            .unwrap()
            .into_inner();
        let first = &answer.hits[0];
        assert_eq!(first.id, HOLDER, "{case}");
        assert_eq!(
            first.explain.as_ref().map(|e| e.tier),
            Some(tier),
            "{case}: the tier"
        );
        mesh.stop().await.unwrap();
    }
}

/// Stopping drains the calls in flight for at most the grace period, then
/// cuts off what is still running and says so — here a search whose store
/// stopped answering: the mesh stops within the grace, not the channel's
/// 10 s deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_cuts_off_a_call_still_running_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let edge: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let gated = trine_testkit::gated(edge);
    gated.hook().open();
    let store: Arc<dyn Store> = gated.clone();
    let grace = std::time::Duration::from_millis(500);
    let config = MeshConfig {
        grace: Some(grace),
        ..MeshConfig::default()
    };
    let embedder = Arc::new(trine_embed::HashEmbedder::new(64));
    let mesh = trine_testkit::mesh(store, embedder, config).await;
    let mut client = gateway_client(&mesh).await;
    trine_testkit::upsert_all(&mut client, fillers(3)).await;

    gated.hook().stall();
    let search = tokio::spawn(async move { client.search(search(TITLE, "acme")).await });
    // In flight: semantic-svc's query waits on the store (the gate says so
    // as the query begins to wait).
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        gated.hook().until_waiting(1),
    )
    .await
    .expect("the search reached the store");
    let stopping = std::time::Instant::now();
    let stopped = mesh.stop().await;
    let took = stopping.elapsed();
    let said = stopped.expect_err("a call was cut off");
    assert!(matches!(said, trine_mesh::MeshError::Stop(_)), "{said}");
    assert!(said.to_string().contains("cut off"), "{said}");
    assert!(
        took < grace + std::time::Duration::from_secs(3),
        "stopped in {took:?}, the grace {grace:?}"
    );
    gated.hook().release();
    let _ = search.await;
}

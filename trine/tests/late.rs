//! Late interaction over the real mesh (docs/search.md, "Late interaction"):
//! the four services on loopback ports, real gRPC, the embedded store and
//! the MiniLM embedder. The judged answer is the fused answer reordered by
//! `trine_core::late::rerank` with MaxSim scores an independent computation
//! gives from the same model's tokens.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::HashMap;
use std::sync::Arc;

use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{self, Filters, Record, SearchRequest};
use trine_core::fusion::Fused;
use trine_core::{Language, late};
use trine_embed::{EmbedderKind, Side};
use trine_mesh::MeshConfig;
use trine_store::{EdgeStore, Store};
use uuid::Uuid;

/// A conversation's messages: several share the question's words, one
/// holds its answer in other words.
const MESSAGES: [&str; 10] = [
    "Kate: I went to the support group again on Tuesday evening.",
    "Mark: How was the support group this time?",
    "Kate: The group talked about sleep and stress, it helped a lot.",
    "Mark: I joined a pottery class downtown, we glaze mugs on Fridays.",
    "Kate: My sister is visiting from Lisbon next month.",
    "Mark: The support group meets in the library basement, right?",
    "Kate: Yes, every Tuesday at seven, right after my shift ends.",
    "Mark: I should bring my mugs to show you after the class.",
    "Kate: Work has been calmer since the new manager started.",
    "Mark: Lisbon in spring sounds lovely, say hello to her.",
];

fn id(i: usize) -> String {
    format!("00000000-0000-4000-8000-{:012}", i + 1)
}

/// acme's messages, one record each.
fn messages() -> Vec<Record> {
    MESSAGES
        .iter()
        .enumerate()
        .map(|(i, text)| Record {
            id: id(i),
            text: text.to_string(),
            tenant: "acme".to_string(),
            ..Record::default()
        })
        .collect()
}

fn search(query: &str, late_weight: Option<f64>) -> SearchRequest {
    SearchRequest {
        query: query.to_string(),
        filters: Some(Filters {
            tenant: "acme".to_string(),
            ..Filters::default()
        }),
        limit: 10,
        fusion: late_weight.map(|w| v1::FusionOptions {
            late_weight: Some(w),
            ..v1::FusionOptions::default()
        }),
        ..SearchRequest::default()
    }
}

/// The answer's hits as fused hits again (their explains), in order.
fn fused(response: &v1::SearchResponse) -> Vec<Fused> {
    response
        .hits
        .iter()
        .map(|h| {
            trine_api::fused_from_wire(&v1::FusedHit {
                id: h.id.clone(),
                score: h.score,
                explain: h.explain,
                matched_by: h.matched_by.clone(),
            })
            .unwrap()
        })
        .collect()
}

fn ids(hits: &[Fused]) -> Vec<Uuid> {
    hits.iter().map(|h| h.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_judged_again_by_maxsim_and_a_title_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder = trine_embed::load(EmbedderKind::MiniLm, &trine_testkit::models_dir())
        .expect("the MiniLM model (run scripts/fetch-model.sh)");
    let mesh = trine_testkit::mesh(store.clone(), embedder.clone(), MeshConfig::default()).await;
    let mut client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    let mut records = messages();
    // Another tenant's copy of a message: never judged, never answered.
    records.push(Record {
        id: "00000000-0000-4000-8000-0000000000ff".to_string(),
        text: MESSAGES[6].to_string(),
        tenant: "globex".to_string(),
        ..Record::default()
    });
    trine_testkit::upsert_all(&mut client, records).await;
    let info = store.info().await.unwrap().unwrap();
    assert!(info.tokens, "a new collection keeps tokens");

    let question = "When does the support group meet?";
    let judged = client
        .search(search(question, None))
        .await
        .unwrap()
        .into_inner();
    assert!(!judged.degraded, "{:?}", judged.degraded_reasons);
    assert!(judged.timings.iter().any(|t| t.stage == "late"), "timed");
    let judged = fused(&judged);
    assert_eq!(judged.len(), MESSAGES.len(), "every message of the tenant");
    assert!(
        judged.iter().all(|h| h.late.is_some() && !h.tier),
        "{judged:?}"
    );
    let mut ranks: Vec<u32> = judged.iter().map(|h| h.late.unwrap().rank).collect();
    ranks.sort_unstable();
    assert_eq!(ranks, (1..=10).collect::<Vec<u32>>(), "one late rank each");

    // The same search unjudged, then judged here with MaxSim computed from
    // the model's own tokens: the answer the gateway gave.
    let plain = client
        .search(search(question, Some(0.0)))
        .await
        .unwrap()
        .into_inner();
    let mut plain = fused(&plain);
    assert_eq!(plain.len(), MESSAGES.len());
    assert!(plain.iter().all(|h| h.late.is_none()), "late_weight 0: off");
    let query = embedder
        .embed_tokens(
            &[question.to_string()],
            Side::Query(Some(Language::English)),
        )
        .await
        .unwrap()
        .remove(0)
        .1;
    let texts: Vec<String> = MESSAGES.iter().map(|t| t.to_string()).collect();
    let memories = embedder
        .embed_tokens(&texts, Side::Memory(Some(Language::English)))
        .await
        .unwrap();
    let maxsim: HashMap<Uuid, f64> = memories
        .iter()
        .enumerate()
        .map(|(i, (_, tokens))| {
            (
                Uuid::parse_str(&id(i)).unwrap(),
                late::max_sim(&query, tokens),
            )
        })
        .collect();
    for hit in &judged {
        let (got, want) = (hit.late.unwrap().score, maxsim[&hit.id]);
        assert!(
            (got - want).abs() < 0.02 * want.abs().max(1.0),
            "{}: {got} {want}",
            hit.id
        );
    }
    // Reordered by the store's scores (half precision: a near tie of the
    // ones above could fall either way).
    let stored: HashMap<Uuid, f64> = judged
        .iter()
        .map(|h| (h.id, h.late.unwrap().score))
        .collect();
    late::rerank(&mut plain, &stored, 2.0, 60.0, late::DEPTH);
    assert_eq!(ids(&judged), ids(&plain), "the fused answer, judged again");
    let shown = |hits: &[Fused]| hits.iter().map(|h| h.score).collect::<Vec<f64>>();
    assert_eq!(shown(&judged), shown(&plain), "each place keeps its score");

    // A title-shaped query is not judged.
    let title = client
        .search(search("Meeting 2026-11-11 09:58", None))
        .await
        .unwrap()
        .into_inner();
    assert!(fused(&title).iter().all(|h| h.late.is_none()));
    assert!(!title.timings.iter().any(|t| t.stage == "late"));
}

/// A store that refuses late interaction's query, and answers the rest.
struct NoLate;

#[tonic::async_trait]
impl trine_store::Around for NoLate {
    async fn around<'a, T: Send + 'a>(
        &'a self,
        call: trine_store::Call,
        run: &'a trine_store::Run<'a, T>,
    ) -> trine_store::Result<T> {
        if call.label == "query_late" {
            return Err(trine_store::StoreError::Backend("told to fail".into()));
        }
        run().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_fails_the_late_query_leaves_the_fused_order_degraded() {
    let dir = tempfile::tempdir().unwrap();
    let edge: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let store: Arc<dyn Store> = Arc::new(trine_store::Wrapped::with(edge, NoLate));
    let embedder = trine_embed::load(EmbedderKind::Hash, &trine_testkit::models_dir()).unwrap();
    let mesh = trine_testkit::mesh(store, embedder, MeshConfig::default()).await;
    let mut client = MemoryClient::connect(format!("http://{}", mesh.gateway))
        .await
        .unwrap();
    let records = messages();
    trine_testkit::upsert_all(&mut client, records).await;
    let question = "When does the support group meet?";
    let failed = client
        .search(search(question, None))
        .await
        .unwrap()
        .into_inner();
    assert!(failed.degraded, "the answer says it is not what was asked");
    assert!(
        failed
            .degraded_reasons
            .iter()
            .any(|r| r.contains("late interaction") && r.contains("the fused order kept")),
        "{:?}",
        failed.degraded_reasons
    );
    let plain = client
        .search(search(question, Some(0.0)))
        .await
        .unwrap()
        .into_inner();
    assert!(!plain.degraded);
    let (failed, plain) = (fused(&failed), fused(&plain));
    assert!(failed.iter().all(|h| h.late.is_none()));
    assert_eq!(ids(&failed), ids(&plain), "the fused order");
}

/// A memory's tokens, as the writer stores them, leave out what a query's
/// do: punctuation and the common words of the writer's language (the
/// mesh's `[lexical] common_words`), unless nothing would be left.
#[tokio::test]
async fn a_memorys_stored_tokens_leave_out_common_words_as_a_querys() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let embedder = Arc::new(trine_embed::HashEmbedder::new(32));
    let english = Some(Language::English);
    // (the writer's language, the memory's text, the tokens stored)
    let table = [
        (english, "The cat and the cat!", 1),
        (None, "The cat and the cat!", 3),
        (english, "To be, or not to be?", 4),
        (Some(Language::French), "Le chat et le chien", 2),
    ];
    for (n, (language, text, want)) in table.into_iter().enumerate() {
        let writer =
            trine_gateway::Writer::new(store.clone(), embedder.clone()).with_common_words(language);
        writer.prepare().await.unwrap();
        let id = Uuid::from_u128(n as u128 + 1);
        let memory = trine_core::model::Memory::new(id, "acme".to_string(), text.to_string());
        assert!(writer.write(vec![memory]).await.unwrap().is_empty());
        let point = store.points(&[id]).await.unwrap().remove(0);
        let stored = point.tokens.map(|t| t.len());
        assert_eq!(stored, Some(want), "{text:?} under {language:?}");
    }
}

//! The contract every [`Store`] keeps: one suite, written over
//! `Arc<dyn Store>`, run on Qdrant Edge always and on a Qdrant server when
//! `TRINE_QDRANT_URL` is set.
//!
//! Each check uses its own tenant, so checks see only their own points: the
//! tenant is a boundary, and the suite relies on it. Vectors are small and
//! hand-made (8 dimensions); no embedding model runs here.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use trine_store::{
    BatchRead, CollectionSpec, EdgeStore, EmbedderId, Filter, Fold, Language, MAX_FILTER_IDS,
    MAX_FILTER_SPANS, Memory, NativeLexical, PayloadRead, PayloadSchema, Point, Query, Scan, Span,
    SparseVector, Store, StoreError, TextIndexInfo, TimeFormat,
};
use uuid::Uuid;

const DIM: usize = 8;

// ---------------------------------------------------------------- the runs

/// The contract's checks, in the order the whole suite once ran them. Each
/// is its own test on each backend (the modules [`edge`], [`edge_layout`],
/// [`server`], [`server_layout`]), on a collection of its own, so
/// `cargo test -p trine-store --test contract tenant_is_a_boundary` runs one
/// check everywhere. A line names the state the check starts from, then
/// the call (`store`, `layout`: the test's own; a literal as written):
/// `absent`, before the collection exists; `ready`, after
/// `ensure_collection`; `probed`, after the checks whose tenants [`probe`]
/// reads have written them. A new check is one line here.
macro_rules! each_check {
    ($tests:ident) => {
        $tests! {
            absent missing_collection_reads_as_absent(store);
            absent ensure_is_idempotent_and_refuses_another_embedder(store, layout);
            ready text_index_reports_phrase_and_scoring(store);
            ready every_field_round_trips(store);
            ready spans_read_stretches_of_threads_within_the_tenant(store);
            ready get_keeps_the_order_asked_and_leaves_out_missing(store);
            ready upserting_an_id_again_replaces_the_point(store);
            ready delete_removes_points_and_ignores_unknown_ids(store);
            ready wrong_dimension_is_refused(store);
            ready exact_counts_with_each_filter_kind(store);
            ready tenant_is_a_boundary(store);
            ready validity_view_has_open_sides_and_half_open_bounds(store);
            ready source_prefix_matches_the_start_only(store);
            ready created_range_is_half_open(store);
            ready scroll_pages_in_ascending_id_order(store);
            ready term_scroll_reads_the_sparse_encoding_and_source_only(store);
            ready dense_query_ranks_by_cosine(store);
            ready late_scores_the_given_ids_by_maxsim_within_the_tenant(store);
            ready bm25_ranks_the_rare_term_first_with_idf_within_the_tenant(store);
            ready native_hybrid_fuses_dense_and_lexical_with_qdrant_rrf(store);
            ready sparse_query_ranks_with_idf_within_the_tenant(store);
            ready missing_sparse_pages_every_tenant_in_id_order(store);
            ready set_sparse_fills_only_the_sparse_vector(store);
            ready set_sparse_skips_unknown_ids_and_is_repeatable(store);
            ready upserting_without_sparse_makes_a_point_missing_again(store);
            ready term_gate_and_phrase_filters(store);
            ready a_batch_reads_as_its_scrolls_do(store, "batch");
            ready an_empty_gate_is_refused(store);
            ready bad_queries_are_refused_alike(store);
            ready stemmed_terms_meet_their_inflections(store);
            probed optimize_keeps_every_answer(store);
        }
    };
}

/// One `#[tokio::test]` per line of [`each_check!`], each on the store the
/// enclosing module's `open` gives it (`None`: skipped).
macro_rules! contract_tests {
    ($($state:ident $check:ident($($arg:tt),*);)*) => {$(
        #[tokio::test]
        async fn $check() {
            let Some(contract) = open(stringify!($check)).await else {
                return;
            };
            let contract = contract.$state().await;
            super::$check($(check_arg!(contract, $arg)),*).await;
        }
    )*};
}

/// An argument of a check's call in [`each_check!`].
macro_rules! check_arg {
    ($contract:ident, store) => {
        $contract.store.as_ref()
    };
    ($contract:ident, layout) => {
        &$contract.layout
    };
    ($contract:ident, $literal:literal) => {
        $literal
    };
}

/// One test's store, on a collection no other test uses, and the payload
/// layout it writes.
struct Contract {
    store: Arc<dyn Store>,
    layout: PayloadSchema,
    /// The edge store's directory, removed when the test ends.
    _dir: Option<tempfile::TempDir>,
}

impl Contract {
    fn edge(layout: PayloadSchema) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store =
            EdgeStore::open_with(dir.path(), "contract", layout.clone()).expect("open edge store");
        Self {
            store: Arc::new(store),
            layout,
            _dir: Some(dir),
        }
    }

    /// A store on a new collection of the Qdrant server at
    /// `TRINE_QDRANT_URL`, named after `check`; `None`, saying so, without one.
    async fn server(check: &str, layout: PayloadSchema) -> Option<(Self, String, String)> {
        let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
            trine_testkit::skipped(
                &format!("{check} on a Qdrant server"),
                trine_testkit::NO_QDRANT,
            );
            return None;
        };
        let collection = format!("trine_contract_{check}_{}", Uuid::new_v4().simple());
        let store = trine_store::ServerStore::connect(&url, &collection)
            .await
            .expect("connect to the qdrant server")
            .with_schema(layout.clone())
            .expect("a valid layout");
        let contract = Self {
            store: Arc::new(store),
            layout,
            _dir: None,
        };
        Some((contract, url, collection))
    }

    /// Before the collection exists.
    async fn absent(self) -> Self {
        self
    }

    /// The collection created, empty.
    async fn ready(self) -> Self {
        self.store
            .ensure_collection(&spec())
            .await
            .expect("ensure the collection");
        self
    }

    /// The collection holding what the checks [`probe`] reads write.
    async fn probed(self) -> Self {
        let contract = self.ready().await;
        write_the_probed_tenants(contract.store.as_ref()).await;
        contract
    }
}

/// The layout of a collection another tool wrote: its own keys, times as
/// Unix milliseconds.
fn another_tools_layout() -> PayloadSchema {
    PayloadSchema {
        text: "content".into(),
        source: "url".into(),
        source_text: "url_words".into(),
        tenant: "user_id".into(),
        project: "workspace".into(),
        kind: "type".into(),
        created_at: "ts".into(),
        valid_from: "start_ms".into(),
        valid_until: "end_ms".into(),
        metadata: "extra".into(),
        thread: "conversation".into(),
        seq: "turn".into(),
        time_format: TimeFormat::UnixMillis,
    }
}

/// The contract on Qdrant Edge.
mod edge {
    use super::*;

    async fn open(_check: &str) -> Option<Contract> {
        Some(Contract::edge(PayloadSchema::default()))
    }

    each_check!(contract_tests);
}

/// The contract on Qdrant Edge, over another tool's payload layout.
mod edge_layout {
    use super::*;

    async fn open(_check: &str) -> Option<Contract> {
        Some(Contract::edge(another_tools_layout()))
    }

    each_check!(contract_tests);
}

/// The contract on a Qdrant server (`TRINE_QDRANT_URL`).
mod server {
    use super::*;

    async fn open(check: &str) -> Option<Contract> {
        let (contract, ..) = Contract::server(check, PayloadSchema::default()).await?;
        Some(contract)
    }

    each_check!(contract_tests);

    /// Reads batched into one call find what they find side by side.
    #[tokio::test]
    async fn a_batch_reads_as_its_scrolls_do_in_one_call() {
        let Some((contract, url, collection)) =
            Contract::server("a_batch_in_one_call", PayloadSchema::default()).await
        else {
            return;
        };
        let _contract = contract.ready().await;
        let batching = trine_store::ServerStore::connect(&url, &collection)
            .await
            .expect("connect to the qdrant server")
            .with_batch_reads(true);
        super::a_batch_reads_as_its_scrolls_do(&batching, "batch-in-one-call").await;
    }

    /// A collection is made with trine's segment cap, not Qdrant's (whose
    /// cap counts the tokens: `trine_store::MAX_SEGMENT_KB`).
    #[tokio::test]
    async fn a_collection_is_made_with_trines_segment_cap() {
        let Some((contract, url, collection)) =
            Contract::server("segment_cap", PayloadSchema::default()).await
        else {
            return;
        };
        let _contract = contract.ready().await;
        let client = qdrant_client::Qdrant::from_url(&url)
            .build()
            .expect("a client");
        assert_eq!(
            segment_cap(&client, &collection).await,
            Some(trine_store::MAX_SEGMENT_KB as u64)
        );
    }

    /// The segment cap set in `collection`'s optimizers, as the server reads it back.
    async fn segment_cap(client: &qdrant_client::Qdrant, collection: &str) -> Option<u64> {
        client
            .collection_info(collection)
            .await
            .expect("the collection's info")
            .result
            .and_then(|i| i.config)
            .and_then(|c| c.optimizer_config)
            .and_then(|o| o.max_segment_size)
    }

    /// A collection made before trine set its cap (Qdrant's defaults, as
    /// another tool or an older trine made it) takes trine's when opened.
    #[tokio::test]
    async fn a_collection_made_without_a_segment_cap_takes_trines_when_opened() {
        use qdrant_client::qdrant as q;
        let Some((contract, url, collection)) =
            Contract::server("segment_cap_opened", PayloadSchema::default()).await
        else {
            return;
        };
        let client = qdrant_client::Qdrant::from_url(&url)
            .build()
            .expect("a client");
        let mut vectors = q::VectorsConfigBuilder::default();
        vectors.add_named_vector_params(
            trine_core::model::DENSE_VECTOR,
            q::VectorParamsBuilder::new(DIM as u64, q::Distance::Cosine),
        );
        client
            .create_collection(
                q::CreateCollectionBuilder::new(collection.as_str()).vectors_config(vectors),
            )
            .await
            .expect("a collection with Qdrant's defaults");
        assert_eq!(
            segment_cap(&client, &collection).await,
            None,
            "made with Qdrant's defaults"
        );
        let _contract = contract.ready().await;
        assert_eq!(
            segment_cap(&client, &collection).await,
            Some(trine_store::MAX_SEGMENT_KB as u64)
        );
    }
}

/// The contract on a Qdrant server, over another tool's payload layout.
mod server_layout {
    use super::*;

    async fn open(check: &str) -> Option<Contract> {
        let (contract, ..) = Contract::server(check, another_tools_layout()).await?;
        Some(contract)
    }

    each_check!(contract_tests);
}

/// The checks whose tenants [`probe`] reads, so that optimize has their
/// points to keep (the whole suite once ran them all before it).
async fn write_the_probed_tenants(store: &dyn Store) {
    exact_counts_with_each_filter_kind(store).await;
    validity_view_has_open_sides_and_half_open_bounds(store).await;
    source_prefix_matches_the_start_only(store).await;
    created_range_is_half_open(store).await;
    scroll_pages_in_ascending_id_order(store).await;
    dense_query_ranks_by_cosine(store).await;
    bm25_ranks_the_rare_term_first_with_idf_within_the_tenant(store).await;
    sparse_query_ranks_with_idf_within_the_tenant(store).await;
    missing_sparse_pages_every_tenant_in_id_order(store).await;
    set_sparse_fills_only_the_sparse_vector(store).await;
    term_gate_and_phrase_filters(store).await;
}

// ---------------------------------------------------------------- helpers

fn embedder() -> EmbedderId {
    EmbedderId {
        name: "contract-embedder".into(),
        dim: DIM,
    }
}

fn spec() -> CollectionSpec {
    CollectionSpec {
        embedder: embedder(),
        fold: Fold::default(),
    }
}

fn ts(s: &str) -> DateTime<Utc> {
    s.parse().expect("a test time")
}

fn memory(tenant: &str, text: &str) -> Memory {
    Memory::new(Uuid::new_v4(), tenant, text)
}

/// The unit vector of axis `i`.
fn axis(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    v[i] = 1.0;
    v
}

fn sparse(pairs: &[(u32, f32)]) -> SparseVector {
    SparseVector {
        indices: pairs.iter().map(|p| p.0).collect(),
        values: pairs.iter().map(|p| p.1).collect(),
    }
}

fn point(memory: Memory) -> Point {
    Point {
        memory,
        dense: axis(0),
        sparse: None,
        tokens: None,
    }
}

/// Upserts the memories (dense vector: axis 0) and returns their ids.
async fn put(store: &dyn Store, memories: Vec<Memory>) -> Vec<Uuid> {
    let ids = memories.iter().map(|m| m.id).collect();
    store
        .upsert(memories.into_iter().map(point).collect())
        .await
        .expect("upsert");
    ids
}

async fn count(store: &dyn Store, filter: &Filter) -> u64 {
    store.count(filter).await.expect("count")
}

/// Every id matching the filter, read by scrolling.
async fn ids(store: &dyn Store, filter: &Filter) -> BTreeSet<Uuid> {
    let mut out = BTreeSet::new();
    let mut offset = None;
    loop {
        let page = store.scroll(filter, 100, offset).await.expect("scroll");
        out.extend(page.memories.iter().map(|m| m.id));
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => return out,
        }
    }
}

fn set(ids: &[Uuid]) -> BTreeSet<Uuid> {
    ids.iter().copied().collect()
}

fn hit_ids(hits: &[trine_store::Hit]) -> Vec<Uuid> {
    hits.iter().map(|h| h.id).collect()
}

/// Every memory without a sparse vector, over all tenants, read by paging
/// `scan` `page` at a time; checks each page keeps to the limit.
async fn missing(store: &dyn Store, page: usize) -> Vec<Memory> {
    scanned(store, Scan::MissingSparse, page).await
}

/// Every memory of `scope`, over all tenants, read by paging `scan` `page`
/// at a time; checks each page keeps to the limit.
async fn scanned(store: &dyn Store, scope: Scan, page: usize) -> Vec<Memory> {
    let mut out = Vec::new();
    let mut offset = None;
    loop {
        let got = store.scan(scope, page, offset).await.expect("scan");
        assert!(got.memories.len() <= page, "a page holds at most the limit");
        out.extend(got.memories);
        match got.next_offset {
            Some(next) => offset = Some(next),
            None => return out,
        }
    }
}

async fn missing_ids(store: &dyn Store) -> BTreeSet<Uuid> {
    missing(store, 100).await.iter().map(|m| m.id).collect()
}

async fn count_missing(store: &dyn Store) -> u64 {
    store
        .count_missing_sparse()
        .await
        .expect("count_missing_sparse")
}

// ---------------------------------------------------------------- checks

async fn missing_collection_reads_as_absent(store: &dyn Store) {
    let info = store.info().await.expect("info of a missing collection");
    assert!(
        info.is_none(),
        "info of a missing collection is None: {info:?}"
    );
    let err = store
        .count(&Filter::tenant("t"))
        .await
        .expect_err("count refused");
    assert!(
        matches!(err, StoreError::NoCollection(_)),
        "a read of a missing collection says NoCollection: {err}"
    );
}

async fn ensure_is_idempotent_and_refuses_another_embedder(
    store: &dyn Store,
    layout: &PayloadSchema,
) {
    let first = store
        .ensure_collection(&spec())
        .await
        .expect("ensure creates");
    let again = store
        .ensure_collection(&spec())
        .await
        .expect("ensure again");
    assert_eq!(first, again, "ensure is idempotent");
    assert_eq!(first.embedder, Some(embedder()), "the embedder is recorded");
    assert_eq!(first.dense_dim, Some(DIM), "dense dimension");
    assert!(first.sparse_idf, "the sparse space has the IDF modifier");
    assert_eq!(
        first.sparse_tf,
        first.backend == "edge",
        "the embedded store alone keeps sparse_tf"
    );
    assert_eq!(first.points, 0, "a new collection is empty");
    assert_eq!(first.backend, store.backend());
    assert_eq!(first.name, store.collection());
    let info = store
        .info()
        .await
        .expect("info")
        .expect("the collection exists");
    assert_eq!(info, first, "info reports what ensure reported");

    let indexes: BTreeSet<(String, String)> = first
        .payload_indexes
        .iter()
        .map(|i| (i.field.clone(), i.kind.clone()))
        .collect();
    for (field, index) in layout.indexes() {
        let kind = layout.reported_kind(index);
        assert!(
            indexes.contains(&(field.to_string(), kind.to_string())),
            "a {kind} index on {field}: {indexes:?}"
        );
    }

    for other in [
        EmbedderId {
            name: "another".into(),
            dim: DIM,
        },
        EmbedderId {
            name: embedder().name,
            dim: DIM * 2,
        },
    ] {
        let err = store
            .ensure_collection(&CollectionSpec {
                embedder: other.clone(),
                fold: Fold::default(),
            })
            .await
            .expect_err("another embedder is refused");
        assert!(
            matches!(err, StoreError::EmbedderMismatch { .. }),
            "embedder {other:?} refused with EmbedderMismatch: {err}"
        );
    }
}

/// Whether the store's engine scores text with BM25 (Qdrant 1.20 on, Edge).
async fn text_scoring(store: &dyn Store) -> bool {
    store
        .info()
        .await
        .expect("info")
        .expect("exists")
        .engine
        .text_scoring
}

/// A BM25 text query on an engine without text scoring: refused, naming
/// the version it needs.
fn is_unsupported<T: std::fmt::Debug>(got: Result<T, StoreError>) {
    match got {
        Err(StoreError::Unsupported(why)) => {
            assert!(why.contains("needs Qdrant 1.20"), "{why}")
        }
        other => panic!("a text query without BM25 scoring is refused: {other:?}"),
    }
}

async fn text_index_reports_phrase_and_scoring(store: &dyn Store) {
    let info = store.info().await.expect("info").expect("exists");
    let want = TextIndexInfo {
        tokenizer: "word".into(),
        lowercase: true,
        phrase_matching: true,
        ascii_folding: true,
        stemmer: None,
        // Asked for at creation; kept where the engine has it.
        scoring: info.engine.text_scoring,
    };
    assert_eq!(
        info.text_index,
        Some(want.clone()),
        "the text index as created"
    );
    let created = store
        .create_text_index(Fold::ASCII)
        .await
        .expect("create_text_index");
    assert!(
        !created,
        "create_text_index on an existing index of that fold creates nothing"
    );
    let after = store.info().await.expect("info").expect("exists");
    assert_eq!(after.text_index, info.text_index, "the index is unchanged");

    // Another fold rebuilds the index in place, and back.
    for (fold, folds) in [(Fold::CASE, false), (Fold::ASCII, true)] {
        assert!(
            store.create_text_index(fold).await.expect("rebuild"),
            "{fold:?}: rebuilt"
        );
        let got = store.info().await.expect("info").expect("exists");
        assert_eq!(
            got.text_index,
            Some(TextIndexInfo {
                ascii_folding: folds,
                stemmer: None,
                ..want.clone()
            }),
            "{fold:?}"
        );
    }
}

/// With a Snowball stemmer, a word's term finds exactly the texts whose
/// word has its stem, and counts them: trine's stemmer is the index's, in
/// each language, words whose stem stems again otherwise (`accidentally` →
/// `accident` → `accid`) among them. The index goes back to trine's default
/// after.
async fn stemmed_terms_meet_their_inflections(store: &dyn Store) {
    let rows: &[(Language, &[&str])] = &[
        (
            Language::English,
            &[
                "meeting",
                "meetings",
                "meet",
                "accidentally",
                "accident",
                "analyses",
                "analysing",
                "browse",
                "browsing",
                "agree",
                "agreed",
            ],
        ),
        (
            Language::French,
            &[
                "développement",
                "développements",
                "abréviations",
                "abréviation",
                "accélération",
                "accélérer",
                "activée",
                "activité",
            ],
        ),
        (
            Language::German,
            &[
                "Änderung",
                "Änderungen",
                "Bibliothek",
                "Bibliotheken",
                "basierend",
                "basierenden",
                "Anforderungen",
            ],
        ),
        (
            Language::Romanian,
            &["ședință", "ședința", "ședințele", "ședinței", "sedinta"],
        ),
    ];
    for (language, words) in rows {
        let fold = Fold::ASCII.with_stemmer(Some(*language));
        assert!(
            store.create_text_index(fold).await.expect("rebuild"),
            "{language}"
        );
        let info = store.info().await.expect("info").expect("exists");
        assert_eq!(
            info.text_index.map(|t| t.fold()),
            Some(fold),
            "the index stems in {language}"
        );
        let tenant = format!("stems-{language}");
        let written = put(store, words.iter().map(|w| memory(&tenant, w)).collect()).await;
        for word in *words {
            let terms = trine_core::terms(word, fold);
            assert_eq!(terms.len(), 1, "{word:?}: {terms:?}");
            let want: BTreeSet<Uuid> = words
                .iter()
                .zip(&written)
                .filter(|(other, _)| fold.apply(other) == fold.apply(word))
                .map(|(_, id)| *id)
                .collect();
            let filter = Filter {
                all_terms: terms,
                ..Filter::tenant(&tenant)
            };
            assert_eq!(ids(store, &filter).await, want, "{language}: {word:?}");
            assert_eq!(
                count(store, &filter).await,
                want.len() as u64,
                "{language}: count of {word:?}"
            );
            // BM25 over the index ranks exactly those (the engine stems the
            // query itself).
            if text_scoring(store).await {
                let hits = store
                    .query(Query::text(*word, &Filter::tenant(&tenant), 20))
                    .await
                    .expect("text query");
                let got: BTreeSet<Uuid> = hits.iter().map(|h| h.id).collect();
                assert_eq!(got, want, "{language}: bm25 of {word:?}");
            }
        }
    }
    assert!(store.create_text_index(Fold::ASCII).await.expect("back"));
}

async fn every_field_round_trips(store: &dyn Store) {
    let metadata = json!({"lang": "ro", "n": 3, "nested": {"list": [1, "two", null], "ok": true}});
    let full = Memory {
        id: Uuid::new_v4(),
        text: "Ședință despre CVE-2023-4863 la 09:58".into(),
        source: Some("git/notes/a.md".into()),
        tenant: "roundtrip".into(),
        project: Some("trine".into()),
        kind: Some("decision".into()),
        created_at: Some(ts("2026-11-11T09:58:00Z")),
        valid_from: Some(ts("2026-01-01T00:00:00.250Z")),
        valid_until: Some(ts("2027-01-01T00:00:00Z")),
        metadata: metadata.as_object().cloned(),
        thread: Some("session-7".into()),
        seq: Some(12),
    };
    let bare = memory("roundtrip", "only the required fields");
    put(store, vec![full.clone(), bare.clone()]).await;

    let got = store.get(&[full.id, bare.id]).await.expect("get");
    assert_eq!(
        got,
        vec![full.clone(), bare.clone()],
        "get returns every field as written"
    );

    let filter = Filter::tenant("roundtrip");
    let page = store.scroll(&filter, 10, None).await.expect("scroll");
    for m in &page.memories {
        let want = if m.id == full.id { &full } else { &bare };
        assert_eq!(m, want, "scroll returns every field as written");
    }
    let hits = store
        .query(Query::dense(axis(0), &filter, 10).with_payload(PayloadRead::Memory))
        .await
        .expect("dense query");
    for h in &hits {
        let want = if h.id == full.id { &full } else { &bare };
        assert_eq!(
            h.memory.as_ref(),
            Some(want),
            "a query returns every field as written"
        );
    }

    // A thread is a condition within the tenant: the same thread name in
    // another tenant is another thread.
    let elsewhere = Memory {
        thread: Some("session-7".into()),
        seq: Some(0),
        ..memory("roundtrip-other", "the other tenant's session")
    };
    put(store, vec![elsewhere]).await;
    let in_thread = Filter {
        thread: Some("session-7".into()),
        ..Filter::tenant("roundtrip")
    };
    let page = store
        .scroll(&in_thread, 10, None)
        .await
        .expect("scroll a thread");
    assert_eq!(
        page.memories,
        vec![full.clone()],
        "only the thread's memory"
    );
    let hits = store
        .query(Query::dense(axis(0), &in_thread, 10).with_payload(PayloadRead::Memory))
        .await
        .expect("dense query in a thread");
    let ids: Vec<Uuid> = hits.iter().map(|h| h.id).collect();
    assert_eq!(ids, vec![full.id], "a query restricted to the thread");
    let none = Filter {
        thread: Some("no-such-thread".into()),
        ..Filter::tenant("roundtrip")
    };
    let page = store.scroll(&none, 10, None).await.expect("scroll");
    assert!(page.memories.is_empty(), "no memory of an unknown thread");
}

async fn spans_read_stretches_of_threads_within_the_tenant(store: &dyn Store) {
    let message = |tenant: &str, thread: Option<&str>, seq: Option<u64>| Memory {
        thread: thread.map(Into::into),
        seq,
        ..memory(tenant, "a message")
    };
    let t = "spans";
    let a: Vec<Memory> = (0..6).map(|s| message(t, Some("a"), Some(s))).collect();
    let b: Vec<Memory> = (0..3).map(|s| message(t, Some("b"), Some(s))).collect();
    let unplaced = message(t, Some("a"), None);
    let alone = message(t, None, None);
    let other = message("spans-other", Some("a"), Some(1));
    let mut all = a.clone();
    all.extend(b.clone());
    all.extend([unplaced.clone(), alone.clone(), other.clone()]);
    put(store, all).await;
    let span = |thread: &str, from, to| Span {
        thread: thread.into(),
        from,
        to,
    };
    let with = |spans: Option<Vec<Span>>| Filter {
        spans,
        ..Filter::tenant(t)
    };
    let id = |m: &Memory| m.id;
    let cases: Vec<(&str, Filter, Vec<Uuid>)> = vec![
        (
            "one stretch, ends included",
            with(Some(vec![span("a", 1, 3)])),
            a[1..=3].iter().map(id).collect(),
        ),
        (
            "stretches of two threads at once",
            with(Some(vec![span("a", 5, 9), span("b", 0, 0)])),
            vec![a[5].id, b[0].id],
        ),
        ("no stretch matches nothing", with(Some(vec![])), vec![]),
    ];
    for (name, filter, want) in cases {
        assert_eq!(ids(store, &filter).await, set(&want), "{name}");
        assert_eq!(
            count(store, &filter).await,
            want.len() as u64,
            "{name}: count"
        );
    }
    // The stretch is the tenant's: the other tenant's thread `a` is not read.
    let read = ids(store, &with(Some(vec![span("a", 0, 9)]))).await;
    assert!(!read.contains(&other.id), "a span never crosses tenants");
    assert!(
        !read.contains(&unplaced.id) && !read.contains(&alone.id),
        "a memory without a seq, or without a thread, lies in no span"
    );
    assert_eq!(read, set(&a.iter().map(id).collect::<Vec<_>>()));
    for bad in [
        vec![span(" ", 0, 1)],
        vec![span("a", 3, 2)],
        vec![span("a", 0, 1); MAX_FILTER_SPANS + 1],
    ] {
        let got = store.scroll(&with(Some(bad.clone())), 10, None).await;
        assert!(
            matches!(got, Err(StoreError::Invalid { .. })),
            "{bad:?} refused: {got:?}"
        );
    }
}

async fn get_keeps_the_order_asked_and_leaves_out_missing(store: &dyn Store) {
    let a = memory("get", "first");
    let b = memory("get", "second");
    put(store, vec![a.clone(), b.clone()]).await;
    let got = store.get(&[b.id, Uuid::new_v4(), a.id]).await.expect("get");
    assert_eq!(got, vec![b, a], "order asked, missing left out");
    let none = store.get(&[]).await.expect("get nothing");
    assert!(none.is_empty(), "get of no ids is empty");
}

async fn upserting_an_id_again_replaces_the_point(store: &dyn Store) {
    let old = Memory {
        project: Some("p".into()),
        ..memory("replace", "old words here")
    };
    let new = Memory {
        id: old.id,
        ..memory("replace", "new words here")
    };
    put(store, vec![old]).await;
    put(store, vec![new.clone()]).await;
    assert_eq!(
        store.get(&[new.id]).await.expect("get"),
        vec![new],
        "replaced, not merged"
    );
    let filter = Filter::tenant("replace");
    assert_eq!(count(store, &filter).await, 1, "one point after re-upsert");
    let old_term = Filter {
        all_terms: vec!["old".into()],
        ..filter
    };
    assert_eq!(
        count(store, &old_term).await,
        0,
        "the old text is no longer indexed"
    );
}

async fn delete_removes_points_and_ignores_unknown_ids(store: &dyn Store) {
    let ids = put(
        store,
        vec![
            memory("delete", "one"),
            memory("delete", "two"),
            memory("delete", "three"),
        ],
    )
    .await;
    store
        .delete(&[ids[0], Uuid::new_v4()])
        .await
        .expect("delete with an unknown id");
    assert_eq!(
        count(store, &Filter::tenant("delete")).await,
        2,
        "one point deleted"
    );
    assert!(
        store.get(&[ids[0]]).await.expect("get").is_empty(),
        "a deleted point is gone"
    );
    store.delete(&[]).await.expect("delete nothing");
}

async fn wrong_dimension_is_refused(store: &dyn Store) {
    let bad = Point {
        memory: memory("dims", "wrong size"),
        dense: vec![1.0; DIM + 1],
        sparse: None,
        tokens: None,
    };
    let err = store.upsert(vec![bad]).await.expect_err("refused");
    assert!(
        matches!(err, StoreError::DimensionMismatch { got, want, .. } if got == DIM + 1 && want == DIM),
        "a vector of the wrong dimension is refused: {err}"
    );
    assert_eq!(
        count(store, &Filter::tenant("dims")).await,
        0,
        "nothing written"
    );
}

async fn exact_counts_with_each_filter_kind(store: &dyn Store) {
    let t = "counts";
    let with = |text: &str,
                project: Option<&str>,
                kind: Option<&str>,
                source: Option<&str>,
                created: Option<&str>| Memory {
        project: project.map(Into::into),
        kind: kind.map(Into::into),
        source: source.map(Into::into),
        created_at: created.map(ts),
        ..memory(t, text)
    };
    put(
        store,
        vec![
            with(
                "alpha beta",
                Some("p1"),
                Some("note"),
                Some("git/a.md"),
                Some("2026-01-01T00:00:00Z"),
            ),
            with(
                "alpha gamma",
                Some("p2"),
                Some("todo"),
                Some("git/b/c.md"),
                Some("2026-02-01T00:00:00Z"),
            ),
            with(
                "beta delta",
                Some("p1"),
                Some("todo"),
                Some("web/x"),
                Some("2026-03-01T00:00:00Z"),
            ),
            with("gamma delta epsilon", None, None, None, None),
        ],
    )
    .await;
    let base = Filter::tenant(t);
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let table: Vec<(&str, Filter, u64)> = vec![
        ("tenant only", base.clone(), 4),
        (
            "one project",
            Filter {
                projects: strings(&["p1"]),
                ..base.clone()
            },
            2,
        ),
        (
            "any of two projects",
            Filter {
                projects: strings(&["p1", "p2"]),
                ..base.clone()
            },
            3,
        ),
        (
            "an unknown project",
            Filter {
                projects: strings(&["p9"]),
                ..base.clone()
            },
            0,
        ),
        (
            "one kind",
            Filter {
                kinds: strings(&["todo"]),
                ..base.clone()
            },
            2,
        ),
        (
            "source prefix",
            Filter {
                source_prefix: Some("git/".into()),
                ..base.clone()
            },
            2,
        ),
        (
            "created from",
            Filter {
                created_from: Some(ts("2026-02-01T00:00:00Z")),
                ..base.clone()
            },
            2,
        ),
        (
            "created until",
            Filter {
                created_until: Some(ts("2026-02-01T00:00:00Z")),
                ..base.clone()
            },
            1,
        ),
        (
            "valid now",
            Filter {
                valid_at: Some(Utc::now()),
                ..base.clone()
            },
            4,
        ),
        (
            "one term",
            Filter {
                all_terms: strings(&["alpha"]),
                ..base.clone()
            },
            2,
        ),
        (
            "a term in capitals",
            Filter {
                all_terms: strings(&["ALPHA"]),
                ..base.clone()
            },
            2,
        ),
        (
            "all of two terms",
            Filter {
                all_terms: strings(&["alpha", "beta"]),
                ..base.clone()
            },
            1,
        ),
        (
            "any of two terms",
            Filter {
                any_terms: Some(strings(&["beta", "epsilon"])),
                ..base.clone()
            },
            3,
        ),
        (
            "a phrase",
            Filter {
                phrase: Some("beta delta".into()),
                ..base.clone()
            },
            1,
        ),
        (
            "a phrase reversed",
            Filter {
                phrase: Some("delta beta".into()),
                ..base.clone()
            },
            0,
        ),
        (
            "project, kind and term together",
            Filter {
                projects: strings(&["p1"]),
                kinds: strings(&["todo"]),
                all_terms: strings(&["beta"]),
                ..base.clone()
            },
            1,
        ),
    ];
    for (name, filter, want) in table {
        assert_eq!(count(store, &filter).await, want, "exact count: {name}");
    }
}

async fn tenant_is_a_boundary(store: &dyn Store) {
    let text = "shared secret alpha";
    let vector = sparse(&[(7, 1.0)]);
    let mut mine = Vec::new();
    for tenant in ["boundary-a", "boundary-b"] {
        let m = memory(tenant, text);
        mine.push(m.id);
        store
            .upsert(vec![Point {
                memory: m,
                dense: axis(0),
                sparse: Some(vector.clone()),
                tokens: None,
            }])
            .await
            .expect("upsert");
    }
    let a = Filter::tenant("boundary-a");
    let only_a = vec![mine[0]];
    assert_eq!(count(store, &a).await, 1, "count stays in the tenant");
    assert_eq!(
        ids(store, &a).await,
        set(&only_a),
        "scroll stays in the tenant"
    );
    let dense = store
        .query(Query::dense(axis(0), &a, 10))
        .await
        .expect("dense");
    assert_eq!(hit_ids(&dense), only_a, "dense query stays in the tenant");
    let text_hits = store.query(Query::text("secret", &a, 10)).await;
    if text_scoring(store).await {
        assert_eq!(
            hit_ids(&text_hits.expect("text")),
            only_a,
            "text query stays in the tenant"
        );
    } else {
        is_unsupported(text_hits);
    }
    let sparse_hits = store
        .query(Query::sparse(vector, &a, 10))
        .await
        .expect("sparse");
    assert_eq!(
        hit_ids(&sparse_hits),
        only_a,
        "sparse query stays in the tenant"
    );
    assert_eq!(
        count(store, &Filter::tenant("boundary-c")).await,
        0,
        "an unknown tenant sees nothing"
    );
}

async fn validity_view_has_open_sides_and_half_open_bounds(store: &dyn Store) {
    let t = "validity";
    let (t1, t2) = (ts("2026-01-01T00:00:00Z"), ts("2026-06-01T00:00:00Z"));
    let valid = |from, until| Memory {
        valid_from: from,
        valid_until: until,
        ..memory(t, "a fact")
    };
    let open = valid(None, None);
    let from = valid(Some(t1), None);
    let until = valid(None, Some(t2));
    let both = valid(Some(t1), Some(t2));
    let all = [open.id, from.id, until.id, both.id];
    put(
        store,
        vec![open.clone(), from.clone(), until.clone(), both.clone()],
    )
    .await;
    let second = chrono::Duration::seconds(1);
    let table = [
        ("before valid_from", t1 - second, vec![open.id, until.id]),
        ("at valid_from (inclusive)", t1, all.to_vec()),
        ("between", ts("2026-03-01T00:00:00Z"), all.to_vec()),
        ("just before valid_until", t2 - second, all.to_vec()),
        ("at valid_until (exclusive)", t2, vec![open.id, from.id]),
        (
            "after valid_until",
            t2 + chrono::Duration::days(1),
            vec![open.id, from.id],
        ),
    ];
    for (name, at, want) in table {
        let filter = Filter {
            valid_at: Some(at),
            ..Filter::tenant(t)
        };
        assert_eq!(ids(store, &filter).await, set(&want), "valid at {name}");
    }
    assert_eq!(
        ids(store, &Filter::tenant(t)).await,
        set(&all),
        "no validity condition: all"
    );
}

async fn source_prefix_matches_the_start_only(store: &dyn Store) {
    let t = "source";
    let sourced = |source: Option<&str>| Memory {
        source: source.map(Into::into),
        ..memory(t, "sourced")
    };
    let git_a = sourced(Some("git/a.md"));
    let git_bc = sourced(Some("git/b/c.md"));
    let gitlab = sourced(Some("gitlab/x"));
    let web = sourced(Some("web/git/y"));
    let none = sourced(None);
    put(
        store,
        vec![
            git_a.clone(),
            git_bc.clone(),
            gitlab.clone(),
            web.clone(),
            none,
        ],
    )
    .await;
    let table = [
        ("git/", vec![git_a.id, git_bc.id]),
        ("git", vec![git_a.id, git_bc.id, gitlab.id]),
        ("git/b/", vec![git_bc.id]),
        ("web/git/y", vec![web.id]),
        ("GIT/", vec![]),
        ("a.md", vec![]),
    ];
    for (prefix, want) in table {
        let filter = Filter {
            source_prefix: Some(prefix.into()),
            ..Filter::tenant(t)
        };
        assert_eq!(
            ids(store, &filter).await,
            set(&want),
            "source prefix {prefix:?}"
        );
    }
}

async fn created_range_is_half_open(store: &dyn Store) {
    let t = "created";
    let at = |time: Option<&str>| Memory {
        created_at: time.map(ts),
        ..memory(t, "dated")
    };
    let jan = at(Some("2026-01-01T00:00:00Z"));
    let feb = at(Some("2026-02-01T00:00:00Z"));
    let mar = at(Some("2026-03-01T00:00:00Z"));
    let undated = at(None);
    put(store, vec![jan.clone(), feb.clone(), mar.clone(), undated]).await;
    let range = |from: Option<&str>, until: Option<&str>| Filter {
        created_from: from.map(ts),
        created_until: until.map(ts),
        ..Filter::tenant(t)
    };
    let table = [
        (
            "from feb until mar",
            range(Some("2026-02-01T00:00:00Z"), Some("2026-03-01T00:00:00Z")),
            vec![feb.id],
        ),
        (
            "from jan",
            range(Some("2026-01-01T00:00:00Z"), None),
            vec![jan.id, feb.id, mar.id],
        ),
        (
            "until feb",
            range(None, Some("2026-02-01T00:00:00Z")),
            vec![jan.id],
        ),
        (
            "an empty range",
            range(Some("2026-02-01T00:00:00Z"), Some("2026-02-01T00:00:00Z")),
            vec![],
        ),
    ];
    for (name, filter, want) in table {
        assert_eq!(ids(store, &filter).await, set(&want), "created {name}");
    }
}

async fn scroll_pages_in_ascending_id_order(store: &dyn Store) {
    let t = "scroll";
    let mut all: Vec<Uuid> = put(
        store,
        (0..7)
            .map(|i| memory(t, &format!("page item {i}")))
            .collect(),
    )
    .await;
    put(
        store,
        vec![Memory {
            kind: Some("other".into()),
            ..memory(t, "not listed")
        }],
    )
    .await;
    all.sort();
    let filter = Filter {
        all_terms: vec!["item".into()],
        ..Filter::tenant(t)
    };
    let mut read = Vec::new();
    let mut offset = None;
    let mut pages = 0;
    loop {
        let page = store.scroll(&filter, 3, offset).await.expect("scroll");
        pages += 1;
        assert!(page.memories.len() <= 3, "a page holds at most the limit");
        read.extend(page.memories.iter().map(|m| m.id));
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => break,
        }
        assert!(pages < 10, "scroll ends");
    }
    assert_eq!(
        read, all,
        "pages follow ascending point-id order, each point once"
    );
    assert_eq!(pages, 3, "7 points in pages of 3");
    let from_third = store
        .scroll(&filter, 2, Some(all[2]))
        .await
        .expect("scroll from an offset");
    let got: Vec<Uuid> = from_third.memories.iter().map(|m| m.id).collect();
    assert_eq!(got, all[2..4].to_vec(), "the offset is inclusive");
    assert_eq!(
        from_third.next_offset,
        Some(all[4]),
        "next_offset is the next id"
    );
}

async fn dense_query_ranks_by_cosine(store: &dyn Store) {
    let t = "dense";
    let half = std::f32::consts::FRAC_1_SQRT_2;
    let mut diagonal = vec![0.0; DIM];
    diagonal[0] = half;
    diagonal[1] = half;
    let mut opposite = axis(0);
    opposite[0] = -1.0;
    let vectors = [axis(0), diagonal, axis(1), opposite];
    let mut want = Vec::new();
    let mut points = Vec::new();
    for (i, dense) in vectors.into_iter().enumerate() {
        let m = memory(t, &format!("vector {i}"));
        want.push(m.id);
        points.push(Point {
            memory: m,
            dense,
            sparse: None,
            tokens: None,
        });
    }
    // Written in reverse, so insertion order cannot explain the ranking.
    points.reverse();
    store.upsert(points).await.expect("upsert");
    let hits = store
        .query(Query::dense(axis(0), &Filter::tenant(t), 10))
        .await
        .expect("dense query");
    assert_eq!(hit_ids(&hits), want, "ranked by cosine similarity");
    let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
    for (got, want) in scores.iter().zip([1.0, half, 0.0, -1.0]) {
        assert!((got - want).abs() < 1e-4, "cosine scores {scores:?}");
    }
    assert!(
        hits.iter().all(|h| h.memory.is_none()),
        "no payload unless asked"
    );
    let top = store
        .query(Query::dense(axis(0), &Filter::tenant(t), 2).with_payload(PayloadRead::Memory))
        .await
        .expect("dense query");
    assert_eq!(
        hit_ids(&top),
        want[..2].to_vec(),
        "the limit keeps the best"
    );
    assert!(top.iter().all(|h| h.memory.is_some()), "payload when asked");
}

/// Late interaction: the store scores the ids it is given by MaxSim of the
/// query's tokens with each point's (the sum over the query's of the best
/// dot product, as `trine_core::late::max_sim` computes it, at the half
/// precision the space keeps), the filter's tenant only; a point without
/// tokens is not scored.
async fn late_scores_the_given_ids_by_maxsim_within_the_tenant(store: &dyn Store) {
    use trine_core::late::{Tokens, max_sim};
    let t = "late";
    let info = store.info().await.expect("info").expect("a collection");
    assert!(info.tokens, "a new collection keeps tokens: {info:?}");
    let tokens = |axes: &[usize]| {
        let rows: Vec<Vec<f32>> = axes.iter().map(|&i| axis(i)).collect();
        Tokens::of_rows(DIM, &rows).unwrap()
    };
    // (the memory's tokens, or none; its tenant)
    let spec: [(Option<Tokens>, &str); 6] = [
        (Some(tokens(&[0, 1])), t),
        (Some(tokens(&[0])), t),
        (Some(tokens(&[2, 3, 4])), t),
        (Some(tokens(&[1, 2])), t),
        (None, t),
        (Some(tokens(&[0, 1])), "late-other"),
    ];
    let mut points = Vec::new();
    for (i, (tokens, tenant)) in spec.iter().enumerate() {
        points.push(Point {
            memory: memory(tenant, &format!("tokens {i}")),
            dense: axis(i),
            sparse: None,
            tokens: tokens.clone(),
        });
    }
    let ids: Vec<Uuid> = points.iter().map(|p| p.memory.id).collect();
    store.upsert(points).await.expect("upsert");
    // A question of two tokens, the second weighing half.
    let mut question = tokens(&[0, 1]);
    question.rows[DIM..].iter_mut().for_each(|x| *x *= 0.5);
    let hits = store
        .query(Query::late(question.clone(), &ids, &Filter::tenant(t)))
        .await
        .expect("late query");
    let scored: Vec<(Uuid, f32)> = hits.iter().map(|h| (h.id, h.score)).collect();
    let want: Vec<(Uuid, f64)> = spec[..4]
        .iter()
        .zip(&ids)
        .map(|((tokens, _), id)| (*id, max_sim(&question, tokens.as_ref().unwrap())))
        .collect();
    assert_eq!(
        scored.len(),
        4,
        "the tenant's points with tokens: {scored:?}"
    );
    for (id, got) in &scored {
        let want = want.iter().find(|(w, _)| w == id).expect("a scored id").1;
        assert!(
            (f64::from(*got) - want).abs() < 1e-2,
            "{id}: MaxSim {got}, want {want} ({scored:?})"
        );
    }
    // 1.5, 1.0, 0.5, 0.0: best first.
    let order: Vec<Uuid> = [0, 1, 3, 2].iter().map(|&i| ids[i]).collect();
    assert_eq!(hit_ids(&hits), order, "ranked by MaxSim: {scored:?}");
    let ragged = Tokens {
        dim: DIM,
        rows: vec![1.0; DIM + 1],
    };
    match store
        .query(Query::late(ragged, &ids, &Filter::tenant(t)))
        .await
    {
        Err(StoreError::Invalid { what, .. }) => assert_eq!(what, "query tokens"),
        other => panic!("ragged query tokens are refused as invalid, got {other:?}"),
    }
}

async fn native_hybrid_fuses_dense_and_lexical_with_qdrant_rrf(store: &dyn Store) {
    // `both` is first by cosine and by BM25; `near` only by cosine (second);
    // `word` only holds the term; another tenant's copy of `both` is out.
    let t = "native";
    let point = |text: &str, dense: Vec<f32>, tenant: &str| Point {
        memory: memory(tenant, text),
        dense,
        sparse: Some(trine_core::sparse::encode_text(text, Fold::ASCII)),
        tokens: None,
    };
    let both = point("quasar quasar notes", axis(1), t);
    let near = point(
        "plain notes",
        vec![0.9, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        t,
    );
    let word = point("quasar filler text here", axis(2), t);
    let other = point("quasar quasar notes", axis(1), "native-other");
    let ids = [both.memory.id, near.memory.id, word.memory.id];
    store
        .upsert(vec![both, near, word, other])
        .await
        .expect("upsert");
    let filter = Filter::tenant(t);
    let mut query_dense = axis(1);
    query_dense[0] = 0.5;
    let scoring = text_scoring(store).await;
    if !scoring {
        is_unsupported(
            store
                .query(Query::native_hybrid(
                    query_dense.clone(),
                    NativeLexical::Bm25("quasar".into()),
                    &filter,
                    10,
                    61,
                    10,
                ))
                .await,
        );
    }
    let bm25 = scoring.then(|| NativeLexical::Bm25("quasar".into()));
    let sparse = NativeLexical::Sparse(trine_core::sparse::encode_query("quasar", Fold::ASCII));
    for lexical in bm25.into_iter().chain([sparse]) {
        let hits = store
            .query(Query::native_hybrid(
                query_dense.clone(),
                lexical.clone(),
                &filter,
                10,
                61,
                10,
            ))
            .await
            .expect("native hybrid");
        assert_eq!(hits.len(), 3, "{lexical:?}: {hits:?}");
        assert_eq!(hits[0].id, ids[0], "{lexical:?}: {hits:?}");
        // Qdrant's RRF counts from 0: first in both lists with k = 61 is 2/61.
        assert!(
            (f64::from(hits[0].score) - 2.0 / 61.0).abs() < 1e-6,
            "{lexical:?}: {}",
            hits[0].score
        );
        assert!(hits.iter().all(|h| h.memory.is_none()));
        let found: BTreeSet<Uuid> = hits.iter().map(|h| h.id).collect();
        assert_eq!(found, ids.into_iter().collect(), "{lexical:?}");
        // Asked for them, the hits come with their memories, same order.
        let read = store
            .query(
                Query::native_hybrid(query_dense.clone(), lexical.clone(), &filter, 10, 61, 10)
                    .with_payload(PayloadRead::Memory),
            )
            .await
            .expect("native hybrid with payloads");
        let order: Vec<Uuid> = read.iter().map(|h| h.id).collect();
        let want: Vec<Uuid> = hits.iter().map(|h| h.id).collect();
        assert_eq!(order, want, "{lexical:?}");
        assert!(
            read.iter().all(|h| h
                .memory
                .as_ref()
                .is_some_and(|m| m.id == h.id && !m.text.is_empty())),
            "{lexical:?}: {read:?}"
        );
    }
    let err = store
        .query(Query::native_hybrid(
            vec![1.0],
            NativeLexical::Bm25("quasar".into()),
            &filter,
            10,
            61,
            10,
        ))
        .await
        .expect_err("a wrong dimension is refused");
    assert!(matches!(err, StoreError::DimensionMismatch { .. }), "{err}");
}

async fn bm25_ranks_the_rare_term_first_with_idf_within_the_tenant(store: &dyn Store) {
    // In tenant A, `zephyr` is rare (1 of 5) and `common` is common (4 of 5).
    let a = "bm25-a";
    let rare = memory(a, "zephyr report filler");
    let others = [
        "common report filler",
        "common notes filler",
        "common notes stuff",
        "common words filler",
    ]
    .map(|text| memory(a, text));
    put(store, [vec![rare.clone()], others.to_vec()].concat()).await;
    let filter = Filter::tenant(a);
    let query = "zephyr common";
    if !text_scoring(store).await {
        is_unsupported(store.query(Query::text(query, &filter, 10)).await);
        return;
    }
    let before = store
        .query(Query::text(query, &filter, 10))
        .await
        .expect("text query");
    assert_eq!(
        before.len(),
        5,
        "every point with a query term is ranked: {before:?}"
    );
    assert_eq!(
        before[0].id, rare.id,
        "the point with the rare term ranks first: {before:?}"
    );

    // In tenant B `zephyr` is everywhere, in longer texts. Were document
    // frequencies (or average length) taken over the whole collection,
    // `zephyr` would become the common term and A's ranking would flip.
    let b: Vec<Memory> = (0..20)
        .map(|i| memory("bm25-b", &format!("zephyr zephyr alpha beta gamma {i}")))
        .collect();
    put(store, b).await;
    let after = store
        .query(Query::text(query, &filter, 10))
        .await
        .expect("text query");
    assert_eq!(
        hit_ids(&after),
        hit_ids(&before),
        "another tenant does not change the ranking"
    );
    for (x, y) in before.iter().zip(&after) {
        assert!(
            (x.score - y.score).abs() < 1e-4,
            "another tenant does not change the scores: {before:?} vs {after:?}"
        );
    }
    let hits = store
        .query(Query::text("zephyr", &filter, 10).with_payload(PayloadRead::Memory))
        .await
        .expect("text query");
    assert_eq!(hit_ids(&hits), vec![rare.id], "only tenant A's point");
    assert_eq!(hits[0].memory.as_ref(), Some(&rare), "payload when asked");
}

async fn sparse_query_ranks_with_idf_within_the_tenant(store: &dyn Store) {
    let a = "sparse-a";
    let put_sparse = |tenant: &str, pairs: &[(u32, f32)]| Point {
        memory: memory(tenant, "sparse"),
        dense: axis(0),
        sparse: Some(sparse(pairs)),
        tokens: None,
    };
    // In tenant A, dimension 1 is rare (1 of 5), dimension 2 common (4 of 5).
    let mut rare = put_sparse(a, &[(1, 1.0)]);
    rare.memory.source = Some("notes/rare.md".to_string());
    let rare_id = rare.memory.id;
    let mut points = vec![rare];
    points.extend((0..4).map(|_| put_sparse(a, &[(2, 1.0)])));
    points.push(Point {
        sparse: None,
        ..put_sparse(a, &[])
    });
    store.upsert(points).await.expect("upsert");
    // In tenant B, dimension 1 is everywhere.
    store
        .upsert(
            (0..20)
                .map(|_| put_sparse("sparse-b", &[(1, 1.0)]))
                .collect(),
        )
        .await
        .expect("upsert");

    let filter = Filter::tenant(a);
    let hits = store
        .query(Query::sparse(sparse(&[(1, 1.0), (2, 1.0)]), &filter, 10))
        .await
        .expect("sparse query");
    assert_eq!(
        hits.len(),
        5,
        "points sharing a dimension, not the one without: {hits:?}"
    );
    assert_eq!(
        hits[0].id, rare_id,
        "the rare dimension ranks first, IDF within the tenant: {hits:?}"
    );
    let only = store
        .query(Query::sparse(sparse(&[(1, 1.0)]), &filter, 10).with_payload(PayloadRead::Memory))
        .await
        .expect("sparse query");
    assert_eq!(
        hit_ids(&only),
        vec![rare_id],
        "only tenant A's point of dimension 1"
    );
    assert!(only[0].memory.is_some(), "payload when asked");
    assert_eq!(only[0].source.as_deref(), Some("notes/rare.md"));
    // The source alone: what the verbatim check needs of a hit, not its text.
    let sources = store
        .query(Query::sparse(sparse(&[(1, 1.0)]), &filter, 10).with_payload(PayloadRead::Source))
        .await
        .expect("sparse query");
    assert_eq!(
        (sources[0].memory.as_ref(), sources[0].source.as_deref()),
        (None, Some("notes/rare.md")),
        "the source without the memory"
    );
    let bare = &hits[0];
    assert_eq!(
        (bare.memory.as_ref(), bare.source.as_ref()),
        (None, None),
        "nothing read"
    );
}

async fn term_scroll_reads_the_sparse_encoding_and_source_only(store: &dyn Store) {
    let t = "term-scroll";
    let text = "billing retry billing";
    let encoded = Point {
        sparse: Some(trine_core::sparse::encode_text(text, Fold::ASCII)),
        ..point(Memory {
            source: Some("git/billing.md".into()),
            ..memory(t, text)
        })
    };
    let plain = point(memory(t, "billing without a sparse vector"));
    let other = Point {
        sparse: Some(sparse(&[(1, 1.0)])),
        ..point(memory("term-scroll-other", "billing elsewhere"))
    };
    let want = [
        (
            encoded.memory.id,
            encoded.sparse.clone(),
            encoded.memory.source.clone(),
        ),
        (plain.memory.id, None, None),
    ];
    store
        .upsert(vec![encoded, plain, other])
        .await
        .expect("upsert");

    let filter = Filter {
        all_terms: vec!["billing".into()],
        ..Filter::tenant(t)
    };
    let mut got = Vec::new();
    let mut offset = None;
    loop {
        let page = store
            .scroll_terms(&filter, 1, offset, true)
            .await
            .expect("scroll_terms");
        assert!(page.points.len() <= 1, "a page holds at most the limit");
        got.extend(page.points);
        match page.next_offset {
            Some(next) => offset = Some(next),
            None => break,
        }
    }
    let ids: Vec<Uuid> = got.iter().map(|p| p.id).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "ascending point-id order");
    assert_eq!(
        got.len(),
        2,
        "the tenant's two points holding the term: {got:?}"
    );
    for (id, tf, source) in want.clone() {
        let p = got.iter().find(|p| p.id == id).expect("listed");
        assert_eq!(
            p.tf.as_deref().map(|t| t.to_vector()).as_ref(),
            tf.as_ref(),
            "the sparse encoding as written"
        );
        assert_eq!(p.source, source, "the source");
    }
    let unsourced = store
        .scroll_terms(&filter, 10, None, false)
        .await
        .expect("scroll_terms without sources")
        .points;
    assert_eq!(unsourced.len(), 2, "{unsourced:?}");
    for p in &unsourced {
        let (_, tf, _) = want.iter().find(|(id, ..)| *id == p.id).expect("listed");
        assert_eq!(
            p.tf.as_deref().map(|t| t.to_vector()).as_ref(),
            tf.as_ref(),
            "the sparse encoding, without the source"
        );
        assert_eq!(p.source, None, "no source read");
    }
    let err = store
        .scroll_terms(&filter, 0, None, true)
        .await
        .expect_err("limit 0");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
}

async fn missing_sparse_pages_every_tenant_in_id_order(store: &dyn Store) {
    let before = count_missing(store).await;
    let with = |tenant: &str, text: &str, vector: Option<SparseVector>| Point {
        sparse: vector,
        ..point(memory(tenant, text))
    };
    let a = Memory {
        project: Some("p".into()),
        metadata: json!({"k": 1}).as_object().cloned(),
        ..memory("backfill-a", "no sparse yet")
    };
    let unencoded = vec![
        point(a.clone()),
        with("backfill-a", "no sparse either", None),
        with("backfill-b", "another tenant", None),
    ];
    let mine: BTreeSet<Uuid> = unencoded.iter().map(|p| p.memory.id).collect();
    let encoded = with("backfill-a", "encoded", Some(sparse(&[(1, 1.0)])));
    let no_tokens = with("backfill-b", "?!", Some(sparse(&[])));
    let (encoded_id, no_tokens_id) = (encoded.memory.id, no_tokens.memory.id);
    let mut points = unencoded;
    points.extend([encoded, no_tokens]);
    store.upsert(points).await.expect("upsert");

    assert_eq!(
        count_missing(store).await,
        before + 3,
        "the points written without sparse, of both tenants, are counted"
    );
    let listed = missing(store, 2).await;
    let ids: Vec<Uuid> = listed.iter().map(|m| m.id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "pages follow ascending point-id order, each point once"
    );
    assert_eq!(ids.len() as u64, before + 3, "listed as many as counted");
    assert!(
        mine.iter().all(|id| ids.contains(id)),
        "every point without sparse is listed, whatever its tenant"
    );
    assert!(
        !ids.contains(&encoded_id),
        "a point with a sparse vector is not listed"
    );
    assert!(
        !ids.contains(&no_tokens_id),
        "an empty sparse vector (a text without tokens) counts as encoded"
    );
    assert!(
        listed.contains(&a),
        "missing_sparse returns the memory as written"
    );
    let all: Vec<Uuid> = scanned(store, Scan::All, 3)
        .await
        .iter()
        .map(|m| m.id)
        .collect();
    assert!(
        all.windows(2).all(|w| w[0] < w[1]),
        "a scan of all points follows ascending point-id order"
    );
    assert!(
        all.contains(&encoded_id) && all.contains(&no_tokens_id) && all.contains(&a.id),
        "a scan of all points lists encoded and unencoded points alike"
    );
    let err = store
        .scan(Scan::MissingSparse, 0, None)
        .await
        .expect_err("limit 0");
    assert!(
        matches!(err, StoreError::Invalid { .. }),
        "a limit of 0 is refused: {err}"
    );
}

async fn set_sparse_fills_only_the_sparse_vector(store: &dyn Store) {
    let t = "fill";
    let a = Memory {
        kind: Some("note".into()),
        metadata: json!({"lang": "en"}).as_object().cloned(),
        ..memory(t, "alpha text")
    };
    let b = memory(t, "beta text");
    let c = memory(t, "?!");
    let dense = |m: &Memory, i: usize| Point {
        memory: m.clone(),
        dense: axis(i),
        sparse: None,
        tokens: None,
    };
    store
        .upsert(vec![dense(&a, 2), dense(&b, 3), dense(&c, 4)])
        .await
        .expect("upsert");
    let before = count_missing(store).await;
    let filter = Filter::tenant(t);
    let near =
        |i| store.query(Query::dense(axis(i), &filter, 10).with_payload(PayloadRead::Memory));
    let (near_a, near_b) = (near(2).await.expect("dense"), near(3).await.expect("dense"));

    store
        .set_sparse(vec![
            (a.id, sparse(&[(7, 1.0)])),
            (b.id, sparse(&[(8, 2.0), (7, 0.5)])),
            (c.id, sparse(&[])),
        ])
        .await
        .expect("set_sparse");
    assert_eq!(
        count_missing(store).await,
        before - 3,
        "no longer missing, the empty vector included"
    );
    let listed = missing_ids(store).await;
    assert!(
        [a.id, b.id, c.id].iter().all(|id| !listed.contains(id)),
        "no longer listed"
    );
    assert_eq!(
        store.get(&[a.id, b.id, c.id]).await.expect("get"),
        vec![a.clone(), b.clone(), c.clone()],
        "the payload is unchanged"
    );
    assert_eq!(
        near(2).await.expect("dense"),
        near_a,
        "the dense vector is unchanged"
    );
    assert_eq!(
        near(3).await.expect("dense"),
        near_b,
        "the dense vector is unchanged"
    );
    let hits = store
        .query(Query::sparse(sparse(&[(7, 1.0)]), &filter, 10).with_payload(PayloadRead::Memory))
        .await
        .expect("sparse query");
    assert_eq!(
        hit_ids(&hits).into_iter().collect::<BTreeSet<_>>(),
        set(&[a.id, b.id]),
        "the sparse space finds the filled points, not the empty one: {hits:?}"
    );
    let got: Vec<Memory> = hits.into_iter().filter_map(|h| h.memory).collect();
    assert!(got.contains(&a), "hits carry the payload as written");
    store
        .set_sparse(vec![])
        .await
        .expect("set_sparse of nothing");
}

async fn set_sparse_skips_unknown_ids_and_is_repeatable(store: &dyn Store) {
    let t = "fill-again";
    let ids = put(store, vec![memory(t, "one"), memory(t, "two")]).await;
    let unknown = Uuid::new_v4();
    let before = count_missing(store).await;
    let vectors = vec![
        (ids[0], sparse(&[(3, 1.0)])),
        (unknown, sparse(&[(3, 1.0)])),
        (ids[1], sparse(&[(4, 1.0)])),
    ];
    store
        .set_sparse(vectors.clone())
        .await
        .expect("set_sparse with an unknown id");
    assert!(
        store.get(&[unknown]).await.expect("get").is_empty(),
        "an unknown id is not created"
    );
    assert_eq!(count(store, &Filter::tenant(t)).await, 2, "nothing created");
    assert_eq!(count_missing(store).await, before - 2, "both filled");
    let filter = Filter::tenant(t);
    let once = store
        .query(Query::sparse(sparse(&[(3, 1.0), (4, 1.0)]), &filter, 10))
        .await
        .expect("sparse query");
    store.set_sparse(vectors).await.expect("set_sparse again");
    assert_eq!(count_missing(store).await, before - 2, "still filled");
    assert_eq!(count(store, &filter).await, 2, "still two points");
    let twice = store
        .query(Query::sparse(sparse(&[(3, 1.0), (4, 1.0)]), &filter, 10))
        .await
        .expect("sparse query");
    assert_eq!(hit_ids(&once), hit_ids(&twice), "the same answer");
    assert_eq!(once.len(), 2, "both found: {once:?}");
}

async fn upserting_without_sparse_makes_a_point_missing_again(store: &dyn Store) {
    let m = memory("refill", "encoded then replaced");
    store
        .upsert(vec![Point {
            sparse: Some(sparse(&[(5, 1.0)])),
            ..point(m.clone())
        }])
        .await
        .expect("upsert with sparse");
    let before = count_missing(store).await;
    assert!(!missing_ids(store).await.contains(&m.id), "encoded");
    put(store, vec![m.clone()]).await;
    assert_eq!(
        count_missing(store).await,
        before + 1,
        "a re-upsert without sparse drops the sparse vector"
    );
    assert!(missing_ids(store).await.contains(&m.id), "listed again");
    let hits = store
        .query(Query::sparse(
            sparse(&[(5, 1.0)]),
            &Filter::tenant("refill"),
            10,
        ))
        .await
        .expect("sparse query");
    assert!(hits.is_empty(), "the sparse space no longer finds it");
}

async fn term_gate_and_phrase_filters(store: &dyn Store) {
    let t = "terms";
    let ms = [
        "the quick brown fox",
        "Quick thinking saves",
        "brown bear",
        "fox brown QUICK",
    ]
    .map(|s| memory(t, s));
    // The phrase in the source alone, found by the source's phrase index.
    let sourced = Memory {
        source: Some("notes/Brown FOX.md".into()),
        ..memory(t, "lunch notes")
    };
    put(store, ms.iter().cloned().chain([sourced.clone()]).collect()).await;
    let [fox, thinking, bear, reversed] = ms.map(|m| m.id);
    let sourced = sourced.id;
    let base = Filter::tenant(t);
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let table: Vec<(&str, Filter, Vec<Uuid>)> = vec![
        (
            "all of quick, brown",
            Filter {
                all_terms: strings(&["quick", "brown"]),
                ..base.clone()
            },
            vec![fox, reversed],
        ),
        (
            "any of bear, thinking",
            Filter {
                any_terms: Some(strings(&["bear", "thinking"])),
                ..base.clone()
            },
            vec![thinking, bear],
        ),
        (
            "any of one term",
            Filter {
                any_terms: Some(strings(&["fox"])),
                ..base.clone()
            },
            vec![fox, reversed],
        ),
        (
            "phrase in capitals",
            Filter {
                phrase: Some("QUICK BROWN".into()),
                ..base.clone()
            },
            vec![fox],
        ),
        (
            "phrase brown fox",
            Filter {
                phrase: Some("brown fox".into()),
                ..base.clone()
            },
            vec![fox],
        ),
        (
            "phrase brown fox in the source",
            Filter {
                source_phrase: Some("brown fox".into()),
                ..base.clone()
            },
            vec![sourced],
        ),
        (
            "phrase not adjacent",
            Filter {
                phrase: Some("quick fox".into()),
                ..base.clone()
            },
            vec![],
        ),
        (
            "phrase reversed",
            Filter {
                phrase: Some("brown quick".into()),
                ..base.clone()
            },
            vec![reversed],
        ),
        (
            "gate and all terms",
            Filter {
                any_terms: Some(strings(&["bear", "fox"])),
                all_terms: strings(&["quick"]),
                ..base.clone()
            },
            vec![fox, reversed],
        ),
        (
            "brown without quick",
            Filter {
                all_terms: strings(&["brown"]),
                no_terms: strings(&["quick"]),
                ..base.clone()
            },
            vec![bear],
        ),
        (
            "brown without bear or thinking, in capitals",
            Filter {
                all_terms: strings(&["brown"]),
                no_terms: strings(&["BEAR", "thinking"]),
                ..base.clone()
            },
            vec![fox, reversed],
        ),
        (
            "without a term no point holds",
            Filter {
                all_terms: strings(&["fox"]),
                no_terms: strings(&["nowhere"]),
                ..base.clone()
            },
            vec![fox, reversed],
        ),
        (
            "among some points",
            Filter {
                ids: Some(vec![fox, bear, Uuid::new_v4()]),
                ..base.clone()
            },
            vec![fox, bear],
        ),
        (
            "a phrase among some points",
            Filter {
                phrase: Some("brown fox".into()),
                ids: Some(vec![reversed, bear]),
                ..base.clone()
            },
            vec![],
        ),
        (
            "among none",
            Filter {
                ids: Some(vec![]),
                ..base.clone()
            },
            vec![],
        ),
    ];
    for (name, filter, want) in table {
        assert_eq!(ids(store, &filter).await, set(&want), "filter: {name}");
    }
    // Another tenant's point is not reached by naming it.
    let other = put(store, vec![memory("terms-other", "the quick brown fox")]).await;
    let among = Filter {
        ids: Some(other.clone()),
        ..base.clone()
    };
    assert!(
        ids(store, &among).await.is_empty(),
        "ids stay within the tenant"
    );
    // More ids than allowed are refused, not read.
    let many = Filter {
        ids: Some((0..=MAX_FILTER_IDS as u128).map(Uuid::from_u128).collect()),
        ..base.clone()
    };
    let err = store.scroll(&many, 10, None).await.expect_err("refused");
    assert!(err.to_string().contains("ids names"), "{err}");
}

/// A batch of reads finds, read by read, what the scrolls find: the same
/// points in the same order, the same next offset, the same memories.
async fn a_batch_reads_as_its_scrolls_do(store: &dyn Store, t: &str) {
    let texts = [
        "billing retry one",
        "billing retry two",
        "billing alone",
        "retry alone",
        "billing retry three",
    ];
    let points: Vec<Point> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| Point {
            sparse: Some(trine_core::sparse::encode_text(text, Fold::ASCII)),
            ..point(Memory {
                source: Some(format!("notes/{i}.md")),
                ..memory(t, text)
            })
        })
        .collect();
    store.upsert(points).await.unwrap();
    put(
        store,
        vec![memory(&format!("{t}-other"), "billing retry elsewhere")],
    )
    .await;
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let billing = Filter {
        all_terms: strings(&["billing"]),
        ..Filter::tenant(t)
    };
    let retry_not_billing = Filter {
        all_terms: strings(&["retry"]),
        no_terms: strings(&["billing"]),
        ..Filter::tenant(t)
    };
    let phrase = Filter {
        phrase: Some("billing retry".into()),
        ..Filter::tenant(t)
    };
    let reads = vec![
        BatchRead::Terms {
            filter: billing.clone(),
            limit: 2,
            source: true,
        },
        BatchRead::Memories {
            filter: phrase.clone(),
            limit: 10,
        },
        BatchRead::Terms {
            filter: billing.clone(),
            limit: 4,
            source: false,
        },
        BatchRead::Terms {
            filter: retry_not_billing.clone(),
            limit: 10,
            source: false,
        },
        BatchRead::Memories {
            filter: phrase.clone(),
            limit: 1,
        },
    ];
    let found = store.read_batch(&reads).await.unwrap();
    assert_eq!(found.len(), reads.len());
    for (read, page) in reads.iter().zip(found) {
        match read {
            BatchRead::Terms {
                filter,
                limit,
                source,
            } => {
                let want = store
                    .scroll_terms(filter, *limit, None, *source)
                    .await
                    .unwrap();
                assert_eq!(page.terms(), Some(want), "{read:?}");
            }
            BatchRead::Memories { filter, limit } => {
                let want = store.scroll(filter, *limit, None).await.unwrap().memories;
                assert_eq!(page.memories(), Some(want), "{read:?}");
            }
        }
    }
    // What the reads find, spelled out: two of billing's four, and where to go on.
    let page = store
        .read_batch(&reads[..1])
        .await
        .unwrap()
        .remove(0)
        .terms()
        .unwrap();
    assert_eq!(page.points.len(), 2);
    assert!(page.next_offset.is_some(), "billing has two points more");
    let none = store
        .read_batch(&[BatchRead::Terms {
            filter: retry_not_billing,
            limit: 10,
            source: false,
        }])
        .await
        .unwrap()
        .remove(0)
        .terms()
        .unwrap();
    assert_eq!(none.points.len(), 1, "retry alone");
    assert_eq!(none.next_offset, None);
    assert!(store.read_batch(&[]).await.unwrap().is_empty());
}

async fn an_empty_gate_is_refused(store: &dyn Store) {
    let filter = Filter {
        any_terms: Some(vec![]),
        ..Filter::tenant("terms")
    };
    let is_invalid = |r: Result<(), StoreError>, what: &str| match r {
        Err(StoreError::Invalid { .. }) => {}
        other => panic!("{what} with an empty gate is refused as invalid, got {other:?}"),
    };
    is_invalid(store.count(&filter).await.map(drop), "count");
    is_invalid(store.scroll(&filter, 10, None).await.map(drop), "scroll");
    is_invalid(
        store
            .query(Query::dense(axis(0), &filter, 10))
            .await
            .map(drop),
        "dense query",
    );
    is_invalid(
        store.query(Query::text("fox", &filter, 10)).await.map(drop),
        "text query",
    );
    is_invalid(
        store
            .query(Query::sparse(sparse(&[(1, 1.0)]), &filter, 10))
            .await
            .map(drop),
        "sparse query",
    );
}

/// Both stores refuse the same bad queries with the same error (the
/// shared `Query::check`, before any work), and answer an empty sparse
/// vector with no hits.
async fn bad_queries_are_refused_alike(store: &dyn Store) {
    let filter = Filter::tenant("terms");
    let mismatched = SparseVector {
        indices: vec![1, 2],
        values: vec![1.0],
    };
    let native =
        |lexical, prefetch| Query::native_hybrid(axis(0), lexical, &filter, prefetch, 61, 10);
    let refused = [
        (Query::dense(axis(0), &filter, 0), "limit"),
        (Query::text("fox", &filter, 0), "limit"),
        (Query::sparse(sparse(&[(1, 1.0)]), &filter, 0), "limit"),
        (Query::text(" \t", &filter, 10), "text query"),
        (
            Query::sparse(mismatched.clone(), &filter, 10),
            "sparse vector",
        ),
        (native(NativeLexical::Bm25("fox".into()), 0), "prefetch"),
        (native(NativeLexical::Bm25(String::new()), 10), "text query"),
        (
            native(NativeLexical::Sparse(mismatched), 10),
            "sparse vector",
        ),
    ];
    for (query, field) in refused {
        let op = query.ranking.op();
        match store.query(query).await {
            Err(StoreError::Invalid { what, .. }) => assert_eq!(what, field, "{op}"),
            other => panic!("{op}: a bad {field} is refused as invalid, got {other:?}"),
        }
    }
    let none = store
        .query(Query::sparse(sparse(&[]), &filter, 10))
        .await
        .expect("an empty sparse vector");
    assert!(
        none.is_empty(),
        "an empty sparse vector ranks nothing: {none:?}"
    );
}

/// Answers of a few reads across the checks' tenants, to compare around optimize.
async fn probe(store: &dyn Store) -> Vec<String> {
    let mut out = Vec::new();
    for tenant in [
        "counts", "validity", "source", "created", "scroll", "terms", "bm25-a", "sparse-a",
    ] {
        let filter = Filter::tenant(tenant);
        out.push(format!("{tenant} count {}", count(store, &filter).await));
        out.push(format!("{tenant} ids {:?}", ids(store, &filter).await));
    }
    let dense = store
        .query(Query::dense(axis(0), &Filter::tenant("dense"), 10))
        .await
        .expect("dense");
    out.push(format!("dense {:?}", hit_ids(&dense)));
    let text = store
        .query(Query::text("zephyr common", &Filter::tenant("bm25-a"), 10))
        .await;
    match text {
        Ok(text) => out.push(format!("text {:?}", hit_ids(&text))),
        Err(e) => out.push(format!("text refused: {e}")),
    }
    let phrase = Filter {
        phrase: Some("quick brown".into()),
        ..Filter::tenant("terms")
    };
    out.push(format!("phrase {}", count(store, &phrase).await));
    out.push(format!("missing sparse {:?}", missing_ids(store).await));
    let fill = store
        .query(Query::sparse(
            sparse(&[(7, 1.0)]),
            &Filter::tenant("fill"),
            10,
        ))
        .await
        .expect("sparse");
    out.push(format!("fill {:?}", hit_ids(&fill)));
    out
}

async fn optimize_keeps_every_answer(store: &dyn Store) {
    let before = probe(store).await;
    let started = Instant::now();
    store.optimize().await.expect("optimize");
    eprintln!(
        "optimize of the contract collection ({}): {:?}",
        store.backend(),
        started.elapsed()
    );
    assert_eq!(probe(store).await, before, "optimize changes no answer");
}

// ---------------------------------------------------------------- edge only

/// Deterministic pseudo-random unit vectors of `dim` dimensions (no rand
/// crate needed).
fn pseudo_vector(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-6);
    v.into_iter().map(|a| a / norm).collect()
}

/// `n` memories of one tenant with vectors of `dim` dimensions.
fn bulk(tenant: &str, n: u64, dim: usize) -> Vec<Point> {
    (0..n)
        .map(|i| Point {
            memory: Memory {
                created_at: Some(ts("2026-01-01T00:00:00Z") + chrono::Duration::minutes(i as i64)),
                ..memory(
                    tenant,
                    &format!("bulk memory number {i} about topic {}", i % 17),
                )
            },
            dense: pseudo_vector(i, dim),
            sparse: Some(sparse(&[((i % 50) as u32, 1.0), (1000, 0.5)])),
            tokens: None,
        })
        .collect()
}

/// The ten nearest points of tenant `opt`.
async fn nearest(store: &dyn Store, query: Vec<f32>) -> Vec<Uuid> {
    let hits = store
        .query(Query::dense(query, &Filter::tenant("opt"), 10))
        .await
        .expect("dense query");
    hit_ids(&hits)
}

async fn open_ready(dir: &Path) -> EdgeStore {
    let store = EdgeStore::open(dir, "memories").expect("open");
    store.ensure_collection(&spec()).await.expect("ensure");
    store
}

#[tokio::test]
async fn edge_reopen_after_drop_keeps_every_point() {
    let dir = tempfile::tempdir().expect("tempdir");
    let points = bulk("reopen", 600, DIM);
    let sample: Vec<Memory> = points
        .iter()
        .step_by(97)
        .map(|p| p.memory.clone())
        .collect();
    {
        let store = open_ready(dir.path()).await;
        for batch in points.chunks(trine_store::UPSERT_BATCH) {
            store.upsert(batch.to_vec()).await.expect("upsert");
        }
    }
    let started = Instant::now();
    let store = EdgeStore::open(dir.path(), "memories").expect("reopen");
    eprintln!(
        "reopen of 600 points (not optimized): {:?}",
        started.elapsed()
    );
    let info = store
        .info()
        .await
        .expect("info")
        .expect("exists after reopen");
    assert_eq!(info.points, 600, "every point after reopen");
    assert_eq!(
        info.embedder,
        Some(embedder()),
        "the embedder survives reopen"
    );
    assert_eq!(count(&store, &Filter::tenant("reopen")).await, 600);
    let ids: Vec<Uuid> = sample.iter().map(|m| m.id).collect();
    assert_eq!(
        store.get(&ids).await.expect("get"),
        sample,
        "points read back whole"
    );
    let again = store
        .ensure_collection(&spec())
        .await
        .expect("ensure after reopen");
    assert_eq!(
        again.points, 600,
        "ensure on a reopened collection keeps it"
    );

    store.optimize().await.expect("optimize");
    drop(store);
    let started = Instant::now();
    let store = EdgeStore::open(dir.path(), "memories").expect("reopen");
    eprintln!("reopen of 600 points (optimized): {:?}", started.elapsed());
    assert_eq!(
        count(&store, &Filter::tenant("reopen")).await,
        600,
        "every point after optimize and reopen"
    );
}

#[tokio::test]
async fn edge_set_sparse_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = {
        let store = open_ready(dir.path()).await;
        let ids = put(&store, vec![memory("t", "a"), memory("t", "b")]).await;
        store
            .set_sparse(vec![(ids[0], sparse(&[(1, 1.0)]))])
            .await
            .expect("set_sparse");
        ids
    };
    let store = EdgeStore::open(dir.path(), "memories").expect("reopen");
    assert_eq!(count_missing(&store).await, 1, "one still missing");
    assert_eq!(missing_ids(&store).await, set(&ids[1..]), "the other one");
    let hits = store
        .query(Query::sparse(sparse(&[(1, 1.0)]), &Filter::tenant("t"), 10))
        .await
        .expect("sparse query");
    assert_eq!(hit_ids(&hits), ids[..1].to_vec(), "the sparse vector kept");
}

#[tokio::test]
async fn edge_a_second_open_of_a_locked_collection_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = open_ready(dir.path()).await;
    match EdgeStore::open(dir.path(), "memories") {
        Err(StoreError::Locked(path)) => {
            assert!(
                path.ends_with("memories"),
                "the locked directory is named: {path:?}"
            )
        }
        Err(other) => panic!("a second open is refused as Locked, got {other}"),
        Ok(_) => panic!("a second open of a locked collection is refused"),
    }
    let other = EdgeStore::open(dir.path(), "other").expect("another collection opens");
    drop(other);
    drop(first);
    let reopened =
        EdgeStore::open(dir.path(), "memories").expect("open after the first is dropped");
    assert!(reopened.info().await.expect("info").is_some());
}

#[tokio::test]
async fn edge_opening_a_missing_collection_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EdgeStore::open(dir.path(), "later").expect("open");
    assert!(store.info().await.expect("info").is_none());
    let err = store
        .get(&[Uuid::new_v4()])
        .await
        .expect_err("no collection");
    assert!(
        matches!(err, StoreError::NoCollection(ref name) if name == "later"),
        "{err}"
    );
    assert!(
        !dir.path().join("later").exists(),
        "nothing created before ensure"
    );
    let started = Instant::now();
    store.ensure_collection(&spec()).await.expect("ensure");
    eprintln!("creating an edge collection: {:?}", started.elapsed());
    for file in ["shard", "trine.json", "tenants.json", "lock"] {
        assert!(
            dir.path().join("later").join(file).exists(),
            "{file} after ensure"
        );
    }
    assert!(
        !dir.path().join("later/shard.tmp").exists(),
        "no temporary shard left"
    );
}

#[tokio::test]
async fn edge_refuses_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        EdgeStore::open(dir.path(), "a/b"),
        Err(StoreError::Invalid { .. })
    ));
    let store = open_ready(dir.path()).await;
    let err = store
        .query(Query::dense(axis(0), &Filter::tenant("t"), 0))
        .await
        .expect_err("limit 0");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    let err = store
        .count(&Filter::tenant(""))
        .await
        .expect_err("no tenant");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    let err = store
        .query(Query::dense(axis(0)[..4].to_vec(), &Filter::tenant("t"), 5))
        .await
        .expect_err("dim");
    assert!(matches!(err, StoreError::DimensionMismatch { .. }), "{err}");
    let bad_sparse = Point {
        sparse: Some(SparseVector {
            indices: vec![1, 2],
            values: vec![1.0],
        }),
        ..point(memory("t", "x"))
    };
    let err = store
        .upsert(vec![bad_sparse])
        .await
        .expect_err("bad sparse");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    let err = store
        .upsert(vec![point(memory("", "no tenant"))])
        .await
        .expect_err("no tenant");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
}

/// Optimize builds HNSW only past Edge's indexing threshold (10 MB of
/// vectors): 8,000 points of 384 dimensions (MiniLM's size) cross it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_optimize_keeps_reads_and_writes_working() {
    const BIG_DIM: usize = 384;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(EdgeStore::open(dir.path(), "big").expect("open"));
    let spec = CollectionSpec {
        embedder: EmbedderId {
            name: "minilm-sized".into(),
            dim: BIG_DIM,
        },
        fold: Fold::default(),
    };
    store.ensure_collection(&spec).await.expect("ensure");
    let n = 8_000;
    let started = Instant::now();
    for batch in bulk("opt", n, BIG_DIM).chunks(trine_store::UPSERT_BATCH) {
        store.upsert(batch.to_vec()).await.expect("upsert");
    }
    eprintln!(
        "upsert of {n} points ({BIG_DIM} dims) in batches of {}: {:?}",
        trine_store::UPSERT_BATCH,
        started.elapsed()
    );
    let filter = Filter {
        all_terms: vec!["topic".into(), "3".into()],
        ..Filter::tenant("opt")
    };
    let want_topic = count(store.as_ref(), &filter).await;
    // One point without a sparse vector and one with an empty one: optimize
    // keeps the first missing and the second encoded. Their dense vectors
    // are their own (a copy of another point's would blur the HNSW check).
    let unencoded: Vec<Point> = bulk("opt-sparse", 2, BIG_DIM)
        .into_iter()
        .zip([None, Some(sparse(&[]))])
        .enumerate()
        .map(|(i, (p, sparse))| Point {
            sparse,
            dense: pseudo_vector(2_000_000 + i as u64, BIG_DIM),
            ..p
        })
        .collect();
    let unencoded_id = unencoded[0].memory.id;
    store.upsert(unencoded).await.expect("upsert");
    // Queries: the vectors of some stored points (each must find itself
    // first) and some fresh ones. Exhaustive search before optimize is the
    // truth HNSW is measured against.
    let queries: Vec<Vec<f32>> = (0..20)
        .map(|i| pseudo_vector(if i % 2 == 0 { i * 397 } else { 1_000_000 + i }, BIG_DIM))
        .collect();
    let t = Instant::now();
    let mut exact = Vec::new();
    for q in &queries {
        exact.push(nearest(store.as_ref(), q.clone()).await);
    }
    eprintln!(
        "a dense query before optimize (exhaustive): {:?}",
        t.elapsed() / queries.len() as u32
    );

    let optimizing = {
        let store = store.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            store.optimize().await.expect("optimize");
            started.elapsed()
        })
    };
    let mut reads = 0;
    let mut writes = 0;
    let mut slowest_read = Duration::ZERO;
    let mut slowest_write = Duration::ZERO;
    let extra = bulk("opt-extra", 500, BIG_DIM);
    // Reads and writes go on for as long as optimize runs, and at least
    // twice; each waits on its own call, never on a timer.
    while !optimizing.is_finished() || reads < 2 {
        let t = Instant::now();
        assert_eq!(
            count(store.as_ref(), &filter).await,
            want_topic,
            "counts stay right during optimize"
        );
        reads += 1;
        slowest_read = slowest_read.max(t.elapsed());
        if let Some(p) = extra.get(writes) {
            let t = Instant::now();
            store
                .upsert(vec![p.clone()])
                .await
                .expect("upsert during optimize");
            writes += 1;
            slowest_write = slowest_write.max(t.elapsed());
        }
    }
    let took = optimizing.await.expect("optimize task");
    eprintln!(
        "optimize of {n} points: {took:?}; meanwhile {reads} counts (slowest {slowest_read:?}) \
         and {writes} upserts (slowest {slowest_write:?})"
    );
    assert!(reads > 1, "reads ran while optimize did");
    let info = store.info().await.expect("info").expect("exists");
    eprintln!(
        "after optimize: {} segments, {} points",
        info.segments, info.points
    );
    assert_eq!(
        info.points,
        n + 2 + writes as u64,
        "every point written before and during optimize"
    );
    assert_eq!(
        missing_ids(store.as_ref()).await,
        set(&[unencoded_id]),
        "after optimize, only the point written without sparse is missing"
    );
    assert_eq!(count_missing(store.as_ref()).await, 1);
    let t = Instant::now();
    let mut found = 0;
    let (mut own, mut among, mut first) = (0, 0, 0);
    for (i, (q, truth)) in queries.iter().zip(&exact).enumerate() {
        let got = nearest(store.as_ref(), q.clone()).await;
        if i % 2 == 0 {
            own += 1;
            among += usize::from(got.contains(&truth[0]));
            first += usize::from(got.first() == truth.first());
        }
        found += got.iter().filter(|id| truth.contains(id)).count();
    }
    // HNSW is approximate and its graph depends on the optimizer threads'
    // timing: a stored point's own vector finds it among the nearest in all
    // but at most one query, and first nearly always. (Asserting every
    // query failed once in CI: one of ten missed its own point.)
    assert!(
        among + 1 >= own,
        "a stored point's vector finds that point among the 10 nearest in {among} of {own} queries"
    );
    assert!(
        first * 10 >= own * 8,
        "a stored point's vector finds it first in {first} of {own} queries"
    );
    let recall = found as f64 / (10 * queries.len()) as f64;
    eprintln!(
        "a dense query after optimize (HNSW): {:?}, recall@10 {recall:.3} on uniform random vectors",
        t.elapsed() / queries.len() as u32
    );
    // Uniform random vectors are HNSW's hard case (0.93 measured at the
    // store's hnsw_ef); real embeddings cluster and do better.
    assert!(recall >= 0.8, "HNSW recall@10 {recall} after optimize");
    let t = Instant::now();
    assert_eq!(count(store.as_ref(), &filter).await, want_topic);
    eprintln!("a two-term count after optimize: {:?}", t.elapsed());
    drop(store);
    let t = Instant::now();
    let store = EdgeStore::open(dir.path(), "big").expect("reopen");
    eprintln!(
        "reopen of {} points (optimized): {:?}",
        n + 2 + writes as u64,
        t.elapsed()
    );
    drop(store);
}

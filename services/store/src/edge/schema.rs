//! What a trine collection is on Edge: the shard configuration, the payload
//! indexes, the recorded embedder (`trine.json`) and the info report.

use std::fs;
use std::io::Write;
use std::path::Path;

use qdrant_edge as qe;
use serde::{Deserialize, Serialize};

use super::SPARSE_TF_VECTOR;
use super::filter::path;
use crate::{
    CollectionSpec, DENSE_VECTOR, EmbedderId, FieldIndex, Fold, Language, PayloadIndex,
    PayloadSchema, Result, SPARSE_VECTOR, StoreError, TOKENS_VECTOR, TextIndexInfo, TimeFormat,
};

/// The file recording which embedder wrote a collection.
pub(super) const RECORD_FILE: &str = "trine.json";

/// The content of `trine.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    schema_version: u32,
    embedder: EmbedderId,
}

/// The embedder recorded in `dir`, or `None` when nothing is recorded.
pub(super) fn read_embedder(dir: &Path) -> Result<Option<EmbedderId>> {
    Ok(read_record(dir)?.map(|r| r.embedder))
}

/// The layout version recorded in `dir` (1 where there is no record: a
/// shard trine did not create).
pub(super) fn read_schema(dir: &Path) -> Result<u32> {
    Ok(read_record(dir)?.map_or(1, |r| r.schema_version))
}

/// Records the current layout version in `dir`, keeping the embedder.
pub(super) fn write_schema(dir: &Path) -> Result<()> {
    match read_embedder(dir)? {
        Some(embedder) => write_embedder(dir, &embedder),
        None => Ok(()),
    }
}

fn read_record(dir: &Path) -> Result<Option<Record>> {
    let path = dir.join(RECORD_FILE);
    let Some(bytes) = read_if_present(&path)? else {
        return Ok(None);
    };
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::invalid(
            "collection record",
            format!(
                "{} is not a trine record ({e}): restore or delete it",
                path.display()
            ),
        )
    })?;
    Ok(Some(record))
}

/// Records `embedder` in `dir` atomically: a temporary file, synced, renamed.
pub(super) fn write_embedder(dir: &Path, embedder: &EmbedderId) -> Result<()> {
    let record = Record {
        schema_version: crate::SCHEMA,
        embedder: embedder.clone(),
    };
    let json = serde_json::to_vec_pretty(&record)
        .map_err(|e| StoreError::Backend(format!("cannot encode the collection record: {e}")))?;
    write_atomically(dir, RECORD_FILE, &json)
}

/// The bytes of the file at `path`, or `None` where there is none.
pub(super) fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StoreError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes `bytes` to `dir/name` atomically: a temporary file, synced,
/// renamed, the rename made durable.
pub(super) fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut file = fs::File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(bytes).map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    let target = dir.join(name);
    fs::rename(&tmp, &target).map_err(io(&target))?;
    sync_dir(dir)
}

/// Makes a rename in `dir` durable.
pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))
}

/// An i/o error on `path`.
pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + use<> {
    let path = path.to_path_buf();
    move |source| StoreError::Io { path, source }
}

/// The shard configuration of a new collection: `dense` (cosine), `sparse`
/// (IDF) and `sparse_tf` (the same vectors, no modifier:
/// [`SPARSE_TF_VECTOR`]), and the search threads capped to the cores.
pub(super) fn new_config(spec: &CollectionSpec) -> qe::EdgeConfig {
    let dense = qe::EdgeVectorParams::builder(spec.embedder.dim, qe::Distance::Cosine).build();
    let sparse = qe::EdgeSparseVectorParams::builder()
        .modifier(qe::Modifier::Idf)
        .build();
    let sparse_tf = qe::EdgeSparseVectorParams::builder().build();
    qe::EdgeConfig::builder()
        .vector(DENSE_VECTOR, dense)
        .vector(TOKENS_VECTOR, tokens_params(spec.embedder.dim))
        .sparse_vector(SPARSE_VECTOR, sparse)
        .sparse_vector(SPARSE_TF_VECTOR, sparse_tf)
        .max_search_threads(cores())
        .optimizers(optimizers())
        .build()
}

/// The optimizers' settings trine sets: segments up to
/// [`crate::MAX_SEGMENT_KB`]; the rest Qdrant's defaults.
fn optimizers() -> qe::EdgeOptimizersConfig {
    qe::EdgeOptimizersConfig {
        max_segment_size: Some(crate::MAX_SEGMENT_KB),
        ..Default::default()
    }
}

/// The `tokens` space ([`TOKENS_VECTOR`]): a multivector of the embedder's
/// dimension compared by MaxSim over dot products, in half precision on
/// disk, with no HNSW graph — late interaction scores the ids it is given,
/// never searches the space.
pub(super) fn tokens_params(dim: usize) -> qe::EdgeVectorParams {
    #[allow(deprecated)] // `on_disk`: `memory` says it
    let hnsw = qe::HnswIndexConfig {
        m: 0,
        ef_construct: 100,
        full_scan_threshold: 10_000,
        max_indexing_threads: 1,
        on_disk: None,
        memory: None,
        payload_m: Some(0),
        inline_storage: None,
    };
    qe::EdgeVectorParams::builder(dim, qe::Distance::Dot)
        .multivector_config(qe::MultiVectorConfig {
            comparator: qe::MultiVectorComparator::MaxSim,
        })
        .datatype(qe::VectorStorageDatatype::Float16)
        .memory(qe::Memory::Cold)
        .hnsw_config(hnsw)
        .build()
}

/// Whether the shard has the `tokens` space.
pub(super) fn has_tokens(config: &qe::EdgeConfig) -> bool {
    config
        .vectors
        .get(TOKENS_VECTOR)
        .is_some_and(|v| v.multivector_config.is_some())
}

/// Whether the shard has the `sparse_tf` space, without a modifier.
pub(super) fn has_sparse_tf(config: &qe::EdgeConfig) -> bool {
    config
        .sparse_vectors
        .get(SPARSE_TF_VECTOR)
        .is_some_and(|s| s.modifier.is_none_or(|m| m == qe::Modifier::None))
}

/// What `EdgeShard::load` is given: only the tunables trine sets, everything
/// else as the shard has it (a shard made before the segment cap takes it
/// at its next optimization).
pub(super) fn load_config() -> qe::EdgeConfig {
    qe::EdgeConfig::builder()
        .max_search_threads(cores())
        .optimizers(optimizers())
        .build()
}

/// The nice value of the engine's search threads: below the services'
/// threads (0), so that a gRPC hop, a fusion or a payload read of a search
/// nearly done gets a core at once instead of its share among every search
/// in flight. Measured at 385,000 memories (the scale corpus, static
/// embedder, `candidates`, in-process mesh, 16 searches in flight, 2 cores,
/// release build): the mesh overhead went from 6.3–6.9 to 1.0–1.2 ms p50,
/// the fusion hop from 5.4 to 0.8–1.0 ms, and throughput was no lower
/// (212–224 searches/s before, 211–243 after, in runs of 20–30 s).
pub(super) const SEARCH_NICE: i32 = 10;

/// Runs `load` on a thread of its own at [`SEARCH_NICE`], so that the search
/// threads the engine starts as it opens a shard inherit that priority (the
/// nice value is a thread's own on Linux, and a new thread takes its
/// creator's), or at the caller's own where that is lower already. The
/// calling thread's priority is untouched. Where the priority cannot be
/// set, the shard opens at the caller's, and the log says so.
pub(super) fn below_services<T: Send>(load: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("edge-open".to_string())
            .spawn_scoped(scope, || {
                below_services_here("the engine's search threads");
                load()
            })
            .map_err(|e| {
                StoreError::Backend(format!("cannot start a thread to open the shard: {e}"))
            })?
            .join()
            .map_err(|_| StoreError::Backend("opening the shard panicked".to_string()))?
    })
}

/// Sets the calling thread (and the threads it starts from now on) to
/// [`SEARCH_NICE`], or leaves it where it is lower already (`nice trine
/// ...`); where that fails, the log says that `what` runs at the services'
/// priority.
pub(super) fn below_services_here(what: &str) {
    let set = rustix::process::getpriority_process(None).and_then(|now| {
        if now < SEARCH_NICE {
            rustix::process::setpriority_process(None, SEARCH_NICE)
        } else {
            Ok(())
        }
    });
    if let Err(e) = set {
        tracing::warn!(
            error = %e,
            "{what} run at the services' priority: setting nice {SEARCH_NICE} failed"
        );
    }
}

/// One search thread per core: Edge's default of 4 × cores oversubscribes a
/// small machine (docs/design.md §12).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// A full-text index as trine's text and source copy have it: the `word`
/// tokenizer (the split of `trine_core::terms`), folded as `fold` says,
/// with phrase matching.
fn word_index(fold: Fold) -> qe::TextIndexParamsBuilder {
    let builder = qe::TextIndexParamsBuilder::new()
        .tokenizer(qe::TokenizerType::Word)
        .lowercase(true)
        .ascii_folding(fold.ascii_folding())
        .phrase_matching(true)
        .enable_hnsw(false);
    match fold.stemmer() {
        None => builder,
        Some(language) => builder.stemmer(stemmer(language)),
    }
}

/// Qdrant's Snowball stemmer for `language`.
fn stemmer(language: Language) -> qe::StemmingAlgorithm {
    let language = language
        .name()
        .parse::<qe::SnowballLanguage>()
        .unwrap_or(qe::SnowballLanguage::English);
    qe::StemmingAlgorithm::Snowball(qe::SnowballParams {
        r#type: qe::Snowball::Snowball,
        language,
    })
}

/// The language of an index's stemmer, where it stems in one trine knows.
fn stemmer_language(params: &qe::TextIndexParams) -> Option<Language> {
    match params.stemmer.as_ref()? {
        qe::StemmingAlgorithm::Snowball(p) => {
            format!("{:?}", p.language).to_lowercase().parse().ok()
        }
        qe::StemmingAlgorithm::Disabled(_) => None,
    }
}

/// The full-text index on the text: [`word_index`] with BM25 scoring.
pub(super) fn text_index(fold: Fold) -> qe::PayloadSchemaParams {
    qe::PayloadSchemaParams::Text(
        word_index(fold)
            .scoring(qe::TextScoringParams::default())
            .build(),
    )
}

/// The phrase index on the source's copy: [`word_index`], no scoring.
pub(super) fn phrase_index(fold: Fold) -> qe::PayloadSchemaParams {
    qe::PayloadSchemaParams::Text(word_index(fold).build())
}

/// Every payload index of a trine collection, the text index first, on the
/// keys of `layout`, the text folded as `fold` says; times get a datetime
/// index, or a float index when they are Unix numbers.
pub(super) fn payload_indexes(
    layout: &PayloadSchema,
    fold: Fold,
) -> Vec<(&str, qe::PayloadSchemaParams)> {
    layout
        .indexes()
        .into_iter()
        .map(|(key, index)| (key, index_params(index, layout.time_format, fold)))
        .collect()
}

/// The indexes of `layout` a collection lacks that an upgrade makes in
/// place (every one but the text's and the source copy's, which `trine
/// text-index` and a new collection make): `present` are the fields indexed.
pub(super) fn missing_indexes<'a>(
    layout: &'a PayloadSchema,
    present: &[PayloadIndex],
) -> Vec<(&'a str, qe::PayloadSchemaParams)> {
    layout
        .indexes()
        .into_iter()
        .filter(|(_, index)| !matches!(index, FieldIndex::Text | FieldIndex::Phrase))
        .filter(|(key, _)| !present.iter().any(|p| p.field == *key))
        .map(|(key, index)| {
            (
                key,
                index_params(index, layout.time_format, Fold::default()),
            )
        })
        .collect()
}

/// Qdrant Edge's parameters of one index; text and time indexes build no
/// extra HNSW links (docs/design.md §12).
fn index_params(index: FieldIndex, format: TimeFormat, fold: Fold) -> qe::PayloadSchemaParams {
    match index {
        FieldIndex::Text => text_index(fold),
        FieldIndex::Phrase => phrase_index(fold),
        FieldIndex::Tenant | FieldIndex::Keyword => {
            qe::PayloadSchemaParams::Keyword(qe::KeywordIndexParamsBuilder::new().build())
        }
        FieldIndex::KeywordPrefix => qe::PayloadSchemaParams::Keyword(
            qe::KeywordIndexParamsBuilder::new().prefix(true).build(),
        ),
        FieldIndex::Integer => qe::PayloadSchemaParams::Integer(
            qe::IntegerIndexParamsBuilder::new()
                .lookup(true)
                .range(true)
                .enable_hnsw(false)
                .build(),
        ),
        FieldIndex::Time => match format {
            TimeFormat::Rfc3339 => qe::PayloadSchemaParams::Datetime(
                qe::DatetimeIndexParamsBuilder::new()
                    .enable_hnsw(false)
                    .build(),
            ),
            TimeFormat::UnixSeconds | TimeFormat::UnixMillis => qe::PayloadSchemaParams::Float(
                qe::FloatIndexParamsBuilder::new()
                    .enable_hnsw(false)
                    .build(),
            ),
        },
    }
}

/// The operation creating the payload index `params` on `key`.
pub(super) fn create_index(
    key: &str,
    params: qe::PayloadSchemaParams,
) -> Result<qe::UpdateOperation> {
    Ok(qe::UpdateOperation::FieldIndexOperation(
        qe::FieldIndexOperations::CreateIndex(qe::CreateIndex {
            field_name: path(key)?,
            field_schema: Some(qe::PayloadFieldSchema::FieldParams(params)),
        }),
    ))
}

/// The payload indexes a shard reports, sorted by field.
pub(super) fn payload_index_list(info: &qe::ShardInfo) -> Vec<PayloadIndex> {
    let mut list: Vec<PayloadIndex> = info
        .payload_schema
        .iter()
        .map(|(field, index)| PayloadIndex {
            field: field.to_string(),
            kind: index.data_type.name().to_string(),
        })
        .collect();
    list.sort_by(|a, b| a.field.cmp(&b.field));
    list
}

/// Whether the source's copy has its phrase index (made with the collection).
pub(super) fn source_phrases(info: &qe::ShardInfo, layout: &PayloadSchema) -> bool {
    info.payload_schema.iter().any(|(field, index)| {
        field.to_string() == layout.source_text
            && matches!(&index.params, Some(qe::PayloadSchemaParams::Text(p)) if p.phrase_matching == Some(true))
    })
}

/// The full-text index on the text, as the shard reports it.
pub(super) fn text_index_info(
    info: &qe::ShardInfo,
    layout: &PayloadSchema,
) -> Option<TextIndexInfo> {
    let (_, index) = info
        .payload_schema
        .iter()
        .find(|(field, _)| field.to_string() == layout.text)?;
    let params = match &index.params {
        Some(qe::PayloadSchemaParams::Text(params)) => params.clone(),
        Some(_) => return None,
        None if index.data_type == qe::PayloadSchemaType::Text => qe::TextIndexParams::default(),
        None => return None,
    };
    Some(TextIndexInfo {
        tokenizer: format!("{:?}", params.tokenizer).to_lowercase(),
        // Qdrant lowercases unless told not to.
        lowercase: params.lowercase.unwrap_or(true),
        phrase_matching: params.phrase_matching.unwrap_or(false),
        ascii_folding: params.ascii_folding.unwrap_or(false),
        stemmer: stemmer_language(&params),
        scoring: params.scoring.is_some(),
    })
}

/// The fold of the text index where it is exactly the one trine creates
/// ([`text_index`]) on trine's own payload layout: where the split of
/// `trine_core::tokens` is the index's, so that statistics made with it
/// count what the index matches. `None` for any other index or layout.
pub(super) fn trines_text_index(info: &qe::ShardInfo, layout: &PayloadSchema) -> Option<Fold> {
    if *layout != PayloadSchema::default() {
        return None;
    }
    let (_, index) = info
        .payload_schema
        .iter()
        .find(|(field, _)| field.to_string() == layout.text)?;
    let Some(qe::PayloadSchemaParams::Text(text)) = index.params.as_ref() else {
        return None;
    };
    let fold = Fold::of_index(text.ascii_folding.unwrap_or(false), stemmer_language(text));
    (*index.params.as_ref()? == text_index(fold)).then_some(fold)
}

/// Whether the source's phrase index is the one trine creates for a text
/// index folding with `fold` ([`phrase_index`]): where it is, the kept
/// statistics split sources as it does.
pub(super) fn trines_source_index(
    info: &qe::ShardInfo,
    layout: &PayloadSchema,
    fold: Fold,
) -> bool {
    info.payload_schema
        .iter()
        .find(|(field, _)| field.to_string() == layout.source_text)
        .is_some_and(|(_, index)| index.params.as_ref() == Some(&phrase_index(fold)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every language trine names is one of Qdrant's, and reads back from
    /// the index as itself.
    #[test]
    fn every_stemmer_language_is_qdrants() {
        for (language, name, _) in Language::ALL {
            assert!(name.parse::<qe::SnowballLanguage>().is_ok(), "{name}");
            let fold = Fold::ASCII.with_stemmer(Some(*language));
            let qe::PayloadSchemaParams::Text(params) = text_index(fold) else {
                panic!("a text index");
            };
            assert_eq!(stemmer_language(&params), Some(*language), "{name}");
        }
    }

    #[test]
    fn threads_started_while_opening_run_below_the_services() {
        fn nice() -> i32 {
            rustix::process::getpriority_process(None).expect("getpriority")
        }
        let before = nice();
        // What the engine does as it opens a shard: start its search threads.
        let (opener, started) = below_services(|| {
            let started = std::thread::spawn(nice).join().expect("join");
            Ok((nice(), started))
        })
        .expect("below_services");
        assert_eq!(opener, SEARCH_NICE.max(before), "the opening thread");
        assert_eq!(started, SEARCH_NICE.max(before), "a thread it started");
        assert_eq!(nice(), before, "the caller's priority is untouched");
    }

    #[test]
    fn the_record_is_written_atomically_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_embedder(dir.path()).expect("read"), None);
        let embedder = EmbedderId {
            name: "minilm".into(),
            dim: 384,
        };
        write_embedder(dir.path(), &embedder).expect("write");
        assert_eq!(read_embedder(dir.path()).expect("read"), Some(embedder));
        assert!(!dir.path().join("trine.json.tmp").exists());
    }

    #[test]
    fn a_corrupt_record_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join(RECORD_FILE), b"{").expect("write");
        let err = read_embedder(dir.path()).expect_err("refused");
        assert!(err.to_string().contains("not a trine record"), "{err}");
    }

    #[test]
    fn every_trine_field_is_indexed() {
        let trine = PayloadSchema::default();
        let fields: Vec<&str> = payload_indexes(&trine, Fold::default())
            .iter()
            .map(|(f, _)| *f)
            .collect();
        assert_eq!(
            fields,
            [
                "text",
                "source_text",
                "tenant",
                "project",
                "kind",
                "source",
                "created_at",
                "valid_from",
                "valid_until",
                "thread",
                "seq"
            ]
        );
    }
}

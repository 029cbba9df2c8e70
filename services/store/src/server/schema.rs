//! The collection: the request that creates it, its payload indexes, the embedder in its metadata, and what `info` reports of it.

use super::*;
use crate::Language;

/// The request that creates a trine collection: the named dense and sparse
/// (IDF) vectors, the embedder in the metadata, the cluster layout.
pub(super) fn create_request(
    collection: &str,
    spec: &CollectionSpec,
    layout: Layout,
) -> CreateCollectionBuilder {
    let mut vectors = VectorsConfigBuilder::default();
    vectors.add_named_vector_params(
        DENSE_VECTOR,
        VectorParamsBuilder::new(spec.embedder.dim as u64, q::Distance::Cosine),
    );
    vectors.add_named_vector_params(TOKENS_VECTOR, tokens_params(spec.embedder.dim));
    let mut sparse = SparseVectorsConfigBuilder::default();
    sparse.add_named_vector_params(
        SPARSE_VECTOR,
        SparseVectorParamsBuilder::default().modifier(q::Modifier::Idf),
    );
    laid_out(
        CreateCollectionBuilder::new(collection)
            .vectors_config(vectors)
            .sparse_vectors_config(sparse)
            .optimizers_config(optimizers())
            .metadata(embedder_metadata(&spec.embedder)),
        layout,
    )
}

/// The optimizers' settings trine sets: segments up to
/// [`crate::MAX_SEGMENT_KB`]; the rest Qdrant's defaults (as Edge's).
pub(super) fn optimizers() -> q::OptimizersConfigDiffBuilder {
    q::OptimizersConfigDiffBuilder::default().max_segment_size(crate::MAX_SEGMENT_KB as u64)
}

/// Whether the collection's optimizers have Qdrant's own segment cap (none
/// set): a collection made before trine set [`crate::MAX_SEGMENT_KB`]. One
/// set otherwise, an operator's too, is left as it is.
pub(super) fn uncapped(info: &q::CollectionInfo) -> bool {
    info.config
        .as_ref()
        .and_then(|c| c.optimizer_config.as_ref())
        .is_none_or(|o| o.max_segment_size.is_none())
}

/// The `tokens` space ([`TOKENS_VECTOR`]): a multivector of the
/// embedder's dimension compared by MaxSim over dot products, in half
/// precision on disk, with no HNSW graph (`m` 0) — late interaction scores
/// the ids it is given, never searches the space.
fn tokens_params(dim: usize) -> VectorParamsBuilder {
    VectorParamsBuilder::new(dim as u64, q::Distance::Dot)
        .multivector_config(q::MultiVectorConfigBuilder::new(
            q::MultiVectorComparator::MaxSim,
        ))
        .datatype(q::Datatype::Float16)
        .on_disk(true)
        .hnsw_config(q::HnswConfigDiffBuilder::default().m(0).payload_m(0))
}

/// Whether the collection has the `tokens` space.
pub(super) fn tokens_of(info: &q::CollectionInfo) -> bool {
    match params_of(info)
        .and_then(|p| p.vectors_config.as_ref())
        .and_then(|c| c.config.as_ref())
    {
        Some(q::vectors_config::Config::ParamsMap(m)) => m
            .map
            .get(TOKENS_VECTOR)
            .is_some_and(|v| v.multivector_config.is_some()),
        _ => false,
    }
}

/// A collection's request laid out across the cluster as `layout` says
/// (the collection's, and its change journal's).
pub(super) fn laid_out(
    mut request: CreateCollectionBuilder,
    layout: Layout,
) -> CreateCollectionBuilder {
    if let Some(shards) = layout.shards {
        request = request.shard_number(shards);
    }
    if let Some(factor) = layout.replication_factor {
        request = request.replication_factor(factor);
    }
    if let Some(factor) = layout.write_consistency_factor {
        request = request.write_consistency_factor(factor);
    }
    request
}

/// The field type and index params of an index. Text and time indexes
/// build no extra HNSW links (docs/design.md §12: that halves optimize time); times
/// are datetimes, or floats when the collection writes Unix numbers.
pub(super) fn index_params(
    index: FieldIndex,
    format: TimeFormat,
    fold: Fold,
) -> (q::FieldType, q::payload_index_params::IndexParams) {
    match index {
        // The text's index scores BM25; the source copy's is for phrases alone.
        FieldIndex::Text | FieldIndex::Phrase => {
            let words = TextIndexParamsBuilder::new(q::TokenizerType::Word)
                .lowercase(true)
                .ascii_folding(fold.ascii_folding())
                .phrase_matching(true)
                .enable_hnsw(false);
            let words = match fold.stemmer() {
                Some(language) => words.snowball_stemmer(language.name().to_string()),
                None => words,
            };
            let words = if index == FieldIndex::Text {
                words.bm25_scoring()
            } else {
                words
            };
            (q::FieldType::Text, words.build().into())
        }
        FieldIndex::Tenant => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default()
                .is_tenant(true)
                .build()
                .into(),
        ),
        FieldIndex::Keyword => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default().build().into(),
        ),
        FieldIndex::KeywordPrefix => (
            q::FieldType::Keyword,
            KeywordIndexParamsBuilder::default()
                .prefix(true)
                .build()
                .into(),
        ),
        FieldIndex::Integer => (
            q::FieldType::Integer,
            IntegerIndexParamsBuilder::new(true, true)
                .enable_hnsw(false)
                .build()
                .into(),
        ),
        FieldIndex::Time if format == TimeFormat::Rfc3339 => (
            q::FieldType::Datetime,
            DatetimeIndexParamsBuilder::default()
                .enable_hnsw(false)
                .build()
                .into(),
        ),
        FieldIndex::Time => (
            q::FieldType::Float,
            FloatIndexParamsBuilder::default()
                .enable_hnsw(false)
                .build()
                .into(),
        ),
    }
}

/// The collection metadata recording the embedder and the layout version.
pub(super) fn embedder_metadata(e: &EmbedderId) -> HashMap<String, Json> {
    let mut metadata = schema_metadata();
    metadata.insert(META_EMBEDDER.to_string(), Json::from(e.name.clone()));
    metadata.insert(META_DIM.to_string(), Json::from(e.dim));
    metadata
}

/// The collection metadata recording the layout version this trine writes.
pub(super) fn schema_metadata() -> HashMap<String, Json> {
    HashMap::from([(META_SCHEMA.to_string(), Json::from(crate::SCHEMA))])
}

/// The layout version recorded in a collection's metadata (1: none).
pub(super) fn schema_of(info: &q::CollectionInfo) -> u32 {
    info.config
        .as_ref()
        .and_then(|c| c.metadata.get(META_SCHEMA))
        .and_then(|v| v.clone().into_json().as_u64())
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(1)
}

/// The embedder recorded in collection metadata, if any.
pub(super) fn embedder_of(metadata: &HashMap<String, q::Value>) -> Option<EmbedderId> {
    let name = metadata.get(META_EMBEDDER)?.clone().into_json();
    let dim = metadata.get(META_DIM)?.clone().into_json();
    Some(EmbedderId {
        name: name.as_str()?.to_string(),
        dim: usize::try_from(dim.as_u64()?).ok()?,
    })
}

/// Refuses an existing collection written by another embedder (or, when no
/// embedder is recorded, with a `dense` vector of another dimension).
pub(super) fn check_embedder(
    collection: &str,
    info: &q::CollectionInfo,
    wanted: &EmbedderId,
) -> Result<()> {
    let recorded = info.config.as_ref().and_then(|c| embedder_of(&c.metadata));
    match recorded {
        Some(found) if found != *wanted => Err(StoreError::EmbedderMismatch {
            collection: collection.to_string(),
            found: found.name,
            found_dim: found.dim,
            wanted: wanted.name.clone(),
            wanted_dim: wanted.dim,
        }),
        Some(_) => Ok(()),
        None => match dense_dim_of(info) {
            Some(dim) if dim == wanted.dim => Ok(()),
            Some(dim) => Err(StoreError::DimensionMismatch {
                collection: collection.to_string(),
                got: wanted.dim,
                want: dim,
            }),
            None => Err(no_dense_vector(collection)),
        },
    }
}

pub(super) fn params_of(info: &q::CollectionInfo) -> Option<&q::CollectionParams> {
    info.config.as_ref()?.params.as_ref()
}

pub(super) fn dense_dim_of(info: &q::CollectionInfo) -> Option<usize> {
    match params_of(info)?.vectors_config.as_ref()?.config.as_ref()? {
        q::vectors_config::Config::ParamsMap(m) => {
            usize::try_from(m.map.get(DENSE_VECTOR)?.size).ok()
        }
        q::vectors_config::Config::Params(_) => None,
    }
}

pub(super) fn sparse_idf_of(info: &q::CollectionInfo) -> bool {
    params_of(info)
        .and_then(|p| p.sparse_vectors_config.as_ref())
        .and_then(|c| c.map.get(SPARSE_VECTOR))
        .is_some_and(|s| s.modifier == Some(q::Modifier::Idf as i32))
}

/// The full-text index on the text field, if there is one.
pub(super) fn text_index_of(
    info: &q::CollectionInfo,
    layout: &PayloadSchema,
) -> Option<TextIndexInfo> {
    text_index_on(info, &layout.text)
}

/// Whether the source's copy has its phrase index (made with the collection).
pub(super) fn source_phrases_of(info: &q::CollectionInfo, layout: &PayloadSchema) -> bool {
    text_index_on(info, &layout.source_text).is_some_and(|t| t.phrase_matching)
}

/// The full-text index on `key`, as the server reports it.
fn text_index_on(info: &q::CollectionInfo, key: &str) -> Option<TextIndexInfo> {
    let schema = info.payload_schema.get(key)?;
    if schema.data_type != q::PayloadSchemaType::Text as i32 {
        return None;
    }
    let params = match schema.params.as_ref()?.index_params.as_ref()? {
        q::payload_index_params::IndexParams::TextIndexParams(p) => p,
        _ => return None,
    };
    Some(TextIndexInfo {
        tokenizer: tokenizer_name(params.tokenizer).to_string(),
        lowercase: params.lowercase.unwrap_or(true),
        phrase_matching: params.phrase_matching.unwrap_or(false),
        ascii_folding: params.ascii_folding.unwrap_or(false),
        stemmer: stemmer_language(params),
        scoring: params.scoring.is_some(),
    })
}

/// The language of an index's Snowball stemmer, where it stems in one trine
/// knows.
fn stemmer_language(params: &q::TextIndexParams) -> Option<Language> {
    match params.stemmer.as_ref()?.stemming_params.as_ref()? {
        q::stemming_algorithm::StemmingParams::Snowball(p) => p.language.parse().ok(),
        q::stemming_algorithm::StemmingParams::Disabled(_) => None,
    }
}

pub(super) fn tokenizer_name(tokenizer: i32) -> &'static str {
    match q::TokenizerType::try_from(tokenizer) {
        Ok(q::TokenizerType::Word) => "word",
        Ok(q::TokenizerType::Whitespace) => "whitespace",
        Ok(q::TokenizerType::Prefix) => "prefix",
        Ok(q::TokenizerType::Multilingual) => "multilingual",
        Ok(q::TokenizerType::Code) => "code",
        Ok(q::TokenizerType::Unknown) | Err(_) => "unknown",
    }
}

pub(super) fn schema_kind(data_type: i32) -> &'static str {
    match q::PayloadSchemaType::try_from(data_type) {
        Ok(q::PayloadSchemaType::Keyword) => "keyword",
        Ok(q::PayloadSchemaType::Integer) => "integer",
        Ok(q::PayloadSchemaType::Float) => "float",
        Ok(q::PayloadSchemaType::Geo) => "geo",
        Ok(q::PayloadSchemaType::Text) => "text",
        Ok(q::PayloadSchemaType::Bool) => "bool",
        Ok(q::PayloadSchemaType::Datetime) => "datetime",
        Ok(q::PayloadSchemaType::Uuid) => "uuid",
        Ok(q::PayloadSchemaType::UnknownType) | Err(_) => "unknown",
    }
}

/// What `trine doctor` reports of a server collection holding `points` points.
pub(super) fn describe(
    engine: trine_core::model::Engine,
    name: &str,
    info: &q::CollectionInfo,
    points: u64,
    layout: &PayloadSchema,
) -> CollectionInfo {
    let mut payload_indexes: Vec<PayloadIndex> = info
        .payload_schema
        .iter()
        .map(|(field, schema)| PayloadIndex {
            field: field.clone(),
            kind: schema_kind(schema.data_type).to_string(),
        })
        .collect();
    payload_indexes.sort_by(|a, b| a.field.cmp(&b.field));
    CollectionInfo {
        name: name.to_string(),
        backend: BACKEND.to_string(),
        embedder: info.config.as_ref().and_then(|c| embedder_of(&c.metadata)),
        dense_dim: dense_dim_of(info),
        sparse_idf: sparse_idf_of(info),
        sparse_tf: false,
        tokens: tokens_of(info),
        one_tenant: false,
        schema: schema_of(info),
        points,
        segments: usize::try_from(info.segments_count).unwrap_or(usize::MAX),
        payload_indexes,
        text_index: text_index_of(info, layout),
        source_phrases: source_phrases_of(info, layout),
        engine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::keys;
    use crate::payload::PayloadSchema;
    use trine_core::model::Engine;

    #[test]
    fn a_new_collection_takes_the_layout() {
        let spec = CollectionSpec {
            embedder: EmbedderId {
                name: "m".into(),
                dim: 4,
            },
            fold: Fold::default(),
        };
        let plain = create_request("c", &spec, Layout::default()).build();
        assert_eq!((plain.shard_number, plain.replication_factor), (None, None));
        let layout = Layout {
            shards: Some(3),
            replication_factor: Some(2),
            write_consistency_factor: Some(1),
        };
        let spread = create_request("c", &spec, layout).build();
        assert_eq!(spread.shard_number, Some(3));
        assert_eq!(spread.replication_factor, Some(2));
        assert_eq!(spread.write_consistency_factor, Some(1));
        for (raw, want) in [
            ("majority", Ok(ReadConsistency::Majority)),
            ("quorum", Ok(ReadConsistency::Quorum)),
            ("all", Ok(ReadConsistency::All)),
            ("2", Ok(ReadConsistency::Factor(2))),
        ] {
            assert_eq!(ReadConsistency::parse(raw), want);
        }
        assert!(ReadConsistency::parse("0").is_err());
        assert!(ReadConsistency::parse("most").is_err());
        assert_eq!(spread.collection_name, "c");
    }

    #[test]
    fn only_a_collection_without_a_segment_cap_takes_trines() {
        let with = |cap: Option<u64>| q::CollectionInfo {
            config: Some(q::CollectionConfig {
                optimizer_config: Some(q::OptimizersConfigDiff {
                    max_segment_size: cap,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        // (the collection's cap, takes trine's)
        for (cap, want) in [
            (None, true),
            (Some(crate::MAX_SEGMENT_KB as u64), false),
            (Some(200_000), false),
        ] {
            assert_eq!(uncapped(&with(cap)), want, "{cap:?}");
        }
        assert!(uncapped(&q::CollectionInfo::default()));
    }

    #[test]
    fn index_kinds() {
        use q::payload_index_params::IndexParams as P;
        let rfc = TimeFormat::Rfc3339;
        let (ty, params) = index_params(FieldIndex::Text, rfc, Fold::ASCII);
        assert_eq!(ty, q::FieldType::Text);
        let P::TextIndexParams(p) = params else {
            panic!("text index expected")
        };
        assert_eq!(p.tokenizer, q::TokenizerType::Word as i32);
        assert_eq!((p.lowercase, p.phrase_matching), (Some(true), Some(true)));
        assert_eq!(
            p.scoring.map(|s| s.r#type),
            Some(q::TextScoringType::Bm25 as i32)
        );

        let keyword = |index| match index_params(index, rfc, Fold::ASCII) {
            (q::FieldType::Keyword, P::KeywordIndexParams(p)) => p,
            other => panic!("keyword index expected, got {other:?}"),
        };
        assert_eq!(keyword(FieldIndex::Tenant).is_tenant, Some(true));
        assert!(keyword(FieldIndex::KeywordPrefix).prefix.is_some());
        assert!(keyword(FieldIndex::Keyword).prefix.is_none());
        assert!(matches!(
            index_params(FieldIndex::Time, rfc, Fold::ASCII),
            (q::FieldType::Datetime, P::DatetimeIndexParams(_))
        ));
        assert!(matches!(
            index_params(FieldIndex::Time, TimeFormat::UnixMillis, Fold::ASCII),
            (q::FieldType::Float, P::FloatIndexParams(_))
        ));
    }

    fn server_info(
        metadata: HashMap<String, Json>,
        dense: u64,
        text_scoring: bool,
    ) -> q::CollectionInfo {
        let vectors = q::VectorsConfig {
            config: Some(q::vectors_config::Config::ParamsMap(q::VectorParamsMap {
                map: HashMap::from([(
                    DENSE_VECTOR.to_string(),
                    VectorParamsBuilder::new(dense, q::Distance::Cosine).build(),
                )]),
            })),
        };
        let sparse = q::SparseVectorConfig {
            map: HashMap::from([(
                SPARSE_VECTOR.to_string(),
                SparseVectorParamsBuilder::default()
                    .modifier(q::Modifier::Idf)
                    .build(),
            )]),
        };
        let mut text = TextIndexParamsBuilder::new(q::TokenizerType::Word)
            .lowercase(true)
            .phrase_matching(true);
        if text_scoring {
            text = text.bm25_scoring();
        }
        let schema = |ty: q::PayloadSchemaType, params: q::payload_index_params::IndexParams| {
            q::PayloadSchemaInfo {
                data_type: ty as i32,
                params: Some(q::PayloadIndexParams {
                    index_params: Some(params),
                }),
                points: None,
            }
        };
        q::CollectionInfo {
            status: q::CollectionStatus::Green as i32,
            segments_count: 3,
            config: Some(q::CollectionConfig {
                params: Some(q::CollectionParams {
                    vectors_config: Some(vectors),
                    sparse_vectors_config: Some(sparse),
                    ..Default::default()
                }),
                metadata: metadata.into_iter().map(|(k, v)| (k, v.into())).collect(),
                ..Default::default()
            }),
            payload_schema: HashMap::from([
                (
                    keys::TEXT.to_string(),
                    schema(q::PayloadSchemaType::Text, text.build().into()),
                ),
                (
                    keys::TENANT.to_string(),
                    schema(
                        q::PayloadSchemaType::Keyword,
                        index_params(FieldIndex::Tenant, TimeFormat::Rfc3339, Fold::ASCII).1,
                    ),
                ),
            ]),
            ..Default::default()
        }
    }

    fn embedder(name: &str, dim: usize) -> EmbedderId {
        EmbedderId {
            name: name.into(),
            dim,
        }
    }

    #[test]
    fn describes_a_collection() {
        let minilm = embedder("minilm", 384);
        let info = server_info(embedder_metadata(&minilm), 384, true);
        let got = describe(
            Engine::qdrant("1.20.0"),
            "mem",
            &info,
            42,
            &PayloadSchema::default(),
        );
        assert_eq!(got.name, "mem");
        assert_eq!(got.backend, "server");
        assert_eq!(got.embedder, Some(minilm));
        assert_eq!(got.dense_dim, Some(384));
        assert!(got.sparse_idf);
        assert_eq!((got.points, got.segments), (42, 3));
        let indexes: Vec<(&str, &str)> = got
            .payload_indexes
            .iter()
            .map(|i| (i.field.as_str(), i.kind.as_str()))
            .collect();
        assert_eq!(indexes, [("tenant", "keyword"), ("text", "text")]);
        assert_eq!(
            got.text_index,
            Some(TextIndexInfo {
                tokenizer: "word".into(),
                lowercase: true,
                phrase_matching: true,
                ascii_folding: false,
                stemmer: None,
                scoring: true,
            })
        );
        let unscored = describe(
            Engine::qdrant("1.20.0"),
            "mem",
            &server_info(HashMap::new(), 8, false),
            0,
            &PayloadSchema::default(),
        );
        assert_eq!(unscored.embedder, None);
        assert_eq!(unscored.text_index.map(|t| t.scoring), Some(false));
        assert!(got.engine.text_scoring);
    }

    #[test]
    fn embedder_checks() {
        let minilm = embedder("minilm", 384);
        let recorded = server_info(embedder_metadata(&minilm), 384, true);
        assert!(check_embedder("c", &recorded, &minilm).is_ok());
        assert!(matches!(
            check_embedder("c", &recorded, &embedder("bge", 384)),
            Err(StoreError::EmbedderMismatch { found, found_dim: 384, .. }) if found == "minilm"
        ));
        assert!(matches!(
            check_embedder("c", &recorded, &embedder("minilm", 768)),
            Err(StoreError::EmbedderMismatch { .. })
        ));
        let foreign = server_info(HashMap::new(), 384, true);
        assert!(check_embedder("c", &foreign, &minilm).is_ok());
        assert!(matches!(
            check_embedder("c", &foreign, &embedder("bge", 768)),
            Err(StoreError::DimensionMismatch {
                got: 768,
                want: 384,
                ..
            })
        ));
        assert!(check_embedder("c", &q::CollectionInfo::default(), &minilm).is_err());
    }
}

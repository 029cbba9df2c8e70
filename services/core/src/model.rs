//! The domain types of trine: memories, points, filters, hits.
//!
//! These are plain Rust types. Only the store implementations know Qdrant's
//! types, and only the service edges know prost types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The payload keys of a memory (docs/design.md §1).
pub mod keys {
    pub const TEXT: &str = "text";
    pub const SOURCE: &str = "source";
    /// A copy of the source, phrase-indexed (the index its own field needs
    /// for prefixes cannot hold).
    pub const SOURCE_TEXT: &str = "source_text";
    pub const TENANT: &str = "tenant";
    pub const PROJECT: &str = "project";
    pub const KIND: &str = "kind";
    pub const CREATED_AT: &str = "created_at";
    pub const VALID_FROM: &str = "valid_from";
    pub const VALID_UNTIL: &str = "valid_until";
    pub const METADATA: &str = "metadata";
    /// The conversation or session a memory belongs to, within its tenant.
    pub const THREAD: &str = "thread";
    /// A memory's place in its thread.
    pub const SEQ: &str = "seq";
}

/// Names of the vectors of a trine collection.
pub const DENSE_VECTOR: &str = "dense";
pub const SPARSE_VECTOR: &str = "sparse";
/// The named multivector space of each memory's tokens for late
/// interaction ([`crate::late`]): the embedder's dimension, MaxSim by dot
/// product, half precision, no index (only given ids are scored).
pub const TOKENS_VECTOR: &str = "tokens";

/// One memory: what a caller stores and what a search returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: Uuid,
    pub text: String,
    pub source: Option<String>,
    pub tenant: String,
    pub project: Option<String>,
    pub kind: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub valid_from: Option<DateTime<Utc>>,
    pub valid_until: Option<DateTime<Utc>>,
    /// A JSON object, or `None`.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// The thread (a conversation or session id) it belongs to, within its
    /// tenant; `None`: it stands alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// Its place in its thread: the order inside a thread is
    /// (`created_at`, `seq`, id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// A sparse vector: parallel arrays of dimension ids and weights.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SparseVector {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

/// A memory with its vectors, as written to the store.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub memory: Memory,
    pub dense: Vec<f32>,
    pub sparse: Option<SparseVector>,
    /// Its tokens for late interaction ([`crate::late`]), where the
    /// collection keeps them.
    pub tokens: Option<crate::late::Tokens>,
}

/// The conditions of one read. The tenant is a boundary: every read of every
/// channel carries it, so it is not optional here.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    pub tenant: String,
    /// Any of these projects (empty: no condition).
    pub projects: Vec<String>,
    /// Any of these kinds (empty: no condition).
    pub kinds: Vec<String>,
    /// `source` starts with this string.
    pub source_prefix: Option<String>,
    /// Only the memories of this thread (of the tenant).
    pub thread: Option<String>,
    /// `created_from <= created_at`.
    pub created_from: Option<DateTime<Utc>>,
    /// `created_at < created_until`.
    pub created_until: Option<DateTime<Utc>>,
    /// The validity view: `valid_from <= T < valid_until`, either side open.
    /// `None` means no validity condition.
    pub valid_at: Option<DateTime<Utc>>,
    /// Every one of these terms is in the text (one full-text condition each).
    pub all_terms: Vec<String>,
    /// None of these terms is in the text (one full-text condition each,
    /// under `must_not`): a term's read that leaves out the points of the
    /// terms read before it.
    pub no_terms: Vec<String>,
    /// At least one of these terms is in the text (the lexical gate).
    /// `Some(empty)` is refused: an empty gate never means match-all.
    pub any_terms: Option<Vec<String>>,
    /// The text holds this phrase (the phrase index).
    pub phrase: Option<String>,
    /// The source holds this phrase (the phrase index on the source's copy,
    /// on a collection that has one: [`CollectionInfo::source_phrases`]).
    pub source_phrase: Option<String>,
    /// Only these points, of the tenant still (`None`: no condition; an
    /// empty list matches nothing; at most [`MAX_FILTER_IDS`]): a check of
    /// the other conditions on points already read.
    pub ids: Option<Vec<Uuid>>,
    /// Only points lying in one of these stretches of their threads (`None`:
    /// no condition; an empty list matches nothing; at most
    /// [`MAX_FILTER_SPANS`]): the read of the messages around a search's
    /// hits ([`crate::context`]).
    pub spans: Option<Vec<Span>>,
}

/// A stretch of one thread: its messages whose `seq` lies in `from..=to`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub thread: String,
    pub from: u64,
    pub to: u64,
}

/// Most spans one filter may name ([`Filter::spans`]).
pub const MAX_FILTER_SPANS: usize = 1024;

impl Filter {
    pub fn tenant(tenant: impl Into<String>) -> Self {
        Self {
            tenant: tenant.into(),
            ..Self::default()
        }
    }
}

/// A point found by a query, with its score, and what of its payload the
/// query asked for ([`PayloadRead`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: Uuid,
    pub score: f32,
    /// The whole memory, with [`PayloadRead::Memory`].
    pub memory: Option<Memory>,
    /// The memory's source, with [`PayloadRead::Source`] or [`PayloadRead::Memory`]
    /// (when it has one).
    pub source: Option<String>,
}

/// What of each hit's payload a query reads: nothing (ids and scores), the
/// source alone (a few bytes: what the verbatim check needs of a point the
/// phrase index did not return), or the whole memory with its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadRead {
    Nothing,
    Source,
    Memory,
}

/// One page of a scroll, in ascending point-id order.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrollPage {
    pub memories: Vec<Memory>,
    /// The id to pass as `offset` to read the next page; `None` at the end.
    pub next_offset: Option<Uuid>,
}

/// What BM25 and the verbatim check need of a point besides its text: its
/// sparse encoding (the term frequencies of its text; `None` when the point
/// has none) and its source.
#[derive(Debug, Clone, PartialEq)]
pub struct TermPoint {
    pub id: Uuid,
    pub source: Option<String>,
    /// Its `sparse` vector, read as counts once. Shared: a store that
    /// keeps it hands out the one copy it holds.
    pub tf: Option<std::sync::Arc<crate::sparse::TermVector>>,
}

/// One page of a term scroll, in ascending point-id order.
#[derive(Debug, Clone, PartialEq)]
pub struct TermPage {
    pub points: Vec<TermPoint>,
    /// The id to pass as `offset` to read the next page; `None` at the end.
    pub next_offset: Option<Uuid>,
}

/// Which embedder wrote a collection's dense vectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedderId {
    pub name: String,
    pub dim: usize,
}

/// What a collection is created with.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionSpec {
    pub embedder: EmbedderId,
    /// How a new collection's full-text index normalises tokens (an
    /// existing collection keeps its own: `trine text-index` changes it).
    pub fold: crate::Fold,
}

/// A payload index as the store reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PayloadIndex {
    pub field: String,
    /// `keyword`, `text`, `datetime`, ...
    pub kind: String,
}

/// The full-text index on the text field, as the store reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextIndexInfo {
    pub tokenizer: String,
    pub lowercase: bool,
    pub phrase_matching: bool,
    /// Tokens are folded to ASCII before lowercasing ([`crate::Fold`]).
    pub ascii_folding: bool,
    /// The Snowball stemmer's language, where tokens are stemmed.
    pub stemmer: Option<crate::Language>,
    /// BM25 scoring is enabled (needed by `Query.text`).
    pub scoring: bool,
}

impl TextIndexInfo {
    /// How the index normalises a token.
    pub fn fold(&self) -> crate::Fold {
        crate::Fold::of_index(self.ascii_folding, self.stemmer)
    }
}

/// What `trine doctor` reports of a collection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectionInfo {
    pub name: String,
    pub backend: String,
    /// The embedder recorded at creation; `None` for a collection trine did not create.
    pub embedder: Option<EmbedderId>,
    /// Dimension of the `dense` vector, if the collection has one.
    pub dense_dim: Option<usize>,
    /// The `sparse` vector space exists, with the IDF modifier.
    pub sparse_idf: bool,
    /// The `sparse_tf` space exists: the embedded store's copy of the sparse
    /// vectors without the modifier, where `sparse` queries weighted from
    /// its document frequencies rank. A server store has none.
    pub sparse_tf: bool,
    /// The `tokens` space exists ([`TOKENS_VECTOR`]): late interaction can
    /// judge the collection's memories.
    pub tokens: bool,
    /// Every point ever written into the collection is one tenant's (the
    /// embedded store's record, `tenants.json`): a BM25 query of that tenant
    /// reads Qdrant's statistics over the whole collection from the index's
    /// counts instead of gathering them over the tenant. False where more
    /// were written, where the collection predates the record, and on a
    /// server store.
    pub one_tenant: bool,
    /// The layout version recorded in the collection (`trine_store::SCHEMA`
    /// names what this trine writes); 1 where none is recorded (trine 0.1.0
    /// and before).
    pub schema: u32,
    pub points: u64,
    pub segments: usize,
    pub payload_indexes: Vec<PayloadIndex>,
    pub text_index: Option<TextIndexInfo>,
    /// The source's copy (`source_text`) has a phrase index, made with the
    /// collection: a phrase filter finds the sources holding a query, so a
    /// search reads no source to check it.
    pub source_phrases: bool,
    /// What the engine holding the collection can do.
    pub engine: Engine,
}

/// The engine holding a collection: its version, and what it can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Engine {
    /// e.g. `1.19.0` for a Qdrant server.
    pub version: String,
    /// BM25 scoring over the full-text index (`Query.text`): Qdrant 1.20 on.
    pub text_scoring: bool,
}

impl Engine {
    /// The first Qdrant server version with BM25 scoring over the text index.
    pub const TEXT_SCORING_SINCE: (u64, u64) = (1, 20);

    /// A Qdrant server of `version` (`major.minor.patch`; anything after a
    /// `-` ignored): BM25 text scoring from 1.20. An unreadable version is
    /// taken to have it (a newer server than trine knows).
    pub fn qdrant(version: &str) -> Self {
        let mut parts = version.split(['.', '-']).map(|p| p.parse::<u64>().ok());
        let (major, minor) = (parts.next().flatten(), parts.next().flatten());
        let text_scoring = match (major, minor) {
            (Some(major), Some(minor)) => (major, minor) >= Self::TEXT_SCORING_SINCE,
            _ => true,
        };
        Self {
            version: version.to_string(),
            text_scoring,
        }
    }

    /// Why BM25 text scoring is not there, when the engine lacks it.
    pub fn lacks_text_scoring(&self) -> Option<String> {
        let (major, minor) = Self::TEXT_SCORING_SINCE;
        (!self.text_scoring).then(|| {
            format!(
                "BM25 scoring over the full-text index needs Qdrant {major}.{minor}; this server is {}",
                self.version
            )
        })
    }
}

/// Longest text a memory may hold, in bytes.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Longest tenant, project or kind, in bytes (a name, not a document).
pub const MAX_LABEL_BYTES: usize = 256;

/// Longest source (a path or URL), in bytes.
pub const MAX_SOURCE_BYTES: usize = 4096;

/// Largest metadata object, in bytes of its JSON.
pub const MAX_METADATA_BYTES: usize = 1 << 16;

/// The largest `seq`: Qdrant keeps payload integers as signed 64-bit.
pub const MAX_SEQ: u64 = i64::MAX as u64;

/// Most projects or kinds one filter may name.
pub const MAX_FILTER_VALUES: usize = 64;

/// Most point ids one filter may name ([`Filter::ids`]): the largest
/// lexical cap.
pub const MAX_FILTER_IDS: usize = 4096;

/// Refuses a tenant, project or kind (`field`) longer than [`MAX_LABEL_BYTES`].
pub fn check_label(field: &str, value: &str) -> Result<(), String> {
    if value.len() > MAX_LABEL_BYTES {
        return Err(format!(
            "{field} is {} bytes, more than the {MAX_LABEL_BYTES} allowed",
            value.len()
        ));
    }
    Ok(())
}

/// Refuses a filter naming more than [`MAX_FILTER_VALUES`] projects or
/// kinds (`field`), or any of them too long.
pub fn check_filter_values(field: &str, values: &[String]) -> Result<(), String> {
    if values.len() > MAX_FILTER_VALUES {
        return Err(format!(
            "{field} names {} values, more than the {MAX_FILTER_VALUES} allowed",
            values.len()
        ));
    }
    values.iter().try_for_each(|v| check_label(field, v))
}

/// Longest query any service accepts, in bytes, checked before any work on
/// it; the gateway's own limit (`max_query_bytes`, 4,096 by default) is
/// configured within it.
pub const MAX_QUERY_BYTES: usize = 1 << 16;

/// Refuses a query longer than `max` bytes (and than [`MAX_QUERY_BYTES`]),
/// saying by how much: the check every service makes before any work.
pub fn check_query_bytes(query: &str, max: usize) -> Result<(), String> {
    let max = max.min(MAX_QUERY_BYTES);
    if query.len() > max {
        return Err(format!(
            "query is {} bytes, more than the {max} allowed: shorten it",
            query.len()
        ));
    }
    Ok(())
}

/// A memory as a caller writes it (one JSON line of `trine ingest`): the id
/// is optional and times are RFC 3339 strings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryInput {
    pub id: Option<String>,
    pub text: String,
    pub source: Option<String>,
    pub tenant: String,
    pub project: Option<String>,
    pub kind: Option<String>,
    pub created_at: Option<String>,
    pub valid_from: Option<String>,
    pub valid_until: Option<String>,
    pub metadata: Option<serde_json::Value>,
    pub thread: Option<String>,
    /// Any JSON value, checked by [`parse_seq`]: the error names the field.
    pub seq: Option<serde_json::Value>,
}

impl MemoryInput {
    /// One JSON line of `trine ingest` as a validated memory, or why not.
    pub fn from_line(line: &str) -> Result<Memory, String> {
        let input: Self = serde_json::from_str(line).map_err(|e| format!("not a memory: {e}"))?;
        input.into_memory()
    }

    /// Validates the input and turns it into a memory; a missing id is
    /// derived from the content ([`derived_id`]). The error says which field is wrong and why.
    pub fn into_memory(self) -> Result<Memory, String> {
        let id = match self.id.as_deref() {
            None | Some("") => derived_id(&self.tenant, self.source.as_deref(), &self.text),
            Some(raw) => parse_id(raw)?,
        };
        let metadata = match self.metadata {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Object(map)) => Some(map),
            Some(_) => return Err("metadata must be a JSON object".to_string()),
        };
        let memory = Memory {
            id,
            text: self.text,
            source: self.source,
            tenant: self.tenant,
            project: self.project,
            kind: self.kind,
            created_at: parse_time("created_at", self.created_at.as_deref())?,
            valid_from: parse_time("valid_from", self.valid_from.as_deref())?,
            valid_until: parse_time("valid_until", self.valid_until.as_deref())?,
            metadata,
            thread: self.thread.filter(|t| !t.is_empty()),
            seq: parse_seq(self.seq.as_ref())?,
        };
        memory.validate()?;
        Ok(memory)
    }
}

/// The namespace of ids derived from content.
const ID_NAMESPACE: Uuid = Uuid::from_u128(0x6a1d_1c2e_7f04_4e55_9b0b_3f3e_2a7c_5d10);

/// The id of a memory written without one: a UUID (v5) of its tenant, source
/// and text, so that writing the same memory twice replaces it instead of
/// storing a copy.
pub fn derived_id(tenant: &str, source: Option<&str>, text: &str) -> Uuid {
    let key = format!("{tenant}\0{}\0{text}", source.unwrap_or(""));
    Uuid::new_v5(&ID_NAMESPACE, key.as_bytes())
}

/// Parses a memory id: a UUID.
pub fn parse_id(raw: &str) -> Result<Uuid, String> {
    Uuid::parse_str(raw).map_err(|_| format!("id {raw:?} is not a UUID"))
}

/// Parses a memory's `seq`: absent or null, or a non-negative integer.
pub fn parse_seq(raw: Option<&serde_json::Value>) -> Result<Option<u64>, String> {
    match raw {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            format!("seq {value} is not a non-negative integer (a memory's place in its thread)")
        }),
    }
}

/// Parses an optional RFC 3339 time of the named field.
pub fn parse_time(field: &str, raw: Option<&str>) -> Result<Option<DateTime<Utc>>, String> {
    match raw {
        None | Some("") => Ok(None),
        Some(raw) => DateTime::parse_from_rfc3339(raw)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| format!("{field} {raw:?} is not an RFC 3339 time: {e}")),
    }
}

#[cfg(test)]
mod engine_tests {
    use super::Engine;

    #[test]
    fn text_scoring_comes_with_qdrant_1_20() {
        for (version, scoring) in [
            ("1.19.0", false),
            ("1.19.4", false),
            ("1.9.0", false),
            ("1.20.0", true),
            ("1.20.1-dev", true),
            ("2.0.0", true),
            ("", true),
            ("dev", true),
        ] {
            assert_eq!(Engine::qdrant(version).text_scoring, scoring, "{version:?}");
        }
        let why = Engine::qdrant("1.19.0").lacks_text_scoring().unwrap();
        assert!(
            why.contains("needs Qdrant 1.20") && why.contains("1.19.0"),
            "{why}"
        );
        assert_eq!(Engine::qdrant("1.20.0").lacks_text_scoring(), None);
    }
}

impl Memory {
    /// A memory of `tenant` holding `text`, every other field empty.
    pub fn new(id: Uuid, tenant: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id,
            text: text.into(),
            source: None,
            tenant: tenant.into(),
            project: None,
            kind: None,
            created_at: None,
            valid_from: None,
            valid_until: None,
            metadata: None,
            thread: None,
            seq: None,
        }
    }

    /// Checks what every stored memory must satisfy.
    pub fn validate(&self) -> Result<(), String> {
        if self.tenant.trim().is_empty() {
            return Err("tenant is required".to_string());
        }
        if self.text.trim().is_empty() {
            return Err("text is empty".to_string());
        }
        if self.text.len() > MAX_TEXT_BYTES {
            return Err(format!(
                "text is {} bytes, more than the {MAX_TEXT_BYTES} allowed: split it into chunks",
                self.text.len()
            ));
        }
        check_label("tenant", &self.tenant)?;
        if let Some(seq) = self.seq
            && seq > MAX_SEQ
        {
            return Err(format!("seq {seq} is more than the {MAX_SEQ} allowed"));
        }
        if self.thread.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err("thread is blank: leave it out, or name the conversation".to_string());
        }
        for (field, value) in [
            ("project", &self.project),
            ("kind", &self.kind),
            ("thread", &self.thread),
        ] {
            if let Some(value) = value {
                check_label(field, value)?;
            }
        }
        if let Some(source) = &self.source
            && source.len() > MAX_SOURCE_BYTES
        {
            return Err(format!(
                "source is {} bytes, more than the {MAX_SOURCE_BYTES} allowed",
                source.len()
            ));
        }
        if let Some(metadata) = &self.metadata {
            let bytes = serde_json::to_vec(metadata).map_or(usize::MAX, |v| v.len());
            if bytes > MAX_METADATA_BYTES {
                return Err(format!(
                    "metadata is {bytes} bytes of JSON, more than the {MAX_METADATA_BYTES} allowed"
                ));
            }
        }
        if let (Some(from), Some(until)) = (self.valid_from, self.valid_until)
            && from >= until
        {
            return Err(format!(
                "valid_from {from} is not before valid_until {until}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_names_sources_and_metadata_are_refused() {
        let long = |n: usize| "x".repeat(n);
        let base = Memory::new(Uuid::from_u128(1), "acme", "text");
        let with_metadata = |bytes: usize| {
            let mut map = serde_json::Map::new();
            map.insert("k".to_string(), serde_json::Value::String(long(bytes)));
            Memory {
                metadata: Some(map),
                ..base.clone()
            }
        };
        // (memory, the error it gets, or None)
        let table: Vec<(Memory, Option<&str>)> = vec![
            (base.clone(), None),
            (
                Memory {
                    tenant: long(MAX_LABEL_BYTES),
                    ..base.clone()
                },
                None,
            ),
            (
                Memory {
                    tenant: long(MAX_LABEL_BYTES + 1),
                    ..base.clone()
                },
                Some("tenant is 257 bytes"),
            ),
            (
                Memory {
                    project: Some(long(MAX_LABEL_BYTES + 1)),
                    ..base.clone()
                },
                Some("project is 257 bytes"),
            ),
            (
                Memory {
                    kind: Some(long(MAX_LABEL_BYTES + 1)),
                    ..base.clone()
                },
                Some("kind is 257 bytes"),
            ),
            (
                Memory {
                    source: Some(long(MAX_SOURCE_BYTES)),
                    ..base.clone()
                },
                None,
            ),
            (
                Memory {
                    source: Some(long(MAX_SOURCE_BYTES + 1)),
                    ..base.clone()
                },
                Some("source is 4097 bytes"),
            ),
            (with_metadata(100), None),
            (
                with_metadata(MAX_METADATA_BYTES),
                Some("bytes of JSON, more than the 65536"),
            ),
        ];
        for (memory, want) in table {
            match (memory.validate(), want) {
                (Ok(()), None) => {}
                (Err(why), Some(want)) => assert!(why.contains(want), "{why} lacks {want}"),
                (got, want) => panic!("{got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn filters_name_a_bounded_number_of_short_values() {
        let values = |n: usize, len: usize| vec!["p".repeat(len); n];
        let table = [
            (values(0, 1), None),
            (values(MAX_FILTER_VALUES, MAX_LABEL_BYTES), None),
            (values(MAX_FILTER_VALUES + 1, 1), Some("names 65 values")),
            (values(10_000, 1), Some("names 10000 values")),
            (values(1, MAX_LABEL_BYTES + 1), Some("is 257 bytes")),
        ];
        for (values, want) in table {
            match (check_filter_values("projects", &values), want) {
                (Ok(()), None) => {}
                (Err(why), Some(want)) => assert!(why.contains(want), "{why} lacks {want}"),
                (got, want) => panic!("{} values: {got:?}, wanted {want:?}", values.len()),
            }
        }
    }

    #[test]
    fn queries_over_the_size_limit_are_refused() {
        // (query bytes, the caller's max, refused)
        let table = [
            (0, 4096, false),
            (4096, 4096, false),
            (4097, 4096, true),
            (MAX_QUERY_BYTES, usize::MAX, false),
            (MAX_QUERY_BYTES + 1, usize::MAX, true),
        ];
        for (bytes, max, refused) in table {
            let query = "x".repeat(bytes);
            let got = check_query_bytes(&query, max);
            assert_eq!(got.is_err(), refused, "{bytes} bytes, max {max}: {got:?}");
            if let Err(why) = got {
                assert!(why.contains(&format!("query is {bytes} bytes")), "{why}");
            }
        }
    }

    fn input(json: &str) -> Result<Memory, String> {
        serde_json::from_str::<MemoryInput>(json)
            .map_err(|e| e.to_string())
            .and_then(MemoryInput::into_memory)
    }

    #[test]
    fn inputs_are_validated() {
        let table: &[(&str, Option<&str>)] = &[
            (r#"{"text":"hi","tenant":"t"}"#, None),
            (
                r#"{"text":"hi","tenant":"t","id":"6f1c0b1e-8a8e-4a57-9d52-0f2b8f0b7a11"}"#,
                None,
            ),
            (
                r#"{"text":"hi","tenant":"t","id":"nope"}"#,
                Some("is not a UUID"),
            ),
            (r#"{"text":"  ","tenant":"t"}"#, Some("text is empty")),
            (r#"{"text":"hi","tenant":""}"#, Some("tenant is required")),
            (r#"{"text":"hi"}"#, Some("missing field `tenant`")),
            (
                r#"{"text":"hi","tenant":"t","created_at":"yesterday"}"#,
                Some("not an RFC 3339"),
            ),
            (
                r#"{"text":"hi","tenant":"t","metadata":[1]}"#,
                Some("must be a JSON object"),
            ),
            (
                r#"{"text":"hi","tenant":"t","colour":"red"}"#,
                Some("unknown field"),
            ),
            (
                r#"{"text":"hi","tenant":"t","valid_from":"2026-02-01T00:00:00Z","valid_until":"2026-01-01T00:00:00Z"}"#,
                Some("is not before valid_until"),
            ),
            // Threads: a name within the tenant and a place in it.
            (
                r#"{"text":"hi","tenant":"t","thread":"chat-1","seq":0}"#,
                None,
            ),
            (r#"{"text":"hi","tenant":"t","thread":"chat-1"}"#, None),
            (r#"{"text":"hi","tenant":"t","thread":"","seq":null}"#, None),
            (
                r#"{"text":"hi","tenant":"t","thread":"chat-1","seq":-1}"#,
                Some("seq -1 is not a non-negative integer"),
            ),
            (
                r#"{"text":"hi","tenant":"t","thread":"chat-1","seq":2.5}"#,
                Some("seq 2.5 is not a non-negative integer"),
            ),
            (
                r#"{"text":"hi","tenant":"t","thread":"chat-1","seq":"3"}"#,
                Some("seq \"3\" is not a non-negative integer"),
            ),
            (
                r#"{"text":"hi","tenant":"t","thread":"   "}"#,
                Some("thread is blank"),
            ),
            (
                r#"{"text":"hi","tenant":"t","thread":7}"#,
                Some("invalid type"),
            ),
        ];
        for (json, want) in table {
            match (input(json), want) {
                (Ok(_), None) => {}
                (Err(e), Some(w)) => assert!(e.contains(w), "{json}: {e:?} lacks {w:?}"),
                (got, want) => panic!("{json}: got {got:?}, wanted error {want:?}"),
            }
        }
        let long = format!(
            r#"{{"text":"hi","tenant":"t","thread":"{}"}}"#,
            "x".repeat(257)
        );
        let err = input(&long).expect_err("a thread over 256 bytes");
        assert!(err.contains("thread is 257 bytes"), "{err}");
        let m = input(r#"{"text":"hi","tenant":"t","thread":"chat-1","seq":7}"#).unwrap();
        assert_eq!((m.thread.as_deref(), m.seq), (Some("chat-1"), Some(7)));
    }
}

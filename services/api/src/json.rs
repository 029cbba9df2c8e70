//! trine's HTTP/JSON shapes and their conversions to and from the wire: a
//! search request and its answer, a record, an upsert's answer, an error.
//! The JSON of a search answer is also `trine search --json`'s.

use serde::Deserialize;
use serde_json::{Value, json};
use trine_core::model::{MemoryInput, parse_time};

use crate::{memory_to_wire, timestamp, v1};

/// A search as `POST /v1/search` takes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    query: String,
    tenant: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    projects: Vec<String>,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    source_prefix: Option<String>,
    #[serde(default)]
    thread: Option<String>,
    #[serde(default)]
    created_from: Option<String>,
    #[serde(default)]
    created_until: Option<String>,
    #[serde(default)]
    valid_at: Option<String>,
    #[serde(default)]
    no_verbatim: bool,
    #[serde(default)]
    max_chars: Option<u32>,
    #[serde(default)]
    min_score: Option<f64>,
    #[serde(default)]
    weights: Option<WeightsBody>,
    #[serde(default)]
    fusion: Option<FusionBody>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WeightsBody {
    #[serde(default)]
    lexical: f64,
    #[serde(default)]
    semantic: f64,
    #[serde(default)]
    verbatim: f64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FusionBody {
    #[serde(default)]
    method: String,
    #[serde(default)]
    rrf_k: f64,
    #[serde(default)]
    normalization: String,
    tier: Option<bool>,
    tier_max: Option<u32>,
    adaptive: Option<f64>,
    semantic_floor: Option<f64>,
    lexical_power: Option<f64>,
    semantic_confidence: Option<f64>,
    question_confidence: Option<f64>,
    late_weight: Option<f64>,
    late_depth: Option<u32>,
}

fn time(field: &str, raw: Option<&str>) -> Result<Option<prost_types::Timestamp>, String> {
    Ok(parse_time(field, raw)?.map(timestamp))
}

/// The search request of a `POST /v1/search` body; the error says which
/// field is wrong. Everything else is checked as a gRPC search is.
pub fn search_request_from_json(body: &[u8]) -> Result<v1::SearchRequest, String> {
    let b: SearchBody = serde_json::from_slice(body).map_err(|e| format!("not a search: {e}"))?;
    let mode = crate::mode_by_name(b.mode.as_deref().unwrap_or_default())?;
    Ok(v1::SearchRequest {
        query: b.query,
        filters: Some(v1::Filters {
            tenant: b.tenant,
            projects: b.projects,
            kinds: b.kinds,
            source_prefix: b.source_prefix.unwrap_or_default(),
            created_from: time("created_from", b.created_from.as_deref())?,
            created_until: time("created_until", b.created_until.as_deref())?,
            valid_at: time("valid_at", b.valid_at.as_deref())?,
            thread: b.thread.unwrap_or_default(),
        }),
        limit: b.limit.unwrap_or(0),
        mode: mode.into(),
        strategy: b.strategy.unwrap_or_default(),
        no_verbatim: b.no_verbatim,
        max_chars: b.max_chars.unwrap_or(0),
        min_score: b.min_score.unwrap_or(0.0),
        weights: b.weights.map(|w| v1::ListWeights {
            lexical: w.lexical,
            semantic: w.semantic,
            verbatim: w.verbatim,
        }),
        fusion: b.fusion.map(|f| v1::FusionOptions {
            method: f.method,
            rrf_k: f.rrf_k,
            normalization: f.normalization,
            tier: f.tier,
            tier_max: f.tier_max,
            adaptive: f.adaptive,
            semantic_floor: f.semantic_floor,
            lexical_power: f.lexical_power,
            semantic_confidence: f.semantic_confidence,
            question_confidence: f.question_confidence,
            late_weight: f.late_weight,
            late_depth: f.late_depth,
        }),
    })
}

/// The valid records of an upsert body, each with its position, and the
/// invalid ones' item errors.
pub type Records = (Vec<(u32, v1::Record)>, Vec<v1::ItemError>);

/// The records of a `POST /v1/memories` body (`{"records": [...]}`, each as
/// a line of `trine ingest`: a missing id is derived from the content), and
/// each invalid one's position and reason.
pub fn records_from_json(body: &[u8]) -> Result<Records, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        records: Vec<Value>,
    }
    let b: Body = serde_json::from_slice(body)
        .map_err(|e| format!("not a list of memories (give {{\"records\": [...]}}): {e}"))?;
    let mut valid = Vec::with_capacity(b.records.len());
    let mut failed = Vec::new();
    for (index, raw) in b.records.into_iter().enumerate() {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        let id = raw["id"].as_str().unwrap_or_default().to_string();
        let memory = serde_json::from_value::<MemoryInput>(raw)
            .map_err(|e| format!("not a memory: {e}"))
            .and_then(MemoryInput::into_memory);
        match memory {
            Ok(memory) => valid.push((index, memory_to_wire(&memory))),
            Err(message) => failed.push(v1::ItemError { index, id, message }),
        }
    }
    Ok((valid, failed))
}

/// The parameter `name` of a URL's query string, percent-decoded (the
/// HTTP/JSON surface's `?tenant=`, the explain page's form).
pub fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| percent_decode(value))
    })
}

/// Percent-decoding of a query value (`+` is a space; a `%` not followed by
/// two hex digits stays as it is; bytes that are not UTF-8 become U+FFFD).
pub fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (hex_digit(bytes.get(i + 1)), hex_digit(bytes.get(i + 2))) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of one hex digit (no sign, no space: `%+1` is not a byte).
fn hex_digit(b: Option<&u8>) -> Option<u8> {
    char::from(*b?)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

fn time_json(t: &Option<prost_types::Timestamp>) -> Value {
    t.as_ref()
        .and_then(|t| crate::from_timestamp("time", t).ok())
        .map_or(Value::Null, |t| json!(t.to_rfc3339()))
}

/// Where a record stands in its thread, as people read it: `thread T #seq`
/// (`thread T` without a place); `None` for a memory that stands alone.
pub fn thread_place(r: &v1::Record) -> Option<String> {
    let thread = r.thread.as_deref()?;
    Some(match r.seq {
        Some(seq) => format!("thread {thread} #{seq}"),
        None => format!("thread {thread}"),
    })
}

/// One record as JSON: every field, times in RFC 3339.
pub fn record_to_json(r: &v1::Record) -> Value {
    let metadata = r.metadata.clone().map_or(Value::Null, |m| {
        Value::Object(crate::convert::struct_to_json(m))
    });
    json!({
        "id": r.id,
        "text": r.text,
        "source": r.source,
        "tenant": r.tenant,
        "project": r.project,
        "kind": r.kind,
        "created_at": time_json(&r.created_at),
        "valid_from": time_json(&r.valid_from),
        "valid_until": time_json(&r.valid_until),
        "metadata": metadata,
        "thread": r.thread,
        "seq": r.seq,
    })
}

/// A search's answer as JSON: `{"hits": [...], "timings": {stage: ms},
/// "degraded", "degraded_reasons", "strategy", "counts_share"}`; each hit's
/// `lists` give its rank, raw score and normalised score in each list,
/// `tier` whether it is in the verbatim tier.
pub fn search_response_to_json(response: &v1::SearchResponse) -> Value {
    let entry = |e: &Option<v1::ListEntry>| {
        e.as_ref()
            .map(|e| json!({"rank": e.rank, "score": e.score, "normalized": e.normalized}))
    };
    let hits: Vec<Value> = response
        .hits
        .iter()
        .map(|h| {
            let record = h.record.clone().unwrap_or_default();
            let explain = h.explain.unwrap_or_default();
            let mut lists = serde_json::Map::new();
            for (name, e) in [
                ("lexical", entry(&explain.lexical)),
                ("semantic", entry(&explain.semantic)),
                ("verbatim", entry(&explain.verbatim)),
                ("late", entry(&explain.late)),
            ] {
                if let Some(e) = e {
                    lists.insert(name.to_string(), e);
                }
            }
            json!({
                "id": h.id,
                "score": h.score,
                "text": record.text,
                "source": record.source,
                "thread": record.thread,
                "seq": record.seq,
                "matched_by": h.matched_by,
                "lists": lists,
                "tier": explain.tier,
                "fused": explain.fused,
            })
        })
        .collect();
    let timings: serde_json::Map<String, Value> = response
        .timings
        .iter()
        .map(|t| (t.stage.clone(), json!(t.millis)))
        .collect();
    json!({
        "hits": hits,
        "timings": timings,
        "degraded": response.degraded,
        "degraded_reasons": response.degraded_reasons,
        "strategy": response.strategy,
        "counts_share": response.counts_share,
    })
}

/// An upsert's answer as JSON: the ids stored, and each refused record's
/// position, id and reason.
pub fn upsert_response_to_json(r: &v1::UpsertResponse) -> Value {
    let failed: Vec<Value> = r
        .failed
        .iter()
        .map(|e| json!({"index": e.index, "id": e.id, "message": e.message}))
        .collect();
    json!({"ids": r.ids, "failed": failed})
}

/// A gRPC code's name as gRPC spells it (`INVALID_ARGUMENT`).
pub fn code_name(code: tonic::Code) -> String {
    let name = format!("{code:?}");
    // tonic's names are CamelCase; gRPC's are SCREAMING_SNAKE_CASE.
    let mut snake = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_uppercase());
    }
    snake
}

/// An error as JSON: `{"error": {"code": "INVALID_ARGUMENT", "message"}}`.
pub fn error_to_json(code: tonic::Code, message: &str) -> Value {
    json!({"error": {"code": code_name(code), "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_body_becomes_the_request_grpc_takes() {
        let r = search_request_from_json(
            br#"{"query": "Meeting 2026-11-11 09:58", "tenant": "acme", "mode": "lexical",
                 "limit": 5, "projects": ["p"], "valid_at": "2026-11-11T00:00:00Z",
                 "fusion": {"method": "rrf", "rrf_k": 60, "tier": false}}"#,
        )
        .unwrap();
        assert_eq!(r.query, "Meeting 2026-11-11 09:58");
        assert_eq!(r.mode, i32::from(v1::Mode::Lexical));
        assert_eq!(r.limit, 5);
        let f = r.filters.unwrap();
        assert_eq!(
            (f.tenant.as_str(), f.projects.as_slice()),
            ("acme", &["p".to_string()][..])
        );
        assert!(f.valid_at.is_some());
        let fusion = r.fusion.unwrap();
        assert_eq!(
            (fusion.method.as_str(), fusion.rrf_k, fusion.tier),
            ("rrf", 60.0, Some(false))
        );
        // (body, what the error names)
        let refused: &[(&[u8], &str)] = &[
            (br#"{"tenant": "acme"}"#, "query"),
            (
                br#"{"query": "x", "tenant": "acme", "mode": "fuzzy"}"#,
                "mode",
            ),
            (
                br#"{"query": "x", "tenant": "acme", "valid_at": "yesterday"}"#,
                "valid_at",
            ),
            (br#"{"query": "x", "tenant": "acme", "limt": 3}"#, "limt"),
            (b"not json", "not a search"),
        ];
        for (body, name) in refused {
            let err = search_request_from_json(body).unwrap_err();
            assert!(err.contains(name), "{name}: {err}");
        }
    }

    #[test]
    fn records_are_validated_one_by_one() {
        let (valid, failed) = records_from_json(
            br#"{"records": [{"text": "a", "tenant": "acme"}, {"text": "b"}, {"text": "c", "tenant": "acme", "valid_from": "2026-01-01T00:00:00Z"}]}"#,
        )
        .unwrap();
        assert_eq!(valid.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].index, 1);
        assert!(valid[1].1.valid_from.is_some());
        assert!(!valid[0].1.id.is_empty(), "an id is derived");
        assert!(records_from_json(b"[]").is_err());
    }

    #[test]
    fn query_values_are_percent_decoded_strictly() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("tenant=a%2Fb&x=1", "tenant", Some("a/b")),
            ("x=1&tenant=team+one", "tenant", Some("team one")),
            ("tenant=%C3%A9t%C3%A9", "tenant", Some("été")),
            ("tenant=100%", "tenant", Some("100%")),
            ("tenant=%4", "tenant", Some("%4")),
            ("tenant=%zz", "tenant", Some("%zz")),
            // from_str_radix would read "+1" as 1: not a byte here.
            ("tenant=%+1", "tenant", Some("% 1")),
            ("tenant=%FF", "tenant", Some("\u{fffd}")),
            ("tenants=a", "tenant", None),
            ("tenant", "tenant", None),
        ];
        for (query, name, want) in cases {
            assert_eq!(query_param(Some(query), name).as_deref(), *want, "{query}");
        }
        assert_eq!(query_param(None, "tenant"), None);
    }

    #[test]
    fn errors_name_their_grpc_code() {
        let e = error_to_json(tonic::Code::InvalidArgument, "query is empty");
        assert_eq!(e["error"]["code"], "INVALID_ARGUMENT");
        assert_eq!(
            error_to_json(tonic::Code::NotFound, "")["error"]["code"],
            "NOT_FOUND"
        );
        assert_eq!(
            error_to_json(tonic::Code::ResourceExhausted, "")["error"]["code"],
            "RESOURCE_EXHAUSTED"
        );
    }
}

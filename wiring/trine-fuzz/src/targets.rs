//! One case of each target: generate, call the edge as the services call
//! it, check what must hold. `Err` names the broken invariant.

use chrono::{DateTime, Utc};
use prost::Message;
use prost_types::{ListValue, Struct, Timestamp, Value, value::Kind};
use trine_api::v1;
use trine_core::Named;
use trine_core::fusion::{self, Settings};
use trine_core::model::{
    MAX_FILTER_VALUES, MAX_LABEL_BYTES, MAX_QUERY_BYTES, MAX_SOURCE_BYTES, MemoryInput,
    check_query_bytes, parse_time,
};
use trine_core::terms::{MAX_COUNTED_TERMS, bounded, is_stop_word};
use trine_core::{Fold, Strategy, Verbatim, gate, sparse, tokens, verbatim};

use crate::Gen;

pub(crate) type Case = Result<(), String>;

pub(crate) fn check(ok: bool, why: impl FnOnce() -> String) -> Case {
    if ok { Ok(()) } else { Err(why()) }
}

/// A query: usually short, now and then at the services' size limit.
fn query(g: &mut Gen) -> String {
    if g.chance(2_000) {
        g.text(MAX_QUERY_BYTES + 1)
    } else {
        g.text(512)
    }
}

pub fn terms(g: &mut Gen) -> Case {
    let q = query(g);
    let text = g.text(256);
    for fold in [Fold::CASE, Fold::ASCII] {
        let ts = trine_core::terms(&q, fold);
        check(!ts.iter().any(|t| t.is_empty()), || {
            format!("an empty term of {q:?}")
        })?;
        check(!ts.iter().any(|t| is_stop_word(t)), || {
            format!("a stop word among the terms of {q:?}")
        })?;
        let distinct: std::collections::HashSet<&String> = ts.iter().collect();
        check(distinct.len() == ts.len(), || {
            format!("repeated terms of {q:?}: {ts:?}")
        })?;
        check(ts.len() <= tokens(&q, fold).count(), || {
            format!("more terms than tokens: {q:?}")
        })?;
        let kept = bounded(ts.clone(), MAX_COUNTED_TERMS);
        check(kept.len() == ts.len().min(MAX_COUNTED_TERMS), || {
            format!("bounded kept {} of {}", kept.len(), ts.len())
        })?;
        let mut rest = ts.iter();
        check(kept.iter().all(|k| rest.any(|t| t == k)), || {
            format!("bounded reordered the terms of {q:?}")
        })?;

        let v = Verbatim::new(&q, fold);
        let needle = verbatim::normalize(&q, fold);
        let around = format!("x {q} y");
        check(needle.is_empty() || v.matches(&around, None), || {
            format!("{q:?} is not verbatim in {around:?}")
        })?;
        check(needle.is_empty() || v.matches(&text, Some(&q)), || {
            format!("{q:?} is not verbatim in its own source")
        })?;
        let _ = v.is_token(ts.first().map_or("", String::as_str));

        let salient = gate::salient_tokens(&q, fold);
        check(salient.len() <= gate::MAX_GATE_TOKENS, || {
            format!("{} gate tokens", salient.len())
        })?;
        check(!salient.iter().any(String::is_empty), || {
            format!("an empty gate token of {q:?}")
        })?;

        let encoded = sparse::encode_text(&text, fold);
        check(sparse::is_term_frequencies(&encoded), || {
            format!("text encoding of {text:?} is not term frequencies")
        })?;
        let encoded = sparse::encode_query(&q, fold);
        check(encoded.indices.len() == encoded.values.len(), || {
            "query encoding lengths differ".to_string()
        })?;
        check(encoded.values.iter().all(|w| w.is_finite()), || {
            format!("query encoding of {q:?} is not finite")
        })?;
    }
    let _ = fusion::shaped(&q);
    let settings = Settings::default();
    let _ = fusion::tier_rule(&q, g.below(8), g.below(40), &settings);
    let max = g.below(MAX_QUERY_BYTES * 2);
    let fits = q.len() <= max.min(MAX_QUERY_BYTES);
    check(check_query_bytes(&q, max).is_ok() == fits, || {
        format!("query size check at {max} of {} bytes", q.len())
    })
}

fn timestamp(g: &mut Gen) -> Timestamp {
    Timestamp {
        seconds: g.i64(),
        nanos: g.i32(),
    }
}

fn wire_filters(g: &mut Gen) -> v1::Filters {
    v1::Filters {
        tenant: g.label(MAX_LABEL_BYTES),
        projects: g.many(MAX_FILTER_VALUES, |g| g.label(MAX_LABEL_BYTES)),
        kinds: g.many(MAX_FILTER_VALUES, |g| g.label(MAX_LABEL_BYTES)),
        source_prefix: g.label(MAX_SOURCE_BYTES),
        created_from: g.chance(2).then(|| timestamp(g)),
        created_until: g.chance(2).then(|| timestamp(g)),
        valid_at: g.chance(2).then(|| timestamp(g)),
        thread: g.label(MAX_LABEL_BYTES),
    }
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_796_000_000, 0).unwrap_or_default()
}

pub fn filters(g: &mut Gen) -> Case {
    let wire = wire_filters(g);
    let Ok(filter) = trine_api::filter_from_wire(Some(&wire), now()) else {
        return Ok(());
    };
    check(
        !filter.tenant.trim().is_empty() && filter.tenant.len() <= MAX_LABEL_BYTES,
        || format!("tenant {:?} passed", filter.tenant),
    )?;
    check(
        filter.projects.len() <= MAX_FILTER_VALUES && filter.kinds.len() <= MAX_FILTER_VALUES,
        || "too many filter values passed".to_string(),
    )?;
    let again = trine_api::filter_from_wire(Some(&trine_api::filter_to_wire(&filter)), now());
    check(again.as_ref() == Ok(&filter), || {
        format!("filter round trip: {filter:?} came back as {again:?}")
    })
}

pub fn timestamps(g: &mut Gen) -> Case {
    let wire = timestamp(g);
    if let Ok(t) = trine_api::from_timestamp("t", &wire) {
        let back = trine_api::timestamp(t);
        check(back == wire, || {
            format!("timestamp round trip: {wire:?} came back as {back:?}")
        })?;
    }
    let raw: String = if g.chance(2) {
        let t = DateTime::from_timestamp(g.i64() % 253_402_300_799, 0).unwrap_or_default();
        String::from_utf8_lossy(&g.mutate(t.to_rfc3339().into_bytes())).into_owned()
    } else {
        g.text(40)
    };
    if let Ok(Some(t)) = parse_time("created_at", Some(&raw)) {
        let again = parse_time("created_at", Some(&t.to_rfc3339()));
        check(again == Ok(Some(t)), || {
            format!("{raw:?} parsed as {t}, which came back as {again:?}")
        })?;
    }
    Ok(())
}

/// A JSON-like protobuf value, nested at most `depth` more levels.
fn value(g: &mut Gen, depth: usize) -> Value {
    let kind = match g.below(if depth == 0 { 4 } else { 6 }) {
        0 => Kind::NullValue(0),
        1 => Kind::NumberValue(g.f64()),
        2 => Kind::StringValue(g.text(64)),
        3 => Kind::BoolValue(g.chance(2)),
        4 => Kind::StructValue(structure(g, depth - 1)),
        _ => Kind::ListValue(ListValue {
            values: (0..g.below(4)).map(|_| value(g, depth - 1)).collect(),
        }),
    };
    Value { kind: Some(kind) }
}

fn structure(g: &mut Gen, depth: usize) -> Struct {
    Struct {
        fields: (0..g.below(4))
            .map(|_| (g.text(12), value(g, depth)))
            .collect(),
    }
}

fn record(g: &mut Gen) -> v1::Record {
    v1::Record {
        id: g.id(),
        text: g.text(256),
        source: g.chance(2).then(|| g.label(MAX_SOURCE_BYTES)),
        tenant: g.label(MAX_LABEL_BYTES),
        project: g.chance(2).then(|| g.label(MAX_LABEL_BYTES)),
        kind: g.chance(2).then(|| g.label(MAX_LABEL_BYTES)),
        created_at: g.chance(2).then(|| timestamp(g)),
        valid_from: g.chance(4).then(|| timestamp(g)),
        valid_until: g.chance(4).then(|| timestamp(g)),
        metadata: g.chance(2).then(|| structure(g, 4)),
        thread: g.chance(2).then(|| g.label(MAX_LABEL_BYTES)),
        seq: g.chance(2).then(|| g.i64().unsigned_abs()),
    }
}

fn weights(g: &mut Gen) -> v1::ListWeights {
    v1::ListWeights {
        lexical: g.f64(),
        semantic: g.f64(),
        verbatim: g.f64(),
    }
}

fn options(g: &mut Gen) -> v1::FusionOptions {
    let names = [
        "",
        "rrf",
        "score",
        "dbsf",
        "absolute",
        "fixed_floor",
        "min_max",
        "z_score",
    ];
    v1::FusionOptions {
        method: names[g.below(names.len())].to_string(),
        rrf_k: g.f64(),
        normalization: names[g.below(names.len())].to_string(),
        tier: g.chance(2).then(|| g.chance(2)),
        tier_max: g.chance(2).then(|| g.u32() % 64),
        adaptive: g.chance(2).then(|| g.f64()),
        semantic_floor: g.chance(2).then(|| g.f64()),
        lexical_power: g.chance(2).then(|| g.f64()),
        semantic_confidence: g.chance(2).then(|| g.f64()),
        question_confidence: g.chance(2).then(|| g.f64()),
        late_weight: g.chance(2).then(|| g.f64()),
        late_depth: g.chance(2).then(|| g.u32() % 512),
    }
}

/// One request message of each kind the services decode.
enum Request {
    Search(v1::SearchRequest),
    Upsert(v1::UpsertRequest),
    Delete(v1::DeleteRequest),
    Get(v1::GetRequest),
    Candidates(v1::CandidatesRequest),
    Nearest(v1::NearestRequest),
    Fuse(v1::FuseRequest),
}

fn request(g: &mut Gen, kind: usize) -> Request {
    match kind {
        0 => Request::Search(v1::SearchRequest {
            query: query(g),
            filters: g
                .chance(8)
                .then_some(())
                .map_or_else(|| Some(wire_filters(g)), |()| None),
            limit: g.u32() % 200,
            mode: i32::try_from(g.below(6)).unwrap_or(0) - 1,
            strategy: ["", "auto", "candidates", "bm25", "sparse", "gate", "x"][g.below(7)]
                .to_string(),
            no_verbatim: g.chance(2),
            weights: g.chance(2).then(|| weights(g)),
            fusion: g.chance(2).then(|| options(g)),
            max_chars: g.u32() % 4096,
            min_score: if g.chance(2) { g.f64() } else { 0.0 },
        }),
        1 => Request::Upsert(v1::UpsertRequest {
            records: (0..g.below(4)).map(|_| record(g)).collect(),
        }),
        2 => Request::Delete(v1::DeleteRequest {
            tenant: g.label(MAX_LABEL_BYTES),
            ids: g.many(8, Gen::id),
        }),
        3 => Request::Get(v1::GetRequest {
            tenant: g.label(MAX_LABEL_BYTES),
            ids: g.many(8, Gen::id),
        }),
        4 => Request::Candidates(v1::CandidatesRequest {
            query: query(g),
            filters: Some(wire_filters(g)),
            cap: g.u32() % 20_000,
            strategy: ["", "candidates", "bm25", "sparse", "gate"][g.below(5)].to_string(),
            question: g.chance(2),
        }),
        5 => Request::Nearest(v1::NearestRequest {
            query: query(g),
            filters: Some(wire_filters(g)),
            cap: g.u32() % 20_000,
            tokens: g.chance(2),
        }),
        _ => Request::Fuse(v1::FuseRequest {
            query: query(g),
            lexical: (0..g.below(40))
                .map(|_| v1::Candidate {
                    id: g.id(),
                    score: g.f64(),
                    verbatim: g.chance(3),
                })
                .collect(),
            semantic: (0..g.below(40))
                .map(|_| v1::Neighbor {
                    id: g.id(),
                    score: g.f64(),
                })
                .collect(),
            limit: g.u32() % 120,
            weights: g.chance(2).then(|| weights(g)),
            fusion: g.chance(2).then(|| options(g)),
            lexical_reference: g.f64(),
            terms: g.u32() % 64,
            question: g.chance(3),
            question_lexical: (0..g.below(40))
                .map(|_| v1::Candidate {
                    id: g.id(),
                    score: g.f64(),
                    verbatim: g.chance(3),
                })
                .collect(),
        }),
    }
}

fn encode(r: &Request) -> Vec<u8> {
    match r {
        Request::Search(m) => m.encode_to_vec(),
        Request::Upsert(m) => m.encode_to_vec(),
        Request::Delete(m) => m.encode_to_vec(),
        Request::Get(m) => m.encode_to_vec(),
        Request::Candidates(m) => m.encode_to_vec(),
        Request::Nearest(m) => m.encode_to_vec(),
        Request::Fuse(m) => m.encode_to_vec(),
    }
}

/// The bytes decoded as the services' codec decodes them: its wire check,
/// then prost.
fn decode(kind: usize, bytes: &[u8]) -> Option<Request> {
    use trine_api::codec::precheck;
    let passes = match kind {
        0 => precheck::<v1::SearchRequest>(bytes),
        1 => precheck::<v1::UpsertRequest>(bytes),
        2 => precheck::<v1::DeleteRequest>(bytes),
        3 => precheck::<v1::GetRequest>(bytes),
        4 => precheck::<v1::CandidatesRequest>(bytes),
        5 => precheck::<v1::NearestRequest>(bytes),
        _ => precheck::<v1::FuseRequest>(bytes),
    };
    passes.ok()?;
    Some(match kind {
        0 => Request::Search(v1::SearchRequest::decode(bytes).ok()?),
        1 => Request::Upsert(v1::UpsertRequest::decode(bytes).ok()?),
        2 => Request::Delete(v1::DeleteRequest::decode(bytes).ok()?),
        3 => Request::Get(v1::GetRequest::decode(bytes).ok()?),
        4 => Request::Candidates(v1::CandidatesRequest::decode(bytes).ok()?),
        5 => Request::Nearest(v1::NearestRequest::decode(bytes).ok()?),
        _ => Request::Fuse(v1::FuseRequest::decode(bytes).ok()?),
    })
}

pub fn wire(g: &mut Gen) -> Case {
    let kind = g.below(7);
    let bytes = match g.below(4) {
        0 => g.bytes(256),
        1 => encode(&request(g, kind)),
        _ => {
            let bytes = encode(&request(g, kind));
            g.mutate(bytes)
        }
    };
    let Some(request) = decode(kind, &bytes) else {
        return Ok(());
    };
    let defaults = Settings::default();
    match request {
        Request::Search(r) => {
            let _ = check_query_bytes(&r.query, 4096);
            let _ = trine_api::filter_from_wire(r.filters.as_ref(), now());
            let _ = trine_api::fusion_from_wire(&defaults, r.weights.as_ref(), r.fusion.as_ref());
            let _ = Strategy::parse(&r.strategy);
            let _ = v1::Mode::try_from(r.mode).map(|m| m.as_str_name());
        }
        Request::Upsert(r) => {
            for record in r.records {
                let Ok(memory) = trine_api::memory_from_wire(record) else {
                    continue;
                };
                let wire = trine_api::memory_to_wire(&memory);
                let again = trine_api::memory_from_wire(wire);
                check(
                    again
                        .as_ref()
                        .is_ok_and(|m| m.id == memory.id && m.text == memory.text),
                    || format!("memory round trip: {memory:?} came back as {again:?}"),
                )?;
            }
        }
        Request::Delete(v1::DeleteRequest { ids, .. })
        | Request::Get(v1::GetRequest { ids, .. }) => {
            let _ = trine_api::ids_from_wire(&ids);
        }
        Request::Candidates(v1::CandidatesRequest {
            query,
            filters,
            cap,
            ..
        })
        | Request::Nearest(v1::NearestRequest {
            query,
            filters,
            cap,
            ..
        }) => {
            let _ = check_query_bytes(&query, MAX_QUERY_BYTES);
            let _ = trine_api::filter_from_wire(filters.as_ref(), now());
            let _ = trine_api::cap_from_wire(cap, 100, 10_000);
        }
        Request::Fuse(r) => {
            let limit = usize::try_from(r.limit).unwrap_or(0).clamp(1, 100);
            if let Ok(hits) = trine_fusion::fuse_request(&r, &defaults, limit) {
                check(hits.len() <= limit, || {
                    format!("{} hits for a limit of {limit}", hits.len())
                })?;
                let ids: std::collections::HashSet<&str> =
                    hits.iter().map(|h| h.id.as_str()).collect();
                check(ids.len() == hits.len(), || "a hit fused twice".to_string())?;
                check(hits.iter().all(|h| h.score.is_finite()), || {
                    format!("a score that is not finite fused from {r:?}")
                })?;
            }
        }
    }
    Ok(())
}

/// A JSON value for an ingest line's field: the right type or not.
fn json(g: &mut Gen, depth: usize) -> serde_json::Value {
    use serde_json::Value as J;
    match g.below(if depth == 0 { 5 } else { 7 }) {
        0 => J::Null,
        1 => J::Bool(g.chance(2)),
        2 => serde_json::Number::from_f64(g.f64()).map_or(J::Null, J::Number),
        3 => J::Number(g.i64().into()),
        4 => J::String(g.text(64)),
        5 => J::Array((0..g.below(4)).map(|_| json(g, depth - 1)).collect()),
        _ => J::Object(
            (0..g.below(4))
                .map(|_| (g.text(12), json(g, depth - 1)))
                .collect(),
        ),
    }
}

fn ingest_line(g: &mut Gen) -> Vec<u8> {
    use serde_json::Value as J;
    let mut line = serde_json::Map::new();
    let fields = [
        "id",
        "text",
        "source",
        "tenant",
        "project",
        "kind",
        "created_at",
        "valid_from",
        "valid_until",
        "metadata",
    ];
    for field in fields {
        if g.chance(4) {
            continue;
        }
        let value = match field {
            "id" => J::String(g.id()),
            "text" => J::String(g.text(256)),
            "tenant" | "project" | "kind" => J::String(g.label(MAX_LABEL_BYTES)),
            "source" => J::String(g.label(MAX_SOURCE_BYTES)),
            "metadata" if g.chance(50) => {
                // Deeper than JSON parsers allow.
                let mut v = J::Null;
                for _ in 0..200 {
                    v = J::Array(vec![v]);
                }
                v
            }
            "metadata" => json(g, 5),
            _ => J::String(
                DateTime::from_timestamp(g.i64() % 253_402_300_799, 0)
                    .unwrap_or_default()
                    .to_rfc3339(),
            ),
        };
        let value = if g.chance(10) { json(g, 2) } else { value };
        line.insert(field.to_string(), value);
    }
    if g.chance(20) {
        line.insert(g.text(8), json(g, 1));
    }
    let bytes = serde_json::to_vec(&J::Object(line)).unwrap_or_default();
    if g.chance(3) { g.mutate(bytes) } else { bytes }
}

pub fn ingest(g: &mut Gen) -> Case {
    let line = ingest_line(g);
    let Ok(text) = std::str::from_utf8(&line) else {
        return Ok(());
    };
    let Ok(memory) = MemoryInput::from_line(text) else {
        return Ok(());
    };
    check(memory.validate().is_ok(), || {
        format!("{memory:?} passed ingest but not validation")
    })?;
    let wire = trine_api::memory_to_wire(&memory);
    check(trine_api::memory_from_wire(wire).is_ok(), || {
        format!("ingest took {memory:?}, the wire refuses it")
    })
}

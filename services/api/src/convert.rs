//! Conversions between the wire types and trine's domain types. Only the
//! service edges call these; everything behind them works on domain types.

use chrono::{DateTime, TimeZone, Utc};
use prost_types::{ListValue, Struct, Timestamp, Value, value::Kind};
use trine_core::fusion::{self, Fused, ListKind, Method, Normalization, Placing, Settings};
use trine_core::model::{
    Filter, MAX_METADATA_BYTES, MAX_SOURCE_BYTES, Memory, check_filter_values, check_label,
    derived_id, parse_id,
};
use trine_core::{Mode, Named};
use uuid::Uuid;

use crate::v1;

/// A time on the wire.
pub fn timestamp(t: DateTime<Utc>) -> Timestamp {
    Timestamp {
        seconds: t.timestamp(),
        nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(0),
    }
}

/// A wire time as a domain time; `field` names it in the error.
pub fn from_timestamp(field: &str, t: &Timestamp) -> Result<DateTime<Utc>, String> {
    u32::try_from(t.nanos)
        .ok()
        .and_then(|nanos| Utc.timestamp_opt(t.seconds, nanos).single())
        .ok_or_else(|| format!("{field} is not a valid timestamp"))
}

fn from_opt_timestamp(field: &str, t: Option<&Timestamp>) -> Result<Option<DateTime<Utc>>, String> {
    t.map(|t| from_timestamp(field, t)).transpose()
}

/// A mode on the wire.
pub fn mode_to_wire(mode: Mode) -> v1::Mode {
    match mode {
        Mode::Hybrid => v1::Mode::Hybrid,
        Mode::Semantic => v1::Mode::Semantic,
        Mode::Lexical => v1::Mode::Lexical,
    }
}

/// A wire mode as trine's: `None` where it is unspecified (the server's
/// default applies); the error names an unknown number.
pub fn mode_from_wire(raw: i32) -> Result<Option<Mode>, String> {
    match v1::Mode::try_from(raw) {
        Ok(v1::Mode::Unspecified) => Ok(None),
        Ok(v1::Mode::Hybrid) => Ok(Some(Mode::Hybrid)),
        Ok(v1::Mode::Semantic) => Ok(Some(Mode::Semantic)),
        Ok(v1::Mode::Lexical) => Ok(Some(Mode::Lexical)),
        Err(_) => Err(format!(
            "unknown mode {raw}: use {}",
            trine_core::named::one_of(<Mode as trine_core::named::VariantNames>::VARIANTS)
        )),
    }
}

/// A mode by name (`hybrid`, `semantic` or `lexical`) on the wire; an empty
/// name is unspecified.
pub fn mode_by_name(raw: &str) -> Result<v1::Mode, String> {
    if raw.trim().is_empty() {
        return Ok(v1::Mode::Unspecified);
    }
    Mode::parse(raw).map(mode_to_wire)
}

/// The search filters on the wire as a domain filter. The tenant is required;
/// an absent validity time means `now`.
pub fn filter_from_wire(
    filters: Option<&v1::Filters>,
    now: DateTime<Utc>,
) -> Result<Filter, String> {
    let f = filters.ok_or("filters are required: set filters.tenant")?;
    if f.tenant.trim().is_empty() {
        return Err("filters.tenant is required".to_string());
    }
    check_label("filters.tenant", &f.tenant)?;
    check_filter_values("filters.projects", &f.projects)?;
    check_filter_values("filters.kinds", &f.kinds)?;
    check_label("filters.thread", &f.thread)?;
    if f.source_prefix.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "filters.source_prefix is {} bytes, more than the {MAX_SOURCE_BYTES} allowed",
            f.source_prefix.len()
        ));
    }
    Ok(Filter {
        tenant: f.tenant.clone(),
        projects: f.projects.clone(),
        kinds: f.kinds.clone(),
        source_prefix: Some(f.source_prefix.clone()).filter(|p| !p.is_empty()),
        thread: Some(f.thread.clone()).filter(|t| !t.is_empty()),
        created_from: from_opt_timestamp("filters.created_from", f.created_from.as_ref())?,
        created_until: from_opt_timestamp("filters.created_until", f.created_until.as_ref())?,
        valid_at: Some(from_opt_timestamp("filters.valid_at", f.valid_at.as_ref())?.unwrap_or(now)),
        ..Filter::default()
    })
}

/// A domain filter on the wire (the tenant, projects, kinds, source prefix,
/// thread, created range and validity time; text conditions are not part of it).
pub fn filter_to_wire(f: &Filter) -> v1::Filters {
    v1::Filters {
        tenant: f.tenant.clone(),
        projects: f.projects.clone(),
        kinds: f.kinds.clone(),
        source_prefix: f.source_prefix.clone().unwrap_or_default(),
        created_from: f.created_from.map(timestamp),
        created_until: f.created_until.map(timestamp),
        valid_at: f.valid_at.map(timestamp),
        thread: f.thread.clone().unwrap_or_default(),
    }
}

/// A record on the wire as a validated memory; an empty id is derived from
/// the content.
pub fn memory_from_wire(r: v1::Record) -> Result<Memory, String> {
    if let Some(metadata) = &r.metadata
        && json_bytes_at_least(metadata, MAX_METADATA_BYTES) > MAX_METADATA_BYTES
    {
        return Err(format!(
            "metadata is more than the {MAX_METADATA_BYTES} bytes of JSON allowed"
        ));
    }
    let id = if r.id.is_empty() {
        derived_id(&r.tenant, r.source.as_deref(), &r.text)
    } else {
        parse_id(&r.id)?
    };
    let memory = Memory {
        id,
        text: r.text,
        source: r.source,
        tenant: r.tenant,
        project: r.project,
        kind: r.kind,
        created_at: from_opt_timestamp("created_at", r.created_at.as_ref())?,
        valid_from: from_opt_timestamp("valid_from", r.valid_from.as_ref())?,
        valid_until: from_opt_timestamp("valid_until", r.valid_until.as_ref())?,
        metadata: r.metadata.map(struct_to_json),
        thread: r.thread.filter(|t| !t.is_empty()),
        seq: r.seq,
    };
    memory.validate()?;
    Ok(memory)
}

/// A memory on the wire.
pub fn memory_to_wire(m: &Memory) -> v1::Record {
    v1::Record {
        id: m.id.to_string(),
        text: m.text.clone(),
        source: m.source.clone(),
        tenant: m.tenant.clone(),
        project: m.project.clone(),
        kind: m.kind.clone(),
        created_at: m.created_at.map(timestamp),
        valid_from: m.valid_from.map(timestamp),
        valid_until: m.valid_until.map(timestamp),
        metadata: m.metadata.as_ref().map(json_to_struct),
        thread: m.thread.clone(),
        seq: m.seq,
    }
}

/// A fused hit's explain on the wire: its rank, raw and normalised score in
/// each list, and whether it is in the verbatim tier.
pub fn explain_to_wire(hit: &Fused) -> v1::Explain {
    let entry = |kind| {
        hit.placing(kind).map(|p| v1::ListEntry {
            rank: p.rank,
            score: p.score,
            normalized: p.normalized,
        })
    };
    v1::Explain {
        lexical: entry(ListKind::Lexical),
        semantic: entry(ListKind::Semantic),
        verbatim: entry(ListKind::Verbatim),
        tier: hit.tier,
        fused: hit.fused,
        late: hit.late.map(|p| v1::ListEntry {
            rank: p.rank,
            score: p.score,
            normalized: p.normalized,
        }),
    }
}

/// A lexical list on the wire.
pub fn candidates_to_wire(list: &[fusion::LexicalEntry]) -> Vec<v1::Candidate> {
    list.iter()
        .map(|c| v1::Candidate {
            id: c.id.to_string(),
            score: c.score,
            verbatim: c.verbatim,
        })
        .collect()
}

/// A fused hit from the wire (fusion-svc's answer): its explain back to the
/// places it records.
pub fn fused_from_wire(hit: &v1::FusedHit) -> Result<Fused, String> {
    let id = parse_id(&hit.id)?;
    let explain = hit.explain.unwrap_or_default();
    let placings = [
        (ListKind::Lexical, explain.lexical),
        (ListKind::Semantic, explain.semantic),
        (ListKind::Verbatim, explain.verbatim),
    ]
    .into_iter()
    .filter_map(|(kind, entry)| {
        entry.map(|e| {
            (
                kind,
                Placing {
                    rank: e.rank,
                    score: e.score,
                    normalized: e.normalized,
                },
            )
        })
    })
    .collect();
    Ok(Fused {
        id,
        score: hit.score,
        fused: explain.fused,
        tier: explain.tier,
        placings,
        late: explain.late.map(|e| Placing {
            rank: e.rank,
            score: e.score,
            normalized: e.normalized,
        }),
    })
}

/// A fused hit on the wire, with its explain and the lists that hold it.
pub fn fused_to_wire(hit: &Fused) -> v1::FusedHit {
    v1::FusedHit {
        id: hit.id.to_string(),
        score: hit.score,
        explain: Some(explain_to_wire(hit)),
        matched_by: hit.matched_by().into_iter().map(String::from).collect(),
    }
}

/// A whole fusion on the wire, every field set: what a search resolved
/// (its weights and options over the gateway's `[fusion]`), sent so that
/// fusion-svc fuses it as the gateway would.
pub fn fusion_to_wire(s: &Settings) -> (v1::ListWeights, v1::FusionOptions) {
    (
        v1::ListWeights {
            lexical: s.weights.lexical,
            semantic: s.weights.semantic,
            verbatim: s.weights.verbatim,
        },
        v1::FusionOptions {
            method: s.method.name().to_string(),
            rrf_k: s.rrf_k,
            normalization: s.normalization.name().to_string(),
            tier: Some(s.tier),
            tier_max: Some(u32::try_from(s.tier_max).unwrap_or(u32::MAX)),
            adaptive: Some(s.adaptive),
            semantic_floor: Some(s.semantic_floor),
            lexical_power: Some(s.lexical_power),
            semantic_confidence: Some(s.semantic_confidence),
            question_confidence: Some(s.question_confidence),
            late_weight: Some(s.late_weight),
            late_depth: Some(u32::try_from(s.late_depth).unwrap_or(u32::MAX)),
        },
    )
}

/// Stage timings from the wire; stages this build does not know are left
/// out.
pub fn timings_from_wire(
    timings: &[v1::StageTiming],
) -> Vec<(trine_core::Stage, std::time::Duration)> {
    timings
        .iter()
        .filter_map(|t| {
            let stage = trine_core::Stage::of(&t.stage)?;
            let secs = if t.millis.is_finite() {
                t.millis.max(0.0) / 1000.0
            } else {
                0.0
            };
            Some((stage, std::time::Duration::from_secs_f64(secs)))
        })
        .collect()
}

/// A search's fusion: `defaults` with what the request's weights and fusion
/// options set (0 and unset fields keep the default). Refuses what cannot be
/// fused, saying what to give instead.
pub fn fusion_from_wire(
    defaults: &Settings,
    weights: Option<&v1::ListWeights>,
    options: Option<&v1::FusionOptions>,
) -> Result<Settings, String> {
    let mut s = *defaults;
    if let Some(w) = weights {
        for (weight, slot) in [
            (w.lexical, &mut s.weights.lexical),
            (w.semantic, &mut s.weights.semantic),
            (w.verbatim, &mut s.weights.verbatim),
        ] {
            if weight != 0.0 {
                *slot = weight;
            }
        }
    }
    if let Some(o) = options {
        if !o.method.is_empty() {
            s.method = Method::parse(&o.method)?;
        }
        if o.rrf_k != 0.0 {
            s.rrf_k = o.rrf_k;
        }
        if !o.normalization.is_empty() {
            s.normalization = Normalization::parse(&o.normalization)?;
        }
        if let Some(tier) = o.tier {
            s.tier = tier;
        }
        if let Some(max) = o.tier_max {
            s.tier_max = usize::try_from(max).unwrap_or(usize::MAX);
        }
        s.adaptive = o.adaptive.unwrap_or(s.adaptive);
        s.semantic_floor = o.semantic_floor.unwrap_or(s.semantic_floor);
        s.lexical_power = o.lexical_power.unwrap_or(s.lexical_power);
        s.semantic_confidence = o.semantic_confidence.unwrap_or(s.semantic_confidence);
        s.question_confidence = o.question_confidence.unwrap_or(s.question_confidence);
        s.late_weight = o.late_weight.unwrap_or(s.late_weight);
        if let Some(depth) = o.late_depth {
            s.late_depth = usize::try_from(depth).unwrap_or(usize::MAX);
        }
    }
    s.check().map_err(|e| match e.key {
        "lexical_weight" | "semantic_weight" | "verbatim_weight" => format!(
            "weight of the {} list is {}: give {} (0: the default)",
            e.key.trim_end_matches("_weight"),
            e.value,
            e.want
        ),
        _ => format!("fusion.{e}"),
    })?;
    Ok(s)
}

/// Stage timings on the wire, in milliseconds.
pub fn timings_to_wire(
    timings: &[(trine_core::Stage, std::time::Duration)],
) -> Vec<v1::StageTiming> {
    timings
        .iter()
        .map(|(stage, took)| v1::StageTiming {
            stage: stage.name().to_string(),
            millis: took.as_secs_f64() * 1000.0,
        })
        .collect()
}

/// A request's cap on how many points a channel reads: 0 means `default`;
/// above `max` is refused.
pub fn cap_from_wire(requested: u32, default: usize, max: usize) -> Result<usize, String> {
    match usize::try_from(requested).unwrap_or(usize::MAX) {
        0 => Ok(default),
        cap if cap > max => Err(format!("cap {cap} is above the maximum {max}")),
        cap => Ok(cap),
    }
}

/// Parses wire ids; the error names the first that is not a UUID.
pub fn ids_from_wire(ids: &[String]) -> Result<Vec<Uuid>, String> {
    ids.iter().map(|id| parse_id(id)).collect()
}

/// A lower bound of the bytes of `s` as JSON (quotes, colons, commas and
/// brackets counted, escapes not), counted only until it passes `limit`: a
/// metadata bomb is refused after `limit` bytes of work, not its own size.
pub fn json_bytes_at_least(s: &Struct, limit: usize) -> usize {
    enum Node<'a> {
        Fields(&'a Struct),
        Value(&'a Value),
    }
    let mut total = 0usize;
    let mut stack = vec![Node::Fields(s)];
    while let Some(node) = stack.pop() {
        if total > limit {
            break;
        }
        match node {
            Node::Fields(s) => {
                total += 2 + s.fields.len().saturating_sub(1);
                for (key, value) in &s.fields {
                    total += key.len() + 3;
                    if total > limit {
                        break;
                    }
                    stack.push(Node::Value(value));
                }
            }
            Node::Value(v) => match &v.kind {
                None | Some(Kind::NullValue(_)) | Some(Kind::BoolValue(_)) => total += 4,
                Some(Kind::NumberValue(_)) => total += 1,
                Some(Kind::StringValue(text)) => total += text.len() + 2,
                Some(Kind::StructValue(s)) => stack.push(Node::Fields(s)),
                Some(Kind::ListValue(list)) => {
                    total += 2 + list.values.len().saturating_sub(1);
                    stack.extend(list.values.iter().take(limit).map(Node::Value));
                }
            },
        }
    }
    total
}

pub(crate) fn struct_to_json(s: Struct) -> serde_json::Map<String, serde_json::Value> {
    s.fields
        .into_iter()
        .map(|(k, v)| (k, value_to_json(v)))
        .collect()
}

fn value_to_json(v: Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v.kind {
        None | Some(Kind::NullValue(_)) => J::Null,
        Some(Kind::BoolValue(b)) => J::Bool(b),
        Some(Kind::NumberValue(n)) => serde_json::Number::from_f64(n).map_or(J::Null, J::Number),
        Some(Kind::StringValue(s)) => J::String(s),
        Some(Kind::ListValue(l)) => J::Array(l.values.into_iter().map(value_to_json).collect()),
        Some(Kind::StructValue(s)) => J::Object(struct_to_json(s)),
    }
}

fn json_to_struct(m: &serde_json::Map<String, serde_json::Value>) -> Struct {
    Struct {
        fields: m
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
    }
}

fn json_to_value(v: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    let kind = match v {
        J::Null => Kind::NullValue(0),
        J::Bool(b) => Kind::BoolValue(*b),
        J::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        J::String(s) => Kind::StringValue(s.clone()),
        J::Array(a) => Kind::ListValue(ListValue {
            values: a.iter().map(json_to_value).collect(),
        }),
        J::Object(o) => Kind::StructValue(json_to_struct(o)),
    };
    Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_round_trip() {
        let mut meta = serde_json::Map::new();
        meta.insert("n".into(), serde_json::json!(1.5));
        meta.insert("tags".into(), serde_json::json!(["a", {"b": null}]));
        let m = Memory {
            id: Uuid::new_v4(),
            text: "Meeting 2026-11-11 09:58".into(),
            source: Some("recording/0b85ed4a".into()),
            tenant: "t".into(),
            project: Some("meetings".into()),
            kind: None,
            created_at: Some(Utc.with_ymd_and_hms(2026, 11, 11, 10, 11, 43).unwrap()),
            valid_from: None,
            valid_until: Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap()),
            metadata: Some(meta),
            thread: Some("standup/2026-11-11".into()),
            seq: Some(0),
        };
        assert_eq!(memory_from_wire(memory_to_wire(&m)), Ok(m));
    }

    #[test]
    fn threads_are_checked_at_the_edge() {
        let record = |thread: Option<&str>, tenant: &str| v1::Record {
            text: "hello".into(),
            tenant: tenant.into(),
            thread: thread.map(str::to_string),
            seq: Some(3),
            ..v1::Record::default()
        };
        // An empty thread is no thread; a blank or oversized one is refused.
        let m = memory_from_wire(record(Some(""), "t")).unwrap();
        assert_eq!((m.thread, m.seq), (None, Some(3)));
        let blank = memory_from_wire(record(Some("  "), "t")).unwrap_err();
        assert!(blank.contains("thread"), "{blank}");
        let long = "x".repeat(257);
        let err = memory_from_wire(record(Some(&long), "t")).unwrap_err();
        assert!(err.contains("thread is 257 bytes"), "{err}");
        let filters = v1::Filters {
            tenant: "t".into(),
            thread: long,
            ..v1::Filters::default()
        };
        let err = filter_from_wire(Some(&filters), Utc::now()).unwrap_err();
        assert!(err.contains("filters.thread"), "{err}");
        let filters = v1::Filters {
            tenant: "t".into(),
            thread: "chat-1".into(),
            ..v1::Filters::default()
        };
        let f = filter_from_wire(Some(&filters), Utc::now()).unwrap();
        assert_eq!(f.thread.as_deref(), Some("chat-1"));
        assert_eq!(filter_to_wire(&f).thread, "chat-1");
    }

    #[test]
    fn metadata_size_is_bounded_below_by_its_json_and_counted_no_further() {
        let field = |k: &str, kind: Kind| (k.to_string(), Value { kind: Some(kind) });
        let nested = Struct {
            fields: [field("b", Kind::NullValue(0))].into(),
        };
        let s = Struct {
            fields: [
                field("n", Kind::NumberValue(1.5)),
                field("s", Kind::StringValue("x\"y".into())),
                field("t", Kind::BoolValue(true)),
                field("o", Kind::StructValue(nested)),
                field(
                    "l",
                    Kind::ListValue(ListValue {
                        values: vec![Value {
                            kind: Some(Kind::NumberValue(2.0)),
                        }],
                    }),
                ),
            ]
            .into(),
        };
        let json = serde_json::to_vec(&struct_to_json(s.clone()))
            .unwrap()
            .len();
        let bound = json_bytes_at_least(&s, usize::MAX);
        assert!(bound <= json && bound > json / 2, "{bound} against {json}");

        let bomb = Struct {
            fields: (0..100_000)
                .map(|i| field(&format!("k{i}"), Kind::NumberValue(1.0)))
                .collect(),
        };
        let counted = json_bytes_at_least(&bomb, MAX_METADATA_BYTES);
        assert!(counted > MAX_METADATA_BYTES && counted < 2 * MAX_METADATA_BYTES);
        let record = v1::Record {
            text: "t".into(),
            tenant: "acme".into(),
            metadata: Some(bomb),
            ..v1::Record::default()
        };
        let e = memory_from_wire(record).unwrap_err();
        assert!(e.contains("metadata is more than the 65536 bytes"), "{e}");
    }

    #[test]
    fn filters_need_a_tenant() {
        let now = Utc::now();
        assert!(filter_from_wire(None, now).is_err());
        let f = v1::Filters::default();
        assert!(
            filter_from_wire(Some(&f), now)
                .unwrap_err()
                .contains("tenant")
        );
        let f = v1::Filters {
            tenant: "t".into(),
            ..Default::default()
        };
        assert_eq!(filter_from_wire(Some(&f), now).unwrap().valid_at, Some(now));
    }

    #[test]
    fn bad_timestamps_are_refused() {
        let t = Timestamp {
            seconds: 0,
            nanos: -1,
        };
        assert!(from_timestamp("x", &t).is_err());
    }

    #[test]
    fn fusion_options_override_the_defaults_or_are_refused() {
        let base = fusion::Settings::default();
        let with = |f: fn(&mut v1::FusionOptions)| {
            let mut o = v1::FusionOptions::default();
            f(&mut o);
            fusion_from_wire(&base, None, Some(&o))
        };
        assert_eq!(with(|_| {}).unwrap(), base, "zero values keep the defaults");
        let got = with(|o| o.lexical_power = Some(3.0)).unwrap();
        assert_eq!(got.lexical_power, 3.0);
        let got = with(|o| o.semantic_confidence = Some(0.0)).unwrap();
        assert_eq!(got.semantic_confidence, 0.0);
        assert_eq!(with(|o| o.adaptive = Some(1.5)).unwrap().adaptive, 1.5);
        assert_eq!(with(|o| o.tier_max = Some(7)).unwrap().tier_max, 7);
        let got = with(|o| o.question_confidence = Some(0.0)).unwrap();
        assert_eq!(got.question_confidence, 0.0);
        // (options, what the message names)
        type Edit = fn(&mut v1::FusionOptions);
        let refused: &[(Edit, &str)] = &[
            (|o| o.lexical_power = Some(0.0), "lexical_power"),
            (|o| o.lexical_power = Some(-1.0), "lexical_power"),
            (|o| o.lexical_power = Some(f64::NAN), "lexical_power"),
            (|o| o.lexical_power = Some(9.0), "lexical_power"),
            (
                |o| o.semantic_confidence = Some(-1.0),
                "semantic_confidence",
            ),
            (
                |o| o.semantic_confidence = Some(f64::INFINITY),
                "semantic_confidence",
            ),
            (|o| o.adaptive = Some(-0.5), "adaptive"),
            (|o| o.question_confidence = Some(2.0), "question_confidence"),
            (|o| o.rrf_k = -1.0, "rrf_k"),
            (|o| o.semantic_floor = Some(1.0), "semantic_floor"),
            (|o| o.method = "max".into(), "method"),
        ];
        for (f, name) in refused {
            let err = with(*f).unwrap_err();
            assert!(err.contains(name), "{name}: {err}");
        }
    }
}

/// The time the caller gave a call (its `grpc-timeout`), if it gave one in
/// the form gRPC defines; a malformed value counts as none (tonic's server
/// does the same).
pub fn caller_timeout(metadata: &tonic::metadata::MetadataMap) -> Option<std::time::Duration> {
    metadata
        .get("grpc-timeout")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_grpc_timeout)
}

/// A `grpc-timeout` value: at most eight digits and a unit (`H`, `M`, `S`,
/// `m`, `u`, `n`).
pub fn parse_grpc_timeout(value: &str) -> Option<std::time::Duration> {
    use std::time::Duration;
    let digits = value.get(..value.len().checked_sub(1)?)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match value.get(value.len() - 1..)? {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod timeout_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn grpc_timeouts_parse_as_the_protocol_defines() {
        for (value, want) in [
            ("1H", Some(Duration::from_secs(3600))),
            ("2M", Some(Duration::from_secs(120))),
            ("10S", Some(Duration::from_secs(10))),
            ("1500m", Some(Duration::from_millis(1500))),
            ("99999999u", Some(Duration::from_micros(99_999_999))),
            ("5n", Some(Duration::from_nanos(5))),
            ("0m", Some(Duration::ZERO)),
            ("123456789m", None),
            ("m", None),
            ("", None),
            ("10", None),
            ("10s", None),
            ("-1S", None),
            ("1.5S", None),
            ("é", None),
            ("1é", None),
        ] {
            assert_eq!(parse_grpc_timeout(value), want, "{value:?}");
        }
        let mut request = tonic::Request::new(());
        assert_eq!(caller_timeout(request.metadata()), None);
        request.set_timeout(Duration::from_millis(250));
        assert_eq!(
            caller_timeout(request.metadata()),
            Some(Duration::from_millis(250))
        );
    }
}

/// The caller's deadline, carried to the hops a call makes on its task
/// (e.g. the embedding of an Upsert's texts by semantic-svc).
pub mod deadline {
    use std::future::Future;
    use std::time::{Duration, Instant};

    tokio::task_local! {
        static DEADLINE: Option<Instant>;
    }

    /// Runs `work` with the deadline `within` from now (`None`: none).
    pub async fn scope<F: Future>(within: Option<Duration>, work: F) -> F::Output {
        DEADLINE
            .scope(within.map(|d| Instant::now() + d), work)
            .await
    }

    /// What is left of the current call's deadline, `at_most` when it has
    /// none or more (zero once it has passed).
    pub fn left(at_most: Duration) -> Duration {
        DEADLINE
            .try_with(|d| *d)
            .ok()
            .flatten()
            .map_or(at_most, |at| {
                at.saturating_duration_since(Instant::now()).min(at_most)
            })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[tokio::test]
        async fn a_scope_carries_the_deadline_to_its_task() {
            let long = Duration::from_secs(60);
            assert_eq!(left(long), long, "no scope: the ceiling");
            let inner = scope(Some(Duration::from_millis(500)), async { left(long) }).await;
            assert!(inner <= Duration::from_millis(500) && inner > Duration::from_millis(100));
            let none = scope(None, async { left(long) }).await;
            assert_eq!(none, long);
            let passed = scope(Some(Duration::ZERO), async { left(long) }).await;
            assert_eq!(passed, Duration::ZERO);
        }
    }
}

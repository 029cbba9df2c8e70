//! A memory as a Qdrant payload, and back: the one layout both stores write
//! and read. The payload holds the keys of [`keys`]: times as RFC 3339
//! strings in UTC (`Z`), the metadata as a JSON object, absent options left
//! out. Reading is tolerant: a missing or malformed optional key reads as
//! `None`.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::{Memory, keys};

/// The payload of a memory. The id is the point id, not a payload key.
pub fn to_payload(memory: &Memory) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert(keys::TEXT.into(), memory.text.clone().into());
    payload.insert(keys::TENANT.into(), memory.tenant.clone().into());
    let strings = [
        (keys::SOURCE, &memory.source),
        (keys::PROJECT, &memory.project),
        (keys::KIND, &memory.kind),
    ];
    for (key, value) in strings {
        if let Some(value) = value {
            payload.insert(key.into(), value.clone().into());
        }
    }
    let times = [
        (keys::CREATED_AT, memory.created_at),
        (keys::VALID_FROM, memory.valid_from),
        (keys::VALID_UNTIL, memory.valid_until),
    ];
    for (key, value) in times {
        if let Some(value) = value {
            payload.insert(key.into(), time_to_string(value).into());
        }
    }
    if let Some(metadata) = &memory.metadata {
        payload.insert(keys::METADATA.into(), Value::Object(metadata.clone()));
    }
    payload
}

/// A time as the payload holds it: RFC 3339, UTC, `Z`.
pub fn time_to_string(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// The memory of a payload read back. Missing keys read as empty (text,
/// tenant) or `None`; a mistyped optional key, or a time that is not RFC
/// 3339, reads as `None` (with a warning for the time).
pub fn to_memory(id: Uuid, payload: Map<String, Value>) -> Memory {
    let string = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
    let time = |key: &str| {
        let raw = payload.get(key).and_then(Value::as_str)?;
        match DateTime::parse_from_rfc3339(raw) {
            Ok(time) => Some(time.with_timezone(&Utc)),
            Err(e) => {
                tracing::warn!(%id, key, raw, error = %e, "payload time is not rfc 3339, read as absent");
                None
            }
        }
    };
    Memory {
        id,
        text: string(keys::TEXT).unwrap_or_default(),
        source: string(keys::SOURCE),
        tenant: string(keys::TENANT).unwrap_or_default(),
        project: string(keys::PROJECT),
        kind: string(keys::KIND),
        created_at: time(keys::CREATED_AT),
        valid_from: time(keys::VALID_FROM),
        valid_until: time(keys::VALID_UNTIL),
        metadata: payload
            .get(keys::METADATA)
            .and_then(Value::as_object)
            .cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> DateTime<Utc> {
        s.parse().expect("a test time")
    }

    fn full() -> Memory {
        let mut metadata = Map::new();
        metadata.insert("lang".into(), "ro".into());
        Memory {
            id: Uuid::from_u128(7),
            text: "ședință la 09:58".into(),
            source: Some("git/a.md".into()),
            tenant: "acme".into(),
            project: Some("p".into()),
            kind: Some("note".into()),
            created_at: Some(ts("2026-11-11T09:58:00Z")),
            valid_from: Some(ts("2026-01-01T00:00:00.5Z")),
            valid_until: Some(ts("2027-01-01T00:00:00Z")),
            metadata: Some(metadata),
        }
    }

    #[test]
    fn a_memory_round_trips_through_its_payload() {
        let memory = full();
        let payload = to_payload(&memory);
        assert_eq!(payload[keys::CREATED_AT], "2026-11-11T09:58:00Z");
        assert_eq!(payload[keys::VALID_FROM], "2026-01-01T00:00:00.500Z");
        assert_eq!(to_memory(memory.id, payload), memory);
    }

    #[test]
    fn absent_options_are_left_out_and_read_back_as_none() {
        let memory = Memory {
            source: None,
            project: None,
            kind: None,
            created_at: None,
            valid_from: None,
            valid_until: None,
            metadata: None,
            ..full()
        };
        let payload = to_payload(&memory);
        let mut keys: Vec<&str> = payload.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["tenant", "text"]);
        assert_eq!(to_memory(memory.id, payload), memory);
    }

    #[test]
    fn a_foreign_payload_reads_tolerantly() {
        let mut payload = Map::new();
        payload.insert(keys::TEXT.into(), "hello".into());
        payload.insert(keys::CREATED_AT.into(), "yesterday".into());
        payload.insert(keys::METADATA.into(), Value::from(3));
        let memory = to_memory(Uuid::from_u128(1), payload);
        assert_eq!(memory.text, "hello");
        assert_eq!(memory.tenant, "");
        assert_eq!(memory.created_at, None);
        assert_eq!(memory.metadata, None);
        assert_eq!(to_memory(Uuid::from_u128(1), Map::new()).text, "");
    }
}

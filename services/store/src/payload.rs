//! A memory as a Qdrant payload, and back: the one layout both stores write
//! and read. Where each field lives is a [`PayloadSchema`] (trine's own keys
//! by default, or those of a collection another tool wrote), and how times
//! are written is its [`TimeFormat`] (RFC 3339 strings in UTC by default).
//! The metadata is a JSON object; absent options are left out. Reading is
//! tolerant: a missing or malformed optional key reads as `None`.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde_json::{Map, Value};
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};
use uuid::Uuid;

use crate::{Memory, keys};

/// How a collection writes its times (in a config file: `rfc3339`,
/// `unix_seconds`, `unix_millis`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Deserialize,
    EnumString,
    IntoStaticStr,
    VariantNames,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TimeFormat {
    /// RFC 3339 strings (trine writes UTC, `Z`); datetime indexes and ranges.
    #[default]
    Rfc3339,
    /// Seconds since the Unix epoch, as numbers; float indexes, numeric ranges.
    UnixSeconds,
    /// Milliseconds since the Unix epoch, as numbers.
    UnixMillis,
}

impl Named for TimeFormat {
    const WHAT: &'static str = "time format";
}

impl TimeFormat {
    /// A time as the payload holds it (Unix seconds drop the fraction).
    pub fn write(self, time: DateTime<Utc>) -> Value {
        match self {
            Self::Rfc3339 => time_to_string(time).into(),
            Self::UnixSeconds => time.timestamp().into(),
            Self::UnixMillis => time.timestamp_millis().into(),
        }
    }

    /// The number a range condition compares, for the Unix formats: the
    /// exact time, fraction included, so that a bound between two stored
    /// values cuts where it should (`>= 10.5 s` leaves out 10 s).
    pub fn number(self, time: DateTime<Utc>) -> f64 {
        let micros = time.timestamp_micros() as f64;
        match self {
            Self::UnixMillis => micros / 1e3,
            Self::Rfc3339 | Self::UnixSeconds => micros / 1e6,
        }
    }

    /// A payload value as a time, or `None` when it is not one in this format.
    pub fn read(self, value: &Value) -> Option<DateTime<Utc>> {
        match self {
            Self::Rfc3339 => DateTime::parse_from_rfc3339(value.as_str()?)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            Self::UnixSeconds | Self::UnixMillis => {
                let n = value.as_f64()?;
                let millis = if self == Self::UnixSeconds {
                    n * 1000.0
                } else {
                    n
                };
                if !millis.is_finite() || millis.abs() > 8.64e15 {
                    return None;
                }
                Utc.timestamp_millis_opt(millis.round() as i64).single()
            }
        }
    }
}

/// Where a collection keeps each field of a memory, and how it writes times.
/// In a config file (`[payload]`) every key may be left out: trine's own.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PayloadSchema {
    pub text: String,
    pub source: String,
    /// The copy of the source under the phrase index ([`FieldIndex::Phrase`]).
    pub source_text: String,
    pub tenant: String,
    pub project: String,
    pub kind: String,
    pub created_at: String,
    pub valid_from: String,
    pub valid_until: String,
    pub metadata: String,
    pub thread: String,
    pub seq: String,
    pub time_format: TimeFormat,
}

impl Default for PayloadSchema {
    /// trine's own layout ([`keys`], RFC 3339).
    fn default() -> Self {
        Self {
            text: keys::TEXT.into(),
            source: keys::SOURCE.into(),
            source_text: keys::SOURCE_TEXT.into(),
            tenant: keys::TENANT.into(),
            project: keys::PROJECT.into(),
            kind: keys::KIND.into(),
            created_at: keys::CREATED_AT.into(),
            valid_from: keys::VALID_FROM.into(),
            valid_until: keys::VALID_UNTIL.into(),
            metadata: keys::METADATA.into(),
            thread: keys::THREAD.into(),
            seq: keys::SEQ.into(),
            time_format: TimeFormat::Rfc3339,
        }
    }
}

impl PayloadSchema {
    /// The payload indexes a collection in this layout has: each indexed
    /// field's key and index, the text index first.
    pub fn indexes(&self) -> [(&str, FieldIndex); 11] {
        [
            (&self.text, FieldIndex::Text),
            (&self.source_text, FieldIndex::Phrase),
            (&self.tenant, FieldIndex::Tenant),
            (&self.project, FieldIndex::Keyword),
            (&self.kind, FieldIndex::Keyword),
            (&self.source, FieldIndex::KeywordPrefix),
            (&self.created_at, FieldIndex::Time),
            (&self.valid_from, FieldIndex::Time),
            (&self.valid_until, FieldIndex::Time),
            (&self.thread, FieldIndex::Keyword),
            (&self.seq, FieldIndex::Integer),
        ]
    }

    /// The kind of index Qdrant reports for `index` in this layout (as
    /// [`crate::PayloadIndex::kind`] holds it).
    pub fn reported_kind(&self, index: FieldIndex) -> &'static str {
        match index {
            FieldIndex::Text | FieldIndex::Phrase => "text",
            FieldIndex::Tenant | FieldIndex::Keyword | FieldIndex::KeywordPrefix => "keyword",
            FieldIndex::Integer => "integer",
            FieldIndex::Time => match self.time_format {
                TimeFormat::Rfc3339 => "datetime",
                TimeFormat::UnixSeconds | TimeFormat::UnixMillis => "float",
            },
        }
    }

    /// Every key with its field's name.
    pub fn keys(&self) -> [(&'static str, &str); 12] {
        [
            ("text", &self.text),
            ("source", &self.source),
            ("source_text", &self.source_text),
            ("tenant", &self.tenant),
            ("project", &self.project),
            ("kind", &self.kind),
            ("created_at", &self.created_at),
            ("valid_from", &self.valid_from),
            ("valid_until", &self.valid_until),
            ("metadata", &self.metadata),
            ("thread", &self.thread),
            ("seq", &self.seq),
        ]
    }

    /// Every key is a plain, non-empty payload key, and no two fields share one.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (field, key) in self.keys() {
            let plain = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.');
            if !plain {
                return Err(format!(
                    "payload key of {field} is {key:?}: give letters, digits, _, - or . (dots for nested keys)"
                ));
            }
            if !seen.insert(key) {
                return Err(format!("payload key {key:?} is given to two fields"));
            }
        }
        Ok(())
    }

    /// The payload of a memory. The id is the point id, not a payload key.
    pub fn to_payload(&self, memory: &Memory) -> Map<String, Value> {
        let mut payload = Map::new();
        payload.insert(self.text.clone(), memory.text.clone().into());
        payload.insert(self.tenant.clone(), memory.tenant.clone().into());
        let strings = [
            (&self.source, &memory.source),
            (&self.project, &memory.project),
            (&self.kind, &memory.kind),
            (&self.thread, &memory.thread),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                payload.insert(key.clone(), value.clone().into());
            }
        }
        if let Some(source) = &memory.source {
            payload.insert(self.source_text.clone(), source.clone().into());
        }
        let times = [
            (&self.created_at, memory.created_at),
            (&self.valid_from, memory.valid_from),
            (&self.valid_until, memory.valid_until),
        ];
        for (key, value) in times {
            if let Some(value) = value {
                payload.insert(key.clone(), self.time_format.write(value));
            }
        }
        if let Some(metadata) = &memory.metadata {
            payload.insert(self.metadata.clone(), Value::Object(metadata.clone()));
        }
        if let Some(seq) = memory.seq {
            payload.insert(self.seq.clone(), seq.into());
        }
        payload
    }

    /// The memory of a payload read back. Missing keys read as empty (text,
    /// tenant) or `None`; a mistyped optional key, or a time not in the
    /// schema's format, reads as `None` (with a warning for the time).
    pub fn to_memory(&self, id: Uuid, payload: Map<String, Value>) -> Memory {
        let string = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
        let time = |key: &str| {
            let raw = payload.get(key)?;
            let time = self.time_format.read(raw);
            if time.is_none() {
                let format = self.time_format.name();
                tracing::warn!(%id, key, %raw, format, "payload time is not in the collection's format, read as absent");
            }
            time
        };
        Memory {
            id,
            text: string(&self.text).unwrap_or_default(),
            source: string(&self.source),
            tenant: string(&self.tenant).unwrap_or_default(),
            project: string(&self.project),
            kind: string(&self.kind),
            created_at: time(&self.created_at),
            valid_from: time(&self.valid_from),
            valid_until: time(&self.valid_until),
            metadata: payload
                .get(&self.metadata)
                .and_then(Value::as_object)
                .cloned(),
            thread: string(&self.thread),
            seq: payload.get(&self.seq).and_then(Value::as_u64),
        }
    }
}

/// A payload index of a trine collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldIndex {
    /// Full text: word tokenizer, lowercase, phrase matching, BM25 scoring.
    Text,
    /// Full text for phrases alone (no scoring): the source's copy. Made
    /// only with a new collection, whose every point then has the copy; an
    /// older collection goes without, and searches read its sources.
    Phrase,
    /// Keyword, the tenant (organises storage by it where Qdrant can).
    Tenant,
    Keyword,
    /// Keyword with prefix matching (the source).
    KeywordPrefix,
    /// A time: datetime for RFC 3339, float for Unix numbers.
    Time,
    /// An integer (a memory's place in its thread).
    Integer,
}

/// The bounds of a time condition, any side open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeBounds {
    pub gte: Option<DateTime<Utc>>,
    pub gt: Option<DateTime<Utc>>,
    pub lt: Option<DateTime<Utc>>,
    pub lte: Option<DateTime<Utc>>,
}

impl TimeBounds {
    /// The validity view at `at` (docs/design.md §1): the bounds `valid_from`
    /// must meet (`<= at`) and those `valid_until` must meet (`> at`); an
    /// absent side is open, which the stores add.
    pub fn validity_at(at: DateTime<Utc>) -> (Self, Self) {
        let from = Self {
            lte: Some(at),
            ..Self::default()
        };
        let until = Self {
            gt: Some(at),
            ..Self::default()
        };
        (from, until)
    }
}

/// A time as trine writes it: RFC 3339, UTC, `Z`.
pub fn time_to_string(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
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
            thread: Some("chat-1/D3".into()),
            seq: Some(4),
        }
    }

    #[test]
    fn a_memory_round_trips_through_its_payload() {
        let memory = full();
        let payload = PayloadSchema::default().to_payload(&memory);
        assert_eq!(payload[keys::CREATED_AT], "2026-11-11T09:58:00Z");
        assert_eq!(payload[keys::VALID_FROM], "2026-01-01T00:00:00.500Z");
        assert_eq!(
            PayloadSchema::default().to_memory(memory.id, payload),
            memory
        );
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
            thread: None,
            seq: None,
            ..full()
        };
        let payload = PayloadSchema::default().to_payload(&memory);
        let mut keys: Vec<&str> = payload.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["tenant", "text"]);
        assert_eq!(
            PayloadSchema::default().to_memory(memory.id, payload),
            memory
        );
    }

    #[test]
    fn a_foreign_payload_reads_tolerantly() {
        let mut payload = Map::new();
        payload.insert(keys::TEXT.into(), "hello".into());
        payload.insert(keys::CREATED_AT.into(), "yesterday".into());
        payload.insert(keys::METADATA.into(), Value::from(3));
        let memory = PayloadSchema::default().to_memory(Uuid::from_u128(1), payload);
        assert_eq!(memory.text, "hello");
        assert_eq!(memory.tenant, "");
        assert_eq!(memory.created_at, None);
        assert_eq!(memory.metadata, None);
        assert_eq!(
            PayloadSchema::default()
                .to_memory(Uuid::from_u128(1), Map::new())
                .text,
            ""
        );
    }

    #[test]
    fn another_tools_layout_round_trips() {
        let schema = PayloadSchema {
            text: "content".into(),
            source: "url".into(),
            created_at: "ts".into(),
            time_format: TimeFormat::UnixSeconds,
            ..PayloadSchema::default()
        };
        let memory = Memory {
            valid_from: Some(ts("2026-01-01T00:00:00Z")),
            ..full()
        };
        let payload = schema.to_payload(&memory);
        assert_eq!(payload["content"], memory.text.as_str());
        assert_eq!(payload["url"], "git/a.md");
        assert_eq!(payload["ts"], 1_794_391_080_i64);
        assert!(!payload.contains_key("text") && !payload.contains_key("created_at"));
        assert_eq!(schema.to_memory(memory.id, payload), memory);
    }

    #[test]
    fn time_formats_write_and_read() {
        let t = ts("2026-11-11T09:58:00.250Z");
        // (format, written, read back)
        let cases = [
            (
                TimeFormat::Rfc3339,
                Value::from("2026-11-11T09:58:00.250Z"),
                t,
            ),
            (
                TimeFormat::UnixSeconds,
                Value::from(1_794_391_080_i64),
                ts("2026-11-11T09:58:00Z"),
            ),
            (
                TimeFormat::UnixMillis,
                Value::from(1_794_391_080_250_i64),
                t,
            ),
        ];
        for (format, written, read) in cases {
            assert_eq!(format.write(t), written, "{format:?}");
            assert_eq!(format.read(&written), Some(read), "{format:?}");
            assert_eq!(TimeFormat::parse(format.name()), Ok(format));
        }
        assert_eq!(
            TimeFormat::UnixSeconds.read(&Value::from(1.5e9)),
            Some(ts("2017-07-14T02:40:00Z"))
        );
        assert_eq!(
            TimeFormat::UnixSeconds.read(&Value::from("1500000000")),
            None
        );
        assert_eq!(TimeFormat::Rfc3339.read(&Value::from(1)), None);
        assert_eq!(TimeFormat::UnixMillis.read(&Value::from(1e300)), None);
        assert!(
            TimeFormat::parse("epoch")
                .unwrap_err()
                .contains("unix_seconds")
        );
        let names: Vec<&str> = TimeFormat::all().iter().map(|f| f.name()).collect();
        assert_eq!(names, ["rfc3339", "unix_seconds", "unix_millis"]);
        // Range bounds keep their fraction: 09:58:00.250 is after 09:58:00.
        assert_eq!(TimeFormat::UnixSeconds.number(t), 1_794_391_080.25);
        assert_eq!(TimeFormat::UnixMillis.number(t), 1_794_391_080_250.0);
    }

    #[test]
    fn schemas_are_validated() {
        assert_eq!(PayloadSchema::default().validate(), Ok(()));
        let cases = [
            (
                PayloadSchema {
                    text: String::new(),
                    ..PayloadSchema::default()
                },
                "payload key of text",
            ),
            (
                PayloadSchema {
                    source: "a b".into(),
                    ..PayloadSchema::default()
                },
                "payload key of source",
            ),
            (
                PayloadSchema {
                    kind: "text".into(),
                    ..PayloadSchema::default()
                },
                "given to two fields",
            ),
        ];
        for (schema, want) in cases {
            let err = schema.validate().unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }
}

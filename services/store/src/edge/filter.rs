//! A trine [`Filter`] as a Qdrant Edge filter: one function, every condition
//! `must`, the tenant first; full-text matches guarded ([`text_match`]).

use chrono::{DateTime, Utc};
use qdrant_edge as qe;
use qe::external::ordered_float::OrderedFloat;
use qe::{
    Condition, FieldCondition, IsEmptyCondition, IsNullCondition, Match, MatchPhrase, MatchTextAny,
    Range,
};

use crate::text_match::{self, Matching, TextCondition};
use crate::{
    Filter, PayloadSchema, Result, StoreError, TimeBounds, TimeFormat, check_ids, check_spans,
};

/// The Qdrant filter of a read. The tenant is required; an empty `any_terms`
/// gate, an empty term or an empty phrase are refused rather than read as
/// "no condition".
pub(super) fn to_qdrant(filter: &Filter, layout: &PayloadSchema) -> Result<qe::Filter> {
    let mut must = vec![tenant(filter, layout)?];
    must.extend(field_conditions(filter, layout)?);
    for term in &filter.all_terms {
        must.extend(text(term, "all_terms", layout)?);
    }
    let must_not = filter
        .no_terms
        .iter()
        .map(|term| Ok(one(text(term, "no_terms", layout)?)))
        .collect::<Result<Vec<_>>>()?;
    if let Some(gate) = &filter.any_terms {
        must.push(any_terms(gate, layout)?);
    }
    must.extend(phrases(filter, layout)?);
    if let Some(ids) = &filter.ids {
        check_ids(ids)?;
        let ids: ahash::AHashSet<qe::PointId> =
            ids.iter().copied().map(qe::PointId::Uuid).collect();
        must.push(Condition::HasId(qe::HasIdCondition::from(ids)));
    }
    if let Some(spans) = &filter.spans {
        check_spans(spans)?;
        must.extend(span_conditions(spans, layout)?);
    }
    Ok(qe::Filter {
        must: Some(must),
        must_not: (!must_not.is_empty()).then_some(must_not),
        ..qe::Filter::new()
    })
}

/// The tenant's condition, the first of every read; a blank tenant is
/// refused.
fn tenant(filter: &Filter, layout: &PayloadSchema) -> Result<Condition> {
    if filter.tenant.trim().is_empty() {
        return Err(StoreError::invalid(
            "filter",
            "the tenant is required on every read",
        ));
    }
    field(&layout.tenant, keyword(&filter.tenant))
}

/// The payload fields' conditions after the tenant: projects, kinds, source
/// prefix, thread, the created range and the validity view.
fn field_conditions(filter: &Filter, layout: &PayloadSchema) -> Result<Vec<Condition>> {
    let mut must = Vec::new();
    if !filter.projects.is_empty() {
        must.push(field(&layout.project, any_of(&filter.projects))?);
    }
    if !filter.kinds.is_empty() {
        must.push(field(&layout.kind, any_of(&filter.kinds))?);
    }
    if let Some(prefix) = &filter.source_prefix {
        must.push(field(&layout.source, Match::new_prefix(prefix))?);
    }
    if let Some(thread) = &filter.thread {
        must.push(field(&layout.thread, keyword(thread))?);
    }
    if filter.created_from.is_some() || filter.created_until.is_some() {
        let range = TimeBounds {
            gte: filter.created_from,
            lt: filter.created_until,
            ..TimeBounds::default()
        };
        must.push(time_range(&layout.created_at, range, layout.time_format)?);
    }
    if let Some(at) = filter.valid_at {
        must.extend(valid_at(at, layout)?);
    }
    Ok(must)
}

/// The `any_terms` gate: one nested `should`, a term each; an empty gate is
/// refused.
fn any_terms(gate: &[String], layout: &PayloadSchema) -> Result<Condition> {
    if gate.is_empty() {
        return Err(StoreError::invalid(
            "filter",
            "any_terms is empty: an empty gate matches nothing; leave it unset for no gate",
        ));
    }
    let should = gate
        .iter()
        .map(|term| Ok(one(text(term, "any_terms", layout)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Condition::Filter(qe::Filter {
        should: Some(should),
        ..qe::Filter::new()
    }))
}

/// The phrase on the text, then the phrase on the source; an empty one is
/// refused.
fn phrases(filter: &Filter, layout: &PayloadSchema) -> Result<Vec<Condition>> {
    let mut must = Vec::new();
    let phrases = [
        (&filter.phrase, &layout.text, "phrase"),
        (&filter.source_phrase, &layout.source_text, "source phrase"),
    ];
    for (phrase, key, what) in phrases {
        let Some(phrase) = phrase else { continue };
        if phrase.trim().is_empty() {
            return Err(StoreError::invalid(
                "filter",
                format!("the {what} is empty"),
            ));
        }
        must.extend(full_text(key, phrase, Matching::Phrase)?);
    }
    Ok(must)
}

/// The `must` conditions of the thread stretches (checked).
fn span_conditions(spans: &[crate::Span], layout: &PayloadSchema) -> Result<Vec<Condition>> {
    let should = spans
        .iter()
        .map(|span| {
            let seq = FieldCondition::new_range(
                path(&layout.seq)?,
                Range {
                    gte: Some(OrderedFloat(span.from as f64)),
                    lte: Some(OrderedFloat(span.to as f64)),
                    gt: None,
                    lt: None,
                },
            );
            Ok(one(vec![
                field(&layout.thread, keyword(&span.thread))?,
                Condition::Field(seq),
            ]))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(match <[Condition; 1]>::try_from(should) {
        // One stretch: its conditions as `must`s, which the indexes serve.
        Ok([Condition::Filter(one)]) => one.must.unwrap_or_default(),
        Ok([one]) => vec![one],
        // No stretch matches nothing (an empty `should` would match all).
        Err(should) if should.is_empty() => vec![Condition::HasId(qe::HasIdCondition::from(
            ahash::AHashSet::new(),
        ))],
        Err(should) => vec![Condition::Filter(qe::Filter {
            should: Some(should),
            ..qe::Filter::new()
        })],
    })
}

/// The points of the tenant only: the IDF corpus of BM25 and sparse queries.
pub(super) fn tenant_only(filter: &Filter, layout: &PayloadSchema) -> Result<qe::Filter> {
    Ok(qe::Filter::new_must(field(
        &layout.tenant,
        keyword(&filter.tenant),
    )?))
}

/// The points of every tenant but `tenant`.
pub(super) fn other_tenants(tenant: &str, layout: &PayloadSchema) -> Result<qe::Filter> {
    Ok(qe::Filter::new_must_not(field(
        &layout.tenant,
        keyword(tenant),
    )?))
}

/// The validity view at `at`: `valid_from` open or `<= at`, and `valid_until`
/// open or `> at`. Open means absent, empty or null.
fn valid_at(at: DateTime<Utc>, layout: &PayloadSchema) -> Result<[Condition; 2]> {
    let (from, until) = TimeBounds::validity_at(at);
    Ok([
        open_or(&layout.valid_from, from, layout.time_format)?,
        open_or(&layout.valid_until, until, layout.time_format)?,
    ])
}

/// `key` is absent, empty or null, or lies in `range`.
fn open_or(key: &str, range: TimeBounds, format: TimeFormat) -> Result<Condition> {
    let should = vec![
        Condition::IsEmpty(IsEmptyCondition::from(path(key)?)),
        Condition::IsNull(IsNullCondition::from(path(key)?)),
        time_range(key, range, format)?,
    ];
    Ok(Condition::Filter(qe::Filter {
        should: Some(should),
        ..qe::Filter::new()
    }))
}

/// A range over times as the collection writes them: a datetime range on
/// RFC 3339 strings, a numeric range on Unix numbers.
fn time_range(key: &str, b: TimeBounds, format: TimeFormat) -> Result<Condition> {
    let condition = match format {
        TimeFormat::Rfc3339 => FieldCondition::new_datetime_range(
            path(key)?,
            Range {
                gte: b.gte.map(Into::into),
                gt: b.gt.map(Into::into),
                lt: b.lt.map(Into::into),
                lte: b.lte.map(Into::into),
            },
        ),
        TimeFormat::UnixSeconds | TimeFormat::UnixMillis => {
            let n = |t: Option<DateTime<Utc>>| t.map(|t| OrderedFloat(format.number(t)));
            FieldCondition::new_range(
                path(key)?,
                Range {
                    gte: n(b.gte),
                    gt: n(b.gt),
                    lt: n(b.lt),
                    lte: n(b.lte),
                },
            )
        }
    };
    Ok(Condition::Field(condition))
}

/// The full-text conditions on the text: every token of `term` is in it.
fn text(term: &str, what: &str, layout: &PayloadSchema) -> Result<Vec<Condition>> {
    if term.trim().is_empty() {
        return Err(StoreError::invalid(
            "filter",
            format!("{what} holds an empty term"),
        ));
    }
    full_text(&layout.text, term, Matching::AllTokens)
}

/// The `must` conditions of one full-text match on `key`, guarded as
/// [`text_match`] says.
fn full_text(key: &str, text: &str, matching: Matching) -> Result<Vec<Condition>> {
    text_match::conditions(text, matching)
        .into_iter()
        .map(|condition| {
            let matching = match condition {
                TextCondition::All(text) => Match::new_text(text),
                TextCondition::Phrase(phrase) => Match::Phrase(MatchPhrase {
                    phrase: phrase.to_string(),
                }),
                TextCondition::Any(token) => Match::TextAny(MatchTextAny {
                    text_any: token.to_string(),
                }),
            };
            field(key, matching)
        })
        .collect()
}

/// Conditions that must all hold, as one: alone, or a nested `must`.
fn one(mut conditions: Vec<Condition>) -> Condition {
    if conditions.len() == 1 {
        return conditions.remove(0);
    }
    Condition::Filter(qe::Filter {
        must: Some(conditions),
        ..qe::Filter::new()
    })
}

fn keyword(value: &str) -> Match {
    Match::new_value(qe::ValueVariants::String(value.to_string()))
}

fn any_of(values: &[String]) -> Match {
    Match::new_any(qe::AnyVariants::Strings(values.iter().cloned().collect()))
}

fn field(key: &str, matching: Match) -> Result<Condition> {
    Ok(Condition::Field(FieldCondition::new_match(
        path(key)?,
        matching,
    )))
}

/// A payload key as a Qdrant JSON path.
pub(super) fn path(key: &str) -> Result<qe::JsonPath> {
    key.parse()
        .map_err(|_| StoreError::invalid("payload key", format!("{key:?} is not a valid key")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys;

    fn must(filter: &Filter) -> Vec<Condition> {
        to_qdrant(filter, &PayloadSchema::default())
            .expect("filter translates")
            .must
            .expect("a must clause")
    }

    fn ts(s: &str) -> DateTime<Utc> {
        s.parse().expect("a test time")
    }

    #[test]
    fn the_tenant_is_always_the_first_condition() {
        let got = must(&Filter::tenant("acme"));
        assert_eq!(
            got,
            vec![field(keys::TENANT, keyword("acme")).expect("field")]
        );
    }

    #[test]
    fn refused_filters_say_why() {
        let table: &[(Filter, &str)] = &[
            (Filter::tenant(" "), "tenant is required"),
            (
                Filter {
                    any_terms: Some(vec![]),
                    ..Filter::tenant("t")
                },
                "any_terms is empty",
            ),
            (
                Filter {
                    all_terms: vec!["".into()],
                    ..Filter::tenant("t")
                },
                "all_terms holds an empty term",
            ),
            (
                Filter {
                    phrase: Some("  ".into()),
                    ..Filter::tenant("t")
                },
                "phrase is empty",
            ),
        ];
        for (filter, want) in table {
            let err = to_qdrant(filter, &PayloadSchema::default()).expect_err("refused");
            assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
            assert!(err.to_string().contains(want), "{err} lacks {want:?}");
        }
    }

    #[test]
    fn each_field_becomes_one_must_condition() {
        let filter = Filter {
            projects: vec!["p1".into(), "p2".into()],
            kinds: vec!["note".into()],
            source_prefix: Some("git/".into()),
            created_from: Some(ts("2026-01-01T00:00:00Z")),
            created_until: Some(ts("2026-02-01T00:00:00Z")),
            valid_at: Some(ts("2026-01-15T00:00:00Z")),
            all_terms: vec!["a".into(), "b".into()],
            any_terms: Some(vec!["c".into(), "d".into()]),
            phrase: Some("e f".into()),
            ..Filter::tenant("t")
        };
        // tenant, project, kind, source, created, valid_from, valid_until,
        // two terms (one token each: `text_any`), the gate, the phrase and
        // its two guards
        assert_eq!(must(&filter).len(), 13);
    }

    #[test]
    fn the_gate_is_one_nested_should() {
        let filter = Filter {
            any_terms: Some(vec!["c".into(), "d".into()]),
            ..Filter::tenant("t")
        };
        let got = must(&filter);
        let Some(Condition::Filter(gate)) = got.last() else {
            panic!("the gate is a nested filter: {got:?}");
        };
        assert_eq!(gate.should.as_ref().map(Vec::len), Some(2));
        assert!(gate.must.is_none());
    }

    #[test]
    fn the_created_range_is_half_open() {
        let from = ts("2026-01-01T00:00:00Z");
        let until = ts("2026-02-01T00:00:00Z");
        let filter = Filter {
            created_from: Some(from),
            created_until: Some(until),
            ..Filter::tenant("t")
        };
        let bounds = || TimeBounds {
            gte: Some(from),
            lt: Some(until),
            ..TimeBounds::default()
        };
        let want = time_range(keys::CREATED_AT, bounds(), TimeFormat::Rfc3339).expect("range");
        assert_eq!(must(&filter)[1], want);

        // Another tool's layout: its key, Unix seconds, a numeric range.
        let layout = PayloadSchema {
            created_at: "ts".into(),
            time_format: TimeFormat::UnixSeconds,
            ..PayloadSchema::default()
        };
        let got = to_qdrant(&filter, &layout)
            .expect("translates")
            .must
            .unwrap();
        let numeric = Condition::Field(FieldCondition::new_range(
            path("ts").expect("path"),
            Range {
                gte: Some(OrderedFloat(from.timestamp() as f64)),
                lt: Some(OrderedFloat(until.timestamp() as f64)),
                gt: None,
                lte: None,
            },
        ));
        assert_eq!(got[1], numeric);
        assert_eq!(
            time_range("ts", bounds(), TimeFormat::UnixSeconds).expect("range"),
            numeric
        );
    }
}

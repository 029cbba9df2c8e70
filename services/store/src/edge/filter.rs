//! A trine [`Filter`] as a Qdrant Edge filter: one function, every condition
//! `must`, the tenant first.

use chrono::{DateTime, Utc};
use qdrant_edge as qe;
use qe::{Condition, FieldCondition, IsEmptyCondition, IsNullCondition, Match, MatchPhrase, Range};

use crate::{Filter, Result, StoreError, keys};

/// The Qdrant filter of a read. The tenant is required; an empty `any_terms`
/// gate, an empty term or an empty phrase are refused rather than read as
/// "no condition".
pub(super) fn to_qdrant(filter: &Filter) -> Result<qe::Filter> {
    if filter.tenant.trim().is_empty() {
        return Err(StoreError::invalid(
            "filter",
            "the tenant is required on every read",
        ));
    }
    let mut must = vec![field(keys::TENANT, keyword(&filter.tenant))?];
    if !filter.projects.is_empty() {
        must.push(field(keys::PROJECT, any_of(&filter.projects))?);
    }
    if !filter.kinds.is_empty() {
        must.push(field(keys::KIND, any_of(&filter.kinds))?);
    }
    if let Some(prefix) = &filter.source_prefix {
        must.push(field(keys::SOURCE, Match::new_prefix(prefix))?);
    }
    if filter.created_from.is_some() || filter.created_until.is_some() {
        let range = Range {
            gte: filter.created_from.map(Into::into),
            lt: filter.created_until.map(Into::into),
            gt: None,
            lte: None,
        };
        must.push(time_range(keys::CREATED_AT, range)?);
    }
    if let Some(at) = filter.valid_at {
        must.extend(valid_at(at)?);
    }
    for term in &filter.all_terms {
        must.push(text(term, "all_terms")?);
    }
    if let Some(gate) = &filter.any_terms {
        if gate.is_empty() {
            return Err(StoreError::invalid(
                "filter",
                "any_terms is empty: an empty gate matches nothing; leave it unset for no gate",
            ));
        }
        let should = gate
            .iter()
            .map(|term| text(term, "any_terms"))
            .collect::<Result<Vec<_>>>()?;
        must.push(Condition::Filter(qe::Filter {
            should: Some(should),
            ..qe::Filter::new()
        }));
    }
    if let Some(phrase) = &filter.phrase {
        if phrase.trim().is_empty() {
            return Err(StoreError::invalid("filter", "the phrase is empty"));
        }
        let phrase = Match::Phrase(MatchPhrase {
            phrase: phrase.clone(),
        });
        must.push(field(keys::TEXT, phrase)?);
    }
    Ok(qe::Filter {
        must: Some(must),
        ..qe::Filter::new()
    })
}

/// The points of the tenant only: the IDF corpus of BM25 and sparse queries.
pub(super) fn tenant_only(filter: &Filter) -> Result<qe::Filter> {
    Ok(qe::Filter::new_must(field(
        keys::TENANT,
        keyword(&filter.tenant),
    )?))
}

/// The validity view at `at`: `valid_from` open or `<= at`, and `valid_until`
/// open or `> at`. Open means absent, empty or null.
fn valid_at(at: DateTime<Utc>) -> Result<[Condition; 2]> {
    let from = Range {
        lte: Some(at.into()),
        ..no_range()
    };
    let until = Range {
        gt: Some(at.into()),
        ..no_range()
    };
    Ok([
        open_or(keys::VALID_FROM, from)?,
        open_or(keys::VALID_UNTIL, until)?,
    ])
}

/// `key` is absent, empty or null, or lies in `range`.
fn open_or(key: &str, range: Range<qe::DateTimeWrapper>) -> Result<Condition> {
    let should = vec![
        Condition::IsEmpty(IsEmptyCondition::from(path(key)?)),
        Condition::IsNull(IsNullCondition::from(path(key)?)),
        time_range(key, range)?,
    ];
    Ok(Condition::Filter(qe::Filter {
        should: Some(should),
        ..qe::Filter::new()
    }))
}

fn no_range() -> Range<qe::DateTimeWrapper> {
    Range {
        lt: None,
        gt: None,
        gte: None,
        lte: None,
    }
}

fn time_range(key: &str, range: Range<qe::DateTimeWrapper>) -> Result<Condition> {
    Ok(Condition::Field(FieldCondition::new_datetime_range(
        path(key)?,
        range,
    )))
}

/// One full-text condition on the text: every token of `term` is in it.
fn text(term: &str, what: &str) -> Result<Condition> {
    if term.trim().is_empty() {
        return Err(StoreError::invalid(
            "filter",
            format!("{what} holds an empty term"),
        ));
    }
    field(keys::TEXT, Match::new_text(term))
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

    fn must(filter: &Filter) -> Vec<Condition> {
        to_qdrant(filter)
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
            let err = to_qdrant(filter).expect_err("refused");
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
        // two terms, the gate, the phrase
        assert_eq!(must(&filter).len(), 11);
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
        let want = time_range(
            keys::CREATED_AT,
            Range {
                gte: Some(from.into()),
                lt: Some(until.into()),
                gt: None,
                lte: None,
            },
        )
        .expect("range");
        assert_eq!(must(&filter)[1], want);
    }
}

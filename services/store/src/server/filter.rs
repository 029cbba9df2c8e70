//! Reads' filters: trine's [`Filter`] as a Qdrant filter, the tenant always a
//! `must`, full-text matches guarded ([`text_match`]).

use super::*;
use crate::text_match::{self, Matching, TextCondition};

/// The Qdrant filter of a read. The tenant is always a `must`; an empty
/// `any_terms` gate and blank terms or phrases are refused.
pub(super) fn qdrant_filter(f: &Filter, layout: &PayloadSchema) -> Result<q::Filter> {
    let mut must = field_conditions(f, layout);
    must.extend(all_terms(f, layout)?);
    let must_not = no_terms(f, layout)?;
    if let Some(gate) = any_terms(f, layout)? {
        must.push(gate);
    }
    must.extend(phrases(f, layout)?);
    if let Some(ids) = &f.ids {
        crate::check_ids(ids)?;
        must.push(q::Condition::has_id(ids.iter().map(|id| id.to_string())));
    }
    if let Some(spans) = &f.spans {
        crate::check_spans(spans)?;
        must.extend(span_conditions(spans, layout));
    }
    Ok(q::Filter {
        must,
        must_not,
        ..q::Filter::default()
    })
}

/// The tenant, then the payload fields' conditions: projects, kinds,
/// source prefix, thread, the created range and the validity view.
fn field_conditions(f: &Filter, layout: &PayloadSchema) -> Vec<q::Condition> {
    let mut must = vec![keyword(&layout.tenant, &f.tenant)];
    if !f.projects.is_empty() {
        must.push(any_keyword(&layout.project, &f.projects));
    }
    if !f.kinds.is_empty() {
        must.push(any_keyword(&layout.kind, &f.kinds));
    }
    if let Some(prefix) = &f.source_prefix {
        must.push(q::Condition::matches_prefix(
            layout.source.as_str(),
            prefix.clone(),
        ));
    }
    if let Some(thread) = &f.thread {
        must.push(keyword(&layout.thread, thread));
    }
    let format = layout.time_format;
    if f.created_from.is_some() || f.created_until.is_some() {
        let range = TimeBounds {
            gte: f.created_from,
            lt: f.created_until,
            ..TimeBounds::default()
        };
        must.push(time_range(&layout.created_at, range, format));
    }
    if let Some(at) = f.valid_at {
        // (valid_from absent OR valid_from <= T) AND (valid_until absent OR valid_until > T)
        let (from, until) = TimeBounds::validity_at(at);
        must.push(open_or(&layout.valid_from, from, format));
        must.push(open_or(&layout.valid_until, until, format));
    }
    must
}

/// The `must` conditions of `all_terms`: every token of each term.
fn all_terms(f: &Filter, layout: &PayloadSchema) -> Result<Vec<q::Condition>> {
    let mut must = Vec::new();
    for term in &f.all_terms {
        must.extend(full_text(
            &layout.text,
            &non_blank("all_terms term", term)?,
            Matching::AllTokens,
        ));
    }
    Ok(must)
}

/// The `must_not` conditions of `no_terms`: one a term.
fn no_terms(f: &Filter, layout: &PayloadSchema) -> Result<Vec<q::Condition>> {
    let mut must_not = Vec::with_capacity(f.no_terms.len());
    for term in &f.no_terms {
        let conditions = full_text(
            &layout.text,
            &non_blank("no_terms term", term)?,
            Matching::AllTokens,
        );
        must_not.push(match <[q::Condition; 1]>::try_from(conditions) {
            Ok([one]) => one,
            Err(all) => q::Filter::must(all).into(),
        });
    }
    Ok(must_not)
}

/// The `any_terms` gate: one nested `should`, a term each; an empty gate is
/// refused.
fn any_terms(f: &Filter, layout: &PayloadSchema) -> Result<Option<q::Condition>> {
    let Some(any) = &f.any_terms else {
        return Ok(None);
    };
    if any.is_empty() {
        return Err(StoreError::invalid(
            "filter",
            "any_terms is empty: an empty lexical gate would match nothing; \
             leave it unset for no term condition",
        ));
    }
    let gate = any
        .iter()
        .map(|t| {
            let conditions = full_text(
                &layout.text,
                &non_blank("any_terms term", t)?,
                Matching::AllTokens,
            );
            Ok(match <[q::Condition; 1]>::try_from(conditions) {
                Ok([one]) => one,
                Err(all) => q::Filter::must(all).into(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(q::Filter::should(gate).into()))
}

/// The phrase on the text, then the phrase on the source.
fn phrases(f: &Filter, layout: &PayloadSchema) -> Result<Vec<q::Condition>> {
    let mut must = Vec::new();
    if let Some(phrase) = &f.phrase {
        let phrase = non_blank("phrase", phrase)?;
        must.extend(full_text(&layout.text, &phrase, Matching::Phrase));
    }
    if let Some(phrase) = &f.source_phrase {
        let phrase = non_blank("source phrase", phrase)?;
        must.extend(full_text(&layout.source_text, &phrase, Matching::Phrase));
    }
    Ok(must)
}

/// The `must` conditions of the thread stretches (checked).
fn span_conditions(spans: &[crate::Span], layout: &PayloadSchema) -> Vec<q::Condition> {
    let stretch = |span: &crate::Span| {
        let seq = q::Condition::range(
            layout.seq.as_str(),
            q::Range {
                gte: Some(span.from as f64),
                lte: Some(span.to as f64),
                ..q::Range::default()
            },
        );
        [keyword(&layout.thread, &span.thread), seq]
    };
    match spans {
        // No stretch matches nothing (an empty `should` would match all).
        [] => vec![q::Condition::has_id(Vec::<String>::new())],
        // One stretch: its conditions as `must`s, which the indexes serve.
        [one] => stretch(one).into(),
        many => vec![
            q::Filter::should(
                many.iter()
                    .map(|span| q::Condition::from(q::Filter::must(stretch(span)))),
            )
            .into(),
        ],
    }
}

/// The `must` conditions of one full-text match on `key`, guarded as
/// [`text_match`] says.
fn full_text(key: &str, text: &str, matching: Matching) -> Vec<q::Condition> {
    text_match::conditions(text, matching)
        .into_iter()
        .map(|condition| match condition {
            TextCondition::All(text) => q::Condition::matches_text(key, text),
            TextCondition::Phrase(phrase) => q::Condition::matches_phrase(key, phrase),
            TextCondition::Any(token) => q::Condition::matches_text_any(key, token),
        })
        .collect()
}

/// The search params restricting IDF statistics to the tenant's points.
pub(super) fn tenant_idf(layout: &PayloadSchema, tenant: &str) -> SearchParamsBuilder {
    let corpus = q::Filter::must([keyword(&layout.tenant, tenant)]);
    SearchParamsBuilder::default().idf(IdfParamsBuilder::new().corpus(corpus))
}

pub(super) fn keyword(key: &str, value: &str) -> q::Condition {
    q::Condition::matches(key, q::r#match::MatchValue::Keyword(value.to_string()))
}

pub(super) fn any_keyword(key: &str, values: &[String]) -> q::Condition {
    let strings = q::RepeatedStrings {
        strings: values.to_vec(),
    };
    q::Condition::matches(key, q::r#match::MatchValue::Keywords(strings))
}

/// A range over times as the collection writes them: a datetime range on
/// RFC 3339 strings, a numeric range on Unix numbers.
pub(super) fn time_range(key: &str, b: TimeBounds, format: TimeFormat) -> q::Condition {
    match format {
        TimeFormat::Rfc3339 => q::Condition::datetime_range(
            key,
            q::DatetimeRange {
                gte: b.gte.map(timestamp),
                gt: b.gt.map(timestamp),
                lt: b.lt.map(timestamp),
                lte: b.lte.map(timestamp),
            },
        ),
        TimeFormat::UnixSeconds | TimeFormat::UnixMillis => {
            let n = |t: Option<DateTime<Utc>>| t.map(|t| format.number(t));
            q::Condition::range(
                key,
                q::Range {
                    gte: n(b.gte),
                    gt: n(b.gt),
                    lt: n(b.lt),
                    lte: n(b.lte),
                },
            )
        }
    }
}

/// `key` is absent, or within `range`.
pub(super) fn open_or(key: &str, range: TimeBounds, format: TimeFormat) -> q::Condition {
    q::Filter::should([q::Condition::is_empty(key), time_range(key, range, format)]).into()
}

pub(super) fn non_blank(what: &'static str, s: &str) -> Result<String> {
    if s.trim().is_empty() {
        Err(StoreError::invalid(what, "it is blank: drop it"))
    } else {
        Ok(s.to_string())
    }
}

pub(super) fn timestamp(t: DateTime<Utc>) -> q::Timestamp {
    q::Timestamp {
        seconds: t.timestamp(),
        nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(999_999_999),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::keys;
    use crate::payload::PayloadSchema;

    fn tenant_cond() -> q::Condition {
        keyword(keys::TENANT, "acme")
    }

    #[test]
    fn filter_translation() {
        let at = t("2026-11-11T09:58:00Z");
        let ts = timestamp(at);
        let cases: Vec<(&str, Filter, Vec<q::Condition>)> = vec![
            ("tenant only", Filter::tenant("acme"), vec![tenant_cond()]),
            (
                "tenant with spaces stays a keyword",
                Filter::tenant("a b"),
                vec![q::Condition::matches(
                    keys::TENANT,
                    q::r#match::MatchValue::Keyword("a b".into()),
                )],
            ),
            (
                "projects and kinds match any",
                Filter {
                    projects: vec!["p1".into(), "p2".into()],
                    kinds: vec!["note".into()],
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches(keys::PROJECT, vec!["p1".to_string(), "p2".to_string()]),
                    q::Condition::matches(keys::KIND, vec!["note".to_string()]),
                ],
            ),
            (
                "source prefix",
                Filter {
                    source_prefix: Some("git:".into()),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_prefix(keys::SOURCE, "git:"),
                ],
            ),
            (
                "created range is [from, until)",
                Filter {
                    created_from: Some(at),
                    created_until: Some(at),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::datetime_range(
                        keys::CREATED_AT,
                        q::DatetimeRange {
                            gte: Some(ts),
                            lt: Some(ts),
                            ..Default::default()
                        },
                    ),
                ],
            ),
            (
                "valid at T, either side open",
                Filter {
                    valid_at: Some(at),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Filter::should([
                        q::Condition::is_empty(keys::VALID_FROM),
                        q::Condition::datetime_range(
                            keys::VALID_FROM,
                            q::DatetimeRange {
                                lte: Some(ts),
                                ..Default::default()
                            },
                        ),
                    ])
                    .into(),
                    q::Filter::should([
                        q::Condition::is_empty(keys::VALID_UNTIL),
                        q::Condition::datetime_range(
                            keys::VALID_UNTIL,
                            q::DatetimeRange {
                                gt: Some(ts),
                                ..Default::default()
                            },
                        ),
                    ])
                    .into(),
                ],
            ),
            (
                "all terms: one token each, text_any of it",
                Filter {
                    all_terms: vec!["meeting".into(), "2026".into()],
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_text_any(keys::TEXT, "meeting"),
                    q::Condition::matches_text_any(keys::TEXT, "2026"),
                ],
            ),
            (
                "a term of two tokens: the match and a guard per token",
                Filter {
                    all_terms: vec!["foo_bar".into()],
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_text(keys::TEXT, "foo_bar"),
                    q::Condition::matches_text_any(keys::TEXT, "foo"),
                    q::Condition::matches_text_any(keys::TEXT, "bar"),
                ],
            ),
            (
                "any terms: a nested should gate",
                Filter {
                    any_terms: Some(vec!["a1".into(), "b2".into()]),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Filter::should([
                        q::Condition::matches_text_any(keys::TEXT, "a1"),
                        q::Condition::matches_text_any(keys::TEXT, "b2"),
                    ])
                    .into(),
                ],
            ),
            (
                "phrase",
                Filter {
                    phrase: Some("exact words".into()),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_phrase(keys::TEXT, "exact words"),
                    q::Condition::matches_text_any(keys::TEXT, "exact"),
                    q::Condition::matches_text_any(keys::TEXT, "words"),
                ],
            ),
            (
                "phrase in the source",
                Filter {
                    source_phrase: Some("exact words".into()),
                    ..Filter::tenant("acme")
                },
                vec![
                    tenant_cond(),
                    q::Condition::matches_phrase(keys::SOURCE_TEXT, "exact words"),
                    q::Condition::matches_text_any(keys::SOURCE_TEXT, "exact"),
                    q::Condition::matches_text_any(keys::SOURCE_TEXT, "words"),
                ],
            ),
        ];
        for (name, filter, must) in cases {
            let got = qdrant_filter(&filter, &PayloadSchema::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got, q::Filter::must(must), "{name}");
        }
    }

    #[test]
    fn filter_refusals() {
        let cases: Vec<(&str, Filter)> = vec![
            (
                "empty gate",
                Filter {
                    any_terms: Some(vec![]),
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank gate term",
                Filter {
                    any_terms: Some(vec![" ".into()]),
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank all term",
                Filter {
                    all_terms: vec!["".into()],
                    ..Filter::tenant("acme")
                },
            ),
            (
                "blank phrase",
                Filter {
                    phrase: Some("  ".into()),
                    ..Filter::tenant("acme")
                },
            ),
        ];
        for (name, filter) in cases {
            match qdrant_filter(&filter, &PayloadSchema::default()) {
                Err(StoreError::Invalid { .. }) => {}
                other => panic!("{name}: expected invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn idf_corpus_is_the_tenant() {
        let params: q::SearchParams = tenant_idf(&PayloadSchema::default(), "acme").build();
        let corpus = params.idf.and_then(|i| i.corpus);
        assert_eq!(corpus, Some(q::Filter::must([tenant_cond()])));
    }
}

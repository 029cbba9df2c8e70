//! The explain page (`GET /explain` on the HTTP surface): a search box with
//! tenant, mode and strategy, and for each hit its rank and score in each
//! list and why it stands where it does; the stage timings as bars and the
//! counts share against the budget. Plain HTML rendered here, no script and
//! no build step; the search is the same `Memory.Search` as every surface's.

use std::fmt::Write as _;

use trine_api::v1;

/// The lists' colours, on the page and in its screenshot test.
pub const LEXICAL: &str = "#2e7d32";
pub const SEMANTIC: &str = "#1565c0";
pub const VERBATIM: &str = "#c62828";

/// What the search box holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Form {
    pub query: String,
    pub tenant: String,
    pub mode: String,
    pub strategy: String,
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn option(value: &str, chosen: &str, label: &str) -> String {
    let selected = if value == chosen { " selected" } else { "" };
    format!("<option value=\"{value}\"{selected}>{label}</option>")
}

fn form(f: &Form) -> String {
    let modes = [
        ("", "hybrid (default)"),
        ("semantic", "semantic"),
        ("lexical", "lexical"),
    ]
    .iter()
    .map(|(v, l)| option(v, &f.mode, l))
    .collect::<String>();
    let strategies = [
        ("", "the gateway's"),
        ("candidates", "candidates"),
        ("bm25", "bm25"),
        ("sparse", "sparse"),
        ("gate", "gate"),
        ("auto", "auto"),
    ]
    .iter()
    .map(|(v, l)| option(v, &f.strategy, l))
    .collect::<String>();
    format!(
        "<form method=\"get\" action=\"/explain\">\
         <input name=\"query\" size=\"50\" placeholder=\"query\" value=\"{}\"> \
         <input name=\"tenant\" size=\"12\" placeholder=\"tenant\" value=\"{}\"> \
         <select name=\"mode\">{modes}</select> <select name=\"strategy\">{strategies}</select> \
         <button>Search</button></form>",
        escape(&f.query),
        escape(&f.tenant)
    )
}

/// Why a hit stands where it does, in words.
fn why(explain: &v1::Explain) -> String {
    let mut parts = Vec::new();
    if explain.tier {
        parts.push("holds the whole query verbatim, and the tier rule held: ranked above every hit that does not".to_string());
    } else if explain.verbatim.is_some() {
        parts.push(
            "holds the query verbatim (no tier for this query: the evidence votes in the fusion)"
                .to_string(),
        );
    }
    match (&explain.lexical, &explain.semantic) {
        (Some(l), Some(s)) => parts.push(format!(
            "found by both channels: lexical #{} and semantic #{}",
            l.rank, s.rank
        )),
        (Some(l), None) => parts.push(format!("found by its words only (lexical #{})", l.rank)),
        (None, Some(s)) => parts.push(format!("found by meaning only (semantic #{})", s.rank)),
        (None, None) => {}
    }
    if let Some(late) = &explain.late {
        parts.push(format!(
            "judged again word by word: late interaction #{} (MaxSim {:.4})",
            late.rank, late.score
        ));
    }
    parts.join("; ")
}

fn cell(entry: &Option<v1::ListEntry>, colour: &str) -> String {
    match entry {
        Some(e) => format!(
            "<td class=\"list\" style=\"background:{colour}\">#{}<br><small>{:.4} → {:.4}</small></td>",
            e.rank, e.score, e.normalized
        ),
        None => "<td class=\"none\">–</td>".to_string(),
    }
}

fn hits(response: &v1::SearchResponse) -> String {
    let mut out = String::from(
        "<table class=\"hits\"><tr><th>#</th><th>score</th><th>memory</th>\
         <th>lexical</th><th>semantic</th><th>verbatim</th><th>why here</th></tr>",
    );
    for (i, hit) in response.hits.iter().enumerate() {
        let record = hit.record.clone().unwrap_or_default();
        let explain = hit.explain.unwrap_or_default();
        let text: String = record.text.chars().take(160).collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{:.4}<br><small>fused {:.4}</small></td><td><b>{}</b><br><small>{} · {}</small></td>{}{}{}<td>{}</td></tr>",
            i + 1,
            hit.score,
            explain.fused,
            escape(&text),
            escape(record.source.as_deref().unwrap_or("no source")),
            escape(&hit.id),
            cell(&explain.lexical, LEXICAL),
            cell(&explain.semantic, SEMANTIC),
            cell(&explain.verbatim, VERBATIM),
            escape(&why(&explain)),
        );
    }
    out.push_str("</table>");
    if response.hits.is_empty() {
        out.push_str("<p>No memory matches.</p>");
    }
    out
}

fn timings(response: &v1::SearchResponse) -> String {
    let total = response
        .timings
        .iter()
        .find(|t| t.stage == "gateway")
        .map_or(0.0, |t| t.millis);
    let mut out = String::from("<h2>Stages</h2><table class=\"stages\">");
    for t in &response.timings {
        let width = if total > 0.0 {
            (t.millis / total * 400.0).clamp(1.0, 400.0)
        } else {
            1.0
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td><div class=\"bar\" style=\"width:{width:.0}px\"></div></td><td>{:.2} ms</td></tr>",
            escape(&t.stage),
            t.millis
        );
    }
    out.push_str("</table>");
    let share = response.counts_share;
    let verdict = if share > trine_telemetry::metrics::COUNTS_BUDGET {
        "over the budget"
    } else {
        "within the budget"
    };
    let _ = write!(
        out,
        "<p>Counts share: {share:.3} of the search ({verdict} of {}).</p>\
         <div class=\"budget\"><div class=\"share\" style=\"width:{:.0}px\"></div><div class=\"mark\"></div></div>",
        trine_telemetry::metrics::COUNTS_BUDGET,
        (share * 400.0).clamp(0.0, 400.0),
    );
    if response.degraded {
        let _ = write!(
            out,
            "<p class=\"degraded\">Partial answer: {}</p>",
            escape(&response.degraded_reasons.join("; "))
        );
    }
    let _ = write!(out, "<p>Strategy: {}</p>", escape(&response.strategy));
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top}\
td.list{color:#fff;text-align:center}td.none{color:#999;text-align:center}\
.bar{height:12px;background:#ef6c00}.budget{position:relative;width:400px;height:12px;background:#eee}\
.share{height:12px;background:#6a1b9a}.mark{position:absolute;left:40px;top:-3px;width:2px;height:18px;background:#000}\
.degraded{color:#c62828}.error{color:#c62828;font-weight:bold}";

/// The whole page: the box, and the answer or the error when a search ran.
pub fn page(f: &Form, answer: Option<Result<v1::SearchResponse, (String, String)>>) -> String {
    let mut body = format!(
        "<h1>trine: why each memory ranks where it does</h1>{}",
        form(f)
    );
    match answer {
        None => body.push_str("<p>Give a query and a tenant.</p>"),
        Some(Ok(response)) => {
            body.push_str(&hits(&response));
            body.push_str(&timings(&response));
        }
        Some(Err((code, message))) => {
            let _ = write!(
                body,
                "<p class=\"error\">{}: {}</p>",
                escape(&code),
                escape(&message)
            );
        }
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>trine explain</title>\
         <style>{STYLE}</style></head><body>{body}</body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(rank: u32) -> Option<v1::ListEntry> {
        Some(v1::ListEntry {
            rank,
            score: 1.0,
            normalized: 0.5,
        })
    }

    #[test]
    fn each_hit_says_why_it_is_there() {
        // (explain, words the reason holds)
        let table: &[(v1::Explain, &[&str])] = &[
            (
                v1::Explain {
                    lexical: entry(3),
                    semantic: entry(1),
                    verbatim: entry(1),
                    tier: true,
                    fused: 0.5,
                    late: None,
                },
                &["verbatim", "tier rule held", "lexical #3 and semantic #1"],
            ),
            (
                v1::Explain {
                    lexical: entry(5),
                    semantic: entry(2),
                    late: entry(1),
                    ..v1::Explain::default()
                },
                &["lexical #5 and semantic #2", "late interaction #1"],
            ),
            (
                v1::Explain {
                    lexical: entry(2),
                    verbatim: entry(1),
                    ..v1::Explain::default()
                },
                &["no tier", "its words only (lexical #2)"],
            ),
            (
                v1::Explain {
                    semantic: entry(4),
                    ..v1::Explain::default()
                },
                &["meaning only (semantic #4)"],
            ),
        ];
        for (explain, words) in table {
            let reason = why(explain);
            for w in *words {
                assert!(reason.contains(w), "{w:?} in {reason:?}");
            }
        }
    }

    #[test]
    fn the_page_escapes_what_it_shows() {
        let f = Form {
            query: "<script>x</script>".into(),
            tenant: "a\"b".into(),
            ..Form::default()
        };
        let html = page(
            &f,
            Some(Err(("INVALID_ARGUMENT".into(), "<b>bad</b>".into()))),
        );
        assert!(!html.contains("<script>x"), "{html}");
        assert!(html.contains("&lt;script&gt;x") && html.contains("a&quot;b"));
        assert!(html.contains("&lt;b&gt;bad"));
        let empty = page(&Form::default(), None);
        assert!(empty.contains("Give a query and a tenant."));
    }
}

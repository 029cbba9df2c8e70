//! The query file of `trine bench` and `trine eval`: one JSON object a line,
//! `{"qid", "query", "tenant", "gold": [ids], "kind"?, "split"?}`.

use std::path::Path;

use serde::Deserialize;

/// One query with the ids of its answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    #[serde(default)]
    pub qid: String,
    pub query: String,
    pub tenant: String,
    #[serde(default)]
    pub gold: Vec<String>,
    #[serde(default)]
    pub kind: Option<String>,
    /// `tune` or `held`: which half of a development set the query is in
    /// (`trine eval --split`).
    #[serde(default)]
    pub split: Option<String>,
}

/// Reads a query file; a bad line is an error naming the line. Empty lines
/// are skipped; a file with no query is an error.
pub fn load(path: &Path) -> Result<Vec<Query>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the queries {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the lines of a query file.
pub fn parse(text: &str) -> Result<Vec<Query>, String> {
    let mut queries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut query: Query = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not a query object: {e}", i + 1))?;
        if query.query.trim().is_empty() || query.tenant.is_empty() {
            return Err(format!(
                "line {}: `query` and `tenant` must not be empty",
                i + 1
            ));
        }
        if query.qid.is_empty() {
            query.qid = format!("line{}", i + 1);
        }
        queries.push(query);
    }
    if queries.is_empty() {
        return Err("holds no query".to_string());
    }
    Ok(queries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_names_the_bad_one() {
        let ok = "{\"qid\":\"a\",\"query\":\"x y\",\"tenant\":\"t\",\"gold\":[\"1\"],\"kind\":\"title\"}\n\n{\"query\":\"z\",\"tenant\":\"t\"}\n";
        let queries = parse(ok).unwrap();
        assert_eq!(queries.len(), 2);
        assert_eq!(queries[0].kind.as_deref(), Some("title"));
        assert_eq!(queries[1].qid, "line3");
        assert!(queries[1].gold.is_empty());

        let cases = [
            ("", "holds no query"),
            ("{\"query\":\"x\"}", "line 1: not a query object"),
            (
                "{\"query\":\" \",\"tenant\":\"t\"}",
                "line 1: `query` and `tenant`",
            ),
            (
                "{\"query\":\"x\",\"tenant\":\"t\",\"gold\":\"1\"}",
                "line 1",
            ),
            (
                "{\"query\":\"x\",\"tenant\":\"t\",\"typo\":1}",
                "unknown field",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}

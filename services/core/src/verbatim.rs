//! The verbatim check (DESIGN.md §1, "Verbatim list"): the query appears in a
//! text, comparing both sides lowercased, with every run of whitespace folded
//! to one space and the ends trimmed.

/// A text lowercased, whitespace runs folded to one space, ends trimmed.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// A query prepared for verbatim checks against many texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verbatim {
    needle: String,
}

impl Verbatim {
    pub fn new(query: &str) -> Self {
        Self {
            needle: normalize(query),
        }
    }

    /// Whether the query appears verbatim in `text`. An empty query matches
    /// nothing.
    pub fn in_text(&self, text: &str) -> bool {
        !self.needle.is_empty() && normalize(text).contains(&self.needle)
    }

    /// Whether the query appears verbatim in the text or in the source.
    pub fn matches(&self, text: &str, source: Option<&str>) -> bool {
        self.in_text(text) || source.is_some_and(|s| self.in_text(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_follows_the_design() {
        let table: &[(&str, &str, Option<&str>, bool)] = &[
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026-11-11 09:58\nBună ziua",
                None,
                true,
            ),
            (
                "meeting   2026-11-11 09:58",
                "MEETING 2026-11-11\t09:58",
                None,
                true,
            ),
            (
                "  Meeting 2026-11-11 09:58 ",
                "x meeting 2026-11-11 09:58 y",
                None,
                true,
            ),
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026-11-11 09:45",
                None,
                false,
            ),
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026 11 11 09 58",
                None,
                false,
            ),
            (
                "0b85ed4a",
                "a transcript",
                Some("recording/0b85ed4a/chunk-1"),
                true,
            ),
            ("0b85ed4a", "a transcript", None, false),
            ("ȘEDINȚĂ de lucru", "o ședință de lucru", None, true),
            ("", "anything", None, false),
            ("   ", "anything", Some("x"), false),
        ];
        for (query, text, source, want) in table {
            assert_eq!(
                Verbatim::new(query).matches(text, *source),
                *want,
                "{query:?} in {text:?} / {source:?}"
            );
        }
    }

    #[test]
    fn normalize_folds_whitespace() {
        assert_eq!(normalize("  A\n\n b\tC  "), "a b c");
        assert_eq!(normalize(""), "");
    }
}

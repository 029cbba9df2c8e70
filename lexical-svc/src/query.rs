//! A lexical search as the channel reads it, made once at the edge: the
//! query's terms split under the collection's fold, the filters, the cap.

use trine_core::common;
use trine_core::model::Filter;
use trine_core::terms::{self, terms};
use trine_core::{Fold, Verbatim};

use crate::Texts;

/// One search of the lexical channel. Every stage takes it; none splits the
/// query again.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalQuery {
    /// The query as the caller wrote it (the phrase reads and the verbatim
    /// check take it whole).
    pub text: String,
    /// The terms scored and read: its words without the collection's
    /// common words ([`common::scored`]: all of them for a title, an
    /// identifier, or a query of common words only).
    pub terms: Vec<String>,
    /// Every term of the query under the collection's fold, in query order,
    /// each once: what the verbatim evidence (the phrase reads, the
    /// verbatim flag, the tier rule's term count) takes.
    pub words: Vec<String>,
    /// How the collection's texts are read (its fold, its phrase indexes).
    pub texts: Texts,
    /// Within these filters, the tenant always among them.
    pub filter: Filter,
    /// At most this many points read.
    pub cap: usize,
}

impl LexicalQuery {
    pub fn new(text: &str, texts: Texts, filter: Filter, cap: usize) -> Self {
        let words = terms(text, texts.fold);
        Self {
            text: text.to_string(),
            terms: common::scored(text, &words, texts.fold, texts.common),
            words,
            texts,
            filter,
            cap,
        }
    }

    pub fn fold(&self) -> Fold {
        self.texts.fold
    }

    /// The query has several words: a phrase the phrase reads look for.
    pub fn is_phrase(&self) -> bool {
        self.words.len() >= 2
    }

    /// Nothing to read: no term, or no room.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() || self.cap == 0
    }

    /// The terms the `candidates` strategy counts and scores: at most
    /// [`terms::MAX_COUNTED_TERMS`], the longest.
    pub fn counted_terms(&self) -> Vec<String> {
        terms::bounded(self.terms.clone(), terms::MAX_COUNTED_TERMS)
    }

    /// Every word, as [`Self::counted_terms`] bounds the terms: what a query
    /// held verbatim is scored on.
    pub fn counted_words(&self) -> Vec<String> {
        terms::bounded(self.words.clone(), terms::MAX_COUNTED_TERMS)
    }

    /// The verbatim check of this query under the collection's fold.
    pub fn verbatim(&self) -> Verbatim {
        Verbatim::new(&self.text, self.fold())
    }

    /// `filter`, and the text holds the query as a phrase.
    pub fn in_text(&self) -> Filter {
        Filter {
            phrase: Some(self.text.clone()),
            ..self.filter.clone()
        }
    }

    /// `filter`, and the source holds the query as a phrase.
    pub fn in_source(&self) -> Filter {
        Filter {
            source_phrase: Some(self.text.clone()),
            ..self.filter.clone()
        }
    }

    /// `filter`, and every one of `terms`.
    pub fn with_terms(&self, terms: &[String]) -> Filter {
        Filter {
            all_terms: terms.to_vec(),
            ..self.filter.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trine_core::Language;

    #[test]
    fn the_query_is_split_once_under_the_collections_fold() {
        let filter = Filter::tenant("acme");
        let texts = |fold| Texts {
            fold,
            source_phrases: true,
            common: Some(Language::English),
        };
        // (fold, query, terms scored, every term)
        let table: &[(Fold, &str, &[&str], &[&str])] = &[
            (
                Fold::ASCII,
                "Meeting 2026-11-11 09:58",
                &["meeting", "2026", "11", "09", "58"],
                &["meeting", "2026", "11", "09", "58"],
            ),
            (Fold::ASCII, "Café cafe", &["cafe"], &["cafe"]),
            (
                Fold::CASE,
                "Café cafe",
                &["café", "cafe"],
                &["café", "cafe"],
            ),
            (
                Fold::ASCII,
                "why did she call him",
                &["call"],
                &["why", "did", "she", "call", "him"],
            ),
            (
                Fold::ASCII,
                "what about you",
                &["what", "about", "you"],
                &["what", "about", "you"],
            ),
            (Fold::ASCII, "  ", &[], &[]),
        ];
        for (fold, text, want, words) in table {
            let q = LexicalQuery::new(text, texts(*fold), filter.clone(), 8);
            assert_eq!(q.terms, *want, "{fold:?} {text:?}");
            assert_eq!(q.words, *words, "{fold:?} {text:?}");
            assert_eq!(q.is_phrase(), words.len() >= 2);
            assert_eq!(q.is_empty(), want.is_empty());
            assert_eq!(q.in_text().phrase.as_deref(), Some(*text));
            assert_eq!(q.in_source().source_phrase.as_deref(), Some(*text));
            assert_eq!(q.in_text().tenant, "acme");
        }
        let many: String = (0..40).map(|i| format!("w{i:02} ")).collect();
        let q = LexicalQuery::new(&many, texts(Fold::ASCII), filter.clone(), 8);
        assert_eq!(q.terms.len(), 40);
        assert_eq!(q.counted_terms().len(), terms::MAX_COUNTED_TERMS);
        assert!(LexicalQuery::new("x y", texts(Fold::ASCII), filter, 0).is_empty());
    }
}

//! A language's common words, left out of a query's lexical scoring and its
//! candidate read (docs/search.md, "Common words").
//!
//! The index's own stop list ([`crate::terms::STOP_WORDS`], Lucene's 33
//! English words) is what the text index and the kept frequencies leave out
//! of every text (the sparse encoding keeps every word); it stays as it is,
//! so that no stored vector changes.
//! Common words are a query's matter: `When did she go to the support
//! group?` is read and scored on `support` and `group` (and `go`), not on
//! `when`, `did`, `she`. The lists are NLTK's, from the `stop-words` crate,
//! folded as the collection's index folds, and judged on the folded word
//! before stemming, as the index judges its stop words.
//!
//! Three queries keep every word: a title- or identifier-shaped one
//! ([`titled`]: `Meeting 2026-11-11 09:58`), one made only of
//! common words (`to be or not to be`: nothing else would find it), and a
//! query under [`CommonWords::None`]. The verbatim evidence (the phrase
//! reads, the verbatim flag, the tier) always takes the query whole.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::fold::{Fold, Language};

/// Which common words a collection's queries leave out: the
/// `[lexical] common_words` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CommonWords {
    /// The language the text index stems in; English where it stems none
    /// (the default: docs/search.md, "Common words").
    #[default]
    Auto,
    /// None: every word of a query is scored.
    None,
    /// This language's.
    Of(Language),
}

impl CommonWords {
    /// The language whose list applies to a collection whose index
    /// normalises as `fold`; `None` where no list applies.
    pub fn language(self, fold: Fold) -> Option<Language> {
        match self {
            Self::Auto => Some(fold.stemmer().unwrap_or(Language::English)),
            Self::None => None,
            Self::Of(language) => Some(language),
        }
    }
}

impl fmt::Display for CommonWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::None => f.write_str("none"),
            Self::Of(language) => write!(f, "{language}"),
        }
    }
}

impl FromStr for CommonWords {
    type Err = String;

    /// `auto`, `none`, or a language by name or ISO 639-1 code.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "none" => Ok(Self::None),
            _ => s.parse().map(Self::Of).map_err(|e: String| {
                format!("{e}; or `auto` (the stemmer's language, else English) or `none`")
            }),
        }
    }
}

impl<'de> serde::Deserialize<'de> for CommonWords {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for CommonWords {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The ISO 639-1 codes of the languages NLTK has a list for, among those
/// the index stems ([`Language::ALL`]); Armenian and Tamil have none.
const LISTED: &[&str] = &[
    "ar", "da", "nl", "en", "fi", "fr", "de", "el", "hu", "it", "no", "pt", "ro", "ru", "es", "sv",
    "tr",
];

/// Every list, folded both ways (lowercase; ASCII folding then lowercase),
/// made once.
fn lists() -> &'static HashMap<(Language, bool), HashSet<String>> {
    static LISTS: OnceLock<HashMap<(Language, bool), HashSet<String>>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let mut lists = HashMap::new();
        for &(language, _, code) in Language::ALL {
            if !LISTED.contains(&code) {
                continue;
            }
            let words = stop_words::get(code);
            for ascii in [false, true] {
                let fold = Fold::of_index(ascii, None);
                let set = words.iter().map(|w| fold.normalize(w)).collect();
                lists.insert((language, ascii), set);
            }
        }
        lists
    })
}

/// Whether `word` (folded as `fold` folds, not stemmed) is one of
/// `language`'s common words.
pub fn is_common(word: &str, language: Language, fold: Fold) -> bool {
    lists()
        .get(&(language, fold.ascii_folding()))
        .is_some_and(|set| set.contains(word))
}

/// How many common words `language` has (0: no list).
pub fn listed(language: Language) -> usize {
    lists().get(&(language, true)).map_or(0, HashSet::len)
}

/// Whether a query is shaped like a title or an identifier as its words
/// see it: [`crate::fusion::shaped`], except that an apostrophe or a hyphen
/// between letters joins the words of a sentence (`don't`, `Kate's`,
/// `est-elle`, `well-known`), not the parts of an identifier.
pub fn titled(query: &str) -> bool {
    query.split_whitespace().any(|token| {
        let letters = token.chars().any(char::is_alphabetic);
        let digits = token.chars().any(char::is_numeric);
        if letters && digits {
            return true;
        }
        let inner = token.trim_matches(|c: char| !c.is_alphanumeric());
        let chars: Vec<char> = inner.chars().collect();
        chars.iter().enumerate().any(|(i, &c)| {
            let joins_words = matches!(c, '\'' | '\u{2019}' | '-')
                && i > 0
                && chars[i - 1].is_alphabetic()
                && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
            !c.is_alphanumeric() && !joins_words
        })
    })
}

/// The terms of `query` its lexical scoring and candidate read take:
/// `words` (its terms, [`crate::terms`]) without `language`'s common words
/// — all of them where the query is title- or identifier-shaped ([`titled`]), where no
/// language applies, or where every word is common.
pub fn scored(
    query: &str,
    words: &[String],
    fold: Fold,
    language: Option<Language>,
) -> Vec<String> {
    let Some(language) = language else {
        return words.to_vec();
    };
    if titled(query) {
        return words.to_vec();
    }
    let kept: Vec<String> = words
        .iter()
        .filter(|w| !is_common(w, language, fold))
        .cloned()
        .collect();
    if kept.is_empty() {
        words.to_vec()
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::terms;

    fn check(query: &str, fold: Fold, language: Option<Language>, want: &[&str]) {
        let words = terms(query, fold);
        assert_eq!(
            scored(query, &words, fold, language),
            want,
            "scored terms of {query:?} under {language:?}"
        );
    }

    #[test]
    fn common_words_follow_the_rules() {
        let en = Some(Language::English);
        let table: &[(&str, Option<Language>, &[&str])] = &[
            // A question is read on the words that carry it.
            (
                "When did she go to the support group?",
                en,
                &["go", "support", "group"],
            ),
            (
                "what did Kate cook for dinner",
                en,
                &["kate", "cook", "dinner"],
            ),
            // Titles and identifiers keep every word.
            (
                "Meeting 2026-11-11 09:58",
                en,
                &["meeting", "2026", "11", "09", "58"],
            ),
            ("where is OPS-1432", en, &["where", "ops", "1432"]),
            ("what is foo_bar.qux", en, &["what", "foo", "bar", "qux"]),
            // A sentence's apostrophes and hyphens join words: still a
            // sentence. A year alone is a word.
            ("What's Kate's dog called?", en, &["kate", "dog", "called"]),
            ("why don't you call her", en, &["call"]),
            ("What did I buy in 2023?", en, &["buy", "2023"]),
            // Only common words: every word is kept (Lucene's 33 the index
            // drops are gone already).
            ("to be or not to be", en, &[]),
            ("what about you", en, &["what", "about", "you"]),
            ("When?", en, &["when"]),
            // No list: every word.
            ("When did she go", None, &["when", "did", "she", "go"]),
            // Another language's list.
            (
                "Quand est-elle allée au groupe",
                Some(Language::French),
                &["quand", "allee", "groupe"],
            ),
            ("", en, &[]),
        ];
        for (query, language, want) in table {
            check(query, Fold::ASCII, *language, want);
        }
    }

    #[test]
    fn lists_are_folded_as_the_index_folds() {
        // NLTK's French list holds `été`; the folded query holds `ete`.
        assert!(is_common("ete", Language::French, Fold::ASCII));
        assert!(is_common("été", Language::French, Fold::CASE));
        assert!(!is_common("ete", Language::French, Fold::CASE));
        assert!(is_common("und", Language::German, Fold::ASCII));
        assert!(!is_common("und", Language::English, Fold::ASCII));
    }

    #[test]
    fn every_stemmed_language_but_two_has_a_list() {
        for &(language, name, _) in Language::ALL {
            let n = listed(language);
            match language {
                Language::Armenian | Language::Tamil => assert_eq!(n, 0, "{name}"),
                _ => assert!(n >= 50, "{name} lists {n} words"),
            }
        }
    }

    #[test]
    fn the_setting_parses_and_resolves() {
        let table: &[(&str, Result<CommonWords, ()>)] = &[
            ("auto", Ok(CommonWords::Auto)),
            ("NONE", Ok(CommonWords::None)),
            ("fr", Ok(CommonWords::Of(Language::French))),
            ("german", Ok(CommonWords::Of(Language::German))),
            ("klingon", Err(())),
        ];
        for (raw, want) in table {
            let got = raw.parse::<CommonWords>().map_err(|_| ());
            assert_eq!(got, *want, "{raw}");
        }
        let french = Fold::ASCII.with_stemmer(Some(Language::French));
        assert_eq!(CommonWords::Auto.language(french), Some(Language::French));
        assert_eq!(
            CommonWords::Auto.language(Fold::ASCII),
            Some(Language::English)
        );
        assert_eq!(CommonWords::None.language(french), None);
        let err = "klingon".parse::<CommonWords>().expect_err("unknown");
        assert!(err.contains("auto") && err.contains("none"), "{err}");
    }
}

//! How a token is normalised after the split (docs/design.md §2): what
//! the collection's full-text index does, so that every term trine makes can
//! match the index and BM25, the sparse encoding and the verbatim check see
//! the words the index sees.
//!
//! `Fold::ASCII` is the index's `ascii_folding`: each character is replaced
//! by its ASCII equivalent where Lucene's ASCIIFoldingFilter has one
//! (`ș` → `s`, `ß` → `ss`, `æ` → `ae`), then the token is lowercased. A
//! query typed without diacritics, or with another inflection's, matches:
//! `sedinta`, `ședință` and `ședința` are all `sedinta`. `Fold::CASE` only
//! lowercases: collections made before folding, until `trine text-index
//! --ascii-folding` upgrades them. The two agree on ASCII text.
//!
//! `Fold::stemmer` is the index's Snowball stemmer (`stemmer: snowball` with
//! a language): after folding and lowercasing, each token is reduced to its
//! stem, so that inflected forms meet (`meetings`, `meeting` → `meet`;
//! French `développements`, `développement` → `developp`). Stop words are
//! judged before stemming, as the index judges them. The verbatim check
//! never stems: it compares the folded text ([`Fold::normalize`]).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use rust_stemmers::{Algorithm, Stemmer};

/// A collection's token normalisation, read from its full-text index: the
/// fold (ASCII folding or not), lowercasing, and the stemmer if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fold {
    ascii: bool,
    stemmer: Option<Language>,
}

impl Fold {
    /// Lowercase only (an index without `ascii_folding` or stemmer).
    pub const CASE: Self = Self {
        ascii: false,
        stemmer: None,
    };
    /// ASCII folding, then lowercase, no stemmer: what trine creates unless
    /// a language is configured.
    pub const ASCII: Self = Self {
        ascii: true,
        stemmer: None,
    };

    /// The normalisation of an index that has `ascii_folding` set or not,
    /// and stems in `stemmer`'s language or not.
    pub fn of_index(ascii_folding: bool, stemmer: Option<Language>) -> Self {
        Self {
            ascii: ascii_folding,
            stemmer,
        }
    }

    /// This normalisation with `stemmer` instead of its own.
    pub fn with_stemmer(self, stemmer: Option<Language>) -> Self {
        Self { stemmer, ..self }
    }

    /// Whether the index folds to ASCII.
    pub fn ascii_folding(self) -> bool {
        self.ascii
    }

    /// The language the index stems in, if it stems.
    pub fn stemmer(self) -> Option<Language> {
        self.stemmer
    }

    /// What the index does to a token, in words.
    pub fn name(self) -> String {
        let fold = if self.ascii {
            "ascii folding + lowercase"
        } else {
            "lowercase"
        };
        match self.stemmer {
            None => fold.to_string(),
            Some(language) => format!("{fold} + {language} stemming"),
        }
    }

    /// One piece of text (a word, or a whole text for the verbatim check)
    /// folded as the index folds, then lowercased: no stemming.
    pub fn normalize(self, piece: &str) -> String {
        if self.ascii {
            to_ascii(piece).to_lowercase()
        } else {
            piece.to_lowercase()
        }
    }

    /// A normalised token reduced to its stem where the index stems.
    pub fn stem(self, token: String) -> String {
        match self.stemmer {
            None => token,
            Some(language) => match language.stemmer().stem(&token) {
                Cow::Borrowed(_) => token,
                Cow::Owned(stem) => stem,
            },
        }
    }

    /// One token as the index holds it: normalised, then stemmed.
    pub fn apply(self, piece: &str) -> String {
        self.stem(self.normalize(piece))
    }
}

impl Default for Fold {
    /// What trine creates: ASCII folding, no stemmer.
    fn default() -> Self {
        Self::ASCII
    }
}

/// A language of the Snowball stemmers Qdrant's full-text index offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Arabic,
    Armenian,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

impl Language {
    /// Every language, with its name and ISO 639-1 code.
    pub const ALL: &[(Language, &str, &str)] = &[
        (Self::Arabic, "arabic", "ar"),
        (Self::Armenian, "armenian", "hy"),
        (Self::Danish, "danish", "da"),
        (Self::Dutch, "dutch", "nl"),
        (Self::English, "english", "en"),
        (Self::Finnish, "finnish", "fi"),
        (Self::French, "french", "fr"),
        (Self::German, "german", "de"),
        (Self::Greek, "greek", "el"),
        (Self::Hungarian, "hungarian", "hu"),
        (Self::Italian, "italian", "it"),
        (Self::Norwegian, "norwegian", "no"),
        (Self::Portuguese, "portuguese", "pt"),
        (Self::Romanian, "romanian", "ro"),
        (Self::Russian, "russian", "ru"),
        (Self::Spanish, "spanish", "es"),
        (Self::Swedish, "swedish", "sv"),
        (Self::Tamil, "tamil", "ta"),
        (Self::Turkish, "turkish", "tr"),
    ];

    /// The language's name as Qdrant spells it (`english`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(l, _, _)| *l == self)
            .map_or("english", |(_, name, _)| name)
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Self::Arabic => Algorithm::Arabic,
            Self::Armenian => Algorithm::Armenian,
            Self::Danish => Algorithm::Danish,
            Self::Dutch => Algorithm::Dutch,
            Self::English => Algorithm::English,
            Self::Finnish => Algorithm::Finnish,
            Self::French => Algorithm::French,
            Self::German => Algorithm::German,
            Self::Greek => Algorithm::Greek,
            Self::Hungarian => Algorithm::Hungarian,
            Self::Italian => Algorithm::Italian,
            Self::Norwegian => Algorithm::Norwegian,
            Self::Portuguese => Algorithm::Portuguese,
            Self::Romanian => Algorithm::Romanian,
            Self::Russian => Algorithm::Russian,
            Self::Spanish => Algorithm::Spanish,
            Self::Swedish => Algorithm::Swedish,
            Self::Tamil => Algorithm::Tamil,
            Self::Turkish => Algorithm::Turkish,
        }
    }

    /// The language's Snowball stemmer (a function pointer: cheap to make).
    fn stemmer(self) -> Stemmer {
        Stemmer::create(self.algorithm())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Language {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A stemmer setting as written in a configuration or on a command line:
/// `none`, or a language by name or code (any case).
pub fn parse_stemmer(raw: &str) -> Result<Option<Language>, String> {
    if raw.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    raw.parse().map(Some)
}

/// Deserializes a stemmer setting ([`parse_stemmer`]): `"none"` or a
/// language.
pub fn deserialize_stemmer<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Language>, D::Error> {
    use serde::Deserialize;
    let raw = String::deserialize(deserializer)?;
    parse_stemmer(&raw).map_err(serde::de::Error::custom)
}

impl<'de> serde::Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Language {
    type Err = String;

    /// A language by its name or ISO 639-1 code, any case (`english`, `EN`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let want = s.trim().to_ascii_lowercase();
        Self::ALL
            .iter()
            .find(|(_, name, code)| *name == want || *code == want)
            .map(|(l, _, _)| *l)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(_, n, _)| *n).collect();
                format!(
                    "unknown stemmer language `{s}`: use one of {} (or its two-letter code)",
                    names.join(", ")
                )
            })
    }
}

/// The characters on which the full-text index's folding differs from
/// Lucene's list (the `asciifolding` crate), found by the per-character
/// agreement test against the index (`services/store/tests/
/// tokenizer_agreement.rs`): what the index makes of each.
const INDEX_DIFFERS: &[(char, &str)] = &[
    // LATIN CAPITAL LETTER SCHWA: Lucene folds it to `A`; the index keeps it
    // (and lowercases it to `ə`, which both fold to `a`).
    ('\u{018F}', "\u{018F}"),
];

/// `text` with every character the index folds replaced by its ASCII
/// equivalent; other characters are kept.
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if let Some((_, to)) = INDEX_DIFFERS.iter().find(|(from, _)| *from == c) {
            out.push_str(to);
        } else {
            out.push_str(&asciifolding::fold_to_ascii(c.encode_utf8(&mut buf)));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_follows_the_design() {
        let table: &[(&str, &str, &str)] = &[
            // text, Fold::CASE, Fold::ASCII
            ("ședință", "ședință", "sedinta"),
            ("ȘEDINȚA", "ședința", "sedinta"),
            ("Straße", "straße", "strasse"),
            ("Ærøskøbing", "ærøskøbing", "aeroskobing"),
            ("ação", "ação", "acao"),
            ("Łódź", "łódź", "lodz"),
            ("naïve café", "naïve café", "naive cafe"),
            (
                "Meeting 2026-11-11 09:58",
                "meeting 2026-11-11 09:58",
                "meeting 2026-11-11 09:58",
            ),
            ("встреча", "встреча", "встреча"),
            ("会议", "会议", "会议"),
            ("Ə", "ə", "ə"),
            ("ə", "ə", "a"),
            ("", "", ""),
        ];
        for (text, case, ascii) in table {
            assert_eq!(Fold::CASE.apply(text), *case, "lowercase of {text:?}");
            assert_eq!(Fold::ASCII.apply(text), *ascii, "folding of {text:?}");
        }
    }

    #[test]
    fn ascii_text_is_borrowed_and_the_folds_agree_on_it() {
        assert!(matches!(to_ascii("plain ASCII"), Cow::Borrowed(_)));
        for text in ["Meeting 2026-11-11", "CVE-2023-4863", "foo_bar.baz"] {
            assert_eq!(Fold::CASE.apply(text), Fold::ASCII.apply(text));
        }
    }

    #[test]
    fn the_index_fold_is_read_from_its_flags() {
        assert_eq!(Fold::of_index(true, None), Fold::ASCII);
        assert_eq!(Fold::of_index(false, None), Fold::CASE);
        assert_eq!(Fold::default(), Fold::ASCII);
        let english = Fold::ASCII.with_stemmer(Some(Language::English));
        assert_eq!(english, Fold::of_index(true, Some(Language::English)));
        assert_eq!(english.stemmer(), Some(Language::English));
        assert_eq!(
            english.name(),
            "ascii folding + lowercase + english stemming"
        );
    }

    #[test]
    fn stemming_follows_the_design() {
        let en = Some(Language::English);
        let fr = Some(Language::French);
        let de = Some(Language::German);
        let ro = Some(Language::Romanian);
        let table: &[(Fold, &str, &str)] = &[
            // fold, token, as the index holds it
            (Fold::ASCII.with_stemmer(en), "Meetings", "meet"),
            (Fold::ASCII.with_stemmer(en), "meeting", "meet"),
            (Fold::ASCII.with_stemmer(en), "2026", "2026"),
            (Fold::ASCII.with_stemmer(en), "deb12u4", "deb12u4"),
            (Fold::ASCII.with_stemmer(fr), "développements", "developp"),
            (Fold::ASCII.with_stemmer(fr), "Développement", "developp"),
            (Fold::ASCII.with_stemmer(de), "Bibliotheken", "bibliothek"),
            (Fold::ASCII.with_stemmer(de), "Bibliothek", "bibliothek"),
            (Fold::CASE.with_stemmer(ro), "ședințele", "ședinț"),
            (Fold::CASE.with_stemmer(ro), "ședința", "ședinț"),
            (Fold::ASCII.with_stemmer(ro), "ședința", "sedint"),
            (Fold::ASCII, "meetings", "meetings"),
        ];
        for (fold, token, want) in table {
            assert_eq!(fold.apply(token), *want, "{} of {token:?}", fold.name());
            // Normalising never stems: the verbatim check sees the word.
            assert_eq!(
                fold.normalize(token),
                Fold::of_index(fold.ascii_folding(), None).apply(token)
            );
        }
    }

    #[test]
    fn languages_parse_by_name_or_code() {
        for (language, name, code) in Language::ALL {
            assert_eq!(name.parse::<Language>(), Ok(*language));
            assert_eq!(code.to_uppercase().parse::<Language>(), Ok(*language));
            assert_eq!(language.name(), *name);
        }
        let err = "klingon".parse::<Language>().expect_err("unknown");
        assert!(err.contains("english, finnish"), "{err}");
        assert_eq!(parse_stemmer(" None "), Ok(None));
        assert_eq!(parse_stemmer("de"), Ok(Some(Language::German)));
        assert!(parse_stemmer("").is_err());
    }
}

//! The query's shape and the tier rule: whether a query is shaped like a
//! title or an identifier ([`shaped`]) or like a question ([`is_question`]),
//! and whether its verbatim matches rank above the rest ([`tier_rule`]).

use super::Settings;

/// Whether a query is shaped like a title or an identifier: one of its
/// whitespace-separated tokens mixes letters and digits, or joins two
/// alphanumeric runs with punctuation (`2026-11-11`, `09:58`, `v2.14.3`,
/// `foo_bar.qux`, `OPS-1432`).
pub fn shaped(query: &str) -> bool {
    query.split_whitespace().any(|token| {
        let letters = token.chars().any(char::is_alphabetic);
        let digits = token.chars().any(|c| c.is_numeric());
        let runs = token
            .split(|c: char| !c.is_alphanumeric())
            .filter(|r| !r.is_empty())
            .count();
        (letters && digits) || runs >= 2
    })
}

/// The longest query, in words, that [`is_question`] takes for a question:
/// a question asked of memory is a sentence (REALTALK's run to 27 words),
/// a longer text ending in a question mark is a message (MADial-Bench's
/// conversations, 30 to 200 words).
pub const QUESTION_MAX_WORDS: usize = 32;

/// English words that open a question (`what did Kate say ...`).
const INTERROGATIVES: [&str; 9] = [
    "what", "when", "where", "who", "whom", "whose", "why", "how", "which",
];

/// Whether a query is shaped like a question in natural language: at most
/// [`QUESTION_MAX_WORDS`] words, ending with a question mark (in any
/// language: `?`, `？`, `¿…?`) or opening with an English interrogative.
/// Such a search that names no strategy also reads the question strategy's
/// list (`[lexical] question_strategy`), and is fused from it as Qdrant's
/// one call fuses when its dense list is flat ([`as_question`](super::as_question)).
pub fn is_question(query: &str) -> bool {
    let query = query.trim();
    let words = query.split_whitespace().count();
    if words == 0 || words > QUESTION_MAX_WORDS {
        return false;
    }
    if query.ends_with(['?', '\u{ff1f}']) {
        return true;
    }
    let first = query
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("");
    INTERROGATIVES.iter().any(|w| first.eq_ignore_ascii_case(w))
}

/// Why the verbatim matches of a query form the tier, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierReason {
    /// The query is shaped like a title or an identifier.
    Shaped,
    /// At most `tier_max` candidates hold the query verbatim.
    Rare,
    /// A single term shaped like an identifier (`943a48b`, `libc6`) that at
    /// most `tier_max` candidates hold: a commit or ticket id looked up.
    Identifier,
}

/// The tier rule: `Some(reason)` when the verbatim candidates rank above the
/// rest. `terms` is how many terms the query has under the collection's fold
/// (`crate::terms(query, fold).len()`), `verbatim` how many candidates hold
/// the query verbatim. A query of two terms or more forms the tier when it
/// is shaped or rare; a single term only when it is both (a common shaped
/// word such as `ipv6` ranks by fusion, as every single term does).
pub fn tier_rule(
    query: &str,
    terms: usize,
    verbatim: usize,
    settings: &Settings,
) -> Option<TierReason> {
    if !settings.tier || verbatim == 0 || terms == 0 {
        None
    } else if terms == 1 {
        (shaped(query) && verbatim <= settings.tier_max).then_some(TierReason::Identifier)
    } else if shaped(query) {
        Some(TierReason::Shaped)
    } else if verbatim <= settings.tier_max {
        Some(TierReason::Rare)
    } else {
        None
    }
}

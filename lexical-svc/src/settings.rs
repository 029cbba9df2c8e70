//! The config file's `[lexical]`: what of [`LexicalConfig`] an operator
//! sets, read with serde.

use serde::{Deserialize, Deserializer};
use trine_core::Named;
use trine_core::parsed::parsed;
use trine_core::{CommonWords, Strategy};

use crate::{CountCacheConfig, LexicalConfig};

fn strategy<'de, D: Deserializer<'de>>(d: D) -> Result<Strategy, D::Error> {
    parsed(d, "lexical.strategy", Strategy::parse)
}

/// `none`, or a strategy that reads a list of its own (not `auto`, `off`).
fn question_strategy<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Strategy>, D::Error> {
    parsed(d, "lexical.question_strategy", |raw| {
        if raw == "none" {
            return Ok(None);
        }
        match Strategy::parse(raw)? {
            Strategy::Auto | Strategy::Off => Err(format!(
                "{raw:?} picks no list of its own: use sparse, bm25, candidates, gate or none"
            )),
            s => Ok(Some(s)),
        }
    })
}

/// The config file's `[lexical]`: the strategy of searches that do not name
/// one, the cap, the counts and the words.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// candidates, bm25, sparse, gate, off or auto.
    #[serde(deserialize_with = "strategy")]
    pub strategy: Strategy,
    /// The strategy of a question that names none (a short sentence ending
    /// with `?` or opening with what/when/where/who/why/how/which), when
    /// the collection is ready for it; its list is fused as Qdrant's one
    /// call fuses (RRF, 1:1). `none`: questions as every search.
    #[serde(deserialize_with = "question_strategy")]
    pub question_strategy: Option<Strategy>,
    /// Points the lexical channel reads at most.
    pub cap: usize,
    /// Seconds a count of at least `count_cache_min` points is reused (the
    /// `candidates` strategy's counts); 0 counts everything on every search.
    pub count_cache_secs: u64,
    /// Smaller counts are always made afresh.
    pub count_cache_min: u64,
    /// The embedded store keeps per-tenant document frequencies (built as
    /// `trine serve` starts, or when the first count asks): the counts of a
    /// tenant or one term are read from them, and `sparse` queries are
    /// weighted by them; false: never built, counts are made in the store
    /// and `sparse` queries take Qdrant's IDF pass.
    pub count_statistics: bool,
    /// The Snowball stemmer's language (`english`, `fr`, ...) of the text
    /// index of a collection trine creates; `none`: no stemming. An existing
    /// collection keeps its index (`trine text-index --stemmer` changes it).
    #[serde(deserialize_with = "trine_core::fold::deserialize_stemmer")]
    pub stemmer: Option<trine_core::Language>,
    /// The common words a query's lexical scoring and read leave out:
    /// `auto` (the default: the text index's stemmer language,
    /// English where it stems none), `none` (every word scored), or a
    /// language (`french`, `de`, ...).
    pub common_words: CommonWords,
}

/// [`LexicalConfig`]'s defaults, written once there.
impl Default for Settings {
    fn default() -> Self {
        let lexical = LexicalConfig::default();
        Self {
            strategy: lexical.strategy,
            question_strategy: lexical.question_strategy,
            cap: lexical.cap,
            count_cache_secs: lexical.count_cache.ttl.as_secs(),
            count_cache_min: lexical.count_cache.min_count,
            count_statistics: lexical.count_statistics,
            stemmer: None,
            common_words: lexical.common_words,
        }
    }
}

impl Settings {
    /// Sets what these settings name in the service's `config`.
    pub fn apply(&self, config: &mut LexicalConfig) {
        config.cap = self.cap;
        config.count_cache = CountCacheConfig {
            ttl: std::time::Duration::from_secs(self.count_cache_secs),
            min_count: self.count_cache_min,
        };
        config.count_statistics = self.count_statistics;
        config.strategy = self.strategy;
        config.question_strategy = self.question_strategy;
        config.common_words = self.common_words;
    }
}

//! What each lexical strategy needs of the collection (docs/design.md §3), probed
//! live: a strategy the collection is not ready for is refused with the
//! command that makes it ready, never served with partial recall.

use trine_core::model::CollectionInfo;
use trine_core::{CommonWords, Fold, Language, Strategy};
use trine_store::{Store, StoreError};

/// Whether one strategy can run on the collection, and if not, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    Yes,
    No(String),
}

impl Ready {
    pub fn is_ready(&self) -> bool {
        *self == Ready::Yes
    }
}

/// How a collection's texts are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Texts {
    /// How the text index folds tokens: terms, BM25, the sparse query and
    /// the verbatim check fold alike.
    pub fold: Fold,
    /// The sources have their phrase index
    /// ([`CollectionInfo::source_phrases`]): the phrase reads find the
    /// sources holding a query of several terms, and no other read reads a
    /// source.
    pub source_phrases: bool,
    /// The language whose common words queries leave out
    /// ([`trine_core::CommonWords::language`]); `None`: every word scored.
    pub common: Option<Language>,
}

impl Texts {
    /// Whether a read for the query of `terms` must bring each point's
    /// source for the verbatim check: unless the phrase reads find them.
    pub fn reads_sources(&self, terms: usize) -> bool {
        !(self.source_phrases && terms >= 2)
    }

    /// These texts with the common words `setting` names for their fold.
    pub fn with_common(self, setting: CommonWords) -> Self {
        Self {
            common: setting.language(self.fold),
            ..self
        }
    }
}

/// What a probe found: each strategy's readiness and how to read the texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Every strategy but `auto`, in `Strategy::ALL` order.
    pub strategies: Vec<(Strategy, Ready)>,
    pub texts: Texts,
}

/// The fold of a collection: its text index's, or trine's default when it
/// has none (no strategy then reads the index).
pub fn fold(info: &CollectionInfo) -> Fold {
    info.text_index
        .as_ref()
        .map_or(Fold::default(), |t| t.fold())
}

/// The readiness of every strategy but `auto`, and the collection's fold,
/// probed live. `has_embedder` says whether the lexical channel can embed
/// (the gate ranks by dense similarity).
pub async fn probe(store: &dyn Store, has_embedder: bool) -> Result<Probe, StoreError> {
    let info = store
        .info()
        .await?
        .ok_or_else(|| StoreError::NoCollection(store.collection().to_string()))?;
    let missing = if info.sparse_idf {
        store.count_missing_sparse().await?
    } else {
        0
    };
    Ok(Probe {
        strategies: assess(&info, missing, has_embedder),
        texts: Texts {
            fold: fold(&info),
            source_phrases: info.source_phrases,
            // The service's setting decides ([`Texts::with_common`]).
            common: None,
        },
    })
}

/// The readiness of every strategy but `auto` from what the collection is
/// and how many points lack the sparse encoding.
pub fn assess(
    info: &CollectionInfo,
    missing_sparse: u64,
    has_embedder: bool,
) -> Vec<(Strategy, Ready)> {
    let text = match &info.text_index {
        Some(_) => Ready::Yes,
        None => Ready::No("no full-text index on `text`: run `trine text-index`".to_string()),
    };
    let bm25 = match (&info.text_index, info.engine.lacks_text_scoring()) {
        // An older server: nothing to fix in the collection.
        (_, Some(why)) => Ready::No(why),
        (None, None) => text.clone(),
        (Some(t), None) if !t.scoring => Ready::No(
            "the full-text index on `text` has no BM25 scoring: delete that payload index, \
             then run `trine text-index`"
                .to_string(),
        ),
        (Some(_), None) => Ready::Yes,
    };
    let sparse = if !info.sparse_idf {
        Ready::No(
            "the collection has no `sparse` vector space with the IDF modifier: ingest into a \
             new collection"
                .to_string(),
        )
    } else if missing_sparse > 0 {
        Ready::No(format!(
            "{missing_sparse} of {} points have no sparse encoding: run `trine sparse-backfill`",
            info.points
        ))
    } else {
        Ready::Yes
    };
    let gate = match (&text, has_embedder) {
        (Ready::No(why), _) => Ready::No(why.clone()),
        (Ready::Yes, false) => Ready::No(
            "the gate ranks by dense similarity: lexical-svc needs an embedder".to_string(),
        ),
        (Ready::Yes, true) => Ready::Yes,
    };
    vec![
        (Strategy::Candidates, text),
        (Strategy::Bm25, bm25),
        (Strategy::Sparse, sparse),
        (Strategy::Gate, gate),
        (Strategy::Off, Ready::Yes),
    ]
}

/// The order in which `auto` takes the first ready strategy, from `trine
/// eval` and `trine bench` at 385,000 memories (docs/benchmarks.md): in
/// hybrid mode all four put every title first, `candidates` with the best
/// MRR at the lowest latency; alone, `candidates` and `sparse` rank best
/// (s@1 0.967 and 0.960), `bm25` is worse (0.881) and about twice as slow;
/// `gate` misses titles and phrases.
pub const AUTO_ORDER: [Strategy; 5] = [
    Strategy::Candidates,
    Strategy::Sparse,
    Strategy::Bm25,
    Strategy::Gate,
    Strategy::Off,
];

/// The strategy `auto` picks from a probe.
pub fn auto(probe: &[(Strategy, Ready)]) -> Strategy {
    AUTO_ORDER
        .into_iter()
        .find(|s| probe.iter().any(|(p, r)| p == s && r.is_ready()))
        .unwrap_or(Strategy::Off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trine_core::model::TextIndexInfo;

    fn info(text: Option<bool>, sparse_idf: bool) -> CollectionInfo {
        CollectionInfo {
            name: "memories".into(),
            backend: "edge".into(),
            embedder: None,
            dense_dim: Some(384),
            sparse_idf,
            sparse_tf: false,
            tokens: false,
            one_tenant: false,
            schema: 2,
            points: 10,
            segments: 1,
            payload_indexes: Vec::new(),
            text_index: text.map(|scoring| TextIndexInfo {
                tokenizer: "word".into(),
                lowercase: true,
                phrase_matching: true,
                ascii_folding: false,
                stemmer: None,
                scoring,
            }),
            source_phrases: false,
            engine: trine_core::model::Engine::qdrant("1.20.0"),
        }
    }

    fn why(probe: &[(Strategy, Ready)], strategy: Strategy) -> Option<String> {
        probe
            .iter()
            .find(|(s, _)| *s == strategy)
            .and_then(|(_, r)| match r {
                Ready::Yes => None,
                Ready::No(why) => Some(why.clone()),
            })
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn each_strategy_names_its_fix() {
        // (text index: None = absent / Some(scoring), sparse space, missing sparse, embedder, strategy, fix)
        let table: &[(Option<bool>, bool, u64, bool, Strategy, Option<&str>)] = &[
            (Some(true), true, 0, true, Strategy::Bm25, None),
            (
                Some(false),
                true,
                0,
                true,
                Strategy::Bm25,
                Some("no BM25 scoring"),
            ),
            (
                None,
                true,
                0,
                true,
                Strategy::Bm25,
                Some("trine text-index"),
            ),
            (
                None,
                true,
                0,
                true,
                Strategy::Candidates,
                Some("trine text-index"),
            ),
            (
                Some(true),
                true,
                3,
                true,
                Strategy::Sparse,
                Some("3 of 10 points have no sparse encoding: run `trine sparse-backfill`"),
            ),
            (
                Some(true),
                false,
                0,
                true,
                Strategy::Sparse,
                Some("no `sparse` vector space"),
            ),
            (
                Some(true),
                true,
                0,
                false,
                Strategy::Gate,
                Some("needs an embedder"),
            ),
            (None, false, 0, false, Strategy::Off, None),
        ];
        for (text, sparse, missing, embedder, strategy, want) in table {
            let probe = assess(&info(*text, *sparse), *missing, *embedder);
            match (why(&probe, *strategy), want) {
                (None, None) => {}
                (Some(got), Some(want)) => assert!(got.contains(want), "{strategy:?}: {got}"),
                (got, want) => panic!("{strategy:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn an_older_server_is_named_for_bm25_and_nothing_deleted() {
        for scoring in [Some(true), Some(false), None] {
            let mut old = info(scoring, true);
            old.engine = trine_core::model::Engine::qdrant("1.19.0");
            let probe = assess(&old, 0, true);
            let got = why(&probe, Strategy::Bm25).expect("bm25 is not ready on 1.19");
            assert!(
                got.contains("needs Qdrant 1.20") && got.contains("1.19.0"),
                "{got}"
            );
            assert!(!got.contains("delete"), "{got}");
            if scoring.is_some() {
                assert_eq!(auto(&probe), Strategy::Candidates);
            }
        }
    }

    #[test]
    fn auto_takes_the_first_ready_strategy() {
        let no = || Ready::No("x".to_string());
        let table: &[(&[(Strategy, Ready)], Strategy)] = &[
            (
                &[
                    (Strategy::Candidates, Ready::Yes),
                    (Strategy::Bm25, Ready::Yes),
                ],
                Strategy::Candidates,
            ),
            (
                &[(Strategy::Candidates, no()), (Strategy::Sparse, Ready::Yes)],
                Strategy::Sparse,
            ),
            (
                &[
                    (Strategy::Candidates, no()),
                    (Strategy::Bm25, Ready::Yes),
                    (Strategy::Sparse, Ready::Yes),
                ],
                Strategy::Sparse,
            ),
            (
                &[(Strategy::Bm25, Ready::Yes), (Strategy::Gate, Ready::Yes)],
                Strategy::Bm25,
            ),
            (
                &[(Strategy::Candidates, no()), (Strategy::Off, Ready::Yes)],
                Strategy::Off,
            ),
            (&[], Strategy::Off),
        ];
        for (probe, want) in table {
            assert_eq!(auto(probe), *want, "{probe:?}");
        }
    }
}

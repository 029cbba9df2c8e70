//! Per-tenant document frequencies: the `candidates` strategy's exact counts
//! (docs/design.md §5: N, and each term's points within the filters) kept as
//! memories are written, so that a search counts without reading the store.
//!
//! A memory adds one to its tenant's point count and one to the frequency of
//! each distinct token of its text ([`crate::tokens`] under the index's
//! [`Fold`]: what the full-text index holds of it), stop words left out (no
//! query term is one). Removing it takes the same back. The statistics answer
//! [`Frequencies::count`] only where they alone decide the count exactly:
//! the tenant and at most one term, and a validity view only for a tenant
//! none of whose memories has a validity bound. Any other filter is `None`:
//! the caller counts in the store. Nothing crosses tenants: each tenant's
//! statistics are its own.
//!
//! They also keep what Qdrant's IDF modifier computes of the `sparse` space
//! (docs/design.md §3, `sparse`) over a tenant's points on every query: the
//! points with a sparse vector, and for each dimension the points whose
//! vector holds it — counted from the vectors themselves, so a dimension two
//! tokens share (CRC-32) counts as Qdrant counts it. [`Frequencies::idf_weighted`]
//! weighs a query as the modifier would, and a space without the modifier
//! ranks by it exactly as the IDF space does, without the pass over the
//! tenant's points.

use std::collections::HashMap;

use crate::fold::Fold;
use crate::model::{Filter, Memory, SparseVector};
use crate::postings::{Added, Nearby, Page, Postings, Removed};
use crate::terms::{content_tokens, is_stop_word, tokens};

mod tally;
pub use tally::Tally;

/// One tenant's statistics.
#[derive(Debug, Clone, Default, PartialEq)]
struct Tenant {
    points: u64,
    /// Points with a validity bound (`valid_from` or `valid_until`).
    bounded: u64,
    df: HashMap<Box<str>, u64>,
    /// Points with a sparse vector (an empty one too: Qdrant stores it).
    sparse: u64,
    /// For each sparse dimension, the points whose vector holds it.
    dims: HashMap<u32, u32>,
}

/// What the statistics count of a point: its memory (tenant, text and
/// validity are read) and its `sparse` vector, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub memory: Memory,
    pub sparse: Option<SparseVector>,
}

impl From<Memory> for Document {
    /// A point without a sparse vector.
    fn from(memory: Memory) -> Self {
        Self {
            memory,
            sparse: None,
        }
    }
}

/// The inverse document frequency of Qdrant's IDF modifier, computed as
/// Qdrant computes it (`fancy_idf`, in `f32`): `ln(1 + (n − df + 0.5) / (df
/// + 0.5))` for `n` documents of which `df` hold the dimension.
pub fn idf(n: u64, df: u64) -> f32 {
    let (n, df) = (n as f32, df as f32);
    ((n - df + 0.5) / (df + 0.5) + 1.).ln()
}

/// A sparse vector's dimensions, each once.
fn dims(vector: &SparseVector) -> Vec<u32> {
    let mut dims = vector.indices.clone();
    dims.sort_unstable();
    dims.dedup();
    dims
}

/// The document frequencies of every tenant of a collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Frequencies {
    fold: Fold,
    tenants: HashMap<String, Tenant>,
    /// Each token's points, where kept ([`Frequencies::with_postings`]).
    postings: Option<Box<Postings>>,
    /// Each source token's points (the source's phrase index, folded as
    /// the text's), where kept.
    sources: Option<Box<Postings>>,
}

/// The distinct non-stop-word tokens of a text, as the index holds them
/// (sorted: a text's few hundred tokens dedupe faster so than hashed).
fn distinct(text: &str, fold: Fold) -> Vec<String> {
    let mut tokens: Vec<String> = content_tokens(text, fold).collect();
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// The documents that have a source, with its distinct tokens.
fn source_tokens<'d>(documents: &[&'d Document], fold: Fold) -> Vec<(&'d Document, Vec<String>)> {
    documents
        .iter()
        .filter_map(|d| d.memory.source.as_deref().map(|s| (*d, distinct(s, fold))))
        .collect()
}

fn bounded(memory: &Memory) -> bool {
    memory.valid_from.is_some() || memory.valid_until.is_some()
}

impl Frequencies {
    /// No memory yet, for an index that folds with `fold`.
    pub fn new(fold: Fold) -> Self {
        Self {
            fold,
            tenants: HashMap::new(),
            postings: None,
            sources: None,
        }
    }

    /// No memory yet, keeping each token's points too ([`Postings`]), so
    /// that [`Frequencies::term_page`] answers the term reads — and with
    /// `sources`, each source token's (the source's phrase index folds as
    /// the text's), so that [`Frequencies::holds_no_phrase`] answers for
    /// sources too. Only where whole documents are added
    /// ([`Frequencies::add`]): a tally holds no vector.
    pub fn with_postings(fold: Fold, sources: bool) -> Self {
        Self {
            postings: Some(Box::default()),
            sources: sources.then(Box::default),
            ..Self::new(fold)
        }
    }

    pub fn fold(&self) -> Fold {
        self.fold
    }

    /// Counts `document` in.
    pub fn add(&mut self, document: &Document) {
        self.add_all([document]);
    }

    /// Counts `documents` in: the postings take them in one merge a list
    /// ([`Postings::add_all`]).
    pub fn add_all<'d>(&mut self, documents: impl IntoIterator<Item = &'d Document>) {
        let documents: Vec<&Document> = documents.into_iter().collect();
        let tokens: Vec<Vec<String>> = documents
            .iter()
            .map(|d| distinct(&d.memory.text, self.fold))
            .collect();
        for (document, tokens) in documents.iter().zip(&tokens) {
            let memory = &document.memory;
            self.count_in(
                &memory.tenant,
                bounded(memory),
                tokens.iter().map(String::as_str),
            );
            if let Some(sparse) = &document.sparse {
                self.sparse_in(&memory.tenant, sparse);
            }
        }
        if let Some(postings) = &mut self.postings {
            let added: Vec<Added<'_>> = documents
                .iter()
                .zip(&tokens)
                .map(|(d, tokens)| Added {
                    id: d.memory.id,
                    tenant: &d.memory.tenant,
                    tokens,
                    sparse: d.sparse.as_ref(),
                    place: d.memory.thread.as_deref().zip(d.memory.seq),
                })
                .collect();
            postings.add_all(&added);
        }
        if let Some(sources) = &mut self.sources {
            let split = source_tokens(&documents, self.fold);
            let added: Vec<Added<'_>> = split
                .iter()
                .map(|(d, tokens)| Added {
                    id: d.memory.id,
                    tenant: &d.memory.tenant,
                    tokens,
                    sparse: None,
                    place: None,
                })
                .collect();
            sources.add_all(&added);
        }
    }

    /// Counts `document` out: it must have been counted in as it is (a write
    /// replacing a point removes the version it replaces).
    pub fn remove(&mut self, document: &Document) {
        self.remove_all([document]);
    }

    /// Counts `documents` out, each as it was counted in.
    pub fn remove_all<'d>(&mut self, documents: impl IntoIterator<Item = &'d Document>) {
        let documents: Vec<&Document> = documents.into_iter().collect();
        let tokens: Vec<Vec<String>> = documents
            .iter()
            .map(|d| distinct(&d.memory.text, self.fold))
            .collect();
        if let Some(postings) = &mut self.postings {
            let removed: Vec<Removed<'_>> = documents
                .iter()
                .zip(&tokens)
                .map(|(d, tokens)| Removed {
                    id: d.memory.id,
                    tenant: &d.memory.tenant,
                    tokens,
                })
                .collect();
            postings.remove_all(&removed);
        }
        if let Some(sources) = &mut self.sources {
            let split = source_tokens(&documents, self.fold);
            let removed: Vec<Removed<'_>> = split
                .iter()
                .map(|(d, tokens)| Removed {
                    id: d.memory.id,
                    tenant: &d.memory.tenant,
                    tokens,
                })
                .collect();
            sources.remove_all(&removed);
        }
        for (document, tokens) in documents.iter().zip(&tokens) {
            let memory = &document.memory;
            if let Some(sparse) = &document.sparse {
                self.sparse_out(&memory.tenant, sparse);
            }
            self.count_out(
                &memory.tenant,
                bounded(memory),
                tokens.iter().map(String::as_str),
            );
        }
    }

    /// A point of `tenant` with this `sparse` vector in.
    fn sparse_in(&mut self, tenant: &str, sparse: &SparseVector) {
        let tenant = self.tenants.entry(tenant.to_string()).or_default();
        tenant.sparse += 1;
        for dim in dims(sparse) {
            *tenant.dims.entry(dim).or_default() += 1;
        }
    }

    /// A point of `tenant` with this `sparse` vector out.
    fn sparse_out(&mut self, tenant: &str, sparse: &SparseVector) {
        let Some(tenant) = self.tenants.get_mut(tenant) else {
            return;
        };
        tenant.sparse = tenant.sparse.saturating_sub(1);
        for dim in dims(sparse) {
            if let Some(df) = tenant.dims.get_mut(&dim) {
                *df = df.saturating_sub(1);
                if *df == 0 {
                    tenant.dims.remove(&dim);
                }
            }
        }
    }

    /// One point of `tenant` in: its validity bound and distinct tokens.
    fn count_in<'a>(&mut self, tenant: &str, bounded: bool, tokens: impl Iterator<Item = &'a str>) {
        let tenant = self.tenants.entry(tenant.to_string()).or_default();
        tenant.points += 1;
        tenant.bounded += u64::from(bounded);
        for token in tokens {
            match tenant.df.get_mut(token) {
                Some(df) => *df += 1,
                None => {
                    tenant.df.insert(token.into(), 1);
                }
            }
        }
    }

    /// One point of `tenant` out, as [`Frequencies::count_in`] counted it.
    fn count_out<'a>(&mut self, name: &str, bounded: bool, tokens: impl Iterator<Item = &'a str>) {
        let Some(tenant) = self.tenants.get_mut(name) else {
            return;
        };
        tenant.points = tenant.points.saturating_sub(1);
        tenant.bounded = tenant.bounded.saturating_sub(u64::from(bounded));
        for token in tokens {
            if let Some(df) = tenant.df.get_mut(token) {
                *df = df.saturating_sub(1);
                if *df == 0 {
                    tenant.df.remove(token);
                }
            }
        }
        if tenant.points == 0 {
            self.tenants.remove(name);
        }
    }

    /// `query` weighted as Qdrant's IDF modifier weighs it with the tenant's
    /// points as the IDF corpus: each weight times the [`idf`] of its
    /// dimension over the tenant's points that have a sparse vector. Ranked
    /// in a space without the modifier, it scores every point as the IDF
    /// space does.
    pub fn idf_weighted(&self, tenant: &str, query: &SparseVector) -> SparseVector {
        let stats = self.tenants.get(tenant);
        let n = stats.map_or(0, |t| t.sparse);
        let df = |dim: &u32| {
            stats
                .and_then(|t| t.dims.get(dim))
                .map_or(0, |df| u64::from(*df))
        };
        SparseVector {
            indices: query.indices.clone(),
            values: query
                .indices
                .iter()
                .zip(&query.values)
                .map(|(dim, weight)| weight * idf(n, df(dim)))
                .collect(),
        }
    }

    /// The number of points within `filter`, where these statistics alone
    /// decide it: the tenant's points, or those holding its one term (a
    /// single token as the index folds it, not a stop word); with a validity
    /// view only when no point of the tenant has a validity bound (then every
    /// point is valid at every time). `None` for any other filter.
    pub fn count(&self, filter: &Filter) -> Option<u64> {
        if !filter.no_terms.is_empty() || filter.all_terms.len() > 1 {
            return None;
        }
        let stats = self.decided(filter)?;
        let Some(term) = filter.all_terms.first() else {
            return Some(stats.map_or(0, |t| t.points));
        };
        let key = self.key(term)?;
        Some(
            stats
                .and_then(|t| t.df.get(key.as_str()))
                .copied()
                .unwrap_or(0),
        )
    }

    /// The tenant's statistics (`None` inside: it has no point) where they
    /// decide what `filter` holds up to its terms: no condition but the
    /// tenant, the terms in and out, and a validity view only where no
    /// point of the tenant has a validity bound (then every point is valid
    /// at every time). `None` for any other filter.
    fn decided(&self, filter: &Filter) -> Option<Option<&Tenant>> {
        let Filter {
            tenant,
            projects,
            kinds,
            source_prefix,
            thread,
            created_from,
            created_until,
            valid_at,
            all_terms: _,
            no_terms: _,
            any_terms,
            phrase,
            source_phrase,
            ids,
            spans,
        } = filter;
        let plain = projects.is_empty()
            && kinds.is_empty()
            && source_prefix.is_none()
            && thread.is_none()
            && created_from.is_none()
            && created_until.is_none()
            && any_terms.is_none()
            && phrase.is_none()
            && source_phrase.is_none()
            && ids.is_none()
            && spans.is_none();
        if !plain {
            return None;
        }
        let stats = self.tenants.get(tenant);
        if valid_at.is_some() && stats.is_some_and(|t| t.bounded > 0) {
            return None;
        }
        Some(stats)
    }

    /// The token the index holds for a query term: `None` unless the term
    /// is one word as the index folds it (before stemming), not a stop word.
    fn key(&self, term: &str) -> Option<String> {
        let mut pieces = tokens(term, self.fold.with_stemmer(None));
        match (pieces.next(), pieces.next()) {
            (Some(token), None) if token == term && !is_stop_word(&token) => {}
            _ => return None,
        }
        Some(self.fold.stem(term.to_string()))
    }

    /// A term read where the postings decide it ([`Postings::read`]): the
    /// points of the tenant holding every one of the filter's `all_terms`
    /// (at least one) and none of its `no_terms`, in ascending id order from
    /// `offset`, at most `limit` — with a validity view only when no point
    /// of the tenant has a validity bound. `None` for any other filter, or
    /// where no postings are kept: the caller reads the store.
    pub fn term_page(
        &self,
        filter: &Filter,
        offset: Option<uuid::Uuid>,
        limit: usize,
    ) -> Option<Page> {
        let postings = self.postings.as_ref()?;
        if filter.all_terms.is_empty() {
            return None;
        }
        self.decided(filter)?;
        let (tenant, all_terms, no_terms) = (&filter.tenant, &filter.all_terms, &filter.no_terms);
        let keys = |terms: &[String]| {
            terms
                .iter()
                .map(|t| self.key(t))
                .collect::<Option<Vec<_>>>()
        };
        let (all, none) = (keys(all_terms)?, keys(no_terms)?);
        fn refs(keys: &[String]) -> Vec<&str> {
            keys.iter().map(String::as_str).collect()
        }
        Some(postings.read(tenant, &refs(&all), &refs(&none), offset, limit))
    }

    /// The places of `tops` and the points around them in their threads
    /// ([`Postings::around`]), where the postings are kept and decide
    /// `filter` alone: the tenant, no term condition, and a validity view only
    /// where no point of the tenant has a bound ([`Frequencies::count`]'s
    /// rule). `None` for any other filter: read the store.
    pub fn around(
        &self,
        filter: &Filter,
        tops: &[uuid::Uuid],
        window: u64,
        limit: usize,
    ) -> Option<Nearby> {
        let postings = self.postings.as_ref()?;
        if !filter.all_terms.is_empty() || !filter.no_terms.is_empty() {
            return None;
        }
        self.decided(filter)?;
        Some(postings.around(&filter.tenant, tops, window, limit))
    }

    /// Whether the postings show that no point within `filter` holds its
    /// phrase, or its source phrase: a holder holds every token of the
    /// phrase, so where no point of the tenant holds them all, none of any
    /// narrower set does. False where they cannot say (no such condition,
    /// no postings, a phrase of stop words only).
    pub fn holds_no_phrase(&self, filter: &Filter) -> bool {
        let lacks = |postings: &Option<Box<Postings>>, phrase: &Option<String>| {
            let (Some(postings), Some(phrase)) = (postings, phrase) else {
                return false;
            };
            let tokens = distinct(phrase, self.fold);
            if tokens.is_empty() {
                return false;
            }
            let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
            postings
                .read(&filter.tenant, &tokens, &[], None, 1)
                .points
                .is_empty()
        };
        lacks(&self.postings, &filter.phrase) || lacks(&self.sources, &filter.source_phrase)
    }

    /// Tenants with at least one point.
    pub fn tenants(&self) -> usize {
        self.tenants.len()
    }

    /// Distinct (tenant, term) and (tenant, sparse dimension) pairs kept:
    /// what the statistics' memory grows with.
    pub fn entries(&self) -> usize {
        self.tenants
            .values()
            .map(|t| t.df.len() + t.dims.len())
            .sum()
    }

    /// Gives back the postings' spare capacity: once built, lists grow a
    /// write at a time.
    pub fn shrink(&mut self) {
        for postings in [&mut self.postings, &mut self.sources]
            .into_iter()
            .flatten()
        {
            postings.shrink();
        }
    }

    /// The points the postings hold over every token (0 where none are
    /// kept): what their memory grows with.
    pub fn postings(&self) -> usize {
        [&self.postings, &self.sources]
            .into_iter()
            .flatten()
            .map(|p| p.entries())
            .sum()
    }

    /// Points counted in, over every tenant.
    pub fn points(&self) -> u64 {
        self.tenants.values().map(|t| t.points).sum()
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use uuid::Uuid;

    use super::*;

    fn memory(tenant: &str, text: &str) -> Memory {
        Memory::new(Uuid::new_v4(), tenant, text)
    }

    fn term(tenant: &str, term: &str) -> Filter {
        Filter {
            all_terms: vec![term.to_string()],
            ..Filter::tenant(tenant)
        }
    }

    fn now() -> Option<chrono::DateTime<Utc>> {
        Utc.timestamp_opt(1_800_000_000, 0).single()
    }

    /// The postings answer a term read only where they alone decide it, as
    /// the counts do; without postings, never.
    #[test]
    fn term_pages_only_where_the_postings_decide() {
        let mut kept = Frequencies::with_postings(Fold::default(), true);
        let a = Memory::new(Uuid::from_u128(1), "t", "Alpha beta");
        let b = Memory {
            source: Some("docs/gamma-notes.md".into()),
            ..Memory::new(Uuid::from_u128(2), "t", "alpha gamma")
        };
        let bounded = Memory {
            valid_until: now(),
            ..Memory::new(Uuid::from_u128(3), "v", "alpha")
        };
        for m in [&a, &b, &bounded] {
            kept.add(&Document::from(m.clone()));
        }
        let ids = |kept: &Frequencies, f: &Filter| {
            kept.term_page(f, None, 10)
                .map(|p| p.points.iter().map(|p| p.id.as_u128()).collect::<Vec<_>>())
        };
        let with = |f: Filter, edit: fn(&mut Filter)| {
            let mut f = f;
            edit(&mut f);
            f
        };
        let table: Vec<(Filter, Option<Vec<u128>>)> = vec![
            (term("t", "alpha"), Some(vec![1, 2])),
            (
                with(term("t", "alpha"), |f| f.no_terms = vec!["beta".into()]),
                Some(vec![2]),
            ),
            (
                with(term("t", "alpha"), |f| f.all_terms.push("gamma".into())),
                Some(vec![2]),
            ),
            (
                with(term("t", "alpha"), |f| f.valid_at = now()),
                Some(vec![1, 2]),
            ),
            (term("v", "alpha"), Some(vec![3])),
            // A bounded tenant's validity view, other conditions, no term,
            // a term that is not one token: the store reads.
            (with(term("v", "alpha"), |f| f.valid_at = now()), None),
            (
                with(term("t", "alpha"), |f| f.projects = vec!["p".into()]),
                None,
            ),
            (
                with(term("t", "alpha"), |f| f.phrase = Some("alpha beta".into())),
                None,
            ),
            (Filter::tenant("t"), None),
            (term("t", "alpha beta"), None),
            (
                with(term("t", "alpha"), |f| f.no_terms = vec!["the".into()]),
                None,
            ),
        ];
        for (filter, want) in table {
            assert_eq!(ids(&kept, &filter), want, "{filter:?}");
        }
        kept.remove(&Document::from(a.clone()));
        assert_eq!(ids(&kept, &term("t", "alpha")), Some(vec![2]));
        let phrase = |tenant: &str, p: &str| Filter {
            phrase: Some(p.to_string()),
            ..Filter::tenant(tenant)
        };
        // Only b is left: "alpha gamma".
        for (filter, none) in [
            (phrase("t", "gamma alpha"), false),
            (phrase("t", "Alpha beta"), true),
            (phrase("t", "alpha delta"), true),
            (phrase("u", "alpha"), true),
            (phrase("t", "the of"), false),
            (Filter::tenant("t"), false),
            (
                Filter {
                    source_phrase: Some("gamma notes".into()),
                    ..Filter::tenant("t")
                },
                false,
            ),
            (
                Filter {
                    source_phrase: Some("alpha notes".into()),
                    ..Filter::tenant("t")
                },
                true,
            ),
            (
                Filter {
                    source_phrase: Some("docs".into()),
                    ..Filter::tenant("u")
                },
                true,
            ),
        ] {
            assert_eq!(kept.holds_no_phrase(&filter), none, "{filter:?}");
        }
        let mut counts = Frequencies::new(Fold::default());
        counts.add(&Document::from(b));
        assert_eq!(counts.term_page(&term("t", "alpha"), None, 10), None);
        assert_eq!(counts.postings(), 0);
        assert!(!counts.holds_no_phrase(&phrase("t", "alpha delta")));
    }

    /// A tally counts a memory in and out as the memory itself does: what a
    /// keeper that does not hold texts relies on.
    #[test]
    fn a_tally_counts_as_its_memory() {
        let texts = [
            ("acme", "Meeting 2026-11-11 09:58, the meeting of meetings"),
            ("acme", "Ședință de lucru: ședința"),
            ("globex", "meeting"),
            ("globex", "the a of"),
            ("acme", ""),
        ];
        for fold in [
            Fold::CASE,
            Fold::ASCII,
            Fold::ASCII.with_stemmer(Some(crate::Language::English)),
        ] {
            let (mut by_memory, mut by_tally) = (Frequencies::new(fold), Frequencies::new(fold));
            let memories: Vec<Memory> = texts.iter().map(|(t, x)| memory(t, x)).collect();
            let tallies: Vec<Tally> = memories.iter().map(|m| by_tally.tally(m)).collect();
            for (m, t) in memories.iter().zip(&tallies) {
                by_memory.add(&Document::from(m.clone()));
                by_tally.add_tallies(&[(t, None)]);
            }
            assert_eq!(by_memory, by_tally, "{fold:?}");
            for t in &tallies[..2] {
                by_tally.remove_tallies(&[t]);
            }
            for m in &memories[..2] {
                by_memory.remove(&Document::from(m.clone()));
            }
            assert_eq!(by_memory, by_tally, "{fold:?}");
            assert_eq!(by_tally.count(&term("acme", "meeting")), Some(0));
            assert_eq!(by_tally.count(&Filter::tenant("globex")), Some(2));
        }
    }

    /// With postings kept, tallies and their vectors build and follow the
    /// same statistics, lists and source lists as the whole documents: what
    /// a keeper over a server collection answers term reads from.
    #[test]
    fn tallies_keep_the_postings_documents_keep() {
        let sourced = |id: u128, tenant: &str, text: &str, source: Option<&str>| Document {
            memory: Memory {
                source: source.map(str::to_string),
                // Acme's first two and globex's one in a thread "t".
                thread: (id <= 3).then(|| "t".to_string()),
                seq: (id <= 3).then_some(id as u64),
                ..Memory::new(Uuid::from_u128(id), tenant, text)
            },
            sparse: Some(crate::sparse::encode_text(text, Fold::ASCII)),
        };
        let documents = [
            sourced(
                1,
                "acme",
                "Meeting 2026-11-11 09:58",
                Some("cal/meeting.ics"),
            ),
            sourced(2, "acme", "the meeting of meetings", None),
            sourced(3, "globex", "meeting notes", Some("notes/meeting.md")),
            sourced(4, "acme", "Ședință de lucru", Some("ro/ședință.md")),
        ];
        let (mut whole, mut tallied) = (
            Frequencies::with_postings(Fold::ASCII, true),
            Frequencies::with_postings(Fold::ASCII, true),
        );
        whole.add_all(&documents);
        let tallies: Vec<Tally> = documents.iter().map(|d| tallied.tally(&d.memory)).collect();
        let points: Vec<(&Tally, Option<&SparseVector>)> = tallies
            .iter()
            .zip(&documents)
            .map(|(t, d)| (t, d.sparse.as_ref()))
            .collect();
        tallied.add_tallies(&points);
        assert_eq!(whole, tallied);
        // The places and threads too, each tenant's own, and only where the
        // postings decide the filter.
        let first = [Uuid::from_u128(1)];
        let around = tallied
            .around(&Filter::tenant("acme"), &first, 1, 10)
            .unwrap();
        let members: Vec<u128> = around.members.iter().map(|m| m.0.as_u128()).collect();
        assert_eq!(members, [1, 2]);
        assert!(
            around.members.iter().all(|m| m.2.is_some()),
            "with their vectors"
        );
        assert_eq!(
            around,
            whole
                .around(&Filter::tenant("acme"), &first, 1, 10)
                .unwrap()
        );
        let in_project = Filter {
            projects: vec!["p".into()],
            ..Filter::tenant("acme")
        };
        assert_eq!(tallied.around(&in_project, &first, 1, 10), None);
        whole.remove_all(&documents[..2]);
        tallied.remove_tallies(&[&tallies[0], &tallies[1]]);
        assert_eq!(whole, tallied);
        let page = tallied
            .term_page(&term("acme", "sedinta"), None, 10)
            .unwrap();
        assert_eq!(page.points.len(), 1);
        assert_eq!(page.points[0].id, Uuid::from_u128(4));
        assert!(page.points[0].sparse.is_some());
        assert_eq!(
            tallied
                .term_page(&term("acme", "meeting"), None, 10)
                .unwrap()
                .points,
            []
        );
        let in_source = |tenant: &str, p: &str| Filter {
            source_phrase: Some(p.to_string()),
            ..Filter::tenant(tenant)
        };
        assert!(tallied.holds_no_phrase(&in_source("acme", "meeting ics")));
        assert!(!tallied.holds_no_phrase(&in_source("globex", "notes meeting")));
    }

    #[test]
    fn counts_follow_the_tenants_texts() {
        let mut f = Frequencies::new(Fold::ASCII);
        let kept = [
            memory("acme", "Meeting 2026-11-11 09:58"),
            memory("acme", "meeting notes: the MEETING ran long"),
            memory("acme", "Ședință de lucru"),
            memory("globex", "meeting"),
        ];
        for m in &kept {
            f.add(&m.clone().into());
        }
        let at_now = |filter: Filter| Filter {
            valid_at: now(),
            ..filter
        };
        // (filter, count)
        let table: Vec<(Filter, Option<u64>)> = vec![
            (Filter::tenant("acme"), Some(3)),
            (Filter::tenant("globex"), Some(1)),
            (Filter::tenant("initech"), Some(0)),
            (term("acme", "meeting"), Some(2)),
            (term("globex", "meeting"), Some(1)),
            (term("acme", "11"), Some(1)),
            (term("acme", "sedinta"), Some(1)),
            (term("acme", "absent"), Some(0)),
            (term("initech", "meeting"), Some(0)),
            (at_now(term("acme", "meeting")), Some(2)),
            (at_now(Filter::tenant("acme")), Some(3)),
            // Not one folded token, or a stop word: the store counts.
            (term("acme", "Meeting"), None),
            (term("acme", "ședință"), None),
            (term("acme", "09:58"), None),
            (term("acme", "the"), None),
            (term("acme", ""), None),
            // Any other condition: the store counts.
            (
                Filter {
                    all_terms: vec!["meeting".into(), "notes".into()],
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    kinds: vec!["note".into()],
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    projects: vec!["p".into()],
                    ..term("acme", "meeting")
                },
                None,
            ),
            (
                Filter {
                    source_prefix: Some("a/".into()),
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    created_from: now(),
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    created_until: now(),
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    any_terms: Some(vec!["meeting".into()]),
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    phrase: Some("meeting notes".into()),
                    ..Filter::tenant("acme")
                },
                None,
            ),
            (
                Filter {
                    source_phrase: Some("meeting notes".into()),
                    ..Filter::tenant("acme")
                },
                None,
            ),
        ];
        for (filter, want) in table {
            assert_eq!(f.count(&filter), want, "{filter:?}");
        }
        assert_eq!((f.tenants(), f.points()), (2, 4));

        // Removing takes back what adding gave; an emptied tenant goes.
        for m in &kept {
            f.remove(&m.clone().into());
        }
        assert_eq!(f, Frequencies::new(Fold::ASCII));
    }

    #[test]
    fn a_validity_bound_in_the_tenant_leaves_validity_views_to_the_store() {
        let mut f = Frequencies::new(Fold::CASE);
        let open = memory("acme", "release notes");
        let bounded = Memory {
            valid_until: now(),
            ..memory("acme", "release train")
        };
        f.add(&open.into());
        f.add(&bounded.clone().into());
        let at_now = Filter {
            valid_at: now(),
            ..term("acme", "release")
        };
        assert_eq!(f.count(&at_now), None);
        // Without a validity view every point counts.
        assert_eq!(f.count(&term("acme", "release")), Some(2));
        // Another tenant's bound is not this one's.
        let other = Filter {
            tenant: "globex".into(),
            ..at_now.clone()
        };
        assert_eq!(f.count(&other), Some(0));
        f.remove(&bounded.into());
        assert_eq!(f.count(&at_now), Some(1));
    }

    #[test]
    fn the_fold_is_the_indexs() {
        let mut case = Frequencies::new(Fold::CASE);
        let mut ascii = Frequencies::new(Fold::ASCII);
        for f in [&mut case, &mut ascii] {
            f.add(&memory("acme", "Ședință").into());
        }
        assert_eq!(case.count(&term("acme", "ședință")), Some(1));
        assert_eq!(case.count(&term("acme", "sedinta")), Some(0));
        assert_eq!(ascii.count(&term("acme", "sedinta")), Some(1));
        assert_eq!(ascii.count(&term("acme", "ședință")), None);
    }

    fn sparse(pairs: &[(u32, f32)]) -> Option<SparseVector> {
        Some(SparseVector {
            indices: pairs.iter().map(|p| p.0).collect(),
            values: pairs.iter().map(|p| p.1).collect(),
        })
    }

    #[test]
    fn idf_is_qdrants() {
        // (n, df, ln(1 + (n - df + 0.5) / (df + 0.5)))
        let table: &[(u64, u64, f64)] = &[
            (0, 0, 2f64.ln()),
            (1, 1, (1.0 + 0.5f64 / 1.5).ln()),
            (10, 0, 22f64.ln()),
            (10, 10, (1.0 + 0.5f64 / 10.5).ln()),
            (385_000, 38_500, (1.0 + 346_500.5f64 / 38_500.5).ln()),
        ];
        for (n, df, want) in table {
            let got = idf(*n, *df);
            assert!(
                (f64::from(got) - want).abs() < 1e-6,
                "idf({n}, {df}) = {got}"
            );
        }
        assert!(idf(100, 1) > idf(100, 50), "rarer weighs more");
    }

    #[test]
    fn queries_are_weighted_by_the_tenants_sparse_points() {
        let mut f = Frequencies::new(Fold::CASE);
        let docs = [
            // acme: 3 points with a vector (one empty), 1 without.
            Document {
                sparse: sparse(&[(1, 2.0), (2, 1.0)]),
                ..memory("acme", "a b").into()
            },
            Document {
                sparse: sparse(&[(1, 1.0)]),
                ..memory("acme", "a").into()
            },
            Document {
                sparse: sparse(&[]),
                ..memory("acme", "").into()
            },
            memory("acme", "no vector").into(),
            // globex holds dimension 2 everywhere: none of it reaches acme.
            Document {
                sparse: sparse(&[(2, 1.0)]),
                ..memory("globex", "b").into()
            },
            Document {
                sparse: sparse(&[(2, 3.0), (3, 1.0)]),
                ..memory("globex", "b c").into()
            },
        ];
        for d in &docs {
            f.add(d);
        }
        let query = sparse(&[(1, 1.0), (2, 2.0), (9, 1.0)]).unwrap();
        // (tenant, weights: n = points with a vector, df per dimension)
        let table: &[(&str, [f32; 3])] = &[
            ("acme", [idf(3, 2), 2.0 * idf(3, 1), idf(3, 0)]),
            ("globex", [idf(2, 0), 2.0 * idf(2, 2), idf(2, 0)]),
            ("initech", [idf(0, 0), 2.0 * idf(0, 0), idf(0, 0)]),
        ];
        for (tenant, want) in table {
            let got = f.idf_weighted(tenant, &query);
            assert_eq!(got.indices, query.indices, "{tenant}");
            assert_eq!(got.values, want, "{tenant}");
        }
        // Removing takes the vectors back out.
        for d in &docs {
            f.remove(d);
        }
        assert_eq!(f, Frequencies::new(Fold::CASE));
    }
}

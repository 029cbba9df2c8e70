//! What a keeper that holds no texts counts of each point ([`Tally`]), and
//! how [`Frequencies`] counts tallies in and out, postings included.

use super::{Frequencies, bounded, distinct};
use crate::model::{Memory, SparseVector};
use crate::postings::{Added, Removed};

/// What [`Frequencies`] counts of one memory, kept without its text: its
/// id, tenant, whether it has a validity bound, and its distinct tokens (as
/// the index holds them, joined by NUL: about the tokens' own bytes) — and,
/// where the source's postings are kept, its source's. A keeper of
/// statistics over a collection that other processes write remembers this of
/// each point, to count out the version a write replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    id: uuid::Uuid,
    tenant: Box<str>,
    bounded: bool,
    tokens: Box<str>,
    source: Box<str>,
    /// Its thread and `seq`, where it names both.
    place: Option<(Box<str>, u64)>,
}

/// A NUL-joined list of tokens, each.
fn split_tokens(joined: &str) -> Vec<String> {
    joined
        .split('\0')
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

impl Tally {
    fn tokens(&self) -> impl Iterator<Item = &str> {
        self.tokens.split('\0').filter(|t| !t.is_empty())
    }

    /// The bytes it holds, for a keeper's accounting.
    pub fn bytes(&self) -> usize {
        self.tenant.len()
            + self.tokens.len()
            + self.source.len()
            + self.place.as_ref().map_or(0, |(thread, _)| thread.len())
            + std::mem::size_of::<Self>()
    }
}

impl Frequencies {
    /// What these statistics count of `memory`, to keep without its text.
    pub fn tally(&self, memory: &Memory) -> Tally {
        let source = match (&self.sources, &memory.source) {
            (Some(_), Some(source)) => distinct(source, self.fold).join("\0"),
            _ => String::new(),
        };
        Tally {
            id: memory.id,
            tenant: memory.tenant.as_str().into(),
            bounded: bounded(memory),
            tokens: distinct(&memory.text, self.fold).join("\0").into(),
            source: source.into(),
            place: memory
                .thread
                .as_deref()
                .zip(memory.seq)
                .map(|(thread, seq)| (thread.into(), seq)),
        }
    }

    /// Counts in memories as [`Frequencies::tally`] took them, each with its
    /// `sparse` vector: where postings are kept, each token's list takes its
    /// points in one merge ([`Postings::add_all`]), as [`Frequencies::add_all`]
    /// does with whole documents — what a keeper that holds no texts builds
    /// and follows a collection with.
    pub fn add_tallies(&mut self, points: &[(&Tally, Option<&SparseVector>)]) {
        for (tally, sparse) in points {
            self.count_in(&tally.tenant, tally.bounded, tally.tokens());
            // Counted out from the vector the postings keep: without them,
            // no vector is counted.
            if let (Some(sparse), true) = (sparse, self.postings.is_some()) {
                self.sparse_in(&tally.tenant, sparse);
            }
        }
        let split: Vec<(Vec<String>, Vec<String>)> = points
            .iter()
            .map(|(t, _)| (split_tokens(&t.tokens), split_tokens(&t.source)))
            .collect();
        if let Some(postings) = &mut self.postings {
            let added: Vec<Added<'_>> = points
                .iter()
                .zip(&split)
                .map(|((t, sparse), (tokens, _))| Added {
                    id: t.id,
                    tenant: &t.tenant,
                    tokens,
                    sparse: *sparse,
                    place: t.place.as_ref().map(|(thread, seq)| (&**thread, *seq)),
                })
                .collect();
            postings.add_all(&added);
        }
        if let Some(sources) = &mut self.sources {
            let added: Vec<Added<'_>> = points
                .iter()
                .zip(&split)
                .filter(|(_, (_, source))| !source.is_empty())
                .map(|((t, _), (_, source))| Added {
                    id: t.id,
                    tenant: &t.tenant,
                    tokens: source,
                    sparse: None,
                    place: None,
                })
                .collect();
            sources.add_all(&added);
        }
    }

    /// Counts out memories counted in with these tallies.
    pub fn remove_tallies(&mut self, tallies: &[&Tally]) {
        let split: Vec<(Vec<String>, Vec<String>)> = tallies
            .iter()
            .map(|t| (split_tokens(&t.tokens), split_tokens(&t.source)))
            .collect();
        let vectors: Vec<(&str, SparseVector)> = tallies
            .iter()
            .filter_map(|t| {
                let vector = self.postings.as_ref()?.vector(t.id)?;
                Some((&*t.tenant, vector.to_vector()))
            })
            .collect();
        for (tenant, vector) in &vectors {
            self.sparse_out(tenant, vector);
        }
        if let Some(postings) = &mut self.postings {
            let removed: Vec<Removed<'_>> = tallies
                .iter()
                .zip(&split)
                .map(|(t, (tokens, _))| Removed {
                    id: t.id,
                    tenant: &t.tenant,
                    tokens,
                })
                .collect();
            postings.remove_all(&removed);
        }
        if let Some(sources) = &mut self.sources {
            let removed: Vec<Removed<'_>> = tallies
                .iter()
                .zip(&split)
                .filter(|(_, (_, source))| !source.is_empty())
                .map(|(t, (_, source))| Removed {
                    id: t.id,
                    tenant: &t.tenant,
                    tokens: source,
                })
                .collect();
            sources.remove_all(&removed);
        }
        for tally in tallies {
            self.count_out(&tally.tenant, tally.bounded, tally.tokens());
        }
    }
}

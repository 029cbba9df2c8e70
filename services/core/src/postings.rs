//! Per-tenant postings: for each token (as the full-text index holds it),
//! the points holding it in ascending id order — what a term read of the
//! `candidates` strategy scrolls in the store (docs/design.md §3), kept in memory
//! with each point's `sparse` vector (the term frequencies BM25 reads), so
//! that the read needs no store call.
//!
//! A page is what the store's scroll returns for the same filter: the points
//! holding every one of `all` and none of `none`, in ascending id order
//! from `offset` (inclusive), at most `limit`, and the id the next page
//! starts at. Nothing crosses tenants: each tenant's postings are its own.

use std::collections::HashMap;
use std::sync::Arc;

use uuid::Uuid;

use crate::model::SparseVector;
use crate::sparse::TermVector;

mod threads;
pub use threads::Nearby;

/// One point a page holds: its id and its `sparse` vector, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Posted {
    pub id: Uuid,
    pub sparse: Option<Arc<TermVector>>,
}

/// One page of a read ([`Postings::read`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    pub points: Vec<Posted>,
    /// Where the next page starts; `None` at the end.
    pub next: Option<Uuid>,
}

/// A point to add ([`Postings::add_all`]): its id, tenant, distinct
/// tokens, `sparse` vector and place in its thread (thread and `seq`),
/// where it names both.
#[derive(Debug, Clone, Copy)]
pub struct Added<'a> {
    pub id: Uuid,
    pub tenant: &'a str,
    pub tokens: &'a [String],
    pub sparse: Option<&'a SparseVector>,
    pub place: Option<(&'a str, u64)>,
}

/// A point to remove ([`Postings::remove_all`]), as it was added.
#[derive(Debug, Clone, Copy)]
pub struct Removed<'a> {
    pub id: Uuid,
    pub tenant: &'a str,
    pub tokens: &'a [String],
}

#[derive(Debug, Clone, PartialEq)]
struct Slot {
    id: Uuid,
    sparse: Option<Arc<TermVector>>,
    place: Option<(Box<str>, u64)>,
}

/// The postings of every tenant of a collection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Postings {
    /// Each point's id and vector, by slot; `None`: a free slot.
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    slot_of: HashMap<Uuid, u32>,
    /// Tenant → token → slots, in ascending id order.
    tenants: HashMap<Box<str>, HashMap<Box<str>, Vec<u32>>>,
    /// Entries over every list: what the postings' memory grows with.
    entries: usize,
    /// Each tenant's threads, their points in order ([`Postings::around`]).
    threads: threads::Threads,
}

impl Postings {
    fn id(&self, slot: u32) -> Uuid {
        id_in(&self.slots, slot)
    }

    /// Gives back what the lists hold beyond their points (once built).
    pub fn shrink(&mut self) {
        for lists in self.tenants.values_mut() {
            for list in lists.values_mut() {
                list.shrink_to_fit();
            }
        }
        self.slots.shrink_to_fit();
    }

    /// Points a list holds, over every list.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Adds point `id` of `tenant` holding the distinct `tokens`, with its
    /// `sparse` vector ([`Postings::add_all`] of one).
    pub fn add(
        &mut self,
        id: Uuid,
        tenant: &str,
        tokens: &[String],
        sparse: Option<&SparseVector>,
    ) {
        self.add_all(&[Added {
            id,
            tenant,
            tokens,
            sparse,
            place: None,
        }]);
    }

    /// The `sparse` vector point `id` was added with.
    pub fn vector(&self, id: Uuid) -> Option<Arc<TermVector>> {
        let slot = self.slots.get(*self.slot_of.get(&id)? as usize)?.as_ref()?;
        slot.sparse.clone()
    }

    /// Removes point `id` of `tenant`, added holding `tokens`.
    pub fn remove(&mut self, id: Uuid, tenant: &str, tokens: &[String]) {
        self.remove_all(&[Removed { id, tenant, tokens }]);
    }

    /// Adds `points`. A point is added once: a write replacing it removes
    /// the version it replaces first (a second add is ignored). Each list
    /// takes its new points in one merge, so that a batch of writes costs a
    /// pass over each list it touches, not a shift per point.
    pub fn add_all(&mut self, points: &[Added<'_>]) {
        let mut tenants: HashMap<&str, HashMap<&str, Vec<u32>>> = HashMap::new();
        for point in points {
            if self.slot_of.contains_key(&point.id) {
                debug_assert!(false, "point {} added twice", point.id);
                continue;
            }
            let slot = Slot {
                id: point.id,
                sparse: point.sparse.map(|v| Arc::new(TermVector::new(v))),
                place: point.place.map(|(thread, seq)| (thread.into(), seq)),
            };
            let at = match self.free.pop() {
                Some(at) => {
                    self.slots[at as usize] = Some(slot);
                    at
                }
                None => {
                    let Ok(at) = u32::try_from(self.slots.len()) else {
                        continue;
                    };
                    self.slots.push(Some(slot));
                    at
                }
            };
            self.slot_of.insert(point.id, at);
            if let Some((thread, seq)) = point.place {
                self.threads.insert(point.tenant, thread, seq, point.id, at);
            }
            let groups = tenants.entry(point.tenant).or_default();
            for token in point.tokens {
                groups.entry(token.as_str()).or_default().push(at);
            }
        }
        let slots = &self.slots;
        for (tenant, groups) in tenants {
            let mut lists = self.tenants.remove(tenant).unwrap_or_default();
            for (token, mut new) in groups {
                new.sort_unstable_by_key(|&s| id_in(slots, s));
                let list = match lists.get_mut(token) {
                    Some(list) => list,
                    None => lists.entry(token.into()).or_default(),
                };
                let before = list.len();
                *list = merge(slots, std::mem::take(list), &new);
                self.entries += list.len() - before;
            }
            self.tenants.insert(tenant.into(), lists);
        }
    }

    /// Removes `points`, each added holding its `tokens`: one pass over
    /// each list they are in.
    pub fn remove_all(&mut self, points: &[Removed<'_>]) {
        let mut groups: HashMap<(&str, &str), Vec<Uuid>> = HashMap::new();
        for point in points {
            if !self.slot_of.contains_key(&point.id) {
                continue;
            }
            for token in point.tokens {
                groups
                    .entry((point.tenant, token.as_str()))
                    .or_default()
                    .push(point.id);
            }
        }
        for ((tenant, token), mut gone) in groups {
            gone.sort_unstable();
            let Some(lists) = self.tenants.get_mut(tenant) else {
                continue;
            };
            let Some(list) = lists.get_mut(token) else {
                continue;
            };
            let before = list.len();
            list.retain(|&s| gone.binary_search(&id_in(&self.slots, s)).is_err());
            self.entries -= before - list.len();
            if list.is_empty() {
                lists.remove(token);
                if lists.is_empty() {
                    self.tenants.remove(tenant);
                }
            }
        }
        for point in points {
            self.forget(point.id, point.tenant);
        }
    }

    /// Frees the slot of `id` of `tenant` (its list entries already
    /// removed), and its place in its thread.
    fn forget(&mut self, id: Uuid, tenant: &str) {
        if let Some(at) = self.slot_of.remove(&id) {
            if let Some(Slot {
                place: Some((thread, seq)),
                ..
            }) = self.slots[at as usize].take()
            {
                self.threads.remove(tenant, &thread, seq, id);
            }
            self.free.push(at);
        }
    }

    /// The points of `tenant` holding every token of `all` (at least one)
    /// and none of `none`, in ascending id order from `offset` (inclusive),
    /// at most `limit`; and where the next page starts.
    pub fn read(
        &self,
        tenant: &str,
        all: &[&str],
        none: &[&str],
        offset: Option<Uuid>,
        limit: usize,
    ) -> Page {
        let Some(lists) = self.tenants.get(tenant) else {
            return Page::default();
        };
        let mut must: Vec<&[u32]> = Vec::with_capacity(all.len());
        for token in all {
            match lists.get(*token) {
                Some(list) => must.push(list),
                None => return Page::default(),
            }
        }
        must.sort_by_key(|l| l.len());
        let Some((first, others)) = must.split_first() else {
            return Page::default();
        };
        let not: Vec<&[u32]> = none
            .iter()
            .filter_map(|t| lists.get(*t))
            .map(|l| &l[..])
            .collect();
        let mut cursors = vec![0usize; others.len()];
        let mut not_cursors = vec![0usize; not.len()];
        let start = offset.map_or(0, |from| first.partition_point(|&s| self.id(s) < from));
        let mut page = Page::default();
        'points: for &slot in &first[start..] {
            let id = self.id(slot);
            for (list, cursor) in others.iter().zip(cursors.iter_mut()) {
                *cursor = self.seek(list, *cursor, id);
                if list.get(*cursor).is_none_or(|&s| self.id(s) != id) {
                    continue 'points;
                }
            }
            for (list, cursor) in not.iter().zip(not_cursors.iter_mut()) {
                *cursor = self.seek(list, *cursor, id);
                if list.get(*cursor).is_some_and(|&s| self.id(s) == id) {
                    continue 'points;
                }
            }
            if page.points.len() == limit {
                page.next = Some(id);
                break;
            }
            page.points.push(Posted {
                id,
                sparse: self.slots[slot as usize]
                    .as_ref()
                    .and_then(|s| s.sparse.clone()),
            });
        }
        page
    }

    /// The first position at or after `from` in `list` whose id is at least
    /// `id`: galloping, since a read asks for ascending ids.
    fn seek(&self, list: &[u32], from: usize, id: Uuid) -> usize {
        let below = |at: usize| list.get(at).is_some_and(|&s| self.id(s) < id);
        if !below(from) {
            return from;
        }
        let mut step = 1;
        let mut low = from;
        while below(low + step) {
            low += step;
            step *= 2;
        }
        let high = (low + step).min(list.len());
        low + 1 + list[low + 1..high].partition_point(|&s| self.id(s) < id)
    }
}

/// The id in `slot` (nil for a free one).
fn id_in(slots: &[Option<Slot>], slot: u32) -> Uuid {
    slots[slot as usize].as_ref().map_or(Uuid::nil(), |s| s.id)
}

/// `list` and `new` (both in ascending id order, no id in both: a point is
/// added once) as one list.
fn merge(slots: &[Option<Slot>], mut list: Vec<u32>, new: &[u32]) -> Vec<u32> {
    let id = |s: u32| id_in(slots, s);
    if list
        .last()
        .is_none_or(|&last| new.first().is_none_or(|&f| id(last) < id(f)))
    {
        // Every new id is past the list's last (a page of a build): appended.
        list.extend_from_slice(new);
        return list;
    }
    let mut merged = Vec::with_capacity(list.len() + new.len());
    let (mut a, mut b) = (list.iter().peekable(), new.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&&x), Some(&&y)) if id(x) <= id(y) => {
                a.next();
                x
            }
            (_, Some(&&y)) => {
                b.next();
                y
            }
            (Some(&&x), None) => {
                a.next();
                x
            }
            (None, None) => break,
        };
        if merged.last().is_none_or(|&last| id(last) != id(next)) {
            merged.push(next);
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn toks(tokens: &str) -> Vec<String> {
        tokens.split_whitespace().map(String::from).collect()
    }

    fn ids(page: &Page) -> Vec<u128> {
        page.points.iter().map(|p| p.id.as_u128()).collect()
    }

    /// Points 1..=9 of tenant `t` (even ones hold `even`, multiples of three
    /// `three`, all `all`), added out of order, and one point of tenant `u`.
    fn sample() -> Postings {
        let mut p = Postings::default();
        for n in [5u128, 1, 9, 3, 7, 2, 8, 4, 6] {
            let mut tokens = vec!["all".to_string()];
            if n % 2 == 0 {
                tokens.push("even".into());
            }
            if n % 3 == 0 {
                tokens.push("three".into());
            }
            let sparse = SparseVector {
                indices: vec![n as u32],
                values: vec![1.0],
            };
            p.add(id(n), "t", &tokens, Some(&sparse));
        }
        p.add(id(100), "u", &toks("all even three"), None);
        p
    }

    /// (all, none, offset, limit, ids, next)
    type Row = (
        &'static [&'static str],
        &'static [&'static str],
        Option<u128>,
        usize,
        &'static [u128],
        Option<u128>,
    );

    #[test]
    fn a_read_is_the_scroll_of_its_filter() {
        let p = sample();
        let table: &[Row] = &[
            (&["all"], &[], None, 100, &[1, 2, 3, 4, 5, 6, 7, 8, 9], None),
            (&["even"], &[], None, 100, &[2, 4, 6, 8], None),
            (&["even", "three"], &[], None, 100, &[6], None),
            (&["three", "even"], &[], None, 100, &[6], None),
            (&["all"], &["even"], None, 100, &[1, 3, 5, 7, 9], None),
            (&["all"], &["even", "three"], None, 100, &[1, 5, 7], None),
            (&["all"], &["missing"], None, 3, &[1, 2, 3], Some(4)),
            (&["all"], &[], Some(4), 2, &[4, 5], Some(6)),
            (&["all"], &["even"], Some(4), 2, &[5, 7], Some(9)),
            (&["even"], &[], Some(8), 1, &[8], None),
            (&["even"], &[], Some(9), 1, &[], None),
            (&["missing"], &[], None, 100, &[], None),
            (&["all", "missing"], &[], None, 100, &[], None),
            (&["all"], &["all"], None, 100, &[], None),
            (&["all"], &[], None, 0, &[], Some(1)),
        ];
        for &(all, none, offset, limit, want, next) in table {
            let page = p.read("t", all, none, offset.map(id), limit);
            assert_eq!(ids(&page), want, "{all:?} without {none:?} from {offset:?}");
            assert_eq!(
                page.next,
                next.map(id),
                "{all:?} without {none:?} from {offset:?}"
            );
        }
    }

    #[test]
    fn no_point_crosses_tenants() {
        let p = sample();
        assert_eq!(ids(&p.read("u", &["even"], &[], None, 100)), [100]);
        assert_eq!(ids(&p.read("t", &["even"], &[], None, 100)), [2, 4, 6, 8]);
        assert!(
            p.read("nobody", &["even"], &[], None, 100)
                .points
                .is_empty()
        );
    }

    #[test]
    fn each_point_brings_its_vector() {
        let p = sample();
        let page = p.read("t", &["three"], &[], None, 100);
        let dims: Vec<u32> = page
            .points
            .iter()
            .map(|p| p.sparse.as_ref().expect("sparse").to_vector().indices[0])
            .collect();
        assert_eq!(dims, [3, 6, 9]);
        assert_eq!(p.read("u", &["all"], &[], None, 1).points[0].sparse, None);
    }

    #[test]
    fn removing_and_rewriting_keep_the_lists_exact() {
        let mut p = sample();
        let entries = p.entries();
        p.remove(id(6), "t", &toks("all even three"));
        assert_eq!(p.entries(), entries - 3);
        assert_eq!(ids(&p.read("t", &["even"], &[], None, 100)), [2, 4, 8]);
        assert_eq!(ids(&p.read("t", &["three"], &[], None, 100)), [3, 9]);
        // Rewritten holding other tokens, and into another tenant.
        p.remove(id(4), "t", &toks("all even"));
        p.add(id(4), "t", &toks("all"), None);
        assert_eq!(ids(&p.read("t", &["even"], &[], None, 100)), [2, 8]);
        p.remove(id(100), "u", &toks("all even three"));
        p.add(id(100), "t", &toks("all even"), None);
        assert_eq!(ids(&p.read("t", &["even"], &[], None, 100)), [2, 8, 100]);
        assert!(p.read("u", &["all"], &[], None, 100).points.is_empty());
        // A freed slot is taken again, and the lists stay in id order.
        p.add(id(0), "t", &toks("even"), None);
        assert_eq!(ids(&p.read("t", &["even"], &[], None, 100)), [0, 2, 8, 100]);
        assert_eq!(p.slots.len(), 10, "the freed slots were taken again");
    }

    /// A batch merged into the lists at once holds what the points added
    /// (and removed) one by one do.
    #[test]
    fn batches_are_the_points_one_by_one() {
        let tokens = |n: u128| -> Vec<String> {
            ["a", "b", "c", "d"]
                .iter()
                .enumerate()
                .filter(|(k, _)| n.is_multiple_of(*k as u128 + 2))
                .map(|(_, t)| t.to_string())
                .collect()
        };
        // Out of id order, in three batches, the second interleaving the first.
        let order: Vec<u128> = (0..300u128).map(|n| (n * 7_919) % 300).collect();
        let mut one = Postings::default();
        let mut batched = Postings::default();
        for chunk in order.chunks(100) {
            let held: Vec<Vec<String>> = chunk.iter().map(|&n| tokens(n)).collect();
            for (&n, t) in chunk.iter().zip(&held) {
                one.add(id(n), "t", t, None);
            }
            let added: Vec<Added<'_>> = chunk
                .iter()
                .zip(&held)
                .map(|(&n, t)| Added {
                    id: id(n),
                    tenant: "t",
                    tokens: t,
                    sparse: None,
                    place: None,
                })
                .collect();
            batched.add_all(&added);
        }
        let gone: Vec<u128> = (0..300u128).filter(|n| n.is_multiple_of(5)).collect();
        let held: Vec<Vec<String>> = gone.iter().map(|&n| tokens(n)).collect();
        for (&n, t) in gone.iter().zip(&held) {
            one.remove(id(n), "t", t);
        }
        let removed: Vec<Removed<'_>> = gone
            .iter()
            .zip(&held)
            .map(|(&n, t)| Removed {
                id: id(n),
                tenant: "t",
                tokens: t,
            })
            .collect();
        batched.remove_all(&removed);
        for token in ["a", "b", "c", "d"] {
            let want: Vec<u128> = (0..300)
                .filter(|n: &u128| !n.is_multiple_of(5) && tokens(*n).iter().any(|t| t == token))
                .collect();
            assert_eq!(
                ids(&one.read("t", &[token], &[], None, 1_000)),
                want,
                "{token}"
            );
            assert_eq!(
                ids(&batched.read("t", &[token], &[], None, 1_000)),
                want,
                "{token}"
            );
        }
        assert_eq!(one.entries(), batched.entries());
    }

    #[test]
    fn a_long_list_is_galloped_exactly() {
        let mut p = Postings::default();
        for n in 0u128..2_000 {
            let mut tokens = vec!["many".to_string()];
            if n % 97 == 0 {
                tokens.push("rare".into());
            }
            if n % 5 == 0 {
                tokens.push("fifth".into());
            }
            p.add(id(n), "t", &tokens, None);
        }
        let want: Vec<u128> = (0..2_000).filter(|n| n % 97 == 0 && n % 5 == 0).collect();
        assert_eq!(
            ids(&p.read("t", &["many", "rare", "fifth"], &[], None, 100)),
            want
        );
        let want: Vec<u128> = (0..2_000).filter(|n| n % 97 == 0 && n % 5 != 0).collect();
        assert_eq!(ids(&p.read("t", &["rare"], &["fifth"], None, 100)), want);
    }
}

//! Each tenant's threads, their points in thread order (`seq`, then id):
//! what the messages around a search's best hits are read from
//! ([`crate::context`]) where the postings are kept, without a store call.
//! A point that names no thread or no `seq` is in none; nothing crosses
//! tenants (the same thread name in two tenants is two threads).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use uuid::Uuid;

use super::Postings;
use crate::context::{self, Place};
use crate::sparse::TermVector;

/// One thread's points: (`seq`, id) → slot.
type Thread = BTreeMap<(u64, Uuid), u32>;

/// Tenant → thread → its points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Threads {
    tenants: HashMap<Box<str>, HashMap<Box<str>, Thread>>,
}

impl Threads {
    pub(super) fn insert(&mut self, tenant: &str, thread: &str, seq: u64, id: Uuid, slot: u32) {
        let threads = match self.tenants.get_mut(tenant) {
            Some(threads) => threads,
            None => self.tenants.entry(tenant.into()).or_default(),
        };
        let points = match threads.get_mut(thread) {
            Some(points) => points,
            None => threads.entry(thread.into()).or_default(),
        };
        points.insert((seq, id), slot);
    }

    pub(super) fn remove(&mut self, tenant: &str, thread: &str, seq: u64, id: Uuid) {
        let Some(threads) = self.tenants.get_mut(tenant) else {
            return;
        };
        if let Some(points) = threads.get_mut(thread) {
            points.remove(&(seq, id));
            if points.is_empty() {
                threads.remove(thread);
            }
        }
        if threads.is_empty() {
            self.tenants.remove(tenant);
        }
    }
}

/// The places of a search's best hits and the points around them
/// ([`Postings::around`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nearby {
    /// Each best hit of the tenant that has a place, with it.
    pub places: HashMap<Uuid, Place>,
    /// Every point of the stretches [`context::spans`] makes of those
    /// places (twice the window on each side), with its place and `sparse`
    /// vector, in thread order; at most the limit asked for.
    pub members: Vec<(Uuid, Place, Option<Arc<TermVector>>)>,
}

impl Postings {
    /// What [`crate::context`] reads around the best hits `tops` of
    /// `tenant` within `window`: their places, then every point of
    /// `tenant` in the stretches of their threads ([`context::spans`]), at
    /// most `limit`. A top that is not the tenant's, or has no place, has
    /// none.
    pub fn around(&self, tenant: &str, tops: &[Uuid], window: u64, limit: usize) -> Nearby {
        let Some(threads) = self.threads.tenants.get(tenant) else {
            return Nearby::default();
        };
        let places: HashMap<Uuid, Place> = tops
            .iter()
            .filter_map(|id| {
                let slot = self.slots.get(*self.slot_of.get(id)? as usize)?.as_ref()?;
                let (thread, seq) = slot.place.as_ref()?;
                // The tenant's own: its thread holds the point.
                threads.get(thread)?.contains_key(&(*seq, *id)).then(|| {
                    let place = Place {
                        thread: thread.to_string(),
                        seq: *seq,
                    };
                    (*id, place)
                })
            })
            .collect();
        let mut members = Vec::new();
        'spans: for span in context::spans(places.values(), window) {
            let Some(points) = threads.get(span.thread.as_str()) else {
                continue;
            };
            for (&(seq, id), &slot) in
                points.range((span.from, Uuid::nil())..=(span.to, Uuid::max()))
            {
                if members.len() >= limit {
                    break 'spans;
                }
                let sparse = self.slots[slot as usize]
                    .as_ref()
                    .and_then(|s| s.sparse.clone());
                let place = Place {
                    thread: span.thread.clone(),
                    seq,
                };
                members.push((id, place, sparse));
            }
        }
        Nearby { places, members }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postings::Added;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// A point: its id, tenant, and thread and `seq`.
    type Point<'a> = (u128, &'a str, Option<(&'a str, u64)>);

    fn postings(points: &[Point<'_>]) -> Postings {
        let mut postings = Postings::default();
        let tokens = vec!["word".to_string()];
        let added: Vec<Added<'_>> = points
            .iter()
            .map(|&(n, tenant, place)| Added {
                id: id(n),
                tenant,
                tokens: &tokens,
                sparse: None,
                place,
            })
            .collect();
        postings.add_all(&added);
        postings
    }

    fn ids(around: &Nearby) -> (Vec<u128>, Vec<(u128, u64)>) {
        let mut placed: Vec<u128> = around.places.keys().map(|i| i.as_u128()).collect();
        placed.sort_unstable();
        let members = around
            .members
            .iter()
            .map(|(i, p, _)| (i.as_u128(), p.seq))
            .collect();
        (placed, members)
    }

    #[test]
    fn the_stretches_around_the_places_within_the_tenant() {
        let points = [
            (1, "t", Some(("a", 0))),
            (2, "t", Some(("a", 1))),
            (3, "t", Some(("a", 2))),
            (4, "t", Some(("a", 3))),
            (5, "t", Some(("a", 9))),
            (6, "t", Some(("b", 1))),
            (7, "t", None),
            (8, "u", Some(("a", 1))),
            (9, "t", Some(("a", 1))),
        ];
        let kept = postings(&points);
        // (tops, window, limit) → (placed tops, members as (id, seq)).
        type Row = (&'static [u128], u64, usize, (Vec<u128>, Vec<(u128, u64)>));
        let table: Vec<Row> = vec![
            // Twice the window on each side: seq 0..=2 of thread a, two
            // points sharing seq 1 in id order; never u's thread a.
            (
                &[1],
                1,
                100,
                (vec![1], vec![(1, 0), (2, 1), (9, 1), (3, 2)]),
            ),
            (
                &[4],
                1,
                100,
                (vec![4], vec![(2, 1), (9, 1), (3, 2), (4, 3)]),
            ),
            // Two threads at once; a top without a place or of another
            // tenant has none.
            (&[6, 5, 7, 8], 0, 100, (vec![5, 6], vec![(5, 9), (6, 1)])),
            (&[7, 8], 1, 100, (vec![], vec![])),
            // The limit holds.
            (&[1], 2, 3, (vec![1], vec![(1, 0), (2, 1), (9, 1)])),
        ];
        for (tops, window, limit, want) in table {
            let tops: Vec<Uuid> = tops.iter().map(|&n| id(n)).collect();
            let got = ids(&kept.around("t", &tops, window, limit));
            // Members come thread by thread (b before a is not promised):
            // compare as sets of (id, seq), in order within a thread.
            let (mut got_members, mut want_members) = (got.1.clone(), want.1.clone());
            got_members.sort_unstable();
            want_members.sort_unstable();
            assert_eq!(
                (got.0, got_members),
                (want.0, want_members),
                "{tops:?} ±{window}"
            );
        }
        assert_eq!(kept.around("nobody", &[id(1)], 1, 100), Nearby::default());
    }

    #[test]
    fn a_removed_or_replaced_point_leaves_its_place() {
        let mut kept = postings(&[(1, "t", Some(("a", 0))), (2, "t", Some(("a", 1)))]);
        let tokens = vec!["word".to_string()];
        kept.remove(id(2), "t", &tokens);
        let around = kept.around("t", &[id(1)], 1, 100);
        assert_eq!(ids(&around), (vec![1], vec![(1, 0)]));
        // Written again in another thread: found there only.
        kept.add_all(&[Added {
            id: id(2),
            tenant: "t",
            tokens: &tokens,
            sparse: None,
            place: Some(("b", 5)),
        }]);
        assert_eq!(
            ids(&kept.around("t", &[id(1)], 1, 100)),
            (vec![1], vec![(1, 0)])
        );
        assert_eq!(
            ids(&kept.around("t", &[id(2)], 1, 100)),
            (vec![2], vec![(2, 5)])
        );
        kept.remove(id(1), "t", &tokens);
        kept.remove(id(2), "t", &tokens);
        assert_eq!(kept.threads, Threads::default(), "nothing left behind");
    }
}

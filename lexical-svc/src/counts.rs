//! The counts of the `candidates` strategy (N and one per term), with a cache
//! of the large ones.
//!
//! Where the store keeps per-tenant document frequencies (the embedded
//! store: [`Store::counted`]), a count of the tenant or of one term is read
//! from them: exact, with no read and no cache, whether or not the query was
//! seen before. The cache below serves the other counts (a server store,
//! whose collection other processes write; filters the statistics do not
//! decide).
//!
//! An exact count costs in proportion to the points it counts (Qdrant reads
//! every matching id): a term held by 10 % of 400,000 points takes 12–30 ms
//! on two cores, a rare term 0.05 ms. The large counts are the ones that
//! recur (common terms, and N, the points within the tenant) and the ones
//! whose small changes move BM25's IDF least. So a count of at least
//! `min_count` is kept per filter: for `ttl` it is used as it is; for a
//! second `ttl` it is still used, while one count in the background replaces
//! it (stale while revalidating, so that a search never waits for a count
//! that is asked for regularly); after that it is made afresh. Smaller
//! counts are always made afresh, so rare terms, which decide the
//! rarest-first order and carry the IDF that matters, stay exact; a zero
//! count is kept too (counting a term no point holds scans the tenant). A
//! write shows in a cached count within 2 × `ttl`. `ttl = 0` counts everything on
//! every search (docs/design.md §5).
//!
//! Expiry is by time, not by write notification: the collection is written
//! by gateways, `trine ingest` and other tools, none of which talk to every
//! lexical-svc replica.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use trine_core::model::Filter;
use trine_store::{Store, StoreError};

/// At most this many cached counts; when full, expired entries go first,
/// then all of them.
const MAX_ENTRIES: usize = 65_536;

/// The count cache's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountCacheConfig {
    /// How long a cached count is used as it is (and for as long again while
    /// it is refreshed); zero: no cache.
    pub ttl: Duration,
    /// Only counts at least this large are cached (and zero counts).
    pub min_count: u64,
}

impl Default for CountCacheConfig {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(60),
            min_count: 1_000,
        }
    }
}

impl CountCacheConfig {
    /// Whether a count is kept: a large one, or zero (a term no point
    /// holds costs a scan of the tenant to count, 15–20 ms at 400,000).
    fn keeps(&self, value: u64) -> bool {
        value >= self.min_count || value == 0
    }

    /// No cache: every count is made on every search.
    pub const OFF: Self = Self {
        ttl: Duration::ZERO,
        min_count: 0,
    };
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    at: Instant,
    value: u64,
    refreshing: bool,
}

type Entries = Arc<Mutex<HashMap<String, Entry>>>;

/// What the cache tells the time by: the system's clock, or a test's.
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Counts through a store, reusing the large ones.
pub struct Counter {
    store: Arc<dyn Store>,
    config: CountCacheConfig,
    /// Counts are read from the store's statistics where it keeps them.
    statistics: bool,
    entries: Entries,
    clock: Clock,
}

/// A count, and whether it came from the cache or from the store's
/// statistics (`kept`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub value: u64,
    pub cached: bool,
    pub kept: bool,
}

/// What the cache holds for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cached {
    Fresh(u64),
    /// Usable; the caller that got it starts the one refresh.
    Stale {
        value: u64,
        refresh: bool,
    },
    Missing,
}

impl Counter {
    pub fn new(store: Arc<dyn Store>, config: CountCacheConfig) -> Self {
        Self {
            store,
            config,
            statistics: true,
            entries: Arc::default(),
            clock: Arc::new(Instant::now),
        }
    }

    /// With `false`, every count is made in the store (or reused from the
    /// cache), never read from its statistics — which then are never built.
    pub fn with_statistics(self, statistics: bool) -> Self {
        Self { statistics, ..self }
    }

    /// The cache on `clock` instead of the system's: a test moves time by
    /// hand instead of sleeping through it.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The number of points within `filter`: exact — from the store's
    /// statistics where it keeps them ([`Store::counted`]), else counted —
    /// or an exact count made recently for the same filter (see the
    /// module's documentation).
    pub async fn count(&self, filter: &Filter) -> Result<Count, StoreError> {
        if self.statistics
            && let Some(value) = self.store.counted(filter).exact()
        {
            return Ok(Count {
                value,
                cached: false,
                kept: true,
            });
        }
        if self.config.ttl.is_zero() {
            let value = self.store.count(filter).await?;
            return Ok(Count {
                value,
                cached: false,
                kept: false,
            });
        }
        let key = key(filter, self.config.ttl, Utc::now());
        match lookup(&self.entries, &key, self.config.ttl, (self.clock)()) {
            Cached::Fresh(value) => {
                return Ok(Count {
                    value,
                    cached: true,
                    kept: false,
                });
            }
            Cached::Stale { value, refresh } => {
                if refresh {
                    self.refresh(key, filter.clone());
                }
                return Ok(Count {
                    value,
                    cached: true,
                    kept: false,
                });
            }
            Cached::Missing => {}
        }
        let value = self.store.count(filter).await?;
        if self.config.keeps(value) {
            insert(&self.entries, key, value, self.config.ttl, (self.clock)());
        }
        Ok(Count {
            value,
            cached: false,
            kept: false,
        })
    }

    /// Recounts in the background; the stale value serves meanwhile.
    fn refresh(&self, key: String, filter: Filter) {
        let (store, entries, config) = (self.store.clone(), self.entries.clone(), self.config);
        let clock = self.clock.clone();
        tokio::spawn(async move {
            match store.count(&filter).await {
                Ok(value) if config.keeps(value) => {
                    insert(&entries, key, value, config.ttl, clock());
                }
                Ok(_) => {
                    if let Ok(mut entries) = entries.lock() {
                        entries.remove(&key);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "refreshing a cached count failed");
                    if let Ok(mut entries) = entries.lock()
                        && let Some(entry) = entries.get_mut(&key)
                    {
                        entry.refreshing = false;
                    }
                }
            }
        });
    }
}

fn lookup(entries: &Entries, key: &str, ttl: Duration, now: Instant) -> Cached {
    let Ok(mut entries) = entries.lock() else {
        return Cached::Missing;
    };
    let Some(entry) = entries.get_mut(key) else {
        return Cached::Missing;
    };
    let age = now.saturating_duration_since(entry.at);
    if age < ttl {
        Cached::Fresh(entry.value)
    } else if age < ttl.saturating_mul(2) {
        let refresh = !entry.refreshing;
        entry.refreshing = true;
        Cached::Stale {
            value: entry.value,
            refresh,
        }
    } else {
        Cached::Missing
    }
}

fn insert(entries: &Entries, key: String, value: u64, ttl: Duration, now: Instant) {
    let Ok(mut entries) = entries.lock() else {
        return;
    };
    if entries.len() >= MAX_ENTRIES {
        entries.retain(|_, e| now.saturating_duration_since(e.at) < ttl.saturating_mul(2));
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
    }
    let entry = Entry {
        at: now,
        value,
        refreshing: false,
    };
    entries.insert(key, entry);
}

/// The cache key of a filter. A search's default validity time is "now",
/// different on every search: a validity time within `ttl` of `now` keys as
/// "now" (the cached count is the view at the time it was made, replaced
/// within 2 × `ttl` like any count); any other is rounded down to a whole
/// `ttl`.
fn key(filter: &Filter, ttl: Duration, now: DateTime<Utc>) -> String {
    let step = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1);
    let mut filter = filter.clone();
    let valid_at = match filter.valid_at.take() {
        None => "always".to_string(),
        Some(t) if (t - now).num_milliseconds().abs() < step => "now".to_string(),
        Some(t) => t.timestamp_millis().div_euclid(step).to_string(),
    };
    format!("{valid_at}|{filter:?}")
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn at(ms: i64) -> Option<chrono::DateTime<Utc>> {
        Utc.timestamp_millis_opt(ms).single()
    }

    #[test]
    fn keys_take_the_validity_time_near_now_as_now_and_keep_everything_else() {
        let ttl = Duration::from_secs(60);
        let now = at(10_000_000).unwrap();
        let base = Filter {
            valid_at: at(120_000),
            ..Filter::tenant("acme")
        };
        // (validity time, tenant, same key as `base`)
        let cases = [
            (at(120_000), "acme", true),
            (at(179_999), "acme", true),
            (at(180_000), "acme", false),
            (at(119_999), "acme", false),
            (None, "acme", false),
            (at(120_000), "globex", false),
        ];
        for (valid_at, tenant, same) in cases {
            let other = Filter {
                valid_at,
                ..Filter::tenant(tenant)
            };
            assert_eq!(
                key(&base, ttl, now) == key(&other, ttl, now),
                same,
                "{other:?}"
            );
        }
        let with_term = Filter {
            all_terms: vec!["meeting".to_string()],
            ..base.clone()
        };
        assert_ne!(key(&base, ttl, now), key(&with_term, ttl, now));

        // Searches at "now", whatever minute it is, share one key.
        let at_now = |ms: i64| Filter {
            valid_at: at(ms),
            ..Filter::tenant("acme")
        };
        let first = key(&at_now(10_000_000), ttl, now);
        let later = at(10_059_000).unwrap();
        assert_eq!(first, key(&at_now(10_059_000), ttl, later));
        assert_eq!(first, key(&at_now(10_000_000 - 59_000), ttl, now));
        assert_ne!(first, key(&at_now(10_000_000 + 61_000), ttl, now));
    }

    #[test]
    fn a_count_is_fresh_then_stale_with_one_refresh_then_gone() {
        let ttl = Duration::from_millis(40);
        let t0 = Instant::now();
        let entries = Entries::default();
        insert(&entries, "large".to_string(), 10, ttl, t0);
        assert_eq!(lookup(&entries, "large", ttl, t0), Cached::Fresh(10));
        assert_eq!(lookup(&entries, "other", ttl, t0), Cached::Missing);
        let stale = |refresh| Cached::Stale { value: 10, refresh };
        assert_eq!(lookup(&entries, "large", ttl, t0 + ttl), stale(true));
        assert_eq!(lookup(&entries, "large", ttl, t0 + ttl), stale(false));
        assert_eq!(
            lookup(&entries, "large", ttl, t0 + 2 * ttl),
            Cached::Missing
        );
    }
}

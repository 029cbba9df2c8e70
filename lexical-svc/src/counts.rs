//! The counts of the `candidates` strategy (N and one per term), with a cache
//! of the large ones.
//!
//! An exact count costs in proportion to the points it counts (Qdrant reads
//! every matching id): a term held by 10 % of 400,000 points takes 12–30 ms
//! on two cores, a rare term 0.05 ms. The large counts are the ones that
//! recur (common terms, and N, the points within the tenant) and the ones
//! whose small changes move BM25's IDF least. So a count of at least
//! `min_count` is reused for up to `ttl`, per filter; smaller counts are
//! always made afresh, so rare terms, which decide the rarest-first order and
//! carry the IDF that matters, stay exact. A write shows in a cached count
//! within `ttl`. `ttl = 0` counts everything on every search (DESIGN.md §1).
//!
//! Expiry is by time, not by write notification: the collection is written
//! by gateways, `trine ingest` and other tools, none of which talk to every
//! lexical-svc replica.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use trine_core::model::Filter;
use trine_store::{Store, StoreError};

/// At most this many cached counts; when full, expired entries go first,
/// then all of them.
const MAX_ENTRIES: usize = 65_536;

/// The count cache's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountCacheConfig {
    /// How long a cached count is used; zero: no cache.
    pub ttl: Duration,
    /// Only counts at least this large are cached.
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
    /// No cache: every count is made on every search.
    pub const OFF: Self = Self {
        ttl: Duration::ZERO,
        min_count: 0,
    };
}

/// Counts through a store, reusing the large ones.
#[derive(Debug, Default)]
pub struct Counter {
    config: CountCacheConfig,
    entries: Mutex<HashMap<String, (Instant, u64)>>,
}

/// A count and whether it came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub value: u64,
    pub cached: bool,
}

impl Counter {
    pub fn new(config: CountCacheConfig) -> Self {
        Self {
            config,
            entries: Mutex::default(),
        }
    }

    /// The number of points within `filter`: exact, or an exact count made
    /// less than `ttl` ago for the same filter.
    pub async fn count(&self, store: &dyn Store, filter: &Filter) -> Result<Count, StoreError> {
        if self.config.ttl.is_zero() {
            let value = store.count(filter).await?;
            return Ok(Count {
                value,
                cached: false,
            });
        }
        let key = key(filter, self.config.ttl);
        if let Some(value) = self.lookup(&key) {
            return Ok(Count {
                value,
                cached: true,
            });
        }
        let value = store.count(filter).await?;
        if value >= self.config.min_count {
            self.insert(key, value);
        }
        Ok(Count {
            value,
            cached: false,
        })
    }

    fn lookup(&self, key: &str) -> Option<u64> {
        let entries = self.entries.lock().ok()?;
        let (at, value) = entries.get(key)?;
        (at.elapsed() < self.config.ttl).then_some(*value)
    }

    fn insert(&self, key: String, value: u64) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= MAX_ENTRIES {
            let ttl = self.config.ttl;
            entries.retain(|_, (at, _)| at.elapsed() < ttl);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (Instant::now(), value));
    }
}

/// The cache key of a filter: the filter with its validity time rounded down
/// to a whole `ttl` (a search's default validity time is "now", different on
/// every search; within one `ttl` the validity view counts as the same).
fn key(filter: &Filter, ttl: Duration) -> String {
    let step = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1);
    let mut filter = filter.clone();
    let valid_at = filter
        .valid_at
        .take()
        .map(|t| t.timestamp_millis().div_euclid(step));
    format!("{valid_at:?}|{filter:?}")
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn at(ms: i64) -> Option<chrono::DateTime<Utc>> {
        Utc.timestamp_millis_opt(ms).single()
    }

    #[test]
    fn keys_round_the_validity_time_and_keep_everything_else() {
        let ttl = Duration::from_secs(60);
        let base = Filter {
            valid_at: at(120_000),
            ..Filter::tenant("acme")
        };
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
            assert_eq!(key(&base, ttl) == key(&other, ttl), same, "{other:?}");
        }
        let with_term = Filter {
            all_terms: vec!["meeting".to_string()],
            ..base.clone()
        };
        assert_ne!(key(&base, ttl), key(&with_term, ttl));
    }

    #[test]
    fn kept_counts_expire_after_the_ttl() {
        let counter = Counter::new(CountCacheConfig {
            ttl: Duration::from_millis(50),
            min_count: 10,
        });
        counter.insert("large".to_string(), 10);
        assert_eq!(counter.lookup("large"), Some(10));
        assert_eq!(counter.lookup("other"), None);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(counter.lookup("large"), None);
    }
}

//! Per-tenant quotas: a request rate (a token bucket per tenant, refused
//! with RESOURCE_EXHAUSTED and the time to wait) and the memories a tenant
//! may hold (new points beyond it refused as item errors). Each has a
//! default and per-tenant overrides; 0 is no limit.
//!
//! Replicas of the gateway enforce them together. The memories held are
//! counted in the store, which every replica shares (two replicas writing
//! new memories of one tenant at the same instant may each pass the last
//! free place: a tenant can end at most one write batch per replica over
//! its quota). The rate is split: every [`BEAT`] each replica publishes its
//! tenants' demand (requests since its last beat) in the store and reads
//! every live replica's ([`trine_store::Store::gateways`]), and takes the
//! share of each tenant's rate and burst its demand is of the demand of all
//! ([`fractions`], each replica counted as asking at least one request so
//! that one starting to be asked is never at zero). The shares sum to the
//! whole, so the replicas together admit at most the tenant's rate (and
//! burst); a client pinned to one replica gets about all of it, one
//! spreading its calls gets it spread. Between beats, and while a replica
//! joins or leaves, the split lags by a beat or two.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use trine_store::{Beat, Store};
use uuid::Uuid;

/// One tenant's limits (`None`: the default's; 0: none); the config file's
/// `[quotas.tenant.NAME]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Requests a second.
    pub rate: Option<f64>,
    /// Requests at once beyond the rate (default: one second's worth).
    pub burst: Option<f64>,
    /// Memories held.
    pub points: Option<u64>,
}

/// The config file's `[quotas]`: every tenant's defaults, and
/// `[quotas.tenant.NAME]` for one tenant; unset or 0: no limit.
#[derive(Debug, Clone, PartialEq, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Requests a second per tenant.
    pub rate: Option<f64>,
    /// Requests at once above the rate (default: one second's worth).
    pub burst: Option<f64>,
    /// Memories a tenant may hold.
    pub points: Option<u64>,
    pub tenant: BTreeMap<String, Limits>,
}

impl Settings {
    /// The quotas, or `None` when the settings set none.
    pub fn quotas(&self) -> Option<Quotas> {
        if *self == Self::default() {
            return None;
        }
        let default = Limits {
            rate: self.rate,
            burst: self.burst,
            points: self.points,
        };
        let tenants = self
            .tenant
            .iter()
            .map(|(name, limits)| (name.clone(), *limits))
            .collect();
        Some(Quotas::new(default, tenants))
    }

    /// What is out of range, naming its section.
    pub fn check(&self) -> Result<(), String> {
        let each = std::iter::once(("[quotas]".to_string(), self.rate, self.burst)).chain(
            self.tenant
                .iter()
                .map(|(name, q)| (format!("[quotas.tenant.{name}]"), q.rate, q.burst)),
        );
        for (section, rate, burst) in each {
            if rate.is_some_and(|r| !(r.is_finite() && r >= 0.0)) {
                return Err(format!(
                    "{section} rate must be a number of requests a second >= 0 (0: no limit)"
                ));
            }
            if burst.is_some_and(|b| !(b.is_finite() && b >= 1.0)) {
                return Err(format!("{section} burst must be at least 1"));
            }
        }
        Ok(())
    }
}

/// The quotas of every tenant.
#[derive(Debug, Default)]
pub struct Quotas {
    default: Limits,
    tenants: HashMap<String, Limits>,
    buckets: Mutex<HashMap<String, Bucket>>,
    /// This replica's id among the gateways sharing the store.
    id: Uuid,
    /// Requests each rate-limited tenant made since the last beat.
    demand: Mutex<BTreeMap<String, u64>>,
    /// This replica's share of each tenant's rate.
    shares: Mutex<Shares>,
}

/// This replica's share of each tenant's rate and burst.
#[derive(Debug, Clone, PartialEq)]
pub struct Shares {
    /// Of the tenants some replica was asked for.
    pub tenants: HashMap<String, f64>,
    /// Of the others: one replica's part.
    pub others: f64,
    /// Gateways sharing the rates (this one included).
    pub gateways: usize,
}

impl Default for Shares {
    fn default() -> Self {
        Self {
            tenants: HashMap::new(),
            others: 1.0,
            gateways: 1,
        }
    }
}

/// How often a replica publishes its demand and reads the others'.
pub const BEAT: Duration = Duration::from_secs(1);
/// A replica not heard from for this long is gone.
pub const LIVE: Duration = Duration::from_secs(3);

/// This replica's (`me`'s) share of each tenant's rate, from every live
/// replica's heartbeat: its demand over all the replicas' demand, each
/// counted as at least one request.
pub fn fractions(beats: &[Beat], me: Uuid) -> Shares {
    let n = beats.len().max(1);
    if !beats.iter().any(|b| b.id == me) {
        // Not heard back yet: as one of them and one more.
        return Shares {
            tenants: HashMap::new(),
            others: 1.0 / (n + 1) as f64,
            gateways: n + 1,
        };
    }
    let mut tenants = HashMap::new();
    for tenant in beats.iter().flat_map(|b| b.demand.keys()) {
        if tenants.contains_key(tenant) {
            continue;
        }
        let asked = |b: &Beat| b.demand.get(tenant).copied().unwrap_or(0).max(1) as f64;
        let all: f64 = beats.iter().map(asked).sum();
        let mine = beats.iter().find(|b| b.id == me).map_or(1.0, asked);
        tenants.insert(tenant.clone(), mine / all);
    }
    Shares {
        tenants,
        others: 1.0 / n as f64,
        gateways: n,
    }
}

/// Buckets kept before full ones (no different from absent ones) are
/// dropped: made-up tenant names cannot grow the map without bound.
const MAX_BUCKETS: usize = 10_000;

/// A token bucket: `tokens` at `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub tokens: f64,
    pub at: Instant,
}

impl Bucket {
    pub fn full(burst: f64, now: Instant) -> Self {
        Self {
            tokens: burst,
            at: now,
        }
    }

    fn refilled(&self, now: Instant, rate: f64, burst: f64) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.tokens + elapsed * rate).min(burst)
    }

    /// Takes one token at `now`, or says how long until there is one.
    pub fn take(&mut self, now: Instant, rate: f64, burst: f64) -> Result<(), Duration> {
        let tokens = self.refilled(now, rate, burst);
        self.at = now;
        if tokens >= 1.0 {
            self.tokens = tokens - 1.0;
            Ok(())
        } else {
            self.tokens = tokens;
            Err(Duration::from_secs_f64((1.0 - tokens) / rate))
        }
    }
}

impl Quotas {
    pub fn new(default: Limits, tenants: HashMap<String, Limits>) -> Self {
        Self {
            default,
            tenants,
            buckets: Mutex::new(HashMap::new()),
            id: Uuid::new_v4(),
            demand: Mutex::new(BTreeMap::new()),
            shares: Mutex::new(Shares::default()),
        }
    }

    /// Whether any tenant has a request rate.
    pub fn has_rates(&self) -> bool {
        self.default.rate.is_some_and(|r| r > 0.0)
            || self
                .tenants
                .values()
                .any(|l| l.rate.is_some_and(|r| r > 0.0))
    }

    /// This replica's share of `tenant`'s rate.
    pub fn share(&self, tenant: &str) -> f64 {
        let shares = lock(&self.shares);
        shares.tenants.get(tenant).copied().unwrap_or(shares.others)
    }

    /// Gateways sharing the rates (this one included).
    pub fn gateways(&self) -> usize {
        lock(&self.shares).gateways
    }

    /// One beat: publishes the demand since the last, reads every live
    /// replica's, and takes this replica's shares. Where the store is one
    /// process's (`None`), this replica has every rate whole.
    pub async fn beat(&self, store: &dyn Store) -> Result<(), trine_store::StoreError> {
        let demand = std::mem::take(&mut *lock(&self.demand));
        let me = Beat {
            id: self.id,
            at: chrono::Utc::now().timestamp_micros(),
            demand,
        };
        let shares = match store.gateways(&me, LIVE).await? {
            Some(beats) => fractions(&beats, self.id),
            None => Shares::default(),
        };
        *lock(&self.shares) = shares;
        Ok(())
    }

    fn limits(&self, tenant: &str) -> Limits {
        let own = self.tenants.get(tenant).copied().unwrap_or_default();
        Limits {
            rate: own.rate.or(self.default.rate),
            burst: own.burst.or(self.default.burst),
            points: own.points.or(self.default.points),
        }
    }

    /// The memories `tenant` may hold (`None`: no limit).
    pub fn points(&self, tenant: &str) -> Option<u64> {
        self.limits(tenant).points.filter(|&n| n > 0)
    }

    /// Admits one request of `tenant` at `now`, or says why not.
    pub fn admit(&self, tenant: &str, now: Instant) -> Result<(), String> {
        let limits = self.limits(tenant);
        let Some(rate) = limits.rate.filter(|&r| r > 0.0) else {
            return Ok(());
        };
        let burst = limits.burst.filter(|&b| b >= 1.0).unwrap_or(rate.max(1.0));
        {
            let mut demand = lock(&self.demand);
            if demand.len() < MAX_BUCKETS || demand.contains_key(tenant) {
                *demand.entry(tenant.to_string()).or_default() += 1;
            }
        }
        // This replica's part of the whole (see the module).
        let share = self.share(tenant);
        let (whole, rate, burst) = (rate, rate * share, (burst * share).max(1.0));
        let mut buckets = lock(&self.buckets);
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(tenant) {
            buckets.retain(|_, b| b.refilled(now, rate, burst) < burst);
        }
        let bucket = buckets
            .entry(tenant.to_string())
            .or_insert_with(|| Bucket::full(burst, now));
        bucket.take(now, rate, burst).map_err(|wait| {
            format!(
                "tenant {tenant:?} is over its {whole} requests a second: retry in {} ms",
                wait.as_millis().max(1)
            )
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Beats every [`BEAT`] for as long as `quotas` lives, recording how many
/// gateways share the rates in `metrics`; a failed beat keeps the shares
/// it had (logged).
pub async fn keep_shares(
    quotas: Weak<Quotas>,
    store: Weak<dyn Store>,
    metrics: Arc<trine_telemetry::Metrics>,
) {
    loop {
        let (Some(quotas), Some(store)) = (quotas.upgrade(), store.upgrade()) else {
            return;
        };
        match quotas.beat(store.as_ref()).await {
            Ok(()) => metrics.quota_gateways(quotas.gateways()),
            Err(e) => {
                tracing::warn!(error = %e, "sharing the quotas with the other gateways failed")
            }
        }
        drop((quotas, store));
        tokio::time::sleep(BEAT).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_admits_its_burst_then_its_rate() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut b = Bucket::full(3.0, t0);
        // (time in ms, admitted)
        let table = [
            (0, true),
            (0, true),
            (0, true),
            (0, false), // the burst is spent
            (400, false),
            (500, true), // one token a half second at 2/s
            (500, false),
            (10_000, true), // refilled to the burst, no more
            (10_000, true),
            (10_000, true),
            (10_000, false),
        ];
        for (ms, admitted) in table {
            assert_eq!(b.take(at(ms), 2.0, 3.0).is_ok(), admitted, "at {ms} ms");
        }
        let wait = b.take(at(10_000), 2.0, 3.0).unwrap_err();
        assert!(wait <= Duration::from_millis(500), "{wait:?}");
    }

    #[test]
    fn each_tenant_has_its_own_bucket_and_limits() {
        let acme = Limits {
            rate: Some(1.0),
            burst: Some(2.0),
            points: Some(10),
        };
        let quotas = Quotas::new(
            Limits {
                rate: Some(0.0),
                points: Some(100),
                ..Limits::default()
            },
            HashMap::from([("acme".to_string(), acme)]),
        );
        let now = Instant::now();
        assert!(quotas.admit("acme", now).is_ok());
        assert!(quotas.admit("acme", now).is_ok());
        let e = quotas.admit("acme", now).unwrap_err();
        assert!(e.contains("over its 1 requests a second"), "{e}");
        for _ in 0..100 {
            assert!(quotas.admit("globex", now).is_ok(), "rate 0: no limit");
        }
        assert_eq!(quotas.points("acme"), Some(10));
        assert_eq!(quotas.points("globex"), Some(100));
        assert_eq!(Quotas::default().points("acme"), None);
    }

    fn beat(id: u128, demand: &[(&str, u64)]) -> Beat {
        Beat {
            id: Uuid::from_u128(id),
            at: 0,
            demand: demand.iter().map(|(t, n)| (t.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn each_replica_takes_its_demands_share_and_the_shares_sum_to_one() {
        let me = Uuid::from_u128(1);
        // (the beats, acme's share for me, others' share, gateways)
        let table = [
            (vec![beat(1, &[])], 1.0, 1.0, 1),
            (vec![beat(1, &[]), beat(2, &[])], 0.5, 0.5, 2),
            // Asked 9 times here, never there: 9 of 10.
            (vec![beat(1, &[("acme", 9)]), beat(2, &[])], 0.9, 0.5, 2),
            // Asked as much at each.
            (
                vec![beat(1, &[("acme", 5)]), beat(2, &[("acme", 5)])],
                0.5,
                0.5,
                2,
            ),
            // Asked only there: this one keeps a little.
            (
                vec![beat(1, &[]), beat(2, &[("acme", 99)]), beat(3, &[])],
                1.0 / 101.0,
                1.0 / 3.0,
                3,
            ),
            // Not heard back yet: one more than those heard.
            (vec![beat(2, &[("acme", 4)])], 0.5, 0.5, 2),
        ];
        for (beats, acme, others, gateways) in table {
            let shares = fractions(&beats, me);
            let got = shares.tenants.get("acme").copied().unwrap_or(shares.others);
            assert!((got - acme).abs() < 1e-9, "{beats:?}: {got}");
            assert!((shares.others - others).abs() < 1e-9, "{beats:?}");
            assert_eq!(shares.gateways, gateways, "{beats:?}");
            if beats.iter().any(|b| b.id == me) {
                let sum: f64 = beats
                    .iter()
                    .map(|b| {
                        fractions(&beats, b.id)
                            .tenants
                            .get("acme")
                            .copied()
                            .unwrap_or(others)
                    })
                    .sum();
                assert!(
                    (sum - 1.0).abs() < 1e-9,
                    "{beats:?}: the shares sum to {sum}"
                );
            }
        }
    }

    #[test]
    fn a_replica_admits_its_share_of_the_rate_and_burst() {
        let acme = Limits {
            rate: Some(10.0),
            burst: Some(10.0),
            points: None,
        };
        let quotas = Quotas::new(
            Limits::default(),
            HashMap::from([("acme".to_string(), acme)]),
        );
        *lock(&quotas.shares) = Shares {
            tenants: HashMap::from([("acme".to_string(), 0.3)]),
            others: 0.5,
            gateways: 2,
        };
        let now = Instant::now();
        let admitted = (0..10)
            .filter(|_| quotas.admit("acme", now).is_ok())
            .count();
        assert_eq!(admitted, 3, "a burst of 10 × 0.3");
        assert_eq!(lock(&quotas.demand).get("acme"), Some(&10));
        let e = quotas.admit("acme", now).unwrap_err();
        assert!(e.contains("over its 10 requests a second"), "{e}");
    }

    #[test]
    fn made_up_tenants_do_not_grow_the_buckets_without_bound() {
        let quotas = Quotas::new(
            Limits {
                rate: Some(1000.0),
                ..Limits::default()
            },
            HashMap::new(),
        );
        let t0 = Instant::now();
        for i in 0..3 * MAX_BUCKETS {
            // Each bucket is full again a second later.
            let now = t0 + Duration::from_secs(i as u64 / 1000);
            quotas.admit(&format!("t{i}"), now).unwrap();
        }
        assert!(quotas.buckets.lock().unwrap().len() <= MAX_BUCKETS + 1);
    }
}

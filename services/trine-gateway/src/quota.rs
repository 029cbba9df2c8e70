//! Per-tenant quotas: a request rate (a token bucket per tenant, refused
//! with RESOURCE_EXHAUSTED and the time to wait) and the memories a tenant
//! may hold (new points beyond it refused as item errors). Each has a
//! default and per-tenant overrides; 0 is no limit.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One tenant's limits (`None`: the default's; 0: none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Requests a second.
    pub rate: Option<f64>,
    /// Requests at once beyond the rate (default: one second's worth).
    pub burst: Option<f64>,
    /// Memories held.
    pub points: Option<u64>,
}

/// The quotas of every tenant.
#[derive(Debug, Default)]
pub struct Quotas {
    default: Limits,
    tenants: HashMap<String, Limits>,
    buckets: Mutex<HashMap<String, Bucket>>,
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
        }
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
        let mut buckets = match self.buckets.lock() {
            Ok(buckets) => buckets,
            Err(poisoned) => poisoned.into_inner(),
        };
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(tenant) {
            buckets.retain(|_, b| b.refilled(now, rate, burst) < burst);
        }
        let bucket = buckets
            .entry(tenant.to_string())
            .or_insert_with(|| Bucket::full(burst, now));
        bucket.take(now, rate, burst).map_err(|wait| {
            format!(
                "tenant {tenant:?} is over its {rate} requests a second: retry in {} ms",
                wait.as_millis().max(1)
            )
        })
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

//! No call of one tenant changes another tenant's memory: random upserts and
//! deletes through the gateway's gRPC service, checked against a model, and
//! writers of several tenants racing for the same new ids.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{record, serve};
use tonic::transport::Channel;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{DeleteRequest, GetRequest, Record, UpsertRequest};
use trine_store::{EdgeStore, ServerStore, Store};

const TENANTS: [&str; 3] = ["acme", "globex", "initech"];
const IDS: u128 = 24;
/// Random calls in the test command; `TRINE_TENANCY_OPS` asks for more
/// (10,000 took 83 s here, most of it the store's syncs).
const OPS: usize = 2_000;

fn ops() -> usize {
    std::env::var("TRINE_TENANCY_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(OPS)
}

/// xorshift64*: a fixed seed, so a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn id(n: u128) -> String {
    uuid::Uuid::from_u128(0x0000_0000_0000_4000_8000_0000_0000_0000 | n).to_string()
}

/// Every id's (tenant, text) as each tenant reads it.
async fn state(client: &mut MemoryClient<Channel>) -> HashMap<String, (String, String)> {
    let ids: Vec<String> = (0..IDS).map(id).collect();
    let mut out = HashMap::new();
    for tenant in TENANTS {
        let got = client
            .get(GetRequest {
                tenant: tenant.to_string(),
                ids: ids.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .records;
        for r in got {
            assert!(
                out.insert(r.id.clone(), (r.tenant, r.text)).is_none(),
                "{} read by two tenants",
                r.id
            );
        }
    }
    out
}

fn edge(dir: &std::path::Path) -> Arc<dyn Store> {
    Arc::new(EdgeStore::open(dir, "memories").unwrap())
}

/// A fresh collection on the Qdrant server of `TRINE_QDRANT_URL`, if set.
async fn server() -> Option<Arc<dyn Store>> {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "the tenancy test on a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return None;
    };
    let collection = format!("trine_tenancy_{}", uuid::Uuid::new_v4().simple());
    Some(Arc::new(
        ServerStore::connect(&url, &collection).await.unwrap(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_calls_never_change_another_tenants_memory() {
    let dir = tempfile::tempdir().unwrap();
    random_calls(edge(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_calls_never_change_another_tenants_memory_on_a_server() {
    if let Some(store) = server().await {
        random_calls(store).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_racing_for_a_new_id_leave_one_owner() {
    let dir = tempfile::tempdir().unwrap();
    racing(edge(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_racing_for_a_new_id_leave_one_owner_on_a_server() {
    if let Some(store) = server().await {
        racing(store).await;
    }
}

async fn random_calls(store: Arc<dyn Store>) {
    let served = serve(store).await;
    let mut client = served.client.clone();
    let mut model: HashMap<String, (String, String)> = HashMap::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut refused = 0;
    let ops = ops();
    for op in 0..ops {
        let tenant = TENANTS[rng.below(3) as usize];
        if rng.below(4) == 0 {
            let mut ids: Vec<String> = (0..=rng.below(3))
                .map(|_| id(u128::from(rng.below(IDS as u64))))
                .collect();
            ids.sort();
            ids.dedup();
            let deleted = client
                .delete(DeleteRequest {
                    tenant: tenant.to_string(),
                    ids: ids.clone(),
                })
                .await
                .unwrap()
                .into_inner()
                .deleted;
            let own: Vec<String> = ids
                .iter()
                .filter(|i| model.get(*i).is_some_and(|(t, _)| t == tenant))
                .cloned()
                .collect();
            assert_eq!(
                deleted as usize,
                own.len(),
                "op {op}: {tenant} deletes {ids:?}"
            );
            for i in &own {
                model.remove(i);
            }
        } else {
            let records: Vec<Record> = (0..=rng.below(3))
                .map(|k| {
                    record(
                        &id(u128::from(rng.below(IDS as u64))),
                        tenant,
                        &format!("{tenant} {op}.{k}"),
                    )
                })
                .collect();
            let answer = client
                .upsert(UpsertRequest {
                    records: records.clone(),
                })
                .await
                .unwrap()
                .into_inner();
            // What the model says: an id is the caller's to write when free or its own.
            let mut want_ids = Vec::new();
            for r in &records {
                match model.get(&r.id) {
                    Some((owner, _)) if owner != tenant => {}
                    _ => {
                        model.insert(r.id.clone(), (tenant.to_string(), r.text.clone()));
                        want_ids.push(r.id.clone());
                    }
                }
            }
            assert_eq!(
                answer.ids, want_ids,
                "op {op}: {tenant} upserts {records:?}"
            );
            assert_eq!(
                answer.failed.len(),
                records.len() - want_ids.len(),
                "op {op}"
            );
            refused += answer.failed.len();
        }
        if op % 500 == 499 || op == ops - 1 {
            assert_eq!(state(&mut client).await, model, "after op {op}");
        }
    }
    assert!(
        refused > ops / 10,
        "the random calls did name other tenants' ids: {refused} refused of {ops}"
    );
    eprintln!("{ops} random calls, {refused} records refused, 0 cross-tenant changes");
    served.stop().await;
}

async fn racing(store: Arc<dyn Store>) {
    let served = serve(store).await;
    let client = served.client.clone();
    for round in 0..50u128 {
        let target = id(1000 + round);
        let calls = TENANTS.iter().map(|tenant| {
            let mut client = client.clone();
            let target = target.clone();
            async move {
                let answer = client
                    .upsert(UpsertRequest {
                        records: vec![record(&target, tenant, &format!("{tenant} wins"))],
                    })
                    .await
                    .unwrap()
                    .into_inner();
                (tenant.to_string(), answer.ids == [target])
            }
        });
        let outcomes = futures_join_all(calls).await;
        let winners: Vec<&String> = outcomes
            .iter()
            .filter(|(_, won)| *won)
            .map(|(t, _)| t)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        let mut reader = client.clone();
        let stored = reader
            .get(GetRequest {
                tenant: winners[0].clone(),
                ids: vec![target.clone()],
            })
            .await
            .unwrap()
            .into_inner()
            .records;
        assert_eq!(stored.len(), 1, "round {round}");
        assert_eq!(
            stored[0].text,
            format!("{} wins", winners[0]),
            "round {round}"
        );
    }
    served.stop().await;
}

/// Runs the futures concurrently and returns their outputs in order.
async fn futures_join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

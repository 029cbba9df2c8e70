//! Per-tenant quotas through real gRPC: a tenant over its request rate is
//! refused RESOURCE_EXHAUSTED (others are not); new memories beyond its
//! quota are refused by item, replacing its own memories always passes.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{record, serve_with};
use tonic::Code;
use trine_api::v1::{DeleteRequest, GetRequest, UpsertRequest};
use trine_gateway::quota::{Limits, Quotas};
use trine_store::{EdgeStore, Store};

fn id(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

fn store(dir: &std::path::Path) -> Arc<dyn Store> {
    Arc::new(EdgeStore::open(dir, "memories").unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_over_its_rate_is_refused_and_others_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let acme = Limits {
        rate: Some(0.5),
        burst: Some(3.0),
        points: None,
    };
    let quotas = Arc::new(Quotas::new(
        Limits::default(),
        HashMap::from([("acme".to_string(), acme)]),
    ));
    let mut metrics = None;
    let mut served = serve_with(store(dir.path()), |s| {
        metrics = Some(s.metrics());
        s.with_quotas(quotas)
    })
    .await;
    let get = |tenant: &str| GetRequest {
        tenant: tenant.into(),
        ids: vec![id(1)],
    };
    // The collection exists once a first memory is written.
    served
        .client
        .upsert(UpsertRequest {
            records: vec![record(&id(1), "globex", "first")],
        })
        .await
        .unwrap();
    for _ in 0..3 {
        served.client.get(get("acme")).await.unwrap();
    }
    let e = served.client.get(get("acme")).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{}", e.message());
    assert!(e.message().contains("retry in"), "{}", e.message());
    for _ in 0..20 {
        served.client.get(get("globex")).await.unwrap();
    }
    let text = metrics.unwrap().encode().unwrap();
    assert!(
        text.contains("trine_quota_refused_total{quota=\"rate\"} 1\n"),
        "{text}"
    );
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_memories_beyond_a_tenants_quota_are_refused_by_item() {
    let dir = tempfile::tempdir().unwrap();
    let quotas = Arc::new(Quotas::new(
        Limits {
            points: Some(5),
            ..Limits::default()
        },
        HashMap::new(),
    ));
    let mut metrics = None;
    let mut served = serve_with(store(dir.path()), |s| {
        metrics = Some(s.metrics());
        s.with_quotas(quotas)
    })
    .await;
    let upsert = |ids: &[u32], tenant: &str| UpsertRequest {
        records: ids
            .iter()
            .map(|&n| record(&id(n), tenant, &format!("memory {n}")))
            .collect(),
    };
    let answer = served
        .client
        .upsert(upsert(&[1, 2, 3, 4], "acme"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.ids.len(), 4);
    // One more fits; the two after it do not.
    let answer = served
        .client
        .upsert(upsert(&[5, 6, 7], "acme"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.ids, [id(5)]);
    let refused: Vec<u32> = answer.failed.iter().map(|e| e.index).collect();
    assert_eq!(refused, [1, 2]);
    assert!(
        answer.failed[0].message.contains("its quota of 5"),
        "{answer:?}"
    );
    let text = metrics.as_ref().unwrap().encode().unwrap();
    assert!(
        text.contains("trine_quota_refused_total{quota=\"memories\"} 2\n"),
        "{text}"
    );
    // Replacing its own memories takes no room; another tenant has its own.
    let answer = served
        .client
        .upsert(upsert(&[1, 2], "acme"))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.failed.is_empty(), "{answer:?}");
    let answer = served
        .client
        .upsert(upsert(&[11, 12, 13], "globex"))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.failed.is_empty(), "{answer:?}");
    // Deleting makes room again.
    served
        .client
        .delete(DeleteRequest {
            tenant: "acme".into(),
            ids: vec![id(1), id(2)],
        })
        .await
        .unwrap();
    let answer = served
        .client
        .upsert(upsert(&[6, 7], "acme"))
        .await
        .unwrap()
        .into_inner();
    assert!(answer.failed.is_empty(), "{answer:?}");
    served.stop().await;
}

//! The gateway's `Memory` service over real gRPC, on an embedded store.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::sync::Arc;

use common::{record, serve};
use tonic::Code;
use trine_api::v1::{DeleteRequest, GetRequest, Record, SearchRequest, UpsertRequest};
use trine_store::EdgeStore;

const A: &str = "00000000-0000-4000-8000-00000000000a";
const B: &str = "00000000-0000-4000-8000-00000000000b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upsert_get_delete_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(Arc::new(EdgeStore::open(dir.path(), "memories").unwrap())).await;
    let mut client = served.client.clone();

    let upserted = client
        .upsert(UpsertRequest {
            records: vec![
                record(A, "acme", "Meeting 2026-11-11 09:58"),
                record(B, "globex", "the same title elsewhere"),
                record("not-a-uuid", "acme", "bad id"),
                record("", "acme", "   "),
            ],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(upserted.ids, [A, B]);
    let failed: Vec<(u32, &str)> = upserted
        .failed
        .iter()
        .map(|f| (f.index, f.message.as_str()))
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0].0, 2);
    assert!(failed[0].1.contains("not a UUID"), "{failed:?}");
    assert!(failed[1].1.contains("text is empty"), "{failed:?}");

    let get = |tenant: &str| GetRequest {
        tenant: tenant.to_string(),
        ids: vec![B.to_string(), A.to_string()],
    };
    let got = client.get(get("acme")).await.unwrap().into_inner().records;
    assert_eq!(got.len(), 1, "the tenant boundary holds on get");
    assert_eq!(got[0].text, "Meeting 2026-11-11 09:58");

    let deleted = client
        .delete(DeleteRequest {
            tenant: "acme".into(),
            ids: vec![A.to_string(), B.to_string()],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        deleted.deleted, 1,
        "only the tenant's own memory is deleted"
    );
    assert!(
        client
            .get(get("acme"))
            .await
            .unwrap()
            .into_inner()
            .records
            .is_empty()
    );
    assert_eq!(
        client
            .get(get("globex"))
            .await
            .unwrap()
            .into_inner()
            .records
            .len(),
        1
    );

    let bad = client
        .get(GetRequest {
            tenant: String::new(),
            ids: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    let bad = client
        .get(GetRequest {
            tenant: "acme".into(),
            ids: vec!["x".into()],
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("not a UUID"), "{}", bad.message());

    let search = client.search(SearchRequest::default()).await.unwrap_err();
    assert_eq!(search.code(), Code::Unimplemented);

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upsert_never_replaces_another_tenants_memory() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(Arc::new(EdgeStore::open(dir.path(), "memories").unwrap())).await;
    let mut client = served.client.clone();
    let upsert = |records: Vec<Record>| UpsertRequest { records };

    let first = client
        .upsert(upsert(vec![record(A, "acme", "acme's own memory")]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.ids, [A]);

    // globex names acme's id: refused by index, the rest of the call stored;
    // and within one call, the first tenant to name a new id keeps it.
    let second = client
        .upsert(upsert(vec![
            record(B, "globex", "globex's own memory"),
            record(A, "globex", "globex overwriting acme"),
            record(B, "acme", "acme claiming globex's new id"),
        ]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second.ids, [B], "{second:?}");
    let refused: Vec<u32> = second.failed.iter().map(|f| f.index).collect();
    assert_eq!(refused, [1, 2], "{second:?}");
    assert!(
        second.failed[0].message.contains("held by another tenant"),
        "{second:?}"
    );

    let get = |tenant: &str, id: &str| GetRequest {
        tenant: tenant.to_string(),
        ids: vec![id.to_string()],
    };
    let acme = client
        .get(get("acme", A))
        .await
        .unwrap()
        .into_inner()
        .records;
    assert_eq!(acme.len(), 1);
    assert_eq!(acme[0].text, "acme's own memory", "acme's memory unchanged");
    assert!(
        client
            .get(get("globex", A))
            .await
            .unwrap()
            .into_inner()
            .records
            .is_empty(),
        "globex never got acme's id"
    );
    let globex = client
        .get(get("globex", B))
        .await
        .unwrap()
        .into_inner()
        .records;
    assert_eq!(globex[0].text, "globex's own memory");

    // The owner still updates its own memory.
    let again = client
        .upsert(upsert(vec![record(A, "acme", "acme's memory, edited")]))
        .await
        .unwrap()
        .into_inner();
    assert!(again.failed.is_empty(), "{again:?}");
    let acme = client
        .get(get("acme", A))
        .await
        .unwrap()
        .into_inner()
        .records;
    assert_eq!(acme[0].text, "acme's memory, edited");

    served.stop().await;
}

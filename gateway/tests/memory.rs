//! The gateway's `Memory` service over real gRPC, on an embedded store.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::Code;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::{DeleteRequest, GetRequest, Record, SearchRequest, UpsertRequest};
use trine_embed::HashEmbedder;
use trine_gateway::{MemoryService, Writer};
use trine_store::EdgeStore;

fn record(id: &str, text: &str, tenant: &str) -> Record {
    Record {
        id: id.to_string(),
        text: text.to_string(),
        tenant: tenant.to_string(),
        ..Record::default()
    }
}

const A: &str = "00000000-0000-4000-8000-00000000000a";
const B: &str = "00000000-0000-4000-8000-00000000000b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upsert_get_delete_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EdgeStore::open(dir.path(), "memories").unwrap());
    let writer = Writer::new(store, Arc::new(HashEmbedder::new(64)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(trine_gateway::run(
        listener,
        MemoryService::new(writer),
        async {
            stopped.await.ok();
        },
    ));
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();

    let upserted = client
        .upsert(UpsertRequest {
            records: vec![
                record(A, "Meeting 2026-11-11 09:58", "acme"),
                record(B, "the same title elsewhere", "globex"),
                record("not-a-uuid", "bad id", "acme"),
                record("", "   ", "acme"),
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

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

//! API keys on the public surface, through real gRPC: no key or a revoked
//! or unknown one is UNAUTHENTICATED; a key without the operation's scope or
//! the request's tenant is PERMISSION_DENIED; a key that holds both passes.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::sync::Arc;

use common::{record, serve_with};
use tonic::{Code, Request};
use trine_api::v1::{
    DeleteRequest, Filters, GetRequest, SearchRequest, UpsertRequest, ValidityRequest,
};
use trine_gateway::auth::{KeyFile, Keys, Scope};
use trine_store::{EdgeStore, Store};

fn with_key<T>(message: T, key: Option<&str>) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(key) = key {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
    }
    request
}

const ID: &str = "00000000-0000-4000-8000-000000000001";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_refused_without_a_key_and_outside_its_scope_or_tenants() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.json");
    let mut file = KeyFile::default();
    let (reader, _) = file
        .add("reader", vec![Scope::Read], vec!["acme".into()])
        .unwrap();
    let (writer, writer_record) = file
        .add("writer", vec![Scope::Write], vec!["acme".into()])
        .unwrap();
    let (admin, _) = file
        .add("ops", vec![Scope::Admin], vec!["*".into()])
        .unwrap();
    file.save(&path).unwrap();
    let keys = Arc::new(Keys::open(&path).unwrap());

    let store: Arc<dyn Store> =
        Arc::new(EdgeStore::open(&dir.path().join("data"), "memories").unwrap());
    let mut served = serve_with(store, |s| s.with_keys(keys)).await;
    let client = &mut served.client;
    let upsert = |tenant: &str| UpsertRequest {
        records: vec![record(ID, tenant, "Meeting 2026-11-11 09:58")],
    };
    let get = |tenant: &str| GetRequest {
        tenant: tenant.into(),
        ids: vec![ID.into()],
    };
    let search = |tenant: &str| SearchRequest {
        query: "meeting".into(),
        filters: Some(Filters {
            tenant: tenant.into(),
            ..Filters::default()
        }),
        ..SearchRequest::default()
    };

    // No key, a malformed one, a forged one (a known id, another secret).
    let last = if admin.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &admin[..admin.len() - 1]);
    for key in [None, Some("letmein"), Some(forged.as_str())] {
        let e = client
            .upsert(with_key(upsert("acme"), key))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated, "{key:?}: {}", e.message());
        let e = client.get(with_key(get("acme"), key)).await.unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
        let e = client
            .search(with_key(search("acme"), key))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
    }
    let e = client
        .upsert(with_key(upsert("acme"), None))
        .await
        .unwrap_err();
    assert!(e.message().contains("--api-key"), "{}", e.message());

    // The writer writes in acme only, and cannot read.
    let stored = client
        .upsert(with_key(upsert("acme"), Some(&writer)))
        .await
        .unwrap();
    assert_eq!(stored.get_ref().ids, [ID]);
    let e = client
        .upsert(with_key(upsert("globex"), Some(&writer)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{}", e.message());
    assert!(
        e.message().contains("does not hold tenant \"globex\""),
        "{}",
        e.message()
    );
    let e = client
        .get(with_key(get("acme"), Some(&writer)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(
        e.message().contains("lacks the read scope"),
        "{}",
        e.message()
    );

    // The reader reads acme, not globex, and cannot write or delete.
    let got = client
        .get(with_key(get("acme"), Some(&reader)))
        .await
        .unwrap();
    assert_eq!(got.get_ref().records.len(), 1);
    let e = client
        .get(with_key(get("globex"), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    let e = client
        .search(with_key(search("globex"), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    let delete = DeleteRequest {
        tenant: "acme".into(),
        ids: vec![ID.into()],
    };
    let e = client
        .delete(with_key(delete.clone(), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    // Forget and Restore change what searches find: the write scope.
    let validity = ValidityRequest {
        tenant: "acme".into(),
        ids: vec![ID.into()],
    };
    let e = client
        .forget(with_key(validity.clone(), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{}", e.message());
    let e = client
        .restore(with_key(validity.clone(), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{}", e.message());
    let forgot = client
        .forget(with_key(validity.clone(), Some(&writer)))
        .await
        .unwrap();
    assert_eq!(forgot.get_ref().ids, [ID]);
    let restored = client
        .restore(with_key(validity, Some(&writer)))
        .await
        .unwrap();
    assert_eq!(restored.get_ref().ids, [ID]);
    // The key may come in `x-api-key` instead of `authorization`.
    let mut request = Request::new(get("acme"));
    request
        .metadata_mut()
        .insert("x-api-key", reader.parse().unwrap());
    assert_eq!(
        client.get(request).await.unwrap().get_ref().records.len(),
        1
    );
    let mut request = Request::new(get("acme"));
    request
        .metadata_mut()
        .insert("x-api-key", forged.parse().unwrap());
    let e = client.get(request).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    // Past authentication, a search reaches the service (which has no search
    // peers here).
    let e = client
        .search(with_key(search("acme"), Some(&reader)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unimplemented, "{}", e.message());

    // Revoked: refused from the next call, without a restart.
    file.revoke(&writer_record.id).unwrap();
    file.save(&path).unwrap();
    let e = client
        .delete(with_key(delete.clone(), Some(&writer)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    assert!(e.message().contains("revoked"), "{}", e.message());
    // The admin key holds every tenant and both scopes.
    let deleted = client.delete(with_key(delete, Some(&admin))).await.unwrap();
    assert_eq!(deleted.get_ref().deleted, 1);
    served.stop().await;
}

/// A backup holds every tenant's memories: only an admin key of every
/// tenant may take one; a tenant's admin, or a writer of every tenant, may
/// not. A name that is a path is refused before anything is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_admin_of_every_tenant_takes_a_backup() {
    use trine_api::v1::BackupRequest;
    use trine_gateway::backups::Backups;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.json");
    let mut file = KeyFile::default();
    let (tenant_admin, _) = file
        .add("acme-ops", vec![Scope::Admin], vec!["acme".into()])
        .unwrap();
    let (writer_of_all, _) = file
        .add("ingest", vec![Scope::Read, Scope::Write], vec!["*".into()])
        .unwrap();
    let (admin, _) = file
        .add("ops", vec![Scope::Admin], vec!["*".into()])
        .unwrap();
    file.save(&path).unwrap();
    let keys = Arc::new(Keys::open(&path).unwrap());
    let store: Arc<dyn Store> =
        Arc::new(EdgeStore::open(&dir.path().join("data"), "memories").unwrap());
    let backups = Backups {
        dir: dir.path().join("backups"),
        keys: Some(path.clone()),
    };
    let mut served = serve_with(store, |s| s.with_keys(keys).with_backups(backups)).await;
    let client = &mut served.client;
    client
        .upsert(with_key(
            UpsertRequest {
                records: vec![record(ID, "acme", "Meeting 2026-11-11 09:58")],
            },
            Some(&admin),
        ))
        .await
        .unwrap();
    let backup = |name: &str| BackupRequest { name: name.into() };

    for key in [&tenant_admin, &writer_of_all] {
        let e = client
            .backup(with_key(backup("nightly"), Some(key)))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "{}", e.message());
    }
    let e = client
        .backup(with_key(backup("../nightly"), Some(&admin)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{}", e.message());
    assert!(!dir.path().join("nightly").exists());

    let taken = client
        .backup(with_key(backup("nightly"), Some(&admin)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(taken.points, 1);
    let manifest = trine_store::backup::open(&dir.path().join("backups/nightly")).unwrap();
    assert!(manifest.files.iter().any(|f| f.path == "keys.json"));
    // Never over an existing backup.
    let e = client
        .backup(with_key(backup("nightly"), Some(&admin)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{}", e.message());
    served.stop().await;
}

//! What the gateway's integration tests share: its `Memory` service over
//! real gRPC on loopback, and records to write through it.
#![allow(clippy::unwrap_used, dead_code)] // test helpers fail loudly; not every test uses each

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use trine_api::v1::Record;
use trine_api::v1::memory_client::MemoryClient;
use trine_embed::HashEmbedder;
use trine_gateway::{MemoryService, Writer};
use trine_store::Store;

/// A running `Memory` service and a client of it.
pub struct Served {
    pub client: MemoryClient<Channel>,
    stop: oneshot::Sender<()>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
}

/// Serves `Memory` over `store` (hash embedder) on 127.0.0.1:0.
pub async fn serve(store: Arc<dyn Store>) -> Served {
    serve_with(store, |service| service).await
}

/// As [`serve`], the service shaped by `shape` (e.g. given keys).
pub async fn serve_with(
    store: Arc<dyn Store>,
    shape: impl FnOnce(MemoryService) -> MemoryService,
) -> Served {
    let writer = Writer::new(store, Arc::new(HashEmbedder::new(64)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(trine_gateway::run(
        listener,
        shape(MemoryService::new(writer)),
        trine_api::server::Serving::default(),
        async {
            stopped.await.ok();
        },
    ));
    let client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    Served {
        client,
        stop,
        server,
    }
}

impl Served {
    /// Stops the service and waits until it has drained.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.server.await.unwrap().unwrap();
    }
}

/// A record of `tenant` holding `text`, every other field empty.
pub fn record(id: &str, tenant: &str, text: &str) -> Record {
    Record {
        id: id.to_string(),
        text: text.to_string(),
        tenant: tenant.to_string(),
        ..Record::default()
    }
}

//! Serving the gateway over gRPC.

use std::sync::Arc;

use trine_api::v1::memory_server::MemoryServer;
use trine_telemetry::Metrics;

use crate::service::MemoryService;

impl trine_api::server::Served for MemoryService {
    type Server = MemoryServer<MemoryService>;

    fn server(self) -> Self::Server {
        MemoryServer::new(self)
    }

    fn metrics(&self) -> Arc<Metrics> {
        MemoryService::metrics(self)
    }
    fn readiness(&self) -> trine_api::server::Readiness {
        Some(MemoryService::readiness(self))
    }
}

/// Serves the service on `listener` until `shutdown` resolves.
pub use trine_api::server::run;

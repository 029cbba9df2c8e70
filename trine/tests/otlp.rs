//! `trine search --otlp-endpoint URL` exports its spans over OTLP/gRPC: a
//! collector (a real OTLP TraceService on a loopback port) receives one trace
//! of the search, from service `trine`, with the stages' spans in it.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

#[derive(Clone, Default)]
struct Collector {
    received: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.received.lock().unwrap().push(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn trine(data: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = trine_testkit::trine_command(env!("CARGO_BIN_EXE_trine"))
        .arg("--data")
        .arg(data)
        .args(["--embedder", "hash"])
        .args(args)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_spans_reach_an_otlp_collector() {
    let collector = Collector::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(collector.clone()))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_path_buf();
    let search = tokio::task::spawn_blocking(move || {
        let lines = "{\"tenant\":\"acme\",\"text\":\"the billing retry policy\"}\n\
                     {\"tenant\":\"acme\",\"text\":\"lunch on fridays\"}\n";
        let ingest = trine(&data, &["ingest", "-"], lines);
        assert!(ingest.status.success(), "{ingest:?}");
        trine(
            &data,
            &[
                "--otlp-endpoint",
                &endpoint,
                "search",
                "billing retry",
                "--tenant",
                "acme",
                "--json",
            ],
            "",
        )
    })
    .await
    .unwrap();
    assert!(search.status.success(), "{search:?}");
    server.abort();

    // The process flushed its spans before it exited.
    let received = collector.received.lock().unwrap().clone();
    let resources: Vec<_> = received.iter().flat_map(|r| &r.resource_spans).collect();
    assert!(!resources.is_empty(), "the collector received spans");
    for rs in &resources {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| v.value.clone());
        assert_eq!(
            service,
            Some(any_value::Value::StringValue("trine".to_string()))
        );
    }
    let spans: Vec<_> = resources
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .flat_map(|ss| &ss.spans)
        .collect();
    let search_span = spans
        .iter()
        .find(|s| s.name == "gateway.search")
        .expect("a gateway.search span");
    let trace = &search_span.trace_id;
    for stage in [
        "gateway.search",
        "lexical.counts",
        "lexical.count",
        "lexical.score",
        "semantic.embed",
        "semantic.query",
        "fusion",
        "gateway.payload",
    ] {
        assert!(
            spans
                .iter()
                .any(|s| s.name == stage && &s.trace_id == trace),
            "{stage} in the search's trace: {:?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
    }
}

//! Telemetry shared by every trine process.
//!
//! - [`init`]: an env filter and a fmt layer ([`LogFormat`]: JSON when
//!   standard error is not a terminal, text when it is, or plain lines for a
//!   person at the CLI); with an OTLP endpoint (the setting, or
//!   `OTEL_EXPORTER_OTLP_ENDPOINT`) also an OpenTelemetry layer that exports
//!   trine's spans over OTLP/gRPC, the service name in the resource.
//!   [`init_with_exporter`] installs the same layers with any span exporter —
//!   the in-memory [`SpanCollector`] in tests.
//! - [`grpc`]: W3C trace-context propagation through every gRPC hop — a
//!   client interceptor that injects it, a server layer that extracts it so
//!   the server span is the caller's child, and counts each call.
//! - [`metrics`]: per-service Prometheus metrics served as text on `/metrics`.
#![forbid(unsafe_code)]

pub mod grpc;
pub mod metrics;
pub mod plain;

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};
use trine_core::named::{EnumString, IntoStaticStr, Named, VariantArray, VariantNames};

pub use metrics::{FREQUENCIES_STATES, FrequenciesSize, Metrics};
/// The OpenTelemetry API and SDK this crate is built on, for callers that
/// read exported spans (tests) without naming the versions themselves.
pub use {opentelemetry, opentelemetry_sdk};

/// The variable that names an OTLP/gRPC collector (OpenTelemetry's own).
pub const OTLP_ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// A count as a span attribute: `tracing-opentelemetry` exports signed
/// integers as integers but unsigned ones as text, so counts go through here.
pub fn int<N: TryInto<i64>>(n: N) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// How a process reports what it does.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The service name (`trine`, `gateway`, `lexical-svc`, ...), the
    /// `service.name` of exported spans.
    pub service: String,
    /// A tracing filter for logs (`info`, `trine=debug`, ...); `RUST_LOG`
    /// overrides it.
    pub filter: String,
    /// An OTLP/gRPC collector (`http://localhost:4317`); unset means
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, and neither means no export.
    pub otlp_endpoint: Option<String>,
    /// How log lines are written.
    pub format: LogFormat,
}

/// How log lines are written to standard error: `auto`, `json`, `text` or
/// `plain` ([`Named`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    EnumString,
    IntoStaticStr,
    VariantNames,
    VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum LogFormat {
    /// JSON where standard error is not a terminal (a log collector), text
    /// with every field where it is: what the services write.
    #[default]
    Auto,
    /// One JSON object a line, every field.
    Json,
    /// Text with a timestamp and every field.
    Text,
    /// `warning: <message>`, one plain line an event ([`plain::Plain`]):
    /// what the CLI's commands write for a person.
    Plain,
}

impl Named for LogFormat {
    const WHAT: &'static str = "log format";
}

impl Settings {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
            filter: "warn".to_string(),
            otlp_endpoint: None,
            format: LogFormat::Auto,
        }
    }

    /// The collector to export to: the setting, else the environment.
    pub fn endpoint(&self) -> Option<String> {
        self.otlp_endpoint
            .clone()
            .or_else(|| std::env::var(OTLP_ENDPOINT_VAR).ok())
            .filter(|e| !e.trim().is_empty())
    }
}

/// Telemetry that could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("otlp exporter: {0}")]
    Exporter(String),
}

/// Qdrant's engine warns about process-wide settings that only a Qdrant
/// server initialises (feature flags, an mmap check) on every shard call; it
/// is kept to errors unless the filter names it.
fn quiet_engine(filter: &str) -> String {
    if filter.contains("qdrant_edge") {
        filter.to_string()
    } else {
        format!("{filter},qdrant_edge=error")
    }
}

fn log_filter(settings: &Settings) -> EnvFilter {
    EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(quiet_engine(&settings.filter)))
        .unwrap_or_else(|_| EnvFilter::new("warn"))
}

/// The spans that are exported: trine's own (every crate's target starts
/// with `trine`), whatever the log filter says.
fn span_filter() -> Targets {
    Targets::new().with_target("trine", Level::INFO)
}

/// Keeps the tracer provider alive; dropping it flushes and shuts the export
/// down. Hold it for the life of the process (drop it inside the runtime).
#[must_use = "dropping the guard stops span export"]
#[derive(Debug, Default)]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("telemetry: span export did not shut down cleanly: {e}");
        }
    }
}

fn install(settings: &Settings, provider: Option<SdkTracerProvider>) -> Telemetry {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("trine"))
            .with_filter(span_filter())
    });
    let format = match settings.format {
        LogFormat::Auto if std::io::stderr().is_terminal() => LogFormat::Text,
        LogFormat::Auto => LogFormat::Json,
        chosen => chosen,
    };
    let fmt = match format {
        LogFormat::Plain => tracing_subscriber::fmt::layer()
            .event_format(plain::Plain)
            .with_writer(std::io::stderr)
            .with_filter(log_filter(settings))
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_filter(log_filter(settings))
            .boxed(),
        LogFormat::Text | LogFormat::Auto => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(log_filter(settings))
            .boxed(),
    };
    let installed = tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init();
    match installed {
        Ok(()) => Telemetry { provider },
        // A subscriber already installed (tests, embedding programs) is kept,
        // and this provider would see nothing: shut it down.
        Err(_) => Telemetry::default(),
    }
}

fn resource(settings: &Settings) -> Resource {
    Resource::builder()
        .with_service_name(settings.service.clone())
        .build()
}

/// Installs the global subscriber: logs to standard error (standard output
/// stays for a command's answer) and, when an OTLP endpoint is configured,
/// span export in batches. Call it inside the Tokio runtime (the exporter's
/// channel lives there). Calling it twice keeps the first subscriber.
pub fn init(settings: &Settings) -> Result<Telemetry, TelemetryError> {
    let provider = match settings.endpoint() {
        None => None,
        Some(endpoint) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .build()
                .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
            Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource(settings))
                    .build(),
            )
        }
    };
    Ok(install(settings, provider))
}

/// Installs the global subscriber with `exporter` receiving every finished
/// span at once (no batching): how a test reads the spans of a search.
pub fn init_with_exporter<E: SpanExporter + 'static>(
    settings: &Settings,
    exporter: E,
) -> Telemetry {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .with_resource(resource(settings))
        .build();
    install(settings, Some(provider))
}

/// A span exporter that keeps finished spans in memory, for tests.
#[derive(Debug, Clone, Default)]
pub struct SpanCollector {
    spans: Arc<Mutex<Vec<SpanData>>>,
}

impl SpanCollector {
    /// The spans finished so far, in the order they ended.
    pub fn spans(&self) -> Vec<SpanData> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl SpanExporter for SpanCollector {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(batch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_become_signed_attributes() {
        assert_eq!(int(3usize), 3);
        assert_eq!(int(u64::MAX), i64::MAX);
    }

    #[test]
    fn the_engine_is_quiet_unless_named() {
        assert_eq!(quiet_engine("info"), "info,qdrant_edge=error");
        assert_eq!(quiet_engine("qdrant_edge=debug"), "qdrant_edge=debug");
    }

    #[test]
    fn the_setting_wins_over_the_environment() {
        let mut settings = Settings::new("gateway");
        settings.otlp_endpoint = Some("http://collector:4317".to_string());
        assert_eq!(
            settings.endpoint().as_deref(),
            Some("http://collector:4317")
        );
    }
}

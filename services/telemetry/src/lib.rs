//! Tracing set-up shared by every trine process: an env filter and a fmt
//! layer that writes JSON when standard error is not a terminal.
#![forbid(unsafe_code)]

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How a process reports what it does.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The service name (`trine`, `gateway`, `lexical-svc`, ...).
    pub service: String,
    /// A tracing filter (`info`, `trine=debug`, ...); `RUST_LOG` overrides it.
    pub filter: String,
}

impl Settings {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
            filter: "warn".to_string(),
        }
    }
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

/// Installs the global subscriber. Logs go to standard error, so standard
/// output stays for a command's answer. Calling it twice is harmless.
pub fn init(settings: &Settings) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(quiet_engine(&settings.filter)))
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let registry = tracing_subscriber::registry().with(filter);
    let result = if std::io::stderr().is_terminal() {
        registry
            .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
            .try_init()
    } else {
        registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(std::io::stderr),
            )
            .try_init()
    };
    // A subscriber already installed (tests, embedding programs) is kept.
    drop(result);
}

//! Log lines for a person at a terminal: `warning: <message>`, one line an
//! event, no timestamp, target or fields — the message says what happened
//! and what to do. What the CLI's commands print by default
//! ([`crate::LogFormat::Plain`]); the services log JSON or text with every
//! field.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats an event as `<level>: <message>`.
pub struct Plain;

/// The event's `message` field.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_string();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

/// The word a level is called by in a plain line.
pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "note",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut message = Message::default();
        event.record(&mut message);
        writeln!(
            writer,
            "{}: {}",
            level_word(*event.metadata().level()),
            message.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    #[test]
    fn a_warning_is_one_plain_line_without_fields() {
        let out = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .event_format(Plain)
            .with_writer(out.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(counts_share = 0.16, "counts took 16 % of this search");
            tracing::error!(tenant = "acme", "the store did not answer");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "warning: counts took 16 % of this search\nerror: the store did not answer\n"
        );
    }
}

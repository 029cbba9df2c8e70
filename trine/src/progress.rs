//! Progress of a long command on standard error: bars on a terminal
//! (indicatif); elsewhere — a log file, CI, a container — a status line every
//! [`EVERY`], so a run of minutes never goes silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// How often a status line is printed when standard error is not a terminal.
pub const EVERY: Duration = Duration::from_secs(10);

/// An ingest's progress in input lines: embedded, then stored; and how
/// many failed.
pub struct Progress {
    total: Option<u64>,
    started: Instant,
    embedded: AtomicU64,
    stored: AtomicU64,
    failed: AtomicU64,
    bars: Option<(MultiProgress, ProgressBar, ProgressBar)>,
    last_line: Mutex<Instant>,
}

impl Progress {
    /// Bars on a terminal, status lines otherwise; `total` lines when known.
    pub fn new(total: Option<u64>) -> Self {
        let bars = std::io::stderr().is_terminal().then(|| {
            let multi = MultiProgress::new();
            let bar = |what: &str| {
                let bar = multi.add(total.map_or_else(ProgressBar::new_spinner, ProgressBar::new));
                let template =
                    format!("{{spinner}} {what:<8} {{pos}}/{{len}} lines [{{bar:30}}] {{per_sec}} eta {{eta}}");
                if let Ok(style) = ProgressStyle::with_template(&template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar
            };
            let (embedded, stored) = (bar("embedded"), bar("stored"));
            (multi, embedded, stored)
        });
        let now = Instant::now();
        Self {
            total,
            started: now,
            embedded: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            bars,
            last_line: Mutex::new(now),
        }
    }

    /// The input up to line `line` is embedded.
    pub fn embedded_through(&self, line: usize) {
        self.embedded.store(line as u64, Ordering::Relaxed);
        if let Some((_, bar, _)) = &self.bars {
            bar.set_position(line as u64);
        }
        self.tick();
    }

    /// The input up to line `line` is stored.
    pub fn stored_through(&self, line: usize) {
        self.stored.store(line as u64, Ordering::Relaxed);
        if let Some((_, _, bar)) = &self.bars {
            bar.set_position(line as u64);
        }
        self.tick();
    }

    /// Prints a message above the bars (or as a line).
    pub fn say(&self, message: &str) {
        match &self.bars {
            Some((multi, _, _)) => multi.suspend(|| eprintln!("{message}")),
            None => eprintln!("{message}"),
        }
    }

    /// A line that failed, and why (printed as [`Self::say`] prints).
    pub fn fail(&self, message: &str) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.say(message);
    }

    /// Clears the bars, and prints the final status line (on a terminal as
    /// in a log): the last progress a reader sees has the final counts, the
    /// ones the summary after it gives.
    pub fn finish(&self) {
        if let Some((multi, embedded, stored)) = &self.bars {
            embedded.finish_and_clear();
            stored.finish_and_clear();
            let _ = multi.clear();
        }
        eprintln!("ingest: {}", self.status());
    }

    /// The status line of now.
    fn status(&self) -> String {
        status(
            self.embedded.load(Ordering::Relaxed),
            self.stored.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            self.total,
            self.started.elapsed(),
        )
    }

    /// Without bars: a status line when [`EVERY`] has passed since the last.
    fn tick(&self) {
        if self.bars.is_some() {
            return;
        }
        let Ok(mut last) = self.last_line.lock() else {
            return;
        };
        if last.elapsed() < EVERY {
            return;
        }
        *last = Instant::now();
        eprintln!("ingest: {}", self.status());
    }
}

/// The status line: lines embedded and stored (through), lines failed, the
/// rate of storing, and the time left at that rate when the total is known.
pub fn status(
    embedded: u64,
    stored: u64,
    failed: u64,
    total: Option<u64>,
    elapsed: Duration,
) -> String {
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        stored as f64 / seconds
    } else {
        0.0
    };
    let of = total.map_or_else(String::new, |t| format!(" of {t}"));
    let mut line = format!(
        "{embedded}{of} lines embedded, {stored} stored, {failed} failed; {rate:.1} lines/s"
    );
    if let Some(total) = total
        && rate > 0.0
    {
        let left = total.saturating_sub(stored) as f64 / rate;
        line += &format!("; eta {}", clock(Duration::from_secs_f64(left)));
    }
    line
}

/// `1h 02m 03s`, `2m 05s`, `7s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, s) => format!("{h}h {m:02}m {s:02}s"),
    }
}

/// A step of unknown length (the index build): a spinner with the time spent
/// on a terminal; elsewhere a line now and one every [`EVERY`] while it runs.
/// Stops when dropped.
pub struct Spinner {
    bar: ProgressBar,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
}

pub fn spinner(what: &'static str) -> Spinner {
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template(&format!("{{spinner}} {what} {{elapsed}}"))
        {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        return Spinner {
            bar,
            heartbeat: None,
        };
    }
    eprintln!("{what} …");
    let started = Instant::now();
    let heartbeat = tokio::spawn(async move {
        let mut every = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
        loop {
            every.tick().await;
            eprintln!("{what}: {}", clock(started.elapsed()));
        }
    });
    Spinner {
        bar: ProgressBar::hidden(),
        heartbeat: Some(heartbeat),
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        let s = Duration::from_secs;
        let table = [
            (
                0,
                0,
                0,
                Some(5000),
                s(0),
                "0 of 5000 lines embedded, 0 stored, 0 failed; 0.0 lines/s",
            ),
            (
                1200,
                1000,
                3,
                Some(5000),
                s(100),
                "1200 of 5000 lines embedded, 1000 stored, 3 failed; 10.0 lines/s; eta 6m 40s",
            ),
            (
                300,
                256,
                0,
                None,
                s(10),
                "300 lines embedded, 256 stored, 0 failed; 25.6 lines/s",
            ),
            (
                10,
                10,
                0,
                Some(400_000),
                s(10),
                "10 of 400000 lines embedded, 10 stored, 0 failed; 1.0 lines/s; eta 111h 06m 30s",
            ),
            (
                5,
                9,
                0,
                Some(5),
                s(1),
                "5 of 5 lines embedded, 9 stored, 0 failed; 9.0 lines/s; eta 0s",
            ),
        ];
        for (embedded, stored, failed, total, elapsed, expected) in table {
            assert_eq!(status(embedded, stored, failed, total, elapsed), expected);
        }
    }
}

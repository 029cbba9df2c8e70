//! A test that cannot run what it is about on this machine (no Qdrant
//! server, no tool) says so: [`skipped`].

use std::io::Write;

/// The file the test command names (`scripts/test.sh`) for the skips.
pub const SKIPPED_ENV: &str = "TRINE_SKIPPED";

/// Says that `what` was not run, and `why` (what to install or set to run
/// it): on stderr, and as a line `why<TAB>what` of the file `TRINE_SKIPPED`
/// names, from which the test command's closing line counts the skips by
/// reason. A test calls it once where it returns early.
pub fn skipped(what: &str, why: &str) {
    eprintln!("skipped: {what} ({why})");
    let Some(path) = std::env::var_os(SKIPPED_ENV) else {
        return;
    };
    let line = format!("{why}\t{what}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot note the skip in {}: {e}", path.display());
    }
}

/// Why a test of a Qdrant server did not run.
pub const NO_QDRANT: &str = "no Qdrant server: set TRINE_QDRANT_URL (scripts/test.sh starts one)";

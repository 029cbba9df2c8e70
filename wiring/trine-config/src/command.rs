//! What every command shares: how it ends ([`CmdResult`], [`EXIT_PARTIAL`]),
//! how it prints a report, how it reads a search mode.

use std::process::ExitCode;
use trine_core::Named;

use trine_api::v1;

/// Exit code of a run that did its work but skipped some input.
pub const EXIT_PARTIAL: u8 = 3;

/// A command's error: anything printable.
pub type CmdResult = Result<ExitCode, Box<dyn std::error::Error + Send + Sync>>;

/// Prints a report: its JSON with `--json`, else `table`; with `--save FILE`
/// also writes the JSON there.
pub fn print_report(
    report: &impl serde::Serialize,
    json: bool,
    save: Option<&std::path::Path>,
    table: impl FnOnce() -> String,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let text = serde_json::to_string_pretty(report)?;
    if let Some(path) = save {
        std::fs::write(path, format!("{text}\n"))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if json {
        println!("{text}");
    } else {
        print!("{}", table());
    }
    Ok(())
}

/// Parses `hybrid`, `semantic` or `lexical`.
pub fn parse_mode(raw: &str) -> Result<v1::Mode, String> {
    trine_core::Mode::parse(raw).map(trine_api::mode_to_wire)
}

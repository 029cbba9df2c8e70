//! The CPU time other processes on this machine spent (the Qdrant server's
//! nodes, `--server-pids`): what a search costs the shared server, beside
//! the wall clock.

/// Clock ticks a second in `/proc/PID/stat` (`USER_HZ`: 100 in the Linux
/// ABI on every architecture trine builds for).
const TICKS_PER_SECOND: f64 = 100.0;

/// The user and system CPU seconds the processes `pids` have used, summed
/// over their threads (`/proc/PID/stat`, Linux).
pub fn cpu_seconds(pids: &[u32]) -> Result<f64, String> {
    pids.iter()
        .map(|pid| {
            let path = format!("/proc/{pid}/stat");
            let stat = std::fs::read_to_string(&path).map_err(|e| {
                format!("--server-pids: cannot read {path} ({e}): give the pids of running Qdrant nodes on this machine (start-qdrant's TRINE_QDRANT_PIDS)")
            })?;
            stat_seconds(&stat).ok_or_else(|| format!("{path} is not a process's stat line"))
        })
        .sum()
}

/// `utime + stime` of a `/proc/PID/stat` line, in seconds. The command
/// name (field 2) may hold spaces and parentheses: fields are counted
/// after its last `)`, where field 3 (the state) is the first.
fn stat_seconds(stat: &str) -> Option<f64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some((ticks(14)? + ticks(15)?) as f64 / TICKS_PER_SECOND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_user_and_system_time() {
        let cases = [
            (
                "4242 (qdrant) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 40 0 100 0 0",
                Some(18.0),
            ),
            (
                "7 (a b) c)) R 1 7 7 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 0 0",
                Some(0.1),
            ),
            ("4242 (qdrant) S 1 2", None),
            ("no parenthesis", None),
            ("1 (x) S 1 1 1 0 -1 0 0 0 0 0 many 1", None),
        ];
        for (line, want) in cases {
            assert_eq!(stat_seconds(line), want, "{line}");
        }
    }

    #[test]
    fn this_process_has_used_some_time_and_a_missing_one_is_named() {
        let me = std::process::id();
        if cfg!(target_os = "linux") {
            assert!(cpu_seconds(&[me]).unwrap() >= 0.0);
        }
        let missing = cpu_seconds(&[u32::MAX]).unwrap_err();
        assert!(missing.contains("TRINE_QDRANT_PIDS"), "{missing}");
    }
}

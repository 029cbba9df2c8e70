//! Upgrades (issue 34, point 2): a collection written by the previous
//! release's own binary (trine 0.1.0: `trine/tests/fixtures/trine-0.1.0.tar.gz`,
//! rebuilt by `scripts/upgrade-fixture.sh`) opens with this trine; `trine
//! doctor` says what changed and the command that upgrades it; searches
//! answer as that release answered, before and after `trine upgrade` (a
//! question, which this trine fuses by a rule the release did not have,
//! answers as the release did when it names the release's strategy, and
//! answers the same before and after the upgrade under the default); and a
//! collection of a later layout version is refused for writes.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::process::Command;

fn trine(data: &Path) -> Command {
    trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
}

fn output(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The release's answers, as the fixture recorded them: (query, tenant, ids).
fn expected(dir: &Path) -> Vec<(String, String, Vec<String>)> {
    std::fs::read_to_string(dir.join("expected.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let ids = v["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_str().unwrap().to_string())
                .collect();
            (
                v["query"].as_str().unwrap().to_string(),
                v["tenant"].as_str().unwrap().to_string(),
                ids,
            )
        })
        .collect()
}

/// The ids of the first 8 hits of `trine search` with these arguments,
/// every word of the query scored as the release scored them (its default;
/// common words are left out by default since).
fn search(data: &Path, tenant: &str, query: &str, more: &[&str]) -> Vec<String> {
    let out = trine(data)
        .env("TRINE_LEXICAL__COMMON_WORDS", "none")
        .args(["search", "--json", "--tenant", tenant, "--limit", "8"])
        .args(more)
        .arg(query)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    answer["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every recorded query answers with the release's ids, in its order; a
/// question does under the release's rule (its strategy named, so fused as
/// any search). Returns the default's answers to the questions.
fn answers_as_the_release_did(
    data: &Path,
    expected: &[(String, String, Vec<String>)],
) -> Vec<Vec<String>> {
    let mut questions = Vec::new();
    for (query, tenant, ids) in expected {
        if trine_core::fusion::is_question(query) {
            let got = search(data, tenant, query, &["--strategy", "candidates"]);
            assert_eq!(got, *ids, "{query} ({tenant}), the release's rule");
            questions.push(search(data, tenant, query, &[]));
        } else {
            assert_eq!(search(data, tenant, query, &[]), *ids, "{query} ({tenant})");
        }
    }
    questions
}

#[test]
fn a_collection_of_the_previous_release_opens_upgrades_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = trine_testkit::workspace_dir().join("trine/tests/fixtures/trine-0.1.0.tar.gz");
    let (ok, out) = output(
        Command::new("tar")
            .arg("-xzf")
            .arg(&fixture)
            .arg("-C")
            .arg(dir.path()),
    );
    assert!(ok, "{out}");
    let data = dir.path().join("data");
    let expected = expected(dir.path());
    assert_eq!(expected.len(), 35, "the sample's queries");

    // Doctor says what changed, and the command.
    let (ok, out) = output(trine(&data).arg("doctor"));
    assert!(!ok, "a collection to upgrade is a problem: {out}");
    assert!(out.contains("layout version 1"), "{out}");
    assert!(out.contains("run `trine upgrade`"), "{out}");
    assert!(out.contains("2: the layout version is recorded"), "{out}");
    assert!(out.contains("3: memories may name their thread"), "{out}");

    let questions = answers_as_the_release_did(&data, &expected);
    assert!(!questions.is_empty(), "the sample asks questions");

    let (ok, out) = output(trine(&data).arg("upgrade"));
    assert!(ok, "{out}");
    assert!(out.contains("upgraded from layout version 1 to 3"), "{out}");
    let (ok, out) = output(trine(&data).arg("upgrade"));
    assert!(ok && out.contains("nothing to do"), "{out}");
    let (ok, out) = output(trine(&data).arg("doctor"));
    assert!(ok, "{out}");
    assert!(out.contains("layout      version 3"), "{out}");

    assert_eq!(answers_as_the_release_did(&data, &expected), questions);

    // A later trine's collection: refused for writes, saying why.
    let record = data.join("memories/trine.json");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replace("\"schema_version\": 3", "\"schema_version\": 99"),
    )
    .unwrap();
    let sample = trine_testkit::workspace_dir().join("samples/memories.jsonl");
    let (ok, out) = output(trine(&data).arg("ingest").arg(&sample));
    assert!(!ok, "{out}");
    assert!(out.contains("layout version 99"), "{out}");
    assert!(out.contains("later trine"), "{out}");
}

//! The scale corpus generator, `trine eval` and in-process `trine bench`, as
//! a smoke run: a small corpus of ADR 0172's shape, every configuration and
//! Qdrant's native hybrid evaluated and timed on it, the planted meeting's
//! rank reported by each.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::path::Path;
use std::process::Command;

use trine_testkit::run_ok;

fn trine(data: &Path) -> Command {
    trine_testkit::trine_cli(env!("CARGO_BIN_EXE_trine"), data)
}

#[test]
fn generated_corpus_evaluated_under_every_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let script = trine_testkit::workspace_dir().join("scripts/gen-corpus.py");
    let out = run_ok(
        Command::new("python3")
            .arg(script)
            .arg("--out")
            .arg(&corpus)
            .args(["--n", "3000"]),
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("the title itself: 1"), "{report}");

    let data = dir.path().join("data");
    run_ok(
        trine(&data)
            .arg("ingest")
            .arg(corpus.join("memories.jsonl"))
            .args(["--batch", "1000"]),
    );

    let lists = dir.path().join("lists.jsonl");
    let saved = dir.path().join("report.json");
    let out = run_ok(
        trine(&data)
            .arg("eval")
            .arg("--queries")
            .arg(corpus.join("queries.jsonl"))
            .args(["--modes", "hybrid,semantic,lexical", "--json"])
            .arg("--lists")
            .arg(&lists)
            .arg("--save")
            .arg(&saved)
            .args([
                "--fusion",
                "default",
                "--fusion",
                "rrf/k=60/w=1:1:2/tier=off",
            ]),
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let configurations = report["configurations"].as_array().unwrap();
    let names: Vec<&str> = configurations
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "hybrid/default",
        "lexical/default",
        "hybrid/candidates",
        "hybrid/candidates/no-verbatim",
        "hybrid/bm25",
        "hybrid/sparse",
        "hybrid/gate/no-verbatim",
        "semantic",
        "lexical/candidates",
        "qdrant-native/bm25",
        "qdrant-native/sparse",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    for c in configurations {
        assert!(c["error"].is_null(), "{c:#}");
        assert_eq!(c["by_kind"]["all"]["queries"], report["queries"], "{c:#}");
        // q01 is the planted meeting; its rank is reported everywhere.
        let q01 = &c["queries"][0];
        assert_eq!(q01["qid"], "q01");
        assert_eq!(q01["ranks"].as_array().unwrap().len(), 1);
    }
    let planted = |name: &str| {
        configurations.iter().find(|c| c["name"] == name).unwrap()["queries"][0]["ranks"][0].clone()
    };
    // Among more near-duplicates holding every term than the cap, the
    // planted title is read through the phrase index and comes first.
    assert_eq!(planted("hybrid/default"), 1);
    assert_eq!(planted("hybrid/candidates"), 1);
    assert_eq!(planted("hybrid/bm25"), 1);
    // Fused from the cached channel lists under the configured fusion, every
    // query ranks exactly as through the gateway: the `--fusion` runs measure
    // what a search would answer.
    for strategy in ["default", "candidates", "bm25", "sparse", "gate"] {
        let queries = |name: &str| {
            configurations.iter().find(|c| c["name"] == name).unwrap()["queries"].clone()
        };
        assert_eq!(
            queries(&format!("hybrid/{strategy}")),
            queries(&format!("fused/{strategy}/default")),
            "{strategy}"
        );
    }
    // `--lists` wrote each query's two channel lists under each strategy, and
    // the offline mirror of the fusion (scripts/fusion-study.py) ranks every
    // query's gold from them exactly as the default fusion did.
    let written = std::fs::read_to_string(&lists).unwrap();
    let queries = report["queries"].as_u64().unwrap() as usize;
    assert_eq!(
        written.lines().count(),
        queries * 5,
        "a line per query and strategy"
    );
    let line: serde_json::Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(line["qid"], "q01");
    assert_eq!(line["strategy"], "default");
    assert!(!line["lexical"].as_array().unwrap().is_empty(), "{line}");
    assert!(!line["semantic"].as_array().unwrap().is_empty(), "{line}");
    trine_testkit::assert_fusion_mirror_agrees(&lists, &saved, queries);
    // Each hybrid configuration is compared with the better single channel.
    let compared = report["against_better"].as_array().unwrap();
    assert!(
        compared.iter().any(
            |c| c["configuration"] == "fused/candidates/rrf/k=60/w=1:1:2/tier=off"
                && c["kind"] == "all"
                && c["mrr"]["low"].as_f64().unwrap() <= c["mrr"]["high"].as_f64().unwrap()
        ),
        "{compared:#?}"
    );

    // `--baseline`: the same build on the same collection against the saved
    // report, each hybrid run that ran in both compared per kind, unchanged.
    let out = run_ok(
        trine(&data)
            .arg("eval")
            .arg("--queries")
            .arg(corpus.join("queries.jsonl"))
            .args(["--modes", "hybrid", "--strategies", "default,candidates"])
            .args(["--verbatim", "on", "--native", "none", "--json"])
            .arg("--baseline")
            .arg(&saved),
    );
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = again["against_baseline"].as_array().unwrap();
    let kinds = configurations
        .iter()
        .find(|c| c["name"] == "hybrid/default")
        .unwrap()["by_kind"]
        .as_object()
        .unwrap()
        .len();
    assert_eq!(changes.len(), 2 * kinds, "{changes:#?}");
    for c in changes {
        assert_eq!(c["verdict"], "not worse", "{c:#}");
        assert_eq!(c["mrr"]["mean"], 0.0, "{c:#}");
        assert_eq!(c["mrr_then"], c["mrr_now"], "{c:#}");
    }
    // A baseline of other queries is refused before anything runs.
    let fewer = dir.path().join("fewer.jsonl");
    let first: String = std::fs::read_to_string(corpus.join("queries.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .replace("\"q01\"", "\"q-elsewhere\"");
    std::fs::write(&fewer, format!("{first}\n")).unwrap();
    let refused = trine(&data)
        .arg("eval")
        .arg("--queries")
        .arg(&fewer)
        .args(["--modes", "hybrid", "--native", "none", "--baseline"])
        .arg(&saved)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("query q-elsewhere is not in the baseline's hybrid/default"),
        "{said}"
    );

    // `trine bench` in-process, then the same load on Qdrant's one-call
    // hybrid: both bounded, both reported.
    let out = run_ok(
        trine(&data)
            .arg("bench")
            .arg("--queries")
            .arg(corpus.join("bench-queries.jsonl"))
            .args(["--duration", "1s", "--warmup", "0s", "--native", "sparse"])
            .arg("--json"),
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in [&report, &report["native"]] {
        assert!(r["requests"].as_u64().unwrap() > 0, "{report:#}");
        assert_eq!(r["errors"], serde_json::json!({}), "{report:#}");
    }
    assert!(
        report["native"]["stages"]["native.query"]["n"]
            .as_u64()
            .unwrap()
            > 0
    );
}

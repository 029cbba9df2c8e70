//! The architecture's dependency rules, read from `cargo metadata`: a crate
//! that reaches for what its role forbids fails here, not in review.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::{BTreeMap, BTreeSet};

/// `cargo metadata` of the workspace's own packages.
fn metadata() -> serde_json::Value {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(trine_testkit::workspace_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each workspace crate and the crates it depends on (normal dependencies).
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let metadata = metadata();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn each_crate_depends_only_on_what_its_role_allows() {
    let deps = dependencies();
    let of = |name: &str| deps.get(name).unwrap_or_else(|| panic!("no crate {name}"));
    // (crate, what it must never depend on, why)
    let rules: &[(&str, &[&str], &str)] = &[
        (
            "trine-core",
            &[
                "tokio",
                "tonic",
                "prost",
                "qdrant-client",
                "qdrant-edge",
                "hyper",
                "trine-store",
            ],
            "the pure algorithms do no IO",
        ),
        (
            "trine-fusion",
            &["trine-store", "trine-embed", "qdrant-client", "qdrant-edge"],
            "fusion-svc holds no data and embeds nothing",
        ),
        (
            "trine-lexical",
            &["trine-semantic", "trine-fusion", "trine-gateway"],
            "lexical-svc knows no other service",
        ),
        (
            "trine-semantic",
            &["trine-lexical", "trine-fusion", "trine-gateway"],
            "semantic-svc knows no other service",
        ),
        (
            "trine-gateway",
            &["trine-lexical", "trine-semantic", "trine-fusion"],
            "the gateway reaches its peers over gRPC only",
        ),
        (
            "trine-api",
            &["trine-store", "trine-embed", "qdrant-client", "qdrant-edge"],
            "the wire crate converts, it stores nothing",
        ),
        (
            "trine-store",
            &["tonic", "trine-api", "trine-gateway"],
            "the store knows no service and no wire type",
        ),
    ];
    for (krate, forbidden, why) in rules {
        let bad: Vec<&&str> = forbidden
            .iter()
            .filter(|f| of(krate).contains(**f))
            .collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}: {why}");
    }
}

/// The command-line crate holds commands only: every service is built and
/// started in `trine-mesh` (`spawn`, `Mesh`, `Service`), never in
/// `trine/src`.
#[test]
fn the_cli_builds_no_service() {
    let src = trine_testkit::workspace_dir().join("trine/src");
    let forbidden = [
        "Service::new(",
        "Searcher::new(",
        "Peers::lazy(",
        "trine_lexical::run(",
        "trine_semantic::run(",
        "trine_fusion::run(",
        "trine_gateway::run(",
    ];
    let mut found = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for f in forbidden {
                    if text.contains(f) {
                        found.push(format!("{}: {f}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "services built in the CLI crate: {found:?}"
    );
}

/// The `.rs` text under `dir`'s `subdirs` (and `files`), joined.
fn code_under(dir: &std::path::Path, subdirs: &[&str], files: &[&str]) -> String {
    let mut text = String::new();
    let mut dirs: Vec<std::path::PathBuf> = subdirs.iter().map(|s| dir.join(s)).collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                text += &std::fs::read_to_string(&path).unwrap();
            }
        }
    }
    for file in files {
        text += &std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    }
    text
}

/// Whether `ident` appears in `text` as a whole identifier.
fn names(text: &str, ident: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(ident).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + ident.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Every dependency a crate declares is used by its code — the check of
/// `cargo machete`, made here by reading each crate's own files: a normal
/// dependency is named in `src/` (or `build.rs`), a dev-dependency in
/// `src/`, `tests/`, `benches/` or `examples/`, a build-dependency in
/// `build.rs`. The few used only by generated code are named with why.
#[test]
fn no_crate_declares_a_dependency_its_code_does_not_use() {
    // (crate, dependency, why its code does not name it)
    let generated: &[(&str, &str, &str)] = &[
        (
            "trine-api",
            "prost",
            "the code tonic-build generates into OUT_DIR",
        ),
        (
            "trine-api",
            "tonic-prost",
            "the code tonic-build generates into OUT_DIR",
        ),
    ];
    let metadata = metadata();
    let mut unused = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let manifest = std::path::PathBuf::from(package["manifest_path"].as_str().unwrap());
        let dir = manifest.parent().unwrap();
        let src = code_under(dir, &["src"], &["build.rs"]);
        let all = code_under(dir, &["src", "tests", "benches", "examples"], &["build.rs"]);
        let build = code_under(dir, &[], &["build.rs"]);
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let ident = dep["rename"].as_str().unwrap_or(dep_name).replace('-', "_");
            let (text, kind) = match dep["kind"].as_str() {
                None => (&src, "dependency"),
                Some("dev") => (&all, "dev-dependency"),
                _ => (&build, "build-dependency"),
            };
            let excused = generated
                .iter()
                .any(|(c, d, _)| *c == name && *d == dep_name);
            if !excused && !names(text, &ident) {
                unused.push(format!("{name}: {kind} {dep_name}"));
            }
        }
    }
    assert!(unused.is_empty(), "declared, never used: {unused:#?}");
}

/// The top level holds what the design card names: `Cargo.toml, proto,
/// services, gateway, lexical-svc, semantic-svc, fusion-svc, deploy, k8s,
/// README.md`.
#[test]
fn the_top_level_holds_the_design_cards_folders() {
    let root = trine_testkit::workspace_dir();
    let missing: Vec<&str> = [
        "Cargo.toml",
        "proto",
        "services",
        "gateway",
        "lexical-svc",
        "semantic-svc",
        "fusion-svc",
        "deploy",
        "k8s",
        "README.md",
    ]
    .into_iter()
    .filter(|name| !root.join(name).exists())
    .collect();
    assert!(
        missing.is_empty(),
        "the card's top-level entries missing: {missing:?}"
    );
}

/// The design card's folders for the four services, one crate each.
const SERVICE_FOLDERS: [(&str, &str); 4] = [
    ("gateway", "trine-gateway"),
    ("lexical-svc", "trine-lexical"),
    ("semantic-svc", "trine-semantic"),
    ("fusion-svc", "trine-fusion"),
];

/// The shared floor the four services build on, under `services/`.
const SHARED_FOLDERS: [(&str, &str); 5] = [
    ("services/api", "trine-api"),
    ("services/core", "trine-core"),
    ("services/store", "trine-store"),
    ("services/embed", "trine-embed"),
    ("services/telemetry", "trine-telemetry"),
];

/// The floor of a crate's folder, bottom up: the shared floor
/// (`services/*`), the four services (the card's `gateway/`, `lexical-svc/`,
/// `semantic-svc/`, `fusion-svc/`), the crates that wire the services
/// together (`wiring/`), the binary on top (`trine/`).
fn floor(folder: &str) -> Option<usize> {
    if SHARED_FOLDERS.iter().any(|(f, _)| *f == folder) {
        return Some(0);
    }
    if SERVICE_FOLDERS.iter().any(|(f, _)| *f == folder) {
        return Some(1);
    }
    match folder.split('/').next()? {
        "wiring" => Some(2),
        "trine" => Some(3),
        _ => None,
    }
}

/// Every crate lives on its floor: the card's service folders and the
/// shared floor hold the crates named above, each wiring crate a folder
/// named as its package; none depends on a crate of a floor above it.
#[test]
fn each_crate_sits_on_its_floor_in_its_folder() {
    let root = trine_testkit::workspace_dir().canonicalize().unwrap();
    let metadata = metadata();
    let packages = metadata["packages"].as_array().unwrap();
    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    for package in packages {
        let name = package["name"].as_str().unwrap().to_string();
        let manifest = std::path::PathBuf::from(package["manifest_path"].as_str().unwrap());
        let dir = manifest.parent().unwrap().strip_prefix(&root).unwrap();
        let folder = dir.to_string_lossy().to_string();
        assert!(
            floor(&folder).is_some(),
            "{folder}: a card's service folder, services/<shared crate>, wiring/ or trine/"
        );
        folders.insert(name, folder);
    }
    for (folder, crate_name) in SERVICE_FOLDERS.iter().chain(&SHARED_FOLDERS) {
        assert_eq!(
            folders.get(*crate_name).map(String::as_str),
            Some(*folder),
            "{crate_name} lives in {folder}/"
        );
    }
    for (name, folder) in &folders {
        if folder.starts_with("wiring/") || folder == "trine" {
            assert!(
                folder.ends_with(name.as_str()),
                "{folder}: the folder is named as its package {name}"
            );
        }
    }
    let mut above = Vec::new();
    for package in packages {
        let name = package["name"].as_str().unwrap();
        let own = floor(&folders[name]).unwrap();
        for dep in package["dependencies"].as_array().unwrap() {
            let normal = dep["kind"].is_null();
            let dep = dep["name"].as_str().unwrap();
            if let Some(folder) = folders.get(dep)
                && normal
                && floor(folder).unwrap() > own
            {
                above.push(format!("{name} ({}) → {dep} ({folder})", folders[name]));
            }
        }
    }
    assert!(
        above.is_empty(),
        "crates depending on a floor above theirs: {above:#?}"
    );
}

/// The dev profile optimises what is not named (dependencies; Cargo keeps
/// build scripts and proc macros unoptimised): every workspace crate is named
/// in `[profile.dev.package]`, so a new crate does not compile as a
/// dependency does.
#[test]
fn every_crate_has_its_own_dev_profile() {
    let root = trine_testkit::workspace_dir();
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let named = &manifest["profile"]["dev"]["package"];
    let missing: Vec<String> = metadata()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .filter(|name| named.get(name).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "workspace crates with no [profile.dev.package.<name>] in Cargo.toml \
         (they would compile optimised, as dependencies do): {missing:?}"
    );
}

/// One version requirement per dependency, written once: every member
/// declares its dependencies with `workspace = true`, so the versions and
/// features are read in one table (`[workspace.dependencies]`) and
/// `cargo deny` (deny.toml) judges one list.
#[test]
fn every_dependency_is_declared_in_the_workspace_table() {
    let mut outside = Vec::new();
    for package in metadata()["packages"].as_array().unwrap() {
        let path = package["manifest_path"].as_str().unwrap();
        let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(table) = manifest.get(section).and_then(|t| t.as_table()) else {
                continue;
            };
            for (name, spec) in table {
                let from_workspace = spec.get("workspace").and_then(|w| w.as_bool()) == Some(true);
                if !from_workspace {
                    outside.push(format!("{path}: [{section}] {name}"));
                }
            }
        }
    }
    assert!(
        outside.is_empty(),
        "dependencies declared outside [workspace.dependencies] (write \
         `name.workspace = true` and the version in the root Cargo.toml): {outside:#?}"
    );
}

/// The design the code and the docs cite is the repository's own
/// (docs/design.md): no tracked file names a design document kept outside it.
#[test]
fn no_file_cites_a_design_outside_the_repository() {
    // Spelled in two pieces, so that this file does not name it.
    const OUTSIDE: &str = concat!("DESIGN", ".md");
    let root = trine_testkit::workspace_dir();
    let listed = match std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
    {
        Ok(out) if out.status.success() => out.stdout,
        Ok(out) => {
            trine_testkit::skipped(
                "the check of citations",
                &format!(
                    "{} is not a git checkout ({})",
                    root.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            return;
        }
        Err(e) => {
            trine_testkit::skipped(
                "the check of citations",
                &format!("git is not available ({e})"),
            );
            return;
        }
    };
    let citing: Vec<String> = listed
        .split(|b| *b == 0)
        .filter(|path| !path.is_empty())
        .filter_map(|path| {
            let path = String::from_utf8(path.to_vec()).ok()?;
            // Gone from the working tree, or not UTF-8 text: nothing to read.
            let text = String::from_utf8(std::fs::read(root.join(&path)).ok()?).ok()?;
            text.contains(OUTSIDE).then_some(path)
        })
        .collect();
    assert!(
        citing.is_empty(),
        "files citing {OUTSIDE}, a design outside the repository: cite \
         `docs/design.md §N` instead: {citing:#?}"
    );
}

/// ARCHITECTURE.md keeps a crate's paragraph (a paragraph whose first line
/// starts with a bold path, "**`") to at most eight lines as wrapped in the
/// file: what the crate is, where to start reading, its invariants and its
/// Details link; the rest belongs in its docs/internals-*.md page.
#[test]
fn architecture_paragraphs_are_at_most_eight_lines() {
    const MAX_LINES: usize = 8;
    let path = trine_testkit::workspace_dir().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut paragraphs: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    let long: Vec<String> = paragraphs
        .iter()
        .filter(|p| p[0].starts_with("**`") && p.len() > MAX_LINES)
        .map(|p| format!("{} lines: {}", p.len(), p[0]))
        .collect();
    assert!(
        long.is_empty(),
        "crate paragraphs of ARCHITECTURE.md over {MAX_LINES} lines (say what the crate is, \
         where to start reading and its invariants; move the rest to its \
         docs/internals-*.md page):\n{}",
        long.join("\n")
    );
}

/// The production code of a Rust file: its lines before its test module.
fn production(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .collect()
}

/// Each function of `lines` (a `fn` line with a body) and its length, from
/// its `fn` line to the closing brace at the same indentation.
fn functions<'a>(lines: &[&'a str]) -> Vec<(usize, &'a str, usize)> {
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let Some(fn_at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = ["pub", "async", "const", "unsafe", "extern"];
        let is_item = words[..fn_at]
            .iter()
            .all(|w| qualifiers.contains(w) || w.starts_with("pub("));
        if !is_item || trimmed.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[at + 1..].iter().position(|l| l.trim_end() == close) {
            found.push((at + 1, *line, end + 2));
        }
    }
    found
}

/// No production file of the workspace over 600 lines, and no production
/// function over 80, the binary's included (tests, fuzz targets and
/// generated code aside).
#[test]
fn no_production_file_or_function_is_too_long() {
    const MAX_FILE: usize = 600;
    const MAX_FN: usize = 80;
    let root = trine_testkit::workspace_dir();
    let listed = match std::process::Command::new("git")
        .args(["ls-files", "-z", "*.rs"])
        .current_dir(&root)
        .output()
    {
        Ok(out) if out.status.success() => out.stdout,
        _ => {
            trine_testkit::skipped("the lengths of files and functions", "no git checkout here");
            return;
        }
    };
    let mut long = Vec::new();
    for path in listed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let path = String::from_utf8_lossy(path).into_owned();
        if path.contains("/tests/") || path.starts_with("fuzz/") || path.contains("/benches/") {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&path)).unwrap();
        let lines = production(&text);
        if lines.len() > MAX_FILE {
            long.push(format!("{path}: {} production lines", lines.len()));
        }
        for (line, head, length) in functions(&lines) {
            if length > MAX_FN {
                long.push(format!("{path}:{line}: {length} lines: {}", head.trim()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FILE} lines a file or {MAX_FN} a function (split it into named stages):\n{}",
        long.join("\n")
    );
}

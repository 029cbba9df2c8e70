//! `trine doctor`: what the collection is and whether trine can use it, with
//! the command that fixes each problem.

use std::process::ExitCode;
use trine_core::Named;

use serde::Serialize;
use trine_core::model::{CollectionInfo, TextIndexInfo};
use trine_lexical::Ready;

use crate::{CmdResult, Config, open_store};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object instead of a report
    #[arg(long)]
    pub json: bool,
}

/// The report, as printed with `--json`.
#[derive(Debug, Serialize)]
pub struct Report {
    pub collection: String,
    pub backend: String,
    pub location: String,
    pub exists: bool,
    pub configured_embedder: String,
    pub info: Option<CollectionInfo>,
    /// Each lexical strategy: ready, or what is missing and the fix.
    pub strategies: Vec<StrategyReport>,
    /// The strategy searches use when they name none.
    pub configured_strategy: String,
    /// Problems, each with what to run.
    pub problems: Vec<String>,
    /// Upgrades that would help but are not needed to run, each with what to
    /// run; they do not make the report fail.
    pub advice: Vec<String>,
    pub ok: bool,
}

/// One lexical strategy's readiness on the collection.
#[derive(Debug, Serialize)]
pub struct StrategyReport {
    pub strategy: &'static str,
    pub ready: bool,
    /// What is missing and the command that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let store = open_store(config).await?;
    let info = store.info().await?;
    let strategies = match info {
        // trine's services give lexical-svc an embedder, so the gate can run.
        Some(_) => trine_lexical::readiness::probe(store.as_ref(), true)
            .await?
            .strategies
            .into_iter()
            .map(|(s, ready)| StrategyReport {
                strategy: s.name(),
                ready: ready.is_ready(),
                missing: match ready {
                    Ready::Yes => None,
                    Ready::No(why) => Some(why),
                },
            })
            .collect(),
        None => Vec::new(),
    };
    let mut problems = problems(config, info.as_ref());
    let configured = strategies
        .iter()
        .find(|s| s.strategy == config.lexical.strategy.name());
    if let Some(StrategyReport {
        missing: Some(why), ..
    }) = configured
    {
        problems.push(format!(
            "the configured strategy `{}` is not ready: {why}",
            config.lexical.strategy.name()
        ));
    }
    let report = Report {
        collection: config.collection.clone(),
        backend: store.backend().to_string(),
        location: config
            .qdrant
            .clone()
            .unwrap_or_else(|| config.data.display().to_string()),
        exists: info.is_some(),
        configured_embedder: config.embedder.name().to_string(),
        strategies,
        configured_strategy: config.lexical.strategy.name().to_string(),
        problems,
        ok: false,
        advice: info.as_ref().map(advice).unwrap_or_default(),
        info,
    };
    let report = Report {
        ok: report.problems.is_empty(),
        ..report
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What is wrong with a collection's layout version, and the command that
/// upgrades it.
fn schema_problem(schema: u32) -> Option<String> {
    use trine_store::{SCHEMA, SCHEMA_CHANGES};
    match schema.cmp(&SCHEMA) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!(
            "layout version {schema}, written by a later trine than this one (which knows up to {SCHEMA}): run that trine"
        )),
        std::cmp::Ordering::Less => {
            let changes: Vec<String> = SCHEMA_CHANGES
                .iter()
                .filter(|(version, _)| *version > schema)
                .map(|(version, change)| format!("{version}: {change}"))
                .collect();
            Some(format!(
                "layout version {schema}, written by an earlier trine; this one writes {SCHEMA} ({}): run `trine upgrade`",
                changes.join("; ")
            ))
        }
    }
}

fn problems(config: &Config, info: Option<&CollectionInfo>) -> Vec<String> {
    let Some(info) = info else {
        return vec![format!(
            "collection `{}` does not exist: run `trine ingest FILE` to create it",
            config.collection
        )];
    };
    let mut out = Vec::new();
    out.extend(schema_problem(info.schema));
    match &info.embedder {
        Some(e) if e.name != config.embedder.name() => out.push(format!(
            "written by embedder `{}` but `{}` is configured: use `--embedder {}`",
            e.name,
            config.embedder.name(),
            e.name
        )),
        Some(_) => {}
        None => out.push("no embedder recorded: the collection was not made by trine".to_string()),
    }
    let layout = &config.payload;
    for (field, index) in layout.indexes() {
        if index == trine_store::FieldIndex::Phrase {
            continue; // made with new collections only: `advice` speaks of it
        }
        let kind = layout.reported_kind(index);
        let present = info
            .payload_indexes
            .iter()
            .any(|i| i.field == field && i.kind == kind);
        if !present {
            let fix = if kind == "text" {
                "run `trine text-index`"
            } else {
                "run `trine upgrade` (it makes the missing indexes in place)"
            };
            out.push(format!("no {kind} index on `{field}`: {fix}"));
        }
    }
    if let Some(text) = &info.text_index {
        if !text.phrase_matching {
            out.push("the text index lacks phrase matching: re-create it".to_string());
        }
        // On a server without BM25 text scoring there is nothing to fix in
        // the collection: `advice` says what the server lacks.
        if !text.scoring && info.engine.text_scoring {
            out.push("the text index lacks BM25 scoring: re-create it".to_string());
        }
    }
    out
}

fn advice(info: &CollectionInfo) -> Vec<String> {
    let mut out = Vec::new();
    if !info.source_phrases {
        out.push(
            "the sources have no phrase index (a collection made before it, or by another \
             tool): every search reads its candidates' sources for the verbatim check; a \
             collection `trine ingest` creates has it"
                .to_string(),
        );
    }
    if let Some(text) = &info.text_index
        && !text.ascii_folding
    {
        out.push(
            "the text index does not fold diacritics (`sedinta` does not find `ședința`): run \
             `trine text-index --ascii-folding` (rebuilds the index in place and re-encodes the \
             sparse vectors of non-ASCII texts; no memory changes)"
                .to_string(),
        );
    }
    if let Some(why) = info.engine.lacks_text_scoring() {
        out.push(format!(
            "{why}: the bm25 strategy is unavailable on it (candidates, sparse and gate are not \
             affected); nothing in the collection needs changing"
        ));
    }
    out
}

fn render(r: &Report) -> String {
    let mut s = format!(
        "collection  {} ({}, {})\n",
        r.collection, r.backend, r.location
    );
    if let Some(info) = &r.info {
        s += &render_info(info, &r.configured_embedder);
    }
    for st in &r.strategies {
        let mark = if st.strategy == r.configured_strategy {
            " (configured)"
        } else {
            ""
        };
        match &st.missing {
            None => s += &format!("strategy    {}{mark}: ready\n", st.strategy),
            Some(why) => s += &format!("strategy    {}{mark}: not ready: {why}\n", st.strategy),
        }
    }
    for a in &r.advice {
        s += &format!("advice      {a}\n");
    }
    if r.problems.is_empty() {
        s += "status      ok\n";
    } else {
        for p in &r.problems {
            s += &format!("problem     {p}\n");
        }
    }
    s
}

/// The report's lines on an existing collection: embedder, points, layout,
/// vectors, text index, engine, payload indexes.
fn render_info(info: &CollectionInfo, configured_embedder: &str) -> String {
    let embedder = info.embedder.as_ref().map_or("unknown".to_string(), |e| {
        format!("{} ({} dims)", e.name, e.dim)
    });
    let mut s = format!("embedder    {embedder}; configured: {configured_embedder}\n");
    s += &format!(
        "points      {} in {} segment(s)\n",
        info.points, info.segments
    );
    s += &format!(
        "layout      version {}; this trine writes {}\n",
        info.schema,
        trine_store::SCHEMA
    );
    let dense = info
        .dense_dim
        .map_or("missing".to_string(), |d| format!("{d} dims, cosine"));
    s += &format!("dense       {dense}\n");
    s += &format!("sparse      {}\n", sparse_text(info));
    s += &format!("tokens      {}\n", tokens_text(info));
    if let Some(t) = &info.text_index {
        s += &render_text_index(info, t);
    }
    s += &format!("engine      {}\n", info.engine.version);
    let indexes: Vec<String> = info
        .payload_indexes
        .iter()
        .map(|i| format!("{}:{}", i.field, i.kind))
        .collect();
    s += &format!("indexes     {}\n", indexes.join(", "));
    s
}

/// Whether the collection keeps tokens for late interaction.
fn tokens_text(info: &CollectionInfo) -> &'static str {
    if info.tokens {
        "present (late interaction judges the first hits of a search)"
    } else {
        "missing (the collection predates late interaction: its searches are not judged \
         again; a collection ingested anew has them)"
    }
}

/// What the collection's sparse vectors are.
fn sparse_text(info: &CollectionInfo) -> &'static str {
    match (info.sparse_idf, info.sparse_tf) {
        (true, true) => {
            "present, IDF modifier; sparse_tf present (sparse queries are \
             weighted from the document frequencies once built)"
        }
        (true, false) if info.backend == "edge" => {
            "present, IDF modifier; no sparse_tf (the collection predates it): sparse \
             queries take Qdrant's IDF pass over the tenant; a collection ingested anew \
             has it"
        }
        (true, false) => "present, IDF modifier",
        (false, _) => "missing",
    }
}

/// The text index's line, and on the embedded engine where bm25 reads its
/// statistics from.
fn render_text_index(info: &CollectionInfo, t: &TextIndexInfo) -> String {
    let mut s = format!(
        "text index  tokenizer {}, lowercase {}, ascii folding {}, stemmer {}, phrase {}, \
         bm25 scoring {}\n",
        t.tokenizer,
        t.lowercase,
        t.ascii_folding,
        t.stemmer.map_or("none", |l| l.name()),
        t.phrase_matching,
        t.scoring
    );
    if info.backend == "edge" && t.scoring {
        let stats = match info.one_tenant {
            true => {
                "one tenant ever written: bm25 reads the statistics from the \
                 index's counts"
            }
            false => {
                "bm25 gathers the statistics over the tenant's points on each \
                 query (more than one tenant written, or the collection predates \
                 tenants.json)"
            }
        };
        s += &format!("tenants     {stats}\n");
    }
    s
}

//! The surfaces beside gRPC: HTTP/JSON bodies and query strings, MCP's
//! JSON-RPC, the keys file. One case each: generate, parse as the gateway
//! parses, check what must hold.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tonic::{Status, async_trait};
use trine_api::json::{query_param, records_from_json, search_request_from_json};
use trine_api::v1;
use trine_core::model::{MAX_QUERY_BYTES, check_query_bytes};
use trine_gateway::auth::{KeyFile, key_id};
use trine_gateway::mcp::{Backend, handle_line};

use crate::Gen;
use crate::targets::{Case, check};

/// A JSON value: the right type for a field or not, sometimes nested.
fn value(g: &mut Gen, depth: usize) -> Value {
    match g.below(if depth == 0 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(g.chance(2)),
        2 => json!(g.i64()),
        3 => serde_json::Number::from_f64(g.f64()).map_or(Value::Null, Value::Number),
        4 | 5 => Value::String(g.text(48)),
        6 => Value::Array((0..g.below(4)).map(|_| value(g, depth - 1)).collect()),
        _ => Value::Object(
            (0..g.below(4))
                .map(|_| (g.text(10), value(g, depth - 1)))
                .collect(),
        ),
    }
}

/// An object of some of `fields`, each usually of a fitting kind, and now
/// and then a field of no name it knows.
fn object(g: &mut Gen, fields: &[&str], fitting: impl Fn(&mut Gen, &str) -> Value) -> Value {
    let mut map = serde_json::Map::new();
    for field in fields {
        if g.chance(3) {
            continue;
        }
        let v = if g.chance(8) {
            value(g, 2)
        } else {
            fitting(g, field)
        };
        map.insert((*field).to_string(), v);
    }
    if g.chance(16) {
        map.insert(g.text(8), value(g, 1));
    }
    Value::Object(map)
}

/// Bytes of `v`, sometimes mutated, sometimes replaced by noise.
fn bytes_of(g: &mut Gen, v: &Value) -> Vec<u8> {
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    match g.below(8) {
        0 => g.bytes(128),
        1 | 2 => g.mutate(bytes),
        _ => bytes,
    }
}

fn labels(g: &mut Gen) -> Value {
    Value::Array((0..g.below(3)).map(|_| json!(g.label(64))).collect())
}

fn search_body(g: &mut Gen) -> Value {
    object(
        g,
        &[
            "query", "tenant", "projects", "kinds", "mode", "limit", "strategy", "since", "until",
            "weights", "fusion", "explain",
        ],
        |g, field| match field {
            "query" => json!(g.text(MAX_QUERY_BYTES / 64)),
            "tenant" => json!(g.label(64)),
            "projects" | "kinds" => labels(g),
            "mode" => json!(["hybrid", "semantic", "lexical", "", "other"][g.below(5)]),
            "limit" => json!(g.i64()),
            "since" | "until" => json!(["2026-11-11T09:58:00Z", "2026-13-01", ""][g.below(3)]),
            "weights" | "fusion" => object(g, &["lexical", "semantic", "verbatim", "k"], |g, _| {
                json!(g.f64())
            }),
            _ => value(g, 1),
        },
    )
}

fn record(g: &mut Gen) -> Value {
    object(
        g,
        &[
            "id",
            "text",
            "tenant",
            "source",
            "project",
            "kind",
            "created_at",
            "thread",
            "seq",
            "metadata",
        ],
        |g, field| match field {
            "id" => json!(g.id()),
            "text" => json!(g.text(128)),
            "seq" => json!(g.i64()),
            "created_at" => json!(["2026-11-11T09:58:00Z", "yesterday"][g.below(2)]),
            "metadata" => value(g, 3),
            _ => json!(g.label(64)),
        },
    )
}

/// Every byte of `text` as `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// `POST /v1/search` and `POST /v1/memories` bodies, and query strings.
pub fn http_json(g: &mut Gen) -> Case {
    let body = search_body(g);
    let body = bytes_of(g, &body);
    if let Ok(r) = search_request_from_json(&body) {
        check(r.filters.is_some(), || {
            "a search without filters".to_string()
        })?;
        check(v1::Mode::try_from(r.mode).is_ok(), || {
            format!(
                "an unknown mode {} from {:?}",
                r.mode,
                String::from_utf8_lossy(&body)
            )
        })?;
        let _ = check_query_bytes(&r.query, MAX_QUERY_BYTES);
        let _ = trine_api::filter_from_wire(r.filters.as_ref(), chrono::Utc::now());
        let _ = trine_api::fusion_from_wire(
            &trine_core::fusion::Settings::default(),
            r.weights.as_ref(),
            r.fusion.as_ref(),
        );
    }

    let records: Vec<Value> = (0..g.below(4)).map(|_| record(g)).collect();
    let body = bytes_of(g, &json!({ "records": records }));
    if let Ok((valid, failed)) = records_from_json(&body) {
        let mut seen = std::collections::BTreeSet::new();
        for index in valid
            .iter()
            .map(|(i, _)| *i)
            .chain(failed.iter().map(|e| e.index))
        {
            check(seen.insert(index), || {
                format!("record {index} answered twice")
            })?;
        }
        for (index, wire) in valid {
            check(trine_api::memory_from_wire(wire).is_ok(), || {
                format!("record {index} taken over HTTP, refused on the wire")
            })?;
        }
    }

    // Any query string; and a value of any characters, percent-encoded,
    // decodes to itself.
    let query = g.text(64);
    let _ = query_param(Some(&query), "tenant");
    let wanted = g.text(48);
    let query = format!("mode=x&tenant={}&tenant=second", percent_encode(&wanted));
    let got = query_param(Some(&query), "tenant");
    check(got.as_deref() == Some(wanted.as_str()), || {
        format!("{wanted:?} encoded as {query:?} decoded to {got:?}")
    })
}

/// A backend that checks what the MCP tools ask as the gateway would (the
/// same conversions), and answers with nothing found: the protocol's code,
/// not the search, is under test.
struct Checking;

fn invalid(message: String) -> Status {
    Status::invalid_argument(message)
}

#[async_trait]
impl Backend for Checking {
    async fn search(&self, r: v1::SearchRequest) -> Result<v1::SearchResponse, Status> {
        check_query_bytes(&r.query, MAX_QUERY_BYTES).map_err(|e| invalid(e.to_string()))?;
        trine_api::filter_from_wire(r.filters.as_ref(), chrono::Utc::now())
            .map_err(|e| invalid(e.to_string()))?;
        Ok(v1::SearchResponse::default())
    }

    async fn upsert(&self, r: v1::UpsertRequest) -> Result<v1::UpsertResponse, Status> {
        let mut ids = Vec::new();
        for record in r.records {
            ids.push(
                trine_api::memory_from_wire(record)
                    .map_err(invalid)?
                    .id
                    .to_string(),
            );
        }
        Ok(v1::UpsertResponse {
            ids,
            ..v1::UpsertResponse::default()
        })
    }

    async fn get(&self, r: v1::GetRequest) -> Result<v1::GetResponse, Status> {
        trine_api::ids_from_wire(&r.ids).map_err(invalid)?;
        Ok(v1::GetResponse::default())
    }

    async fn forget(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        trine_api::ids_from_wire(&r.ids).map_err(invalid)?;
        Ok(v1::ValidityResponse::default())
    }

    async fn restore(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        self.forget(r).await
    }
}

fn rpc_message(g: &mut Gen) -> Value {
    let method = [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "notifications/initialized",
        "nope",
    ][g.below(6)];
    let tool = [
        "search", "remember", "get", "forget", "restore", "health", "other",
    ][g.below(7)];
    let arguments = object(
        g,
        &[
            "query", "tenant", "text", "id", "limit", "seq", "thread", "projects",
        ],
        |g, field| match field {
            "limit" | "seq" => json!(g.i64()),
            "id" => json!(g.id()),
            "projects" => labels(g),
            "query" | "text" => json!(g.text(96)),
            _ => json!(g.label(64)),
        },
    );
    let mut m = serde_json::Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    if !g.chance(4) {
        let id = match g.below(4) {
            0 => json!(g.i64()),
            1 => json!(g.text(12)),
            2 => Value::Null,
            _ => value(g, 1),
        };
        m.insert("id".into(), id);
    }
    if !g.chance(16) {
        m.insert("method".into(), json!(method));
    }
    let params = match method {
        "initialize" => {
            let version = ["2025-06-18", "1999-01-01"][g.below(2)];
            json!({ "protocolVersion": version })
        }
        "tools/call" => json!({"name": tool, "arguments": arguments}),
        _ => value(g, 1),
    };
    m.insert("params".into(), params);
    Value::Object(m)
}

/// Whether `answer` is a JSON-RPC 2.0 response to `asked`: its id echoed
/// exactly, or null for an id no MCP request may have (MCP: a string or an
/// integer).
fn answers(asked: &Value, answer: &Value) -> bool {
    let readable = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    answer["jsonrpc"] == "2.0"
        && (answer.get("result").is_some() != answer.get("error").is_some())
        && asked.get("id").is_none_or(|id| {
            if readable(id) {
                answer["id"] == *id
            } else {
                answer["id"].is_null() && answer["error"]["code"] == -32600
            }
        })
}

/// MCP's JSON-RPC: one message a line, or a batch.
pub fn mcp(g: &mut Gen) -> Case {
    let message = if g.chance(4) {
        Value::Array((0..g.below(4)).map(|_| rpc_message(g)).collect())
    } else {
        rpc_message(g)
    };
    let line = bytes_of(g, &message);
    let line = String::from_utf8_lossy(&line);
    let answer = futures::executor::block_on(handle_line(&Checking, &line));
    let parsed: Option<Value> = serde_json::from_str(&line).ok();
    let Some(answer) = answer else {
        // Only what has no id goes unanswered: notifications, and values
        // that are not messages.
        let silent = |m: &Value| m.get("id").is_none();
        return check(
            match &parsed {
                Some(Value::Array(batch)) => batch.iter().all(silent),
                Some(m) => silent(m),
                None => false,
            },
            || format!("no answer to {line:?}"),
        );
    };
    let answer: Value = serde_json::from_str(&answer)
        .map_err(|e| format!("an answer that is not JSON ({e}): {answer:?}"))?;
    match (&parsed, &answer) {
        (Some(Value::Array(batch)), Value::Array(replies)) => {
            check(replies.len() <= batch.len(), || {
                format!("{} replies to a batch of {}", replies.len(), batch.len())
            })?;
            check(replies.iter().all(|r| answers(&Value::Null, r)), || {
                format!("a reply that is not JSON-RPC in {answer}")
            })
        }
        (Some(asked @ Value::Object(_)), reply) => check(answers(asked, reply), || {
            format!("{reply} does not answer {asked}")
        }),
        (_, reply) => check(
            answers(&Value::Null, reply) && reply["error"]["code"].is_i64(),
            || format!("{reply} is not an error for a line that is not a message"),
        ),
    }
}

fn key(g: &mut Gen, ids: &[String]) -> String {
    let id = match g.below(4) {
        0 => g.text(10),
        _ if !ids.is_empty() => ids[g.below(ids.len())].clone(),
        _ => format!("{:08x}", g.u32()),
    };
    match g.below(4) {
        0 => g.text(80),
        1 => format!("trine_{id}"),
        _ => format!(
            "trine_{id}_{:016x}{:016x}{:016x}{:016x}",
            g.u32(),
            g.u32(),
            g.u32(),
            g.u32()
        ),
    }
}

/// The keys file, and a key checked against it.
pub fn keys(g: &mut Gen) -> Case {
    let ids: Vec<String> = (0..g.below(3))
        .map(|_| format!("{:08x}", g.u32()))
        .collect();
    let key = key(g, &ids);
    let digest: String = Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let records: Vec<Value> = ids
        .iter()
        .map(|id| {
            let (id, digest) = (id.clone(), digest.clone());
            object(
                g,
                &[
                    "id",
                    "name",
                    "sha256",
                    "scopes",
                    "tenants",
                    "created_at",
                    "revoked_at",
                ],
                move |g, field| match field {
                    "id" => json!(id),
                    "sha256" if g.chance(2) => json!(digest),
                    "sha256" => json!(format!("{:064x}", g.u32())),
                    "scopes" => {
                        let scope = ["read", "write", "admin", "root"][g.below(4)];
                        json!([scope])
                    }
                    "tenants" => json!(["*", g.label(16)]),
                    "created_at" | "revoked_at" => {
                        json!(["2026-11-11T09:58:00Z", "never"][g.below(2)])
                    }
                    _ => json!(g.label(32)),
                },
            )
        })
        .collect();
    let text = bytes_of(g, &json!({ "keys": records }));
    let Ok(file) = KeyFile::parse(&String::from_utf8_lossy(&text)) else {
        return Ok(());
    };
    let again = serde_json::to_string(&file)
        .map_err(|e| e.to_string())
        .and_then(|t| KeyFile::parse(&t));
    check(again.as_ref() == Ok(&file), || {
        format!("the keys file did not survive a save: {file:?} came back as {again:?}")
    })?;
    if let Ok(principal) = file.authenticate(&key) {
        let record = file
            .keys
            .iter()
            .find(|k| Some(k.id.as_str()) == key_id(&key));
        check(
            record.is_some_and(|r| r.id == principal.key && r.revoked_at.is_none()),
            || format!("{key:?} taken as {principal:?} by {file:?}"),
        )?;
    }
    Ok(())
}

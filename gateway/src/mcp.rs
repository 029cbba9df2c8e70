//! MCP (the Model Context Protocol): trine's memory as tools an agent
//! calls, over JSON-RPC 2.0 — one message a line on stdio (`trine mcp`), or
//! `POST /mcp` on the HTTP surface (streamable HTTP, answered as JSON).
//!
//! The protocol is small — `initialize`, `tools/list`, `tools/call`,
//! `ping` and notifications — so it is written here over `serde_json`
//! rather than taken from an SDK crate: no new dependency tree, and every
//! tool is a `Memory` call through a [`Backend`] (the in-process service,
//! or a gRPC client of a gateway), so the search path, the keys and the
//! tenant checks are gRPC's own.

use serde_json::{Value, json};
use tonic::{Status, async_trait};
use trine_api::json::{record_to_json, search_response_to_json};
use trine_api::v1;

/// The protocol versions this server speaks, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The `Memory` calls the tools make.
#[async_trait]
pub trait Backend: Send + Sync {
    async fn search(&self, r: v1::SearchRequest) -> Result<v1::SearchResponse, Status>;
    async fn upsert(&self, r: v1::UpsertRequest) -> Result<v1::UpsertResponse, Status>;
    async fn get(&self, r: v1::GetRequest) -> Result<v1::GetResponse, Status>;
    async fn forget(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status>;
    async fn restore(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status>;
}

/// The in-process gateway with a call's metadata (its API key).
pub struct Local<'a> {
    pub service: &'a crate::MemoryService,
    pub metadata: tonic::metadata::MetadataMap,
}

impl Local<'_> {
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        tonic::Request::from_parts(self.metadata.clone(), tonic::Extensions::default(), message)
    }
}

#[async_trait]
impl Backend for Local<'_> {
    async fn search(&self, r: v1::SearchRequest) -> Result<v1::SearchResponse, Status> {
        use v1::memory_server::Memory as _;
        self.service
            .search(self.request(r))
            .await
            .map(tonic::Response::into_inner)
    }

    async fn upsert(&self, r: v1::UpsertRequest) -> Result<v1::UpsertResponse, Status> {
        use v1::memory_server::Memory as _;
        self.service
            .upsert(self.request(r))
            .await
            .map(tonic::Response::into_inner)
    }

    async fn get(&self, r: v1::GetRequest) -> Result<v1::GetResponse, Status> {
        use v1::memory_server::Memory as _;
        self.service
            .get(self.request(r))
            .await
            .map(tonic::Response::into_inner)
    }

    async fn forget(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        use v1::memory_server::Memory as _;
        self.service
            .forget(self.request(r))
            .await
            .map(tonic::Response::into_inner)
    }

    async fn restore(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
        use v1::memory_server::Memory as _;
        self.service
            .restore(self.request(r))
            .await
            .map(tonic::Response::into_inner)
    }
}

/// The tools, as `tools/list` describes them to a model.
pub fn tools() -> Value {
    let tenant = json!({"type": "string", "description": "Whose memories: every call is confined to this tenant."});
    let id = json!({"type": "string", "description": "The memory's id (a UUID, as search or remember gave it)."});
    json!([
        {
            "name": "search",
            "description": "Search the tenant's memories. Use it before answering anything the memory may hold. An exact title, phrase or identifier (\"Meeting 2026-11-11 09:58\", \"CVE-2023-4863\") comes first when a memory holds it verbatim; a question in your own words finds memories by meaning. Returns the best memories first, each with its id, score, source, text and which lists matched (lexical, semantic, verbatim).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "A question, or the exact words to find."},
                    "tenant": tenant,
                    "mode": {"type": "string", "enum": ["hybrid", "semantic", "lexical"], "description": "hybrid (the default) for most queries; lexical for exact words only; semantic for meaning only."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many memories (default 8)."},
                    "projects": {"type": "array", "items": {"type": "string"}, "description": "Only these projects."},
                    "kinds": {"type": "array", "items": {"type": "string"}, "description": "Only these kinds."},
                    "thread": {"type": "string", "description": "Only the memories of this conversation or session (its thread id)."},
                    "as_of": {"type": "string", "description": "Read memory as it was valid at this RFC 3339 time (default: now)."},
                    "max_chars": {"type": "integer", "minimum": 1, "description": "At most this many characters of memory text in the answer, to keep your context small."},
                    "min_score": {"type": "number", "description": "Only the memories whose score is at least this (scores never rise down an answer)."}
                },
                "required": ["query", "tenant"]
            }
        },
        {
            "name": "remember",
            "description": "Store a memory for the tenant (or replace the one with the same id). Store facts, decisions and notes worth finding later, one topic a memory. Returns the memory's id.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What to remember, in full."},
                    "tenant": tenant,
                    "source": {"type": "string", "description": "Where it comes from (a path, URL or name)."},
                    "project": {"type": "string"},
                    "kind": {"type": "string", "description": "e.g. decision, note, meeting."},
                    "thread": {"type": "string", "description": "The conversation or session it belongs to (an id of your choosing, at most 256 bytes); left out, it stands alone."},
                    "seq": {"type": "integer", "minimum": 0, "description": "Its place in the thread (0, 1, 2, ...)."},
                    "id": {"type": "string", "description": "To replace an existing memory; left out, the id is derived from the content."}
                },
                "required": ["text", "tenant"]
            }
        },
        {
            "name": "get",
            "description": "Read one memory of the tenant by its id, whole.",
            "inputSchema": {"type": "object", "properties": {"id": id, "tenant": tenant}, "required": ["id", "tenant"]}
        },
        {
            "name": "forget",
            "description": "Invalidate a memory that is no longer true: from now on searches do not find it, but it is kept and `restore` brings it back. It does not delete anything.",
            "inputSchema": {"type": "object", "properties": {"id": id, "tenant": tenant}, "required": ["id", "tenant"]}
        },
        {
            "name": "restore",
            "description": "Make a forgotten memory valid again, so that searches find it.",
            "inputSchema": {"type": "object", "properties": {"id": id, "tenant": tenant}, "required": ["id", "tenant"]}
        },
        {
            "name": "health",
            "description": "Whether the memory service answers a search.",
            "inputSchema": {"type": "object", "properties": {"tenant": tenant}, "required": ["tenant"]}
        }
    ])
}

/// A tool's answer: its text for the model, and the same as structured JSON.
fn tool_result(text: String, structured: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": false,
    })
}

/// A tool's failure, told to the model (a protocol error is not its fault).
fn tool_error(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

fn string(args: &Value, key: &str) -> Result<String, String> {
    match &args[key] {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Err(format!("give {key}")),
        _ => Err(format!("{key} must be a string")),
    }
}

fn optional(args: &Value, key: &str) -> Option<String> {
    args[key].as_str().map(String::from)
}

fn strings(args: &Value, key: &str) -> Vec<String> {
    args[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn failed(s: &Status) -> String {
    format!("{:?}: {}", s.code(), s.message())
}

async fn search(backend: &dyn Backend, args: &Value) -> Result<Value, String> {
    let mode = match trine_api::mode_by_name(args["mode"].as_str().unwrap_or_default())? {
        v1::Mode::Unspecified => v1::Mode::Hybrid,
        named => named,
    };
    let limit = match args["limit"].as_u64() {
        None => 0,
        Some(n) => u32::try_from(n).map_err(|_| format!("limit {n} is too large"))?,
    };
    let valid_at =
        trine_core::model::parse_time("as_of", args["as_of"].as_str())?.map(trine_api::timestamp);
    let max_chars = match args["max_chars"].as_u64() {
        None => 0,
        Some(n) => u32::try_from(n).map_err(|_| format!("max_chars {n} is too large"))?,
    };
    let request = v1::SearchRequest {
        query: string(args, "query")?,
        filters: Some(v1::Filters {
            tenant: string(args, "tenant")?,
            projects: strings(args, "projects"),
            kinds: strings(args, "kinds"),
            thread: optional(args, "thread").unwrap_or_default(),
            valid_at,
            ..v1::Filters::default()
        }),
        limit,
        mode: mode.into(),
        max_chars,
        min_score: args["min_score"].as_f64().unwrap_or(0.0),
        ..v1::SearchRequest::default()
    };
    let answer = backend.search(request).await.map_err(|s| failed(&s))?;
    let mut text = String::new();
    if answer.hits.is_empty() {
        text.push_str("No memory matches.\n");
    }
    for (i, hit) in answer.hits.iter().enumerate() {
        let record = hit.record.clone().unwrap_or_default();
        let thread = trine_api::json::thread_place(&record)
            .map(|place| format!(", {place}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "{}. id {} (score {:.4}, matched by {}{}{thread})\n{}\n\n",
            i + 1,
            hit.id,
            hit.score,
            hit.matched_by.join(", "),
            record
                .source
                .as_deref()
                .map(|s| format!(", source {s}"))
                .unwrap_or_default(),
            record.text
        ));
    }
    if answer.degraded {
        text.push_str(&format!(
            "(partial answer: {})\n",
            answer.degraded_reasons.join("; ")
        ));
    }
    Ok(tool_result(text, search_response_to_json(&answer)))
}

/// The memory `id` of `tenant`, whole.
async fn one(backend: &dyn Backend, args: &Value) -> Result<v1::Record, String> {
    let (id, tenant) = (string(args, "id")?, string(args, "tenant")?);
    let answer = backend
        .get(v1::GetRequest {
            tenant,
            ids: vec![id.clone()],
        })
        .await
        .map_err(|s| failed(&s))?;
    answer
        .records
        .into_iter()
        .next()
        .ok_or_else(|| format!("no memory {id} in this tenant"))
}

async fn store(backend: &dyn Backend, record: v1::Record) -> Result<String, String> {
    let answer = backend
        .upsert(v1::UpsertRequest {
            records: vec![record],
        })
        .await
        .map_err(|s| failed(&s))?;
    if let Some(e) = answer.failed.first() {
        return Err(e.message.clone());
    }
    answer
        .ids
        .into_iter()
        .next()
        .ok_or_else(|| "the memory was not stored".to_string())
}

async fn call(backend: &dyn Backend, name: &str, args: &Value) -> Result<Value, String> {
    match name {
        "search" => search(backend, args).await,
        "remember" => {
            let record = v1::Record {
                id: optional(args, "id").unwrap_or_default(),
                text: string(args, "text")?,
                tenant: string(args, "tenant")?,
                source: optional(args, "source"),
                project: optional(args, "project"),
                kind: optional(args, "kind"),
                thread: optional(args, "thread"),
                seq: trine_core::model::parse_seq(args.get("seq"))?,
                ..v1::Record::default()
            };
            let id = store(backend, record).await?;
            Ok(tool_result(
                format!("Remembered as {id}."),
                json!({"id": id}),
            ))
        }
        "get" => {
            let record = one(backend, args).await?;
            Ok(tool_result(record.text.clone(), record_to_json(&record)))
        }
        "forget" | "restore" => {
            let (id, tenant) = (string(args, "id")?, string(args, "tenant")?);
            let request = v1::ValidityRequest {
                tenant,
                ids: vec![id.clone()],
            };
            let answer = if name == "forget" {
                backend.forget(request).await
            } else {
                backend.restore(request).await
            }
            .map_err(|s| failed(&s))?;
            if answer.ids.is_empty() {
                return Err(format!("no memory {id} in this tenant"));
            }
            let text = if name == "forget" {
                format!("Forgot {id}: searches no longer find it; restore brings it back.")
            } else {
                format!("Restored {id}: searches find it again.")
            };
            Ok(tool_result(text, json!({"id": id})))
        }
        "health" => {
            let request = v1::SearchRequest {
                query: "health".into(),
                filters: Some(v1::Filters {
                    tenant: string(args, "tenant")?,
                    ..v1::Filters::default()
                }),
                limit: 1,
                ..v1::SearchRequest::default()
            };
            let answer = backend.search(request).await.map_err(|s| failed(&s))?;
            let status = if answer.degraded {
                "degraded"
            } else {
                "serving"
            };
            Ok(tool_result(
                format!("trine is {status}."),
                json!({"status": status, "reasons": answer.degraded_reasons}),
            ))
        }
        other => Err(format!(
            "no tool {other:?}: use search, remember, get, forget, restore or health"
        )),
    }
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// MCP's request ids: a string or an integer, never null. (A fraction or a
/// number past 64 bits would not be echoed exactly: JSON numbers are read as
/// floats.)
fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Answers one JSON-RPC message; `None` for a notification (or a response),
/// which gets no answer.
pub async fn handle(backend: &dyn Backend, message: &Value) -> Option<Value> {
    let id = message.get("id").cloned();
    if let Some(id) = &id
        && !is_request_id(id)
    {
        // When the id cannot be read, the error's id is null (JSON-RPC 2.0).
        return Some(rpc_error(
            &Value::Null,
            -32600,
            "a request's id is a string or an integer",
        ));
    }
    let Some(method) = message["method"].as_str() else {
        // A response to nothing we asked, or not JSON-RPC.
        return id.map(|id| rpc_error(&id, -32600, "not a JSON-RPC request"));
    };
    let id = id?; // a notification: no answer
    let params = &message["params"];
    let result = match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or_default();
            let version = PROTOCOL_VERSIONS
                .iter()
                .find(|v| **v == asked)
                .unwrap_or(&PROTOCOL_VERSIONS[0]);
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "trine", "version": env!("CARGO_PKG_VERSION")},
                "instructions": "trine is this agent's long-term memory. Search it before answering what it may hold (exact titles and identifiers come first; questions find memories by meaning); remember what is worth finding later; forget what is no longer true (restore undoes it). Every call names the tenant whose memories it reads or writes."
            })
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": tools()}),
        "tools/call" => {
            let Some(name) = params["name"].as_str() else {
                return Some(rpc_error(&id, -32602, "tools/call needs the tool's name"));
            };
            let args = params.get("arguments").cloned().unwrap_or(json!({}));
            match call(backend, name, &args).await {
                Ok(result) => result,
                Err(message) => tool_error(&message),
            }
        }
        other => {
            return Some(rpc_error(&id, -32601, &format!("no method {other:?}")));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Answers one line of a stdio session (a message, or a batch of them);
/// `None` when nothing is to be written back.
pub async fn handle_line(backend: &dyn Backend, line: &str) -> Option<String> {
    let message: Value = match serde_json::from_str(line) {
        Ok(m) => m,
        Err(e) => {
            return Some(rpc_error(&Value::Null, -32700, &format!("not JSON: {e}")).to_string());
        }
    };
    match message {
        Value::Array(batch) => {
            let mut answers = Vec::new();
            for m in &batch {
                if let Some(a) = handle(backend, m).await {
                    answers.push(a);
                }
            }
            (!answers.is_empty()).then(|| Value::Array(answers).to_string())
        }
        m => handle(backend, &m).await.map(|a| a.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that answers from memory: what the tools ask of `Memory`.
    #[derive(Default)]
    struct Fake {
        records: std::sync::Mutex<Vec<v1::Record>>,
    }

    #[async_trait]
    impl Backend for Fake {
        async fn search(&self, r: v1::SearchRequest) -> Result<v1::SearchResponse, Status> {
            let now = trine_api::timestamp(chrono::Utc::now());
            let hits = self
                .records
                .lock()
                .unwrap()
                .iter()
                .filter(|m| m.text.contains(&r.query))
                .filter(|m| m.valid_until.is_none_or(|u| u.seconds > now.seconds))
                .map(|m| v1::Hit {
                    id: m.id.clone(),
                    score: 1.0,
                    record: Some(m.clone()),
                    matched_by: vec!["lexical".into()],
                    explain: None,
                })
                .collect();
            Ok(v1::SearchResponse {
                hits,
                ..v1::SearchResponse::default()
            })
        }

        async fn upsert(&self, r: v1::UpsertRequest) -> Result<v1::UpsertResponse, Status> {
            let mut records = self.records.lock().unwrap();
            let mut ids = Vec::new();
            for mut m in r.records {
                if m.id.is_empty() {
                    m.id = format!("00000000-0000-4000-8000-{:012}", records.len());
                }
                ids.push(m.id.clone());
                records.retain(|o| o.id != m.id);
                records.push(m);
            }
            Ok(v1::UpsertResponse {
                ids,
                failed: vec![],
            })
        }

        async fn get(&self, r: v1::GetRequest) -> Result<v1::GetResponse, Status> {
            let records = self
                .records
                .lock()
                .unwrap()
                .iter()
                .filter(|m| r.ids.contains(&m.id) && m.tenant == r.tenant)
                .cloned()
                .collect();
            Ok(v1::GetResponse { records })
        }

        async fn forget(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
            Ok(self.validity(r, true))
        }

        async fn restore(&self, r: v1::ValidityRequest) -> Result<v1::ValidityResponse, Status> {
            Ok(self.validity(r, false))
        }
    }

    impl Fake {
        fn validity(&self, r: v1::ValidityRequest, forget: bool) -> v1::ValidityResponse {
            let mut ids = Vec::new();
            for m in self.records.lock().unwrap().iter_mut() {
                if r.ids.contains(&m.id) && m.tenant == r.tenant {
                    m.valid_until = forget.then(|| trine_api::timestamp(chrono::Utc::now()));
                    ids.push(m.id.clone());
                }
            }
            v1::ValidityResponse { ids }
        }
    }

    async fn ask(backend: &Fake, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let answer = handle(backend, &message).await.unwrap();
        assert_eq!(answer["id"], 7);
        answer
    }

    async fn tool(backend: &Fake, name: &str, args: Value) -> Value {
        ask(
            backend,
            "tools/call",
            json!({"name": name, "arguments": args}),
        )
        .await["result"]
            .clone()
    }

    #[tokio::test]
    async fn the_protocol_answers_what_a_client_asks() {
        let backend = Fake::default();
        let init = ask(
            &backend,
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        )
        .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert!(init["result"]["capabilities"]["tools"].is_object());
        let newer = ask(
            &backend,
            "initialize",
            json!({"protocolVersion": "2099-01-01"}),
        )
        .await;
        assert_eq!(newer["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        let listed = ask(&backend, "tools/list", json!({})).await;
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["search", "remember", "get", "forget", "restore", "health"]
        );
        assert_eq!(ask(&backend, "ping", json!({})).await["result"], json!({}));
        // Ids are echoed exactly; one that cannot be (found by the mcp fuzz
        // target: a float id came back rounded) is an invalid request.
        for (id, echoed) in [
            (json!("a"), json!("a")),
            (json!(u64::MAX), json!(u64::MAX)),
            (json!(-4.398730539658057e227), Value::Null),
            (json!(1.5), Value::Null),
            (Value::Null, Value::Null),
            (json!([1]), Value::Null),
        ] {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            let line = handle_line(&backend, &message.to_string()).await.unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(answer["id"], echoed, "{id}");
            assert_eq!(answer.get("error").is_some(), echoed.is_null(), "{id}");
        }
        assert_eq!(
            ask(&backend, "nope", json!({})).await["error"]["code"],
            -32601
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(
            handle(&backend, &note).await.is_none(),
            "no answer to a notification"
        );
        let bad = handle_line(&backend, "{not json").await.unwrap();
        assert!(bad.contains("-32700"), "{bad}");
    }

    #[tokio::test]
    async fn remember_forget_restore() {
        let backend = Fake::default();
        let stored = tool(
            &backend,
            "remember",
            json!({"text": "the zebra runbook", "tenant": "acme"}),
        )
        .await;
        let id = stored["structuredContent"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let found = tool(
            &backend,
            "search",
            json!({"query": "zebra", "tenant": "acme"}),
        )
        .await;
        assert_eq!(found["structuredContent"]["hits"][0]["id"], id.as_str());
        assert!(
            found["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("the zebra runbook")
        );
        tool(&backend, "forget", json!({"id": id, "tenant": "acme"})).await;
        let gone = tool(
            &backend,
            "search",
            json!({"query": "zebra", "tenant": "acme"}),
        )
        .await;
        assert_eq!(gone["structuredContent"]["hits"], json!([]));
        let kept = tool(&backend, "get", json!({"id": id, "tenant": "acme"})).await;
        assert_eq!(kept["isError"], false, "forgotten, not deleted");
        tool(&backend, "restore", json!({"id": id, "tenant": "acme"})).await;
        let back = tool(
            &backend,
            "search",
            json!({"query": "zebra", "tenant": "acme"}),
        )
        .await;
        assert_eq!(back["structuredContent"]["hits"][0]["id"], id.as_str());
        // A tool's failure is the model's to read, not a protocol error.
        let missing = tool(&backend, "search", json!({"tenant": "acme"})).await;
        assert_eq!(missing["isError"], true);
        let other = tool(&backend, "get", json!({"id": id, "tenant": "globex"})).await;
        assert_eq!(
            other["isError"], true,
            "another tenant's memory is not there"
        );
    }

    #[tokio::test]
    async fn remember_takes_a_thread_and_its_place() {
        let backend = Fake::default();
        let stored = tool(
            &backend,
            "remember",
            json!({"text": "see you at the support group", "tenant": "acme", "thread": "chat-7", "seq": 4}),
        )
        .await;
        let id = stored["structuredContent"]["id"].as_str().unwrap();
        let got = tool(&backend, "get", json!({"id": id, "tenant": "acme"})).await;
        assert_eq!(got["structuredContent"]["thread"], "chat-7");
        assert_eq!(got["structuredContent"]["seq"], 4);
        for seq in [json!(-1), json!(1.5), json!("4")] {
            let refused = tool(
                &backend,
                "remember",
                json!({"text": "x", "tenant": "acme", "thread": "chat-7", "seq": seq}),
            )
            .await;
            assert_eq!(refused["isError"], true, "seq {seq}");
            let why = refused["content"][0]["text"].as_str().unwrap();
            assert!(
                why.contains("seq") && why.contains("non-negative integer"),
                "{why}"
            );
        }
    }
}

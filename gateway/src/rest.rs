//! The gateway's HTTP/JSON edge: the `Memory` calls as JSON over HTTP/1.1,
//! each answered by the same [`MemoryService`] method as its gRPC call —
//! one search path, the same keys (`Authorization: Bearer ...`), quotas,
//! validation and error meanings (`trine_api::http_status_of`).
//!
//! - `POST /v1/search`: a search (`trine_api::json`'s body), its hits;
//! - `POST /v1/memories`: `{"records": [...]}`, the ids stored and the
//!   refused by position;
//! - `GET /v1/memories/{id}?tenant=T`, `DELETE /v1/memories/{id}?tenant=T`,
//!   `POST /v1/memories/{id}/forget?tenant=T` and `/restore` (validity);
//! - `GET /healthz` (the process answers), `GET /readyz` (the store and every
//!   channel answer);
//! - `GET /v1/openapi.json`: the OpenAPI document of all of them;
//! - `POST /mcp`: the MCP tools (`crate::mcp`) over streamable HTTP;
//! - `GET /explain?query=..&tenant=..` (and `/`): the explain page
//!   (`crate::explain`).

use std::future::Future;
use std::sync::Arc;

use http::{Method, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tonic::metadata::MetadataMap;
use trine_api::json::{
    code_name, error_to_json, query_param, record_to_json, records_from_json,
    search_request_from_json, search_response_to_json, upsert_response_to_json,
};
use trine_api::v1::{self, memory_server::Memory as _};

use crate::MemoryService;

/// The OpenAPI document of the HTTP surface.
pub const OPENAPI: &str = include_str!("openapi.json");

/// What the HTTP surface admits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests handled at once; beyond, 429 with RESOURCE_EXHAUSTED.
    pub in_flight: usize,
    /// The largest request body; beyond, 413.
    pub body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let serving = trine_api::server::Serving::default();
        Self {
            in_flight: serving.max_in_flight,
            body_bytes: serving.max_message_bytes,
        }
    }
}

type Answer = trine_telemetry::http::Response;

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
    let mut response = http::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    response
}

fn json_answer(status: StatusCode, value: &Value) -> Answer {
    respond(status, "application/json", value.to_string())
}

/// An error answer: the gRPC code's HTTP status and `{"error": {...}}`.
fn error(code: tonic::Code, message: &str) -> Answer {
    let status = StatusCode::from_u16(trine_api::http_status_of(code))
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_answer(status, &error_to_json(code, message))
}

fn status_error(s: &tonic::Status) -> Answer {
    error(s.code(), s.message())
}

fn invalid(message: &str) -> Answer {
    error(tonic::Code::InvalidArgument, message)
}

/// A `tonic::Request` carrying the HTTP request's headers as its metadata
/// (the API key among them).
fn request<T>(headers: &http::HeaderMap, message: T) -> tonic::Request<T> {
    tonic::Request::from_parts(
        MetadataMap::from_headers(headers.clone()),
        tonic::Extensions::default(),
        message,
    )
}

/// The `tenant` of a query string.
fn tenant_of(query: Option<&str>) -> Option<String> {
    query_param(query, "tenant")
}

/// The explain page: the box, and when a query is given, its search.
async fn explain(
    service: &MemoryService,
    headers: &http::HeaderMap,
    query: Option<&str>,
) -> Answer {
    use crate::explain::{Form, page};
    let form = Form {
        query: query_param(query, "query").unwrap_or_default(),
        tenant: query_param(query, "tenant").unwrap_or_default(),
        mode: query_param(query, "mode").unwrap_or_default(),
        strategy: query_param(query, "strategy").unwrap_or_default(),
    };
    let answer = if form.query.trim().is_empty() {
        None
    } else {
        let mode = match form.mode.as_str() {
            "semantic" => v1::Mode::Semantic,
            "lexical" => v1::Mode::Lexical,
            _ => v1::Mode::Unspecified,
        };
        let message = v1::SearchRequest {
            query: form.query.clone(),
            filters: Some(v1::Filters {
                tenant: form.tenant.clone(),
                ..v1::Filters::default()
            }),
            mode: mode.into(),
            strategy: form.strategy.clone(),
            ..v1::SearchRequest::default()
        };
        Some(
            service
                .search(request(headers, message))
                .await
                .map(tonic::Response::into_inner)
                .map_err(|s| (code_name(s.code()), s.message().to_string())),
        )
    };
    respond(
        StatusCode::OK,
        "text/html; charset=utf-8",
        page(&form, answer),
    )
}

async fn search(service: &MemoryService, headers: &http::HeaderMap, body: &[u8]) -> Answer {
    let message = match search_request_from_json(body) {
        Ok(m) => m,
        Err(e) => return invalid(&e),
    };
    match service.search(request(headers, message)).await {
        Ok(answer) => json_answer(
            StatusCode::OK,
            &search_response_to_json(&answer.into_inner()),
        ),
        Err(s) => status_error(&s),
    }
}

async fn upsert(service: &MemoryService, headers: &http::HeaderMap, body: &[u8]) -> Answer {
    let (valid, mut failed) = match records_from_json(body) {
        Ok(parsed) => parsed,
        Err(e) => return invalid(&e),
    };
    let (positions, records): (Vec<u32>, Vec<v1::Record>) = valid.into_iter().unzip();
    let message = v1::UpsertRequest { records };
    match service.upsert(request(headers, message)).await {
        Ok(answer) => {
            let mut answer = answer.into_inner();
            for e in &mut answer.failed {
                e.index = positions
                    .get(usize::try_from(e.index).unwrap_or(usize::MAX))
                    .copied()
                    .unwrap_or(e.index);
            }
            failed.append(&mut answer.failed);
            failed.sort_by_key(|e| e.index);
            answer.failed = failed;
            json_answer(StatusCode::OK, &upsert_response_to_json(&answer))
        }
        Err(s) => status_error(&s),
    }
}

/// MCP's streamable HTTP transport, answered as JSON: a request gets its
/// response, a notification 202 Accepted.
async fn mcp(service: &MemoryService, headers: &http::HeaderMap, body: &[u8]) -> Answer {
    let backend = crate::mcp::Local {
        service,
        metadata: MetadataMap::from_headers(headers.clone()),
    };
    let line = String::from_utf8_lossy(body);
    match crate::mcp::handle_line(&backend, &line).await {
        Some(answer) => respond(StatusCode::OK, "application/json", answer),
        None => respond(StatusCode::ACCEPTED, "application/json", ""),
    }
}

/// `POST /v1/memories/{id}/forget` or `/restore` (`?tenant=`).
async fn validity(
    service: &MemoryService,
    headers: &http::HeaderMap,
    id: &str,
    verb: &str,
    query: Option<&str>,
) -> Answer {
    let Some(tenant) = tenant_of(query) else {
        return invalid("give the tenant: ?tenant=NAME");
    };
    let message = v1::ValidityRequest {
        tenant,
        ids: vec![id.to_string()],
    };
    let answer = if verb == "forget" {
        service.forget(request(headers, message)).await
    } else {
        service.restore(request(headers, message)).await
    };
    match answer {
        Ok(answer) => match answer.into_inner().ids.first() {
            Some(id) => json_answer(StatusCode::OK, &json!({"id": id, verb: true})),
            None => error(
                tonic::Code::NotFound,
                &format!("no memory {id} in this tenant"),
            ),
        },
        Err(s) => status_error(&s),
    }
}

async fn one(
    service: &MemoryService,
    method: &Method,
    headers: &http::HeaderMap,
    id: &str,
    query: Option<&str>,
) -> Answer {
    let Some(tenant) = tenant_of(query) else {
        return invalid("give the tenant: ?tenant=NAME");
    };
    let ids = vec![id.to_string()];
    if method == Method::DELETE {
        return match service
            .delete(request(headers, v1::DeleteRequest { tenant, ids }))
            .await
        {
            Ok(answer) => json_answer(
                StatusCode::OK,
                &json!({"deleted": answer.into_inner().deleted}),
            ),
            Err(s) => status_error(&s),
        };
    }
    match service
        .get(request(headers, v1::GetRequest { tenant, ids }))
        .await
    {
        Ok(answer) => match answer.into_inner().records.first() {
            Some(record) => json_answer(StatusCode::OK, &record_to_json(record)),
            None => error(
                tonic::Code::NotFound,
                &format!("no memory {id} in this tenant"),
            ),
        },
        Err(s) => status_error(&s),
    }
}

/// Answers one HTTP request.
pub async fn answer(
    service: &MemoryService,
    request: http::Request<Incoming>,
    limits: Limits,
) -> Answer {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let method = parts.method.clone();
    let needs_body = method == Method::POST;
    let body = if needs_body {
        match Limited::new(body, limits.body_bytes).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => {
                return json_answer(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &error_to_json(
                        tonic::Code::InvalidArgument,
                        &format!(
                            "the body is over {} bytes, or was cut off",
                            limits.body_bytes
                        ),
                    ),
                );
            }
        }
    } else {
        Bytes::new()
    };
    let headers = &parts.headers;
    match (&method, path.as_str()) {
        (&Method::GET, "/healthz") => json_answer(StatusCode::OK, &json!({"status": "ok"})),
        (&Method::GET, "/readyz") => match service.ready().await {
            Ok(()) => json_answer(StatusCode::OK, &json!({"status": "ready"})),
            Err(why) => json_answer(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({"status": "unready", "reason": why.to_string(), "starting": why.starting}),
            ),
        },
        (&Method::GET, "/v1/openapi.json") => respond(StatusCode::OK, "application/json", OPENAPI),
        (&Method::GET, "/explain" | "/") => explain(service, headers, query.as_deref()).await,
        (&Method::POST, "/v1/search") => search(service, headers, &body).await,
        (&Method::POST, "/v1/memories") => upsert(service, headers, &body).await,
        (&Method::POST, "/mcp") => mcp(service, headers, &body).await,
        (&Method::POST, p)
            if p.starts_with("/v1/memories/")
                && (p.ends_with("/forget") || p.ends_with("/restore")) =>
        {
            let (id, verb) = p["/v1/memories/".len()..]
                .rsplit_once('/')
                .unwrap_or_default();
            validity(service, headers, id, verb, query.as_deref()).await
        }
        (&Method::GET | &Method::DELETE, p) if p.starts_with("/v1/memories/") => {
            let id = &p["/v1/memories/".len()..];
            one(service, &method, headers, id, query.as_deref()).await
        }
        (
            _,
            "/healthz" | "/readyz" | "/v1/openapi.json" | "/v1/search" | "/v1/memories" | "/mcp",
        ) => json_answer(
            StatusCode::METHOD_NOT_ALLOWED,
            &error_to_json(
                tonic::Code::InvalidArgument,
                &format!("{method} is not served on {path} (see /v1/openapi.json)"),
            ),
        ),
        _ => error(
            tonic::Code::NotFound,
            &format!("nothing is served on {path} (see /v1/openapi.json)"),
        ),
    }
}

/// Serves the HTTP surface of `service` on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    service: MemoryService,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let admitted = Arc::new(Semaphore::new(limits.in_flight.max(1)));
    let handle = move |request: http::Request<Incoming>| {
        let (service, admitted) = (service.clone(), admitted.clone());
        async move {
            let Ok(_permit) = admitted.try_acquire() else {
                return error(
                    tonic::Code::ResourceExhausted,
                    "the gateway is at its limit of requests in flight: retry shortly",
                );
            };
            answer(&service, request, limits).await
        }
    };
    trine_telemetry::http::serve(listener, "http", handle, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tenant_comes_from_the_query_string() {
        let table: &[(Option<&str>, Option<&str>)] = &[
            (Some("tenant=acme"), Some("acme")),
            (Some("x=1&tenant=a%20b"), Some("a b")),
            (Some("tenant=a+b"), Some("a b")),
            (Some("tenant=%zz"), Some("%zz")),
            (Some("tenant=%4"), Some("%4")),
            (Some("other=1"), None),
            (None, None),
        ];
        for (query, want) in table {
            assert_eq!(tenant_of(*query).as_deref(), *want, "{query:?}");
        }
    }

    #[test]
    fn the_openapi_document_names_every_path() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        for (path, method) in [
            ("/v1/search", "post"),
            ("/v1/memories", "post"),
            ("/v1/memories/{id}", "get"),
            ("/v1/memories/{id}", "delete"),
            ("/healthz", "get"),
            ("/readyz", "get"),
        ] {
            assert!(
                doc["paths"][path][method]["responses"].is_object(),
                "{method} {path}"
            );
        }
    }
}

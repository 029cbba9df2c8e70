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

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Path, RawQuery, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, Method, StatusCode, Uri, header};
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

type Answer = Response;

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
    (status, [(header::CONTENT_TYPE, content_type)], body.into()).into_response()
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
fn request<T>(headers: &HeaderMap, message: T) -> tonic::Request<T> {
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
    State(http): State<Http>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Answer {
    use crate::explain::{Form, page};
    let (service, headers, query) = (&http.service, &headers, query.as_deref());
    let form = Form {
        query: query_param(query, "query").unwrap_or_default(),
        tenant: query_param(query, "tenant").unwrap_or_default(),
        mode: query_param(query, "mode").unwrap_or_default(),
        strategy: query_param(query, "strategy").unwrap_or_default(),
    };
    let answer = if form.query.trim().is_empty() {
        None
    } else {
        let mode = trine_api::mode_by_name(&form.mode).unwrap_or(v1::Mode::Unspecified);
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

async fn search(State(http): State<Http>, headers: HeaderMap, Body(body): Body) -> Answer {
    let (service, headers) = (&http.service, &headers);
    let message = match search_request_from_json(&body) {
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

async fn upsert(State(http): State<Http>, headers: HeaderMap, Body(body): Body) -> Answer {
    let (service, headers) = (&http.service, &headers);
    let (valid, mut failed) = match records_from_json(&body) {
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
async fn mcp(State(http): State<Http>, headers: HeaderMap, Body(body): Body) -> Answer {
    let backend = crate::mcp::Local {
        service: &http.service,
        metadata: MetadataMap::from_headers(headers),
    };
    let line = String::from_utf8_lossy(&body);
    match crate::mcp::handle_line(&backend, &line).await {
        Some(answer) => respond(StatusCode::OK, "application/json", answer),
        None => respond(StatusCode::ACCEPTED, "application/json", ""),
    }
}

/// `POST /v1/memories/{id}/forget` or `/restore` (`?tenant=`).
async fn validity(
    State(http): State<Http>,
    headers: HeaderMap,
    Path((id, verb)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    uri: Uri,
) -> Answer {
    if verb != "forget" && verb != "restore" {
        return not_found(uri).await;
    }
    let (service, headers, verb) = (&http.service, &headers, verb.as_str());
    let Some(tenant) = tenant_of(query.as_deref()) else {
        return invalid("give the tenant: ?tenant=NAME");
    };
    let message = v1::ValidityRequest {
        tenant,
        ids: vec![id.clone()],
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

/// `GET` or `DELETE /v1/memories/{id}` (`?tenant=`).
async fn one(
    State(http): State<Http>,
    method: Method,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Answer {
    let (service, headers) = (&http.service, &headers);
    let Some(tenant) = tenant_of(query.as_deref()) else {
        return invalid("give the tenant: ?tenant=NAME");
    };
    let ids = vec![id.clone()];
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

/// What every handler shares: the service, and the body limit it names
/// when a body is refused.
#[derive(Clone)]
struct Http {
    service: MemoryService,
    body_bytes: usize,
}

/// A request's whole body; refused with 413 when it is over the limit (or
/// was cut off): the limit is `DefaultBodyLimit`'s, the answer trine's.
struct Body(Bytes);

impl FromRequest<Http> for Body {
    type Rejection = Answer;

    async fn from_request(request: Request, http: &Http) -> Result<Self, Answer> {
        match Bytes::from_request(request, http).await {
            Ok(bytes) => Ok(Self(bytes)),
            Err(_) => Err(json_answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                &error_to_json(
                    tonic::Code::InvalidArgument,
                    &format!("the body is over {} bytes, or was cut off", http.body_bytes),
                ),
            )),
        }
    }
}

async fn healthz() -> Answer {
    json_answer(StatusCode::OK, &json!({"status": "ok"}))
}

async fn readyz(State(http): State<Http>) -> Answer {
    match http.service.ready().await {
        Ok(()) => json_answer(StatusCode::OK, &json!({"status": "ready"})),
        Err(why) => json_answer(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "unready", "reason": why.to_string(), "starting": why.starting}),
        ),
    }
}

async fn openapi() -> Answer {
    respond(StatusCode::OK, "application/json", OPENAPI)
}

async fn not_found(uri: Uri) -> Answer {
    error(
        tonic::Code::NotFound,
        &format!("nothing is served on {} (see /v1/openapi.json)", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Answer {
    json_answer(
        StatusCode::METHOD_NOT_ALLOWED,
        &error_to_json(
            tonic::Code::InvalidArgument,
            &format!(
                "{method} is not served on {} (see /v1/openapi.json)",
                uri.path()
            ),
        ),
    )
}

/// A request beyond the in-flight limit is refused at once (429), never
/// queued.
async fn admit(State(admitted): State<Arc<Semaphore>>, request: Request, next: Next) -> Answer {
    let Ok(_permit) = admitted.try_acquire() else {
        return error(
            tonic::Code::ResourceExhausted,
            "the gateway is at its limit of requests in flight: retry shortly",
        );
    };
    next.run(request).await
}

/// The HTTP surface of `service` (see the module), within `limits`.
pub fn router(service: MemoryService, limits: Limits) -> Router {
    let admitted = Arc::new(Semaphore::new(limits.in_flight.max(1)));
    let http = Http {
        service,
        body_bytes: limits.body_bytes,
    };
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/openapi.json", get(openapi))
        .route("/", get(explain))
        .route("/explain", get(explain))
        .route("/v1/search", post(search))
        .route("/v1/memories", post(upsert))
        .route("/v1/memories/{id}", get(one).delete(one))
        .route("/v1/memories/{id}/{verb}", post(validity))
        .route("/mcp", post(mcp))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(http)
        .layer(DefaultBodyLimit::max(limits.body_bytes))
        .layer(middleware::from_fn_with_state(admitted, admit))
}

/// Serves the HTTP surface of `service` on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    service: MemoryService,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(service, limits))
        .with_graceful_shutdown(shutdown)
        .await
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

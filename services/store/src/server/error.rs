//! Store errors of failed Qdrant calls: gRPC codes to [`StoreError`] kinds, with the node and collection named.

use super::*;

/// gRPC status codes (tonic's `Code` as i32; tonic is not a direct dependency).
pub(super) mod code {
    pub const CANCELLED: i32 = 1;
    pub const INVALID_ARGUMENT: i32 = 3;
    pub const DEADLINE_EXCEEDED: i32 = 4;
    pub const NOT_FOUND: i32 = 5;
    pub const PERMISSION_DENIED: i32 = 7;
    pub const INTERNAL: i32 = 13;
    pub const UNAVAILABLE: i32 = 14;
    pub const UNAUTHENTICATED: i32 = 16;
}

/// The store error of a failed client call.
pub(super) fn client_error(e: QdrantError, url: &str, collection: &str) -> StoreError {
    match e {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => {
            status_error(i32::from(status.code()), status.message(), url, collection)
        }
        QdrantError::InvalidUri(e) => StoreError::invalid("qdrant url", format!("`{url}`: {e}")),
        other => StoreError::Backend(other.to_string()),
    }
}

/// The store error of a gRPC status from the server (or the client's channel).
pub(super) fn status_error(code: i32, message: &str, url: &str, collection: &str) -> StoreError {
    let unreachable = |why: String| StoreError::Unreachable {
        url: url.to_string(),
        why,
    };
    match code {
        code::NOT_FOUND if message.to_lowercase().contains("collection") => {
            StoreError::NoCollection(collection.to_string())
        }
        // A call whose connection was reset under it ends CANCELLED on the
        // client's side (a call trine gave up is never awaited).
        code::UNAVAILABLE | code::DEADLINE_EXCEEDED | code::CANCELLED => {
            unreachable(hinted(message, url))
        }
        // The client's channel reports a failed connect as `Internal`.
        code::INTERNAL if message.starts_with("Failed to connect") => {
            unreachable(hinted(message, url))
        }
        code::UNAUTHENTICATED | code::PERMISSION_DENIED => unreachable(format!(
            "{message}: set {API_KEY_ENV} to a key the server accepts"
        )),
        code::INVALID_ARGUMENT => StoreError::invalid("request", message.to_string()),
        _ => StoreError::Backend(format!("{message} (grpc code {code})")),
    }
}

/// A short reason for a client error of the node at `url`, for
/// [`StoreError::Unreachable`].
pub(super) fn why(e: &QdrantError, url: &str) -> String {
    match e {
        QdrantError::ResponseError { status }
        | QdrantError::ResourceExhaustedError { status, .. } => hinted(status.message(), url),
        other => hinted(&other.to_string(), url),
    }
}

/// A failed connect's message with what to do when its cause is TLS: a
/// server certificate no trusted root signs, or plaintext to a TLS port.
fn hinted(message: &str, url: &str) -> String {
    let hint = if message.contains("InvalidCertificate") {
        ": the server's TLS certificate is not trusted: add its CA to the system's roots \
         or name the CA's PEM file in SSL_CERT_FILE"
    } else if message.contains("h2 protocol error") && url.starts_with("http://") {
        ": if the server has TLS on, use https://"
    } else {
        ""
    };
    format!("{message}{hint}")
}

pub(super) fn no_dense_vector(collection: &str) -> StoreError {
    StoreError::invalid(
        "collection",
        format!(
            "`{collection}` has no `{DENSE_VECTOR}` vector: it was not created by trine; \
             use another `--collection`"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn status_codes_map_to_store_errors() {
        let cases: Vec<(i32, &str, fn(&StoreError) -> bool)> = vec![
            (
                code::NOT_FOUND,
                "Not found: Collection `c` doesn't exist!",
                |e| matches!(e, StoreError::NoCollection(c) if c == "c"),
            ),
            (
                code::UNAVAILABLE,
                "connection refused",
                |e| matches!(e, StoreError::Unreachable { url, .. } if url == "http://q:6334"),
            ),
            (code::DEADLINE_EXCEEDED, "timeout", |e| {
                matches!(e, StoreError::Unreachable { .. })
            }),
            (code::CANCELLED, "operation was canceled", |e| {
                matches!(e, StoreError::Unreachable { .. })
            }),
            (
                code::INTERNAL,
                "Failed to connect to http://q:6334/: refused",
                |e| matches!(e, StoreError::Unreachable { .. }),
            ),
            (
                code::UNAUTHENTICATED,
                "bad key",
                |e| matches!(e, StoreError::Unreachable { why, .. } if why.contains(API_KEY_ENV)),
            ),
            (code::INVALID_ARGUMENT, "Wrong input", |e| {
                matches!(e, StoreError::Invalid { .. })
            }),
            (code::INTERNAL, "service internal error", |e| {
                matches!(e, StoreError::Backend(_))
            }),
            (code::NOT_FOUND, "No point with id", |e| {
                matches!(e, StoreError::Backend(_))
            }),
        ];
        for (code, message, ok) in cases {
            let e = status_error(code, message, "http://q:6334", "c");
            assert!(ok(&e), "{code} {message}: {e:?}");
        }
    }

    #[test]
    fn a_failed_tls_connect_says_what_to_do() {
        let cases = [
            (
                "Failed to connect to https://q:6334/: ConnectError(Custom { kind: InvalidData, \
                 error: InvalidCertificate(UnknownIssuer) })",
                "https://q:6334",
                Some("SSL_CERT_FILE"),
            ),
            (
                "h2 protocol error: http2 error",
                "http://q:6334",
                Some("use https://"),
            ),
            ("h2 protocol error: http2 error", "https://q:6334", None),
            ("connection refused", "http://q:6334", None),
        ];
        for (message, url, hint) in cases {
            let said = hinted(message, url);
            assert!(said.starts_with(message), "{said}");
            match hint {
                Some(hint) => assert!(said.contains(hint), "{message}: {said}"),
                None => assert_eq!(said, message),
            }
        }
    }
}

//! The two calls of Qdrant's REST API that its gRPC API does not have: a
//! collection snapshot's download and its upload (a restore), over HTTP/1.1
//! on the node's REST port, streamed to and from a file (a snapshot can be
//! larger than memory). Plain HTTP only.

use std::path::Path;

use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Bytes, Frame};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// The REST address of the node whose gRPC address is `grpc`: the same
/// host, the port before (Qdrant's defaults: 6333 and 6334).
pub(crate) fn rest_of(grpc: &str) -> Result<String> {
    let (base, port) = grpc
        .trim_end_matches('/')
        .rsplit_once(':')
        .and_then(|(base, port)| Some((base, port.parse::<u16>().ok()?)))
        .ok_or_else(|| {
            StoreError::invalid(
                "qdrant url",
                format!("`{grpc}` has no port: give each node as http://host:6334"),
            )
        })?;
    Ok(format!("{base}:{}", port.saturating_sub(1)))
}

/// `host:port` and the path of a plain-HTTP URL.
fn split(url: &str) -> Result<(String, String)> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        StoreError::invalid(
            "qdrant REST url",
            format!("`{url}`: backups reach Qdrant's REST port over plain http:// only"),
        )
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    Ok((authority.to_string(), path.to_string()))
}

async fn send<B>(
    url: &str,
    request: http::Request<B>,
) -> Result<http::Response<hyper::body::Incoming>>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (authority, _) = split(url)?;
    let unreachable = |why: String| StoreError::Unreachable {
        url: url.to_string(),
        why,
    };
    let stream = tokio::net::TcpStream::connect(&authority)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
        .send_request(request)
        .await
        .map_err(|e| unreachable(e.to_string()))
}

fn request(
    method: http::Method,
    url: &str,
    api_key: Option<&str>,
) -> Result<http::request::Builder> {
    let (authority, path) = split(url)?;
    let mut builder = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, authority);
    if let Some(key) = api_key {
        builder = builder.header("api-key", key);
    }
    Ok(builder)
}

/// Fails with the response's body when its status is not a success.
async fn ok(
    url: &str,
    response: http::Response<hyper::body::Incoming>,
) -> Result<http::Response<hyper::body::Incoming>> {
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    Err(StoreError::Backend(format!("{url}: {status}: {body}")))
}

/// Downloads `url` into the file `to`; its size.
pub(crate) async fn download(url: &str, api_key: Option<&str>, to: &Path) -> Result<u64> {
    let get = request(http::Method::GET, url, api_key)?
        .body(http_body_util::Empty::<Bytes>::new())
        .map_err(|e| StoreError::Backend(e.to_string()))?;
    let response = ok(url, send(url, get).await?).await?;
    let io = |source| StoreError::Io {
        path: to.to_path_buf(),
        source,
    };
    let mut file = tokio::fs::File::create(to).await.map_err(io)?;
    let mut body = response.into_body();
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| StoreError::Unreachable {
            url: url.to_string(),
            why: e.to_string(),
        })?;
        if let Ok(data) = frame.into_data() {
            bytes += data.len() as u64;
            file.write_all(&data).await.map_err(io)?;
        }
    }
    file.sync_all().await.map_err(io)?;
    Ok(bytes)
}

/// Uploads the file `from` to `url` as the `snapshot` field of a
/// multipart form (Qdrant's snapshot upload), streamed.
pub(crate) async fn upload(url: &str, api_key: Option<&str>, from: &Path) -> Result<()> {
    let io = |source| StoreError::Io {
        path: from.to_path_buf(),
        source,
    };
    let file = tokio::fs::File::open(from).await.map_err(io)?;
    let size = file.metadata().await.map_err(io)?.len();
    let boundary = format!("trine-{}", Uuid::new_v4().simple());
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"snapshot\"; filename=\"snapshot\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let length = head.len() as u64 + size + tail.len() as u64;
    enum Part {
        Head(tokio::fs::File),
        File(tokio::fs::File),
        Done,
    }
    let (head, tail) = (Bytes::from(head), Bytes::from(tail));
    let stream = futures::stream::unfold(Part::Head(file), move |part| {
        let (head, tail) = (head.clone(), tail.clone());
        async move {
            match part {
                Part::Head(file) => Some((Ok(Frame::data(head)), Part::File(file))),
                Part::File(mut file) => {
                    let mut buffer = vec![0u8; 1 << 20];
                    match file.read(&mut buffer).await {
                        Ok(0) => Some((Ok(Frame::data(tail)), Part::Done)),
                        Ok(n) => {
                            buffer.truncate(n);
                            Some((Ok(Frame::data(Bytes::from(buffer))), Part::File(file)))
                        }
                        Err(e) => Some((Err(e), Part::Done)),
                    }
                }
                Part::Done => None,
            }
        }
    });
    let post = request(http::Method::POST, url, api_key)?
        .header(
            http::header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .header(http::header::CONTENT_LENGTH, length)
        .body(StreamBody::new(stream))
        .map_err(|e| StoreError::Backend(e.to_string()))?;
    ok(url, send(url, post).await?).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_port_is_the_one_before_the_grpc_port() {
        assert_eq!(rest_of("http://q:6334").unwrap(), "http://q:6333");
        assert_eq!(
            rest_of("http://127.0.0.1:27981/").unwrap(),
            "http://127.0.0.1:27980"
        );
        assert!(rest_of("http://q").is_err());
    }

    #[test]
    fn only_plain_http_is_spoken() {
        assert_eq!(
            split("http://q:6333/collections/c/snapshots/s").unwrap(),
            (
                "q:6333".to_string(),
                "/collections/c/snapshots/s".to_string()
            )
        );
        assert!(split("https://q:6333/x").is_err());
    }
}

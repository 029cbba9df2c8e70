//! One HTTP/1.1 server loop for trine's plain-HTTP endpoints (`/metrics`,
//! the gateway's HTTP/JSON surface): accept until `shutdown`, one task a
//! connection, each request answered by `handle`.

use std::convert::Infallible;
use std::future::Future;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A whole response body.
pub type Response = http::Response<Full<Bytes>>;

/// Serves `handle` on `listener` until `shutdown` resolves; `what` names the
/// endpoint in the logs.
pub async fn serve<F, Fut>(
    listener: TcpListener,
    what: &'static str,
    handle: F,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()>
where
    F: Fn(http::Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, endpoint = what, "cannot accept");
                    continue;
                }
            },
        };
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
                let answer = handle(request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, endpoint = what, "a connection ended");
            }
        });
    }
}

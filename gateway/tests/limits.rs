//! The limits that keep one caller from starving the others, on the real
//! surfaces: an HTTP body over its limit is 413, a request beyond the HTTP
//! surface's in-flight limit is 429 (and the next after it is served), a gRPC
//! message over `max_message_bytes` is refused before it is decoded.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tonic::Code;
use trine_api::v1::UpsertRequest;
use trine_api::v1::memory_client::MemoryClient;
use trine_embed::HashEmbedder;
use trine_gateway::rest::Limits;
use trine_gateway::{MemoryService, Writer};
use trine_store::{EdgeStore, Store};

fn service(dir: &std::path::Path) -> MemoryService {
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir, "memories").unwrap());
    MemoryService::new(Writer::new(store, Arc::new(HashEmbedder::new(64))))
}

/// The status code of the HTTP/1.1 answer read from `stream`.
async fn status(stream: &mut TcpStream) -> u16 {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n") {
        assert_eq!(
            stream.read(&mut byte).await.unwrap(),
            1,
            "the connection closed"
        );
        head.push(byte[0]);
    }
    let line = String::from_utf8(head).unwrap();
    line.split(' ').nth(1).unwrap().parse().unwrap()
}

async fn get(addr: std::net::SocketAddr, path: &str) -> u16 {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).await.unwrap();
    status(&mut s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bodies_over_the_limit_are_413_and_requests_beyond_the_in_flight_limit_429() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits {
        in_flight: 1,
        body_bytes: 1024,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(trine_gateway::rest::serve(
        listener,
        service(dir.path()),
        limits,
        async {
            stopped.await.ok();
        },
    ));

    // A body over 1,024 bytes: 413, whatever it holds.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let body = format!("{{\"query\": \"{}\"}}", "x".repeat(2_000));
    let request = format!(
        "POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(status(&mut s).await, 413);

    // One request in flight: a body announced and not yet sent holds the
    // only place; every other request is 429 until it ends.
    // A held request that comes in while a probe holds the place is
    // refused at once (its answer is there to read): another is held.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut held = 'held: loop {
        let mut held = TcpStream::connect(addr).await.unwrap();
        held.write_all(
            b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{\"query\"",
        )
        .await
        .unwrap();
        loop {
            assert!(Instant::now() < deadline, "no 429 while a request is held");
            let code = get(addr, "/healthz").await;
            if code == 429 {
                break 'held held;
            }
            assert_eq!(code, 200, "served before the held request is admitted");
            match held.try_read(&mut [0u8; 1]) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                _ => continue 'held,
            }
            tokio::task::yield_now().await;
        }
    };
    held.write_all(b": \"meeting\", \"tenant\": \"acme\"}    ")
        .await
        .unwrap();
    let code = status(&mut held).await;
    assert_ne!(code, 429, "the held request is answered");
    assert_eq!(get(addr, "/healthz").await, 200, "its place is free again");

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_messages_over_the_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = trine_api::server::Serving {
        max_message_bytes: 4_096,
        ..trine_api::server::Serving::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(trine_gateway::run(
        listener,
        service(dir.path()),
        serving,
        async {
            stopped.await.ok();
        },
    ));
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let id = "00000000-0000-4000-8000-000000000001";
    let small = UpsertRequest {
        records: vec![common::record(id, "acme", "Meeting 2026-11-11 09:58")],
    };
    client.upsert(small).await.unwrap();
    let large = UpsertRequest {
        records: vec![common::record(id, "acme", &"meeting ".repeat(1_000))],
    };
    let e = client.upsert(large).await.unwrap_err();
    assert_eq!(e.code(), Code::OutOfRange, "{}", e.message());
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

//! `trine refusals`: how much work hostile requests cost before they are
//! refused — a 4 MiB query, a filter of 10,000 projects, a metadata bomb (a
//! record whose metadata has 280,000 fields, 6 MB), 100,000 ids. (Nesting
//! is bounded by prost's decoder: past 100 levels a message does not
//! decode.)
//! Each request is encoded once; then, many times, decoded as the server
//! decodes it and handed to the gateway's handler, each part timed. The
//! gateway is the real one over an embedded store in a temporary directory,
//! its search peers never reached (every request is refused before). Then
//! each is sent once over gRPC on loopback, for the code on the wire.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message;
use prost_types::{Struct, Value, value::Kind};
use serde::Serialize;
use tonic::{Code, Request};
use trine_api::server::Serving;
use trine_api::v1::memory_client::MemoryClient;
use trine_api::v1::memory_server::Memory as _;
use trine_api::v1::{self, Filters, Record, SearchRequest, UpsertRequest};
use trine_embed::HashEmbedder;
use trine_gateway::{MemoryService, Writer};
use trine_mesh::{MeshConfig, PeerAddrs};
use trine_store::{EdgeStore, Store};

use trine_config::CmdResult;

use crate::bench::Summary;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Times each request is decoded and refused (after 10 not counted)
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub iterations: u32,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

/// One hostile request and what refusing it cost.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    pub request: &'static str,
    pub bytes: usize,
    /// The gRPC code (Upsert: the record's item error, with its message).
    pub code: String,
    pub message: String,
    /// Over gRPC on loopback, once.
    pub wire_code: String,
    /// Microseconds.
    pub decode: Summary,
    pub handler: Summary,
    pub total: Summary,
}

enum Hostile {
    Search(Box<SearchRequest>),
    Upsert(UpsertRequest),
    Get(v1::GetRequest),
}

fn acme() -> Option<Filters> {
    Some(Filters {
        tenant: "acme".to_string(),
        ..Filters::default()
    })
}

fn record(metadata: Struct) -> UpsertRequest {
    UpsertRequest {
        records: vec![Record {
            text: "a memory with a metadata bomb".to_string(),
            tenant: "acme".to_string(),
            metadata: Some(metadata),
            ..Record::default()
        }],
    }
}

fn hostile() -> Vec<(&'static str, Hostile)> {
    let number = |n: f64| Value {
        kind: Some(Kind::NumberValue(n)),
    };
    let wide = Struct {
        fields: (0..280_000)
            .map(|i| (format!("k{i}"), number(1.0)))
            .collect(),
    };
    vec![
        (
            "search, 4 MiB query",
            Hostile::Search(Box::new(SearchRequest {
                query: "meeting ".repeat(512 * 1024),
                filters: acme(),
                ..SearchRequest::default()
            })),
        ),
        (
            "search, 10,000-project filter",
            Hostile::Search(Box::new(SearchRequest {
                query: "Meeting 2026-11-11 09:58".to_string(),
                filters: Some(Filters {
                    tenant: "acme".to_string(),
                    projects: (0..10_000).map(|i| format!("p{i}")).collect(),
                    ..Filters::default()
                }),
                ..SearchRequest::default()
            })),
        ),
        (
            "upsert, 6 MB of metadata fields",
            Hostile::Upsert(record(wide)),
        ),
        (
            "get, 100,000 ids",
            Hostile::Get(v1::GetRequest {
                tenant: "acme".to_string(),
                ids: (0..100_000)
                    .map(|i| format!("00000000-0000-4000-8000-{i:012}"))
                    .collect(),
            }),
        ),
    ]
}

impl Hostile {
    fn encode(&self) -> Vec<u8> {
        match self {
            Hostile::Search(m) => m.encode_to_vec(),
            Hostile::Upsert(m) => m.encode_to_vec(),
            Hostile::Get(m) => m.encode_to_vec(),
        }
    }

    /// Decodes `bytes` as the server does (the codec's wire check, then
    /// prost) and calls the handler: (decode time, handler time, code,
    /// message).
    async fn refuse(
        &self,
        service: &MemoryService,
        bytes: &[u8],
    ) -> Result<(Duration, Duration, Code, String), String> {
        let decoding = Instant::now();
        let refused = match self {
            Hostile::Search(_) => match decode::<SearchRequest>(bytes)? {
                Ok(m) => handled(decoding, service.search(Request::new(m))).await,
                Err(why) => (decoding.elapsed(), Duration::ZERO, Some(why)),
            },
            Hostile::Upsert(_) => match decode::<UpsertRequest>(bytes)? {
                Ok(m) => handled(decoding, service.upsert(Request::new(m))).await,
                Err(why) => (decoding.elapsed(), Duration::ZERO, Some(why)),
            },
            Hostile::Get(_) => match decode::<v1::GetRequest>(bytes)? {
                Ok(m) => handled(decoding, service.get(Request::new(m))).await,
                Err(why) => (decoding.elapsed(), Duration::ZERO, Some(why)),
            },
        };
        let (decoded, handled, refused) = refused;
        let (code, message) = refused.ok_or("the request was accepted, not refused")?;
        Ok((decoded, handled, code, message))
    }

    /// The code of this request sent over gRPC.
    async fn over_the_wire(&self, client: &mut MemoryClient<tonic::transport::Channel>) -> String {
        let code = match self {
            Hostile::Search(m) => client.search(*m.clone()).await.err().map(|s| s.code()),
            Hostile::Upsert(m) => match client.upsert(m.clone()).await {
                Ok(answer) if !answer.get_ref().failed.is_empty() => Some(Code::InvalidArgument),
                Ok(_) => None,
                Err(s) => Some(s.code()),
            },
            Hostile::Get(m) => client.get(m.clone()).await.err().map(|s| s.code()),
        };
        code.map_or_else(|| "accepted".to_string(), |c| format!("{c:?}"))
    }
}

/// Each hostile request refused `iterations` times (after 10 not counted),
/// then once over gRPC.
async fn measure(
    service: &MemoryService,
    client: &mut MemoryClient<tonic::transport::Channel>,
    iterations: u32,
) -> Result<Vec<Refusal>, String> {
    let mut refusals = Vec::new();
    for (name, request) in hostile() {
        let bytes = request.encode();
        let (mut decode, mut handler, mut total) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = (Code::Ok, String::new());
        for i in 0..iterations + 10 {
            let (d, h, code, message) = request
                .refuse(service, &bytes)
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            if i >= 10 {
                decode.push(us(d));
                handler.push(us(h));
                total.push(us(d + h));
            }
            last = (code, message);
        }
        refusals.push(Refusal {
            request: name,
            bytes: bytes.len(),
            code: format!("{:?}", last.0),
            message: last.1,
            wire_code: request.over_the_wire(client).await,
            decode: Summary::of(decode),
            handler: Summary::of(handler),
            total: Summary::of(total),
        });
    }
    Ok(refusals)
}

/// `bytes` decoded as the server's codec decodes them: `Ok(Err(refusal))`
/// when its wire check refuses them first.
fn decode<M: Message + Default + 'static>(
    bytes: &[u8],
) -> Result<Result<M, (Code, String)>, String> {
    if let Err(why) = trine_api::codec::precheck::<M>(bytes) {
        return Ok(Err((Code::InvalidArgument, why)));
    }
    M::decode(bytes).map(Ok).map_err(|e| e.to_string())
}

/// Times the handler's answer after the decode begun at `decoding`: an
/// error, or an Upsert's first item error, is the refusal.
async fn handled<T: Answer>(
    decoding: Instant,
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> (Duration, Duration, Option<(Code, String)>) {
    let decoded = decoding.elapsed();
    let handling = Instant::now();
    let refused = match call.await {
        Ok(answer) => answer.into_inner().refusal(),
        Err(s) => Some((s.code(), s.message().to_string())),
    };
    (decoded, handling.elapsed(), refused)
}

/// An answer that may still refuse part of a request.
trait Answer {
    fn refusal(self) -> Option<(Code, String)>;
}

impl Answer for v1::SearchResponse {
    fn refusal(self) -> Option<(Code, String)> {
        None
    }
}

impl Answer for v1::GetResponse {
    fn refusal(self) -> Option<(Code, String)> {
        None
    }
}

impl Answer for v1::UpsertResponse {
    fn refusal(self) -> Option<(Code, String)> {
        self.failed
            .first()
            .map(|e| (Code::InvalidArgument, format!("item error: {}", e.message)))
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub async fn run(args: Args) -> CmdResult {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let store: Arc<dyn Store> = Arc::new(EdgeStore::open(dir.path(), "memories")?);
    let embedder: Arc<dyn trine_embed::Embedder> = Arc::new(HashEmbedder::new(64));
    Writer::new(store.clone(), embedder.clone())
        .prepare()
        .await?;
    // Peers nothing listens on: a request that reached them would fail, not
    // be refused, and the run says so.
    let nowhere = "127.0.0.1:9".to_string();
    let (peers, _) = trine_mesh::peers(&PeerAddrs {
        lexical: nowhere.clone(),
        semantic: nowhere.clone(),
        fusion: nowhere,
        tls: None,
    })?;
    let service = trine_mesh::gateway_service(peers, embedder, store, &MeshConfig::default());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let served = trine_mesh::Service::gateway(listener, service.clone(), Serving::default())?;
    let addr = served.addr;
    let mut client = MemoryClient::connect(format!("http://{addr}"))
        .await
        .map_err(|e| format!("cannot reach the gateway on {addr}: {e}"))?
        .max_decoding_message_size(Serving::default().max_message_bytes)
        .max_encoding_message_size(Serving::default().max_message_bytes);

    let refusals = measure(&service, &mut client, args.iterations).await;
    drop(client);
    served.stop().await?;
    // The store flushes as its last holder drops, before its directory goes.
    drop(service);
    drop(dir);
    let refusals = refusals?;

    if args.json {
        println!("{}", serde_json::to_string_pretty(&refusals)?);
    } else {
        println!(
            "{:<34} {:>9} {:>16} {:>16}  {:>8} {:>8} {:>8} {:>8}",
            "request", "bytes", "code", "over gRPC", "decode", "handler", "total", "p99"
        );
        println!(
            "{:<34} {:>9} {:>16} {:>16}  {:>8} {:>8} {:>8} {:>8}",
            "", "", "", "", "p50 µs", "p50 µs", "p50 µs", "µs"
        );
        for r in &refusals {
            println!(
                "{:<34} {:>9} {:>16} {:>16}  {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                r.request,
                r.bytes,
                r.code,
                r.wire_code,
                r.decode.p50,
                r.handler.p50,
                r.total.p50,
                r.total.p99
            );
        }
        for r in &refusals {
            println!("{}: {}", r.request, r.message);
        }
    }
    let accepted = refusals.iter().any(|r| r.code != "InvalidArgument");
    Ok(if accepted {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

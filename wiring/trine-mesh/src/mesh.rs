//! Running services: all four in one process ([`Mesh`], each on its own
//! loopback port, talking real gRPC, over one shared store), or one role
//! ([`Service`]); [`spawn`] starts either.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use trine_embed::Embedder;
use trine_store::Store;
use trine_telemetry::Metrics;
use trine_telemetry::grpc::Transport;

use crate::role::{self, Launch, One, Role};
use crate::{MeshConfig, MeshError};

/// Where each service of a mesh serves `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsAddrs {
    pub gateway: SocketAddr,
    pub lexical: SocketAddr,
    pub semantic: SocketAddr,
    pub fusion: SocketAddr,
}

type Served = JoinHandle<Result<(), tonic::transport::Error>>;
type MetricsServed = JoinHandle<std::io::Result<()>>;

/// Binds the `/metrics` listener of the `index`-th service (0 = gateway).
async fn bind_metrics(base: SocketAddr, index: u16) -> Result<TcpListener, MeshError> {
    let mut addr = base;
    if base.port() != 0 {
        addr.set_port(base.port().checked_add(index).ok_or_else(|| {
            MeshError::Bind(format!(
                "metrics port {} leaves no room for four services",
                base.port()
            ))
        })?);
    }
    TcpListener::bind(addr)
        .await
        .map_err(|e| MeshError::Bind(format!("cannot serve metrics on {addr}: {e}")))
}

fn io(e: std::io::Error) -> MeshError {
    MeshError::Bind(format!("cannot bind a loopback port: {e}"))
}

/// How long the services may take to drain their calls once told to stop:
/// Kubernetes' grace period (`terminationGracePeriodSeconds: 30` in k8s/)
/// less the 5 s preStop pause, so that trine ends before the kubelet kills
/// it.
pub const GRACE: Duration = Duration::from_secs(25);

/// The tasks of running services and the signal that stops them all.
struct Tasks {
    /// How long the servers may drain once told to stop.
    grace: Duration,
    stop: watch::Sender<bool>,
    rx: watch::Receiver<bool>,
    served: Vec<(&'static str, Served)>,
    /// The metrics servers, and the gateway's HTTP surface.
    metrics: Vec<(&'static str, MetricsServed)>,
    /// Where the gateway's HTTP surface listens, when it does.
    http: Option<SocketAddr>,
    /// The gateway's server stack, to call in this process.
    gateway: Option<Box<Transport>>,
}

impl Tasks {
    fn new(grace: Duration) -> Self {
        let (stop, rx) = watch::channel(false);
        Self {
            grace,
            stop,
            rx,
            served: Vec::new(),
            metrics: Vec::new(),
            http: None,
            gateway: None,
        }
    }

    /// A shutdown future for one server: resolves when the tasks stop.
    fn stopped(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.rx.clone();
        async move {
            // An error means the sender is gone: stop as well.
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }

    /// Serves `registry` on `listener` until the tasks stop; where.
    fn serve_metrics(
        &mut self,
        name: &'static str,
        listener: TcpListener,
        registry: Arc<Metrics>,
    ) -> Result<SocketAddr, MeshError> {
        let addr = listener.local_addr().map_err(io)?;
        let task = tokio::spawn(trine_telemetry::metrics::serve(
            listener,
            registry,
            self.stopped(),
        ));
        self.metrics.push((name, task));
        Ok(addr)
    }

    /// Signals every server to stop, then waits for each to drain, all of
    /// them within the grace period ([`GRACE`] unless configured): a call
    /// still running then is cut off (and said), as Kubernetes would.
    async fn stop(self) -> Result<(), MeshError> {
        let _ = self.stop.send(true);
        let deadline = tokio::time::Instant::now() + self.grace;
        let mut failures = Vec::new();
        for (name, mut task) in self.served {
            match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => failures.push(format!("{name}: {e}")),
                Ok(Err(e)) => failures.push(format!("{name}: {e}")),
                Err(_) => {
                    task.abort();
                    failures.push(format!(
                        "{name}: calls still running after {} ms, cut off",
                        self.grace.as_millis()
                    ));
                }
            }
        }
        for (name, task) in self.metrics {
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!("{name} metrics: {e}")),
                Err(e) => failures.push(format!("{name} metrics: {e}")),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(MeshError::Stop(failures.join("; ")))
        }
    }
}

/// Starts `one` on `listener` under the tasks' signal, returning its
/// metrics registry.
async fn start_one(
    one: One,
    listener: TcpListener,
    config: &MeshConfig,
    serving: trine_api::server::Serving,
    tasks: &mut Tasks,
) -> Result<Arc<Metrics>, MeshError> {
    let part = match one {
        One::Lexical { store, embedder } => Part::Lexical(role::lexical(store, embedder, config)),
        One::Semantic { store, embedder } => {
            Part::Semantic(role::semantic(store, embedder, config))
        }
        One::Fusion => Part::Fusion(role::fusion(config)),
        One::Gateway { store, peers } => Part::Gateway {
            store,
            peers,
            local: None,
        },
    };
    start_part(part, listener, config, serving, tasks).await
}

/// One service built, to be served.
enum Part {
    Lexical(trine_lexical::LexicalService),
    Semantic(trine_semantic::SemanticService),
    Fusion(trine_fusion::FusionService),
    /// `local`: lexical-svc, semantic-svc and fusion-svc in this process,
    /// called directly ([`trine_api::server::in_process`]); `None`: over
    /// `peers`' addresses.
    Gateway {
        store: Arc<dyn Store>,
        peers: role::PeerAddrs,
        local: Option<Box<[Transport; 3]>>,
    },
}

async fn start_part(
    part: Part,
    listener: TcpListener,
    config: &MeshConfig,
    serving: trine_api::server::Serving,
    tasks: &mut Tasks,
) -> Result<Arc<Metrics>, MeshError> {
    let stopped = tasks.stopped();
    let (name, registry, task): (&'static str, Arc<Metrics>, Served) = match part {
        Part::Lexical(service) => {
            let registry = service.metrics();
            let run = trine_lexical::run(listener, service, serving, stopped);
            (Role::Lexical.service_name(), registry, tokio::spawn(run))
        }
        Part::Semantic(service) => {
            let registry = service.metrics();
            let run = trine_semantic::run(listener, service, serving, stopped);
            (Role::Semantic.service_name(), registry, tokio::spawn(run))
        }
        Part::Fusion(service) => {
            let registry = service.metrics();
            let run = trine_fusion::run(listener, service, serving, stopped);
            (Role::Fusion.service_name(), registry, tokio::spawn(run))
        }
        Part::Gateway {
            store,
            peers,
            local,
        } => {
            let (peers, semantic) = role::peers_over(&peers, local.map(|l| *l))?;
            let service = role::gateway(peers, semantic, store, config).await?;
            if let Some(addr) = config.http {
                let listener = TcpListener::bind(addr)
                    .await
                    .map_err(|e| MeshError::Bind(format!("cannot serve HTTP on {addr}: {e}")))?;
                tasks.http = Some(listener.local_addr().map_err(io)?);
                let limits = trine_gateway::rest::Limits {
                    in_flight: serving.max_in_flight,
                    body_bytes: serving.max_message_bytes,
                };
                let http =
                    trine_gateway::rest::serve(listener, service.clone(), limits, tasks.stopped());
                tasks.metrics.push(("gateway http", tokio::spawn(http)));
            }
            let registry = service.metrics();
            let in_process = trine_api::server::in_process(service.clone(), &serving, false);
            tasks.gateway = Some(Box::new(in_process));
            let run = trine_gateway::run(listener, service, serving, stopped);
            (Role::Gateway.service_name(), registry, tokio::spawn(run))
        }
    };
    tasks.served.push((name, task));
    Ok(registry)
}

/// Makes the collection ready: created when missing, with the configured
/// stemmer.
async fn prepare_collection(
    store: &Arc<dyn Store>,
    embedder: &Arc<dyn Embedder>,
    config: &MeshConfig,
) -> Result<(), MeshError> {
    trine_gateway::Writer::new(store.clone(), embedder.clone())
        .with_stemmer(config.stemmer)
        .prepare()
        .await
        .map_err(|e| MeshError::Collection(e.to_string()))?;
    Ok(())
}

/// Binds the loopback ports of the lexical, semantic and fusion services,
/// in that order.
async fn bind_internal() -> Result<(TcpListener, TcpListener, TcpListener), MeshError> {
    let bind = || TcpListener::bind("127.0.0.1:0");
    Ok((
        bind().await.map_err(io)?,
        bind().await.map_err(io)?,
        bind().await.map_err(io)?,
    ))
}

/// Serves each registry's `/metrics` (the gateway's first) on `base` and
/// the next ports: where each listens.
async fn serve_metrics(
    base: SocketAddr,
    registries: Vec<(&'static str, Arc<Metrics>)>,
    tasks: &mut Tasks,
) -> Result<MetricsAddrs, MeshError> {
    let mut addrs = Vec::new();
    for (index, (name, registry)) in (0u16..).zip(registries) {
        let listener = bind_metrics(base, index).await?;
        addrs.push(tasks.serve_metrics(name, listener, registry)?);
    }
    match addrs[..] {
        [gateway, lexical, semantic, fusion] => Ok(MetricsAddrs {
            gateway,
            lexical,
            semantic,
            fusion,
        }),
        _ => Err(MeshError::Bind(format!(
            "{} metrics registries, not four",
            addrs.len()
        ))),
    }
}

/// A running mesh. Dropping it without [`Mesh::stop`] leaves the services
/// running until the runtime ends.
pub struct Mesh {
    pub gateway: SocketAddr,
    pub lexical: SocketAddr,
    pub semantic: SocketAddr,
    pub fusion: SocketAddr,
    /// Where each service serves `/metrics`, when asked to.
    pub metrics: Option<MetricsAddrs>,
    /// Where the gateway serves HTTP/JSON, when asked to.
    pub http: Option<SocketAddr>,
    tasks: Tasks,
}

impl Mesh {
    /// Starts all four services: the gateway on `gateway`, the others on
    /// loopback ports of their own, over one store and one embedder — the
    /// collection made ready first (created when missing, with the
    /// configured stemmer), as `trine serve`, the in-process commands and
    /// the tests all run it.
    pub async fn start(
        gateway: TcpListener,
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
        config: MeshConfig,
    ) -> Result<Self, MeshError> {
        prepare_collection(&store, &embedder, &config).await?;
        let (lexical_l, semantic_l, fusion_l) = bind_internal().await?;
        let addr = |l: &TcpListener| l.local_addr().map_err(io);
        let (lexical, semantic, fusion, gateway_addr) = (
            addr(&lexical_l)?,
            addr(&semantic_l)?,
            addr(&fusion_l)?,
            addr(&gateway)?,
        );
        let peers = role::PeerAddrs {
            lexical: lexical.to_string(),
            semantic: semantic.to_string(),
            fusion: fusion.to_string(),
            tls: None,
        };
        // The internal services listen on loopback, in this process: TLS is
        // for the gateway's public port.
        let internal = trine_api::server::Serving {
            tls: None,
            ..config.serving.clone()
        };
        let mut tasks = Tasks::new(config.grace.unwrap_or(GRACE));
        let mut registries = Vec::new();
        let lexical_service = role::lexical(store.clone(), embedder.clone(), &config);
        let semantic_service = role::semantic(store.clone(), embedder, &config);
        let fusion_service = role::fusion(&config);
        // The gateway calls its channels in this process, through the same
        // server stacks their ports serve (which stay up: health, metrics,
        // and any client that dials them).
        let local = [
            trine_api::server::in_process(lexical_service.clone(), &internal, true),
            trine_api::server::in_process(semantic_service.clone(), &internal, true),
            trine_api::server::in_process(fusion_service.clone(), &internal, false),
        ];
        for (role, part, listener) in [
            (Role::Lexical, Part::Lexical(lexical_service), lexical_l),
            (Role::Semantic, Part::Semantic(semantic_service), semantic_l),
            (Role::Fusion, Part::Fusion(fusion_service), fusion_l),
        ] {
            let registry =
                start_part(part, listener, &config, internal.clone(), &mut tasks).await?;
            registries.push((role.service_name(), registry));
        }
        let registry = start_part(
            Part::Gateway {
                store,
                peers,
                local: Some(Box::new(local)),
            },
            gateway,
            &config,
            config.serving.clone(),
            &mut tasks,
        )
        .await?;
        registries.insert(0, ("gateway", registry));

        let metrics = match config.metrics {
            Some(base) => Some(serve_metrics(base, registries, &mut tasks).await?),
            None => None,
        };
        Ok(Self {
            gateway: gateway_addr,
            lexical,
            semantic,
            fusion,
            metrics,
            http: tasks.http,
            tasks,
        })
    }

    /// A client of the gateway for this process (the in-process commands:
    /// `search`, `mcp`, `memory`, `bench`): its server stack called without
    /// a socket, as the gateway calls its channels. Without an API key: a
    /// mesh that requires one refuses it, as it refuses a key-less call on
    /// its port.
    pub fn client(&self) -> Result<crate::GatewayClient, MeshError> {
        // The gateway's server stack (its limits, metrics and shedding).
        let stack = self.tasks.gateway.as_deref().cloned();
        let stack = stack.ok_or_else(|| MeshError::Bind("the gateway is not started".into()))?;
        crate::channel::over(stack, None)
    }

    /// Signals every service to stop, then waits for each to drain.
    pub async fn stop(self) -> Result<(), MeshError> {
        self.tasks.stop().await
    }
}

/// One role running on its own (`trine serve --role lexical`, ...).
pub struct Service {
    pub role: Role,
    pub addr: SocketAddr,
    /// Where it serves `/metrics`, when asked to.
    pub metrics: Option<SocketAddr>,
    /// Where a gateway serves HTTP/JSON, when asked to.
    pub http: Option<SocketAddr>,
    tasks: Tasks,
}

impl Service {
    /// Starts `one` on `listener`, with its `/metrics` on `config.metrics`
    /// when set.
    pub async fn start(
        one: One,
        listener: TcpListener,
        config: &MeshConfig,
    ) -> Result<Self, MeshError> {
        let role = one.role();
        let addr = listener.local_addr().map_err(io)?;
        let mut tasks = Tasks::new(config.grace.unwrap_or(GRACE));
        let registry = start_one(one, listener, config, config.serving.clone(), &mut tasks).await?;
        let metrics = match config.metrics {
            Some(base) => {
                let listener = bind_metrics(base, 0).await?;
                Some(tasks.serve_metrics(role.service_name(), listener, registry)?)
            }
            None => None,
        };
        Ok(Self {
            role,
            addr,
            metrics,
            http: tasks.http,
            tasks,
        })
    }

    /// Serves a gateway already built ([`crate::gateway_service`]) on
    /// `listener`, without metrics: for measuring the gateway on its own.
    pub fn gateway(
        listener: TcpListener,
        service: trine_gateway::MemoryService,
        serving: trine_api::server::Serving,
    ) -> Result<Self, MeshError> {
        let addr = listener.local_addr().map_err(io)?;
        let mut tasks = Tasks::new(GRACE);
        let run = trine_gateway::run(listener, service, serving, tasks.stopped());
        tasks.served.push(("gateway", tokio::spawn(run)));
        Ok(Self {
            role: Role::Gateway,
            addr,
            metrics: None,
            http: None,
            tasks,
        })
    }

    /// Signals the service to stop, then waits for it to drain.
    pub async fn stop(self) -> Result<(), MeshError> {
        self.tasks.stop().await
    }
}

/// What [`spawn`] started.
pub enum Running {
    All(Mesh),
    One(Service),
}

impl Running {
    /// Signals every service to stop, then waits for each to drain.
    pub async fn stop(self) -> Result<(), MeshError> {
        match self {
            Self::All(mesh) => mesh.stop().await,
            Self::One(service) => service.stop().await,
        }
    }
}

/// Starts `launch` on `listener` as a server runs it: the whole mesh, or one
/// service, each given exactly what it runs on, the document frequencies
/// built at start. `trine serve` starts services through here; the
/// in-process commands and the tests through [`Mesh::start`]
/// (`trine_testkit::mesh` as here).
pub async fn spawn(
    launch: Launch,
    listener: TcpListener,
    mut config: MeshConfig,
) -> Result<Running, MeshError> {
    // A served lexical-svc builds the store's document frequencies at start
    // and answers no search until they are (docs/operations.md, "The
    // budget"); one-shot in-process commands count in the store instead.
    config.lexical.keep_counts = true;
    match launch {
        Launch::All { store, embedder } => Ok(Running::All(
            Mesh::start(listener, store, embedder, config).await?,
        )),
        Launch::One(one) => Ok(Running::One(Service::start(one, listener, &config).await?)),
    }
}

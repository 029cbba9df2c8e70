//! `trine serve`: the four services in one process (`--role all`), or one
//! role with its peers' addresses from the configuration.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use trine_core::Named;

use tokio::net::TcpListener;
use trine_gateway::auth::Keys;
use trine_mesh::{Launch, MeshConfig, One, PeerAddrs, Role, Running};

use crate::config::{AuthMode, ServeSection};
use crate::{CmdResult, Config, load_embedder, open_store};

/// `trine serve`'s flags. Those that are also `[serve]` keys override
/// the file (and their `TRINE_*` variables do too).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address of this process's public service (the gateway's with --role
    /// all) [default: [serve] listen, 127.0.0.1:50051]
    #[arg(long, env = "TRINE_LISTEN")]
    pub listen: Option<String>,
    /// Which service to run: all, gateway, lexical, semantic or fusion
    #[arg(long, default_value = "all", value_parser = Role::parse)]
    pub role: Role,
    /// Serve Prometheus metrics on http://ADDR/metrics, or `off`. With --role
    /// all the gateway uses ADDR and lexical-svc, semantic-svc, fusion-svc the
    /// next three ports (port 0: a free port each) [default: [serve]
    /// metrics, 127.0.0.1:9464]
    #[arg(long, env = "TRINE_METRICS", value_name = "ADDR")]
    pub metrics: Option<String>,
    /// API keys on the public service (`trine keys`): auto — on when
    /// --listen is beyond loopback —, on, or off [default: [serve] auth, auto]
    #[arg(long, value_enum, env = "TRINE_AUTH")]
    pub auth: Option<AuthMode>,
    /// Once every listener is bound, print one JSON line to standard output
    /// saying where each serves: `{"role", "addr", "http", "lexical",
    /// "semantic", "fusion", "metrics"}` (null where they do not apply)
    #[arg(long)]
    pub ready_json: bool,
    /// Serve the gateway's HTTP/JSON surface (`POST /v1/search`,
    /// `/v1/memories`, `/healthz`, `/readyz`, `/v1/openapi.json`) on ADDR, or
    /// `off`; its keys are the gRPC ones, required when either address is
    /// beyond loopback [default: [serve] http, off]
    #[arg(long, env = "TRINE_HTTP", value_name = "ADDR")]
    pub http: Option<String>,
    /// Where the gateway writes the backups it is asked for while it serves
    /// (`trine backup create NAME --endpoint ...`: DIR/NAME), or `off`
    /// [default: [serve] backup_dir, DATA/backups]
    #[arg(long, env = "TRINE_BACKUP_DIR", value_name = "DIR")]
    pub backup_dir: Option<String>,
}

impl Args {
    /// The `[serve]` section with these flags over it.
    fn over(&self, file: &ServeSection) -> ServeSection {
        ServeSection {
            listen: self.listen.clone().unwrap_or_else(|| file.listen.clone()),
            http: self.http.clone().unwrap_or_else(|| file.http.clone()),
            metrics: self.metrics.clone().unwrap_or_else(|| file.metrics.clone()),
            auth: self.auth.unwrap_or(file.auth),
            backup_dir: self.backup_dir.clone().or_else(|| file.backup_dir.clone()),
        }
    }
}

/// Where a started role serves, as `--ready-json` prints it.
#[derive(Debug, Default, serde::Serialize)]
struct Ready {
    role: &'static str,
    addr: String,
    http: Option<String>,
    lexical: Option<String>,
    semantic: Option<String>,
    fusion: Option<String>,
    metrics: Option<String>,
}

impl Ready {
    /// Prints the line when asked to; stdout is flushed so that a reader
    /// on a pipe sees it at once.
    fn announce(&self, asked: bool) -> Result<(), String> {
        if !asked {
            return Ok(());
        }
        use std::io::Write;
        let line = serde_json::to_string(self).map_err(|e| e.to_string())?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write the ready line: {e}"))
    }
}

/// The public address keys are decided by: the HTTP surface's when it is
/// beyond loopback, else gRPC's.
fn most_exposed(grpc: SocketAddr, http: Option<SocketAddr>) -> SocketAddr {
    match http {
        Some(h) if !h.ip().is_loopback() => h,
        _ => grpc,
    }
}

/// The keys the public service on `addr` checks calls against under `mode`,
/// and the line that says so at start; an error when keys are required but
/// the file holds none that is live.
pub fn keys_for(
    mode: AuthMode,
    addr: SocketAddr,
    path: &std::path::Path,
) -> Result<(Option<Arc<Keys>>, String), String> {
    let beyond = !addr.ip().is_loopback();
    let why = match (mode, beyond) {
        (AuthMode::Off, true) => {
            return Ok((
                None,
                format!(
                    "auth: off (--auth off) while listening on {addr}, beyond loopback: whoever reaches it can read and write every tenant"
                ),
            ));
        }
        (AuthMode::Off, false) => return Ok((None, "auth: off (--auth off)".to_string())),
        (AuthMode::Auto, false) => {
            return Ok((
                None,
                format!("auth: off: {addr} is loopback (--auth on requires API keys here too)"),
            ));
        }
        (AuthMode::Auto, true) => format!("{addr} is beyond loopback"),
        (AuthMode::On, _) => "--auth on".to_string(),
    };
    let keys = Keys::open(path).map_err(|e| e.to_string())?;
    let live = keys
        .current()
        .map_err(|e| e.to_string())?
        .keys
        .iter()
        .filter(|k| k.revoked_at.is_none())
        .count();
    if live == 0 {
        return Err(format!(
            "auth is on ({why}) but {} holds no live API key: add one with `trine keys add --tenant TENANT --scope read,write`, or serve with --auth off",
            path.display()
        ));
    }
    let said = format!(
        "auth: on ({why}): {live} live API key(s) in {}",
        path.display()
    );
    Ok((Some(Arc::new(keys)), said))
}

/// `off` (or empty) → no metrics; otherwise an `ip:port`.
fn metrics_addr(raw: &str) -> Result<Option<SocketAddr>, String> {
    optional_addr("--metrics", raw, "127.0.0.1:9464")
}

/// An `ip:port` flag that may be `off`.
fn optional_addr(flag: &str, raw: &str, example: &str) -> Result<Option<SocketAddr>, String> {
    match raw.trim() {
        "" | "off" => Ok(None),
        addr => addr.parse().map(Some).map_err(|e| {
            format!("{flag} {addr:?}: {e}: give an ip:port such as {example}, or off")
        }),
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

fn peer(name: &str, addr: Option<&String>) -> Result<String, String> {
    addr.cloned().ok_or_else(|| {
        let flag = format!("--{name}-addr");
        format!("--role gateway needs the {name}-svc address: set {flag}, TRINE_{}_ADDR or peers.{name}", name.to_uppercase())
    })
}

pub async fn run(config: &Config, args: Args) -> CmdResult {
    let serve = args.over(&config.serve);
    let listener = TcpListener::bind(&serve.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", serve.listen))?;
    let addr = listener.local_addr()?;
    let mesh_config = mesh_config(config, &serve, args.role, addr)?;
    let role = args.role;
    let launch = launch(config, role).await?;
    let running = trine_mesh::spawn(launch, listener, mesh_config).await?;
    let ready = ready_at(&running, role, addr);
    ready.announce(args.ready_json)?;
    signal().await;
    eprintln!("stopping: draining in-flight calls");
    running.stop().await?;
    Ok(ExitCode::SUCCESS)
}

/// The mesh's settings from the configuration and the flags: metrics, the
/// HTTP surface, the keys and backups of a public role, TLS (said at start).
fn mesh_config(
    config: &Config,
    serve: &ServeSection,
    role: Role,
    addr: SocketAddr,
) -> Result<MeshConfig, Box<dyn std::error::Error + Send + Sync>> {
    let metrics = metrics_addr(&serve.metrics)?;
    let public = matches!(role, Role::All | Role::Gateway);
    let http = if public {
        optional_addr("--http", &serve.http, "127.0.0.1:8080")?
    } else {
        None
    };
    if let (Some(_), Some(h)) = (&config.tls.cert, http)
        && !h.ip().is_loopback()
    {
        return Err(format!(
            "--http {h}: the HTTP surface is plain HTTP while [tls] secures gRPC; serve it on \
             loopback behind a TLS-terminating proxy, or leave --http off"
        )
        .into());
    }
    let keys = if public {
        let exposed = most_exposed(addr, http);
        let (keys, said) = keys_for(serve.auth, exposed, &config.keys_path())?;
        eprintln!("{said}");
        keys
    } else {
        None
    };
    let backups = match serve.backup_dir.as_deref() {
        Some("off") => None,
        _ if !public => None,
        dir => Some(trine_gateway::backups::Backups {
            dir: dir.map_or_else(|| config.data.join("backups"), std::path::PathBuf::from),
            keys: keys.is_some().then(|| config.keys_path()),
        }),
    };
    let mut mesh_config = MeshConfig {
        metrics,
        http,
        keys: keys.clone(),
        backups,
        ..config.mesh()
    };
    mesh_config.serving.tls = config.tls.server()?;

    if mesh_config.serving.tls.is_some() {
        let mtls = if config.tls.client_ca.is_some() {
            ", client certificates required"
        } else {
            ""
        };
        eprintln!("tls: on{mtls}");
    }
    Ok(mesh_config)
}

/// What `role` runs on: each role is given exactly that.
async fn launch(
    config: &Config,
    role: Role,
) -> Result<Launch, Box<dyn std::error::Error + Send + Sync>> {
    Ok(match role {
        Role::All => Launch::All {
            store: open_store(config).await?,
            embedder: load_embedder(config).await?,
        },
        Role::Gateway => {
            let p = &config.peers;
            Launch::One(One::Gateway {
                store: open_store(config).await?,
                peers: PeerAddrs {
                    lexical: peer("lexical", p.lexical.as_ref())?,
                    semantic: peer("semantic", p.semantic.as_ref())?,
                    fusion: peer("fusion", p.fusion.as_ref())?,
                    tls: config.tls.client()?,
                },
            })
        }
        Role::Lexical => Launch::One(One::Lexical {
            store: open_store(config).await?,
            embedder: load_embedder(config).await?,
        }),
        Role::Semantic => Launch::One(One::Semantic {
            store: open_store(config).await?,
            embedder: load_embedder(config).await?,
        }),
        Role::Fusion => Launch::One(One::Fusion),
    })
}

/// Says on standard error where the started role serves, and returns it
/// for `--ready-json`.
fn ready_at(running: &Running, role: Role, addr: SocketAddr) -> Ready {
    match running {
        Running::All(mesh) => {
            eprintln!(
                "trine serving on {addr} (lexical {}, semantic {}, fusion {}); Ctrl-C stops",
                mesh.lexical, mesh.semantic, mesh.fusion
            );
            if let Some(m) = &mesh.metrics {
                eprintln!(
                    "metrics on http://{}/metrics (lexical {}, semantic {}, fusion {})",
                    m.gateway, m.lexical, m.semantic, m.fusion
                );
            }
            if let Some(h) = mesh.http {
                eprintln!("http on http://{h} (POST /v1/search, /v1/memories; /readyz)");
            }
            Ready {
                role: role.name(),
                addr: addr.to_string(),
                http: mesh.http.map(|h| h.to_string()),
                lexical: Some(mesh.lexical.to_string()),
                semantic: Some(mesh.semantic.to_string()),
                fusion: Some(mesh.fusion.to_string()),
                metrics: mesh.metrics.as_ref().map(|m| m.gateway.to_string()),
            }
        }
        Running::One(service) => {
            if let Some(m) = service.metrics {
                eprintln!("metrics on http://{m}/metrics");
            }
            eprintln!("{} serving on {addr}", role.service_name());
            if let Some(h) = service.http {
                eprintln!("http on http://{h} (POST /v1/search, /v1/memories; /readyz)");
            }
            Ready {
                role: role.name(),
                addr: addr.to_string(),
                http: service.http.map(|h| h.to_string()),
                metrics: service.metrics.map(|m| m.to_string()),
                ..Ready::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serve_section_takes_its_flags_over_it() {
        let file: ServeSection = toml::from_str(
            "listen = \"0.0.0.0:7000\"\nhttp = \"127.0.0.1:8080\"\nauth = \"on\"\nbackup_dir = \"off\"\n",
        )
        .unwrap();
        let none = Args {
            listen: None,
            role: Role::All,
            metrics: None,
            auth: None,
            ready_json: false,
            http: None,
            backup_dir: None,
        };
        let kept = none.over(&file);
        assert_eq!(
            kept,
            ServeSection {
                metrics: "127.0.0.1:9464".into(),
                ..file.clone()
            }
        );
        let flags = Args {
            listen: Some("127.0.0.1:0".into()),
            auth: Some(AuthMode::Off),
            backup_dir: Some("/b".into()),
            ..none
        };
        let over = flags.over(&file);
        assert_eq!(
            (
                over.listen.as_str(),
                over.http.as_str(),
                over.auth,
                over.backup_dir.as_deref()
            ),
            ("127.0.0.1:0", "127.0.0.1:8080", AuthMode::Off, Some("/b"))
        );
        assert_eq!(ServeSection::default().listen, "127.0.0.1:50051");
    }

    #[test]
    fn keys_are_required_beyond_loopback_unless_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("none.json");
        let path = dir.path().join("keys.json");
        let mut file = trine_gateway::auth::KeyFile::default();
        file.add(
            "t",
            vec![trine_gateway::auth::Scope::Read],
            vec!["acme".into()],
        )
        .unwrap();
        file.save(&path).unwrap();
        let loopback: SocketAddr = "127.0.0.1:50051".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:50051".parse().unwrap();
        for (mode, addr, keys, on) in [
            (AuthMode::Auto, loopback, &empty, Ok(false)),
            (AuthMode::Auto, any, &path, Ok(true)),
            (AuthMode::Auto, any, &empty, Err("holds no live API key")),
            (AuthMode::On, loopback, &path, Ok(true)),
            (AuthMode::On, loopback, &empty, Err("--auth off")),
            (AuthMode::Off, any, &empty, Ok(false)),
        ] {
            let got = keys_for(mode, addr, keys);
            match on {
                Ok(on) => {
                    let (keys, said) = got.unwrap();
                    assert_eq!(keys.is_some(), on, "{mode:?} {addr}: {said}");
                    assert!(said.starts_with(if on { "auth: on" } else { "auth: off" }));
                }
                Err(why) => assert!(got.unwrap_err().contains(why), "{mode:?} {addr}"),
            }
        }
        let (_, said) = keys_for(AuthMode::Off, any, &empty).unwrap();
        assert!(said.contains("beyond loopback"), "{said}");
        // gRPC on loopback, HTTP beyond it: keys are required all the same.
        assert_eq!(most_exposed(loopback, Some(any)), any);
        assert_eq!(most_exposed(any, Some(loopback)), any);
        assert_eq!(most_exposed(loopback, None), loopback);
        let refused = keys_for(AuthMode::Auto, most_exposed(loopback, Some(any)), &empty);
        assert!(refused.unwrap_err().contains("holds no live API key"));
    }

    #[test]
    fn metrics_addresses_parse_or_say_what_to_give() {
        assert_eq!(metrics_addr("off").unwrap(), None);
        assert_eq!(
            metrics_addr("127.0.0.1:9464").unwrap(),
            Some(SocketAddr::from(([127, 0, 0, 1], 9464)))
        );
        assert!(metrics_addr("localhost").unwrap_err().contains("ip:port"));
    }
}

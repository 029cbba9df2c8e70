//! A loopback TCP relay that puts faults between two parts: every
//! connection to [`Relay::addr`] is relayed to the target, its bytes
//! passed on, delayed, dropped, or its connection reset, as [`Relay::set`]
//! says at the moment — for the tests of faults between the gateway and
//! its channels and between the services and Qdrant.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the relay does to the bytes and connections through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Bytes passed on as they come.
    None,
    /// Each chunk of bytes held this long before it is passed on.
    Delay(Duration),
    /// Bytes dropped: connections stay open and nothing arrives (a network
    /// that loses everything). When it ends, a stream that lost bytes is
    /// broken and its peers find out.
    Drop,
    /// Every open connection reset (RST), and each new one reset as it is
    /// accepted (a peer whose port refuses).
    Reset,
}

/// A running relay; it stops when dropped.
pub struct Relay {
    addr: SocketAddr,
    fault: watch::Sender<Fault>,
    accepted: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Relay {
    /// A relay on a free loopback port to `target`, passing bytes on.
    pub async fn start(target: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (fault, watching) = watch::channel(Fault::None);
        let accepted = Arc::new(AtomicU64::new(0));
        let counted = accepted.clone();
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                if *watching.borrow() == Fault::Reset {
                    reset(&inbound);
                    continue;
                }
                tokio::spawn(relay(inbound, target, watching.clone()));
            }
        });
        Ok(Self {
            addr,
            fault,
            accepted,
            task,
        })
    }

    /// Where to connect instead of the target.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on, `fault`.
    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Closes `stream` with a reset instead of an orderly shutdown.
fn reset(stream: &TcpStream) {
    // A zero linger on a non-blocking socket only makes the close send RST.
    let _ = stream.set_zero_linger();
}

async fn relay(inbound: TcpStream, target: SocketAddr, fault: watch::Receiver<Fault>) {
    let Ok(outbound) = TcpStream::connect(target).await else {
        reset(&inbound);
        return;
    };
    let _ = (inbound.set_nodelay(true), outbound.set_nodelay(true));
    let (from_in, to_in) = inbound.into_split();
    let (from_out, to_out) = outbound.into_split();
    // Either direction ending ends both; on a reset each has set its
    // sockets to close with RST, and dropping them here sends it.
    tokio::select! {
        () = pass(from_in, to_out, fault.clone()) => {}
        () = pass(from_out, to_in, fault) => {}
    }
}

/// Passes bytes from `from` to `to` under the fault of the moment, until
/// either side closes or the fault is a reset.
async fn pass(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut fault: watch::Receiver<Fault>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = tokio::select! {
            read = from.read(&mut buffer) => read,
            _ = fault.wait_for(|f| *f == Fault::Reset) => {
                reset(from.as_ref());
                reset(to.as_ref());
                return;
            }
        };
        let n = match read {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let now = *fault.borrow();
        match now {
            Fault::None => {}
            // The sleep is the fault: a slow network holds each chunk this long.
            Fault::Delay(by) => tokio::time::sleep(by).await,
            Fault::Drop => continue,
            Fault::Reset => {
                reset(from.as_ref());
                reset(to.as_ref());
                return;
            }
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

//! A store that tells a test when calls of one kind end: [`Noted`].

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::watch;
use trine_store::{Around, Call, Op, Result, Run, Store, Wrapped};

/// A real store (every call goes to it) that counts the calls of one
/// [`Op`] as they end, so that a test waits for the next one instead of a
/// timer: what a background task's store call marks (a gateway's
/// heartbeat, a keeper's read of the change journal). The count is its
/// hook's: `noted.hook().ended()`.
pub type Noted = Wrapped<Noting>;

/// `inner`, its calls of `op` counted as they end ([`Noted`]).
pub fn noted(inner: Arc<dyn Store>, op: Op) -> Arc<Noted> {
    Arc::new(Wrapped::with(
        inner,
        Noting {
            op,
            ended: watch::Sender::new(0),
        },
    ))
}

/// What [`Noted`] counts.
pub struct Noting {
    op: Op,
    ended: watch::Sender<u64>,
}

impl Noting {
    /// The calls of the op ended so far, changing as each ends (answered
    /// or failed): `changed()` on it returns at the next.
    pub fn ended(&self) -> watch::Receiver<u64> {
        self.ended.subscribe()
    }
}

#[async_trait]
impl Around for Noting {
    async fn around<'a, T: Send + 'a>(&'a self, call: Call, run: &'a Run<'a, T>) -> Result<T> {
        let result = run().await;
        if call.op == self.op {
            self.ended.send_modify(|n| *n += 1);
        }
        result
    }
}

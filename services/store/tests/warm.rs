//! The server store connects every channel to the node it uses when it
//! connects, not on the first searches: after `connect` this process holds
//! [`CHANNELS_PER_NODE`] more established connections to the node's port,
//! and the calls after it open none. Counted from this process's own sockets
//! (`/proc/self/fd` and `/proc/self/net/tcp*`), alone in its test binary so
//! that no other test's connections are counted. Runs when
//! `TRINE_QDRANT_URL` is set.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::collections::BTreeSet;

use trine_store::{CHANNELS_PER_NODE, ServerStore, Store};

/// The inodes of this process's sockets.
fn own_sockets() -> BTreeSet<u64> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?.to_string();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// This process's established TCP connections to `port` (their inodes).
fn connections_to(port: u16) -> BTreeSet<u64> {
    let own = own_sockets();
    let mut found = BTreeSet::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local, remote (address:port, hex), state (01 = established),
            // ..., inode (the tenth field).
            let (Some(remote), Some(state), Some(inode)) =
                (fields.get(2), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let remote_port = remote
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            let inode: u64 = inode.parse().unwrap_or(0);
            if remote_port == Some(port) && *state == "01" && own.contains(&inode) {
                found.insert(inode);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_channel_is_connected_before_the_first_call() {
    let Ok(url) = std::env::var("TRINE_QDRANT_URL") else {
        trine_testkit::skipped(
            "warm connections to a Qdrant server",
            trine_testkit::NO_QDRANT,
        );
        return;
    };
    let url = url.split(',').next().unwrap().trim().to_string();
    let port: u16 = url
        .trim_end_matches('/')
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .expect("TRINE_QDRANT_URL ends in a port");

    let before = connections_to(port);
    let store = ServerStore::connect(&url, "trine_warm_absent")
        .await
        .unwrap();
    let connected = connections_to(port);
    let opened = connected.difference(&before).count();
    assert!(
        opened >= CHANNELS_PER_NODE,
        "connect opened {opened} connection(s) to the node, not {CHANNELS_PER_NODE}"
    );

    // Calls after it, as many as two rounds of the pool: no new connection.
    for _ in 0..2 * CHANNELS_PER_NODE {
        assert!(store.info().await.unwrap().is_none());
    }
    let after = connections_to(port);
    assert_eq!(
        after.difference(&connected).count(),
        0,
        "the calls after connect opened connections of their own"
    );
}

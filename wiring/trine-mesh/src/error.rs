//! What can go wrong wiring services together, by kind; each message says
//! what to fix.

/// A failure to start, reach or stop services.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A peer's address (or the API key sent to it) cannot be used.
    #[error("{0}")]
    Address(String),
    /// A port cannot be listened on.
    #[error("{0}")]
    Bind(String),
    /// A role was given less than it runs on, or a role it cannot run.
    #[error("{0}")]
    Role(String),
    /// A peer did not answer in time.
    #[error("{0}")]
    Peer(String),
    /// The collection cannot be made ready.
    #[error("the collection cannot be made ready: {0}")]
    Collection(String),
    /// Services failed while stopping, or were cut off.
    #[error("{0}")]
    Stop(String),
}

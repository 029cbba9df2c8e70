/// The kinds of failure trine distinguishes. Each crate's error says its kind;
/// the API crate maps kinds to gRPC codes in exactly one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request is wrong; the message says what to fix.
    InvalidArgument,
    /// A named thing (collection, memory) does not exist.
    NotFound,
    /// The system is not in a state to do this (index missing, wrong embedder).
    FailedPrecondition,
    /// A dependency is down; retrying may help.
    Unavailable,
    /// A dependency did not answer within its deadline.
    DeadlineExceeded,
    /// The caller gave no credential, or one that is not (or no longer) valid.
    Unauthenticated,
    /// The caller's credential does not allow this (scope or tenant).
    PermissionDenied,
    /// The caller is over a quota (a tenant's request rate); retry later.
    ResourceExhausted,
    /// Not built yet.
    Unimplemented,
    /// A fault of trine or its storage.
    Internal,
}

/// An error that says its kind: every crate's error type, so that one
/// function (`trine_api::to_status`) turns any of them into its gRPC status.
pub trait Kinded: std::fmt::Display {
    fn kind(&self) -> ErrorKind;
}

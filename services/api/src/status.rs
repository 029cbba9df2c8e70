//! The one mapping of trine's error kinds to gRPC codes.

use tonic::{Code, Status};
use trine_core::ErrorKind;

/// The gRPC code of an error kind.
pub fn code_of(kind: ErrorKind) -> Code {
    match kind {
        ErrorKind::InvalidArgument => Code::InvalidArgument,
        ErrorKind::NotFound => Code::NotFound,
        ErrorKind::FailedPrecondition => Code::FailedPrecondition,
        ErrorKind::Unavailable => Code::Unavailable,
        ErrorKind::DeadlineExceeded => Code::DeadlineExceeded,
        ErrorKind::Unauthenticated => Code::Unauthenticated,
        ErrorKind::PermissionDenied => Code::PermissionDenied,
        ErrorKind::ResourceExhausted => Code::ResourceExhausted,
        ErrorKind::Unimplemented => Code::Unimplemented,
        ErrorKind::Internal => Code::Internal,
    }
}

/// A gRPC status of the given kind.
pub fn status(kind: ErrorKind, message: impl Into<String>) -> Status {
    Status::new(code_of(kind), message)
}

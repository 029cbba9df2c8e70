//! The one mapping of trine's error kinds to gRPC codes.

use tonic::{Code, Status};
use trine_core::{ErrorKind, Kinded};

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

/// The error kind of a gRPC code (a peer's answer); codes trine never
/// sends are internal.
pub fn kind_of(code: Code) -> ErrorKind {
    match code {
        Code::InvalidArgument | Code::OutOfRange => ErrorKind::InvalidArgument,
        Code::NotFound => ErrorKind::NotFound,
        Code::FailedPrecondition => ErrorKind::FailedPrecondition,
        Code::Unavailable => ErrorKind::Unavailable,
        Code::DeadlineExceeded | Code::Cancelled => ErrorKind::DeadlineExceeded,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        Code::ResourceExhausted => ErrorKind::ResourceExhausted,
        Code::Unimplemented => ErrorKind::Unimplemented,
        _ => ErrorKind::Internal,
    }
}

/// The HTTP status of a gRPC code (the JSON surface answers with it), as
/// Google's API guide maps them.
pub fn http_status_of(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::InvalidArgument | Code::OutOfRange | Code::FailedPrecondition => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::ResourceExhausted => 429,
        Code::Cancelled => 499,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::DeadlineExceeded => 504,
        _ => 500,
    }
}

/// A gRPC status of the given kind.
pub fn status(kind: ErrorKind, message: impl Into<String>) -> Status {
    Status::new(code_of(kind), message)
}

/// The gRPC status of any crate's error: its kind's code, its message.
pub fn to_status<E: Kinded>(error: E) -> Status {
    status(error.kind(), error.to_string())
}

/// An INVALID_ARGUMENT status: the request is wrong, the message says how.
pub fn invalid(message: impl Into<String>) -> Status {
    status(ErrorKind::InvalidArgument, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_goes_to_its_code_and_back() {
        for kind in [
            ErrorKind::InvalidArgument,
            ErrorKind::NotFound,
            ErrorKind::FailedPrecondition,
            ErrorKind::Unavailable,
            ErrorKind::DeadlineExceeded,
            ErrorKind::Unauthenticated,
            ErrorKind::PermissionDenied,
            ErrorKind::ResourceExhausted,
            ErrorKind::Unimplemented,
            ErrorKind::Internal,
        ] {
            assert_eq!(kind_of(code_of(kind)), kind, "{kind:?}");
        }
        assert_eq!(kind_of(Code::DataLoss), ErrorKind::Internal);
    }
}

//! The Fusion service: reciprocal rank fusion of the three lists (arrives with the search mesh).
#![forbid(unsafe_code)]

//! The Lexical service: the lexical channel's candidates (arrives with the search mesh).
#![forbid(unsafe_code)]

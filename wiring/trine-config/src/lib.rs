//! What the commands of `trine` and `trine-eval` stand on: the layered,
//! typed [`Config`] (`config`), what a configuration names opened (`open`:
//! the store, the embedder, the in-process mesh) and the few helpers every
//! command shares (`command`: its result, its report, the `--mode` flag).
#![forbid(unsafe_code)]

mod command;
pub mod config;
mod open;

pub use command::{CmdResult, EXIT_PARTIAL, parse_mode, print_report};
pub use config::{Config, ConfigError, Overrides};
pub use open::{LocalMesh, collection_fold, connect_server, load_embedder, local_mesh, open_store};

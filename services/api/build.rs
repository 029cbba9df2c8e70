//! Generates the gRPC code of every `.proto` file under `proto/`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = ["common", "memory", "lexical", "semantic", "fusion"]
        .map(|name| root.join(format!("trine/v1/{name}.proto")));
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    // Every service decodes through `codec::BoundedCodec`: prost's, with a
    // request's wire bytes checked before they are decoded.
    // protoc comes from crates.io (protoc-bin-vendored): a machine with Rust
    // alone builds trine. A PROTOC set by the caller still wins.
    let protoc = match std::env::var_os("PROTOC") {
        Some(path) => PathBuf::from(path),
        None => protoc_bin_vendored::protoc_bin_path()?,
    };
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc);
    tonic_prost_build::configure()
        .codec_path("crate::codec::BoundedCodec")
        .file_descriptor_set_path(out.join("trine_descriptor.bin"))
        .compile_with_config(config, &files, std::slice::from_ref(&root))?;
    println!("cargo:rerun-if-changed={}", root.display());
    Ok(())
}

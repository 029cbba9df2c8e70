//! Generates the gRPC code of every `.proto` file under `proto/`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = ["common", "memory", "lexical", "semantic", "fusion"]
        .map(|name| root.join(format!("trine/v1/{name}.proto")));
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out.join("trine_descriptor.bin"))
        .compile_protos(&files, std::slice::from_ref(&root))?;
    println!("cargo:rerun-if-changed={}", root.display());
    Ok(())
}

//! Compiles `proto/wandb_record.proto`, the run-log records, with pure-Rust tools
//! (protox + prost-build), so building never needs a system `protoc`. The descriptor
//! set is also kept in OUT_DIR for prost-reflect, which `json` uses to
//! print any record.

use prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/wandb_record.proto");
    let fds = protox::compile(["wandb_record.proto"], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("wandb_record.fds.bin"), fds.encode_to_vec())?;
    prost_build::Config::new()
        .enable_type_names()
        .compile_fds(fds)?;
    Ok(())
}

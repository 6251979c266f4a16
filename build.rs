//! Compiles the protos with pure-Rust tools (protox + prost-build, tonic-prost-build for
//! the gRPC service), so building leet never needs a system `protoc`.
//!
//! * `proto/wandb_record.proto`: the run-log records. The descriptor set is also kept in
//!   OUT_DIR for prost-reflect, which `leet inspect --json` uses to print any record.
//! * `proto/tpu_metric_service.proto`: libtpu's runtime metrics service. The client goes
//!   to `OUT_DIR/tpu.monitoring.runtime.rs` (the TPU sampler); a server for the same
//!   service goes to `OUT_DIR/tpu_server/` for the fake runtime of `tests/sampler_tpu.rs`
//!   (only a test compiles it, so the library needs no server code).

use prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/wandb_record.proto");
    println!("cargo:rerun-if-changed=proto/tpu_metric_service.proto");
    let fds = protox::compile(["wandb_record.proto"], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("wandb_record.fds.bin"), fds.encode_to_vec())?;
    prost_build::Config::new()
        .enable_type_names()
        .compile_fds(fds)?;

    let tpu = protox::compile(["tpu_metric_service.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .compile_fds(tpu.clone())?;
    let server_dir = out.join("tpu_server");
    std::fs::create_dir_all(&server_dir)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(&server_dir)
        .compile_fds(tpu)?;
    Ok(())
}

//! Compiles the server half of libtpu's runtime metrics service
//! (`crates/leet-sampler/proto/tpu_metric_service.proto`, whose client the TPU sampler
//! builds in its own crate) with pure-Rust tools (protox + tonic-prost-build), so
//! building leet never needs a system `protoc`. It goes to `OUT_DIR/tpu_server/` for
//! the fake runtime of `tests/sampler_tpu.rs` and `examples/fake_tpu_runtime.rs` (only
//! they compile it, so the library holds no server code).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "crates/leet-sampler/proto";
    println!("cargo:rerun-if-changed={proto}/tpu_metric_service.proto");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let tpu = protox::compile(["tpu_metric_service.proto"], [proto])?;
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

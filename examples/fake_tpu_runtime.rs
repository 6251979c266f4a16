//! A stand-alone fake of libtpu's runtime metrics service, for measuring the sampler with
//! every family present (`scripts/sampler-overhead.sh --fakes`). It is the same fake that
//! `tests/sampler_tpu.rs` starts in-process (`tests/support/tpu_fake.rs`): it writes the
//! fixture's TPU PCI devices under SYSFS_ROOT, serves each of the fixture's ports with a
//! tonic gRPC server on 127.0.0.1 (ephemeral ports), prints `ports P1,P2,...` on one line
//! of stdout (the value for `TPU_RUNTIME_METRICS_PORTS`), and serves until killed.
//!
//! usage: cargo run --example fake_tpu_runtime -- FIXTURE.json SYSFS_ROOT

#[path = "../tests/support/tpu_fake.rs"]
mod tpu_fake;

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, fixture, sysfs] = args.as_slice() else {
        anyhow::bail!("usage: fake_tpu_runtime FIXTURE.json SYSFS_ROOT");
    };
    let text = std::fs::read_to_string(fixture).with_context(|| format!("reading {fixture}"))?;
    let fx: Value = serde_json::from_str(&text).with_context(|| format!("parsing {fixture}"))?;
    let ports = fx["ports"]
        .as_array()
        .with_context(|| format!("{fixture}: no \"ports\" array"))?;
    tpu_fake::fake_pci(Path::new(sysfs), &fx);
    let rt = tpu_fake::Runtime::new();
    let served: Vec<u16> = ports
        .iter()
        .map(|p| rt.serve(tpu_fake::served(p)).0)
        .collect();
    let list: Vec<String> = served.iter().map(u16::to_string).collect();
    let mut out = std::io::stdout().lock();
    writeln!(out, "ports {}", list.join(","))?;
    out.flush()?;
    drop(out);
    // The servers run on the runtime's threads; serve until a signal ends the process.
    loop {
        std::thread::park();
    }
}

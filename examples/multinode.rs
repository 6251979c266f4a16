//! Write the multi-node fixture: one run whose `stats` records come from two nodes
//! of W&B's shared mode (keys suffixed `/l:node-0`, `/l:node-1`), laid out as the SDK
//! lays out an offline run: `cargo run --example multinode -- DIR` writes
//! `DIR/wandb/offline-run-…-mnode001/run-mnode001.wandb` and `DIR/wandb/latest-run`.
use leet::decode::synth::{nodes_file, run_dir_name, NodesSpec};

fn main() -> anyhow::Result<()> {
    let Some(dir) = std::env::args().nth(1) else {
        anyhow::bail!("usage: multinode DIR");
    };
    let spec = NodesSpec::default();
    let wandb = std::path::Path::new(&dir).join("wandb");
    let name = run_dir_name(spec.start_time, &spec.run_id, true);
    let run = wandb.join(&name);
    std::fs::create_dir_all(&run)?;
    std::fs::write(
        run.join(format!("run-{}.wandb", spec.run_id)),
        nodes_file(&spec),
    )?;
    let latest = wandb.join("latest-run");
    if latest.symlink_metadata().is_ok() {
        std::fs::remove_file(&latest)?;
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(&name, &latest)?;
    Ok(())
}

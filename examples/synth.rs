//! Write a synthetic `.wandb` run (wandb-core's record shapes) for benchmarks and
//! memory checks: `cargo run --release --example synth -- OUT.wandb STEPS METRICS [--no-summary]`.
use leet::decode::synth::{file_bytes, SynthSpec};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(steps), Some(metrics)) = (args.first(), args.get(1), args.get(2)) else {
        anyhow::bail!("usage: synth OUT.wandb STEPS METRICS [--no-summary] [--stats-every N]");
    };
    let stats_every = args
        .iter()
        .position(|a| a == "--stats-every")
        .and_then(|i| args.get(i + 1))
        .map_or(Ok(0), |s| s.parse())?;
    let spec = SynthSpec {
        steps: steps.parse()?,
        metrics: metrics.parse()?,
        summaries: !args.iter().any(|a| a == "--no-summary"),
        stats_every,
        ..SynthSpec::default()
    };
    std::fs::write(out, file_bytes(&spec))?;
    Ok(())
}

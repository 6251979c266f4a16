//! A wandb directory of many small runs, and timed index scans of it, for
//! `scripts/bench-index.sh`:
//!
//! ```text
//! many_runs gen WANDB_DIR N      write N run directories
//! many_runs scan WANDB_DIR CACHE_DIR [REPEAT]   time index scans (cache as it is)
//! ```
//!
//! Each run is shaped like wandb-core's output (`leet::decode::synth::run_file`):
//! a run record with a config (`lr`, `seed`, `model.layers`, `model.width`,
//! `optimizer`), 200 history rows of 5 metrics with the two summary records per
//! step, a config record adding a key later (`late.added`), a summary removal
//! (`m1`), and an exit record (code 0; every 10th run code 1; every 7th has none,
//! a run that crashed or still runs). Every 50th run has a damaged block (bytes
//! flipped in its middle).
use std::path::Path;
use std::time::Instant;

use leet::decode::synth::{metric_name, run_dir_name, run_file, RunSpec};
use leet::source::index::{scan_with, ScanOptions};

/// 2026-11-30T00:00:00Z: run `i` starts `i` seconds later.
const START: f64 = 1_795_996_800.0;

#[allow(clippy::cast_precision_loss)]
fn spec(i: usize) -> RunSpec {
    let id = format!("r{i:06}");
    RunSpec {
        display_name: format!("{id}-run"),
        run_id: id,
        project: "leet-synth".into(),
        start_time: START + i as f64,
        config: vec![
            ("lr".into(), format!("{}", 1e-4 * (1 + i % 10) as f64)),
            ("seed".into(), (i % 5).to_string()),
            ("model.layers".into(), format!("{}", 2 + i % 4)),
            ("model.width".into(), "256".into()),
            ("optimizer".into(), "\"adam\"".into()),
        ],
        late_config: vec![("late.added".into(), format!("{i}"))],
        steps: 200,
        first_step: 0,
        metrics: (0..5).map(metric_name).collect(),
        seed: (i % 5) as u64,
        exit_code: (i % 7 != 3).then_some(i32::from(i % 10 == 9)),
        resumed: false,
        tags: Vec::new(),
        notes: String::new(),
        step_seconds: 0.01,
        summary_remove: vec!["m1".into()],
    }
}

fn bytes_of(i: usize) -> Vec<u8> {
    let mut bytes = run_file(&spec(i));
    if i % 50 == 17 {
        let mid = bytes.len() / 2;
        for b in &mut bytes[mid..mid + 64] {
            *b ^= 0x5a;
        }
    }
    bytes
}

fn gen(dir: &Path, n: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut total = 0;
    for i in 0..n {
        // Distinct start times in the names: one second apart.
        let s = spec(i);
        let d = dir.join(run_dir_name(s.start_time, &s.run_id, true));
        std::fs::create_dir_all(&d)?;
        let bytes = bytes_of(i);
        total += bytes.len();
        std::fs::write(d.join(format!("run-{}.wandb", s.run_id)), bytes)?;
    }
    println!(
        "wrote {n} runs, {total} bytes of .wandb files, in {}",
        dir.display()
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen", dir, n] => gen(Path::new(dir), n.parse()?),
        ["scan", dir, cache, rest @ ..] => {
            let repeat: usize = rest.first().map_or(Ok(1), |r| r.parse())?;
            for _ in 0..repeat {
                let t = Instant::now();
                let s = scan_with(Path::new(dir), Path::new(cache), &ScanOptions::default());
                let secs = t.elapsed().as_secs_f64();
                let damaged = s.entries.iter().filter(|e| e.damage > 0).count();
                println!(
                    "scan {:.4} s: {} runs, {} read, {} cached, {} damaged{}",
                    secs,
                    s.entries.len(),
                    s.read,
                    s.cached,
                    damaged,
                    s.cache_rejected
                        .map(|r| format!(", cache rejected: {r}"))
                        .unwrap_or_default()
                );
            }
            Ok(())
        }
        _ => anyhow::bail!(
            "usage: many_runs gen WANDB_DIR N | many_runs scan WANDB_DIR CACHE_DIR [REPEAT]"
        ),
    }
}

//! A wandb directory of many small runs, and timed index scans of it, for
//! `scripts/bench-index.sh`:
//!
//! ```text
//! many_runs gen WANDB_DIR N      write N run directories
//! many_runs scan WANDB_DIR CACHE_DIR [REPEAT]   time index scans (cache as it is)
//! ```
//!
//! Each run is shaped like wandb-core's output: a run record with a config, 200
//! history rows of 5 metrics with the two summary records per step, a config
//! record adding keys later, a summary removal, and an exit record (code 0; every
//! 10th run code 1; every 7th has none, a run that crashed or still runs). Every
//! 50th run has a damaged block (bytes flipped in its middle).
use std::path::Path;
use std::time::Instant;

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::decode::synth::{records, SynthSpec};
use leet::source::index::{scan_with, ScanOptions};
use prost::Message as _;

fn config_record(num: i64, items: &[(&str, String)]) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(pb::record::RecordType::Config(pb::ConfigRecord {
            update: items
                .iter()
                .map(|(k, v)| pb::ConfigItem {
                    nested_key: k.split('.').map(str::to_owned).collect(),
                    value_json: v.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

fn summary_remove(num: i64, key: &str) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(pb::record::RecordType::Summary(pb::SummaryRecord {
            remove: vec![pb::SummaryItem {
                nested_key: vec![key.to_owned()],
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

fn exit_record(num: i64, code: i32) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(pb::record::RecordType::Exit(pb::RunExitRecord {
            exit_code: code,
            runtime: 2,
            ..Default::default()
        })),
        ..Default::default()
    }
    .encode_to_vec()
}

fn run_file(i: usize) -> Vec<u8> {
    let spec = SynthSpec {
        run_id: format!("r{i:06}"),
        steps: 200,
        metrics: 5,
        summaries: true,
        stats_every: 0,
        finished: false,
    };
    let mut w = Writer::new();
    let mut n = 0i64;
    records(&spec, |p| {
        n += 1;
        w.append(p);
        if n == 2 {
            // After the run record: the config wandb.init(config=...) gives.
            n += 1;
            w.append(&config_record(
                n,
                &[
                    ("lr", format!("{}", 1e-4 * (1 + i % 10) as f64)),
                    ("seed", (i % 5).to_string()),
                    ("model.layers", format!("{}", 2 + i % 4)),
                    ("model.width", "256".into()),
                    ("optimizer", "\"adam\"".into()),
                ],
            ));
        }
    });
    n += 1;
    w.append(&config_record(n, &[("late.added", format!("{i}"))]));
    n += 1;
    w.append(&summary_remove(n, "m1"));
    if i % 7 != 3 {
        n += 1;
        w.append(&exit_record(n, i32::from(i % 10 == 9)));
    }
    let mut bytes = w.into_bytes();
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
        // Distinct start times in the names: one second apart from 2026-11-30 00:00.
        let t = i;
        let name = format!(
            "offline-run-20261130_{:02}{:02}{:02}-r{i:06}",
            (t / 3600) % 24,
            (t / 60) % 60,
            t % 60
        );
        let d = dir.join(name);
        std::fs::create_dir_all(&d)?;
        let bytes = run_file(i);
        total += bytes.len();
        std::fs::write(d.join(format!("run-r{i:06}.wandb")), bytes)?;
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

//! Writes the demo run in `assets/demo/` (deterministic):
//! `cargo run --example make_demo`. Then `cargo run --release -- assets/demo`.
//!
//! With `--live SECONDS` it instead appends to the file over that many seconds, to
//! show live follow: `cargo run --example make_demo -- --live 60 /tmp/live/run-x.wandb`.

use std::io::Write as _;
use std::path::PathBuf;

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use pb::record::RecordType as T;
use prost::Message as _;

const T0: i64 = 1_796_050_000;
const STEPS: i64 = 600;

fn ts(secs: f64) -> prost_types::Timestamp {
    #[allow(clippy::cast_possible_truncation)]
    let s = secs.floor() as i64;
    #[allow(clippy::cast_possible_truncation)]
    let n = ((secs - secs.floor()) * 1e9) as i32;
    prost_types::Timestamp {
        seconds: s,
        nanos: n,
    }
}

fn rec(num: i64, t: T) -> Vec<u8> {
    pb::Record {
        num,
        record_type: Some(t),
        ..Default::default()
    }
    .encode_to_vec()
}

fn item(key: &str, v: f64) -> pb::HistoryItem {
    pb::HistoryItem {
        key: key.into(),
        value_json: if v.is_finite() {
            format!("{v}")
        } else {
            "NaN".into()
        },
        ..Default::default()
    }
}

/// Pseudo-random but deterministic noise in [-1, 1].
fn noise(i: i64, k: i64) -> f64 {
    let mut x = u64::try_from(i * 7919 + k * 104_729 + 1).unwrap_or(1);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    #[allow(clippy::cast_precision_loss)]
    let f = (x % 10_000) as f64 / 5000.0 - 1.0;
    f
}

fn header(num: &mut i64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut next = |t: T| {
        *num += 1;
        rec(*num, t)
    };
    out.push(next(T::Run(pb::RunRecord {
        run_id: "demo0001".into(),
        project: "leet-demo".into(),
        display_name: "resnet-demo".into(),
        notes: "synthetic demo run written by examples/make_demo.rs".into(),
        tags: vec!["demo".into(), "resnet".into()],
        host: "gpu-box".into(),
        start_time: Some(ts(T0 as f64)),
        config: Some(pb::ConfigRecord {
            update: [
                ("model", r#"{"arch": "resnet18", "layers": [2, 2, 2, 2]}"#),
                (
                    "optim",
                    r#"{"name": "adamw", "lr": 0.003, "weight_decay": 0.05}"#,
                ),
                ("data", r#"{"name": "cifar10", "batch_size": 256}"#),
                ("epochs", "30"),
                ("seed", "7"),
            ]
            .into_iter()
            .map(|(k, v)| pb::ConfigItem {
                key: k.into(),
                value_json: v.into(),
                ..Default::default()
            })
            .collect(),
            ..Default::default()
        }),
        ..Default::default()
    })));
    out.push(next(T::Environment(pb::EnvironmentRecord {
        os: "Linux-6.8.0-x86_64-with-glibc2.39".into(),
        python: "CPython 3.11.7".into(),
        host: "gpu-box".into(),
        program: "train.py".into(),
        args: vec!["--config".into(), "configs/resnet18.yaml".into()],
        cpu_count: 32,
        cpu_count_logical: 64,
        gpu_type: "NVIDIA H100 80GB HBM3".into(),
        gpu_count: 2,
        cuda_version: "12.4".into(),
        gpu_nvidia: (0..2)
            .map(|i| pb::GpuNvidiaInfo {
                name: "NVIDIA H100 80GB HBM3".into(),
                memory_total: 85_520_809_984,
                cuda_cores: 16_896,
                architecture: "Hopper".into(),
                uuid: format!("GPU-demo-{i}"),
                ..Default::default()
            })
            .collect(),
        writer_id: "demo-writer".into(),
        ..Default::default()
    })));
    out
}

fn step_records(num: &mut i64, i: i64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    #[allow(clippy::cast_precision_loss)]
    let x = i as f64;
    let t = T0 as f64 + 2.0 + x * 0.5;
    let p = x / STEPS as f64;
    let loss = 2.3 * (-3.0 * p).exp() + 0.08 + 0.05 * noise(i, 1);
    let acc = 0.1 + 0.85 * (1.0 - (-4.0 * p).exp()) + 0.01 * noise(i, 2);
    let lr = 0.003 * 0.5 * (1.0 + (std::f64::consts::PI * p).cos());
    let grad = if i % 97 == 50 {
        f64::NAN
    } else {
        1.0 + 0.4 * noise(i, 3) + 3.0 * (-8.0 * p).exp()
    };
    let mut items = vec![
        item("_step", x),
        item("_timestamp", t),
        item("train/loss", loss),
        item("train/acc", acc),
        item("train/lr", lr),
        item("train/grad_norm", grad),
        item("train/throughput", 2400.0 + 150.0 * noise(i, 4)),
        item("epoch", (x / 20.0).floor()),
    ];
    if i % 20 == 19 {
        items.push(item("val/loss", loss * 1.1 + 0.03 * noise(i, 5)));
        items.push(item("val/acc", acc - 0.03 + 0.01 * noise(i, 6)));
        items.push(item("val/f1", acc - 0.05 + 0.01 * noise(i, 7)));
    }
    *num += 1;
    out.push(rec(
        *num,
        T::History(pb::HistoryRecord {
            item: items,
            step: Some(pb::HistoryStep { num: i }),
            ..Default::default()
        }),
    ));
    if i % 10 == 0 {
        let net = x * 1.9e6 + 1e5 * noise(i, 8).abs();
        let stats = [
            ("gpu.0.gpu", 92.0 + 6.0 * noise(i, 9)),
            ("gpu.1.gpu", 88.0 + 8.0 * noise(i, 10)),
            ("gpu.0.memoryAllocated", 71.0 + 0.5 * noise(i, 11)),
            ("gpu.1.memoryAllocated", 69.0 + 0.5 * noise(i, 12)),
            ("gpu.0.temp", 64.0 + 8.0 * p + noise(i, 13)),
            ("gpu.1.temp", 61.0 + 9.0 * p + noise(i, 14)),
            ("gpu.0.powerWatts", 250.0 + 30.0 * noise(i, 15)),
            ("gpu.1.powerWatts", 240.0 + 30.0 * noise(i, 16)),
            ("gpu.0.smClock", 1710.0 + 40.0 * noise(i, 17)),
            ("gpu.1.smClock", 1695.0 + 40.0 * noise(i, 18)),
            ("cpu", 35.0 + 10.0 * noise(i, 19)),
            (
                "proc.memory.rssMB",
                3100.0 + 400.0 * p + 20.0 * noise(i, 20),
            ),
            ("memory_percent", 41.0 + 2.0 * p),
            ("disk./.usagePercent", 62.0 + 0.5 * p),
            ("disk.in", x * 2.5),
            ("disk.out", x * 0.8 + 0.1 * noise(i, 21).abs()),
            ("network.sent", net * 0.2),
            ("network.recv", net),
        ];
        *num += 1;
        out.push(rec(
            *num,
            T::Stats(pb::StatsRecord {
                timestamp: Some(ts(t)),
                item: stats
                    .iter()
                    .map(|(k, v)| pb::StatsItem {
                        key: (*k).into(),
                        value_json: format!("{v}"),
                    })
                    .collect(),
                ..Default::default()
            }),
        ));
    }
    if i % 20 == 19 || i == 0 {
        let line = if i == 0 {
            "\u{1b}[1mstarting training\u{1b}[0m on 2 GPUs\n".to_owned()
        } else {
            format!(
                "epoch {:>2} | step {i:>4} | loss {loss:.4} | acc {acc:.4}\n",
                i / 20
            )
        };
        *num += 1;
        out.push(rec(
            *num,
            T::OutputRaw(pb::OutputRawRecord {
                output_type: 1,
                timestamp: Some(ts(t)),
                line,
                ..Default::default()
            }),
        ));
    }
    out
}

fn footer(num: &mut i64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    *num += 1;
    out.push(rec(
        *num,
        T::Summary(pb::SummaryRecord {
            update: [("best/val_acc", "0.912"), ("final/loss", "0.094")]
                .into_iter()
                .map(|(k, v)| pb::SummaryItem {
                    key: k.into(),
                    value_json: v.into(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
    ));
    *num += 1;
    out.push(rec(
        *num,
        T::Exit(pb::RunExitRecord {
            exit_code: 0,
            runtime: 302,
            ..Default::default()
        }),
    ));
    out
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut num = 0;
    // Anything but `--live …` or nothing (`--help` among it) prints the usage and
    // writes nothing: the demo run is a file in the repository.
    if !matches!(args.first().map(String::as_str), None | Some("--live")) {
        eprintln!(
            "usage: make_demo                       write assets/demo (in the repository)\n       \
             make_demo --live SECONDS [FILE]   append a live run to FILE over SECONDS"
        );
        std::process::exit(2);
    }
    if args.first().map(String::as_str) == Some("--live") {
        let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60.0);
        let path = PathBuf::from(
            args.get(2)
                .cloned()
                .unwrap_or_else(|| "live/run-live.wandb".into()),
        );
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut w = Writer::new();
        for r in header(&mut num) {
            w.append(&r);
        }
        let mut f = std::fs::File::create(&path)?;
        let mut written = 0;
        #[allow(clippy::cast_precision_loss)]
        let pause = std::time::Duration::from_secs_f64(secs / STEPS as f64);
        for i in 0..STEPS {
            for r in step_records(&mut num, i) {
                w.append(&r);
            }
            f.write_all(&w.bytes()[written..])?;
            f.flush()?;
            written = w.bytes().len();
            std::thread::sleep(pause);
        }
        for r in footer(&mut num) {
            w.append(&r);
        }
        f.write_all(&w.bytes()[written..])?;
        return Ok(());
    }
    let mut w = Writer::new();
    for r in header(&mut num) {
        w.append(&r);
    }
    for i in 0..STEPS {
        for r in step_records(&mut num, i) {
            w.append(&r);
        }
    }
    for r in footer(&mut num) {
        w.append(&r);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/demo/wandb/offline-run-20261130_100000-demo0001");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("run-demo0001.wandb"), w.bytes())?;
    std::fs::write(
        dir.parent()
            .map_or_else(|| dir.join("../latest-run"), |p| p.join("latest-run")),
        "offline-run-20261130_100000-demo0001\n",
    )?;
    println!("wrote {} bytes to {}", w.bytes().len(), dir.display());
    Ok(())
}

//! Shared helpers for integration tests: fixture paths and JSON comparison.
#![allow(dead_code, clippy::unwrap_used)]

pub mod isolated;
pub mod runs;
pub mod sampler;
pub mod screen;
// Not every test binary that includes `common` uses the tiers.
#[allow(unused_imports)]
pub use leet::decode::tier;
pub mod tmux;
pub mod tool;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Whether tmux can be run: see [`tool::need`].
pub fn have_tmux() -> bool {
    tool::have_tool("tmux", &["-V"])
}

/// `tests/fixtures/runs` (real runs written by wandb 0.31.0, copied from shared/).
pub fn runs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs")
}

/// Every (expected-file prefix, run directory) pair: `<name>` → the fixture's
/// latest run, and `<name>.<run-dir>` → each run of a multi-run fixture.
pub fn fixture_runs() -> Vec<(String, PathBuf)> {
    let root = runs_dir();
    let mut out = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        if !p.is_dir() {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name.clone(), p.join("wandb/latest-run")));
        for r in std::fs::read_dir(p.join("wandb")).unwrap() {
            let r = r.unwrap().path();
            let rn = r.file_name().unwrap().to_string_lossy().into_owned();
            if rn.starts_with("offline-run-")
                && root.join(format!("{name}.{rn}.summary.json")).exists()
            {
                out.push((format!("{name}.{rn}"), r));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 7, "fixtures missing under {}", root.display());
    out
}

/// The `.wandb` file of a run directory.
pub fn wandb_file(run_dir: &Path) -> PathBuf {
    match leet::source::file::resolve(run_dir).unwrap() {
        leet::source::file::Target::File(f) => f,
        other => panic!("no .wandb in {}: {other:?}", run_dir.display()),
    }
}

pub fn small_fixture_files() -> Vec<PathBuf> {
    fixture_runs()
        .into_iter()
        .map(|(_, d)| wandb_file(&d))
        .collect()
}

/// Deep equality with floats compared to 1e-9 relative; returns the first difference.
pub fn json_diff(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
                return (i != j).then(|| format!("{path}: {x} != {y}"));
            }
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let tol = 1e-9 * x.abs().max(y.abs());
            ((x - y).abs() > tol).then(|| format!("{path}: {x} != {y}"))
        }
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = json_diff(&format!("{path}.{k}"), p, q) {
                            return Some(d);
                        }
                    }
                    (p, q) => return Some(format!("{path}.{k}: {p:?} vs {q:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: length {} != {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| json_diff(&format!("{path}[{i}]"), p, q))
        }
        _ => (a != b).then(|| format!("{path}: {a} != {b}")),
    }
}

/// A history value as a number: JSON numbers, and the strings `leet inspect --json`
/// writes for the non-finite ones.
pub fn json_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Draw the first `n` runs of the `multi` fixture beside the app's run (asked for:
/// the caller answers the reader commands); their (name, directory).
pub fn compare_multi(app: &mut leet::ui::App, n: usize) -> Vec<(String, PathBuf)> {
    let others: Vec<_> = fixture_runs()
        .into_iter()
        .filter(|(name, _)| name.starts_with("multi.offline-run-"))
        .take(n)
        .collect();
    for (_, dir) in &others {
        let file = wandb_file(dir);
        app.request_compare(dir.clone(), file.parent().unwrap().to_path_buf());
    }
    others
}

//! A wandb directory of generated runs for the workspace's tests (and e2e), built
//! on `leet::decode::synth::run_file`.
//!
//! Run `i` of `n` (0 = oldest; start times 120 s apart, the newest ending about
//! now; directories `run-YYYYMMDD_HHMMSS-<id>`, UTC; `latest-run` links the
//! newest):
//! - config `lr` = [`LRS`]`[i % 4]`, `seed` = `(i / 4) % 3`, `optimizer` = `"adam"`
//!   when `(i / 12) % 2 == 0`, else `"sgd"`; `model.layers` = `2 + i % 3`;
//! - state ([`state_of`]): `i == n - 1` running (no exit record, fresh records
//!   and mtime); else `i % 10 == 4` crashed (no exit record, mtime an hour ago);
//!   else `i % 10 == 7` failed (exit 1); else finished (exit 0);
//! - with `n >= 6`, one resumed run: run 2 is its first segment (crashed: no exit,
//!   mtime an hour ago, steps 0..100) and run `n - 2` its second (same run id,
//!   display name and config, `resumed: true`, steps 100..200, exit 0: finished).
//!
//! So with `n = 20`: running 19; crashed 2, 4, 14; failed 7, 17; finished the
//! other 14, of which 18 is the resumed segment; `cfg.lr>=1e-3 state:finished`
//! matches 6 of them (3, 6, 10, 11, 15, 18). Every run logs `loss`, `acc` and
//! `val/loss` for [`STEPS`] steps; tagged `baseline` when its seed is 0.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use leet::decode::synth::{run_dir_name, run_file, RunSpec};

/// The learning rates of the mix.
pub const LRS: [f64; 4] = [1e-4, 3e-4, 1e-3, 3e-3];
/// History rows per run (per segment of the resumed run).
pub const STEPS: u64 = 100;
/// Seconds between the start times of two consecutive runs.
pub const SPACING: f64 = 120.0;

/// One run directory written.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedRun {
    /// Its index (see the module's documentation).
    pub index: usize,
    pub dir: PathBuf,
    /// Its `.wandb` file, `run-<id>.wandb`.
    pub file: PathBuf,
    pub id: String,
    pub display_name: String,
    pub lr: f64,
    pub seed: u64,
    pub optimizer: &'static str,
    /// Config `model.layers`.
    pub layers: usize,
    /// "finished", "failed", "crashed" or "running".
    pub state: &'static str,
    /// The second segment of a resumed run (`resumed` in its run record).
    pub resumed: bool,
    /// Steps logged: `first_step..first_step + STEPS`.
    pub first_step: u64,
    pub start_time: f64,
}

/// The state of run `i` of `n`, before the resumed run's override (see the
/// module's documentation).
pub fn state_of(i: usize, n: usize) -> &'static str {
    if i + 1 == n {
        "running"
    } else if i % 10 == 4 {
        "crashed"
    } else if i % 10 == 7 {
        "failed"
    } else {
        "finished"
    }
}

/// An SDK-like run id: 8 characters of `[0-9a-z]`, a pure function of `i`.
pub fn run_id(i: usize) -> String {
    let mut z = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..8)
        .map(|k| digits[((z >> (k * 6)) % 36) as usize] as char)
        .collect()
}

/// An SDK-like display name, `adjective-noun-<i + 1>`.
pub fn display_name(i: usize) -> String {
    const ADJ: [&str; 8] = [
        "brisk", "calm", "dark", "eager", "fancy", "gentle", "hardy", "icy",
    ];
    const NOUN: [&str; 8] = [
        "otter", "pine", "river", "comet", "field", "harbor", "meadow", "sky",
    ];
    format!("{}-{}-{}", ADJ[i % 8], NOUN[(i / 8) % 8], i + 1)
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Write `n` runs into `wandb_dir` (created), the newest ending now.
pub fn write_workspace(wandb_dir: &Path, n: usize) -> Vec<GeneratedRun> {
    write_workspace_at(wandb_dir, n, unix_now())
}

/// [`write_workspace`] with "now" given (Unix seconds): the running run's records
/// end then. Its mtime is the clock's all the same.
pub fn write_workspace_at(wandb_dir: &Path, n: usize, now: f64) -> Vec<GeneratedRun> {
    std::fs::create_dir_all(wandb_dir).unwrap();
    let resumed_pair = (n >= 6).then(|| (2, n - 2));
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // The newest (running) run's last row is now; the others start earlier.
        let start = now - STEPS as f64 - SPACING * (n - 1 - i) as f64;
        let mut state = state_of(i, n);
        let (mut first_step, mut resumed, mut like) = (0, false, i);
        match resumed_pair {
            Some((a, _)) if i == a => state = "crashed",
            Some((a, b)) if i == b => {
                (first_step, resumed, like) = (STEPS, true, a);
                state = "finished";
            }
            _ => {}
        }
        out.push(write_run(
            wandb_dir, i, like, start, state, first_step, resumed,
        ));
    }
    if let Some(last) = out.last() {
        link_latest(wandb_dir, &last.dir);
    }
    out
}

/// Add run `i` (any index past the ones written) as the newest run, finished
/// (exit 0), started now, with the config of the mix for `i`; `latest-run` then
/// links it (as the SDK does for a new run).
pub fn add_run(wandb_dir: &Path, i: usize) -> GeneratedRun {
    let r = write_run(wandb_dir, i, i, unix_now(), "finished", 0, false);
    link_latest(wandb_dir, &r.dir);
    r
}

/// Write run `i`, with the id, name and config of run `like` (itself, or the
/// first segment of a resumed run).
fn write_run(
    wandb_dir: &Path,
    i: usize,
    like: usize,
    start_time: f64,
    state: &'static str,
    first_step: u64,
    resumed: bool,
) -> GeneratedRun {
    let id = run_id(like);
    let lr = LRS[like % 4];
    let seed = ((like / 4) % 3) as u64;
    let optimizer = if (like / 12) % 2 == 0 { "adam" } else { "sgd" };
    let exit_code = match state {
        "finished" => Some(0),
        "failed" => Some(1),
        _ => None,
    };
    let spec = RunSpec {
        run_id: id.clone(),
        display_name: display_name(like),
        project: "leet-workspace".into(),
        start_time,
        config: vec![
            ("lr".into(), format!("{lr}")),
            ("seed".into(), seed.to_string()),
            ("optimizer".into(), format!("\"{optimizer}\"")),
            ("model.layers".into(), (2 + like % 3).to_string()),
        ],
        late_config: Vec::new(),
        steps: STEPS,
        first_step,
        metrics: vec!["loss".into(), "acc".into(), "val/loss".into()],
        seed,
        exit_code,
        resumed,
        tags: if seed == 0 {
            vec!["baseline".into()]
        } else {
            Vec::new()
        },
        notes: String::new(),
        step_seconds: 1.0,
        summary_remove: Vec::new(),
    };
    let dir = wandb_dir.join(run_dir_name(start_time, &id, false));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("run-{id}.wandb"));
    std::fs::write(&file, run_file(&spec)).unwrap();
    if state == "crashed" {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }
    GeneratedRun {
        index: i,
        dir,
        file,
        id,
        display_name: spec.display_name,
        lr,
        seed,
        optimizer,
        layers: 2 + like % 3,
        state,
        resumed,
        first_step,
        start_time,
    }
}

/// Point `wandb_dir/latest-run` at `run_dir` (a relative symlink, as the SDK's).
fn link_latest(wandb_dir: &Path, run_dir: &Path) {
    let link = wandb_dir.join("latest-run");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    std::os::unix::fs::symlink(run_dir.file_name().unwrap(), &link).unwrap();
}

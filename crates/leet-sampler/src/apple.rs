//! Apple Silicon (macOS arm64) through `macmon pipe` (vladkens/macmon, `brew install
//! macmon`), sudoless: one long-lived child `macmon -i <interval ms> pipe` whose JSON
//! lines are read as they arrive; each sample uses the newest complete line.
//!
//! # Mapping (macmon field → W&B key, spec §7 and W&B 0.31's `gpu_apple.rs`)
//!
//! | macmon pipe field | unit there | key | unit here |
//! |---|---|---|---|
//! | `ecpu_freq_mhz` (≥ 0.8) or `ecpu_usage[0]` (≤ 0.7) | MHz | `cpu.ecpu_freq` | MHz |
//! | `ecpu_scaled_ratio` or `ecpu_usage[1]` | ratio 0–1 | `cpu.ecpu_percent` | % (× 100) |
//! | `pcpu_freq_mhz` or `pcpu_usage[0]` | MHz | `cpu.pcpu_freq` | MHz |
//! | `pcpu_scaled_ratio` or `pcpu_usage[1]` | ratio 0–1 | `cpu.pcpu_percent` | % (× 100) |
//! | `gpu_freq_mhz` or `gpu_usage[0]` | MHz | `gpu.0.freq` | MHz |
//! | `gpu_scaled_ratio` or `gpu_usage[1]` | ratio 0–1 | `gpu.0.gpu` | % (× 100) |
//! | `temp.cpu_temp_avg` | °C | `cpu.avg_temp` | °C |
//! | `temp.gpu_temp_avg` | °C | `gpu.0.temp` | °C |
//! | `cpu_power` | W | `cpu.powerWatts` | W |
//! | `gpu_power` | W | `gpu.0.powerWatts` | W |
//! | `gpu_power` / 16.5 W × 100 | | `gpu.0.powerPercent` | % |
//! | `ane_power` | W | `ane.power` | W |
//! | max(`sys_power`, `all_power`) | W | `system.powerWatts` | W |
//! | `memory.ram_usage` | bytes | `memory.used` | bytes |
//! | `ram_usage` / `ram_total` × 100 | | `memory.used_percent` | % |
//! | `ram_usage` / `ram_total` × 100 | | `gpu.0.memoryAllocated` | % |
//! | `memory.swap_usage` | bytes | `swap.used` | bytes |
//! | `swap_usage` / `swap_total` × 100 | | `swap.used_percent` | % |
//!
//! The ratios are macmon's frequency-scaled ones (residency-weighted average frequency
//! relative to the cluster's maximum), which is what the spec defines the percentages
//! as; macmon ≥ 0.8 also writes them under the ≤ 0.7 names `ecpu_usage` etc.
//! `gpu.0.powerPercent` uses the 16.5 W maximum W&B's Apple GPU monitor hard-codes.
//! The GPU shares unified memory with the CPU, so `gpu.0.memoryAllocated` is the share of
//! RAM in use. `system.powerWatts` is at least CPU + GPU + ANE power, as W&B's (`all_power`,
//! or the sum of the three when an old macmon lacks it). As in W&B, zero integers (a
//! frequency of 0, no swap used) and non-finite numbers are left out; unlike W&B, a
//! temperature of 0 (macmon's "no sensor read") is left out too.
//!
//! Static facts come from one `macmon -i 100 pipe -s 1 --soc-info` at detection (`soc`:
//! chip name, model, core counts; without `--soc-info` for macmon < 0.6.1), which also
//! proves macmon works here and gives the first sample its values.
//!
//! # Detection
//!
//! `LEET_MACMON` unset: only on macOS on aarch64, with `macmon` from `PATH`, then
//! `/opt/homebrew/bin`, `/opt/local/bin` (MacPorts) and `/usr/local/bin`.
//! `LEET_MACMON=1`: on any system (e.g. Linux CI with a fake `macmon`), from `PATH`.
//! `LEET_MACMON=/path/to/macmon`: that executable, on any system. `LEET_MACMON=0`: off.
//!
//! # Misbehaving child
//!
//! At most [`MAX_LINES`] lines of [`MAX_LINE_BYTES`] are buffered. A child that exits,
//! floods (more than [`FLOOD_LINES`] lines or one over-long line per interval) or stays
//! silent for [`silence_limit`] is killed (process group) and restarted after a backoff
//! of 1 s doubling to 60 s; lines that are not macmon's JSON are counted and reported.
//! Every such event is the sample's error; the values of the newest good line are kept
//! for at most [`stale_limit`].

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::child::{self, find_on_path, is_executable, preview, problems_result, Backoff, Stream};
use super::{Collector, GpuInfo, SamplerError};
use leet_text::sanitize;

/// Lines kept between two samples (macmon writes one per interval).
pub(crate) const MAX_LINES: usize = 64;
/// Longest line kept; a pipe line with per-core arrays is a few KiB.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;
/// More lines than this in one interval is a flood: the child is restarted.
pub(crate) const FLOOD_LINES: u64 = 50;
/// W&B's hard-coded maximum Apple GPU power (`GPUAppleStats.MAX_POWER_WATTS`).
pub(crate) const GPU_MAX_POWER_WATTS: f64 = 16.5;

const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
const PROBE_MAX_BYTES: usize = 1 << 20;
/// A child that lived this long before dying restarts after the first backoff again.
const HEALTHY_RUN: Duration = Duration::from_secs(30);

/// Values of the newest good line are reported for this long after it arrived.
pub(crate) fn stale_limit(interval: Duration) -> Duration {
    interval * 2 + Duration::from_millis(500)
}

/// A running child that sends no line for this long is restarted.
pub(crate) fn silence_limit(interval: Duration) -> Duration {
    (interval * 10).max(Duration::from_secs(10))
}

/// What `LEET_MACMON` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    /// Unset: macOS on aarch64 only.
    Auto,
    /// `1`: any system, `macmon` from `PATH`.
    Force,
    /// A path: that executable, any system.
    Path(PathBuf),
    /// `0`: never.
    Off,
}

impl Setting {
    pub(crate) fn parse(v: Option<&str>) -> Result<Self, String> {
        match v.map(str::trim) {
            None | Some("") => Ok(Self::Auto),
            Some("0" | "false" | "off" | "no") => Ok(Self::Off),
            Some("1" | "true" | "on" | "yes") => Ok(Self::Force),
            Some(p) if p.contains('/') => Ok(Self::Path(PathBuf::from(p))),
            Some(other) => Err(format!(
                "LEET_MACMON='{}' is not 0, 1 or a path to macmon",
                sanitize(other)
            )),
        }
    }
}

fn on_apple_silicon() -> bool {
    cfg!(all(target_os = "macos", target_arch = "aarch64"))
}

/// Where Homebrew (arm64), MacPorts and Homebrew (x86) put `macmon`.
const MAC_DEFAULT_PATHS: [&str; 3] = [
    "/opt/homebrew/bin/macmon",
    "/opt/local/bin/macmon",
    "/usr/local/bin/macmon",
];

fn find_macmon(look_in_mac_defaults: bool) -> Option<PathBuf> {
    find_on_path("macmon").or_else(|| {
        look_in_mac_defaults
            .then(|| {
                MAC_DEFAULT_PATHS
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| is_executable(p))
            })
            .flatten()
    })
}

/// The `macmon` to run for `setting`, or why there is none.
pub(crate) fn locate(setting: &Setting, on_apple: bool) -> Result<PathBuf, String> {
    match setting {
        Setting::Off => Err("disabled by LEET_MACMON=0".to_string()),
        Setting::Auto if !on_apple => {
            Err("not macOS on Apple Silicon (LEET_MACMON=1 reads `macmon pipe` anyway)".to_string())
        }
        Setting::Auto => find_macmon(true).ok_or_else(|| {
            "macmon not found on PATH, /opt/homebrew/bin, /opt/local/bin or /usr/local/bin \
             (brew install macmon)"
                .to_string()
        }),
        Setting::Force => find_macmon(on_apple)
            .ok_or_else(|| "macmon not found on PATH (LEET_MACMON=1)".to_string()),
        Setting::Path(p) if is_executable(p) => Ok(p.clone()),
        Setting::Path(p) => Err(format!(
            "LEET_MACMON={} is not an executable file",
            sanitize(&p.display().to_string())
        )),
    }
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    get(v, path)?.as_f64().filter(|x| x.is_finite())
}

/// A (frequency MHz, scaled ratio) pair: the ≥ 0.8 flat fields, else the ≤ 0.7 tuple.
fn cluster(v: &Value, name: &str) -> (Option<f64>, Option<f64>) {
    let tuple = v.get(format!("{name}_usage")).and_then(Value::as_array);
    let at = |i: usize| {
        tuple
            .and_then(|t| t.get(i))
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite())
    };
    (
        num(v, &[&format!("{name}_freq_mhz")]).or_else(|| at(0)),
        num(v, &[&format!("{name}_scaled_ratio")]).or_else(|| at(1)),
    )
}

/// Map one `macmon pipe` JSON line to W&B keys (see the module doc). An error when the
/// line is not JSON, not an object, or has none of macmon's fields.
pub(crate) fn macmon_metrics(line: &str) -> Result<Vec<(String, f64)>, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    if !v.is_object() {
        return Err("not a JSON object".to_string());
    }
    let mut out: Vec<(String, f64)> = Vec::with_capacity(20);
    let mut push = |k: &str, x: Option<f64>| {
        if let Some(x) = x.filter(|x| x.is_finite()) {
            out.push((k.to_string(), x));
        }
    };
    let nonzero = |x: Option<f64>| x.filter(|x| *x != 0.0);
    let pct =
        |a: Option<f64>, b: Option<f64>| a.zip(b.filter(|b| *b > 0.0)).map(|(a, b)| a / b * 100.0);
    for (name, prefix) in [("ecpu", "cpu.ecpu"), ("pcpu", "cpu.pcpu")] {
        let (freq, ratio) = cluster(&v, name);
        push(&format!("{prefix}_freq"), nonzero(freq));
        push(&format!("{prefix}_percent"), ratio.map(|r| r * 100.0));
    }
    let (gfreq, gratio) = cluster(&v, "gpu");
    push("gpu.0.freq", nonzero(gfreq));
    push("gpu.0.gpu", gratio.map(|r| r * 100.0));
    push("cpu.avg_temp", nonzero(num(&v, &["temp", "cpu_temp_avg"])));
    push("gpu.0.temp", nonzero(num(&v, &["temp", "gpu_temp_avg"])));
    let cpu_w = num(&v, &["cpu_power"]);
    let gpu_w = num(&v, &["gpu_power"]);
    let ane_w = num(&v, &["ane_power"]);
    push("cpu.powerWatts", cpu_w);
    push("gpu.0.powerWatts", gpu_w);
    push(
        "gpu.0.powerPercent",
        gpu_w.map(|w| w / GPU_MAX_POWER_WATTS * 100.0),
    );
    push("ane.power", ane_w);
    let all = num(&v, &["all_power"]).or_else(|| {
        (cpu_w.is_some() || gpu_w.is_some() || ane_w.is_some())
            .then(|| cpu_w.unwrap_or(0.0) + gpu_w.unwrap_or(0.0) + ane_w.unwrap_or(0.0))
    });
    let sys = match (num(&v, &["sys_power"]), all) {
        (Some(s), Some(a)) => Some(s.max(a)),
        (s, a) => s.or(a),
    };
    push("system.powerWatts", sys);
    let ram_used = num(&v, &["memory", "ram_usage"]);
    let ram_total = num(&v, &["memory", "ram_total"]);
    let swap_used = num(&v, &["memory", "swap_usage"]);
    let swap_total = num(&v, &["memory", "swap_total"]);
    push("memory.used", nonzero(ram_used));
    push("memory.used_percent", pct(ram_used, ram_total));
    push("gpu.0.memoryAllocated", pct(ram_used, ram_total));
    push("swap.used", nonzero(swap_used));
    push("swap.used_percent", pct(swap_used, swap_total));
    if out.is_empty() {
        return Err("none of macmon's fields".to_string());
    }
    Ok(out)
}

/// Static facts of a probe line: the `soc` block (`--soc-info`) and memory totals.
pub(crate) fn macmon_static(line: &str) -> (Vec<GpuInfo>, Vec<(String, String)>) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return (Vec::new(), Vec::new());
    };
    let mut facts = Vec::new();
    let soc = v.get("soc");
    let text = |k: &str| {
        soc.and_then(|s| s.get(k)).and_then(|x| match x {
            Value::String(s) if !s.is_empty() => Some(sanitize(s)),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    for k in [
        "chip_name",
        "mac_model",
        "ecpu_cores",
        "pcpu_cores",
        "gpu_cores",
        "memory_gb",
    ] {
        if let Some(s) = text(k) {
            facts.push((format!("apple.{k}"), s));
        }
    }
    let ram_total = num(&v, &["memory", "ram_total"]).filter(|t| *t > 0.0);
    for (key, path) in [("ram.total", "ram_total"), ("swap.total", "swap_total")] {
        if let Some(t) = num(&v, &["memory", path]).filter(|t| *t > 0.0) {
            facts.push((key.to_string(), format!("{t:.0}")));
        }
    }
    let name = match (text("chip_name"), text("gpu_cores")) {
        (Some(chip), Some(cores)) => format!("{chip} ({cores}-core GPU)"),
        (Some(chip), None) => chip,
        (None, _) => "Apple Silicon GPU".to_string(),
    };
    let gpus = vec![GpuInfo {
        name,
        memory_total: ram_total.map_or(0, |t| t as u64),
        driver: "macmon".to_string(),
    }];
    (gpus, facts)
}

struct Running {
    stream: Stream,
    started: Instant,
    last_line: Instant,
}

pub(crate) struct AppleCollector {
    program: PathBuf,
    interval: Duration,
    running: Option<Running>,
    restart_at: Option<Instant>,
    backoff: Backoff,
    latest: Option<(Instant, Vec<(String, f64)>)>,
    gpus: Vec<GpuInfo>,
    facts: Vec<(String, String)>,
}

fn probe(program: &Path) -> Result<String, String> {
    let run = |args: &[&str]| {
        child::run(program, args, PROBE_TIMEOUT, PROBE_MAX_BYTES)
            .map(|out| String::from_utf8_lossy(&out).into_owned())
    };
    // `--soc-info` is macmon ≥ 0.6.1; an older one exits rejecting it, so ask again
    // without (only then: a macmon that hangs is not given a second deadline).
    let text = match run(&["-i", "100", "pipe", "-s", "1", "--soc-info"]) {
        Err(e) if e.to_string().contains("exited with") => run(&["-i", "100", "pipe", "-s", "1"]),
        r => r,
    }
    .map_err(|e| format!("macmon pipe failed: {e}"))?;
    text.lines()
        .rev()
        .find(|l| macmon_metrics(l).is_ok())
        .map(str::to_string)
        .ok_or_else(|| {
            let first = text.lines().next().unwrap_or("");
            format!(
                "macmon pipe printed no metrics line (got '{}')",
                preview(first, 80)
            )
        })
}

impl AppleCollector {
    /// Detect from `LEET_MACMON` and the platform (see the module doc).
    pub(crate) fn detect(interval: Duration) -> Result<Self, String> {
        let setting = Setting::parse(std::env::var("LEET_MACMON").ok().as_deref())?;
        let program = locate(&setting, on_apple_silicon())?;
        Self::with_program(program, interval)
    }

    /// Probe `program` once; the long-lived child starts with the first sample, on the
    /// thread that samples (its death signal follows that thread).
    pub(crate) fn with_program(program: PathBuf, interval: Duration) -> Result<Self, String> {
        let line = probe(&program)?;
        let (gpus, facts) = macmon_static(&line);
        let first = macmon_metrics(&line)?;
        Ok(Self {
            program,
            interval: interval.max(Duration::from_millis(1)),
            running: None,
            restart_at: None,
            backoff: Backoff::new(HEALTHY_RUN),
            latest: Some((Instant::now(), first)),
            gpus,
            facts,
        })
    }

    fn interval_ms(&self) -> String {
        self.interval
            .as_millis()
            .clamp(1, u128::from(u32::MAX))
            .to_string()
    }

    /// Kill the child and schedule its restart; returns the delay.
    fn stop(&mut self, now: Instant) -> Duration {
        let lived = self
            .running
            .take()
            .map_or(Duration::ZERO, |r| now.saturating_duration_since(r.started));
        let delay = self.backoff.after(lived);
        self.restart_at = Some(now + delay);
        delay
    }

    fn start_if_due(&mut self, now: Instant, problems: &mut Vec<String>) {
        if self.running.is_some() || self.restart_at.is_some_and(|t| now < t) {
            return;
        }
        let ms = self.interval_ms();
        match Stream::spawn(
            &self.program,
            &["-i", &ms, "pipe"],
            MAX_LINES,
            MAX_LINE_BYTES,
        ) {
            Ok(stream) => {
                self.restart_at = None;
                self.running = Some(Running {
                    stream,
                    started: now,
                    last_line: now,
                });
            }
            Err(e) => {
                let delay = self.stop(now);
                problems.push(format!("{e}; retrying in {delay:?}"));
            }
        }
    }

    /// Read what the child sent; restart it when it died, flooded or went silent.
    fn read(&mut self, now: Instant, problems: &mut Vec<String>) {
        let Some(run) = self.running.as_mut() else {
            return;
        };
        let taken = run.stream.take();
        let mut newest = None;
        let mut bad = 0usize;
        let mut first_bad = None;
        for line in &taken.lines {
            match macmon_metrics(line) {
                Ok(values) => newest = Some(values),
                Err(e) => {
                    bad += 1;
                    first_bad.get_or_insert_with(|| format!("'{}': {e}", preview(line, 60)));
                }
            }
        }
        if let Some(values) = newest {
            run.last_line = now;
            self.latest = Some((now, values));
        }
        if let Some(first) = first_bad {
            problems.push(format!("{bad} line(s) not macmon's JSON, first {first}"));
        }
        let received = taken.lines.len() as u64 + taken.dropped;
        if received > FLOOD_LINES || taken.oversized > 0 {
            let delay = self.stop(now);
            problems.push(format!(
                "macmon flooded ({received} lines, {} over {MAX_LINE_BYTES} bytes, in one \
                 interval); killed, restarting in {delay:?}",
                taken.oversized
            ));
            return;
        }
        if let Some(status) = run.stream.exited() {
            let delay = self.stop(now);
            problems.push(format!("macmon exited ({status}); restarting in {delay:?}"));
            return;
        }
        let silent = now.saturating_duration_since(run.last_line);
        if silent > silence_limit(self.interval) {
            let delay = self.stop(now);
            problems.push(format!(
                "macmon sent nothing for {}s; killed, restarting in {delay:?}",
                silent.as_secs()
            ));
        } else if taken.closed {
            problems.push("macmon closed its output".to_string());
        }
    }
}

impl Collector for AppleCollector {
    fn name(&self) -> &'static str {
        "apple"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let now = Instant::now();
        let mut problems = Vec::new();
        self.read(now, &mut problems);
        self.start_if_due(now, &mut problems);
        match &self.latest {
            Some((at, values))
                if now.saturating_duration_since(*at) <= stale_limit(self.interval) =>
            {
                out.extend(values.iter().cloned());
            }
            Some((at, _)) => problems.push(format!(
                "no metrics line from macmon for {:.1}s",
                now.saturating_duration_since(*at).as_secs_f64()
            )),
            None => {}
        }
        problems_result(&self.program, &problems)
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        self.gpus.clone()
    }

    fn static_info(&self) -> Vec<(String, String)> {
        self.facts.clone()
    }
}

#[cfg(test)]
mod tests;

//! What the cluster view's data costs against a Prometheus server: the refresh
//! thread and the cluster model, without a screen. Prints the time to the first
//! full model, the CPU this process used per refresh and as a share of one core over
//! the measured span, and its peak and final RSS, beside the targets of the cluster
//! screen (first screen 1 s, 2 % of one core refreshing every 5 s, 100 MB).
//!
//! usage: cargo run --example cluster_probe -- URL [WINDOW_S] [INTERVAL_S] [SPAN_S] [MATCH...]
//! (defaults: 3600, 5, 60). Used by scripts/cluster-scale.sh.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use leet::source::http::HttpOptions;
use leet::source::prometheus::{driver, Client, ClusterUpdate, DriverOptions, Matchers};
use leet::store::cluster::ClusterModel;

/// utime + stime of this process, seconds (/proc/self/stat; clock ticks of 100 Hz,
/// the value Linux reports to user space).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat; after the `)` they are the 12th and 13th.
    (tick(11) + tick(12)) / 100.0
}

/// A `/proc/self/status` figure in kB.
fn status_kb(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn arg(args: &[String], i: usize, default: f64) -> f64 {
    args.get(i).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    // The allocator as the app sets it, so that RSS is the app's.
    leet::tune_allocator();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = args.first().ok_or_else(|| {
        anyhow::anyhow!("usage: cluster_probe URL [WINDOW_S] [INTERVAL_S] [SPAN_S] [MATCH...]")
    })?;
    let window = Duration::from_secs_f64(arg(&args, 1, 3600.0));
    let interval = Duration::from_secs_f64(arg(&args, 2, 5.0));
    let span = Duration::from_secs_f64(arg(&args, 3, 60.0));
    let matchers = Matchers::parse(args.get(4..).unwrap_or_default())?;
    let opts = HttpOptions {
        total: Duration::from_secs(30),
        max_body: 256 << 20,
        ..HttpOptions::default()
    };
    let client = Client::new(url, opts)?;

    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    let options = DriverOptions {
        matchers,
        window,
        interval: Some(interval),
    };
    driver::spawn(client, options, move |u| tx.send(u).is_ok())?;
    let mut model = ClusterModel::new(window);
    let mut first = None;
    let mut refreshes = 0u32;
    let mut cpu0 = 0.0;
    let mut failures = 0u32;
    let (mut fetches, mut screen) = (0u32, Duration::ZERO);
    while first.is_none_or(|(_, at): (Duration, Instant)| at.elapsed() < span) {
        let Ok(update) = rx.recv_timeout(Duration::from_secs(1)) else {
            continue;
        };
        let fetched = matches!(update, ClusterUpdate::Fetched(_));
        if let ClusterUpdate::Failed { error, .. } = &update {
            eprintln!("refresh failed: {error}");
            failures += 1;
        }
        model.apply(update);
        // The first answer is the screen's own keys (a full cluster screen); the
        // second, the rest over the same window (every key of every host).
        if fetched {
            fetches += 1;
            match fetches {
                1 => screen = started.elapsed(),
                2 => {
                    first = Some((started.elapsed(), Instant::now()));
                    cpu0 = cpu_seconds();
                }
                _ => refreshes += 1,
            }
        }
    }
    let cpu = cpu_seconds() - cpu0;
    let (first, at) = first.unwrap_or((Duration::ZERO, Instant::now()));
    let measured = at.elapsed().as_secs_f64();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs_f64();
    let header = model.header(now);
    let series: usize = model.hosts().map(|(_, h)| h.keys().count()).sum();
    let gpus: usize = header.iter().map(|r| r.gpus).sum();
    let heat = model.heatmap(now, 120);
    let idle = header
        .iter()
        .filter(|r| r.gpu_min.is_some_and(|m| m < 1.0))
        .count();
    println!(
        "model: {} hosts, {gpus} GPUs, {series} series, {} heatmap rows; hosts with an idle GPU: {idle}",
        header.len(),
        heat.len()
    );
    println!(
        "first full screen:  {:>8.3} s      (target: 1 s; the screen's keys: CPU, memory, each GPU's utilisation, power, memory)",
        screen.as_secs_f64()
    );
    println!(
        "first full model:   {:>8.3} s      (every key of every host)",
        first.as_secs_f64()
    );
    let per = if refreshes > 0 {
        cpu / f64::from(refreshes)
    } else {
        0.0
    };
    println!(
        "refresh CPU:        {:>8.3} % of one core over {measured:.0} s, {refreshes} refreshes every {} s, {:.1} ms CPU each   (target: 2 %)",
        cpu / measured.max(1e-9) * 100.0,
        interval.as_secs_f64(),
        per * 1000.0
    );
    println!(
        "RSS:                {:>8.1} MB now, {:.1} MB peak   (target: 100 MB)",
        status_kb("VmRSS") as f64 / 1024.0,
        status_kb("VmHWM") as f64 / 1024.0
    );
    println!(
        "model's series:     {:>8.1} MB     ({} series, at most {} points each)",
        model.bytes() as f64 / 1_048_576.0,
        series,
        model.capacity()
    );
    if std::env::var_os("PROBE_TRIM").is_some() {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only hands free memory back to the system.
        unsafe {
            libc::malloc_trim(0);
        }
        println!(
            "RSS after trim:     {:>8.1} MB",
            status_kb("VmRSS") as f64 / 1024.0
        );
    }
    if failures > 0 {
        println!("failed refreshes:   {failures}");
    }
    let (frame, cpu_frame) = frame_cost(url, model, now);
    println!(
        "cluster screen:     {:>8.1} ms per 200x60 frame, {:.1} ms CPU (the table, heatmap and charts drawn)",
        frame * 1000.0,
        cpu_frame * 1000.0
    );
    Ok(())
}

/// The cluster screen drawn from `model` at 200x60: wall and CPU seconds per frame,
/// over a few frames.
fn frame_cost(url: &str, model: ClusterModel, now: f64) -> (f64, f64) {
    use leet::msg::Msg;
    use leet::ui::{render, App, Options};
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    const FRAMES: u32 = 10;
    let window = model.window();
    let mut app = App::live(
        Options {
            color: false,
            ..Options::default()
        },
        window.as_secs_f64(),
    );
    app.open_cluster(url, window);
    if let Some(c) = app.host.cluster.as_mut() {
        c.model = model;
        c.now = now;
    }
    app.update(Msg::Resize(200, 60));
    let area = Rect::new(0, 0, 200, 60);
    let mut buf = Buffer::empty(area);
    let (t0, c0) = (Instant::now(), cpu_seconds());
    for _ in 0..FRAMES {
        render::render_buffer(&mut buf, area, &app);
    }
    let n = f64::from(FRAMES);
    (t0.elapsed().as_secs_f64() / n, (cpu_seconds() - c0) / n)
}

//! Load a run the way `leet` does on its first read (decoded on all cores, folded
//! into the store) and print the wall time, the CPU time and what was loaded:
//! the viewer's load cost without a terminal, for profiling.
//!
//! usage: cargo run --release --example load -- FILE [RUNS]
//!
//! `LEET_LOAD_NICE=1` runs the decode workers at nice 10 as the viewer's first load
//! does (`ParallelOptions::below_loop`; by default they keep the caller's priority,
//! as `leet inspect`'s do), `LEET_LOAD_THREADS=N` sets their number: the choices of
//! a viewer's first load on a busy machine, compared without a terminal.

use std::time::Instant;

/// Minor page faults of the process so far (Linux; 0 elsewhere).
fn faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_owned();
            rest.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

fn cpu_s() -> f64 {
    // utime + stime of the whole process, from /proc (Linux); 0 elsewhere.
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some(rest) = s.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: load FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
    // As `leet` does.
    leet::tune_allocator();
    for _ in 0..runs {
        let (t0, c0, f0) = (Instant::now(), cpu_s(), faults());
        match load(std::path::Path::new(&path)) {
            Ok(run) => println!(
                "wall {:.3} s  cpu {:.2} s  minor faults {}  records {}  last step {:?}",
                t0.elapsed().as_secs_f64(),
                cpu_s() - c0,
                faults() - f0,
                run.counts.total,
                run.last_step,
            ),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
}

/// [`leet::store::load::load`], with the workers' priority and number from the
/// environment.
fn load(path: &std::path::Path) -> Result<leet::store::Run, leet::source::file::SourceError> {
    use leet::decode::event::Sink as _;
    use leet::source::file::{ParallelOptions, RunReader};
    let env = |k: &str| std::env::var(k).ok();
    let mut opts = ParallelOptions {
        below_loop: env("LEET_LOAD_NICE").is_some_and(|v| v == "1"),
        ..ParallelOptions::default()
    };
    if let Some(n) = env("LEET_LOAD_THREADS").and_then(|v| v.parse().ok()) {
        opts.threads = n;
    }
    let file = leet::source::file::resolve_file(path)?;
    let mut run = leet::store::Run::new();
    let mut reader = RunReader::open(&file)?;
    if reader.wants_parallel(&opts)? {
        let p = reader.load_parallel(&opts, |ev, _| run.fold(&ev))?;
        run.at_end(p.pending, p.open);
        if !p.more {
            return Ok(run);
        }
    }
    reader.read_all(&mut run)?;
    Ok(run)
}

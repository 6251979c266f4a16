//! Load a run the way `leet` does on its first read (decoded on all cores, folded
//! into the store) and print the wall time, the CPU time and what was loaded:
//! the viewer's load cost without a terminal, for profiling.
//!
//! usage: cargo run --release --example load -- FILE [RUNS]

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
        match leet::store::load::load(std::path::Path::new(&path)) {
            Ok((_, run)) => println!(
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

//! Where a load's CPU goes, on one core and without I/O: the first `MB` megabytes
//! of a run (default 256) read into memory, then timed three ways (the thread's CPU time), each three
//! times: framing and CRC only; framing, CRC and decoding into event batches
//! (each batch dropped when full, as a worker hands it on); the same with every
//! batch folded into a run. The decode and fold figures are the differences.
//!
//! usage: cargo run --release --example decode_split -- FILE [MB]

use std::io::Read as _;

use leet::decode::decoder::Decoder;
use leet::decode::leveldb::{scan, Frame};

/// CPU time of the calling thread, in seconds: unlike the wall clock it does not
/// count the time other processes had the core.
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Batches are handed on at this many values and events, about a worker's range.
const BATCH: usize = 200_000;

/// Scan `data`, decoding every record and giving each full batch to `each`; the
/// values decoded.
fn decode(data: &[u8], mut each: impl FnMut(leet::decode::event::Events)) -> usize {
    let mut d = Decoder::new();
    let mut values = 0;
    let _ = scan(data, 0, |f| match f {
        Frame::Record { offset, payload } => {
            d.record(offset, &payload);
            if d.held() > BATCH {
                let ev = d.take();
                values += ev.values.len();
                each(ev);
            }
        }
        Frame::Skip(s) => d.skip(s),
    });
    let ev = d.take();
    values += ev.values.len();
    each(ev);
    values
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: decode_split FILE [MB]");
        std::process::exit(2);
    };
    let mb: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(256);
    let mut data = Vec::new();
    if let Err(e) = std::fs::File::open(&path).and_then(|f| f.take(mb << 20).read_to_end(&mut data))
    {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    }
    for _ in 0..3 {
        let t = cpu();
        let mut bytes = 0u64;
        let _ = scan(&data, 0, |f| {
            if let Frame::Record { payload, .. } = f {
                bytes += payload.len() as u64;
            }
        });
        let framing = cpu() - t;
        let t = cpu();
        let values = decode(&data, drop);
        let decoding = cpu() - t;
        let t = cpu();
        let mut run = leet::store::Run::new();
        decode(&data, |ev| run.fold(&ev));
        let folding = cpu() - t;
        let ns = |s: f64| s * 1e9 / values.max(1) as f64;
        println!(
            "{} MB, {values} values: framing+CRC {framing:.3} s; decode {:.3} s ({:.1} ns/value); fold {:.3} s ({:.1} ns/value)",
            data.len() >> 20,
            decoding - framing,
            ns(decoding - framing),
            folding - decoding,
            ns(folding - decoding),
        );
    }
}

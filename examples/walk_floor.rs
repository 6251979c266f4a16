//! The floor under the decoder: the least a scalar reading of wandb-core's
//! history layout can cost on this machine, to judge how far the real decoder
//! (`examples/decode_split`) is from it. It walks each history record's items
//! as wandb-core lays them out (`0A len 12 klen KEY 82 01 vlen VALUE`), compares
//! each key with the one at its position in the record before, reads each value
//! as a short decimal and keeps (position, value): nothing else — no general
//! layout, no key table, no special keys, no rows, no damage accounting. A
//! record it cannot walk so (another type, a value it cannot read this way) is
//! only counted. Not a reader: a measuring stick.
//!
//! usage: cargo run --release --example walk_floor -- FILE [MB]
//! prints, three times, the thread's CPU time for the walk of the first MB
//! megabytes (default 256), framing and CRC taken out, per value read.

use std::io::Read as _;

use leet::decode::leveldb::{scan, Frame};
use leet::decode::value::short_decimal_in;

/// CPU time of the calling thread, in seconds.
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn varint(b: &[u8], mut p: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(p)?;
        p += 1;
        v |= u64::from(x & 0x7f) << shift;
        if x < 0x80 {
            return Some((v, p));
        }
    }
    None
}

/// The history body of a record payload (`num` then field 2), if it is one.
fn history_body(p: &[u8]) -> Option<&[u8]> {
    let [0x08, ..] = p else { return None };
    let (_num, q) = varint(p, 1)?;
    if *p.get(q)? != 0x12 {
        return None;
    }
    let (len, q) = varint(p, q + 1)?;
    p.get(q..q + usize::try_from(len).ok()?)
}

/// Walk one body; None when it is not of the common layout.
#[inline(always)]
fn walk(body: &[u8], keys: &mut Vec<Vec<u8>>, out: &mut Vec<(u32, f64)>) -> Option<()> {
    let mut rest = body;
    let mut i = 0usize;
    while let [0x0A, ilen, tail @ ..] = rest {
        let (item, after) = tail.split_at_checked(usize::from(*ilen))?;
        rest = after;
        let [0x12 | 0x0A, klen, r2 @ ..] = item else {
            return None;
        };
        let (key, r3) = r2.split_at_checked(usize::from(*klen))?;
        let [0x82, 0x01, vlen, value @ ..] = r3 else {
            return None;
        };
        if value.len() != usize::from(*vlen) {
            return None;
        }
        match keys.get_mut(i) {
            Some(k) if k.as_slice() == key => {}
            Some(k) => key.clone_into(k),
            None => keys.push(key.to_vec()),
        }
        out.push((u32::try_from(i).ok()?, short_decimal_in(body, value)?));
        i += 1;
    }
    rest.is_empty().then_some(())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: walk_floor FILE [MB]");
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
        let _ = scan(&data, 0, |_| {});
        let framing = cpu() - t;
        let t = cpu();
        let mut keys = Vec::new();
        let mut out = Vec::with_capacity(1 << 18);
        let (mut values, mut other) = (0usize, 0usize);
        let _ = scan(&data, 0, |f| {
            if let Frame::Record { payload, .. } = f {
                let walked = history_body(&payload).and_then(|b| walk(b, &mut keys, &mut out));
                if walked.is_none() {
                    other += 1;
                }
                if out.len() > 200_000 {
                    values += out.len();
                    out.clear();
                }
            }
        });
        values += out.len();
        let s = cpu() - t - framing;
        println!(
            "{} MB: {values} values walked, {other} records not walked: {s:.3} s ({:.1} ns/value)",
            data.len() >> 20,
            s * 1e9 / values.max(1) as f64
        );
    }
}

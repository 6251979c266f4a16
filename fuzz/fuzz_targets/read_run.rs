//! Framing + decoding + folding into the run model, on arbitrary bytes, whole and
//! split into two appends (the tail path), plus inspect's JSON of every record.
#![no_main]

use leet::decode::json::record_json;
use leet::decode::leveldb::{scan, Frame, FILE_HEADER};
use leet::store::Run;
use libfuzzer_sys::fuzz_target;

fn feed(data: &[u8], run: &mut Run) {
    let mut base = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    let split = data.first().map_or(0, |&b| usize::from(b) * 97 % (data.len() + 1));
    for piece in [&data[..split], &data[split..]] {
        buf.extend_from_slice(piece);
        let Ok(end) = scan(&buf, base, |f| match f {
            Frame::Record { offset, payload } => {
                run.apply(offset, &payload);
                let _ = record_json(&payload);
            }
            Frame::Skip(s) => run.skip(s),
        }) else {
            return;
        };
        buf.drain(..end.consumed);
        base += end.consumed as u64;
    }
}

fuzz_target!(|data: &[u8]| {
    // Most inputs get a valid header so the fuzzer spends its time past it.
    let mut with_header = FILE_HEADER.to_vec();
    with_header.extend_from_slice(data);
    let mut run = Run::new();
    feed(&with_header, &mut run);
    let _ = leet::inspect::summary_json(std::path::Path::new("fuzz"), &run);
    let mut raw = Run::new();
    feed(data, &mut raw);
});

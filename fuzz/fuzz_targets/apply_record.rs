//! Record payloads straight into the run model and the JSON printer, skipping the
//! checksum so the fuzzer reaches the protobuf decoding. Input: records, each after a
//! two-byte little-endian length (so one input holds several records of one run).
#![no_main]

use leet::decode::json::record_json;
use leet::store::Run;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut run = Run::new();
    let mut rest = data;
    let mut offset = 7u64;
    while let Some((len, tail)) = rest.split_at_checked(2) {
        let n = usize::from(u16::from_le_bytes([len[0], len[1]])).min(tail.len());
        let (payload, next) = tail.split_at(n);
        run.apply(offset, payload);
        let _ = record_json(payload);
        offset += n as u64 + 7;
        rest = next;
    }
    let _ = leet::inspect::summary_json(std::path::Path::new("fuzz"), &run);
});

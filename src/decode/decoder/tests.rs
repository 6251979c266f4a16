//! The fast reading of history records against the general one.

use prost::Message as _;

use super::Decoder;
use crate::decode::pb;
use crate::decode::test_rng::Rng;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A record payload (`num`, then the history field) around `body`.
fn payload(num: u64, body: &[u8]) -> Vec<u8> {
    let mut p = vec![0x08];
    varint(num, &mut p);
    p.push(0x12);
    varint(body.len() as u64, &mut p);
    p.extend_from_slice(body);
    p
}

/// What a fresh decoder makes of the payloads, in order, as text (NaN compares),
/// and how many it read by the fast path.
fn decoded(payloads: &[Vec<u8>]) -> (String, usize) {
    let mut d = Decoder::new();
    for (i, p) in payloads.iter().enumerate() {
        d.record(i as u64 * 1000, p);
    }
    let fast = d.fast_rows;
    (format!("{:?}", d.take()), fast)
}

/// One of `of`, at random.
fn pick<'a>(r: &mut Rng, of: &[&'a str]) -> &'a str {
    of[(r.next() % of.len() as u64) as usize]
}

/// A history record body of the shapes wandb-core and older SDKs write, and odd
/// ones: keys as `key` or `nested_key` (one or more elements), values short and
/// long, non-finite, text, objects, typed fields, the step field.
fn body(r: &mut Rng) -> Vec<u8> {
    let keys = [
        "_step",
        "_runtime",
        "_timestamp",
        "loss",
        "acc",
        "lr",
        "a/b",
        "é",
        "",
    ];
    let values = [
        "1",
        "-2",
        "0.5",
        "-0.123456",
        "12345678",
        "1796000000.01",
        "1.7960596396246717e+09",
        "NaN",
        "Infinity",
        "-Infinity",
        "\"text\"",
        "{\"a\":1}",
        "null",
        "true",
        "1e-05",
        "00.5",
        "5.",
        ".5",
        "1..2",
        "",
        " 1",
    ];
    let mut items = Vec::new();
    for _ in 0..(r.next() % 14) {
        let key = pick(r, &keys).to_owned();
        let mut it = pb::HistoryItem {
            value_json: pick(r, &values).to_owned(),
            ..Default::default()
        };
        match r.next() % 4 {
            0 => it.key = key,
            1 => it.nested_key = vec![key, "x".into()],
            _ => it.nested_key = vec![key],
        }
        items.push(it);
    }
    let h = pb::HistoryRecord {
        item: items,
        step: (r.next() % 3 == 0).then(|| pb::HistoryStep {
            num: (r.next() % 1000) as i64,
        }),
        ..Default::default()
    };
    h.encode_to_vec()
}

/// Every history body read with the fast path gives the events the general
/// reading gives. The general reading is forced by an empty field 3 put first in
/// the body: the general reading skips it, the fast one gives up on it at once.
/// Bodies are well-formed, then cut and with bytes changed at random.
#[test]
fn the_fast_history_reading_equals_the_general_one() {
    let mut r = Rng(0x1234_5678_9ABC_DEF1);
    let (mut fast_taken, mut compared) = (0, 0);
    for round in 0..4000 {
        let mut rows = Vec::new();
        for _ in 0..(1 + r.next() % 4) {
            let mut b = body(&mut r);
            match round % 3 {
                1 if !b.is_empty() => {
                    let n = (r.next() % 3 + 1) as usize;
                    for _ in 0..n {
                        let at = (r.next() % b.len() as u64) as usize;
                        b[at] = r.next() as u8;
                    }
                }
                2 => b.truncate((r.next() % (b.len() as u64 + 1)) as usize),
                _ => {}
            }
            rows.push(b);
        }
        let fast: Vec<Vec<u8>> = rows
            .iter()
            .enumerate()
            .map(|(i, b)| payload(i as u64 + 1, b))
            .collect();
        let general: Vec<Vec<u8>> = rows
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut forced = vec![0x1A, 0x00];
                forced.extend_from_slice(b);
                payload(i as u64 + 1, &forced)
            })
            .collect();
        // The forced bodies are each one field longer: the record sizes in bad
        // spans differ by 2; compare the rest.
        let ((a, n), (g, none)) = (decoded(&fast), decoded(&general));
        assert_eq!(
            none, 0,
            "the empty field 3 sends every record the general way"
        );
        fast_taken += n;
        if a.contains("Bad") {
            assert_eq!(
                a.matches("Bad").count(),
                g.matches("Bad").count(),
                "round {round}"
            );
        } else {
            assert_eq!(a, g, "round {round}: {rows:?}");
            compared += 1;
        }
    }
    // Records of one-element keys only take the fast path; the others fall back.
    assert!(fast_taken > 1000, "{fast_taken}");
    assert!(compared > 1200, "{compared}");
}

/// Every history record of wandb-core's shape (the synthetic runs') takes the
/// fast path.
#[test]
fn wandb_core_rows_take_the_fast_path() {
    let spec = crate::decode::synth::SynthSpec {
        steps: 500,
        metrics: 12,
        ..Default::default()
    };
    let mut d = Decoder::new();
    let mut n = 0;
    crate::decode::synth::records(&spec, |p| {
        d.record(n, p);
        n += 1;
    });
    assert_eq!(d.fast_rows, 500);
}

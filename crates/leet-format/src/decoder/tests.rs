//! The fast readings of history records and summary/config items against the
//! general ones.

use prost::Message as _;

use super::Decoder;
use crate::pb;
use crate::test_rng::{push_varint, Rng};

/// A record payload (`num`, then the history field) around `body`.
fn payload(num: u64, body: &[u8]) -> Vec<u8> {
    payload_of(num, 0x12, body)
}

/// A record payload: `num`, then the body field of tag byte `tag` around `body`.
fn payload_of(num: u64, tag: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![0x08];
    push_varint(&mut p, num);
    p.push(tag);
    push_varint(&mut p, body.len() as u64);
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

/// Two decodings' events, of records that differ only in a field the general
/// reading skips: equal, or with bad records (whose sizes differ), as many of
/// them. Whether they were compared whole.
fn equal_but_bad_sizes(a: &str, b: &str, what: &str) -> bool {
    if a.contains("Bad") {
        assert_eq!(a.matches("Bad").count(), b.matches("Bad").count(), "{what}");
        false
    } else {
        assert_eq!(a, b, "{what}");
        true
    }
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
        "9007199254740993",
        "-123456789012345678901",
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
        for _ in 0..=r.next() % 4 {
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
        compared += usize::from(equal_but_bad_sizes(
            &a,
            &g,
            &format!("round {round}: {rows:?}"),
        ));
    }
    // Records of one-element keys only take the fast path; the others fall back.
    assert!(fast_taken > 1000, "{fast_taken}");
    assert!(compared > 1200, "{compared}");
}

/// Every history record of wandb-core's shape (the synthetic runs') takes the
/// fast path.
#[test]
fn wandb_core_rows_take_the_fast_path() {
    let spec = crate::synth::SynthSpec {
        steps: 500,
        metrics: 12,
        ..Default::default()
    };
    let mut d = Decoder::new();
    let mut n = 0;
    crate::synth::records(&spec, |p| {
        d.record(n, p);
        n += 1;
    });
    assert_eq!(d.fast_rows, 500);
}

/// A summary (field 3) or config (field 5) record payload of random items: keys of
/// one or more elements from a small set (so paths repeat within and across
/// records), updates and removals, values of every kind; some cut or changed.
/// `forced`: read the general way.
fn tree_payload(r: &mut Rng, num: u64, forced: bool) -> Vec<u8> {
    let parts = ["_wandb", "runtime", "m0", "a", "b/c", "é", "", "_runtime"];
    let values = [
        "0",
        "1.5",
        "\"t\"",
        "null",
        " null ",
        "{\"x\":1}",
        "",
        "\u{ff}",
    ];
    let mut items = Vec::new();
    for _ in 0..(r.next() % 8) {
        let mut it = pb::SummaryItem {
            value_json: pick(r, &values).to_owned(),
            ..Default::default()
        };
        // Paths from a handful, so that they repeat.
        let seed = r.next() % 6;
        let n = 1 + (seed % 4) as usize;
        it.nested_key = (0..n as u64)
            .map(|i| parts[((seed * 5 + i * 3) % parts.len() as u64) as usize].to_owned())
            .collect();
        if r.next() % 3 == 0 {
            it.key = it.nested_key.remove(0);
        }
        items.push(it);
    }
    let config = r.next() % 4 == 0;
    let mut body = if config {
        pb::ConfigRecord {
            update: items
                .iter()
                .map(|i| pb::ConfigItem {
                    key: i.key.clone(),
                    nested_key: i.nested_key.clone(),
                    value_json: i.value_json.clone(),
                })
                .collect(),
            ..Default::default()
        }
        .encode_to_vec()
    } else {
        let split = (r.next() % (items.len() as u64 + 1)) as usize;
        let remove = items.split_off(split);
        pb::SummaryRecord {
            update: items,
            remove,
            ..Default::default()
        }
        .encode_to_vec()
    };
    match r.next() % 5 {
        0 if !body.is_empty() => {
            let at = (r.next() % body.len() as u64) as usize;
            body[at] = r.next() as u8;
        }
        1 => body.truncate((r.next() % (body.len() as u64 + 1)) as usize),
        _ => {}
    }
    if forced {
        // An empty field 3, which the general reading skips and the fast one
        // stops at: the record is read the general way.
        body.splice(0..0, [0x1A, 0x00]);
    }
    payload_of(num, if config { 0x2A } else { 0x1A }, &body)
}

/// Summary and config items found by their key bytes give the events that
/// parsing and joining their paths gives, and records read by the fast field loop
/// the events the general field reader gives.
#[test]
fn the_path_caches_equal_the_general_reading() {
    let mut r = Rng(0x0BAD_5EED_1234_5678);
    let (mut hits, mut compared) = (0, 0);
    for round in 0..3000 {
        let n = 1 + r.next() % 6;
        let seed = r.next();
        let payloads = |forced: bool| -> Vec<Vec<u8>> {
            let mut r = Rng(seed);
            (0..n)
                .map(|i| tree_payload(&mut r, i + 1, forced))
                .collect()
        };
        let run = |cached: bool, forced: bool| {
            let mut d = Decoder::new();
            d.no_path_cache = !cached;
            for (i, p) in payloads(forced).iter().enumerate() {
                d.record(i as u64 * 1000, p);
            }
            let hits = d.path_hits;
            (format!("{:?}", d.take()), hits)
        };
        let ((a, n), (g, none)) = (run(true, false), run(false, false));
        assert_eq!(none, 0);
        assert_eq!(a, g, "round {round}");
        hits += n;
        // The fast field loop against the general one. The forced bodies are
        // each one field longer: bad spans' sizes differ; compare the rest.
        let (f, _) = run(true, true);
        compared += usize::from(equal_but_bad_sizes(&a, &f, &format!("round {round}")));
    }
    assert!(hits > 2000, "{hits}");
    assert!(compared > 1000, "{compared}");
}

/// The step field read directly equals its general reading, on varints of every
/// length, cut and extended.
#[test]
fn the_direct_step_reading_equals_the_general_one() {
    use super::history::{record_step_general, record_step_of};
    let mut r = Rng(0x7777_1234_0000_0001);
    for round in 0..20_000u64 {
        let mut b = vec![0x08];
        push_varint(&mut b, r.next() >> (r.next() % 64));
        match round % 4 {
            1 => b.truncate((r.next() % (b.len() as u64 + 1)) as usize),
            2 => b.push(r.next() as u8),
            3 => {
                let at = (r.next() % b.len() as u64) as usize;
                b[at] = r.next() as u8;
            }
            _ => {}
        }
        assert_eq!(record_step_of(&b), record_step_general(&b), "{b:02x?}");
    }
}

/// What a row says of its step and time, whether it is whole, and the bad
/// records: all that a decoder without series keeps of history (with `runtime`,
/// the row's `_runtime` too, which it does not read).
fn rows_and_bad(mut d: Decoder, payloads: &[Vec<u8>], runtime: bool) -> Vec<String> {
    for (i, p) in payloads.iter().enumerate() {
        d.record(i as u64 * 1000, p);
    }
    let ev = d.take();
    ev.list
        .iter()
        .filter_map(|e| match e {
            crate::event::Event::Row(r) => Some(format!(
                "row {:?} {:?} {:?} {}",
                r.step.map(f64::to_bits),
                r.time.map(f64::to_bits),
                r.runtime.filter(|_| runtime).map(f64::to_bits),
                r.complete
            )),
            crate::event::Event::Bad { offset, len } => Some(format!("bad {offset} {len}")),
            _ => None,
        })
        .collect()
}

/// The decoder without series (`leet inspect --summary`) tells `_step` and
/// `_timestamp` by their bytes, with no key cache, and leaves `_runtime` unread:
/// on well-formed, cut and changed bodies (text that is not UTF-8 among them) it
/// reads every row's step and time, and finds every bad record, as the decoder
/// with series does.
#[test]
fn without_series_rows_and_bad_records_equal_the_full_reading() {
    let mut r = Rng(0x0DDB_A11C_0FFE_E000);
    let mut bad = 0;
    for round in 0..3000 {
        let mut rows = Vec::new();
        for _ in 0..=r.next() % 5 {
            let mut b = body(&mut r);
            match round % 3 {
                1 if !b.is_empty() => {
                    for _ in 0..=(r.next() % 3) {
                        let at = (r.next() % b.len() as u64) as usize;
                        b[at] = 0x80 | r.next() as u8;
                    }
                }
                2 => b.truncate((r.next() % (b.len() as u64 + 1)) as usize),
                _ => {}
            }
            rows.push(b);
        }
        let payloads: Vec<Vec<u8>> = rows
            .iter()
            .enumerate()
            .map(|(i, b)| payload(i as u64 + 1, b))
            .collect();
        let full = rows_and_bad(Decoder::new(), &payloads, false);
        let lean = rows_and_bad(Decoder::without_series(), &payloads, true);
        bad += full.iter().filter(|l| l.starts_with("bad")).count();
        assert_eq!(full, lean, "round {round}: {rows:?}");
    }
    assert!(bad > 300, "too few bad records to compare: {bad}");
}

/// A history item of `key`, its value JSON `v`.
fn item(k: &str, v: &str) -> pb::HistoryItem {
    pb::HistoryItem {
        key: k.into(),
        value_json: v.into(),
        ..Default::default()
    }
}

/// A history record of `items`.
fn rec(items: Vec<pb::HistoryItem>) -> pb::HistoryRecord {
    pb::HistoryRecord {
        item: items,
        ..Default::default()
    }
}

/// A history value logged as an integer of 2^53 or more keeps its text beside its
/// nearest double (an export writes it as logged); a short one, a fraction or an
/// exponent does not; a record the fast path gives up on part way keeps each once.
#[test]
fn integers_beyond_a_doubles_reach_keep_their_text() {
    let mut d = Decoder::new();
    let plain = rec(vec![
        item("_step", "0"),
        item("big", "9007199254740993"),
        item("edge", "9007199254740992"),
        item("neg", "-9007199254741001"),
        item("huge", "123456789012345678901234567890"),
        item("short", "12"),
        item("frac", "9007199254740993.5"),
        item("exp", "1e17"),
    ]);
    d.record(0, &payload(1, &plain.encode_to_vec()));
    // The general reading (a nested key after a big integer): read once.
    let mut nested = item("", "1");
    nested.nested_key = vec!["a".into(), "b".into()];
    let general = rec(vec![item("big", "9007199254740995"), nested]);
    d.record(1000, &payload(2, &general.encode_to_vec()));
    let ev = d.take();
    let text = |i: usize| {
        ev.exact
            .iter()
            .find(|(at, _)| *at as usize == i)
            .map(|(_, t)| t.as_str())
    };
    let key_at = |i: usize| ev.keys[ev.values[i].0 as usize].as_str();
    let got: Vec<(&str, &str)> = ev
        .exact
        .iter()
        .map(|(i, t)| (key_at(*i as usize), t.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("big", "9007199254740993"),
            ("edge", "9007199254740992"),
            ("neg", "-9007199254741001"),
            ("huge", "123456789012345678901234567890"),
            ("big", "9007199254740995"),
        ]
    );
    assert_eq!(text(0), Some("9007199254740993"));
    assert_eq!(ev.values[0].1, 9_007_199_254_740_992.0);
}

/// A step logged as an integer of 2^53 or more (a `time.time_ns()` step) is kept
/// exactly beside its nearest double, from a `_step` item or the record's step
/// field, on the fast and the general reading; a fraction or an exponent is not,
/// and a later `_step` of the same row replaces it.
#[test]
fn steps_beyond_a_doubles_reach_are_kept_exactly() {
    let mut nested = item("", "1");
    nested.nested_key = vec!["a".into(), "b".into()];
    let records = [
        rec(vec![item("_step", "9007199254740992"), item("m", "10")]),
        rec(vec![item("_step", "9007199254740993"), item("m", "11")]),
        rec(vec![item("_step", "1"), item("m", "1")]),
        rec(vec![item("_step", "9223372036854775807")]),
        rec(vec![item("_step", "-9007199254740995")]),
        rec(vec![item("_step", "1e17")]),
        rec(vec![item("_step", "9007199254740993.5")]),
        rec(vec![item("_step", "99999999999999999999")]),
        // The general reading, after the fast one gave up part way.
        rec(vec![item("_step", "9007199254740997"), nested]),
        // Replaced by a later `_step` of the same row.
        rec(vec![item("_step", "9007199254740999"), item("_step", "5")]),
        rec(vec![
            item("_step", "9007199254740999"),
            item("_step", "1e17"),
        ]),
        pb::HistoryRecord {
            step: Some(pb::HistoryStep {
                num: 9_007_199_254_741_001,
            }),
            ..Default::default()
        },
    ];
    let mut d = Decoder::new();
    for (i, r) in records.iter().enumerate() {
        d.record(i as u64 * 1000, &payload(i as u64 + 1, &r.encode_to_vec()));
    }
    let ev = d.take();
    let steps: Vec<Option<i64>> = ev
        .list
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            crate::event::Event::Row(r) => Some(ev.exact_step(i, r)),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        [
            Some(9_007_199_254_740_992),
            Some(9_007_199_254_740_993),
            None,
            Some(i64::MAX),
            Some(-9_007_199_254_740_995),
            None,
            None,
            None,
            Some(9_007_199_254_740_997),
            None,
            None,
            Some(9_007_199_254_741_001),
        ]
    );
}

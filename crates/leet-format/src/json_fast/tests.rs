//! The direct writer against the general path it replaces: every case must print
//! the same bytes (or be left to the general path).

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

use super::*;

use crate::tier;

// --- a tiny protobuf encoder, so tests can write what prost would refuse ---

use crate::test_rng::push_varint as varint;

fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, u64::from(field) << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, u64::from(field) << 3);
    varint(out, v);
}

fn double_field(out: &mut Vec<u8>, field: u32, x: f64) {
    varint(out, u64::from(field) << 3 | 1);
    out.extend_from_slice(&x.to_bits().to_le_bytes());
}

/// An item: `key` (or `nested` when key is empty) and one value form.
#[derive(Clone, Debug)]
enum V {
    Json(Vec<u8>),
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Text(Vec<u8>),
    TypedJson(Vec<u8>),
}

fn item(key: &[u8], nested: &[&[u8]], v: &V) -> Vec<u8> {
    let mut b = Vec::new();
    if !key.is_empty() {
        bytes_field(&mut b, 1, key);
    }
    for n in nested {
        bytes_field(&mut b, 2, n);
    }
    match v {
        V::Json(j) => bytes_field(&mut b, 16, j),
        V::Null => varint_field(&mut b, 3, 0),
        V::Bool(x) => varint_field(&mut b, 4, u64::from(*x)),
        V::Int(i) => varint_field(&mut b, 5, ((i << 1) ^ (i >> 63)) as u64),
        V::Num(x) => double_field(&mut b, 6, *x),
        V::Text(t) => bytes_field(&mut b, 7, t),
        V::TypedJson(j) => bytes_field(&mut b, 8, j),
    }
    b
}

fn json(s: &str) -> V {
    V::Json(s.as_bytes().to_vec())
}

/// A record of `kind` (2 history, 3 summary, 5 config) with the given body.
fn record(num: u64, kind: u32, body: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    varint_field(&mut r, 1, num);
    bytes_field(&mut r, kind, body);
    r
}

fn history(items: &[Vec<u8>], step: Option<Option<u64>>) -> Vec<u8> {
    let mut b = Vec::new();
    for it in items {
        bytes_field(&mut b, 1, it);
    }
    if let Some(s) = step {
        let mut st = Vec::new();
        if let Some(n) = s {
            varint_field(&mut st, 1, n);
        }
        bytes_field(&mut b, 2, &st);
    }
    b
}

fn tree(updates: &[Vec<u8>], removes: &[Vec<u8>]) -> Vec<u8> {
    let mut b = Vec::new();
    for it in updates {
        bytes_field(&mut b, 1, it);
    }
    for it in removes {
        bytes_field(&mut b, 2, it);
    }
    b
}

/// Print `payload` both ways; they must agree byte for byte. Returns how the direct
/// writer handled it.
fn check(payload: &[u8]) -> Written {
    let mut fast = Vec::new();
    let how = write_record(payload, &mut fast, &mut Scratch::default());
    let mut general = Vec::new();
    let ok = write_general(payload, &mut general);
    assert_eq!(
        String::from_utf8_lossy(&fast),
        String::from_utf8_lossy(&general),
        "payload {payload:02x?}"
    );
    assert_eq!(ok, how != Written::Undecodable);
    how
}

/// What serde_json prints for JSON text after the general path's lenient parse.
fn reprinted(s: &str) -> String {
    serde_json::to_string(&value::parse_lenient(s)).unwrap()
}

#[test]
fn escapes_match_serde_json_for_every_ascii_character_and_unicode() {
    let mut all: Vec<String> = (0u8..0x80).map(|c| char::from(c).to_string()).collect();
    all.extend(
        [
            "plain",
            "a\"b\\c",
            "tab\there",
            "nl\nx",
            "\u{7f}del",
            "損失",
            "emoji_🚀",
            "Ünïcödé/β-γ",
            "\u{1b}[31mred",
            "\u{2028}\u{2029}",
            "\u{feff}bom",
            "",
        ]
        .map(str::to_owned),
    );
    for s in &all {
        let mut out = Vec::new();
        write_str(&mut out, s.as_bytes());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(s).unwrap(),
            "{s:?}"
        );
    }
}

#[test]
fn canonical_literals_are_exactly_what_serde_json_reprints() {
    let mut rng = StdRng::seed_from_u64(10);
    let mut literals: Vec<String> = Vec::new();
    for _ in 0..tier::size(10_000, 200_000) {
        let x: f64 = match rng.random_range(0..6) {
            0 => rng.random::<f64>(),
            1 => (rng.random::<f64>() * 1e6).round() / 1e6,
            2 => f64::from_bits(rng.random::<u64>()),
            3 => rng.random::<f64>() * 10f64.powi(rng.random_range(-8..20)),
            4 => f64::from(rng.random_range(-100_000i32..100_000)),
            _ => -(rng.random::<f64>() * 10f64.powi(rng.random_range(-6..17))),
        };
        if !x.is_finite() {
            continue;
        }
        // Rust's shortest form, its exponent form, a Python-like exponent form, and
        // fixed precisions (which may leave trailing zeros or too many digits).
        literals.push(format!("{x}"));
        literals.push(format!("{x:e}"));
        literals.push(format!("{x:?}"));
        literals.push(format!("{x:.3}"));
        literals.push(format!("{x:.17}"));
        literals.push(format!("{:.1}", x.trunc()));
    }
    for _ in 0..tier::size(5_000, 100_000) {
        // Random digit strings: leading zeros, trailing zeros, long integers.
        let int: String = (0..rng.random_range(1..22))
            .map(|_| char::from(b'0' + rng.random_range(0..10)))
            .collect();
        let frac: String = (0..rng.random_range(0..20))
            .map(|_| char::from(b'0' + rng.random_range(0..10)))
            .collect();
        let sign = if rng.random::<bool>() { "-" } else { "" };
        literals.push(format!("{sign}{int}"));
        literals.push(format!("{sign}{int}.{frac}"));
        literals.push(format!("{sign}0.{frac}"));
    }
    literals.extend(
        [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1.0",
            "100.0",
            "0.00001",
            "0.000001",
            "1e-05",
            "1e+16",
            "1e16",
            "9999999999999998.0",
            "1234567890123456.0",
            "12345678901234567.0",
            "123456789012345.6",
            "0.1234567890123456",
            "999999999999999999",
            "9999999999999999999",
            "-999999999999999999",
            "18446744073709551616",
            "00",
            "01",
            "1.",
            ".5",
            "+1",
            "1.50",
            "true",
            "false",
            "null",
            "\"a\"",
            "\"a\\\"b\"",
            "\"\u{1}\"",
            "\"ü\"",
            " 1",
            "1 ",
            "",
            "NaN",
            "Infinity",
            "-Infinity",
        ]
        .map(str::to_owned),
    );
    let mut canonical = 0usize;
    for s in &literals {
        if is_canonical(s.as_bytes()) {
            canonical += 1;
            assert_eq!(reprinted(s), *s, "{s:?} is called canonical");
        }
    }
    // The common SDK forms are taken (a test of a rule that never fires proves nothing).
    for s in [
        "0.534123",
        "-2.5",
        "1796059639.5",
        "3.0",
        "0.00042",
        "12",
        "-7",
        "true",
    ] {
        assert!(is_canonical(s.as_bytes()), "{s}");
    }
    assert!(
        canonical > literals.len() / 5,
        "{canonical} of {}",
        literals.len()
    );
}

#[test]
fn odd_values_print_as_the_general_path_prints_them() {
    let values = [
        json("0.5"),
        json("NaN"),
        json("Infinity"),
        json("-Infinity"),
        json("1e-05"),
        json("1e+16"),
        json("1.7976931348623157e308"),
        json("1e400"),
        json("5e-324"),
        json("2.2250738585072014e-308"),
        json("-0"),
        json("-0.0"),
        json("0.0"),
        json(" 1"),
        json("[1, NaN, {\"a\": Infinity}]"),
        json("{\"a\": {\"b\": [1, 2]}, \"c\": \"d\"}"),
        json("\"a\\nb\""),
        json("\"\\u00fc\""),
        json("\"ü\""),
        json(""),
        json("not json"),
        json("007"),
        json("1.50"),
        json("123456789012345678901234"),
        json("9007199254740993"),
        json("1796059639.6246717"),
        V::Null,
        V::Bool(true),
        V::Bool(false),
        V::Int(0),
        V::Int(i64::MIN),
        V::Int(i64::MAX),
        V::Num(f64::NAN),
        V::Num(f64::INFINITY),
        V::Num(f64::NEG_INFINITY),
        V::Num(-0.0),
        V::Num(0.0),
        V::Num(1e300),
        V::Num(1e-300),
        V::Num(5e-324),
        V::Num(f64::MAX),
        V::Num(0.1),
        V::Num(123_456_789.0),
        V::Text(b"plain".to_vec()),
        V::Text("tab\t\"quote\" \\ \u{1b} 損失 🚀".as_bytes().to_vec()),
        V::TypedJson(b"{\"x\": NaN}".to_vec()),
        V::TypedJson(b"42".to_vec()),
    ];
    for (i, v) in values.iter().enumerate() {
        let it = item(b"k", &[], v);
        for kind in [2, 3, 5] {
            let body = if kind == 2 {
                history(std::slice::from_ref(&it), Some(Some(i as u64)))
            } else {
                tree(std::slice::from_ref(&it), &[])
            };
            assert_eq!(check(&record(7, kind, &body)), Written::Fast, "{v:?}");
        }
    }
}

#[test]
fn keys_nesting_steps_and_empty_records_match() {
    let one = json("1");
    let cases: Vec<(u32, Vec<u8>, Written)> = vec![
        // Nested keys join with dots; keys that need escaping; unicode keys.
        (
            2,
            history(
                &[
                    item(b"", &[b"train", b"loss"], &one),
                    item("損失/\"q\"\n".as_bytes(), &[], &one),
                    item(b"", &[b"a", b"b", b"c", b"d"], &one),
                    item(b"dotted.key", &[b"ignored"], &one),
                ],
                Some(Some(3)),
            ),
            Written::Fast,
        ),
        // The same flat key twice (key "a.b" and nested ["a","b"]): left to the general path.
        (
            2,
            history(
                &[
                    item(b"a.b", &[], &one),
                    item(b"", &[b"a", b"b"], &json("2")),
                ],
                None,
            ),
            Written::General,
        ),
        (
            3,
            tree(&[item(b"x", &[], &one), item(b"x", &[], &json("2"))], &[]),
            Written::General,
        ),
        // More nested elements than the direct writer reads.
        (
            5,
            tree(&[item(b"", &[b"a", b"b", b"c", b"d", b"e"], &one)], &[]),
            Written::General,
        ),
        // Empty records.
        (2, history(&[], None), Written::Fast),
        (2, history(&[], Some(None)), Written::Fast),
        (3, tree(&[], &[]), Written::Fast),
        (5, tree(&[], &[]), Written::Fast),
        // Removes only, removes after updates, removes by key and by nested key.
        (
            3,
            tree(
                &[],
                &[
                    item(b"a.b", &[], &V::Null),
                    item(b"", &[b"a", b"b"], &V::Null),
                ],
            ),
            Written::Fast,
        ),
        (
            5,
            tree(&[item(b"u", &[], &one)], &[item(b"", &[], &V::Null)]),
            Written::Fast,
        ),
        // The step: from the record; else from the first `_step` item (numbers
        // only, NaN as 0); never from a later `_step`.
        (
            2,
            history(&[item(b"_step", &[], &json("41"))], None),
            Written::Fast,
        ),
        (
            2,
            history(&[item(b"", &[b"_step"], &json("4.7"))], None),
            Written::Fast,
        ),
        (
            2,
            history(&[item(b"_step", &[], &json("\"x\""))], None),
            Written::Fast,
        ),
        (
            2,
            history(
                &[
                    item(b"_step", &[], &json("\"x\"")),
                    item(b"s", &[], &json("2")),
                ],
                None,
            ),
            Written::Fast,
        ),
        (
            2,
            history(&[item(b"_step", &[], &json("NaN"))], None),
            Written::Fast,
        ),
        (
            2,
            history(&[item(b"_step", &[], &json("5"))], Some(Some(9))),
            Written::Fast,
        ),
    ];
    for (i, (kind, body, want)) in cases.iter().enumerate() {
        let got = check(&record(i as u64, *kind, body));
        // Duplicates may print either way; only the bytes matter there.
        if *want == Written::Fast {
            assert_eq!(got, Written::Fast, "case {i}");
        }
    }
    // Two step messages: the last one counts, a step message without num is 0.
    let mut body = history(&[item(b"m", &[], &one)], Some(Some(5)));
    bytes_field(&mut body, 2, &[]);
    assert_eq!(check(&record(1, 2, &body)), Written::Fast);
}

#[test]
fn malformed_records_are_left_to_the_general_path() {
    let good = record(
        3,
        2,
        &history(&[item(b"m", &[], &json("0.5"))], Some(Some(1))),
    );
    // Invalid UTF-8 in a key, a nested key, a value, text: undecodable both ways.
    for it in [
        item(b"\xff", &[], &json("1")),
        item(b"", &[b"a", b"\xc3"], &json("1")),
        item(b"k", &[], &V::Json(b"\"\xe2\x82\"".to_vec())),
        item(b"k", &[], &V::Text(b"\xff".to_vec())),
        item(b"k", &[], &V::TypedJson(b"\xff".to_vec())),
    ] {
        for kind in [2, 3, 5] {
            let body = if kind == 2 {
                history(std::slice::from_ref(&it), None)
            } else {
                tree(&[], std::slice::from_ref(&it))
            };
            assert_eq!(check(&record(1, kind, &body)), Written::Undecodable);
        }
    }
    // Every truncation and every single-byte change of a good record: whatever the
    // general path makes of it, the output is the same.
    for n in 0..good.len() {
        check(&good[..n]);
        for b in [0x00, 0x01, 0x07, 0x0f, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[n] = b;
            check(&bad);
        }
    }
}

#[test]
fn random_records_match_the_general_path() {
    let mut rng = StdRng::seed_from_u64(11);
    let keys: [&[u8]; 8] = [
        b"m0",
        b"train/loss",
        b"_step",
        b"a.b",
        b"",
        b"\xce\xbb",
        b"q\"",
        b"_runtime",
    ];
    let nested: [&[u8]; 4] = [b"a", b"b", b"_step", b"\xe6\x90\x8d"];
    let jsons = [
        "0.123456",
        "1796059639.6246717",
        "1e-08",
        "NaN",
        "-Infinity",
        "7",
        "-0",
        "\"s\"",
        "true",
        "null",
        "[1,2]",
        "{\"k\": NaN}",
        "",
        "0.000999995",
    ];
    let mut fast = 0;
    let records = tier::size(2_000, 20_000);
    for n in 0..records as u64 {
        let mut items = Vec::new();
        for _ in 0..rng.random_range(0..14) {
            let key = keys[rng.random_range(0..keys.len())];
            let nest: Vec<&[u8]> = (0..rng.random_range(0..3))
                .map(|_| nested[rng.random_range(0..nested.len())])
                .collect();
            let v = match rng.random_range(0..8) {
                0 => V::Num(f64::from_bits(rng.random())),
                1 => V::Int(rng.random()),
                2 => V::Bool(rng.random()),
                3 => V::Null,
                4 => V::Text(jsons[rng.random_range(0..jsons.len())].as_bytes().to_vec()),
                _ => json(jsons[rng.random_range(0..jsons.len())]),
            };
            items.push(item(key, &nest, &v));
        }
        let kind = [2, 3, 5][rng.random_range(0..3)];
        let body = if kind == 2 {
            let step = match rng.random_range(0..3) {
                0 => None,
                1 => Some(None),
                _ => Some(Some(rng.random_range(0..1000))),
            };
            history(&items, step)
        } else {
            let cut = rng.random_range(0..=items.len());
            tree(&items[..cut], &items[cut..])
        };
        let mut payload = record(n, kind, &body);
        if rng.random_range(0..10) == 0 {
            let at = rng.random_range(0..payload.len());
            payload[at] = rng.random();
        }
        if check(&payload) == Written::Fast {
            fast += 1;
        }
    }
    assert!(
        fast > records / 10,
        "the direct writer took only {fast} records"
    );
}

#[test]
fn other_record_types_go_the_general_way() {
    use prost::Message as _;
    let rec = crate::pb::Record {
        num: 9,
        record_type: Some(crate::pb::record::RecordType::Exit(
            crate::pb::RunExitRecord {
                exit_code: 0,
                runtime: 3,
                ..Default::default()
            },
        )),
        ..Default::default()
    };
    assert_eq!(check(&rec.encode_to_vec()), Written::General);
    assert_eq!(check(&[]), Written::General);
}

#[test]
fn long_float_literals_read_as_serde_json_reads_them() {
    let mut rng = StdRng::seed_from_u64(12);
    let mut literals: Vec<String> = Vec::new();
    for _ in 0..tier::size(10_000, 200_000) {
        let x = f64::from_bits(rng.random::<u64>());
        literals.push(format!("{x:?}"));
        literals.push(format!("{x:e}"));
        // The SDK's `_timestamp` and `_runtime` forms, and long digit strings that
        // fall between doubles.
        let ts = 1.7e9 + rng.random::<f64>() * 1e8;
        literals.push(format!("{ts}"));
        literals.push(format!("{ts:.7}"));
        let digits: String = (0..rng.random_range(16..26))
            .map(|_| char::from(b'0' + rng.random_range(0..10)))
            .collect();
        let exp = rng.random_range(-330..330);
        literals.push(format!("{}.{}e{exp}", rng.random_range(1..10), digits));
        literals.push(format!("-0.{digits}"));
    }
    literals.extend(
        [
            "1e400",
            "-1e400",
            "1e-400",
            "2.2250738585072011e-308",
            "4.9e-324",
            "0.0e0",
            "-0.0",
            "1E5",
            "1e+5",
            "1.e5",
            "1e",
            "01.5",
            "1.5.5",
            "1.5x",
            "--1.5",
        ]
        .map(str::to_owned),
    );
    let mut taken = 0usize;
    for s in &literals {
        let mut out = Vec::new();
        RawValue::Json(s.as_bytes()).write(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), reprinted(s), "{s:?}");
        if !is_canonical(s.as_bytes()) && float_literal(s.as_bytes()).is_some() {
            taken += 1;
        }
    }
    assert!(taken > literals.len() / 2, "{taken} of {}", literals.len());
    for s in [
        "1e400",
        "1e-400",
        "2.2250738585072011e-308",
        "0.0e0",
        "1.e5",
        "01.5",
        "7",
    ] {
        assert_eq!(float_literal(s.as_bytes()), None, "{s}");
    }
}

/// The step a `_step` item gives is exact past 2^53, and absent where no int64
/// holds it, on the direct writer as on the general one.
#[test]
fn a_step_from_the_step_item_is_exact_both_ways() {
    for (v, want) in [
        (json("9007199254740993"), Some("9007199254740993")),
        (json("9223372036854775807"), Some("9223372036854775807")),
        (json("1.5"), Some("1")),
        (json("1e20"), None),
        (V::Int(-9_007_199_254_740_993), Some("-9007199254740993")),
        (V::Num(1e20), None),
    ] {
        let payload = record(1, 2, &history(&[item(b"_step", &[], &v)], None));
        assert_eq!(check(&payload), Written::Fast, "{v:?}");
        let mut out = Vec::new();
        write_record(&payload, &mut out, &mut Scratch::default());
        let s = String::from_utf8(out).unwrap();
        let got = s
            .split_once("\"step\":{\"num\":")
            .and_then(|(_, r)| r.split_once('}'))
            .map(|(n, _)| n.to_owned());
        assert_eq!(got.as_deref(), want, "{s}");
    }
}

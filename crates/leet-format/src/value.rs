//! Item values: W&B's `value_json` is JSON text, except that non-finite floats are
//! written as the bare tokens `NaN`, `Infinity` and `-Infinity`.

use serde_json::{Map, Value};

use super::wire::ItemValue;

/// The numeric value of an item, if it has one (numbers, including NaN and ±Inf).
/// Booleans, strings, null and objects are not numeric.
#[must_use]
pub fn number(v: ItemValue<'_>) -> Option<f64> {
    match v {
        ItemValue::Number(f) => Some(f),
        ItemValue::Int(i) => Some(i as f64),
        ItemValue::Json(s) => json_number(s),
        ItemValue::Null | ItemValue::Bool(_) | ItemValue::Text(_) => None,
    }
}

/// The largest integer up to which every integer is a double (2^53); beyond it a
/// logged integer may not be the double it is read as.
pub const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Whether `s` is a JSON integer literal: `-?[0-9]+`.
#[must_use]
pub fn is_integer_literal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Parse JSON text that holds a single number (or `NaN`/`Infinity`/`-Infinity`).
#[must_use]
pub fn json_number(s: &str) -> Option<f64> {
    if let Some(f) = short_decimal(s.as_bytes()) {
        return Some(f);
    }
    let s = s.trim_ascii();
    let first = *s.as_bytes().first()?;
    match first {
        // Text that starts with a digit (after its sign) parses only as the decimal
        // grammar (`inf` and `nan`, which the parser also takes, start otherwise).
        b'0'..=b'9' => s.parse().ok(),
        b'-' => match s.as_bytes().get(1) {
            Some(b'0'..=b'9') => s.parse().ok(),
            _ if s == "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        b'N' if s == "NaN" => Some(f64::NAN),
        b'I' if s == "Infinity" => Some(f64::INFINITY),
        _ => None,
    }
}

/// Powers of ten a double holds exactly.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The fast path of [`json_number`] for the common short forms `-?D+(.D+)?` with at
/// most 15 digits: the digits as an integer (exact in a double) divided by an exact
/// power of ten is one correctly rounded operation, so the result equals the full
/// parser's. Anything else is None (and goes the long way).
#[inline]
pub fn short_decimal(b: &[u8]) -> Option<f64> {
    let (neg, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut m: u64 = 0;
    let mut n = 0usize;
    let mut frac: Option<usize> = None;
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(c - b'0');
                n += 1;
            }
            b'.' if frac.is_none() && i > 0 && i + 1 < digits.len() => frac = Some(i),
            _ => return None,
        }
    }
    if n > 15 {
        return None;
    }
    let scale = frac.map_or(0, |i| digits.len() - i - 1);
    let v = m as f64 / POW10[scale];
    Some(if neg { -v } else { v })
}

/// [`short_decimal`] of `v`, a slice of `outer`: a value of at most 8 bytes
/// after its sign, with 8 bytes of `outer` ending where it ends, is read with
/// word operations (the 8 bytes loaded at once, those before the value set to
/// `'0'`, the one `.` found and taken out, all checked to be digits and turned
/// into their integer together); anything else by [`short_decimal`]. The integer
/// and the scale are those [`short_decimal`] reads, so the result is the same
/// for every input (`the_word_reading_equals_the_bytewise_one`).
#[inline(always)]
#[must_use]
pub fn short_decimal_in(outer: &[u8], v: &[u8]) -> Option<f64> {
    let (neg, len) = match v.first() {
        Some(b'-') => (true, v.len() - 1),
        _ => (false, v.len()),
    };
    let start = (v.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
    let end = start.wrapping_add(v.len());
    let word = if (1..=8).contains(&len) && start <= end && end <= outer.len() && end >= 8 {
        outer
            .get(end - 8..end)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
    } else {
        None
    };
    let Some(word) = word else {
        return short_decimal(v);
    };
    let x = word_digits(u64::from_le_bytes(word), len)?;
    Some(if neg { -x } else { x })
}

/// The `len` last bytes of the little-endian word `x` (`len` in 1..=8) read as
/// [`short_decimal`] reads a decimal without sign.
#[inline(always)]
fn word_digits(x: u64, len: usize) -> Option<f64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const DOTS: u64 = 0x2E2E_2E2E_2E2E_2E2E;
    // The value's first byte is byte `lead`; those below it become '0'.
    let lead = 8 - len;
    let keep = !0u64 << (8 * lead);
    let mut x = (x & keep) | (ZEROS & !keep);
    // The lowest byte that is '.' (the zero-byte test is exact for the lowest).
    let t = x ^ DOTS;
    let dots = t.wrapping_sub(ONES) & !t & HIGHS;
    let mut scale = 0;
    if dots != 0 {
        let p = (dots.trailing_zeros() / 8) as usize;
        // Neither the value's first byte nor its last.
        if p <= lead || p >= 7 {
            return None;
        }
        let below = (1u64 << (8 * p)) - 1;
        let above = !((1u64 << (8 * (p + 1))) - 1);
        x = (x & above) | ((x & below) << 8) | 0x30;
        scale = 7 - p;
    }
    if (x & 0xF0F0_F0F0_F0F0_F0F0)
        | ((x.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
        != 0x3333_3333_3333_3333
    {
        return None;
    }
    // The eight digits (the first in the lowest byte) as their number.
    let x = x - ZEROS;
    let x = x * 10 + (x >> 8);
    let m = ((x & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32))
        + ((x >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some(m as f64 / POW10[scale])
}

/// An item's value as a JSON tree. Non-finite floats become the strings `"NaN"`,
/// `"Infinity"`, `"-Infinity"` (as `wandb leet inspect --json` prints them);
/// text that is not JSON at all is kept as a string.
#[must_use]
pub fn to_json(v: ItemValue<'_>) -> Value {
    match v {
        ItemValue::Null => Value::Null,
        ItemValue::Bool(b) => Value::Bool(b),
        ItemValue::Int(i) => Value::from(i),
        ItemValue::Number(f) => float(f),
        ItemValue::Text(t) => Value::String(t.to_owned()),
        ItemValue::Json(s) => parse_lenient(s),
    }
}

/// A float as JSON, non-finite values as their W&B spelling.
#[must_use]
pub fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f)
        .map_or_else(|| Value::String(non_finite(f).to_owned()), Value::Number)
}

fn non_finite(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// Parse JSON text leniently (see module docs).
#[must_use]
pub fn parse_lenient(s: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        return v;
    }
    if let Some(f) = json_number(s) {
        return float(f);
    }
    // Quote bare NaN / Infinity / -Infinity tokens outside string literals, then retry.
    let quoted = quote_non_finite(s);
    serde_json::from_str::<Value>(&quoted).unwrap_or_else(|_| Value::String(s.to_owned()))
}

fn quote_non_finite(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let mut in_str = false;
    let mut escaped = false;
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let tok = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t));
        if let Some(t) = tok {
            out.push('"');
            out.push_str(t);
            out.push('"');
            rest = &rest[t.len()..];
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Set `v` at `path` in a JSON object tree, making the objects on the way (a
/// scalar in the way is replaced by an object): how a summary or config tree is
/// shown as JSON, by the store and by the run index.
pub fn insert_path(map: &mut Map<String, Value>, path: &[String], v: Value) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.insert(head.clone(), v);
        return;
    }
    let slot = map
        .entry(head.clone())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(m) = slot {
        insert_path(m, rest, v);
    }
}

#[cfg(test)]
use crate::tier;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use super::tier;

    #[test]
    fn numbers() {
        assert_eq!(json_number("0.5"), Some(0.5));
        assert_eq!(json_number("-3"), Some(-3.0));
        assert_eq!(
            json_number("1.7960596396246717e+09"),
            Some(1.796_059_639_624_671_7e9)
        );
        assert!(json_number("NaN").is_some_and(f64::is_nan));
        assert_eq!(json_number("Infinity"), Some(f64::INFINITY));
        assert_eq!(json_number("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(json_number("\"1\""), None);
        assert_eq!(json_number("true"), None);
        assert_eq!(json_number("inf"), None);
        assert_eq!(json_number("{}"), None);
        for not_json in [
            "-inf",
            "-nan",
            "-infinity",
            "-",
            "1inf",
            "1nan",
            "0x10",
            "-a1",
        ] {
            assert_eq!(json_number(not_json), None, "{not_json}");
        }
        assert_eq!(json_number("-1.5e-3"), Some(-0.0015));
        assert_eq!(json_number(" 2 "), Some(2.0));
    }

    #[test]
    fn the_short_decimal_path_gives_the_full_parsers_bits() {
        // Every short form the fast path takes, over a spread of digit counts and
        // scales, against the standard library's correctly rounded parse.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = 1 + (x % 15) as usize;
            let m = x % 10u64.pow(u32::try_from(digits).unwrap_or(1));
            let mut s = format!("{m:0digits$}");
            let dot = (x >> 40) as usize % (digits + 1);
            if dot > 0 && dot < s.len() {
                s.insert(s.len() - dot, '.');
            }
            if x >> 63 == 1 {
                s.insert(0, '-');
            }
            let want: f64 = s.parse().expect("decimal");
            let got = short_decimal(s.as_bytes()).expect("short form");
            assert_eq!(got.to_bits(), want.to_bits(), "{s}");
            checked += 1;
        }
        assert_eq!(checked, 200_000);
        for long in [
            "1e-05",
            "1.",
            ".5",
            "1234567890123456",
            " 1",
            "+1",
            "1.2.3",
            "-",
        ] {
            assert_eq!(short_decimal(long.as_bytes()), None, "{long}");
        }
        assert_eq!(
            json_number("-0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
    }

    /// [`short_decimal_in`] against [`short_decimal`] on every kind of short
    /// input: digits, dots, signs and other bytes at every place, every length up
    /// to 18, the value at every distance from the buffer's start.
    #[test]
    fn the_word_reading_equals_the_bytewise_one() {
        let alphabet = b"0123456789.-+e /:\x00\xff9";
        let mut rng = crate::test_rng::Rng(0x2545_F491_4F6C_DD1D);
        let mut rnd = || rng.next();
        let check = |v: &[u8]| {
            for pad in [0usize, 1, 5, 7, 8, 9, 16, 40] {
                let mut outer = vec![b'7'; pad];
                outer.extend_from_slice(v);
                outer.extend_from_slice(b"99");
                let inner = &outer[pad..pad + v.len()];
                let want = short_decimal(v).map(f64::to_bits);
                let got = short_decimal_in(&outer, inner).map(f64::to_bits);
                assert_eq!(got, want, "{:?} at {pad}", String::from_utf8_lossy(v));
            }
            // A slice from elsewhere is read on its own.
            let other = b"0123456789012345678901234567890";
            assert_eq!(
                short_decimal_in(other, v).map(f64::to_bits),
                short_decimal(v).map(f64::to_bits)
            );
        };
        for _ in 0..tier::size(20_000, 300_000) {
            let r = rnd();
            let len = (r % 19) as usize;
            let mut v = Vec::with_capacity(len);
            let mut bits = rnd();
            for _ in 0..len {
                // Mostly digits, some dots and signs, a few other bytes.
                let c = match bits % 16 {
                    0 => b'.',
                    1 => b'-',
                    2 => alphabet[(bits >> 8) as usize % alphabet.len()],
                    _ => b'0' + (bits >> 4) as u8 % 10,
                };
                v.push(c);
                bits = bits.rotate_right(7) ^ rnd();
            }
            check(&v);
        }
        for s in [
            "0",
            "-0",
            "1.5",
            "-1.5",
            "12345678",
            "-12345678",
            "1234.567",
            "0.123456",
            "-0.123456",
            "1.234567",
            "123456789012345",
            "1.23456789012345",
            ".5",
            "5.",
            "-",
            "",
            "1..2",
            "1.2.3",
            "0.000001",
            "-0.0",
            "00.5",
            "1796000000.01",
            "9.999999",
        ] {
            check(s.as_bytes());
        }
    }

    #[test]
    fn lenient_json() {
        assert_eq!(parse_lenient("NaN"), json!("NaN"));
        assert_eq!(
            parse_lenient("[1, NaN, -Infinity]"),
            json!([1, "NaN", "-Infinity"])
        );
        assert_eq!(
            parse_lenient(r#"{"a":"NaN \" Infinity","b":Infinity}"#),
            json!({"a":"NaN \" Infinity","b":"Infinity"})
        );
        assert_eq!(
            parse_lenient("9007199254740993"),
            json!(9_007_199_254_740_993_i64)
        );
        assert_eq!(parse_lenient("not json"), json!("not json"));
    }
}

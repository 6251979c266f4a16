//! The inspect JSON of the hot record types (history, summary, config), written
//! straight from the wire bytes into an output buffer: no `serde_json::Value` or
//! reflected message in between, and item values copied verbatim when their text is
//! already what `serde_json` would print.
//!
//! The output is byte for byte what [`super::json::record_json`] serialized by
//! `serde_json::to_writer` gives. Anything this writer is not sure of (another record
//! type, a malformed record, a key twice in one record) is left to that general path.
//! A float whose text is not already canonical (`1e-05`, `1796059639.6246717`) is
//! read as serde_json reads it and printed by serde_json; any other value (`NaN`, an
//! object, a typed double) goes through the general path's own value conversion.

use super::json::record_json;
use super::value;
use super::wire::{Field, Fields, ItemValue};
use crate::record::record_kind;
use item::{raw_item, RawItem, RawValue, Reader};

mod item;

/// How [`write_record`] printed a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// By the direct writer: a well-formed history, summary or config record.
    Fast,
    /// By the general path ([`super::json::record_json`]).
    General,
    /// Nothing: the payload does not decode.
    Undecodable,
}

/// Reusable scratch space of [`write_record`] (one per thread).
#[derive(Debug, Default)]
pub struct Scratch {
    /// Byte ranges in the output of the keys written for the current object.
    keys: Vec<(usize, usize, u64)>,
}

/// Append the inspect JSON of one record payload to `out` (no newline).
pub fn write_record(payload: &[u8], out: &mut Vec<u8>, scratch: &mut Scratch) -> Written {
    let start = out.len();
    if write_fast(payload, out, scratch).is_some() {
        return Written::Fast;
    }
    out.truncate(start);
    if write_general(payload, out) {
        Written::General
    } else {
        Written::Undecodable
    }
}

/// The general path alone: [`record_json`] serialized, as `inspect --json` always
/// printed it. The reference the direct writer is tested against.
pub fn write_general(payload: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    match record_json(payload) {
        Some(v) if serde_json::to_writer(&mut *out, &v).is_ok() => true,
        _ => {
            out.truncate(start);
            false
        }
    }
}

fn write_fast(payload: &[u8], out: &mut Vec<u8>, scratch: &mut Scratch) -> Option<()> {
    let (num, kind, body) = record_kind(payload)?;
    let name: &[u8] = match kind {
        2 => b"history",
        3 => b"summary",
        5 => b"config",
        _ => return None,
    };
    out.extend_from_slice(b"{\"num\":");
    write_i64(out, num);
    out.extend_from_slice(b",\"type\":\"");
    out.extend_from_slice(name);
    out.extend_from_slice(b"\",\"");
    out.extend_from_slice(name);
    out.extend_from_slice(b"\":");
    if kind == 2 {
        history(body, out, scratch)?;
    } else {
        tree(body, out, scratch)?;
    }
    out.push(b'}');
    Some(())
}

fn history(body: &[u8], out: &mut Vec<u8>, scratch: &mut Scratch) -> Option<()> {
    out.extend_from_slice(b"{\"item\":{");
    scratch.keys.clear();
    let mut step: Option<i64> = None;
    // The first `_step` item's number (the record's step wins when it has one).
    let mut row_step: Option<Option<i64>> = None;
    let mut f = Reader::new(body);
    while let Some(field) = f.field().ok()? {
        match field {
            Field::Bytes(1, b) => {
                let it = raw_item(b)?;
                if row_step.is_none() && it.path_is(b"_step") {
                    row_step = Some(super::json::step_num(it.value.as_item_value()?));
                }
                entry(&it, out, scratch);
            }
            Field::Bytes(2, b) => {
                step = Some(0);
                for g in Fields::new(b) {
                    if let Field::Varint(1, v) = g {
                        step = Some(v as i64);
                    }
                }
            }
            _ => {}
        }
    }
    if has_duplicate_key(out, &scratch.keys) {
        return None;
    }
    out.push(b'}');
    let step = step.or(row_step.flatten());
    if let Some(s) = step {
        out.extend_from_slice(b",\"step\":{\"num\":");
        write_i64(out, s);
        out.push(b'}');
    }
    out.push(b'}');
    Some(())
}

fn tree(body: &[u8], out: &mut Vec<u8>, scratch: &mut Scratch) -> Option<()> {
    out.push(b'{');
    scratch.keys.clear();
    let mut any_removes = false;
    let mut f = Reader::new(body);
    while let Some(field) = f.field().ok()? {
        match field {
            Field::Bytes(1, b) => {
                let it = raw_item(b)?;
                if scratch.keys.is_empty() {
                    out.extend_from_slice(b"\"update\":{");
                }
                entry(&it, out, scratch);
            }
            Field::Bytes(2, _) => any_removes = true,
            _ => {}
        }
    }
    if has_duplicate_key(out, &scratch.keys) {
        return None;
    }
    let updates = !scratch.keys.is_empty();
    if updates {
        out.push(b'}');
    }
    let mut removes = 0usize;
    let mut f = Reader::new(if any_removes { body } else { &[] });
    while let Some(field) = f.field().ok()? {
        if let Field::Bytes(2, b) = field {
            let it = raw_item(b)?;
            out.extend_from_slice(match (removes, updates) {
                (0, true) => b",\"remove\":[",
                (0, false) => b"\"remove\":[",
                _ => b",",
            });
            removes += 1;
            if it.key.is_empty() {
                out.extend_from_slice(b"{\"nested_key\":[");
                for (i, p) in it.nested().iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_str(out, p);
                }
                out.extend_from_slice(b"]}");
            } else {
                out.extend_from_slice(b"{\"key\":");
                write_str(out, it.key);
                out.push(b'}');
            }
        }
    }
    if removes > 0 {
        out.push(b']');
    }
    out.push(b'}');
    Some(())
}

/// `"flat.key":value`, with a comma before all but the first.
fn entry(it: &RawItem<'_>, out: &mut Vec<u8>, scratch: &mut Scratch) {
    if !scratch.keys.is_empty() {
        out.push(b',');
    }
    let k0 = out.len();
    out.push(b'"');
    if it.key.is_empty() {
        for (i, p) in it.nested().iter().enumerate() {
            if i > 0 {
                out.push(b'.');
            }
            escape_into(out, p);
        }
    } else {
        escape_into(out, it.key);
    }
    out.push(b'"');
    scratch.keys.push((k0, out.len(), key_sketch(&out[k0..])));
    out.push(b':');
    it.value.write(out);
}

/// A cheap summary of a key (its length and first and last bytes): equal keys have
/// equal sketches, so only keys with equal sketches are compared byte by byte.
#[inline(always)]
fn key_sketch(k: &[u8]) -> u64 {
    // Fixed-size loads and a short loop: no library call per key.
    let word = |b: &[u8]| match b.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w),
        None => b.iter().fold(0u64, |w, &c| (w << 8) | u64::from(c)),
    };
    let tail = &k[k.len().saturating_sub(8)..];
    (word(k) ^ word(tail).rotate_left(29)).wrapping_add((k.len() as u64) << 56)
}

/// Whether two of the keys (ranges of `out`, with their hashes) are equal: the
/// general path keeps the first one's place with the last one's value, which this
/// writer leaves to it.
fn has_duplicate_key(out: &[u8], keys: &[(usize, usize, u64)]) -> bool {
    let key = |&(a, b, _): &(usize, usize, u64)| &out[a..b];
    if keys.len() <= 32 {
        return keys
            .iter()
            .enumerate()
            .any(|(i, k)| keys[..i].iter().any(|j| j.2 == k.2 && key(j) == key(k)));
    }
    let mut sorted: Vec<&[u8]> = keys.iter().map(key).collect();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

impl RawValue<'_> {
    fn write_general(self, out: &mut Vec<u8>) {
        if let Some(v) = self.as_item_value() {
            write_value(out, v);
        }
    }

    /// The value, as `serde_json` prints [`value::to_json`] of it.
    fn write(self, out: &mut Vec<u8>) {
        match self {
            RawValue::Json(s) if is_canonical(s) => out.extend_from_slice(s),
            RawValue::Text(t) => write_str(out, t),
            RawValue::Json(s) => match float_literal(s) {
                // Writing to a Vec cannot fail; this is serde_json's own float printer.
                Some(x) => drop(serde_json::to_writer(&mut *out, &x)),
                None => RawValue::Json(s).write_general(out),
            },
            other => other.write_general(out),
        }
    }
}

/// An integer as `serde_json` (itoa) prints it: plain decimal digits.
fn write_i64(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// One item value, as `serde_json` prints [`value::to_json`] of it.
pub(crate) fn write_value(out: &mut Vec<u8>, v: ItemValue<'_>) {
    match v {
        ItemValue::Null => out.extend_from_slice(b"null"),
        ItemValue::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        ItemValue::Int(i) => write_i64(out, i),
        ItemValue::Text(t) => write_str(out, t.as_bytes()),
        ItemValue::Json(s) if is_canonical(s.as_bytes()) => out.extend_from_slice(s.as_bytes()),
        ItemValue::Number(x) if x.is_finite() => {
            // Writing to a Vec cannot fail; this is serde_json's own float printer.
            let _ = serde_json::to_writer(&mut *out, &x);
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, &value::to_json(other));
        }
    }
}

/// Whether JSON text is already exactly what parsing it and printing it again with
/// `serde_json` gives: `true`, `false`, `null`, a string with nothing to escape, an
/// integer of up to 18 digits, or a decimal of at most 15 significant digits in the
/// layout serde_json prints (`12.5`, `0.00042`, `3.0`; not `1e-05`, `0.50` or `-0`).
///
/// Why 15 digits is enough: distinct decimals of at most 15 significant digits are
/// distinct doubles, so the shortest decimal that reads back as the parsed double is
/// this one; and serde_json's shortest-digits printer (zmij, ryu before it) writes
/// it in plain notation, as here, while the leading digit's decimal exponent is
/// from -5 to 15. The unit tests check the rule against serde_json itself.
fn is_canonical(s: &[u8]) -> bool {
    match s {
        b"true" | b"false" | b"null" => true,
        [b'"', inner @ .., b'"'] => !inner.iter().any(|&b| needs_escape(b)),
        [b'-', rest @ ..] => rest != b"0" && canonical_number(rest),
        _ => canonical_number(s),
    }
}

/// The value of a JSON number literal with a fraction or an exponent (which
/// serde_json reads as an f64), when it is a normal finite double: both parsers
/// round correctly, so it is the double serde_json reads. Others are left alone
/// (overflow, underflow, integers and anything that is not strict JSON).
fn float_literal(s: &[u8]) -> Option<f64> {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let body = s.strip_prefix(b"-").unwrap_or(s);
    let int = digits(body);
    if int == 0 || (int > 1 && body[0] == b'0') {
        return None;
    }
    let mut rest = &body[int..];
    let mut float = false;
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = digits(frac);
        if n == 0 {
            return None;
        }
        rest = &frac[n..];
        float = true;
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"+")
            .or_else(|| exp.strip_prefix(b"-"))
            .unwrap_or(exp);
        let n = digits(exp);
        if n == 0 {
            return None;
        }
        rest = &exp[n..];
        float = true;
    }
    if !float || !rest.is_empty() {
        return None;
    }
    let x: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    x.is_normal().then_some(x)
}

fn canonical_number(s: &[u8]) -> bool {
    // One pass: the integer part, then the fraction.
    let int_len = match s.first() {
        Some(b'0') => 1,
        Some(b'1'..=b'9') => s.iter().take_while(|b| b.is_ascii_digit()).count(),
        _ => return false,
    };
    let Some((&dot, frac)) = s[int_len..].split_first() else {
        return int_len <= 18;
    };
    if dot != b'.' || frac.is_empty() {
        return false;
    }
    let mut zeros = 0; // leading zeros of the fraction
    let mut seen = false; // a non-zero digit in the fraction
    for &b in frac {
        match b {
            b'0' if !seen => zeros += 1,
            b'0'..=b'9' => seen = true,
            _ => return false,
        }
    }
    if frac == b"0" {
        // An integral value: printed as its integer digits and `.0`.
        let sig = int_len
            - s[..int_len]
                .iter()
                .rev()
                .take_while(|&&b| b == b'0')
                .count();
        return int_len <= 16 && sig <= 15;
    }
    if !seen || frac.last() == Some(&b'0') {
        return false;
    }
    if s[0] == b'0' {
        zeros <= 4 && frac.len() - zeros <= 15
    } else {
        int_len + frac.len() <= 15
    }
}

#[inline(always)]
fn needs_escape(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// A JSON string literal (of UTF-8 bytes), escaped as `serde_json` escapes it.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    escape_into(out, s);
    out.push(b'"');
}

/// The contents of a JSON string literal, escaped as `serde_json` escapes them:
/// `"`, `\` and control characters below U+0020 only (`\b \t \n \f \r` by name, the
/// rest as `\u00xx`).
fn escape_into(out: &mut Vec<u8>, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut from = 0;
    if !b.iter().any(|&c| needs_escape(c)) {
        out.extend_from_slice(b);
        return;
    }
    for (i, &c) in b.iter().enumerate() {
        if !needs_escape(c) {
            continue;
        }
        out.extend_from_slice(&b[from..i]);
        from = i + 1;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]),
        }
    }
    out.extend_from_slice(&b[from..]);
}

#[cfg(test)]
mod tests;

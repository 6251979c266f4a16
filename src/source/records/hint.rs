//! What the record inspector shows of a record: a one-line hint for its list row
//! and the whole body for the detail pane, both from the record's `inspect --json`
//! object ([`record_json`]), sanitized.

use serde_json::{Map, Value};

use leet_format::json::record_json;
use leet_format::leveldb::SkipReason;
use leet_format::record::RecordType;
use leet_text::{flatten_into, sanitize};

/// Longest hint kept, in characters (the widest list is narrower).
const HINT_CHARS: usize = 240;

/// Most bytes of a body shown; the rest is left out with a line saying so.
pub(crate) const BODY_BYTES: usize = 4 << 20;

/// Most lines of a body shown.
const BODY_LINES: usize = 100_000;

/// The hint of a damaged span.
pub(crate) fn skip_hint(len: Option<(u64, SkipReason)>) -> String {
    match len {
        Some((len, reason)) => format!("⚠ {len} bytes skipped ({reason})"),
        None => "⚠ bytes skipped".to_owned(),
    }
}

/// The hint of an undecodable record.
pub(crate) fn bad_hint(len: usize) -> String {
    format!("⚠ undecodable record, {len} bytes")
}

/// The hint of a record payload.
pub(crate) fn record_hint(payload: &[u8]) -> String {
    match record_json(payload) {
        Some(v) => hint_of(&v),
        None => bad_hint(payload.len()),
    }
}

/// A number as the hint shows it: integers whole, others to 4 significant digits.
fn short_value(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f != 0.0 && (f.abs() >= 1e6 || f.abs() < 1e-3) {
                format!("{f:.3e}")
            } else {
                let s = format!("{f:.4}");
                s.trim_end_matches('0').trim_end_matches('.').to_owned()
            }
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `k=v` pairs of an object (flattened), `_step` first, keys with a leading
/// underscore after the others.
fn pairs(m: &Map<String, Value>) -> String {
    let mut keys: Vec<(&String, &Value)> = m.iter().collect();
    keys.sort_by(|a, b| {
        let rank = |k: &str| (k != "_step", k.starts_with('_'));
        rank(a.0).cmp(&rank(b.0)).then_with(|| a.0.cmp(b.0))
    });
    let mut out = String::new();
    for (k, v) in keys {
        if out.len() > HINT_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        match v {
            Value::Object(inner) => {
                let mut rows = Vec::new();
                flatten_into(k, inner, &mut rows);
                let parts: Vec<String> =
                    rows.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push_str(&parts.join(" "));
            }
            v => {
                out.push_str(k);
                out.push('=');
                out.push_str(&short_value(v));
            }
        }
    }
    out
}

/// The hint of a record's inspect JSON object.
pub(crate) fn hint_of(v: &Value) -> String {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let body = v.get(kind).and_then(Value::as_object);
    let empty = Map::new();
    let body = body.unwrap_or(&empty);
    let obj = |k: &str| body.get(k).and_then(Value::as_object);
    let text = match kind {
        "history" | "stats" => obj("item").map(pairs).unwrap_or_default(),
        "summary" => obj("update").map(pairs).unwrap_or_default(),
        "config" => {
            let mut rows = Vec::new();
            if let Some(u) = obj("update") {
                flatten_into("", u, &mut rows);
            }
            let keys: Vec<&str> = rows
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| !k.starts_with("_wandb"))
                .collect();
            if keys.is_empty() {
                String::new()
            } else {
                format!("set {}", keys.join(", "))
            }
        }
        "output" | "output_raw" => {
            let line = body.get("line").and_then(Value::as_str).unwrap_or("");
            let first = line
                .split('\n')
                .find(|l| !l.trim().is_empty())
                .unwrap_or(if line.is_empty() { "" } else { "⏎" });
            let err = body.get("output_type").and_then(Value::as_str) == Some("STDERR");
            format!("{}{first}", if err { "stderr: " } else { "" })
        }
        "run" => ["display_name", "run_id", "project"]
            .iter()
            .filter_map(|k| body.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => pairs(body),
    };
    let mut s = sanitize(&text);
    if s.chars().count() > HINT_CHARS {
        s = s.chars().take(HINT_CHARS).collect();
        s.push('…');
    }
    s
}

/// A writer that keeps the first `room` bytes and refuses the rest (so a huge
/// record is never pretty-printed whole).
struct Capped {
    buf: Vec<u8>,
    room: usize,
    cut: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = b.len().min(self.room - self.buf.len());
        self.buf.extend_from_slice(&b[..n]);
        if n < b.len() {
            self.cut = true;
            return Err(std::io::Error::other("body cut"));
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A body as lines, pretty-printed and sanitized, cut at [`BODY_BYTES`] and
/// [`BODY_LINES`].
pub(crate) fn body_lines(v: &Value) -> Vec<String> {
    let mut w = Capped {
        buf: Vec::new(),
        room: BODY_BYTES,
        cut: false,
    };
    let _ = serde_json::to_writer_pretty(&mut w, v);
    let text = String::from_utf8_lossy(&w.buf);
    let mut out: Vec<String> = text.lines().take(BODY_LINES).map(sanitize).collect();
    if w.cut || out.len() == BODY_LINES {
        if w.cut {
            // The last line may be cut anywhere.
            out.pop();
        }
        out.push(format!(
            "… the rest left out after {} lines (`leet inspect --json` prints it whole)",
            out.len()
        ));
    }
    out
}

/// The body of a record payload.
pub(crate) fn record_body(offset: u64, payload: &[u8]) -> Vec<String> {
    match record_json(payload) {
        Some(v) => body_lines(&v),
        None => vec![format!(
            "undecodable record at offset {offset}, {} bytes: its framing is whole, its fields do not parse",
            payload.len()
        )],
    }
}

/// The body of a damaged span: the span as `inspect --summary --json` lists it.
pub(crate) fn skip_body(offset: u64, skip: Option<(u64, SkipReason)>) -> Vec<String> {
    let v = match skip {
        Some((len, reason)) => {
            serde_json::json!({"offset": offset, "len": len, "reason": reason.as_str()})
        }
        None => serde_json::json!({ "offset": offset }),
    };
    let mut lines = vec!["damaged span, skipped:".to_owned()];
    lines.extend(body_lines(&v));
    lines
}

/// The kind byte of a record payload: its [`RecordType::index`], or
/// [`crate::msg::KIND_BAD`] when its fields do not parse.
pub(crate) fn kind_of(payload: &[u8]) -> u8 {
    leet_format::record::record_kind(payload).map_or(crate::msg::KIND_BAD, |(_, k, _)| {
        u8::try_from(RecordType::from_field(k).index()).unwrap_or(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_body_is_cut_and_says_so() {
        let big: Vec<Value> = (0..BODY_BYTES / 4).map(Value::from).collect();
        let lines = body_lines(&Value::Array(big));
        let shown: usize = lines.iter().map(|l| l.len() + 1).sum();
        assert!(shown <= BODY_BYTES + 200, "{shown}");
        assert!(
            lines.last().is_some_and(|l| l.contains("left out")),
            "{:?}",
            lines.last()
        );
        let small = body_lines(&serde_json::json!({"a": "x\u{1b}[2Jy"}));
        assert_eq!(small, ["{", "  \"a\": \"x\\u001b[2Jy\"", "}"]);
    }

    #[test]
    fn hints_put_the_step_first_and_cut_long_text() {
        let v = serde_json::json!({"num": 9, "type": "history", "history": {"item": {
            "loss": 0.123_456, "_runtime": 1.5, "_step": 3, "acc": 1e-5}}});
        assert_eq!(hint_of(&v), "_step=3 acc=1.000e-5 loss=0.1235 _runtime=1.5");
        let v = serde_json::json!({"type": "output_raw", "output_raw": {
            "line": "\n\x1b[31mred\x1b[0m text\nmore", "output_type": "STDERR"}});
        assert_eq!(hint_of(&v), "stderr: red text");
        let v = serde_json::json!({"type": "config", "config": {"update": {
            "_wandb": {"x": 1}, "lr": 0.1, "model": {"depth": 3}}}});
        assert_eq!(hint_of(&v), "set lr, model.depth");
        let long = "x".repeat(1000);
        let v = serde_json::json!({"type": "output", "output": {"line": long}});
        assert_eq!(hint_of(&v).chars().count(), HINT_CHARS + 1);
    }
}

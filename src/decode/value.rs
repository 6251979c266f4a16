//! Item values: W&B's `value_json` is JSON text, except that non-finite floats are
//! written as the bare tokens `NaN`, `Infinity` and `-Infinity`.

use serde_json::Value;

use super::wire::ItemValue;

/// The numeric value of an item, if it has one (numbers, including NaN and ±Inf).
/// Booleans, strings, null and objects are not numeric.
#[must_use]
pub fn number(v: ItemValue<'_>) -> Option<f64> {
    match v {
        ItemValue::Number(f) => Some(f),
        #[allow(clippy::cast_precision_loss)]
        ItemValue::Int(i) => Some(i as f64),
        ItemValue::Json(s) => json_number(s),
        ItemValue::Null | ItemValue::Bool(_) | ItemValue::Text(_) => None,
    }
}

/// Parse JSON text that holds a single number (or `NaN`/`Infinity`/`-Infinity`).
#[must_use]
pub fn json_number(s: &str) -> Option<f64> {
    let s = s.trim_ascii();
    let first = *s.as_bytes().first()?;
    match first {
        b'0'..=b'9' | b'-' => match s {
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ if s
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')) =>
            {
                s.parse().ok()
            }
            _ => None,
        },
        b'N' if s == "NaN" => Some(f64::NAN),
        b'I' if s == "Infinity" => Some(f64::INFINITY),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

//! A history Parquet file, as W&B's exporter lays it out (wandb-core's
//! `runhistoryreader`): one row per history row, one column per history key
//! (`_step`, `_timestamp`, `_runtime` among them); a nested key is a group column
//! whose fields are its parts. Each row comes out as (key path, value as JSON),
//! nulls (a key the row did not log) left out.

use bytes::Bytes;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::record::{Field, Row};
use serde_json::Value;

/// The file's key-value metadata naming (as a JSON list) the columns whose UTF8
/// text is each value's text as logged, not strict JSON (`NaN`, a value that does
/// not parse): `leet export` writes them so (never typed JSON, which readers would
/// reject), and they are read back as a JSON column's are.
pub const VALUE_TEXT_KEY: &str = "leet.value_text";

/// One history row: each logged key's path and its value as JSON text.
pub type HistoryRow = Vec<(Vec<String>, String)>;

/// Whether `bytes` look like a whole Parquet file: its footer and metadata read
/// (what a body of another kind, or one cut short, does not have). The rows are
/// not read; [`read_rows`] can still fail on a damaged page.
///
/// # Errors
/// The Parquet reader's message.
pub fn check(bytes: &Bytes) -> Result<(), String> {
    SerializedFileReader::new(bytes.clone())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Read every row of a history file.
///
/// # Errors
/// The Parquet reader's message (not Parquet, cut short, a codec not built in).
pub fn read_rows(bytes: Bytes) -> Result<Vec<HistoryRow>, String> {
    let reader = SerializedFileReader::new(bytes).map_err(|e| e.to_string())?;
    // Columns of JSON text (a column of several kinds, as `leet export` writes
    // it): their text is the value, not a string.
    let meta = reader.metadata().file_metadata();
    let value_text: Vec<String> = meta
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == VALUE_TEXT_KEY))
        .and_then(|k| k.value.as_deref())
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default();
    let json_cols: Vec<Vec<String>> = meta
        .schema_descr()
        .columns()
        .iter()
        .filter(|c| {
            c.converted_type() == parquet::basic::ConvertedType::JSON
                || (c.path().parts().len() == 1 && value_text.iter().any(|n| n == c.name()))
        })
        .map(|c| c.path().parts().to_vec())
        .collect();
    let iter = reader.get_row_iter(None).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for row in iter {
        let row = row.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        flatten(&row, &mut Vec::new(), &json_cols, &mut out);
        rows.push(out);
    }
    Ok(rows)
}

fn flatten(row: &Row, path: &mut Vec<String>, json_cols: &[Vec<String>], out: &mut HistoryRow) {
    for (name, field) in row.get_column_iter() {
        path.push(name.clone());
        match field {
            Field::Null => {}
            Field::Group(g) => flatten(g, path, json_cols, out),
            Field::Str(s) if json_cols.contains(path) => out.push((path.clone(), s.clone())),
            f => out.push((path.clone(), json_text(f))),
        }
        path.pop();
    }
}

/// A value as W&B writes it in a history item: numbers as JSON numbers (NaN and
/// the infinities as W&B spells them), anything else as its JSON.
fn json_text(f: &Field) -> String {
    let number = match f {
        Field::Float(x) => Some(f64::from(*x)),
        Field::Double(x) => Some(*x),
        _ => None,
    };
    match number {
        Some(x) if x.is_nan() => "NaN".to_owned(),
        Some(x) if x.is_infinite() => if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
        Some(x) => Value::from(x).to_string(),
        None => json(f).to_string(),
    }
}

fn json(f: &Field) -> Value {
    match f {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(x) => Value::from(*x),
        Field::Short(x) => Value::from(*x),
        Field::Int(x) => Value::from(*x),
        Field::Long(x) => Value::from(*x),
        Field::UByte(x) => Value::from(*x),
        Field::UShort(x) => Value::from(*x),
        Field::UInt(x) => Value::from(*x),
        Field::ULong(x) => Value::from(*x),
        Field::Float(x) => Value::from(f64::from(*x)),
        Field::Double(x) => Value::from(*x),
        Field::Str(s) => Value::String(s.clone()),
        Field::Group(r) => Value::Object(
            r.get_column_iter()
                .map(|(k, v)| (k.clone(), json(v)))
                .collect(),
        ),
        Field::ListInternal(l) => Value::Array(l.elements().iter().map(json).collect()),
        // Dates, times, decimals, bytes, maps: as the Parquet crate prints them.
        other => Value::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_parquet_are_an_error_not_a_panic() {
        for b in [
            Vec::new(),
            b"PAR1".to_vec(),
            b"PAR1garbagePAR1".to_vec(),
            vec![0; 100],
        ] {
            let b = Bytes::from(b);
            assert!(check(&b).is_err());
            assert!(read_rows(b).is_err());
        }
    }

    #[test]
    fn numbers_keep_w_and_b_spelling() {
        assert_eq!(json_text(&Field::Double(f64::NAN)), "NaN");
        assert_eq!(json_text(&Field::Double(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(json_text(&Field::Double(0.5)), "0.5");
        assert_eq!(json_text(&Field::Long(7)), "7");
        assert_eq!(json_text(&Field::Str("a\"b".into())), "\"a\\\"b\"");
    }
}

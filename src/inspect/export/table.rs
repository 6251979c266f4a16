//! The export's writers: rows of values (and, in the long form, a key) as CSV,
//! JSON lines or Parquet. Parquet rows are buffered into row groups of a bounded
//! number of cells. Parquet columns are typed by what they logged (integers an i64
//! holds INT64, other numbers DOUBLE, booleans BOOLEAN, strings UTF8, a column of
//! several kinds or of lists each value's JSON text, typed JSON when every such text
//! is JSON, else UTF8) and zstd-compressed.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use leet_text::{json_inert, json_inert_from};
use parquet::basic::{Compression, ConvertedType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Csv,
    Jsonl,
    Parquet,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "jsonl" | "json" => Ok(Format::Jsonl),
            "parquet" => Ok(Format::Parquet),
            _ => Err(format!("unknown format {s:?} (csv, jsonl, parquet)")),
        }
    }
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
            Format::Parquet => "parquet",
        }
    }

    /// The format a file name's extension says (`.csv`, `.jsonl` or `.json`,
    /// `.parquet` or `.pq`; any case), None for another or none.
    pub fn of_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "pq" => Some(Format::Parquet),
            "json" | "ndjson" => Some(Format::Jsonl),
            e => e.parse().ok(),
        }
    }

    /// The format to write: `--format` where given, else the output's extension,
    /// else CSV. A `--format` that another format's extension contradicts is an
    /// error (`-o run.parquet --format csv` would write CSV into a `.parquet`).
    ///
    /// # Errors
    /// [`FormatMismatch`], naming both.
    pub fn pick(given: Option<Self>, output: Option<&Path>) -> Result<Self, FormatMismatch> {
        let by_ext = output.and_then(Self::of_path);
        match (given, by_ext) {
            (Some(g), Some(e)) if g != e => Err(FormatMismatch {
                format: g,
                output: output.map(Path::to_path_buf).unwrap_or_default(),
                by_extension: e,
            }),
            (Some(f), _) | (None, Some(f)) => Ok(f),
            (None, None) => Ok(Format::Csv),
        }
    }
}

/// `--format` says one format and the output's extension another.
#[derive(Debug, thiserror::Error)]
#[error(
    "--format {} but the output {} is named as {} by its extension; give one of them, or make them agree",
    .format.name(),
    leet_text::sanitize_path(.output),
    .by_extension.name()
)]
pub struct FormatMismatch {
    pub format: Format,
    pub output: std::path::PathBuf,
    pub by_extension: Format,
}

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColKind {
    Num,
    /// Numbers that are all integers an i64 holds (`_step`, counters): INT64 in
    /// Parquet, integers (no `.0`) in JSON lines.
    Int,
    /// Names (the long form's key): UTF8.
    Text,
    /// Booleans: BOOLEAN.
    Bool,
    /// Strings: UTF8.
    Str,
    /// Values of several kinds, or lists and objects: each value's JSON text (JSON).
    Json,
    /// As [`ColKind::Json`], but some value's text is not JSON (a non-finite number
    /// written `NaN`, a value logged as text no JSON reader takes): the same text,
    /// typed plain UTF8, so that a reader trusting the JSON type is not lied to.
    NotJson,
}

impl ColKind {
    /// Whether the column holds numbers (and so may be smoothed).
    pub(super) fn is_number(self) -> bool {
        matches!(self, ColKind::Num | ColKind::Int)
    }
}

/// Whether `v` is an integer an f64 holds exactly, so that INT64 keeps it as it is.
/// `-0` is not: an integer column would drop its sign (CSV writes it `-0`).
pub(super) fn is_integer(v: f64) -> bool {
    v.fract() == 0.0
        && v.abs() <= leet_format::value::EXACT_INT
        && (v != 0.0 || v.is_sign_positive())
}

/// A logged value that is not a plain double.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Other {
    /// An integer beyond 2^53 that an i64 holds: exactly as logged.
    Int(i64),
    /// An integer beyond an i64: its decimal text as logged.
    Big(String),
    Bool(bool),
    Str(String),
    /// Any other JSON (a list, an object, a value of no JSON kind), as logged.
    Json(String),
}

impl Other {
    /// Whether it is a number (an integer of 2^53 or more).
    pub(super) fn is_number(&self) -> bool {
        matches!(self, Other::Int(_) | Other::Big(_))
    }

    /// Its JSON text.
    fn json_text(&self, out: &mut Vec<u8>) {
        match self {
            Other::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
            Other::Big(t) | Other::Json(t) => out.extend_from_slice(t.as_bytes()),
            Other::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Other::Str(s) => {
                // Writing to a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, s);
            }
        }
    }

    /// As a JSON value (a list's text parsed; an integer beyond a u64 kept as
    /// its text's nearest double is not exact, so it is written as text instead).
    fn to_json(&self) -> serde_json::Value {
        match self {
            Other::Int(i) => serde_json::Value::from(*i),
            Other::Big(t) => t
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(t.as_str()), Into::into),
            Other::Bool(b) => serde_json::Value::Bool(*b),
            Other::Str(s) => serde_json::Value::from(s.as_str()),
            Other::Json(t) => leet_format::value::parse_lenient(t),
        }
    }
}

/// One cell: a number (None: missing), text (a name), or a value that is not a
/// plain double.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cell<'a> {
    Num(Option<f64>),
    Text(&'a str),
    Other(&'a Other),
}

/// Parquet cells buffered before a row group is written.
const GROUP_CELLS: usize = 1 << 20;

enum Buf {
    Num(Vec<f64>, Vec<i16>),
    Int(Vec<i64>, Vec<i16>),
    Bool(Vec<bool>, Vec<i16>),
    Text(Vec<ByteArray>, Vec<i16>),
    /// A column of several kinds: each value's JSON text.
    Json(Vec<ByteArray>, Vec<i16>),
}

type Sink<'w> = &'w mut (dyn Write + Send);

enum Inner<'w> {
    Csv(Sink<'w>),
    /// The sink, each column's name as a JSON string followed by `:`, and kind.
    Jsonl(Sink<'w>, Vec<Vec<u8>>, Vec<ColKind>),
    Parquet {
        writer: SerializedFileWriter<Sink<'w>>,
        bufs: Vec<Buf>,
        rows: usize,
    },
}

/// A table being written.
pub(super) struct Table<'w> {
    inner: Inner<'w>,
    line: Vec<u8>,
}

/// A Parquet error as an I/O error: the sink's own error as it was (a full disk
/// reads `No space left on device`, not `parquet: External: …`), any other named.
fn parquet_err(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(b) => match b.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(b) => io::Error::other(format!("parquet: {b}")),
        },
        e => io::Error::other(format!("parquet: {e}")),
    }
}

/// A text cell (a column name, a key) as CSV writes it, inert in a spreadsheet
/// (OWASP's CSV injection guidance): one that a spreadsheet would take as a
/// formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a
/// leading `'` and is quoted. A cell is quoted when RFC 4180 needs it (`,`, `"`,
/// a line break) and when it holds a `;` or a tab, which some spreadsheets split
/// fields on, so that no part of it starts a cell of its own. Numbers are not
/// text cells: `-0.5` stays a number.
fn csv_field(out: &mut Vec<u8>, s: &str) {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula || s.contains([',', '"', '\n', '\r', ';', '\t']) {
        out.push(b'"');
        if formula {
            out.push(b'\'');
        }
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// A number as CSV writes it: the shortest text that reads back the same f64,
/// without an exponent (as `{}` writes it); `NaN`, `inf`, `-inf` for the
/// non-finite.
#[inline]
fn csv_num(out: &mut Vec<u8>, v: f64) {
    super::num::write_f64(out, v);
}

/// A number as JSON text: as CSV writes it, the non-finite as W&B spells them
/// (`NaN`, `Infinity`, `-Infinity`).
fn json_num(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        csv_num(out, v);
    } else if let serde_json::Value::String(s) = leet_format::value::float(v) {
        out.extend_from_slice(s.as_bytes());
    }
}

impl<'w> Table<'w> {
    /// Start a table with these columns (the header, for CSV).
    pub(super) fn new(
        format: Format,
        cols: &[(String, ColKind)],
        out: Sink<'w>,
    ) -> io::Result<Self> {
        let mut line = Vec::new();
        let inner = match format {
            Format::Csv => {
                for (i, (name, _)) in cols.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    csv_field(&mut line, name);
                }
                line.push(b'\n');
                out.write_all(&line)?;
                Inner::Csv(out)
            }
            Format::Jsonl => {
                let keys = cols
                    .iter()
                    .map(|(name, _)| {
                        let mut k = serde_json::to_vec(name).map_err(io::Error::other)?;
                        json_inert(&mut k);
                        k.push(b':');
                        Ok(k)
                    })
                    .collect::<io::Result<_>>()?;
                Inner::Jsonl(out, keys, cols.iter().map(|c| c.1).collect())
            }
            Format::Parquet => {
                let fields = cols
                    .iter()
                    .map(|(name, kind)| {
                        let b = match kind {
                            ColKind::Num => {
                                Type::primitive_type_builder(name, PhysicalType::DOUBLE)
                            }
                            ColKind::Int => Type::primitive_type_builder(name, PhysicalType::INT64),
                            ColKind::Bool => {
                                Type::primitive_type_builder(name, PhysicalType::BOOLEAN)
                            }
                            ColKind::Text | ColKind::Str | ColKind::NotJson => {
                                Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                                    .with_converted_type(ConvertedType::UTF8)
                            }
                            // UTF-8 text that is JSON, and says so: a reader tells
                            // `"s1"` the string from `1` the number.
                            ColKind::Json => {
                                Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                                    .with_converted_type(ConvertedType::JSON)
                            }
                        };
                        b.with_repetition(Repetition::OPTIONAL)
                            .build()
                            .map(Arc::new)
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(parquet_err)?;
                let schema = Type::group_type_builder("schema")
                    .with_fields(fields)
                    .build()
                    .map_err(parquet_err)?;
                // Numbers without a dictionary: metric values hardly repeat, and
                // building one that is then given up cost a sixth of an export's
                // CPU (zstd still packs a constant column to nothing); names (the
                // long form's key column) keep theirs.
                // The columns of value text that is not all JSON, named so that
                // leet reading the file back (as a W&B server's history) takes
                // their text as the value, as it does a JSON column's.
                let value_text: Vec<&str> = cols
                    .iter()
                    .filter(|(_, k)| *k == ColKind::NotJson)
                    .map(|(n, _)| n.as_str())
                    .collect();
                let kv = (!value_text.is_empty())
                    .then(|| serde_json::to_string(&value_text).ok())
                    .flatten()
                    .map(|v| {
                        vec![parquet::file::metadata::KeyValue::new(
                            crate::source::remote::history::VALUE_TEXT_KEY.to_owned(),
                            v,
                        )]
                    });
                let mut props = WriterProperties::builder()
                    .set_key_value_metadata(kv)
                    .set_created_by(format!("leet {}", env!("CARGO_PKG_VERSION")))
                    .set_compression(Compression::ZSTD(ZstdLevel::default()))
                    .set_dictionary_enabled(false);
                for (name, kind) in cols {
                    if matches!(
                        kind,
                        ColKind::Text | ColKind::Str | ColKind::Json | ColKind::NotJson
                    ) {
                        props = props.set_column_dictionary_enabled(
                            parquet::schema::types::ColumnPath::from(name.as_str()),
                            true,
                        );
                    }
                }
                let props = props.build();
                let writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props))
                    .map_err(parquet_err)?;
                let bufs = cols
                    .iter()
                    .map(|(_, k)| match k {
                        ColKind::Num => Buf::Num(Vec::new(), Vec::new()),
                        ColKind::Int => Buf::Int(Vec::new(), Vec::new()),
                        ColKind::Bool => Buf::Bool(Vec::new(), Vec::new()),
                        ColKind::Text | ColKind::Str => Buf::Text(Vec::new(), Vec::new()),
                        ColKind::Json | ColKind::NotJson => Buf::Json(Vec::new(), Vec::new()),
                    })
                    .collect();
                Inner::Parquet {
                    writer,
                    bufs,
                    rows: 0,
                }
            }
        };
        Ok(Self { inner, line })
    }

    /// Write one row (cells in column order).
    pub(super) fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let line = &mut self.line;
        line.clear();
        match &mut self.inner {
            Inner::Csv(out) => {
                for (i, c) in cells.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    match c {
                        Cell::Num(Some(v)) => csv_num(line, *v),
                        Cell::Num(None) => {}
                        Cell::Text(s) => csv_field(line, s),
                        Cell::Other(Other::Str(s) | Other::Json(s)) => csv_field(line, s),
                        Cell::Other(o) => o.json_text(line),
                    }
                }
                line.push(b'\n');
                out.write_all(line)
            }
            Inner::Jsonl(out, keys, kinds) => {
                let start = line.len();
                line.push(b'{');
                let mut first = true;
                for ((key, kind), c) in keys.iter().zip(kinds.iter()).zip(cells) {
                    let value = match c {
                        Cell::Num(None) => continue,
                        // A column of integers: written as integers, without `.0`.
                        Cell::Num(Some(v)) if *kind == ColKind::Int && is_integer(*v) => {
                            serde_json::Value::from(*v as i64)
                        }
                        Cell::Num(Some(v)) => leet_format::value::float(*v),
                        Cell::Text(s) => serde_json::Value::from(*s),
                        Cell::Other(o) => o.to_json(),
                    };
                    if !first {
                        line.push(b',');
                    }
                    first = false;
                    line.extend_from_slice(key);
                    serde_json::to_writer(&mut *line, &value).map_err(io::Error::other)?;
                }
                line.extend_from_slice(b"}\n");
                json_inert_from(line, start);
                out.write_all(line)
            }
            Inner::Parquet { writer, bufs, rows } => {
                for (b, c) in bufs.iter_mut().zip(cells) {
                    match (b, c) {
                        (Buf::Num(v, d), Cell::Num(Some(x))) => {
                            v.push(*x);
                            d.push(1);
                        }
                        (Buf::Num(v, d), Cell::Other(Other::Int(i))) => {
                            v.push(*i as f64);
                            d.push(1);
                        }
                        (Buf::Num(v, d), Cell::Other(Other::Big(t))) => {
                            v.push(t.parse().unwrap_or(f64::NAN));
                            d.push(1);
                        }
                        (Buf::Int(v, d), Cell::Num(Some(x))) => {
                            // The first pass saw only integers here; a value the
                            // second pass finds otherwise came with the file growing
                            // in between, and is not cut to fit.
                            if !is_integer(*x) {
                                return Err(grew());
                            }
                            v.push(*x as i64);
                            d.push(1);
                        }
                        (Buf::Int(v, d), Cell::Other(Other::Int(i))) => {
                            v.push(*i);
                            d.push(1);
                        }
                        (Buf::Bool(v, d), Cell::Other(Other::Bool(b))) => {
                            v.push(*b);
                            d.push(1);
                        }
                        (Buf::Text(v, d), Cell::Text(s)) => {
                            v.push(ByteArray::from(*s));
                            d.push(1);
                        }
                        (Buf::Text(v, d), Cell::Other(Other::Str(s))) => {
                            v.push(ByteArray::from(s.as_str()));
                            d.push(1);
                        }
                        (Buf::Json(v, d), Cell::Num(Some(x))) => {
                            line.clear();
                            json_num(line, *x);
                            v.push(ByteArray::from(line.clone()));
                            d.push(1);
                        }
                        (Buf::Json(v, d), Cell::Other(o)) => {
                            line.clear();
                            o.json_text(line);
                            v.push(ByteArray::from(line.clone()));
                            d.push(1);
                        }
                        (
                            Buf::Num(_, d)
                            | Buf::Int(_, d)
                            | Buf::Bool(_, d)
                            | Buf::Text(_, d)
                            | Buf::Json(_, d),
                            Cell::Num(None),
                        ) => d.push(0),
                        // A kind the first pass did not see here: the file grew.
                        _ => return Err(grew()),
                    }
                }
                *rows += 1;
                if *rows * bufs.len().max(1) >= GROUP_CELLS {
                    flush_group(writer, bufs)?;
                    *rows = 0;
                }
                Ok(())
            }
        }
    }

    /// Finish the table (Parquet: the last row group and the footer).
    pub(super) fn finish(self) -> io::Result<()> {
        match self.inner {
            Inner::Csv(out) | Inner::Jsonl(out, ..) => out.flush(),
            Inner::Parquet {
                mut writer,
                mut bufs,
                rows,
            } => {
                if rows > 0 {
                    flush_group(&mut writer, &mut bufs)?;
                }
                let out = writer.into_inner().map_err(parquet_err)?;
                out.flush()
            }
        }
    }
}

/// A cell the first pass did not expect: the run grew between the passes.
fn grew() -> io::Error {
    io::Error::other(
        "a column got a value of a kind the first pass did not see there: the run grew \
         while it was exported; export it again",
    )
}

/// Write the buffered rows as one row group.
fn flush_group(writer: &mut SerializedFileWriter<Sink<'_>>, bufs: &mut [Buf]) -> io::Result<()> {
    let mut group = writer.next_row_group().map_err(parquet_err)?;
    let mut i = 0;
    while let Some(mut col) = group.next_column().map_err(parquet_err)? {
        match bufs.get_mut(i) {
            Some(Buf::Num(v, d)) => {
                col.typed::<DoubleType>()
                    .write_batch(v, Some(d), None)
                    .map_err(parquet_err)?;
                v.clear();
                d.clear();
            }
            Some(Buf::Int(v, d)) => {
                col.typed::<Int64Type>()
                    .write_batch(v, Some(d), None)
                    .map_err(parquet_err)?;
                v.clear();
                d.clear();
            }
            Some(Buf::Bool(v, d)) => {
                col.typed::<BoolType>()
                    .write_batch(v, Some(d), None)
                    .map_err(parquet_err)?;
                v.clear();
                d.clear();
            }
            Some(Buf::Text(v, d) | Buf::Json(v, d)) => {
                col.typed::<ByteArrayType>()
                    .write_batch(v, Some(d), None)
                    .map_err(parquet_err)?;
                v.clear();
                d.clear();
            }
            None => {}
        }
        col.close().map_err(parquet_err)?;
        i += 1;
    }
    group.close().map_err(parquet_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cells_a_spreadsheet_would_run_are_inert_and_numbers_stay_numbers() {
        let hostile = [
            ("=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\""),
            ("+1", "\"'+1\""),
            ("-2+3", "\"'-2+3\""),
            ("@SUM(1)", "\"'@SUM(1)\""),
            ("\t=1", "\"'\t=1\""),
            ("\r=1", "\"'\r=1\""),
            ("=\"quoted\"", "\"'=\"\"quoted\"\"\""),
            ("a;=1", "\"a;=1\""),
            ("a,=1", "\"a,=1\""),
            ("train/loss", "train/loss"),
        ];
        for (cell, want) in hostile {
            let mut out = Vec::new();
            csv_field(&mut out, cell);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{cell:?}");
        }
        let mut out = Vec::new();
        let cols = [
            ("_step".to_owned(), ColKind::Num),
            ("key".to_owned(), ColKind::Text),
            ("value".to_owned(), ColKind::Num),
        ];
        let mut t = Table::new(Format::Csv, &cols, &mut out).unwrap();
        t.row(&[
            Cell::Num(Some(-1.0)),
            Cell::Text("-x"),
            Cell::Num(Some(-0.5)),
        ])
        .unwrap();
        t.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "_step,key,value\n-1,\"'-x\",-0.5\n"
        );
    }
}

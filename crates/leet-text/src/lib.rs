//! Text from files is untrusted: strip escape sequences and control characters
//! before anything reaches the terminal. Also the plain text forms shared by every
//! layer: RFC 3339 times and `a.b.c = value` rows of a JSON object.

pub mod duration;

use serde_json::{Map, Value};

/// `s`, from column `*col` of its line, [`sanitize`]d with each tab taken out to
/// the next stop of every `tab` columns (as a terminal puts a tab-separated
/// table's columns, where [`sanitize`] alone makes a tab one space); `*col` moves
/// on by the text's display width. Pieces of one line given in turn, with one
/// `col`, read as the line whole.
pub fn sanitize_tabs(s: &str, col: &mut usize, tab: usize) -> String {
    use unicode_width::UnicodeWidthStr as _;
    let tab = tab.max(1);
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split('\t').enumerate() {
        if i > 0 {
            let n = tab - *col % tab;
            out.extend(std::iter::repeat_n(' ', n));
            *col += n;
        }
        let clean = sanitize(part);
        *col += clean.width();
        out.push_str(&clean);
    }
    out
}

/// A name to show: [`sanitize`]d, or None when nothing visible is left (empty, only
/// spaces, or only escape sequences), so that the caller shows another (an id).
#[must_use]
pub fn visible_name(s: &str) -> Option<String> {
    let clean = sanitize(s);
    (!clean.trim().is_empty()).then_some(clean)
}

/// Remove ANSI/VT escape sequences (CSI, OSC and other string sequences, two-byte
/// escapes), control characters and invisible formatting (see [`invisible_format`];
/// a zero-width joiner is kept only between two characters beyond ASCII, where it
/// joins an emoji or a letter's form); tabs become a space, newlines and the line
/// and paragraph separators a `⏎` mark.
#[must_use]
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(|c| {
        c.is_control() || invisible_format(c) || matches!(c, ZWJ | '\u{2028}' | '\u{2029}')
    }) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                Some('[') => skip_csi(&mut it),
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    while let Some(d) = it.next() {
                        if d == '\u{7}' || d == '\u{9c}' {
                            break;
                        }
                        if d == '\u{1b}' && it.peek() == Some(&'\\') {
                            it.next();
                            break;
                        }
                    }
                }
                // Intermediate bytes (`ESC ( B`, which `tput sgr0` writes, `ESC # 8`)
                // up to the final byte: all of it goes, no stray letter left.
                Some(' '..='/') => {
                    for d in it.by_ref() {
                        if ('0'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut it),
            '\t' => out.push(' '),
            '\n' | '\u{2028}' | '\u{2029}' => out.push('⏎'),
            ZWJ => {
                let joins =
                    |c: Option<char>| c.is_some_and(|c| !c.is_ascii() && !c.is_whitespace());
                if joins(out.chars().next_back()) && joins(it.peek().copied()) {
                    out.push(ZWJ);
                }
            }
            c if c.is_control() => {}
            c if invisible_format(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Past a CSI sequence's parameter and intermediate bytes and its final byte.
/// Any other character ends it unread (a sequence broken off, or a lone C1
/// `U+009B` in text): what follows it is text again, not swallowed up to the
/// next letter.
fn skip_csi(it: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&d) = it.peek() {
        match d {
            ' '..='?' => {
                it.next();
            }
            '@'..='~' => {
                it.next();
                return;
            }
            _ => return,
        }
    }
}

/// `s` with every control character (but tab and line breaks, which a format
/// such as CSV quotes) and invisible formatting character written as `\u{XXXX}`
/// text, nothing removed: for text written where a terminal may end up showing it
/// (a CSV piped into `tail`, or `cat`) but whose reader wants every name told
/// apart. Text without them (nearly all) is returned as it is.
#[must_use]
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    let escaped =
        |c: char| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || invisible_format(c);
    if !s.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The zero-width joiner.
const ZWJ: char = '\u{200d}';

/// Invisible formatting: bidi overrides, embeddings, isolates and marks (they can
/// reorder what is drawn); zero-width spaces and joiners, the byte order mark and
/// annotation marks; marks that prepend themselves to the next characters (the
/// Arabic number signs); the Hangul fillers. Terminals draw them in ways a width
/// table cannot foresee (tmux shifted the rest of the row), and they hide what a
/// name really holds.
fn invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{200b}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{0600}'..='\u{0605}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'
            | '\u{0891}'
            | '\u{08e2}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{ffa0}'
    )
}

/// Line and column (from 1, in characters) of the byte `offset` of `text`: where
/// an error in a file is, as compilers and editors write it.
#[must_use]
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// `:LINE:COLUMN` of a place in a file, as compilers and editors write it after
/// the file's name ("" where it is unknown).
#[must_use]
pub fn place(at: Option<(usize, usize)>) -> String {
    at.map_or_else(String::new, |(l, c)| format!(":{l}:{c}"))
}

/// A path as it may be shown: lossy UTF-8, [`sanitize`]d (file names can hold any
/// byte but `/` and NUL, escape sequences included).
#[must_use]
pub fn sanitize_path(p: &std::path::Path) -> String {
    sanitize(&p.to_string_lossy())
}

/// Call `f` with the byte offset of each row break when `s` is wrapped to `width`
/// display columns: never inside a character (a grapheme: what the terminal draws
/// as one), a wide one that does not fit starts the next row, zero-width
/// characters stay with the one before.
fn row_breaks(s: &str, width: usize, mut f: impl FnMut(usize)) {
    use unicode_segmentation::UnicodeSegmentation as _;
    let width = width.max(1);
    let mut used = 0;
    // By grapheme, as the terminal draws them: an emoji joined of several (a
    // family: four emoji and three joiners) takes two columns, not eight.
    for (i, g) in s.grapheme_indices(true) {
        let cw = unicode_width::UnicodeWidthStr::width(g);
        if used > 0 && used + cw > width {
            f(i);
            used = 0;
        }
        used += cw;
    }
}

/// `s` wrapped to rows of at most `width` display columns (at least one row; a
/// character wider than `width` gets a row of its own).
#[must_use]
pub fn wrap(s: &str, width: usize) -> Vec<&str> {
    let mut rows = Vec::new();
    let mut start = 0;
    row_breaks(s, width, |i| {
        rows.push(&s[start..i]);
        start = i;
    });
    rows.push(&s[start..]);
    rows
}

/// How many rows [`wrap`] makes of `s`.
#[must_use]
pub fn wrapped_rows(s: &str, width: usize) -> usize {
    let mut n = 1;
    row_breaks(s, width, |_| n += 1);
    n
}

/// Natural order for keys: runs of ASCII digits compare as numbers, so `bins[2]`
/// comes before `bins[10]`; everything else compares character by character. Equal
/// numbers with more leading zeros sort after, and ties fall back to plain order, so
/// this is a total order.
#[must_use]
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut zeros = Ordering::Equal;
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let run = |s: &[u8], mut k: usize| {
                let start = k;
                while k < s.len() && s[k] == b'0' {
                    k += 1;
                }
                let lead = k - start;
                let digits = k;
                while k < s.len() && s[k].is_ascii_digit() {
                    k += 1;
                }
                (lead, digits, k)
            };
            let (lx, dx, ex) = run(x, i);
            let (ly, dy, ey) = run(y, j);
            let ord = (ex - dx)
                .cmp(&(ey - dy))
                .then_with(|| x[dx..ex].cmp(&y[dy..ey]));
            if ord != Ordering::Equal {
                return ord;
            }
            zeros = zeros.then(lx.cmp(&ly));
            (i, j) = (ex, ey);
        } else {
            // Compare whole characters (UTF-8 bytes order as chars do) up to the next digit.
            if x[i] != y[j] {
                return x[i].cmp(&y[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (x.len() - i)
        .cmp(&(y.len() - j))
        .then(zeros)
        .then_with(|| a.cmp(b))
}

/// Seconds as `42s`, `3m 07s`, `2h 05m`, `3d 04h`.
#[must_use]
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "?".into();
    }
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// Format a Unix time as RFC 3339 in UTC with trailing zeros of the fraction
/// trimmed (Go's `RFC3339Nano`). None outside protobuf's Timestamp range (years
/// 1 to 9999, nanos 0 to 999,999,999), as protobuf JSON refuses those too.
#[must_use]
pub fn rfc3339(secs: i64, nanos: i32) -> Option<String> {
    if !(-62_135_596_800..=253_402_300_799).contains(&secs) || !(0..1_000_000_000).contains(&nanos)
    {
        return None;
    }
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut s = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push('Z');
    Some(s)
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The fewest leading characters (at least `min`) that tell `ids` apart: runs that
/// share a name are named `name (b9ws)`, not with the whole id, where four do it.
/// Ids equal to each other stay equal; the longest id's length where no prefix
/// does it.
#[must_use]
pub fn distinct_prefix_len(ids: &[&str], min: usize) -> usize {
    let distinct: std::collections::HashSet<&str> = ids.iter().copied().collect();
    let longest = ids.iter().map(|i| i.chars().count()).max().unwrap_or(0);
    (min..longest)
        .find(|&n| {
            let prefixes: std::collections::HashSet<String> = distinct
                .iter()
                .map(|i| i.chars().take(n).collect())
                .collect();
            prefixes.len() == distinct.len()
        })
        .unwrap_or(longest)
}

/// The first `n` characters of `s`.
#[must_use]
pub fn prefix(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// Flatten a JSON object into `a.b.c = value` rows (lists as `a[0]`).
pub fn flatten_into(prefix: &str, m: &Map<String, Value>, out: &mut Vec<(String, String)>) {
    for (k, v) in m {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        flatten_value(key, v, out);
    }
}

fn flatten_value(key: String, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) if o.get("_type").and_then(Value::as_str) == Some("histogram") => {
            out.push((key, histogram_text(o)));
        }
        Value::Object(o) if !o.is_empty() => flatten_into(&key, o, out),
        Value::Array(a) if !a.is_empty() && a.len() <= 64 && a.iter().all(|x| !x.is_object()) => {
            for (i, x) in a.iter().enumerate() {
                flatten_value(format!("{key}[{i}]"), x, out);
            }
        }
        Value::String(s) => out.push((key, s.clone())),
        other => out.push((key, other.to_string())),
    }
}

/// A logged histogram (`wandb.Histogram`: its counts in `values`, its edges in
/// `bins`, or `packedBins` of equal width) as one value, `histogram · 64 bins ·
/// 12.94…87.06`: flattened, its counts were a row each and its edges one row.
#[must_use]
pub fn histogram_text(o: &Map<String, Value>) -> String {
    let nums = |k: &str| -> Vec<f64> {
        o.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (values, edges) = (nums("values"), nums("bins"));
    let packed = o
        .get("packedBins")
        .and_then(Value::as_object)
        .and_then(|p| {
            let f = |k: &str| p.get(k).and_then(Value::as_f64);
            Some((f("min")?, f("size")?, f("count")?))
        });
    let n = if values.is_empty() {
        edges.len().saturating_sub(1)
    } else {
        values.len()
    };
    let range = match (edges.first(), edges.last(), packed) {
        (Some(a), Some(b), _) if edges.len() > 1 => Some((*a, *b)),
        (_, _, Some((min, size, count))) => Some((min, min + size * count)),
        _ => None,
    };
    let mut s = format!("histogram · {n} bin{}", if n == 1 { "" } else { "s" });
    if let Some((a, b)) = range {
        s.push_str(&format!(" · {}…{}", short_number(a), short_number(b)));
    }
    s
}

/// `v` in at most four significant digits (`12.94`, `1.5e-05`, `3.2e+09`).
fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.3e}");
        // `1.500e-5` → `1.5e-5`.
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    let decimals = if a == 0.0 {
        0
    } else {
        usize::try_from(3 - a.log10().floor() as i64).unwrap_or(0)
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// JSON text with the characters a terminal acts on that JSON leaves as they are
/// (DEL, the C1 controls, bidi overrides and other invisible formatting; JSON
/// escapes C0 itself) written as `\uXXXX` escapes: the same JSON to a parser, inert
/// on a terminal (`leet export RUN --format jsonl | tail`). They can only be in its
/// strings, where an escape means the character.
pub fn json_inert(json: &mut Vec<u8>) {
    json_inert_from(json, 0);
}

/// [`json_inert`] of `json[from..]`.
pub fn json_inert_from(json: &mut Vec<u8>, from: usize) {
    // DEL; C1 (U+0080–U+009F: C2 80–C2 9F); U+200E/F, U+202A–E, U+2066–9 (E2 …).
    // Nearly all JSON has none of these bytes: found (or not) many bytes a step.
    if memchr::memchr3(0x7F, 0xC2, 0xE2, &json[from..]).is_none() {
        return;
    }
    let Ok(text) = std::str::from_utf8(&json[from..]) else {
        return;
    };
    let inert = |c: char| {
        c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(inert) {
        return;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if inert(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    json.truncate(from);
    json.extend_from_slice(out.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::{natural_cmp, rfc3339, sanitize, sanitize_path, wrap, wrapped_rows};
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn ids_are_cut_to_the_fewest_characters_that_tell_them_apart() {
        use super::{distinct_prefix_len, prefix};
        assert_eq!(
            distinct_prefix_len(&["mh0pl6qx", "lg7y3v37", "m8jh3loy"], 4),
            4
        );
        assert_eq!(distinct_prefix_len(&["abcdef01", "abcdef02"], 4), 8);
        assert_eq!(distinct_prefix_len(&["abcde1", "abcdf2", "abcde1"], 4), 5);
        assert_eq!(distinct_prefix_len(&["ab", "cd"], 4), 2);
        assert_eq!(distinct_prefix_len(&[], 4), 0);
        assert_eq!(prefix("ünïcode", 3), "ünï");
        assert_eq!(prefix("ab", 4), "ab");
    }

    #[test]
    fn a_histogram_is_one_row() {
        let values: Vec<u64> = (0..64).collect();
        let bins: Vec<f64> = (0..65)
            .map(|i| 12.94 + f64::from(i) * (87.06 - 12.94) / 64.0)
            .collect();
        let summary = serde_json::json!({
            "hist": {"_type": "histogram", "values": values, "bins": bins},
            "packed": {"_type": "histogram", "values": [1, 2], "packedBins": {"min": -1.0, "size": 0.5, "count": 2}},
            "odd": {"_type": "histogram"},
            "loss": 0.5,
        });
        let mut rows = Vec::new();
        super::flatten_into("", summary.as_object().expect("object"), &mut rows);
        rows.sort();
        assert_eq!(
            rows,
            [
                (
                    "hist".to_owned(),
                    "histogram · 64 bins · 12.94…87.06".to_owned()
                ),
                ("loss".to_owned(), "0.5".to_owned()),
                ("odd".to_owned(), "histogram · 0 bins".to_owned()),
                ("packed".to_owned(), "histogram · 2 bins · -1…0".to_owned()),
            ]
        );
        assert_eq!(super::short_number(1.5e-5), "1.5e-5");
        assert_eq!(super::short_number(123_456.7), "123457");
        assert_eq!(super::short_number(0.123_456), "0.1235");
    }

    #[test]
    fn controls_are_escaped_as_text_and_other_text_kept() {
        use super::escape_controls;
        assert_eq!(escape_controls("train/loss"), "train/loss");
        assert!(matches!(
            escape_controls("ünï"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\u{1b}]52;c;cHduZWQ=\u{7}b\u{202e}c\u{8}"),
            "a\\u{001b}]52;c;cHduZWQ=\\u{0007}b\\u{202e}c\\u{0008}"
        );
        assert!(!escape_controls("\u{1b}[2J\u{9b}x")
            .chars()
            .any(char::is_control));
        // Tab and line breaks stay (CSV quotes them).
        assert_eq!(escape_controls("\t=1\r\n"), "\t=1\r\n");
    }

    #[test]
    fn bidi_overrides_go_with_or_without_control_characters_beside_them() {
        // Alone: the quick path for text without control characters kept them.
        assert_eq!(sanitize("link\u{202e}RTL"), "linkRTL");
        assert_eq!(sanitize("a\u{2066}b\u{200f}c"), "abc");
        assert_eq!(sanitize("\u{1b}[2Jlink\u{202e}RTL"), "linkRTL");
        assert_eq!(sanitize("plain ünïcode"), "plain ünïcode");
    }

    /// Invisible characters that terminals draw unforeseeably (tmux shifted the
    /// rest of the row) go; the line and paragraph separators are line breaks; a
    /// joiner stays only inside an emoji (or a script's letters), never beside ASCII.
    #[test]
    fn a_broken_off_csi_leaves_the_text_after_it() {
        // A C1 CSI followed by what no sequence holds: the text goes on.
        let latin1: String = (0x9b_u32..0x100).filter_map(char::from_u32).collect();
        let out = sanitize(&format!("HIGH:{latin1}:END"));
        assert!(
            out.starts_with("HIGH:") && out.ends_with("ÿ:END"),
            "{out:?}"
        );
        assert!(
            out.contains('¡') && !out.chars().any(char::is_control),
            "{out:?}"
        );
        // A whole one is still removed, and an ESC [ one broken off likewise.
        assert_eq!(sanitize("\u{9b}31mz"), "z");
        assert_eq!(sanitize("a\u{1b}[12é b"), "aé b");
    }

    #[test]
    fn invisible_characters_go_and_joiners_stay_only_between_what_they_join() {
        for c in [
            '\u{200b}', '\u{2060}', '\u{feff}', '\u{061c}', '\u{0600}', '\u{0605}', '\u{06dd}',
            '\u{115f}', '\u{1160}', '\u{3164}', '\u{ffa0}', '\u{fff9}', '\u{206a}',
        ] {
            assert_eq!(sanitize(&format!("a{c}b")), "ab", "U+{:04X}", u32::from(c));
            assert_eq!(
                super::escape_controls(&format!("a{c}")),
                format!("a\\u{{{:04x}}}", u32::from(c))
            );
        }
        assert_eq!(sanitize("one\u{2028}two\u{2029}three"), "one⏎two⏎three");
        // Joined emoji keep their joiners: a family, a rainbow flag, a skin tone.
        for e in [
            "👨\u{200d}👩\u{200d}👧\u{200d}👦",
            "🏳\u{fe0f}\u{200d}🌈",
            "👩🏽\u{200d}💻",
        ] {
            assert_eq!(sanitize(e), e);
            assert_eq!(sanitize(&format!("x {e} y")), format!("x {e} y"));
        }
        // A joiner beside ASCII or a space, or at either end, joins nothing.
        assert_eq!(sanitize("zw\u{200d}key"), "zwkey");
        assert_eq!(sanitize("\u{200d}a"), "a");
        assert_eq!(sanitize("👨\u{200d}"), "👨");
        assert_eq!(sanitize("👨\u{200d} x"), "👨 x");
        // Between letters of a script (Devanagari's half forms) it stays.
        assert_eq!(sanitize("क\u{94d}\u{200d}ष"), "क\u{94d}\u{200d}ष");
    }

    /// A row holds as many columns as the terminal draws: a joined emoji is two,
    /// and is never cut between its parts.
    #[test]
    fn a_joined_emoji_wraps_as_the_two_columns_it_takes() {
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let s = format!("ab{family}cd{family}");
        assert_eq!(wrap(&s, 4), [format!("ab{family}"), format!("cd{family}")]);
        assert_eq!(wrapped_rows(&s, 8), 1);
        for w in 1..10 {
            assert_eq!(wrap(&s, w).concat(), s);
            assert!(wrap(&s, w).iter().all(|r| r.width() <= w.max(2)), "{w}");
        }
    }

    #[test]
    fn wraps_by_display_width() {
        assert_eq!(wrap("", 4), [""]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("abcd", 4), ["abcd"]);
        // Wide characters are never split: a row ends early instead.
        let s = "ab漢字かなc";
        let rows = wrap(s, 5);
        assert_eq!(rows, ["ab漢", "字か", "なc"]);
        assert_eq!(rows.concat(), s);
        for w in 1..12 {
            let rows = wrap(s, w);
            assert_eq!(rows.concat(), s);
            assert_eq!(rows.len(), wrapped_rows(s, w));
            for r in &rows {
                assert!(r.width() <= w.max(2), "{r:?} at {w}");
            }
        }
        // A combining mark stays with its letter.
        assert_eq!(wrap("ae\u{301}b", 2), ["ae\u{301}", "b"]);
        assert_eq!(wrapped_rows("abc", 0), 3);
    }

    #[test]
    fn natural_order() {
        let mut keys = vec![
            "hist.bins[1]",
            "hist.bins[20]",
            "hist.bins[0]",
            "hist.bins[15]",
            "hist.bins[2]",
            "hist.bins[10]",
            "hist.bin",
            "hist.bins[02]",
            "a10b",
            "a9b",
            "a9a",
            "layer.10.w",
            "layer.9.w",
            "é1",
            "e1",
            "x",
            "",
        ];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            keys,
            [
                "",
                "a9a",
                "a9b",
                "a10b",
                "e1",
                "hist.bin",
                "hist.bins[0]",
                "hist.bins[1]",
                "hist.bins[2]",
                "hist.bins[02]",
                "hist.bins[10]",
                "hist.bins[15]",
                "hist.bins[20]",
                "layer.9.w",
                "layer.10.w",
                "x",
                "é1",
            ]
        );
        assert_eq!(natural_cmp("a1", "a1"), std::cmp::Ordering::Equal);
        assert_eq!(natural_cmp("a", "a0"), std::cmp::Ordering::Less);
        // Numbers longer than any integer type still compare.
        assert_eq!(
            natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
            std::cmp::Ordering::Less
        );
    }

    #[test]
    fn json_is_made_inert_and_means_the_same() {
        let v = serde_json::json!({"k\u{7f}": "a\u{9b}31m\u{202e}b\u{2066}", "plain": "é ü"});
        let mut text = serde_json::to_vec(&v).expect("json");
        let before = text.clone();
        super::json_inert_from(&mut text, 0);
        let s = std::str::from_utf8(&text).expect("utf-8");
        assert!(s.contains("\\u007f") && s.contains("\\u009b") && s.contains("\\u202e"));
        assert!(s.contains("é ü"), "other text kept: {s}");
        assert!(!s.chars().any(
            |c| matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        ));
        let back: serde_json::Value = serde_json::from_slice(&text).expect("json");
        assert_eq!(back, v);
        // Only from `from` on: what is before is left as it is.
        let mut two = before.clone();
        let at = two.len();
        two.extend_from_slice(&before);
        super::json_inert_from(&mut two, at);
        assert_eq!(&two[..at], &before[..]);
        assert_eq!(&two[at..], &text[..]);
    }

    #[test]
    fn tabs_go_to_the_next_stop() {
        let mut col = 0;
        assert_eq!(
            super::sanitize_tabs("\tTAB\tSEP\t|", &mut col, 8),
            format!("{}TAB{}SEP{}|", " ".repeat(8), " ".repeat(5), " ".repeat(5))
        );
        assert_eq!(col, 25);
        // In pieces, from where the last ended; wide characters count two.
        let mut col = 0;
        let a = super::sanitize_tabs("全\x1b[1m", &mut col, 8);
        let b = super::sanitize_tabs("ab\tc", &mut col, 8);
        assert_eq!(format!("{a}{b}"), format!("全ab{}c", " ".repeat(4)));
        assert_eq!(col, 9);
        let mut col = 3;
        assert_eq!(super::sanitize_tabs("no tab", &mut col, 8), "no tab");
        assert_eq!(col, 9);
    }

    #[test]
    fn a_name_of_escapes_alone_is_no_name() {
        assert_eq!(super::visible_name("\x1b[2J\x1b[H"), None);
        assert_eq!(super::visible_name(" \t "), None);
        assert_eq!(super::visible_name(""), None);
        assert_eq!(super::visible_name("a\x1b[31mb").as_deref(), Some("ab"));
    }

    #[test]
    fn strips_sequences() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("\x1b[2J\x1b[31mred\x1b[0m"), "red");
        assert_eq!(sanitize("a\x1b]0;evil title\x07b"), "ab");
        assert_eq!(
            sanitize("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "alink"
        );
        assert_eq!(sanitize("x\u{0}\u{7}\u{8}y\tz\r"), "xy z");
        assert_eq!(sanitize("\u{9b}31mz"), "z");
        assert_eq!(sanitize("a\nb"), "a⏎b");
        // Escapes with intermediate bytes go whole (`tput sgr0` writes `ESC ( B`).
        assert_eq!(sanitize("a\x1b(Bb\x1b[m"), "ab");
        assert_eq!(sanitize("a\x1b#8b\x1b (Bc"), "abc");
    }

    #[cfg(unix)]
    #[test]
    fn paths_are_sanitized() {
        use std::os::unix::ffi::OsStrExt as _;
        let p = std::path::Path::new(std::ffi::OsStr::from_bytes(
            b"/tmp/\x1b]0;pwned\x07run-\x1b[2J\x07\xff.wandb",
        ));
        assert_eq!(sanitize_path(p), "/tmp/run-\u{fffd}.wandb");
        assert_eq!(
            sanitize_path(std::path::Path::new("/a/b c.wandb")),
            "/a/b c.wandb"
        );
    }

    #[test]
    fn rfc3339_formats() {
        assert_eq!(rfc3339(0, 0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(rfc3339(1 << 62, 0), None);
        assert_eq!(rfc3339(0, 1_000_000_000), None);
        assert_eq!(
            rfc3339(1_796_060_909, 738_561_000).as_deref().unwrap_or(""),
            "2026-11-30T17:48:29.738561Z"
        );
        assert_eq!(
            rfc3339(951_782_400, 5).as_deref(),
            Some("2000-02-29T00:00:00.000000005Z")
        );
    }
}

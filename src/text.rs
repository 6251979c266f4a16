//! Text from files is untrusted: strip escape sequences and control characters
//! before anything reaches the terminal.

/// Remove ANSI/VT escape sequences (CSI, OSC and other string sequences, two-byte
/// escapes) and control characters; tabs become a space, newlines a `⏎` mark.
#[must_use]
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() || c == '\u{1b}') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                Some('[') => {
                    for d in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
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
                _ => {}
            },
            '\u{9b}' => {
                for d in it.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            }
            '\t' => out.push(' '),
            '\n' => out.push('⏎'),
            c if c.is_control() => {}
            // Bidi overrides and other invisible formatting can reorder what is drawn.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' => {}
            c => out.push(c),
        }
    }
    out
}

/// A path as it may be shown: lossy UTF-8, [`sanitize`]d (file names can hold any
/// byte but `/` and NUL, escape sequences included).
#[must_use]
pub fn sanitize_path(p: &std::path::Path) -> String {
    sanitize(&p.to_string_lossy())
}

/// Call `f` with the byte offset of each row break when `s` is wrapped to `width`
/// display columns: never inside a character, a wide character that does not fit
/// starts the next row, zero-width characters stay with the one before.
fn row_breaks(s: &str, width: usize, mut f: impl FnMut(usize)) {
    use unicode_width::UnicodeWidthChar;
    let width = width.max(1);
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let cw = c.width().unwrap_or(0);
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

#[cfg(test)]
mod tests {
    use super::{natural_cmp, sanitize, sanitize_path, wrap, wrapped_rows};
    use unicode_width::UnicodeWidthStr;

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
}

//! The one duration syntax of every command-line flag that takes a time
//! (`--interval`, `--window`, `--stale-after`, `--idle-timeout`): a number with a
//! unit, `500ms`, `90s`, `10m`, `2h`, `1d`, or several of them added up, `1h30m`;
//! a plain number is seconds, as these flags took before. Numbers may have a
//! fraction (`1.5h`); signs, exponents and words (`NaN`, `inf`) are refused, so
//! nothing reaches `Duration` that it could panic on.

use std::time::Duration;

/// Units, longest suffix first so that `ms` is not read as `m` then `s`.
const UNITS: [(&str, f64); 5] = [
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
    ("d", 86_400.0),
];

/// The seconds `s` spells, or `None` when it is not a duration.
fn seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let number_end = |t: &str| t.find(|c: char| !(c.is_ascii_digit() || c == '.'));
    // A plain number: seconds.
    if number_end(s).is_none() {
        return number(s);
    }
    let mut rest = s;
    let mut total = 0.0;
    while !rest.is_empty() {
        let end = number_end(rest)?;
        let n = number(&rest[..end])?;
        let tail = &rest[end..];
        let (unit, scale) = UNITS.iter().find(|(u, _)| tail.starts_with(u))?;
        total += n * scale;
        rest = &tail[unit.len()..];
    }
    Some(total)
}

/// `12`, `1.5`, `.5`: digits with at most one point, at least one digit.
fn number(s: &str) -> Option<f64> {
    let digits = s.chars().filter(char::is_ascii_digit).count();
    let points = s.chars().filter(|&c| c == '.').count();
    if digits == 0 || points > 1 || digits + points != s.chars().count() {
        return None;
    }
    s.parse().ok()
}

/// `d` written in the flags' syntax, largest unit first: `100ms`, `1m30s`, `1h30m`,
/// `30d`; `0s` for zero. Days only from two on: a day reads better as `24h`.
#[must_use]
pub fn format(d: Duration) -> String {
    const DAY_MS: u128 = 86_400_000;
    let mut ms = d.as_millis();
    if ms == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in [("d", DAY_MS), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] {
        if ms >= size && (size != DAY_MS || ms >= 2 * DAY_MS) {
            out.push_str(&format!("{}{unit}", ms / size));
            ms %= size;
        }
    }
    if ms > 0 {
        out.push_str(&format!("{ms}ms"));
    }
    out
}

/// A duration within `lo..=hi`, rounded to the nanosecond.
///
/// # Errors
/// Not a duration, or out of bounds: a message that names the bounds and, when
/// the text was not understood, the syntax.
pub fn parse_within(s: &str, lo: Duration, hi: Duration) -> Result<Duration, String> {
    let bounds = format!("between {} and {}", format(lo), format(hi));
    let Some(secs) = seconds(s) else {
        return Err(format!(
            "expected a duration such as 90s, 10m, 2h, 1h30m or 500ms (a plain number \
             is seconds), {bounds}"
        ));
    };
    let ns = (secs * 1e9).round();
    // Compared as floats first: a huge value must not wrap in the conversion.
    if !(ns.is_finite() && ns <= hi.as_nanos() as f64) || (ns as u128) < lo.as_nanos() {
        return Err(format!("must be {bounds}"));
    }
    let d = Duration::from_nanos(ns as u64);
    if d > hi {
        return Err(format!("must be {bounds}"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn ok(s: &str) -> Duration {
        parse_within(s, Duration::ZERO, DAY * 30).expect(s)
    }

    #[test]
    fn every_unit_compound_and_plain_seconds() {
        assert_eq!(ok("90s"), Duration::from_secs(90));
        assert_eq!(ok("10m"), Duration::from_secs(600));
        assert_eq!(ok("2h"), Duration::from_secs(7200));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1d2h3m4s5ms"), Duration::from_millis(93_784_005));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok(".5"), Duration::from_millis(500));
        assert_eq!(ok("0.1s"), Duration::from_millis(100));
        assert_eq!(ok(" 120 "), Duration::from_secs(120));
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("30d"), DAY * 30);
    }

    #[test]
    fn bad_text_names_the_syntax_and_the_bounds_never_panics() {
        for bad in [
            "", "soon", "NaN", "inf", "-1s", "+1s", "1e3", "1..5s", "s", "1x", "1h30", "5 m",
            "1hh", "ms",
        ] {
            let e = parse_within(bad, Duration::ZERO, DAY).expect_err(bad);
            assert!(e.contains("such as 90s"), "{bad}: {e}");
            assert!(e.contains("between 0s and 24h"), "{bad}: {e}");
        }
    }

    #[test]
    fn out_of_bounds_names_the_bounds() {
        let (lo, hi) = (Duration::from_millis(100), DAY);
        for bad in [
            "99ms",
            "0",
            "24h1ms",
            "1441m",
            "99999999999999999999999h",
            "1e-320",
        ] {
            let e = parse_within(bad, lo, hi).expect_err(bad);
            assert!(e.contains("between 100ms and 24h"), "{bad}: {e}");
        }
        assert_eq!(parse_within("24h", lo, hi), Ok(hi));
        assert_eq!(parse_within("100ms", lo, hi), Ok(lo));
    }

    #[test]
    fn format_writes_what_parse_reads() {
        for (d, s) in [
            (Duration::ZERO, "0s"),
            (Duration::from_millis(100), "100ms"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(5400), "1h30m"),
            (DAY, "24h"),
            (DAY * 30, "30d"),
        ] {
            assert_eq!(format(d), s);
            assert_eq!(ok(s), d);
        }
    }
}

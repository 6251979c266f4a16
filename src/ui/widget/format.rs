//! Number, size and time formatting for labels.

use super::unit::Unit;

/// `x` with `sig` significant digits, trailing zeros trimmed.
fn sig(x: f64, sig: i32) -> String {
    let a = x.abs();
    let mag = a.log10().floor() as i32;
    let d = usize::try_from((sig - 1 - mag).clamp(0, 9)).unwrap_or(0);
    let s = format!("{x:.d$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn nonfinite(v: f64) -> Option<String> {
    if v.is_nan() {
        Some("NaN".into())
    } else if v.is_infinite() {
        Some(if v > 0.0 { "inf" } else { "-inf" }.into())
    } else if v == 0.0 {
        Some("0".into())
    } else {
        None
    }
}

fn with_digits(v: f64, digits: i32) -> String {
    if let Some(s) = nonfinite(v) {
        return s;
    }
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        let p = usize::try_from(digits - 2).unwrap_or(1);
        let s = format!("{v:.p$e}");
        // 1.0e-6 → 1e-6
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    for (div, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if a >= div {
            return format!("{}{suffix}", sig(v / div, digits));
        }
    }
    sig(v, digits)
}

/// Compact axis label: `0`, `0.763`, `1.2k`, `3.4M`, `1e-6`.
#[must_use]
pub fn compact(v: f64) -> String {
    with_digits(v, 3)
}

/// [`compact`] with `digits` significant digits.
#[must_use]
pub fn compact_digits(v: f64, digits: i32) -> String {
    with_digits(v, digits)
}

/// A shown value, a little more precise than axis labels.
#[must_use]
pub fn value(v: f64) -> String {
    with_digits(v, 4)
}

/// An x read off a chart: a whole number (a step) in full, `19999` and not
/// `20k`, so that each step reads apart; else as [`value`] with more digits.
#[must_use]
pub fn exact(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e15 && v.fract() == 0.0 {
        return if v == 0.0 {
            "0".into()
        } else {
            format!("{v:.0}")
        };
    }
    with_digits(v, 6)
}

/// Bytes with binary units.
#[must_use]
pub fn bytes(b: f64) -> String {
    bytes_digits(b, 3)
}

fn bytes_digits(b: f64, digits: i32) -> String {
    if let Some(s) = nonfinite(b) {
        return if s == "0" { "0B".into() } else { s };
    }
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{}{}", sig(v, digits), units[i])
}

/// `v` with `digits` significant digits and no SI prefix (`1200`, not `1.2k`):
/// the unit of a percentage or a temperature is named in its chart's title
/// (`Process CPU (%)`), so its labels stay in that unit.
fn unprefixed(v: f64, digits: i32) -> String {
    if nonfinite(v).is_some() || !(1e-3..1e15).contains(&v.abs()) {
        return with_digits(v, digits);
    }
    sig(v, digits)
}

/// A value in a chart's unit.
#[must_use]
pub fn unit(v: f64, u: Unit) -> String {
    unit_digits(v, u, 3)
}

/// [`unit`] with `digits` significant digits (axis labels add digits until the top and
/// bottom of a narrow range read differently).
#[must_use]
pub fn unit_digits(v: f64, u: Unit, digits: i32) -> String {
    let c = |v: f64| with_digits(v, digits);
    match u {
        Unit::Plain => c(v),
        Unit::Percent => format!("{}%", unprefixed(v, digits)),
        Unit::MiB => bytes_digits(v * 1_048_576.0, digits),
        Unit::GiB => bytes_digits(v * 1_073_741_824.0, digits),
        Unit::Bytes => bytes_digits(v, digits),
        Unit::Celsius => format!("{}°C", unprefixed(v, digits)),
        Unit::Watts => format!("{}W", c(v)),
        Unit::Joules if v.abs() >= 1e6 => format!("{}MJ", c(v / 1e6)),
        Unit::Joules if v.abs() >= 1e3 => format!("{}kJ", c(v / 1e3)),
        Unit::Joules => format!("{}J", c(v)),
        Unit::MilliJoules => unit_digits(v / 1e3, Unit::Joules, digits),
        Unit::Micros if v.abs() >= 1e6 => format!("{}s", c(v / 1e6)),
        Unit::Micros if v.abs() >= 1e3 => format!("{}ms", c(v / 1e3)),
        Unit::Micros => format!("{}µs", c(v)),
        Unit::Seconds => format!("{}s", c(v)),
        Unit::MHz if v.abs() >= 1000.0 => format!("{}GHz", c(v / 1000.0)),
        Unit::MHz => format!("{}MHz", c(v)),
        Unit::BytesPerSec => format!("{}/s", bytes_digits(v, digits)),
        Unit::Mbps if v.abs() >= 1e3 => format!("{}Gbps", c(v / 1e3)),
        Unit::Mbps if v != 0.0 && v.abs() < 1.0 => format!("{}kbps", c(v * 1e3)),
        Unit::Mbps => format!("{}Mbps", c(v)),
    }
}

/// How every label of one y axis is written: one scale (`k`, `MiB`, `e15`, ...)
/// shared by all of them, so that one number of decimals reads the same on each
/// (`0.0%`, `25.0%`; `2GiB`, `4GiB`), never `13.321%` beside `13.32%`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AxisScale {
    /// A label shows `v / div`.
    pub div: f64,
    /// After the number: `k`, `%`, `GiB/s`, `e15`.
    suffix: String,
    /// Scientific (`2.5e-6`): zero is written `0`, not `0.0e-6`.
    sci: bool,
}

impl AxisScale {
    /// The scale for values up to `max_abs` in unit `u`: the same prefix or binary
    /// unit [`unit`] picks for the largest value.
    #[must_use]
    pub(crate) fn new(u: Unit, max_abs: f64) -> AxisScale {
        let bytes = match u {
            Unit::MiB => Some((1_048_576.0, "")),
            Unit::GiB => Some((1_073_741_824.0, "")),
            Unit::Bytes => Some((1.0, "")),
            Unit::BytesPerSec => Some((1.0, "/s")),
            _ => None,
        };
        let a = if max_abs.is_finite() { max_abs } else { 0.0 };
        if u == Unit::MilliJoules {
            // The joules scale of the same values, each label reading v / 1000.
            let mut s = AxisScale::new(Unit::Joules, a / 1e3);
            s.div *= 1e3;
            return s;
        }
        if let Some((f, rate)) = bytes {
            let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
            let (mut div, mut i) = (1.0, 0);
            while a * f / div >= 1024.0 && i + 1 < units.len() {
                div *= 1024.0;
                i += 1;
            }
            return AxisScale {
                div: div / f,
                suffix: format!("{}{rate}", units[i]),
                sci: false,
            };
        }
        let (base, prefixes): (&str, &[(f64, &str)]) = match u {
            // Named in the title: never `1.2k%`.
            Unit::Percent => ("%", &[(1.0, "")]),
            Unit::Celsius => ("°C", &[(1.0, "")]),
            Unit::Watts => ("W", &SI),
            Unit::Joules => ("J", &SI),
            Unit::MHz => ("Hz", &[(1e3, "G"), (1.0, "M")]),
            Unit::Micros => ("s", &[(1e6, ""), (1e3, "m"), (1.0, "µ")]),
            Unit::Seconds => ("s", &[(1.0, "")]),
            Unit::Mbps => ("bps", &[(1e3, "G"), (1.0, "M"), (1e-3, "k")]),
            _ => ("", &SI),
        };
        if !matches!(u, Unit::MHz | Unit::Micros | Unit::Mbps)
            && (a >= 1e15 || (a > 0.0 && a < 1e-3))
        {
            let e = a.log10().floor() as i32;
            return AxisScale {
                div: 10f64.powi(e),
                suffix: format!("e{e}{base}"),
                sci: true,
            };
        }
        let (div, p) = prefixes
            .iter()
            .copied()
            .find(|&(d, _)| a >= d)
            .unwrap_or((1.0, prefixes.last().map_or("", |p| p.1)));
        AxisScale {
            div,
            suffix: format!("{p}{base}"),
            sci: false,
        }
    }

    /// `v` in this scale with `decimals` decimals (at most 12).
    #[must_use]
    pub(crate) fn label(&self, v: f64, decimals: usize) -> String {
        if let Some(s) = nonfinite(v).filter(|s| s != "0") {
            return s;
        }
        if self.sci && v == 0.0 {
            return "0".into();
        }
        let d = decimals.min(12);
        let s = format!("{:.d$}", v / self.div);
        // -0.00 → 0.00
        let s = match s.strip_prefix('-') {
            Some(t) if t.bytes().all(|b| b == b'0' || b == b'.') => t.to_owned(),
            _ => s,
        };
        format!("{s}{}", self.suffix)
    }
}

/// SI prefixes, largest first; below 1000 none.
const SI: [(f64, &str); 5] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")];

pub use crate::text::duration;

/// Time since boot as `3d 04:12` (days, hours:minutes), `04:12` under a day.
#[must_use]
pub(crate) fn uptime(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "?".into();
    }
    let m = (secs / 60.0).floor() as u64;
    let (d, h, m) = (m / 1440, m % 1440 / 60, m % 60);
    if d > 0 {
        format!("{d}d {h:02}:{m:02}")
    } else {
        format!("{h:02}:{m:02}")
    }
}

/// Bytes in binary units without the `iB` (`29.4G`), for the narrow header.
#[must_use]
pub(crate) fn bytes_short(b: f64) -> String {
    let s = bytes(b);
    match s.strip_suffix("iB") {
        Some(t) => t.to_owned(),
        None => s,
    }
}

/// Offset from a start, as `m:ss` or `h:mm:ss`.
#[must_use]
pub fn clock(secs: f64) -> String {
    if !secs.is_finite() {
        return "?".into();
    }
    // Beyond 1000 days an elapsed clock stops meaning anything (hostile timestamps).
    if secs.abs() >= 86_400_000.0 {
        return compact(secs);
    }
    let neg = secs < 0.0;
    let s = secs.abs().round() as u64;
    let sign = if neg { "-" } else { "" };
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{sign}{}:{:02}", s / 60, s % 60)
    }
}

/// `HH:MM:SS` (UTC) of a Unix time.
#[must_use]
pub fn time_of_day(secs: i64) -> String {
    let r = secs.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", r / 3600, r % 3600 / 60, r % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_labels() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(0.7634), "0.763");
        assert_eq!(compact(1.57), "1.57");
        assert_eq!(compact(1234.0), "1.23k");
        assert_eq!(compact(3_400_000.0), "3.4M");
        assert_eq!(compact(0.000_001), "1e-6");
        assert_eq!(compact(0.000_001_23), "1.2e-6");
        assert_eq!(compact(49.0), "49");
        assert_eq!(compact(-2.5), "-2.5");
        assert_eq!(compact(9.01e15), "9e15");
        assert_eq!(bytes(66.4 * 1_048_576.0), "66.4MiB");
        assert_eq!(unit(12.0, Unit::Percent), "12%");
        assert_eq!(unit(123_456.789, Unit::Joules), "123kJ");
        assert_eq!(unit(5.5e7, Unit::Joules), "55MJ");
        assert_eq!(unit(12.0, Unit::Joules), "12J");
        // dcgm-exporter's energy counter is in mJ: 4742776 mJ is 4.74 kJ.
        assert_eq!(unit(4_742_776.0, Unit::MilliJoules), "4.74kJ");
        assert_eq!(unit(250.0, Unit::MilliJoules), "0.25J");
        assert_eq!(unit(12.5, Unit::Micros), "12.5µs");
        assert_eq!(unit(2_500.0, Unit::Micros), "2.5ms");
        assert_eq!(unit(940.0, Unit::Mbps), "940Mbps");
        assert_eq!(unit(1_234.0, Unit::Mbps), "1.23Gbps");
        assert_eq!(unit(0.25, Unit::Mbps), "250kbps");
        assert_eq!(unit(0.0, Unit::Mbps), "0Mbps");
        assert_eq!(unit(0.5, Unit::Seconds), "0.5s");
        // The energy chart's axis: 5e6 mJ is 5.0kJ, not 5.0MJ.
        let mj = AxisScale::new(Unit::MilliJoules, 5e6);
        assert_eq!(mj.label(5e6, 1), "5.0kJ");
        assert_eq!(mj.label(4.5e6, 1), "4.5kJ");
        assert_eq!(
            AxisScale::new(Unit::Micros, 2500.0).label(2500.0, 1),
            "2.5ms"
        );
        assert_eq!(duration(187.0), "3m 07s");
        assert_eq!(clock(75.0), "1:15");
    }
}

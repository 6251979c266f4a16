//! Numbers as the CSV writes them: the text Rust's `{}` gives an `f64` (the
//! shortest digits that read back to the same double, never an exponent; `NaN`,
//! `inf`, `-inf`, `-0`), made from Żmij's shortest digits, several times faster
//! than going through `fmt`. Integers of up to 15 digits skip the float
//! algorithm altogether. Where two shortest texts are equally close to the
//! double, Żmij takes the even last digit and `fmt` the higher one (2^-25 is
//! `…95312` to one, `…95313` to the other); such a tie needs 16 or more digits,
//! so a text of 15 or more digits ending in an even one goes through `fmt`.

use std::io::Write as _;

/// Append `v` as `{v}` writes it.
#[inline]
pub(super) fn write_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.extend_from_slice(non_finite(v));
        return;
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        if v.is_sign_negative() {
            out.push(b'-');
        }
        // Exact: an integer below 10^15 fits a u64 and is what `{}` prints.
        write_u64(out, v.abs() as u64);
        return;
    }
    let mut buf = zmij::Buffer::new();
    if !positional(out, buf.format_finite(v).as_bytes()) {
        // Writing to a Vec cannot fail.
        let _ = write!(out, "{v}");
    }
}

#[cold]
fn non_finite(v: f64) -> &'static [u8] {
    if v.is_nan() {
        b"NaN"
    } else if v > 0.0 {
        b"inf"
    } else {
        b"-inf"
    }
}

fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Żmij's text of a finite double (`-1.5`, `1e-7`, `1.0`, `1.2345e21`) written
/// without an exponent, as `{}` writes it: the same digits, the point moved.
/// False, with nothing written, where the digits may be a tie `{}` breaks the
/// other way.
fn positional(out: &mut Vec<u8>, s: &[u8]) -> bool {
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (mant, exp) = match s.iter().position(|&c| c == b'e') {
        Some(i) => (&s[..i], parse_exp(&s[i + 1..])),
        None => (s, 0),
    };
    // The digits without the point; `point`: how many of them come before it.
    let mut digits = [0u8; 32];
    let mut n = 0;
    let mut point = None;
    for &c in mant {
        if c == b'.' {
            point = Some(n);
        } else if n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    let mut point = i64::try_from(point.unwrap_or(n)).unwrap_or(0) + exp;
    let lead = digits[..n].iter().take_while(|&&c| c == b'0').count();
    let mut d = &digits[lead..n];
    point -= i64::try_from(lead).unwrap_or(0);
    while let [rest @ .., b'0'] = d {
        d = rest;
    }
    if d.len() >= 15 && d.last().is_some_and(|c| c % 2 == 0) {
        return false;
    }
    if neg {
        out.push(b'-');
    }
    if d.is_empty() {
        out.push(b'0');
        return true;
    }
    let len = i64::try_from(d.len()).unwrap_or(0);
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + usize::try_from(-point).unwrap_or(0), b'0');
        out.extend_from_slice(d);
    } else if point >= len {
        out.extend_from_slice(d);
        out.resize(out.len() + usize::try_from(point - len).unwrap_or(0), b'0');
    } else {
        let p = usize::try_from(point).unwrap_or(0);
        out.extend_from_slice(&d[..p]);
        out.push(b'.');
        out.extend_from_slice(&d[p..]);
    }
    true
}

fn parse_exp(s: &[u8]) -> i64 {
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    let e = s
        .iter()
        .fold(0i64, |acc, &c| acc * 10 + i64::from(c.wrapping_sub(b'0')));
    if neg {
        -e
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(v: f64) {
        let mut out = Vec::new();
        write_f64(&mut out, v);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{v}"),
            "{v:e} bits {:016x}",
            v.to_bits()
        );
    }

    #[test]
    fn special_values_are_written_as_display_writes_them() {
        for v in [
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
            -5e-324,
            0.1,
            0.2 + 0.1,
            1e-7,
            -1e-7,
            1e15,
            1e15 - 1.0,
            -1e15,
            1e16,
            1e21,
            1e22,
            1e23,
            9_007_199_254_740_993.0,
            5.444_310_685_350_916e14,
            123.456,
            1.5,
            -42.0,
        ] {
            check(v);
        }
    }

    #[test]
    fn every_power_of_two_and_ten_and_their_neighbours_as_display_writes_them() {
        for e in -1074..=1023 {
            let v = 2f64.powi(e);
            for x in [v, v.next_up(), v.next_down(), -v] {
                check(x);
            }
        }
        for e in -323..=308 {
            let v: f64 = format!("1e{e}").parse().unwrap();
            for x in [v, v.next_up(), v.next_down(), -v, v * 3.0, v * 7.25] {
                check(x);
            }
        }
    }

    #[test]
    fn random_doubles_of_every_exponent_and_short_decimals_as_display_writes_them() {
        let mut rng = leet_format::test_rng::Rng(0x5eed_1234_abcd);
        for _ in 0..300_000 {
            let bits = rng.next();
            check(f64::from_bits(bits));
        }
        for _ in 0..300_000 {
            // Values as training logs round them: a few digits, any scale.
            let digits = rng.next() % 1_000_000;
            let scale = (rng.next() % 20) as i32 - 10;
            check(digits as f64 * 10f64.powi(scale));
            check(digits as f64 / 1e6);
        }
    }
}

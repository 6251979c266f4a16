//! `leet sample`: the samples as JSON lines or readable text, the exit paths.

use std::io::Write;

use super::{child, Sample, Sampler, SamplerOptions, Ticker};

fn json_number(v: f64) -> serde_json::Value {
    // Whole numbers print as integers, as W&B's own records do (`"proc.cpu.threads":4`).
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// One JSON object for a sample: `{"timestamp": .., "<key>": value, ...}`.
pub fn sample_to_json(sample: &Sample) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    map.insert(
        "timestamp".to_string(),
        serde_json::Number::from_f64(sample.timestamp)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
    );
    for (k, v) in &sample.values {
        map.insert(k.clone(), json_number(*v));
    }
    serde_json::Value::Object(map)
}

/// [`sample_to_json`] written out as one line (with its newline) straight from the
/// sample: the same bytes, without copying every key into a JSON map first. As in that
/// map, a key given twice (two families emitting `gpu.0.gpu`) appears once, where it
/// first came, with the value that came last.
pub fn write_json_line(w: &mut Vec<u8>, sample: &Sample) -> serde_json::Result<()> {
    use std::collections::hash_map::Entry;
    let start = w.len();
    let timestamp = serde_json::Number::from_f64(sample.timestamp)
        .map_or(serde_json::Value::Null, serde_json::Value::Number);
    let mut entries: Vec<(&str, serde_json::Value)> = Vec::with_capacity(sample.values.len() + 1);
    let mut at: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(sample.values.len() + 1);
    let pairs = std::iter::once(("timestamp", timestamp))
        .chain((sample.values.iter()).map(|(k, v)| (k.as_str(), json_number(*v))));
    for (k, v) in pairs {
        match at.entry(k) {
            Entry::Occupied(e) => entries[*e.get()].1 = v,
            Entry::Vacant(e) => {
                e.insert(entries.len());
                entries.push((k, v));
            }
        }
    }
    w.push(b'{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        serde_json::to_writer(&mut *w, k)?;
        w.push(b':');
        serde_json::to_writer(&mut *w, v)?;
    }
    w.extend_from_slice(b"}\n");
    // Keys name devices and endpoints' metrics: inert on a terminal.
    leet_text::json_inert_from(w, start);
    Ok(())
}

/// Ends every child of the sampler when dropped: on return, on error and while a panic
/// unwinds.
struct KillChildren;

impl Drop for KillChildren {
    fn drop(&mut self) {
        child::kill_all();
    }
}

/// SIGTERM, SIGINT, SIGHUP and SIGQUIT end `leet sample` (and `leet serve`) at
/// once, whatever it is waiting for (a hung source, a full stdout pipe): children
/// killed (SIGQUIT's core dump would leave them running), exit status 128 + signal.
///
/// # Errors
/// When the handlers or their thread cannot be set up.
pub fn exit_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGQUIT])?;
    std::thread::Builder::new()
        .name("leet-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                child::close();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

/// `leet sample`: print `count` samples (forever when `None`) to `out`, one JSON object
/// per line with `json`, otherwise a readable block per sample. Unavailable families and
/// per-sample errors go to stderr. The sampler's children are killed on every way out
/// (return, error, panic; a signal exits with 128 + its number).
pub fn run_sample_command(
    opts: SamplerOptions,
    count: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let _children = KillChildren;
    if let Err(e) = exit_on_signals() {
        let _ = writeln!(std::io::stderr(), "leet: cannot handle signals: {e}");
    }
    let interval = opts.interval;
    let mut sampler = Sampler::new(opts);
    let mut stderr = std::io::stderr().lock();
    for (family, why) in sampler.unavailable() {
        // Tool output and endpoint text are untrusted: no escape sequence reaches the tty.
        let _ = writeln!(
            stderr,
            "{}: not available: {}",
            leet_text::sanitize(family),
            leet_text::sanitize(why)
        );
    }
    drop(stderr);
    let mut ticker = Ticker::new(interval);
    let mut n = 0u64;
    let mut line = Vec::with_capacity(4096);
    while count.is_none_or(|c| n < c) {
        ticker.wait();
        let sample = sampler.sample();
        {
            let mut stderr = std::io::stderr().lock();
            for (family, e) in &sample.errors {
                let _ = writeln!(
                    stderr,
                    "{}: error: {}",
                    leet_text::sanitize(family),
                    leet_text::sanitize(e)
                );
            }
        }
        line.clear();
        if json {
            write_json_line(&mut line, &sample)?;
        } else {
            write_text(&mut line, &sample)?;
        }
        out.write_all(&line)?;
        out.flush()?;
        n += 1;
    }
    Ok(())
}

fn write_text(w: &mut Vec<u8>, sample: &Sample) -> std::io::Result<()> {
    writeln!(w, "timestamp {:.3}", sample.timestamp)?;
    let width = sample
        .values
        .iter()
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0);
    for (k, v) in &sample.values {
        writeln!(w, "  {k:<width$}  {}", format_value(*v))?;
    }
    writeln!(w)
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_shape() {
        let s = Sample {
            timestamp: 1.5,
            values: vec![
                ("proc.cpu.threads".into(), 4.0),
                ("cpu".into(), 12.25),
                ("x".into(), f64::NAN),
            ],
            errors: vec![],
        };
        assert_eq!(
            serde_json::to_string(&sample_to_json(&s)).expect("json"),
            r#"{"timestamp":1.5,"proc.cpu.threads":4,"cpu":12.25,"x":null}"#
        );
    }

    #[test]
    fn a_json_line_is_the_json_map_written_out() {
        let s = Sample {
            timestamp: 1_700_000_000.123_456,
            values: vec![
                ("gpu.0.gpu".into(), 12.0),
                ("cpu".into(), 12.25),
                ("x".into(), f64::NAN),
                ("gpu.0.gpu".into(), 13.5),
                ("inf".into(), f64::INFINITY),
                ("big".into(), 1e17),
                ("neg".into(), -3.0),
                ("quote\"and\\back\u{1}slash é".into(), 0.1),
                ("timestamp".into(), 5.0),
                ("cpu".into(), 1.0),
            ],
            errors: vec![],
        };
        for sample in [s, Sample::default()] {
            let mut want = serde_json::to_vec(&sample_to_json(&sample)).expect("json");
            want.push(b'\n');
            let mut got = Vec::new();
            write_json_line(&mut got, &sample).expect("line");
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        }
    }
}

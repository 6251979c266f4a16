//! `leet inspect`: print a run's records, or its summary, as JSON or text.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::msg::{RunIndexEntry, RunStatus};
use crate::source::file::{resolve_readable, RunReader};
use crate::source::index;
use crate::source::nodes::{read_nodes, RunFiles};
use crate::store::run::DamageReport;
use crate::store::stitch;
use crate::store::Run;
use export::first_step;
use leet_format::json::record_json;
use leet_format::json_fast::{self, Written};
use leet_format::leveldb::{Frame, SkipReason};
use leet_text::{flatten_into, rfc3339};

pub mod export;
mod json_all;

/// Options of `leet inspect`.
#[derive(Debug, Clone, Default)]
pub struct InspectOptions {
    pub path: PathBuf,
    pub json: bool,
    pub summary: bool,
    pub follow: bool,
    /// With `follow`: stop after this long without growth (None: wait for the exit record).
    pub idle_timeout: Option<Duration>,
    /// `--run ID`: that run of the directory, read whole (see `RunFiles::of_id`).
    pub run: Option<String>,
}

fn system_time_rfc3339(t: std::time::SystemTime) -> String {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => rfc3339(
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            i32::try_from(d.subsec_nanos()).unwrap_or(0),
        ),
        Err(_) => rfc3339(0, 0),
    }
    .unwrap_or_default()
}

/// The damage report as JSON.
#[must_use]
pub fn damage_json(d: &DamageReport) -> Value {
    // Another file joined on is said apart (`appended_file`), not as damage.
    let spans: Vec<Value> = d
        .skips
        .iter()
        .filter(|s| s.reason != SkipReason::AppendedFile)
        .map(|s| {
            // Where reading went on: the next chunk found after the damage (the end
            // of the file when the damage runs to it).
            let resync = s.reason.resynchronises().then(|| s.end());
            serde_json::json!({"offset": s.offset, "len": s.len, "reason": s.reason.as_str(),
                "resynchronised_at": resync})
        })
        .collect();
    let (skipped_spans, skipped_bytes) = d.corrupt();
    serde_json::json!({
        "skipped_spans": skipped_spans,
        "skipped_bytes": skipped_bytes,
        "bad_records": d.bad_records,
        "duplicate_bytes": d.duplicate_bytes,
        "incomplete_tail_bytes": d.incomplete_tail,
        "appended_file": d.appended.map(|a| serde_json::json!({"offset": a.offset, "len": a.len})),
        "spans": spans,
    })
}

fn without_wandb(mut m: Map<String, Value>) -> Value {
    m.remove("_wandb");
    Value::Object(m)
}

/// The run's state at `now` (Unix s) and, for a run without an exit record, how
/// long it has been quiet: the rule of the workspace's index and the viewer
/// ([`index::state_at`], quiet for longer than leet's `--stale-after` default →
/// crashed), so `inspect --summary` and the viewer agree.
#[must_use]
pub fn state_at(file: &Path, run: &Run, now: f64) -> (RunStatus, Option<f64>) {
    let mtime_ns = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let entry = RunIndexEntry {
        file: Some(file.to_owned()),
        mtime_ns,
        has_run_record: run.counts.by_type.contains_key("run"),
        exit_code: run.exit_code,
        last_time: run.last_time,
        ..RunIndexEntry::default()
    };
    let state = index::state_at(&entry, now, index::STALE_AFTER);
    // A file with no record yet is `unknown` (W&B's word), quiet since its mtime
    // too: the text summary says it as the viewer does.
    let quiet = matches!(
        state,
        RunStatus::Running | RunStatus::Crashed | RunStatus::Unknown
    )
    .then(|| index::quiet_at(mtime_ns, run.last_time, now).max(0.0));
    (state, quiet)
}

/// The state as the text summary shows it, in the viewer's words (its status
/// bar's `crashed? (no exit record, quiet 1h 00m)`).
fn state_text(state: RunStatus, quiet: Option<f64>) -> String {
    let quiet_secs = quiet;
    let quiet = quiet.map(leet_text::duration).unwrap_or_default();
    match state {
        RunStatus::Crashed => format!("crashed? (no exit record, quiet {quiet})"),
        RunStatus::Running => format!("running (quiet {quiet})"),
        // No run record (the SDK writes the header first): the viewer's words.
        RunStatus::Unknown => match quiet_secs {
            Some(q) if q >= index::STALE_AFTER => format!("empty: nothing written for {quiet}"),
            Some(_) => "empty: waiting for the first record".to_owned(),
            None => "unknown".to_owned(),
        },
        s => s.as_str().to_owned(),
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The `--summary --json` object (same fields as `wandb leet inspect --summary --json`,
/// plus `corruption`), its state decided now.
#[must_use]
pub fn summary_json(file: &Path, run: &Run) -> Value {
    summary_json_at(file, run, unix_now())
}

/// [`summary_json`] with the state decided at `now` (Unix s; see [`state_at`]).
#[must_use]
pub fn summary_json_at(file: &Path, run: &Run, now: f64) -> Value {
    const CONSOLE_TAIL: usize = 20;
    // The newest lines as written: a long line the console wrapped is one.
    let unfinished: Vec<_> = run.console.unfinished().collect();
    let all: Vec<&crate::store::console::Line> =
        run.console.lines().iter().chain(&unfinished).collect();
    let mut starts: Vec<usize> = Vec::new();
    for (i, l) in all.iter().enumerate().rev() {
        if starts.len() == CONSOLE_TAIL {
            break;
        }
        // (Joined only to a line of its own stream before it.)
        if !l.cont || i == 0 || all[i - 1].stream != l.stream {
            starts.push(i);
        }
    }
    starts.reverse();
    let lines: Vec<Value> = starts
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let end = starts.get(n + 1).copied().unwrap_or(all.len());
            let l = all[i];
            let text: String = all[i..end].iter().map(|p| p.text.as_str()).collect();
            let mut o = Map::new();
            o.insert("line".into(), Value::from(text));
            o.insert("stream".into(), Value::from(l.stream.as_str()));
            if let Some((s, n)) = l.time {
                if let Some(t) = rfc3339(s, n) {
                    o.insert("time".into(), Value::from(t));
                }
            }
            Value::Object(o)
        })
        .collect();
    let total = run.console.logical_total() + unfinished.iter().filter(|l| !l.cont).count() as u64;
    let last_write = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .map(system_time_rfc3339)
        .ok();
    let i = &run.info;
    serde_json::json!({
        "config": without_wandb(run.config.to_json()),
        "console": lines,
        "console_lines": total,
        "corruption": damage_json(&run.damage),
        "entity": i.entity,
        "exit_code": run.exit_code,
        "file": std::path::absolute(file).unwrap_or_else(|_| file.to_owned()).display().to_string(),
        "last_write": last_write,
        "name": i.display_name,
        "notes": i.notes,
        "project": i.project,
        "run_id": i.run_id,
        "start_time": i.start_time.and_then(|(s, n)| rfc3339(s, n)),
        "state": state_at(file, run, now).0.as_str(),
        "step": run.known_step(),
        "summary": without_wandb(run.summary.to_json()),
        "tags": i.tags,
    })
}

fn print_summary_text(out: &mut dyn Write, file: &Path, run: &Run) -> io::Result<()> {
    use leet_text::sanitize as clean;
    let now = unix_now();
    let v = summary_json_at(file, run, now);
    let i = &run.info;
    writeln!(out, "file:       {}", clean(&file.display().to_string()))?;
    if i.display_name.is_empty() && i.run_id.is_empty() {
        writeln!(out, "run:        (no run record yet)")?;
    } else {
        writeln!(
            out,
            "run:        {} ({})",
            clean(&i.display_name),
            clean(&i.run_id)
        )?;
    }
    let entity = if i.entity.is_empty() {
        String::new()
    } else {
        format!("{}/", clean(&i.entity))
    };
    writeln!(out, "project:    {entity}{}", clean(&i.project))?;
    let (state, quiet) = state_at(file, run, now);
    let said = match state {
        RunStatus::Crashed if run.preempting => format!(
            "preempted? (marked preempting, no exit record, quiet {})",
            quiet.map(leet_text::duration).unwrap_or_default()
        ),
        RunStatus::Running if run.preempting => {
            format!("{} · preempting", state_text(state, quiet))
        }
        _ => state_text(state, quiet),
    };
    writeln!(out, "state:      {said}")?;
    if let Some(c) = run.exit_code {
        writeln!(out, "exit code:  {c}")?;
    }
    if let Some(t) = v.get("start_time").and_then(Value::as_str) {
        writeln!(out, "started:    {t}")?;
    }
    writeln!(out, "step:       {}", run.step())?;
    if !i.tags.is_empty() {
        writeln!(out, "tags:       {}", clean(&i.tags.join(", ")))?;
    }
    if !i.notes.is_empty() {
        writeln!(out, "notes:      {}", clean(&i.notes))?;
    }
    for (title, key) in [("config", "config"), ("summary", "summary")] {
        writeln!(out, "\n{title}:")?;
        let mut rows = Vec::new();
        if let Some(Value::Object(m)) = v.get(key) {
            flatten_into("", m, &mut rows);
        }
        // In the overview's order (and wandb's): by key, numbers in keys as numbers.
        rows.sort_by(|a, b| leet_text::natural_cmp(&a.0, &b.0));
        for (k, val) in rows {
            writeln!(out, "  {} = {}", clean(&k), clean(&val))?;
        }
    }
    let console = v
        .get("console")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    writeln!(
        out,
        "\nconsole ({} lines, last {}):",
        v.get("console_lines").and_then(Value::as_u64).unwrap_or(0),
        console.len()
    )?;
    for l in console {
        let text = l.get("line").and_then(Value::as_str).unwrap_or("");
        let prefix = if l.get("stream").and_then(Value::as_str) == Some("stderr") {
            "ERROR "
        } else {
            ""
        };
        writeln!(out, "  {prefix}{}", leet_text::sanitize(text))?;
    }
    Ok(())
}

fn report_damage(file: &Path, d: &DamageReport, err: &mut dyn Write) -> io::Result<()> {
    let shown = leet_text::sanitize_path(file);
    // Another file's records are intact, and not this run's: said apart from the
    // damage.
    if let Some(a) = d.appended {
        writeln!(
            err,
            "{shown}: another run file is joined on at offset {} ({} bytes from there on): its records are not this run's, and were not read",
            a.offset, a.len
        )?;
    }
    let (spans, bytes) = d.corrupt();
    if spans > 0 {
        // A record over the cap is intact but not read: "every intact record" is
        // then only true with it named.
        let except = if d.too_large > 0 {
            format!(
                " except {} over the {} MiB record cap",
                d.too_large,
                leet_format::leveldb::MAX_RECORD_LEN >> 20
            )
        } else {
            String::new()
        };
        writeln!(
            err,
            "{shown}: skipped {spans} damaged span(s), {bytes} bytes ({} undecodable record(s)); every intact record was read{except}",
            d.bad_records
        )?;
        let damage = (d.skips.iter()).filter(|s| s.reason != SkipReason::AppendedFile);
        for s in damage.take(10) {
            if s.reason.resynchronises() {
                writeln!(
                    err,
                    "  at offset {}: {} bytes, {}; resynchronised after {} bytes, at offset {}",
                    s.offset,
                    s.len,
                    s.reason,
                    s.len,
                    s.end()
                )?;
            } else {
                writeln!(
                    err,
                    "  at offset {}: {} bytes, {}",
                    s.offset, s.len, s.reason
                )?;
            }
        }
    }
    if d.incomplete_tail > 0 {
        writeln!(
            err,
            "{shown}: reached the end of an incomplete .wandb file ({} bytes of an unfinished record)",
            d.incomplete_tail
        )?;
    }
    Ok(())
}

/// Run `leet inspect`.
///
/// # Errors
/// Resolution, I/O and header errors (each names the file); write errors.
pub fn run(opts: &InspectOptions, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<()> {
    run_with(opts, out, err, true)
}

/// [`run`] as it was before the direct JSON writer and the parallel one-shot read:
/// every record through [`record_json`], on one thread. The reference the fast path
/// is tested against; not for other use.
///
/// # Errors
/// As [`run`].
#[doc(hidden)]
pub fn run_reference(
    opts: &InspectOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    run_with(opts, out, err, false)
}

fn run_with(
    opts: &InspectOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    fast: bool,
) -> anyhow::Result<()> {
    // The run as the viewer opens it: a distributed run's nodes, a resumed
    // run's segments (from a workspace, or the run picked by its id).
    let (file, src) = match &opts.run {
        Some(id) => {
            let src = RunFiles::of_id(&opts.path, id).map_err(anyhow::Error::msg)?;
            (src.main().to_path_buf(), src)
        }
        None => {
            let (file, passed) = resolve_readable(&opts.path)?;
            for p in &passed {
                writeln!(err, "leet: {p}")?;
            }
            let src = RunFiles::of(&opts.path, &file);
            (file, src)
        }
    };
    if opts.summary && !matches!(src, RunFiles::One(_)) {
        let run = read_run_of(&src)?;
        let main = src.main();
        if opts.json {
            write_json(out, &summary_json(main, &run))?;
        } else {
            print_summary_text(out, main, &run)?;
        }
        report_damage(main, &run.damage, err)?;
        return Ok(());
    }
    // The records of one file: the one named (a node's or a segment's file or
    // directory lists its own records), or for a workspace the primary node's,
    // the newest segment's.
    let named = opts.run.is_none() && !crate::source::resolve::names_workspace(&opts.path);
    let file = if named {
        file
    } else {
        src.main().to_path_buf()
    };
    if let Some(what) = made_of(&src, &file) {
        writeln!(
            err,
            "leet: {} is {what}; listing its records alone",
            leet_text::sanitize_path(&file)
        )?;
    }
    if fast && opts.json && !opts.follow && !opts.summary {
        if let Some(damage) = json_all::print(&file, out, err)? {
            report_damage(&file, &damage, err)?;
        }
        return Ok(());
    }
    let mut reader = RunReader::open(&file)?;
    let mut run = Run::new();
    if opts.summary {
        // One segment of a resumed run named by its own directory or file: its
        // summary alone, said, with how to read the run whole.
        if let Some(n) = crate::source::nodes::segments_of(&file).map(|s| s.len()) {
            let whole = export::by_id_hint(&file).map_or_else(String::new, |h| {
                format!(
                    "; {} reads them stitched",
                    h.replacen("leet export", "leet inspect --summary", 1)
                )
            });
            writeln!(
                err,
                "leet: {} is one of {n} segments of a resumed run: its summary alone{whole}",
                leet_text::sanitize_path(&file)
            )?;
        }
        // The summary shows no series: rows are read for their steps and times only
        // (`summary_only_equals_full` checks that it prints the same).
        // The reference reads everything.
        let mut reader = if fast {
            reader.without_series()
        } else {
            reader
        };
        // The file as it is now is all there is (as for the record listing and
        // export): a header that cannot begin a record is damage, not a record
        // still being written.
        reader.finish();
        reader.read_all_parallel(&mut run)?;
        if opts.json {
            write_json(out, &summary_json(&file, &run))?;
        } else {
            print_summary_text(out, &file, &run)?;
        }
        report_damage(&file, &run.damage, err)?;
        return Ok(());
    }
    let mut last_growth = Instant::now();
    // Set for the last poll, which also hands on the damaged span still open at the
    // end (held while the file might extend it): the same report as a one-shot read.
    let mut finishing = false;
    let mut line = Vec::with_capacity(4096);
    // File names can hold escape sequences: shown sanitized on stderr.
    let shown = leet_text::sanitize_path(&file);
    loop {
        let mut write_err: Option<io::Error> = None;
        let p = reader.poll_frames(|fr| {
            if write_err.is_some() {
                return;
            }
            let res = match fr {
                Frame::Record { offset, payload } => {
                    run.apply(offset, &payload);
                    print_record(&mut line, opts.json, fast, offset, &payload, out).and_then(|ok| {
                        if ok {
                            Ok(())
                        } else {
                            // Not a record: on stderr, so stdout stays records only.
                            writeln!(
                                err,
                                "{shown}: undecodable record at offset {offset}, {} bytes",
                                payload.len()
                            )
                        }
                    })
                }
                Frame::Skip(s) => {
                    let r = writeln!(
                        err,
                        "{shown}: skipped {} bytes at offset {}: {}",
                        s.len, s.offset, s.reason
                    );
                    run.skip(s);
                    r
                }
            };
            if let Err(e) = res {
                write_err = Some(e);
            }
        })?;
        if let Some(e) = write_err {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e.into());
        }
        if p.restarted {
            // The records printed from here on are another file's (or the same
            // file written again): said, so that no one takes them for more of
            // the run printed so far.
            writeln!(
                err,
                "{shown}: the file shrank or was replaced; read again from its start"
            )?;
        }
        run.damage.incomplete_tail = p.pending;
        run.damage.set_open(p.open);
        if p.more {
            continue;
        }
        if finishing {
            break;
        }
        if p.bytes > 0 {
            last_growth = Instant::now();
        }
        let idle = p.bytes == 0
            && opts
                .idle_timeout
                .is_some_and(|t| last_growth.elapsed() >= t);
        if !opts.follow || run.exit_code.is_some() || idle {
            reader.finish();
            finishing = true;
            continue;
        }
        out.flush()?;
        std::thread::sleep(Duration::from_millis(50));
    }
    out.flush()?;
    report_damage(&file, &run.damage, err)?;
    Ok(())
}

/// What a run of several files is, said of its main file; None for one file.
fn made_of(src: &RunFiles, file: &Path) -> Option<String> {
    let main = src.main() == file;
    match src {
        RunFiles::One(_) => None,
        RunFiles::Nodes(n) if main => {
            Some(format!("the primary node of a run of {} nodes", n.len()))
        }
        RunFiles::Nodes(n) => Some(format!("one node of a run of {} nodes", n.len())),
        RunFiles::Segments(s) if main => Some(format!(
            "the newest of the {} segments of a resumed run",
            s.len()
        )),
        RunFiles::Segments(s) => Some(format!("one of the {} segments of a resumed run", s.len())),
    }
}

/// A run of several files read whole into one run, as the viewer reads it: the
/// nodes together (the primary's summary, config and facts), or the segments in
/// order, each without the rows a later one logged again; the damage summed.
fn read_run_of(src: &RunFiles) -> anyhow::Result<Run> {
    let mut run = Run::new();
    match src {
        RunFiles::One(f) => {
            let mut reader = RunReader::open(f)?;
            reader.finish();
            reader.read_all_parallel(&mut run)?;
        }
        RunFiles::Nodes(nodes) => {
            read_nodes(nodes, true, |b| {
                run.fold_batch(&b);
                run.damage.incomplete_tail = b.pending;
                run.damage.set_open(b.open);
                true
            });
        }
        RunFiles::Segments(files) => {
            let firsts: Vec<Option<f64>> = files.iter().map(|f| first_step(f)).collect();
            let mut damage = DamageReport::default();
            let mut started = None;
            for (f, cut) in files.iter().zip(stitch::cuts(&firsts)) {
                run.stitch = stitch::Stitch {
                    cut,
                    ..stitch::Stitch::default()
                };
                run.damage = DamageReport::default();
                let mut reader = RunReader::open(f)?;
                reader.finish();
                reader.read_all_parallel(&mut run)?;
                damage.absorb(&run.damage);
                started = started.or(run.info.start_time);
            }
            run.damage = damage;
            // The run started when its first segment did (as the viewer says).
            if started.is_some() {
                run.info.start_time = started;
            }
        }
    }
    Ok(run)
}

/// `v` as pretty JSON and a newline, every character a terminal would act on
/// (DEL, C1 controls, bidi overrides) escaped: the same JSON to a reader.
fn write_json(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    let mut text = serde_json::to_vec_pretty(v).map_err(io::Error::other)?;
    leet_text::json_inert(&mut text);
    text.push(b'\n');
    out.write_all(&text)
}

/// Print one record; false (nothing printed) when the payload does not decode.
/// `fast`: JSON by the direct writer (same bytes), else by [`record_json`] alone.
fn print_record(
    line: &mut Vec<u8>,
    json: bool,
    fast: bool,
    offset: u64,
    payload: &[u8],
    out: &mut dyn Write,
) -> io::Result<bool> {
    line.clear();
    if json {
        let printed = if fast {
            let mut scratch = json_fast::Scratch::default();
            json_fast::write_record(payload, line, &mut scratch) != Written::Undecodable
        } else {
            json_fast::write_general(payload, line)
        };
        if !printed {
            return Ok(false);
        }
        // The same JSON, inert on a terminal: its text comes from the file.
        leet_text::json_inert(line);
    } else {
        let Some(v) = record_json(payload) else {
            return Ok(false);
        };
        let num = v.get("num").and_then(Value::as_i64).unwrap_or(0);
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let body = v.get(&kind).map(Value::to_string).unwrap_or_default();
        write!(
            line,
            "#{num:<6} {kind:<12} @{offset:<10} {}",
            leet_text::sanitize(&body)
        )?;
    }
    line.push(b'\n');
    out.write_all(line)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_no_run_record_yet_is_unknown_with_no_step() {
        let v = summary_json(Path::new("new.wandb"), &Run::new());
        assert_eq!(v["state"], "unknown");
        assert_eq!(v["step"], Value::Null);
        assert!(Path::new(v["file"].as_str().unwrap_or("")).is_absolute());
    }

    #[test]
    fn the_damage_line_counts_the_intact_records_over_the_cap() {
        use leet_format::leveldb::Skip;
        let line = |d: &DamageReport| {
            let mut err = Vec::new();
            report_damage(Path::new("r.wandb"), d, &mut err).unwrap();
            String::from_utf8(err)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_owned()
        };
        let mut d = DamageReport::default();
        d.add(Skip {
            offset: 131,
            len: 70 << 20,
            reason: SkipReason::RecordTooLarge,
        });
        // A span still open is counted once, whichever form it ends in.
        d.set_open(Some(Skip {
            offset: 80 << 20,
            len: 1,
            reason: SkipReason::RecordTooLarge,
        }));
        d.set_open(Some(Skip {
            offset: 80 << 20,
            len: 2,
            reason: SkipReason::RecordTooLarge,
        }));
        assert_eq!(
            line(&d),
            "r.wandb: skipped 2 damaged span(s), 73400322 bytes (0 undecodable record(s)); \
             every intact record was read except 2 over the 64 MiB record cap"
        );
        let mut d = DamageReport::default();
        d.add(Skip {
            offset: 7,
            len: 9,
            reason: SkipReason::Checksum,
        });
        assert_eq!(
            line(&d),
            "r.wandb: skipped 1 damaged span(s), 9 bytes (0 undecodable record(s)); \
             every intact record was read"
        );
    }

    /// Another run file joined on is said on its own line and in its own JSON
    /// field, never counted or listed as damage.
    #[test]
    fn another_file_joined_on_is_said_apart_from_the_damage() {
        use leet_format::leveldb::Skip;
        let mut d = DamageReport::default();
        d.add(Skip {
            offset: 7,
            len: 9,
            reason: SkipReason::Checksum,
        });
        d.set_open(Some(Skip {
            offset: 500,
            len: 1000,
            reason: SkipReason::AppendedFile,
        }));
        let mut err = Vec::new();
        report_damage(Path::new("r.wandb"), &d, &mut err).unwrap();
        let err = String::from_utf8(err).unwrap();
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines,
            [
                "r.wandb: another run file is joined on at offset 500 (1000 bytes from there \
                 on): its records are not this run's, and were not read",
                "r.wandb: skipped 1 damaged span(s), 9 bytes (0 undecodable record(s)); \
                 every intact record was read",
                "  at offset 7: 9 bytes, checksum mismatch; resynchronised after 9 bytes, at offset 16",
            ]
        );
        let j = damage_json(&d);
        assert_eq!(j["skipped_spans"], 1);
        assert_eq!(j["skipped_bytes"], 9);
        assert_eq!(
            j["appended_file"],
            serde_json::json!({"offset": 500, "len": 1000})
        );
        assert_eq!(j["spans"].as_array().map(Vec::len), Some(1));
    }
}

//! What the server tells, written as the records a `.wandb` file holds (a run
//! record, config and summary, history rows, the exit) and decoded by the file
//! reader's [`Decoder`]: the events that come out are those a local file of the
//! same run gives, so nothing downstream knows where the run came from.

use leet_format::decoder::Decoder;
use leet_format::event::Events;
use leet_format::leveldb;
use leet_format::pb;
use leet_format::pb::record::RecordType as T;
use prost::Message as _;
use serde_json::{Map, Value};

use super::history::HistoryRow;
use super::info::{ConsoleLine, RunMeta};

/// Turns server answers into events, numbering the records it makes.
#[derive(Debug, Default)]
pub struct Writer {
    decoder: Decoder,
    num: i64,
    /// The same records framed as a `.wandb` file, when asked for.
    frames: Option<leveldb::Writer>,
    /// Bytes of `frames` already handed out.
    framed_out: usize,
}

impl Writer {
    /// A writer whose decoder keeps the series.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer for a run that is only summarised (see `Decoder::without_series`).
    pub fn without_series() -> Self {
        Self {
            decoder: Decoder::without_series(),
            ..Self::default()
        }
    }

    /// Also frame every record as a `.wandb` file ([`Writer::framed`]).
    #[must_use]
    pub fn framing(mut self) -> Self {
        self.frames = Some(leveldb::Writer::new());
        self
    }

    /// The file's bytes framed since the last call (the W&B header first).
    pub fn framed(&mut self) -> &[u8] {
        let Some(f) = &self.frames else {
            return &[];
        };
        let from = self.framed_out;
        self.framed_out = f.bytes().len();
        &f.bytes()[from..]
    }

    fn emit(&mut self, r: T) {
        self.num += 1;
        let payload = pb::Record {
            num: self.num,
            record_type: Some(r),
            ..Default::default()
        }
        .encode_to_vec();
        if let Some(f) = &mut self.frames {
            f.append(&payload);
        }
        // The offset names a record in damage reports; a record's number serves.
        self.decoder
            .record(u64::try_from(self.num).unwrap_or(0), &payload);
    }

    /// The run record (with its config) and the summary.
    pub fn meta(&mut self, url: &super::RemoteUrl, m: &RunMeta) {
        let config = pb::ConfigRecord {
            update: m
                .config
                .iter()
                .map(|(k, v)| pb::ConfigItem {
                    key: k.clone(),
                    value_json: v.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        self.emit(T::Run(pb::RunRecord {
            run_id: url.run.clone().unwrap_or_else(|| m.name.clone()),
            entity: url.entity.clone(),
            project: url.project.clone(),
            display_name: m.display_name.clone(),
            notes: m.notes.clone(),
            tags: m.tags.clone(),
            run_group: m.group.clone(),
            job_type: m.job_type.clone(),
            sweep_id: m.sweep.clone(),
            start_time: rfc3339(&m.created_at)
                .map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos }),
            config: Some(config),
            ..Default::default()
        }));
        self.summary(&m.summary);
    }

    /// A summary record setting each key.
    pub fn summary(&mut self, summary: &Map<String, Value>) {
        self.emit(T::Summary(pb::SummaryRecord {
            update: summary
                .iter()
                .map(|(k, v)| pb::SummaryItem {
                    key: k.clone(),
                    value_json: v.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }));
    }

    /// A history record per row.
    pub fn rows(&mut self, rows: impl IntoIterator<Item = HistoryRow>) {
        for row in rows {
            let item = row
                .into_iter()
                .map(|(mut path, value_json)| {
                    let (key, nested_key) = if path.len() == 1 {
                        (path.pop().unwrap_or_default(), Vec::new())
                    } else {
                        (String::new(), path)
                    };
                    pb::HistoryItem {
                        key,
                        nested_key,
                        value_json,
                        ..Default::default()
                    }
                })
                .collect();
            self.emit(T::History(pb::HistoryRecord {
                item,
                ..Default::default()
            }));
        }
    }

    /// An output record per console line.
    pub fn console(&mut self, lines: &[ConsoleLine]) {
        for l in lines {
            self.emit(T::Output(pb::OutputRecord {
                output_type: if l.stderr {
                    pb::output_record::OutputType::Stderr
                } else {
                    pb::output_record::OutputType::Stdout
                } as i32,
                timestamp: rfc3339(&l.time)
                    .map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos }),
                line: l.line.clone(),
                ..Default::default()
            }));
        }
    }

    /// A stats record per row of the `events` stream: its keys without the
    /// `system.` the server puts before them (a `.wandb` file's stats keys are
    /// `cpu`, `gpu.0.gpu`), its time `_timestamp`.
    pub fn stats(&mut self, rows: &[Map<String, Value>]) {
        for r in rows {
            let t = r.get("_timestamp").and_then(Value::as_f64);
            let item = r
                .iter()
                .filter(|(k, v)| !k.starts_with('_') && !v.is_null())
                .map(|(k, v)| pb::StatsItem {
                    key: k.strip_prefix("system.").unwrap_or(k).to_owned(),
                    value_json: v.to_string(),
                })
                .collect();
            self.emit(T::Stats(pb::StatsRecord {
                timestamp: t.filter(|t| t.is_finite()).map(|t| prost_types::Timestamp {
                    seconds: t.floor() as i64,
                    nanos: ((t - t.floor()) * 1e9) as i32,
                }),
                item,
                ..Default::default()
            }));
        }
    }

    /// The environment record that `wandb-metadata.json` (the record as protobuf
    /// JSON, as wandb-core writes it) holds; unknown fields are left out, and
    /// text that is not such JSON gives none.
    pub fn environment(&mut self, metadata: &[u8]) {
        static POOL: std::sync::OnceLock<Option<prost_reflect::DescriptorPool>> =
            std::sync::OnceLock::new();
        let pool = POOL
            .get_or_init(|| prost_reflect::DescriptorPool::decode(pb::FILE_DESCRIPTOR_SET).ok());
        let Some(desc) = pool
            .as_ref()
            .and_then(|p| p.get_message_by_name("wandb_internal.EnvironmentRecord"))
        else {
            return;
        };
        let Ok(json) = serde_json::from_slice::<Value>(metadata) else {
            return;
        };
        let opts = prost_reflect::DeserializeOptions::new().deny_unknown_fields(false);
        let Ok(msg) = prost_reflect::DynamicMessage::deserialize_with_options(desc, json, &opts)
        else {
            return;
        };
        if let Ok(env) = pb::EnvironmentRecord::decode(msg.encode_to_vec().as_slice()) {
            self.emit(T::Environment(env));
        }
    }

    /// The live rows of the history query, as JSON objects.
    pub fn json_rows(&mut self, rows: &[Map<String, Value>]) {
        self.rows(rows.iter().map(|r| {
            r.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (vec![k.clone()], json_number_text(v)))
                .collect()
        }));
    }

    /// The exit record of a run the server says is over (its exit code is not
    /// part of the run query: 0 when it finished, 1 when it failed; a crashed
    /// run has none, as its file would not).
    pub fn exit(&mut self, m: &RunMeta) {
        let code = match m.state.as_str() {
            "finished" => 0,
            "failed" | "killed" => 1,
            _ => return,
        };
        let runtime = m
            .summary
            .get("_runtime")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        self.emit(T::Exit(pb::RunExitRecord {
            exit_code: code,
            runtime: runtime.ceil() as i32,
            ..Default::default()
        }));
    }

    /// The events of the records made since the last take.
    pub fn take(&mut self) -> Events {
        self.decoder.take()
    }
}

/// A value of a live row as a history item's JSON; the server sends `_step` as a
/// float at times (wandb-core's `convertHistoryRowToKeyValueList` says so), which
/// is the same number.
fn json_number_text(v: &Value) -> String {
    v.to_string()
}

/// Seconds and nanoseconds since the epoch of an RFC 3339 time
/// (`2024-05-01T12:00:00.5Z`, the fraction and offset optional; no offset is UTC,
/// as the API writes it).
pub fn rfc3339(s: &str) -> Option<(i64, i32)> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut nanos = 0i32;
    if let Some(r) = rest.strip_prefix('.') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
        let digits = &r[..r.len() - rest.len()];
        for (i, d) in digits.bytes().take(9).enumerate() {
            nanos += i32::from(d - b'0') * 10i32.pow(8 - i as u32);
        }
    }
    let offset = match rest.as_bytes() {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] if rest.len() == 6 => {
            let m = num(s.len() - 5..s.len() - 3)? * 3600 + num(s.len() - 2..s.len())? * 60;
            if *sign == b'+' {
                m
            } else {
                -m
            }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + sec - offset, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_of_the_api() {
        assert_eq!(rfc3339("1970-01-01T00:00:00"), Some((0, 0)));
        assert_eq!(rfc3339("2024-03-01T12:30:15Z"), Some((1_709_296_215, 0)));
        assert_eq!(
            rfc3339("2024-03-01T12:30:15.25+01:00"),
            Some((1_709_292_615, 250_000_000))
        );
        assert_eq!(
            rfc3339("1970-01-01T00:00:00.123456789123Z"),
            Some((0, 123_456_789))
        );
        for bad in [
            "",
            "2024",
            "2024-13-01T00:00:00",
            "2024-01-01T00:00:00junk",
            "ééééééééééééééééééééé",
        ] {
            assert_eq!(rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn rows_become_history_events_with_their_steps() {
        let mut w = Writer::new();
        let mut row = Map::new();
        row.insert("_step".into(), Value::from(3.0));
        row.insert("loss".into(), Value::from(0.5));
        row.insert("gone".into(), Value::Null);
        w.json_rows(&[row]);
        let ev = w.take();
        assert_eq!(ev.tally.total, 1);
        let Some(leet_format::event::Event::Row(r)) = ev.list.first() else {
            panic!("no row: {ev:?}");
        };
        assert_eq!(r.step, Some(3.0));
        assert_eq!(ev.keys, vec!["loss".to_owned()]);
        assert_eq!(ev.values, vec![(0, 0.5)]);
    }
}

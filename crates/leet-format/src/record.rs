//! Record kinds: the field numbers of the `Record.record_type` oneof, named once.
//! Every other module spells a record kind through [`RecordType`].

use super::wire::{Field, Fields};

/// A record kind: the field number of its body in the `Record` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum RecordType {
    /// No oneof field set (or one this reader does not know).
    Unknown = 0,
    /// A row of logged values (`wandb.log`).
    History = 2,
    /// Changes to the run summary.
    Summary = 3,
    /// Console output, line by line (older writers).
    Output = 4,
    /// Changes to the run config.
    Config = 5,
    /// Files saved with the run.
    Files = 6,
    /// A system metrics sample.
    Stats = 7,
    /// An artifact logged.
    Artifact = 8,
    /// A TensorBoard log synced.
    Tbrecord = 9,
    /// An alert raised.
    Alert = 10,
    /// The SDK's telemetry.
    Telemetry = 11,
    /// A `define_metric` declaration.
    Metric = 12,
    /// Console output as written.
    OutputRaw = 13,
    /// The run's facts (id, project, name, start time, ...).
    Run = 17,
    /// The run ended, with its exit code.
    Exit = 18,
    /// The last record of a finished run.
    Final = 20,
    /// The first record: the writer's version.
    Header = 21,
    /// Marks the end of the records.
    Footer = 22,
    /// The run is about to be preempted.
    Preempting = 23,
    /// `noop_link_artifact`: a marker with no body.
    NoopLinkArtifact = 24,
    /// An artifact used as input.
    UseArtifact = 25,
    /// The environment the run ran in.
    Environment = 26,
    /// A line of log output (`output_logger`).
    OutputLogger = 27,
    /// A request to the writing process.
    Request = 100,
}

impl RecordType {
    /// Every kind, in field-number order.
    pub const ALL: [RecordType; 24] = [
        RecordType::Unknown,
        RecordType::History,
        RecordType::Summary,
        RecordType::Output,
        RecordType::Config,
        RecordType::Files,
        RecordType::Stats,
        RecordType::Artifact,
        RecordType::Tbrecord,
        RecordType::Alert,
        RecordType::Telemetry,
        RecordType::Metric,
        RecordType::OutputRaw,
        RecordType::Run,
        RecordType::Exit,
        RecordType::Final,
        RecordType::Header,
        RecordType::Footer,
        RecordType::Preempting,
        RecordType::NoopLinkArtifact,
        RecordType::UseArtifact,
        RecordType::Environment,
        RecordType::OutputLogger,
        RecordType::Request,
    ];

    /// The kind of a oneof field number (Unknown for numbers outside the oneof).
    #[must_use]
    pub fn from_field(n: u32) -> RecordType {
        Self::ALL
            .iter()
            .copied()
            .find(|k| *k as u32 == n)
            .unwrap_or(RecordType::Unknown)
    }

    /// Its field number.
    #[must_use]
    pub fn field(self) -> u32 {
        self as u32
    }

    /// Position in [`RecordType::ALL`] (a dense index for counting).
    #[must_use]
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }

    /// The name `wandb leet inspect` prints for it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            RecordType::Unknown => "unknown",
            RecordType::History => "history",
            RecordType::Summary => "summary",
            RecordType::Output => "output",
            RecordType::Config => "config",
            RecordType::Files => "files",
            RecordType::Stats => "stats",
            RecordType::Artifact => "artifact",
            RecordType::Tbrecord => "tbrecord",
            RecordType::Alert => "alert",
            RecordType::Telemetry => "telemetry",
            RecordType::Metric => "metric",
            RecordType::OutputRaw => "output_raw",
            RecordType::Run => "run",
            RecordType::Exit => "exit",
            RecordType::Final => "final",
            RecordType::Header => "header",
            RecordType::Footer => "footer",
            RecordType::Preempting => "preempting",
            RecordType::NoopLinkArtifact => "noop_link_artifact",
            RecordType::UseArtifact => "use_artifact",
            RecordType::Environment => "environment",
            RecordType::OutputLogger => "output_logger",
            RecordType::Request => "request",
        }
    }
}

/// Record-type name of a oneof field number (as `wandb leet inspect` prints it).
#[must_use]
pub fn record_type_name(field: u32) -> &'static str {
    RecordType::from_field(field).name()
}

/// Whether field `n` of `Record` is taken for its body: the oneof's range (2 to 27,
/// less `control` = 16 and `uuid` = 19; 14 and 15 are unassigned and read as an
/// unknown kind) and `request` = 100.
fn is_body_field(n: u32) -> bool {
    (2..=27).contains(&n) && n != 16 && n != 19 || n == 100
}

/// The record number, type and body of a record payload, without decoding the body.
/// None when the payload's framing fields do not parse.
#[must_use]
#[inline]
pub fn record_kind(payload: &[u8]) -> Option<(i64, u32, &[u8])> {
    record_kind_fast(payload).or_else(|| record_kind_general(payload))
}

/// [`record_kind`] of the layout wandb-core writes: `num` (a varint of at most
/// four bytes), then one body field with a one-byte tag, reaching to the end.
/// None for anything else (then the general reading decides).
#[inline(always)]
fn record_kind_fast(payload: &[u8]) -> Option<(i64, u32, &[u8])> {
    let [0x08, rest @ ..] = payload else {
        return None;
    };
    let (num, rest) = short_varint(rest)?;
    let [tag, rest @ ..] = rest else {
        return None;
    };
    let field = u32::from(*tag >> 3);
    if *tag >= 0x80 || *tag & 7 != 2 || !is_body_field(field) {
        return None;
    }
    let (len, body) = short_varint(rest)?;
    (body.len() as u64 == len).then_some((num as i64, field, body))
}

/// A varint of one to four bytes and what follows it.
#[inline(always)]
fn short_varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().take(4).enumerate() {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Some((v, &b[i + 1..]));
        }
    }
    None
}

#[inline(never)]
fn record_kind_general(payload: &[u8]) -> Option<(i64, u32, &[u8])> {
    let mut num = 0i64;
    let mut kind = None;
    let mut f = Fields::new(payload);
    for field in f.by_ref() {
        match field {
            Field::Varint(1, v) => num = v as i64,
            Field::Bytes(n, b) if is_body_field(n) => kind = Some((n, b)),
            _ => {}
        }
    }
    if f.error {
        return None;
    }
    let (n, b) = kind.unwrap_or((0, &[]));
    Some((num, n, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_and_the_gaps_are_unknown() {
        for k in RecordType::ALL {
            assert_eq!(RecordType::from_field(k.field()), k);
            assert_eq!(RecordType::ALL[k.index()], k);
        }
        for n in [1, 14, 15, 16, 19, 28, 99, 101] {
            assert_eq!(RecordType::from_field(n), RecordType::Unknown, "{n}");
        }
        assert_eq!(record_type_name(13), "output_raw");
        assert_eq!(record_type_name(100), "request");
    }

    /// Random payloads, most shaped like wandb-core's and some cut or changed: the
    /// fast reading, where it answers, answers as the general one does.
    #[test]
    fn the_fast_kind_reading_equals_the_general_one() {
        use crate::test_rng::{push_varint, Rng};
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut fast = 0;
        for round in 0..20_000 {
            let mut p = vec![0x08];
            let num = rng.below(1 << (7 * (1 + round % 5)));
            push_varint(&mut p, num);
            let field = [2, 3, 4, 13, 16, 19, 15, 27, 28][rng.below(9) as usize];
            p.push(((field << 3) | 2) as u8);
            let len = rng.below(300) as usize;
            push_varint(&mut p, len as u64);
            p.extend((0..len).map(|_| rng.below(256) as u8));
            match rng.below(6) {
                0 => {
                    let cut = rng.below(p.len() as u64 + 1) as usize;
                    p.truncate(cut);
                }
                1 => {
                    let at = rng.below(p.len() as u64) as usize;
                    p[at] = rng.below(256) as u8;
                }
                2 => p.extend_from_slice(&[0x08, 0x05]),
                _ => {}
            }
            let general = record_kind_general(&p);
            if let Some(k) = record_kind_fast(&p) {
                fast += 1;
                assert_eq!(Some(k), general, "{p:02x?}");
            }
            assert_eq!(record_kind(&p), general, "{p:02x?}");
        }
        assert!(fast > 5_000, "{fast}");
    }
}

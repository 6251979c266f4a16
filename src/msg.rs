//! `Msg`: everything the event loop can receive. Variants state facts.

pub mod cluster;

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent};

use leet_format::event::Events;
use leet_format::leveldb::Skip;
use leet_format::record::RecordType;

/// One reading of host metrics (from the live sampler) is the sampler's type too.
pub use leet_sampler::Sample;
/// The process table is the sampler's type: it scans the processes.
pub use leet_sampler::{ProcRow, ProcTable};

/// What is wrong with a run read from a W&B server ([`Msg::FollowTrouble`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowTrouble {
    /// What to say (untrusted: server text in it).
    pub text: String,
    /// Its polls fail: the run is quiet because the server does not answer, which
    /// says nothing of the run. Otherwise the polls answer and only parts of the
    /// run (its console, system metrics) could not be read.
    pub polls_fail: bool,
}

/// What the tail thread read from the run file, decoded into events on its own
/// thread, for the loop to fold into the run (the store's one writer).
#[derive(Debug, Clone, Default)]
pub struct RunBatch {
    /// The decoded records and damaged spans, in file order (each batch of events
    /// names its own keys).
    pub events: Vec<Events>,
    /// Raw (offset, payload) records, decoded when folded: for batches made by hand
    /// (tests); a reader sends `events`.
    pub records: Vec<(u64, Vec<u8>)>,
    /// Damaged spans skipped, for batches made by hand (a reader's are events).
    pub skips: Vec<Skip>,
    /// The damaged span at the end of what was read, which more bytes may extend:
    /// it replaces the one of the batch before (none: no span is open any more).
    pub open: Option<Skip>,
    /// Bytes of the file read so far.
    pub read_to: u64,
    /// Length of the file when read.
    pub file_len: u64,
    /// Bytes at the end that belong to a record still being written.
    pub pending: u64,
    /// Wall time of the read (Unix seconds), when the batch carries new bytes.
    pub grew_at: Option<f64>,
    /// The file was truncated or replaced: everything read before is void and the
    /// records start again from the file's beginning.
    pub restarted: bool,
}

impl RunBatch {
    /// `b`'s events appended to this batch's, and its position in the file (how
    /// far it read, the file's length, what is pending or open at its end) taken:
    /// batches read one after another, as one.
    pub fn absorb(&mut self, b: RunBatch) {
        self.events.extend(b.events);
        self.read_to = b.read_to;
        self.file_len = b.file_len;
        self.pending = b.pending;
        self.open = b.open;
    }
}

/// A run directory next to the one shown (the run picker's rows): what
/// `Cmd::ListRuns` found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEntry {
    /// The run directory.
    pub dir: PathBuf,
    /// Its `.wandb` file, if it has one yet.
    pub file: Option<PathBuf>,
    /// Display name and run id from the file's run record (empty if not read).
    pub name: String,
    pub id: String,
    /// Size and modification time (Unix s) of the `.wandb` file.
    pub size: u64,
    pub modified: Option<f64>,
    /// The run's directories listed as this one entry (a resumed run's
    /// segments, sharing its id): 0 or 1 for a run of one directory.
    pub segments: usize,
    /// The directories of its id are the nodes of one distributed run, written at
    /// the same time (`source::nodes::are_nodes`), not a resumed run's segments.
    pub nodes: bool,
}

/// A decoded image: 8-bit RGBA rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
    /// What is wrong with the file where the decoder drew it anyway (a JPEG cut
    /// short: the rows it lacks filled grey), for the title to say.
    pub note: Option<&'static str>,
}

impl Image {
    /// The pixel at (x, y) as RGB over black.
    #[must_use]
    pub fn rgb(&self, x: u32, y: u32) -> (u8, u8, u8) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        match self.rgba.get(i..i + 4) {
            Some(&[r, g, b, a]) => {
                let m = |c: u8| (u16::from(c) * u16::from(a) / 255) as u8;
                (m(r), m(g), m(b))
            }
            _ => (0, 0, 0),
        }
    }
}

/// The record inspector's row kind of a damaged span (the others are
/// [`RecordType::index`]).
pub const KIND_SKIP: u8 = 255;
/// The row kind of a record whose framing is whole but whose fields do not parse.
pub const KIND_BAD: u8 = 254;

/// The record inspector's name of a row kind: the record type as `leet inspect`
/// prints it, `damaged` for a skipped span, `undecodable` for a bad record.
#[must_use]
pub fn kind_name(kind: u8) -> &'static str {
    match kind {
        KIND_SKIP => "damaged",
        KIND_BAD => "undecodable",
        k => RecordType::ALL
            .get(usize::from(k))
            .copied()
            .unwrap_or(RecordType::Unknown)
            .name(),
    }
}

/// What the record inspector asks to see: a window of its list, filtered by kind
/// and by text, and the record selected. Positions count rows of the filtered
/// list; `gen` numbers the requests, and the answer names the one it answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordsView {
    pub gen: u64,
    /// Only rows of this kind (None: all).
    pub kind: Option<u8>,
    /// Only records whose `inspect --json` line matches this regex (case
    /// insensitive; "" = all).
    pub text: String,
    /// First row shown, and how many fit.
    pub from: u64,
    pub len: usize,
    pub selected: u64,
    /// Keep the last row selected as the file grows (`end`).
    pub follow: bool,
}

/// One row of the record inspector's list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordRow {
    /// Position in the filtered list.
    pub pos: u64,
    /// The record's own number (its `num`, as `leet inspect --json` prints it);
    /// None for a damaged span (and a record that cannot be read again).
    pub num: Option<u64>,
    /// File offset of its first chunk (of the span, for damage).
    pub offset: u64,
    pub kind: u8,
    /// A short hint at the body (sanitized, one line).
    pub hint: String,
}

/// The record inspector's answer: the rows asked for, the selected record's body,
/// and how far the index and the filter have come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordsPage {
    /// The request answered.
    pub gen: u64,
    /// Rows of the filtered list so far.
    pub total: u64,
    /// Rows indexed so far (records and damaged spans).
    pub indexed: u64,
    /// Bytes of the file indexed, and its length.
    pub scanned: u64,
    pub file_len: u64,
    /// The index is still reading the file's existing bytes.
    pub indexing: bool,
    /// Rows the filter has checked (of `indexed`); equal when it is done.
    pub checked: u64,
    /// Rows of each kind in the index (kinds present only, by kind).
    pub kinds: Vec<(u8, u64)>,
    /// The window and selection in force (following the end, they moved).
    pub from: u64,
    pub selected: u64,
    pub rows: Vec<RecordRow>,
    /// The selected row's body as `leet inspect --json` prints it, pretty and
    /// sanitized, one line each: sent when the selection changes (None: the last
    /// one sent still holds).
    pub body: Option<Vec<String>>,
    /// The damaged span at the end of the file so far (offset, length): not a row
    /// yet, as bytes still to come may extend it.
    pub open_damage: Option<(u64, u64)>,
    /// What went wrong (the file cannot be read, the pattern does not compile).
    pub error: Option<String>,
}

/// Ticks (about a second each) a [`Msg::SamplerError`] stays in the status bar
/// without being said again: past the 30 s an endpoint that failed is left
/// alone before its next try.
pub const SAMPLER_ERROR_TICKS: u32 = 40;

/// A message for the loop.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// Text pasted in bracketed paste mode, as the terminal sent it (untrusted:
    /// control characters and newlines included).
    Paste(String),
    Resize(u16, u16),
    /// The run file was found: its path, length, and modification time (Unix s).
    Opened {
        path: PathBuf,
        len: u64,
        modified: Option<f64>,
    },
    /// The run directory has no `.wandb` file yet.
    Waiting(PathBuf),
    Run(RunBatch),
    /// Wall clock, Unix seconds (about once a second).
    Tick(f64),
    SourceError(String),
    /// The live monitor's sampler: a family's error (`family: why`). Shown until
    /// [`SAMPLER_ERROR_TICKS`] ticks pass without it being said again: a family
    /// that still fails says so again within them (an endpoint is retried every
    /// 30 s, a late reading is late every tick), one that recovered goes quiet.
    SamplerError(String),
    /// A run on a W&B server read into its file: the error of its last poll
    /// (sanitized, naming the server), or the parts the server did not give at
    /// the last look; None once it gives everything again.
    FollowTrouble(Option<FollowTrouble>),
    /// The run file is not a `.wandb` log this reader can read (its header is wrong):
    /// the file's name and the cause. Nothing is read from it unless it is replaced.
    Unreadable(String),
    Sample(Sample),
    /// The live monitor's process scan.
    Procs(ProcTable),
    /// The process tree that now feeds `cpu`, `proc.*` and `gpu.process.*` in the
    /// live monitor (after `--pid` at start, or `Cmd::Monitor`): its root's pid and
    /// command line (untrusted), or `None` when no process is monitored.
    Monitoring(Option<(u32, String)>),
    /// SIGTERM / SIGHUP / SIGINT: leave cleanly.
    Signal(i32),
    /// ctrl+z or SIGTSTP: the loop leaves the terminal and stops the process.
    Suspend,
    /// SIGCONT: the terminal may have been changed meanwhile; the loop enters its
    /// modes again and repaints every cell.
    Continued,
    /// A message from the reader of source number N. When the user opens another
    /// run, the loop drops what the previous reader had already queued.
    Tagged(u64, Box<Msg>),
    /// `Cmd::CountRuns`: runs in a wandb directory (as the picker lists them).
    RunsCounted {
        wandb_dir: PathBuf,
        count: usize,
    },
    /// `Cmd::FindSegments`: the run files of the resumed run `file` belongs to,
    /// oldest first (`file` among them); empty when it is no segment.
    SegmentsFound {
        file: PathBuf,
        segments: Vec<PathBuf>,
    },
    /// `Cmd::ListRuns`: the runs next to `run_dir`, newest first.
    RunsListed {
        run_dir: PathBuf,
        runs: Vec<RunEntry>,
    },
    /// `Cmd::LoadImage`: the image at `path`, or why it cannot be shown.
    ImageLoaded {
        path: PathBuf,
        image: Result<Image, String>,
    },
    /// `Cmd::CheckDirs`: the directories asked about that are gone.
    DirsChecked {
        gone: Vec<PathBuf>,
    },
    /// `Cmd::ScanIndex`: every run directory of `wandb_dir`, newest first (a run
    /// directory deleted since the last scan is not in it).
    Indexed {
        wandb_dir: PathBuf,
        entries: Vec<RunIndexEntry>,
    },
    /// `Cmd::ScanIndex`, while a scan still reads run files: every run directory,
    /// newest first, those not read yet as cheap placeholders (`reading`); the
    /// scan's `Msg::Indexed` (or `IndexUnchanged`) follows.
    IndexProgress {
        wandb_dir: PathBuf,
        entries: Vec<RunIndexEntry>,
    },
    /// `Cmd::ScanIndex`: the index is what the last `Msg::Indexed` said.
    IndexUnchanged {
        wandb_dir: PathBuf,
    },
    /// `Cmd::SaveSettings` numbered `generation` was carried out (or skipped, a
    /// newer one written): None, or why it failed (sanitized by the app).
    SettingsWritten {
        generation: u64,
        error: Option<String>,
    },
    /// `Cmd::SaveWorkspace` numbered `generation` was carried out, or failed.
    WorkspaceWritten {
        generation: u64,
        error: Option<String>,
    },
    /// `Cmd::ViewRecords` (and the record index's progress): what the record
    /// inspector shows.
    Records(Box<RecordsPage>),
    /// `Cmd::Smooth`: one metric smoothed from every logged point.
    Smoothed(Box<Smoothed>),
    /// The cluster screen's refresh thread: what one refresh of the Prometheus
    /// server read, or why it read nothing.
    Cluster(Box<cluster::ClusterUpdate>),
}

impl Msg {
    /// A key press without modifiers.
    #[must_use]
    pub fn key(code: KeyCode) -> Self {
        Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// A typed character (SHIFT for upper case, as terminals report it).
    #[must_use]
    pub fn char(c: char) -> Self {
        let mods = if c.is_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        Msg::Key(KeyEvent::new(KeyCode::Char(c), mods))
    }

    /// Ctrl + a character.
    #[must_use]
    pub fn ctrl(c: char) -> Self {
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    /// Each character of `s` typed in turn.
    pub fn typed(s: &str) -> impl Iterator<Item = Msg> + '_ {
        s.chars().map(Msg::char)
    }
}

// ---------------------------------------------------------------------------
// The workspace's run index (`source::index`): one entry per run directory.

/// A run's state, decided by [`RunStatus::decide`] for the viewer, the workspace's
/// index and `leet inspect` alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// No exit record, and the run showed a sign of life within the stale limit.
    Running,
    /// Exit record with code 0.
    Finished,
    /// Exit record with a non-zero code.
    Failed,
    /// No exit record and quiet for longer than the stale limit ("crashed?").
    Crashed,
    /// Neither a run record nor an exit record (a file just created, a run
    /// directory without a `.wandb` file yet, a file that cannot be read).
    #[default]
    Unknown,
}

/// The index's name for [`RunStatus`] (kept: integration tests and callers use it).
pub type IndexState = RunStatus;

impl RunStatus {
    /// Every state (what a `state` query may name).
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Finished,
        RunStatus::Crashed,
        RunStatus::Failed,
        RunStatus::Unknown,
    ];

    /// The one rule: an exit record → finished (code 0) or failed (any other code);
    /// no exit record and nothing `started` (no run record, no file) → unknown;
    /// else running while `quiet` (seconds since the last sign of life; None: no
    /// clue yet) is under `stale_after`, crashed past it.
    #[must_use]
    pub fn decide(
        exit_code: Option<i32>,
        started: bool,
        quiet: Option<f64>,
        stale_after: f64,
    ) -> RunStatus {
        match exit_code {
            Some(0) => RunStatus::Finished,
            Some(_) => RunStatus::Failed,
            None if !started => RunStatus::Unknown,
            // Not under the limit (a NaN time too) is past it.
            None => match quiet {
                Some(q) if q < stale_after => RunStatus::Running,
                Some(_) => RunStatus::Crashed,
                None => RunStatus::Running,
            },
        }
    }

    /// Stable lowercase name (the runs filter's `state:` values).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Crashed => "crashed",
            RunStatus::Unknown => "unknown",
        }
    }
}

/// What the index knows of one run directory. Text fields are untrusted (from the
/// run file, or from a cache file): sanitize before display.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunIndexEntry {
    /// The run directory.
    pub dir: PathBuf,
    /// Its `.wandb` file (the newest, if several); None while the run has none.
    pub file: Option<PathBuf>,
    /// Size and modification time (ns since the Unix epoch) of `file` when it was
    /// read: the cache key, with the path.
    pub size: u64,
    pub mtime_ns: u64,
    /// Status-change time (ns) of `file` when it was read: also the cache key (a
    /// `chmod` moves it alone). 0 in a cache written before it was kept: such an
    /// entry is read once again.
    #[serde(default)]
    pub ctime_ns: u64,
    /// Modification time (ns) of the run directory when it was listed: while it
    /// is unchanged no `.wandb` file came or went there, so a cached entry is
    /// checked with one `stat` of its file.
    pub dir_mtime_ns: u64,
    pub run_id: String,
    pub display_name: String,
    pub project: String,
    pub entity: String,
    pub group: String,
    pub job_type: String,
    pub tags: Vec<String>,
    pub notes: String,
    /// The host and git commit the run record names (each cut to 256 bytes).
    pub host: String,
    pub git_commit: String,
    /// Start time, Unix seconds (from the run record).
    pub start_time: Option<f64>,
    /// The run record says the run resumed an earlier one.
    pub resumed: bool,
    /// Whether a run record was read.
    pub has_run_record: bool,
    /// The exit record's code (None: no exit record).
    pub exit_code: Option<i32>,
    /// Decided at scan time from `exit_code`, `has_run_record`, `mtime_ns` and
    /// `last_time` (so a cached entry of a quiet run turns crashed as time passes).
    pub state: RunStatus,
    /// Seconds: the exit record's runtime, else summary `_runtime`, else the last
    /// record's time less the start time.
    pub runtime: Option<f64>,
    /// Largest step of a complete history row.
    pub last_step: Option<i64>,
    pub history_rows: u64,
    /// Largest `_timestamp` / stats time seen, Unix seconds.
    pub last_time: Option<f64>,
    /// The full config, nested as W&B shows it: the run record's, then every
    /// `config` record folded in (keys added later included).
    pub config: serde_json::Map<String, serde_json::Value>,
    /// The last summary, nested: every `summary` record folded, removals honoured.
    pub summary: serde_json::Map<String, serde_json::Value>,
    /// The environment (W&B's metadata: os, python, args, GPUs), every record folded,
    /// bounded: at most 64 keys, each value cut to about 2 KiB (`…` marks a cut).
    pub environment: serde_json::Map<String, serde_json::Value>,
    /// Damaged spans skipped plus records that did not decode, and their bytes.
    pub damage: u64,
    pub damaged_bytes: u64,
    /// Bytes at the end of the file that belong to a record not (yet) complete: a
    /// run still writing, or one cut off (the `crashed` fixture). Not damage.
    pub incomplete_tail_bytes: u64,
    /// Changes to config or summary keys left out because the tree already held
    /// its most keys (10,000 each: memory stays bounded over many runs), and
    /// environment keys past its 64.
    pub keys_dropped: u64,
    /// Why the file could not be read (bad header, I/O error); what was read
    /// before the error is kept.
    pub error: Option<String>,
    /// The node labels its system keys carry (`cpu/l:node-1`), sorted, each cut to
    /// 64 bytes, at most 256 (the most nodes leet reads of one run): the overview's
    /// `Nodes` row, without reading the run.
    #[serde(default)]
    pub node_labels: Vec<String>,
    /// When the file was last read (Unix s): a grown file is read again only after
    /// a while (see `source::index`).
    #[serde(default)]
    pub read_at: f64,
    /// The file was seen to grow (a size the index had seen, then a larger one):
    /// its mtime is then the run's sign of life, whatever its records' own times
    /// say (a writer whose clock is behind, replayed records). Until then a fresh
    /// mtime may be a copy's, and the older of the two counts.
    #[serde(default)]
    pub grown: bool,
    /// A placeholder while the scan reads the file (only in `Msg::IndexProgress`):
    /// the directory, the id its name gives, the file's size and mtime, no more.
    #[serde(skip)]
    pub reading: bool,
}

/// What the workspace remembers of one wandb directory between sessions (leet's
/// own state file under `$XDG_STATE_HOME/leet`, never the wandb directory). Runs
/// are named by their workspace key: the run id, else the run directory's name.
/// Read from a file: untrusted (an unknown key names no run and is dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WorkspaceSaved {
    /// Selected runs, in the order they were selected.
    pub selected: Vec<String>,
    /// The run drawn on top.
    pub pinned: Option<String>,
    /// The runs filter (`f`) in force, and whether it is a glob (else regex).
    pub filter: String,
    pub filter_glob: bool,
    /// The config key selected runs are grouped by (`G`).
    pub group_by: Option<String>,
    /// The summary key shown as the runs list's value column.
    pub summary_column: Option<String>,
}

// ---------------------------------------------------------------------------
// Smoothing: the job a `Cmd::Smooth` carries and the answer it brings back.

/// One metric to smooth from every point it logged (`Cmd::Smooth`).
#[derive(Debug, Clone)]
pub struct SmoothJob {
    /// The run's `.wandb` file or its run directory.
    pub path: PathBuf,
    /// The history key.
    pub key: String,
    /// The smoothing as `leet export --smoothing` spells it (`ema:0.6`).
    pub smoothing: String,
    /// Most points the answer keeps (min/max compacted past it, as a series is).
    pub cap: usize,
    /// The series' points when it holds every point logged (then no file is
    /// read); None: the file's full history is read.
    pub points: Option<Vec<(f64, f64)>>,
}

/// Equal when every field is: the points compared bit for bit (so a NaN gap
/// equals itself), which keeps `Cmd` comparable.
impl PartialEq for SmoothJob {
    fn eq(&self, o: &Self) -> bool {
        let bits = |p: &[(f64, f64)]| {
            p.iter()
                .map(|(x, y)| (x.to_bits(), y.to_bits()))
                .collect::<Vec<_>>()
        };
        self.path == o.path
            && self.key == o.key
            && self.smoothing == o.smoothing
            && self.cap == o.cap
            && self.points.as_deref().map(bits) == o.points.as_deref().map(bits)
    }
}

impl Eq for SmoothJob {}

/// The answer to a [`SmoothJob`]: the smoothed series' kept points, or why there
/// are none.
#[derive(Debug, Clone)]
pub struct Smoothed {
    /// The job answered (its points dropped).
    pub job: SmoothJob,
    /// `(x, smoothed y)` in logged order, at most about `job.cap` of them (min/max
    /// pairs once compacted); NaN where the raw value was not finite.
    pub points: Result<Vec<(f64, f64)>, String>,
    /// Raw points smoothed.
    pub count: u64,
    /// Seconds the work took (reading the file included).
    pub secs: f64,
}

#[cfg(test)]
mod tests {
    use super::RunStatus;

    #[test]
    fn run_status_is_decided_by_exit_then_start_then_quiet() {
        let decide = RunStatus::decide;
        assert_eq!(
            decide(Some(0), false, Some(1e9), 120.0),
            RunStatus::Finished
        );
        assert_eq!(decide(Some(-9), true, None, 120.0), RunStatus::Failed);
        assert_eq!(decide(None, false, Some(0.0), 120.0), RunStatus::Unknown);
        assert_eq!(decide(None, true, None, 120.0), RunStatus::Running);
        assert_eq!(decide(None, true, Some(119.9), 120.0), RunStatus::Running);
        // The stale limit itself is past it.
        assert_eq!(decide(None, true, Some(120.0), 120.0), RunStatus::Crashed);
        // A clock behind the file's mtime is no sign of a crash.
        assert_eq!(decide(None, true, Some(-5.0), 120.0), RunStatus::Running);
    }
}

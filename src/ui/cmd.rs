//! `Cmd`: everything the app asks of the outside world. [`App::update`] never
//! touches a file: it returns commands in its [`Effect`], the runtime executes them
//! off the loop thread, and what they find comes back as a `Msg`.
//!
//! [`App::update`]: super::App::update
//! [`Effect`]: super::Effect

use std::path::PathBuf;

use crate::msg::{RecordsView, SmoothJob, WorkspaceSaved};

/// A request to the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd {
    /// Start following `path` (a `.wandb` file or a run directory); its messages
    /// come as `Msg::Tagged(tag, ..)`.
    StartReader { path: PathBuf, tag: u64 },
    /// Stop the reader with this tag.
    StopReader { tag: u64 },
    /// Count the runs in a wandb directory as the picker lists them (a run of
    /// several directories once): `Msg::RunsCounted`.
    CountRuns { wandb_dir: PathBuf },
    /// The segments of the resumed run `file` belongs to (its run directories
    /// of the same run id, oldest first): `Msg::SegmentsFound`.
    FindSegments { file: PathBuf },
    /// List the runs next to a run directory, peeking at each one's run record
    /// (name, id): `Msg::RunsListed`.
    ListRuns { run_dir: PathBuf },
    /// Read and decode an image file (within size limits): `Msg::ImageLoaded`.
    LoadImage { path: PathBuf },
    /// Which of these directories are gone: `Msg::DirsChecked`.
    CheckDirs { dirs: Vec<PathBuf> },
    /// Live monitor: make the tree rooted at `pid` the monitored process (what
    /// `--pid` does at start), or monitor none; answered by `Msg::Monitoring`.
    Monitor { pid: Option<u32> },
    /// Index every run directory of a wandb directory (state, names, config, last
    /// summary; cached by path, size and mtime): `Msg::Indexed`. A run without an
    /// exit record quiet for longer than `stale_after` is crashed.
    ScanIndex {
        wandb_dir: PathBuf,
        stale_after: std::time::Duration,
    },
    /// Write what changed in the workspace of `wandb_dir` (from `base`, what this
    /// instance last knew the state file to hold, to `state`) into leet's state
    /// file as it is then: `Msg::WorkspaceWritten`. Numbered as `SaveSettings`.
    SaveWorkspace {
        wandb_dir: PathBuf,
        base: WorkspaceSaved,
        state: WorkspaceSaved,
        writer: u64,
        generation: u64,
    },
    /// Write what changed in the settings (from `base`, the text this instance
    /// last knew the file to hold, to `text`; both from `Config::to_toml`) into
    /// the settings file `path` as it is then: `Msg::SettingsWritten`. Saves are
    /// numbered by `writer` (one per `App` and file: [`writer_id`]): one older
    /// than the last that writer wrote is dropped. `path` None: there is no
    /// settings file to write (no `$XDG_CONFIG_HOME` or `$HOME`), answered as a
    /// save that failed, saying so.
    SaveSettings {
        path: Option<PathBuf>,
        base: String,
        text: String,
        writer: u64,
        generation: u64,
    },
    /// The record inspector: index the records of this `.wandb` file on a worker
    /// of their own (the one open before is dropped); it answers `ViewRecords`.
    OpenRecords { path: PathBuf },
    /// The record inspector's view: answered by `Msg::Records` (again as the
    /// index, the filter or the followed file move on).
    ViewRecords(RecordsView),
    /// The record inspector is closed: its worker ends.
    CloseRecords,
    /// Smooth one metric from every point it logged (its points, or the run
    /// file's full history), on the smoothing worker: `Msg::Smoothed`.
    Smooth(SmoothJob),
}

/// A number of its own for each writer of a file (an `App`'s settings, its
/// workspace), so that the saves of two in one process are numbered apart.
#[must_use]
pub fn writer_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Cmd {
    /// Starts or stops a reader (the rest ask for something and get an answer).
    #[must_use]
    pub fn is_reader(&self) -> bool {
        matches!(self, Cmd::StartReader { .. } | Cmd::StopReader { .. })
    }
}

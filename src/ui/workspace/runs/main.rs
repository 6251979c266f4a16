//! The main run: which reader feeds it (readers are numbered by tag), where it
//! is read from, and replacing it with another run's.

use std::path::{Path, PathBuf};

use super::Runs;
use crate::ui::workspace::cx::WsCx;
use crate::ui::{new_run, Cmd, Seen, Shown, SourceState};

/// What the runs know of the run shown: its reader's tag and directory.
impl Shown {
    /// A reader tag not handed out before.
    pub(crate) fn new_tag(&mut self) -> u64 {
        self.last_tag = self.last_tag.max(self.tag) + 1;
        self.last_tag
    }

    /// Start the main reader on a user path.
    pub(crate) fn start_reader(&self, path: PathBuf) -> Cmd {
        Cmd::StartReader {
            path,
            tag: self.tag,
        }
    }

    /// The main run's directory: its file's, or the one waited on.
    pub(crate) fn main_dir(&self) -> Option<&Path> {
        self.source
            .file
            .as_deref()
            .and_then(Path::parent)
            .or(self.source.waiting_dir.as_deref())
    }

    /// The run directory the main reader was started on (as the workspace spells
    /// it), else the main run's directory.
    #[must_use]
    pub(crate) fn main_run_dir(&self) -> Option<PathBuf> {
        self.main_reading
            .clone()
            .or_else(|| self.main_dir().map(Path::to_path_buf))
    }

    /// The main run's legend text: its name, else its id.
    #[must_use]
    pub fn run_label(&self) -> String {
        let i = &self.run.info;
        crate::text::visible_name(&i.display_name)
            .unwrap_or_else(|| crate::text::sanitize(&i.run_id))
    }

    /// An empty run in place of the one shown, for the reader numbered `tag`.
    fn replace_run(&mut self, tag: u64) {
        self.tag = tag;
        self.run = new_run(self.max_points);
        self.source = SourceState::default();
        self.seen = Seen::NEVER;
    }
}

impl Runs {
    /// `alt+r`: the main run read again from the first byte of the file it reads
    /// (or the directory it waits on), keeping panes and settings; false with no
    /// main run.
    pub(crate) fn restart_main(&mut self, cx: &mut WsCx) -> bool {
        let Some(path) = cx
            .shown
            .source
            .file
            .clone()
            .or_else(|| cx.shown.main_run_dir())
        else {
            return false;
        };
        // The run as the workspace spells it stays what it was.
        let reading = cx.shown.main_reading.clone();
        self.open_run(cx, path, true);
        cx.shown.main_reading = reading;
        true
    }

    /// No main run: its reader stopped, an empty run shown (a workspace with no
    /// run selected).
    pub(crate) fn close_main(&mut self, cx: &mut WsCx) {
        cx.asks.cmd(Cmd::StopReader { tag: cx.shown.tag });
        let tag = cx.shown.new_tag();
        cx.shown.main_reading = None;
        self.main_tag = None;
        cx.shown.replace_run(tag);
        cx.asks.refresh();
    }

    /// Make the run in `dir` the main one: an empty run with the same panels,
    /// filters, y scales and store limits, waiting for its new reader's messages. With
    /// `keep_view` (the workspace changing which drawn run is the main one) focus,
    /// zoom and scroll positions stay.
    pub(crate) fn open_run(&mut self, cx: &mut WsCx, dir: PathBuf, keep_view: bool) {
        cx.asks.cmd(Cmd::StopReader { tag: cx.shown.tag });
        self.start_main(cx, dir, keep_view);
    }

    /// [`Runs::open_run`] (the view afresh), the run shown until now (in `old`)
    /// drawn beside it as it was read, its reader going on for it.
    pub(crate) fn open_run_keeping(&mut self, cx: &mut WsCx, dir: PathBuf, old: PathBuf) {
        let s = &cx.shown.source;
        let read_all = s.file_len > 0 && s.read_to >= s.file_len;
        let run = std::mem::replace(&mut cx.shown.run, new_run(cx.shown.max_points));
        self.keep_compared(cx.shown.tag, old, run, read_all);
        self.start_main(cx, dir, false);
    }

    /// The main run read from `dir` by a new reader (the one before stopped by the
    /// caller, or kept for a compared run).
    fn start_main(&mut self, cx: &mut WsCx, dir: PathBuf, keep_view: bool) {
        // A run already compared becomes the main run: stop drawing it twice.
        if let Some(i) = self.compare.iter().position(|c| c.dir == dir) {
            let c = self.compare.remove(i);
            cx.asks.cmd(Cmd::StopReader { tag: c.tag });
        }
        let tag = cx.shown.new_tag();
        cx.asks.cmd(Cmd::StartReader {
            path: dir.clone(),
            tag,
        });
        cx.shown.main_reading = Some(dir);
        cx.shown.replace_run(tag);
        // The y scales stay: they are settings by metric key (a `loss` drawn on a
        // log scale is drawn so in every run, and saved so).
        cx.then.fresh_view |= !keep_view;
        cx.asks.refresh();
    }
}

//! The workspace: every run of a wandb directory in one list (`[`), newest first,
//! filtered with the runs query language (`f`); `space` draws a run in every chart,
//! `p` pins one on top, `G` groups the selected runs by a config key, `v` picks the
//! summary value shown per run. Run directories that share a run id (a resumed run)
//! are one entry with its segments. The index comes from `Cmd::ScanIndex`, asked
//! again about once a second, so a new run shows within two seconds; what the user
//! chose is saved per wandb directory (`Cmd::SaveWorkspace`).
//!
//! Drawing: the selected runs' segments are the runs read (the main run and the
//! compared ones, see `runs.rs`); unselected runs hold no series. The highlighted
//! run's overview, below the list, comes from the index (`overview.rs`).

mod app;
pub(crate) mod cx;
mod filter;
mod index;
mod keys;
mod overview;
pub mod runs;
pub(crate) mod view;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::query::{RunFields, TextField};
use crate::msg::{RunIndexEntry, RunStatus, WorkspaceSaved};
pub use filter::RunsFilter;
pub use overview::{Pinned, WsOverview};

/// Most runs drawn at once (each under its own point budget, see `runs.rs`).
pub const MAX_SELECTED: usize = 256;
/// Longest text typed into a workspace prompt (a config key, a summary key).
pub const MAX_PROMPT_CHARS: usize = 512;
/// Longest runs query, as the metric filter's pattern (a paste arrives as one key
/// per character).
pub use crate::ui::filter::MAX_PATTERN_CHARS;
/// Most runs filtered again on a key press; a longer list is filtered on the next
/// tick (and on enter), so a fast paste costs no pass over every run per key.
pub const LIVE_FILTER_RUNS: usize = 500;
/// Index answers (about one a second) a drawn run that vanished is remembered
/// for: one back within them (a file empty at one pass, a directory moved away
/// and back) is drawn again.
pub const VANISHED_SCANS: u32 = 300;

/// One run of the workspace: one run directory, or several sharing a run id.
#[derive(Debug, Clone, Default)]
pub struct WsRun {
    /// The run id, else the directory name: what selection, pins and colours key on.
    pub key: String,
    /// Its run directories, oldest first (more than one: a resumed run). Of a
    /// distributed run, its primary node's alone.
    pub segments: Vec<RunIndexEntry>,
    /// A distributed run's other nodes (same run id, written at the same time:
    /// [`crate::source::nodes::are_nodes`]); reading the primary reads them too.
    pub nodes: Vec<RunIndexEntry>,
    /// Config and summary over the segments, each folded in order.
    pub config: Value,
    pub summary: Value,
    /// The newest segment's directory name (the query's `key` field).
    dir_name: String,
    /// Stable colour index (the run's position among the directory's runs, oldest
    /// first, so runs started one after another get different colours): the
    /// colour it is drawn in unless another drawn run has it (see
    /// `runs::Runs::sync_colors`).
    pub color: usize,
}

impl WsRun {
    /// The newest segment.
    #[must_use]
    pub fn latest(&self) -> &RunIndexEntry {
        // Never empty: made from at least one entry.
        &self.segments[self.segments.len() - 1]
    }

    #[must_use]
    pub fn resumed(&self) -> bool {
        self.segments.len() > 1
    }

    /// How many nodes wrote it (0: one process, not a distributed run).
    #[must_use]
    pub fn node_count(&self) -> usize {
        if self.nodes.is_empty() {
            0
        } else {
            self.nodes.len() + 1
        }
    }

    /// The node labels of its system keys, over its segments and nodes; a node
    /// whose keys carry none is named as reading it names it (its host where the
    /// nodes' hosts differ, else its directory's name).
    #[must_use]
    pub fn node_labels(&self) -> std::collections::BTreeSet<String> {
        let mut labels: std::collections::BTreeSet<String> = self
            .segments
            .iter()
            .chain(&self.nodes)
            .flat_map(|e| e.node_labels.iter().cloned())
            .collect();
        if self.nodes.is_empty() {
            return labels;
        }
        let nodes = || std::iter::once(self.latest()).chain(&self.nodes);
        let hosts: std::collections::HashSet<&str> = nodes().map(|e| e.host.as_str()).collect();
        let by_host = hosts.len() == self.node_count() && !hosts.contains("");
        for e in nodes().filter(|e| e.node_labels.is_empty()) {
            labels.insert(if by_host {
                e.host.clone()
            } else {
                e.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        }
        labels
    }

    /// Whether `dir` is one of its run directories (a segment or a node).
    #[must_use]
    pub fn holds(&self, dir: &Path) -> bool {
        self.segments
            .iter()
            .chain(&self.nodes)
            .any(|s| s.dir == dir)
    }

    /// Its name as a legend gives it: with its segments or its nodes counted.
    #[must_use]
    pub fn legend_label(&self) -> String {
        if self.resumed() {
            format!("{} ({} segments)", self.label(), self.segments.len())
        } else if self.node_count() > 0 {
            format!("{} ({} nodes)", self.label(), self.node_count())
        } else {
            self.label()
        }
    }

    /// Summary, config and environment keys its index entries left out (past the
    /// [`crate::source::index::MAX_INDEXED_KEYS`] kept of each): the run itself,
    /// opened, has them all.
    #[must_use]
    pub fn keys_not_indexed(&self) -> u64 {
        self.segments
            .iter()
            .chain(&self.nodes)
            .map(|e| e.keys_dropped)
            .sum()
    }

    /// Its id: the run record's, else the one its directory's name ends in
    /// (`offline-run-20261201_000000-ab12cd34`), as W&B names run directories:
    /// runs without a run record (cut short, damaged, just created) are told
    /// apart in the list.
    #[must_use]
    pub fn id(&self) -> String {
        let l = self.latest();
        let id = if l.run_id.is_empty() {
            id_of_dir(&self.dir_name)
        } else {
            &l.run_id
        };
        crate::text::sanitize(id)
    }

    /// Display name, else id (its run record's, else the one its directory's
    /// name ends in: a run file with no record yet), else directory name.
    #[must_use]
    pub fn label(&self) -> String {
        let l = self.latest();
        if let Some(name) = crate::text::visible_name(&l.display_name) {
            return name;
        }
        let id = self.id();
        if id.is_empty() {
            crate::text::sanitize(&self.dir_name)
        } else {
            id
        }
    }

    #[must_use]
    pub fn state(&self) -> RunStatus {
        self.latest().state
    }

    /// Its file could not be read at all (a bad header, not a `.wandb` file,
    /// permission denied): never the run drawn first.
    #[must_use]
    pub fn unreadable(&self) -> bool {
        let l = self.latest();
        l.error.is_some() && !l.has_run_record
    }

    /// Why its file could not be read, without the file's path (the list names
    /// its directory).
    #[must_use]
    pub fn read_error(&self) -> Option<&str> {
        let l = self.latest();
        let e = l.error.as_deref()?;
        let path = l.file.as_ref().map(|f| f.display().to_string());
        Some(
            path.and_then(|p| e.strip_prefix(p.as_str()))
                .map_or(e, |rest| rest.trim_start_matches([':', ' '])),
        )
    }

    /// The scan is still reading its file (a placeholder of a partial index).
    #[must_use]
    pub fn reading(&self) -> bool {
        self.latest().reading
    }

    /// Start of the first segment (Unix s).
    #[must_use]
    pub fn start(&self) -> Option<f64> {
        self.segments.iter().find_map(|s| s.start_time)
    }

    /// Runtime over every segment (seconds).
    #[must_use]
    pub fn runtime(&self) -> Option<f64> {
        let v: Vec<f64> = self.segments.iter().filter_map(|s| s.runtime).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }

    /// The run directories to read when the run is drawn.
    #[must_use]
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.segments.iter().map(|s| s.dir.clone()).collect()
    }

    /// A summary value by key (`val/loss`, or a nested `a.b` path).
    #[must_use]
    pub fn summary_value(&self, key: &str) -> Option<&Value> {
        lookup(&self.summary, key)
    }

    /// A config value by key (`lr`, or a nested `model.layers` path), W&B's
    /// `{"value": x}` wrapping looked through.
    #[must_use]
    pub fn config_value(&self, key: &str) -> Option<&Value> {
        let v = lookup(&self.config, key)?;
        match v {
            Value::Object(m) if m.len() == 1 && m.contains_key("value") => m.get("value"),
            v => Some(v),
        }
    }
}

/// `key` in a nested object: the whole key first (a summary key may hold `/` or
/// `.`), then walking `.`-separated parts.
fn lookup<'a>(root: &'a Value, key: &str) -> Option<&'a Value> {
    let obj = root.as_object()?;
    if let Some(v) = obj.get(key) {
        return Some(v);
    }
    let mut v = root;
    for part in key.split('.') {
        v = v.as_object()?.get(part)?;
    }
    Some(v)
}

impl RunFields for WsRun {
    fn text(&self, field: TextField) -> Option<&str> {
        let l = self.latest();
        Some(match field {
            TextField::Key => &self.dir_name,
            TextField::Name => &l.display_name,
            TextField::Id => &l.run_id,
            TextField::Project => &l.project,
            TextField::Notes => &l.notes,
            TextField::State => l.state.as_str(),
        })
    }
    fn tags(&self) -> &[String] {
        &self.latest().tags
    }
    fn config(&self) -> Option<&Value> {
        Some(&self.config)
    }
    fn summary(&self) -> Option<&Value> {
        Some(&self.summary)
    }
}

/// A one-line text prompt of the workspace (`G`, `v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// The config key to group the selected runs by.
    Group,
    /// The summary key shown per run.
    Column,
}

/// A drawn run gone from the index: its key, whether it was pinned, and for how
/// many index answers it has been gone.
#[derive(Debug, Clone)]
struct Vanished {
    key: String,
    pinned: bool,
    scans: u32,
}

/// What the workspace shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WsView {
    /// The runs list beside the selected runs' charts.
    #[default]
    List,
    /// One run alone, by its run directory (enter on a run, or `leet RUN-DIR`);
    /// esc goes back to the list.
    Run(PathBuf),
}

/// The workspace of one wandb directory.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// The wandb directory (canonical).
    pub dir: PathBuf,
    /// How the status bar names it (relative to where leet started when under it;
    /// set by the runtime, which knows the working directory).
    pub label: String,
    /// Every run, newest first.
    pub runs: Vec<WsRun>,
    /// Indices into `runs` passing the filter.
    pub shown: Vec<usize>,
    /// The highlighted row (an index into `shown`) and the first row drawn.
    pub cursor: usize,
    pub scroll: usize,
    /// Selected run keys, in the order selected.
    pub selected: Vec<String>,
    pub pinned: Option<String>,
    pub filter: RunsFilter,
    pub group_by: Option<String>,
    pub summary_column: Option<String>,
    /// The prompt being typed (`G`, `v`) and its text.
    pub prompt: Option<(Prompt, crate::ui::prompt::Prefilled)>,
    pub view: WsView,
    /// A scan is on its way; whether a listing has come (a partial one too), and
    /// whether a whole index has (the first picks the run drawn first).
    pub scanning: bool,
    pub indexed: bool,
    complete: bool,
    /// The whole index so far held no run (a workspace opened before its first
    /// run started): the first runs to come are drawn, as the first index's are.
    awaiting_runs: bool,
    /// Drawn runs gone from the index, remembered for [`VANISHED_SCANS`] answers.
    vanished: Vec<Vanished>,
    /// What the status bar is to say once (a drawn run replaced in its directory).
    pub(crate) note: Option<String>,
    /// A drawn run's directory whose file could no longer be read, and the note
    /// that said so: taken back once it is drawn again.
    pub(crate) lost: Option<(PathBuf, String)>,
    /// The filter changed while the list was too long to filter on the key.
    refilter_due: bool,
    /// Runs the filter has been evaluated on (a cost bound tests can read).
    pub evaluations: usize,
    /// What the state file holds for this directory as far as this instance knows
    /// (as loaded, then as last handed to the worker): a state equal to it is not
    /// written again.
    stored: WorkspaceSaved,
    /// What the state file held when this instance last knew (as loaded, then as
    /// each save is written): a save carries the changes from it, merged into
    /// the file as it is then (another leet may have written it).
    on_disk: WorkspaceSaved,
    /// The number of the last save handed to the worker, and whose saves they
    /// are (numbered apart from another workspace's in the process).
    generation: u64,
    writer: u64,
    /// A save has been handed to the worker since the workspace opened.
    changed: bool,
    /// The last save failed (its note was shown): the next failure is not told.
    pub(crate) save_failing: bool,
    /// The list takes focus once it is on screen (the first layout).
    pub(crate) focus_list: bool,
    /// The highlighted run's overview below the list.
    pub overview: WsOverview,
    /// The run directory shown alone before the list, when the list came before
    /// its index: the index puts the cursor there and draws it.
    back_to: Option<PathBuf>,
    /// Quiet longer than this, a run without an exit record is crashed
    /// (`--stale-after`, as the run shown alone decides it).
    pub(crate) stale_after: std::time::Duration,
    /// How many runs read `starting` as the list was last drawn on a tick (see
    /// `Runs::workspace_tick`).
    pub(crate) starting_drawn: usize,
    /// What the last `G` or `v` refused said: the next one answered ends it.
    pub(crate) prompt_note: Option<String>,
}

impl Workspace {
    /// A workspace of `dir`, with what was saved for it.
    #[must_use]
    pub fn new(dir: PathBuf, saved: Option<WorkspaceSaved>) -> Self {
        let mut ws = Self {
            label: dir.display().to_string(),
            dir,
            writer: crate::ui::cmd::writer_id(),
            stale_after: std::time::Duration::from_secs_f64(crate::source::index::STALE_AFTER),
            ..Self::default()
        };
        if let Some(s) = saved {
            ws.stored = s.clone();
            ws.on_disk = s.clone();
            ws.selected = s.selected;
            ws.selected.truncate(MAX_SELECTED);
            ws.selected.dedup();
            ws.pinned = s.pinned;
            ws.filter.restore(&s.filter, s.filter_glob);
            ws.group_by = s.group_by.filter(|g| !g.is_empty());
            ws.summary_column = s.summary_column.filter(|c| !c.is_empty());
        }
        ws
    }

    /// Back in the list from `dir`, the run shown alone: the cursor on its run.
    /// A run opened alone (`leet RUN-DIR`) is shown before any index: the index,
    /// once it comes, puts the cursor there and draws it too (added to what was
    /// saved as drawn, as room allows), the run looked at staying on screen.
    pub fn come_back_to(&mut self, dir: PathBuf) {
        match self.run_of_dir(&dir).map(|r| r.key.clone()) {
            Some(key) => self.cursor_to(Some(&key)),
            None => self.back_to = Some(dir),
        }
    }

    /// Whether a whole index has come (before it, nothing is picked to draw).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// What to save.
    #[must_use]
    pub fn saved(&self) -> WorkspaceSaved {
        // A run gone for a while stays remembered: it may come back.
        let mut selected = self.selected.clone();
        selected.extend(self.vanished.iter().map(|v| v.key.clone()));
        selected.truncate(MAX_SELECTED);
        let pinned = self.pinned.clone().or_else(|| {
            self.vanished
                .iter()
                .find(|v| v.pinned)
                .map(|v| v.key.clone())
        });
        // The filter kept: while its prompt is open, the one before it.
        let (filter, filter_glob) = self.filter.kept();
        WorkspaceSaved {
            selected,
            pinned,
            filter: filter.to_owned(),
            filter_glob,
            group_by: self.group_by.clone(),
            summary_column: self.summary_column.clone(),
        }
    }

    /// What to write to the state file now, remembered as written: None while it
    /// equals what the file holds, or before the first index (a run opened alone,
    /// whose workspace was never listed, changes nothing the workspace remembers).
    pub fn take_save(&mut self) -> Option<WorkspaceSaved> {
        let now = self.saved();
        if !self.indexed || now == self.stored {
            return None;
        }
        self.stored.clone_from(&now);
        self.changed = true;
        Some(now)
    }

    /// What to write on quit (a save handed to the worker may not have run yet):
    /// the state, once it has changed since the workspace opened.
    #[must_use]
    pub fn final_save(&self) -> Option<WorkspaceSaved> {
        let now = self.saved();
        (self.indexed && (self.changed || now != self.stored)).then_some(now)
    }

    /// Apply the filter again (the cursor stays on its run when it still shows).
    pub fn refilter(&mut self) {
        let key = self.cursor_run().map(|r| r.key.clone());
        let f = &self.filter;
        self.shown = (0..self.runs.len())
            .filter(|&i| f.matches(&self.runs[i]))
            .collect();
        self.evaluations = self.evaluations.saturating_add(self.runs.len());
        self.refilter_due = false;
        self.cursor_to(key.as_deref());
    }

    /// The query in force changed: filter now when the list is short, else on
    /// the next tick (or enter).
    pub fn filter_changed(&mut self) {
        if self.runs.len() <= LIVE_FILTER_RUNS {
            self.refilter();
        } else {
            self.refilter_due = true;
        }
    }

    /// A tick: a filter change held back is applied. Returns whether it was.
    pub fn refilter_if_due(&mut self) -> bool {
        let due = self.refilter_due;
        if due {
            self.refilter();
        }
        due
    }

    fn clamp_cursor(&mut self) {
        self.cursor = self.cursor.min(self.shown.len().saturating_sub(1));
    }

    /// The highlighted run.
    #[must_use]
    pub fn cursor_run(&self) -> Option<&WsRun> {
        self.shown.get(self.cursor).and_then(|&i| self.runs.get(i))
    }

    #[must_use]
    pub fn run(&self, key: &str) -> Option<&WsRun> {
        self.runs.iter().find(|r| r.key == key)
    }

    #[must_use]
    pub fn is_selected(&self, key: &str) -> bool {
        self.selected.iter().any(|k| k == key)
    }

    /// `space`: select or unselect the highlighted run. Err: why not.
    pub fn toggle_cursor(&mut self) -> Result<(), String> {
        let Some(key) = self.cursor_run().map(|r| r.key.clone()) else {
            return Ok(());
        };
        if let Some(i) = self.selected.iter().position(|k| *k == key) {
            self.selected.remove(i);
            if self.pinned.as_deref() == Some(key.as_str()) {
                self.pinned = None;
            }
        } else if self.selected.len() >= MAX_SELECTED {
            return Err(format!(
                "at most {MAX_SELECTED} runs are drawn at once: space on one to drop it"
            ));
        } else {
            self.selected.push(key);
        }
        Ok(())
    }

    /// `p`: pin the highlighted run (selecting it), or unpin it.
    pub fn pin_cursor(&mut self) -> Result<(), String> {
        let Some(key) = self.cursor_run().map(|r| r.key.clone()) else {
            return Ok(());
        };
        if self.pinned.as_deref() == Some(key.as_str()) {
            self.pinned = None;
            return Ok(());
        }
        if !self.is_selected(&key) {
            self.toggle_cursor()?;
        }
        self.pinned = Some(key);
        Ok(())
    }

    /// The run directories to read, in drawing order (the pinned run's last), and
    /// the one to read as the main run (the list's: `keep` when still drawn, else
    /// the pinned run's newest segment, else the first selected run's; of a
    /// resumed run, always its newest segment).
    #[must_use]
    pub fn wanted(&self, keep: Option<&Path>) -> (Vec<PathBuf>, Option<PathBuf>) {
        let keys: Vec<&str> = match &self.view {
            WsView::Run(dir) => match self.run_of_dir(dir) {
                // Alone: the run, all its segments (a resumed run reads as one).
                Some(r) => vec![r.key.as_str()],
                None => return (vec![dir.clone()], Some(dir.clone())),
            },
            WsView::List => self.selected.iter().map(String::as_str).collect(),
        };
        let mut dirs = Vec::new();
        let mut primary = None;
        for k in &keys {
            if let Some(r) = self.run(k) {
                if primary.is_none() || self.pinned.as_deref() == Some(*k) {
                    primary = Some(r.latest().dir.clone());
                }
                if self.pinned.as_deref() == Some(*k) {
                    // Drawn last: on top.
                    continue;
                }
                dirs.extend(r.dirs());
            }
        }
        if let Some(r) = self
            .pinned
            .as_deref()
            .filter(|p| keys.contains(p))
            .and_then(|p| self.run(p))
        {
            dirs.extend(r.dirs());
        }
        // A resumed run is read with its newest segment as the main run, as when
        // it is opened: one whose new segment came while it was drawn moves on to
        // it (its title values, images and facts are the newest segment's).
        let newest = |d: &Path| {
            self.run_of_dir(d)
                .filter(|r| r.segments.iter().any(|s| s.dir == d))
                .map_or_else(|| d.to_path_buf(), |r| r.latest().dir.clone())
        };
        if let WsView::Run(dir) = &self.view {
            primary = Some(newest(dir));
        } else if let Some(keep) = keep.filter(|d| dirs.iter().any(|x| x == d)) {
            primary = Some(newest(keep));
        }
        (dirs, primary)
    }

    /// The run a run directory belongs to.
    #[must_use]
    pub fn run_of_dir(&self, dir: &Path) -> Option<&WsRun> {
        self.runs.iter().find(|r| r.holds(dir))
    }

    /// The group of a run under `group_by` (its config value as text; `–` when it
    /// has none). Runs are grouped by the value's JSON, as the keys that differ
    /// are found: a string is written bare unless it reads as another value (`32`
    /// and `"32"`, `true` and `"true"`, `–` and `"–"` are two groups, told apart).
    #[must_use]
    pub fn group_of(&self, run: &WsRun) -> Option<String> {
        let key = self.group_by.as_deref()?;
        let value = run.config_value(key);
        let key = crate::text::sanitize(key);
        Some(match value {
            Some(Value::String(s)) if s != "–" && serde_json::from_str::<Value>(s).is_err() => {
                format!("{key}={}", crate::text::sanitize(s))
            }
            Some(v) => format!("{key}={}", crate::text::sanitize(&v.to_string())),
            None => format!("{key}=–"),
        })
    }

    /// What a `G` or `v` prompt asked for, put in force when it means something:
    /// empty clears it; a key no run of the index has (once one has come) would
    /// draw one group of `–` or a column of `–`, so the setting stays as it was
    /// and the error says why.
    ///
    /// # Errors
    /// The text names no key of any run (or, for `G`, several keys).
    pub fn apply_prompt(&mut self, kind: Prompt, text: &str) -> Result<(), String> {
        let mut v = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
        if let Some(real) = v
            .as_deref()
            .and_then(|typed| self.key_shown_as(kind, typed))
        {
            v = Some(real);
        }
        if let Some(key) = v.as_deref().filter(|_| self.indexed) {
            let has = |r: &WsRun| match kind {
                Prompt::Group => r.config_value(key).is_some(),
                Prompt::Column => r.summary_value(key).is_some(),
            };
            if !self.runs.iter().any(has) {
                let key = crate::text::sanitize(key);
                // The list keeps so many keys of a run: a run with more may have it.
                let wide = self
                    .runs
                    .iter()
                    .filter(|r| r.keys_not_indexed() > 0)
                    .count();
                let more = if wide > 0 {
                    format!(
                        " among the keys the list keeps ({wide} run(s) have more than {}: enter opens a run whole)",
                        crate::source::index::MAX_INDEXED_KEYS
                    )
                } else {
                    String::new()
                };
                return Err(match kind {
                    Prompt::Group if key.contains(char::is_whitespace) => {
                        format!("one key: G groups by a single config key, not '{key}'")
                    }
                    Prompt::Group => format!("no run has config key {key}{more}"),
                    Prompt::Column => format!("no run has summary key {key}{more}"),
                });
            }
        }
        match kind {
            Prompt::Group => self.group_by = v,
            Prompt::Column => self.summary_column = v,
        }
        Ok(())
    }

    /// The one top-level config (`G`) or summary (`v`) key, of any run, that is
    /// shown as `typed` but is not it: a key with escape sequences in it is drawn
    /// sanitized (`grp\x1b[31m` as `grp`), and what is drawn is what is typed.
    /// None when a run has `typed` itself, or no key or several are shown so.
    fn key_shown_as(&self, kind: Prompt, typed: &str) -> Option<String> {
        fn root(r: &WsRun, kind: Prompt) -> Option<&serde_json::Map<String, Value>> {
            match kind {
                Prompt::Group => r.config.as_object(),
                Prompt::Column => r.summary.as_object(),
            }
        }
        let mut found: Option<&String> = None;
        for m in self.runs.iter().filter_map(|r| root(r, kind)) {
            if m.contains_key(typed) {
                return None;
            }
            for k in m.keys() {
                if k != typed && crate::text::sanitize(k) == typed {
                    match found {
                        Some(f) if f != k => return None,
                        _ => found = Some(k),
                    }
                }
            }
        }
        found.cloned()
    }

    /// Config keys whose values differ among the selected runs (what `G` offers).
    #[must_use]
    pub fn differing_config_keys(&self) -> Vec<String> {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let sel: Vec<&WsRun> = self.selected.iter().filter_map(|k| self.run(k)).collect();
        for r in &sel {
            if let Some(m) = r.config.as_object() {
                for k in m.keys() {
                    let v = r.config_value(k).map(Value::to_string).unwrap_or_default();
                    seen.entry(k.clone()).or_default().push(v);
                }
            }
        }
        seen.into_iter()
            .filter(|(_, v)| v.len() < sel.len() || v.iter().any(|x| x != &v[0]))
            .map(|(k, _)| k)
            .collect()
    }
}

/// The id a W&B run directory's name ends in (`run-20261201_000000-ID`,
/// `offline-run-…-ID`); "" for a name of another shape.
fn id_of_dir(name: &str) -> &str {
    let rest = name
        .strip_prefix("offline-run-")
        .or_else(|| name.strip_prefix("run-"))
        .unwrap_or_default();
    match rest.split_once('-') {
        Some((stamp, id)) if stamp.len() == 15 && stamp.as_bytes()[8] == b'_' => id,
        _ => "",
    }
}

#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod edge_tests;

#[cfg(test)]
mod tests;

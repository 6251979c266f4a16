//! The user's settings (`$XDG_CONFIG_HOME/leet/config.toml`, or `--config FILE`):
//! grid rows and columns, panels and their sizes, each chart's y scale, the guides
//! and the filters, one table for the viewer (`[viewer]`) and one for the live
//! monitor (`[live]`). The viewer's settings that name metrics, and its metrics
//! and overview filters, belong to the wandb directory they were set in
//! (`[viewer.projects."<dir>"]`, see `settings/directory.rs`). Parsed and
//! validated here (pure: the file is read in `lib.rs` before the terminal
//! changes, written by the runtime); a bad value is an error naming the file,
//! the key and the reason, as the key map's are.
//!
//! The app notes when a setting changes (after the user's keys and mouse) and asks
//! for the file to be written at the next tick (`Cmd::SaveSettings`, at most once a
//! second); the runtime writes what is unsaved when the viewer quits. A save
//! carries only this instance's changes, merged into the file as it is then
//! (`settings/merge.rs`): two leets sharing the file keep each other's. A save
//! that fails is said once in the status bar.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::layout::PaneSizes;
use super::palette::Palette;
use crate::ui::charts::grid::{Guides, YScale};

mod directory;
mod merge;
mod parse;
pub(crate) use parse::key_offset;
mod persist;
mod saved;

pub use merge::merged_text;
pub(crate) use saved::{Saved, SavedMut};

use directory::Part;

/// Largest settings file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Most grid rows or columns (what `r`/`c` and a digit can set).
pub const MAX_GRID: u16 = 9;
/// Most y-scale entries kept per table (the rest are not saved, and a file with
/// more is refused).
pub const MAX_SCALES: usize = 2000;
/// Longest chart key kept in a y-scale table.
pub const MAX_KEY_BYTES: usize = 256;
/// Most a pane size may say (the layout clamps it to the screen anyway).
pub const MAX_PANE: u16 = 500;
/// Smallest sidebar widths and console height a file may give (0 is the default).
pub const MIN_LEFT: u16 = 28;
pub const MIN_RIGHT: u16 = 30;
pub const MIN_CONSOLE: u16 = 5;

/// Why a settings file was refused. Every message is sanitized and names the
/// file; `Value` names the table and key too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{}: cannot read: {}", shown(.file), clean(.reason, 240))]
    Io { file: PathBuf, reason: String },
    #[error("{}: {}", shown(.file), clean(.reason, 240))]
    Refused { file: PathBuf, reason: String },
    #[error("{}{}: not valid TOML: {}", shown(.file), crate::text::place(*.at), crate::text::sanitize(.reason))]
    Syntax {
        file: PathBuf,
        /// Line and column (from 1) of the error.
        at: Option<(usize, usize)>,
        reason: String,
    },
    #[error("{}{}: [{}] key '{}': {}", shown(.file), crate::text::place(*.at), crate::text::sanitize(.table), clean(.key, 80), crate::text::sanitize(.reason))]
    Value {
        file: PathBuf,
        /// Line and column (from 1) of the key in the file.
        at: Option<(usize, usize)>,
        table: String,
        key: String,
        reason: String,
    },
}

fn shown(p: &Path) -> String {
    crate::text::sanitize_path(p)
}

fn clean(s: &str, max_chars: usize) -> String {
    let s = crate::text::sanitize(s);
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// A filter as saved: its pattern ("" = none) and how it is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterSetting {
    pub pattern: String,
    /// W&B's glob (`*`, `?`, unanchored, case-insensitive) rather than a regex.
    pub glob: bool,
}

/// The filters of one mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// The metrics grid (`/`).
    pub metrics: FilterSetting,
    /// The overview sidebar (`o`).
    pub overview: FilterSetting,
    /// The system sidebar (`\`).
    pub system: FilterSetting,
}

/// The settings of one mode (the viewer, or the live monitor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Grid rows and columns (None: from the terminal size).
    pub rows: Option<u16>,
    pub columns: Option<u16>,
    pub guides: Guides,
    /// The colours (key P).
    pub palette: Palette,
    /// The min–max band on charts with more points than columns (key b).
    pub band: bool,
    /// The left sidebar; None: automatic (the live monitor shows it on a screen
    /// wide enough; the viewer always does).
    pub left_sidebar: Option<bool>,
    pub right_sidebar: bool,
    pub console: bool,
    /// The metrics grid (`1` hides it, giving its room to the other panes).
    pub metrics_grid: bool,
    /// Sidebar widths and console height dragged with the mouse (None: default).
    pub sizes: PaneSizes,
    /// Metric charts' y scale by metric key (linear or log; linear ones omitted).
    pub y_scale: BTreeMap<String, YScale>,
    /// System charts' y scale by `"<title>|<unit>"` (linear, log or heatmap).
    pub system_y_scale: BTreeMap<String, YScale>,
    pub filters: Filters,
    /// Every metric chart's smoothing (`E`), as `leet export --smoothing` spells
    /// it: `none`, `twema:0.6`, `ema:0.6`, `avg:10`, `gauss:5`.
    pub smoothing_all: String,
    /// Metric charts' own smoothing by metric key (`e`, `+`, `-`), spelled so.
    pub smoothing: BTreeMap<String, String>,
    /// The x of the charts without their own (`X`): `step`, `rel`, `wall`,
    /// `metric:NAME`.
    pub x_axis_all: String,
    /// Metric charts' own x by metric key (`x`), spelled so.
    pub x_axis: BTreeMap<String, String>,
    /// Metric charts on a log x axis (`L`).
    pub log_x: Vec<String>,
    /// Collapsed metric sections, by prefix.
    pub collapsed_sections: Vec<String>,
}

impl Settings {
    /// What a mode starts with when the file says nothing.
    #[must_use]
    pub fn defaults(live: bool) -> Self {
        Self {
            rows: None,
            columns: None,
            guides: Guides::Off,
            palette: Palette::Default,
            band: true,
            left_sidebar: if live { None } else { Some(true) },
            right_sidebar: !live,
            console: false,
            metrics_grid: true,
            sizes: PaneSizes::default(),
            y_scale: BTreeMap::new(),
            system_y_scale: BTreeMap::new(),
            filters: Filters::default(),
            smoothing_all: "none".to_owned(),
            smoothing: BTreeMap::new(),
            x_axis_all: "step".to_owned(),
            x_axis: BTreeMap::new(),
            log_x: Vec::new(),
            collapsed_sections: Vec::new(),
        }
    }
}

/// The whole settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Whether leet writes its changes back (false: the file stays as written).
    pub save: bool,
    /// The run viewer's settings for every directory. Its per-directory ones
    /// (see `settings/directory.rs`) are those of no directory: a file's of
    /// before they were per directory (moved into the first directory opened),
    /// or a viewer's told no directory.
    pub viewer: Settings,
    pub live: Settings,
    /// The viewer's per-directory settings by canonical wandb directory (the rest
    /// of each `Settings` at its defaults).
    pub projects: BTreeMap<String, Settings>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            save: true,
            viewer: Settings::defaults(false),
            live: Settings::defaults(true),
            projects: BTreeMap::new(),
        }
    }
}

fn guides_name(g: Guides) -> &'static str {
    match g {
        Guides::Off => "off",
        Guides::Dots => "dots",
        Guides::Lines => "lines",
    }
}

fn scale_name(s: YScale) -> &'static str {
    match s {
        YScale::Linear => "linear",
        YScale::Log => "log",
        YScale::Heatmap => "heatmap",
    }
}

/// A TOML string on one line (a basic string, escaped): also how keys are
/// written, so it is never a multi-line string (keys cannot be one), whatever a
/// path or metric name holds.
fn quoted(s: &str) -> String {
    use std::fmt::Write as _;
    // A regex's backslashes read better unescaped: a literal string, where it can be.
    if s.contains(['"', '\\'])
        && !s.contains('\'')
        && !s.chars().any(|c| c.is_control() && c != '\t')
    {
        return format!("'{s}'");
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const HEADER: &str = "\
# leet settings. leet writes this file when a setting changes, changing only
# those keys: your comments and order are kept. `leet --print-config` prints the
# effective settings. With save = false leet never writes it.
#
# [viewer] is the run viewer's, [live] the live monitor's (`leet --live`).
# [viewer.projects.\"<dir>\"] holds what belongs to one wandb directory (its
# canonical path; for a run outside one, the directory of its .wandb file):
# smoothing_all, collapsed_sections, x_axis_all, log_x, y_scale, smoothing,
# x_axis and the metrics and overview filters; [viewer] the rest, the same for
# every run. [live] holds all of its own. The keys:
#   rows, columns     grid rows and columns, 1 to 9; 0 = from the terminal size
#                     (keys r and c, then a digit)
#   guides            guides at the y ticks: \"off\", \"dots\" or \"lines\" (key g)
#   palette           the colours (key P): \"default\" (the terminal's own),
#                     \"wandb-vibe-10\" (wandb leet's), \"okabe-ito\" and
#                     \"tol-bright\" (colour-blind safe), \"light\" (for a light
#                     background)
#   band              the min–max band of charts with more points than columns:
#                     true or false (key b)
#   left_sidebar      the overview ([): true, false or \"auto\" (live: shown from
#                     120 columns; viewer: shown)
#   right_sidebar     the system metrics (])
#   console           the console logs pane (4)
#   metrics_grid      the metrics grid (1)
#   left_width, right_width, console_height
#                     pane sizes dragged with the mouse; 0 = default (key 0)
#   collapsed_sections  metric sections collapsed, by prefix: [\"train\"] (key Z)
#   [*.y_scale]       a metric chart's y scale: \"metric key\" = \"log\" (key y)
#   [*.system_y_scale] a system chart's: \"title|unit\" = \"log\" or \"heatmap\"
#   [*.filters]       metrics (/), overview (o), system (\\): a pattern and its
#                     mode (\"regex\")
#   smoothing_all     every metric chart's smoothing (key E): \"none\",
#                     \"twema:0.6\", \"ema:0.6\", \"avg:10\" or \"gauss:5\"
#   [*.smoothing]     a metric chart's own: \"metric key\" = \"ema:0.6\" (keys e, +, -)
#   x_axis_all        every metric chart's x (key X): \"step\" (its default: _step or
#                     its step metric), \"rel\", \"wall\" or \"metric:NAME\"
#   [*.x_axis]        a metric chart's own: \"metric key\" = \"wall\" (key x)
#   log_x             metric charts on a log x axis: [\"loss\"] (key L)
";

fn write_section(out: &mut String, name: &str, s: &Settings, part: Part) {
    use std::fmt::Write as _;
    let n = |v: Option<u16>| v.unwrap_or(0);
    let _ = writeln!(out, "\n[{name}]");
    let _ = writeln!(out, "rows = {}", n(s.rows));
    let _ = writeln!(out, "columns = {}", n(s.columns));
    let _ = writeln!(out, "guides = \"{}\"", guides_name(s.guides));
    let _ = writeln!(out, "palette = \"{}\"", s.palette);
    let _ = writeln!(out, "band = {}", s.band);
    match s.left_sidebar {
        Some(b) => {
            let _ = writeln!(out, "left_sidebar = {b}");
        }
        None => out.push_str("left_sidebar = \"auto\"\n"),
    }
    let _ = writeln!(out, "right_sidebar = {}", s.right_sidebar);
    let _ = writeln!(out, "console = {}", s.console);
    let _ = writeln!(out, "metrics_grid = {}", s.metrics_grid);
    let _ = writeln!(out, "left_width = {}", n(s.sizes.left));
    let _ = writeln!(out, "right_width = {}", n(s.sizes.right));
    let _ = writeln!(out, "console_height = {}", n(s.sizes.console));
    // The per-directory keys: `[live]`'s, or `[viewer]`'s of no directory.
    if part == Part::All {
        directory::write_every_key(out, name, s);
    }
    let _ = writeln!(out, "\n[{name}.system_y_scale]");
    for (k, v) in &s.system_y_scale {
        let _ = writeln!(out, "{} = \"{}\"", quoted(k), scale_name(*v));
    }
    let _ = writeln!(out, "\n[{name}.filters]");
    let f = &s.filters;
    let mut filters = vec![("system", &f.system)];
    if part == Part::All {
        filters.splice(0..0, [("metrics", &f.metrics), ("overview", &f.overview)]);
    }
    for (key, fs) in filters {
        let _ = writeln!(out, "{key} = {}", filter_value(fs));
    }
}

/// A filter as the file spells it: `{ pattern = "…", mode = "regex" }`.
fn filter_value(f: &FilterSetting) -> String {
    let mode = if f.glob { "glob" } else { "regex" };
    format!("{{ pattern = {}, mode = \"{mode}\" }}", quoted(&f.pattern))
}

impl Config {
    /// The file's text: every setting, documented; [`Config::parse`] reads
    /// it back to the same settings.
    #[must_use]
    pub fn to_toml(&self) -> String {
        let mut out = String::from(HEADER);
        out.push_str(&format!("\nsave = {}\n", self.save));
        let viewer = if self.viewer.has_directory_settings() {
            Part::All
        } else {
            Part::Global
        };
        write_section(&mut out, "viewer", &self.viewer, viewer);
        for (dir, s) in &self.projects {
            directory::write_directory(&mut out, dir, s);
        }
        write_section(&mut out, "live", &self.live, Part::All);
        out
    }
}

/// Where the settings are saved and what was last written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Persist {
    /// The file written (None: settings are not saved).
    path: Option<PathBuf>,
    /// The file as loaded: the other mode's section is written back as it was.
    base: Config,
    /// The text this instance last knew the file to hold (the one the loaded
    /// settings give, then each save's once written): its changes are from it.
    on_disk: String,
    /// The text of the last save asked for.
    sent: String,
    /// A change waits for the next tick.
    pending: bool,
    /// Count of saves asked for: the runtime writes a save only over an older one
    /// of the same writer (this instance's settings: `writer`).
    generation: u64,
    writer: u64,
    /// The viewer's wandb directory (canonical): where its per-directory
    /// settings are kept (None: in `[viewer]` itself).
    dir: Option<PathBuf>,
    /// Said in the status bar until the next key: the settings were moved, or
    /// could not be saved.
    note: Option<String>,
    /// The last save failed (and was said: the next failures are not).
    failing: bool,
    /// No file to save to, for want of a place (see `Persist::without_a_file`).
    homeless: bool,
}

/// The status bar's note when an older file's settings were moved.
const MOVED: &str =
    "settings: y scales, smoothing, x axes and filters moved into this project's settings";

#[cfg(test)]
mod tests;

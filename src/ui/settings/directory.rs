//! The viewer's settings that belong to a wandb directory: what names a metric
//! (each chart's y scale, smoothing and x axis, the charts on a log x, the
//! collapsed sections), every chart's smoothing and x (`E`, `X`: an x may name a
//! metric of that project, and they go with the charts' own), and the metrics and
//! overview filters. They live in `[viewer.projects."<canonical wandb dir>"]`, so
//! a `loss` on a log scale in one project is not drawn so in the next; the
//! layout, guides, band, system charts and system filter stay in `[viewer]`, the
//! same for every run. `[live]` (one host) keeps all of its settings.
//!
//! A file written before settings were per directory has the per-directory keys
//! directly under `[viewer]`: they are moved into the first directory opened that
//! has no table of its own, and the file is written back in the new layout.

use std::fmt::Write as _;
use std::path::Path;

use super::{quoted, scale_name, Config, FilterSetting, Settings};

/// Which keys a table of the file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// Every key: `[live]`, and `[viewer]` when it holds per-directory settings
    /// (an older file's, or a viewer's told no directory).
    All,
    /// The viewer's settings for every directory: `[viewer]`.
    Global,
    /// One directory's: `[viewer.projects."<dir>"]` ([`DIRECTORY_KEYS`]).
    Directory,
}

/// The keys of a directory's table: the fields [`Settings::swap_directory`]
/// moves (of `filters`, only `metrics` and `overview`).
pub(super) const DIRECTORY_KEYS: [&str; 8] = [
    "smoothing_all",
    "collapsed_sections",
    "x_axis_all",
    "log_x",
    "y_scale",
    "smoothing",
    "x_axis",
    "filters",
];

/// How a directory is named in the file: its path as text.
fn dir_key(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

impl Settings {
    /// Exchange the per-directory settings of `self` and `other`: the one list
    /// of which fields belong to a directory.
    fn swap_directory(&mut self, other: &mut Settings) {
        use std::mem::swap;
        swap(&mut self.y_scale, &mut other.y_scale);
        swap(&mut self.smoothing_all, &mut other.smoothing_all);
        swap(&mut self.smoothing, &mut other.smoothing);
        swap(&mut self.x_axis_all, &mut other.x_axis_all);
        swap(&mut self.x_axis, &mut other.x_axis);
        swap(&mut self.log_x, &mut other.log_x);
        swap(&mut self.collapsed_sections, &mut other.collapsed_sections);
        swap(&mut self.filters.metrics, &mut other.filters.metrics);
        swap(&mut self.filters.overview, &mut other.filters.overview);
    }

    /// `self` with `from`'s per-directory settings.
    #[must_use]
    pub fn with_directory(mut self, from: &Settings) -> Settings {
        self.swap_directory(&mut from.clone());
        self
    }

    /// The per-directory settings alone (the rest at the viewer's defaults).
    #[must_use]
    pub fn directory_part(&self) -> Settings {
        Settings::defaults(false).with_directory(self)
    }

    /// Whether any per-directory setting differs from its default.
    #[must_use]
    pub fn has_directory_settings(&self) -> bool {
        self.directory_part() != Settings::defaults(false)
    }
}

impl Config {
    /// The viewer's settings in the wandb directory `dir` (canonical): `[viewer]`
    /// with the directory's table, or, when it has none, `[viewer]`'s own
    /// per-directory settings (an older file's, which it would take over).
    #[must_use]
    pub fn viewer_in(&self, dir: &Path) -> Settings {
        let own = self.projects.get(&dir_key(dir)).unwrap_or(&self.viewer);
        self.viewer.clone().with_directory(own)
    }

    /// Move `[viewer]`'s per-directory settings (an older file's) into `dir`
    /// when it has no table of its own: whether any moved.
    pub(super) fn move_into(&mut self, dir: &Path) -> bool {
        let key = dir_key(dir);
        if self.projects.contains_key(&key) || !self.viewer.has_directory_settings() {
            return false;
        }
        let part = self.viewer.directory_part();
        self.viewer.swap_directory(&mut Settings::defaults(false));
        self.projects.insert(key, part);
        true
    }

    /// Take the viewer's settings as they are in `dir`: the global ones into
    /// `[viewer]`, the per-directory ones into its table (none when all are at
    /// their defaults).
    pub(super) fn set_viewer_in(&mut self, dir: &Path, now: Settings) {
        let part = now.directory_part();
        self.viewer = now.with_directory(&self.viewer);
        let key = dir_key(dir);
        if part == Settings::defaults(false) {
            self.projects.remove(&key);
        } else {
            self.projects.insert(key, part);
        }
    }
}

/// Every per-directory key in table `name`, defaults included (`[live]`, or
/// `[viewer]` holding them: a mode's settings written whole, documented by their
/// defaults).
pub(super) fn write_every_key(out: &mut String, name: &str, s: &Settings) {
    let _ = writeln!(out, "smoothing_all = {}", quoted(&s.smoothing_all));
    let names: Vec<String> = s.collapsed_sections.iter().map(|p| quoted(p)).collect();
    let _ = writeln!(out, "collapsed_sections = [{}]", names.join(", "));
    let _ = writeln!(out, "x_axis_all = {}", quoted(&s.x_axis_all));
    let names: Vec<String> = s.log_x.iter().map(|p| quoted(p)).collect();
    let _ = writeln!(out, "log_x = [{}]", names.join(", "));
    let _ = writeln!(out, "\n[{name}.y_scale]");
    for (k, v) in &s.y_scale {
        let _ = writeln!(out, "{} = \"{}\"", quoted(k), scale_name(*v));
    }
    for (table, map) in [("smoothing", &s.smoothing), ("x_axis", &s.x_axis)] {
        let _ = writeln!(out, "\n[{name}.{table}]");
        for (k, v) in map {
            let _ = writeln!(out, "{} = {}", quoted(k), quoted(v));
        }
    }
}

/// A directory's table: only what differs from the defaults, so a project
/// with one log chart takes two lines.
pub(super) fn write_directory(out: &mut String, dir: &str, s: &Settings) {
    let name = format!("viewer.projects.{}", quoted(dir));
    let d = Settings::defaults(false);
    let _ = writeln!(out, "\n[{name}]");
    if s.smoothing_all != d.smoothing_all {
        let _ = writeln!(out, "smoothing_all = {}", quoted(&s.smoothing_all));
    }
    if s.x_axis_all != d.x_axis_all {
        let _ = writeln!(out, "x_axis_all = {}", quoted(&s.x_axis_all));
    }
    for (key, names) in [
        ("collapsed_sections", &s.collapsed_sections),
        ("log_x", &s.log_x),
    ] {
        if !names.is_empty() {
            let names: Vec<String> = names.iter().map(|p| quoted(p)).collect();
            let _ = writeln!(out, "{key} = [{}]", names.join(", "));
        }
    }
    if !s.y_scale.is_empty() {
        let _ = writeln!(out, "\n[{name}.y_scale]");
        for (k, v) in &s.y_scale {
            let _ = writeln!(out, "{} = \"{}\"", quoted(k), scale_name(*v));
        }
    }
    for (table, map) in [("smoothing", &s.smoothing), ("x_axis", &s.x_axis)] {
        if !map.is_empty() {
            let _ = writeln!(out, "\n[{name}.{table}]");
            for (k, v) in map {
                let _ = writeln!(out, "{} = {}", quoted(k), quoted(v));
            }
        }
    }
    let filters = [
        ("metrics", &s.filters.metrics),
        ("overview", &s.filters.overview),
    ];
    if filters.iter().any(|(_, f)| **f != FilterSetting::default()) {
        let _ = writeln!(out, "\n[{name}.filters]");
        for (key, f) in filters {
            if *f != FilterSetting::default() {
                let _ = writeln!(out, "{key} = {}", super::filter_value(f));
            }
        }
    }
}

//! Reading a settings file's text: every table and key checked, each error
//! naming the file, the table, the key and the reason.

use std::collections::BTreeMap;
use std::path::Path;

use super::directory::DIRECTORY_KEYS;
use super::{
    quoted, Config, Filters, Part, Settings, SettingsError, MAX_GRID, MAX_KEY_BYTES, MAX_PANE,
    MAX_SCALES, MIN_CONSOLE, MIN_LEFT, MIN_RIGHT,
};
use crate::store::smooth::Smoothing;
use crate::ui::charts::grid::{Guides, YScale};
use crate::ui::charts::xaxis::XAxis;
use crate::ui::filter::{FilterState, MAX_PATTERN_CHARS};

impl Config {
    /// Settings from a file's text: what it gives laid over the defaults.
    ///
    /// # Errors
    /// Not TOML, an unknown table or key, a value of the wrong type or out of
    /// range, a filter pattern that does not compile: naming `file`, the table,
    /// the key and the reason.
    pub fn parse(file: &Path, text: &str) -> Result<Self, SettingsError> {
        Self::from_table(file, &parse_table(file, text)?).map_err(|e| e.located(text))
    }

    /// Settings from a file's parsed TOML, checked as [`Config::parse`] checks.
    pub(super) fn from_table(file: &Path, table: &toml::Table) -> Result<Self, SettingsError> {
        let mut cfg = Self::default();
        let p = Parser { file };
        for (key, value) in table {
            match key.as_str() {
                "save" => cfg.save = p.boolean("top level", key, value)?,
                "viewer" => {
                    let body = p.table("top level", key, value)?;
                    cfg.viewer = p.section(key, body, Part::All, false)?;
                    cfg.projects = p.projects(body)?;
                }
                "live" => {
                    let body = p.table("top level", key, value)?;
                    cfg.live = p.section(key, body, Part::All, true)?;
                }
                _ => {
                    return Err(p.err(
                        "top level",
                        key,
                        "unknown key (expected save, viewer or live)".into(),
                    ))
                }
            }
        }
        Ok(cfg)
    }
}

/// A file's text as TOML.
pub(super) fn parse_table(file: &Path, text: &str) -> Result<toml::Table, SettingsError> {
    text.parse()
        .map_err(|e: toml::de::Error| SettingsError::Syntax {
            file: file.to_owned(),
            at: e.span().map(|r| crate::text::line_col(text, r.start)),
            reason: e.message().trim_end().to_owned(),
        })
}

impl SettingsError {
    /// The error with the line and column of its key in `text` (the file it was
    /// read from), where the key is found there.
    pub(super) fn located(mut self, text: &str) -> Self {
        if let SettingsError::Value { table, key, at, .. } = &mut self {
            *at = key_offset(text, table, key).map(|o| crate::text::line_col(text, o));
        }
        self
    }
}

/// Where `key` of `table` (as the messages name it: a dotted TOML path, or "top
/// level") is written in `text`.
pub(crate) fn key_offset(text: &str, table: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut t: &dyn toml_edit::TableLike = doc.as_table();
    if table != "top level" {
        for k in toml_edit::Key::parse(table).ok()? {
            t = t.get(k.get())?.as_table_like()?;
        }
    }
    Some(t.key(key)?.span()?.start)
}

struct Parser<'a> {
    file: &'a Path,
}

/// What a TOML value is, for "got" in messages.
fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

impl Parser<'_> {
    fn err(&self, table: &str, key: &str, reason: String) -> SettingsError {
        SettingsError::Value {
            file: self.file.to_owned(),
            at: None,
            table: table.to_owned(),
            key: key.to_owned(),
            reason,
        }
    }

    fn boolean(&self, table: &str, key: &str, v: &toml::Value) -> Result<bool, SettingsError> {
        v.as_bool().ok_or_else(|| {
            self.err(
                table,
                key,
                format!("expected true or false, got {} ({v})", type_name(v)),
            )
        })
    }

    fn text<'v>(
        &self,
        table: &str,
        key: &str,
        v: &'v toml::Value,
    ) -> Result<&'v str, SettingsError> {
        v.as_str().ok_or_else(|| {
            self.err(
                table,
                key,
                format!("expected a string, got {} ({v})", type_name(v)),
            )
        })
    }

    fn table<'v>(
        &self,
        table: &str,
        key: &str,
        v: &'v toml::Value,
    ) -> Result<&'v toml::Table, SettingsError> {
        v.as_table().ok_or_else(|| {
            self.err(
                table,
                key,
                format!("expected a table, got {} ({v})", type_name(v)),
            )
        })
    }

    /// An integer 0 (None) or `lo..=hi`.
    fn number(
        &self,
        table: &str,
        key: &str,
        v: &toml::Value,
        lo: u16,
        hi: u16,
        zero: &str,
    ) -> Result<Option<u16>, SettingsError> {
        let Some(n) = v.as_integer() else {
            return Err(self.err(
                table,
                key,
                format!("expected an integer, got {} ({v})", type_name(v)),
            ));
        };
        match u16::try_from(n) {
            Ok(0) => Ok(None),
            Ok(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            _ => Err(self.err(
                table,
                key,
                format!("must be 0 ({zero}) or {lo} to {hi}, got {n}"),
            )),
        }
    }

    /// `[viewer.projects]`: a wandb directory's table by its absolute path.
    fn projects(&self, viewer: &toml::Table) -> Result<BTreeMap<String, Settings>, SettingsError> {
        let Some(v) = viewer.get("projects") else {
            return Ok(BTreeMap::new());
        };
        let mut out = BTreeMap::new();
        for (dir, v) in self.table("viewer", "projects", v)? {
            if !Path::new(dir).is_absolute() {
                return Err(self.err(
                    "viewer.projects",
                    dir,
                    "a project is named by its wandb directory's absolute path".into(),
                ));
            }
            let name = format!("viewer.projects.{}", quoted(dir));
            let body = self.table("viewer.projects", dir, v)?;
            out.insert(
                dir.clone(),
                self.section(&name, body, Part::Directory, false)?,
            );
        }
        Ok(out)
    }

    /// A table of settings: `[live]`, `[viewer]` (`part` All: every key, and
    /// `projects`), or a directory's (Directory: [`DIRECTORY_KEYS`] only).
    fn section(
        &self,
        name: &str,
        body: &toml::Table,
        part: Part,
        live: bool,
    ) -> Result<Settings, SettingsError> {
        let mut s = Settings::defaults(live);
        for (key, v) in body {
            let k = key.as_str();
            if part == Part::Directory && !DIRECTORY_KEYS.contains(&k) {
                return Err(self.err(
                    name,
                    k,
                    format!(
                        "unknown key (expected {}; the other settings are the same for \
                         every project, in [viewer])",
                        DIRECTORY_KEYS.join(", ")
                    ),
                ));
            }
            match k {
                // Read by `projects`.
                "projects" if !live => {}
                "rows" => s.rows = self.number(name, k, v, 1, MAX_GRID, "auto")?,
                "columns" => s.columns = self.number(name, k, v, 1, MAX_GRID, "auto")?,
                "guides" => s.guides = self.guides(name, k, v)?,
                "palette" => {
                    s.palette = (self.text(name, k, v)?)
                        .parse()
                        .map_err(|why| self.err(name, k, why))?;
                }
                "left_sidebar" => s.left_sidebar = self.left_sidebar(name, k, v)?,
                "band" => s.band = self.boolean(name, k, v)?,
                "right_sidebar" => s.right_sidebar = self.boolean(name, k, v)?,
                "console" => s.console = self.boolean(name, k, v)?,
                "metrics_grid" => s.metrics_grid = self.boolean(name, k, v)?,
                "left_width" => {
                    s.sizes.left = self.number(name, k, v, MIN_LEFT, MAX_PANE, "default")?;
                }
                "right_width" => {
                    s.sizes.right = self.number(name, k, v, MIN_RIGHT, MAX_PANE, "default")?;
                }
                "console_height" => {
                    s.sizes.console = self.number(name, k, v, MIN_CONSOLE, MAX_PANE, "default")?;
                }
                "y_scale" => s.y_scale = self.scales(&format!("{name}.y_scale"), k, v, false)?,
                "system_y_scale" => {
                    s.system_y_scale =
                        self.scales(&format!("{name}.system_y_scale"), k, v, true)?;
                }
                "filters" => s.filters = self.filters(name, v, part)?,
                "smoothing_all" => s.smoothing_all = self.smoothing(name, k, v)?,
                "smoothing" => {
                    s.smoothing = self.charts(name, k, v, |p, t, c, v| p.smoothing(t, c, v))?;
                }
                "x_axis_all" => s.x_axis_all = self.x_axis(name, k, v)?,
                "x_axis" => s.x_axis = self.charts(name, k, v, |p, t, c, v| p.x_axis(t, c, v))?,
                "log_x" => s.log_x = self.names(name, k, v)?,
                "collapsed_sections" => s.collapsed_sections = self.names(name, k, v)?,
                _ => {
                    // `[viewer]` also holds the per-project tables.
                    let projects = if live { "" } else { ", projects" };
                    return Err(self.err(
                        name,
                        k,
                        format!(
                            "unknown key (expected rows, columns, guides, band, left_sidebar, \
                             right_sidebar, console, metrics_grid, left_width, right_width, \
                             console_height, collapsed_sections, y_scale, system_y_scale, \
                             filters, smoothing_all, smoothing, x_axis_all, x_axis, log_x{projects} \
                             or palette)"
                        ),
                    ));
                }
            }
        }
        Ok(s)
    }

    /// `guides`: off, dots or lines.
    fn guides(&self, name: &str, k: &str, v: &toml::Value) -> Result<Guides, SettingsError> {
        Ok(match self.text(name, k, v)? {
            "off" => Guides::Off,
            "dots" => Guides::Dots,
            "lines" => Guides::Lines,
            other => {
                return Err(self.err(
                    name,
                    k,
                    format!("unknown guides '{other}' (expected off, dots or lines)"),
                ))
            }
        })
    }

    /// `left_sidebar`: true, false or "auto" (None).
    fn left_sidebar(
        &self,
        name: &str,
        k: &str,
        v: &toml::Value,
    ) -> Result<Option<bool>, SettingsError> {
        Ok(match v {
            toml::Value::String(a) if a == "auto" => None,
            toml::Value::Boolean(b) => Some(*b),
            _ => {
                return Err(self.err(
                    name,
                    k,
                    format!("expected true, false or \"auto\", got {v}"),
                ))
            }
        })
    }

    /// A smoothing as `leet export --smoothing` takes it, written back in its
    /// canonical spelling.
    fn smoothing(&self, table: &str, key: &str, v: &toml::Value) -> Result<String, SettingsError> {
        let text = self.text(table, key, v)?;
        text.parse::<Smoothing>()
            .map(|s| s.to_string())
            .map_err(|why| self.err(table, key, why))
    }

    /// An x axis as `XAxis` spells it (`step`, `rel`, `wall`, `metric:NAME`).
    fn x_axis(&self, table: &str, key: &str, v: &toml::Value) -> Result<String, SettingsError> {
        let text = self.text(table, key, v)?;
        text.parse::<XAxis>()
            .map(|x| x.to_string())
            .map_err(|why| self.err(table, key, why))
    }

    /// `[<section>.<key>]`: metric key = a value `check` reads (`smoothing`,
    /// `x_axis`).
    fn charts(
        &self,
        section: &str,
        key: &str,
        v: &toml::Value,
        check: impl Fn(&Self, &str, &str, &toml::Value) -> Result<String, SettingsError>,
    ) -> Result<BTreeMap<String, String>, SettingsError> {
        let body = self.table(section, key, v)?;
        if body.len() > MAX_SCALES {
            return Err(self.err(
                section,
                key,
                format!("{} charts, more than the {MAX_SCALES} kept", body.len()),
            ));
        }
        let table = format!("{section}.{key}");
        let mut out = BTreeMap::new();
        for (chart, v) in body {
            if chart.len() > MAX_KEY_BYTES {
                return Err(self.err(
                    &table,
                    chart,
                    format!("a chart key longer than {MAX_KEY_BYTES} bytes"),
                ));
            }
            out.insert(chart.clone(), check(self, &table, chart, v)?);
        }
        Ok(out)
    }

    /// A list of names: section prefixes, chart keys (strings, at most [`MAX_SCALES`] of at most
    /// [`MAX_KEY_BYTES`] each).
    fn names(&self, table: &str, key: &str, v: &toml::Value) -> Result<Vec<String>, SettingsError> {
        let toml::Value::Array(items) = v else {
            return Err(self.err(
                table,
                key,
                format!("expected a list of names, got {}", type_name(v)),
            ));
        };
        if items.len() > MAX_SCALES {
            return Err(self.err(table, key, format!("more than {MAX_SCALES} names")));
        }
        items
            .iter()
            .map(|item| match item {
                toml::Value::String(p) if p.len() <= MAX_KEY_BYTES => Ok(p.clone()),
                toml::Value::String(_) => Err(self.err(
                    table,
                    key,
                    format!("a name longer than {MAX_KEY_BYTES} bytes"),
                )),
                other => Err(self.err(
                    table,
                    key,
                    format!("expected a list of strings, got {} in it", type_name(other)),
                )),
            })
            .collect()
    }

    fn scales(
        &self,
        table: &str,
        key: &str,
        v: &toml::Value,
        system: bool,
    ) -> Result<BTreeMap<String, YScale>, SettingsError> {
        let parent = table.rsplit_once('.').map_or(table, |(p, _)| p);
        let body = self.table(parent, key, v)?;
        if body.len() > MAX_SCALES {
            return Err(self.err(
                parent,
                key,
                format!("{} charts, more than the {MAX_SCALES} kept", body.len()),
            ));
        }
        let mut out = BTreeMap::new();
        for (chart, v) in body {
            if chart.len() > MAX_KEY_BYTES {
                return Err(self.err(
                    table,
                    chart,
                    format!("a chart key longer than {MAX_KEY_BYTES} bytes"),
                ));
            }
            if system && !chart.contains('|') {
                return Err(self.err(
                    table,
                    chart,
                    "a system chart is named \"<title>|<unit>\"".into(),
                ));
            }
            let scale = match self.text(table, chart, v)? {
                "linear" => YScale::Linear,
                "log" => YScale::Log,
                "heatmap" if system => YScale::Heatmap,
                other => {
                    let expected = if system {
                        "linear, log or heatmap"
                    } else {
                        "linear or log; the heatmap is for system charts"
                    };
                    return Err(self.err(
                        table,
                        chart,
                        format!("unknown y scale '{other}' (expected {expected})"),
                    ));
                }
            };
            if scale != YScale::Linear {
                out.insert(chart.clone(), scale);
            }
        }
        Ok(out)
    }

    fn filters(
        &self,
        section: &str,
        v: &toml::Value,
        part: Part,
    ) -> Result<Filters, SettingsError> {
        let body = self.table(section, "filters", v)?;
        let table = format!("{section}.filters");
        let mut f = Filters::default();
        for (key, v) in body {
            let slot = match key.as_str() {
                "metrics" => &mut f.metrics,
                "overview" => &mut f.overview,
                "system" if part != Part::Directory => &mut f.system,
                "system" => {
                    return Err(self.err(
                        &table,
                        key,
                        "the system filter is the same for every project, in \
                         [viewer.filters]"
                            .into(),
                    ))
                }
                _ => {
                    return Err(self.err(
                        &table,
                        key,
                        "unknown filter (expected metrics, overview or system)".into(),
                    ))
                }
            };
            let sub = format!("{table}.{key}");
            for (k, v) in self.table(&table, key, v)? {
                match k.as_str() {
                    "pattern" => slot.pattern = self.text(&sub, k, v)?.to_owned(),
                    "mode" => {
                        slot.glob = match self.text(&sub, k, v)? {
                            "regex" => false,
                            "glob" => true,
                            other => {
                                return Err(self.err(
                                    &sub,
                                    k,
                                    format!("unknown mode '{other}' (expected regex or glob)"),
                                ))
                            }
                        }
                    }
                    _ => {
                        return Err(self.err(
                            &sub,
                            k,
                            "unknown key (expected pattern or mode)".into(),
                        ))
                    }
                }
            }
            if slot.pattern.chars().count() > MAX_PATTERN_CHARS {
                return Err(self.err(
                    &sub,
                    "pattern",
                    format!("longer than {MAX_PATTERN_CHARS} characters"),
                ));
            }
            let mut check = FilterState::default();
            check.glob = slot.glob;
            check.set_draft(slot.pattern.clone());
            if let Some(e) = check.error {
                return Err(self.err(&sub, "pattern", format!("not a valid regex: {e}")));
            }
        }
        Ok(f)
    }
}

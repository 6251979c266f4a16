//! Two leets may share one settings file: each writes only what it changed,
//! laid over the file as it is when written. What changed is the difference,
//! key by key, between the text this instance last knew the file to hold and
//! the text its settings give now (tables such as `[viewer.y_scale]` entry by
//! entry, a filter's pattern and mode together); the runtime reads the file
//! under a lock and writes [`merged_text`] back. The changes are made in the
//! file's own text (`toml_edit`): the user's comments, order and layout stay,
//! and a changed value keeps the comment after it.

use std::path::Path;

use toml::{Table, Value};
use toml_edit::{DocumentMut, Item, TableLike};

use super::parse::parse_table;
use super::{Config, SettingsError};

/// The settings file's new text: the changes from `base` to `text` (both from
/// [`Config::to_toml`]) laid over `current`, the file as it is now (None: there
/// is none, so over the documented defaults). None when the file now says
/// `save = false`: it is not to be written.
///
/// # Errors
/// `current` does not parse, or the merged settings are refused (a message
/// naming `file`, sanitized).
pub fn merged_text(
    file: &Path,
    base: &str,
    text: &str,
    current: Option<&str>,
) -> Result<Option<String>, String> {
    let err = |e: SettingsError| e.to_string();
    let defaults;
    let now_text = match current {
        Some(t) => {
            if !Config::parse(file, t).map_err(err)?.save {
                return Ok(None);
            }
            t
        }
        None => {
            defaults = Config::default().to_toml();
            &defaults
        }
    };
    let mut doc: DocumentMut = now_text.parse().map_err(|e: toml_edit::TomlError| {
        err(SettingsError::Syntax {
            file: file.to_owned(),
            at: None,
            reason: e.message().trim_end().to_owned(),
        })
    })?;
    let before = parse_table(file, base).map_err(err)?;
    let after = parse_table(file, text).map_err(err)?;
    apply(doc.as_table_mut(), &before, &after, Under::File);
    let out = doc.to_string();
    // What is written loads back.
    Config::parse(file, &out).map_err(err)?;
    Ok(Some(out))
}

/// Where a table being changed sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Under {
    /// A `[table]` of the file (its new sub-tables are `[headers]` too).
    File,
    /// Inside an inline table (`{ … }`): its new sub-tables are inline.
    Inline,
    /// A `filters` table: its entries change whole.
    Filters,
}

/// Lay the changes from `before` to `after` over `now`: a key added or changed
/// takes its new value (a changed one keeps its comments), a key removed is
/// removed, the rest of `now` stays as written. Tables are changed entry by
/// entry, except a filter (an entry of a `filters` table), whose pattern and
/// mode go together.
fn apply(now: &mut dyn TableLike, before: &Table, after: &Table, under: Under) {
    let empty = Table::new();
    for (key, new) in after {
        let old = before.get(key);
        if old == Some(new) {
            continue;
        }
        match (old, new) {
            (None | Some(Value::Table(_)), Value::Table(new_t)) if under != Under::Filters => {
                let old_t = match old {
                    Some(Value::Table(t)) => t,
                    _ => &empty,
                };
                let sub = now.entry(key).or_insert_with(|| new_table(under));
                if !sub.is_table_like() {
                    *sub = new_table(under);
                }
                let inner = if key == "filters" {
                    Under::Filters
                } else if sub.is_inline_table() {
                    Under::Inline
                } else {
                    Under::File
                };
                if let Some(sub) = sub.as_table_like_mut() {
                    apply(sub, old_t, new_t, inner);
                }
            }
            _ => set(now, key, new),
        }
    }
    for (key, old) in before {
        if after.contains_key(key) {
            continue;
        }
        let inner = if key == "filters" {
            Under::Filters
        } else {
            Under::Inline
        };
        match (old, now.get_mut(key).and_then(Item::as_table_like_mut)) {
            (Value::Table(old_t), Some(sub)) if under != Under::Filters => {
                apply(sub, old_t, &empty, inner);
                if sub.is_empty() {
                    now.remove(key);
                }
            }
            _ => {
                now.remove(key);
            }
        }
    }
}

/// A new table under `under`: a `[header]` one (left out of the text while it
/// only holds tables), or an inline one.
fn new_table(under: Under) -> Item {
    if under == Under::File {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        Item::Table(t)
    } else {
        Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new()))
    }
}

/// `key` set to `v`; a value it replaces keeps its comments and spacing.
fn set(now: &mut dyn TableLike, key: &str, v: &Value) {
    let mut new = edit_value(v);
    if let Some(Item::Value(old)) = now.get(key) {
        *new.decor_mut() = old.decor().clone();
    }
    now.insert(key, Item::Value(new));
}

/// A parsed TOML value as an editable one (tables inline).
fn edit_value(v: &Value) -> toml_edit::Value {
    match v {
        Value::String(s) => s.as_str().into(),
        Value::Integer(i) => (*i).into(),
        Value::Float(f) => (*f).into(),
        Value::Boolean(b) => (*b).into(),
        Value::Datetime(d) => d
            .to_string()
            .parse()
            .unwrap_or_else(|_| d.to_string().into()),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(edit_value).collect()),
        Value::Table(t) => toml_edit::Value::InlineTable(
            t.iter().map(|(k, v)| (k.as_str(), edit_value(v))).collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::charts::grid::YScale;
    use crate::ui::settings::{FilterSetting, Settings};

    fn merged(
        base: &Config,
        now: &Config,
        current: Option<&str>,
    ) -> Result<Option<Config>, String> {
        let file = Path::new("/cfg/config.toml");
        let text = merged_text(file, &base.to_toml(), &now.to_toml(), current)?;
        Ok(text.map(|t| Config::parse(file, &t).unwrap()))
    }

    #[test]
    fn a_filter_changes_whole_and_other_keys_of_its_table_stay() {
        let base = Config::default();
        let mut mine = base.clone();
        mine.live.filters.system = FilterSetting {
            pattern: "gpu*".into(),
            glob: true,
        };
        // Another instance set the metrics filter (a regex) meanwhile.
        let mut theirs = base.clone();
        theirs.live.filters.metrics = FilterSetting {
            pattern: "^loss$".into(),
            glob: false,
        };
        let out = merged(&base, &mine, Some(&theirs.to_toml()))
            .unwrap()
            .unwrap();
        assert_eq!(out.live.filters.system, mine.live.filters.system);
        assert_eq!(out.live.filters.metrics, theirs.live.filters.metrics);
        // No file: the changes over the defaults.
        let out = merged(&base, &mine, None).unwrap().unwrap();
        assert_eq!(out.live, mine.live);
    }

    #[test]
    fn the_users_comments_order_and_other_keys_are_kept() {
        let file = Path::new("/cfg/config.toml");
        let current = "\
# my leet settings
[live]
# the process table wants room
console = true   # on for the training box
rows = 2

[viewer]
rows = 3 # three rows of charts
band = false
";
        let base = Config::parse(file, current).unwrap();
        let mut mine = base.clone();
        mine.viewer.rows = Some(4);
        mine.viewer.y_scale.insert("train/loss".into(), YScale::Log);
        mine.projects.insert("/data/wandb".into(), {
            let mut s = Settings::defaults(false);
            s.smoothing_all = "ema:0.6".into();
            s
        });
        let out = merged_text(file, &base.to_toml(), &mine.to_toml(), Some(current))
            .unwrap()
            .unwrap();
        // Every comment, in its place; the changed value keeps its own.
        for kept in [
            "# my leet settings\n[live]\n# the process table wants room\n",
            "console = true   # on for the training box\nrows = 2\n",
            "rows = 4 # three rows of charts\nband = false\n",
        ] {
            assert!(out.contains(kept), "{kept:?} not in:\n{out}");
        }
        assert!(out.find("[live]") < out.find("[viewer]"), "{out}");
        let back = Config::parse(file, &out).unwrap();
        assert_eq!(back, mine);
        // Nothing else of the defaults was written into the user's file.
        assert!(!out.contains("metrics_grid"), "{out}");
    }

    #[test]
    fn a_new_file_is_the_documented_defaults_with_the_change() {
        let file = Path::new("/cfg/config.toml");
        let base = Config::default();
        let mut mine = base.clone();
        mine.live.console = true;
        let out = merged_text(file, &base.to_toml(), &mine.to_toml(), None)
            .unwrap()
            .unwrap();
        assert!(out.starts_with("# leet settings."), "{out}");
        assert!(out.contains("your comments and order are kept"), "{out}");
        assert_eq!(Config::parse(file, &out).unwrap(), mine);
    }

    #[test]
    fn a_file_that_says_save_false_or_does_not_parse_is_left_as_it_is() {
        let base = Config::default();
        let mut mine = base.clone();
        mine.viewer.rows = Some(2);
        let off = Config {
            save: false,
            ..Config::default()
        };
        assert_eq!(merged(&base, &mine, Some(&off.to_toml())), Ok(None));
        let e = merged(&base, &mine, Some("[viewer\nrows = ")).unwrap_err();
        assert!(e.contains("/cfg/config.toml:1:8: not valid TOML"), "{e}");
        let e = merged(&base, &mine, Some("[viewer]\nrowz = 2\n")).unwrap_err();
        assert!(e.contains("key 'rowz'"), "{e}");
    }
}

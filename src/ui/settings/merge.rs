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

use super::directory::DIRECTORY_KEYS;
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
    // The file is fine: what is refused from here on is leet's own doing, not
    // to be told as the user's file being broken (nor pointed at in it).
    let own = |e: SettingsError| format!("{}: {}", shown(file), own_error(e));
    let before = parse_table(file, base).map_err(own)?;
    let after = parse_table(file, text).map_err(own)?;
    move_into_projects(doc.as_table_mut(), &before, &after);
    apply(doc.as_table_mut(), &before, &after, Under::File);
    let out = doc.to_string();
    // What is written loads back.
    Config::parse(file, &out).map_err(own)?;
    Ok(Some(out))
}

/// Why leet's own settings would not load back, without the place in a file
/// (they are not the file's text): the file is left as it is.
fn own_error(e: SettingsError) -> String {
    let why = match e {
        SettingsError::Io { reason, .. }
        | SettingsError::Refused { reason, .. }
        | SettingsError::Syntax { reason, .. } => crate::text::sanitize(&reason),
        SettingsError::Value {
            table, key, reason, ..
        } => format!(
            "[{}] key '{}': {}",
            crate::text::sanitize(&table),
            super::clean(&key, 80),
            crate::text::sanitize(&reason)
        ),
    };
    format!(
        "not written: the settings to save would not load back ({why}); the file is left as it is"
    )
}

fn shown(file: &Path) -> String {
    crate::text::sanitize_path(file)
}

/// The per-directory keys that moved from `[viewer]` into a project's table (an
/// older file's, taken over by the first project opened: see
/// `directory.rs`) move in the file's text too, with their comments, and a
/// table they leave empty goes.
fn move_into_projects(doc: &mut toml_edit::Table, before: &Table, after: &Table) {
    let viewer = |t: &Table| t.get("viewer").and_then(Value::as_table).cloned();
    let (Some(was), Some(is)) = (viewer(before), viewer(after)) else {
        return;
    };
    let old_projects = was.get("projects").and_then(Value::as_table);
    let Some(projects) = is.get("projects").and_then(Value::as_table) else {
        return;
    };
    let at = |t: &Table, path: &[&str]| -> Option<Value> {
        let (last, up) = path.split_last()?;
        let mut t = t;
        for k in up {
            t = t.get(*k)?.as_table()?;
        }
        t.get(*last).cloned()
    };
    for (dir, own) in projects {
        if old_projects.is_some_and(|o| o.contains_key(dir)) {
            continue;
        }
        let Some(own) = own.as_table() else { continue };
        let mut paths: Vec<Vec<&str>> = DIRECTORY_KEYS
            .iter()
            .filter(|k| **k != "filters")
            .map(|k| vec![*k])
            .collect();
        paths.push(vec!["filters", "metrics"]);
        paths.push(vec!["filters", "overview"]);
        // Gone from [viewer] and, unless at its default (left out of a project's
        // table), in the project's with the same value.
        for path in paths {
            let moved = at(&was, &path);
            let there = at(own, &path);
            if moved.is_some() && at(&is, &path).is_none() && (there.is_none() || there == moved) {
                move_item(doc, &path, dir);
            }
        }
    }
}

/// Move the item at `viewer.<path>` of the file to `viewer.projects.<dir>.<path>`,
/// its key's and value's comments with it (none: nothing to move).
fn move_item(doc: &mut toml_edit::Table, path: &[&str], dir: &str) {
    let Some((last, up)) = path.split_last() else {
        return;
    };
    let Some(mut from) = doc.get_mut("viewer").and_then(Item::as_table_like_mut) else {
        return;
    };
    for k in up {
        let Some(t) = from.get_mut(k).and_then(Item::as_table_like_mut) else {
            return;
        };
        from = t;
    }
    let Some(key) = from.key(last).cloned() else {
        return;
    };
    let Some(item) = from.remove(last) else {
        return;
    };
    // A table this leaves empty goes (its header's comment, if any, stays).
    if !up.is_empty() && from.is_empty() {
        if let Some(v) = doc.get_mut("viewer").and_then(Item::as_table_like_mut) {
            if v.get(up[0]).is_some_and(|t| !commented(t)) {
                v.remove(up[0]);
            }
        }
    }
    let mut to = doc
        .entry("viewer")
        .or_insert_with(|| new_table(Under::File));
    for k in ["projects", dir].iter().chain(up) {
        let under = if to.is_inline_table() {
            Under::Inline
        } else {
            Under::File
        };
        let Some(t) = to.as_table_like_mut() else {
            return;
        };
        to = t.entry(k).or_insert_with(|| new_table(under));
    }
    let inline = to.is_inline_table();
    let Some(to) = to.as_table_like_mut() else {
        return;
    };
    let item = if inline {
        match item.into_value() {
            Ok(v) => Item::Value(v),
            Err(_) => return,
        }
    } else {
        item
    };
    to.entry_format(&key).or_insert(item);
}

/// Whether a table's header carries a comment of the user's.
fn commented(item: &Item) -> bool {
    let prefix = match item {
        Item::Table(t) => t.decor().prefix(),
        Item::Value(v) => v.decor().prefix(),
        _ => None,
    };
    prefix
        .and_then(|p| p.as_str())
        .is_some_and(|p| p.contains('#'))
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
                let had = sub.as_table_like().map_or(0, TableLike::len);
                if let Some(sub) = sub.as_table_like_mut() {
                    apply(sub, old_t, new_t, inner);
                }
                // Emptied by the changes: no empty table is left behind.
                if had > 0
                    && sub.as_table_like().is_some_and(TableLike::is_empty)
                    && !commented(sub)
                {
                    now.remove(key);
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

/// `key` set to `v`; a value it replaces keeps its comments and spacing, the
/// comment above its key too (replacing the entry would drop the key's).
fn set(now: &mut dyn TableLike, key: &str, v: &Value) {
    let mut new = edit_value(v);
    match now.get_mut(key) {
        Some(Item::Value(old)) => {
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        Some(item) => *item = Item::Value(new),
        None => {
            now.insert(key, Item::Value(new));
        }
    }
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
    fn a_comment_above_a_changed_key_stays() {
        let file = Path::new("/cfg/config.toml");
        let current = "# top comment\n[viewer]\n# grid comment\ncolumns = 2   # trailing\n\
                       # guides comment\nguides = \"dots\"\n";
        let base = Config::parse(file, current).unwrap();
        let mut mine = base.clone();
        mine.viewer.columns = Some(3);
        mine.viewer.guides = crate::ui::charts::grid::Guides::Lines;
        let out = merged_text(file, &base.to_toml(), &mine.to_toml(), Some(current))
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            "# top comment\n[viewer]\n# grid comment\ncolumns = 3   # trailing\n\
             # guides comment\nguides = \"lines\"\n"
        );
    }

    #[test]
    fn an_older_file_moved_into_a_project_keeps_its_comments_and_no_empty_table() {
        let file = Path::new("/cfg/config.toml");
        let current = "\
# my old file
[viewer]
# cols
columns = 2
# every chart by its step
x_axis_all = \"step\"

[viewer.y_scale]
# log for acc
acc = \"log\"

[viewer.filters]
metrics = { pattern = \"acc\", mode = \"regex\" } # keep acc
";
        let loaded = Config::parse(file, current).unwrap();
        let mut moved = loaded.clone();
        assert!(moved.move_into(Path::new("/runs/tiny/wandb")));
        let out = merged_text(file, &loaded.to_toml(), &moved.to_toml(), Some(current))
            .unwrap()
            .unwrap();
        assert_eq!(Config::parse(file, &out).unwrap(), moved, "{out}");
        for kept in [
            "# my old file\n[viewer]\n# cols\ncolumns = 2\n",
            "# log for acc\nacc = \"log\"\n",
            "# every chart by its step\nx_axis_all = \"step\"\n",
            "metrics = { pattern = \"acc\", mode = \"regex\" } # keep acc\n",
        ] {
            assert!(out.contains(kept), "{kept:?} not in:\n{out}");
        }
        assert!(!out.contains("[viewer.filters]"), "{out}");
        assert!(!out.contains("[viewer.y_scale]"), "{out}");
    }

    #[test]
    fn any_project_path_or_metric_key_is_written_as_valid_toml_and_reads_back() {
        let file = Path::new("/cfg/config.toml");
        let odd = "/tmp/x/weird/new\nline \"q\" back\\slash\u{1}\u{7f}\t\u{85}é/wandb";
        let base = Config::default();
        let mut mine = base.clone();
        let mut s = Settings::defaults(false);
        s.y_scale.insert("a\nb \"c\"\\".into(), YScale::Log);
        s.smoothing.insert("x\ry".into(), "ema:0.6".into());
        mine.projects.insert(odd.into(), s);
        let text = mine.to_toml();
        assert_eq!(Config::parse(file, &text).unwrap(), mine, "{text}");
        // Laid over a file of the user's, too (keys made by `toml_edit`).
        for current in [None, Some("[viewer]\nrows = 2\n")] {
            let out = merged_text(file, &base.to_toml(), &text, current)
                .unwrap()
                .unwrap();
            let back = Config::parse(file, &out).unwrap();
            assert_eq!(back.projects, mine.projects, "{out}");
            assert!(!out.contains("\"\"\""), "{out}");
        }
    }

    #[test]
    fn settings_leet_cannot_write_do_not_blame_the_file() {
        let file = Path::new("/cfg/config.toml");
        let base = Config::default();
        let mut mine = base.clone();
        mine.viewer.filters.metrics = FilterSetting {
            pattern: "[".into(),
            glob: false,
        };
        let e = merged_text(
            file,
            &base.to_toml(),
            &mine.to_toml(),
            Some("rows = 1\n[viewer]\n"),
        )
        .err();
        // (The file is refused first: `rows` is not a top-level key.)
        assert!(e.is_some());
        let e =
            merged_text(file, &base.to_toml(), &mine.to_toml(), Some("[viewer]\n")).unwrap_err();
        assert!(e.starts_with("/cfg/config.toml: not written:"), "{e}");
        assert!(e.contains("not a valid regex"), "{e}");
        assert_eq!(e.matches("/cfg/config.toml").count(), 1, "{e}");
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

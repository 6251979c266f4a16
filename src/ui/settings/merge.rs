//! Two leets may share one settings file: each writes only what it changed,
//! laid over the file as it is when written. What changed is the difference,
//! key by key, between the text this instance last knew the file to hold and
//! the text its settings give now (tables such as `[viewer.y_scale]` entry by
//! entry, a filter's pattern and mode together); the runtime reads the file
//! under a lock and writes [`merged_text`] back.

use std::path::Path;

use toml::{Table, Value};

use super::parse::parse_table;
use super::Config;

/// The settings file's new text: the changes from `base` to `text` (both from
/// [`Config::to_toml`]) laid over `current`, the file as it is now (None: there
/// is none, so over the defaults). None when the file now says `save = false`:
/// it is not to be written.
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
    let err = |e: super::SettingsError| e.to_string();
    let mut now = match current {
        Some(t) => parse_table(file, t).map_err(err)?,
        None => Table::new(),
    };
    if current.is_some() && !Config::from_table(file, &now).map_err(err)?.save {
        return Ok(None);
    }
    let before = parse_table(file, base).map_err(err)?;
    let after = parse_table(file, text).map_err(err)?;
    apply(&mut now, &before, &after, false);
    Ok(Some(Config::from_table(file, &now).map_err(err)?.to_toml()))
}

/// Lay the changes from `before` to `after` over `now`: a key added or changed
/// takes its new value, a key removed is removed, the rest of `now` stays.
/// Tables are changed entry by entry, except a filter (an entry of a
/// `filters` table, `leaves`), whose pattern and mode go together.
fn apply(now: &mut Table, before: &Table, after: &Table, leaves: bool) {
    let empty = Table::new();
    for (key, new) in after {
        let old = before.get(key);
        if old == Some(new) {
            continue;
        }
        match (old, new) {
            (None | Some(Value::Table(_)), Value::Table(new_t)) if !leaves => {
                let old_t = match old {
                    Some(Value::Table(t)) => t,
                    _ => &empty,
                };
                let sub = now
                    .entry(key.clone())
                    .or_insert_with(|| Value::Table(Table::new()));
                if !sub.is_table() {
                    *sub = Value::Table(Table::new());
                }
                if let Value::Table(sub) = sub {
                    apply(sub, old_t, new_t, key == "filters");
                }
            }
            _ => {
                now.insert(key.clone(), new.clone());
            }
        }
    }
    for (key, old) in before {
        if after.contains_key(key) {
            continue;
        }
        match (old, now.get_mut(key)) {
            (Value::Table(old_t), Some(Value::Table(sub))) if !leaves => {
                apply(sub, old_t, &empty, key == "filters");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::settings::FilterSetting;

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
        assert!(e.contains("/cfg/config.toml: not valid TOML"), "{e}");
        let e = merged(&base, &mine, Some("[viewer]\nrowz = 2\n")).unwrap_err();
        assert!(e.contains("key 'rowz'"), "{e}");
    }
}

//! The key map: keymap.toml (one table per mode, `"key" = "action"`) parsed and
//! validated into `Keymap: (Mode, Key) → Action`. A user file is laid over the
//! shipped defaults; every problem is an error naming the file and the key. The
//! file is read once at startup (`file.rs`), before the loop.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::overlay::{Keys, Kind};

mod error;
mod file;
mod help;
mod hint;

pub use help::{help_lines, help_lines_for, HelpFor};
pub use hint::hint_line;

pub use error::KeymapError;
pub use file::{config_home, read_config, MAX_KEYMAP_BYTES};

/// The shipped default key map (also its documentation).
pub const DEFAULT_TOML: &str = include_str!("../../../keymap.toml");

/// Key-map modes: each has its own table (keymap.toml section). An overlay's
/// mode comes from its row in `overlays!` (`ui/overlay/mod.rs`), not from a list
/// here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Normal,
    Filter,
    Fullscreen,
    /// An overlay with a section of its own.
    Overlay(Kind),
}

impl Mode {
    /// The modes with a table: normal, filter, full screen, then each overlay's
    /// section in the overlays' order.
    pub const ALL: [Mode; Mode::COUNT] = {
        let mut all = [Mode::Normal; Mode::COUNT];
        all[1] = Mode::Filter;
        all[2] = Mode::Fullscreen;
        let (mut i, mut n) = (0, 3);
        while i < Kind::ALL.len() {
            if let Keys::Own(_) = Kind::ALL[i].keys() {
                all[n] = Mode::Overlay(Kind::ALL[i]);
                n += 1;
            }
            i += 1;
        }
        all
    };

    const COUNT: usize = {
        let (mut i, mut n) = (0, 3);
        while i < Kind::ALL.len() {
            if let Keys::Own(_) = Kind::ALL[i].keys() {
                n += 1;
            }
            i += 1;
        }
        n
    };

    /// Its keymap.toml section.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Filter => "filter",
            Mode::Fullscreen => "fullscreen",
            Mode::Overlay(k) => match k.keys() {
                Keys::Own(s) => s.name,
                Keys::Filter => "filter",
            },
        }
    }

    /// Its table's place in the key map (None: an overlay typed into the filter,
    /// which reads the filter's).
    fn index(self) -> Option<usize> {
        Mode::ALL.iter().position(|&m| m == self)
    }
}

/// A normalized key: characters carry no SHIFT; CTRL+letter is lowercase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    /// Normalize a code and modifiers the way terminals disagree about them.
    #[must_use]
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        let mut mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Char(c) => {
                // `shift+n` and a terminal's Char('n')+SHIFT both mean 'N'.
                let c = if mods.contains(KeyModifiers::SHIFT) {
                    c.to_ascii_uppercase()
                } else {
                    c
                };
                mods.remove(KeyModifiers::SHIFT);
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            other => other,
        };
        Self { code, mods }
    }

    /// From a terminal key event.
    #[must_use]
    pub fn from_event(e: &KeyEvent) -> Self {
        Self::new(e.code, e.modifiers)
    }

    #[must_use]
    pub fn char(c: char) -> Self {
        Self::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[must_use]
    pub fn ctrl(c: char) -> Self {
        Self::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// Whether this is Ctrl+C (quits in every mode).
    #[must_use]
    pub fn is_ctrl_c(&self) -> bool {
        self.code == KeyCode::Char('c') && self.mods.contains(KeyModifiers::CONTROL)
    }

    /// Parse keymap.toml spelling (`n`, `N`, `ctrl+l`, `pgdown`, `shift+tab`, `\\`).
    ///
    /// # Errors
    /// The reason the text is not a key.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        // Compared in place: lowercasing what is left on every modifier made a
        // long `ctrl+ctrl+…` key quadratic.
        let starts = |s: &str, p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
        loop {
            let (m, len) = if starts(rest, "ctrl+") {
                (KeyModifiers::CONTROL, 5)
            } else if starts(rest, "alt+") {
                (KeyModifiers::ALT, 4)
            } else if starts(rest, "shift+") {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            if rest.len() == len {
                break;
            }
            mods |= m;
            rest = &rest[len..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (None, _) => return Err("empty key".into()),
            (Some(c), None) if !c.is_control() => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => {
                    if mods.contains(KeyModifiers::SHIFT) {
                        KeyCode::BackTab
                    } else {
                        KeyCode::Tab
                    }
                }
                "backtab" => KeyCode::BackTab,
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" | "ins" => KeyCode::Insert,
                "space" => KeyCode::Char(' '),
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pgup" | "pageup" => KeyCode::PageUp,
                "pgdown" | "pgdn" | "pagedown" => KeyCode::PageDown,
                f if f.starts_with('f') && f.len() > 1 => match f[1..].parse::<u8>() {
                    Ok(n @ 1..=24) => KeyCode::F(n),
                    _ => return Err(format!("unknown key name '{rest}'")),
                },
                _ => return Err(format!("unknown key name '{rest}'")),
            },
        };
        Ok(Self::new(code, mods))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl+")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt+")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("shift+")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("backtab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::Insert => f.write_str("insert"),
            KeyCode::Up => f.write_str("up"),
            KeyCode::Down => f.write_str("down"),
            KeyCode::Left => f.write_str("left"),
            KeyCode::Right => f.write_str("right"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdown"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Key → action, per mode, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    modes: [Vec<(Key, Action)>; Mode::COUNT],
}

impl Default for Keymap {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Keymap {
    /// The built-in defaults: the action table's keys, in keymap.toml's order.
    #[must_use]
    pub fn builtin() -> Self {
        static DEFAULTS: OnceLock<Keymap> = OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                let mut k = Self::from_table();
                // keymap.toml binds the same keys (`default_keys_are_keymap_toml`);
                // laid over, it orders them as written, as `--print-keymap` prints
                // them. Were it to fail, the table's map stands.
                let _ = k.overlay(Path::new("keymap.toml"), DEFAULT_TOML);
                k
            })
            .clone()
    }

    /// Every action's default keys from the action table, in table order.
    fn from_table() -> Self {
        let mut k = Keymap {
            modes: Default::default(),
        };
        for action in Action::ALL {
            for &(mode_name, keys) in action.default_keys() {
                let Some(mode) = Mode::ALL.into_iter().find(|m| m.name() == mode_name) else {
                    continue;
                };
                let Some(i) = mode.index() else {
                    continue;
                };
                for key in keys.iter().filter_map(|k| Key::parse(k).ok()) {
                    k.modes[i].push((key, action));
                }
            }
        }
        k
    }

    /// The action of `key` in `mode`: its own binding there, else (in an overlay)
    /// the key's normal binding where that opens and closes the overlay (see
    /// [`Keymap::carried`]).
    #[must_use]
    pub fn action(&self, mode: Mode, key: &Key) -> Option<Action> {
        self.bindings(mode)
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, a)| a)
            .or_else(|| self.carried(mode, key))
    }

    /// A key bound in normal mode to an overlay's toggle (`help`, `toggle_stats`,
    /// `toggle_media`, `inspect_records`) that the overlay's own table binds too
    /// (to close it) but not under this key: the key closes what it opened, so a
    /// key map that moves `help` to `F` need not move it in `[help]` as well.
    fn carried(&self, mode: Mode, key: &Key) -> Option<Action> {
        if !matches!(mode, Mode::Overlay(_)) {
            return None;
        }
        let (_, a) = *self.bindings(Mode::Normal).iter().find(|(k, _)| k == key)?;
        let toggle = matches!(
            a,
            Action::Help | Action::ToggleStats | Action::ToggleMedia | Action::InspectRecords
        );
        let own = self.bindings(mode).iter().any(|&(_, b)| b == a);
        let taken = self.bindings(mode).iter().any(|(k, _)| k == key);
        (toggle && own && !taken).then_some(a)
    }

    /// Bindings of one mode, in order.
    #[must_use]
    pub fn bindings(&self, mode: Mode) -> &[(Key, Action)] {
        mode.index().map_or(&[], |i| &self.modes[i])
    }

    /// Keys bound to `action` in `mode`, those carried from normal mode after
    /// its own (see [`Keymap::carried`]).
    pub fn keys_for(&self, mode: Mode, action: Action) -> impl Iterator<Item = Key> + '_ {
        let own = self
            .bindings(mode)
            .iter()
            .filter(move |(_, a)| *a == action)
            .map(|&(k, _)| k);
        let normal: &[(Key, Action)] = if mode == Mode::Normal {
            &[]
        } else {
            self.bindings(Mode::Normal)
        };
        let carried = normal
            .iter()
            .filter(move |&&(k, a)| a == action && self.carried(mode, &k) == Some(a))
            .map(|&(k, _)| k);
        own.chain(carried)
    }

    /// Lay a keymap.toml text over this map. `file` names it in errors.
    ///
    /// # Errors
    /// Invalid TOML, an unknown mode or action, an unparsable key, or a key bound
    /// to two actions in the same mode.
    pub fn overlay(&mut self, file: &Path, text: &str) -> Result<(), KeymapError> {
        self.overlay_text(file, text).map_err(|e| e.located(text))
    }

    /// [`Keymap::overlay`], its errors not yet placed in the file.
    fn overlay_text(&mut self, file: &Path, text: &str) -> Result<(), KeymapError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| KeymapError::Syntax {
                    file: file.to_owned(),
                    at: e.span().map(|r| crate::text::line_col(text, r.start)),
                    reason: e.message().trim_end().to_owned(),
                })?;
        let mut staged = self.clone();
        for (mode_name, body) in &table {
            let Some(mode) = Mode::ALL.into_iter().find(|m| m.name() == mode_name) else {
                return Err(KeymapError::UnknownMode {
                    file: file.to_owned(),
                    at: None,
                    mode: mode_name.clone(),
                });
            };
            let bind_err = |key: &str, reason: String| KeymapError::Binding {
                file: file.to_owned(),
                at: None,
                mode: mode_name.clone(),
                key: key.to_owned(),
                reason,
            };
            let Some(body) = body.as_table() else {
                return Err(bind_err(mode_name, "a mode must be a table".into()));
            };
            // Linear in the number of bindings: a hash of the keys seen so far, and
            // one pass over the mode's list to drop the keys rebound.
            let mut seen: Vec<(Key, Action)> = Vec::with_capacity(body.len());
            let mut first: HashMap<Key, (&str, Action)> = HashMap::with_capacity(body.len());
            for (key_text, value) in body {
                let Some(name) = value.as_str() else {
                    return Err(bind_err(
                        key_text,
                        format!("action must be a string, got '{value}'"),
                    ));
                };
                let action = Action::from_name(name)
                    .ok_or_else(|| bind_err(key_text, format!("unknown action '{name}'")))?;
                let key = Key::parse(key_text).map_err(|r| bind_err(key_text, r))?;
                // The loop quits on Ctrl+C before it looks at the map (a way out
                // that no file can take away), so another binding would be listed
                // in --print-keymap and the help, yet never act.
                if key.is_ctrl_c() && action != Action::Quit {
                    let what = if action == Action::None {
                        "cannot be unbound".to_owned()
                    } else {
                        format!("cannot be bound to '{}'", action.name())
                    };
                    return Err(bind_err(
                        key_text,
                        format!("ctrl+c always quits, in every mode; it {what}"),
                    ));
                }
                if let Some(&(other_text, other)) = first.get(&key) {
                    if other != action {
                        return Err(bind_err(
                            key_text,
                            format!(
                                "bound to both '{}' and '{}' (as '{other_text}')",
                                other.name(),
                                action.name()
                            ),
                        ));
                    }
                } else {
                    first.insert(key, (key_text, action));
                }
                seen.push((key, action));
            }
            // A key given twice (as `N` and `shift+n`) lands where it was given last.
            let mut last: HashMap<Key, usize> = HashMap::with_capacity(seen.len());
            for (i, (key, _)) in seen.iter().enumerate() {
                last.insert(*key, i);
            }
            let Some(i) = mode.index() else {
                continue;
            };
            let list = &mut staged.modes[i];
            list.retain(|(k, _)| !last.contains_key(k));
            for (i, (key, action)) in seen.into_iter().enumerate() {
                if action != Action::None && last.get(&key) == Some(&i) {
                    list.push((key, action));
                }
            }
        }
        *self = staged;
        Ok(())
    }

    /// keymap.toml text of this map.
    #[must_use]
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        for mode in Mode::ALL {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&format!("[{}]\n", mode.name()));
            for (k, a) in self.bindings(mode) {
                let key = k.to_string().replace('\\', "\\\\").replace('"', "\\\"");
                s.push_str(&format!("\"{key}\" = \"{}\"\n", a.name()));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        Keymap::default()
            .overlay(Path::new("k.toml"), text)
            .unwrap_err()
            .to_string()
    }

    /// `help` moved to another key in normal mode: that key closes the help too,
    /// and the help lists it; keys the help's own table binds keep their action
    /// there, and a key moved to something else carries nothing.
    #[test]
    fn a_key_that_opens_an_overlay_closes_it() {
        let mut k = Keymap::default();
        k.overlay(
            Path::new("k.toml"),
            "[normal]\nF = \"help\"\nh = \"quit\"\nX = \"toggle_stats\"\n",
        )
        .unwrap();
        let key = |s: &str| Key::parse(s).unwrap();
        let help = Mode::Overlay(Kind::Help);
        assert_eq!(k.action(Mode::Normal, &key("F")), Some(Action::Help));
        assert_eq!(k.action(help, &key("F")), Some(Action::Help));
        assert!(k.keys_for(help, Action::Help).any(|x| x == key("F")));
        assert_eq!(k.action(help, &key("h")), Some(Action::Help));
        assert_eq!(
            k.action(Mode::Overlay(Kind::Stats), &key("X")),
            Some(Action::ToggleStats)
        );
        // Only toggles are carried: `n` pages in normal mode, not in the help.
        assert_eq!(k.action(help, &key("n")), None);
        assert_eq!(k.action(Mode::Filter, &key("F")), None);
    }

    /// A refused key map says every mode it could have named, where a TOML error
    /// is, and a key that is an escape sequence as its characters written out.
    #[test]
    fn refusals_name_every_mode_the_place_and_an_invisible_key() {
        let m = refused("[nromal]\nq = \"quit\"\n");
        for mode in Mode::ALL {
            assert!(m.contains(mode.name()), "{m}");
        }
        assert!(m.starts_with("k.toml:1:2: unknown mode"), "{m}");
        let m = refused("[normal]\nj = \"quit\"\n\n  q = \"quitx\"\n");
        assert!(
            m.starts_with("k.toml:4:3: [normal] key 'q': unknown action 'quitx'"),
            "{m}"
        );
        let m = refused("[normal]\nq = \"quit\"\nq = \"help\"\n");
        assert!(
            m.starts_with("k.toml:3:1: not valid TOML: duplicate key"),
            "{m}"
        );
        let m = refused("[normal]\nq = \"quit\"\n\"ctrl+c\" = \"help\"\n");
        assert!(
            m.starts_with(
                "k.toml:3:1: [normal] key 'ctrl+c': ctrl+c always quits, in every mode; \
                 it cannot be bound to 'help'"
            ),
            "{m}"
        );
        let m = refused("[filter]\n\"ctrl+alt+C\" = \"none\"\n");
        assert!(m.contains("key 'ctrl+alt+C': ctrl+c always quits"), "{m}");
        assert!(m.ends_with("it cannot be unbound"), "{m}");
        // So every mode's help and printed table list it under quit.
        for mode in Mode::ALL {
            let k = Keymap::builtin();
            assert_eq!(k.action(mode, &Key::ctrl('c')), Some(Action::Quit));
        }
        let m = refused("[normal]\n\"\\u001b[31m\" = \"quit\"\n");
        assert!(m.contains("key '\\u{001b}[31m': unknown key name"), "{m}");
        assert!(!m.contains('\u{1b}'), "{m}");
    }

    #[test]
    fn parses_and_normalizes() {
        assert_eq!(
            Key::parse("N"),
            Ok(Key::new(KeyCode::Char('N'), KeyModifiers::SHIFT))
        );
        assert_eq!(Key::parse("ctrl+L"), Ok(Key::ctrl('l')));
        assert_eq!(
            Key::parse("shift+tab"),
            Ok(Key::new(KeyCode::BackTab, KeyModifiers::NONE))
        );
        assert_eq!(Key::parse("+"), Ok(Key::char('+')));
        assert_eq!(Key::parse("ctrl++"), Ok(Key::ctrl('+')));
        assert!(Key::parse("nope").is_err());
    }

    /// The one check between the action table and keymap.toml: per mode, the same
    /// keys bound to the same actions, every key of the table parses and prints
    /// back to itself, and every mode named is a mode.
    #[test]
    fn default_keys_are_keymap_toml() {
        for a in Action::ALL {
            for &(mode, keys) in a.default_keys() {
                assert!(Mode::ALL.iter().any(|m| m.name() == mode), "{mode}");
                for k in keys {
                    let key = Key::parse(k).expect("a table key");
                    assert_eq!(Key::parse(&key.to_string()), Ok(key), "{k}");
                }
            }
        }
        let mut file = Keymap {
            modes: Default::default(),
        };
        file.overlay(Path::new("keymap.toml"), DEFAULT_TOML)
            .expect("keymap.toml parses");
        let table = Keymap::from_table();
        for mode in Mode::ALL {
            let sorted = |k: &Keymap| {
                let mut v: Vec<String> = (k.bindings(mode).iter())
                    .map(|(key, a)| format!("{key} = {}", a.name()))
                    .collect();
                v.sort();
                v
            };
            assert_eq!(sorted(&table), sorted(&file), "[{}]", mode.name());
        }
        assert_eq!(Keymap::builtin(), file);
    }
}

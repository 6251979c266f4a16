//! The keys that on-screen hints name (the filter prompt's, an overlay's frame,
//! the status bar's), found in the live key map as the help finds them: a
//! remapped key shows as bound, and an action bound to no key leaves its hint out.

use super::{Key, Keymap, Mode};
use crate::ui::action::Action;

impl Keymap {
    /// The key a hint names for the first of `actions` with one bound in `mode`
    /// (its first key: keymap.toml lists the usual one first; ctrl+c, which
    /// quits in every mode whatever the map says, only where no other quits),
    /// arrows as their glyphs; None when none is bound.
    #[must_use]
    pub fn hint_key(&self, mode: Mode, actions: &[Action]) -> Option<String> {
        (actions.iter())
            .find_map(|&a| {
                let mut keys = self.keys_for(mode, a);
                let first = keys.next()?;
                Some(if first.is_ctrl_c() {
                    keys.next().unwrap_or(first)
                } else {
                    first
                })
            })
            .map(glyph)
    }

    /// `a`'s key and `b`'s as one (`↑↓`, `←/→`), `sep` between; one alone when
    /// the other is unbound.
    #[must_use]
    pub fn hint_pair(&self, mode: Mode, (a, b): (Action, Action), sep: &str) -> Option<String> {
        match (self.hint_key(mode, &[a]), self.hint_key(mode, &[b])) {
            (Some(a), Some(b)) => Some(format!("{a}{sep}{b}")),
            (a, b) => a.or(b),
        }
    }

    /// The keys of a filter being typed: `tab: regex → glob · enter keep · esc
    /// restore`; `from` (the syntax typed in) named where there is room.
    #[must_use]
    pub fn filter_hint(&self, glob: bool, from: Option<&str>) -> String {
        let m = Mode::Filter;
        let other = if glob { "regex" } else { "glob" };
        let toggle = self
            .hint_key(m, &[Action::FilterToggleGlob])
            .map(|k| match from {
                Some(from) => format!("{k}: {from} → {other}"),
                None => format!("{k}: {other}"),
            });
        hint_line([
            (toggle, ""),
            (self.hint_key(m, &[Action::FilterApply]), "keep"),
            (self.hint_key(m, &[Action::FilterCancel]), "restore"),
        ])
    }
}

/// `KEY what · KEY what` of the items with a key (an item whose `what` is empty
/// is its key's text alone); empty when none has one.
pub fn hint_line<'a>(items: impl IntoIterator<Item = (Option<String>, &'a str)>) -> String {
    let parts: Vec<String> = (items.into_iter())
        .filter_map(|(key, what)| match (key, what) {
            (Some(k), "") => Some(k),
            (Some(k), w) => Some(format!("{k} {w}")),
            (None, _) => None,
        })
        .collect();
    parts.join(" · ")
}

/// A key as a hint writes it: the arrows as `↑` `↓` `←` `→`, the rest as
/// keymap.toml spells them.
fn glyph(k: Key) -> String {
    use crossterm::event::{KeyCode, KeyModifiers};
    let arrow = match k.code {
        KeyCode::Up => "↑",
        KeyCode::Down => "↓",
        KeyCode::Left => "←",
        KeyCode::Right => "→",
        _ => return k.to_string(),
    };
    if k.mods == KeyModifiers::NONE {
        arrow.to_owned()
    } else {
        k.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::overlay::Kind;
    use std::path::Path;

    fn remapped(text: &str) -> Keymap {
        let mut k = Keymap::builtin();
        k.overlay(Path::new("k.toml"), text).expect("a key map");
        k
    }

    #[test]
    fn hints_name_the_bound_keys_and_drop_the_unbound() {
        let k = Keymap::builtin();
        assert_eq!(
            k.filter_hint(false, Some("regex")),
            "tab: regex → glob · enter keep · esc restore"
        );
        assert_eq!(
            k.filter_hint(true, None),
            "tab: regex · enter keep · esc restore"
        );
        let k = remapped(
            "[filter]\n\"enter\" = \"none\"\n\"alt+a\" = \"filter_apply\"\n\"tab\" = \"none\"\n",
        );
        assert_eq!(
            k.filter_hint(false, Some("regex")),
            "alt+a keep · esc restore"
        );
        let m = Mode::Overlay(Kind::Inspector);
        let k = Keymap::builtin();
        assert_eq!(
            k.hint_pair(m, (Action::FocusUp, Action::FocusDown), "")
                .as_deref(),
            Some("↑↓")
        );
        let k = remapped("[inspector]\n\"up\" = \"none\"\n\"w\" = \"none\"\n\"k\" = \"none\"\n\"ctrl+up\" = \"focus_up\"\n");
        assert_eq!(
            k.hint_pair(m, (Action::FocusUp, Action::FocusDown), "/")
                .as_deref(),
            Some("ctrl+up/↓")
        );
        let k = remapped("[stats]\n\"esc\" = \"none\"\n");
        let m = Mode::Overlay(Kind::Stats);
        assert_eq!(
            k.hint_key(m, &[Action::Back, Action::ToggleStats])
                .as_deref(),
            Some("T")
        );
        assert_eq!(
            hint_line([(None, "gone"), (Some("x".into()), "kept")]),
            "x kept"
        );
    }
}

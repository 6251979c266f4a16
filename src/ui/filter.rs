//! Text filter (`/` for metric charts and console lines, `\\` for system charts, `o`
//! for the overview, `/` on the process table): applied live while typing; an invalid
//! regex shows its error and keeps the last valid match set (`Enter` refuses it,
//! the prompt staying open). `Tab` while typing toggles regex ↔ glob, W&B's glob: `*` any run of characters, `?` one character,
//! unanchored (`lo*s` matches `val/loss_x`), case-insensitive; without a wildcard a
//! glob is a substring; regex syntax is literal text in glob mode.

use regex::RegexBuilder;

use super::prompt::{Pattern, Prompt};
use super::query::{self, Matcher};

pub use super::prompt::MAX_PATTERN_CHARS;

/// One filter's state.
pub type FilterState = Prompt<Matcher>;

impl Pattern for Matcher {
    type Error = String;

    /// An empty draft is no filter; a glob always compiles; a regex is
    /// case-insensitive, its error the engine's last line.
    fn compile(draft: &str, glob: bool) -> Result<Option<Self>, String> {
        if draft.is_empty() {
            return Ok(None);
        }
        if glob {
            return query::matcher(draft, query::Mode::Glob).map(Some);
        }
        match RegexBuilder::new(draft)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
        {
            Ok(r) => Ok(Some(Matcher::Regex(r))),
            Err(e) => {
                let msg = e.to_string();
                let line = msg
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("invalid pattern")
                    .trim()
                    .trim_start_matches("error: ")
                    .to_owned();
                Err(line)
            }
        }
    }

    fn too_long() -> String {
        format!("pattern longer than {MAX_PATTERN_CHARS} characters; further input ignored")
    }

    fn is_too_long(e: &String) -> bool {
        *e == Self::too_long()
    }
}

impl FilterState {
    /// Whether a pattern is in force.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.compiled.is_some()
    }

    /// Whether `s` passes (everything passes with no pattern).
    #[must_use]
    pub fn matches(&self, s: &str) -> bool {
        self.compiled.as_ref().is_none_or(|r| r.is_match(s))
    }
}

/// Which filter the user is typing into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterTarget {
    Metrics,
    System,
    Overview,
    Console,
    /// The live monitor's process table.
    Procs,
    /// The workspace's runs filter (`f`).
    Runs,
    /// The workspace's group-by prompt (`G`).
    Group,
    /// The workspace's summary-column prompt (`v`).
    Column,
    /// The statistics table's metric filter (`/` in `T`).
    Stats,
    /// The record inspector's text filter (`/` there).
    Records,
    /// The cluster screen's host filter (`/` there).
    Hosts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_paste_is_capped_and_leaves_the_filter_responsive() {
        // A paste arrives as one key per character: 5,000 of them used to compile
        // 5,000 ever longer patterns (about 15 s in a release build).
        let mut f = FilterState::default();
        f.start();
        for _ in 0..2_500 {
            f.push('a');
            f.push('b');
        }
        assert_eq!(f.draft.chars().count(), MAX_PATTERN_CHARS);
        assert_eq!(f.text, "ab".repeat(MAX_PATTERN_CHARS / 2));
        assert!(f.matches(&"ab".repeat(200)));
        assert!(!f.matches("ab"));
        let err = f.error.clone().unwrap_or_default();
        assert!(err.contains("longer than 256 characters"), "{err}");
        // Backspace makes room again and clears the message.
        f.backspace();
        assert_eq!(f.draft.chars().count(), MAX_PATTERN_CHARS - 1);
        assert_eq!(f.error, None);
        f.push('é');
        assert_eq!(f.draft.chars().count(), MAX_PATTERN_CHARS);
        assert!(f.draft.ends_with('é'));
    }

    #[test]
    fn pasted_text_is_one_line_added_at_once_up_to_the_cap() {
        let line = crate::ui::prompt::pasted("a\r\nb\nc\td\re\x1b[31mf\x07\u{202e}g");
        assert_eq!(line, "a b c d efg");
        let mut f = FilterState::default();
        f.start();
        assert_eq!(f.push_str(""), (false, false));
        assert_eq!(f.push_str("lo"), (true, true));
        assert_eq!(f.push_str("ss"), (true, true));
        assert_eq!(f.draft, "loss");
        assert!(f.matches("train/loss") && f.editing);
        // Past the cap: cut there, with the error typing it would show.
        f.push_str(&"é".repeat(MAX_PATTERN_CHARS));
        assert_eq!(f.draft.chars().count(), MAX_PATTERN_CHARS);
        assert!(f.error.is_some());
        assert_eq!(f.push_str("x"), (false, false));
    }

    #[test]
    fn a_filter_reopened_on_its_pattern_has_it_selected_until_edited() {
        let mut f = FilterState::default();
        f.start();
        assert!(!f.selected, "nothing to select");
        f.push_str("loss");
        f.apply();
        // Reopened: the first character typed replaces the pattern in force.
        f.start();
        assert!(f.selected);
        assert_eq!(f.draft, "loss");
        f.push('a');
        assert_eq!((f.draft.as_str(), f.selected), ("a", false));
        f.push_str("cc");
        assert_eq!(f.text, "acc");
        f.apply();
        // A paste replaces it too; tab keeps it selected.
        f.start();
        f.toggle_glob();
        assert!(f.selected);
        f.push_str("lr");
        assert_eq!(f.draft, "lr");
        f.apply();
        // Backspace edits it (one character goes); so does an arrow (`deselect`).
        f.start();
        f.backspace();
        assert_eq!((f.draft.as_str(), f.selected), ("l", false));
        f.push('o');
        assert_eq!(f.draft, "lo");
        f.apply();
        f.start();
        assert!(f.deselect());
        f.push('g');
        assert_eq!(f.draft, "log");
        // Esc restores the pattern and nothing stays selected.
        f.cancel();
        assert_eq!((f.text.as_str(), f.selected), ("lo", false));
    }

    #[test]
    fn a_prefilled_prompt_is_replaced_by_typing_and_edited_after_a_key_that_moves() {
        use crate::ui::prompt::Prefilled;
        let mut p = Prefilled::new("lr".into());
        assert!(p.selected);
        p.type_str("seed", 8);
        assert_eq!((p.text.as_str(), p.selected), ("seed", false));
        p.type_str("12345", 8);
        assert_eq!(p.text, "seed1234", "capped");
        let mut p = Prefilled::new("lr".into());
        assert!(p.deselect());
        p.type_str("_max", 64);
        assert_eq!(p.text, "lr_max");
        let mut p = Prefilled::new("lr".into());
        p.backspace();
        p.type_str("x", 64);
        assert_eq!(p.text, "lx");
        assert!(!Prefilled::new(String::new()).selected);
    }

    #[test]
    fn the_pattern_in_force_keeps_its_mode_and_enter_refuses_a_draft_that_does_not_compile() {
        let mut f = FilterState::default();
        f.start();
        f.toggle_glob();
        f.push_str("lo");
        assert!(f.apply());
        // `[` is a glob (literal); Tab to regex: not a regex, so the glob stays
        // in force, and says so.
        f.start();
        f.push('[');
        f.toggle_glob();
        assert!(!f.glob && f.error.is_some());
        assert_eq!((f.text.as_str(), f.text_glob), ("[", true));
        // Enter: refused, the prompt open with its error.
        assert!(!f.apply());
        assert!(f.editing && f.error.is_some());
        // Fixed: applied, in the mode typed.
        f.backspace();
        f.push_str("^lo");
        assert!(f.apply());
        assert!(!f.editing && !f.text_glob);
        assert_eq!(f.text, "^lo");
        // Esc after an error: back to what was in force, its mode too.
        f.start();
        f.toggle_glob();
        f.push('[');
        f.toggle_glob();
        f.cancel();
        assert_eq!(
            (f.text.as_str(), f.glob, f.text_glob),
            ("^lo", false, false)
        );
    }

    #[test]
    fn tab_toggles_wandb_glob_semantics() {
        let mut f = FilterState::default();
        f.start();
        for c in "val*loss".chars() {
            f.push(c);
        }
        // As a regex: "va", any `l`s, "loss".
        assert!(f.matches("vaLLloss") && !f.matches("val/loss"));
        f.toggle_glob();
        assert!(f.glob);
        assert_eq!(f.mode_name(), "glob");
        // W&B's glob: `*` any run, unanchored, case-insensitive.
        assert!(f.matches("train/VAL/loss_x"));
        assert!(!f.matches("loss/val"));
        // `?` is one character; without a wildcard, a substring.
        f.set_draft("m00?".into());
        assert!(f.matches("eval/m001") && !f.matches("eval/m01"));
        f.set_draft("acc".into());
        assert!(f.matches("eval/ACC"));
        // Regex syntax is literal text: never an error.
        f.set_draft("a(b".into());
        assert_eq!(f.error, None);
        assert!(f.matches("xa(by") && !f.matches("ab"));
        // Back to regex: the same draft is an error, the glob stays in force.
        f.toggle_glob();
        assert!(!f.glob);
        assert!(f.error.is_some());
        assert!(f.matches("xa(by"));
        // Esc restores the mode with the pattern; clear keeps the mode.
        f.cancel();
        assert!(!f.glob && !f.is_active());
        f.start();
        f.toggle_glob();
        f.set_draft("x*".into());
        f.apply();
        f.clear();
        assert!(f.glob && !f.is_active());
    }
}

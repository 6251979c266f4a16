//! Text filter (`/` for metric charts and console lines, `\\` for system charts, `o`
//! for the overview, `/` on the process table): applied live while typing; an invalid
//! regex shows its error and keeps the last valid match set. `Tab` while typing
//! toggles regex ↔ glob, W&B's glob: `*` any run of characters, `?` one character,
//! unanchored (`lo*s` matches `val/loss_x`), case-insensitive; without a wildcard a
//! glob is a substring; regex syntax is literal text in glob mode.

use regex::RegexBuilder;

use super::query::{self, Matcher};

/// The longest pattern accepted, in characters. Every typed character compiles the
/// whole pattern again, so without a cap a long paste (each pasted character arrives
/// as a key) costs time quadratic in its length: 5,000 characters kept the viewer
/// busy for about 15 s, deaf to `q`.
pub const MAX_PATTERN_CHARS: usize = 256;

/// One filter's state.
#[derive(Debug, Clone, Default)]
pub struct FilterState {
    /// Text of the pattern in force ("" = no filter).
    pub text: String,
    /// The pattern in force, compiled.
    matcher: Option<Matcher>,
    /// Glob patterns instead of regexes (`Tab` while typing toggles it).
    pub glob: bool,
    /// What is being typed.
    pub draft: String,
    pub editing: bool,
    /// Why the draft does not compile.
    pub error: Option<String>,
    saved: (String, Option<Matcher>, bool),
}

impl FilterState {
    /// Whether a pattern is in force.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.matcher.is_some()
    }

    /// Whether `s` passes (everything passes with no pattern).
    #[must_use]
    pub fn matches(&self, s: &str) -> bool {
        self.matcher.as_ref().is_none_or(|r| r.is_match(s))
    }

    /// Begin editing, starting from the pattern in force.
    pub fn start(&mut self) {
        self.saved = (self.text.clone(), self.matcher.clone(), self.glob);
        self.draft = self.text.clone();
        self.editing = true;
        self.error = None;
    }

    /// Replace the draft and apply it if it compiles.
    pub fn set_draft(&mut self, s: String) {
        self.draft = s;
        if self.draft.is_empty() {
            self.text.clear();
            self.matcher = None;
            self.error = None;
            return;
        }
        if self.glob {
            // A glob always compiles.
            if let Ok(m) = query::matcher(&self.draft, query::Mode::Glob) {
                self.text = self.draft.clone();
                self.matcher = Some(m);
                self.error = None;
            }
            return;
        }
        match RegexBuilder::new(&self.draft)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
        {
            Ok(r) => {
                self.text = self.draft.clone();
                self.matcher = Some(Matcher::Regex(r));
                self.error = None;
            }
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
                self.error = Some(line);
            }
        }
    }

    /// Add a typed character; beyond [`MAX_PATTERN_CHARS`] it is dropped and the
    /// error says so (the pattern in force stays).
    pub fn push(&mut self, c: char) {
        if self.draft.chars().count() >= MAX_PATTERN_CHARS {
            self.error = Some(format!(
                "pattern longer than {MAX_PATTERN_CHARS} characters; further input ignored"
            ));
            return;
        }
        let mut d = std::mem::take(&mut self.draft);
        d.push(c);
        self.set_draft(d);
    }

    /// `Tab` while typing: regex ↔ glob; the draft applies again in the new mode.
    pub fn toggle_glob(&mut self) {
        self.glob = !self.glob;
        let d = std::mem::take(&mut self.draft);
        self.set_draft(d);
    }

    /// The mode's name, for prompts.
    #[must_use]
    pub fn mode_name(&self) -> &'static str {
        if self.glob {
            "glob"
        } else {
            "regex"
        }
    }

    pub fn backspace(&mut self) {
        let mut d = std::mem::take(&mut self.draft);
        d.pop();
        self.set_draft(d);
    }

    /// Enter: keep what is in force.
    pub fn apply(&mut self) {
        self.editing = false;
        self.error = None;
        self.draft.clear();
    }

    /// Esc: back to the pattern in force before editing.
    pub fn cancel(&mut self) {
        let (t, r, g) = std::mem::take(&mut self.saved);
        self.text = t;
        self.matcher = r;
        self.glob = g;
        self.editing = false;
        self.error = None;
        self.draft.clear();
    }

    /// No pattern in force; the mode stays what the user chose.
    pub fn clear(&mut self) {
        *self = Self {
            glob: self.glob,
            ..Self::default()
        };
    }
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

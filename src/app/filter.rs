//! Regex filter (`/` for metric charts, `\` for system charts): applied live while
//! typing; an invalid pattern shows its error and keeps the last valid match set.

use regex::{Regex, RegexBuilder};

/// One filter's state.
#[derive(Debug, Clone, Default)]
pub struct FilterState {
    /// Text of the pattern in force ("" = no filter).
    pub text: String,
    regex: Option<Regex>,
    /// What is being typed.
    pub draft: String,
    pub editing: bool,
    /// Why the draft does not compile.
    pub error: Option<String>,
    saved: (String, Option<Regex>),
}

impl FilterState {
    /// Whether a pattern is in force.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.regex.is_some()
    }

    /// Whether `s` passes (everything passes with no pattern).
    #[must_use]
    pub fn matches(&self, s: &str) -> bool {
        self.regex.as_ref().is_none_or(|r| r.is_match(s))
    }

    /// Begin editing, starting from the pattern in force.
    pub fn start(&mut self) {
        self.saved = (self.text.clone(), self.regex.clone());
        self.draft = self.text.clone();
        self.editing = true;
        self.error = None;
    }

    /// Replace the draft and apply it if it compiles.
    pub fn set_draft(&mut self, s: String) {
        self.draft = s;
        if self.draft.is_empty() {
            self.text.clear();
            self.regex = None;
            self.error = None;
            return;
        }
        match RegexBuilder::new(&self.draft)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
        {
            Ok(r) => {
                self.text = self.draft.clone();
                self.regex = Some(r);
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

    pub fn push(&mut self, c: char) {
        let mut d = std::mem::take(&mut self.draft);
        d.push(c);
        self.set_draft(d);
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
        let (t, r) = std::mem::take(&mut self.saved);
        self.text = t;
        self.regex = r;
        self.editing = false;
        self.error = None;
        self.draft.clear();
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

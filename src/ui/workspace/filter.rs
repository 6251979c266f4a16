//! The runs filter (`f`): the query in force and the one being typed, capped at
//! [`MAX_PATTERN_CHARS`] as the metric filter is.

use super::{WsRun, MAX_PATTERN_CHARS};
use crate::ui::query::{self, Query, QueryError};

/// The runs filter: the query in force and the one being typed.
#[derive(Debug, Clone, Default)]
pub struct RunsFilter {
    /// Text of the query in force ("" = every run).
    pub text: String,
    query: Option<Query>,
    /// Glob (else regex) patterns; Tab toggles it while typing.
    pub glob: bool,
    pub draft: String,
    pub editing: bool,
    /// Why the draft does not parse (what, and where).
    pub error: Option<QueryError>,
    saved: (String, Option<Query>, bool),
}

impl RunsFilter {
    fn mode(&self) -> query::Mode {
        if self.glob {
            query::Mode::Glob
        } else {
            query::Mode::Regex
        }
    }

    #[must_use]
    pub fn is_active(&self) -> bool {
        self.query.as_ref().is_some_and(|q| !q.is_empty())
    }

    #[must_use]
    pub fn matches(&self, run: &WsRun) -> bool {
        self.query.as_ref().is_none_or(|q| q.matches(run))
    }

    pub fn start(&mut self) {
        self.saved = (self.text.clone(), self.query.clone(), self.glob);
        self.draft = self.text.clone();
        self.editing = true;
        self.error = None;
    }

    /// Set the draft and put it in force when it parses (live, as typed).
    /// Returns whether the query in force changed (the list needs filtering).
    pub fn set_draft(&mut self, s: String) -> bool {
        self.draft = s;
        match query::parse(&self.draft, self.mode()) {
            Ok(q) => {
                let changed = self.text != self.draft || self.query.is_none();
                self.text.clone_from(&self.draft);
                self.query = Some(q);
                self.error = None;
                changed
            }
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Add a typed character; beyond [`MAX_PATTERN_CHARS`] it is dropped (nothing
    /// parsed, nothing filtered) and the error says so. Returns whether the
    /// query in force changed, and whether anything shown did.
    pub fn push(&mut self, c: char) -> (bool, bool) {
        if self.draft.chars().count() >= MAX_PATTERN_CHARS {
            let was = self
                .error
                .as_ref()
                .is_some_and(|e| e.at == MAX_PATTERN_CHARS && e.len == 0);
            self.error = Some(QueryError {
                message: format!(
                    "query longer than {MAX_PATTERN_CHARS} characters; further input ignored"
                ),
                at: MAX_PATTERN_CHARS,
                detail: None,
                len: 0,
            });
            return (false, !was);
        }
        let mut d = std::mem::take(&mut self.draft);
        d.push(c);
        (self.set_draft(d), true)
    }

    pub fn backspace(&mut self) -> bool {
        let mut d = std::mem::take(&mut self.draft);
        d.pop();
        self.set_draft(d)
    }

    pub fn toggle_glob(&mut self) -> bool {
        self.glob = !self.glob;
        let d = std::mem::take(&mut self.draft);
        // The same text means another query in the other mode.
        self.set_draft(d) || self.query.is_some()
    }

    /// Keep what is in force (a draft that does not parse is dropped).
    pub fn apply(&mut self) {
        self.editing = false;
        self.error = None;
        self.draft.clear();
    }

    pub fn cancel(&mut self) {
        let (t, q, g) = std::mem::take(&mut self.saved);
        self.text = t;
        self.query = q;
        self.glob = g;
        self.apply();
    }

    /// Put a saved query in force (a saved one that no longer parses is dropped).
    pub(super) fn restore(&mut self, text: &str, glob: bool) {
        self.glob = glob;
        let _ = self.set_draft(text.to_owned());
        if self.error.is_some() {
            self.text.clear();
            self.query = None;
        }
        self.apply();
    }
}

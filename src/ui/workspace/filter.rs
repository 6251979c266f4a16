//! The runs filter (`f`): the query in force and the one being typed, capped at
//! [`MAX_PATTERN_CHARS`] as the metric filter is.

use super::{WsRun, MAX_PATTERN_CHARS};
use crate::ui::prompt::{Pattern, Prompt};
use crate::ui::query::{self, Query, QueryError};

/// The runs filter: the query in force and the one being typed.
pub type RunsFilter = Prompt<Query>;

impl Pattern for Query {
    type Error = QueryError;

    fn compile(draft: &str, glob: bool) -> Result<Option<Self>, QueryError> {
        let mode = if glob {
            query::Mode::Glob
        } else {
            query::Mode::Regex
        };
        query::parse(draft, mode).map(Some)
    }

    fn too_long() -> QueryError {
        QueryError {
            message: format!(
                "query longer than {MAX_PATTERN_CHARS} characters; further input ignored"
            ),
            at: MAX_PATTERN_CHARS,
            detail: None,
            len: 0,
        }
    }

    fn is_too_long(e: &QueryError) -> bool {
        e.at == MAX_PATTERN_CHARS && e.len == 0
    }
}

impl RunsFilter {
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.compiled.as_ref().is_some_and(|q| !q.is_empty())
    }

    #[must_use]
    pub fn matches(&self, run: &WsRun) -> bool {
        self.compiled.as_ref().is_none_or(|q| q.matches(run))
    }

    /// Put a saved query in force (a saved one that no longer parses is dropped).
    pub(super) fn restore(&mut self, text: &str, glob: bool) {
        self.glob = glob;
        let _ = self.set_draft(text.to_owned());
        if self.error.is_some() {
            self.clear();
        }
        self.apply();
    }
}

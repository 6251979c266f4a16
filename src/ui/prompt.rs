//! The one editing state machine behind every typed filter (the metric, system,
//! overview, console, process, statistics and record filters, and the workspace's
//! runs query): the pattern in force and its text, the draft being typed (capped
//! at [`MAX_PATTERN_CHARS`]), regex ↔ glob, the error of a draft that does not
//! compile, and what Esc restores. What a draft compiles into is the [`Pattern`].
//!
//! A prompt that opens on text (the pattern in force, `G`'s key) opens with it
//! selected, as a text field does: the first character typed or pasted replaces
//! it, while backspace, an arrow, home or end keep it to edit ([`Prefilled`] for
//! the workspace's one-line prompts).

use std::fmt;

/// The longest pattern accepted, in characters. Every typed character compiles the
/// whole pattern again, so without a cap a long paste (each pasted character arrives
/// as a key) costs time quadratic in its length: 5,000 characters kept the viewer
/// busy for about 15 s, deaf to `q`.
pub const MAX_PATTERN_CHARS: usize = 256;

/// Pasted text as a prompt takes it: one line (each newline, carriage return and
/// tab a space; a CR LF pair one space), escape sequences, control characters
/// and invisible reordering marks removed ([`leet_text::sanitize`]).
#[must_use]
pub fn pasted(text: &str) -> String {
    let line: String = text
        .replace("\r\n", " ")
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    leet_text::sanitize(&line)
}

/// What a prompt's draft compiles into.
pub trait Pattern: Clone + fmt::Debug + Sized {
    /// Why a draft does not compile.
    type Error: Clone + fmt::Debug + PartialEq;

    /// Compile `draft` (glob patterns, else regexes); `Ok(None)`: nothing in force.
    ///
    /// # Errors
    /// Why the draft does not compile.
    fn compile(draft: &str, glob: bool) -> Result<Option<Self>, Self::Error>;

    /// The error shown when a character is typed past [`MAX_PATTERN_CHARS`].
    fn too_long() -> Self::Error;

    /// Whether `e` is [`Pattern::too_long`]'s (a repeat of it redraws nothing).
    fn is_too_long(e: &Self::Error) -> bool;
}

/// A typed filter's state: what is in force, and what is being typed.
#[derive(Debug, Clone)]
pub struct Prompt<P: Pattern> {
    /// Text of the pattern in force ("" = no filter).
    pub text: String,
    /// The pattern in force, compiled.
    pub(crate) compiled: Option<P>,
    /// Glob patterns instead of regexes (`Tab` while typing toggles it): the
    /// mode the draft is typed in.
    pub glob: bool,
    /// How `text` is read: the mode it compiled in. While typing, `Tab` may give
    /// `glob` a mode the pattern in force does not compile in (`[` is a glob,
    /// not a regex); what is saved is this pair, never that one.
    pub text_glob: bool,
    /// What is being typed.
    pub draft: String,
    /// The draft is the prefill, selected: typing replaces it.
    pub selected: bool,
    pub editing: bool,
    /// Why the draft does not compile.
    pub error: Option<P::Error>,
    saved: (String, Option<P>, bool),
}

impl<P: Pattern> Default for Prompt<P> {
    fn default() -> Self {
        Self {
            text: String::new(),
            compiled: None,
            glob: false,
            text_glob: false,
            draft: String::new(),
            selected: false,
            editing: false,
            error: None,
            saved: (String::new(), None, false),
        }
    }
}

impl<P: Pattern> Prompt<P> {
    /// Begin editing, starting from the pattern in force.
    pub fn start(&mut self) {
        self.saved = (self.text.clone(), self.compiled.clone(), self.text_glob);
        self.draft = self.text.clone();
        self.selected = !self.draft.is_empty();
        self.editing = true;
        self.error = None;
    }

    /// Replace the draft and put it in force if it compiles (live, as typed).
    /// Returns whether the pattern in force changed.
    pub fn set_draft(&mut self, s: String) -> bool {
        self.draft = s;
        self.selected = false;
        match P::compile(&self.draft, self.glob) {
            Ok(p) => {
                let changed = self.text != self.draft
                    || self.compiled.is_none()
                    || self.text_glob != self.glob;
                self.text.clone_from(&self.draft);
                self.compiled = p;
                self.text_glob = self.glob;
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
    /// compiled, the pattern in force stays) and the error says so. Returns
    /// whether the pattern in force changed, and whether anything shown did.
    pub fn push(&mut self, c: char) -> (bool, bool) {
        self.push_str(c.encode_utf8(&mut [0; 4]))
    }

    /// Add typed (or pasted) text, compiled once: what goes past
    /// [`MAX_PATTERN_CHARS`] is dropped, as by [`Prompt::push`].
    pub fn push_str(&mut self, s: &str) -> (bool, bool) {
        let n = s.chars().count();
        if n == 0 {
            return (false, false);
        }
        if self.selected {
            self.draft.clear();
        }
        let room = MAX_PATTERN_CHARS.saturating_sub(self.draft.chars().count());
        if room == 0 {
            let was = self.error.as_ref().is_some_and(P::is_too_long);
            self.error = Some(P::too_long());
            return (false, !was);
        }
        let mut d = std::mem::take(&mut self.draft);
        d.extend(s.chars().take(room));
        let changed = self.set_draft(d);
        if n > room {
            self.error = Some(P::too_long());
        }
        (changed, true)
    }

    /// Delete the draft's last character. Returns whether the pattern in force
    /// changed.
    pub fn backspace(&mut self) -> bool {
        let mut d = std::mem::take(&mut self.draft);
        d.pop();
        self.set_draft(d)
    }

    /// `Tab` while typing: regex ↔ glob; the draft applies again in the new mode.
    /// Returns whether the pattern in force may have changed (the same text is
    /// another pattern in the other mode).
    pub fn toggle_glob(&mut self) -> bool {
        self.glob = !self.glob;
        let (d, selected) = (std::mem::take(&mut self.draft), self.selected);
        let changed = self.set_draft(d) || self.compiled.is_some();
        self.selected = selected;
        changed
    }

    /// An arrow, home or end: the prefill stays, to be edited. Returns whether
    /// it was selected.
    pub fn deselect(&mut self) -> bool {
        std::mem::take(&mut self.selected)
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

    /// Enter: keep the draft in force. One that does not compile in its mode is
    /// refused (false): the prompt stays open with its error, rather than closing
    /// on a pattern other than the one shown (Esc goes back).
    pub fn apply(&mut self) -> bool {
        if P::compile(&self.draft, self.glob).is_err() {
            return false;
        }
        self.close();
        true
    }

    /// The prompt closed: what is in force stays.
    fn close(&mut self) {
        self.editing = false;
        self.selected = false;
        self.error = None;
        self.draft.clear();
    }

    /// The pattern kept, and whether it is a glob: while the prompt is open,
    /// the one in force before it opened (what `esc` goes back to; the draft
    /// in force meanwhile is not kept until `enter`), else the one in force.
    #[must_use]
    pub fn kept(&self) -> (&str, bool) {
        if self.editing {
            (&self.saved.0, self.saved.2)
        } else {
            (&self.text, self.text_glob)
        }
    }

    /// Esc: back to the pattern in force before editing.
    pub fn cancel(&mut self) {
        let (t, p, g) = std::mem::take(&mut self.saved);
        self.text = t;
        self.compiled = p;
        self.glob = g;
        self.text_glob = g;
        self.close();
    }

    /// No pattern in force; the mode stays what the user chose.
    pub fn clear(&mut self) {
        *self = Self {
            glob: self.glob,
            text_glob: self.glob,
            ..Self::default()
        };
    }
}

/// A one-line prompt's text that may open prefilled (the workspace's `G` and
/// `v`): selected until edited, so that the first character typed replaces it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefilled {
    pub text: String,
    /// The text is the prefill, selected.
    pub selected: bool,
}

impl Prefilled {
    /// A prompt opened on `text`, selected.
    #[must_use]
    pub fn new(text: String) -> Self {
        let selected = !text.is_empty();
        Self { text, selected }
    }

    /// Typed or pasted text, added (replacing a selected prefill) up to `most`
    /// characters in all.
    pub fn type_str(&mut self, s: &str, most: usize) {
        if s.is_empty() {
            return;
        }
        if std::mem::take(&mut self.selected) {
            self.text.clear();
        }
        let room = most.saturating_sub(self.text.chars().count());
        self.text.extend(s.chars().take(room));
    }

    /// Backspace: the last character goes (of the prefill too, kept to edit).
    pub fn backspace(&mut self) {
        self.selected = false;
        self.text.pop();
    }

    /// `ctrl+u`: nothing typed.
    pub fn clear(&mut self) {
        self.selected = false;
        self.text.clear();
    }

    /// An arrow, home or end: the prefill stays, to be edited. Returns whether
    /// it was selected.
    pub fn deselect(&mut self) -> bool {
        std::mem::take(&mut self.selected)
    }
}

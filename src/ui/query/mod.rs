//! The runs filter query language (the workspace's `f`), W&B's `wandb leet` grammar
//! plus leet's extensions. Pure: [`parse`] turns text into a [`Query`] (regexes are
//! compiled once, there) or a [`QueryError`] that says what is wrong and where;
//! [`Query::matches`] evaluates it against any [`RunFields`].
//!
//! # Grammar
//!
//! A query is whitespace-separated terms. An empty query matches every run.
//!
//! - **Bare term** `resnet`: matches when the run key (directory name), display name,
//!   id, project, notes or any tag matches it as a pattern (below).
//! - **`field:pattern`**: the field matches the pattern. In regex mode a pattern with
//!   no regex metacharacter is a substring; otherwise a regex. In glob mode `*` is any
//!   run of characters and `?` one character, unanchored (`vis*` matches `my-vision`);
//!   no wildcard means substring. Always case-insensitive. `name:` (empty pattern)
//!   matches runs whose name is not empty.
//! - **`field=value`**, **`field!=value`**: whole-value equality, case-insensitive,
//!   surrounding spaces ignored, as text (`id=123` does not match id `00123`); a config
//!   or summary value that is a JSON number equals a numeric value (`cfg.lr=1e-3`
//!   matches `0.001`). For tags, `=` is "some tag equals" and `!=` "no tag equals".
//! - **`field>n`**, `>=`, `<`, `<=`: numeric; a run whose value is missing or not a
//!   number does not match; an `n` that is not a number is an error.
//! - **`has:field`** (or `exists:field`): a text field or the tags are not empty; a
//!   config or summary path exists (any value, an object too).
//! - **AND**: whitespace or the word `AND`. **OR**: a `|` term or the word `OR`.
//!   **NOT**: a leading `-` or `!` on a term, or the word `NOT` before it. Words are
//!   case-insensitive. NOT binds to one term, AND binds tighter than OR, there are no
//!   parentheses: `a b | c -d` is `(a AND b) OR (c AND NOT d)`.
//! - **Quoting**: `"..."` or `'...'`, anywhere in a term, groups spaces
//!   (`notes:"warm start"`); inside quotes `\` makes the next character literal
//!   (`name:"exp \"alpha\""`). Quoted text is never an operator, keyword or negation
//!   (`"-rc"` searches for `-rc`, `"OR"` for `or`); outside quotes `\` is literal, so
//!   regexes like `name:\d+` need no quoting.
//! - **Fields**: `name` (`run_name`, `display`, `display_name`), `id` (`run_id`),
//!   `key` (`run_key`, `path`: the run directory name), `project`, `notes` (`note`),
//!   `tags` (`tag`), `state` (running, finished, crashed, failed; `state:fin` is
//!   enough), `config.<path>` / `cfg.<path>` and `summary.<key>`. A path walks nested
//!   objects with `.` and lists with `[i]` (`cfg.model.layers`, `cfg.sizes[0]`),
//!   case-insensitively; a summary key may contain `/` (`summary.val/loss<0.3`).
//!   `config:term` / `summary:term` search every path and value (`path=value` too).
//!   An unknown field (a word before the operator, or after `has:`) is an error, as
//!   is a `state` no run can have; quoted, `"foo:bar"` searches `foo:bar`. A term whose
//!   left side is no word (`(?:a|b)`) is a bare term.
//!
//! A missing field never matches a comparison, so `cfg.x>1`, `cfg.x=1` and
//! `cfg.x!=1` all leave out a run without `x`, and `-cfg.x>1` keeps it.
//!
//! Errors (shown while typing, with the char offset): an unclosed quote, `=`, `!=`,
//! `>`, `>=`, `<` or `<=` with no value after it, a comparison with a value that is
//! not a number, an unknown field or state, `OR` with no term on one side, a regex
//! that does not compile or is over 1 MiB compiled. W&B accepts all of these silently
//! (a bad regex becomes a substring; a lone `OR` matches every run); glob mode has no
//! regex errors.

use regex::{Regex, RegexBuilder};
use serde_json::Value;

mod eval;
#[cfg(test)]
mod tests;

/// How `field:pattern` and bare terms match (Tab toggles it in the UI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Regex,
    Glob,
}

/// The text fields of a run the query reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextField {
    /// The run directory name (`run-20260209_010101-abc123`).
    Key,
    Name,
    Id,
    Project,
    Notes,
    /// `running`, `finished`, `crashed` or `failed`.
    State,
}

/// What the query needs from a run; the workspace index implements it.
pub trait RunFields {
    /// The text of a field; `None` or `""` when absent.
    fn text(&self, field: TextField) -> Option<&str>;
    fn tags(&self) -> &[String];
    /// The whole config object (including keys set later by `wandb.config.update`).
    fn config(&self) -> Option<&Value>;
    /// The latest summary object.
    fn summary(&self) -> Option<&Value>;
}

/// A parse error: `message` (with `detail`, e.g. the regex engine's reason), at char
/// offset `at` spanning `len` chars of the query text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    pub message: String,
    pub detail: Option<String>,
    pub at: usize,
    pub len: usize,
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.message, self.at)?;
        if let Some(d) = &self.detail {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for QueryError {}

/// A parsed query: OR of groups, each an AND of clauses. No groups matches all.
#[derive(Clone, Debug, Default)]
pub struct Query {
    groups: Vec<Vec<Clause>>,
}

impl Query {
    /// Whether the query has no clause (and so matches every run).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    #[must_use]
    pub fn matches(&self, run: &dyn RunFields) -> bool {
        self.groups.is_empty()
            || self
                .groups
                .iter()
                .any(|g| g.iter().all(|c| eval::clause(c, run)))
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Clause {
    negated: bool,
    pred: Pred,
}

#[derive(Clone, Debug)]
pub(crate) enum Pred {
    Bare(Matcher),
    Has(Field),
    Pattern(Field, Matcher),
    Eq(Field, String),
    Ne(Field, String),
    /// `None`: the right side is not a number, so nothing matches (as W&B).
    Cmp(Field, CmpOp, Option<f64>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Text(TextField),
    Tags,
    ConfigAny,
    /// Lower-cased path.
    ConfigPath(String),
    SummaryAny,
    SummaryPath(String),
}

/// A compiled text pattern: what a filter (and a query term) matches with.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Lower-cased substring (empty matches everything).
    Substr(String),
    Regex(Regex),
    /// Lower-cased glob, already wrapped in `*…*`.
    Glob(Vec<char>),
}

const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// How much of the user's term an error message quotes.
const QUOTE_CHARS: usize = 40;

/// One char of a term: the char, whether it was inside quotes, its offset.
#[derive(Clone, Copy)]
struct Ch {
    c: char,
    quoted: bool,
    at: usize,
}

fn text_of(t: &[Ch]) -> String {
    t.iter().map(|c| c.c).collect()
}

fn trim(mut t: &[Ch]) -> &[Ch] {
    while t.first().is_some_and(|c| c.c.is_whitespace()) {
        t = &t[1..];
    }
    while t.last().is_some_and(|c| c.c.is_whitespace()) {
        t = &t[..t.len() - 1];
    }
    t
}

/// Split into terms at unquoted whitespace; quotes group and `\` escapes inside them.
fn terms(text: &str) -> Result<Vec<Vec<Ch>>, QueryError> {
    let mut out = Vec::new();
    let mut cur: Vec<Ch> = Vec::new();
    let mut quote: Option<(char, usize)> = None;
    let mut escaped = false;
    let mut flush = |cur: &mut Vec<Ch>| {
        let t = trim(cur);
        if !t.is_empty() {
            out.push(t.to_vec());
        }
        cur.clear();
    };
    for (at, c) in text.chars().enumerate() {
        match quote {
            Some(_) if escaped => {
                cur.push(Ch {
                    c,
                    quoted: true,
                    at,
                });
                escaped = false;
            }
            Some((q, _)) => {
                if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                } else {
                    cur.push(Ch {
                        c,
                        quoted: true,
                        at,
                    });
                }
            }
            None if c == '"' || c == '\'' => quote = Some((c, at)),
            None if c.is_whitespace() => flush(&mut cur),
            None => cur.push(Ch {
                c,
                quoted: false,
                at,
            }),
        }
    }
    if let Some((_, at)) = quote {
        return Err(QueryError {
            message: "unclosed quote".into(),
            detail: None,
            at,
            len: 1,
        });
    }
    flush(&mut cur);
    Ok(out)
}

fn is_word(t: &[Ch], word: &str) -> bool {
    t.iter().all(|c| !c.quoted) && text_of(t).eq_ignore_ascii_case(word)
}

/// Parse `text` in `mode`. Regexes are compiled here, once.
///
/// # Errors
/// An unclosed quote, a comparison or `=`/`!=` with nothing after it, a comparison
/// with no number, an unknown field or state, a lone `OR`, a bad regex.
pub fn parse(text: &str, mode: Mode) -> Result<Query, QueryError> {
    let mut groups = Vec::new();
    let mut cur = Vec::new();
    let mut pending_not = false;
    let mut last_or: Option<&[Ch]> = None;
    let terms = join_spaced_operators(terms(text)?);
    for t in &terms {
        if is_word(t, "|") || is_word(t, "or") {
            pending_not = false;
            // An empty side would make the query match every run.
            if cur.is_empty() {
                return Err(lonely_or(t, "before"));
            }
            groups.push(std::mem::take(&mut cur));
            last_or = Some(t);
            continue;
        }
        if is_word(t, "and") {
            continue;
        }
        if is_word(t, "not") {
            pending_not = !pending_not;
            continue;
        }
        let negate = std::mem::take(&mut pending_not);
        if let Some(mut c) = clause(t, mode)? {
            c.negated ^= negate;
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        groups.push(cur);
    } else if let Some(or) = last_or {
        return Err(lonely_or(or, "after"));
    }
    Ok(Query { groups })
}

/// `config.n >= 1` as `config.n>=1`: a term that ends with an operator, or one
/// that starts with one (`>=`, `<=`, `!=`, `=`, `>`, `<`, `:`), is joined with the
/// term before it (split at spaces, each alone matched nothing: no run).
fn join_spaced_operators(terms: Vec<Vec<Ch>>) -> Vec<Vec<Ch>> {
    let op_char = |c: Option<&Ch>, first: bool| {
        c.is_some_and(|c| {
            !c.quoted && (matches!(c.c, '>' | '<' | '=' | ':') || (c.c == '!' && !first))
        })
    };
    let starts_op = |t: &[Ch]| {
        op_char(t.first(), false)
            && (t[0].c != '!' || t.get(1).is_some_and(|c| !c.quoted && c.c == '='))
    };
    let keyword = |t: &[Ch]| ["|", "or", "and", "not"].iter().any(|w| is_word(t, w));
    let mut out: Vec<Vec<Ch>> = Vec::with_capacity(terms.len());
    let mut open = false;
    for t in terms {
        let join = match out.last() {
            Some(prev) if !keyword(prev) && !keyword(&t) => open || starts_op(&t),
            _ => false,
        };
        open = op_char(t.last(), false) && !keyword(&t);
        match out.last_mut() {
            Some(prev) if join => prev.extend(t),
            _ => out.push(t),
        }
    }
    out
}

/// `OR` (or `|`) with no term on one `side`.
fn lonely_or(t: &[Ch], side: &str) -> QueryError {
    QueryError {
        message: format!("expected a term {side} '{}'", text_of(t)),
        detail: None,
        at: t.first().map_or(0, |c| c.at),
        len: t.len(),
    }
}

/// `==` is `=` (as Python writes it).
const OPS: [&str; 8] = [">=", "<=", "!=", "==", "=", ">", "<", ":"];

/// The leftmost unquoted operator after the first char (longest at a position).
fn find_op(t: &[Ch]) -> Option<(usize, &'static str)> {
    (1..t.len()).find_map(|i| {
        OPS.iter()
            .copied()
            .find(|op| {
                let n = op.chars().count();
                i + n <= t.len()
                    && t[i..i + n]
                        .iter()
                        .zip(op.chars())
                        .all(|(c, o)| !c.quoted && c.c == o)
            })
            .map(|op| (i, op))
    })
}

fn field(name: &str) -> Option<Field> {
    let f = name.trim().to_lowercase();
    Some(match f.as_str() {
        "name" | "run_name" | "display" | "display_name" => Field::Text(TextField::Name),
        "key" | "run_key" | "path" => Field::Text(TextField::Key),
        "id" | "run_id" => Field::Text(TextField::Id),
        "project" => Field::Text(TextField::Project),
        "note" | "notes" => Field::Text(TextField::Notes),
        "state" => Field::Text(TextField::State),
        "tag" | "tags" => Field::Tags,
        "config" | "cfg" => Field::ConfigAny,
        "summary" => Field::SummaryAny,
        _ => {
            if let Some(p) = f.strip_prefix("config.").or_else(|| f.strip_prefix("cfg.")) {
                if p.trim().is_empty() {
                    return None;
                }
                Field::ConfigPath(p.trim().to_owned())
            } else if let Some(p) = f.strip_prefix("summary.") {
                if p.trim().is_empty() {
                    return None;
                }
                Field::SummaryPath(p.trim().to_owned())
            } else {
                return None;
            }
        }
    })
}

fn clause(t: &[Ch], mode: Mode) -> Result<Option<Clause>, QueryError> {
    let mut negated = false;
    let mut t = t;
    while t
        .first()
        .is_some_and(|c| !c.quoted && (c.c == '-' || c.c == '!'))
    {
        negated = !negated;
        t = &t[1..];
    }
    if t.is_empty() {
        return Ok(None);
    }
    let bare = |t: &[Ch]| -> Result<Option<Clause>, QueryError> {
        let term = text_of(t);
        let m = matcher(&term, mode).map_err(|d| bad_regex(&term, t, d))?;
        Ok(Some(Clause {
            negated,
            pred: Pred::Bare(m),
        }))
    };
    let Some((i, op)) = find_op(t) else {
        return bare(t);
    };
    let lhs = text_of(trim(&t[..i]));
    let rhs_ch = trim(&t[i + op.chars().count()..]);
    let rhs = text_of(rhs_ch);
    let done = |pred| Ok(Some(Clause { negated, pred }));
    if op == ":" && matches!(lhs.to_lowercase().as_str(), "has" | "exists") {
        return match field(&rhs) {
            Some(f) => done(Pred::Has(f)),
            None => Err(unknown_field(rhs_ch)),
        };
    }
    let Some(f) = field(&lhs) else {
        // A word before the operator is meant as a field; anything else (a regex
        // such as `(?:a|b)`) is searched as text, as a quoted term always is.
        return if is_field_name(&lhs) {
            Err(unknown_field(trim(&t[..i])))
        } else {
            bare(t)
        };
    };
    let op_at = t[i].at;
    // `===`, `=>`, `=<`: an operator with more after it is none (it would
    // compare with a value starting `=` and match nothing, silently).
    if let Some(c) = rhs_ch.first().filter(|c| !c.quoted && "=<>!".contains(c.c)) {
        if op != ":" {
            return Err(QueryError {
                message: format!("'{op}{}' is no operator (=, ==, !=, <, <=, >, >=, :)", c.c),
                detail: None,
                at: op_at,
                len: op.chars().count() + 1,
            });
        }
    }
    if rhs_ch.is_empty() && op != ":" {
        return Err(QueryError {
            message: format!("expected a value after '{op}'"),
            detail: None,
            at: op_at,
            len: op.chars().count(),
        });
    }
    if f == Field::Text(TextField::State) {
        check_state(op, &rhs, rhs_ch, mode)?;
    }
    let number = rhs.trim().parse::<f64>().ok();
    if number.is_none() && matches!(op, ">" | ">=" | "<" | "<=") {
        return Err(QueryError {
            message: format!("expected a number after '{op}'"),
            detail: None,
            at: rhs_ch.first().map_or(op_at, |c| c.at),
            len: rhs_ch.len(),
        });
    }
    let cmp = |c| Pred::Cmp(f.clone(), c, number);
    match op {
        ":" => {
            let m = matcher(&rhs, mode).map_err(|d| {
                let mut e = bad_regex(&format!("{lhs}:{rhs}"), rhs_ch, d);
                e.at = rhs_ch.first().map_or(op_at + 1, |c| c.at);
                e
            })?;
            done(Pred::Pattern(f, m))
        }
        "=" | "==" => done(Pred::Eq(f, rhs)),
        "!=" => done(Pred::Ne(f, rhs)),
        ">" => done(cmp(CmpOp::Gt)),
        ">=" => done(cmp(CmpOp::Ge)),
        "<" => done(cmp(CmpOp::Lt)),
        _ => done(cmp(CmpOp::Le)),
    }
}

/// Whether `name` reads as a field (a word, maybe with a path), not as a pattern.
fn is_field_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./[]".contains(c))
}

/// `span` names no field.
fn unknown_field(span: &[Ch]) -> QueryError {
    let name = crate::text::sanitize(&text_of(span))
        .chars()
        .take(QUOTE_CHARS)
        .collect::<String>();
    QueryError {
        message: format!("unknown field '{name}'"),
        detail: Some(
            "known: name id key project notes tags state cfg.… summary.…; quoted, a term is text"
                .into(),
        ),
        at: span.first().map_or(0, |c| c.at),
        len: span.len(),
    }
}

/// A `state` term (`op` then `rhs`) that no state can match is an error.
fn check_state(op: &str, rhs: &str, span: &[Ch], mode: Mode) -> Result<(), QueryError> {
    let states = crate::msg::RunStatus::ALL.map(crate::msg::RunStatus::as_str);
    let known = match op {
        ":" => matcher(rhs, mode).map_or(true, |m| states.iter().any(|s| m.is_match(s))),
        "=" | "==" | "!=" => states.iter().any(|s| s.eq_ignore_ascii_case(rhs.trim())),
        _ => true,
    };
    if known {
        return Ok(());
    }
    Err(QueryError {
        message: format!("no state is '{}'", crate::text::sanitize(rhs)),
        detail: Some(states.join(" ")),
        at: span.first().map_or(0, |c| c.at),
        len: span.len(),
    })
}

fn bad_regex(what: &str, span: &[Ch], detail: String) -> QueryError {
    let mut shown: String = crate::text::sanitize(what)
        .chars()
        .take(QUOTE_CHARS)
        .collect();
    if what.chars().count() > QUOTE_CHARS {
        shown.push('…');
    }
    let at = span.first().map_or(0, |c| c.at);
    let len = span.last().map_or(0, |c| c.at + 1 - at);
    QueryError {
        message: format!("bad regex in {shown}"),
        detail: Some(detail),
        at,
        len,
    }
}

/// W&B's `hasRegexMeta`: without one of these a regex-mode pattern is a substring.
fn has_regex_meta(s: &str) -> bool {
    s.chars().any(|c| ".^$*+?()[]{}|\\".contains(c))
}

/// Compile a pattern; `Err` holds the regex engine's reason (never in glob mode).
pub(crate) fn matcher(pattern: &str, mode: Mode) -> Result<Matcher, String> {
    let lower = pattern.to_lowercase();
    match mode {
        Mode::Glob if lower.contains(['*', '?']) => {
            let mut g: Vec<char> = lower.chars().collect();
            if g.first() != Some(&'*') {
                g.insert(0, '*');
            }
            if g.last() != Some(&'*') {
                g.push('*');
            }
            Ok(Matcher::Glob(g))
        }
        Mode::Regex if has_regex_meta(pattern) => RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Matcher::Regex)
            .map_err(|e| regex_reason(&e)),
        _ => Ok(Matcher::Substr(lower)),
    }
}

fn regex_reason(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(_) => "pattern too large".into(),
        _ => {
            let s = e.to_string();
            s.lines()
                .rev()
                .find_map(|l| l.trim().strip_prefix("error: "))
                .map_or_else(
                    || s.lines().last().unwrap_or("").trim().to_owned(),
                    str::to_owned,
                )
        }
    }
}

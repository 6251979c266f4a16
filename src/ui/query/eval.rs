//! Evaluating parsed clauses against a run's fields.

use serde_json::Value;

use super::{Clause, CmpOp, Field, Matcher, Pred, RunFields, TextField};

/// The fields a bare term searches (W&B's `newBareRunFilterClause`).
const BARE: [TextField; 5] = [
    TextField::Key,
    TextField::Name,
    TextField::Id,
    TextField::Project,
    TextField::Notes,
];

pub(super) fn clause(c: &Clause, run: &dyn RunFields) -> bool {
    pred(&c.pred, run) != c.negated
}

fn pred(p: &Pred, run: &dyn RunFields) -> bool {
    match p {
        Pred::Bare(m) => {
            BARE.iter()
                .any(|f| nonempty(run.text(*f)).is_some_and(|s| m.is_match(s)))
                || run.tags().iter().any(|t| !t.is_empty() && m.is_match(t))
        }
        Pred::Has(f) => has(f, run),
        Pred::Pattern(f, m) => pattern(f, m, run),
        Pred::Eq(f, want) => {
            let mut any = false;
            candidates(f, run, &mut |v| {
                any = equal(v, want);
                any
            });
            any
        }
        Pred::Ne(f, want) => {
            let (mut seen, mut equal_any) = (false, false);
            candidates(f, run, &mut |v| {
                seen = true;
                equal_any = equal(v, want);
                equal_any
            });
            seen && !equal_any
        }
        Pred::Cmp(f, op, want) => {
            let (Some(want), Some(got)) = (want, number(f, run)) else {
                return false;
            };
            match op {
                CmpOp::Gt => got > *want,
                CmpOp::Ge => got >= *want,
                CmpOp::Lt => got < *want,
                CmpOp::Le => got <= *want,
            }
        }
    }
}

impl Matcher {
    pub(crate) fn is_match(&self, s: &str) -> bool {
        match self {
            Matcher::Substr(l) => l.is_empty() || s.to_lowercase().contains(l.as_str()),
            Matcher::Regex(r) => r.is_match(s),
            Matcher::Glob(g) => {
                let t: Vec<char> = s.to_lowercase().chars().collect();
                wildcard(g, &t)
            }
        }
    }
}

/// W&B's `wildcardMatch`: `*` any run, `?` one char, backtracking to the last star.
fn wildcard(p: &[char], t: &[char]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

fn nonempty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

/// A config or summary value as W&B compares it: a leaf's text (objects and lists
/// are not leaves). A whole float prints without `.0`, as Go's `fmt.Sprint` does.
enum Leaf<'a> {
    Text(&'a str),
    Num(f64, String),
    Other(&'static str),
}

impl Leaf<'_> {
    fn text(&self) -> &str {
        match self {
            Leaf::Text(s) => s,
            Leaf::Num(_, s) => s,
            Leaf::Other(s) => s,
        }
    }
}

fn leaf(v: &Value) -> Option<Leaf<'_>> {
    Some(match v {
        Value::String(s) => Leaf::Text(s),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            let text = if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 {
                format!("{f:.0}")
            } else {
                n.to_string()
            };
            Leaf::Num(f, text)
        }
        Value::Bool(true) => Leaf::Other("true"),
        Value::Bool(false) => Leaf::Other("false"),
        Value::Null => Leaf::Other("null"),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// Look `path` (lower case) up in `v`: `.` into objects, `[i]` into lists, keys
/// compared case-insensitively; a key containing `.` matches too (`a.b` key).
fn resolve<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(v);
    }
    match v {
        Value::Object(m) => m.iter().find_map(|(k, child)| {
            let k = k.to_lowercase();
            let rest = path.strip_prefix(k.as_str())?;
            let next = if rest.is_empty() || rest.starts_with('[') {
                rest
            } else {
                rest.strip_prefix('.')?
            };
            resolve(child, next)
        }),
        Value::Array(a) => {
            let (idx, rest) = path.strip_prefix('[')?.split_once(']')?;
            let child = a.get(idx.parse::<usize>().ok()?)?;
            let next = if rest.is_empty() || rest.starts_with('[') {
                rest
            } else {
                rest.strip_prefix('.')?
            };
            resolve(child, next)
        }
        _ => None,
    }
}

/// Visit every leaf of `v` as (lower-cased flattened path, leaf) until `f` says stop.
fn leaves(v: &Value, prefix: &mut String, f: &mut dyn FnMut(&str, &Leaf<'_>) -> bool) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, child)| {
            let len = prefix.len();
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(&k.to_lowercase());
            let stop = leaves(child, prefix, f);
            prefix.truncate(len);
            stop
        }),
        Value::Array(a) => a.iter().enumerate().any(|(i, child)| {
            let len = prefix.len();
            prefix.push_str(&format!("[{i}]"));
            let stop = leaves(child, prefix, f);
            prefix.truncate(len);
            stop
        }),
        _ => leaf(v).is_some_and(|l| f(prefix, &l)),
    }
}

fn any_leaf(root: Option<&Value>, f: &mut dyn FnMut(&str, &Leaf<'_>) -> bool) -> bool {
    root.is_some_and(|v| v.is_object() && leaves(v, &mut String::new(), f))
}

fn path_leaf<'a>(root: Option<&'a Value>, path: &str) -> Option<Leaf<'a>> {
    root.and_then(|v| resolve(v, path)).and_then(leaf)
}

fn has(f: &Field, run: &dyn RunFields) -> bool {
    match f {
        Field::Text(t) => nonempty(run.text(*t)).is_some(),
        Field::Tags => run.tags().iter().any(|t| !t.is_empty()),
        Field::ConfigAny => any_leaf(run.config(), &mut |_, _| true),
        Field::SummaryAny => any_leaf(run.summary(), &mut |_, _| true),
        Field::ConfigPath(p) => run.config().and_then(|v| resolve(v, p)).is_some(),
        Field::SummaryPath(p) => run.summary().and_then(|v| resolve(v, p)).is_some(),
    }
}

fn pattern(f: &Field, m: &Matcher, run: &dyn RunFields) -> bool {
    let any = |root| {
        any_leaf(root, &mut |p, l| {
            m.is_match(p) || m.is_match(l.text()) || m.is_match(&format!("{p}={}", l.text()))
        })
    };
    match f {
        Field::Text(t) => nonempty(run.text(*t)).is_some_and(|s| m.is_match(s)),
        Field::Tags => run.tags().iter().any(|t| !t.is_empty() && m.is_match(t)),
        Field::ConfigAny => any(run.config()),
        Field::SummaryAny => any(run.summary()),
        Field::ConfigPath(p) => path_leaf(run.config(), p).is_some_and(|l| m.is_match(l.text())),
        Field::SummaryPath(p) => path_leaf(run.summary(), p).is_some_and(|l| m.is_match(l.text())),
    }
}

/// The values `=` and `!=` compare, fed to `f` until it returns true.
fn candidates(f: &Field, run: &dyn RunFields, out: &mut dyn FnMut(&Leaf<'_>) -> bool) {
    let any = |root, out: &mut dyn FnMut(&Leaf<'_>) -> bool| {
        any_leaf(root, &mut |p, l| {
            out(&Leaf::Text(p)) || out(l) || out(&Leaf::Text(&format!("{p}={}", l.text())))
        });
    };
    match f {
        Field::Text(t) => {
            if let Some(s) = nonempty(run.text(*t)) {
                out(&Leaf::Text(s));
            }
        }
        Field::Tags => {
            let _ = run
                .tags()
                .iter()
                .filter(|t| !t.is_empty())
                .any(|t| out(&Leaf::Text(t)));
        }
        Field::ConfigAny => any(run.config(), out),
        Field::SummaryAny => any(run.summary(), out),
        Field::ConfigPath(p) | Field::SummaryPath(p) => {
            let root = if matches!(f, Field::ConfigPath(_)) {
                run.config()
            } else {
                run.summary()
            };
            if let Some(l) = path_leaf(root, p) {
                out(&l);
            }
        }
    }
}

/// Case-insensitive, trimmed text equality; a JSON number equals a numeric `want`.
fn equal(got: &Leaf<'_>, want: &str) -> bool {
    let want = want.trim();
    if let Leaf::Num(n, _) = got {
        if let Ok(w) = want.parse::<f64>() {
            return *n == w;
        }
    }
    got.text().trim().to_lowercase() == want.to_lowercase()
}

/// The single number a comparison reads: a text field or a config/summary leaf that
/// is a number or text parsing as one.
fn number(f: &Field, run: &dyn RunFields) -> Option<f64> {
    let parse = |s: &str| s.trim().parse::<f64>().ok();
    match f {
        Field::Text(t) => nonempty(run.text(*t)).and_then(parse),
        Field::Tags | Field::ConfigAny | Field::SummaryAny => None,
        Field::ConfigPath(p) => leaf_number(path_leaf(run.config(), p)?),
        Field::SummaryPath(p) => leaf_number(path_leaf(run.summary(), p)?),
    }
}

fn leaf_number(l: Leaf<'_>) -> Option<f64> {
    match l {
        Leaf::Num(n, _) => Some(n),
        Leaf::Text(s) => s.trim().parse().ok(),
        Leaf::Other(_) => None,
    }
}

//! `--match` label matchers (`job="train"`, `instance=~"node-[0-7].*"`): parsed,
//! checked and written back in one normal form, so that what reaches a query is a
//! matcher and nothing else (no `}` that closes a selector early, no injected
//! PromQL).

use std::fmt;

/// How a matcher compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Re,
    NotRe,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "=",
            Self::Ne => "!=",
            Self::Re => "=~",
            Self::NotRe => "!~",
        }
    }
}

/// One label matcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    pub label: String,
    pub op: Op,
    pub value: String,
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}\"", self.label, self.op.as_str())?;
        for c in self.value.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

impl Matcher {
    /// Whether a label set passes it, as Prometheus decides (a label absent is an
    /// empty value; a regex matches the whole value).
    #[must_use]
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.label).map_or("", String::as_str);
        let re =
            || regex::Regex::new(&format!("^(?:{})$", self.value)).is_ok_and(|r| r.is_match(v));
        match self.op {
            Op::Eq => v == self.value,
            Op::Ne => v != self.value,
            Op::Re => re(),
            Op::NotRe => !re(),
        }
    }
}

/// Why a `--match` value is not matchers; names the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--match '{text}': {why}")]
pub struct MatchError {
    pub text: String,
    pub why: String,
}

/// The matchers every query carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matchers(Vec<Matcher>);

/// The longest `--match` value read.
const MAX_TEXT: usize = 4096;

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// One matcher at the start of `s`: it and the rest of `s`.
fn one(s: &str) -> Result<(Matcher, &str), String> {
    let s = s.trim_start();
    if !s.starts_with(is_name_start) {
        return Err("a label name must start the matcher".into());
    }
    let end = s.find(|c| !is_name(c)).unwrap_or(s.len());
    let (label, rest) = s.split_at(end);
    let rest = rest.trim_start();
    let op = [Op::Re, Op::NotRe, Op::Ne, Op::Eq]
        .into_iter()
        .find(|op| rest.starts_with(op.as_str()))
        .ok_or_else(|| format!("no =, !=, =~ or !~ after '{label}'"))?;
    let rest = rest[op.as_str().len()..].trim_start();
    let mut chars = rest.char_indices();
    // PromQL's string literals: in double or single quotes, with escapes, or in
    // backticks, raw.
    let Some(quote) = chars
        .next()
        .map(|(_, c)| c)
        .filter(|c| matches!(c, '"' | '\'' | '`'))
    else {
        return Err(format!(
            "the value of '{label}' must be quoted (\"…\", '…' or `…`)"
        ));
    };
    let mut value = String::new();
    let mut escaped = false;
    for (i, c) in chars {
        if escaped {
            value.push(match c {
                'n' => '\n',
                't' => '\t',
                '"' | '\'' | '\\' => c,
                _ => return Err(format!("unknown escape '\\{c}'")),
            });
            escaped = false;
        } else if c == '\\' && quote != '`' {
            escaped = true;
        } else if c == quote {
            let m = Matcher {
                label: label.to_string(),
                op,
                value,
            };
            return Ok((m, &rest[i + 1..]));
        } else {
            value.push(c);
        }
    }
    Err(format!("the value of '{label}' has no closing quote"))
}

impl Matchers {
    /// Matchers from `--match` values; each may hold several, comma-separated, and
    /// may be wrapped in `{…}`.
    pub fn parse<S: AsRef<str>>(texts: &[S]) -> Result<Self, MatchError> {
        let mut out = Vec::new();
        for text in texts {
            let text = text.as_ref();
            let err = |why: String| MatchError {
                text: leet_text::sanitize(text).chars().take(200).collect(),
                why,
            };
            if text.len() > MAX_TEXT {
                return Err(err(format!("longer than {MAX_TEXT} bytes")));
            }
            let mut s = text.trim();
            if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                s = inner;
            }
            while !s.trim().is_empty() {
                let (m, rest) = one(s).map_err(err)?;
                if matches!(m.op, Op::Re | Op::NotRe) {
                    // Prometheus anchors the expression; RE2's syntax is the regex crate's.
                    regex::Regex::new(&format!("^(?:{})$", m.value))
                        .map_err(|e| err(format!("bad regular expression: {e}")))?;
                }
                out.push(m);
                let rest = rest.trim_start();
                s = match rest.strip_prefix(',') {
                    Some(r) => r,
                    None if rest.is_empty() => rest,
                    None => return Err(err("matchers are separated by commas".into())),
                };
            }
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a label set passes every matcher.
    #[must_use]
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.0.iter().all(|m| m.matches(labels))
    }

    pub fn as_slice(&self) -> &[Matcher] {
        &self.0
    }

    /// The selector `metric{<these>,<extra>}` (`metric` may be empty; `extra` is the
    /// rule's own matchers, trusted text).
    pub fn selector(&self, metric: &str, extra: &str) -> String {
        let mut parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        if !extra.is_empty() {
            parts.push(extra.to_string());
        }
        format!("{metric}{{{}}}", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_parse_and_are_written_back_in_one_form() {
        let m = Matchers::parse(&[r#"job="train", instance=~"node-[0-7].*""#, r#"{gpu!="3"}"#])
            .expect("valid");
        assert_eq!(
            m.selector("up", ""),
            r#"up{job="train",instance=~"node-[0-7].*",gpu!="3"}"#
        );
        assert_eq!(
            m.selector("", r#"__name__=~"leet_.+""#),
            r#"{job="train",instance=~"node-[0-7].*",gpu!="3",__name__=~"leet_.+"}"#
        );
        let q = Matchers::parse(&[r#"x="a\"}) or vector(1) #""#]).expect("quoted");
        assert_eq!(q.selector("up", ""), r#"up{x="a\"}) or vector(1) #"}"#);
        assert_eq!(
            Matchers::parse::<&str>(&[])
                .expect("none")
                .selector("up", ""),
            "up{}"
        );
    }

    /// PromQL's three string literals: `'…'` (natural inside a double-quoted shell
    /// argument) and raw `` `…` `` as `"…"` (single quotes were refused).
    #[test]
    fn single_quoted_and_raw_values_are_read_as_promql_reads_them() {
        let m = Matchers::parse(&[r#"job='leet', instance=~`node-\d+`, x='it\'s "q"'"#])
            .expect("valid");
        assert_eq!(
            m.selector("up", ""),
            r#"up{job="leet",instance=~"node-\\d+",x="it's \"q\""}"#
        );
        for bad in ["job='leet", "job=`leet", r#"job='leet""#] {
            assert!(Matchers::parse(&[bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_matchers_are_errors_that_name_the_text() {
        for bad in [
            "job",
            "job=train",
            r#"job="train"#,
            r#"1job="x""#,
            r#"job=="x""#,
            r#"job="x" instance="y""#,
            r#"job=~"(""#,
            r#"job="x"}) or up{"#,
            r#"job="\q""#,
        ] {
            let err = Matchers::parse(&[bad]).expect_err(bad);
            assert!(err.to_string().starts_with("--match '"), "{err}");
        }
    }
}

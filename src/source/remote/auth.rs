//! The API key, found where W&B's own tools look: `WANDB_API_KEY`, else the netrc
//! file (`NETRC`, else `~/.netrc`) entry whose `machine` is the API's host and
//! port, as `wandb login` writes it. The key is sent as HTTP basic auth with the
//! user `api`. It is held in a type that never prints it.

use std::path::{Path, PathBuf};

use crate::source::http::base64;

/// A W&B API key. `Debug` and `Display` do not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

impl ApiKey {
    /// A key from its text (blank text is no key).
    pub fn new(key: &str) -> Option<Self> {
        let k = key.trim();
        (!k.is_empty()).then(|| Self(k.to_owned()))
    }

    /// The `Authorization` header's value: basic auth of `api:KEY`.
    pub(crate) fn header(&self) -> String {
        format!("Basic {}", base64(format!("api:{}", self.0).as_bytes()))
    }

    /// Whether `text` holds the key (for checks that it leaked nowhere).
    pub fn appears_in(&self, text: &str) -> bool {
        text.contains(&self.0)
    }
}

/// Find the key for the API at `netloc` (host and port): `env` reads an
/// environment variable (`std::env::var` in the program, a table in tests).
pub fn find_key(netloc: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<ApiKey> {
    if let Some(k) = env("WANDB_API_KEY").and_then(|k| ApiKey::new(&k)) {
        return Some(k);
    }
    let path = netrc_path(env)?;
    let text = std::fs::read_to_string(path).ok()?;
    netrc_password(&text, netloc).and_then(|k| ApiKey::new(&k))
}

fn netrc_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("NETRC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = PathBuf::from(env("HOME")?);
    [".netrc", "_netrc"]
        .iter()
        .map(|n| home.join(n))
        .find(|p| Path::is_file(p))
}

/// The password of `machine` in a netrc file's text (`default` when no machine
/// matches). `macdef` bodies, which run to a blank line, are skipped.
pub fn netrc_password(text: &str, machine: &str) -> Option<String> {
    let mut found: Option<String> = None;
    let mut default: Option<String> = None;
    // Which entry the tokens belong to: Some(true) the machine, Some(false)
    // another, None the default entry.
    let mut entry: Option<bool> = Some(false);
    let mut in_macdef = false;
    for line in text.lines() {
        if in_macdef {
            in_macdef = !line.trim().is_empty();
            continue;
        }
        let mut tokens = netrc_tokens(line).into_iter();
        while let Some(t) = tokens.next() {
            match t.as_str() {
                "machine" => entry = Some(tokens.next().as_deref() == Some(machine)),
                "default" => entry = None,
                "password" => {
                    let v = tokens.next();
                    match entry {
                        Some(true) if found.is_none() => found = v,
                        None => default = v,
                        _ => {}
                    }
                }
                "macdef" => {
                    in_macdef = true;
                    break;
                }
                _ => {}
            }
        }
    }
    found.or(default)
}

/// A netrc line's tokens: split at whitespace, a token in double quotes taken
/// whole without them (`password "a key"`), `\` taking the next character as it
/// is, as Python's `netrc` (which `wandb login` writes with) reads them.
fn netrc_tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else {
            return out;
        };
        let quoted = first == '"';
        if quoted {
            chars.next();
        }
        let mut t = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted => break,
                '\\' => t.extend(chars.next()),
                c if !quoted && c.is_whitespace() => break,
                c => t.push(c),
            }
        }
        out.push(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_api_and_the_key_in_base64() {
        let k = ApiKey::new("secret").expect("key");
        assert_eq!(k.header(), "Basic YXBpOnNlY3JldA==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(format!("{k:?}"), "ApiKey(<hidden>)");
    }

    #[test]
    fn netrc_entries_of_the_machine_win_over_default_and_macdef_is_skipped() {
        let text = "machine other login x password nope\n\
                    macdef init\nmachine api.wandb.ai password trap\n\n\
                    machine api.wandb.ai\n  login user\n  password k1\n\
                    default login d password kd\n";
        assert_eq!(netrc_password(text, "api.wandb.ai").as_deref(), Some("k1"));
        assert_eq!(netrc_password(text, "127.0.0.1:9").as_deref(), Some("kd"));
        assert_eq!(netrc_password("machine a password b", "c"), None);
        assert_eq!(netrc_password("password", "c"), None);
    }

    #[test]
    fn a_quoted_netrc_password_is_read_whole_without_its_quotes() {
        let text = "machine h password \"QUOTED KEY\"\nmachine e password \"a\\\"b\"\n";
        assert_eq!(netrc_password(text, "h").as_deref(), Some("QUOTED KEY"));
        assert_eq!(netrc_password(text, "e").as_deref(), Some("a\"b"));
        assert_eq!(
            netrc_tokens("  machine  \"x y\"\tpassword k "),
            ["machine", "x y", "password", "k"]
        );
        assert_eq!(netrc_tokens("\"unclosed"), ["unclosed"]);
    }

    #[test]
    fn the_environment_wins_over_the_netrc_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let netrc = dir.path().join("n");
        std::fs::write(&netrc, "machine h:1 login user password fromfile\n").expect("write");
        let n = netrc.display().to_string();
        let with_env = |k: &str| match k {
            "WANDB_API_KEY" => Some("fromenv".to_owned()),
            "NETRC" => Some(n.clone()),
            _ => None,
        };
        assert!(find_key("h:1", &with_env).is_some_and(|k| k.appears_in("fromenv")));
        let file_only = |k: &str| (k == "NETRC").then(|| n.clone());
        assert!(find_key("h:1", &file_only).is_some_and(|k| k.appears_in("fromfile")));
        assert_eq!(find_key("h:2", &file_only), None);
    }
}

//! A W&B URL: the app's URL of a run or project, read the way W&B's clients read
//! it, and the API host its queries go to.

use super::RemoteError;

/// A run (or project) on a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// Scheme, host and port of the API (`https://api.wandb.ai`), no trailing `/`.
    pub api: String,
    /// The entity (user or team).
    pub entity: String,
    /// The project.
    pub project: String,
    /// The run's id (its `name` in the API); None for a project URL.
    pub run: Option<String>,
}

impl RemoteUrl {
    /// Parse `https://HOST/ENTITY/PROJECT/runs/RUN_ID`, `https://HOST/ENTITY/PROJECT/RUN_ID`
    /// (a tab such as `/overview` after the id is allowed), or a project's
    /// `https://HOST/ENTITY/PROJECT`. `wandb.ai` is the app of `api.wandb.ai`;
    /// `base_url` (`WANDB_BASE_URL`), when its host is the URL's and the URL gives
    /// no port, gives the API's scheme and port as the user configured them.
    /// Names are percent-decoded, as a browser's address bar copies them.
    ///
    /// # Errors
    /// [`RemoteError::BadUrl`] for anything else.
    pub fn parse(s: &str, base_url: Option<&str>) -> Result<Self, RemoteError> {
        let bad = || RemoteError::BadUrl(leet_text::sanitize(s));
        let (scheme, rest) = s.split_once("://").ok_or_else(bad)?;
        if scheme != "https" && scheme != "http" {
            return Err(bad());
        }
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() || host.contains('@') || !host.chars().all(host_char) {
            return Err(bad());
        }
        // A browser copies a name it would not show as it is percent-encoded.
        let decoded: Vec<String> = (path.split('/').filter(|p| !p.is_empty()))
            .map(percent_decoded)
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        let parts: Vec<&str> = decoded.iter().map(String::as_str).collect();
        let (entity, project, run) = match parts.as_slice() {
            [e, p] | [e, p, "runs"] => (e, p, None),
            // A project's tabs (and what is under them: a sweep, a report).
            [e, p, tab, ..] if PROJECT_TABS.contains(tab) => (e, p, None),
            [e, p, "runs", r, ..] => (e, p, Some(*r)),
            [e, p, r] | [e, p, r, "overview" | "logs" | "files" | "system" | "workspace"] => {
                (e, p, Some(*r))
            }
            _ => return Err(bad()),
        };
        if [entity, project].iter().any(|x| !name_ok(x)) || run.is_some_and(|r| !name_ok(r)) {
            return Err(bad());
        }
        Ok(Self {
            api: api_base(scheme, host, base_url),
            entity: (*entity).to_owned(),
            project: (*project).to_owned(),
            run: run.map(str::to_owned),
        })
    }

    /// The API's host and port (`api.wandb.ai`, `127.0.0.1:8080`): the netrc
    /// `machine` that `wandb login` writes.
    pub fn netloc(&self) -> &str {
        self.api
            .split_once("://")
            .map_or(self.api.as_str(), |(_, h)| h)
    }

    /// `entity/project/run` (or `entity/project`), as messages show it.
    pub fn path(&self) -> String {
        match &self.run {
            Some(r) => format!("{}/{}/{r}", self.entity, self.project),
            None => format!("{}/{}", self.entity, self.project),
        }
    }

    /// The run's URL as messages name it: the API host and the path.
    pub fn shown(&self) -> String {
        leet_text::sanitize(&format!("{}/{}", self.api, self.path()))
    }
}

/// The tabs of a project's page in W&B's app: a URL ending in one names the
/// project, not a run.
const PROJECT_TABS: [&str; 11] = [
    "workspace",
    "table",
    "overview",
    "artifacts",
    "reports",
    "sweeps",
    "jobs",
    "automations",
    "launch",
    "settings",
    "models",
];

/// A path segment with its `%XX` escapes decoded; None when one is malformed or
/// the result is not UTF-8.
fn percent_decoded(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']' | '_')
}

/// W&B names: no control characters, no spaces, nothing a path could escape with.
fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars().all(|c| !c.is_control() && c != ' ' && c != '/')
}

fn api_base(scheme: &str, host: &str, base_url: Option<&str>) -> String {
    let (name, port) = host.rsplit_once(':').unwrap_or((host, ""));
    if name.eq_ignore_ascii_case("wandb.ai") || name.eq_ignore_ascii_case("www.wandb.ai") {
        return "https://api.wandb.ai".to_owned();
    }
    // A port in the URL names the server: another one on the same host that
    // `WANDB_BASE_URL` names is not it.
    if let Some(base) = base_url.filter(|_| port.is_empty()) {
        let base = base.trim_end_matches('/');
        if let Some((_, b)) = base.split_once("://") {
            let b_host = b.split('/').next().unwrap_or_default();
            let b_name = b_host.rsplit_once(':').map_or(b_host, |(n, _)| n);
            if b_name.eq_ignore_ascii_case(name) {
                return base.to_owned();
            }
        }
    }
    format!("{scheme}://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> RemoteUrl {
        RemoteUrl::parse(s, None).expect(s)
    }

    #[test]
    fn run_urls_in_both_shapes_and_with_a_tab() {
        for s in [
            "https://wandb.ai/ent/proj/runs/abc123",
            "https://wandb.ai/ent/proj/abc123",
            "https://wandb.ai/ent/proj/runs/abc123/overview?nw=1",
            "https://wandb.ai/ent/proj/runs/abc123/",
        ] {
            let u = p(s);
            assert_eq!(u.api, "https://api.wandb.ai", "{s}");
            assert_eq!((u.entity.as_str(), u.project.as_str()), ("ent", "proj"));
            assert_eq!(u.run.as_deref(), Some("abc123"), "{s}");
        }
    }

    #[test]
    fn project_urls_have_no_run() {
        assert_eq!(p("https://wandb.ai/ent/proj").run, None);
        assert_eq!(p("https://wandb.ai/ent/proj/workspace").run, None);
        assert_eq!(p("https://wandb.ai/ent/proj/runs").run, None);
        for tab in PROJECT_TABS {
            let u = p(&format!("https://wandb.ai/ent/proj/{tab}"));
            assert_eq!((u.project.as_str(), u.run), ("proj", None), "{tab}");
        }
        assert_eq!(p("https://wandb.ai/ent/proj/sweeps/ab12cd").run, None);
        // A run's own tabs stay the run's.
        assert_eq!(
            p("https://wandb.ai/ent/proj/runs/r1/overview")
                .run
                .as_deref(),
            Some("r1")
        );
        assert_eq!(
            p("https://wandb.ai/ent/proj/r1/logs").run.as_deref(),
            Some("r1")
        );
    }

    #[test]
    fn names_are_percent_decoded() {
        let u = p("https://wandb.ai/ent/%C3%BCproj/runs/ti%6Ey");
        assert_eq!(
            (u.project.as_str(), u.run.as_deref()),
            ("üproj", Some("tiny"))
        );
        for s in [
            "https://wandb.ai/ent/p%2/runs/r",
            "https://wandb.ai/ent/p%zz/runs/r",
            "https://wandb.ai/ent/p%FF/runs/r",
            "https://wandb.ai/ent/p/runs/%1b%5b2J",
            "https://wandb.ai/ent/p/runs/%2e%2e",
        ] {
            assert!(RemoteUrl::parse(s, None).is_err(), "{s}");
        }
    }

    #[test]
    fn a_self_hosted_or_local_server_is_its_own_api() {
        let u = p("http://127.0.0.1:8080/e/p/runs/r");
        assert_eq!(u.api, "http://127.0.0.1:8080");
        assert_eq!(u.netloc(), "127.0.0.1:8080");
        let u = RemoteUrl::parse("https://w.corp/e/p/r", Some("https://w.corp:8443/")).expect("ok");
        assert_eq!(u.api, "https://w.corp:8443");
        // A port in the URL is the server's, whatever WANDB_BASE_URL says of
        // another on the same host.
        let base = Some("https://127.0.0.1:8765");
        let u = RemoteUrl::parse("http://127.0.0.1:8766/e/p/runs/r", base).expect("ok");
        assert_eq!(u.api, "http://127.0.0.1:8766");
    }

    #[test]
    fn other_strings_are_bad_urls_and_say_so_sanitized() {
        for s in [
            "ftp://wandb.ai/e/p/r",
            "https://",
            "https://wandb.ai/e",
            "https://user:pw@wandb.ai/e/p/r",
            "https://wandb.ai/e/p/..",
            "https://wandb.ai/e/p/r\u{1b}[2J",
            "run.wandb",
        ] {
            let e = RemoteUrl::parse(s, None).expect_err(s).to_string();
            assert!(!e.contains('\u{1b}'), "{e}");
            assert!(e.contains("not a W&B URL"), "{e}");
        }
    }
}

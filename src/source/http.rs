//! A blocking HTTP(S) client for one server's API: base URL, connect and read
//! deadlines, a bounded response, and the credentials of the URL's userinfo sent as
//! a header and never printed. Shared by the clients of HTTP APIs (Prometheus).
//!
//! `http://user:pass@host/` sends HTTP basic auth; `http://token@host/` (no `:`)
//! sends `Authorization: Bearer token`. The server's name in errors and in
//! [`Endpoint::server`] is the URL without its userinfo. HTTPS trusts the CA files
//! of `SSL_CERT_FILE` and `REQUESTS_CA_BUNDLE` when set (both: a container's
//! `SSL_CERT_FILE` often names the system bundle while `REQUESTS_CA_BUNDLE` names
//! the private CA, as for W&B's tools), else the public roots.

use std::fmt;
use std::time::Duration;

/// Deadlines and limits of an [`Endpoint`].
#[derive(Debug, Clone, Copy)]
pub struct HttpOptions {
    /// Establishing the connection (and TLS).
    pub connect: Duration,
    /// The whole exchange, the body included.
    pub total: Duration,
    /// The largest body read; a larger one is an error, not a truncation.
    pub max_body: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(3),
            total: Duration::from_secs(10),
            max_body: 64 << 20,
        }
    }
}

pub use crate::msg::cluster::HttpError;

/// Credentials from a URL's userinfo. Debug shows neither part.
#[derive(Clone, PartialEq, Eq)]
enum Auth {
    Basic(String),
    Bearer(String),
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Basic(_) => "Basic(<redacted>)",
            Self::Bearer(_) => "Bearer(<redacted>)",
        })
    }
}

/// An answer: its status and body (at most [`HttpOptions::max_body`] bytes).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// One server: where, with which credentials and limits.
#[derive(Clone)]
pub struct Endpoint {
    /// `scheme://host[:port][/path]`, no userinfo, no trailing `/`.
    base: String,
    auth: Option<Auth>,
    opts: HttpOptions,
    agent: ureq::Agent,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.base)
            .field("auth", &self.auth)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// `%XX` sequences decoded (userinfo is percent-encoded in a URL).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if b[i] == b'%' {
            if let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648), for basic auth (the Prometheus
/// client's and a W&B server's).
pub(crate) fn base64(input: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(input)
}

/// The base URL and credentials of `url`.
fn split_url(url: &str) -> Result<(String, Option<Auth>), HttpError> {
    let bad = |why: &str| HttpError::BadUrl {
        url: leet_text::sanitize(&redact(url)),
        why: why.to_string(),
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
    if !matches!(scheme, "http" | "https") {
        return Err(bad("the scheme is not http or https"));
    }
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    if path.contains(['?', '#']) {
        return Err(bad("a query or fragment is not part of a base URL"));
    }
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("no host"));
    }
    let auth = userinfo.map(|u| match u.split_once(':') {
        Some((user, pass)) => {
            let pair = format!("{}:{}", percent_decode(user), percent_decode(pass));
            Auth::Basic(base64(pair.as_bytes()))
        }
        None => Auth::Bearer(percent_decode(u)),
    });
    let base = format!("{scheme}://{host}{}", path.trim_end_matches('/'));
    Ok((base, auth))
}

/// `url` with any userinfo replaced by `***`, for messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

impl Endpoint {
    /// An endpoint for `url` (`http(s)://[userinfo@]host[:port][/path]`).
    pub fn new(url: &str, opts: HttpOptions) -> Result<Self, HttpError> {
        let files = ca_files(
            std::env::var_os("SSL_CERT_FILE"),
            std::env::var_os("REQUESTS_CA_BUNDLE"),
        );
        Self::with_ca_files(url, opts, &files)
    }

    /// An endpoint for `url` trusting the certificates of `ca_files` (the public
    /// roots when there is none).
    pub fn with_ca_files(
        url: &str,
        opts: HttpOptions,
        ca_files: &[std::path::PathBuf],
    ) -> Result<Self, HttpError> {
        let (base, auth) = split_url(url.trim())?;
        let tls = tls_config(ca_files).map_err(|why| HttpError::Failed {
            server: base.clone(),
            why,
        })?;
        let agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .timeout_connect(Some(opts.connect))
            .timeout_global(Some(opts.total))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("leet/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Self {
            base,
            auth,
            opts,
            agent,
        })
    }

    /// The server as errors name it: the base URL without credentials.
    pub fn server(&self) -> &str {
        &self.base
    }

    /// `GET base + path` with `query` (percent-encoded here).
    pub fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Answer, HttpError> {
        let mut req = self
            .agent
            .get(format!("{}{path}", self.base))
            .query_pairs(query.iter().copied());
        match &self.auth {
            Some(Auth::Basic(b)) => req = req.header("Authorization", format!("Basic {b}")),
            Some(Auth::Bearer(t)) => req = req.header("Authorization", format!("Bearer {t}")),
            None => {}
        }
        let mut resp = req.call().map_err(|e| self.error(e))?;
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(self.opts.max_body)
            .lossy_utf8(true)
            .read_to_string()
            .map_err(|e| self.error(e))?;
        Ok(Answer { status, body })
    }

    fn error(&self, e: ureq::Error) -> HttpError {
        let server = self.base.clone();
        match e {
            ureq::Error::Timeout(_) => HttpError::Timeout {
                server,
                secs: self.opts.total.as_secs().max(1),
            },
            ureq::Error::BodyExceedsLimit(_) => HttpError::TooLarge {
                server,
                limit: self.opts.max_body,
            },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                HttpError::Refused { server }
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                HttpError::Timeout {
                    server,
                    secs: self.opts.total.as_secs().max(1),
                }
            }
            ureq::Error::ConnectionFailed => HttpError::Refused { server },
            other => HttpError::Failed {
                server,
                why: with_ca_hint(leet_text::sanitize(&other.to_string())),
            },
        }
    }
}

/// The CA files named by `SSL_CERT_FILE` and `REQUESTS_CA_BUNDLE` (empty means
/// unset; one file named by both counts once).
fn ca_files(
    ssl_cert_file: Option<std::ffi::OsString>,
    requests_ca_bundle: Option<std::ffi::OsString>,
) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for v in [ssl_cert_file, requests_ca_bundle].into_iter().flatten() {
        let path = std::path::PathBuf::from(v);
        if !path.as_os_str().is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// TLS settings trusting the certificates of every file of `ca_files`, else the
/// public roots; an error names the file that holds none.
fn tls_config(ca_files: &[std::path::PathBuf]) -> Result<ureq::tls::TlsConfig, String> {
    if ca_files.is_empty() {
        return Ok(ureq::tls::TlsConfig::default());
    }
    let mut certs = Vec::new();
    for f in ca_files {
        let got = leet_sampler::tls::certificates(f)
            .map_err(|why| format!("CA file {}: {why}", leet_text::sanitize_path(f)))?;
        certs.extend(got);
    }
    let roots = ureq::tls::RootCerts::Specific(std::sync::Arc::new(certs));
    Ok(ureq::tls::TlsConfig::builder().root_certs(roots).build())
}

/// A certificate the trusted roots do not vouch for: say how to trust a private
/// CA.
fn with_ca_hint(why: String) -> String {
    let lower = why.to_lowercase();
    if lower.contains("unknownissuer") || lower.contains("invalid peer certificate") {
        format!("{why} (a private CA? name its certificate in SSL_CERT_FILE or REQUESTS_CA_BUNDLE)")
    } else {
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ca_variables_are_trusted() {
        use std::ffi::OsString;
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(
            ca_files(os("/etc/ssl/certs/ca-certificates.crt"), os("/tmp/ca.pem")),
            [
                std::path::PathBuf::from("/etc/ssl/certs/ca-certificates.crt"),
                std::path::PathBuf::from("/tmp/ca.pem")
            ]
        );
        assert_eq!(ca_files(os(""), os("/tmp/ca.pem")).len(), 1);
        assert_eq!(ca_files(os("/a"), os("/a")).len(), 1);
        assert!(ca_files(None, None).is_empty());
        let ca = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls/ca.pem");
        let key = ca.with_file_name("server.key");
        assert!(tls_config(&[ca.clone(), ca.clone()]).is_ok());
        let err = tls_config(&[ca, key]).expect_err("a key is no certificate");
        assert!(err.contains("server.key"), "{err}");
        let hint = with_ca_hint("invalid peer certificate: UnknownIssuer".into());
        assert!(hint.contains("REQUESTS_CA_BUNDLE"), "{hint}");
        assert_eq!(with_ca_hint("refused".into()), "refused");
    }

    #[test]
    fn userinfo_becomes_a_header_and_is_never_shown() {
        let e = Endpoint::new(
            "http://alice:s%3Acret@prom:9090/prefix/",
            HttpOptions::default(),
        )
        .expect("url");
        assert_eq!(e.server(), "http://prom:9090/prefix");
        assert_eq!(e.auth, Some(Auth::Basic(base64(b"alice:s:cret"))));
        assert!(!format!("{e:?}").contains("cret"));
        let t = Endpoint::new("https://tok3n@prom", HttpOptions::default()).expect("url");
        assert_eq!(t.auth, Some(Auth::Bearer("tok3n".into())));
        assert_eq!(t.server(), "https://prom");
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn bad_urls_are_errors_without_the_secret() {
        for bad in [
            "prom:9090",
            "ftp://x",
            "http://",
            "http://h/?q=1",
            "http://a b",
        ] {
            assert!(
                matches!(
                    Endpoint::new(bad, HttpOptions::default()),
                    Err(HttpError::BadUrl { .. })
                ),
                "{bad}"
            );
        }
        let err = Endpoint::new("gopher://u:hunter2@h", HttpOptions::default())
            .expect_err("scheme")
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn refused_names_the_server() {
        // A port freed on 127.0.0.2 (loopback too): another test's server on
        // 127.0.0.1, given the same port number meanwhile, does not answer here.
        let port = std::net::TcpListener::bind("127.0.0.2:0")
            .and_then(|l| l.local_addr())
            .expect("port")
            .port();
        let e = Endpoint::new(&format!("http://127.0.0.2:{port}"), HttpOptions::default())
            .expect("url");
        let err = e.get("/x", &[]).expect_err("nothing listens");
        assert_eq!(
            err,
            HttpError::Refused {
                server: format!("http://127.0.0.2:{port}")
            }
        );
    }
}

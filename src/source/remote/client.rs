//! The HTTP side: GraphQL queries (POST `/graphql`) and downloads, over ureq
//! (rustls), with timeouts, each failure mapped to the one line that says what
//! to check: the key (401), the run (404), the host (timeouts); a busy server
//! (429, 502, 503, 504) is asked again a few times ([`with_retries`]).

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::auth::ApiKey;
use super::{shown, RemoteError};

/// Largest GraphQL answer read (a run's config and summary can be large, not this).
const MAX_ANSWER: u64 = 256 << 20;
/// Bytes read between looks at the cancel flag.
const READ_CHUNK: usize = 64 << 10;

/// How long to wait for the host.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To connect.
    pub connect: Duration,
    /// For an answer to start, and between the pieces of a body.
    pub read: Duration,
    /// For a whole answer (a GraphQL answer, a run's metadata file), from the
    /// connect to its last byte: a server that sends a byte every few seconds
    /// meets every `read` timeout and would otherwise hold leet forever.
    pub answer: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(30),
            answer: Duration::from_secs(60),
        }
    }
}

/// A client of one server's API.
#[derive(Debug, Clone)]
pub struct Client {
    api: String,
    key: Option<ApiKey>,
    agent: ureq::Agent,
    answer: Duration,
}

/// Progress of a download: bytes so far and the total when the server said it.
pub type Progress<'a> = &'a mut dyn FnMut(u64, Option<u64>);

impl Client {
    /// A client of the API at `api` (`scheme://host[:port]`), sending `key`,
    /// trusting the CA certificates of `ca_file` (PEM) instead of the public roots
    /// when given (`SSL_CERT_FILE` or `REQUESTS_CA_BUNDLE`, as W&B's tools read them).
    ///
    /// # Errors
    /// [`RemoteError::Certificates`] when `ca_file` cannot be read or holds none.
    pub fn new(
        api: &str,
        key: Option<ApiKey>,
        timeouts: Timeouts,
        ca_file: Option<&Path>,
    ) -> Result<Self, RemoteError> {
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(timeouts.connect))
            .timeout_recv_response(Some(timeouts.read))
            .timeout_per_read(Some(timeouts.read))
            .user_agent(concat!("leet/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = ca_file {
            let tls = leet_sampler::tls::config(Some(path)).map_err(|cause| {
                RemoteError::Certificates {
                    file: leet_text::sanitize_path(path),
                    cause,
                }
            })?;
            config = config.tls_config(tls);
        }
        Ok(Self {
            api: api.trim_end_matches('/').to_owned(),
            key,
            agent: config.build().into(),
            answer: timeouts.answer,
        })
    }

    /// The API's base URL.
    pub fn api(&self) -> &str {
        &self.api
    }

    /// Send the query `op` (its operation name) with `vars`; the answer's `data`.
    ///
    /// # Errors
    /// Each [`RemoteError`] as its status or failure says; GraphQL `errors` with
    /// no data, or a body that is not JSON, are [`RemoteError::Protocol`].
    pub fn graphql(&self, op: &str, query: &str, vars: Value) -> Result<Value, RemoteError> {
        let url = format!("{}/graphql", self.api);
        let body = serde_json::json!({ "operationName": op, "query": query, "variables": vars });
        let mut req = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(self.answer))
            // A POST redirected is sent again as a GET (301, 302) or not at all
            // (307, 308, the body gone): the redirect is the error to show.
            .max_redirects(0)
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(k) = &self.key {
            req = req.header("Authorization", k.header());
        }
        let resp = req
            .send(body.to_string().as_bytes())
            .map_err(|e| transport(&url, &e))?;
        let mut resp = check_status(&url, resp, Asked::Api)?;
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string()
            .map_err(|e| transport(&url, &e))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| RemoteError::protocol(&url, format!("the answer is not JSON: {e}")))?;
        match v.get("data") {
            Some(d) if !d.is_null() => Ok(d.clone()),
            _ => {
                let msg = v
                    .pointer("/errors/0/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no data in the answer");
                if msg.contains("not found") {
                    return Err(RemoteError::NotFound { url: shown(&url) });
                }
                Err(RemoteError::protocol(&url, format!("GraphQL error: {msg}")))
            }
        }
    }

    /// Download `url` into memory (at most `limit` bytes), calling `progress` as
    /// bytes arrive and giving up when `cancel` is set. The key goes only to the API's own host: signed
    /// URLs of a storage bucket carry their own authorization.
    ///
    /// # Errors
    /// As [`Client::graphql`] (the whole answer within [`Timeouts::answer`] when
    /// `limit` is finite); a body shorter than its `Content-Length` is
    /// [`RemoteError::Protocol`], and so is one over `limit`;
    /// [`RemoteError::Cancelled`] when cancelled.
    pub fn download(
        &self,
        url: &str,
        cancel: &AtomicBool,
        limit: u64,
        progress: Progress<'_>,
    ) -> Result<Vec<u8>, RemoteError> {
        let mut req = self.agent.get(url);
        if limit < u64::MAX {
            // A bounded download (a run's metadata) is an answer and has its
            // deadline; history files, as large as the run, are cancelled by the
            // user (or stall past `read`) instead.
            req = req.config().timeout_global(Some(self.answer)).build();
        }
        if let Some(k) = self.key.as_ref().filter(|_| same_origin(&self.api, url)) {
            req = req.header("Authorization", k.header());
        }
        let key_sent = self.key.is_some() && same_origin(&self.api, url);
        let resp = req.call().map_err(|e| transport(url, &e))?;
        let mut resp = check_status(url, resp, Asked::File { key_sent })?;
        let total = resp.body().content_length();
        let mut reader = resp.body_mut().with_config().limit(u64::MAX).reader();
        let mut out = Vec::with_capacity(total.unwrap_or(0).min(1 << 30) as usize);
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(RemoteError::Cancelled);
            }
            let n = reader.read(&mut buf).map_err(|e| io_error(url, &e))?;
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
            if out.len() as u64 > limit {
                return Err(RemoteError::protocol(
                    url,
                    format!("larger than {limit} bytes"),
                ));
            }
            progress(out.len() as u64, total);
        }
        if total.is_some_and(|t| t != out.len() as u64) {
            return Err(RemoteError::protocol(url, "the download was cut short"));
        }
        Ok(out)
    }
}

fn same_origin(api: &str, url: &str) -> bool {
    url.strip_prefix(api)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What a request was, for what its error status means.
#[derive(Clone, Copy)]
enum Asked {
    /// A GraphQL query at `/graphql`.
    Api,
    /// A file's link; the key went with it only on the API's own origin.
    File { key_sent: bool },
}

fn check_status(
    url: &str,
    resp: ureq::http::Response<ureq::Body>,
    asked: Asked,
) -> Result<ureq::http::Response<ureq::Body>, RemoteError> {
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    match (status, asked) {
        (200..=299, _) => Ok(resp),
        (401 | 403, Asked::File { key_sent: false }) => Err(RemoteError::StorageRefused {
            url: shown(url),
            status,
        }),
        (401 | 403, _) => Err(RemoteError::Unauthorized {
            url: shown(url),
            status,
        }),
        (404, Asked::Api) => Err(RemoteError::NotApi { url: shown(url) }),
        (404, Asked::File { .. }) => Err(RemoteError::FileNotFound { url: shown(url) }),
        (300..=399, Asked::Api) => {
            let to = resolve(url, header("location").unwrap_or(""));
            let base = to
                .strip_suffix("/graphql")
                .unwrap_or_else(|| origin(&to))
                .to_owned();
            Err(RemoteError::Redirected {
                url: shown(url),
                status,
                to: shown(&to),
                base: shown(&base),
            })
        }
        (429 | 502 | 503 | 504, _) => Err(RemoteError::Busy {
            url: shown(url),
            status,
            tries: 1,
            after_s: header("retry-after").and_then(|v| v.parse().ok()),
        }),
        (408, _) => Err(RemoteError::Timeout { url: shown(url) }),
        _ => Err(RemoteError::Status {
            url: shown(url),
            status,
        }),
    }
}

/// `scheme://host[:port]` of an absolute URL (all of it when it has no path).
fn origin(url: &str) -> &str {
    let rest = url.find("://").map_or(0, |i| i + 3);
    url[rest..].find('/').map_or(url, |i| &url[..rest + i])
}

/// A `Location` as an absolute URL: a path is on `url`'s origin.
fn resolve(url: &str, location: &str) -> String {
    if location.contains("://") {
        location.to_owned()
    } else if location.starts_with('/') {
        format!("{}{location}", origin(url))
    } else {
        format!("{}/{location}", origin(url))
    }
}

/// Tries of a request the server answered busy (429, 502, 503, 504).
pub const TRIES: u32 = 5;
/// Longest wait for one retry a `Retry-After` is honoured for.
const MAX_AFTER: Duration = Duration::from_secs(30);
/// Longest wait over all the retries of one request.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// Between looks at the cancel flag while waiting.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// A request is about to be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retrying {
    /// What the server answered.
    pub status: u16,
    /// The wait before the next try.
    pub wait: Duration,
    /// The next try's number (from 2) and the most there will be.
    pub attempt: u32,
    pub of: u32,
}

/// `f` (a request), sent again while the server answers busy (429, 502, 503,
/// 504), as W&B's own clients do: up to [`TRIES`] tries, waiting 1, 2, 4, 8 s, or
/// the `Retry-After` the server gave when it is at most 30 s, and at most 60 s in
/// all; `report` hears of each wait. A busy server for a moment is not the end of
/// an open.
///
/// # Errors
/// `f`'s last error ([`RemoteError::Busy`] with its tries); [`RemoteError::Cancelled`]
/// once `cancel` is set while waiting.
pub fn with_retries<T>(
    cancel: &AtomicBool,
    report: &mut dyn FnMut(Retrying),
    mut f: impl FnMut() -> Result<T, RemoteError>,
) -> Result<T, RemoteError> {
    let mut waited = Duration::ZERO;
    let mut tries = 1;
    loop {
        match f() {
            Err(RemoteError::Busy {
                url,
                status,
                after_s,
                ..
            }) => {
                let backoff = Duration::from_secs(1 << (tries - 1).min(5));
                let wait = after_s
                    .map(Duration::from_secs)
                    .filter(|a| *a <= MAX_AFTER)
                    .unwrap_or(backoff);
                if tries >= TRIES || waited + wait > MAX_WAIT {
                    return Err(RemoteError::Busy {
                        url,
                        status,
                        tries,
                        after_s,
                    });
                }
                report(Retrying {
                    status,
                    wait,
                    attempt: tries + 1,
                    of: TRIES,
                });
                let until = std::time::Instant::now() + wait;
                loop {
                    if cancel.load(Ordering::Relaxed) {
                        return Err(RemoteError::Cancelled);
                    }
                    let left = until.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    std::thread::sleep(left.min(WAIT_SLICE));
                }
                waited += wait;
                tries += 1;
            }
            r => return r,
        }
    }
}

fn transport(url: &str, e: &ureq::Error) -> RemoteError {
    match e {
        ureq::Error::Timeout(_) => RemoteError::Timeout { url: shown(url) },
        ureq::Error::Io(io) => io_error(url, io),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => RemoteError::Unreachable {
            url: shown(url),
            cause: leet_text::sanitize(&e.to_string()),
        },
        _ => RemoteError::protocol(url, e),
    }
}

fn io_error(url: &str, e: &std::io::Error) -> RemoteError {
    use std::io::ErrorKind as K;
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
        return transport(url, inner);
    }
    match e.kind() {
        K::TimedOut | K::WouldBlock => RemoteError::Timeout { url: shown(url) },
        K::ConnectionRefused | K::NotFound => RemoteError::Unreachable {
            url: shown(url),
            cause: leet_text::sanitize(&e.to_string()),
        },
        K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
            RemoteError::protocol(url, "the connection was cut in the middle of the answer")
        }
        _ => RemoteError::protocol(url, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_names_where_it_goes() {
        assert_eq!(origin("https://h:1/graphql?x"), "https://h:1");
        assert_eq!(origin("https://h:1"), "https://h:1");
        assert_eq!(
            resolve("http://h:1/graphql", "/v2/graphql"),
            "http://h:1/v2/graphql"
        );
        assert_eq!(
            resolve("http://h:1/graphql", "https://h/graphql"),
            "https://h/graphql"
        );
    }

    #[test]
    fn busy_answers_are_tried_again_then_given_up() {
        let never = AtomicBool::new(false);
        let busy_after = |after_s| RemoteError::Busy {
            url: "u".into(),
            status: 503,
            tries: 1,
            after_s,
        };
        let busy = || busy_after(Some(0));
        let mut calls = 0;
        let mut waits = Vec::new();
        let r: Result<(), _> = with_retries(&never, &mut |w| waits.push(w.attempt), || {
            calls += 1;
            Err(busy())
        });
        assert_eq!(calls, TRIES);
        assert_eq!(waits, (2..=TRIES).collect::<Vec<_>>());
        assert!(
            matches!(r, Err(RemoteError::Busy { tries: TRIES, .. })),
            "{r:?}"
        );
        let mut calls = 0;
        let r = with_retries(&never, &mut |_| {}, || {
            calls += 1;
            if calls < 3 {
                Err(busy())
            } else {
                Ok(7)
            }
        });
        assert_eq!(r.ok(), Some(7));
        // Other errors are not tried again.
        let mut calls = 0;
        let r: Result<(), _> = with_retries(&never, &mut |_| {}, || {
            calls += 1;
            Err(RemoteError::NotApi { url: "u".into() })
        });
        assert!(r.is_err());
        assert_eq!(calls, 1);
        // A set flag ends the wait: the server asked for 30 s.
        let cancel = AtomicBool::new(true);
        let r: Result<(), _> = with_retries(&cancel, &mut |_| {}, || Err(busy_after(Some(30))));
        assert!(matches!(r, Err(RemoteError::Cancelled)), "{r:?}");
    }

    #[test]
    fn the_key_goes_only_to_the_api_host() {
        assert!(same_origin("http://h:1", "http://h:1/files/x"));
        assert!(!same_origin("http://h:1", "http://h:12/files/x"));
        assert!(!same_origin(
            "https://api.wandb.ai",
            "https://storage.example/x"
        ));
    }
}

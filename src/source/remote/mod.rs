//! Runs on a W&B server: the run's URL, the API key, the GraphQL client, the
//! history's Parquet files and the live rows after them, and a cache of what was
//! downloaded. What comes from the server is turned into the records a `.wandb`
//! file holds and decoded by the same decoder, so the store cannot tell a remote
//! run from a local one. The protocol, and what of it is assumed, is in
//! `docs/remote-protocol.md`.

pub mod auth;
pub mod cache;
pub mod client;
pub mod fetch;
pub mod files;
pub mod history;
pub mod info;
pub mod local;
pub mod project;
pub mod records;
pub mod url;

pub use url::RemoteUrl;

/// What went wrong talking to a server. Every message names the URL it was about
/// (never the key, which only ever travels in a request header) and is sanitized:
/// the server's words are untrusted.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Not a URL of a W&B run or project.
    #[error("'{0}': not a W&B URL (https://HOST/ENTITY/PROJECT/runs/RUN_ID)")]
    BadUrl(String),
    /// A project's URL where a run's is needed.
    #[error("{0}: a project; give a run's URL (https://HOST/ENTITY/PROJECT/runs/RUN_ID)")]
    Project(String),
    /// No key in `WANDB_API_KEY` nor in the netrc file for the API host.
    #[error("no API key for {host}: set WANDB_API_KEY or run `wandb login --host {api}` (which writes ~/.netrc; leet reads $NETRC instead when it is set)")]
    NoKey { host: String, api: String },
    /// 401 or 403.
    #[error("{url}: the server refused the API key (HTTP {status}); check WANDB_API_KEY or the netrc entry")]
    Unauthorized { url: String, status: u16 },
    /// 404, or an answer with no such project or run.
    #[error("{url}: the run was not found on the server")]
    NotFound { url: String },
    /// A history (or metadata) file's link, on another origin than the API (a
    /// storage bucket's signed URL, sent no key), refused: 401 or 403.
    #[error("{url}: the storage refused the file's link (HTTP {status}); signed links expire: open the run again")]
    StorageRefused { url: String, status: u16 },
    /// A file's link answered 404.
    #[error("{url}: the file was not found at the storage (HTTP 404); its link may have expired: open the run again")]
    FileNotFound { url: String },
    /// `/graphql` itself answered 404: no W&B API at that address.
    #[error(
        "{url}: not a W&B API at that URL (HTTP 404); check the host in the URL or WANDB_BASE_URL"
    )]
    NotApi { url: String },
    /// `/graphql` answered a redirect (an http→https proxy, a moved server): a
    /// query's POST is not followed.
    #[error("{url}: the server redirects to {to} (HTTP {status}); give the run's URL with that address (https:// for an https server) or set WANDB_BASE_URL={base}")]
    Redirected {
        url: String,
        status: u16,
        to: String,
        base: String,
    },
    /// 429, 502, 503 or 504, still after the retries.
    #[error("{url}: the server is busy or down (HTTP {status}), still after {tries} tries; try again later")]
    Busy {
        url: String,
        status: u16,
        tries: u32,
        /// The answer's `Retry-After`, in seconds, when it gave a number.
        after_s: Option<u64>,
    },
    /// A project's URL, and the server lists no run of it (or none leet can name
    /// as a file).
    #[error("{url}: the project has no runs")]
    NoRuns { url: String },
    /// The host did not connect or answer in time.
    #[error("{url}: the host did not answer in time")]
    Timeout { url: String },
    /// The host could not be reached at all.
    #[error("{url}: cannot reach the host: {cause}")]
    Unreachable { url: String, cause: String },
    /// Any other HTTP error status.
    #[error("{url}: the server answered HTTP {status}")]
    Status { url: String, status: u16 },
    /// The answer was not what the protocol says (bad JSON, GraphQL errors, a
    /// file that is not Parquet, a download cut short).
    #[error("{url}: {cause}")]
    Protocol { url: String, cause: String },
    /// The CA file to trust cannot be read or holds no certificate.
    #[error("{file}: no CA certificates to trust ({cause})")]
    Certificates { file: String, cause: String },
    /// The caller set the cancel flag.
    #[error("cancelled")]
    Cancelled,
}

impl RemoteError {
    /// The server cannot be reached, does not answer, or answers that it is down
    /// (HTTP 5xx, or busy still after the retries): not the run's or the key's
    /// fault, and a copy kept earlier is better than nothing.
    #[must_use]
    pub fn is_down(&self) -> bool {
        match self {
            Self::Timeout { .. } | Self::Unreachable { .. } | Self::Busy { .. } => true,
            Self::Status { status, .. } => (500..600).contains(status),
            _ => false,
        }
    }

    /// A protocol error about `url`, its cause sanitized.
    pub(crate) fn protocol(url: &str, cause: impl std::fmt::Display) -> Self {
        Self::Protocol {
            url: shown(url),
            cause: leet_text::sanitize(&cause.to_string()),
        }
    }
}

/// A URL as messages show it: without its query (signed download URLs carry
/// their signature there) and sanitized.
pub(crate) fn shown(url: &str) -> String {
    let bare = url.split(['?', '#']).next().unwrap_or(url);
    leet_text::sanitize(bare)
}

/// Whether `s` names a run or project on a server rather than a local path.
pub fn is_url(s: &str) -> bool {
    s.starts_with("https://") || s.starts_with("http://")
}

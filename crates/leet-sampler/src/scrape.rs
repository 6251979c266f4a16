//! One GET of a metrics endpoint (OpenMetrics, dcgm-exporter) over ureq, `http://`
//! or `https://` (trusting the CA file of [`crate::tls::ca_file_from_env`] when
//! set), with the bounds a scrape of a server we do not control needs: a deadline
//! over the whole exchange (a server that trickles bytes cannot stretch it), a cap
//! on the body (counted after decompression, so a gzip bomb is cut too) and on the
//! headers, redirects not followed (a redirect is an answer that is not 200), and
//! any status but 200 an error.

use std::io::Read;
use std::time::Duration;

use ureq::http::Uri;

/// The largest response head read; a server sending more is an error.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// A scraper of one endpoint: its URL and a client holding its limits.
pub(crate) struct Scraper {
    url: String,
    timeout: Duration,
    agent: ureq::Agent,
}

/// Checks that `url` is one a scrape can fetch (`http(s)://host[:port][/path]`).
pub(crate) fn check_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("bad url '{url}': {e}"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => {
            return Err(format!(
                "unsupported url '{url}': only http:// and https:// are supported"
            ))
        }
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(format!("url '{url}' has no host"));
    }
    Ok(uri)
}

impl Scraper {
    /// A scraper of `url`; no I/O. Fails on a URL it cannot fetch, or on a CA file
    /// named by the environment that holds no certificate.
    pub(crate) fn new(url: &str, timeout: Duration) -> Result<Self, String> {
        check_url(url)?;
        let ca_file = crate::tls::ca_file_from_env();
        let tls = crate::tls::config(ca_file.as_deref()).map_err(|e| {
            let file = ca_file.as_deref().map(leet_text::sanitize_path);
            format!("CA file {}: {e}", file.unwrap_or_default())
        })?;
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(timeout))
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .max_response_header_size(MAX_HEADER_BYTES)
            .user_agent("leet")
            .tls_config(tls)
            .build()
            .into();
        Ok(Self {
            url: url.to_owned(),
            timeout,
            agent,
        })
    }

    /// GET the URL and return the body: at most `max_bytes` (more is an error, not
    /// a truncation), within the timeout given to [`Scraper::new`].
    pub(crate) fn get(&self, max_bytes: usize) -> Result<Vec<u8>, String> {
        let mut resp = self
            .agent
            .get(&self.url)
            .header("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
            .call()
            .map_err(|e| self.error(&e))?;
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(format!("unexpected status code {status}"));
        }
        let mut body = Vec::new();
        // One byte past the cap tells "exactly the cap" from "more".
        resp.body_mut()
            .with_config()
            .limit(u64::MAX)
            .reader()
            .take(max_bytes as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| self.io_error(&e))?;
        if body.len() > max_bytes {
            return Err(format!("response larger than {max_bytes} bytes"));
        }
        Ok(body)
    }

    fn error(&self, e: &ureq::Error) -> String {
        let t = self.timeout;
        match e {
            ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => {
                format!("connect timed out after {t:?}")
            }
            ureq::Error::Timeout(_) => format!("read timed out after {t:?}"),
            ureq::Error::Io(io) => self.io_error(io),
            ureq::Error::HostNotFound => "host not found".to_owned(),
            ureq::Error::ConnectionFailed => "connection refused".to_owned(),
            ureq::Error::LargeResponseHeader(..) => {
                format!("response headers larger than {MAX_HEADER_BYTES} bytes")
            }
            // The same flood of headers, met as a count before the size when a
            // read brings many at once (on a busy machine): said the same way.
            other if other.to_string().contains("too many headers") => {
                format!("response headers larger than {MAX_HEADER_BYTES} bytes (too many)")
            }
            other => format!("read: {}", leet_text::sanitize(&other.to_string())),
        }
    }

    fn io_error(&self, e: &std::io::Error) -> String {
        use std::io::ErrorKind as K;
        if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
            return self.error(inner);
        }
        let t = self.timeout;
        match e.kind() {
            K::ConnectionRefused => "connection refused".to_owned(),
            K::TimedOut | K::WouldBlock => format!("read timed out after {t:?}"),
            K::UnexpectedEof => "read: the body was cut short".to_owned(),
            _ => format!("read: {}", leet_text::sanitize(&e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;

//! The HTTP side of `leet serve`: hyper's HTTP/1 server on a current-thread tokio
//! runtime, serving the page the sampler thread rendered last.
//!
//! Bounds, so that a slow, flooding or hostile client costs bounded memory and never
//! touches the sampler (which runs on its own thread and only swaps a pointer here):
//! at most [`MAX_CONNECTIONS`] open connections (more are closed as soon as they are
//! accepted), request heads within [`MAX_HEAD_BYTES`] and [`HEADER_READ_TIMEOUT`]
//! (hyper runs that timer from the end of one response to the end of the next head,
//! so it also closes a keep-alive connection left idle that long), a connection that
//! stops reading what it asked for closed [`IDLE_TIMEOUT`] after its last request,
//! no request bodies.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::header::{CACHE_CONTROL, RETRY_AFTER, TRANSFER_ENCODING};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::expose::{Page, OPENMETRICS_TYPE, TEXT_TYPE};

/// Most connections open at once; Prometheus needs one per scrape target.
pub const MAX_CONNECTIONS: usize = 64;
/// Time a client has to send a whole request head.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection is closed this long after its last request (one that sends no new
/// request is closed sooner, by [`HEADER_READ_TIMEOUT`]; this bounds one that never
/// reads its response).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest request head read (hyper's read buffer); a longer one is refused.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Most header lines in one request.
pub const MAX_HEADERS: usize = 64;
/// Time a closing connection has to finish the response it is writing.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

const INDEX: &str = "leet serve: this host's W&B system metrics for Prometheus.\n\
GET /metrics: the latest sample in the Prometheus text format (OpenMetrics when asked).\n";

/// The page the sampler rendered last; `None` before the first sample.
#[derive(Default)]
pub struct Latest(Mutex<Option<Page>>);

impl Latest {
    pub fn set(&self, page: Page) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Some(page);
    }

    #[must_use]
    pub fn get(&self) -> Option<Page> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Serve `listener` until the process ends.
///
/// # Errors
/// The runtime or the listener could not be set up.
pub fn serve(listener: std::net::TcpListener, latest: Arc<Latest>) -> anyhow::Result<()> {
    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    rt.block_on(accept_loop(listener, latest))
}

/// Counts an open connection until dropped.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn accept_loop(listener: std::net::TcpListener, latest: Arc<Latest>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors or a connection reset before it was accepted:
            // wait a little instead of spinning, and go on.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if open.fetch_add(1, Ordering::Relaxed) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::Relaxed);
            drop(stream);
            continue;
        }
        let guard = Open(open.clone());
        let latest = latest.clone();
        tokio::spawn(async move {
            let _guard = guard;
            serve_connection(stream, latest).await;
        });
    }
}

/// One connection, keep-alive allowed, until the client closes it, an error, a
/// timeout of hyper's, or [`IDLE_TIMEOUT`] after the last request.
async fn serve_connection(stream: tokio::net::TcpStream, latest: Arc<Latest>) {
    let _ = stream.set_nodelay(true);
    let start = tokio::time::Instant::now();
    // Milliseconds from `start` to the last request.
    let last = Arc::new(AtomicU64::new(0));
    let seen = last.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        seen.store(ms, Ordering::Relaxed);
        let response = respond(&req, &latest);
        async move { Ok::<_, Infallible>(response) }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    let idle_until = || start + Duration::from_millis(last.load(Ordering::Relaxed)) + IDLE_TIMEOUT;
    loop {
        if tokio::time::timeout_at(idle_until(), conn.as_mut())
            .await
            .is_ok()
        {
            return;
        }
        if idle_until() > tokio::time::Instant::now() {
            continue; // a request came meanwhile
        }
        conn.as_mut().graceful_shutdown();
        let _ = tokio::time::timeout(CLOSE_GRACE, conn.as_mut()).await;
        return;
    }
}

fn plain(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Whether the request carries (or announces) a body.
fn body_refusal(req: &Request<Incoming>) -> Option<StatusCode> {
    if req.headers().contains_key(TRANSFER_ENCODING) {
        return Some(StatusCode::BAD_REQUEST);
    }
    let len = req.headers().get(CONTENT_LENGTH)?;
    match len.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(0) => None,
        Some(_) => Some(StatusCode::PAYLOAD_TOO_LARGE),
        None => Some(StatusCode::BAD_REQUEST),
    }
}

/// The response to one request.
fn respond(req: &Request<Incoming>, latest: &Latest) -> Response<Full<Bytes>> {
    if let Some(status) = body_refusal(req) {
        let mut r = plain(status, "leet serve accepts no request body\n");
        // The body was not read: the connection cannot carry another request.
        r.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
    let readable = matches!(*req.method(), Method::GET | Method::HEAD);
    match req.uri().path() {
        "/metrics" | "/" if !readable => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            r
        }
        "/" => plain(StatusCode::OK, INDEX),
        "/metrics" => metrics(req, latest),
        _ => plain(
            StatusCode::NOT_FOUND,
            "not found; the metrics are at /metrics\n",
        ),
    }
}

fn metrics(req: &Request<Incoming>, latest: &Latest) -> Response<Full<Bytes>> {
    let Some(page) = latest.get() else {
        let mut r = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "no sample yet; try again in a second\n",
        );
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    let om = (req.headers().get_all(ACCEPT).iter())
        .filter_map(|v| v.to_str().ok())
        .any(wants_openmetrics);
    let (body, kind) = if om {
        (page.openmetrics, OPENMETRICS_TYPE)
    } else {
        (page.text, TEXT_TYPE)
    };
    let mut r = Response::new(Full::new(body));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Whether an `Accept` header prefers OpenMetrics 1.0 text to the text format
/// 0.0.4: a media range `application/openmetrics-text` (no version, or 1.0.0) with
/// a q above 0 and at least the best q the text format gets (`text/plain` of no
/// version or 0.0.4, `text/*`, `*/*`); on a tie, the range named outright wins.
#[must_use]
pub fn wants_openmetrics(accept: &str) -> bool {
    let (mut om, mut text) = (0.0_f64, 0.0_f64);
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default().to_ascii_lowercase();
        let (mut q, mut version) = (1.0_f64, None);
        for p in parts {
            let Some((k, v)) = p.split_once('=') else {
                continue;
            };
            let v = v.trim().trim_matches('"');
            match k.trim().to_ascii_lowercase().as_str() {
                "q" => {
                    q = v
                        .parse()
                        .ok()
                        .filter(|q: &f64| q.is_finite())
                        .unwrap_or(0.0);
                }
                "version" => version = Some(v.to_owned()),
                _ => {}
            }
        }
        match media.as_str() {
            "application/openmetrics-text" if version.as_deref().is_none_or(|v| v == "1.0.0") => {
                om = om.max(q);
            }
            "text/plain" if version.as_deref().is_none_or(|v| v == "0.0.4") => text = text.max(q),
            "text/*" | "*/*" => text = text.max(q),
            _ => {}
        }
    }
    om > 0.0 && om >= text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
            version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(prometheus));
        assert!(wants_openmetrics("application/openmetrics-text"));
        assert!(wants_openmetrics("Application/OpenMetrics-Text; q=0.2"));
        assert!(!wants_openmetrics(
            "application/openmetrics-text;version=0.0.1"
        ));
        assert!(!wants_openmetrics("application/openmetrics-text;q=0"));
        assert!(!wants_openmetrics("application/openmetrics-text;q=x"));
        assert!(!wants_openmetrics("text/plain;version=0.0.4"));
        assert!(!wants_openmetrics("*/*"));
        assert!(!wants_openmetrics(""));
        // The client's preference, by q: the text format where it ranks higher.
        assert!(!wants_openmetrics(
            "text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.1"
        ));
        assert!(wants_openmetrics(
            "text/plain;version=0.0.4;q=0.5,application/openmetrics-text;q=0.6"
        ));
        assert!(wants_openmetrics("application/openmetrics-text, */*"));
        assert!(!wants_openmetrics(
            "application/openmetrics-text;q=0.2, */*"
        ));
    }
}

//! Helpers of tests/serve.rs: a `leet serve` process on an ephemeral port, a raw
//! HTTP/1.1 client, the NVML stub and a fake OpenMetrics endpoint on 127.0.0.1.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long a condition waited for may take before the test fails (a bound on
/// waiting, not a measure of speed).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Wait until `f` gives `Some`, at most [`PATIENCE`].
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running `leet serve`, killed and reaped when dropped.
pub struct Serve {
    pub child: Child,
    pub addr: SocketAddr,
    pub stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// `leet serve --listen 127.0.0.1:0 ARGS` with `env`; returns once it listens.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let stderr = dir.path().join("stderr");
        let mut cmd = crate::common::isolated::leet();
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn leet serve");
        let addr = wait_for("leet serve to listen", || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "leet serve exited ({status}): {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            listening_on(&std::fs::read_to_string(&stderr).ok()?)
        });
        Self {
            child,
            addr,
            stderr,
            _dir: dir,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// `GET /metrics` once the sampler has taken at least `samples` samples: the body.
    pub fn scrape_after(&self, samples: f64) -> String {
        wait_for("a page with enough samples", || {
            let r = get(self.addr, "/metrics", &[]).ok()?;
            (r.status == 200 && value_of(&r.body, "leet_samples_total")? >= samples)
                .then_some(r.body)
        })
    }
}

/// The address in `leet serve`'s "listening on http://ADDR/metrics" line.
pub fn listening_on(stderr: &str) -> Option<SocketAddr> {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("leet serve: listening on http://"))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
}

/// The value of an unlabelled series in a text page.
pub fn value_of(page: &str, name: &str) -> Option<f64> {
    page.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// One HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Send `raw` on a new connection and read the response until the server closes it.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(raw)?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    parse_response(&buf)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no HTTP response"))
}

/// `METHOD PATH` with `headers` and `Connection: close`.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        raw.push_str(&format!("{k}: {v}\r\n"));
    }
    raw.push_str("\r\n");
    exchange(addr, raw.as_bytes())
}

pub fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> std::io::Result<Response> {
    request(addr, "GET", path, headers)
}

fn parse_response(buf: &[u8]) -> Option<Response> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = (headers.iter()).any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let raw = &buf[end + 4..];
    let body = if chunked { dechunk(raw)? } else { raw.to_vec() };
    Some(Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// A chunked body's data.
fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&raw[..eol]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(out);
        }
        let data = raw.get(eol + 2..eol + 2 + size)?;
        out.extend_from_slice(data);
        raw = raw.get(eol + 4 + size..)?;
    }
}

/// tests/nvml_stub.c built as `libnvidia-ml.so.1` in a temporary directory (two GPUs,
/// fixed values); None (skipped, with a message) without a C compiler, except under
/// `CI=true`, where that fails.
pub fn nvml_stub() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().expect("tempdir");
    crate::common::sampler::build_c_stub("nvml_stub.c", &dir.path().join("libnvidia-ml.so.1"))?;
    Some(dir)
}

/// An OpenMetrics endpoint on 127.0.0.1 answering every request with `page`, until
/// the test process ends.
pub fn fake_endpoint(page: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    format!("http://{addr}/metrics")
}

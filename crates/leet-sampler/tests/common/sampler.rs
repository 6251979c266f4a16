//! Helpers shared by the sampler's tests and the application's tests of `leet sample`
//! (which include this file): a fake HTTP server on 127.0.0.1, and `/proc` status
//! fields.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// ---------------------------------------------------------------------------------
// Fake HTTP server (127.0.0.1 only)

/// A server on 127.0.0.1; stops accepting when dropped.
pub struct Server {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Keep serving until the test process ends; the URL of `path`.
    pub fn detach(self, path: &str) -> String {
        let url = self.url(path);
        std::mem::forget(self);
        url
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // wake the accept loop so that it sees `stop`
        let _ = TcpStream::connect(self.addr);
    }
}

/// Serve HTTP on 127.0.0.1: connection `n` (from 0) is answered `200 OK` with
/// `answer(n)` as a text/plain body after `delay`; `None` from `answer` reads the
/// request and never answers (the connection stays open until the client closes it).
pub fn serve(
    delay: Duration,
    answer: impl Fn(usize) -> Option<String> + Send + Sync + 'static,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let requests = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (count, stopped) = (requests.clone(), stop.clone());
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if stopped.load(Ordering::SeqCst) {
                return;
            }
            let Ok(mut conn) = conn else { continue };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut req = [0u8; 4096];
                let _ = conn.read(&mut req);
                let Some(body) = answer(n) else {
                    // held open: wait for the client to go
                    while conn.read(&mut req).is_ok_and(|k| k > 0) {}
                    return;
                };
                std::thread::sleep(delay);
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(body.as_bytes());
            });
        }
    });
    Server {
        addr,
        requests,
        stop,
    }
}

// ---------------------------------------------------------------------------------
// /proc

/// A numeric field of `/proc/PID/status` (`"VmRSS:"`, `"Threads:"`), its `kB` dropped.
pub fn proc_status(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

//! A minimal HTTP/1.1 GET over `std::net::TcpStream` for scraping metrics endpoints:
//! `http://` only, connect and read timeouts, an overall deadline and a body size cap.
//! Handles `Content-Length`, `Transfer-Encoding: chunked` and read-until-close bodies.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    pub host: String,
    pub port: u16,
    pub path: String,
}

pub(crate) fn parse_url(url: &str) -> Result<Url, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("unsupported url '{url}': only http:// is supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("url '{url}' has no host"));
    }
    let (host, port) = if let Some(h) = authority.strip_prefix('[') {
        // [::1]:9100
        let (h, p) = h
            .split_once(']')
            .ok_or_else(|| format!("bad ipv6 host in '{url}'"))?;
        (h.to_string(), p.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse().map_err(|_| format!("bad port in '{url}'"))?,
        None => 80,
    };
    Ok(Url {
        host,
        port,
        path: path.to_string(),
    })
}

/// GET `url` and return the body. `timeout` bounds connecting and the whole read;
/// a body longer than `max_bytes` is an error.
pub(crate) fn get(url: &str, timeout: Duration, max_bytes: usize) -> Result<Vec<u8>, String> {
    let u = parse_url(url)?;
    let deadline = Instant::now() + timeout;
    let addrs = (u.host.as_str(), u.port)
        .to_socket_addrs()
        .map_err(|e| format!("resolve {}: {e}", u.host))?;
    let mut last_err = format!("no address for {}", u.host);
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last_err = format!("connect {addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last_err)?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let host_header = if u.host.contains(':') {
        format!("[{}]:{}", u.host, u.port)
    } else {
        format!("{}:{}", u.host, u.port)
    };
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: leet\r\nAccept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
        u.path
    );
    stream
        .write_all(req.as_bytes())
        .map_err(|e| format!("send: {e}"))?;

    // Headers are small; the cap covers headers + body (+ chunk framing).
    let limit = max_bytes + 64 * 1024;
    let mut raw = Vec::with_capacity(16 * 1024);
    #[allow(
        clippy::large_stack_arrays,
        reason = "64 KiB of a worker's 2 MiB stack: no allocation per request"
    )]
    let mut chunk = [0u8; 64 * 1024];
    // (end of headers, parsed head), found once; completion checks are then O(1).
    let mut head: Option<(usize, Head)> = None;
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(format!("read timed out after {timeout:?}"));
        }
        // Each read waits only for what is left of the deadline, so a server that
        // trickles bytes cannot stretch the whole read past it.
        stream
            .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))
            .map_err(|e| e.to_string())?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&chunk[..n]);
                if raw.len() > limit {
                    return Err(format!("response larger than {max_bytes} bytes"));
                }
                if head.is_none() {
                    if let Some(end) = header_end(&raw) {
                        head = Some((end, parse_head(&String::from_utf8_lossy(&raw[..end]))?));
                    }
                }
                if head
                    .as_ref()
                    .is_some_and(|(end, h)| body_complete(h, &raw[*end..]))
                {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("read timed out after {timeout:?}"));
            }
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let body = decode_response(&raw)?;
    if body.len() > max_bytes {
        return Err(format!("response larger than {max_bytes} bytes"));
    }
    Ok(body)
}

fn header_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

struct Head {
    status: u16,
    content_length: Option<usize>,
    chunked: bool,
}

fn parse_head(head: &str) -> Result<Head, String> {
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_ascii_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line '{status_line}'"))?;
    let mut content_length = None;
    let mut chunked = false;
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("content-length") {
            content_length = v.parse().ok();
        } else if k.eq_ignore_ascii_case("transfer-encoding")
            && v.to_ascii_lowercase().contains("chunked")
        {
            chunked = true;
        }
    }
    Ok(Head {
        status,
        content_length,
        chunked,
    })
}

/// True once the body is fully read (lets us stop before the peer closes).
fn body_complete(head: &Head, body: &[u8]) -> bool {
    if head.chunked {
        return body.ends_with(b"0\r\n\r\n");
    }
    head.content_length.is_some_and(|n| body.len() >= n)
}

fn decode_response(raw: &[u8]) -> Result<Vec<u8>, String> {
    let end = header_end(raw).ok_or("response ended before the headers did")?;
    let head = parse_head(&String::from_utf8_lossy(&raw[..end]))?;
    if head.status != 200 {
        return Err(format!("unexpected status code {}", head.status));
    }
    let body = &raw[end..];
    if head.chunked {
        return decode_chunked(body);
    }
    Ok(match head.content_length {
        Some(n) if body.len() >= n => body[..n].to_vec(),
        Some(n) => return Err(format!("body cut short: {} of {n} bytes", body.len())),
        None => body.to_vec(),
    })
}

fn decode_chunked(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("chunked body cut short")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size '{size_text}'"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 {
            return Err("chunked body cut short".to_string());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            parse_url("http://127.0.0.1:9100/metrics"),
            Ok(Url {
                host: "127.0.0.1".into(),
                port: 9100,
                path: "/metrics".into()
            })
        );
        assert_eq!(
            parse_url("http://localhost").map(|u| (u.port, u.path)),
            Ok((80, "/".into()))
        );
        assert_eq!(
            parse_url("http://[::1]:9400/m").map(|u| u.host),
            Ok("::1".into())
        );
        assert!(parse_url("https://x/").is_err());
    }

    #[test]
    fn chunked_and_length_bodies() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n\r\n";
        assert_eq!(decode_response(raw), Ok(b"abcdefg".to_vec()));
        let end = header_end(raw).expect("headers");
        let head = parse_head(&String::from_utf8_lossy(&raw[..end])).expect("head");
        assert!(body_complete(&head, &raw[end..]));
        assert!(!body_complete(&head, &raw[end..raw.len() - 3]));
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
        assert_eq!(decode_response(raw), Ok(b"abc".to_vec()));
        let raw = b"HTTP/1.0 404 Not Found\r\n\r\n";
        assert_eq!(
            decode_response(raw),
            Err("unexpected status code 404".to_string())
        );
    }

    #[test]
    fn a_trickling_server_cannot_stretch_the_deadline() {
        use std::io::Write as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = listener.accept() {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
                // one byte every 150 ms: each read is quick, the whole is not
                for _ in 0..100 {
                    std::thread::sleep(Duration::from_millis(150));
                    if s.write_all(b"x").is_err() {
                        return;
                    }
                }
            }
        });
        // The whole body takes 15 s: a stretched deadline would end in success.
        let r = get(
            &format!("http://{addr}/metrics"),
            Duration::from_millis(500),
            1024,
        );
        assert!(r.is_err_and(|e| e.contains("timed out")));
    }
}

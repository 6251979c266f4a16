//! The scrape against hostile fakes on 127.0.0.1: each answers every connection by
//! the function it is given (which writes raw bytes), so the bounds are tested on
//! the wire, not on a parser.

use super::*;
use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A server answering each connection with `answer`; the number of connections.
fn serve(answer: impl Fn(&mut TcpStream, &str) + Send + 'static) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { return };
            seen.fetch_add(1, Ordering::SeqCst);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match std::io::Read::read(&mut s, &mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            answer(&mut s, &String::from_utf8_lossy(&head));
        }
    });
    (format!("http://{addr}"), count)
}

fn scrape(url: &str, timeout: Duration, max: usize) -> Result<Vec<u8>, String> {
    Scraper::new(url, timeout).expect("url").get(max)
}

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn urls() {
    for ok in [
        "http://127.0.0.1:9100/metrics",
        "http://localhost",
        "http://[::1]:9400/m",
        "https://gpu-node:9400/metrics",
    ] {
        assert!(check_url(ok).is_ok(), "{ok}");
    }
    for bad in [
        "ftp://x/",
        "127.0.0.1:9100/metrics",
        "http:///m",
        "not a url",
    ] {
        assert!(check_url(bad).is_err(), "{bad}");
    }
    assert!(check_url("ftp://x/").is_err_and(|e| e.contains("only http:// and https://")));
}

#[test]
fn chunked_and_length_bodies_and_a_status_that_is_not_200() {
    let (base, _) = serve(|s, head| {
        let answer: &[u8] = if head.starts_with("GET /chunked ") {
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n\r\n"
        } else if head.starts_with("GET /length ") {
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        } else {
            b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        };
        let _ = s.write_all(answer);
    });
    assert_eq!(
        scrape(&format!("{base}/chunked"), SECOND * 5, 64),
        Ok(b"abcdefg".to_vec())
    );
    assert_eq!(
        scrape(&format!("{base}/length"), SECOND * 5, 64),
        Ok(b"abc".to_vec())
    );
    assert_eq!(
        scrape(&format!("{base}/nope"), SECOND * 5, 64),
        Err("unexpected status code 404".to_string())
    );
}

#[test]
fn a_trickling_server_cannot_stretch_the_deadline() {
    let (base, _) = serve(|s, _| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        // one byte every 150 ms: each read is quick, the whole is not
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(150));
            if s.write_all(b"x").is_err() {
                return;
            }
        }
    });
    // The whole body takes 15 s: a stretched deadline would end in success.
    let r = scrape(&format!("{base}/metrics"), Duration::from_millis(500), 1024);
    assert!(r.as_ref().is_err_and(|e| e.contains("timed out")), "{r:?}");
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (base, _) = serve(|_, _| std::thread::sleep(Duration::from_secs(30)));
    let r = scrape(&format!("{base}/metrics"), Duration::from_millis(300), 1024);
    assert!(
        r.as_ref().is_err_and(|e| e.starts_with("read timed out")),
        "{r:?}"
    );
}

#[test]
fn bodies_past_the_cap_are_errors_with_or_without_a_length() {
    let (base, _) = serve(|s, head| {
        let big = vec![b'x'; 1 << 20];
        if head.starts_with("GET /length ") {
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                big.len()
            );
            let _ = s.write_all(&big);
        } else {
            // no length: the body runs until the server closes, which it never would
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
            for _ in 0..64 {
                if s.write_all(&big).is_err() {
                    return;
                }
            }
        }
    });
    for path in ["/length", "/endless"] {
        let r = scrape(&format!("{base}{path}"), SECOND * 10, 4096);
        assert_eq!(
            r,
            Err("response larger than 4096 bytes".to_string()),
            "{path}"
        );
    }
    // exactly the cap is not past it
    let (base, _) = serve(|s, _| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd");
    });
    assert_eq!(scrape(&base, SECOND * 5, 4), Ok(b"abcd".to_vec()));
}

#[test]
fn a_gzip_bomb_is_cut_at_the_cap_after_decompression() {
    // About 100 KiB of gzip that inflates to 16 MiB of zeros, more than the cap by far.
    let bomb = gzip_of_zeros(16 << 20);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let (base, _) = serve(move |s, _| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
            bomb.len()
        );
        let _ = s.write_all(&bomb);
    });
    let r = scrape(&base, SECOND * 10, 1 << 20);
    assert_eq!(r, Err(format!("response larger than {} bytes", 1 << 20)));
}

/// A gzip member of `n` zero bytes: stored deflate blocks would be as large as the
/// data, so this writes fixed-Huffman blocks of runs (length 258, distance 1).
fn gzip_of_zeros(n: usize) -> Vec<u8> {
    // Built by hand to need no compression crate: a literal 0, then runs of 258.
    let mut bits = BitWriter::default();
    bits.push(1, 1); // BFINAL
    bits.push(1, 2); // BTYPE = fixed Huffman
    bits.push_code(0b0011_0000, 8); // literal 0
    let runs = (n - 1) / 258;
    for _ in 0..runs {
        bits.push_code(0b1100_0101, 8); // length code 285 = 258
        bits.push_code(0, 5); // distance code 0 = 1
    }
    let rest = n - 1 - runs * 258;
    for _ in 0..rest {
        bits.push_code(0b0011_0000, 8);
    }
    bits.push_code(0, 7); // end of block (256)
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    out.extend(bits.finish());
    // The CRC is never reached: the read stops at the cap.
    out.extend(0u32.to_le_bytes());
    out.extend((n as u32).to_le_bytes());
    out
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u32,
    used: u32,
}

impl BitWriter {
    /// `value`'s `width` low bits, least significant first (deflate's header fields).
    fn push(&mut self, value: u32, width: u32) {
        for i in 0..width {
            self.acc |= ((value >> i) & 1) << self.used;
            self.used += 1;
            if self.used == 8 {
                self.bytes.push(self.acc as u8);
                self.acc = 0;
                self.used = 0;
            }
        }
    }
    /// A Huffman code: most significant bit first.
    fn push_code(&mut self, code: u32, width: u32) {
        for i in (0..width).rev() {
            self.push((code >> i) & 1, 1);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

#[test]
fn redirects_are_not_followed_so_a_loop_costs_one_request() {
    let (base, count) = serve(|s, _| {
        let _ =
            s.write_all(b"HTTP/1.1 302 Found\r\nLocation: /metrics\r\nContent-Length: 0\r\n\r\n");
    });
    let r = scrape(&format!("{base}/metrics"), SECOND * 5, 64);
    assert_eq!(r, Err("unexpected status code 302".to_string()));
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn endless_headers_and_garbage_are_errors() {
    let (base, _) = serve(|s, head| {
        if head.starts_with("GET /headers ") {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
            let line = format!("X-Pad: {}\r\n", "y".repeat(1000));
            for _ in 0..1000 {
                if s.write_all(line.as_bytes()).is_err() {
                    return;
                }
            }
        } else {
            let _ = s.write_all(b"\x00\x1b[2J not http at all\r\n\r\n");
        }
    });
    let r = scrape(&format!("{base}/headers"), SECOND * 10, 64);
    assert!(
        r.as_ref().is_err_and(|e| e.contains("headers larger than")),
        "{r:?}"
    );
    let r = scrape(&format!("{base}/garbage"), SECOND * 10, 64);
    let e = r.expect_err("garbage answered");
    assert!(!e.chars().any(char::is_control), "{e:?}");
}

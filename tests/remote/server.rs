//! A fake W&B server on 127.0.0.1: answers the GraphQL queries leet sends
//! (matched on their operation name) with the shapes of W&B's API, and serves
//! history files at signed-looking URLs. It can refuse (401, 404, 500), answer
//! nothing for a while, cut a file in the middle, or serve any bytes as a file;
//! answer busy for a while, redirect its queries, or name history files on
//! another server (a storage bucket).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// How the server misbehaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Ok,
    /// Every request answered with this status.
    Status(u16),
    /// The run query answers `run: null`.
    NoRun,
    /// Nothing is answered for this long.
    Slow(Duration),
    /// A file's `Content-Length` is sent whole but only half its bytes.
    CutFile,
    /// History files are sent only after this long (the queries at once).
    SlowFiles(Duration),
    /// The history query answers every live row, whatever range was asked.
    AllRows,
    /// Every query answered with this GraphQL error message and no data.
    GraphqlError(String),
    /// GraphQL answers sent a byte at a time, this long apart (their whole
    /// `Content-Length` announced first).
    Trickle(Duration),
    /// The next `left` requests answered with `status` and `Retry-After: after`
    /// (no header when `after` is None), then as `Ok`.
    Busy {
        status: u16,
        left: usize,
        after: Option<u64>,
    },
    /// Queries (`/graphql`) answered with this redirect status to this `Location`.
    Redirect(u16, String),
    /// The console, system metrics and files queries answered after this long
    /// (the others at once).
    SlowExtras(Duration),
}

/// What the server holds and what it saw.
#[derive(Debug)]
pub struct State {
    pub mode: Mode,
    /// The run object of the run query.
    pub run: Value,
    pub files: Vec<Vec<u8>>,
    /// Live rows (objects with `_step`) the history query serves.
    pub live: Vec<Value>,
    /// The run's `wandb-metadata.json`, when it has one.
    pub metadata: Option<Vec<u8>>,
    /// Rows of the `events` stream (system metrics) the events query serves.
    pub events: Vec<Value>,
    /// A project's runs (newest first) the runs query serves; when there are
    /// some, the run query answers the one named.
    pub runs: Vec<Value>,
    /// Console lines (`logLines` nodes) the console query serves.
    pub console: Vec<Value>,
    /// Every request's head and body.
    pub seen: Vec<String>,
    /// Console, system metrics and files queries being answered now, and the
    /// most of them answered at once.
    pub extras_now: usize,
    pub extras_most: usize,
    /// Where the history files' links point (another server, as a storage
    /// bucket is), when not here.
    pub file_base: Option<String>,
}

pub struct Fake {
    pub addr: String,
    pub state: Arc<Mutex<State>>,
}

impl Fake {
    pub fn start(run: Value, files: Vec<Vec<u8>>) -> Self {
        Self::start_with(run, files, None)
    }

    /// The same server over HTTPS, its certificate (for 127.0.0.1) issued by the
    /// test CA `tests/fixtures/tls/ca.pem`.
    pub fn start_tls(run: Value, files: Vec<Vec<u8>>) -> Self {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(dir.join("server.pem"))
                .expect("server.pem")
                .collect::<Result<_, _>>()
                .expect("certs");
        let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("server.key");
        // ring, the provider ureq is built with here (aws-lc-rs would need a C
        // toolchain and nasm); rustls deprecates it for lacking post-quantum key
        // exchange, which a test server does not need.
        #[allow(deprecated)]
        let provider = rustls::crypto::ring::default_provider();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("config");
        Self::start_with(run, files, Some(Arc::new(config)))
    }

    fn start_with(run: Value, files: Vec<Vec<u8>>, tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let addr = format!("{scheme}://{}", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(State {
            mode: Mode::Ok,
            run,
            files,
            live: Vec::new(),
            console: Vec::new(),
            runs: Vec::new(),
            events: Vec::new(),
            metadata: None,
            seen: Vec::new(),
            extras_now: 0,
            extras_most: 0,
            file_base: None,
        }));
        let st = Arc::clone(&state);
        let base = addr.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let st = Arc::clone(&st);
                let base = base.clone();
                let tls = tls.clone();
                std::thread::spawn(move || {
                    let _ = match tls {
                        None => serve(conn, &st, &base),
                        Some(cfg) => rustls::ServerConnection::new(cfg)
                            .map_err(std::io::Error::other)
                            .and_then(|c| {
                                let mut s = rustls::StreamOwned::new(c, conn);
                                serve(&mut s, &st, &base)?;
                                s.conn.send_close_notify();
                                s.flush()
                            }),
                    };
                });
            }
        });
        Self { addr, state }
    }

    pub fn set_mode(&self, m: Mode) {
        self.state.lock().expect("lock").mode = m;
    }

    pub fn seen(&self) -> String {
        self.state.lock().expect("lock").seen.join("\n")
    }
}

fn serve<S: Read + Write>(conn: S, st: &Mutex<State>, base: &str) -> std::io::Result<()> {
    let mut r = BufReader::new(conn);
    let mut head = String::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    let body = String::from_utf8_lossy(&body).into_owned();
    let mode = {
        let mut s = st.lock().expect("lock");
        s.seen.push(format!("{head}{body}"));
        let m = s.mode.clone();
        if let Mode::Busy {
            status,
            left,
            after,
        } = m
        {
            s.mode = if left > 1 {
                Mode::Busy {
                    status,
                    left: left - 1,
                    after,
                }
            } else {
                Mode::Ok
            };
        }
        m
    };
    let out = r.get_mut();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    match &mode {
        Mode::Status(code) => return reply(out, *code, b"{\"errors\":[{\"message\":\"no\"}]}"),
        Mode::Busy { status, after, .. } => {
            let header = after.map_or(String::new(), |a| format!("Retry-After: {a}\r\n"));
            return write!(
                out,
                "HTTP/1.1 {status} X\r\n{header}Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        Mode::Redirect(code, to) if path == "/graphql" => {
            return write!(
                out,
                "HTTP/1.1 {code} X\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        Mode::Slow(d) => std::thread::sleep(*d),
        _ => {}
    }
    if path.starts_with("/meta/") {
        let meta = st
            .lock()
            .expect("lock")
            .metadata
            .clone()
            .unwrap_or_default();
        return reply(out, 200, &meta);
    }
    if let (Some(_), Mode::SlowFiles(d)) = (path.strip_prefix("/files/"), &mode) {
        std::thread::sleep(*d);
    }
    if let Some(i) = path.strip_prefix("/files/") {
        let i: usize = i
            .split(['.', '?'])
            .next()
            .unwrap_or("")
            .parse()
            .unwrap_or(usize::MAX);
        let file = st.lock().expect("lock").files.get(i).cloned();
        let Some(file) = file else {
            return reply(out, 404, b"");
        };
        if mode == Mode::CutFile {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                file.len()
            )?;
            return out.write_all(&file[..file.len() / 2]);
        }
        return reply(out, 200, &file);
    }
    let q: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let extra = matches!(
        q["operationName"].as_str(),
        Some("RunConsoleLogTail" | "RunFullHistory" | "RunFiles")
    );
    if let (true, Mode::SlowExtras(d)) = (extra, &mode) {
        {
            let mut s = st.lock().expect("lock");
            s.extras_now += 1;
            s.extras_most = s.extras_most.max(s.extras_now);
        }
        std::thread::sleep(*d);
        st.lock().expect("lock").extras_now -= 1;
    }
    let answer = graphql(&q, st, base, &mode);
    if let Mode::Trickle(gap) = mode {
        let body = answer.to_string();
        write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )?;
        for b in body.bytes() {
            out.write_all(&[b])?;
            out.flush()?;
            std::thread::sleep(gap);
        }
        return Ok(());
    }
    reply(out, 200, answer.to_string().as_bytes())
}

fn graphql(q: &Value, st: &Mutex<State>, base: &str, mode: &Mode) -> Value {
    let s = st.lock().expect("lock");
    if let Mode::GraphqlError(m) = mode {
        return json!({"data": null, "errors": [{"message": m}]});
    }
    let vars = &q["variables"];
    let run = match q["operationName"].as_str() {
        _ if *mode == Mode::NoRun => Value::Null,
        Some("Runs") => {
            // One page of two at a time, so the client follows the cursor.
            let from: usize = vars["cursor"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let page: Vec<Value> = s
                .runs
                .iter()
                .skip(from)
                .take(2)
                .enumerate()
                .map(|(i, r)| json!({"node": r, "cursor": (from + i + 1).to_string()}))
                .collect();
            let end = from + page.len();
            return json!({"data": {"project": {"runs": {
                "edges": page,
                "pageInfo": {"endCursor": end.to_string(), "hasNextPage": end < s.runs.len()},
            }}}});
        }
        Some("LeetRun") if !s.runs.is_empty() => s
            .runs
            .iter()
            .find(|r| r["name"] == vars["name"])
            .cloned()
            .unwrap_or(Value::Null),
        Some("LeetRun") => s.run.clone(),
        Some("RunParquetHistory") => json!({ "parquetHistory": {
            "parquetUrls": (0..s.files.len())
                .map(|i| format!("{}/files/{i}.parquet?X-Goog-Signature=sig", s.file_base.as_deref().unwrap_or(base)))
                .collect::<Vec<_>>(),
            "liveData": s.live.iter().map(|r| json!({"_step": r["_step"]})).collect::<Vec<_>>(),
        }}),
        Some("HistoryPage") => {
            let lo = vars["minStep"].as_i64().unwrap_or(0);
            let hi = vars["maxStep"].as_i64().unwrap_or(0);
            let rows: Vec<Value> = s
                .live
                .iter()
                .filter(|r| {
                    *mode == Mode::AllRows || r["_step"].as_i64().is_some_and(|x| x >= lo && x < hi)
                })
                .map(|r| Value::String(r.to_string()))
                .collect();
            json!({ "history": rows })
        }
        Some("RunFiles") => {
            let edges: Vec<Value> = s
                .metadata
                .iter()
                .map(|_| json!({"node": {"name": "wandb-metadata.json", "directUrl": format!("{base}/meta/wandb-metadata.json"), "sizeBytes": 1}}))
                .collect();
            json!({ "files": { "edges": edges } })
        }
        Some("RunFullHistory") => {
            json!({ "events": s.events.iter().map(|r| Value::String(r.to_string())).collect::<Vec<_>>() })
        }
        Some("RunConsoleLogTail") => {
            let last = usize::try_from(vars["last"].as_i64().unwrap_or(0)).unwrap_or(0);
            let cut = s.console.len().saturating_sub(last);
            json!({
                "logLineCount": s.console.len(),
                "logLines": { "edges": s.console[cut..].iter().map(|n| json!({"node": n})).collect::<Vec<_>>() },
            })
        }
        _ => return json!({"errors": [{"message": "unknown operation"}]}),
    };
    json!({"data": {"project": {"run": run}}})
}

fn reply(out: &mut impl Write, code: u16, body: &[u8]) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)
}

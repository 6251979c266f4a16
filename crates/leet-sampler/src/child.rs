//! Child processes of the sampler (`rocm-smi`, `neuron-monitor`, `macmon`, IPU tools).
//!
//! Every child runs in its own process group, with stdin closed and stderr discarded, and
//! is registered here while it lives, so that [`kill_all`] (called on quit, on a fatal
//! signal and from the panic hook) can end every group. On Linux a long-lived child
//! ([`Stream`]) also gets `PR_SET_PDEATHSIG = SIGKILL`, so it dies with leet even when
//! leet is killed with SIGKILL. That signal fires when the *thread* that spawned the
//! child ends, so spawn a [`Stream`] from a thread that lives as long as the stream does.
//! One-shot children ([`run`]) go without it, so that std can start them with
//! `posix_spawn`; their deadline bounds how long one can outlive a SIGKILLed leet.
//!
//! - [`run`]: one-shot, with a deadline and an output cap; on timeout or overflow the
//!   group is killed and the child reaped before the error returns. No extra thread.
//! - [`Stream`]: long-lived, line by line; a reader thread keeps at most `max_lines`
//!   lines of at most `max_line_bytes` each, dropping the oldest, so a child that floods
//!   costs a bounded amount of memory. Dropping the stream kills and reaps the child.

use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::SamplerError;

/// Process groups of the children alive now.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The process is ending ([`close`]): no child may start, and one started in the
/// meantime is killed at once. Without it a worker could start a child after the last
/// [`kill_all`] and leave it running once leet has exited.
static GATE: Gate = Gate::new();

/// How long [`close`] waits for children being started to be registered.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Whether children may start, and how many are being started now (between the
/// decision to start one and its group being registered). Closing waits for those: the
/// thread that closes exits the process right after, and a child started in that gap
/// would never be registered, so never killed.
struct Gate {
    closing: AtomicBool,
    starting: AtomicUsize,
}

impl Gate {
    const fn new() -> Self {
        Self {
            closing: AtomicBool::new(false),
            starting: AtomicUsize::new(0),
        }
    }

    /// Run `start` (which starts and registers a child) unless closing; counted as
    /// starting before `closing` is read, so either [`Gate::close`] waits for this
    /// start or this sees it closing and starts nothing.
    fn start<T>(&self, start: impl FnOnce() -> T) -> Option<T> {
        self.starting.fetch_add(1, Ordering::SeqCst);
        let r = (!self.closing.load(Ordering::SeqCst)).then(start);
        self.starting.fetch_sub(1, Ordering::SeqCst);
        r
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Close, then wait (at most `wait`) for the starts in flight to finish.
    fn close(&self, wait: Duration) {
        self.closing.store(true, Ordering::SeqCst);
        let t = Instant::now();
        while self.starting.load(Ordering::SeqCst) > 0 && t.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn register(pgid: i32) {
    if let Ok(mut live) = LIVE.lock() {
        live.push(pgid);
    }
    // Checked after registering: either `close` saw this group, or this sees `close`.
    if GATE.is_closing() {
        kill_group(pgid);
    }
}

fn unregister(pgid: i32) {
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|p| *p != pgid);
    }
}

/// SIGKILL every live child's process group. Safe to call any number of times, from
/// any thread (the panic hook and the signal thread included). The children are reaped
/// by their owners, or by init once leet has exited.
pub fn kill_all() {
    // Never block here: a panic while the lock is held must not deadlock the hook. The
    // lock is only ever held for a push or a retain, so a short wait for it is enough.
    let mut tries = 0;
    let groups = loop {
        match LIVE.try_lock() {
            Ok(live) => break live.clone(),
            Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner().clone(),
            Err(std::sync::TryLockError::WouldBlock) if tries < 10_000 => {
                tries += 1;
                std::thread::yield_now();
            }
            Err(std::sync::TryLockError::WouldBlock) => return,
        }
    };
    for pgid in groups {
        kill_group(pgid);
    }
}

/// The process is about to exit: [`kill_all`], and from now on every child that starts
/// is killed at once (a worker thread may still be starting one).
pub fn close() {
    // A child whose start began before this registers itself (and, seeing the gate
    // closed, kills itself) within moments: wait for that, bounded, so that the exit
    // that follows cannot cut it off unregistered.
    GATE.close(CLOSE_WAIT);
    kill_all();
}

/// Number of children alive now (for tests and the overview).
pub fn live_count() -> usize {
    LIVE.lock().map_or(0, |l| l.len())
}

fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions; a stale group id at worst
        // returns ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// How a child is tied to leet's lifetime.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tie {
    /// One-shot, under a deadline: killed by its owner on timeout and by [`kill_all`]
    /// on exit. No `pre_exec` hook, so std starts it with `posix_spawn` (a vfork),
    /// which costs a fraction of a fork of this multi-threaded process: a tool run
    /// once per device per sample stays cheap.
    Deadline,
    /// Long-lived: also `PR_SET_PDEATHSIG = SIGKILL` (Linux), so it dies with leet
    /// even when leet is killed with SIGKILL.
    Lifetime,
}

/// `/dev/null` for a child's stdin or stderr: a duplicate of one descriptor opened once,
/// so that a tool run once per device per sample does not open the device twice each
/// time (`Stdio::null` opens it afresh); `Stdio::null` if that one cannot be opened.
fn dev_null() -> Stdio {
    static NULL: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .ok()
    })
    .as_ref()
    .and_then(|f| f.try_clone().ok())
    .map_or_else(Stdio::null, Stdio::from)
}

fn command(program: &Path, args: &[&str], tie: Tie) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(dev_null())
        .stdout(Stdio::piped())
        .stderr(dev_null())
        .process_group(0);
    #[cfg(target_os = "linux")]
    if tie == Tie::Lifetime {
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = tie;
    cmd
}

fn spawn(program: &Path, args: &[&str], tie: Tie) -> Result<(Child, i32), SamplerError> {
    GATE.start(|| spawn_registered(program, args, tie))
        .unwrap_or_else(|| {
            Err(SamplerError::Command {
                cmd: program.display().to_string(),
                detail: "leet is exiting".to_string(),
            })
        })
}

fn spawn_registered(program: &Path, args: &[&str], tie: Tie) -> Result<(Child, i32), SamplerError> {
    // ETXTBSY: the program was just written (an updated tool, a test's fake) and
    // a process forked meanwhile, not yet exec'd, still holds it open for
    // writing. That passes within moments: try again a few times.
    let mut tries = 0;
    let child = loop {
        match command(program, args, tie).spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 5 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20 * tries));
            }
            r => {
                break r.map_err(|e| SamplerError::Command {
                    cmd: program.display().to_string(),
                    detail: e.to_string(),
                })?
            }
        }
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    register(pgid);
    Ok((child, pgid))
}

/// Kill the group, reap the child, forget it.
fn end(child: &mut Child, pgid: i32) {
    kill_group(pgid);
    let _ = child.kill();
    let _ = child.wait();
    unregister(pgid);
}

/// Wait for `fd` to be readable for at most `timeout`. True when readable (or closed).
fn poll_readable(fd: i32, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(timeout.as_millis())
        .unwrap_or(i32::MAX)
        .max(1);
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&raw mut pfd, 1, ms) };
    n > 0
}

/// Run `program args` to completion within `timeout` and return its stdout, at most
/// `max_bytes` of it. On timeout, on more output than `max_bytes`, or on a failing exit
/// status, the child's group is killed, the child reaped, and an error names the cause.
pub(crate) fn run(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, SamplerError> {
    let err = |detail: String| SamplerError::Command {
        cmd: program.display().to_string(),
        detail,
    };
    let deadline = Instant::now() + timeout;
    let (mut child, pgid) = spawn(program, args, Tie::Deadline)?;
    let Some(mut stdout) = child.stdout.take() else {
        end(&mut child, pgid);
        return Err(err("no stdout".to_string()));
    };
    let fd = stdout.as_raw_fd();
    // On the stack, and the output grown as needed: a heap pair of 64 KiB buffers per
    // run made glibc consolidate its heap on every free.
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let now = Instant::now();
        if now >= deadline {
            end(&mut child, pgid);
            return Err(err(format!("timed out after {timeout:?}")));
        }
        if !poll_readable(fd, deadline - now) {
            continue;
        }
        match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if out.len() + n > max_bytes {
                    end(&mut child, pgid);
                    return Err(err(format!("output larger than {max_bytes} bytes")));
                }
                out.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                end(&mut child, pgid);
                return Err(err(format!("read: {e}")));
            }
        }
    }
    // stdout closed: the child is exiting. Give it the rest of the deadline.
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                end(&mut child, pgid);
                return Err(err(format!("timed out after {timeout:?}")));
            }
            Err(e) => {
                end(&mut child, pgid);
                return Err(err(e.to_string()));
            }
        }
    };
    // Anything it left behind in its group goes too.
    kill_group(pgid);
    unregister(pgid);
    if !status.success() {
        return Err(err(format!("exited with {status}")));
    }
    Ok(out)
}

/// Lines a [`Stream`]'s reader has kept, and what it had to throw away.
#[derive(Debug, Default)]
struct Lines {
    lines: VecDeque<String>,
    /// Lines dropped because the consumer did not keep up (oldest first).
    dropped: u64,
    /// Lines longer than the cap, skipped whole.
    oversized: u64,
    /// The child closed its stdout.
    closed: bool,
}

/// What [`Stream::take`] hands over.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Taken {
    /// The lines kept since the last take, oldest first.
    pub lines: Vec<String>,
    /// Lines dropped because the consumer did not keep up.
    pub dropped: u64,
    /// Lines longer than the cap, skipped whole.
    pub oversized: u64,
    /// The child closed its stdout.
    pub closed: bool,
}

/// A long-lived child whose stdout is read line by line on its own thread.
pub struct Stream {
    child: Child,
    pgid: i32,
    shared: Arc<Mutex<Lines>>,
    reader: Option<JoinHandle<()>>,
    program: String,
}

impl Stream {
    /// Start `program args`. At most `max_lines` lines of at most `max_line_bytes` bytes
    /// each are kept between two [`Stream::take`] calls.
    pub fn spawn(
        program: &Path,
        args: &[&str],
        max_lines: usize,
        max_line_bytes: usize,
    ) -> Result<Self, SamplerError> {
        Self::spawn_with_close_notice(program, args, max_lines, max_line_bytes, None)
    }

    /// [`Stream::spawn`], calling `on_close` on the reader thread once the child's stdout
    /// has closed (it exited, or closed it), so an owner can wait for that instead of
    /// polling.
    pub fn spawn_with_close_notice(
        program: &Path,
        args: &[&str],
        max_lines: usize,
        max_line_bytes: usize,
        on_close: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Self, SamplerError> {
        let (mut child, pgid) = spawn(program, args, Tie::Lifetime)?;
        let Some(stdout) = child.stdout.take() else {
            end(&mut child, pgid);
            return Err(SamplerError::Command {
                cmd: program.display().to_string(),
                detail: "no stdout".to_string(),
            });
        };
        let shared = Arc::new(Mutex::new(Lines::default()));
        let sink = shared.clone();
        let reader = std::thread::Builder::new()
            .name("leet-child-reader".into())
            .spawn(move || {
                read_lines(stdout, &sink, max_lines.max(1), max_line_bytes);
                if let Some(f) = on_close {
                    f();
                }
            })
            .map_err(|e| {
                end(&mut child, pgid);
                SamplerError::Command {
                    cmd: program.display().to_string(),
                    detail: format!("reader thread: {e}"),
                }
            })?;
        Ok(Self {
            child,
            pgid,
            shared,
            reader: Some(reader),
            program: program.display().to_string(),
        })
    }

    /// The lines read since the last call, oldest first, and the drop counters since then.
    pub fn take(&mut self) -> Taken {
        let Ok(mut s) = self.shared.lock() else {
            return Taken {
                closed: true,
                ..Taken::default()
            };
        };
        Taken {
            lines: s.lines.drain(..).collect(),
            dropped: std::mem::take(&mut s.dropped),
            oversized: std::mem::take(&mut s.oversized),
            closed: s.closed,
        }
    }

    /// The child's exit status once it has exited (the child is then reaped).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The program the child runs.
    pub fn program(&self) -> &str {
        &self.program
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        end(&mut self.child, self.pgid);
        // The pipe is closed now that the group is dead: the reader ends promptly,
        // unless a grandchild escaped the group; then it is left to end on its own.
        if let Some(r) = self.reader.take() {
            if r.is_finished() {
                let _ = r.join();
            }
        }
    }
}

fn read_lines(mut stdout: impl Read, sink: &Mutex<Lines>, max_lines: usize, max_line_bytes: usize) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::with_capacity(4096);
    let mut skipping = false;
    let push = |line: &[u8], sink: &Mutex<Lines>| {
        if let Ok(mut s) = sink.lock() {
            if s.lines.len() >= max_lines {
                s.lines.pop_front();
                s.dropped += 1;
            }
            s.lines
                .push_back(String::from_utf8_lossy(line).into_owned());
        }
    };
    let oversized = |sink: &Mutex<Lines>| {
        if let Ok(mut s) = sink.lock() {
            s.oversized += 1;
        }
    };
    loop {
        let n = match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let (piece, newline) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = if newline {
                &rest[piece.len() + 1..]
            } else {
                &[]
            };
            if !skipping {
                if line.len() + piece.len() > max_line_bytes {
                    line.clear();
                    skipping = true;
                    oversized(sink);
                } else {
                    line.extend_from_slice(piece);
                }
            }
            if newline {
                if !skipping {
                    let l = line.strip_suffix(b"\r").unwrap_or(&line);
                    if !l.is_empty() {
                        push(l, sink);
                    }
                }
                line.clear();
                skipping = false;
            }
        }
    }
    if !skipping && !line.is_empty() {
        push(&line, sink);
    }
    if let Ok(mut s) = sink.lock() {
        s.closed = true;
    }
}

/// Look `name` up on `$PATH`.
pub(crate) fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    })
}

pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Restart delays of a long-lived child: 1 s, doubling up to 60 s; back to 1 s after a
/// child that ran for `healthy` or longer.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
    healthy: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_secs(1);
    const MAX: Duration = Duration::from_secs(60);

    pub(crate) fn new(healthy: Duration) -> Self {
        Self {
            next: Self::FIRST,
            healthy,
        }
    }

    /// The delay before the next start, after a child that ran for `lived`.
    pub(crate) fn after(&mut self, lived: Duration) -> Duration {
        if lived >= self.healthy {
            self.next = Self::FIRST;
        }
        let d = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        d
    }
}

/// The first `max_chars` characters of an untrusted line, sanitized for an error
/// message.
pub(crate) fn preview(line: &str, max_chars: usize) -> String {
    leet_text::sanitize(&line.chars().take(max_chars).collect::<String>())
}

/// `Ok` without problems, else one [`SamplerError::Command`] of `program` naming them
/// all.
pub(crate) fn problems_result(program: &Path, problems: &[String]) -> Result<(), SamplerError> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SamplerError::Command {
            cmd: program.display().to_string(),
            detail: problems.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh() -> std::path::PathBuf {
        find_on_path("sh").expect("sh on PATH")
    }

    #[test]
    fn a_preview_is_short_and_sanitized() {
        let line = format!("\u{1b}[2J{}", "x".repeat(100));
        // ten characters taken, then the escape sequence (four of them) removed
        assert_eq!(preview(&line, 10), "xxxxxx");
        assert_eq!(preview("short", 10), "short");
    }

    #[test]
    fn problems_become_one_command_error() {
        let prog = Path::new("/opt/tool");
        assert!(problems_result(prog, &[]).is_ok());
        let e = problems_result(prog, &["a".into(), "b".into()]).expect_err("problems");
        assert_eq!(e.to_string(), "run '/opt/tool': a; b");
    }

    #[test]
    fn closing_waits_for_a_child_being_started_and_then_starts_none() {
        let gate = Gate::new();
        let registered = AtomicBool::new(false);
        std::thread::scope(|s| {
            let (began, begun) = std::sync::mpsc::channel();
            let (gate, registered) = (&gate, &registered);
            s.spawn(move || {
                gate.start(|| {
                    began.send(()).expect("send");
                    // a slow fork and exec: close must not return before this registers
                    std::thread::sleep(Duration::from_millis(150));
                    registered.store(true, Ordering::SeqCst);
                })
            });
            begun.recv().expect("started");
            gate.close(Duration::from_secs(10));
            assert!(
                registered.load(Ordering::SeqCst),
                "closed (and the process would exit) before the child was registered"
            );
        });
        assert!(gate.start(|| ()).is_none(), "a child started after closing");
    }

    #[test]
    fn run_returns_stdout() {
        let out = run(&sh(), &["-c", "echo hi"], Duration::from_secs(5), 1024).expect("run");
        assert_eq!(out, b"hi\n");
    }

    #[test]
    fn run_times_out_and_kills_the_group() {
        // The grandchild `sleep` holds the pipe open; killing the group ends it too.
        // Waited for, both would end in success after 30 s.
        let r = run(
            &sh(),
            &["-c", "sleep 30 & sleep 30"],
            Duration::from_millis(200),
            1024,
        );
        let e = r.expect_err("must time out").to_string();
        assert!(e.contains("timed out"), "{e}");
    }

    #[test]
    fn run_caps_output() {
        let r = run(&sh(), &["-c", "yes"], Duration::from_secs(5), 100_000);
        let e = r.expect_err("must overflow").to_string();
        assert!(e.contains("larger than 100000"), "{e}");
    }

    #[test]
    fn run_reports_failing_status() {
        let e = run(&sh(), &["-c", "exit 3"], Duration::from_secs(5), 1024)
            .expect_err("must fail")
            .to_string();
        assert!(e.contains("exited with"), "{e}");
    }

    #[test]
    fn stream_keeps_bounded_lines() {
        let mut s = Stream::spawn(
            &sh(),
            &["-c", "i=0; while [ $i -lt 50 ]; do echo line$i; i=$((i+1)); done; head -c 5000 /dev/zero | tr '\\0' x; echo; echo last"],
            8,
            1000,
        )
        .expect("spawn");
        let t = Instant::now();
        let mut got = Taken::default();
        while !got.closed && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
            let mut tk = s.take();
            got.lines.append(&mut tk.lines);
            got.dropped += tk.dropped;
            got.oversized += tk.oversized;
            got.closed = tk.closed;
        }
        assert!(got.closed);
        assert_eq!(got.lines.last().map(String::as_str), Some("last"));
        assert_eq!(got.oversized, 1);
        assert_eq!(got.lines.len() as u64 + got.dropped, 51);
        drop(s);
    }

    #[test]
    fn dropping_a_stream_kills_it() {
        let s = Stream::spawn(&sh(), &["-c", "echo $$; exec sleep 30"], 4, 100).expect("spawn");
        let pid = s.child.id();
        drop(s);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}

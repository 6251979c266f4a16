//! A real terminal for end-to-end tests: the real binary in a tmux pane of its
//! own (a server per test), driven by keys, its screen captured as text.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Each wait's deadline times this: a deadline only ends a test that is failing
/// anyway, so it is generous, and a loaded machine (a parallel build, `nice`)
/// never fails a test that works.
pub const SLACK: u32 = 4;

pub struct Tmux {
    pub socket: String,
    pub dir: tempfile::TempDir,
}

impl Tmux {
    pub fn start(name: &str, args: &[&Path], w: u16, h: u16) -> Self {
        let args: Vec<&str> = args.iter().map(|p| p.to_str().unwrap()).collect();
        Self::start_args(name, &args, w, h)
    }

    pub fn start_args(name: &str, args: &[&str], w: u16, h: u16) -> Self {
        Self::start_env(name, "", args, w, h)
    }

    /// `env` is a shell prefix such as `VAR=1 ` (empty for none).
    /// `HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME` and `XDG_CACHE_HOME` are fresh
    /// directories unless `env` names them: the user's settings and what other
    /// tests' workspaces saved never change a test's screen.
    pub fn start_env(name: &str, env: &str, args: &[&str], w: u16, h: u16) -> Self {
        Self::start_after(name, "", env, args, w, h)
    }

    /// As [`Tmux::start_env`], with the shell command `before` (ending in `;`) run
    /// first in the pane's shell (`trap "" HUP;`).
    pub fn start_after(name: &str, before: &str, env: &str, args: &[&str], w: u16, h: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let exit = dir.path().join("exit");
        let mut config = String::new();
        for (var, sub) in super::isolated::VARS {
            let named = env
                .split_whitespace()
                .any(|w| w.starts_with(&format!("{var}=")));
            if !named {
                config.push_str(&format!("{var}={} ", shell_quote(&dir.path().join(sub))));
            }
        }
        let mut cmd = format!(
            "{config}{env}{}",
            shell_quote(Path::new(env!("CARGO_BIN_EXE_leet")))
        );
        for a in args {
            cmd.push(' ');
            cmd.push_str(&shell_quote(Path::new(a)));
        }
        let script = format!(
            "{before}{cmd}; echo EXIT:$? > {}; sleep 30",
            shell_quote(&exit)
        );
        let t = Self::session(name, dir, w, h, &["sh", "-c", &script]);
        t.tmux(&["set-option", "-t", "s", "remain-on-exit", "on"]);
        t
    }

    /// A detached tmux server of its own (socket named after the test) running `cmd`
    /// in a `w`×`h` pane.
    pub fn session(name: &str, dir: tempfile::TempDir, w: u16, h: u16, cmd: &[&str]) -> Self {
        // Named after the test, and unique within the process: two tests that
        // chose the same name never share (and kill) one server.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("leet-e2e-{name}-{}-{n}", std::process::id());
        let t = Self { socket, dir };
        let (w, h) = (w.to_string(), h.to_string());
        let mut args = vec!["new-session", "-d", "-s", "s", "-x", &w, "-y", &h];
        args.extend_from_slice(cmd);
        t.tmux(&args);
        t
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "s"])
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "s", k]);
        }
    }

    pub fn wait_for(&self, what: &str, timeout: Duration) -> (String, Duration) {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return (s, t0.elapsed());
            }
            assert!(
                t0.elapsed() < timeout * SLACK,
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The first screen on which `found` finds something; panics after `timeout`.
    pub fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        found: impl Fn(&str) -> Option<T>,
    ) -> (String, T) {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if let Some(x) = found(&s) {
                return (s, x);
            }
            assert!(
                t0.elapsed() < timeout * SLACK,
                "timed out waiting for {what}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// An interactive shell with job control (`sh -i`), for ctrl+z and `fg`.
    pub fn shell(name: &str, w: u16, h: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // The leet started from this shell gets fresh directories too.
        let vars: Vec<String> = super::isolated::VARS
            .iter()
            .map(|(var, sub)| {
                let d = dir.path().join(sub);
                std::fs::create_dir_all(&d).unwrap();
                format!("{var}={}", d.display())
            })
            .collect();
        let mut cmd = vec!["env", "-u", "ENV", "PS1=$ "];
        cmd.extend(vars.iter().map(String::as_str));
        cmd.extend(["sh", "-i"]);
        let t = Self::session(name, dir, w, h, &cmd);
        t.wait_for("$", Duration::from_secs(10));
        t
    }

    /// Type a line into the pane and press Enter.
    pub fn line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "s", "-l", text]);
        self.keys(&["Enter"]);
    }

    /// Bytes as they would come from the terminal, escape sequences included.
    pub fn bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-t", "s", "-H"];
        args.extend(hex.iter().map(String::as_str));
        self.tmux(&args);
    }

    pub fn flag(&self, f: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "s", f])
            .trim()
            .to_owned()
    }

    pub fn wait_flag(&self, f: &str, want: &str, timeout: Duration) {
        let t0 = Instant::now();
        loop {
            let got = self.flag(f);
            if got == want {
                return;
            }
            assert!(
                t0.elapsed() < timeout * SLACK,
                "{f} is {got:?}, want {want:?}; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The viewer's process id: the child of the pane's shell.
    pub fn viewer_pid(&self) -> String {
        let pid = self.flag("#{pane_pid}");
        let t0 = Instant::now();
        loop {
            let out = Command::new("pgrep").args(["-P", &pid]).output().unwrap();
            let child = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if !child.is_empty() {
                assert!(!child.contains('\n'), "more than one child: {child}");
                return child;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5) * SLACK,
                "viewer process not found"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The terminal is back to normal: main screen, cursor shown, no mouse capture.
    pub fn assert_restored(&self) {
        assert_eq!(
            self.flag("#{alternate_on}"),
            "0",
            "still on the alternate screen"
        );
        assert_eq!(self.flag("#{cursor_flag}"), "1", "cursor hidden");
        assert_eq!(self.flag("#{mouse_any_flag}"), "0", "mouse capture left on");
    }

    pub fn exit_code(&self) -> String {
        let p = self.dir.path().join("exit");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) * SLACK {
            if let Ok(s) = std::fs::read_to_string(&p) {
                if !s.is_empty() {
                    return s.trim().to_owned();
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the program did not exit; screen:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

pub fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

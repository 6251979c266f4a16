//! `leet URL` in a real terminal (tmux on a socket of its own): the run on the
//! fake server opens in the viewer, and a running run's new rows are followed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Pane {
    socket: String,
}

impl Pane {
    /// `leet ARGS` in a 160×50 pane, with the key and the caches under `home`.
    pub fn start(name: &str, home: &Path, key: &str, args: &[&str]) -> Self {
        Self::start_sized(name, (160, 50), home, key, args)
    }

    /// [`Pane::start`] in a pane of `(columns, rows)`.
    pub fn start_sized(
        name: &str,
        (cols, rows): (u16, u16),
        home: &Path,
        key: &str,
        args: &[&str],
    ) -> Self {
        let p = Self {
            socket: format!("leet-remote-{name}-{}", std::process::id()),
        };
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let cmd = format!(
            "HOME={h} XDG_CACHE_HOME={c} XDG_CONFIG_HOME={g} XDG_STATE_HOME={st} WANDB_API_KEY={k} {bin} {a}; echo EXIT:$?; stty -a | grep -q -- -icanon && echo TTY:raw || echo TTY:cooked; sleep 30",
            h = q(&home.display().to_string()),
            c = q(&home.join("cache").display().to_string()),
            g = q(&home.join("config").display().to_string()),
            st = q(&home.join("state").display().to_string()),
            k = q(key),
            bin = q(env!("CARGO_BIN_EXE_leet")),
            a = args.iter().map(|a| q(a)).collect::<Vec<_>>().join(" "),
        );
        p.tmux(&[
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            "sh",
            "-c",
            &cmd,
        ]);
        p
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", "s", keys]);
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "s"])
    }

    /// The first screen holding `what`; panics with the screen after `limit`
    /// (a bound on a hung test, not on how fast leet is).
    pub fn wait_for(&self, what: &str, limit: Duration) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(t0.elapsed() < limit, "no {what:?} on the screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Pane {
    /// The argument lists of the pane's shell's children (leet, while it runs):
    /// what a process list shows of them.
    pub fn children_argv(&self) -> Vec<String> {
        let shell = self.tmux(&["list-panes", "-t", "s", "-F", "#{pane_pid}"]);
        let shell = shell.trim();
        let children = std::fs::read_dir(format!("/proc/{shell}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
            .collect::<String>();
        children
            .split_whitespace()
            .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .collect()
    }
}

impl Pane {
    /// The process id of leet in the pane, once it runs.
    pub fn leet_pid(&self) -> Option<i32> {
        let shell = self.tmux(&["list-panes", "-t", "s", "-F", "#{pane_pid}"]);
        let shell = shell.trim().to_owned();
        std::fs::read_dir(format!("/proc/{shell}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
            .collect::<String>()
            .split_whitespace()
            .find(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|b| String::from_utf8_lossy(&b).contains(env!("CARGO_BIN_EXE_leet")))
            })
            .and_then(|pid| pid.parse().ok())
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

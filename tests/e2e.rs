//! End to end: the real binary in a real terminal (tmux), driven by keys.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
}

fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    // CI installs tmux (.ci/run): there a missing tmux is a failure, not a skip.
    assert!(
        ok || std::env::var_os("CI").is_none(),
        "tmux is required in CI"
    );
    ok
}

impl Tmux {
    fn start(name: &str, args: &[&Path], w: u16, h: u16) -> Self {
        let args: Vec<&str> = args.iter().map(|p| p.to_str().unwrap()).collect();
        Self::start_args(name, &args, w, h)
    }

    fn start_args(name: &str, args: &[&str], w: u16, h: u16) -> Self {
        Self::start_env(name, "", args, w, h)
    }

    /// `env` is a shell prefix such as `VAR=1 ` (empty for none).
    fn start_env(name: &str, env: &str, args: &[&str], w: u16, h: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = format!("leet-e2e-{name}-{}", std::process::id());
        let exit = dir.path().join("exit");
        let mut cmd = format!(
            "{env}{}",
            shell_quote(Path::new(env!("CARGO_BIN_EXE_leet")))
        );
        for a in args {
            cmd.push(' ');
            cmd.push_str(&shell_quote(Path::new(a)));
        }
        let script = format!("{cmd}; echo EXIT:$? > {}; sleep 30", shell_quote(&exit));
        let t = Self { socket, dir };
        t.tmux(&[
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            "sh",
            "-c",
            &script,
        ]);
        t.tmux(&["set-option", "-t", "s", "remain-on-exit", "on"]);
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "s"])
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "s", k]);
        }
    }

    fn wait_for(&self, what: &str, timeout: Duration) -> (String, Duration) {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return (s, t0.elapsed());
            }
            assert!(
                t0.elapsed() < timeout,
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The terminal is back to normal: main screen, cursor shown, no mouse capture.
    fn assert_restored(&self) {
        let flag = |f: &str| {
            self.tmux(&["display-message", "-p", "-t", "s", f])
                .trim()
                .to_owned()
        };
        assert_eq!(
            flag("#{alternate_on}"),
            "0",
            "still on the alternate screen"
        );
        assert_eq!(flag("#{cursor_flag}"), "1", "cursor hidden");
        assert_eq!(flag("#{mouse_any_flag}"), "0", "mouse capture left on");
    }

    fn exit_code(&self) -> String {
        let p = self.dir.path().join("exit");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
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

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

fn fixture(name: &str) -> PathBuf {
    common::runs_dir().join(name)
}

#[test]
fn filter_sidebar_page_help_quit_restores_terminal() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let t = Tmux::start("keys", &[&fixture("system")], 120, 40);
    t.wait_for("Metrics [1-2 of 2]", Duration::from_secs(10));
    let s = t.screen();
    assert!(
        s.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
        "no chart line drawn:\n{s}"
    );
    t.keys(&["/", "n", "o", "i", "Enter"]);
    // After Enter the status bar shows the filter in force with its match count.
    let (s, _) = t.wait_for("/noi [1/2]", Duration::from_secs(5));
    assert!(s.contains("Metrics [1-1 of 1]"), "{s}");
    assert!(s.contains("System Metrics"), "{s}");
    t.keys(&["]"]);
    let t0 = Instant::now();
    while t.screen().contains("System Metrics") {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "right sidebar still shown"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.keys(&["n", "?"]);
    t.wait_for("keys (from the live key map)", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    let after = t.screen();
    assert!(
        !after.contains("Metrics ["),
        "viewer left on screen:\n{after}"
    );
}

#[test]
fn growing_file_shows_new_steps() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let src = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run-grow.wandb");
    // The first part ends mid-record: the reader must keep the partial record.
    let cut = bytes.len() / 2 + 7;
    std::fs::write(&run, &bytes[..cut]).unwrap();
    let t = Tmux::start("grow", &[&run], 120, 40);
    t.wait_for("Metrics [", Duration::from_secs(10));
    // Once the first part is read the run is not finished (no exit record yet). Its
    // records are hours old, so it may already be called "crashed?".
    let (s, _) = t.wait_for("step ", Duration::from_secs(10));
    assert!(!s.contains("step 49") && !s.contains("finished"), "{s}");
    let t_append = Instant::now();
    {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().append(true).open(&run).unwrap();
        f.write_all(&bytes[cut..]).unwrap();
        f.flush().unwrap();
    }
    let (s, _) = t.wait_for("step 49", Duration::from_secs(5));
    let seen = t_append.elapsed();
    eprintln!("append → on screen (incl. tmux polling): {seen:?}");
    assert!(s.contains("finished"), "{s}");
    assert!(
        s.contains("└0") && s.contains("49│") || s.contains("49"),
        "{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn waits_for_a_wandb_file_to_appear() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run-20261130_000000-wait0001");
    std::fs::create_dir(&run_dir).unwrap();
    let t = Tmux::start("wait", &[&run_dir], 120, 30);
    t.wait_for("waiting for a .wandb file", Duration::from_secs(10));
    let src = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    std::fs::copy(src, run_dir.join("run-wait0001.wandb")).unwrap();
    t.wait_for("step 49", Duration::from_secs(5));
    t.keys(&["C-c"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn sigterm_restores_the_terminal() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let t = Tmux::start("term", &[&fixture("tiny")], 100, 30);
    t.wait_for("Metrics [", Duration::from_secs(10));
    let pid = t.tmux(&["display-message", "-p", "-t", "s", "#{pane_pid}"]);
    // The pane runs `sh -c`; signal its child, the viewer.
    let child = Command::new("pgrep")
        .args(["-P", pid.trim()])
        .output()
        .unwrap();
    let child = String::from_utf8_lossy(&child.stdout).trim().to_owned();
    assert!(!child.is_empty(), "viewer process not found");
    let out = Command::new("kill")
        .args(["-TERM", &child])
        .output()
        .unwrap();
    assert!(out.status.success());
    let code = t.exit_code();
    assert!(code == "EXIT:0", "{code}");
    t.assert_restored();
}

#[test]
fn live_host_monitor_draws_samples_and_quits_cleanly() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let t = Tmux::start_args("live", &["--live", "--interval", "200ms"], 160, 45);
    // The first sample has no cpu reading (a rate needs two); the cpu chart and the
    // sample count prove at least two samples reached the screen.
    let (s, _) = t.wait_for("3 samples", Duration::from_secs(15));
    assert!(
        s.contains("Metrics [") && s.contains("live host monitor"),
        "{s}"
    );
    // The grouped CPU chart (per-core lines and the process line) needs two readings.
    let (s, _) = t.wait_for("■cpu 0", Duration::from_secs(5));
    assert!(s.contains("CPU"), "{s}");
    let s = t.screen();
    assert!(
        s.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
        "no chart line drawn:\n{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

#[test]
fn panic_restores_the_terminal_and_shows_the_message() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let dir = fixture("tiny");
    let t = Tmux::start_env(
        "panic",
        "LEET_DEBUG_PANIC=1 ",
        &[dir.to_str().unwrap()],
        120,
        40,
    );
    assert_eq!(t.exit_code(), "EXIT:101");
    t.assert_restored();
    let s = t.screen();
    assert!(
        s.contains("LEET_DEBUG_PANIC is set"),
        "panic message not shown:\n{s}"
    );
}

#[test]
fn run_picker_switches_runs_in_a_wandb_directory() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let t = Tmux::start("runs", &[&fixture("multi")], 120, 30);
    t.wait_for("R: 5 runs", Duration::from_secs(10));
    t.wait_for("multi005", Duration::from_secs(5));
    t.keys(&["R"]);
    t.wait_for("runs in ", Duration::from_secs(5));
    t.keys(&["Down", "Down", "Enter"]);
    let (s, _) = t.wait_for("multi-2 (multi003)", Duration::from_secs(5));
    assert!(!s.contains("runs in "), "picker still open:\n{s}");
    // Space draws another run beside it: its reader starts and its lines get a legend.
    t.keys(&["R", "Down", "Space", "Escape"]);
    t.wait_for("■multi-2 ■multi-1", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

#[test]
fn compare_flag_draws_another_directory_s_run() {
    if !have_tmux() {
        eprintln!("SKIPPED: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let tiny = fixture("tiny");
    let multi = fixture("multi");
    let args = [tiny.to_str().unwrap(), "--compare", multi.to_str().unwrap()];
    let t = Tmux::start_args("compare", &args, 120, 40);
    t.wait_for("■tiny-run ■multi-4", Duration::from_secs(10));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

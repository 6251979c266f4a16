//! End to end: the real binary in a real terminal (tmux), driven by keys.
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod common;

use common::tmux::{shell_quote, Tmux};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Skip the test where tmux is missing (outside CI; in CI `have_tmux` fails instead).
macro_rules! require_tmux {
    () => {
        if !common::have_tmux() {
            return;
        }
    };
}

fn fixture(name: &str) -> PathBuf {
    common::runs_dir().join(name)
}

#[test]
fn filter_sidebar_page_help_quit_restores_terminal() {
    require_tmux!();
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
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
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

/// A project directory opened before its first run: an empty workspace that says
/// it waits, and draws the first run once the SDK writes one (its `wandb`
/// directory made then too).
#[test]
fn a_project_opened_before_its_first_run_waits_and_draws_it() {
    require_tmux!();
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start("emptyws", &[dir.path()], 120, 30);
    t.wait_for(
        "no runs yet: waiting for one to start",
        Duration::from_secs(10),
    );
    let run_dir = dir.path().join("wandb/run-20261130_000000-wait0002");
    std::fs::create_dir_all(&run_dir).unwrap();
    let src = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    std::fs::copy(src, run_dir.join("run-wait0002.wandb")).unwrap();
    let (s, _) = t.wait_for("1 drawn", Duration::from_secs(10));
    assert!(s.contains("Runs [1]"), "{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    // At 80×24 with a long directory: wrapped inside the pane, its border kept.
    let long = dir
        .path()
        .join("projects/image-classification-resnet50-baseline");
    std::fs::create_dir_all(&long).unwrap();
    let t = Tmux::start("emptyws80", &[&long], 80, 24);
    let (s, _) = t.wait_for("no runs yet:", Duration::from_secs(10));
    let rows: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
    let border = rows[0]
        .iter()
        .position(|&c| c == '│')
        .expect("the list's border");
    for (i, r) in rows.iter().enumerate().take(8).skip(1) {
        assert_eq!(r.get(border), Some(&'│'), "row {i} over the border:\n{s}");
    }
    let text: String = rows[..10]
        .iter()
        .map(|r| r[..border].iter().collect::<String>().trim().to_owned())
        .collect();
    assert!(text.contains("baseline"), "the directory cut:\n{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn growing_file_shows_new_steps() {
    require_tmux!();
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
    // The charts' x axes now run from step 0 to step 49 (the focused chart has a
    // heavy border).
    assert!(
        s.contains("└0") && (s.contains("49│") || s.contains("49┃")),
        "x axis does not reach step 49:\n{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn waits_for_a_wandb_file_to_appear() {
    require_tmux!();
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

fn kill(sig: &str, pid: &str) {
    let out = Command::new("kill")
        .args([&format!("-{sig}"), pid])
        .output()
        .unwrap();
    assert!(out.status.success(), "kill -{sig} {pid}: {out:?}");
}

/// The process state letter `ps` shows (`T` when stopped).
fn process_state(pid: &str) -> String {
    let out = Command::new("ps")
        .args(["-o", "stat=", "-p", pid])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn quit_signals_exit_128_plus_the_signal_and_restore_the_terminal() {
    require_tmux!();
    let cases = [
        ("TERM", "EXIT:143"),
        ("INT", "EXIT:130"),
        ("HUP", "EXIT:129"),
        // Its default would dump core with the terminal left raw.
        ("QUIT", "EXIT:131"),
    ];
    let panes: Vec<Tmux> = cases
        .iter()
        .map(|(sig, _)| Tmux::start(&format!("sig{sig}"), &[&fixture("tiny")], 100, 30))
        .collect();
    for ((sig, want), t) in cases.iter().zip(&panes) {
        t.wait_for("Metrics [", Duration::from_secs(10));
        kill(sig, &t.viewer_pid());
        assert_eq!(t.exit_code(), *want, "after SIG{sig}");
        t.assert_restored();
        let s = t.screen();
        assert!(!s.contains("Metrics ["), "viewer left on screen:\n{s}");
    }
}

#[test]
fn sigterm_and_ctrl_c_quit_even_when_the_loop_is_stuck() {
    require_tmux!();
    // LEET_DEBUG_STALL: after the first frame the loop takes no more messages.
    let run = fixture("tiny");
    let args = [run.to_str().unwrap()];
    let term = Tmux::start_env("stall-term", "LEET_DEBUG_STALL=1 ", &args, 100, 30);
    let cc = Tmux::start_env("stall-cc", "LEET_DEBUG_STALL=1 ", &args, 100, 30);
    term.wait_flag("#{alternate_on}", "1", Duration::from_secs(10));
    cc.wait_flag("#{alternate_on}", "1", Duration::from_secs(10));
    let t0 = Instant::now();
    kill("TERM", &term.viewer_pid());
    cc.keys(&["C-c"]);
    assert_eq!(term.exit_code(), "EXIT:143");
    assert_eq!(cc.exit_code(), "EXIT:0");
    eprintln!("both quit (incl. tmux and polling) in {:?}", t0.elapsed());
    term.assert_restored();
    cc.assert_restored();
}

/// Quit with `q` after `stray` came from the terminal (and a pause longer than the
/// reader's escape timeout).
fn quits_after_stray(name: &str, stray: &[u8], quit: &str) {
    let t = Tmux::start(name, &[&fixture("tiny")], 100, 30);
    t.wait_for("Metrics [", Duration::from_secs(10));
    t.bytes(stray);
    if quit == "q" {
        std::thread::sleep(Duration::from_millis(400));
    }
    t.keys(&[quit]);
    assert_eq!(t.exit_code(), "EXIT:0", "{stray:02x?} then {quit}");
    t.assert_restored();
}

#[test]
fn a_stray_sgr_mouse_prefix_does_not_swallow_q() {
    require_tmux!();
    quits_after_stray("stray-sgr", b"\x1b[<", "q");
}

#[test]
fn a_stray_normal_mouse_prefix_does_not_swallow_q() {
    require_tmux!();
    quits_after_stray("stray-x10", b"\x1b[M", "q");
}

#[test]
fn ctrl_c_quits_right_after_a_stray_sequence() {
    require_tmux!();
    quits_after_stray("stray-cc", b"\x1b[<", "C-c");
    quits_after_stray("stray-cc2", b"\x1b[M", "C-c");
}

#[test]
fn mouse_wheel_zooms_in_both_mouse_encodings() {
    require_tmux!();
    let t = Tmux::start("wheel", &[&fixture("tiny")], 100, 30);
    // The first frame can come before the reader's first batch: wheel over the
    // chart once it is there.
    t.wait_for("Metrics [1-3 of 3]", Duration::from_secs(10));
    assert!(!t.screen().contains("zoom"));
    // Wheel up at column 50, row 8 (over the first chart): SGR, then normal encoding.
    t.bytes(b"\x1b[<64;50;8M");
    t.wait_for("acc · zoom", Duration::from_secs(5));
    t.keys(&["z"]);
    let t0 = Instant::now();
    while t.screen().contains("zoom") {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "zoom not reset"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.bytes(&[0x1b, b'[', b'M', 64 + 32, 50 + 32, 8 + 32]);
    t.wait_for("acc · zoom", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn resize_redraws_at_the_new_size() {
    require_tmux!();
    let t = Tmux::start("resize", &[&fixture("tiny")], 100, 30);
    t.wait_for("Metrics [", Duration::from_secs(10));
    t.tmux(&["resize-window", "-t", "s", "-x", "70", "-y", "20"]);
    // The status bar moves to the new last row.
    let t0 = Instant::now();
    loop {
        let s = t.screen();
        let lines: Vec<&str> = s.lines().collect();
        if lines.len() == 20 && lines[19].contains("h: help") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "not redrawn at 70x20:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn sigtstp_leaves_the_terminal_and_sigcont_redraws() {
    require_tmux!();
    let t = Tmux::start("tstp", &[&fixture("tiny")], 100, 30);
    t.wait_for("Metrics [", Duration::from_secs(10));
    let pid = t.viewer_pid();
    kill("TSTP", &pid);
    // Stopped, with the terminal as it was before: main screen, mouse off, cursor.
    let t0 = Instant::now();
    while !process_state(&pid).starts_with('T') {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "not stopped: {}",
            process_state(&pid)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.assert_restored();
    let s = t.screen();
    assert!(
        !s.contains("Metrics ["),
        "viewer still shown while stopped:\n{s}"
    );
    kill("CONT", &pid);
    // Back on the alternate screen, drawn in full (entering it clears it).
    t.wait_flag("#{alternate_on}", "1", Duration::from_secs(5));
    t.wait_for("Metrics [", Duration::from_secs(5));
    assert_eq!(t.flag("#{mouse_any_flag}"), "1", "mouse capture not back");
    // Raw mode is back: `q` quits without Enter.
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// A terminal that goes away (tmux killed; an SSH connection dropped) with no
/// SIGHUP to the viewer (the pane's shell, its session leader, takes that one and
/// ignores it): the viewer leaves as a hangup ends it, 129, not with the terminal's
/// `Input/output error` and 1.
#[test]
fn a_terminal_that_goes_away_ends_the_viewer_as_a_hangup() {
    require_tmux!();
    let run = fixture("tiny");
    let t = Tmux::start_after(
        "gone",
        "trap '' HUP; ",
        "",
        &[run.to_str().unwrap()],
        100,
        30,
    );
    t.wait_for("Metrics [", Duration::from_secs(10));
    let pid = t.viewer_pid();
    t.tmux(&["kill-server"]);
    assert_eq!(t.exit_code(), "EXIT:129");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "viewer left running"
    );
}

/// Stopped from outside (`kill -STOP`: a job scheduler's suspend, a debugger) and
/// continued with `fg`: the shell put the terminal back in cooked mode meanwhile;
/// the viewer takes raw mode again, so keys act at once (`q` quits without Enter)
/// and are not echoed.
#[test]
fn a_stop_from_outside_and_fg_give_the_viewer_its_keys_back() {
    require_tmux!();
    let t = viewer_in_a_shell("stopped");
    kill("STOP", &t.viewer_pid());
    // `Stopped (signal)`, maybe cut by the viewer's last frame.
    t.wait_for("(signal)", SUSPEND_WAIT);
    // What bash does as it takes the terminal back; `sh` leaves it raw, where
    // Enter is no newline: ctrl+j is.
    t.keys(&["stty sane", "C-j"]);
    fg_then_quit(&t);
}

/// The viewer on the tiny run, started from an interactive shell in tmux, its
/// first frame drawn.
fn viewer_in_a_shell(name: &str) -> Tmux {
    let t = Tmux::shell(name, 100, 30);
    let exe = shell_quote(Path::new(env!("CARGO_BIN_EXE_leet")));
    let run = shell_quote(&fixture("tiny"));
    t.line(&format!("{exe} {run}"));
    t.wait_for("Metrics [", SUSPEND_WAIT);
    t
}

/// `fg` the stopped viewer, see it draw again and take `q` at once (raw mode),
/// and the shell's terminal restored after it with exit status 0.
fn fg_then_quit(t: &Tmux) {
    // ctrl+j: a newline whether the terminal is cooked or still raw (where an
    // Enter typed before `stty sane` has run is no newline yet).
    t.keys(&["fg", "C-j"]);
    t.wait_flag("#{alternate_on}", "1", SUSPEND_WAIT);
    t.wait_for("Metrics [", SUSPEND_WAIT);
    t.keys(&["q"]);
    t.wait_flag("#{alternate_on}", "0", SUSPEND_WAIT);
    t.line("echo EXIT:$?");
    t.wait_for("EXIT:0", SUSPEND_WAIT);
    t.assert_restored();
}

/// Generous: each wait is a deadline for a state the pane reaches within moments
/// on a quiet machine, but a stop, a shell prompt and a redraw each wait for the
/// scheduler on one that runs the whole suite at once.
const SUSPEND_WAIT: Duration = Duration::from_secs(20);

#[test]
fn ctrl_z_suspends_to_the_shell_and_fg_resumes() {
    require_tmux!();
    let t = viewer_in_a_shell("ctrlz");
    t.keys(&["C-z"]);
    // The shell has the terminal back, as it left it.
    t.wait_for("Stopped", SUSPEND_WAIT);
    t.wait_flag("#{alternate_on}", "0", SUSPEND_WAIT);
    t.assert_restored();
    fg_then_quit(&t);
}

/// Paste `text` into the pane as a terminal does: bracketed (`-p`) when the
/// program asked for it, each newline sent as a carriage return (Enter).
fn paste(t: &Tmux, text: &str) {
    t.tmux(&["set-buffer", "-b", "p", "--", text]);
    t.tmux(&["paste-buffer", "-p", "-b", "p", "-t", "s"]);
}

/// `cat -v` in the pane's shell shows a paste as it arrives: the paste markers
/// appear (`^[[200~`) only if a program left bracketed paste on.
fn assert_paste_mode_off(t: &Tmux, what: &str) {
    t.line("cat -v");
    std::thread::sleep(Duration::from_millis(200));
    paste(t, &format!("pasted-{what}"));
    t.keys(&["Enter"]);
    let (s, _) = t.wait_for(&format!("pasted-{what}"), Duration::from_secs(5));
    assert!(!s.contains("[200~"), "bracketed paste left on {what}:\n{s}");
    t.keys(&["C-d"]);
}

#[test]
fn a_paste_into_the_filter_prompt_is_text_and_paste_mode_ends_with_leet() {
    require_tmux!();
    let t = Tmux::shell("paste", 100, 30);
    let exe = shell_quote(Path::new(env!("CARGO_BIN_EXE_leet")));
    let run = shell_quote(&fixture("tiny"));
    t.line(&format!("{exe} {run}"));
    t.wait_for("Metrics [", Duration::from_secs(10));
    t.keys(&["/"]);
    t.wait_for("regex", Duration::from_secs(5));
    // As keys the newline would apply `/loss` and `q` would quit.
    paste(&t, "loss\nq");
    let (s, _) = t.wait_for("loss q", Duration::from_secs(5));
    assert_eq!(t.flag("#{alternate_on}"), "1", "leet left:\n{s}");
    // Still typing: more keys go into the prompt.
    t.keys(&["BSpace", "BSpace"]);
    t.wait_until(
        "the paste kept, the space deleted",
        Duration::from_secs(5),
        |s| (!s.contains("loss q") && s.contains("loss")).then_some(()),
    );
    // Suspended and quit, leet leaves bracketed paste off for the shell.
    t.keys(&["Escape", "C-z"]);
    t.wait_for("Stopped", Duration::from_secs(5));
    t.wait_flag("#{alternate_on}", "0", Duration::from_secs(5));
    assert_paste_mode_off(&t, "while-stopped");
    t.line("fg");
    t.wait_flag("#{alternate_on}", "1", Duration::from_secs(5));
    t.wait_for("Metrics [", Duration::from_secs(5));
    // Resumed, bracketed paste is on again.
    t.keys(&["/"]);
    t.wait_for("regex", Duration::from_secs(5));
    paste(&t, "acc\nq");
    t.wait_for("acc q", Duration::from_secs(5));
    t.keys(&["Escape"]);
    t.wait_until("the prompt closed", Duration::from_secs(5), |s| {
        (!s.contains("acc q")).then_some(())
    });
    t.keys(&["q"]);
    t.wait_flag("#{alternate_on}", "0", Duration::from_secs(5));
    t.assert_restored();
    assert_paste_mode_off(&t, "after-quit");
}

#[test]
fn live_host_monitor_draws_samples_and_quits_cleanly() {
    require_tmux!();
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
    require_tmux!();
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
    require_tmux!();
    // One run directory opens that run alone (a project directory opens the
    // workspace, see tests/workspace_e2e.rs); its picker lists the others.
    let latest = std::fs::read_dir(fixture("multi").join("wandb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-multi005"))
        .unwrap();
    let t = Tmux::start("runs", &[&latest], 120, 30);
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
    // Escape closes the picker (once no sequence follows it); then `q` quits.
    let t0 = Instant::now();
    while t.screen().contains("runs in ") {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "picker still open"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// Every file under `dir` with its text (none when it does not exist).
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            out.push((p, text));
        }
    }
    out.sort();
    out
}

#[test]
fn opening_one_run_alone_leaves_the_workspace_state_as_it_was() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("multi");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(fixture("multi"))
        .arg(&project)
        .status()
        .unwrap();
    assert!(ok.success());
    let state = tmp.path().join("state");
    let env = format!("XDG_STATE_HOME={} ", shell_quote(&state));
    let run_dir = std::fs::read_dir(project.join("wandb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-multi002"))
        .unwrap();
    let file = run_dir.join("run-multi002.wandb");
    // A socket of its own each time (a server being killed may still answer).
    let started = std::cell::Cell::new(0);
    let alone = |spelling: &Path| {
        started.set(started.get() + 1);
        let name = format!("alone{}", started.get());
        let t = Tmux::start_env(&name, &env, &[spelling.to_str().unwrap()], 120, 30);
        t.wait_for("esc: all runs", Duration::from_secs(10));
        t.keys(&["q"]);
        assert_eq!(t.exit_code(), "EXIT:0");
    };
    // Nothing remembered: nothing is written.
    for spelling in [&run_dir, &file] {
        alone(spelling);
        assert_eq!(files_under(&state), [], "after {spelling:?}");
    }
    // The workspace remembers two drawn runs.
    let t = Tmux::start_env("ws", &env, &[project.to_str().unwrap()], 120, 30);
    t.wait_for("1 drawn", Duration::from_secs(10));
    t.keys(&["Down", "Space"]);
    t.wait_for("2 drawn", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    let before = files_under(&state);
    // The state file, and the empty lock file its saves take beside it.
    let lock = |p: &Path| p.extension().is_some_and(|e| e == "lock");
    assert_eq!(
        before.iter().filter(|(p, _)| !lock(p)).count(),
        1,
        "{before:?}"
    );
    for spelling in [&run_dir, &file] {
        alone(spelling);
        assert_eq!(files_under(&state), before, "after {spelling:?}");
    }
    // And the workspace opens with them.
    let t = Tmux::start_env("ws2", &env, &[project.to_str().unwrap()], 120, 30);
    t.wait_for("2 drawn", Duration::from_secs(10));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

#[test]
fn compare_flag_draws_another_directory_s_run() {
    require_tmux!();
    let tiny = fixture("tiny");
    let multi = fixture("multi");
    let args = [tiny.to_str().unwrap(), "--compare", multi.to_str().unwrap()];
    let t = Tmux::start_args("compare", &args, 120, 40);
    t.wait_for("■tiny-run ■multi-4", Duration::from_secs(10));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// Not a test on its own: the multi-threaded process the process-selection test
/// starts (this test binary run again with `LEET_E2E_HOLD_THREADS=N`). It starts N
/// threads and sleeps until killed; without the variable it does nothing.
#[test]
#[ignore = "started by live_monitor_follows_the_process_selected_in_the_table"]
fn thread_holder() {
    let Some(n) = std::env::var("LEET_E2E_HOLD_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    else {
        return;
    };
    for _ in 0..n {
        std::thread::spawn(|| std::thread::sleep(Duration::from_secs(120)));
    }
    std::thread::sleep(Duration::from_secs(120));
}

/// Threads of a process, as the kernel reports them.
fn threads_of(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The value shown on the overview row of `key` (`key  value`).
fn overview_value(screen: &str, key: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(key)?;
        let v = rest.split('│').next()?.trim();
        (!v.is_empty()).then(|| v.to_owned())
    })
}

#[cfg(target_os = "linux")]
#[test]
fn live_monitor_follows_the_process_selected_in_the_table() {
    require_tmux!();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "thread_holder", "--ignored", "--nocapture"])
        .env("LEET_E2E_HOLD_THREADS", "6")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let pid = child.id();
    let _kill = Kill(&mut child);
    // Wait until its threads are up.
    let t0 = Instant::now();
    while threads_of(pid) < 7 {
        assert!(
            t0.elapsed() < Duration::from_secs(10) * common::tmux::SLACK,
            "threads not started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = Tmux::start_args("follow", &["--live", "--interval", "300ms"], 200, 50);
    // No process is monitored at start: no process readings.
    let (s, _) = t.wait_for("no process monitored", Duration::from_secs(15));
    assert!(s.contains("Processes ["), "{s}");
    assert!(overview_value(&s, "proc.cpu.threads").is_none(), "{s}");
    // Find the holder by its pid in the table's filter, and monitor it.
    t.keys(&["f"]);
    t.tmux(&["send-keys", "-t", "s", "-l", &format!("^{pid}$")]);
    t.keys(&["Enter"]);
    let (s, _) = t.wait_for("Processes [1]", Duration::from_secs(10));
    assert!(s.contains("thread_holder"), "{s}");
    t.keys(&["m"]);
    // Its tree now feeds proc.*: the overview shows its thread count (the overview
    // filter keeps the row in view).
    t.wait_for(&format!("▶ {pid}"), Duration::from_secs(10));
    t.keys(&["o"]);
    t.tmux(&["send-keys", "-t", "s", "-l", "proc.cpu.threads"]);
    t.keys(&["Enter"]);
    let want = threads_of(pid).to_string();
    let t0 = Instant::now();
    loop {
        let s = t.screen();
        let got = overview_value(&s, "proc.cpu.threads");
        if got.as_deref() == Some(want.as_str()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10) * common::tmux::SLACK,
            "proc.cpu.threads is {got:?}, want {want} (pid {pid}); screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// The workspace on a generated wandb directory of 50 runs: filter, select three,
/// pin one, quit; started again the same selection, pin and filter are back; a run
/// added while it is open shows up. The state lives under `$XDG_STATE_HOME/leet`,
/// never in the wandb directory.
#[test]
fn workspace_filter_select_pin_survive_a_restart_and_new_runs_show() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let wandb = tmp.path().join("proj/wandb");
    let runs = common::runs::write_workspace(&wandb, 50);
    let state = tmp.path().join("state");
    let cache = tmp.path().join("cache");
    let env = format!(
        "XDG_STATE_HOME={} XDG_CACHE_HOME={} ",
        shell_quote(&state),
        shell_quote(&cache)
    );
    let proj = tmp.path().join("proj");
    let listing = |d: &Path| {
        let mut v: Vec<String> = walk(d).iter().map(|p| p.display().to_string()).collect();
        v.sort();
        v
    };
    let before = listing(&wandb);
    // One entry per run id (the resumed run's two directories are one).
    let mut ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let total = ids.len();
    // The runs the query keeps: lr >= 1e-3 and finished (a resumed run by its
    // newest segment), newest first as the list shows them.
    let mut keep: Vec<&common::runs::GeneratedRun> = Vec::new();
    for r in runs.iter().rev() {
        let newest = runs.iter().rev().find(|x| x.id == r.id).unwrap();
        if newest.index == r.index && newest.lr >= 1e-3 && newest.state == "finished" {
            keep.push(r);
        }
    }
    assert!(keep.len() >= 3, "{}", keep.len());

    let t = Tmux::start_env("ws", &env, &[proj.to_str().unwrap()], 200, 50);
    t.wait_for(&format!("Runs [{total}]"), Duration::from_secs(15));
    t.keys(&["f"]);
    t.tmux(&["send-keys", "-t", "s", "-l", "cfg.lr>=1e-3 state:finished"]);
    t.keys(&["Enter"]);
    let shown = format!("Runs [{} of {total}]", keep.len());
    t.wait_for(&shown, Duration::from_secs(5));
    // The three newest that match; the third pinned. The latest run (running) was
    // drawn from the start: 4 drawn.
    t.keys(&["Space", "Down", "Space", "Down", "p"]);
    let pinned = &keep[2].display_name;
    let (s, _) = t.wait_for(&format!("▲ {pinned}"), Duration::from_secs(5));
    assert!(s.contains("4 drawn"), "{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    // Saved in leet's own state directory; nothing written in the wandb directory.
    assert!(
        std::fs::read_dir(state.join("leet")).unwrap().count() >= 1,
        "no state file"
    );
    assert_eq!(
        listing(&wandb),
        before,
        "the wandb directory was written to"
    );
    drop(t);

    let t = Tmux::start_env("ws2", &env, &[proj.to_str().unwrap()], 200, 50);
    let (s, _) = t.wait_for(&shown, Duration::from_secs(15));
    let (s, _) = if s.contains(&format!("▲ {pinned}")) {
        (s, Duration::ZERO)
    } else {
        t.wait_for(&format!("▲ {pinned}"), Duration::from_secs(5))
    };
    assert!(s.contains("4 drawn"), "{s}");
    assert!(s.contains("f cfg.lr>=1e-3 state:finished"), "{s}");
    for r in &keep[..3] {
        let row = s
            .lines()
            .find(|l| l.contains(&r.id) && l.contains("finished"))
            .unwrap_or_else(|| panic!("{} ({}) not listed:\n{s}", r.display_name, r.id));
        assert!(
            row.contains('■') || row.contains('▲'),
            "{} not drawn: {row}",
            r.display_name
        );
    }
    // A run started while the workspace is open shows within two seconds (the
    // total grows; the filtered count too when it matches).
    let t0 = Instant::now();
    let new = common::runs::add_run(&wandb, 50);
    let matches = usize::from(new.lr >= 1e-3 && new.state == "finished");
    let grown = format!("Runs [{} of {}]", keep.len() + matches, total + 1);
    t.wait_for(&grown, Duration::from_secs(10));
    eprintln!("new run listed after {:.2} s", t0.elapsed().as_secs_f64());
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// Every file under `d`.
fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}

/// The crosshair in a real terminal: `C` and `←` three times; the focused chart's
/// corner says x and the value there, and it is the value the run logged at that
/// step (from the fixture's records, as `wandb leet inspect` read them).
#[test]
fn crosshair_shows_the_recorded_value_at_its_step() {
    require_tmux!();
    let run = std::fs::read_dir(fixture("tiny").join("wandb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("run-"))
        .unwrap();
    let t = Tmux::start("cross", &[&run], 120, 40);
    t.wait_for("Metrics [1-", Duration::from_secs(10));
    t.keys(&["C", "Left", "Left", "Left"]);
    // Wait for what is read: the focused chart's top border, ┏key━━…x=N · V━┓.
    let corner = |s: &str| {
        let line = s.lines().find(|l| l.contains('┏') && l.contains("x="))?;
        let title = line.split('┏').nth(1)?;
        let key = title.split('━').next()?.to_owned();
        let (x, v) = title.split("x=").nth(1)?.split_once(" · ")?;
        let step: f64 = x.parse().ok()?;
        let shown: f64 = v.split('━').next()?.parse().ok()?;
        Some((key, step, shown))
    };
    let (_, (key, step, shown)) = t.wait_until(
        "the crosshair's x= in the focused chart's title",
        Duration::from_secs(5),
        corner,
    );
    let records = std::fs::read_to_string(common::runs_dir().join("tiny.records.jsonl")).unwrap();
    let logged = records
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|r| {
            let item = &r["history"]["item"];
            (item["_step"].as_f64() == Some(step))
                .then(|| item[&key].as_f64())
                .flatten()
        })
        .unwrap_or_else(|| panic!("no {key} at step {step}"));
    // Shown to 4 significant digits.
    assert!(
        (shown - logged).abs() <= logged.abs() * 5e-4 + 1e-12,
        "{key} at {step}: shown {shown}, logged {logged}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// A PNG named as the run: one line naming it and the cause, exit status 1, the
/// terminal as it was (issue 13; before, the viewer opened and said "unreadable").
#[test]
fn a_file_that_is_not_a_wandb_log_is_refused_in_one_line() {
    require_tmux!();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("plot.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10").unwrap();
    let t = Tmux::start("notwandb", &[&png], 200, 30);
    assert_eq!(t.exit_code(), "EXIT:1");
    t.assert_restored();
    let s = t.screen();
    let said: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(said.len(), 1, "{s}");
    assert!(
        said[0].starts_with("leet: ")
            && said[0].contains("plot.png")
            && said[0].contains("not a .wandb transaction log"),
        "{s}"
    );
}

/// `TERM=dumb` (Emacs' shell, a CI log) cannot show a screen: refused in one line
/// before the terminal changes, saying what prints lines instead.
#[test]
fn a_dumb_terminal_is_refused_in_one_line() {
    require_tmux!();
    let run = fixture("tiny");
    let t = Tmux::start_env("dumb", "TERM=dumb ", &[run.to_str().unwrap()], 200, 30);
    assert_eq!(t.exit_code(), "EXIT:1");
    t.assert_restored();
    let s = t.screen();
    let said: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !said.is_empty()
            && said[0].starts_with("leet: ")
            && said[0].contains("TERM=dumb")
            && s.contains("leet inspect"),
        "{s}"
    );
    // `leet inspect` there prints the records, as into a pipe, and says so.
    let t = Tmux::start_env(
        "dumbi",
        "TERM=dumb ",
        &["inspect", run.to_str().unwrap()],
        200,
        30,
    );
    assert_eq!(t.exit_code(), "EXIT:0");
    let s = t.screen();
    // Its last records (the first, and the note before them, scrolled away).
    assert!(s.contains(" history ") && s.contains(" exit "), "{s}");
}

/// The help overlay at 80×24: `end`, then `up` and `pgup` scroll back at once.
#[test]
fn help_scrolls_back_after_end() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start("helpend", &[&run], 80, 24);
    t.wait_for("Run Overview", Duration::from_secs(10));
    t.keys(&["h"]);
    t.wait_for("keys (from the live key map)", Duration::from_secs(5));
    t.keys(&["End"]);
    let (at_end, _) = t.wait_for("↑ (up/pgup)", Duration::from_secs(5));
    t.keys(&["Up"]);
    let (up, _) = t.wait_for("↓ more (down/pgdown)", Duration::from_secs(5));
    assert_ne!(at_end, up, "up after end moved the help");
    t.keys(&["End"]);
    t.wait_for("↑ (up/pgup)", Duration::from_secs(5));
    t.keys(&["PPage"]);
    let (pgup, _) = t.wait_for("↓ more (down/pgdown)", Duration::from_secs(5));
    assert_ne!(pgup, up, "pgup moved ten lines, not one");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

// ---- settings ----

/// The settings of `config_home`'s `leet/config.toml`, parsed.
fn saved_settings(config_home: &Path) -> leet::ui::settings::Config {
    let p = config_home.join("leet/config.toml");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    leet::ui::settings::Config::parse(&p, &text).unwrap()
}

/// Grid rows, a dragged overview width, the overview hidden, guides and the
/// metrics filter, quit: written to `$XDG_CONFIG_HOME/leet/config.toml`; started
/// again, the viewer shows them, and quitting without a change leaves the file
/// as it was.
#[test]
fn settings_survive_a_restart() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("config");
    let env = format!("XDG_CONFIG_HOME={} ", shell_quote(&home));
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let run = run.to_str().unwrap();
    let t = Tmux::start_env("settings1", &env, &[run], 200, 50);
    t.wait_for("Run Overview", Duration::from_secs(10));
    // The overview is 44 columns at 200: its edge (column 44, 1-based) dragged
    // ten columns right with the left button (SGR mouse reports).
    t.bytes(b"\x1b[<0;44;20M");
    t.bytes(b"\x1b[<32;49;20M");
    t.bytes(b"\x1b[<32;54;20M");
    t.bytes(b"\x1b[<0;54;20m");
    t.keys(&["r", "2", "g", "/"]);
    t.tmux(&["send-keys", "-t", "s", "-l", "loss"]);
    t.keys(&["Enter"]);
    t.wait_for("by /loss", Duration::from_secs(5));
    t.keys(&["["]);
    // Saved while it runs, within about a second of the change (at the next tick).
    let file = home.join("leet/config.toml");
    let t0 = Instant::now();
    while !std::fs::read_to_string(&file).is_ok_and(|s| s.contains("left_sidebar = false")) {
        assert!(
            t0.elapsed() < Duration::from_secs(10) * common::tmux::SLACK,
            "not saved while running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("saved {:.2} s after the change", t0.elapsed().as_secs_f64());
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    drop(t);
    let saved = saved_settings(&home);
    let v = &saved.viewer;
    assert_eq!(v.rows, Some(2));
    assert_eq!(v.guides, leet::ui::charts::grid::Guides::Dots);
    assert_eq!(v.left_sidebar, Some(false));
    assert_eq!(v.sizes.left, Some(54));
    // The metrics filter is the project's (the viewer's settings in its wandb
    // directory, the only one with settings of its own).
    assert_eq!(saved.projects.len(), 1);
    let project = saved.projects.values().next().unwrap();
    assert_eq!(project.filters.metrics.pattern, "loss");
    assert!(v.filters.metrics.pattern.is_empty());
    let before = std::fs::read(&file).unwrap();

    let t = Tmux::start_env("settings2", &env, &[run], 200, 50);
    let (s, _) = t.wait_for("by /loss", Duration::from_secs(10));
    assert!(!s.contains("Run Overview"), "overview shown:\n{s}");
    // `[`: the overview at its dragged width (its edge in column 54).
    t.keys(&["["]);
    // Waited for whole: a screen read while the frame is being written may show
    // the overview's title before its edge.
    t.wait_until(
        "the overview's edge in column 54",
        Duration::from_secs(5),
        |s| {
            let row = s.lines().nth(10)?;
            (s.contains("Run Overview") && row.chars().nth(53) == Some('│')).then_some(())
        },
    );
    t.keys(&["["]);
    let t0 = Instant::now();
    while t.screen().contains("Run Overview") {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    let after = std::fs::read(&file).unwrap();
    assert!(
        after == before,
        "rewritten without a change:\n--- before\n{}\n--- after\n{}",
        String::from_utf8_lossy(&before),
        String::from_utf8_lossy(&after)
    );
}

/// A settings file with a bad value: one line naming the file, the key and the
/// reason, exit status 2, the terminal never switched, the file left as written.
#[test]
fn an_invalid_settings_file_is_refused_before_the_terminal_changes() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("config");
    std::fs::create_dir_all(home.join("leet")).unwrap();
    let file = home.join("leet/config.toml");
    let text = "# mine\n[viewer]\nrows = 12\n";
    std::fs::write(&file, text).unwrap();
    let env = format!("XDG_CONFIG_HOME={} ", shell_quote(&home));
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start_env("settingsbad", &env, &[run.to_str().unwrap()], 200, 30);
    assert_eq!(t.exit_code(), "EXIT:2");
    t.assert_restored();
    let s = t.screen();
    let said: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(said.len(), 1, "{s}");
    assert!(
        said[0].starts_with("leet: ")
            && said[0].contains(
                "leet/config.toml:3:1: [viewer] key 'rows': must be 0 (auto) or 1 to 9, got 12"
            ),
        "{s}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

// ---- overview ----

/// Issue 13 in a real terminal: `tab` walks the overview's sections (Config first)
/// before the next pane; `o` then `tab` while typing makes the overview filter a
/// glob, and the prompt and the status bar say so.
#[test]
fn overview_sections_tab_and_a_glob_overview_filter() {
    require_tmux!();
    let run = common::wandb_file(&fixture("many_metrics").join("wandb/latest-run"));
    let t = Tmux::start("ovsections", &[&run], 120, 40);
    t.wait_for("Run Overview", Duration::from_secs(10));
    let (s, _) = t.wait_for("Summary [1-", Duration::from_secs(10));
    assert!(s.contains("Config [2]"), "{s}");
    t.keys(&["Tab"]);
    t.wait_for("▸ Config [2]", Duration::from_secs(5));
    t.keys(&["Tab"]);
    t.wait_for("▸ Summary [1-", Duration::from_secs(5));
    // 13 rows show at 120×40 (as render_overview's summary_page2 snapshot).
    t.keys(&["NPage"]);
    t.wait_for("▸ Summary [14-26 of 211]", Duration::from_secs(5));
    // A glob: `eval*0` is `eval`, anything, `0` (as a regex: "eva", `l`s, "0",
    // which nothing here has).
    t.keys(&["o"]);
    t.tmux(&["send-keys", "-t", "s", "-l", "eval*0"]);
    t.wait_for(
        "Overview filter (regex): eval*0▏ [no matches]",
        Duration::from_secs(5),
    );
    t.keys(&["Tab"]);
    let (s, _) = t.wait_for(
        "Overview filter (glob): eval*0▏ [Summary: 22]",
        Duration::from_secs(5),
    );
    assert!(s.contains("tab: glob"), "{s}");
    t.keys(&["Enter"]);
    let (s, _) = t.wait_for(
        "overview: eval*0 (glob) [Summary: 22]",
        Duration::from_secs(5),
    );
    assert!(s.contains("▸ Summary [22 of 211]"), "{s}");
    assert!(s.contains("eval/m001"), "{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

// ---- stats ----

#[test]
fn statistics_table_opens_sorts_filters_and_closes() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start("stats", &[&run], 120, 40);
    t.wait_for("step 49", Duration::from_secs(10));
    t.keys(&["T"]);
    let (s, _) = t.wait_for("Statistics · 3 metrics", Duration::from_secs(5));
    // tiny's loss: first 2.00672 at step 0, last 0.104335 (its minimum) at 49.
    assert!(s.contains("metric▲"), "{s}");
    assert!(
        s.contains("0.104335  0.104335     49 2.00672      0"),
        "{s}"
    );
    // → four times: by max; r: largest first (loss, then acc, then lr).
    t.keys(&["Right", "Right", "Right", "Right", "r"]);
    let (s, _) = t.wait_for("max▼", Duration::from_secs(5));
    let row = |k: &str| {
        s.lines()
            .position(|l| l.contains(&format!(" {k} ")) || l.contains(&format!("›{k} ")))
            .unwrap_or_else(|| panic!("no {k} row:\n{s}"))
    };
    assert!(row("loss") < row("acc") && row("acc") < row("lr"), "{s}");
    t.keys(&["/"]);
    t.tmux(&["send-keys", "-t", "s", "-l", "^l"]);
    t.keys(&["Enter"]);
    let (s, _) = t.wait_for("Statistics · 2 of 3 metrics", Duration::from_secs(5));
    assert!(!s.contains(" acc "), "{s}");
    t.keys(&["Escape"]);
    let t0 = Instant::now();
    while t.screen().contains("Statistics ·") {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ---- inspector ----

/// `leet inspect` in a pty opens the record browser; end, a type and a text
/// filter work; `q` leaves the terminal restored.
#[test]
fn leet_inspect_on_a_terminal_opens_the_browser_and_q_restores_the_terminal() {
    require_tmux!();
    let run = common::wandb_file(&fixture("crashed").join("wandb/latest-run"));
    let t = Tmux::start_args("inspect", &["inspect", run.to_str().unwrap()], 120, 30);
    let (s, _) = t.wait_for("Records 1/1024", Duration::from_secs(10));
    assert_eq!(t.flag("#{alternate_on}"), "1", "not full screen:\n{s}");
    assert!(s.contains("1 @7") && s.contains("header"), "{s}");
    assert!(s.contains("\"type\": \"header\""), "no body:\n{s}");
    t.keys(&["End"]);
    let (s, _) = t.wait_for("Records 1024/1024", Duration::from_secs(5));
    assert!(s.contains("following"), "{s}");
    // t: history records only (the first kind present).
    t.keys(&["t"]);
    let (s, _) = t.wait_for("history     _step=0 ", Duration::from_secs(5));
    assert!(s.contains("type=history: 251 matches"), "{s}");
    t.keys(&["C-l", "/", "S", "T", "E", "P", " ", "2", "4", "5", "Enter"]);
    let (s, _) = t.wait_for(": 1 match", Duration::from_secs(5));
    assert!(s.contains("@@STEP 245"), "{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    let after = t.screen();
    assert!(
        !after.contains("Records"),
        "browser left on screen:\n{after}"
    );
}

/// `--print` prints the records as text on a terminal too (no browser).
#[test]
fn leet_inspect_print_prints_on_a_terminal() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start_args(
        "inspectprint",
        &["inspect", "--print", run.to_str().unwrap()],
        200,
        30,
    );
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    let s = t.screen();
    assert!(s.contains("exit"), "{s}");
    assert!(!s.contains("Records ·"), "{s}");
}

/// `leet inspect --keymap FILE` reads that key map: its quit key quits, the
/// default one no longer does, and the status bar names the key bound.
#[test]
fn leet_inspect_takes_a_key_map_and_its_hint_names_the_keys() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let dir = tempfile::tempdir().unwrap();
    let km = dir.path().join("keymap.toml");
    std::fs::write(&km, "[inspector]\n\"q\" = \"none\"\n\"Q\" = \"quit\"\n").unwrap();
    let t = Tmux::start_args(
        "inspectkm",
        &[
            "inspect",
            "--keymap",
            km.to_str().unwrap(),
            "--no-color",
            run.to_str().unwrap(),
        ],
        120,
        30,
    );
    let (s, _) = t.wait_for("Records 1/", Duration::from_secs(10));
    assert!(s.contains("esc quit · Q quit"), "{s}");
    t.keys(&["q", "End"]);
    // `q` did nothing: `end`, after it, still reached the browser.
    t.wait_for("following", Duration::from_secs(5));
    t.keys(&["Q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// `i` over a run opens the inspector on its file; esc goes back to the viewer.
#[test]
fn i_opens_the_inspector_over_the_run_and_esc_goes_back() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start("inspecti", &[&run], 120, 30);
    // The run read (its file known), not only the first frame drawn.
    t.wait_for("step 49", Duration::from_secs(10));
    t.keys(&["i"]);
    let (s, _) = t.wait_for("Records 1/", Duration::from_secs(10));
    assert!(s.contains("esc back"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("Run Overview", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// `end` follows a growing file: records appended show up and stay selected.
#[test]
fn end_in_the_inspector_follows_a_growing_file() {
    require_tmux!();
    let src = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-grow.wandb");
    // The header and a first block's worth of records, then the rest later.
    let cut = 4096.min(bytes.len());
    std::fs::write(&file, &bytes[..cut]).unwrap();
    let t = Tmux::start_args("inspectgrow", &["inspect", file.to_str().unwrap()], 120, 30);
    t.wait_for("Records 1/", Duration::from_secs(10));
    t.keys(&["End"]);
    t.wait_for("following", Duration::from_secs(5));
    let total = leet::source::records::page_of(&src, leet::msg::RecordsView::default())
        .unwrap()
        .total;
    {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(&bytes[cut..]).unwrap();
    }
    let (s, _) = t.wait_for(&format!("Records {total}/{total}"), Duration::from_secs(10));
    assert!(
        s.contains(" exit "),
        "the last record (exit) is not shown:\n{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

// ---- xaxis ----

/// `x` on the focused chart of a real terminal: the title's `x=` goes from
/// nothing (`_step`) to `x=rel`, then `x=wall`; `L` adds `logx`.
#[test]
fn x_cycles_the_focused_charts_x_axis_in_its_title() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let t = Tmux::start("xaxis", &[&run], 120, 30);
    // The charts are there (a key before the run is read has no chart to act on).
    let (s, _) = t.wait_for("Metrics [1-3 of 3]", Duration::from_secs(10));
    assert!(!s.contains("x=rel"), "{s}");
    t.keys(&["x"]);
    t.wait_for("x=rel", Duration::from_secs(5));
    t.keys(&["x"]);
    let (s, _) = t.wait_for("x=wall", Duration::from_secs(5));
    assert!(!s.contains("x=rel"), "{s}");
    t.keys(&["L"]);
    t.wait_for("x=wall logx", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

// ---- smooth ----

/// `e` smooths the focused chart (its kind and parameter in the title), `+` steps
/// the parameter, `E` smooths every chart or none; on a run past the store's cap,
/// so the smoothing worker reads the file's full history.
#[test]
fn e_names_the_smoothing_in_the_focused_chart_s_title() {
    require_tmux!();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run-synth001.wandb");
    let spec = leet::decode::synth::SynthSpec {
        steps: 3 * leet::store::metrics::DEFAULT_SERIES_CAP as u64,
        metrics: 3,
        summaries: false,
        ..Default::default()
    };
    std::fs::write(&file, leet::decode::synth::file_bytes(&spec)).unwrap();
    let t = Tmux::start("smooth", &[&file], 120, 40);
    t.wait_for("Metrics [1-3 of 3]", Duration::from_secs(10));
    // The first chart (lr) is focused.
    t.keys(&["e"]);
    t.wait_for("┏lr · twema 0.6━", Duration::from_secs(20));
    t.keys(&["e"]);
    t.wait_for("┏lr · ema 0.6━", Duration::from_secs(20));
    t.keys(&["+"]);
    t.wait_for("┏lr · ema 0.7━", Duration::from_secs(20));
    // E: every chart at the focused chart's smoothing; E again: every chart's off.
    t.keys(&["E"]);
    t.wait_for("train/loss · ema 0.7─", Duration::from_secs(20));
    t.wait_for("┏lr · ema 0.7━", Duration::from_secs(20));
    t.keys(&["E"]);
    let t0 = Instant::now();
    while t.screen().contains(" · ema") {
        assert!(
            t0.elapsed() < Duration::from_secs(5) * common::tmux::SLACK,
            "{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

// ---- sections ----

/// `many_metrics` in a real terminal: its charts in sections by prefix; `Z`
/// collapses the focused chart's section (its header stays, `▸`), a mouse click
/// on the header (SGR encoding, as terminals send it) expands it again, `M`
/// collapses every section and `O` expands them; q leaves the terminal as it was.
#[test]
fn sections_collapse_by_key_and_by_a_click_on_the_header() {
    require_tmux!();
    let run = common::wandb_file(&fixture("many_metrics").join("wandb/latest-run"));
    let t = Tmux::start("sections", &[&run], 120, 40);
    let (s, _) = t.wait_for("▾ Charts (19)", Duration::from_secs(10));
    assert!(s.contains("┏UPPER/Case"), "{s}");
    t.keys(&["Z"]);
    let (s, _) = t.wait_for("▸ Charts (19)", Duration::from_secs(5));
    assert!(
        s.contains("▾ eval (37)") && !s.contains("UPPER/Case━"),
        "{s}"
    );
    // The header's row and column on screen (1-based for the terminal).
    let (row, col) = s
        .lines()
        .enumerate()
        .find_map(|(y, l)| l.find("▸ Charts").map(|x| (y, l[..x].chars().count())))
        .unwrap();
    t.bytes(
        format!(
            "\x1b[<0;{};{}M\x1b[<0;{};{}m",
            col + 3,
            row + 1,
            col + 3,
            row + 1
        )
        .as_bytes(),
    );
    let (s, _) = t.wait_for("▾ Charts (19)", Duration::from_secs(5));
    assert!(s.contains("UPPER/Case"), "{s}");
    t.keys(&["M"]);
    let (s, _) = t.wait_for("▸ train (37)", Duration::from_secs(5));
    assert!(
        s.contains("▸ eval (37)") && s.contains("Metrics [195]"),
        "{s}"
    );
    t.keys(&["O"]);
    t.wait_for("▾ Charts (19)", Duration::from_secs(5));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
}

/// `leet` without a path, started in a directory without runs: the runs under
/// `WANDB_DIR` (the directory the SDK writes `wandb/` in) are listed; with
/// `WANDB_DIR` unset, one line says where it looked and the terminal is untouched.
#[test]
fn without_a_path_leet_opens_the_runs_under_wandb_dir() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    // `cp -a`: the fixture's latest-run is a symlink.
    let root = tmp.path().join("root");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(fixture("multi"))
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    let env = format!(
        "WANDB_DIR={} env -C {} ",
        shell_quote(&root),
        shell_quote(&empty)
    );
    let t = Tmux::start_env("wandbdir", &env, &[], 160, 45);
    t.wait_for("Runs [5]", Duration::from_secs(15));
    // The five runs, the latest drawn (the others read as the index comes: on a
    // loaded machine some are still `reading…` when the first is drawn).
    t.wait_for("■ finished multi-4", Duration::from_secs(5));
    let names = ["multi-3", "multi-2", "multi-1", "multi-0"];
    t.wait_until("every run listed", Duration::from_secs(10), |s| {
        names
            .iter()
            .all(|n| s.contains(&format!("finished {n}")))
            .then_some(())
    });
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    drop(t);

    // No run here and WANDB_DIR unset: the workspace waits where the SDK would
    // write (`./wandb`), saying so; `leet inspect` still says what it tried.
    let env = format!("env -u WANDB_DIR -C {} ", shell_quote(&empty));
    let t = Tmux::start_env("nowandbdir", &env, &[], 160, 45);
    let (s, _) = t.wait_for(
        "no runs yet: waiting for one to start",
        Duration::from_secs(10),
    );
    let here = std::fs::canonicalize(&empty).unwrap();
    assert!(
        s.contains(&format!("in {}", here.join("wandb").display())),
        "{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    t.assert_restored();
    drop(t);
    let o = Command::new(env!("CARGO_BIN_EXE_leet"))
        .args(["inspect", "--summary"])
        .current_dir(&empty)
        .env_remove("WANDB_DIR")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no .wandb run found"), "{err}");
}

/// `leet export` to the terminal: metric names that hold escape sequences (a pane
/// title, a clear screen) reach it sanitized, so the pane's title is unchanged.
#[test]
fn export_to_the_terminal_leaves_the_pane_title_alone() {
    use leet::decode::leveldb::Writer;
    use leet::decode::pb;
    use prost::Message as _;
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("run-title.wandb");
    let mut w = Writer::new();
    for step in 0..3 {
        let item = [
            ("_step", step.to_string()),
            ("\u{1b}]2;pwned\u{7}loss", "0.5".to_owned()),
            ("\u{1b}]0;pwned\u{1b}\\acc", "-0.5".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| pb::HistoryItem {
            key: k.into(),
            value_json: v,
            ..Default::default()
        })
        .collect();
        let rec = pb::Record {
            num: step + 1,
            record_type: Some(pb::record::RecordType::History(pb::HistoryRecord {
                item,
                ..Default::default()
            })),
            ..Default::default()
        };
        w.append(&rec.encode_to_vec());
    }
    std::fs::write(&file, w.into_bytes()).unwrap();
    let t = Tmux::shell("exporttitle", 120, 40);
    let title = t.flag("#{pane_title}");
    assert!(!title.contains("pwned"), "{title}");
    let bin = shell_quote(Path::new(env!("CARGO_BIN_EXE_leet")));
    for (i, args) in ["", "--long", "--format jsonl"].into_iter().enumerate() {
        t.line(&format!(
            "{bin} export {} {args}; echo DONE{i}:$?",
            shell_quote(&file)
        ));
        let (s, _) = t.wait_for(&format!("DONE{i}:0"), Duration::from_secs(20));
        assert!(s.contains("loss") && s.contains("acc"), "{args}: {s}");
        assert_eq!(t.flag("#{pane_title}"), title, "{args}: the title changed");
    }
}

// ---- following: no file watch to be had, and many runs drawn ----

/// Inotify instances taken until the kernel refuses more (`EMFILE`: the user's
/// `fs.inotify.max_user_instances`), as an IDE or file watcher of the same user
/// takes them, and any that another process frees meanwhile taken too (every 5 ms,
/// on a thread); all closed on drop. None where the refusal is not that limit.
struct InotifyTaken {
    fds: std::sync::Arc<std::sync::Mutex<Vec<i32>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Inotify instances until one is refused: the fds and the error.
fn take_inotify(fds: &mut Vec<i32>) -> std::io::Error {
    loop {
        // SAFETY: a plain system call; every fd it returns is closed by the caller.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        if fd < 0 {
            return std::io::Error::last_os_error();
        }
        fds.push(fd);
    }
}

impl InotifyTaken {
    fn take() -> Option<Self> {
        let mut fds = Vec::new();
        let err = take_inotify(&mut fds);
        // EMFILE from a full fd table would leave other processes theirs: only the
        // user's limit counts (then a plain file still opens).
        let fd_table_has_room = std::fs::File::open("/dev/null").is_ok();
        let fds = std::sync::Arc::new(std::sync::Mutex::new(fds));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (f, s) = (fds.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                take_inotify(&mut f.lock().unwrap());
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let held = Self {
            fds,
            stop,
            thread: Some(thread),
        };
        (err.raw_os_error() == Some(libc::EMFILE) && fd_table_has_room).then_some(held)
    }
}

impl Drop for InotifyTaken {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Ok(fds) = self.fds.lock() {
            for &fd in fds.iter() {
                // SAFETY: fds this struct opened and nothing else closes.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// CPU time (user + system) a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (in parentheses; it may hold spaces):
    // the state is field 3, utime field 14, stime field 15.
    let rest: Vec<&str> = s[s.rfind(')').unwrap() + 1..].split_whitespace().collect();
    rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap()
}

/// Inotify instances a process holds.
fn inotify_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().contains("inotify"))
        })
        .count()
}

/// With every inotify instance of the user taken by another program, a finished
/// run idles at under 1 % of a core (CPU time over 10 s, not a wall-clock bound),
/// and a growing run still shows its new steps (polled instead).
#[test]
fn a_run_followed_without_a_file_watch_idles_and_still_grows() {
    require_tmux!();
    let Some(taken) = InotifyTaken::take() else {
        eprintln!("SKIPPED: inotify instances are not limited per user here");
        return;
    };
    let t = Tmux::start(
        "nowatch",
        &[&fixture("tiny").join("wandb/latest-run")],
        120,
        40,
    );
    t.wait_for("finished", Duration::from_secs(10));
    let pid: u32 = t.viewer_pid().parse().unwrap();
    assert_eq!(inotify_fds(pid), 0, "the instances were not all taken");
    std::thread::sleep(Duration::from_secs(1));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(10));
    let used = cpu_ticks(pid) - before;
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap();
    eprintln!("idle CPU over 10 s: {used} ticks of {hz}/s");
    // 1 % of one core for 10 s is 0.1 s of CPU time.
    assert!(
        used * 10 <= hz,
        "{used} ticks ({hz}/s) in 10 s: over 1 % of a core"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    drop(t);

    let bytes = std::fs::read(common::wandb_file(
        &fixture("tiny").join("wandb/latest-run"),
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run-grow.wandb");
    let cut = bytes.len() / 2 + 7;
    std::fs::write(&run, &bytes[..cut]).unwrap();
    let t = Tmux::start("nowatchgrow", &[&run], 120, 40);
    let (s, _) = t.wait_for("step ", Duration::from_secs(10));
    assert!(!s.contains("step 49"), "{s}");
    {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().append(true).open(&run).unwrap();
        f.write_all(&bytes[cut..]).unwrap();
    }
    t.wait_for("step 49", Duration::from_secs(10));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    drop(taken);
}

/// 250 runs drawn at once (all selected in the saved workspace) are followed by a
/// few threads and one inotify instance, not one of each per run.
#[test]
fn many_drawn_runs_keep_few_threads_and_one_inotify_instance() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    let wandb = proj.join("wandb");
    // 251 directories, 250 runs: the resumed run has two.
    let runs = common::runs::write_workspace(&wandb, 251);
    let mut ids: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 250);
    let state = tmp.path().join("state");
    let saved = leet::msg::WorkspaceSaved {
        selected: ids,
        ..Default::default()
    };
    leet::source::state::save(
        &state.join("leet"),
        &wandb,
        &leet::msg::WorkspaceSaved::default(),
        &saved,
        (1, 1),
    )
    .unwrap();
    let env = format!("XDG_STATE_HOME={} ", shell_quote(&state));
    let t = Tmux::start_env("manydrawn", &env, &[proj.to_str().unwrap()], 200, 50);
    t.wait_for("250 drawn", Duration::from_secs(60));
    let pid: u32 = t.viewer_pid().parse().unwrap();
    // Every run's reader started and read its file by now (they stay, following).
    std::thread::sleep(Duration::from_secs(3));
    let threads = threads_of(pid);
    let inotify = inotify_fds(pid);
    eprintln!("250 drawn: {threads} threads, {inotify} inotify instances");
    assert!(threads <= 16, "{threads} threads");
    assert!(inotify <= 1, "{inotify} inotify instances");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

/// Not a test: writes a generated workspace for `scripts/bench-workspace-keys.sh`
/// (`LEET_E2E_WRITE_WORKSPACE=DIR`, `LEET_E2E_RUNS=N` runs into `DIR/wandb`);
/// without the variable it does nothing.
#[test]
#[ignore = "started by scripts/bench-workspace-keys.sh"]
fn write_generated_workspace() {
    let Some(dir) = std::env::var_os("LEET_E2E_WRITE_WORKSPACE") else {
        return;
    };
    let n = std::env::var("LEET_E2E_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250);
    common::runs::write_workspace(&PathBuf::from(dir).join("wandb"), n);
}

/// `--no-mouse` leaves the mouse to the terminal (its own selection and copy);
/// by default leet takes it.
#[test]
fn no_mouse_leaves_the_mouse_to_the_terminal() {
    require_tmux!();
    let run = common::wandb_file(&fixture("tiny").join("wandb/latest-run"));
    let run = run.to_str().unwrap();
    for (args, want) in [(vec![run], "1"), (vec!["--no-mouse", run], "0")] {
        let t = Tmux::start_args("nomouse", &args, 120, 30);
        t.wait_for("step 49", Duration::from_secs(10));
        assert_eq!(t.flag("#{mouse_any_flag}"), want, "{args:?}");
        // Clicks, drags and the wheel, in SGR coordinates; not every move of
        // the pointer (nothing reads them; over SSH each would be sent).
        assert_eq!(t.flag("#{mouse_button_flag}"), want, "{args:?}");
        assert_eq!(t.flag("#{mouse_sgr_flag}"), want, "{args:?}");
        assert_eq!(t.flag("#{mouse_all_flag}"), "0", "{args:?}");
        t.keys(&["q"]);
        assert_eq!(t.exit_code(), "EXIT:0");
        t.assert_restored();
    }
}

/// One node's run directory of a distributed run opens its sibling nodes with it:
/// every node's system series and console lines (`tests/fixtures/multinode-sdk`).
#[test]
fn one_nodes_directory_opens_every_node() {
    require_tmux!();
    let node_1 = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/multinode-sdk/wandb/offline-run-20261206_151018-nodes001");
    let t = Tmux::start("nodes", &[&node_1], 200, 50);
    t.wait_for("System Metrics", Duration::from_secs(10));
    // The overview hidden, the console shown.
    t.keys(&["[", "4"]);
    let (s, _) = t.wait_for("[node-0] node 0 up", Duration::from_secs(10));
    for label in ["node-0:", "node-1:", "node-2:"] {
        assert!(s.contains(label), "{label}:\n{s}");
    }
    assert!(s.contains("[node-2] node 2 up"), "{s}");
    assert!(s.contains("step 23"), "the primary's history:\n{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

/// CPU time of every thread of `pid` over `secs` seconds, as a share of one core
/// (from `/proc/PID/stat`: the process's own utime and stime, all threads).
fn idle_share(pid: u32, secs: u64) -> f64 {
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs));
    let used = cpu_ticks(pid) - before;
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap();
    used as f64 / (hz * secs) as f64
}

/// A workspace of 300 runs started warm (its index from the cache a first start
/// wrote, as a user's second start is), listed and left alone, idles: its CPU over
/// 10 s stays far under a spinning thread's (the bound, a fifth of a core, is
/// generous: a spin costs a whole core, an idle workspace well under 1 %). Then
/// again with seven runs drawn (selected in the saved workspace).
#[test]
fn a_warm_workspace_left_alone_idles() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    let wandb = proj.join("wandb");
    let runs = common::runs::write_workspace(&wandb, 300);
    let mut ids: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
    ids.sort_unstable();
    ids.dedup();
    let total = ids.len();
    let state = tmp.path().join("state");
    let cache = tmp.path().join("cache");
    let env = format!(
        "XDG_STATE_HOME={} XDG_CACHE_HOME={} ",
        shell_quote(&state),
        shell_quote(&cache)
    );
    // The first start fills the index cache.
    let t = Tmux::start_env("idlecold", &env, &[proj.to_str().unwrap()], 160, 45);
    t.wait_for(&format!("Runs [{total}]"), Duration::from_secs(30));
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
    drop(t);
    for (name, drawn) in [("idlewarm", 0), ("idledrawn", 7)] {
        if drawn > 0 {
            let saved = leet::msg::WorkspaceSaved {
                selected: ids[..drawn].to_vec(),
                ..Default::default()
            };
            let dir = state.join("leet");
            let _ = std::fs::remove_dir_all(&dir);
            leet::source::state::save(
                &dir,
                &wandb,
                &leet::msg::WorkspaceSaved::default(),
                &saved,
                (1, 1),
            )
            .unwrap();
        }
        let t = Tmux::start_env(name, &env, &[proj.to_str().unwrap()], 160, 45);
        t.wait_for(&format!("Runs [{total}]"), Duration::from_secs(30));
        if drawn > 0 {
            t.wait_for(&format!("{drawn} drawn"), Duration::from_secs(30));
        }
        let pid: u32 = t.viewer_pid().parse().unwrap();
        // Past the start: the readers have read their files, the first scans are done.
        std::thread::sleep(Duration::from_secs(2));
        let share = idle_share(pid, 10);
        eprintln!(
            "{name}: idle CPU over 10 s: {:.3} % of a core",
            share * 100.0
        );
        assert!(
            share < 0.2,
            "{name}: {:.1} % of a core while idle:\n{}",
            share * 100.0,
            t.screen()
        );
        t.keys(&["q"]);
        assert_eq!(t.exit_code(), "EXIT:0");
    }
}

/// Every chart smoothed, with more smoothed series on screen than the smoothing
/// cache keeps (a 9×9 grid of one run's 90 metrics, each thinned past the series
/// cap, so every smoothing re-reads the run's file): each chart is drawn smoothed
/// and, left alone, the viewer idles (its CPU over 10 s from /proc, the same
/// generous bound as the idle workspace's). Series evicted while on screen were
/// asked for again at every tick and never drawn smoothed.
#[test]
fn more_smoothed_series_on_screen_than_cached_are_drawn_and_idle() {
    require_tmux!();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp
        .path()
        .join("wandb/offline-run-20261201_000000-synth001");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = leet::decode::synth::SynthSpec {
        steps: 20_000,
        metrics: 90,
        summaries: false,
        ..Default::default()
    };
    let file = dir.join("run-synth001.wandb");
    std::fs::write(&file, leet::decode::synth::file_bytes(&spec)).unwrap();
    let t = Tmux::start("smooth81", &[dir.as_path()], 400, 120);
    t.wait_for("19999", Duration::from_secs(30));
    t.keys(&["r", "9", "c", "9"]);
    t.wait_for("Metrics [1-81 of 90]", Duration::from_secs(10));
    t.keys(&["E"]);
    t.wait_for("twema 0.6", Duration::from_secs(10));
    t.wait_until(
        "every chart on screen drawn smoothed",
        Duration::from_secs(30),
        |s| (!s.contains("smoothing…")).then_some(()),
    );
    let pid: u32 = t.viewer_pid().parse().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let share = idle_share(pid, 10);
    eprintln!("idle CPU over 10 s: {:.3} % of a core", share * 100.0);
    assert!(
        share < 0.2,
        "{:.1} % of a core while idle:\n{}",
        share * 100.0,
        t.screen()
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "EXIT:0");
}

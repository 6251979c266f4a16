//! The event loop: one channel, producers on threads (input, tail, ticker,
//! signals, the command worker), updates applied in order, one draw per drained
//! batch. The app's commands go to the worker (`exec`), never run on this thread.

mod exec;
pub mod remote;

pub use exec::{answer, monitor, Executor};

use std::os::fd::AsRawFd as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, SyncSender};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::cli::ViewArgs;
use crate::input::{self, Input};
use crate::msg::Msg;
use crate::source::file::{resolve, RunReader, Target};
use crate::source::resolve::Opening;
use crate::source::tail;
use crate::terminal;
use crate::ui::keymap::Keymap;
use crate::ui::render;
use crate::ui::settings::Config;
use crate::ui::{App, Options};
use leet_sampler::{self as sampler, MonitorHandle, ProcScanner, Sampler};

/// Longest the loop applies queued messages before drawing (keeps a big load
/// drawing progress).
const DRAIN_BUDGET: Duration = Duration::from_millis(40);

/// While the file's existing bytes are still being read, the loop draws progress
/// at most this often (a frame downsamples every visible series: drawing after
/// every 40 ms drain spent a fifth of the loop's time of a 1 GB load on frames).
/// Keys and mouse are still answered at once.
const LOAD_FRAME: Duration = Duration::from_millis(150);

/// In the live monitor, a frame owed to a message other than the user's input
/// waits this long for whatever comes with it (the sample and the process scan
/// come a few ms apart, and each used to cost a frame of its own).
const COALESCE: Duration = Duration::from_millis(25);

/// While a followed run keeps growing, frames owed to its appends come at most
/// this often: an append after a quiet spell is drawn at once (within a frame of
/// the write), but a run written at 50 steps a second costs 10 frames a second,
/// not 50, each showing every step read until then (at 20 a second, following
/// such a run cost 1.8–2.3 % of a core against 1.3–1.6 %). Keys, mouse and
/// resizes are answered at once.
const FOLLOW_FRAME: Duration = Duration::from_millis(100);

/// When the program started ([`mark_start`]; else the first call).
static STARTED: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Note the program's start, for [`DrawTimes`].
pub fn mark_start() {
    STARTED.get_or_init(Instant::now);
}

/// With `LEET_DEBUG_TIMES=FILE`, the seconds from the program's start to the first
/// frame drawn with records of the file (`first_s`) and to the first frame drawn
/// once all of the file's bytes were read (`loaded_s`), appended to FILE as lines
/// `first_s 0.031` and `loaded_s 1.402`: the program's own figures, which the
/// benchmark scripts print beside the ones they read off the screen (a poller
/// takes CPU from the program it measures and sees a frame up to a poll late).
/// In a workspace, `drawn_s N SECS` the first frame drawn once N of its drawn runs
/// had each read their whole file (one line per N reached), and with the first
/// frame `start_unix T`, the start in Unix seconds, so that a script can time from
/// a key it sent.
struct DrawTimes {
    path: Option<PathBuf>,
    first: bool,
    loaded: bool,
    /// The most drawn runs seen fully read in a frame so far.
    drawn: usize,
    started: bool,
}

impl DrawTimes {
    fn from_env() -> Self {
        Self {
            path: std::env::var_os("LEET_DEBUG_TIMES").map(PathBuf::from),
            first: false,
            loaded: false,
            drawn: 0,
            started: false,
        }
    }

    /// A frame of `app` was drawn.
    fn drawn(&mut self, app: &App) {
        let Some(path) = &self.path else {
            return;
        };
        let src = &app.shown.source;
        let mut lines = String::new();
        let secs = STARTED.get_or_init(Instant::now).elapsed().as_secs_f64();
        if !self.started {
            self.started = true;
            let now = tail::unix_now();
            lines.push_str(&format!("start_unix {:.6}\n", now - secs));
        }
        if !self.first && src.read_to > 0 {
            self.first = true;
            lines.push_str(&format!("first_s {secs:.3}\n"));
        }
        if !self.loaded && src.read_to > 0 && !src.loading() {
            self.loaded = true;
            lines.push_str(&format!("loaded_s {secs:.3}\n"));
        }
        let drawn = app.runs.drawn_read(src);
        if drawn > self.drawn {
            self.drawn = drawn;
            lines.push_str(&format!("drawn_s {drawn} {secs:.3}\n"));
        }
        if !lines.is_empty() {
            use std::io::Write as _;
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(lines.as_bytes()));
        }
    }
}

/// Hands the heaps' free memory back to the system once every drawn run has
/// read its whole file ([`crate::release_free_memory`]): [`crate::tune_allocator`]
/// lets the heaps keep what is freed, right for the stream of batches a load is,
/// but what a load allocated and dropped (its read buffers, its batches, a wide
/// run's long texts on their way to the store) would otherwise stay resident for
/// the process's life: 76 MB for a run holding 7 MB of config and summary text
/// whose store keeps about 25 MB. Not while another drawn run still loads: it
/// would fault in again what was handed back.
#[derive(Default)]
struct Trim {
    all_read: bool,
}

impl Trim {
    /// After a frame of `app`: trim where the last drawn run has just been read.
    fn after_frame(&mut self, app: &App) {
        let src = &app.shown.source;
        let all_read = src.read_to > 0 && !src.loading() && app.runs.compared_read();
        if all_read && !self.all_read {
            crate::release_free_memory();
        }
        self.all_read = all_read;
    }
}

/// Keys and mouse reports from the terminal, read by our own reader (see
/// `input`): an unfinished escape sequence never holds back later keys. ctrl+z
/// suspends, as in a terminal in cooked mode; ctrl+c quits even if the loop is busy.
fn spawn_input(tx: SyncSender<Msg>) {
    let _ = std::thread::Builder::new()
        .name("leet-input".into())
        .spawn(move || {
            let tty = match input::tty() {
                Ok(t) => t,
                Err(e) => {
                    let _ = tx.send(Msg::SourceError(format!("terminal input: {e}")));
                    return;
                }
            };
            let r = input::read_loop(
                tty.as_raw_fd(),
                input::ESC_TIMEOUT,
                terminal::entered,
                |ev| {
                    let msg = match ev {
                        Input::Key(k) if is_ctrl(&k, 'z') => Msg::Suspend,
                        Input::Key(k) => {
                            if is_ctrl(&k, 'c') {
                                terminal::exit_soon(0);
                            }
                            Msg::Key(k)
                        }
                        Input::Mouse(m) => Msg::Mouse(m),
                        Input::Paste(t) => Msg::Paste(t),
                    };
                    tx.send(msg).is_ok()
                },
            );
            if let Err(e) = r {
                let _ = tx.send(Msg::SourceError(format!("terminal input: {e}")));
            }
        });
}

fn is_ctrl(k: &KeyEvent, c: char) -> bool {
    k.code == KeyCode::Char(c)
        && k.modifiers.contains(KeyModifiers::CONTROL)
        && k.kind != KeyEventKind::Release
}

fn spawn_ticker(tx: SyncSender<Msg>) {
    let _ = std::thread::Builder::new()
        .name("leet-tick".into())
        .spawn(move || {
            // A run on a server is followed by a thread of `source::remote`,
            // started before the loop: its polls' errors are looked at here.
            let mut trouble = None;
            loop {
                std::thread::sleep(Duration::from_secs(1));
                if tx.send(Msg::Tick(tail::unix_now())).is_err() {
                    return;
                }
                let now = crate::source::remote::files::follow_trouble();
                if now != trouble {
                    trouble.clone_from(&now);
                    if tx.send(Msg::FollowTrouble(now)).is_err() {
                        return;
                    }
                }
            }
        });
}

/// The settings the viewer starts with, and the file their changes are saved to
/// (None: there is no place for one: no `$XDG_CONFIG_HOME` or `$HOME`).
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub path: Option<PathBuf>,
    pub file: Config,
}

/// Start `app` from the loaded settings (a viewer's in the wandb directory
/// `dir`). Loaded without a file: there was no place to find one, and changes
/// are said unsaved.
fn use_settings(app: &mut App, loaded: Loaded, dir: Option<&std::path::Path>) {
    let homeless = loaded.path.is_none();
    match dir {
        Some(dir) => app.use_config_in(loaded.path, loaded.file, dir),
        None => app.use_config(loaded.path, loaded.file),
    }
    if homeless {
        app.settings_without_a_file();
    }
}

/// The app's options from the flags (and the terminal's mouse mode, set before it
/// is entered).
fn options(args: &ViewArgs, keymap: Keymap) -> Options {
    terminal::capture_mouse(!args.screen.no_mouse);
    let (color, true_color) = color_env();
    Options {
        keymap,
        stale_after: args.stale_after as f64,
        color: color && !args.screen.no_color,
        true_color,
        max_points: args.max_points,
    }
}

/// Colour at all (not under `NO_COLOR`), and 24-bit colour (`COLORTERM`).
fn color_env() -> (bool, bool) {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let term = std::env::var_os("COLORTERM");
    let true_color = crate::ui::palette::true_color(term.as_deref().and_then(|v| v.to_str()));
    (color, true_color)
}

/// Run the viewer until the user quits.
///
/// # Errors
/// `e` for the PATH `p`; where `p` is missing and is a word a letter or two from
/// a subcommand's name (`leet inspct`), what was likely meant.
fn mistyped(p: &std::path::Path, e: crate::source::resolve::SourceError) -> anyhow::Error {
    use crate::source::resolve::SourceError;
    let word = p.to_str().filter(|w| !w.contains('/'));
    let meant = match (&e, word) {
        (SourceError::NotFound { .. }, Some(w)) => ["inspect", "export", "sample", "serve"]
            .into_iter()
            .find(|c| edits(w, c) <= 2),
        _ => None,
    };
    match meant {
        Some(c) => anyhow::anyhow!("{e}; did you mean the subcommand `leet {c}`?"),
        None => e.into(),
    }
}

/// How many single-character insertions, deletions, substitutions or swaps of
/// neighbours turn `a` into `b` (optimal string alignment, as clap suggests).
fn edits(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// A path that leads to no run (before the terminal changes mode), terminal I/O.
pub fn run(args: &ViewArgs, keymap: Keymap, config: Loaded) -> anyhow::Result<ExitCode> {
    // Fail before touching the terminal when the path leads nowhere. Without a
    // path: the current directory's runs, else those under WANDB_DIR.
    let tty = {
        use std::io::IsTerminal as _;
        std::io::stdout().is_terminal()
    };
    let (path, opening) = match &args.path {
        // A directory with no run yet is a workspace waiting for its first, on a
        // terminal; elsewhere (a script) the error says what was tried.
        Some(p) if tty => (
            p.clone(),
            crate::source::resolve::opening_or_wait(p).map_err(|e| mistyped(p, e))?,
        ),
        Some(p) => (
            p.clone(),
            crate::source::resolve::opening(p).map_err(|e| mistyped(p, e))?,
        ),
        None => {
            let env = std::env::var_os("WANDB_DIR");
            let here = std::path::Path::new(".");
            if tty {
                crate::source::resolve::opening_default_or_wait(here, env.as_deref())?
            } else {
                crate::source::resolve::opening_default(here, env.as_deref())?
            }
        }
    };
    let compare = args
        .compare
        .iter()
        .map(|p| resolve(p).map(|t| (p.clone(), t)))
        .collect::<Result<Vec<_>, _>>()?;
    // A run named on the command line whose file is not a `.wandb` log (a text
    // file, a PNG, a wrong header) is refused here, in one line naming the file and
    // the cause, before the terminal changes. A workspace is opened whatever its
    // latest run holds (its list says which runs cannot be read).
    let named = match &opening {
        Opening::Run { target, .. } => Some(target),
        Opening::Workspace { .. } | Opening::Empty { .. } => None,
    };
    for target in named.into_iter().chain(compare.iter().map(|(_, t)| t)) {
        if let Target::File(f) = target {
            RunReader::check_header(f)?;
        }
    }
    // A run compared with the one shown, or compared twice, would be drawn twice
    // under one name.
    let shown = match &opening {
        Opening::Run { target, .. } => target,
        Opening::Workspace { run, .. } => run,
        Opening::Empty { wandb_dir } if !compare.is_empty() => anyhow::bail!(
            "{}: no run yet to draw the --compare runs beside",
            crate::text::sanitize_path(wandb_dir)
        ),
        Opening::Empty { .. } => &Target::EmptyRunDir(PathBuf::new()),
    };
    let mut drawn = vec![canonical_run_dir(shown)];
    for (p, t) in &compare {
        let dir = canonical_run_dir(t);
        if drawn.contains(&dir) {
            anyhow::bail!(
                "--compare {}: that run is drawn already (the run shown, or one compared); \
                 --compare draws another run beside it",
                crate::text::sanitize_path(p)
            );
        }
        drawn.push(dir);
    }
    let mut app = App::new(options(args, keymap));
    use_settings(&mut app, config, settings_dir(&opening).as_deref());
    // What the workspace saved for the directory; a state file that cannot be
    // used is set aside and said so (once, in the status bar).
    let mut state_note = None;
    let mut saved = |dir: &std::path::Path| {
        let s = crate::source::state::default_state_dir()?;
        let (saved, note) = crate::source::state::load_or_set_aside(&s, dir);
        state_note = note;
        saved
    };
    let run_dir = |t: &Target| match t {
        Target::File(f) => f.parent().map(std::path::Path::to_path_buf),
        Target::EmptyRunDir(d) => Some(d.clone()),
    };
    match opening {
        // `--compare` draws runs beside one run: the single-run view.
        Opening::Workspace { wandb_dir, run } if compare.is_empty() => {
            let wandb_dir = std::fs::canonicalize(&wandb_dir).unwrap_or(wandb_dir);
            let main = run_dir(&run).map(|d| std::fs::canonicalize(&d).unwrap_or(d));
            app.open_workspace(wandb_dir.clone(), saved(&wandb_dir), main, false);
            name_workspace(&mut app, &wandb_dir);
        }
        Opening::Workspace { wandb_dir, run }
        | Opening::Run {
            target: run,
            wandb_dir: Some(wandb_dir),
        } => {
            app.request_open(path);
            let wandb_dir = std::fs::canonicalize(&wandb_dir).unwrap_or(wandb_dir);
            let main = run_dir(&run).map(|d| std::fs::canonicalize(&d).unwrap_or(d));
            app.open_workspace(wandb_dir.clone(), saved(&wandb_dir), main, true);
            name_workspace(&mut app, &wandb_dir);
        }
        Opening::Run {
            wandb_dir: None, ..
        } => app.request_open(path),
        // No run yet: the list, empty, until the first one starts.
        Opening::Empty { wandb_dir } => {
            let wandb_dir = std::fs::canonicalize(&wandb_dir)
                .or_else(|_| std::path::absolute(&wandb_dir))
                .unwrap_or(wandb_dir);
            app.open_workspace(wandb_dir.clone(), saved(&wandb_dir), None, false);
            name_workspace(&mut app, &wandb_dir);
        }
    }
    if let Some(note) = state_note {
        app.tell(note);
    }
    for (path, target) in compare {
        let dir = match target {
            Target::File(f) => f
                .parent()
                .map_or_else(|| f.clone(), std::path::Path::to_path_buf),
            Target::EmptyRunDir(d) => d,
        };
        app.request_compare(path, dir);
    }
    // One reader per run followed (the main one, and any compared with it), started
    // by the worker from the app's commands.
    drive(app, None, |_| {})
}

/// The run directory of a run opened (canonical, so two spellings of one run are
/// equal).
fn canonical_run_dir(t: &Target) -> PathBuf {
    let dir = match t {
        Target::File(f) => f
            .parent()
            .map_or_else(|| f.clone(), std::path::Path::to_path_buf),
        Target::EmptyRunDir(d) => d.clone(),
    };
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// The directory whose settings the viewer of `opening` uses (canonical): its
/// wandb directory, else the directory of the run's `.wandb` file (or the run
/// directory waited on).
#[must_use]
pub fn settings_dir(opening: &Opening) -> Option<PathBuf> {
    let dir = match opening {
        Opening::Workspace { wandb_dir, .. }
        | Opening::Empty { wandb_dir }
        | Opening::Run {
            wandb_dir: Some(wandb_dir),
            ..
        } => wandb_dir.clone(),
        Opening::Run {
            target: Target::File(f),
            wandb_dir: None,
        } => f.parent()?.to_path_buf(),
        Opening::Run {
            target: Target::EmptyRunDir(d),
            wandb_dir: None,
        } => d.clone(),
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    std::fs::canonicalize(&dir)
        .or_else(|_| std::path::absolute(&dir))
        .ok()
}

/// `leet inspect PATH` on a terminal: the record browser, full screen, until the
/// user quits (or goes back).
///
/// # Errors
/// A path that leads to no `.wandb` file, or not to a W&B log (before the terminal
/// changes mode), terminal I/O.
pub fn run_inspector(
    path: &std::path::Path,
    keymap: Keymap,
    screen: &crate::cli::ScreenArgs,
) -> anyhow::Result<ExitCode> {
    let file = crate::source::resolve::resolve_file(path)?;
    // As `--json` lists them: a node's or segment's file or directory named, its
    // own records; a workspace's distributed run, the primary node's.
    let file = if crate::source::resolve::names_workspace(path) {
        crate::source::nodes::RunFiles::of(path, &file)
            .main()
            .to_path_buf()
    } else {
        file
    };
    RunReader::check_header(&file)?;
    terminal::capture_mouse(!screen.no_mouse);
    let (color, true_color) = color_env();
    let mut app = App::new(Options {
        keymap,
        color: color && !screen.no_color,
        true_color,
        ..Options::default()
    });
    app.open_inspector(file, true);
    drive(app, None, |_| {})
}

/// The workspace's name in the status bar: relative to the working directory when
/// under it (`wandb`, `runs/sweep/wandb`), `~/…` under the home directory.
fn name_workspace(app: &mut App, wandb_dir: &std::path::Path) {
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| std::fs::canonicalize(d).ok());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let label = match (cwd, home) {
        (Some(c), _) if wandb_dir.starts_with(&c) && wandb_dir != c => wandb_dir
            .strip_prefix(&c)
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        (_, Some(h)) if wandb_dir.starts_with(&h) && wandb_dir != h => wandb_dir
            .strip_prefix(&h)
            .map(|p| format!("~/{}", p.display()))
            .unwrap_or_default(),
        _ => wandb_dir.display().to_string(),
    };
    if let Some(ws) = app.runs.workspace.as_mut() {
        ws.label = label;
    }
}

/// Scan the host's processes every `interval` on a thread of its own (a slow `/proc`
/// delays only the next table, never a sample), until the loop is gone. When the
/// monitored process has exited, no process is monitored any more, and the app is
/// told so.
fn spawn_procs(
    mut scanner: ProcScanner,
    handle: MonitorHandle,
    interval: Duration,
    tx: SyncSender<Msg>,
) {
    let _ = std::thread::Builder::new()
        .name("leet-procs".into())
        .spawn(move || {
            let mut ticker = sampler::Ticker::new(interval);
            // The monitored root's command line as last seen here.
            let mut seen: Option<(u32, String)> = None;
            loop {
                ticker.wait();
                let table = scanner.scan();
                let gone = forget_exited(&handle, &table);
                let renamed = renamed(&handle, &table, &mut seen);
                if tx.send(Msg::Procs(table)).is_err() {
                    return;
                }
                if let Some(m) = renamed {
                    let _ = tx.send(Msg::Monitoring(Some(m)));
                }
                if let Some(pid) = gone {
                    let _ = tx.send(Msg::Monitoring(None));
                    let _ = tx.send(Msg::SourceError(format!(
                        "process {pid} exited: no process monitored"
                    )));
                }
            }
        });
}

/// The monitored root and its command line when that changed since the last scan
/// while the pid stayed (a launcher that `exec`s the training script: `bash` →
/// `python train.py`), so its charts are named for what runs now. The first sight
/// of a root is only noted (the runtime named it as it was chosen).
fn renamed(
    handle: &MonitorHandle,
    table: &crate::msg::ProcTable,
    seen: &mut Option<(u32, String)>,
) -> Option<(u32, String)> {
    let root = handle.root()?;
    let row = table.rows.iter().find(|r| r.pid == root)?;
    let before = seen.replace((root, row.command.clone()));
    match before {
        Some((pid, cmd)) if pid == root && cmd != row.command => Some((root, row.command.clone())),
        _ => None,
    }
}

/// If the monitored process is not in `table` (a scan of every process), it has
/// exited: monitor none, and return its pid.
fn forget_exited(handle: &MonitorHandle, table: &crate::msg::ProcTable) -> Option<u32> {
    let root = handle.root()?;
    // Its pid given to another process: gone as surely as one not listed.
    if handle.root_replaced() {
        let _ = handle.set(None);
        return Some(root);
    }
    // A zombie has exited too: only its parent has not read its exit status yet.
    // Its own state says so where its row does not (a row kept from an earlier
    // scan while the process idled; no row: the table cut at its limit).
    let row = table.rows.iter().find(|r| r.pid == root);
    let zombie = row.is_some_and(|r| r.zombie) || exited_unreaped(root);
    if row.is_some() && !zombie {
        return None;
    }
    // Still the same root (not switched meanwhile by a `Cmd::Monitor`), and really
    // gone (the table may be cut at its row limit).
    if handle.root() != Some(root)
        || (!zombie && std::path::Path::new(&format!("/proc/{root}")).exists())
    {
        return None;
    }
    let _ = handle.set(None);
    Some(root)
}

/// Whether process `pid` has exited and waits for its parent to read its exit
/// status (state `Z`, or `X` dead), by `/proc/<pid>/stat` (Linux; false elsewhere).
fn exited_unreaped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|c| c == 'Z' || c == 'X')
    })
}

/// The environment's entry of each accelerator: `<prefix>.N` (`gpu.0`, `tpu.3`,
/// `ipu.1`), numbered within its family as its metric keys are, with its name,
/// memory and driver where known: a device whose memory or driver its tools do not
/// tell has none (never a `0B`).
fn device_env(
    devices: &[(&'static str, leet_sampler::GpuInfo)],
) -> Vec<(String, serde_json::Value)> {
    let mut next: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(devices.len());
    for (prefix, g) in devices {
        let n = next.entry(prefix).or_default();
        let mut info = serde_json::Map::new();
        info.insert("name".into(), g.name.clone().into());
        if g.memory_total > 0 {
            info.insert("memory".into(), g.memory_total.into());
        }
        if !g.driver.is_empty() {
            info.insert("driver".into(), g.driver.clone().into());
        }
        out.push((format!("{prefix}.{n}"), info.into()));
        *n += 1;
    }
    out
}

/// Monitor this host: the sampler's readings are the main grid, the process scan
/// its table. No process tree is monitored unless `--pid` names one, or the app asks
/// for one (`Cmd::Monitor`).
///
/// # Errors
/// Terminal I/O.
pub fn run_live(args: &ViewArgs, keymap: Keymap, settings: Loaded) -> anyhow::Result<ExitCode> {
    use serde_json::{json, Map, Value};
    let mut opts = args.sampler.options();
    opts.monitor_self = false;
    let sampler = Sampler::new(opts.clone());
    let handle = sampler.monitor_handle();
    let scanner = sampler.proc_scanner();
    // `--pid` checked as a later `Cmd::Monitor` is: a pid that is not there is an
    // error on screen, and none is monitored.
    let monitoring = monitor(&handle, opts.pid);
    let host = sampler.host_info();
    let mut env = Map::new();
    env.insert("os".into(), json!(host.os));
    env.insert("cpu".into(), json!({"model": host.cpu_model, "count": host.cpu_count, "count_logical": host.cpu_count_logical}));
    env.insert("memory".into(), json!({"total": host.memory_total}));
    env.extend(device_env(&host.devices));
    for (k, v) in &host.static_info {
        env.insert(k.clone(), Value::from(v.clone()));
    }
    for (family, why) in sampler.unavailable() {
        env.insert(format!("unavailable.{family}"), Value::from(why.clone()));
    }
    let mut config = Map::new();
    config.insert("interval".into(), json!(format!("{:?}", opts.interval)));
    config.insert("pid".into(), opts.pid.map_or(json!("none"), |p| json!(p)));
    let disks: Vec<String> = opts
        .disk_paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    config.insert(
        "disk_paths".into(),
        json!(if disks.is_empty() {
            vec!["/".to_owned()]
        } else {
            disks
        }),
    );
    for (name, url) in &opts.openmetrics {
        config.insert(format!("openmetrics.{name}"), json!(url));
    }
    let mut app = App::live(options(args, keymap), args.window.max(1.0));
    use_settings(&mut app, settings, None);
    app.set_host(&host.hostname, env, config);
    let interval = opts.interval;
    let scans = handle.clone();
    drive(app, Some(handle), move |tx| {
        for msg in monitoring {
            let _ = tx.send(msg);
        }
        spawn_procs(scanner, scans, interval, tx.clone());
        let _ = sampler::spawn_sampler(sampler, interval, move |s| {
            for (family, e) in &s.errors {
                let _ = tx.try_send(Msg::SamplerError(format!("{family}: {e}")));
            }
            tx.send(Msg::Sample(s)).is_ok()
        });
    })
}

/// `leet --live --prometheus URL`: the cluster screen, every host the server holds
/// (those `--match` chooses), read by the refresh thread.
///
/// # Errors
/// A URL or matcher that does not parse (clap checked both before), terminal I/O.
pub fn run_cluster(
    args: &ViewArgs,
    url: &str,
    keymap: Keymap,
    settings: Loaded,
) -> anyhow::Result<ExitCode> {
    use crate::source::http::HttpOptions;
    use crate::source::prometheus::{driver, Client, DriverOptions, Matchers};
    let client = Client::new(url, HttpOptions::default())?;
    let opts = DriverOptions {
        matchers: Matchers::parse(&args.matchers)?,
        window: Duration::from_secs_f64(args.window),
        interval: args.interval_given.then_some(args.sampler.interval),
    };
    let mut app = App::live(options(args, keymap), args.window.max(1.0));
    use_settings(&mut app, settings, None);
    app.open_cluster(client.server(), opts.window);
    drive(app, None, move |tx| {
        // The loop's channel is bounded: a busy loop holds back the refresh
        // thread (which then reads from where it stopped, skipping nothing). The
        // thread ends at its next report once the loop's receiver is gone.
        let _ = driver::spawn(client, opts, move |u| {
            tx.send(Msg::Cluster(Box::new(u))).is_ok()
        });
    })
}

/// Enter the terminal, start the common producers (input, ticker, signals) and the
/// given ones, and run the loop until quit. The commands the app returns go to the
/// worker ([`Executor`]; with `monitor`, it switches the live sampler's process tree). After a quit signal the exit code is 128 + its number, as
/// a shell reports a process the signal ended.
fn drive(
    mut app: App,
    monitor: Option<MonitorHandle>,
    producers: impl FnOnce(SyncSender<Msg>),
) -> anyhow::Result<ExitCode> {
    let mut cmds = app.take_cmds();
    cmds.extend(app.update(Msg::Tick(tail::unix_now())).cmds);
    let (tx, rx) = mpsc::sync_channel::<Msg>(16);
    // Screens drawn into a pipe or a file are junk there and nothing on the
    // terminal: refuse before writing a byte (the keys would still be read from
    // the terminal, blind).
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!(
            "cannot set up the terminal: standard output is not a terminal (the viewer \
             draws on one: over SSH, `ssh -t HOST leet …` gives it one; `leet inspect \
             --print`, `leet export` and `leet sample` write to pipes and files)"
        );
    }
    // A terminal that says it can only print lines (`TERM=dumb`: Emacs' shell,
    // some CI logs) shows a screen's cursor moves as junk.
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        anyhow::bail!(
            "cannot set up the terminal: TERM=dumb cannot draw a screen (run leet in a \
             terminal emulator; `leet inspect --print`, `leet export` and `leet sample` print \
             lines)"
        );
    }
    let mut term = terminal::enter().context("cannot set up the terminal")?;
    let result = (|| -> anyhow::Result<Option<i32>> {
        let size = term.size()?;
        cmds.extend(app.update(Msg::Resize(size.width, size.height)).cmds);
        let exec = Executor::spawn_with(tx.clone(), monitor);
        spawn_input(tx.clone());
        spawn_ticker(tx.clone());
        terminal::spawn_signals(tx.clone()).context("cannot handle signals")?;
        producers(tx.clone());
        exec.run(std::mem::take(&mut cmds));
        let mut times = DrawTimes::from_env();
        let mut trim = Trim::default();
        draw(&mut term, &app)?;
        times.drawn(&app);
        // For the end-to-end test of the panic hook (terminal restored, message shown).
        assert!(
            std::env::var_os("LEET_DEBUG_PANIC").is_none(),
            "LEET_DEBUG_PANIC is set: panicking after the first frame"
        );
        // For the end-to-end test of a quit while the loop is busy: it takes no
        // more messages, as if stuck in long work.
        if std::env::var_os("LEET_DEBUG_STALL").is_some() {
            loop {
                std::thread::park();
            }
        }
        let mut signal = None;
        // When the frame owed is drawn (None: none is owed), and when the last was.
        let mut due: Option<Instant> = None;
        let mut last_draw = Instant::now();
        // Whether a frame with some of the file's records has been drawn: until
        // then nothing is held back, so the first records show at once.
        let mut drew_records = false;
        loop {
            let first = if let Some(at) = due {
                match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(m) => Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(signal),
                }
            } else {
                match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return Ok(signal),
                }
            };
            let start = Instant::now();
            let mut dirty = false;
            let mut repaint = false;
            let mut answered_input = false;
            for msg in first.into_iter().chain(std::iter::from_fn(|| {
                if start.elapsed() < DRAIN_BUDGET {
                    rx.try_recv().ok()
                } else {
                    None
                }
            })) {
                match msg {
                    Msg::Suspend => {
                        terminal::suspend(&mut term)?;
                        repaint = true;
                    }
                    Msg::Continued => {
                        terminal::resume(&mut term)?;
                        repaint = true;
                    }
                    msg => {
                        if let Msg::Signal(n) = msg {
                            signal = Some(n);
                        }
                        // The user's own input is answered on screen at once, not
                        // after the rest of the drain budget.
                        let input = matches!(
                            msg,
                            Msg::Key(_) | Msg::Mouse(_) | Msg::Paste(_) | Msg::Resize(..)
                        );
                        let fx = app.update(msg);
                        dirty |= fx.redraw;
                        exec.run(fx.cmds);
                        if fx.quit {
                            return Ok(signal);
                        }
                        if input && fx.redraw {
                            answered_input = true;
                            break;
                        }
                    }
                }
            }
            if repaint {
                // The size may have changed while the process was stopped.
                let size = term.size()?;
                exec.run(app.update(Msg::Resize(size.width, size.height)).cmds);
            }
            if dirty || repaint {
                let now = Instant::now();
                let at = if repaint || answered_input {
                    now
                } else if app.shown.source.loading() && drew_records {
                    last_draw + LOAD_FRAME
                } else if app.is_host() {
                    now + COALESCE
                } else if drew_records {
                    (last_draw + FOLLOW_FRAME).max(now)
                } else {
                    now
                };
                due = Some(due.map_or(at, |d| d.min(at)));
            }
            if due.is_some_and(|at| Instant::now() >= at) {
                draw(&mut term, &app)?;
                times.drawn(&app);
                trim.after_frame(&app);
                due = None;
                last_draw = Instant::now();
                drew_records = app.shown.source.read_to > 0;
            }
        }
    })();
    terminal::restore();
    // What the workspace remembers and the settings changed since the last
    // save, written before leaving (the saves the worker had queued may not have
    // run: these carry their changes too).
    let saves = [app.runs.workspace_save_on_quit(), app.unsaved_settings()];
    for msg in saves.into_iter().flatten().filter_map(answer) {
        match msg {
            Msg::WorkspaceWritten { error: Some(e), .. } => {
                eprintln!("leet: cannot save the workspace state: {e}");
            }
            Msg::SettingsWritten { error: Some(e), .. } => {
                eprintln!("leet: cannot save the settings: {e}");
            }
            _ => {}
        }
    }
    // A terminal that went away fails the loop (a draw, its size), often before
    // the hangup's signal is handled, or with no signal to the viewer at all (the
    // session leader, a shell, took it): leaving as a hangup ends it, not with
    // the error (`Input/output error`) printed on no terminal and exit status 1.
    let result = result.or_else(
        |e| match terminal::quit_signal_within(terminal::QUIT_GRACE) {
            Some(sig) => Ok(Some(sig)),
            None if terminal::hung_up(&e) => Ok(Some(libc::SIGHUP)),
            None => Err(e),
        },
    );
    result.map(|signal| {
        signal.map_or(ExitCode::SUCCESS, |n| {
            ExitCode::from(u8::try_from(128 + n).unwrap_or(u8::MAX))
        })
    })
}

fn draw(term: &mut terminal::Tui, app: &App) -> std::io::Result<()> {
    let _frame = terminal::draw_lock();
    term.draw(|f| render::render(f, app))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A missing PATH a letter or two from a subcommand's name says what was
    /// likely meant; any other missing path, or a path with a directory in it, not.
    #[test]
    fn a_mistyped_subcommand_is_named() {
        use super::{edits, mistyped};
        use crate::source::resolve::SourceError;
        assert_eq!(edits("inspct", "inspect"), 1);
        assert_eq!(edits("insepct", "inspect"), 1);
        assert_eq!(edits("exprot", "export"), 1);
        assert!(edits("foo", "inspect") > 2);
        let gone = |p: &str| SourceError::NotFound { path: p.into() };
        let said = |p: &str| mistyped(std::path::Path::new(p), gone(p)).to_string();
        assert!(said("inspct").ends_with("did you mean the subcommand `leet inspect`?"));
        assert!(said("sampel").ends_with("`leet sample`?"));
        assert_eq!(said("foo"), "foo: no such file or directory");
        assert_eq!(
            said("runs/inspct"),
            "runs/inspct: no such file or directory"
        );
    }

    #[test]
    fn a_monitored_process_that_execs_is_named_again_for_what_runs_now() {
        use crate::msg::{ProcRow, ProcTable};
        let sampler = leet_sampler::Sampler::with_collectors(Vec::new());
        let handle = sampler.monitor_handle();
        let me = std::process::id();
        handle.set(Some(me)).expect("monitor self");
        let table = |cmd: &str| ProcTable {
            timestamp: 0.0,
            rows: vec![ProcRow {
                pid: me,
                command: cmd.into(),
                ..ProcRow::default()
            }],
        };
        let mut seen = None;
        // First sight: noted, not sent (the runtime named it as it was chosen).
        assert_eq!(
            super::renamed(&handle, &table("bash run.sh"), &mut seen),
            None
        );
        assert_eq!(
            super::renamed(&handle, &table("bash run.sh"), &mut seen),
            None
        );
        assert_eq!(
            super::renamed(&handle, &table("python3 train.py"), &mut seen),
            Some((me, "python3 train.py".to_owned()))
        );
        assert_eq!(
            super::renamed(&handle, &table("python3 train.py"), &mut seen),
            None
        );
        // Another root chosen: its first sight is only noted.
        handle.set(Some(1)).expect("monitor init");
        let other = ProcTable {
            timestamp: 0.0,
            rows: vec![ProcRow {
                pid: 1,
                command: "init".into(),
                ..ProcRow::default()
            }],
        };
        assert_eq!(super::renamed(&handle, &other, &mut seen), None);
    }

    #[test]
    fn accelerators_are_listed_under_their_family_keys_without_unknown_memory() {
        use leet_sampler::GpuInfo;
        let dev = |name: &str, memory_total: u64, driver: &str| GpuInfo {
            name: name.into(),
            memory_total,
            driver: driver.into(),
        };
        let env = super::device_env(&[
            ("gpu", dev("NVIDIA L4", 1 << 30, "580.105.08")),
            ("tpu", dev("TPU v4", 32 << 30, "")),
            ("tpu", dev("TPU v4", 32 << 30, "")),
            ("ipu", dev("Graphcore C600 (ipu21)", 0, "2.6.0")),
            ("gpu", dev("AMD Instinct MI100", 0, "")),
        ]);
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["gpu.0", "tpu.0", "tpu.1", "ipu.0", "gpu.1"]);
        assert_eq!(
            env[1].1,
            serde_json::json!({"name": "TPU v4", "memory": 32_u64 << 30})
        );
        assert_eq!(
            env[3].1,
            serde_json::json!({"name": "Graphcore C600 (ipu21)", "driver": "2.6.0"})
        );
        assert_eq!(env[4].1, serde_json::json!({"name": "AMD Instinct MI100"}));
    }

    /// A sampler's monitor handle and process scanner, the handle monitoring a
    /// `sleep 30` of ours.
    #[cfg(target_os = "linux")]
    fn monitoring_a_sleep() -> (
        leet_sampler::MonitorHandle,
        leet_sampler::ProcScanner,
        std::process::Child,
    ) {
        let sampler = leet_sampler::Sampler::with_collectors(Vec::new());
        let handle = sampler.monitor_handle();
        let scanner = sampler.proc_scanner();
        let child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        assert!(handle.set(Some(child.id())).expect("monitor").is_some());
        (handle, scanner, child)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_exited_monitored_process_is_forgotten_and_a_live_one_kept() {
        let (handle, mut scanner, mut child) = monitoring_a_sleep();
        let pid = child.id();
        // Alive: kept.
        assert_eq!(super::forget_exited(&handle, &scanner.scan()), None);
        assert_eq!(handle.root(), Some(pid));
        // A table that lacks it while it lives (cut at the row limit): kept.
        let mut cut = scanner.scan();
        cut.rows.retain(|r| r.pid != pid);
        assert_eq!(super::forget_exited(&handle, &cut), None);
        assert_eq!(handle.root(), Some(pid));
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert_eq!(super::forget_exited(&handle, &scanner.scan()), Some(pid));
        assert_eq!(handle.root(), None);
        // Nothing monitored: nothing to forget.
        assert_eq!(super::forget_exited(&handle, &scanner.scan()), None);
    }

    /// A monitored process that exited and is not reaped yet (a zombie: its parent
    /// has not waited for it) is gone, not a process of 0 B and 0 % renamed
    /// `[sleep] <defunct>`.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_monitored_process_that_is_a_zombie_is_forgotten() {
        let (handle, mut scanner, mut child) = monitoring_a_sleep();
        let pid = child.id();
        assert_eq!(super::forget_exited(&handle, &scanner.scan()), None);
        child.kill().expect("kill");
        // Not waited for: a zombie until the end of the test.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let table = loop {
            let t = scanner.scan();
            if t.rows.iter().any(|r| r.pid == pid && r.zombie) {
                break t;
            }
            assert!(std::time::Instant::now() < deadline, "no zombie row");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let row = table.rows.iter().find(|r| r.pid == pid).expect("row");
        assert_eq!(row.command, "[sleep] <defunct>");
        let mut seen = Some((pid, "sleep 30".to_string()));
        assert_eq!(super::forget_exited(&handle, &table), Some(pid));
        assert_eq!(handle.root(), None);
        assert_eq!(super::renamed(&handle, &table, &mut seen), None);
        child.wait().expect("wait");
    }

    /// A zombie whose row in the table was kept from a scan before it exited (an
    /// idle process's row is read again only every few scans), or that has no
    /// row, is forgotten by its own state: it stayed monitored, a sampler error
    /// each sample, until its parent reaped it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_is_forgotten_whatever_its_row_says() {
        for with_row in [true, false] {
            let (handle, mut scanner, mut child) = monitoring_a_sleep();
            let pid = child.id();
            let mut table = scanner.scan();
            child.kill().expect("kill");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !super::exited_unreaped(pid) {
                assert!(std::time::Instant::now() < deadline, "no zombie");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if with_row {
                assert!(table.rows.iter().any(|r| r.pid == pid && !r.zombie));
            } else {
                table.rows.retain(|r| r.pid != pid);
            }
            assert_eq!(
                super::forget_exited(&handle, &table),
                Some(pid),
                "{with_row}"
            );
            assert_eq!(handle.root(), None);
            child.wait().expect("wait");
            assert!(!super::exited_unreaped(pid));
        }
    }
}

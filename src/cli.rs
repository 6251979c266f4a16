//! Command-line interface.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};

use leet_sampler::{self as sampler, SamplerOptions};
use leet_text::duration;

/// Longest `--stale-after`, `--idle-timeout` (30 days).
pub const MAX_WAIT_SECS: u64 = 30 * 24 * 3600;
/// `--window` bounds in seconds (10 s to one day).
pub const WINDOW_SECS: (f64, f64) = (10.0, 86_400.0);
/// Most points per series `--max-points` allows (the store's budget is shared
/// among series anyway; more than this is no use on any screen).
pub const MAX_POINTS: u64 = 1 << 20;
/// Most `--compare` runs (as many as the run picker draws).
pub const MAX_COMPARE: usize = crate::ui::workspace::runs::MAX_COMPARED;

/// `--window DURATION`, in seconds.
///
/// # Errors
/// Not a duration, or outside [`WINDOW_SECS`].
pub fn parse_window(s: &str) -> Result<f64, String> {
    let (lo, hi) = WINDOW_SECS;
    duration::parse_within(s, Duration::from_secs_f64(lo), Duration::from_secs_f64(hi))
        .map(|d| d.as_secs_f64())
}

/// `--idle-timeout DURATION`: 0 (stop at the first poll without growth) up to
/// [`MAX_WAIT_SECS`].
///
/// # Errors
/// Not a duration, or out of bounds.
pub fn parse_idle_timeout(s: &str) -> Result<Duration, String> {
    duration::parse_within(s, Duration::ZERO, Duration::from_secs(MAX_WAIT_SECS))
}

/// `--stale-after DURATION`, in whole seconds (a fraction is dropped): 1 s up to
/// [`MAX_WAIT_SECS`].
///
/// # Errors
/// Not a duration, or out of bounds.
pub fn parse_stale_after(s: &str) -> Result<u64, String> {
    duration::parse_within(
        s,
        Duration::from_secs(1),
        Duration::from_secs(MAX_WAIT_SECS),
    )
    .map(|d| d.as_secs())
}

/// `--prometheus URL`: an http(s) URL a client can be made for.
///
/// # Errors
/// The URL, and why it is not one.
pub fn parse_prometheus_url(s: &str) -> Result<String, String> {
    use crate::source::http::HttpOptions;
    crate::source::prometheus::Client::new(s, HttpOptions::default())
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

/// `--match MATCHERS`: PromQL label matchers (checked here, parsed again with the
/// others when the screen starts).
///
/// # Errors
/// The matcher, and why it does not parse.
pub fn parse_matcher(s: &str) -> Result<String, String> {
    crate::source::prometheus::Matchers::parse(&[s])
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

/// What `leet --version` prints: the version and the commit built from (`-dirty`
/// when the tree had changes; `unknown` when built outside git).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("LEET_GIT_COMMIT"),
    ")"
);

/// The end of `leet --help`: a few examples and the first keys to know.
const AFTER_HELP: &str = "\
Examples:
  leet                          the runs of ./wandb (or $WANDB_DIR), the latest drawn
  leet wandb/run-20250101_120000-abc123
                                one run
  leet --compare ../other/wandb/latest-run wandb/latest-run
                                two runs in every chart
  leet --live --window 10m      this host's CPU, memory, disks, network, GPUs
  leet export -o run.parquet wandb/latest-run
                                a run's history as Parquet (from the extension)

Keys to start with: h (or ?) help with every key, q quit, / filter the charts,
R pick a run, n / N next and previous page.";

/// A fast terminal viewer for W&B runs (.wandb files) and a live host monitor.
#[derive(Debug, Parser)]
#[command(name = "leet", version = VERSION, args_conflicts_with_subcommands = true,
          after_help = AFTER_HELP,
          // The forms there are, whichever a refused line used (clap's own names
          // the arguments given: `leet --live [PATH]` under `--live` with a PATH).
          override_usage = "leet [OPTIONS] [PATH]\n       leet --live [OPTIONS]\n       leet <COMMAND>")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// Options of the viewer (`leet [PATH]`).
#[derive(Debug, Clone, Args)]
#[command(mut_arg("interval", |a| {
    // Only the viewer reads a server; `sample` and `serve` share the rest.
    let help = a.get_help().map(ToString::to_string).unwrap_or_default();
    a.help(format!(
        "{help}. With --live --prometheus: how often the server is read (default: the \
         shortest scrape interval of the targets read)"
    ))
}))]
pub struct ViewArgs {
    /// A project or wandb directory (or its latest-run): the workspace of all its
    /// runs, the latest drawn; a run directory or a .wandb file: that run alone
    /// (esc goes to its workspace; through a `latest-run` link: the workspace). A PATH given is the only place looked at.
    /// Without one: the current directory's runs, else those under $WANDB_DIR (the
    /// directory the W&B SDK writes wandb/ in, or that wandb directory itself),
    /// else an error saying where it looked.
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub screen: ScreenArgs,
    /// Print the effective key map and exit.
    #[arg(long)]
    pub print_keymap: bool,
    /// Settings file: grid, panels and their sizes, y scales, guides, filters; read
    /// at start, written when a setting changes (default:
    /// $XDG_CONFIG_HOME/leet/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the effective settings (as TOML, which loads back) and exit.
    #[arg(long)]
    pub print_config: bool,
    /// How long without growth before a run with no exit record is shown as
    /// possibly crashed (e.g. 90s, 10m, 2h; a plain number is seconds; 1s to 30d).
    #[arg(long, default_value = "2m", value_name = "DURATION", value_parser = parse_stale_after)]
    pub stale_after: u64,
    /// Most points kept per metric series (memory bound; 64 to 1048576).
    #[arg(long, default_value_t = crate::store::metrics::DEFAULT_SERIES_CAP, value_name = "N",
          value_parser = RangedU64ValueParser::<usize>::new()
              .range(crate::store::series::MIN_CAP as u64..=MAX_POINTS))]
    pub max_points: usize,
    /// Draw another run beside PATH in every chart (repeatable, up to 7; any run:
    /// another directory or project). `R` then `space` does the same for runs next
    /// to PATH.
    #[arg(long = "compare", value_name = "RUN")]
    pub compare: Vec<PathBuf>,
    /// Monitor this host instead of showing a run: sampled system metrics are the
    /// main grid, over a sliding time window.
    #[arg(long, conflicts_with_all = ["path", "compare"])]
    pub live: bool,
    /// With --live: every host of a cluster from this Prometheus server (or any
    /// server with its HTTP API: Thanos, Mimir, VictoriaMetrics), instead of this
    /// host: series of `leet serve`, node-exporter and dcgm-exporter, one header row
    /// per host, a GPU heatmap and per-metric charts. --interval is then how often
    /// it is read (default: the shortest scrape interval of the targets read).
    #[arg(long, value_name = "URL", requires = "live", value_parser = parse_prometheus_url)]
    pub prometheus: Option<String>,
    /// With --prometheus: label matchers choosing the jobs and hosts, as in PromQL
    /// (`job="train"`, `instance=~"node-[0-7].*"`; repeatable, each may hold
    /// several, comma-separated).
    #[arg(long = "match", value_name = "MATCHERS", requires = "prometheus",
          value_parser = parse_matcher)]
    pub matchers: Vec<String>,
    /// Whether --interval was given (else the cluster screen reads at its targets'
    /// shortest scrape interval); set by [`Cli::parse_args`].
    #[arg(skip)]
    pub interval_given: bool,
    /// With --live: how much history each chart shows (e.g. 5m, 1h30m; a plain
    /// number is seconds; 10s to 24h).
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_window)]
    pub window: f64,
    #[command(flatten)]
    pub sampler: SamplerArgs,
}

/// Options of every full-screen view: the viewer's and `leet inspect`'s record
/// browser.
#[derive(Debug, Clone, Default, Args)]
pub struct ScreenArgs {
    /// Key map laid over the defaults (default: $XDG_CONFIG_HOME/leet/keymap.toml).
    #[arg(long, value_name = "PATH")]
    pub keymap: Option<PathBuf>,
    /// Draw without colour, as the NO_COLOR environment variable asks.
    #[arg(long)]
    pub no_color: bool,
    /// Leave the mouse to the terminal: its own selection and copy work (over SSH
    /// too), and leet takes no clicks, drags or wheel; every action has its key.
    #[arg(long)]
    pub no_mouse: bool,
}

impl Cli {
    /// Parse the command line `args` (the program's name first), noting which
    /// defaults the user overrode.
    ///
    /// # Errors
    /// A usage error, as clap reports it.
    pub fn parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory as _, FromArgMatches as _};
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let matches = Self::command()
            .try_get_matches_from(&args)
            .map_err(|e| extra_argument(e, &args))?;
        let mut cli = Self::from_arg_matches(&matches)?;
        let given = |id: &str| {
            matches!(
                matches.value_source(id),
                Some(clap::parser::ValueSource::CommandLine)
            )
        };
        cli.view.interval_given = cli.command.is_none() && given("interval");
        // The host's options without --live: a run shows what it recorded, and
        // they would be ignored without a word.
        if cli.command.is_none() && !cli.view.live {
            let live_only = [
                ("prometheus", "--prometheus"),
                ("matchers", "--match"),
                ("interval", "--interval"),
                ("window", "--window"),
                ("pid", "--pid"),
                ("disk_paths", "--disk-path"),
                ("openmetrics", "--openmetrics"),
                ("openmetrics_filter", "--openmetrics-filter"),
                ("dcgm", "--dcgm"),
                ("dcgm_exporter", "--dcgm-exporter"),
            ];
            if let Some((_, flag)) = live_only.iter().find(|(id, _)| given(id)) {
                return Err(Self::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "{flag} is an option of the live monitor: it needs --live (a run's \
                         view shows what the run recorded)"
                    ),
                ));
            }
        }
        Ok(cli)
    }

    /// Checks that span several options (clap checks each value alone).
    ///
    /// # Errors
    /// A usage error, to be reported as clap reports its own (exit status 2).
    pub fn validate(&self) -> Result<(), clap::Error> {
        use clap::CommandFactory as _;
        let v = &self.view;
        let fail =
            |msg: String| Err(Self::command().error(clap::error::ErrorKind::ValueValidation, msg));
        if v.compare.len() > MAX_COMPARE {
            return fail(format!(
                "--compare is given {} times; at most {MAX_COMPARE} runs can be drawn beside one",
                v.compare.len()
            ));
        }
        if v.live
            && (v.prometheus.is_none() || v.interval_given)
            && v.window < 2.0 * v.sampler.interval.as_secs_f64()
        {
            return fail(format!(
                "--window {} holds less than two samples at --interval {}; \
                 use a window of at least twice the interval",
                duration::format(Duration::from_secs_f64(v.window)),
                duration::format(v.sampler.interval)
            ));
        }
        Ok(())
    }
}

/// clap's error for a word after the viewer's `[PATH]` (`leet RUN extra`), which
/// it reports as a subcommand that conflicts with PATH (subcommands and the
/// viewer's arguments exclude each other), said as the unexpected argument it is;
/// where a subcommand's name came after an option (`leet --keymap F inspect RUN`),
/// the name was taken as PATH, and the tip says that a subcommand comes first.
fn extra_argument(e: clap::Error, args: &[std::ffi::OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory as _;
    let mut cmd = Cli::command();
    let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand) else {
        return e;
    };
    let is_subcommand = |w: &str| cmd.find_subcommand(w).is_some();
    if e.kind() != ErrorKind::ArgumentConflict || is_subcommand(word) {
        return e;
    }
    let word = word.clone();
    let misplaced = (args.iter().skip(1))
        .take_while(|a| a.to_str() != Some(word.as_str()))
        .filter_map(|a| a.to_str())
        .find(|a| is_subcommand(a))
        .map(str::to_owned);
    let usage = cmd.render_usage();
    let mut err = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(&cmd);
    let a_path = std::path::Path::new(&word).exists();
    err.insert(ContextKind::InvalidArg, ContextValue::String(word));
    if let Some(sub) = misplaced {
        err.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![format!(
                "'{sub}' was read as the PATH to view: a subcommand comes first, and \
                 its options after it ('leet {sub} --help')"
            )
            .into()]),
        );
    } else if a_path {
        // Several runs named (a shell glob): one PATH is viewed; the others are
        // drawn beside it with --compare, or the workspace lists them all.
        err.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "leet views one PATH: to draw runs together, 'leet RUN --compare RUN2 \
                 --compare RUN3' (up to 7), or 'leet DIR' to list every run of a wandb \
                 directory and pick them (space)"
                    .into(),
            ]),
        );
    }
    err.insert(ContextKind::Usage, ContextValue::StyledStr(usage));
    err
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Browse a run's records (on a terminal), or print them or its summary.
    Inspect(InspectArgs),
    /// Write a run's full history (every logged point) as CSV, JSON lines or Parquet.
    Export(ExportArgs),
    /// Sample host and accelerator metrics (W&B system-metric keys), no TUI.
    Sample(SampleArgs),
    /// Serve the sampled metrics to Prometheus over HTTP (GET /metrics).
    Serve(ServeArgs),
    /// Print a shell completion script for bash, zsh or fish (README: Install).
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff), e.g. `leet man | man -l -`.
    Man,
}

/// The shells `leet completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Write `shell`'s completion script for the whole command line to `out`.
///
/// # Errors
/// Only `out`'s write errors.
pub fn write_completions(shell: Shell, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory as _;
    use clap_complete::{generate, shells};
    let mut cmd = Cli::command();
    // Generated into a buffer: `generate` panics where `out` fails.
    let mut buf = Vec::new();
    match shell {
        Shell::Bash => generate(shells::Bash, &mut cmd, "leet", &mut buf),
        Shell::Zsh => generate(shells::Zsh, &mut cmd, "leet", &mut buf),
        Shell::Fish => generate(shells::Fish, &mut cmd, "leet", &mut buf),
    }
    out.write_all(&buf)
}

/// Write the man page (roff) to `out`: leet(1), with a section per subcommand.
///
/// # Errors
/// Only `out`'s write errors.
pub fn write_man(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory as _;
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = sub.get_name();
        writeln!(out, ".SH \"LEET {}\"", name.to_uppercase())?;
        let sub = sub.clone().bin_name(format!("leet {name}"));
        let sub_man = clap_mangen::Man::new(sub);
        sub_man.render_synopsis_section(out)?;
        sub_man.render_description_section(out)?;
        sub_man.render_options_section(out)?;
    }
    man.render_extra_section(out)?;
    man.render_version_section(out)
}

/// What to do next, for an error that `leet` (the viewer) ends with: where no run
/// was found, the ways to point it at one or to watch the host instead.
#[must_use]
pub fn next_step(e: &anyhow::Error) -> Option<&'static str> {
    use crate::source::file::SourceError;
    match e.downcast_ref::<SourceError>()? {
        SourceError::NoRun { .. } | SourceError::NoDefaultRun { .. } => Some(
            "leet: to go on, point leet at a run: `leet path/to/wandb/run-…` (a run directory \
             or its .wandb file), `leet path/to/project` (a wandb directory or the directory \
             holding it: every run in it), or set WANDB_DIR; or watch this host with \
             `leet --live`",
        ),
        _ => None,
    }
}

/// Options of the host sampler, shared by `leet --live`, `leet sample` and `leet serve`.
#[derive(Debug, Clone, Args)]
pub struct SamplerArgs {
    /// Sampling interval, e.g. 1s, 500ms, 2m, 1m30s (a plain number is seconds;
    /// 100ms to 24h).
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = sampler::parse_interval)]
    pub interval: Duration,
    /// Monitor this process and its descendants for cpu, proc.* and gpu.process.*
    /// (default: leet itself for `leet sample` and `leet serve`; none for --live, where
    /// a process is picked from the process table).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(i32::MAX)))]
    pub pid: Option<u32>,
    /// Path for disk.<path>.usage* (repeatable; default /).
    #[arg(long = "disk-path", value_name = "PATH")]
    pub disk_paths: Vec<PathBuf>,
    /// OpenMetrics endpoint NAME=URL (repeatable).
    #[arg(long = "openmetrics", value_name = "NAME=URL", value_parser = sampler::parse_endpoint)]
    pub openmetrics: Vec<(String, String)>,
    /// Keep only OpenMetrics metrics whose "<name>.<metric>" matches this regex.
    #[arg(long = "openmetrics-filter", value_name = "REGEX")]
    pub openmetrics_filter: Option<regex::Regex>,
    /// Read DCGM profiling counters (gpu.N.smActive, pipeTensorActive, pcieTxBytes, ...)
    /// from a running nv-hostengine on localhost:5555 through libdcgm.so.4
    /// ($LEET_DCGM_LIB overrides the library). Replaces NVML GPM on those GPUs.
    #[arg(long)]
    pub dcgm: bool,
    /// Scrape a dcgm-exporter endpoint (http://HOST:9400/metrics, or a Prometheus
    /// /api/v1/query?query=... URL) into gpu.N.* keys.
    #[arg(long = "dcgm-exporter", value_name = "URL")]
    pub dcgm_exporter: Option<String>,
}

impl SamplerArgs {
    #[must_use]
    pub fn options(&self) -> SamplerOptions {
        SamplerOptions {
            pid: self.pid,
            disk_paths: self.disk_paths.clone(),
            openmetrics: self.openmetrics.clone(),
            openmetrics_filter: self.openmetrics_filter.clone(),
            interval: self.interval,
            dcgm: self.dcgm,
            dcgm_exporter: self.dcgm_exporter.clone(),
            ..SamplerOptions::default()
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct SampleArgs {
    /// One JSON object per sample per line.
    #[arg(long)]
    pub json: bool,
    /// Stop after this many samples (default: run until interrupted).
    #[arg(long, value_parser = at_least_one)]
    pub count: Option<u64>,
    #[command(flatten)]
    pub sampler: SamplerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to serve /metrics on. The default is loopback only; any other address
    /// (0.0.0.0:9837 for every interface) must be given.
    #[arg(long, value_name = "HOST:PORT", default_value = crate::serve::DEFAULT_LISTEN)]
    pub listen: String,
    #[command(flatten)]
    pub sampler: SamplerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// A .wandb file, run directory, wandb or project directory (default: .).
    pub path: Option<PathBuf>,
    /// JSON output (one object per record; with --summary, one object).
    #[arg(long)]
    pub json: bool,
    /// Print the run's state, config, summary and console tail instead of records.
    #[arg(long)]
    pub summary: bool,
    /// Keep printing records as the file grows, until the exit record.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// With --follow: stop after this long without growth (e.g. 90s, 10m, 2h; a
    /// plain number is seconds; 0s to 30d).
    #[arg(long, value_name = "DURATION", value_parser = parse_idle_timeout, requires = "follow")]
    pub idle_timeout: Option<Duration>,
    /// Of a directory of several runs, the run with this id (its run directory is
    /// named ...-ID): its summary read as the viewer shows the run (a resumed run's
    /// segments, a distributed run's nodes together); its records listed are of
    /// its newest segment or primary node.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Print the records as text even on a terminal (where, without an output
    /// option, `leet inspect` opens the record browser; printing is what it does
    /// when standard output is a file or a pipe).
    #[arg(long)]
    pub print: bool,
    /// The record browser's key map, colour and mouse (on a terminal).
    #[command(flatten)]
    pub screen: ScreenArgs,
}

impl InspectArgs {
    /// Whether an option asks for printed output (JSON, the summary, following).
    #[must_use]
    pub fn prints(&self) -> bool {
        self.print || self.json || self.summary || self.follow || self.idle_timeout.is_some()
    }
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A .wandb file, run directory, wandb or project directory (default: .); of a
    /// directory of several runs, the latest (named on stderr, with how to pick another).
    pub path: Option<PathBuf>,
    /// Of a directory of several runs, the run with this id (its run directory is
    /// named ...-ID), exported as the viewer shows it: a resumed run's segments
    /// stitched, a distributed run's nodes together.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Output format: csv, jsonl or parquet (default: from the -o FILE's extension,
    /// .csv, .jsonl, .ndjson or .json, .parquet or .pq; else csv). A format that FILE's
    /// extension contradicts is an error (exit status 2).
    #[arg(long, value_parser = |s: &str| s.parse::<crate::inspect::export::Format>())]
    pub format: Option<crate::inspect::export::Format>,
    /// One row per point instead of one per step, with the columns
    /// _step,_runtime,_timestamp,key,value (with --system: _timestamp,key,value;
    /// with --smoothing, a smoothed column after value).
    #[arg(long)]
    pub long: bool,
    /// Only the metrics whose key matches this regex (unanchored). A regex that
    /// matches none of the run's metrics is an error (exit status 2), and nothing
    /// is written.
    #[arg(long, value_name = "REGEX")]
    pub metrics: Option<regex::Regex>,
    /// System metrics (stats records) instead of the history (_timestamp first).
    #[arg(long)]
    pub system: bool,
    /// Add a smoothed column per numeric metric: twema:P (0 to 1), ema:W (0 to 0.999), avg:N
    /// (1 to 1000000), gauss:SIGMA (1e-6 to 1e15 steps), none.
    #[arg(long, value_name = "KIND:PARAM", default_value = "none",
          value_parser = |s: &str| s.parse::<crate::store::smooth::Smoothing>())]
    pub smoothing: crate::store::smooth::Smoothing,
    /// Write to this file instead of stdout (`-`: stdout). It is written beside FILE
    /// and renamed into place when whole; a FILE that is the run itself, is named
    /// *.wandb, or lies inside a W&B run directory is refused (exit status 2).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A count of at least 1 (clap's own range check names `u64::MAX` as the bound).
fn at_least_one(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("it must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a whole number ({e})")),
    }
}

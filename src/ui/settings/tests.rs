use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::saved::apply_filter;
use super::*;
use crate::msg::Msg;
use crate::ui::{App, Cmd};

fn parse(text: &str) -> Result<Config, SettingsError> {
    Config::parse(Path::new("/home/u/.config/leet/config.toml"), text)
}

/// `msg` is `file:LINE:COL: …` where LINE and COL are where the key it names
/// is written in `text` (quoted or bare).
fn assert_at_key(text: &str, msg: &str, file: &str) {
    let file = file.trim_end_matches(": ");
    let rest = msg
        .strip_prefix(file)
        .expect(msg)
        .strip_prefix(':')
        .expect(msg);
    let mut it = rest.splitn(3, ':');
    let line: usize = it.next().unwrap().parse().expect(msg);
    let col: usize = it.next().unwrap().parse().expect(msg);
    let key = msg
        .split(" key '")
        .nth(1)
        .expect(msg)
        .split('\'')
        .next()
        .unwrap();
    let at: String = text
        .lines()
        .nth(line - 1)
        .expect(msg)
        .chars()
        .skip(col - 1)
        .collect();
    assert!(
        at.trim_start_matches('"').starts_with(key),
        "{msg}: at {at:?}"
    );
}

fn err(text: &str) -> String {
    match parse(text) {
        Ok(c) => panic!("accepted: {c:?}"),
        Err(e) => e.to_string(),
    }
}

fn changed() -> Config {
    let mut f = Config::default();
    let v = &mut f.viewer;
    v.rows = Some(2);
    v.columns = Some(3);
    v.guides = Guides::Lines;
    v.band = false;
    v.left_sidebar = Some(false);
    v.console = true;
    v.metrics_grid = false;
    v.sizes = PaneSizes {
        left: Some(40),
        right: None,
        console: Some(12),
    };
    v.y_scale
        .insert("train/loss \"quoted\"".into(), YScale::Log);
    v.system_y_scale
        .insert("CPU Utilization|%".into(), YScale::Heatmap);
    v.filters.metrics.pattern = r"loss|acc\d".into();
    v.filters.system.pattern = "gpu".into();
    v.filters.overview = FilterSetting {
        pattern: "l?_*".into(),
        glob: true,
    };
    v.x_axis_all = "rel".into();
    v.x_axis.insert("val/acc".into(), "metric:epoch".into());
    v.x_axis.insert("loss".into(), "wall".into());
    v.log_x = vec!["loss".into()];
    f.live.left_sidebar = Some(true);
    f.live.rows = Some(1);
    f.save = false;
    f
}

#[test]
fn the_written_file_reads_back_to_the_same_settings() {
    for f in [Config::default(), changed()] {
        let text = f.to_toml();
        assert_eq!(parse(&text).expect("parses"), f, "{text}");
    }
    // An empty file is the defaults; the live monitor's left sidebar is automatic.
    let d = parse("").expect("empty");
    assert_eq!(d, Config::default());
    assert_eq!(d.live.left_sidebar, None);
    assert!(!d.live.right_sidebar);
    assert_eq!(d.viewer.left_sidebar, Some(true));
    // A hand-written file gives only what it changes.
    let f = parse("[viewer]\nrows = 4\n[live.filters]\nsystem = { pattern = \"cpu\" }\n")
        .expect("parses");
    assert_eq!(f.viewer.rows, Some(4));
    assert_eq!(f.viewer.columns, None);
    assert_eq!(f.live.filters.system.pattern, "cpu");
    // Documented in itself.
    let text = Config::default().to_toml();
    assert!(text.starts_with("# leet settings"), "{text}");
    assert!(
        text.contains("metrics (/), overview (o), system (\\)"),
        "{text}"
    );
}

#[test]
fn invalid_settings_name_file_table_key_and_reason() {
    let file = "/home/u/.config/leet/config.toml: ";
    for (text, want) in [
        // unknown keys
        (
            "colour = true\n",
            "[top level] key 'colour': unknown key (expected save, viewer or live)",
        ),
        ("[viewer]\nrowz = 2\n", "[viewer] key 'rowz': unknown key"),
        (
            "[live.filters]\nconsole = { pattern = \"x\" }\n",
            "[live.filters] key 'console': unknown filter (expected metrics, overview or system)",
        ),
        (
            "[viewer.filters.metrics]\npatern = \"x\"\n",
            "[viewer.filters.metrics] key 'patern': unknown key (expected pattern or mode)",
        ),
        // wrong types
        (
            "[viewer]\nrows = \"2\"\n",
            "[viewer] key 'rows': expected an integer, got a string (\"2\")",
        ),
        (
            "[viewer]\nconsole = 1\n",
            "[viewer] key 'console': expected true or false, got an integer (1)",
        ),
        (
            "viewer = 3\n",
            "[top level] key 'viewer': expected a table, got an integer (3)",
        ),
        (
            "[viewer]\nleft_sidebar = \"yes\"\n",
            "[viewer] key 'left_sidebar': expected true, false or \"auto\", got \"yes\"",
        ),
        (
            "[viewer.filters]\nmetrics = { pattern = 3 }\n",
            "[viewer.filters.metrics] key 'pattern': expected a string, got an integer (3)",
        ),
        // out of range
        (
            "[viewer]\nrows = 12\n",
            "[viewer] key 'rows': must be 0 (auto) or 1 to 9, got 12",
        ),
        (
            "[live]\ncolumns = -1\n",
            "[live] key 'columns': must be 0 (auto) or 1 to 9, got -1",
        ),
        (
            "[viewer]\nleft_width = 3\n",
            "[viewer] key 'left_width': must be 0 (default) or 28 to 500, got 3",
        ),
        (
            "[viewer]\nconsole_height = 100000\n",
            "[viewer] key 'console_height': must be 0 (default) or 5 to 500, got 100000",
        ),
        (
            "[live]\nband = \"on\"\n",
            "[live] key 'band': expected true or false, got a string (\"on\")",
        ),
        (
            "[viewer]\nguides = \"stripes\"\n",
            "[viewer] key 'guides': unknown guides 'stripes' (expected off, dots or lines)",
        ),
        (
            "[viewer]\nx_axis_all = \"time\"\n",
            "[viewer] key 'x_axis_all': unknown x axis 'time' (expected step, rel, wall or metric:NAME)",
        ),
        (
            "[viewer.x_axis]\n\"loss\" = \"metric:\"\n",
            "[viewer.x_axis] key 'loss': unknown x axis 'metric:' (expected step, rel, wall or metric:NAME)",
        ),
        (
            "[viewer]\nlog_x = \"loss\"\n",
            "[viewer] key 'log_x': expected a list of names, got a string",
        ),
        (
            "[viewer.y_scale]\n\"loss\" = \"heatmap\"\n",
            "[viewer.y_scale] key 'loss': unknown y scale 'heatmap' (expected linear or log; the heatmap is for system charts)",
        ),
        (
            "[live.system_y_scale]\n\"CPU\" = \"log\"\n",
            "[live.system_y_scale] key 'CPU': a system chart is named \"<title>|<unit>\"",
        ),
        // bad filters
        (
            "[viewer.filters]\nmetrics = { pattern = \"loss(\" }\n",
            "[viewer.filters.metrics] key 'pattern': not a valid regex: unclosed group",
        ),
        (
            "[viewer.filters]\noverview = { pattern = \"lr\", mode = \"fuzzy\" }\n",
            "[viewer.filters.overview] key 'mode': unknown mode 'fuzzy' (expected regex or glob)",
        ),
    ] {
        let msg = err(text);
        assert_at_key(text, &msg, file);
        assert!(msg.contains(want), "{text}:\n{msg}\nwanted: {want}");
    }
    let long = format!(
        "[viewer.filters]\nsystem = {{ pattern = \"{}\" }}\n",
        "a".repeat(300)
    );
    assert!(err(&long).contains("key 'pattern': longer than 256 characters"));
    let msg = err("[viewer\nrows = 2\n");
    assert!(msg.contains("config.toml:1:8: not valid TOML: "), "{msg}");
}

#[test]
fn quoted_text_in_messages_is_sanitized_and_cut() {
    let msg = err("[viewer]\n\"\\u001b[2Jrows\\u0007\" = 1\n");
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(msg.contains("key 'rows': unknown key"), "{msg}");
    let e = Config::parse(
        Path::new("/tmp/\x1b]0;x\x07c.toml"),
        &format!("[viewer]\n\"{}\" = 1\n", "k".repeat(1000)),
    )
    .expect_err("unknown key");
    let msg = e.to_string();
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(msg.len() < 600, "{}", msg.len());
    assert!(msg.contains("k…'"), "{msg}");
}

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn app() -> App {
    let mut a = App::new(super::super::Options::default());
    a.update(Msg::Resize(160, 48));
    a
}

fn saves(fx: &super::super::Effect) -> Vec<(Option<PathBuf>, String, u64)> {
    fx.cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::SaveSettings {
                path,
                text,
                generation,
                ..
            } => Some((path.clone(), text.clone(), *generation)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_state_gives_the_settings_and_the_settings_the_state() {
    let f = changed();
    let mut a = app();
    a.apply_settings(&f.viewer);
    assert_eq!(a.settings(), f.viewer);
    assert_eq!(a.charts.grid.rows_setting, Some(2));
    assert!(!a.panels.left && a.panels.console && !a.panels.grid);
    assert_eq!(
        a.charts.grid.scales.metric("train/loss \"quoted\""),
        YScale::Log
    );
    assert!(a.charts.filter.matches("val/acc1") && !a.charts.filter.matches("lr"));
    assert!(!a.charts.filter.editing);
    // The overview filter is W&B's glob: `?` one character, `*` any run.
    assert!(a.panes.overview.filter.glob && !a.charts.filter.glob);
    assert!(a.panes.overview.filter.matches("lr_max") && !a.panes.overview.filter.matches("lr"));
    // The x axis: every chart by relative time, `val/acc` by `epoch`, `loss` by
    // wall time on a log x.
    use crate::ui::charts::xaxis::XAxis;
    assert_eq!(*a.charts.xaxis.of("lr"), XAxis::Relative);
    assert_eq!(*a.charts.xaxis.of("val/acc"), XAxis::Metric("epoch".into()));
    assert_eq!(*a.charts.xaxis.of("loss"), XAxis::Wall);
    assert!(a.charts.xaxis.log_x("loss") && !a.charts.xaxis.log_x("lr"));
    // And back to the defaults.
    a.apply_settings(&Settings::defaults(false));
    assert_eq!(a.settings(), Settings::defaults(false));
    assert!(!a.charts.filter.is_active());
    assert!(!a.panes.overview.filter.glob);
}

#[test]
fn a_change_is_saved_at_the_next_tick_once_and_a_revert_is_not() {
    let path = PathBuf::from("/cfg/leet/config.toml");
    let mut a = app();
    let mut file = Config::default();
    file.live.rows = Some(3);
    a.use_config(Some(path.clone()), file);
    // Nothing changed: nothing to save.
    assert!(saves(&a.update(Msg::Tick(1.0))).is_empty());
    assert_eq!(a.unsaved_settings(), None);
    // `r 2` then `g`: no write until the tick, then one, holding both.
    for m in [key('r'), key('2'), key('g')] {
        assert!(saves(&a.update(m)).is_empty());
    }
    assert!(a.unsaved_settings().is_some());
    let s = saves(&a.update(Msg::Tick(2.0)));
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].0.as_ref(), Some(&path));
    assert_eq!(s[0].2, 1);
    let saved = Config::parse(&path, &s[0].1).expect("parses");
    assert_eq!(saved.viewer.rows, Some(2));
    assert_eq!(saved.viewer.guides, Guides::Dots);
    // The live monitor's settings are written back as loaded.
    assert_eq!(saved.live.rows, Some(3));
    assert!(saves(&a.update(Msg::Tick(3.0))).is_empty());
    // Until the worker says it is written, a quit would write it again.
    assert!(a.unsaved_settings().is_some());
    a.update(Msg::SettingsWritten {
        generation: 1,
        error: None,
    });
    assert_eq!(a.unsaved_settings(), None);
    // Changed and changed back before the tick: nothing to write.
    a.update(key('g'));
    a.update(key('g'));
    a.update(key('g'));
    assert_eq!(a.charts.grid.guides, Guides::Dots);
    assert!(saves(&a.update(Msg::Tick(4.0))).is_empty());
    // Unsaved at quit: numbered after the last save.
    a.update(key('['));
    let Some(Cmd::SaveSettings {
        text, generation, ..
    }) = a.unsaved_settings()
    else {
        panic!("unsaved");
    };
    assert_eq!(generation, 2);
    assert_eq!(
        Config::parse(&path, &text)
            .expect("parses")
            .viewer
            .left_sidebar,
        Some(false)
    );
}

#[test]
fn without_a_file_or_with_save_false_nothing_is_saved() {
    let mut a = app();
    a.update(key('g'));
    assert!(saves(&a.update(Msg::Tick(1.0))).is_empty());
    assert_eq!(a.unsaved_settings(), None);
    let mut a = app();
    let file = Config {
        save: false,
        ..Config::default()
    };
    a.use_config(Some(PathBuf::from("/cfg/config.toml")), file);
    a.update(key('g'));
    assert!(saves(&a.update(Msg::Tick(1.0))).is_empty());
    assert_eq!(a.unsaved_settings(), None);
}

#[test]
fn a_pattern_that_does_not_compile_in_its_mode_is_never_saved() {
    use crossterm::event::KeyCode::{Enter, Tab};
    let press = |c| Msg::Key(KeyEvent::new(c, KeyModifiers::NONE));
    let path = PathBuf::from("/cfg/leet/config.toml");
    let mut a = app();
    a.use_config(Some(path.clone()), Config::default());
    // A glob `lo`; then `[` typed (a glob) and Tab to regex, where it is none.
    for m in [key('/'), press(Tab), key('l'), key('o'), press(Enter)] {
        a.update(m);
    }
    for m in [key('/'), key('['), press(Tab)] {
        a.update(m);
    }
    // While the prompt is open, what is kept is the filter before it.
    let filter = &a.settings().filters.metrics;
    assert_eq!((filter.pattern.as_str(), filter.glob), ("lo", true));
    let s = saves(&a.update(Msg::Tick(1.0)));
    for (_, text, _) in &s {
        Config::parse(&path, text).expect("what is saved loads back");
    }
    // Enter refuses the regex: the prompt stays open with its error.
    a.update(press(Enter));
    assert!(a.charts.filter.editing && a.charts.filter.error.is_some());
    let filter = &a.settings().filters.metrics;
    assert_eq!((filter.pattern.as_str(), filter.glob), ("lo", true));
}

#[test]
fn a_project_of_any_path_reads_back_as_the_same_project() {
    use std::os::unix::ffi::OsStrExt as _;
    let file = Path::new("/cfg/config.toml");
    let mut own = Settings::defaults(false);
    own.y_scale.insert("acc".into(), YScale::Log);
    // A newline, quotes, a backslash, control characters; bytes not UTF-8 (named
    // by their lossy text, the same each time the directory is opened).
    for d in [
        PathBuf::from("/tmp/x/weird/new\nline/wandb"),
        PathBuf::from("/tmp/'q' \"d\" b\\s\u{1}\u{7f}\t/wandb"),
        PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/bad\xff\xfe/wandb")),
    ] {
        let mut cfg = Config::default();
        cfg.set_viewer_in(&d, own.clone());
        let text = cfg.to_toml();
        let back = Config::parse(file, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.viewer_in(&d), own, "{d:?}");
        assert_eq!(back, cfg);
    }
}

#[test]
fn without_a_place_for_the_file_a_change_is_said_unsaved_once_and_on_quit() {
    let mut a = app();
    a.use_config(None, Config::default());
    a.settings_without_a_file();
    // Nothing changed: nothing said.
    assert!(saves(&a.update(Msg::Tick(1.0))).is_empty());
    assert_eq!(a.unsaved_settings(), None);
    a.update(key('g'));
    let s = saves(&a.update(Msg::Tick(2.0)));
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].0, None);
    let why = "no settings file: neither $XDG_CONFIG_HOME (absolute) nor $HOME is set";
    let fx = a.update(Msg::SettingsWritten {
        generation: s[0].2,
        error: Some(why.into()),
    });
    assert!(fx.redraw);
    assert_eq!(
        a.settings_note(),
        Some(format!("settings not saved: {why}").as_str())
    );
    // Said once: the next change fails unsaid until quit, which says it again.
    a.update(key('~'));
    a.update(key('g'));
    let s = saves(&a.update(Msg::Tick(3.0)));
    assert!(
        !a.update(Msg::SettingsWritten {
            generation: s[0].2,
            error: Some(why.into()),
        })
        .redraw
    );
    assert!(matches!(
        a.unsaved_settings(),
        Some(Cmd::SaveSettings { path: None, .. })
    ));
    // With save = false in a file given: never.
    let mut b = app();
    let off = Config {
        save: false,
        ..Config::default()
    };
    b.use_config(None, off);
    b.settings_without_a_file();
    b.update(key('g'));
    assert!(saves(&b.update(Msg::Tick(1.0))).is_empty());
}

#[test]
fn the_live_monitor_uses_its_own_table() {
    let mut file = Config::default();
    file.live.left_sidebar = Some(false);
    file.live.rows = Some(2);
    file.viewer.rows = Some(4);
    let mut a = App::live(super::super::Options::default(), 60.0);
    a.use_config(Some(PathBuf::from("/c.toml")), file.clone());
    a.update(Msg::Resize(200, 50));
    assert_eq!(a.charts.grid.rows_setting, Some(2));
    assert!(!a.panels.left && !a.panels.auto_left);
    assert!(a.screen.areas.left.is_none());
    assert_eq!(a.settings_config(), file);
    // "auto": shown on a wide screen, as without settings.
    file.live.left_sidebar = None;
    let mut a = App::live(super::super::Options::default(), 60.0);
    a.use_config(None, file);
    a.update(Msg::Resize(200, 50));
    assert!(a.panels.auto_left && a.screen.areas.left.is_some());
}

#[test]
fn y_scales_are_settings_by_key_and_stay_when_another_run_opens() {
    let mut a = app();
    a.charts.grid.scales.set_metric("loss", YScale::Log);
    a.ws(|r, cx| r.open_run(cx, PathBuf::from("/runs/other"), false));
    // Before: every chart went back to linear, and the next save dropped them.
    assert_eq!(a.charts.grid.scales.metric("loss"), YScale::Log);
    assert_eq!(a.settings().y_scale.get("loss"), Some(&YScale::Log));
}

#[test]
fn the_palette_is_read_and_written_by_name_and_a_bad_one_refused() {
    for p in Palette::ALL {
        let f = parse(&format!(
            "[viewer]\npalette = \"{p}\"\n[live]\npalette = \"{p}\"\n"
        ))
        .expect("parses");
        assert_eq!((f.viewer.palette, f.live.palette), (p, p));
        let text = f.to_toml();
        assert_eq!(text.matches(&format!("\npalette = \"{p}\"\n")).count(), 2);
        assert_eq!(parse(&text).expect("reads back"), f, "{text}");
    }
    assert_eq!(parse("").expect("empty").viewer.palette, Palette::Default);
    assert!(Config::default().to_toml().contains("\"okabe-ito\""));
    let file = "/home/u/.config/leet/config.toml: ";
    for (text, want) in [
        (
            "[viewer]\npalette = \"solarized\"\n",
            "[viewer] key 'palette': unknown palette 'solarized' (expected default, \
             wandb-vibe-10, okabe-ito, tol-bright or light)",
        ),
        (
            "[live]\npalette = 2\n",
            "[live] key 'palette': expected a string, got an integer (2)",
        ),
        (
            "[viewer]\npalette = \"Okabe-Ito\"\n",
            "[viewer] key 'palette': unknown palette 'Okabe-Ito'",
        ),
    ] {
        let msg = err(text);
        assert_at_key(text, &msg, file);
        assert!(msg.contains(want), "{text}:\n{msg}\nwanted: {want}");
    }
}

#[test]
fn the_palette_comes_from_the_file_and_p_changes_and_saves_it() {
    let mut a = app();
    let mut file = Config::default();
    file.viewer.palette = Palette::TolBright;
    a.use_config(Some(PathBuf::from("/cfg/leet/config.toml")), file);
    assert_eq!(a.screen.palette, Palette::TolBright);
    a.update(key('P'));
    assert_eq!(a.screen.palette, Palette::Light);
    assert_eq!(a.settings().palette, Palette::Light);
    let saved = saves(&a.update(Msg::Tick(10.0)));
    let [(_, text, _)] = saved.as_slice() else {
        panic!("one save at the tick: {saved:?}")
    };
    assert!(text.contains("\n[viewer]\n") && text.contains("\npalette = \"light\"\n"));
    // The live monitor's table is written back as it was loaded.
    assert_eq!(text.matches("palette = \"default\"").count(), 1, "{text}");
    // Around to the first again.
    a.update(key('P'));
    assert_eq!(a.screen.palette, Palette::Default);
}

fn dir(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// `changed()` with its per-directory settings in `/p/a/wandb`'s table.
fn in_projects() -> Config {
    in_projects_at(&changed(), "/p/a/wandb")
}

#[test]
fn a_project_table_holds_only_per_directory_settings_and_reads_back() {
    let f = in_projects();
    assert!(!f.viewer.has_directory_settings());
    let text = f.to_toml();
    assert_eq!(parse(&text).expect("parses"), f, "{text}");
    // What names a metric, and the metrics and overview filters, in the project's
    // table; the layout, the system charts and their filter in [viewer].
    let body = text.split_once("\nsave = ").expect("after the header").1;
    let (viewer, project) = body
        .split_once("\n[viewer.projects.\"/p/a/wandb\"]\n")
        .expect("a project table");
    assert!(viewer.contains("\n[viewer]\nrows = 2\n"), "{text}");
    assert!(viewer.contains("\"CPU Utilization|%\" = \"heatmap\""));
    assert!(viewer.contains("\n[viewer.filters]\nsystem = { pattern = \"gpu\""));
    for absent in [
        "[viewer.y_scale]",
        "x_axis_all",
        "log_x",
        "metrics = ",
        "overview = ",
    ] {
        assert!(!viewer.contains(absent), "{absent}: {text}");
    }
    let project = project.split("\n[live]").next().expect("project");
    assert_eq!(
        project,
        r#"x_axis_all = "rel"
log_x = ["loss"]

[viewer.projects."/p/a/wandb".y_scale]
'train/loss "quoted"' = "log"

[viewer.projects."/p/a/wandb".x_axis]
"loss" = "wall"
"val/acc" = "metric:epoch"

[viewer.projects."/p/a/wandb".filters]
metrics = { pattern = 'loss|acc\d', mode = "regex" }
overview = { pattern = "l?_*", mode = "glob" }
"#,
    );
    // The defaults: no project, no per-directory key in [viewer]; [live] whole.
    let text = Config::default().to_toml();
    let body = text.split_once("\nsave = ").expect("after the header").1;
    assert!(!body.contains("[viewer.y_scale]") && !body.contains("projects"));
    assert!(text.contains("[live.y_scale]") && text.contains("\nlog_x = []\n"));
    // A directory's settings: [viewer]'s global ones with its own.
    let a = f.viewer_in(&dir("/p/a/wandb"));
    assert_eq!(a, changed().viewer);
    let b = f.viewer_in(&dir("/p/b/wandb"));
    assert_eq!(b, f.viewer);
    assert!(b.y_scale.is_empty() && b.filters.metrics.pattern.is_empty());
    assert_eq!(b.filters.system.pattern, "gpu");
}

#[test]
fn invalid_project_tables_name_the_project_the_key_and_the_reason() {
    for (text, want) in [
        (
            "[viewer.projects.\"/p\"]\nrows = 2\n",
            "[viewer.projects.\"/p\"] key 'rows': unknown key (expected smoothing_all, \
             collapsed_sections, x_axis_all, log_x, y_scale, smoothing, x_axis, filters; \
             the other settings are the same for every project, in [viewer])",
        ),
        (
            "[viewer.projects.wandb]\nlog_x = []\n",
            "[viewer.projects] key 'wandb': a project is named by its wandb directory's \
             absolute path",
        ),
        (
            "[viewer]\nprojects = 1\n",
            "[viewer] key 'projects': expected a table, got an integer (1)",
        ),
        (
            "[viewer.projects]\n\"/p\" = \"log\"\n",
            "[viewer.projects] key '/p': expected a table, got a string",
        ),
        (
            "[viewer.projects.\"/p\".filters]\nsystem = { pattern = \"gpu\" }\n",
            "[viewer.projects.\"/p\".filters] key 'system': the system filter is the same \
             for every project, in [viewer.filters]",
        ),
        (
            "[viewer.projects.\"/p\".y_scale]\n\"loss\" = \"heatmap\"\n",
            "[viewer.projects.\"/p\".y_scale] key 'loss': unknown y scale 'heatmap'",
        ),
        (
            "[viewer.projects.\"/p.v2/wandb\".smoothing]\n\"loss\" = \"ema:7\"\n",
            "[viewer.projects.\"/p.v2/wandb\".smoothing] key 'loss': ema needs",
        ),
        (
            "[viewer.projects.\"/p\".filters]\nmetrics = { pattern = \"(\" }\n",
            "[viewer.projects.\"/p\".filters.metrics] key 'pattern': not a valid regex",
        ),
        (
            "[live.projects.\"/p\"]\n",
            "[live] key 'projects': unknown key (expected rows",
        ),
    ] {
        let msg = err(text);
        assert!(msg.contains(want), "{text}:\n{msg}\nwanted: {want}");
    }
    // The keys `[viewer]` takes are listed with its per-project tables; `[live]`
    // has none.
    assert!(err("[viewer]\ncolour = 1\n").contains("log_x, projects or palette)"));
    assert!(err("[live]\ncolour = 1\n").contains("log_x or palette)"));
}

#[test]
fn per_directory_settings_stay_in_their_directory() {
    let path = dir("/cfg/leet/config.toml");
    let mut a = app();
    a.use_config_in(Some(path.clone()), Config::default(), &dir("/p/a/wandb"));
    a.charts.grid.scales.set_metric("acc", YScale::Log);
    apply_filter(
        &mut a.charts.filter,
        &FilterSetting {
            pattern: "acc".into(),
            glob: false,
        },
    );
    a.update(key('r'));
    a.update(key('2'));
    let s = saves(&a.update(Msg::Tick(1.0)));
    assert_eq!(s.len(), 1);
    let saved = Config::parse(&path, &s[0].1).expect("parses");
    assert!(saved.viewer.y_scale.is_empty(), "{}", s[0].1);
    assert_eq!(saved.viewer.rows, Some(2));
    let own = &saved.projects["/p/a/wandb"];
    assert_eq!(own.y_scale.get("acc"), Some(&YScale::Log));
    assert_eq!(own.filters.metrics.pattern, "acc");
    // Another project: the layout, not the y scale nor the filter.
    let mut b = app();
    b.use_config_in(Some(path.clone()), saved.clone(), &dir("/p/b/wandb"));
    assert_eq!(b.charts.grid.scales.metric("acc"), YScale::Linear);
    assert!(!b.charts.filter.is_active());
    assert_eq!(b.charts.grid.rows_setting, Some(2));
    assert_eq!(b.settings_note(), None);
    // Nothing changed there: nothing written, no empty table for it.
    assert_eq!(b.unsaved_settings(), None);
    assert_eq!(b.settings_config(), saved);
    // Its own y scale joins the file beside A's.
    b.charts.grid.scales.set_metric("loss", YScale::Log);
    let both = b.settings_config();
    assert_eq!(both.projects["/p/a/wandb"], *own);
    assert_eq!(
        both.projects["/p/b/wandb"]
            .y_scale
            .keys()
            .collect::<Vec<_>>(),
        ["loss"]
    );
    // Back to linear: its table goes.
    b.charts.grid.scales.set_metric("loss", YScale::Linear);
    assert_eq!(b.settings_config(), saved);
    // A again: as it was left.
    let mut again = app();
    again.use_config_in(None, saved, &dir("/p/a/wandb"));
    assert_eq!(again.charts.grid.scales.metric("acc"), YScale::Log);
    assert!(again.charts.filter.matches("acc") && !again.charts.filter.matches("lr"));
}

#[test]
fn an_older_file_s_settings_move_into_the_first_directory_opened() {
    let path = dir("/cfg/leet/config.toml");
    let old = changed();
    let old = Config { save: true, ..old };
    let mut a = app();
    a.use_config_in(Some(path.clone()), old.clone(), &dir("/p/a/wandb"));
    // Drawn as before in this directory, and said once.
    assert_eq!(a.settings(), old.viewer);
    let note = a.settings_note().expect("a note");
    assert!(note.starts_with("settings: y scales, smoothing"), "{note}");
    // Written back at the next tick, in the new layout.
    let s = saves(&a.update(Msg::Tick(1.0)));
    assert_eq!(s.len(), 1, "moved, not saved");
    let saved = Config::parse(&path, &s[0].1).expect("parses");
    assert_eq!(saved, in_projects_at(&old, "/p/a/wandb"));
    assert!(!s[0].1.contains("[viewer.y_scale]"), "{}", s[0].1);
    // The mouse passing by leaves the note; a key ends it (and redraws).
    let moved = Msg::Mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Moved,
        column: 3,
        row: 3,
        modifiers: KeyModifiers::NONE,
    });
    a.update(moved);
    assert!(a.settings_note().is_some());
    assert!(a.update(key('~')).redraw);
    assert_eq!(a.settings_note(), None);
    // The next directory starts from the defaults, with the same layout.
    let mut b = app();
    b.use_config_in(Some(path.clone()), saved, &dir("/p/b/wandb"));
    assert_eq!(b.settings(), old.viewer.global_only());
    assert_eq!(b.settings_note(), None);
    // Without saving (save = false): moved for this session, the file as written.
    let mut c = app();
    let kept = Config {
        save: false,
        ..old.clone()
    };
    c.use_config_in(Some(path.clone()), kept, &dir("/p/c/wandb"));
    assert_eq!(c.settings(), old.viewer);
    assert!(c.settings_note().is_some());
    assert!(saves(&c.update(Msg::Tick(1.0))).is_empty());
    // A directory with a table of its own keeps it; the older settings wait in
    // [viewer] for a directory without one.
    let mut mixed = old.clone();
    let mut own = Settings::defaults(false);
    own.y_scale.insert("lr".into(), YScale::Log);
    mixed.projects.insert("/p/d/wandb".into(), own.clone());
    let mut d = app();
    d.use_config_in(Some(path), mixed.clone(), &dir("/p/d/wandb"));
    assert_eq!(d.settings(), old.viewer.global_only().with_directory(&own));
    assert_eq!(d.settings_note(), None);
    assert_eq!(d.unsaved_settings(), None);
    assert_eq!(d.settings_config(), mixed);
    // The live monitor: [live] as it is, whatever the directory.
    let mut live = App::live(super::super::Options::default(), 60.0);
    live.use_config_in(None, old.clone(), &dir("/p/a/wandb"));
    assert_eq!(live.settings(), old.live);
    assert_eq!(live.settings_config(), old);
    // A relative name is no directory (it would not load back).
    let mut rel = app();
    rel.use_config_in(Some(dir("/c.toml")), old.clone(), &dir("wandb"));
    assert_eq!(rel.settings_config(), old);
}

/// `f` with its per-directory settings moved into `dir`'s table.
fn in_projects_at(f: &Config, dir: &str) -> Config {
    let mut f = f.clone();
    f.projects.insert(dir.into(), f.viewer.directory_part());
    f.viewer = f.viewer.global_only();
    f
}

impl Settings {
    fn global_only(&self) -> Settings {
        self.clone().with_directory(&Settings::defaults(false))
    }
}

/// `assets/config.schema.json` (for editors) names exactly the keys the parser
/// reads, in every table, and its defaults are what a file without them gives.
#[test]
fn the_published_schema_names_every_key_the_parser_reads() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../assets/config.schema.json")).unwrap();
    let props = |v: &serde_json::Value| -> std::collections::BTreeSet<String> {
        v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let keys =
        |t: &toml::Table| -> std::collections::BTreeSet<String> { t.keys().cloned().collect() };
    // A file with every table written: directory settings in the viewer and a project.
    let mut cfg = Config::default();
    cfg.viewer.y_scale.insert("loss".into(), YScale::Log);
    let mut project = Settings::defaults(false);
    project.smoothing_all = "ema:0.6".into();
    project.collapsed_sections = vec!["train".into()];
    project.x_axis_all = "wall".into();
    project.log_x = vec!["loss".into()];
    project.y_scale.insert("loss".into(), YScale::Log);
    project.smoothing.insert("loss".into(), "avg:10".into());
    project.x_axis.insert("loss".into(), "rel".into());
    project.filters.metrics.pattern = "loss".into();
    project.filters.overview.pattern = "lr".into();
    cfg.projects.insert("/data/wandb".into(), project);
    let text = cfg.to_toml();
    assert_eq!(parse(&text).unwrap(), cfg);
    let file: toml::Table = text.parse().unwrap();
    assert_eq!(keys(&file), props(&schema));
    for mode in ["viewer", "live"] {
        let t = file[mode].as_table().unwrap();
        let s = &schema["properties"][mode];
        assert_eq!(keys(t), props(s), "[{mode}]");
        let filters = t["filters"].as_table().unwrap();
        assert_eq!(
            keys(filters),
            props(&s["properties"]["filters"]),
            "[{mode}.filters]"
        );
        // The schema's defaults are the parser's.
        let mut defaults = toml::Table::new();
        for (k, v) in s["properties"].as_object().unwrap() {
            if let Some(d) = v.get("default") {
                defaults.insert(k.clone(), serde_json::from_value(d.clone()).unwrap());
            }
        }
        let mut wrapped = toml::Table::new();
        wrapped.insert(mode.into(), toml::Value::Table(defaults));
        let read = parse(&toml::to_string(&wrapped).unwrap()).unwrap();
        let want = Config::default();
        let (got, want) = if mode == "viewer" {
            (read.viewer, want.viewer)
        } else {
            (read.live, want.live)
        };
        assert_eq!(got, want, "[{mode}] defaults");
    }
    let projects = &file["viewer"]["projects"].as_table().unwrap()["/data/wandb"];
    let entry = &schema["properties"]["viewer"]["properties"]["projects"]["additionalProperties"];
    assert_eq!(keys(projects.as_table().unwrap()), props(entry));
    let filters = projects["filters"].as_table().unwrap();
    assert_eq!(keys(filters), props(&entry["properties"]["filters"]));
}

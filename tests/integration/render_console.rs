//! The console pane draws the colours and attributes of the run's SGR sequences
//! (`ESC [ … m`) and nothing else of what the run printed: the cursor moves of
//! progress bars are applied to the text, other escape sequences are gone, the
//! rendered cells hold no escape, `NO_COLOR` draws the attributes
//! only, RGB becomes the nearest of 256 where the terminal has no true colour, and
//! every plain-text user (the filter, `--summary --json`) sees the text without
//! styles. The snapshot shows the pane's text, then a map of each cell's
//! foreground, background and attributes, since a text snapshot shows none.

use leet::decode::leveldb::Writer;
use leet::decode::pb;
use leet::msg::{Msg, RunBatch};
use leet::ui::{App, Options};
use prost::Message as _;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};

/// An app whose run holds only console output (stdout writes, then stderr ones),
/// the console pane shown (`4`), drawn in colour or not.
fn console_app(stdout: &[&str], stderr: &[&str], color: bool, w: u16, h: u16) -> App {
    let mut wr = Writer::new();
    let writes = stdout
        .iter()
        .map(|l| (1, l))
        .chain(stderr.iter().map(|l| (2, l)));
    for (num, (output_type, line)) in (1..).zip(writes) {
        let r = pb::Record {
            num,
            record_type: Some(pb::record::RecordType::OutputRaw(pb::OutputRawRecord {
                output_type,
                line: (*line).into(),
                ..Default::default()
            })),
            ..Default::default()
        };
        wr.append(&r.encode_to_vec());
    }
    let mut batch = RunBatch::default();
    leet::decode::leveldb::scan(wr.bytes(), 0, |f| {
        if let leet::decode::leveldb::Frame::Record { offset, payload } = f {
            batch.records.push((offset, payload.into_owned()));
        }
    })
    .unwrap();
    let mut app = App::new(Options {
        color,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Run(batch));
    app.update(Msg::char('4'));
    app
}

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    leet::ui::render::render_buffer(&mut buf, area, app);
    buf
}

/// The console pane's area (the console is shown).
fn pane(app: &App) -> Rect {
    app.screen.areas.console.expect("the console pane is shown")
}

/// The text of row `y` of `area`, trailing spaces trimmed.
fn row(buf: &Buffer, area: Rect, y: u16) -> String {
    let s: String = (area.left()..area.right())
        .map(|x| buf[(x, y)].symbol())
        .collect();
    s.trim_end().to_owned()
}

/// The cell where `needle` starts on a row of `area`.
fn find(buf: &Buffer, area: Rect, needle: &str) -> (u16, u16) {
    for y in area.top()..area.bottom() {
        let r: Vec<String> = (area.left()..area.right())
            .map(|x| buf[(x, y)].symbol().to_owned())
            .collect();
        let text = r.concat();
        if let Some(byte) = text.find(needle) {
            // Every cell here is one byte wide (ASCII) up to the needle.
            let col = u16::try_from(text[..byte].chars().count()).unwrap();
            return (area.left() + col, y);
        }
    }
    panic!("{needle:?} is not drawn");
}

/// A cell's colour or attributes, by name (`None`: the terminal's own).
type Pick = fn(&ratatui::buffer::Cell) -> Option<String>;

/// Letters naming the styles of a shot, in order of first use.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// `area`'s text, then its foreground, background and attribute maps: `.` the
/// terminal's own (or none), a letter per colour or set of attributes, named at
/// the end.
fn shot(buf: &Buffer, area: Rect) -> String {
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        out.push_str(&row(buf, area, y));
        out.push('\n');
    }
    let mut legend: Vec<String> = Vec::new();
    let maps: [(&str, Pick); 3] = [
        ("foreground", |c| {
            (c.fg != Color::Reset).then(|| format!("{:?}", c.fg))
        }),
        ("background", |c| {
            (c.bg != Color::Reset).then(|| format!("{:?}", c.bg))
        }),
        ("attributes", |c| {
            (!c.modifier.is_empty()).then(|| format!("{:?}", c.modifier))
        }),
    ];
    for (title, pick) in maps {
        out.push_str(&format!("-- {title} --\n"));
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                let Some(name) = pick(&buf[(x, y)]) else {
                    out.push('.');
                    continue;
                };
                let i = legend.iter().position(|l| *l == name).unwrap_or_else(|| {
                    legend.push(name);
                    legend.len() - 1
                });
                out.push(char::from(LETTERS[i]));
            }
            out.push('\n');
        }
    }
    out.push_str("-- styles --\n");
    for (i, name) in legend.iter().enumerate() {
        out.push_str(&format!("{} = {name}\n", char::from(LETTERS[i])));
    }
    out
}

/// What training scripts print: a logger's levels, a progress bar redrawn with
/// `\r`, rich's 256 and RGB colours, a colour that runs on into the next line
/// until reset, a fragment cut mid-sequence, and attributes.
const COLOURED: &[&str] = &[
    "\x1b[32mINFO\x1b[0m  starting epoch 1\n",
    "\x1b[1;31mERROR\x1b[0m loss is \x1b[4mnan\x1b[24m at step 7\n",
    "train:  10%|\x1b[34m#         \x1b[0m| 1/10\rtrain: 100%|\x1b[32m##########\x1b[0m| 10/10\n",
    "\x1b[38;5;208morange 256\x1b[39m and \x1b[38;2;255;0;128mpink rgb\x1b[0m\n",
    "\x1b[33mthis warning runs on\n",
    "into the next line\x1b[0m then stops\n",
    "split \x1b[4",
    "4mon a blue background\x1b[49m, \x1b[1mbold\x1b[22m, \x1b[2mdim\x1b[22m, \x1b[3mitalic\x1b[23m, \x1b[7mreversed\x1b[27m\n",
];

/// The coloured lines (and a coloured stderr line) drawn at 120×30.
fn coloured() -> (App, Buffer) {
    let app = console_app(
        COLOURED,
        &["\x1b[36mcyan on stderr\x1b[0m own style\n"],
        true,
        120,
        30,
    );
    let buf = draw(&app, 120, 30);
    (app, buf)
}

#[test]
fn coloured_console_snapshot() {
    let (app, buf) = coloured();
    insta::assert_snapshot!("console_120x30_sgr", shot(&buf, pane(&app)));
}

#[test]
fn sgr_cells_take_the_run_colours_over_the_stream_style() {
    let (app, buf) = coloured();
    let area = pane(&app);
    let at = |needle: &str| buf[find(&buf, area, needle)].clone();
    assert_eq!(at("INFO").fg, Color::Green);
    assert_eq!(at("starting").fg, Color::Reset);
    let error = at("ERROR");
    assert_eq!(error.fg, Color::Red);
    assert!(error.modifier.contains(Modifier::BOLD));
    assert!(at("nan").modifier.contains(Modifier::UNDERLINED));
    assert!(!at("at step").modifier.contains(Modifier::UNDERLINED));
    assert_eq!(at("##########").fg, Color::Green);
    assert_eq!(at("orange").fg, Color::Indexed(208));
    assert_eq!(at("pink").fg, Color::Rgb(255, 0, 128));
    assert_eq!(
        at("into the next").fg,
        Color::Yellow,
        "the pen carries over"
    );
    assert_eq!(at("then stops").fg, Color::Reset);
    assert_eq!(
        at("on a blue").bg,
        Color::Blue,
        "the split sequence applies"
    );
    assert!(at("bold").modifier.contains(Modifier::BOLD));
    assert!(at("dim").modifier.contains(Modifier::DIM));
    assert!(at("italic").modifier.contains(Modifier::ITALIC));
    assert!(at("reversed").modifier.contains(Modifier::REVERSED));
    // Stderr keeps its warning style where the run set none, and its own colour
    // where it did (still bold, from the stream's style).
    let cyan = at("cyan on stderr");
    assert_eq!(cyan.fg, Color::Cyan);
    assert!(cyan.modifier.contains(Modifier::BOLD));
    assert_ne!(at("own style").fg, Color::Cyan);
    assert!(at("own style").modifier.contains(Modifier::BOLD));
}

#[test]
fn sgr_next_to_other_sequences_keeps_only_the_colour() {
    let (w, h) = (120, 30);
    let line = "\x1b]52;c;ZXZpbA==\x07\x1b[31mred\x1b[0m\x1b[2;5H\x1b]0;title\x07 \x1b[?25l\
                \x1bPq#0;2;0;0;0\x1b\\\x1b[>4;2mplain\x1b[2J \u{9b}32mc1 green\u{9b}0m\n";
    let app = console_app(&[line], &[], true, w, h);
    let buf = draw(&app, w, h);
    let area = pane(&app);
    assert_eq!(buf[find(&buf, area, "red")].fg, Color::Red);
    assert_eq!(buf[find(&buf, area, "plain")].fg, Color::Reset);
    assert_eq!(buf[find(&buf, area, "c1 green")].fg, Color::Green);
    let all: String = buf
        .content
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(all.contains("red plain c1 green"), "{all}");
    for c in all.chars() {
        assert!(
            !c.is_control(),
            "control character {c:?} reached the screen"
        );
    }
    for gone in ["ZXZpbA", "title", "2;5H", "#0", ">4"] {
        assert!(!all.contains(gone), "{gone:?} was drawn");
    }
}

#[test]
fn no_color_draws_console_attributes_but_no_colours() {
    let (w, h) = (120, 30);
    let app = console_app(COLOURED, &[], false, w, h);
    let buf = draw(&app, w, h);
    assert!(buf
        .content
        .iter()
        .all(|c| c.fg == Color::Reset && c.bg == Color::Reset));
    let area = pane(&app);
    assert!(buf[find(&buf, area, "ERROR")]
        .modifier
        .contains(Modifier::BOLD));
    assert!(buf[find(&buf, area, "reversed")]
        .modifier
        .contains(Modifier::REVERSED));
}

#[test]
fn rgb_console_colours_are_drawn_as_256_without_true_colour() {
    let (w, h) = (120, 30);
    let mut app = console_app(COLOURED, &[], true, w, h);
    app.screen.true_color = false;
    let buf = draw(&app, w, h);
    let area = pane(&app);
    // Pink (255, 0, 128) is the cube's (5, 0, 2): 16 + 36·5 + 2.
    assert_eq!(buf[find(&buf, area, "pink")].fg, Color::Indexed(198));
    assert_eq!(buf[find(&buf, area, "orange")].fg, Color::Indexed(208));
    assert_eq!(buf[find(&buf, area, "INFO")].fg, Color::Green);
}

#[test]
fn console_text_stays_plain_for_the_filter_and_inspect() {
    let (w, h) = (120, 30);
    let mut app = console_app(COLOURED, &[], true, w, h);
    let json = leet::inspect::summary_json_at(std::path::Path::new("x"), &app.shown.run, 0.0);
    let lines: Vec<&str> = json["console"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "INFO  starting epoch 1",
            "ERROR loss is nan at step 7",
            "train: 100%|##########| 10/10",
            "orange 256 and pink rgb",
            "this warning runs on",
            "into the next line then stops",
            "split on a blue background, bold, dim, italic, reversed",
        ]
    );
    // The filter matches across a style's edge, on the plain text.
    app.update(Msg::char('/'));
    for m in Msg::typed("ERROR loss") {
        app.update(m);
    }
    app.update(Msg::key(crossterm::event::KeyCode::Enter));
    let v = app.console_view();
    assert_eq!(v.len(), 1);
    assert_eq!(v.get(0).unwrap().text, "ERROR loss is nan at step 7");
}

#[test]
fn a_wrapped_line_keeps_its_colours_on_every_row() {
    let (w, h) = (80, 24);
    let line = format!(
        "\x1b[31m{}\x1b[0mtail \x1b[44m{}\x1b[0m\n",
        "R".repeat(100),
        "B".repeat(90)
    );
    let app = console_app(&[&line], &[], true, w, h);
    let buf = draw(&app, w, h);
    let area = pane(&app);
    let cells = |ch: &str| -> Vec<&ratatui::buffer::Cell> {
        (area.top()..area.bottom())
            .flat_map(|y| (area.left()..area.right()).map(move |x| (x, y)))
            .map(|p| &buf[p])
            .filter(|c| c.symbol() == ch)
            .collect()
    };
    let (r, b) = (cells("R"), cells("B"));
    assert_eq!((r.len(), b.len()), (100, 90), "every character is drawn");
    assert!(r.iter().all(|c| c.fg == Color::Red && c.bg == Color::Reset));
    assert!(b
        .iter()
        .all(|c| c.bg == Color::Blue && c.fg == Color::Reset));
    let (x, y) = find(&buf, area, "tail");
    assert!((x..x + 4).all(|x| buf[(x, y)].fg == Color::Reset));
}

#[test]
fn nested_progress_bars_are_drawn_as_the_terminal_showed_them() {
    // tqdm's outer bar and inner `leave=False` bar, as the W&B SDK records their
    // writes (`output_raw`, one record per write): the inner bar goes up a line
    // after each redraw, and is cleared at the end of each epoch.
    let (w, h) = (100, 30);
    let mut writes: Vec<String> = Vec::new();
    for epoch in 0..2 {
        // Every bar as wide as the screen line tqdm measured (17 columns here).
        writes.push(format!("\repoch {epoch}/2 |{:<5}|", "#".repeat(epoch * 5)));
        writes.push("\n".into());
        for b in 0..4 {
            writes.push(format!("\rbatch {b}/4 |{:<5}|", "#".repeat(b)));
            writes.push("\x1b[A".into());
            writes.push("\n".into());
        }
        writes.push(format!("\r{}", " ".repeat(17)));
        writes.push("\x1b[A".into());
        writes.push(format!("epoch {epoch} done"));
        writes.push("\n".into());
    }
    writes.push("\repoch 2/2 |##########|\n".into());
    let writes: Vec<&str> = writes.iter().map(String::as_str).collect();
    let app = console_app(&writes, &[], true, w, h);
    let buf = draw(&app, w, h);
    let area = pane(&app);
    let rows: Vec<String> = (area.top()..area.bottom())
        .map(|y| row(&buf, area, y))
        .filter(|r| !r.trim_matches([' ', '│']).is_empty())
        .collect();
    let text = rows.join("\n");
    assert!(text.contains("[3 lines]"), "{text}");
    for want in [
        "epoch 0/2 |     |epoch 0 done",
        "epoch 1/2 |#####|epoch 1 done",
        "epoch 2/2 |##########|",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(
        !text.contains("batch"),
        "the cleared inner bar is gone:\n{text}"
    );
}

/// Past the lines the console keeps, its title says how many older ones it no
/// longer has (they were dropped silently).
#[test]
fn the_title_says_how_many_older_lines_are_not_kept() {
    let mut app = console_app(&["first\n"], &[], false, 120, 40);
    let kept = leet::store::console::CONSOLE_LINES;
    let mut text = String::new();
    for i in 0..kept + 4 {
        text.push_str("line ");
        text.push_str(&i.to_string());
        text.push('\n');
    }
    app.shown
        .run
        .console
        .write(leet::store::console::Stream::Stdout, None, &text);
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let title = row(&buf, area, area.y);
    assert!(
        title.contains(&format!("[{kept} lines] · 5 older not kept")),
        "{title}"
    );
}

/// A line longer than the console keeps is wrapped onto rows of its own, but
/// counted once in the title, as it was written (and as `inspect` counts it).
#[test]
fn a_wrapped_long_line_counts_once_in_the_title() {
    let long = format!(
        "{}\n",
        "y".repeat(2 * leet::store::console::MAX_LINE_CHARS + 10)
    );
    let app = console_app(&["first\n", &long, "last\n"], &[], false, 120, 40);
    assert_eq!(app.shown.run.console.lines().len(), 5);
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let title = row(&buf, area, area.y);
    assert!(title.contains("[3 lines]"), "{title}");
    // Filtered: the lines that pass, as written.
    let mut app = app;
    while app.panels.focus != leet::ui::panels::Pane::Console {
        app.update(Msg::char('4'));
    }
    for m in [leet::msg::Msg::char('/')]
        .into_iter()
        .chain(leet::msg::Msg::typed("y"))
        .chain([leet::msg::Msg::key(crossterm::event::KeyCode::Enter)])
    {
        app.update(m);
    }
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let title = row(&buf, area, area.y);
    assert!(title.contains("[1 line]"), "{title}");
}

/// The filter reads a long line whole, as written (the console keeps it as
/// pieces): a match across a piece's end is found, `^` and `$` anchor to the
/// line's ends, and a line that matches shows whole and counts once.
#[test]
fn the_filter_reads_a_long_line_whole() {
    let n = leet::store::console::MAX_LINE_CHARS;
    let long = format!("{}MIDDLER{}END\n", "a".repeat(n - 3), "b".repeat(n + 100));
    let filtered = |pattern: &str| {
        let mut app = console_app(&["first\n", &long, "last\n"], &[], false, 120, 40);
        assert_eq!(app.shown.run.console.lines().len(), 5);
        while app.panels.focus != leet::ui::panels::Pane::Console {
            app.update(Msg::char('4'));
        }
        for m in [Msg::char('/')]
            .into_iter()
            .chain(Msg::typed(pattern))
            .chain([Msg::key(crossterm::event::KeyCode::Enter)])
        {
            app.update(m);
        }
        let view = app.console_view();
        let buf = draw(&app, 120, 40);
        let area = pane(&app);
        (view.len(), row(&buf, area, area.y))
    };
    for (pattern, pieces, title) in [
        ("MIDDLER", 3, "[1 line]"),
        ("END$", 3, "[1 line]"),
        ("^a+MID", 3, "[1 line]"),
        ("^b", 0, "[0 lines]"),
        ("b$", 0, "[0 lines]"),
        ("^(first|last)$", 2, "[2 lines]"),
    ] {
        let (len, t) = filtered(pattern);
        assert_eq!(len, pieces, "/{pattern}: {t}");
        assert!(t.contains(title), "/{pattern}: {t}");
        assert!(t.contains("filtered from 3 by"), "/{pattern}: {t}");
    }
}

/// Lines no longer kept and lines above the pane are counted as written: a
/// long line kept as pieces is one line.
#[test]
fn lines_not_kept_and_above_count_a_long_line_once() {
    let n = leet::store::console::MAX_LINE_CHARS;
    let long = format!("{}\n", "z".repeat(2 * n + 10));
    let short: Vec<String> = (0..leet::store::console::CONSOLE_LINES)
        .map(|i| format!("line {i}\n"))
        .collect();
    let lines: Vec<&str> = std::iter::once(long.as_str())
        .chain(short.iter().map(String::as_str))
        .collect();
    let app = console_app(&lines, &[], false, 120, 40);
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let title = row(&buf, area, area.y);
    // 3 pieces gone: the one long line.
    assert!(title.contains("· 1 older not kept"), "{title}");
    // Above the pane: lines as written, the long one once.
    let tail: Vec<String> = (0..30).map(|i| format!("after {i}\n")).collect();
    let lines: Vec<&str> = ["before\n", long.as_str()]
        .into_iter()
        .chain(tail.iter().map(String::as_str))
        .collect();
    let app = console_app(&lines, &[], false, 120, 40);
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let text: String = (area.y..area.bottom())
        .map(|y| row(&buf, area, y))
        .collect::<Vec<_>>()
        .join("\n");
    let above: usize = text
        .split("↑ ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no ↑ line: {text}"));
    // Of the 32 lines, those shown after the ↑ line are not above it.
    let shown = text.matches("after ").count();
    assert_eq!(above + shown, 32, "{text}");
}

/// A tab goes to the next stop of every 8 columns, as in a terminal: a
/// tab-separated table keeps its columns.
#[test]
fn tabs_go_to_their_stops() {
    let app = console_app(
        &["epoch\tloss\tacc\n", "1\t0.25\t0.9\n", "\tTAB\tSEP\t|\n"],
        &[],
        false,
        120,
        40,
    );
    let buf = draw(&app, 120, 40);
    let area = pane(&app);
    let text: Vec<String> = (area.y..area.bottom())
        .map(|y| row(&buf, area, y))
        .collect();
    let find = |s: &str| {
        text.iter()
            .find_map(|r| r.find(s).map(|i| r[i..].trim_end().to_owned()))
            .unwrap_or_else(|| panic!("{s}: {text:?}"))
    };
    assert_eq!(find("epoch"), "epoch   loss    acc");
    assert_eq!(find("0.25"), "0.25    0.9");
    assert_eq!(find("TAB"), "TAB     SEP     |");
    let at = |s: &str| text.iter().find_map(|r| r.find(s)).unwrap();
    // `1` at the tab stop `epoch` is at, `TAB` 8 columns after the line's start.
    assert_eq!(at("epoch"), at("1\u{20}"));
    assert_eq!(at("TAB"), at("epoch") + 8);
}

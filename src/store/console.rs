//! Console output rebuilt from `output_raw` write fragments: fragments are joined per
//! stream, `\r` returns to the start of the line (later text overwrites), escape and
//! control sequences are stripped (also when split across fragments), and only the
//! newest `cap` lines are kept. SGR sequences (colours, bold, …) are stripped from the
//! text too, but each stream keeps its pen as a terminal would (across fragments and
//! lines) and each line keeps the styles of its text as a few ranges ([`sgr`]).

pub mod sgr;

use std::collections::VecDeque;

pub use sgr::{Sgr, SgrColor, StyleSpan};

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// One finished console line, free of control characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub stream: Stream,
    /// Timestamp of the line's first fragment: (seconds, nanos) since the epoch.
    pub time: Option<(i64, i32)>,
    pub text: String,
    /// The styles SGR sequences gave parts of `text`: byte ranges in order, not
    /// overlapping, plain text not listed, at most [`sgr::MAX_SPANS`].
    pub spans: Box<[StyleSpan]>,
}

/// Longest line kept before it is wrapped (as wandb-core's emulator caps lines).
pub const MAX_LINE_CHARS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Esc {
    #[default]
    None,
    /// Saw ESC.
    Start,
    /// In a CSI sequence (`ESC [` … final byte).
    Csi,
    /// In an OSC/DCS/APC/PM/SOS string, ended by BEL or `ESC \`.
    Str,
    /// In a string, saw ESC (maybe the `ESC \` terminator).
    StrEscape,
    /// In an escape with intermediate bytes (`ESC ( B`, which `tput sgr0` writes
    /// before its SGR reset), ended by a final byte.
    Intermediate,
}

#[derive(Debug, Clone, Default)]
struct Partial {
    chars: Vec<char>,
    /// The pen each of `chars` was written with.
    styles: Vec<Sgr>,
    /// The pen now: kept across lines, as a terminal keeps it.
    pen: Sgr,
    /// The parameters of the CSI sequence being read, while it may be SGR.
    params: String,
    /// Whether `params` is still SGR-shaped (digits, `;`, `:`, short enough).
    sgr: bool,
    cursor: usize,
    time: Option<(i64, i32)>,
    esc: Esc,
    started: bool,
}

impl Partial {
    /// A CSI sequence begins: it may be SGR until a byte says otherwise.
    fn start_csi(&mut self) -> Esc {
        self.params.clear();
        self.sgr = true;
        Esc::Csi
    }

    /// One character of a CSI sequence: its final byte ends it (and applies it
    /// when it is SGR); anything else is a parameter.
    fn csi(&mut self, c: char) {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            self.esc = Esc::None;
            if c == 'm' && self.sgr {
                sgr::apply(&mut self.pen, &self.params);
            }
        } else if self.sgr
            && (c.is_ascii_digit() || c == ';' || c == ':')
            && self.params.len() < sgr::MAX_PARAMS
        {
            self.params.push(c);
        } else {
            // A private marker (`ESC [ > 4 ; 2 m` is not SGR), an intermediate
            // byte, or too long.
            self.sgr = false;
        }
    }
}

/// The console of one run.
#[derive(Debug, Clone)]
pub struct Console {
    lines: VecDeque<Line>,
    cap: usize,
    total: u64,
    partial: [Partial; 2],
}

impl Default for Console {
    fn default() -> Self {
        Self::new(10_000)
    }
}

impl Console {
    /// A console keeping at most `cap` finished lines.
    #[must_use]
    pub fn new(cap: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            cap: cap.max(1),
            total: 0,
            partial: [Partial::default(), Partial::default()],
        }
    }

    /// Feed one raw write fragment.
    pub fn write(&mut self, stream: Stream, time: Option<(i64, i32)>, text: &str) {
        let idx = usize::from(stream == Stream::Stderr);
        for c in text.chars() {
            let p = &mut self.partial[idx];
            match p.esc {
                Esc::Start => {
                    p.esc = match c {
                        '[' => p.start_csi(),
                        ']' | 'P' | '_' | '^' | 'X' => Esc::Str,
                        ' '..='/' => Esc::Intermediate,
                        // RIS, the terminal's full reset, resets the pen too.
                        'c' => {
                            p.pen = Sgr::default();
                            Esc::None
                        }
                        _ => Esc::None,
                    };
                    continue;
                }
                Esc::Csi => {
                    p.csi(c);
                    continue;
                }
                Esc::Str => {
                    match c {
                        '\u{7}' | '\u{9c}' => p.esc = Esc::None,
                        '\u{1b}' => p.esc = Esc::StrEscape,
                        _ => {}
                    }
                    continue;
                }
                Esc::StrEscape => {
                    p.esc = if c == '\\' { Esc::None } else { Esc::Str };
                    continue;
                }
                Esc::Intermediate => {
                    if ('0'..='~').contains(&c) {
                        p.esc = Esc::None;
                    }
                    continue;
                }
                Esc::None => {}
            }
            match c {
                '\u{1b}' => p.esc = Esc::Start,
                '\u{9b}' => p.esc = p.start_csi(),
                '\n' => {
                    if !p.started {
                        p.time = time;
                    }
                    self.finish(idx, stream);
                }
                '\r' => {
                    p.cursor = 0;
                    if !p.started {
                        p.started = true;
                        p.time = time;
                    }
                }
                '\t' => self.put(idx, stream, time, '\t'),
                c if c.is_control() => {}
                c => self.put(idx, stream, time, c),
            }
        }
    }

    /// Feed one already line-split record (the legacy `output` record).
    pub fn write_line(&mut self, stream: Stream, time: Option<(i64, i32)>, text: &str) {
        self.write(stream, time, text);
        if !text.ends_with('\n') {
            self.write(stream, time, "\n");
        }
    }

    fn put(&mut self, idx: usize, stream: Stream, time: Option<(i64, i32)>, c: char) {
        if self.partial[idx].cursor >= MAX_LINE_CHARS {
            // A full line wraps only when another character comes, as a
            // terminal's deferred wrap does: a line of exactly the cap followed by
            // its newline (or a `\r`) is one line, not one and an empty one.
            self.finish(idx, stream);
        }
        let p = &mut self.partial[idx];
        if !p.started {
            p.started = true;
            p.time = time;
        }
        if p.cursor < p.chars.len() {
            p.chars[p.cursor] = c;
            p.styles[p.cursor] = p.pen;
        } else {
            p.chars.push(c);
            p.styles.push(p.pen);
        }
        p.cursor += 1;
    }

    fn finish(&mut self, idx: usize, stream: Stream) {
        let p = &mut self.partial[idx];
        let (text, spans) = sgr::styled(&p.chars, &p.styles);
        p.chars.clear();
        p.styles.clear();
        let time = p.time.take();
        p.cursor = 0;
        p.started = false;
        self.push(Line {
            stream,
            time,
            text,
            spans,
        });
    }

    fn push(&mut self, line: Line) {
        self.total += 1;
        if self.lines.len() == self.cap {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// Finished lines kept (newest last).
    #[must_use]
    pub fn lines(&self) -> &VecDeque<Line> {
        &self.lines
    }

    /// Lines not yet ended by a newline, one per stream that has one.
    pub fn unfinished(&self) -> impl Iterator<Item = Line> + '_ {
        [Stream::Stdout, Stream::Stderr]
            .into_iter()
            .zip(&self.partial)
            .filter(|(_, p)| !p.chars.is_empty())
            .map(|(stream, p)| {
                let (text, spans) = sgr::styled(&p.chars, &p.styles);
                Line {
                    stream,
                    time: p.time,
                    text,
                    spans,
                }
            })
    }

    /// Every line ever finished, including those no longer kept.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(c: &Console) -> Vec<String> {
        c.lines().iter().map(|l| l.text.clone()).collect()
    }

    #[test]
    fn joins_fragments_per_stream() {
        let mut c = Console::new(100);
        c.write(Stream::Stdout, Some((1, 0)), "line");
        c.write(Stream::Stderr, Some((2, 0)), "err");
        c.write(Stream::Stdout, Some((3, 0)), " 0");
        c.write(Stream::Stdout, Some((4, 0)), "\n");
        c.write(Stream::Stderr, Some((5, 0)), "\n");
        assert_eq!(texts(&c), vec!["line 0", "err"]);
        assert_eq!(c.lines()[0].time, Some((1, 0)));
        assert_eq!(c.lines()[1].stream, Stream::Stderr);
    }

    #[test]
    fn carriage_return_overwrites_and_escapes_are_stripped() {
        let mut c = Console::new(100);
        c.write(Stream::Stdout, None, "progress 10%\rprogress 20%\r\n");
        c.write(Stream::Stdout, None, "\x1b[31mred\x1b");
        c.write(Stream::Stdout, None, "[0m \x1b]0;title\x07ok\x07\u{0}\n");
        c.write(Stream::Stdout, None, "abcdef\rXY\n");
        assert_eq!(texts(&c), vec!["progress 20%", "red ok", "XYcdef"]);
    }

    #[test]
    fn keeps_newest_lines_and_counts_all() {
        let mut c = Console::new(3);
        for i in 0..10 {
            c.write(Stream::Stdout, None, &format!("{i}\n"));
        }
        assert_eq!(texts(&c), vec!["7", "8", "9"]);
        assert_eq!(c.total(), 10);
        c.write(Stream::Stdout, None, "tail");
        assert_eq!(
            c.unfinished().map(|l| l.text).collect::<Vec<_>>(),
            vec!["tail"]
        );
    }

    fn spans(l: &Line) -> Vec<(&str, Sgr)> {
        l.spans
            .iter()
            .map(|s| (&l.text[s.start as usize..s.end as usize], s.style))
            .collect()
    }

    fn fg(c: SgrColor) -> Sgr {
        Sgr {
            fg: c,
            ..Sgr::default()
        }
    }

    const RED: SgrColor = SgrColor::Ansi(1);
    const GREEN: SgrColor = SgrColor::Ansi(2);

    #[test]
    fn sgr_styles_the_text_it_precedes() {
        let mut c = Console::new(100);
        c.write(
            Stream::Stdout,
            None,
            "\x1b[1;31mERROR\x1b[0m: \x1b[38;2;1;2;3mrgb\x1b[39m plain\n",
        );
        let l = &c.lines()[0];
        assert_eq!(l.text, "ERROR: rgb plain");
        let bold_red = Sgr {
            fg: RED,
            attrs: Sgr::BOLD,
            ..Sgr::default()
        };
        assert_eq!(
            spans(l),
            vec![("ERROR", bold_red), ("rgb", fg(SgrColor::Rgb(1, 2, 3)))]
        );
        // A line without SGR has no spans (and costs no allocation for them).
        c.write(Stream::Stdout, None, "plain\n");
        assert!(c.lines()[1].spans.is_empty());
    }

    #[test]
    fn sgr_split_across_fragments() {
        let mut c = Console::new(100);
        // Split after ESC, after `[`, inside the parameters and before `m`.
        for f in ["a\x1b", "[", "3", "2;", "1", "mB", "\x1b[", "0", "m", "c\n"] {
            c.write(Stream::Stdout, None, f);
        }
        let l = &c.lines()[0];
        assert_eq!(l.text, "aBc");
        let g = Sgr {
            fg: GREEN,
            attrs: Sgr::BOLD,
            ..Sgr::default()
        };
        assert_eq!(spans(l), vec![("B", g)]);
    }

    #[test]
    fn the_pen_carries_across_lines_per_stream() {
        let mut c = Console::new(100);
        c.write(Stream::Stdout, None, "\x1b[31mone\n");
        c.write(Stream::Stderr, None, "err\n");
        c.write(Stream::Stdout, None, "two\x1b[m three\n");
        let [one, err, two] = [&c.lines()[0], &c.lines()[1], &c.lines()[2]];
        assert_eq!(spans(one), vec![("one", fg(RED))]);
        assert!(err.spans.is_empty(), "stderr has its own pen");
        assert_eq!(spans(two), vec![("two", fg(RED))]);
        assert_eq!(two.text, "two three");
        // The unfinished line shows the pen's styles too.
        c.write(Stream::Stdout, None, "\x1b[32mgo");
        let u: Vec<Line> = c.unfinished().collect();
        assert_eq!(spans(&u[0]), vec![("go", fg(GREEN))]);
    }

    #[test]
    fn carriage_return_keeps_styles_of_the_surviving_text() {
        let mut c = Console::new(100);
        c.write(
            Stream::Stdout,
            None,
            "\x1b[31mabcdef\x1b[0m\r\x1b[32mXY\x1b[0m\n",
        );
        let l = &c.lines()[0];
        assert_eq!(l.text, "XYcdef");
        assert_eq!(spans(l), vec![("XY", fg(GREEN)), ("cdef", fg(RED))]);
        // A progress bar redrawn plain over a coloured one is plain.
        c.write(Stream::Stdout, None, "\x1b[31m10%\x1b[0m\r20%\n");
        assert!(c.lines()[1].spans.is_empty());
    }

    #[test]
    fn only_sgr_styles_everything_else_is_stripped() {
        let mut c = Console::new(100);
        // OSC 52 (clipboard), a title, cursor moves, erase, DCS, a private-mode
        // `m` (xterm's modifyOtherKeys, not SGR) and an over-long SGR.
        let long = format!("\x1b[{}1m", "0;".repeat(100));
        c.write(
            Stream::Stdout,
            None,
            &format!(
                "\x1b]52;c;ZXZpbA==\x07\x1b]0;title\x1b\\\x1b[2;5H\x1b[2K\x1bPq#0\x1b\\\x1b[>4;2m{long}\x1b[32mok\x1b[0m \u{9b}1Ddone\n"
            ),
        );
        let l = &c.lines()[0];
        assert_eq!(l.text, "ok done");
        assert_eq!(spans(l), vec![("ok", fg(GREEN))]);
    }

    #[test]
    fn spans_per_line_are_capped() {
        let mut c = Console::new(100);
        let mut s = String::new();
        for i in 0..1000 {
            s.push_str(&format!("\x1b[{}mx", 31 + i % 2));
        }
        s.push('\n');
        c.write(Stream::Stdout, None, &s);
        let l = &c.lines()[0];
        assert_eq!(l.text, "x".repeat(1000), "the text is all kept");
        assert_eq!(l.spans.len(), sgr::MAX_SPANS);
    }

    #[test]
    fn escapes_with_intermediates_leave_no_letter() {
        let mut c = Console::new(100);
        // `tput setaf 1` … `tput sgr0`, and a charset designation split in two.
        c.write(Stream::Stdout, None, "\x1b[31mred\x1b(B\x1b[m plain \x1b(");
        c.write(Stream::Stdout, None, "0x\x1b#8\n");
        let l = &c.lines()[0];
        assert_eq!(l.text, "red plain x");
        assert_eq!(spans(l), vec![("red", fg(RED))]);
    }

    #[test]
    fn a_terminal_reset_resets_the_pen() {
        let mut c = Console::new(100);
        c.write(Stream::Stdout, None, "\x1b[31ma\x1bcb\n");
        assert_eq!(spans(&c.lines()[0]), vec![("a", fg(RED))]);
    }

    #[test]
    fn long_lines_wrap() {
        let mut c = Console::new(10);
        c.write(Stream::Stdout, None, &"x".repeat(MAX_LINE_CHARS + 5));
        c.write(Stream::Stdout, None, "\n");
        assert_eq!(c.lines().len(), 2);
        assert_eq!(c.lines()[1].text.len(), 5);
    }

    #[test]
    fn line_of_exactly_the_cap_wraps_only_when_more_comes() {
        let lens = |c: &Console| -> Vec<usize> {
            c.lines().iter().map(|l| l.text.chars().count()).collect()
        };
        for n in [MAX_LINE_CHARS, 2 * MAX_LINE_CHARS] {
            let mut c = Console::new(10);
            c.write(Stream::Stdout, None, &"x".repeat(n));
            assert_eq!(c.unfinished().count(), 1, "{n}: the full line waits");
            c.write(Stream::Stdout, None, "\nnext\n");
            let mut want = vec![MAX_LINE_CHARS; n / MAX_LINE_CHARS];
            want.push(4);
            assert_eq!(lens(&c), want, "{n}");
        }
        // One more character wraps it, and a `\r` at the cap rewrites the full line.
        let mut c = Console::new(10);
        c.write(Stream::Stdout, None, &"x".repeat(MAX_LINE_CHARS + 1));
        c.write(Stream::Stdout, None, "\n");
        assert_eq!(lens(&c), vec![MAX_LINE_CHARS, 1]);
        let mut c = Console::new(10);
        c.write(Stream::Stdout, None, &"x".repeat(MAX_LINE_CHARS));
        c.write(Stream::Stdout, None, "\rab\n");
        assert_eq!(lens(&c), vec![MAX_LINE_CHARS]);
        assert!(c.lines()[0].text.starts_with("abx"));
    }
}

//! Console output rebuilt from `output_raw` write fragments: fragments are joined per
//! stream and applied as a terminal would: `\r` returns to the start of the line
//! (later text overwrites), backspace and the cursor moves and line erases progress
//! bars write (tqdm's nested bars go up a line and back) edit the newest
//! [`EDITABLE_ROWS`] lines; every other escape and control sequence is stripped
//! (also when split across fragments), and only the newest `cap` lines are kept.
//! SGR sequences (colours, bold, …) are stripped from the text too, but each stream
//! keeps its pen as a terminal would (across fragments and lines) and each line keeps
//! the styles of its text as a few ranges ([`sgr`]).

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
    /// Timestamp of the line's first fragment: (seconds, nanos) since the epoch
    /// (as W&B stamps a line: `wandb leet inspect`, `output.log`).
    pub time: Option<(i64, i32)>,
    /// When it was finished (its newline): lines are listed in that order, so
    /// these times never go back where the first fragments' can (a progress bar
    /// redrawn with `\r` for minutes while other lines are printed). The viewer
    /// shows this one.
    pub ended: Option<(i64, i32)>,
    pub text: String,
    /// The styles SGR sequences gave parts of `text`: byte ranges in order, not
    /// overlapping, plain text not listed, at most [`sgr::MAX_SPANS`].
    pub spans: Box<[StyleSpan]>,
    /// It goes on the line before: a line longer than [`MAX_LINE_CHARS`] wrapped
    /// there, not a line of its own (`inspect` counts and prints them as one).
    pub cont: bool,
}

/// Longest line kept before it is wrapped (as wandb-core's emulator caps lines).
pub const MAX_LINE_CHARS: usize = 4096;

/// Tab stops of a console line as drawn: every this many columns, as a terminal
/// puts them (the lines keep their tabs).
pub const TAB_STOP: usize = 8;

/// Rows back from the newest a stream's cursor can move up into (cursor up,
/// previous line): the part of the console a progress bar redraws, as the
/// visible rows of a terminal are. Older lines are final.
pub const EDITABLE_ROWS: usize = 32;

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

/// One row of a stream's editable rows: the newest is the line being written,
/// the others are finished lines the cursor may still move back up into.
#[derive(Debug, Clone, Default)]
struct Row {
    chars: Vec<char>,
    /// The pen each of `chars` was written with.
    styles: Vec<Sgr>,
    time: Option<(i64, i32)>,
    /// Its latest write while unfinished, then its newline's ([`Line::ended`]).
    ended: Option<(i64, i32)>,
    started: bool,
    /// Its number among all finished lines, once finished.
    line: Option<u64>,
    /// Changed since it was finished or last copied into the kept lines.
    dirty: bool,
    /// Begun by a wrap of the row before (see [`Line::cont`]).
    cont: bool,
}

impl Row {
    /// Its text and styles as a kept line, after `prefix` (its writer's, in a
    /// console several write to: outside the cells the cursor moves over).
    fn to_line(&self, stream: Stream, prefix: &str) -> Line {
        let (mut text, mut spans) = sgr::styled(&self.chars, &self.styles);
        if !prefix.is_empty() {
            text.insert_str(0, prefix);
            let by = u32::try_from(prefix.len()).unwrap_or(u32::MAX);
            for s in &mut spans {
                s.start = s.start.saturating_add(by);
                s.end = s.end.saturating_add(by);
            }
        }
        Line {
            stream,
            time: self.time,
            ended: self.ended.or(self.time),
            text,
            spans,
            cont: self.cont,
        }
    }

    /// A write to the row at `time`. Until it is finished the row's end is its
    /// latest write; a finished line written again (the cursor moved back up
    /// into it) keeps its end, so the ends stay in the order lines are listed.
    fn touch(&mut self, time: Option<(i64, i32)>) {
        if !self.started {
            self.started = true;
            self.time = time;
        }
        if self.line.is_none() && time.is_some() {
            self.ended = time;
        }
        self.dirty = true;
    }

    /// Erase in line (`CSI K`): 0 from `col` to the end, 1 from the start to
    /// `col`, 2 all of it. Cells erased before others are blanks.
    fn erase(&mut self, how: usize, col: usize) {
        match how {
            0 => {
                self.chars.truncate(col);
                self.styles.truncate(col);
            }
            1 => {
                let end = (col + 1).min(self.chars.len());
                self.chars[..end].fill(' ');
                self.styles[..end].fill(Sgr::default());
            }
            2 => {
                self.chars.clear();
                self.styles.clear();
            }
            _ => return,
        }
        self.dirty = true;
    }
}

/// What a stream has written: its editable rows, the cursor in them, its pen
/// and the escape sequence being read.
#[derive(Debug, Clone)]
struct Screen {
    /// Never empty; the last is the line not yet ended by a newline.
    rows: VecDeque<Row>,
    /// The cursor's row, an index into `rows`.
    row: usize,
    cursor: usize,
    /// The pen now: kept across lines, as a terminal keeps it.
    pen: Sgr,
    /// The parameters of the CSI sequence being read, while they are plain
    /// numbers (which SGR and the cursor moves take).
    params: String,
    /// Whether `params` is still plain (digits, `;`, `:`, short enough).
    plain: bool,
    esc: Esc,
}

impl Default for Screen {
    fn default() -> Self {
        Self {
            rows: VecDeque::from([Row::default()]),
            row: 0,
            cursor: 0,
            pen: Sgr::default(),
            params: String::new(),
            plain: false,
            esc: Esc::None,
        }
    }
}

impl Screen {
    /// A CSI sequence begins: its parameters are plain until a byte says otherwise.
    fn start_csi(&mut self) -> Esc {
        self.params.clear();
        self.plain = true;
        Esc::Csi
    }

    /// One character of a CSI sequence: its final byte ends it (and applies it
    /// when it is SGR, a cursor move or an erase in line); anything else is a
    /// parameter.
    fn csi(&mut self, c: char) {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            self.esc = Esc::None;
            if self.plain {
                self.apply_csi(c);
            }
        } else if self.plain
            && (c.is_ascii_digit() || c == ';' || c == ':')
            && self.params.len() < sgr::MAX_PARAMS
        {
            self.params.push(c);
        } else {
            // A private marker (`ESC [ > 4 ; 2 m` is not SGR), an intermediate
            // byte, or too long.
            self.plain = false;
        }
    }

    /// The first parameter, `default` where it is missing or 0 (as a terminal
    /// reads a cursor move's count).
    fn count(&self, default: usize) -> usize {
        let first = self.params.split([';', ':']).next().unwrap_or("");
        match first.parse::<usize>() {
            Ok(0) => default,
            Ok(n) => n,
            // Missing, or more digits than a usize holds.
            Err(_) if first.is_empty() => default,
            Err(_) => usize::MAX,
        }
    }

    /// Apply a plain CSI sequence ending in `fin`: the pen (SGR), the moves
    /// progress bars use (up, down, next and previous line, left, right, to a
    /// column) within the editable rows, and erase in line. Every other one
    /// (absolute position, erase in display, scroll) is dropped: the console is
    /// a log, not a screen to clear.
    fn apply_csi(&mut self, fin: char) {
        let last = self.rows.len() - 1;
        let max_col = MAX_LINE_CHARS - 1;
        match fin {
            'm' => sgr::apply(&mut self.pen, &self.params),
            'A' => self.row = self.row.saturating_sub(self.count(1)),
            'B' => self.row = self.row.saturating_add(self.count(1)).min(last),
            'C' => self.cursor = self.cursor.saturating_add(self.count(1)).min(max_col),
            'D' => self.cursor = self.cursor.saturating_sub(self.count(1)),
            'E' => {
                self.row = self.row.saturating_add(self.count(1)).min(last);
                self.cursor = 0;
            }
            'F' => {
                self.row = self.row.saturating_sub(self.count(1));
                self.cursor = 0;
            }
            'G' => self.cursor = (self.count(1) - 1).min(max_col),
            'K' => {
                let how = if self.params.is_empty() {
                    0
                } else {
                    self.count(0)
                };
                let col = self.cursor;
                self.rows[self.row].erase(how, col);
            }
            _ => {}
        }
    }

    /// Write `c` at the cursor, which moves right; a cell past the row's end
    /// leaves blanks between.
    fn put(&mut self, time: Option<(i64, i32)>, c: char) {
        let (col, pen) = (self.cursor, self.pen);
        let row = &mut self.rows[self.row];
        row.touch(time);
        if col < row.chars.len() {
            row.chars[col] = c;
            row.styles[col] = pen;
        } else {
            row.chars.resize(col, ' ');
            row.styles.resize(col, Sgr::default());
            row.chars.push(c);
            row.styles.push(pen);
        }
        self.cursor += 1;
    }
}

/// The console of one run.
#[derive(Debug, Clone)]
pub struct Console {
    lines: VecDeque<Line>,
    cap: usize,
    total: u64,
    /// Of `total`, the lines that go on the one before ([`Line::cont`]).
    conts: u64,
    /// Of the lines kept, those that go on the one before.
    kept_conts: usize,
    /// Two per writer (its stdout's, its stderr's): the run's own first, then
    /// each node's of a distributed run, whose lines share the console but whose
    /// cursor moves stay among its own lines.
    screens: Vec<Screen>,
    /// Each writer's line prefix (`[node-1] `; the run's own: none).
    prefixes: Vec<String>,
    /// Each writer's name ([`Console::write_from`]; the run's own: empty).
    writers: Vec<String>,
}

/// Most writers of one console with screens of their own (a distributed run's
/// nodes, read at most 256 together); any further one writes in the last's.
pub const MAX_WRITERS: usize = 257;

/// Lines a run's console keeps (the newest; the console pane says how many
/// older ones it no longer has).
pub const CONSOLE_LINES: usize = 50_000;

impl Default for Console {
    fn default() -> Self {
        Self::new(CONSOLE_LINES)
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
            conts: 0,
            kept_conts: 0,
            screens: vec![Screen::default(), Screen::default()],
            prefixes: vec![String::new()],
            writers: vec![String::new()],
        }
    }

    /// Feed one raw write fragment.
    pub fn write(&mut self, stream: Stream, time: Option<(i64, i32)>, text: &str) {
        self.write_at(0, stream, time, text);
    }

    /// Feed one raw write fragment of `writer` (a node of a distributed run, by
    /// its label): its lines are prefixed `[writer] ` (sanitised) and its cursor
    /// moves, carriage returns and partial lines are its own, however the
    /// writers' lines interleave.
    pub fn write_from(
        &mut self,
        writer: &str,
        stream: Stream,
        time: Option<(i64, i32)>,
        text: &str,
    ) {
        let w = match self.writers.iter().position(|x| x == writer) {
            Some(w) => w,
            None if self.writers.len() < MAX_WRITERS => {
                self.writers.push(writer.to_owned());
                self.prefixes
                    .push(format!("[{}] ", leet_text::sanitize(writer)));
                self.screens.push(Screen::default());
                self.screens.push(Screen::default());
                self.writers.len() - 1
            }
            None => self.writers.len() - 1,
        };
        self.write_at(w, stream, time, text);
    }

    /// [`Console::write_from`] of one already line-split record.
    pub fn write_line_from(
        &mut self,
        writer: &str,
        stream: Stream,
        time: Option<(i64, i32)>,
        text: &str,
    ) {
        self.write_from(writer, stream, time, text);
        if !text.ends_with('\n') {
            self.write_from(writer, stream, time, "\n");
        }
    }

    fn write_at(&mut self, writer: usize, stream: Stream, time: Option<(i64, i32)>, text: &str) {
        let idx = writer * 2 + usize::from(stream == Stream::Stderr);
        for c in text.chars() {
            let p = &mut self.screens[idx];
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
                // A character no CSI sequence holds ends it unread: the text
                // after a broken-off sequence (or a lone C1 `U+009B`) is text.
                Esc::Csi if !(' '..='~').contains(&c) => p.esc = Esc::None,
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
                '\n' => self.newline(idx, stream, time),
                '\r' => {
                    p.cursor = 0;
                    let row = &mut p.rows[p.row];
                    if !row.started {
                        row.started = true;
                        row.time = time;
                    }
                }
                // Backspace: a cell left, as a terminal moves (Keras' bars).
                '\u{8}' => p.cursor = p.cursor.saturating_sub(1),
                '\t' => self.put(idx, stream, time, '\t'),
                c if c.is_control() => {}
                c => self.put(idx, stream, time, c),
            }
        }
        self.sync(idx, stream);
    }

    /// Feed one already line-split record (the legacy `output` record).
    pub fn write_line(&mut self, stream: Stream, time: Option<(i64, i32)>, text: &str) {
        self.write(stream, time, text);
        if !text.ends_with('\n') {
            self.write(stream, time, "\n");
        }
    }

    fn put(&mut self, idx: usize, stream: Stream, time: Option<(i64, i32)>, c: char) {
        if self.screens[idx].cursor >= MAX_LINE_CHARS {
            // A full line wraps only when another character comes, as a
            // terminal's deferred wrap does: a line of exactly the cap followed by
            // its newline (or a `\r`) is one line, not one and an empty one.
            let p = &self.screens[idx];
            let fresh = p.row + 1 >= p.rows.len();
            self.newline(idx, stream, time);
            if fresh {
                let p = &mut self.screens[idx];
                p.rows[p.row].cont = true;
            }
        }
        self.screens[idx].put(time, c);
    }

    /// A newline: the cursor goes to the start of the next row, and from the
    /// newest row that row is finished and a new one begun.
    fn newline(&mut self, idx: usize, stream: Stream, time: Option<(i64, i32)>) {
        let p = &mut self.screens[idx];
        p.cursor = 0;
        if p.row + 1 < p.rows.len() {
            p.row += 1;
            return;
        }
        let row = &mut p.rows[p.row];
        if !row.started {
            row.time = time;
        }
        // Finished now: it ends with its newline.
        if time.is_some() {
            row.ended = time;
        }
        row.ended = row.ended.or(row.time);
        row.line = Some(self.total);
        row.dirty = false;
        self.conts += u64::from(row.cont);
        let line = row.to_line(stream, &self.prefixes[idx / 2]);
        self.push(line);
        let p = &mut self.screens[idx];
        let gone = if p.rows.len() == EDITABLE_ROWS {
            p.rows.pop_front()
        } else {
            None
        };
        let mut next = Row::default();
        if let Some(mut row) = gone {
            // Its last change is kept, and its buffers serve the new row.
            self.copy_back(&row, stream, idx);
            row.chars.clear();
            row.styles.clear();
            next.chars = row.chars;
            next.styles = row.styles;
        }
        let p = &mut self.screens[idx];
        p.rows.push_back(next);
        p.row = p.rows.len() - 1;
    }

    /// Copy the finished rows changed since into the kept lines.
    fn sync(&mut self, idx: usize, stream: Stream) {
        let mut rows = std::mem::take(&mut self.screens[idx].rows);
        for row in rows.iter_mut().filter(|r| r.dirty && r.line.is_some()) {
            self.copy_back(row, stream, idx);
            row.dirty = false;
        }
        self.screens[idx].rows = rows;
    }

    /// A finished row's text replaces its line's, where that line is still kept.
    fn copy_back(&mut self, row: &Row, stream: Stream, idx: usize) {
        let Some(n) = row.line.filter(|_| row.dirty) else {
            return;
        };
        let first = self.total - self.lines.len() as u64;
        let kept = n.checked_sub(first).and_then(|i| usize::try_from(i).ok());
        if let Some(line) = kept.and_then(|i| self.lines.get_mut(i)) {
            let was = line.cont;
            *line = row.to_line(stream, &self.prefixes[idx / 2]);
            self.kept_conts = self.kept_conts + usize::from(line.cont) - usize::from(was);
        }
    }

    fn push(&mut self, line: Line) {
        self.total += 1;
        if self.lines.len() == self.cap {
            if let Some(gone) = self.lines.pop_front() {
                self.kept_conts -= usize::from(gone.cont);
            }
        }
        self.kept_conts += usize::from(line.cont);
        self.lines.push_back(line);
    }

    /// Of the lines kept, those that go on the one before ([`Line::cont`]): the
    /// kept lines less these are the lines as they were written.
    #[must_use]
    pub fn kept_conts(&self) -> usize {
        self.kept_conts
    }

    /// Finished lines kept (newest last).
    #[must_use]
    pub fn lines(&self) -> &VecDeque<Line> {
        &self.lines
    }

    /// Lines not yet ended by a newline, one per writer's stream that has one.
    pub fn unfinished(&self) -> impl Iterator<Item = Line> + '_ {
        self.screens.iter().enumerate().filter_map(|(idx, p)| {
            let stream = if idx % 2 == 0 {
                Stream::Stdout
            } else {
                Stream::Stderr
            };
            let r = p.rows.back().filter(|r| !r.chars.is_empty())?;
            Some(r.to_line(stream, &self.prefixes[idx / 2]))
        })
    }

    /// Every line ever finished, including those no longer kept.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// [`Console::total`] counting a wrapped long line once, as it was written.
    #[must_use]
    pub fn logical_total(&self) -> u64 {
        self.total - self.conts
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
        // Each line also says when it was finished, as it is listed.
        assert_eq!(c.lines()[0].ended, Some((4, 0)));
        assert_eq!(c.lines()[1].ended, Some((5, 0)));
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
        // OSC 52 (clipboard), a title, an absolute cursor move, DCS, a
        // private-mode `m` (xterm's modifyOtherKeys, not SGR), an over-long SGR
        // and a private mode set through the one-byte CSI.
        let long = format!("\x1b[{}1m", "0;".repeat(100));
        c.write(
            Stream::Stdout,
            None,
            &format!(
                "\x1b]52;c;ZXZpbA==\x07\x1b]0;title\x1b\\\x1b[2;5H\x1b[2K\x1bPq#0\x1b\\\x1b[>4;2m{long}\x1b[32mok\x1b[0m \u{9b}?25ldone\n"
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
    fn a_broken_off_csi_leaves_the_text_after_it() {
        let mut c = Console::new(10);
        let latin1: String = (0x9b_u32..0x100).filter_map(char::from_u32).collect();
        c.write(Stream::Stdout, None, &format!("HIGH:{latin1}:END\n"));
        c.write(Stream::Stdout, None, "a\x1b[3é\x1b[31mred\n");
        let t = texts(&c);
        assert!(
            t[0].starts_with("HIGH:") && t[0].contains("¡¢£") && t[0].ends_with("ÿ:END"),
            "{t:?}"
        );
        assert_eq!(t[1], "aéred");
        assert_eq!(spans(&c.lines()[1]), vec![("red", fg(RED))]);
    }

    #[test]
    fn long_lines_wrap() {
        let mut c = Console::new(10);
        c.write(Stream::Stdout, None, &"x".repeat(MAX_LINE_CHARS + 5));
        c.write(Stream::Stdout, None, "\n");
        assert_eq!(c.lines().len(), 2);
        assert_eq!(c.lines()[1].text.len(), 5);
        // One line as written: its second part goes on the first.
        assert!(!c.lines()[0].cont && c.lines()[1].cont);
        assert_eq!((c.total(), c.logical_total()), (2, 1));
        // A line the cursor moved back into and past the cap is no new line.
        c.write(Stream::Stdout, None, "short\n");
        assert_eq!((c.total(), c.logical_total()), (3, 2));
        assert_eq!(c.kept_conts(), 1);
        // Its wrapped part no longer kept: no longer counted among the kept.
        for _ in 0..9 {
            c.write(Stream::Stdout, None, "more\n");
        }
        assert_eq!((c.lines().len(), c.kept_conts()), (10, 0));
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

    /// [`nested_bars_into`] written into `c`.
    fn nested_bars(c: &mut Console) {
        let mut r = Recorder::default();
        nested_bars_into(&mut r);
        for f in &r.0 {
            c.write(Stream::Stdout, None, f);
        }
    }

    #[test]
    fn nested_progress_bars_redraw_their_lines() {
        let mut c = Console::new(100);
        nested_bars(&mut c);
        assert_eq!(
            texts(&c),
            vec![
                // Up a line keeps the column: where the cleared bar ended.
                "epoch 0/3   epoch 0 done",
                "epoch 1/3   epoch 1 done",
                "epoch 2/3   epoch 2 done",
                "epoch 3/3   ",
            ]
        );
        assert_eq!(c.total(), 4);
        assert_eq!(c.unfinished().count(), 0);
    }

    /// Two nodes' nested bars written into one console, their fragments
    /// interleaved one by one: each node's bars redraw its own lines, under its
    /// prefix, as they do alone, whatever the other wrote between.
    #[test]
    fn each_writer_s_bars_redraw_its_own_lines_however_they_interleave() {
        let mut frags: Vec<Vec<String>> = Vec::new();
        for n in 0..2 {
            let mut c = Recorder::default();
            nested_bars_into(&mut c);
            frags.push(
                c.0.iter()
                    .map(|f| f.replace("epoch", &format!("n{n} epoch")))
                    .collect(),
            );
        }
        let mut c = Console::new(100);
        for i in 0..frags[0].len() {
            for (n, f) in frags.iter().enumerate() {
                c.write_from(&format!("node-{n}"), Stream::Stdout, None, &f[i]);
            }
        }
        for (n, node_frags) in frags.iter().enumerate() {
            let prefix = format!("[node-{n}] ");
            let mine: Vec<String> = texts(&c)
                .into_iter()
                .filter_map(|t| t.strip_prefix(&prefix).map(str::to_owned))
                .collect();
            let mut alone = Console::new(100);
            for f in node_frags {
                alone.write(Stream::Stdout, None, f);
            }
            assert_eq!(mine, texts(&alone), "{:#?}", texts(&c));
            assert!(mine[0].ends_with("n0 epoch 0 done") || n == 1, "{mine:?}");
        }
        assert_eq!(c.total(), 8);
        // A partial line waits per writer; the run's own console is apart.
        c.write_from("node-1", Stream::Stdout, None, "half");
        c.write(Stream::Stdout, None, "own\n");
        c.write_from("node-1", Stream::Stdout, None, " done\n");
        let t = texts(&c);
        assert_eq!(t[t.len() - 2..], ["own", "[node-1] half done"]);
    }

    #[test]
    fn a_writer_s_prefix_is_sanitised_and_outside_the_cells_it_rewrites() {
        let mut c = Console::new(100);
        c.write_from("evil\u{1b}[2J", Stream::Stderr, None, "10%\r\x1b[31m50%\n");
        let l = &c.lines()[0];
        assert!(!l.text.contains('\u{1b}'), "{:?}", l.text);
        assert!(
            l.text.starts_with('[') && l.text.ends_with("] 50%"),
            "{:?}",
            l.text
        );
        assert_eq!(l.stream, Stream::Stderr);
        // The style is the text's, past the prefix.
        let start = l.text.len() - 3;
        assert_eq!(spans(l), vec![("50%", fg(RED))]);
        assert_eq!(l.spans[0].start as usize, start);
        // A legacy (line-split) record of a writer ends its line.
        c.write_line_from("n", Stream::Stdout, None, "whole");
        assert_eq!(c.lines()[1].text, "[n] whole");
    }

    /// Fragments of console output, in the order written.
    #[derive(Default)]
    struct Recorder(Vec<String>);

    /// The records tqdm's nested bars write (an outer bar, an inner one with
    /// `leave=False`, a line printed after each inner loop), as the W&B SDK
    /// records them in `output_raw`: one write per fragment.
    fn nested_bars_into(r: &mut Recorder) {
        for epoch in 0..3 {
            r.0.push(format!("\repoch {epoch}/3"));
            r.0.push("\n".into());
            for b in 0..3 {
                r.0.push(format!("\rbatch {b}/3 {}", "#".repeat(b)));
                r.0.push("\x1b[A".into());
                r.0.push("\n".into());
            }
            r.0.push(format!("\r{}", " ".repeat(12)));
            r.0.push("\x1b[A".into());
            r.0.push(format!("epoch {epoch} done"));
            r.0.push("\n".into());
        }
        r.0.push("\repoch 3/3\n".into());
    }

    #[test]
    fn a_progress_bar_line_reads_when_it_ended_so_times_never_go_back() {
        // tqdm on stderr redrawn with `\r` for a while, stdout lines finished
        // meanwhile: the bar is listed where it ended, and reads that time.
        let mut c = Console::new(100);
        c.write(Stream::Stderr, Some((10, 0)), "\rprogress  10%");
        c.write(Stream::Stdout, Some((11, 0)), "step 1\n");
        c.write(Stream::Stderr, Some((12, 0)), "\rprogress  60%");
        c.write(Stream::Stdout, Some((13, 0)), "step 2\n");
        // Still being drawn: the time of its latest write.
        c.write(Stream::Stderr, Some((14, 0)), "\rprogress 100%");
        c.write(Stream::Stderr, Some((15, 0)), "\n");
        c.write(Stream::Stdout, Some((16, 0)), "done\n");
        assert_eq!(texts(&c), vec!["step 1", "step 2", "progress 100%", "done"]);
        let ends: Vec<i64> = c.lines().iter().map(|l| l.ended.unwrap().0).collect();
        assert_eq!(ends, [11, 13, 15, 16]);
        // Its first fragment's time too (W&B's stamp).
        assert_eq!(c.lines()[2].time, Some((10, 0)));
    }

    #[test]
    fn cursor_up_with_erase_rewrites_the_line_above() {
        let mut c = Console::new(100);
        for e in 0..2 {
            for b in [0, 50, 100] {
                c.write(
                    Stream::Stdout,
                    Some((e, b)),
                    &format!("\router {e}/3 {b:3}%\n\rinner batch {b:3}%\x1b[K\x1b[A"),
                );
            }
            c.write(Stream::Stdout, None, "\n\n");
        }
        assert_eq!(
            texts(&c),
            vec![
                "outer 0/3 100%",
                "inner batch 100%",
                "outer 1/3 100%",
                "inner batch 100%"
            ]
        );
        // A line keeps the time it was begun at, and the one it was finished at
        // when rewritten after.
        assert_eq!(c.lines()[2].time, Some((1, 0)));
        assert_eq!(c.lines()[2].ended, Some((1, 0)));
    }

    #[test]
    fn backspace_erase_and_column_moves_apply() {
        let mut c = Console::new(100);
        c.write(Stream::Stdout, None, "10/10 [====>.....]");
        c.write(Stream::Stdout, None, &"\u{8}".repeat(18));
        c.write(Stream::Stdout, None, "10/10 [==========] - loss: 0.1\n");
        c.write(Stream::Stdout, None, "abc\u{8}\u{8}X\n");
        c.write(Stream::Stdout, None, "long old text here\r\x1b[2Knew\n");
        c.write(Stream::Stdout, None, "long old text here\rshort\x1b[K\n");
        c.write(Stream::Stdout, None, "abcdef\x1b[3G\x1b[1KX\n");
        c.write(Stream::Stdout, None, "a\x1b[3Cb\u{9b}2Dc\x1b[0Gd\n");
        assert_eq!(
            texts(&c),
            vec![
                "10/10 [==========] - loss: 0.1",
                "aXc",
                "new",
                "short",
                "  Xdef",
                "d  cb",
            ]
        );
    }

    #[test]
    fn cursor_moves_stay_in_the_editable_rows_of_their_stream() {
        let mut c = Console::new(100);
        for i in 0..EDITABLE_ROWS + 10 {
            c.write(Stream::Stdout, None, &format!("{i}\n"));
        }
        c.write(Stream::Stderr, None, "err\n");
        // Far up stops at the oldest editable row; older lines are final.
        c.write(Stream::Stdout, None, "\x1b[999AX\x1b[999BY");
        let oldest = 10 + 1; // the newest row is the unfinished one
        let t = texts(&c);
        assert_eq!(t[oldest - 1], (oldest - 1).to_string());
        assert_eq!(t[oldest], "X1");
        assert_eq!(t[EDITABLE_ROWS + 10], "err", "stderr's line is its own");
        assert_eq!(c.unfinished().map(|l| l.text).collect::<Vec<_>>(), [" Y"]);
        // Down from the newest row does not make a line; previous line and
        // next line go to the row's start.
        c.write(Stream::Stdout, None, "\x1b[BZ\x1b[2FP\x1b[EQ");
        let t = texts(&c);
        assert_eq!(t[EDITABLE_ROWS + 8], "P0");
        assert_eq!(t[EDITABLE_ROWS + 9], "Q1");
        assert_eq!(c.unfinished().map(|l| l.text).collect::<Vec<_>>(), [" YZ"]);
        assert_eq!(c.total(), EDITABLE_ROWS as u64 + 11);
    }

    #[test]
    fn an_edited_line_no_longer_kept_is_let_go() {
        let mut c = Console::new(2);
        c.write(Stream::Stdout, None, "a\nb\nc\n\x1b[3AX\x1b[3BY\n");
        assert_eq!(texts(&c), vec!["c", " Y"], "down keeps the column");
        assert_eq!(c.total(), 4);
    }

    #[test]
    fn huge_counts_are_clamped() {
        let mut c = Console::new(10);
        c.write(
            Stream::Stdout,
            None,
            &format!("a\x1b[{}Cb\x1b[99999999999999999999999Gc\n", "9".repeat(60)),
        );
        let l = &c.lines()[0].text;
        assert_eq!(l.chars().count(), MAX_LINE_CHARS);
        assert!(l.starts_with('a') && l.ends_with('c'));
    }
}

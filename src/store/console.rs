//! Console output rebuilt from `output_raw` write fragments: fragments are joined per
//! stream, `\r` returns to the start of the line (later text overwrites), escape and
//! control sequences are stripped (also when split across fragments), and only the
//! newest `cap` lines are kept.

use std::collections::VecDeque;

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
}

#[derive(Debug, Clone, Default)]
struct Partial {
    chars: Vec<char>,
    cursor: usize,
    time: Option<(i64, i32)>,
    esc: Esc,
    started: bool,
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
                        '[' => Esc::Csi,
                        ']' | 'P' | '_' | '^' | 'X' => Esc::Str,
                        _ => Esc::None,
                    };
                    continue;
                }
                Esc::Csi => {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        p.esc = Esc::None;
                    }
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
                Esc::None => {}
            }
            match c {
                '\u{1b}' => p.esc = Esc::Start,
                '\u{9b}' => p.esc = Esc::Csi,
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
        let p = &mut self.partial[idx];
        if !p.started {
            p.started = true;
            p.time = time;
        }
        if p.cursor < p.chars.len() {
            p.chars[p.cursor] = c;
        } else {
            p.chars.push(c);
        }
        p.cursor += 1;
        if p.chars.len() >= MAX_LINE_CHARS && p.cursor >= MAX_LINE_CHARS {
            self.finish(idx, stream);
            let p = &mut self.partial[idx];
            p.started = true;
            p.time = time;
        }
    }

    fn finish(&mut self, idx: usize, stream: Stream) {
        let p = &mut self.partial[idx];
        let text: String = p.chars.drain(..).collect();
        let time = p.time.take();
        p.cursor = 0;
        p.started = false;
        self.push(Line { stream, time, text });
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
            .map(|(stream, p)| Line {
                stream,
                time: p.time,
                text: p.chars.iter().collect(),
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

    #[test]
    fn long_lines_wrap() {
        let mut c = Console::new(10);
        c.write(Stream::Stdout, None, &"x".repeat(MAX_LINE_CHARS + 5));
        c.write(Stream::Stdout, None, "\n");
        assert_eq!(c.lines().len(), 2);
        assert_eq!(c.lines()[1].text.len(), 5);
    }
}

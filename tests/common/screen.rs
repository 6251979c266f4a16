//! Screens for snapshot tests: a fixture's latest run read into an app at a fixed
//! "now", and the whole screen rendered with TestBackend as text.
#![allow(dead_code, clippy::unwrap_used)]

use leet::msg::Msg;
use leet::ui::{App, Options};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// Fixed "now" for snapshots: one hour after the fixtures were written.
pub const NOW: f64 = 1_796_063_000.0;

/// The sizes every screen is shot at.
pub const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// A fixture's latest run, opened as `<fixture>.wandb` (a name, not a path: the
/// screens do not depend on where the repository is), without colour, at `w`×`h`.
pub fn app_from(fixture: &str, w: u16, h: u16) -> App {
    let dir = super::runs_dir().join(fixture).join("wandb/latest-run");
    let (_, batch) = leet::source::tail::read_batch(&dir).unwrap();
    let mut app = App::new(Options {
        color: false,
        ..Options::default()
    });
    app.update(Msg::Resize(w, h));
    app.update(Msg::Opened {
        path: std::path::PathBuf::from(format!("{fixture}.wandb")),
        len: batch.file_len,
        modified: Some(NOW - 3600.0),
    });
    app.update(Msg::Run(batch));
    app.update(Msg::Tick(NOW));
    app
}

/// The screen as text, one line per row, trailing spaces trimmed.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| leet::ui::render::render(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

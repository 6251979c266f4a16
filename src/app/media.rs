//! The media viewer (`3`): images logged with `wandb.Image`, one at a time, read
//! from the run's `files/` directory and decoded when selected (never per frame).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::action::Action;
use super::{App, Effect};

/// Largest PNG file read, and most decoded bytes (a hostile file cannot make the
/// viewer allocate more).
const MAX_FILE: u64 = 32 << 20;
const MAX_DECODED: usize = 64 << 20;

/// A decoded image: 8-bit RGBA rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    /// The pixel at (x, y) as RGB over black.
    #[must_use]
    pub fn rgb(&self, x: u32, y: u32) -> (u8, u8, u8) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        match self.rgba.get(i..i + 4) {
            Some(&[r, g, b, a]) => {
                let m = |c: u8| (u16::from(c) * u16::from(a) / 255) as u8;
                (m(r), m(g), m(b))
            }
            _ => (0, 0, 0),
        }
    }
}

/// Which image is selected, and what loading it gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MediaState {
    pub open: bool,
    /// Index into the run's media keys.
    pub key: usize,
    /// Index into that key's images.
    pub item: usize,
    /// The file the image (or error) below came from.
    pub loaded: Option<PathBuf>,
    pub image: Option<Image>,
    pub error: Option<String>,
}

/// Decode a PNG file into RGBA, with size limits.
///
/// # Errors
/// Unreadable, too large or undecodable files, as text.
pub fn decode_png(path: &Path) -> Result<Image, String> {
    // Only a regular file: opening a FIFO or a device could block the viewer.
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut data = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() as u64 > MAX_FILE {
        return Err(format!("larger than {} MiB", MAX_FILE >> 20));
    }
    let mut decoder = png::Decoder::new_with_limits(
        std::io::Cursor::new(data),
        png::Limits { bytes: MAX_DECODED },
    );
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "image too large".to_owned())?;
    if size > MAX_DECODED {
        return Err("image too large".into());
    }
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    buf.truncate(info.buffer_size());
    let px = info.width as usize * info.height as usize;
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|c| [c[0], c[0], c[0], c[1]])
            .collect(),
        png::ColorType::Indexed => return Err("indexed colour left unexpanded".into()),
    };
    if rgba.len() < px * 4 {
        return Err("truncated image data".into());
    }
    Ok(Image {
        width: info.width,
        height: info.height,
        rgba,
    })
}

impl App {
    /// Media keys of the run, in order.
    #[must_use]
    pub fn media_keys(&self) -> Vec<&str> {
        self.run.media.keys().map(String::as_str).collect()
    }

    /// The selected media key's name and image record.
    #[must_use]
    pub fn media_selected(&self) -> Option<(&str, &crate::store::run::MediaItem, usize)> {
        let (key, items) = self.run.media.iter().nth(self.media.key)?;
        let item = items.get(self.media.item)?;
        Some((key.as_str(), item, items.len()))
    }

    /// Decode the selected image if it is not the one loaded.
    pub(super) fn load_media(&mut self) {
        let Some(run_dir) = self.source.file.as_deref().and_then(Path::parent) else {
            return;
        };
        let Some((_, item, _)) = self.media_selected() else {
            self.media.loaded = None;
            self.media.image = None;
            self.media.error = None;
            return;
        };
        // Paths come from the file: stay inside the run's files/ directory.
        let rel = Path::new(&item.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            self.media.loaded = None;
            self.media.image = None;
            self.media.error = Some("path leaves the run directory".into());
            return;
        }
        let path = run_dir.join("files").join(rel);
        if self.media.loaded.as_deref() == Some(path.as_path()) {
            return;
        }
        match decode_png(&path) {
            Ok(img) => {
                self.media.image = Some(img);
                self.media.error = None;
            }
            Err(e) => {
                self.media.image = None;
                self.media.error = Some(crate::text::sanitize(&e));
            }
        }
        self.media.loaded = Some(path);
    }

    /// Open the viewer on the newest image of the first media key.
    pub(super) fn open_media(&mut self) {
        self.media.open = true;
        self.panels.help = false;
        self.media.key = self.media.key.min(self.run.media.len().saturating_sub(1));
        self.media.item = self
            .run
            .media
            .values()
            .nth(self.media.key)
            .map_or(0, |v| v.len().saturating_sub(1));
        self.load_media();
    }

    /// Keys while the media viewer is open.
    pub(super) fn act_media(&mut self, a: Action) -> Effect {
        let keys = self.run.media.len();
        let items = self
            .run
            .media
            .values()
            .nth(self.media.key)
            .map_or(0, std::collections::VecDeque::len);
        let last = |n: usize| n.saturating_sub(1);
        match a {
            Action::Quit => return Effect::QUIT,
            Action::Back | Action::ToggleMedia => {
                self.media.open = false;
                return Effect::REDRAW;
            }
            Action::FocusLeft | Action::PrevPage => {
                self.media.item = self.media.item.saturating_sub(1);
            }
            Action::FocusRight | Action::NextPage => {
                self.media.item = (self.media.item + 1).min(last(items));
            }
            Action::FirstPage => self.media.item = 0,
            Action::LastPage => self.media.item = last(items),
            Action::FocusUp | Action::FocusDown => {
                self.media.key = if a == Action::FocusUp {
                    self.media.key.saturating_sub(1)
                } else {
                    (self.media.key + 1).min(last(keys))
                };
                self.media.item = self
                    .run
                    .media
                    .values()
                    .nth(self.media.key)
                    .map_or(0, |v| last(v.len()));
            }
            _ => return Effect::NONE,
        }
        self.load_media();
        Effect::REDRAW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_fixture_png_and_refuses_garbage() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/runs/many_metrics/wandb/offline-run-20261130_174932-many0001/files/media/images",
        );
        let png = std::fs::read_dir(&dir)
            .expect("fixture")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "png"))
            .expect("png");
        let img = decode_png(&png).expect("decodes");
        assert_eq!((img.width, img.height), (16, 16));
        assert_eq!(img.rgba.len(), 16 * 16 * 4);

        let tmp = tempfile::tempdir().expect("tempdir");
        let bad = tmp.path().join("bad.png");
        std::fs::write(&bad, b"\x89PNG\r\n\x1a\nnot really").expect("write");
        assert!(decode_png(&bad).is_err());
        assert!(decode_png(&tmp.path().join("missing.png")).is_err());
        // A directory (or FIFO, device) is refused before it is opened.
        assert_eq!(decode_png(tmp.path()), Err("not a regular file".to_owned()));
    }
}

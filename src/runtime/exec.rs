//! Carries out the app's [`Cmd`]s off the loop thread: one worker thread takes them
//! in order, starts and stops readers, reads directories and images, and sends what
//! it found to the loop as a `Msg`. A slow disk (a run directory on a network
//! mount, a 30 MiB PNG) delays that answer, never a key press.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::sync::Arc;

use crate::msg::{Image, Msg};
use crate::source::follow::Follower;
use crate::source::index;
use crate::source::tail::TailOptions;
use crate::ui::Cmd;
use leet_sampler::MonitorHandle;

mod smooth;

/// Largest PNG file read, and most decoded bytes (a hostile file cannot make the
/// viewer allocate more).
const MAX_FILE: u64 = 32 << 20;
const MAX_DECODED: usize = 64 << 20;

/// The answer to a command that asks for something (None for reader starts and
/// stops, which [`Executor`] handles). Blocking: it reads the file system.
#[must_use]
pub fn answer(cmd: Cmd) -> Option<Msg> {
    Some(match cmd {
        // Readers and the monitored process: the [`Executor`]'s (a viewer has no
        // sampler, so there `Cmd::Monitor` does nothing).
        Cmd::StartReader { .. } | Cmd::StopReader { .. } | Cmd::Monitor { .. } => return None,
        // The record inspector's worker is the [`Executor`]'s too.
        Cmd::OpenRecords { .. } | Cmd::ViewRecords(_) | Cmd::CloseRecords => return None,
        Cmd::Smooth(job) => return smooth::smooth_all(vec![job]).pop(),
        Cmd::CountRuns { wandb_dir } => Msg::RunsCounted {
            count: crate::source::file::run_count(&wandb_dir),
            wandb_dir,
        },
        Cmd::FindSegments { file } => Msg::SegmentsFound {
            segments: crate::source::nodes::segments_of(&file).unwrap_or_default(),
            file,
        },
        Cmd::ListRuns { run_dir } => {
            let mut runs = crate::source::file::runs_next_to(&run_dir);
            crate::source::nodes::mark_nodes(&mut runs);
            Msg::RunsListed { runs, run_dir }
        }
        Cmd::LoadImage { path } => Msg::ImageLoaded {
            image: decode_png(&path),
            path,
        },
        Cmd::CheckDirs { dirs } => Msg::DirsChecked {
            gone: dirs.into_iter().filter(|d| !d.is_dir()).collect(),
        },
        Cmd::ScanIndex {
            wandb_dir,
            stale_after,
        } => Msg::Indexed {
            entries: scan_index(
                &wandb_dir,
                &index_cache_dir(),
                scan_options(stale_after),
                None,
            ),
            wandb_dir,
        },
        Cmd::SaveWorkspace {
            wandb_dir,
            base,
            state,
            writer,
            generation,
        } => Msg::WorkspaceWritten {
            generation,
            error: match crate::source::state::default_state_dir() {
                Some(dir) => {
                    let order = (writer, generation);
                    crate::source::state::save(&dir, &wandb_dir, &base, &state, order)
                        .err()
                        .map(|e| e.to_string())
                }
                None => Some("no state directory ($XDG_STATE_HOME or $HOME)".to_owned()),
            },
        },
        Cmd::SaveSettings {
            path,
            base,
            text,
            writer,
            generation,
        } => Msg::SettingsWritten {
            generation,
            error: match path {
                Some(path) => save_settings(&path, &base, &text, (writer, generation)).err(),
                None => Some(NO_SETTINGS_FILE.to_owned()),
            },
        },
    })
}

/// Why settings changes are not saved without a settings file.
const NO_SETTINGS_FILE: &str =
    "no settings file: neither $XDG_CONFIG_HOME (absolute) nor $HOME is set (--config FILE names one)";

/// Lay this instance's settings changes (from `base` to `text`) over the
/// settings file as it is now: why not, naming the file once.
fn save_settings(path: &Path, base: &str, text: &str, order: (u64, u64)) -> Result<(), String> {
    use crate::ui::settings::{merged_text, MAX_CONFIG_BYTES};
    // The merge's refusals name the file (and where in it) already.
    let mut refused = None;
    crate::source::settings::save(path, MAX_CONFIG_BYTES, order, |now| {
        merged_text(path, base, text, now).inspect_err(|e| refused = Some(e.clone()))
    })
    .map_err(|e| {
        refused.unwrap_or_else(|| {
            let why = leet_text::sanitize(&e.to_string());
            format!("{}: {why}", leet_text::sanitize_path(path))
        })
    })
}

/// Where the index cache lives: `$XDG_CACHE_HOME/leet` (without such a place, a
/// directory under the system's temporary one).
fn index_cache_dir() -> std::path::PathBuf {
    index::default_cache_dir().unwrap_or_else(|| std::env::temp_dir().join("leet-index-cache"))
}

/// How a scan decides a run's state: crashed once quiet for `stale_after`.
fn scan_options(stale_after: std::time::Duration) -> index::ScanOptions {
    index::ScanOptions {
        stale_after: stale_after.as_secs_f64(),
        ..Default::default()
    }
}

/// The index of `wandb_dir` from the cache or, given, the previous scan's entries.
fn scan_index(
    wandb_dir: &Path,
    cache: &Path,
    opts: index::ScanOptions,
    prior: Option<&[crate::msg::RunIndexEntry]>,
) -> Vec<crate::msg::RunIndexEntry> {
    index::scan_after(wandb_dir, cache, &opts, prior).entries
}

/// Each directory's last entries, and its own modification time read just before
/// they were listed (0: unknown).
type Last = HashMap<std::path::PathBuf, (Vec<crate::msg::RunIndexEntry>, u64)>;

/// The index scans of a session: each directory's last entries kept, so the next
/// scan starts from them (a `stat` or two per run, no cache file parsed), and an
/// unchanged index is answered in one short message.
#[derive(Clone)]
struct Indexes {
    cache: std::path::PathBuf,
    last: Arc<std::sync::Mutex<Last>>,
}

impl Indexes {
    fn new(cache: std::path::PathBuf) -> Self {
        Self {
            cache,
            last: Arc::default(),
        }
    }

    /// The scan's answer; `progress` gets its partial listings meanwhile (see
    /// `index::scan_progress`).
    fn scan(
        &self,
        wandb_dir: std::path::PathBuf,
        opts: index::ScanOptions,
        progress: &mut dyn FnMut(Vec<crate::msg::RunIndexEntry>),
    ) -> Msg {
        let Ok(mut last) = self.last.lock() else {
            let entries = scan_index(&wandb_dir, &self.cache, opts, None);
            return Msg::Indexed { wandb_dir, entries };
        };
        // Read before the listing: an entry added after it moves it again.
        let mtime = index::dir_mtime_ns(&wandb_dir);
        let (prior, listed) = match last.get(&wandb_dir) {
            Some((p, at)) => (Some(p), *at != 0 && *at == mtime),
            None => (None, false),
        };
        // Nothing changed on disk: no entry is copied or compared.
        if prior.is_some_and(|p| index::unchanged_listed(&wandb_dir, p, &opts, listed)) {
            if let Some(entry) = last.get_mut(&wandb_dir) {
                entry.1 = mtime;
            }
            return Msg::IndexUnchanged { wandb_dir };
        }
        let entries = index::scan_progress(
            &wandb_dir,
            &self.cache,
            &opts,
            prior.map(Vec::as_slice),
            progress,
        )
        .entries;
        let same = prior.is_some_and(|p| {
            p.len() == entries.len()
                && p.iter()
                    .zip(&entries)
                    .all(|(a, b)| index::same_listing(a, b))
        });
        last.insert(wandb_dir.clone(), (entries.clone(), mtime));
        if same {
            return Msg::IndexUnchanged { wandb_dir };
        }
        Msg::Indexed { wandb_dir, entries }
    }
}

/// The worker thread: commands in, messages out to the loop's channel.
pub struct Executor {
    cmds: Sender<Cmd>,
}

/// What the live monitor says after `Cmd::Monitor { pid }`: the new root (pid and
/// command line) or none, and for a pid that cannot be monitored a `SourceError`
/// naming it (then none is monitored).
#[must_use]
pub fn monitor(handle: &MonitorHandle, pid: Option<u32>) -> Vec<Msg> {
    match handle.set(pid) {
        Ok(root) => vec![Msg::Monitoring(root)],
        Err(e) => vec![Msg::Monitoring(None), Msg::SourceError(e)],
    }
}

impl Executor {
    /// Start the worker; its answers and the readers it starts send to `tx`.
    #[must_use]
    pub fn spawn(tx: SyncSender<Msg>) -> Self {
        Self::spawn_with(tx, None)
    }

    /// [`Executor::spawn`] for the live monitor: `Cmd::Monitor` switches the
    /// sampler's process tree through `monitor`.
    #[must_use]
    pub fn spawn_with(tx: SyncSender<Msg>, monitor: Option<MonitorHandle>) -> Self {
        let (cmds, rx) = mpsc::channel::<Cmd>();
        let _ = std::thread::Builder::new()
            .name("leet-exec".into())
            .spawn(move || {
                // One stop flag per reader started; each stops when the app lets
                // its run go, and the app drops what it had queued.
                let mut stops: HashMap<u64, Arc<AtomicBool>> = HashMap::new();
                // Every run is followed on one thread, however many are drawn.
                let follower = Follower::spawn(TailOptions::default());
                let indexes = Indexes::new(index_cache_dir());
                // The record inspector's worker (one file at a time).
                let mut records: Option<crate::source::records::Handle> = None;
                let smoother = smooth::spawn(tx.clone());
                for cmd in rx {
                    match cmd {
                        Cmd::OpenRecords { path } => {
                            records = Some(crate::source::records::spawn(path, tx.clone()));
                        }
                        Cmd::ViewRecords(v) => {
                            if let Some(r) = &records {
                                r.view(v);
                            }
                        }
                        Cmd::CloseRecords => records = None,
                        Cmd::Smooth(job) => {
                            let _ = smoother.send(job);
                        }
                        Cmd::StartReader { path, tag } => {
                            let stop = Arc::new(AtomicBool::new(false));
                            stops.insert(tag, stop.clone());
                            follower.follow(path, tx.clone(), tag, stop);
                        }
                        Cmd::StopReader { tag } => {
                            if let Some(stop) = stops.remove(&tag) {
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                        // An index scan reads many files: on a thread of its own, so
                        // readers and images asked for meanwhile do not wait (the app
                        // asks for one scan at a time).
                        Cmd::ScanIndex {
                            wandb_dir,
                            stale_after,
                        } => {
                            let (tx, indexes) = (tx.clone(), indexes.clone());
                            let _ = std::thread::Builder::new().name("leet-index".into()).spawn(
                                move || {
                                    // Rows show as runs are read, not after the biggest.
                                    let dir = wandb_dir.clone();
                                    let mut progress = |entries| {
                                        let wandb_dir = dir.clone();
                                        let _ = tx.send(Msg::IndexProgress { wandb_dir, entries });
                                    };
                                    let opts = scan_options(stale_after);
                                    let msg = indexes.scan(wandb_dir, opts, &mut progress);
                                    let _ = tx.send(msg);
                                },
                            );
                        }
                        Cmd::Monitor { pid } => {
                            let Some(handle) = &monitor else { continue };
                            if self::monitor(handle, pid)
                                .into_iter()
                                .any(|msg| tx.send(msg).is_err())
                            {
                                break;
                            }
                        }
                        cmd => {
                            if let Some(msg) = answer(cmd) {
                                if tx.send(msg).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                }
                for stop in stops.values() {
                    stop.store(true, Ordering::Relaxed);
                }
            });
        Self { cmds }
    }

    /// Queue commands for the worker (never blocks).
    pub fn run(&self, cmds: impl IntoIterator<Item = Cmd>) {
        for cmd in cmds {
            let _ = self.cmds.send(cmd);
        }
    }
}

/// Decode an image file (PNG; JPEG, GIF's first frame, WebP, BMP) into RGBA, with
/// size limits.
///
/// # Errors
/// Unreadable, too large or undecodable files, as text.
pub(crate) fn decode_png(path: &Path) -> Result<Image, String> {
    // The decoders are other crates' code on a file the run names: a panic in
    // one is this image's error, not the viewer's end.
    crate::terminal::contained(|| decode_file(path))
        .unwrap_or_else(|e| Err(format!("the image decoder failed on this file ({e})")))
}

/// [`decode_png`], uncontained.
fn decode_file(path: &Path) -> Result<Image, String> {
    // Only a regular file: opening a FIFO or a device could block the worker.
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
    if let Some(kind) = not_png(&data) {
        return decode_other(data, kind).map_err(|e| format!("{kind} image: {e}"));
    }
    let mut decoder = png::Decoder::new_with_limits(
        std::io::Cursor::new(data),
        png::Limits { bytes: MAX_DECODED },
    );
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| match e {
        png::DecodingError::LimitsExceeded => too_large(None),
        e => e.to_string(),
    })?;
    let dims = (reader.info().width, reader.info().height);
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| too_large(Some(dims)))?;
    if size > MAX_DECODED {
        return Err(too_large(Some(dims)));
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
        note: None,
    })
}

/// An image of another format than PNG (`kind`, from its first bytes) decoded by
/// the `image` crate within the same limits: the decoder allocates at most
/// `MAX_DECODED`, and the RGBA copy is refused past it.
fn decode_other(data: Vec<u8>, kind: &str) -> Result<Image, String> {
    let format = match kind {
        "a JPEG" => image::ImageFormat::Jpeg,
        "a GIF" => image::ImageFormat::Gif,
        "a BMP" => image::ImageFormat::Bmp,
        "a WebP" => image::ImageFormat::WebP,
        _ => return Err("not a format drawn here".into()),
    };
    let reader = || {
        let mut r = image::ImageReader::with_format(std::io::Cursor::new(&data[..]), format);
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(MAX_DECODED as u64);
        r.limits(limits);
        r
    };
    let err = |e: image::ImageError| match e {
        image::ImageError::Limits(_) => too_large(None),
        e => e.to_string(),
    };
    // The header first: a picture too large is refused before it is decoded.
    let (w, h) = reader().into_dimensions().map_err(err)?;
    if (w as usize).saturating_mul(h as usize).saturating_mul(4) > MAX_DECODED {
        return Err(too_large(Some((w, h))));
    }
    // A JPEG read strictly decodes only when whole and sound; else the lenient
    // reading below draws what it can, the rest grey, and the title says why.
    let strict = if format == image::ImageFormat::Jpeg {
        match strict_jpeg(&data) {
            Some(img) => return Ok(img),
            None => Some(jpeg_ends(&data)),
        }
    } else {
        None
    };
    let img = reader().decode().map_err(err)?;
    let (width, height) = (img.width(), img.height());
    let rgba = img.into_rgba8().into_raw();
    let note = match strict {
        // Its end-of-image marker after its last scan says whether it was cut.
        Some(false) => Some("file cut short: its missing part drawn grey"),
        // Refused strictly, and its last row the decoder's grey: a broken scan
        // (a strict refusal alone may be harmless bytes between its headers).
        Some(true) if ends_in_fill_grey(&rgba, width) => {
            Some("file damaged: its broken part drawn grey")
        }
        _ => None,
    };
    Ok(Image {
        width,
        height,
        rgba,
        note,
    })
}

/// Whether the last row of an RGBA picture `width` wide is all the grey a JPEG
/// decoder fills what it could not decode with (128, 128, 128).
fn ends_in_fill_grey(rgba: &[u8], width: u32) -> bool {
    let row = width as usize * 4;
    rgba.len() >= row
        && row > 0
        && rgba[rgba.len() - row..]
            .chunks_exact(4)
            .all(|p| p[..3] == [128, 128, 128])
}

/// A JPEG decoded to RGBA in strict mode: None where it is damaged or cut (or
/// not readable at all).
fn strict_jpeg(data: &[u8]) -> Option<Image> {
    use zune_core::bytestream::ZCursor;
    use zune_core::colorspace::ColorSpace;
    use zune_core::options::DecoderOptions;
    let opts = DecoderOptions::default()
        .set_strict_mode(true)
        .jpeg_set_out_colorspace(ColorSpace::RGBA);
    let mut d = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(data), opts);
    let rgba = d.decode().ok()?;
    let (w, h) = d.dimensions()?;
    let (width, height) = (u32::try_from(w).ok()?, u32::try_from(h).ok()?);
    (rgba.len() == w * h * 4).then_some(Image {
        width,
        height,
        rgba,
        note: None,
    })
}

/// Whether a JPEG is whole: its end-of-image marker (`FF D9`) comes after its
/// last start-of-scan (`FF DA`). Neither pair occurs inside the entropy-coded
/// data (an `FF` there is followed by `00` or a restart marker), so a file cut
/// anywhere in its scans has none after the last one; bytes after the end are no
/// matter, nor is a thumbnail's own end-of-image before the scans.
fn jpeg_ends(data: &[u8]) -> bool {
    let last_scan = data.windows(2).rposition(|w| w == [0xFF, 0xDA]);
    last_scan.is_some_and(|i| data[i..].windows(2).any(|w| w == [0xFF, 0xD9]))
}

/// What an image too large to draw says: its size where known, and the limit.
fn too_large(dims: Option<(u32, u32)>) -> String {
    let limit = MAX_DECODED >> 20;
    match dims {
        Some((w, h)) => format!("image too large: {w}×{h} (at most {limit} MiB decoded)"),
        None => format!("image too large (at most {limit} MiB decoded)"),
    }
}

/// The kind of an image that is not a PNG, from its first bytes (None: a PNG, or
/// bytes of no kind named here: the PNG decoder says what is wrong).
fn not_png(data: &[u8]) -> Option<&'static str> {
    match data {
        [0x89, b'P', b'N', b'G', ..] => None,
        [0xFF, 0xD8, 0xFF, ..] => Some("a JPEG"),
        [b'G', b'I', b'F', b'8', ..] => Some("a GIF"),
        [b'B', b'M', ..] => Some("a BMP"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("a WebP"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JPEG, GIF, BMP or WebP image is drawn as a PNG is: its pixels, RGBA (a
    /// JPEG's within its loss), a GIF's first frame.
    #[test]
    fn jpeg_gif_bmp_and_webp_images_are_decoded() {
        let (w, h) = (16u32, 8u32);
        let px = |x: u32, y: u32| [(x * 16) as u8, (y * 32) as u8, 128, 255];
        let src = image::RgbaImage::from_fn(w, h, |x, y| image::Rgba(px(x, y)));
        let dir = tempfile::tempdir().expect("tempdir");
        for (format, lossy) in [
            (image::ImageFormat::Jpeg, true),
            (image::ImageFormat::Gif, true),
            (image::ImageFormat::Bmp, false),
            (image::ImageFormat::WebP, false),
        ] {
            let p = dir.path().join("img");
            let mut out = std::io::Cursor::new(Vec::new());
            if format == image::ImageFormat::Jpeg {
                image::DynamicImage::ImageRgba8(src.clone())
                    .into_rgb8()
                    .write_to(&mut out, format)
                    .expect("encode");
            } else {
                src.write_to(&mut out, format).expect("encode");
            }
            std::fs::write(&p, out.into_inner()).expect("write");
            let img = decode_png(&p).unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!((img.width, img.height), (w, h), "{format:?}");
            assert_eq!(img.rgba.len(), (w * h * 4) as usize, "{format:?}");
            let want = px(9, 5);
            let got = &img.rgba[((5 * w + 9) * 4) as usize..][..4];
            let off = want.iter().zip(got).map(|(a, b)| a.abs_diff(*b)).max();
            let tolerance = if lossy { 40 } else { 0 };
            assert!(
                off.is_some_and(|d| d <= tolerance),
                "{format:?}: {got:?} vs {want:?}"
            );
        }
    }

    /// Damaged images of every format drawn (bytes flipped, cut, zeroed) give an
    /// image or an error, never a panic out of the decoder (one would end the
    /// viewer: the decoders run contained).
    #[test]
    fn damaged_images_of_every_format_never_panic_out() {
        let src = image::RgbaImage::from_fn(24, 16, |x, y| {
            image::Rgba([x as u8 * 9, y as u8 * 15, 77, 255])
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("img");
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/runs/many_metrics/wandb/offline-run-20261130_174932-many0001/files/media/images",
        );
        let png = (std::fs::read_dir(&fixture).expect("fixture").flatten())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "png"))
            .expect("png");
        let mut files = vec![std::fs::read(png).expect("png")];
        for format in [
            image::ImageFormat::Jpeg,
            image::ImageFormat::Gif,
            image::ImageFormat::Bmp,
            image::ImageFormat::WebP,
        ] {
            let mut out = std::io::Cursor::new(Vec::new());
            let img = image::DynamicImage::ImageRgba8(src.clone());
            let img = if format == image::ImageFormat::Jpeg {
                image::DynamicImage::ImageRgb8(img.into_rgb8())
            } else {
                img
            };
            img.write_to(&mut out, format).expect("encode");
            files.push(out.into_inner());
        }
        for good in files {
            for _ in 0..150 {
                let mut b = good.clone();
                // Keep the magic (the format is told by it); damage the rest.
                for _ in 0..=(next() % 4) {
                    let at = 4 + (next() as usize) % (b.len() - 4);
                    match next() % 3 {
                        0 => b[at] ^= 1 << (next() % 8),
                        1 => b.truncate(at),
                        _ => b[at..].iter_mut().take(16).for_each(|x| *x = 0),
                    }
                    if b.len() <= 4 {
                        break;
                    }
                }
                std::fs::write(&p, &b).expect("write");
                // Returns, whatever it says.
                let _ = decode_png(&p);
            }
        }
    }

    /// A JPEG cut short, or whose scan is broken, decodes (the rows it lacks
    /// grey) and says so; a whole one, trailing bytes after its end or not, says
    /// nothing.
    #[test]
    fn a_jpeg_cut_short_is_drawn_and_said_to_be() {
        let src =
            image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8 * 3, y as u8 * 5, 9]));
        let mut out = std::io::Cursor::new(Vec::new());
        src.write_to(&mut out, image::ImageFormat::Jpeg)
            .expect("encode");
        let whole = out.into_inner();
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("img.jpg");
        let note = |bytes: &[u8]| {
            std::fs::write(&p, bytes).expect("write");
            decode_png(&p).map(|i| i.note)
        };
        assert_eq!(note(&whole), Ok(None));
        let mut padded = whole.clone();
        padded.extend_from_slice(&[0, 0, 0, 0x12, 0x34]);
        assert_eq!(note(&padded), Ok(None));
        let cut = &whole[..whole.len() * 2 / 3];
        let got = note(cut).expect("drawn as far as it goes");
        assert!(got.is_some_and(|n| n.contains("cut short")), "{got:?}");
        // Bytes of its scan changed, its length whole (it was drawn half grey
        // without a word).
        let scan = whole
            .windows(2)
            .rposition(|w| w == [0xFF, 0xDA])
            .expect("SOS")
            + 40;
        let mut broken = whole.clone();
        for b in broken[scan..whole.len() - 2].iter_mut().step_by(97) {
            *b ^= 0x5A;
        }
        let got = note(&broken).expect("drawn as far as it goes");
        assert!(got.is_some_and(|n| n.contains("damaged")), "{got:?}");
    }

    /// A picture whose header says it is too large to draw is refused from its
    /// header, before anything is allocated for it.
    #[test]
    fn a_huge_image_of_another_format_is_refused_from_its_header() {
        // A BMP header (BITMAPINFOHEADER) of 30000×30000 at 32 bits, no pixels.
        let mut bmp = Vec::new();
        bmp.extend_from_slice(b"BM");
        bmp.extend_from_slice(&54u32.to_le_bytes()); // file size (a lie)
        bmp.extend_from_slice(&0u32.to_le_bytes());
        bmp.extend_from_slice(&54u32.to_le_bytes()); // pixels' offset
        bmp.extend_from_slice(&40u32.to_le_bytes());
        bmp.extend_from_slice(&30_000i32.to_le_bytes());
        bmp.extend_from_slice(&30_000i32.to_le_bytes());
        bmp.extend_from_slice(&1u16.to_le_bytes());
        bmp.extend_from_slice(&32u16.to_le_bytes());
        bmp.extend_from_slice(&[0; 24]);
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("huge.bmp");
        std::fs::write(&p, bmp).expect("write");
        let e = decode_png(&p).expect_err("refused");
        assert!(e.starts_with("a BMP image: image too large"), "{e}");
    }

    /// A JPEG, GIF, BMP or WebP file that does not decode says which kind it is
    /// and why, not that it is a PNG with a bad signature.
    #[test]
    fn an_image_of_another_format_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (bytes, kind) in [
            (&b"\xFF\xD8\xFF\xE0\x00\x10JFIF"[..], "a JPEG image"),
            (&b"GIF89a\x01\x00"[..], "a GIF image"),
            (&b"BM\x36\x00\x00\x00"[..], "a BMP image"),
            (&b"RIFF\x24\x00\x00\x00WEBPVP8 "[..], "a WebP image"),
        ] {
            let p = dir.path().join("img");
            std::fs::write(&p, bytes).expect("write");
            let Err(e) = decode_png(&p) else {
                panic!("{kind} decoded");
            };
            assert!(e.starts_with(&format!("{kind}: ")), "{e}");
        }
    }

    #[test]
    fn a_refused_settings_file_is_named_once_in_the_save_error() {
        use crate::ui::settings::Config;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[viewer\nrows = ").expect("write");
        let base = Config::default();
        let mut now = base.clone();
        now.viewer.rows = Some(2);
        let e = save_settings(&path, &base.to_toml(), &now.to_toml(), (1, 1)).unwrap_err();
        let named = leet_text::sanitize_path(&path);
        assert_eq!(e.matches(named.as_str()).count(), 1, "{e}");
        assert!(
            e.starts_with(&format!("{named}:1:8: not valid TOML")),
            "{e}"
        );
        // An I/O error names it too (a directory where the file should be).
        std::fs::remove_file(&path).expect("rm");
        std::fs::create_dir(&path).expect("mkdir");
        let e = save_settings(&path, &base.to_toml(), &now.to_toml(), (1, 2)).unwrap_err();
        assert_eq!(e.matches(named.as_str()).count(), 1, "{e}");
    }

    #[test]
    fn monitor_switches_the_samplers_tree_and_answers() {
        use leet_sampler::Sampler;
        use std::time::Duration;
        let mut sampler = Sampler::with_collectors(Vec::new());
        let handle = sampler.monitor_handle();
        let (tx, rx) = mpsc::sync_channel(16);
        let exec = Executor::spawn_with(tx, Some(handle.clone()));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = child.id();
        // Until its exec completes, a new process has no command line yet (it would
        // be described as `[sleep]`): wait for it.
        let t0 = std::time::Instant::now();
        while std::fs::read(format!("/proc/{pid}/cmdline")).map_or(true, |c| c.is_empty()) {
            assert!(t0.elapsed() < Duration::from_secs(5), "no command line");
            std::thread::sleep(Duration::from_millis(5));
        }
        let recv = || rx.recv_timeout(Duration::from_secs(10)).expect("answer");
        exec.run([Cmd::Monitor { pid: Some(pid) }]);
        match recv() {
            Msg::Monitoring(Some((p, cmd))) => {
                assert_eq!(p, pid);
                assert_eq!(cmd, "sleep 30");
            }
            m => panic!("{m:?}"),
        }
        assert_eq!(handle.root(), Some(pid));
        let _ = sampler.sample();
        child.kill().expect("kill");
        child.wait().expect("wait");
        // A pid that is gone: none monitored, and an error naming it.
        exec.run([Cmd::Monitor { pid: Some(pid) }]);
        assert!(matches!(recv(), Msg::Monitoring(None)));
        match recv() {
            Msg::SourceError(e) => assert!(e.contains(&pid.to_string()), "{e}"),
            m => panic!("{m:?}"),
        }
        assert_eq!(handle.root(), None);
        exec.run([Cmd::Monitor {
            pid: Some(std::process::id()),
        }]);
        assert!(matches!(recv(), Msg::Monitoring(Some((p, _))) if p == std::process::id()));
        exec.run([Cmd::Monitor { pid: None }]);
        assert!(matches!(recv(), Msg::Monitoring(None)));
        assert_eq!(handle.root(), None);
        // A viewer's executor has no sampler: the command is a no-op, not an answer.
        let (tx, rx) = mpsc::sync_channel(16);
        let viewer = Executor::spawn(tx);
        viewer.run([
            Cmd::Monitor { pid: Some(1) },
            Cmd::CheckDirs { dirs: Vec::new() },
        ]);
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(10)),
            Ok(Msg::DirsChecked { .. })
        ));
    }

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

    #[test]
    fn an_index_scan_again_with_nothing_changed_says_so_in_one_message() {
        let tmp = tempfile::tempdir().expect("tmp");
        let wandb = tmp.path().join("wandb");
        let write = |name: &str, id: &str| {
            let d = wandb.join(name);
            std::fs::create_dir_all(&d).expect("mkdir");
            let spec = leet_format::synth::SynthSpec {
                run_id: id.into(),
                steps: 5,
                ..Default::default()
            };
            std::fs::write(
                d.join(format!("run-{id}.wandb")),
                leet_format::synth::file_bytes(&spec),
            )
            .expect("write");
        };
        write("run-20260101_000000-aaa", "aaa");
        let idx = Indexes::new(tmp.path().join("cache"));
        let first = idx.scan(wandb.clone(), index::ScanOptions::default(), &mut |_| {});
        assert!(matches!(&first, Msg::Indexed { entries, .. } if entries.len() == 1));
        assert!(matches!(
            idx.scan(wandb.clone(), index::ScanOptions::default(), &mut |_| {}),
            Msg::IndexUnchanged { .. }
        ));
        write("run-20260102_000000-bbb", "bbb");
        assert!(matches!(
            idx.scan(wandb.clone(), index::ScanOptions::default(), &mut |_| {}),
            Msg::Indexed { entries, .. } if entries.len() == 2
        ));
        assert!(matches!(
            idx.scan(wandb.clone(), index::ScanOptions::default(), &mut |_| {}),
            Msg::IndexUnchanged { .. }
        ));
    }
}

#[cfg(test)]
mod stale_tests {
    use super::*;

    /// A run without an exit record, quiet for 30 s: crashed under `--stale-after
    /// 5s`, running under the default 2 minutes.
    #[test]
    fn an_index_scan_decides_crashed_runs_with_the_stale_after_asked() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let wandb = tmp.path().join("wandb");
        let dir = wandb.join("run-20260101_000000-quiet");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64();
        let spec = leet_format::synth::RunSpec {
            run_id: "quiet".into(),
            start_time: now - 40.0,
            steps: 5,
            step_seconds: 1.0,
            exit_code: None,
            ..Default::default()
        };
        let file = dir.join("run-quiet.wandb");
        std::fs::write(&file, leet_format::synth::run_file(&spec)).expect("write");
        let ago = std::time::SystemTime::now() - std::time::Duration::from_secs(30);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_modified(ago))
            .expect("mtime");
        let state = |secs| {
            let idx = Indexes::new(tmp.path().join(format!("cache{secs}")));
            let opts = scan_options(std::time::Duration::from_secs(secs));
            match idx.scan(wandb.clone(), opts, &mut |_| {}) {
                Msg::Indexed { entries, .. } => entries[0].state,
                m => panic!("{m:?}"),
            }
        };
        assert_eq!(state(5), crate::msg::RunStatus::Crashed);
        assert_eq!(state(120), crate::msg::RunStatus::Running);
    }
}

//! `disk.<path>.usagePercent`, `disk.<path>.usageGB` per disk path, and block-device I/O
//! since the sampler started: `disk.<dev>.in` / `disk.<dev>.out` per real whole disk plus
//! their sums `disk.in` / `disk.out` (MiB).
//!
//! Devices: whole disks listed in `/sys/block` that have a `device` link (so not loop,
//! ram, zram, dm or md, whose I/O is already counted on the disks below them); partitions
//! never appear there. W&B 0.31 writes `disk.vda.in` for the same host (see
//! `tests/fixtures` `system.records.jsonl`). Without `/sys/block`, names are filtered
//! instead (`loop*`, `ram*`, `zram*`, and partition-looking names are skipped).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::procfs;
use super::{Collector, SamplerError};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const SECTOR: u64 = 512;

/// (used bytes, used percent) the way gopsutil's `disk.Usage` computes them:
/// used = (blocks − free) × frsize; percent = used / (used + avail-to-unprivileged).
pub(crate) fn usage(path: &Path) -> Result<(u64, f64), SamplerError> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| SamplerError::Parse {
        what: "disk path".to_string(),
        detail: format!("'{}' contains a NUL byte", path.display()),
    })?;
    // SAFETY: statvfs is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a valid out pointer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &raw mut st) };
    if rc != 0 {
        return Err(SamplerError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::last_os_error(),
        });
    }
    let frsize = st.f_frsize as u64;
    let used = (st.f_blocks as u64).saturating_sub(st.f_bfree as u64) * frsize;
    let avail = st.f_bavail as u64 * frsize;
    let percent = if used + avail > 0 {
        used as f64 / (used + avail) as f64 * 100.0
    } else {
        0.0
    };
    Ok((used, percent))
}

/// Sectors read and written per device name, from `/proc/diskstats`.
pub(crate) fn parse_diskstats(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            // major minor name reads merged sectors_read ms writes merged sectors_written ...
            let name = *f.get(2)?;
            let read = f.get(5)?.parse().ok()?;
            let written = f.get(9)?.parse().ok()?;
            Some((name.to_string(), read, written))
        })
        .collect()
}

/// Name rule used when `/sys/block` is not readable.
pub(crate) fn looks_virtual_or_partition(name: &str) -> bool {
    if ["loop", "ram", "zram", "dm-", "md", "sr", "fd"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return true;
    }
    let ends_digit = name.ends_with(|c: char| c.is_ascii_digit());
    if name.starts_with("nvme") || name.starts_with("mmcblk") {
        // nvme0n1 is a disk, nvme0n1p1 a partition
        return name
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .ends_with('p');
    }
    // sda1, vda2, xvda1
    ends_digit
}

/// The real whole disks, in `/proc/diskstats` order.
fn real_devices(stats: &[(String, u64, u64)]) -> Vec<String> {
    let sys = Path::new("/sys/block");
    let sys_ok = sys.is_dir();
    stats
        .iter()
        .map(|(name, _, _)| name)
        .filter(|name| {
            if ["loop", "ram", "zram"].iter().any(|p| name.starts_with(p)) {
                return false;
            }
            if sys_ok {
                sys.join(name.as_str()).join("device").exists()
            } else {
                !looks_virtual_or_partition(name)
            }
        })
        .cloned()
        .collect()
}

struct Device {
    name: String,
    key_in: String,
    key_out: String,
    base_read: u64,
    base_written: u64,
}

pub(crate) struct DiskCollector {
    paths: Vec<(PathBuf, String, String)>,
    devices: Vec<Device>,
    buf: String,
    /// `/proc/diskstats`, kept open.
    diskstats: procfs::ProcFile,
}

impl DiskCollector {
    pub(crate) fn new(paths: &[PathBuf]) -> Self {
        let mut buf = String::new();
        let stats = procfs::read_into(Path::new("/proc/diskstats"), &mut buf)
            .map(|()| parse_diskstats(&buf))
            .unwrap_or_default();
        let devices = real_devices(&stats)
            .into_iter()
            .filter_map(|name| {
                let (_, r, w) = stats.iter().find(|(n, _, _)| *n == name)?;
                Some(Device {
                    key_in: format!("disk.{name}.in"),
                    key_out: format!("disk.{name}.out"),
                    base_read: *r,
                    base_written: *w,
                    name,
                })
            })
            .collect();
        // A path given twice is read once (its keys would come twice a sample).
        let mut seen = std::collections::HashSet::new();
        let paths = paths
            .iter()
            .filter(|p| seen.insert(p.as_path()))
            .map(|p| {
                let d = p.display();
                (
                    p.clone(),
                    format!("disk.{d}.usagePercent"),
                    format!("disk.{d}.usageGB"),
                )
            })
            .collect();
        Self {
            paths,
            devices,
            buf,
            diskstats: procfs::ProcFile::new("/proc/diskstats"),
        }
    }
}

impl Collector for DiskCollector {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn sample(&mut self, out: &mut Vec<(String, f64)>) -> Result<(), SamplerError> {
        let mut first_err = None;
        for (path, key_percent, key_gb) in &self.paths {
            match usage(path) {
                Ok((used, percent)) => {
                    out.push((key_percent.clone(), percent));
                    out.push((key_gb.clone(), used as f64 / GIB));
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if !self.devices.is_empty() {
            self.diskstats.read(&mut self.buf)?;
            let stats = parse_diskstats(&self.buf);
            let (mut total_in, mut total_out) = (0.0, 0.0);
            for dev in &self.devices {
                let Some((_, r, w)) = stats.iter().find(|(n, _, _)| *n == dev.name) else {
                    continue;
                };
                let mb_in = (r.saturating_sub(dev.base_read) * SECTOR) as f64 / MIB;
                let mb_out = (w.saturating_sub(dev.base_written) * SECTOR) as f64 / MIB;
                total_in += mb_in;
                total_out += mb_out;
                out.push((dev.key_in.clone(), mb_in));
                out.push((dev.key_out.clone(), mb_out));
            }
            out.push(("disk.in".to_string(), total_in));
            out.push(("disk.out".to_string(), total_out));
        }
        first_err.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskstats_fields() {
        let text = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n 254       0 vda 6901 3060 1724690 6372 2693 27510 2641808 6330 0 2036 12900 3730 36 44840 191 148 4\n";
        let v = parse_diskstats(text);
        assert_eq!(v[1], ("vda".to_string(), 1_724_690, 2_641_808));
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn name_rules() {
        for n in [
            "loop0",
            "ram1",
            "zram0",
            "sda1",
            "vda2",
            "nvme0n1p1",
            "mmcblk0p2",
            "dm-0",
            "md127",
        ] {
            assert!(looks_virtual_or_partition(n), "{n}");
        }
        for n in ["sda", "vda", "xvdb", "nvme0n1", "mmcblk0"] {
            assert!(!looks_virtual_or_partition(n), "{n}");
        }
    }

    /// `--disk-path / --disk-path /`: its keys once a sample.
    #[test]
    fn a_path_given_twice_is_read_once() {
        let mut c = DiskCollector::new(&[PathBuf::from("/"), PathBuf::from("/")]);
        let mut out = Vec::new();
        c.sample(&mut out).expect("sample");
        let n = out
            .iter()
            .filter(|(k, _)| k == "disk./.usagePercent")
            .count();
        assert_eq!(n, 1, "{out:?}");
    }

    #[test]
    fn root_usage_is_sane() {
        let (used, percent) = usage(Path::new("/")).expect("statvfs /");
        assert!(used > 0);
        assert!((0.0..=100.0).contains(&percent));
    }
}

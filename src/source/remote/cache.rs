//! Downloaded history files, kept under `$XDG_CACHE_HOME/leet/remote/` (else
//! `~/.cache/leet/remote/`): one folder per server and run, holding the files and
//! the run's version (state, last heartbeat, rows) they were downloaded at. An
//! entry is used only while the run's version is the same; a new one is written
//! into a temporary folder and renamed into place, so a reader never sees half of
//! one; the oldest entries go when the cache is over its size. Only what the server
//! sent is kept: never the key.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::files;
use super::url::RemoteUrl;

/// Default bound on the cache's size.
pub const DEFAULT_LIMIT: u64 = 2 << 30;

const VERSION: &str = "version";

/// The cache folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    limit: u64,
    /// The runs' `.wandb` folders ([`files::claim`]), counted toward `limit` too.
    runs: Option<PathBuf>,
}

impl Cache {
    /// A cache in `dir`, kept under `limit` bytes.
    pub fn new(dir: PathBuf, limit: u64) -> Self {
        Self {
            dir,
            limit,
            runs: None,
        }
    }

    /// The same cache, the runs' folders under `runs` counted toward its limit
    /// and evicted with its entries (those another process holds excepted).
    #[must_use]
    pub fn with_runs(self, runs: PathBuf) -> Self {
        Self {
            runs: Some(runs),
            ..self
        }
    }

    /// The default folder, from `env` (an environment lookup).
    pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        let base = env("XDG_CACHE_HOME")
            .filter(|d| Path::new(d).is_absolute())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache")))?;
        Some(base.join("leet").join("remote"))
    }

    fn entry(&self, url: &RemoteUrl) -> PathBuf {
        self.dir.join(entry_name(url))
    }

    /// The run's files when they were cached at `version`.
    pub fn get(&self, url: &RemoteUrl, version: &str) -> Option<Vec<Vec<u8>>> {
        let dir = self.entry(url);
        if fs::read_to_string(dir.join(VERSION)).ok()? != version {
            return None;
        }
        let mut files = Vec::new();
        for i in 0.. {
            match fs::read(dir.join(format!("{i}.parquet"))) {
                Ok(b) => files.push(b),
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(_) => return None,
            }
        }
        // Touched, so eviction takes the least recently used.
        let _ = fs::write(dir.join(VERSION), version);
        Some(files)
    }

    /// Keep the run's files at `version`, replacing what was kept of it.
    ///
    /// # Errors
    /// Creating, writing or renaming in the cache folder.
    pub fn put(
        &self,
        url: &RemoteUrl,
        version: &str,
        files: &[impl AsRef<[u8]>],
    ) -> io::Result<()> {
        files::create_private_dir(&self.dir)?;
        let dir = self.entry(url);
        let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        files::create_private_dir(&tmp)?;
        for (i, f) in files.iter().enumerate() {
            files::write_private(&tmp.join(format!("{i}.parquet")), f.as_ref())?;
        }
        files::write_private(&tmp.join(VERSION), version.as_bytes())?;
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&tmp, &dir)?;
        self.evict();
        Ok(())
    }

    /// Forget what was kept of the run (files that no longer read), so the next
    /// open downloads them again.
    pub fn remove(&self, url: &RemoteUrl) {
        let _ = fs::remove_dir_all(self.entry(url));
    }

    /// Remove the least recently used entries (and runs' folders not in use)
    /// while they are over the limit ([`files::evict`]).
    pub fn evict(&self) {
        files::evict(&self.dir, VERSION, self.runs.as_deref(), self.limit);
    }
}

/// Characters of a name's readable part; the hash after it tells names apart.
const READABLE: usize = 96;

/// The name of a run's (or a project's) folder: a readable part (server, entity,
/// project and id, anything but letters, digits, `.` and `-` as `_`, cut short)
/// and a hash of the API, entity, project and run, each part delimited. The
/// readable part alone is not one name per run: `b_c/runs/x` of entity `a` and
/// `c/runs/x` of entity `a_b` read alike, and so do project `b_tiny` and run
/// `b/tiny`, and two runs sharing a folder overwrite each other's files.
pub fn entry_name(url: &RemoteUrl) -> String {
    let readable: String = format!("{}_{}", url.netloc(), url.path())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(READABLE)
        .collect();
    let mut h = Fnv::default();
    for part in [url.api.as_str(), &url.entity, &url.project] {
        h.part(part.as_bytes());
    }
    match &url.run {
        Some(r) => {
            h.part(b"run");
            h.part(r.as_bytes());
        }
        None => h.part(b"project"),
    }
    format!("{readable}-{:016x}", h.0)
}

/// FNV-1a, 64 bits: the same on every platform and toolchain (std's hashers
/// promise neither), so a name stays that of its entry across upgrades.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// A part with its length first, so `ab|c` and `a|bc` differ.
    fn part(&mut self, b: &[u8]) {
        self.bytes(&(b.len() as u64).to_le_bytes());
        self.bytes(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(run: &str) -> RemoteUrl {
        RemoteUrl::parse(&format!("http://127.0.0.1:9/e/p/runs/{run}"), None).expect("url")
    }

    #[test]
    fn an_entry_is_used_only_at_its_version() {
        let tmp = tempfile::tempdir().expect("tmp");
        let c = Cache::new(tmp.path().join("c"), 1 << 20);
        assert_eq!(c.get(&url("a"), "v1"), None);
        c.put(&url("a"), "v1", &[b"one".to_vec(), b"two".to_vec()])
            .expect("put");
        assert_eq!(
            c.get(&url("a"), "v1"),
            Some(vec![b"one".to_vec(), b"two".to_vec()])
        );
        assert_eq!(c.get(&url("a"), "v2"), None);
        c.put(&url("a"), "v2", &[b"new".to_vec()]).expect("put");
        assert_eq!(c.get(&url("a"), "v2"), Some(vec![b"new".to_vec()]));
    }

    #[test]
    fn the_oldest_entries_go_when_over_the_limit() {
        let tmp = tempfile::tempdir().expect("tmp");
        let c = Cache::new(tmp.path().to_owned(), 250);
        c.put(&url("old"), "v", &[vec![1; 100]]).expect("put");
        // Distinct modification times, without waiting on the clock.
        let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
        fs::File::options()
            .write(true)
            .open(c.entry(&url("old")).join(VERSION))
            .and_then(|f| f.set_modified(past))
            .expect("mtime");
        c.put(&url("mid"), "v", &[vec![2; 100]]).expect("put");
        c.put(&url("new"), "v", &[vec![3; 100]]).expect("put");
        assert_eq!(c.get(&url("old"), "v"), None);
        assert!(c.get(&url("mid"), "v").is_some());
        assert!(c.get(&url("new"), "v").is_some());
    }

    #[cfg(unix)]
    #[test]
    fn the_bound_counts_the_runs_folders_and_spares_those_in_use() {
        let tmp = tempfile::tempdir().expect("tmp");
        let runs = tmp.path().join("remote-runs");
        let c = Cache::new(tmp.path().join("remote"), 250).with_runs(runs.clone());
        let past = |s| std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s);
        let run_folder = |name: &str, when| {
            let dir = runs.join(name).join("wandb").join("run-x");
            files::create_private_dir(&dir).expect("dir");
            let f = dir.join("run-x.wandb");
            fs::write(&f, vec![0; 100]).expect("write");
            fs::File::options()
                .write(true)
                .open(&f)
                .and_then(|f| f.set_modified(past(when)))
                .expect("mtime");
            runs.join(name)
        };
        // The oldest of all, but another process views it: its lock is taken.
        let held = run_folder("held", 1);
        let lock = fs::File::create(runs.join(".held.lock")).expect("lock");
        assert!(files::try_lock(&lock).expect("lock"));
        let old = run_folder("old", 2);
        let newer = run_folder("newer", 5000);
        // 300 bytes of runs' folders and 101 of cache, bound 250: `held` cannot
        // go, `old` and then `newer` do, the entry just written stays.
        c.put(&url("a"), "v", &[vec![1; 100]]).expect("put");
        assert!(held.is_dir(), "a folder in use is never removed");
        assert!(!old.exists(), "the least recently written goes");
        assert!(!newer.exists(), "until the bound is met");
        assert_eq!(c.get(&url("a"), "v"), Some(vec![vec![1; 100]]));
        drop(lock);
    }

    #[test]
    fn runs_whose_readable_names_agree_have_their_own_entries() {
        let parse = |u: &str| RemoteUrl::parse(u, None).expect("url");
        let pairs = [
            ("http://h:1/a/b_c/runs/x", "http://h:1/a_b/c/runs/x"),
            ("http://h:1/a/b_tiny", "http://h:1/a/b/runs/tiny"),
            ("http://h:1/a/b/runs/x", "https://h:1/a/b/runs/x"),
            ("http://h:1/a/b/runs/x.y", "http://h:1/a/b/runs/x_y"),
        ];
        for (one, two) in pairs {
            assert_ne!(
                entry_name(&parse(one)),
                entry_name(&parse(two)),
                "{one} {two}"
            );
        }
        let long = format!("http://h:1/a/{}/runs/x", "p".repeat(200));
        let name = entry_name(&parse(&long));
        assert!(name.len() < 128, "{name}");
        assert!(name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')));
        // Stable: the same run finds its entry again.
        assert_eq!(name, entry_name(&parse(&long)));
    }

    #[cfg(unix)]
    #[test]
    fn what_the_cache_keeps_is_for_its_user_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tmp");
        let c = Cache::new(tmp.path().join("leet").join("remote"), 1 << 20);
        c.put(&url("a"), "v1", &[b"one".to_vec()]).expect("put");
        let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.path().join("leet")), 0o700);
        assert_eq!(mode(&tmp.path().join("leet/remote")), 0o700);
        let entry = c.entry(&url("a"));
        assert_eq!(mode(&entry), 0o700);
        assert_eq!(mode(&entry.join("0.parquet")), 0o600);
        assert_eq!(mode(&entry.join(VERSION)), 0o600);
        // A file left by an older leet, world-readable, is not left so.
        let old = tmp.path().join("old");
        fs::write(&old, b"x").expect("write");
        fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).expect("chmod");
        files::write_private(&old, b"y").expect("write");
        assert_eq!(mode(&old), 0o600);
    }

    #[test]
    fn the_folder_follows_xdg_then_home() {
        let env = |k: &str| match k {
            "XDG_CACHE_HOME" => Some("/x".to_owned()),
            "HOME" => Some("/h".to_owned()),
            _ => None,
        };
        assert_eq!(
            Cache::default_dir(&env),
            Some(PathBuf::from("/x/leet/remote"))
        );
        let env = |k: &str| (k == "HOME").then(|| "/h".to_owned());
        assert_eq!(
            Cache::default_dir(&env),
            Some(PathBuf::from("/h/.cache/leet/remote"))
        );
    }
}

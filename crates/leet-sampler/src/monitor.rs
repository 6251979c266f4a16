//! Switching the monitored process tree while the sampler runs: the tree is shared by
//! the sampler (which re-reads it at each sample) and the collectors (cpu, memory,
//! nvidia), so a new root takes effect at the next sample, with no collector
//! restarted.

use std::path::{Path, PathBuf};

use super::procfs::{self, SharedTree};
use super::procs;

/// A handle on a [`super::Sampler`]'s monitored process tree, usable from any thread.
#[derive(Clone)]
pub struct MonitorHandle {
    tree: SharedTree,
    proc_root: PathBuf,
}

impl MonitorHandle {
    pub(crate) fn new(tree: SharedTree) -> Self {
        Self {
            tree,
            proc_root: PathBuf::from("/proc"),
        }
    }

    /// Monitor the tree of `pid` from the next sample on (its leaf cgroup's limits with
    /// it), or no process (`None`: no `cpu`, `proc.*` or `gpu.process.*` keys).
    /// Returns the root's pid and command line (untrusted text), or `None`.
    ///
    /// # Errors
    /// A process that does not exist or cannot be read: the text names its pid, and
    /// no process is monitored any more.
    pub fn set(&self, pid: Option<u32>) -> Result<Option<(u32, String)>, String> {
        let found = match pid {
            None => Ok(None),
            Some(pid) => describe(&self.proc_root, pid).map(|d| Some((pid, d))),
        };
        let root = found
            .as_ref()
            .ok()
            .and_then(|f| f.as_ref().map(|(p, (_, start))| (*p, *start)));
        let mut tree = self
            .tree
            .lock()
            .map_err(|_| "the monitored process tree is unusable (a collector panicked)")?;
        tree.set_root(root.map(|(p, _)| p));
        // Its start time as read now: a process that takes its pid later is another.
        tree.root_start = root.and_then(|(_, start)| start);
        found.map(|f| f.map(|(pid, (cmd, _))| (pid, cmd)))
    }

    /// Whether the monitored root's pid names another process now (the root
    /// exited and its pid was reused): it is to be forgotten as one that exited.
    #[must_use]
    pub fn root_replaced(&self) -> bool {
        self.tree.lock().is_ok_and(|t| t.replaced)
    }

    /// The pid of the tree's root, if any.
    #[must_use]
    pub fn root(&self) -> Option<u32> {
        self.tree.lock().ok().and_then(|t| t.root)
    }
}

/// The command line of `pid` (as the process table shows it) and its start time,
/// or why it cannot be monitored.
fn describe(proc_root: &Path, pid: u32) -> Result<(String, Option<u64>), String> {
    let dir = proc_root.join(pid.to_string());
    let mut stat = String::new();
    procfs::read_into(&dir.join("stat"), &mut stat).map_err(|e| {
        let why = match &e {
            super::SamplerError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                "no such process".to_string()
            }
            _ => e.to_string(),
        };
        format!("cannot monitor process {pid}: {why}")
    })?;
    let comm = stat
        .find('(')
        .zip(stat.rfind(')'))
        .and_then(|(a, b)| stat.get(a + 1..b))
        .unwrap_or("?");
    let start = procfs::parse_stat(pid, &stat).map(|s| s.start_ticks);
    Ok((procs::read_command(&dir, comm), start))
}

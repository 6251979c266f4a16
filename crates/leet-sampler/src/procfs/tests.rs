use super::cgroup::parse_cpu_max;
use super::*;

#[test]
fn stat_with_spaces_and_parens_in_comm() {
    let line = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 98765 123456789 2048 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    let s = parse_stat(1234, line).expect("parses");
    assert_eq!(s.ppid, 1);
    assert_eq!(s.cpu_ticks, 300);
    assert_eq!(s.threads, 7);
    assert_eq!(s.start_ticks, 98765);
    assert_eq!(s.rss_pages, 2048);
}

#[test]
fn cpu_max_values() {
    assert_eq!(parse_cpu_max("max 100000\n"), None);
    assert_eq!(parse_cpu_max("150000 100000\n"), Some(1.5));
    assert_eq!(parse_cpu_max("50000\n"), Some(0.5));
}

#[test]
fn ppid_walk_finds_new_children_between_rescans() {
    let mut walker = TreeWalker::new();
    walker.has_children_files = false;
    let me = std::process::id();
    let mut tree = ProcessTree::new(me);
    walker.refresh(&mut tree); // full scan: everything else becomes an outsider
    walker.refresh(&mut tree); // cached tick
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("sleep");
    walker.refresh(&mut tree); // not a rescan tick: the new child must still be found
    assert!(tree.pids().any(|p| p == child.id()), "{:?}", tree.procs);
    child.kill().expect("kill");
    child.wait().expect("wait");
    walker.refresh(&mut tree);
    assert!(!tree.pids().any(|p| p == child.id()));
    assert!(!walker.outsiders.is_empty());
}

#[test]
fn a_kept_file_is_read_afresh_without_reopening() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("attr");
    std::fs::write(&path, "1\n").expect("write");
    let mut f = ProcFile::new(&path);
    let mut buf = String::new();
    f.read(&mut buf).expect("read");
    assert_eq!(buf, "1\n");
    // Rewritten in place (as the kernel renders a proc file afresh): same handle.
    std::fs::write(&path, "22\n").expect("rewrite");
    f.read(&mut buf).expect("read");
    assert_eq!(buf, "22\n");
    std::fs::write(&path, "3").expect("shorter");
    f.read(&mut buf).expect("read");
    assert_eq!(buf, "3");
    assert_eq!(f.opens(), 1);
    let mut stat = ProcFile::new("/proc/self/stat");
    for _ in 0..3 {
        stat.read(&mut buf).expect("stat");
        assert!(parse_stat(std::process::id(), &buf).is_some(), "{buf}");
    }
    assert_eq!(stat.opens(), 1);
}

#[test]
fn a_kept_file_is_reopened_after_it_is_replaced_or_removed() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("attr");
    std::fs::write(&path, "old").expect("write");
    let mut f = ProcFile::new(&path);
    let mut buf = String::new();
    f.read(&mut buf).expect("read");
    // Replaced by a rename (a new inode): the old handle would read "old" forever.
    let tmp = dir.path().join("attr.new");
    std::fs::write(&tmp, "new").expect("write new");
    std::fs::rename(&tmp, &path).expect("rename");
    f.read(&mut buf).expect("read");
    assert_eq!(buf, "new");
    assert_eq!(f.opens(), 2);
    // Removed: an error naming the file, not the last content.
    std::fs::remove_file(&path).expect("rm");
    let e = f.read(&mut buf).expect_err("removed").to_string();
    assert!(e.contains("attr"), "{e}");
    assert!(buf.is_empty());
    std::fs::write(&path, "back").expect("recreate");
    f.read(&mut buf).expect("read");
    assert_eq!(buf, "back");
}

#[test]
fn a_kept_proc_file_of_an_exited_process_is_an_error() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("sleep");
    let mut f = ProcFile::new(format!("/proc/{}/stat", child.id()));
    let mut buf = String::new();
    f.read(&mut buf).expect("alive");
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(f.read(&mut buf).is_err(), "{buf}");
}

#[test]
fn the_walker_keeps_the_roots_and_long_lived_members_files_open() {
    let mut walker = TreeWalker::new();
    let me = std::process::id();
    let mut tree = ProcessTree::new(me);
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("sleep");
    walker.refresh(&mut tree);
    assert!(tree.pids().any(|p| p == child.id()));
    let opened = |w: &TreeWalker| -> u64 {
        let stats: u64 = w.stats.files.values().map(|(f, _)| f.opens()).sum();
        let kids: u64 = w.children.files.values().map(|(f, _)| f.opens()).sum();
        stats + kids
    };
    let before = opened(&walker);
    walker.refresh(&mut tree);
    walker.refresh(&mut tree);
    assert!(tree.pids().any(|p| p == child.id()));
    // The root's stat and its threads' children files are read again, not reopened
    // (threads of other tests may come and go meanwhile, hence at most a few more).
    assert!(walker.stats.files.contains_key(&me));
    assert!(
        opened(&walker) <= before + 4,
        "{before} → {}",
        opened(&walker)
    );
    // A new descendant's files are not kept (tools come and go: no descriptor piles
    // up); one that stays in the tree for KEEP_AFTER refreshes has them kept.
    assert!(!walker.stats.files.contains_key(&child.id()));
    assert!(walker.children.files.keys().all(|(p, _)| *p == me));
    for _ in 0..KEEP_AFTER {
        walker.refresh(&mut tree);
    }
    assert!(walker.stats.files.contains_key(&child.id()));
    let kept = walker.stats.files[&child.id()].0.opens();
    walker.refresh(&mut tree);
    assert_eq!(walker.stats.files[&child.id()].0.opens(), kept);
    child.kill().expect("kill");
    child.wait().expect("wait");
    walker.refresh(&mut tree);
    assert!(!tree.pids().any(|p| p == child.id()));
    assert!(!walker.stats.files.contains_key(&child.id()));
}

#[test]
fn own_process_tree_contains_self() {
    let mut tree = ProcessTree::new(std::process::id());
    TreeWalker::new().refresh(&mut tree);
    assert!(tree.error.is_none());
    assert_eq!(tree.procs[0].pid, std::process::id());
    assert!(tree.procs[0].threads >= 1);
}

#[test]
fn grandchildren_under_a_single_threaded_child_are_found() {
    // sh has one thread: its children come from task/<pid>/children without a listing.
    let mut sh = std::process::Command::new("sh")
        .args(["-c", "sleep 5 & sleep 5 & wait"])
        .spawn()
        .expect("sh");
    let mut tree = ProcessTree::new(std::process::id());
    let mut walker = TreeWalker::new();
    let t = Instant::now();
    let mut found = Vec::new();
    while t.elapsed() < std::time::Duration::from_secs(5) {
        walker.refresh(&mut tree);
        found = tree
            .procs
            .iter()
            .filter(|p| p.ppid == sh.id())
            .map(|p| p.pid)
            .collect();
        if found.len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sh_stat = tree.procs.iter().find(|p| p.pid == sh.id()).copied();
    let _ = sh.kill();
    let _ = sh.wait();
    assert_eq!(sh_stat.map(|s| s.threads), Some(1));
    assert_eq!(found.len(), 2, "{:?}", tree.procs);
}

/// A `sleep 30` of ours as the root of a tree, read once (no error).
fn a_sleep_monitored() -> (std::process::Child, ProcessTree, TreeWalker) {
    let child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("sleep");
    let mut tree = ProcessTree::new(child.id());
    let mut walker = TreeWalker::new();
    walker.refresh(&mut tree);
    assert_eq!(tree.error, None);
    (child, tree, walker)
}

#[test]
fn a_root_whose_pid_names_a_process_started_at_another_time_is_gone() {
    let (mut child, mut tree, mut walker) = a_sleep_monitored();
    let pid = child.id();
    let start = tree.root_start.expect("its start time kept");
    assert_eq!(tree.procs.first().map(|p| p.start_ticks), Some(start));
    walker.refresh(&mut tree);
    assert!(!tree.replaced && !tree.procs.is_empty());
    // As if the root had exited and its pid been given to a process started
    // later: nothing of that one is read as the root's, and it stays gone.
    tree.root_start = Some(start + 1);
    walker.refresh(&mut tree);
    assert!(tree.replaced);
    assert!(tree.procs.is_empty());
    assert!(
        tree.error
            .as_deref()
            .is_some_and(|e| e.contains("names another process")),
        "{:?}",
        tree.error
    );
    tree.root_start = Some(start);
    walker.refresh(&mut tree);
    assert!(tree.replaced && tree.procs.is_empty());
    // Chosen again, it is monitored afresh.
    tree.set_root(Some(pid));
    walker.refresh(&mut tree);
    assert!(!tree.replaced && !tree.procs.is_empty());
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_root_that_is_a_zombie_has_exited() {
    let (mut child, mut tree, mut walker) = a_sleep_monitored();
    let pid = child.id();
    assert!(!tree.procs.is_empty());
    // Killed and not waited for: a zombie until `wait`.
    child.kill().expect("kill");
    let stat = format!("/proc/{pid}/stat");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(&stat)
        .ok()
        .and_then(|t| parse_stat(pid, &t))
        .is_some_and(|s| s.zombie)
    {
        assert!(std::time::Instant::now() < deadline, "no zombie");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    walker.refresh(&mut tree);
    assert!(tree.procs.is_empty(), "{:?}", tree.procs);
    assert!(
        tree.error
            .as_deref()
            .is_some_and(|e| e.contains("is not running") && e.contains("not reaped")),
        "{:?}",
        tree.error
    );
    let _ = child.wait();
}

#[test]
fn the_state_field_says_which_processes_are_zombies() {
    let line = |state: &str| {
        format!("42 (a (b) c) {state} 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 99 123456 250 0\n")
    };
    for (state, zombie) in [
        ("S", false),
        ("R", false),
        ("D", false),
        ("Z", true),
        ("X", true),
    ] {
        let s = parse_stat(42, &line(state)).expect("parsed");
        assert_eq!(s.zombie, zombie, "{state}");
        assert_eq!(
            (s.ppid, s.cpu_ticks, s.threads, s.start_ticks),
            (1, 10, 1, 99)
        );
    }
}

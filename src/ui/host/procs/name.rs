//! The name a monitored process goes by in titles: the script an interpreter or a
//! launcher runs (`python -u train.py --lr 1` → `train.py`, `python -m
//! torch.distributed.run …` → `torch.distributed.run`), otherwise the program's
//! basename (`/usr/bin/nvidia-smi -l 1` → `nvidia-smi`).
//!
//! It reads the command line as the process table holds it: arguments joined by
//! spaces (so an argument with a space in it is two words here), or `[comm]` for a
//! process without one (a kernel thread).

use crate::text::sanitize;

/// How one kind of program names what it runs.
struct Runner {
    /// Program basenames (after a version suffix is taken off, see [`base_program`]).
    programs: &'static [&'static str],
    /// A subcommand before the options (`accelerate launch`).
    subcommand: Option<&'static str>,
    /// Options whose value is the next word.
    takes_value: &'static [&'static str],
    /// Options whose value is a module or class that is the name (`python -m pkg`).
    module: &'static [&'static str],
    /// Options that run inline code, not a script: the program's own name then.
    inline: &'static [&'static str],
    /// Options whose value is the script (`java -jar app.jar`).
    script: &'static [&'static str],
    /// A launcher whose options are not all known: an option without `=` takes the
    /// next word as its value unless that word looks like a script (`--nproc_per_node
    /// 8 train.py`, `--multi_gpu train.py`).
    launcher: bool,
}

const NONE: &[&str] = &[];

/// Interpreters and launchers, by program name.
const RUNNERS: &[Runner] = &[
    Runner {
        programs: &["python", "pypy"],
        subcommand: None,
        takes_value: &["-W", "-X", "--check-hash-based-pycs"],
        module: &["-m"],
        inline: &["-c"],
        script: NONE,
        launcher: false,
    },
    Runner {
        programs: &["node", "nodejs"],
        subcommand: None,
        takes_value: &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ],
        module: NONE,
        inline: &["-e", "--eval", "-p", "--print"],
        script: NONE,
        launcher: false,
    },
    Runner {
        programs: &["ruby", "perl"],
        subcommand: None,
        takes_value: &["-I", "-r", "-C", "-M"],
        module: NONE,
        inline: &["-e", "-E"],
        script: NONE,
        launcher: false,
    },
    Runner {
        programs: &["bash", "sh", "dash", "zsh", "ksh"],
        subcommand: None,
        takes_value: &["-o", "-O", "+o", "+O", "--rcfile", "--init-file"],
        module: NONE,
        inline: &["-c"],
        script: NONE,
        launcher: false,
    },
    Runner {
        programs: &["java"],
        subcommand: None,
        takes_value: &[
            "-cp",
            "-classpath",
            "--class-path",
            "-p",
            "--module-path",
            "--add-modules",
            "--add-opens",
            "--add-exports",
            "--add-reads",
        ],
        module: &["-m", "--module"],
        inline: NONE,
        script: &["-jar"],
        launcher: false,
    },
    Runner {
        programs: &["torchrun", "deepspeed"],
        subcommand: None,
        takes_value: NONE,
        module: &["-m", "--module"],
        inline: NONE,
        script: NONE,
        launcher: true,
    },
    Runner {
        programs: &["accelerate"],
        subcommand: Some("launch"),
        takes_value: NONE,
        module: &["-m", "--module"],
        inline: NONE,
        script: NONE,
        launcher: true,
    },
];

/// Options of launchers that take no value (`torchrun --standalone train.py`).
const LAUNCHER_FLAGS: &[&str] = &[
    "--standalone",
    "--no-python",
    "--no_python",
    "--run-path",
    "--run_path",
    "--multi_gpu",
    "--cpu",
    "--use_deepspeed",
    "--use_fsdp",
    "--use_megatron_lm",
    "--debug",
    "--quiet",
    "-q",
];

/// Extensions that mark a word as a script (for launchers' options).
const SCRIPT_EXTENSIONS: &[&str] = &[
    "py", "pyc", "pyz", "ipynb", "sh", "bash", "js", "mjs", "cjs", "ts", "rb", "pl", "jar",
];

/// The name shown for a process whose command line is `command` (sanitized).
#[must_use]
pub(crate) fn process_name(command: &str) -> String {
    let command = sanitize(command);
    let command = command.trim();
    if let Some(comm) = command
        .strip_prefix('[')
        .and_then(|c| c.strip_suffix(']'))
        .filter(|c| !c.is_empty())
    {
        return comm.to_owned();
    }
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return String::new();
    };
    let program = basename(program);
    let name = RUNNERS
        .iter()
        .find(|r| r.programs.contains(&base_program(program)))
        .and_then(|r| run_target(r, words));
    name.unwrap_or_else(|| program.to_owned())
}

/// What `runner` runs, from the words after the program; `None` when it runs no
/// script (inline code, no arguments).
fn run_target<'a>(runner: &Runner, mut words: impl Iterator<Item = &'a str>) -> Option<String> {
    if let Some(sub) = runner.subcommand {
        if words.next() != Some(sub) {
            return None;
        }
    }
    let mut words = words.peekable();
    while let Some(w) = words.next() {
        if w == "--" {
            return words.next().map(|s| basename(s).to_owned());
        }
        if !w.starts_with('-') || w == "-" {
            return Some(basename(w).to_owned());
        }
        let (opt, attached) = w.split_once('=').map_or((w, None), |(o, v)| (o, Some(v)));
        if runner.inline.contains(&opt) {
            return None;
        }
        if runner.module.contains(&opt) || runner.script.contains(&opt) {
            let value = attached.or_else(|| words.next())?;
            return Some(if runner.script.contains(&opt) {
                basename(value).to_owned()
            } else {
                value.to_owned()
            });
        }
        // `-mpkg`: python's module option with its value attached.
        if let Some(m) = runner
            .module
            .iter()
            .filter(|m| m.len() == 2)
            .find_map(|m| opt.strip_prefix(m))
        {
            return Some(m.to_owned());
        }
        let value_next = attached.is_none()
            && (runner.takes_value.contains(&opt)
                || (runner.launcher
                    && !LAUNCHER_FLAGS.contains(&opt)
                    && words
                        .peek()
                        .is_some_and(|n| !n.starts_with('-') && !is_script(n))));
        if value_next {
            words.next();
        }
    }
    None
}

/// `python3.11` → `python`, `pypy3` → `pypy`; other names as they are.
fn base_program(program: &str) -> &str {
    for stem in ["python", "pypy"] {
        if let Some(v) = program.strip_prefix(stem) {
            if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return stem;
            }
        }
    }
    program
}

fn is_script(word: &str) -> bool {
    basename(word)
        .rsplit_once('.')
        .is_some_and(|(_, ext)| SCRIPT_EXTENSIONS.contains(&ext))
}

/// The last component of a path (`/home/x/train.py` → `train.py`); the word itself
/// when that would be empty (`/`).
fn basename(word: &str) -> &str {
    let trimmed = word.trim_end_matches('/');
    match trimmed.rsplit('/').next() {
        Some(b) if !b.is_empty() => b,
        _ => word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_of_interpreters_and_launchers() {
        for (cmd, want) in [
            ("python train.py", "train.py"),
            ("python -u train.py --lr 1", "train.py"),
            ("/usr/bin/python3.11 /home/x/train.py", "train.py"),
            (
                "python3 -W ignore -X dev scripts/train.py --epochs 3",
                "train.py",
            ),
            ("python -Wignore -uB ./train.py", "train.py"),
            (
                "python -m torch.distributed.run --nproc_per_node 8 train.py",
                "torch.distributed.run",
            ),
            ("python3 -mpip install x", "pip"),
            ("python -c import time; time.sleep(9)", "python"),
            ("python", "python"),
            ("python3 -- -weird-name.py", "-weird-name.py"),
            ("pypy3 bench.py", "bench.py"),
            ("node --require ts-node/register src/server.ts", "server.ts"),
            ("node -e console.log(1)", "node"),
            ("/usr/bin/ruby -I lib bin/rails server", "rails"),
            ("perl -w script.pl", "script.pl"),
            ("bash ./run.sh --fast", "run.sh"),
            ("/bin/sh -c while :; do :; done", "sh"),
            ("bash -o pipefail job.sh", "job.sh"),
            ("-bash", "-bash"),
            (
                "java -Xmx4g -cp lib/a.jar:lib/b.jar com.example.Main arg",
                "com.example.Main",
            ),
            ("java -jar /opt/app/server.jar --port 80", "server.jar"),
            ("torchrun --nproc_per_node=8 train.py --lr 1", "train.py"),
            (
                "torchrun --nproc_per_node 8 --nnodes 1 train.py",
                "train.py",
            ),
            (
                "torchrun --standalone --nproc-per-node 2 train.py",
                "train.py",
            ),
            ("torchrun -m pkg.train", "pkg.train"),
            (
                "deepspeed --num_gpus 8 train.py --deepspeed ds.json",
                "train.py",
            ),
            (
                "/venv/bin/accelerate launch --config_file cfg.yaml --multi_gpu train.py",
                "train.py",
            ),
            ("accelerate config", "accelerate"),
        ] {
            assert_eq!(process_name(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn other_programs_go_by_their_basename() {
        assert_eq!(process_name("/usr/bin/nvidia-smi -l 1"), "nvidia-smi");
        assert_eq!(process_name("sleep 100"), "sleep");
        assert_eq!(process_name("  vim   notes.txt "), "vim");
        assert_eq!(process_name("/opt/bin/"), "bin");
        assert_eq!(process_name("/"), "/");
        assert_eq!(process_name("python3-config --libs"), "python3-config");
        assert_eq!(process_name(""), "");
    }

    #[test]
    fn a_process_without_a_command_line_goes_by_its_comm() {
        assert_eq!(process_name("[kworker/0:1]"), "kworker/0:1");
        assert_eq!(process_name("[x) (y]"), "x) (y");
        assert_eq!(process_name("[]"), "[]");
    }

    #[test]
    fn hostile_text_is_sanitized() {
        for cmd in [
            "python \u{1b}]0;pwned\u{7}evil\u{1b}[2J.py",
            "\u{1b}[31mred\u{9b}1m --x",
            "[k\u{1b}[2Jthread\u{85}]",
            "python3 train\u{0}.py\u{7}",
        ] {
            let name = process_name(cmd);
            assert!(
                !name.chars().any(|c| c.is_control() || c == '\u{1b}'),
                "{cmd:?} → {name:?}"
            );
            assert!(!name.contains("pwned") && !name.contains("[2J"), "{name:?}");
        }
        assert_eq!(
            process_name("python \u{1b}]0;pwned\u{7}evil\u{1b}[2J.py"),
            "evil.py"
        );
    }
}

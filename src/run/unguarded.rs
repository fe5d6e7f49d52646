//! Python processes of the job that the guard never reached. Every Python process that
//! loads the guard's start-up hook says so (`pyembed::PYTHON_PROCESSES`: its pid, and
//! whether the guard is on in it); `run` looks through the job's processes (`tree`) for
//! Python interpreters, and one that never said so runs unguarded, whatever the reason:
//! `python -I`/`-E`/`-S`, a `#!/usr/bin/env -S python -I` line, `env -u PYTHONPATH`,
//! `PYTHONPATH=`, a sitecustomize of its own first on the path. `run` names each such
//! process as soon as it is sure, and all of them again when the job has ended.
//!
//! Not seen: a Python process that starts and ends between two looks (`LOOK_EVERY`) below
//! the job's own process, which is always looked at as it starts.

use super::tree;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the job's processes are looked through.
const LOOK_EVERY: Duration = Duration::from_millis(100);
/// A Python process with no visible reason to be unguarded that has not said it loaded
/// the hook this long after it was first seen is named anyway (its start-up is over).
const STARTUP: Duration = Duration::from_secs(5);

/// A Python process the guard did not reach, and why, as far as `run` can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unguarded {
    pub pid: i32,
    pub command: String,
    pub reason: String,
}

pub struct Watch {
    announcements: PathBuf,
    /// The guard's directory, which a guarded process has on its PYTHONPATH.
    guard_dir: PathBuf,
    read_to: usize,
    /// Pid -> the guard is on in it.
    announced: HashMap<i32, bool>,
    candidates: HashMap<i32, Candidate>,
    named: HashSet<i32>,
    looked_at: Option<Instant>,
}

struct Candidate {
    command: Vec<String>,
    first_seen: Instant,
    /// Started as a copy of its parent (a fork, not yet or never exec'd): its parent
    /// speaks for it.
    fork_of_parent: bool,
    /// Why it is unguarded, once known (its environment can only be read while it lives).
    reason: Option<String>,
}

impl Watch {
    pub fn new(guard_dir: &Path, announcements: PathBuf) -> Watch {
        Watch {
            announcements,
            guard_dir: guard_dir.to_path_buf(),
            read_to: 0,
            announced: HashMap::new(),
            candidates: HashMap::new(),
            named: HashSet::new(),
            looked_at: None,
        }
    }

    /// Looks at the job's processes (at most every `LOOK_EVERY`); returns those found
    /// unguarded since the last call.
    pub fn look(&mut self) -> Vec<Unguarded> {
        if self.looked_at.is_some_and(|t| t.elapsed() < LOOK_EVERY) {
            return Vec::new();
        }
        self.looked_at = Some(Instant::now());
        self.read_announcements();
        let members = tree::members();
        for m in &members {
            if self.announced.get(&m.pid) == Some(&true) || !is_python(m.pid) {
                continue;
            }
            // Looked at again each time: a fork of a Python process is a copy of it until
            // it execs, which may be another Python with options of its own.
            let command = tree::command_line(m.pid);
            if self.candidates.get(&m.pid).is_some_and(|c| c.command == command) {
                continue;
            }
            let fork_of_parent = is_python(m.parent) && tree::command_line(m.parent) == command;
            self.named.remove(&m.pid);
            let c = Candidate { command, first_seen: Instant::now(), fork_of_parent, reason: None };
            self.candidates.insert(m.pid, c);
        }
        let pids: Vec<i32> = self.candidates.keys().copied().collect();
        let mut found = Vec::new();
        for pid in pids {
            if self.named.contains(&pid) || self.announced.get(&pid) == Some(&true) {
                continue;
            }
            let c = &self.candidates[&pid];
            if c.fork_of_parent {
                continue;
            }
            let alive = tree::is_running(pid);
            if alive && !is_python(pid) {
                self.candidates.remove(&pid); // it went on to exec another program
                continue;
            }
            let reason = self.reason(pid, alive);
            let Some(c) = self.candidates.get_mut(&pid) else { continue };
            c.reason = reason.clone();
            if let Some(reason) = reason.or_else(|| (c.first_seen.elapsed() >= STARTUP).then(unknown_reason))
            {
                self.named.insert(pid);
                found.push(Unguarded { pid, command: c.command.join(" "), reason });
            }
        }
        found
    }

    /// Every unguarded Python process of the job, once it has ended.
    pub fn summary(&mut self) -> Vec<Unguarded> {
        self.looked_at = None;
        self.look();
        let mut all: Vec<Unguarded> = self
            .candidates
            .iter()
            .filter(|(pid, c)| !c.fork_of_parent && self.announced.get(pid) != Some(&true))
            .map(|(&pid, c)| Unguarded {
                pid,
                command: c.command.join(" "),
                reason: c.reason.clone().or_else(|| self.reason(pid, false)).unwrap_or_else(unknown_reason),
            })
            .collect();
        all.sort_by_key(|u| u.pid);
        all
    }

    /// Why `pid` is unguarded, when that is certain: it said the guard is off in it, or its
    /// command line or environment shut the hook out. A live process that may still be
    /// starting gets no reason yet unless one of those shows.
    fn reason(&self, pid: i32, alive: bool) -> Option<String> {
        if self.announced.get(&pid) == Some(&false) {
            return Some(format!("{} is not set in its environment", crate::contract::env::GUARD));
        }
        let command = self.candidates.get(&pid).map(|c| c.command.as_slice()).unwrap_or_default();
        if let Some(why) = flags_that_shut_out(command) {
            return Some(why);
        }
        if alive {
            if let Some(why) = self.pythonpath_problem(pid) {
                return Some(why);
            }
            None
        } else {
            // Ended without saying it loaded the hook: whatever the reason, it ran unguarded.
            Some(unknown_reason())
        }
    }

    fn pythonpath_problem(&self, pid: i32) -> Option<String> {
        match tree::environment_value(pid, "PYTHONPATH") {
            None => Some("PYTHONPATH, which the guard is injected through, was removed from its environment".into()),
            Some(Some(path)) if !std::env::split_paths(&path).any(|p| p == self.guard_dir) => Some(
                "its PYTHONPATH was replaced and no longer names the guard's directory, which the guard is injected through"
                    .into(),
            ),
            _ => None,
        }
    }

    fn read_announcements(&mut self) {
        let Ok(text) = std::fs::read(&self.announcements) else { return };
        let Some(new) = text.get(self.read_to..) else { return };
        // Only whole lines: a process may be writing the next one.
        let Some(end) = new.iter().rposition(|&b| b == b'\n') else { return };
        for line in String::from_utf8_lossy(&new[..end]).lines() {
            let mut words = line.split_ascii_whitespace();
            let Some(pid) = words.next().and_then(|p| p.parse().ok()) else { continue };
            let on = words.next() != Some("off");
            self.announced.insert(pid, on);
        }
        self.read_to += end + 1;
    }
}

fn unknown_reason() -> String {
    "it never loaded the guard's start-up hook (a sitecustomize of its own first on its path, or a Python \
     that does not run `site`)"
        .into()
}

fn is_python(pid: i32) -> bool {
    tree::program_name(pid).is_some_and(|name| name.starts_with("python") || name.starts_with("pypy"))
}

/// The interpreter options on a Python command line that keep the start-up hook out:
/// `-I` and `-E` ignore PYTHONPATH, `-S` skips `site`, which runs the hook.
fn flags_that_shut_out(command: &[String]) -> Option<String> {
    let mut words = command.iter().skip(1);
    while let Some(word) = words.next() {
        if word == "--" || !word.starts_with('-') || word == "-" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            if long == "check-hash-based-pycs" {
                words.next();
            }
            continue;
        }
        for (i, flag) in word[1..].char_indices() {
            match flag {
                'I' => return Some("`-I` (isolated mode) makes Python ignore PYTHONPATH, which the guard is injected through".into()),
                'E' => return Some("`-E` makes Python ignore PYTHONPATH, which the guard is injected through".into()),
                'S' => return Some("`-S` makes Python skip `site`, which loads the guard".into()),
                'c' | 'm' => return None,
                'W' | 'X' => {
                    if i + 2 == word.len() {
                        words.next(); // the argument is the next word
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(words: &[&str]) -> Option<String> {
        flags_that_shut_out(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn interpreter_options_that_shut_the_hook_out() {
        assert!(reason(&["python", "-I", "train.py"]).unwrap().contains("-I"));
        assert!(reason(&["python3.11", "-uE", "train.py"]).unwrap().contains("-E"));
        assert!(reason(&["python3", "-S", "-c", "pass"]).unwrap().contains("-S"));
        assert!(reason(&["python", "-X", "dev", "-I", "x.py"]).unwrap().contains("-I"));
        assert!(reason(&["python", "-Xdev", "-I", "x.py"]).unwrap().contains("-I"));
        assert!(reason(&["python", "-W", "ignore", "-I", "x.py"]).unwrap().contains("-I"));
        assert_eq!(reason(&["python", "-W", "-I", "x.py"]), None, "-I is -W's argument");
        assert_eq!(reason(&["python", "train.py", "-I"]), None);
        assert_eq!(reason(&["python", "-c", "-I"]), None);
        assert_eq!(reason(&["python", "-u", "train.py"]), None);
    }
}

//! The processes of a job, as `run` sees them on Linux: every descendant of `run` itself,
//! found through `/proc/PID/task/TID/children`. As the job's subreaper (`job`), `run`
//! keeps even the processes whose parents have exited below it, so a double-forked
//! daemon or a `setsid` child is still found. Elsewhere nothing is found.

/// One process of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub pid: i32,
    pub parent: i32,
}

/// Every descendant of this process, parents before their children.
pub fn members() -> Vec<Member> {
    let mut found = Vec::new();
    let mut next = vec![std::process::id() as i32];
    while let Some(parent) = next.pop() {
        for pid in children_of(parent) {
            found.push(Member { pid, parent });
            next.push(pid);
        }
    }
    found
}

#[cfg(target_os = "linux")]
fn children_of(pid: i32) -> Vec<i32> {
    let mut children = Vec::new();
    // A child is listed under the thread that started it (or, for an orphan, the thread
    // it was given to): every thread is read.
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return children };
    for task in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else { continue };
        children.extend(list.split_ascii_whitespace().filter_map(|p| p.parse::<i32>().ok()));
    }
    children
}

#[cfg(not(target_os = "linux"))]
fn children_of(_pid: i32) -> Vec<i32> {
    Vec::new()
}

/// The program a process runs now, by the file name of its executable.
pub fn program_name(pid: i32) -> Option<String> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}

/// A process's command line, its words.
pub fn command_line(pid: i32) -> Vec<String> {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return Vec::new() };
    bytes
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// The value of `name` in the environment a process was started with; None when unset.
/// (Some(None) when the environment cannot be read.)
pub fn environment_value(pid: i32, name: &str) -> Option<Option<String>> {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/environ")) else { return Some(None) };
    let prefix = format!("{name}=");
    let value = bytes.split(|&b| b == 0).find_map(|entry| entry.strip_prefix(prefix.as_bytes()))?;
    Some(Some(String::from_utf8_lossy(value).into_owned()))
}

/// A process that exists and is not a zombie (a zombie has exited; its parent has only
/// not collected its status yet).
pub fn is_running(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat.rsplit_once(')').is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_child_and_its_child_are_members() {
        let mut child = std::process::Command::new("sh").args(["-c", "sleep 5 & wait"]).spawn().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut found = Vec::new();
        while std::time::Instant::now() < deadline {
            found = members().into_iter().filter(|m| m.parent == pid).collect::<Vec<_>>();
            // The shell forks, then the child execs `sleep`: until then it is still the shell.
            if found.first().is_some_and(|m| program_name(m.pid).as_deref() == Some("sleep")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(members().iter().any(|m| m.pid == pid));
        assert_eq!(found.len(), 1, "the shell's sleep");
        assert_eq!(program_name(found[0].pid).as_deref(), Some("sleep"));
        assert_eq!(command_line(found[0].pid), ["sleep", "5"]);
        // SAFETY: ends the test's own processes.
        unsafe {
            libc::kill(found[0].pid, libc::SIGKILL);
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

//! What `run` says on stderr while the command runs: never enough to stop it.

use super::unguarded;

/// Says something on stderr without stopping: assertscope's own trouble never costs the
/// command its output or its exit status.
pub fn warn(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "assertscope: {message}");
}

/// The notice for a Python process the guard did not reach.
pub fn unguarded_notice(u: &unguarded::Unguarded) -> String {
    format!(
        "the guard is off in pid {} (`{}`): {}; its output is still diagnosed",
        u.pid,
        short(&u.command),
        u.reason
    )
}

fn short(command: &str) -> String {
    const MOST: usize = 120;
    match command.char_indices().nth(MOST) {
        Some((i, _)) => format!("{}…", &command[..i]),
        None => command.to_string(),
    }
}

//! Counting a statement's instructions exactly where the machine hides its hardware
//! counters: the lab runs one access path again in a child `lioscope` process under
//! valgrind's callgrind, with collection switched off at start and toggled on only inside
//! [`counted_execution`] (`--collect-atstart=no --toggle-collect=*counted_execution*`),
//! so the count is the statement's execution alone: no load, no population, no
//! parsing of the command line. Collection is switched per thread: a helper thread a
//! statement starts is not counted (the lab's scans start none). The profile's
//! `summary:` line is the count of instructions executed (`Ir`).

use crate::{QueryResult, Result, Session};
use std::path::Path;
use std::process::Command;

/// The function callgrind collects inside: executes `sql` in `session`.
#[inline(never)]
pub fn counted_execution(session: &Session, sql: &str) -> Result<QueryResult> {
    session.execute(sql)
}

/// Runs `exe args` under callgrind collecting only inside [`counted_execution`], writing
/// callgrind's profile to `profile`; returns the instructions it counted.
pub fn count_instructions(exe: &Path, args: &[String], profile: &Path) -> Result<u64> {
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=*counted_execution*")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg(exe)
        .args(args)
        .output()
        .map_err(|e| crate::Error::io("run valgrind (is it installed?) for", exe, e))?;
    if !output.status.success() {
        return Err(crate::Error::InvalidValue {
            context: format!("valgrind --tool=callgrind {} {}", exe.display(), args.join(" ")),
            message: format!("exited with {}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim()),
        });
    }
    let text = std::fs::read_to_string(profile).map_err(|e| crate::Error::io("read", profile, e))?;
    summary(&text).ok_or_else(|| crate::Error::InvalidValue {
        context: format!("callgrind profile {}", profile.display()),
        message: "no 'summary:' line".into(),
    })
}

/// The `Ir` total of a callgrind profile (its `summary:` line, else `totals:`).
pub fn summary(profile: &str) -> Option<u64> {
    let line = |prefix: &str| {
        profile.lines().find_map(|l| l.strip_prefix(prefix)).and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    line("summary:").or_else(|| line("totals:"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_summary_line_is_the_instruction_count() {
        let profile =
            "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) main\n3 10\nsummary: 123456\ntotals: 123456\n";
        assert_eq!(super::summary(profile), Some(123_456));
        assert_eq!(super::summary("events: Ir\ntotals: 7\n"), Some(7));
        assert_eq!(super::summary("events: Ir\n"), None);
    }
}

//! Counting a statement's instructions exactly where the machine hides its hardware
//! counters: the lab runs one access path again in a child `lioscope` process under
//! valgrind's callgrind, with collection switched off at start and toggled on only inside
//! [`counted_execution`] (`--collect-atstart=no --toggle-collect=*counted_execution*`),
//! so the count is the statement's execution alone: no load, no population, no
//! parsing of the command line. Collection is switched per thread: a helper thread a
//! statement starts is not counted (the lab's scans start none). The profile's
//! `summary:` line is the count of instructions executed (`Ir`).
//!
//! [`calibrate`] checks the method itself: a loop of exactly two instructions an
//! iteration (`dec`, `jnz` in assembly, so no compiler can change it), run the same way
//! inside a function callgrind toggles on, must count what it executes.

use lioscope::{QueryResult, Result, Session};
use std::path::Path;
use std::process::Command;

/// The function callgrind collects inside: executes `sql` in `session`.
#[inline(never)]
pub fn counted_execution(session: &Session, sql: &str) -> Result<QueryResult> {
    session.execute(sql)
}

/// Iterations of the calibration loop.
pub const CALIBRATION_ITERATIONS: u64 = 1_000_000;

/// Instructions of one iteration of the calibration loop.
pub const CALIBRATION_INSTRUCTIONS_PER_ITERATION: u64 = 2;

/// How far callgrind's count of the calibration loop may be from its known count: the
/// call itself and the loop's setup, a few dozen instructions, against two million.
pub const CALIBRATION_TOLERANCE: f64 = 1e-4;

/// The calibration loop, collected by callgrind like [`counted_execution`]: exactly
/// `iterations` (at least 1) times `dec; jnz`.
#[inline(never)]
pub fn counted_execution_of_a_known_loop(iterations: u64) {
    let iterations = iterations.max(1);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the loop touches only the register it is given.
    unsafe {
        std::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) iterations => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) iterations => _, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::hint::black_box(iterations);
}

/// What callgrind counted of the calibration loop, against what it executes.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Calibration {
    pub iterations: u64,
    pub expected_instructions: u64,
    pub counted_instructions: u64,
    /// (counted - expected) / expected.
    pub relative_error: f64,
}

impl Calibration {
    /// Whether the count is within [`CALIBRATION_TOLERANCE`].
    pub fn within_tolerance(&self) -> bool {
        self.relative_error.abs() <= CALIBRATION_TOLERANCE
    }
}

/// Counts the calibration loop in a child `exe` (run with `args`, which must make it call
/// [`counted_execution_of_a_known_loop`] with [`CALIBRATION_ITERATIONS`]) under callgrind.
pub fn calibrate(exe: &Path, args: &[String], profile: &Path) -> Result<Calibration> {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return Err(lioscope::Error::unsupported("a callgrind calibration loop on this architecture"));
    }
    let counted = count_instructions(exe, args, profile)?;
    let expected = CALIBRATION_ITERATIONS * CALIBRATION_INSTRUCTIONS_PER_ITERATION;
    Ok(Calibration {
        iterations: CALIBRATION_ITERATIONS,
        expected_instructions: expected,
        counted_instructions: counted,
        relative_error: (counted as f64 - expected as f64) / expected as f64,
    })
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
        .map_err(|e| lioscope::Error::io("run valgrind (is it installed?) for", exe, e))?;
    if !output.status.success() {
        return Err(lioscope::Error::InvalidValue {
            context: format!("valgrind --tool=callgrind {} {}", exe.display(), args.join(" ")),
            message: format!("exited with {}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim()),
        });
    }
    let text = std::fs::read_to_string(profile).map_err(|e| lioscope::Error::io("read", profile, e))?;
    summary(&text).ok_or_else(|| lioscope::Error::InvalidValue {
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

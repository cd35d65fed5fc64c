//! Counting a statement's instructions exactly where the machine hides its hardware
//! counters: the lab runs one access path again in a child `lioscope` process under
//! valgrind's callgrind, with collection switched off at start and toggled on only inside
//! [`counted_execution`] (`--collect-atstart=no --toggle-collect=*counted_execution*`),
//! so the count is the statement's execution alone: no load, no population, no
//! parsing of the command line. Collection is switched per thread: a helper thread a
//! statement starts is not counted (the lab's scans start none). The profile's
//! `summary:` line is the count of instructions executed (`Ir`). The child scans rows in
//! lanes or not as the lab does ([`lioscope::row_lanes`]), so that it counts the path the
//! lab timed.
//!
//! [`simulate`] runs the same way with callgrind's cache and branch simulation on (the
//! simulator cachegrind has: first-level and last-level caches shaped as the host's,
//! and a branch predictor), for where a path's cycles go on a machine that hides its
//! counters: misses and mispredictions in total and by function (self cost).
//!
//! [`calibrate`] checks the method itself: a loop of exactly two instructions an
//! iteration (`dec`, `jnz` in assembly, so no compiler can change it), run the same way
//! inside a function callgrind toggles on, must count what it executes.

use lioscope::{QueryResult, Result, Session};
use std::collections::BTreeMap;
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
    let text = run_callgrind(exe, args, profile, &[])?;
    summary(&text).ok_or_else(|| no_summary(profile))
}

/// The cache and branch simulation's options: callgrind's (the simulator cachegrind
/// has), with the caches of the host as its `cpuid` describes them.
pub const SIMULATION_OPTIONS: [&str; 2] = ["--cache-sim=yes", "--branch-sim=yes"];

/// Runs `exe args` under callgrind as [`count_instructions`] does, with the cache and
/// branch simulation on ([`SIMULATION_OPTIONS`]); returns every event it counted.
pub fn simulate(exe: &Path, args: &[String], profile: &Path) -> Result<Simulated> {
    let text = run_callgrind(exe, args, profile, &SIMULATION_OPTIONS)?;
    Simulated::parse(&text).ok_or_else(|| no_summary(profile))
}

fn no_summary(profile: &Path) -> lioscope::Error {
    lioscope::Error::InvalidValue {
        context: format!("callgrind profile {}", profile.display()),
        message: "no 'events:' and 'summary:' lines".into(),
    }
}

/// Runs callgrind with collection only inside [`counted_execution`] and `extra` options;
/// returns the text of the profile. The child scans rows in lanes or not as this process
/// does: the CPU valgrind shows it is not the host's, and would choose otherwise.
fn run_callgrind(exe: &Path, args: &[String], profile: &Path, extra: &[&str]) -> Result<String> {
    let output = Command::new("valgrind")
        .env(lioscope::row_lanes::CHOICE_VARIABLE, lioscope::row_lanes::choice().setting())
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=*counted_execution*")
        .args(extra)
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
    std::fs::read_to_string(profile).map_err(|e| lioscope::Error::io("read", profile, e))
}

/// What a simulated run counted: each event's total, and each function's own (self)
/// cost, by callgrind's event names (`Ir`; `I1mr`, `D1mr`, `D1mw`: first-level misses
/// of instruction fetches, data reads, data writes; `ILmr`, `DLmr`, `DLmw`: the same at
/// the last level; `Bc`, `Bcm`: conditional branches and their mispredictions; `Bi`,
/// `Bim`: indirect branches and theirs).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Simulated {
    pub totals: BTreeMap<String, u64>,
    /// Each function's self cost, by name.
    pub functions: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The sums of events a report gives, by name.
pub const MISS_KINDS: [(&str, &[&str]); 3] = [
    ("l1_misses", &["I1mr", "D1mr", "D1mw"]),
    ("ll_misses", &["ILmr", "DLmr", "DLmw"]),
    ("mispredictions", &["Bcm", "Bim"]),
];

impl Simulated {
    /// Reads a callgrind profile: its `events:` and `summary:` (or `totals:`) lines, and
    /// the self cost of each function (cost lines under its `fn=`, leaving out the
    /// inclusive cost of the calls it makes, the line after each `calls=`).
    pub fn parse(profile: &str) -> Option<Simulated> {
        let events: Vec<String> =
            profile.lines().find_map(|l| l.strip_prefix("events:"))?.split_whitespace().map(str::to_owned).collect();
        let values = |line: &str| -> Vec<u64> { line.split_whitespace().map_while(|v| v.parse().ok()).collect() };
        let named = |values: Vec<u64>| -> BTreeMap<String, u64> { events.iter().cloned().zip(values).collect() };
        let totals = profile
            .lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .or_else(|| profile.lines().find_map(|l| l.strip_prefix("totals:")))?;
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        let mut functions: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut current: Option<String> = None;
        let mut skip_next_cost = false;
        for line in profile.lines() {
            if let Some(f) = line.strip_prefix("fn=") {
                current = Some(compressed_name(&mut names, f));
            } else if let Some(f) = line.strip_prefix("cfn=") {
                compressed_name(&mut names, f); // names share their numbers with fn=
            } else if line.starts_with("calls=") {
                skip_next_cost = true;
            } else if line.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '*') {
                if std::mem::take(&mut skip_next_cost) {
                    continue;
                }
                let Some(function) = &current else { continue };
                let mut fields = line.split_whitespace();
                fields.next(); // the position
                let costs = functions.entry(function.clone()).or_insert_with(|| vec![0; events.len()]);
                for (total, v) in costs.iter_mut().zip(fields.map_while(|v| v.parse::<u64>().ok())) {
                    *total += v;
                }
            }
        }
        Some(Simulated {
            totals: named(values(totals)),
            functions: functions.into_iter().map(|(name, costs)| (name, named(costs))).collect(),
        })
    }

    /// The sum of `events` over the whole run.
    pub fn total(&self, events: &[&str]) -> u64 {
        events.iter().map(|e| self.totals.get(*e).copied().unwrap_or(0)).sum()
    }

    /// The `n` functions with the largest self sum of `events`, each with its share of
    /// the run's total (none where the total is 0).
    pub fn top_functions(&self, events: &[&str], n: usize) -> Vec<(String, f64)> {
        let total = self.total(events);
        if total == 0 {
            return Vec::new();
        }
        let mut costs: Vec<(&String, u64)> = self
            .functions
            .iter()
            .map(|(name, c)| (name, events.iter().map(|e| c.get(*e).copied().unwrap_or(0)).sum::<u64>()))
            .filter(|(_, c)| *c > 0)
            .collect();
        costs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        costs.into_iter().take(n).map(|(name, c)| (name.clone(), c as f64 / total as f64)).collect()
    }
}

/// The name a `fn=` line gives: `(id) name` defines `id`, `(id)` refers to it, a plain
/// name is itself.
fn compressed_name(names: &mut BTreeMap<String, String>, field: &str) -> String {
    let field = field.trim();
    let Some(rest) = field.strip_prefix('(') else { return field.to_owned() };
    let Some((id, name)) = rest.split_once(')') else { return field.to_owned() };
    let name = name.trim();
    if name.is_empty() {
        names.get(id).cloned().unwrap_or_else(|| format!("({id})"))
    } else {
        names.insert(id.to_owned(), name.to_owned());
        name.to_owned()
    }
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

    /// Self costs: a function's cost lines add up, with relative and repeated positions,
    /// trailing zeros left out, names given once and referred to by number, and the
    /// inclusive cost of a call left to the callee.
    #[test]
    fn a_simulated_profile_gives_each_functions_own_misses() {
        let profile = "version: 1\ncreator: callgrind-3.19.0\npositions: line\n\
            events: Ir D1mr DLmr Bcm\n\
            fl=(1) scan.rs\nfn=(1) walk_block\n10 100 5 2 1\n+2 50 3\n* 10\n\
            cfn=(2) decode\ncalls=4 20\n12 900 80 40 9\n\
            fn=(2)\n20 400 10 1 7\n\
            fn=(3) other\n5 3\nfn=(1)\n11 1 1 1 1\n\
            summary: 564 19 4 9\ntotals: 564 19 4 9\n";
        let s = super::Simulated::parse(profile).unwrap();
        assert_eq!(s.totals["Ir"], 564);
        assert_eq!(s.total(&["DLmr", "Bcm"]), 13);
        let walk = &s.functions["walk_block"];
        assert_eq!((walk["Ir"], walk["D1mr"], walk["DLmr"], walk["Bcm"]), (161, 9, 3, 2));
        let decode = &s.functions["decode"];
        assert_eq!((decode["Ir"], decode["Bcm"]), (400, 7));
        assert_eq!(s.functions["other"]["Ir"], 3);
        let top = s.top_functions(&["Bcm"], 2);
        assert_eq!(top[0].0, "decode");
        assert!((top[0].1 - 7.0 / 9.0).abs() < 1e-12 && top[1].0 == "walk_block");
        assert!(s.top_functions(&["Bim"], 3).is_empty());
        assert!(super::Simulated::parse("events: Ir\n").is_none());
    }
}

//! CPU time of the benchmarks' servers and clients, read from Linux's `/proc/PID/stat`.
//!
//! A server's CPU a transaction is steadier than its TPS on a shared host (the TPS
//! moves with what else runs; the CPU a transaction costs moves much less), and on a
//! machine whose CPUs pgbench shares with the server it says which side spends them.
//!
//! What counts as a server's CPU: for lioscope, served from the benchmark's own process,
//! the process's own user and system time (all its threads: connections, log writer,
//! database writer); the benchmark's main thread only waits for pgbench meanwhile. For
//! PostgreSQL, a process per connection, the postmaster's own time, the time of the
//! children it has reaped (the connections' backends once they exit), and the time of
//! its live children (checkpointer, WAL writer, ...). A client run as a child of this
//! process (pgbench) counts, once waited for, in this process's reaped children's time.
//!
//! Invariant: a reading is a sum of monotone counters, so the difference of two readings
//! of the same processes is never negative, unless a child died unreaped between them;
//! [`reaped_children`] waits for that before the second reading.

use std::ops::{Add, Sub};
use std::time::{Duration, Instant};

/// User and system CPU time, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTime {
    pub user_s: f64,
    pub system_s: f64,
}

impl CpuTime {
    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// Each part in microseconds per `n` (a transaction's share of a run's time).
    pub fn micros_per(&self, n: usize) -> CpuTime {
        let per = 1e6 / n.max(1) as f64;
        CpuTime { user_s: self.user_s * per, system_s: self.system_s * per }
    }
}

impl Sub for CpuTime {
    type Output = CpuTime;
    fn sub(self, before: CpuTime) -> CpuTime {
        CpuTime { user_s: self.user_s - before.user_s, system_s: self.system_s - before.system_s }
    }
}

impl Add for CpuTime {
    type Output = CpuTime;
    fn add(self, other: CpuTime) -> CpuTime {
        CpuTime { user_s: self.user_s + other.user_s, system_s: self.system_s + other.system_s }
    }
}

/// The fields of `/proc/PID/stat` the benchmarks use, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ProcStat {
    parent: u32,
    user: u64,
    system: u64,
    children_user: u64,
    children_system: u64,
}

/// Parses a `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
/// hold spaces and parentheses itself, so the fields are counted after its last `)`.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), ..., utime (14), stime (15), cutime (16), cstime (17).
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(ProcStat {
        parent: u32::try_from(field(4)?).ok()?,
        user: field(14)?,
        system: field(15)?,
        children_user: field(16)?,
        children_system: field(17)?,
    })
}

fn read_stat(pid: &str) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn seconds(user_ticks: u64, system_ticks: u64) -> CpuTime {
    // SAFETY: sysconf takes a plain integer and returns a plain integer.
    let per_second = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        t if t > 0 => t as f64,
        _ => 100.0,
    };
    CpuTime { user_s: user_ticks as f64 / per_second, system_s: system_ticks as f64 / per_second }
}

/// This process's own CPU (all its threads) and its reaped children's.
pub fn own_and_children() -> Option<(CpuTime, CpuTime)> {
    let s = read_stat("self")?;
    Some((seconds(s.user, s.system), seconds(s.children_user, s.children_system)))
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            name.bytes().all(|b| b.is_ascii_digit()).then(|| read_stat(name))?
        })
        .filter(|s| s.parent == pid)
        .collect()
}

/// The CPU of process `pid` and of its children, live and reaped, and how many are live.
pub fn process_tree(pid: u32) -> Option<(CpuTime, usize)> {
    let own = read_stat(&pid.to_string())?;
    let live = children(pid);
    let (mut user, mut system) = (own.user + own.children_user, own.system + own.children_system);
    for c in &live {
        user += c.user + c.children_user;
        system += c.system + c.children_system;
    }
    Some((seconds(user, system), live.len()))
}

/// Waits (up to `limit`) until `pid` has no more than `children` live children, so that
/// the times of those that exited are in its reaped children's; whether it came to that.
pub fn reaped_children(pid: u32, children: usize, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        match process_tree(pid) {
            Some((_, live)) if live <= children => return true,
            None => return false,
            Some(_) if started.elapsed() >= limit => return false,
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (postgres: sys (x) idle) S 17 4242 4242 0 -1 4194560 300 0 0 0 \
                    125 37 9 4 20 0 1 0 100 1000 10 18446744073709551615";
        let s = parse_stat(line).unwrap();
        assert_eq!(s, ProcStat { parent: 17, user: 125, system: 37, children_user: 9, children_system: 4 });
        assert_eq!(parse_stat("4242 (cut) S 17 1 2"), None, "too few fields");
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    #[test]
    fn a_busy_thread_shows_in_its_own_process_time_and_a_waited_child_in_the_childrens() {
        let (own_before, children_before) = own_and_children().unwrap();
        let started = Instant::now();
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        // A child that spins for a while, waited for.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let (own_after, children_after) = own_and_children().unwrap();
        assert!((own_after - own_before).total_s() >= 0.2, "{own_before:?} {own_after:?}");
        assert!((children_after - children_before).total_s() > 0.0, "{children_before:?} {children_after:?}");
        let tree = process_tree(std::process::id()).unwrap().0;
        assert!(tree.total_s() >= own_after.total_s() + children_after.total_s() - 0.02);
        assert_eq!(
            CpuTime { user_s: 1.5, system_s: 0.5 }.micros_per(1_000_000),
            CpuTime { user_s: 1.5, system_s: 0.5 }
        );
        assert_eq!(CpuTime { user_s: 1.0, system_s: 2.0 } + CpuTime::default(), CpuTime { user_s: 1.0, system_s: 2.0 });
    }
}

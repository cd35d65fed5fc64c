//! Operating-system CPU figures for the `v$osstat` view, and the thread and
//! process CPU clocks used by the time model.
//!
//! Where each figure comes from:
//!
//! * CPU times (`USER_TIME`, `SYS_TIME`, `IDLE_TIME`, ...) come from the
//!   aggregate `cpu ` line of `/proc/stat`, converted from USER_HZ ticks
//!   (`sysconf(_SC_CLK_TCK)`) to centiseconds, the unit Oracle uses for the
//!   `*_TIME` rows of `v$osstat`.
//! * Logical CPUs come from `sysconf(_SC_NPROCESSORS_ONLN)`, or
//!   [`std::thread::available_parallelism`] if sysconf fails.
//! * Cores and sockets come from
//!   `/sys/devices/system/cpu/cpu*/topology/{physical_package_id,core_id}`,
//!   and from the `physical id` / `core id` fields of `/proc/cpuinfo` when
//!   sysfs does not report them. The model name comes from `/proc/cpuinfo`.
//! * Physical memory comes from `sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE)`.
//! * Thread and process CPU time come from `clock_gettime` with
//!   `CLOCK_THREAD_CPUTIME_ID` and `CLOCK_PROCESS_CPUTIME_ID`.
//!
//! Invariant: a figure the kernel does not report is absent (`None`, or no
//! `v$osstat` row), never guessed. The one documented exception is
//! [`read_topology`], whose non-optional fields need a value; see its
//! documentation for the fallback it uses.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;

const PROC_STAT: &str = "/proc/stat";
const PROC_CPUINFO: &str = "/proc/cpuinfo";
const SYSFS_CPU_DIR: &str = "/sys/devices/system/cpu";

/// Centiseconds per second: Oracle's unit for the `*_TIME` rows.
const CENTISECONDS_PER_SECOND: u128 = 100;
const NANOSECONDS_PER_SECOND: u64 = 1_000_000_000;

/// One row of v$osstat.
#[derive(Debug, Clone, PartialEq)]
pub struct OsStat {
    pub name: &'static str,
    pub value: u64,
    pub comments: &'static str,
}

/// CPU topology from sysfs (and /proc/cpuinfo as fallback for sockets/cores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTopology {
    pub logical_cpus: u32,
    pub cores: u32,
    pub sockets: u32,
    pub threads_per_core: u32,
    pub model_name: Option<String>,
}

/// Cumulative CPU times across all CPUs from the first "cpu " line of
/// /proc/stat, in centiseconds (Oracle's v$osstat unit for *_TIME), converted
/// from USER_HZ ticks via sysconf(_SC_CLK_TCK).
///
/// As in the kernel, `user` already includes `guest` time, and `nice`
/// already includes guest-nice time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub sys: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time stolen by the hypervisor; `None` on kernels that do not report it.
    pub steal: Option<u64>,
    /// Time spent running guests; `None` on kernels that do not report it.
    pub guest: Option<u64>,
}

impl CpuTimes {
    /// Time the CPUs spent doing work: user + nice + sys + irq + softirq.
    ///
    /// Steal time is not busy time and is kept separate; guest time is
    /// already part of `user`, so it is not added again.
    pub fn busy(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.sys)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
    }

    /// Per-field difference `self - earlier`, saturating at zero.
    /// `steal` and `guest` are `None` if either sample lacks them.
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            sys: self.sys.saturating_sub(earlier.sys),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: optional_difference(self.steal, earlier.steal),
            guest: optional_difference(self.guest, earlier.guest),
        }
    }

    /// Steal time as a percentage of busy + idle + iowait + steal.
    ///
    /// `None` if the kernel does not report steal, or if no time at all was
    /// accounted (the percentage is then undefined).
    pub fn steal_pct(&self) -> Option<f64> {
        self.share_pct(self.steal?)
    }

    /// `part` (ticks of these times) as a percentage of busy + idle + iowait + steal;
    /// `None` if no time at all was accounted.
    pub fn share_pct(&self, part: u64) -> Option<f64> {
        let total =
            self.busy().saturating_add(self.idle).saturating_add(self.iowait).saturating_add(self.steal.unwrap_or(0));
        (total > 0).then(|| part as f64 / total as f64 * 100.0)
    }
}

fn optional_difference(later: Option<u64>, earlier: Option<u64>) -> Option<u64> {
    Some(later?.saturating_sub(earlier?))
}

/// Parses the aggregate `cpu ` line of `/proc/stat` text, converting ticks
/// of `clk_tck` per second into centiseconds.
///
/// Needs at least the seven fields user..softirq (Linux 2.6+); `steal` and
/// `guest` are read when present. Returns `None` for a missing, truncated
/// or non-numeric line, or for `clk_tck == 0`.
pub fn parse_proc_stat(text: &str, clk_tck: u64) -> Option<CpuTimes> {
    const REQUIRED_FIELDS: usize = 7;
    const USED_FIELDS: usize = 9;
    if clk_tck == 0 {
        return None;
    }
    let mut fields =
        text.lines().find(|line| line.split_whitespace().next() == Some("cpu"))?.split_whitespace().skip(1);
    let mut ticks = Vec::with_capacity(USED_FIELDS);
    for field in fields.by_ref().take(USED_FIELDS) {
        ticks.push(field.parse::<u64>().ok()?);
    }
    if ticks.len() < REQUIRED_FIELDS {
        return None;
    }
    let centis = |index: usize| ticks.get(index).map(|&t| ticks_to_centiseconds(t, clk_tck));
    Some(CpuTimes {
        user: centis(0)?,
        nice: centis(1)?,
        sys: centis(2)?,
        idle: centis(3)?,
        iowait: centis(4)?,
        irq: centis(5)?,
        softirq: centis(6)?,
        steal: centis(7),
        guest: centis(8),
    })
}

fn ticks_to_centiseconds(ticks: u64, clk_tck: u64) -> u64 {
    let centis = u128::from(ticks) * CENTISECONDS_PER_SECOND / u128::from(clk_tck);
    u64::try_from(centis).unwrap_or(u64::MAX)
}

/// Reads `/proc/stat` and converts it with the system's real USER_HZ.
///
/// Errors: the I/O error from reading the file (message prefixed with the
/// path), `InvalidData` naming `/proc/stat` if the `cpu ` line is
/// unparsable, or `Other` if `sysconf(_SC_CLK_TCK)` fails.
pub fn read_cpu_times() -> io::Result<CpuTimes> {
    let clk_tck = sysconf(libc::_SC_CLK_TCK).ok_or_else(|| io::Error::other("sysconf(_SC_CLK_TCK) failed"))?;
    let text = fs::read_to_string(PROC_STAT).map_err(|e| io::Error::new(e.kind(), format!("{PROC_STAT}: {e}")))?;
    parse_proc_stat(&text, clk_tck).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, format!("{PROC_STAT}: no parsable aggregate \"cpu \" line"))
    })
}

/// Sockets and cores counted from (package id, core id) pairs, one pair per
/// logical CPU; either id may be unknown.
#[derive(Debug, Default, PartialEq, Eq)]
struct PackageCoreCounts {
    sockets: Option<u32>,
    cores: Option<u32>,
}

/// Counts distinct package ids (sockets) and distinct (package, core) pairs
/// (cores). A count is `None` when no CPU reported the ids it needs.
fn count_packages_and_cores<I>(cpus: I) -> PackageCoreCounts
where
    I: IntoIterator<Item = (Option<String>, Option<String>)>,
{
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for (package, core) in cpus {
        let Some(package) = package else { continue };
        if let Some(core) = core {
            cores.insert((package.clone(), core));
        }
        packages.insert(package);
    }
    PackageCoreCounts { sockets: nonzero_count(packages.len()), cores: nonzero_count(cores.len()) }
}

fn nonzero_count(count: usize) -> Option<u32> {
    u32::try_from(count).ok().filter(|&n| n > 0)
}

/// One `processor` block of `/proc/cpuinfo`.
#[derive(Default)]
struct CpuinfoBlock {
    physical_id: Option<String>,
    core_id: Option<String>,
}

/// Parses `/proc/cpuinfo` text into (sockets, cores, model name).
///
/// Sockets are distinct `physical id` values, cores distinct
/// (`physical id`, `core id`) pairs, the model name is the first non-empty
/// `model name`. Each is `None` when the text does not contain it (as on
/// many ARM kernels).
pub fn parse_cpuinfo_topology(cpuinfo: &str) -> (Option<u32>, Option<u32>, Option<String>) {
    let mut blocks = Vec::new();
    let mut current = CpuinfoBlock::default();
    let mut model_name = None;
    for line in cpuinfo.lines() {
        if line.trim().is_empty() {
            blocks.push(std::mem::take(&mut current));
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "physical id" => current.physical_id = non_empty(value),
            "core id" => current.core_id = non_empty(value),
            "model name" if model_name.is_none() => model_name = non_empty(value),
            _ => {}
        }
    }
    blocks.push(current);
    let counts = count_packages_and_cores(blocks.into_iter().map(|b| (b.physical_id, b.core_id)));
    (counts.sockets, counts.cores, model_name)
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

/// Reads (package id, core id) for every online `cpuN` directory under
/// `cpu_dir`. Negative ids (the kernel's "unknown") count as not reported.
fn sysfs_packages_and_cores(cpu_dir: &Path) -> PackageCoreCounts {
    let Ok(entries) = fs::read_dir(cpu_dir) else {
        return PackageCoreCounts::default();
    };
    let cpus = entries
        .filter_map(Result::ok)
        .filter(|entry| is_cpu_dir_name(&entry.file_name().to_string_lossy()))
        .map(|entry| entry.path())
        .filter(|path| !is_offline(path))
        .map(|path| {
            let topology = path.join("topology");
            (read_sysfs_id(&topology.join("physical_package_id")), read_sysfs_id(&topology.join("core_id")))
        });
    count_packages_and_cores(cpus)
}

fn is_cpu_dir_name(name: &str) -> bool {
    name.strip_prefix("cpu").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A CPU is offline only if its `online` file says so; cpu0 often has none.
fn is_offline(cpu_path: &Path) -> bool {
    fs::read_to_string(cpu_path.join("online")).is_ok_and(|s| s.trim() == "0")
}

fn read_sysfs_id(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let id = text.trim();
    id.parse::<u64>().ok().map(|_| id.to_owned())
}

/// Where a core or socket count came from, for the `comments` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopologySource {
    Sysfs,
    Cpuinfo,
}

impl TopologySource {
    fn comment(self) -> &'static str {
        match self {
            TopologySource::Sysfs => "from sysfs topology",
            TopologySource::Cpuinfo => "from /proc/cpuinfo",
        }
    }
}

/// Topology exactly as reported, with nothing filled in.
struct TopologyProbe {
    logical_cpus: Option<u32>,
    cores: Option<(u32, TopologySource)>,
    sockets: Option<(u32, TopologySource)>,
    model_name: Option<String>,
}

fn probe_topology() -> TopologyProbe {
    let sysfs = sysfs_packages_and_cores(Path::new(SYSFS_CPU_DIR));
    let cpuinfo = fs::read_to_string(PROC_CPUINFO).unwrap_or_default();
    let (cpuinfo_sockets, cpuinfo_cores, model_name) = parse_cpuinfo_topology(&cpuinfo);
    TopologyProbe {
        logical_cpus: online_logical_cpus(),
        cores: with_source(sysfs.cores, cpuinfo_cores),
        sockets: with_source(sysfs.sockets, cpuinfo_sockets),
        model_name,
    }
}

fn with_source(sysfs: Option<u32>, cpuinfo: Option<u32>) -> Option<(u32, TopologySource)> {
    sysfs.map(|n| (n, TopologySource::Sysfs)).or_else(|| cpuinfo.map(|n| (n, TopologySource::Cpuinfo)))
}

/// The CPUs this process may run on (its affinity and cgroup quota counted, at least
/// 1), read once: what sizes helper threads and population workers. Reading it again on
/// every statement would cost system calls and cgroup file reads.
pub fn usable_cpus() -> usize {
    static USABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *USABLE.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

fn online_logical_cpus() -> Option<u32> {
    sysconf(libc::_SC_NPROCESSORS_ONLN)
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| std::thread::available_parallelism().ok().and_then(|n| u32::try_from(n.get()).ok()))
        .filter(|&n| n > 0)
}

/// Reads the CPU topology.
///
/// Logical CPUs come from `sysconf(_SC_NPROCESSORS_ONLN)` (all online CPUs,
/// regardless of this process's affinity or cgroup quota), falling back to
/// [`std::thread::available_parallelism`]. Cores and sockets come from sysfs,
/// then `/proc/cpuinfo`. `threads_per_core` is logical CPUs divided by cores,
/// rounded up (so hybrid CPUs with some SMT cores report 2).
///
/// Fallback: because these fields are not optional, a figure that no source
/// reports is filled in as logical CPUs = 1, cores = logical CPUs,
/// sockets = 1. [`osstat_rows`] does not use this fallback: it omits the
/// rows the kernel does not report.
pub fn read_topology() -> CpuTopology {
    let probe = probe_topology();
    let logical_cpus = probe.logical_cpus.unwrap_or(1);
    let cores = probe.cores.map_or(logical_cpus, |(n, _)| n);
    CpuTopology {
        logical_cpus,
        cores,
        sockets: probe.sockets.map_or(1, |(n, _)| n),
        threads_per_core: logical_cpus.div_ceil(cores.max(1)).max(1),
        model_name: probe.model_name,
    }
}

/// The rows of `v$osstat`, with Oracle's names.
///
/// A row is present only when the kernel reports its figure: `STEAL_TIME`
/// needs a kernel that reports steal, the `*_TIME` rows need a readable
/// `/proc/stat`, `NUM_CPU_CORES` / `NUM_CPU_SOCKETS` need sysfs or
/// `/proc/cpuinfo` to report them. Oracle's `LOAD` is fractional and is
/// omitted because `value` is an integer.
pub fn osstat_rows() -> Vec<OsStat> {
    let mut rows = topology_rows(&probe_topology());
    if let Ok(times) = read_cpu_times() {
        rows.extend(cpu_time_rows(&times));
    }
    if let Some(bytes) = physical_memory_bytes() {
        rows.push(row("PHYSICAL_MEMORY_BYTES", bytes, "bytes, sysconf(_SC_PHYS_PAGES) * page size"));
    }
    rows
}

fn row(name: &'static str, value: u64, comments: &'static str) -> OsStat {
    OsStat { name, value, comments }
}

fn topology_rows(probe: &TopologyProbe) -> Vec<OsStat> {
    let mut rows = Vec::new();
    if let Some(cpus) = probe.logical_cpus {
        rows.push(row("NUM_CPUS", cpus.into(), "online logical CPUs"));
    }
    if let Some((cores, source)) = probe.cores {
        rows.push(row("NUM_CPU_CORES", cores.into(), source.comment()));
    }
    if let Some((sockets, source)) = probe.sockets {
        rows.push(row("NUM_CPU_SOCKETS", sockets.into(), source.comment()));
    }
    rows
}

fn cpu_time_rows(times: &CpuTimes) -> Vec<OsStat> {
    const SOURCE: &str = "centiseconds, /proc/stat";
    let mut rows = vec![
        row("BUSY_TIME", times.busy(), "centiseconds, /proc/stat user+nice+system+irq+softirq"),
        row("IDLE_TIME", times.idle, SOURCE),
        row("IOWAIT_TIME", times.iowait, SOURCE),
        row("USER_TIME", times.user, SOURCE),
        row("SYS_TIME", times.sys, SOURCE),
        row("NICE_TIME", times.nice, SOURCE),
        row("IRQ_TIME", times.irq.saturating_add(times.softirq), "centiseconds, /proc/stat irq+softirq"),
    ];
    if let Some(steal) = times.steal {
        rows.push(row("STEAL_TIME", steal, SOURCE));
    }
    rows
}

pub fn physical_memory_bytes() -> Option<u64> {
    let pages = sysconf(libc::_SC_PHYS_PAGES)?;
    let page_size = sysconf(libc::_SC_PAGESIZE)?;
    pages.checked_mul(page_size)
}

/// `sysconf(name)` as a positive integer; `None` if unsupported or failed.
fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf takes a plain integer and returns a plain integer; it
    // has no pointer arguments and no memory-safety preconditions.
    let value = unsafe { libc::sysconf(name) };
    u64::try_from(value).ok().filter(|&v| v > 0)
}

/// CPU time consumed by the calling thread, in nanoseconds.
/// Returns 0 only if `clock_gettime` fails, which Linux does not do for this clock.
pub fn thread_cpu_time_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// CPU time consumed by all threads of this process, in nanoseconds.
/// Returns 0 only if `clock_gettime` fails, which Linux does not do for this clock.
pub fn process_cpu_time_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

fn clock_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, initialised, exclusively borrowed timespec
    // that lives for the whole call; clock_gettime writes only into it.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return None;
    }
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u64::try_from(ts.tv_nsec).ok()?;
    secs.checked_mul(NANOSECONDS_PER_SECOND)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROC_STAT_NORMAL: &str = "\
cpu  33515 120 5923 22632 311 7 48 1055 40 0
cpu0 15716 60 2723 12714 80 3 6 520 20 0
cpu1 17799 60 3200 9918 231 4 42 535 20 0
intr 1234567 0 0
ctxt 987654
btime 1700000000
";

    const PROC_STAT_OLD_KERNEL: &str = "\
cpu  1000 20 300 4000 50 6 7
cpu0 1000 20 300 4000 50 6 7
";

    /// Two sockets x two cores x two hyperthreads; core ids repeat per socket.
    const CPUINFO_TWO_SOCKETS_HT: &str = "\
processor\t: 0
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 0
siblings\t: 4
core id\t\t: 0
cpu cores\t: 2

processor\t: 1
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 0
core id\t\t: 1

processor\t: 2
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 1
core id\t\t: 0

processor\t: 3
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 1
core id\t\t: 1

processor\t: 4
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 0
core id\t\t: 0

processor\t: 5
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 0
core id\t\t: 1

processor\t: 6
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 1
core id\t\t: 0

processor\t: 7
model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz
physical id\t: 1
core id\t\t: 1

";

    fn sample(busy_part: u64, idle: u64, steal: Option<u64>) -> CpuTimes {
        CpuTimes { user: busy_part, idle, steal, ..CpuTimes::default() }
    }

    #[test]
    fn parses_normal_proc_stat_line() {
        let times = parse_proc_stat(PROC_STAT_NORMAL, 100).expect("parsable");
        assert_eq!(
            times,
            CpuTimes {
                user: 33515,
                nice: 120,
                sys: 5923,
                idle: 22632,
                iowait: 311,
                irq: 7,
                softirq: 48,
                steal: Some(1055),
                guest: Some(40),
            }
        );
        assert_eq!(times.busy(), 33515 + 120 + 5923 + 7 + 48);
    }

    #[test]
    fn converts_ticks_to_centiseconds() {
        let times = parse_proc_stat("cpu  1000 0 250 3 0 0 0\n", 1000).expect("parsable");
        assert_eq!(times.user, 100);
        assert_eq!(times.sys, 25);
        assert_eq!(times.idle, 0);
    }

    #[test]
    fn old_kernel_line_has_no_steal_or_guest() {
        let times = parse_proc_stat(PROC_STAT_OLD_KERNEL, 100).expect("parsable");
        assert_eq!(times.softirq, 7);
        assert_eq!(times.steal, None);
        assert_eq!(times.guest, None);
        assert_eq!(times.steal_pct(), None);
    }

    #[test]
    fn garbage_and_truncated_input_give_none() {
        assert_eq!(parse_proc_stat("", 100), None);
        assert_eq!(parse_proc_stat("hello world\n\0\u{fffd}", 100), None);
        assert_eq!(parse_proc_stat("cpu  1 2 3 4 5 6\n", 100), None);
        assert_eq!(parse_proc_stat("cpu  1 2 x 4 5 6 7\n", 100), None);
        assert_eq!(parse_proc_stat("cpu  1 2 3 4 5 6 -7\n", 100), None);
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4 5 6 7\n", 100), None);
        assert_eq!(parse_proc_stat(PROC_STAT_NORMAL, 0), None);
    }

    #[test]
    fn huge_tick_counts_saturate_instead_of_overflowing() {
        let line = format!("cpu  {} 0 0 0 0 0 0\n", u64::MAX);
        let times = parse_proc_stat(&line, 1).expect("parsable");
        assert_eq!(times.user, u64::MAX);
        assert_eq!(times.busy(), u64::MAX);
    }

    #[test]
    fn since_saturates_and_drops_unpaired_steal() {
        let earlier = CpuTimes { user: 100, idle: 50, steal: Some(10), guest: Some(5), ..CpuTimes::default() };
        let later = CpuTimes { user: 160, idle: 40, steal: Some(12), guest: None, ..CpuTimes::default() };
        let delta = later.since(&earlier);
        assert_eq!(delta.user, 60);
        assert_eq!(delta.idle, 0, "counter going backwards saturates at zero");
        assert_eq!(delta.steal, Some(2));
        assert_eq!(delta.guest, None);
        assert_eq!(later.since(&sample(0, 0, None)).steal, None);
    }

    #[test]
    fn steal_pct_uses_busy_idle_iowait_and_steal() {
        let times = CpuTimes { user: 50, idle: 30, iowait: 10, steal: Some(10), ..CpuTimes::default() };
        let pct = times.steal_pct().expect("steal reported");
        assert!((pct - 10.0).abs() < 1e-9, "got {pct}");
        assert_eq!(sample(0, 0, Some(0)).steal_pct(), None);
        assert_eq!(sample(5, 5, None).steal_pct(), None);
    }

    #[test]
    fn cpuinfo_two_sockets_with_hyperthreads() {
        let (sockets, cores, model) = parse_cpuinfo_topology(CPUINFO_TWO_SOCKETS_HT);
        assert_eq!(sockets, Some(2));
        assert_eq!(cores, Some(4));
        assert_eq!(model.as_deref(), Some("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"));
    }

    #[test]
    fn cpuinfo_without_topology_fields_reports_nothing() {
        let arm = "processor\t: 0\nBogoMIPS\t: 48.00\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\n";
        assert_eq!(parse_cpuinfo_topology(arm), (None, None, None));
        assert_eq!(parse_cpuinfo_topology(""), (None, None, None));
    }

    #[test]
    fn cpuinfo_with_sockets_but_no_core_ids() {
        let text = "processor : 0\nphysical id : 0\n\nprocessor : 1\nphysical id : 1\n";
        assert_eq!(parse_cpuinfo_topology(text), (Some(2), None, None));
    }

    #[test]
    fn cpu_dir_names() {
        assert!(is_cpu_dir_name("cpu0"));
        assert!(is_cpu_dir_name("cpu127"));
        assert!(!is_cpu_dir_name("cpu"));
        assert!(!is_cpu_dir_name("cpufreq"));
        assert!(!is_cpu_dir_name("cpuidle"));
    }

    #[test]
    fn sysfs_layout_is_counted_per_package_and_core() {
        let root = std::env::temp_dir().join(format!("osstat_sysfs_{}", std::process::id()));
        let cpus = [("0", "0"), ("0", "1"), ("0", "0"), ("1", "5"), ("-1", "0")];
        for (n, (package, core)) in cpus.iter().enumerate() {
            let topology = root.join(format!("cpu{n}")).join("topology");
            fs::create_dir_all(&topology).expect("create fixture dir");
            fs::write(topology.join("physical_package_id"), format!("{package}\n")).expect("write fixture");
            fs::write(topology.join("core_id"), format!("{core}\n")).expect("write fixture");
        }
        // cpu3 is offline, cpu4 has an unknown package: neither may count.
        fs::write(root.join("cpu3").join("online"), "0\n").expect("write fixture");
        fs::create_dir_all(root.join("cpufreq")).expect("create fixture dir");

        let counts = sysfs_packages_and_cores(&root);
        let _ = fs::remove_dir_all(&root);
        assert_eq!(counts, PackageCoreCounts { sockets: Some(1), cores: Some(2) });
    }

    #[test]
    fn missing_sysfs_dir_reports_nothing() {
        let counts = sysfs_packages_and_cores(Path::new("/nonexistent/osstat/cpu"));
        assert_eq!(counts, PackageCoreCounts::default());
    }

    #[test]
    fn read_topology_is_self_consistent() {
        let topology = read_topology();
        assert!(topology.logical_cpus >= 1);
        assert!(topology.cores >= 1);
        assert!(topology.sockets >= 1);
        assert!(topology.threads_per_core >= 1);
        assert!(topology.cores * topology.threads_per_core >= topology.logical_cpus);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn live_proc_stat_and_osstat_rows() {
        let times = read_cpu_times().expect("/proc/stat readable on Linux");
        assert!(times.busy() + times.idle > 0);
        let rows = osstat_rows();
        let names: Vec<_> = rows.iter().map(|r| r.name).collect();
        for name in ["NUM_CPUS", "BUSY_TIME", "IDLE_TIME", "PHYSICAL_MEMORY_BYTES"] {
            assert!(names.contains(&name), "missing {name} in {names:?}");
        }
        assert_eq!(names.contains(&"STEAL_TIME"), times.steal.is_some());
        assert!(rows.iter().all(|r| !r.comments.is_empty()));
    }

    #[test]
    fn thread_cpu_time_increases_after_busy_loop() {
        let before = thread_cpu_time_ns();
        let mut acc = 0u64;
        for i in 0..5_000_000u64 {
            acc = std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i));
        }
        std::hint::black_box(acc);
        let after = thread_cpu_time_ns();
        assert!(after > before, "before {before}, after {after}");
    }

    #[test]
    fn process_cpu_time_covers_this_thread() {
        let thread = thread_cpu_time_ns();
        let process = process_cpu_time_ns();
        assert!(process >= thread, "process {process} < thread {thread}");
    }
}

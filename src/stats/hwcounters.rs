//! Performance counters of one thread: hardware events (cycles, instructions, branches,
//! cache misses, stalled cycles) and the software `task-clock`, opened with
//! `perf_event_open(2)` and read as `perf stat` reads them.
//!
//! ```text
//!  ThreadCounters (one thread, user space only)
//!   ├ group 0  task-clock                                        (software: always counts)
//!   ├ group 1  cycles ← instructions, branches, branch-misses     (one PMU schedule each)
//!   ├ group 2  cache-references ← cache-misses, LLC-loads, LLC-load-misses
//!   ├ group 3  L1-dcache-loads ← L1-dcache-load-misses, stalled-cycles-frontend/-backend
//!   └ unavailable: counter → why (e.g. "ENOENT from perf_event_open(PERF_COUNT_HW_INSTRUCTIONS)")
//! ```
//!
//! Each group is read at once (`PERF_FORMAT_GROUP`) with the time it was enabled and the
//! time it was running. When the PMU has fewer counters than are asked for, the kernel
//! multiplexes the groups; a figure is then scaled, `raw × enabled / running`, and both
//! times travel with it so that a report can show the scaling. A group's members count
//! over exactly the same intervals, so ratios inside a group (IPC) are never skewed by
//! scaling.
//!
//! Invariants: a counter that cannot be opened is never estimated: it is reported as
//! unavailable with the kernel's reason, and every other counter still counts (virtual
//! machines commonly hide the hardware events while the software ones work). Counters
//! count the thread that opened them (`pid = 0`), so a reader must be that thread
//! ([`ThreadCounters::is_current_thread`]). Readings only grow; a figure of a span is the
//! difference of two readings.
//!
//! `task-clock` is the scheduler's clock while the thread is on a CPU, kernel time
//! included. On a virtual machine that clock keeps running while the hypervisor has
//! stolen the CPU, whereas the thread CPU clock (`DB CPU`) leaves steal out: on a busy
//! host task-clock reads more than DB CPU, and the difference is steal, not work.

use perf_event_open_sys as sys;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A counter lioscope reads, named as `perf stat` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Counter {
    TaskClock,
    Cycles,
    Instructions,
    Branches,
    BranchMisses,
    CacheReferences,
    CacheMisses,
    LlcLoads,
    LlcLoadMisses,
    L1dLoads,
    L1dLoadMisses,
    StalledCyclesFrontend,
    StalledCyclesBackend,
}

impl Counter {
    /// Every counter, in the order reports list them.
    pub const ALL: [Counter; 13] = [
        Counter::TaskClock,
        Counter::Cycles,
        Counter::Instructions,
        Counter::Branches,
        Counter::BranchMisses,
        Counter::CacheReferences,
        Counter::CacheMisses,
        Counter::LlcLoads,
        Counter::LlcLoadMisses,
        Counter::L1dLoads,
        Counter::L1dLoadMisses,
        Counter::StalledCyclesFrontend,
        Counter::StalledCyclesBackend,
    ];

    /// The name `perf stat -e` takes.
    pub fn name(self) -> &'static str {
        match self {
            Counter::TaskClock => "task-clock",
            Counter::Cycles => "cycles",
            Counter::Instructions => "instructions",
            Counter::Branches => "branches",
            Counter::BranchMisses => "branch-misses",
            Counter::CacheReferences => "cache-references",
            Counter::CacheMisses => "cache-misses",
            Counter::LlcLoads => "LLC-loads",
            Counter::LlcLoadMisses => "LLC-load-misses",
            Counter::L1dLoads => "L1-dcache-loads",
            Counter::L1dLoadMisses => "L1-dcache-load-misses",
            Counter::StalledCyclesFrontend => "stalled-cycles-frontend",
            Counter::StalledCyclesBackend => "stalled-cycles-backend",
        }
    }

    /// The kernel's name of the event, for reasons.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Counter::TaskClock => "PERF_COUNT_SW_TASK_CLOCK",
            Counter::Cycles => "PERF_COUNT_HW_CPU_CYCLES",
            Counter::Instructions => "PERF_COUNT_HW_INSTRUCTIONS",
            Counter::Branches => "PERF_COUNT_HW_BRANCH_INSTRUCTIONS",
            Counter::BranchMisses => "PERF_COUNT_HW_BRANCH_MISSES",
            Counter::CacheReferences => "PERF_COUNT_HW_CACHE_REFERENCES",
            Counter::CacheMisses => "PERF_COUNT_HW_CACHE_MISSES",
            Counter::LlcLoads => "PERF_COUNT_HW_CACHE_LL read access",
            Counter::LlcLoadMisses => "PERF_COUNT_HW_CACHE_LL read miss",
            Counter::L1dLoads => "PERF_COUNT_HW_CACHE_L1D read access",
            Counter::L1dLoadMisses => "PERF_COUNT_HW_CACHE_L1D read miss",
            Counter::StalledCyclesFrontend => "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND",
            Counter::StalledCyclesBackend => "PERF_COUNT_HW_STALLED_CYCLES_BACKEND",
        }
    }

    /// The counter `perf stat` calls `name`, if lioscope reads it.
    pub fn from_name(name: &str) -> Option<Counter> {
        Counter::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// `perf_event_attr.type` and `.config`.
    fn event(self) -> (u32, u64) {
        let cache = |cache: u32, result: u32| {
            let (cache, read, result) =
                (u64::from(cache), u64::from(sys::bindings::PERF_COUNT_HW_CACHE_OP_READ), u64::from(result));
            (sys::bindings::PERF_TYPE_HW_CACHE, cache | read << 8 | result << 16)
        };
        let hardware = |id: u32| (sys::bindings::PERF_TYPE_HARDWARE, u64::from(id));
        use sys::bindings as b;
        match self {
            Counter::TaskClock => (b::PERF_TYPE_SOFTWARE, u64::from(b::PERF_COUNT_SW_TASK_CLOCK)),
            Counter::Cycles => hardware(b::PERF_COUNT_HW_CPU_CYCLES),
            Counter::Instructions => hardware(b::PERF_COUNT_HW_INSTRUCTIONS),
            Counter::Branches => hardware(b::PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
            Counter::BranchMisses => hardware(b::PERF_COUNT_HW_BRANCH_MISSES),
            Counter::CacheReferences => hardware(b::PERF_COUNT_HW_CACHE_REFERENCES),
            Counter::CacheMisses => hardware(b::PERF_COUNT_HW_CACHE_MISSES),
            Counter::LlcLoads => cache(b::PERF_COUNT_HW_CACHE_LL, b::PERF_COUNT_HW_CACHE_RESULT_ACCESS),
            Counter::LlcLoadMisses => cache(b::PERF_COUNT_HW_CACHE_LL, b::PERF_COUNT_HW_CACHE_RESULT_MISS),
            Counter::L1dLoads => cache(b::PERF_COUNT_HW_CACHE_L1D, b::PERF_COUNT_HW_CACHE_RESULT_ACCESS),
            Counter::L1dLoadMisses => cache(b::PERF_COUNT_HW_CACHE_L1D, b::PERF_COUNT_HW_CACHE_RESULT_MISS),
            Counter::StalledCyclesFrontend => hardware(b::PERF_COUNT_HW_STALLED_CYCLES_FRONTEND),
            Counter::StalledCyclesBackend => hardware(b::PERF_COUNT_HW_STALLED_CYCLES_BACKEND),
        }
    }

    /// The group the counter is opened in (see the module documentation).
    fn group(self) -> usize {
        match self {
            Counter::TaskClock => 0,
            Counter::Cycles | Counter::Instructions | Counter::Branches | Counter::BranchMisses => 1,
            Counter::CacheReferences | Counter::CacheMisses | Counter::LlcLoads | Counter::LlcLoadMisses => 2,
            _ => 3,
        }
    }
}

/// How `perf_event_open` is called: the real system call, or a stand-in in tests. Returns
/// the new descriptor or the `errno`.
pub type Opener = fn(&mut sys::bindings::perf_event_attr, group_fd: i32) -> Result<OwnedFd, i32>;

/// `perf_event_open(attr, pid 0 = this thread, cpu -1 = any, group_fd, CLOEXEC)`.
fn open_event(attr: &mut sys::bindings::perf_event_attr, group_fd: i32) -> Result<OwnedFd, i32> {
    // SAFETY: `attr` is a valid, initialised perf_event_attr of the size it states.
    let fd = unsafe { sys::perf_event_open(attr, 0, -1, group_fd, sys::bindings::PERF_FLAG_FD_CLOEXEC.into()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Why the kernel refused an event, as a sentence naming the `errno`.
fn refusal(counter: Counter, errno: i32) -> String {
    let (name, meaning) = match errno {
        libc::ENOENT => ("ENOENT", "the kernel offers no such event here"),
        libc::EOPNOTSUPP => ("EOPNOTSUPP", "the processor or hypervisor does not support it"),
        libc::ENODEV => ("ENODEV", "no performance monitoring unit is exposed"),
        libc::EACCES => ("EACCES", "not permitted (see /proc/sys/kernel/perf_event_paranoid)"),
        libc::EPERM => ("EPERM", "not permitted (see /proc/sys/kernel/perf_event_paranoid)"),
        libc::EINVAL => ("EINVAL", "the kernel rejected the event's attributes"),
        libc::ENOSPC => ("ENOSPC", "no hardware counter is free"),
        libc::EMFILE => ("EMFILE", "too many open files"),
        libc::ENOSYS => ("ENOSYS", "perf_event_open is not available"),
        _ => ("errno", "the kernel refused it"),
    };
    format!("not available on this machine: {meaning} ({name} {errno} from perf_event_open({}))", counter.kernel_name())
}

/// One opened group: the leader's descriptor, and each member's counter and kernel id.
#[derive(Debug)]
struct Group {
    leader: OwnedFd,
    members: Vec<(Counter, u64)>,
    /// Descriptors of the members after the leader (kept open while the group lives).
    _others: Vec<OwnedFd>,
}

/// The counters of the thread that opened them.
#[derive(Debug)]
pub struct ThreadCounters {
    /// The thread counted (a `ThreadId` is never reused, unlike a kernel thread id).
    thread: std::thread::ThreadId,
    groups: Vec<Group>,
    unavailable: BTreeMap<Counter, String>,
}

fn current_thread() -> std::thread::ThreadId {
    std::thread::current().id()
}

impl ThreadCounters {
    /// Opens every counter of [`Counter::ALL`] for the calling thread, counting from now.
    /// Never fails: what cannot be opened is recorded as unavailable, with the reason.
    pub fn open() -> ThreadCounters {
        ThreadCounters::open_with(&Counter::ALL, open_event)
    }

    /// Opens `counters` through `opener`.
    pub fn open_with(counters: &[Counter], opener: Opener) -> ThreadCounters {
        let mut groups = Vec::new();
        let mut unavailable = BTreeMap::new();
        for group in 0..4 {
            let mut opened: Option<Group> = None;
            for &counter in counters.iter().filter(|c| c.group() == group) {
                let (kind, config) = counter.event();
                let mut attr = sys::bindings::perf_event_attr {
                    type_: kind,
                    size: size_of::<sys::bindings::perf_event_attr>() as u32,
                    config,
                    read_format: u64::from(
                        sys::bindings::PERF_FORMAT_GROUP
                            | sys::bindings::PERF_FORMAT_TOTAL_TIME_ENABLED
                            | sys::bindings::PERF_FORMAT_TOTAL_TIME_RUNNING
                            | sys::bindings::PERF_FORMAT_ID,
                    ),
                    ..Default::default()
                };
                attr.set_exclude_kernel(1);
                attr.set_exclude_hv(1);
                let group_fd = opened.as_ref().map_or(-1, |g| g.leader.as_raw_fd());
                let fd = match opener(&mut attr, group_fd) {
                    Ok(fd) => fd,
                    Err(errno) => {
                        unavailable.insert(counter, refusal(counter, errno));
                        continue;
                    }
                };
                let mut id = 0u64;
                // SAFETY: `fd` is an open perf event; ID writes one u64 to `id`.
                let got = unsafe { sys::ioctls::ID(fd.as_raw_fd(), &mut id) };
                if got < 0 {
                    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                    unavailable.insert(counter, refusal(counter, errno));
                    continue;
                }
                match &mut opened {
                    None => opened = Some(Group { leader: fd, members: vec![(counter, id)], _others: Vec::new() }),
                    Some(g) => {
                        g.members.push((counter, id));
                        g._others.push(fd);
                    }
                }
            }
            groups.extend(opened);
        }
        ThreadCounters { thread: current_thread(), groups, unavailable }
    }

    /// Whether the calling thread is the one counted.
    pub fn is_current_thread(&self) -> bool {
        self.thread == current_thread()
    }

    /// The counters' totals since they were opened. A group that cannot be read (which
    /// the kernel does not do to an open group) reports its counters unavailable.
    pub fn read(&self) -> Reading {
        let mut reading = Reading { counts: BTreeMap::new(), unavailable: self.unavailable.clone() };
        for group in &self.groups {
            // nr, time_enabled, time_running, then (value, id) per member.
            let mut words = vec![0u64; 3 + 2 * group.members.len()];
            // SAFETY: the buffer holds `words.len() * 8` writable bytes.
            let n = unsafe {
                libc::read(group.leader.as_raw_fd(), words.as_mut_ptr().cast(), words.len() * size_of::<u64>())
            };
            if n < 0 || (n as usize) < 3 * size_of::<u64>() {
                let why = if n < 0 {
                    format!("errno {}", std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
                } else {
                    format!("{n} bytes read")
                };
                for &(counter, _) in &group.members {
                    reading.unavailable.insert(counter, format!("the group could not be read ({why})"));
                }
                continue;
            }
            let (enabled_ns, running_ns) = (words[1], words[2]);
            let values = &words[3..3 + 2 * (words[0] as usize).min(group.members.len())];
            for pair in values.chunks_exact(2) {
                if let Some(&(counter, _)) = group.members.iter().find(|(_, id)| *id == pair[1]) {
                    reading.counts.insert(counter, Count::new(pair[0], enabled_ns, running_ns));
                }
            }
        }
        reading
    }
}

/// One counter's raw total, its group's times, and the total scaled for multiplexing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Count {
    /// What the counter counted while it was on the PMU.
    pub raw: u64,
    /// Nanoseconds the counter was enabled, and of those, running on the PMU.
    pub enabled_ns: u64,
    pub running_ns: u64,
    /// `raw × enabled / running` of one thread's reading; a sum over threads adds each
    /// thread's scaled count (never rescales the summed times, which would mix the
    /// threads' multiplexing).
    scaled: u64,
}

impl Count {
    /// One thread's reading.
    pub fn new(raw: u64, enabled_ns: u64, running_ns: u64) -> Count {
        let scaled = match (running_ns, enabled_ns) {
            (0, _) => raw,
            (running, enabled) if running >= enabled => raw,
            (running, enabled) => (u128::from(raw) * u128::from(enabled) / u128::from(running)) as u64,
        };
        Count { raw, enabled_ns, running_ns, scaled }
    }

    /// The count scaled for multiplexing; `None` when the counter never ran while
    /// enabled (nothing to scale from).
    pub fn scaled(&self) -> Option<u64> {
        (self.running_ns > 0 || self.enabled_ns == 0).then_some(self.scaled)
    }

    /// The share of the enabled time the counter was running, 1.0 when not multiplexed.
    pub fn running_share(&self) -> f64 {
        if self.enabled_ns == 0 { 1.0 } else { self.running_ns as f64 / self.enabled_ns as f64 }
    }

    /// What was counted since `before`: the scaled figure is the difference of the two
    /// scaled totals (exact when the counter was never multiplexed).
    fn since(&self, before: &Count) -> Count {
        Count {
            raw: self.raw.saturating_sub(before.raw),
            enabled_ns: self.enabled_ns.saturating_sub(before.enabled_ns),
            running_ns: self.running_ns.saturating_sub(before.running_ns),
            scaled: self.scaled.saturating_sub(before.scaled),
        }
    }

    fn add(&mut self, other: &Count) {
        self.raw += other.raw;
        self.enabled_ns += other.enabled_ns;
        self.running_ns += other.running_ns;
        self.scaled += other.scaled;
    }
}

/// Counter totals (of one thread since its counters opened, or the difference of two
/// readings, or a sum over threads), and the counters that are not available, with why.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Reading {
    pub counts: BTreeMap<Counter, Count>,
    pub unavailable: BTreeMap<Counter, String>,
}

impl Reading {
    /// What was counted between `before` and this reading (both of one thread).
    pub fn since(&self, before: &Reading) -> Reading {
        let counts = self
            .counts
            .iter()
            .map(|(&counter, count)| (counter, before.counts.get(&counter).map_or(*count, |b| count.since(b))))
            .collect();
        Reading { counts, unavailable: self.unavailable.clone() }
    }

    /// Adds another thread's counts (a helper's, a worker's): a counter counts in the sum
    /// when any thread counted it; it is unavailable only when no thread could count it.
    pub fn add(&mut self, other: &Reading) {
        for (&counter, count) in &other.counts {
            self.counts.entry(counter).or_default().add(count);
            self.unavailable.remove(&counter);
        }
        for (&counter, why) in &other.unavailable {
            if !self.counts.contains_key(&counter) {
                self.unavailable.entry(counter).or_insert_with(|| why.clone());
            }
        }
    }

    /// `counter`'s total scaled for multiplexing; `None` when not available.
    pub fn value(&self, counter: Counter) -> Option<u64> {
        self.counts.get(&counter).and_then(Count::scaled)
    }

    /// Why `counter` has no value, when it has none.
    pub fn why_unavailable(&self, counter: Counter) -> Option<&str> {
        if self.value(counter).is_some() {
            return None;
        }
        Some(self.unavailable.get(&counter).map_or("it never ran on the PMU (running time 0)", String::as_str))
    }

    /// Instructions per cycle; `None` unless both were counted (in one group, so both
    /// over the same intervals).
    pub fn ipc(&self) -> Option<f64> {
        let (i, c) = (self.value(Counter::Instructions)?, self.value(Counter::Cycles)?);
        (c > 0).then(|| i as f64 / c as f64)
    }

    /// Each available counter scaled, by `perf stat` name; for a report's raw data.
    pub fn values(&self) -> BTreeMap<&'static str, u64> {
        Counter::ALL.iter().filter_map(|&c| Some((c.name(), self.value(c)?))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(n: u64) -> u64 {
        (0..n).fold(0u64, |a, i| std::hint::black_box(a.wrapping_mul(31).wrapping_add(i)))
    }

    #[test]
    fn task_clock_counts_the_threads_own_cpu_time() {
        let counters = ThreadCounters::open_with(&[Counter::TaskClock], open_event);
        let Some(before) = counters.read().counts.get(&Counter::TaskClock).copied() else {
            // A kernel without perf events at all: the reason must say so.
            let reading = counters.read();
            let why = reading.why_unavailable(Counter::TaskClock).unwrap();
            assert!(why.contains("PERF_COUNT_SW_TASK_CLOCK"), "{why}");
            return;
        };
        // task-clock and the thread CPU clock measure the same thing, apart from the
        // kernel time of the reads themselves. On a loaded machine one pair of readings
        // can still disagree (seen once: 58 ms against 29 ms beside a compiler using
        // both CPUs), so three tries are given; a counter that measures something else
        // misses all three.
        let mut before = before;
        let mut tries = Vec::new();
        for _ in 0..3 {
            let started = crate::stats::osstat::thread_cpu_time_ns();
            spin(20_000_000);
            let spent = crate::stats::osstat::thread_cpu_time_ns() - started;
            let after = counters.read();
            let delta = after.since(&Reading { counts: [(Counter::TaskClock, before)].into(), ..Default::default() });
            let clock = delta.value(Counter::TaskClock).unwrap();
            if clock as f64 > spent as f64 * 0.8 && (clock as f64) < spent as f64 * 1.25 + 2e6 {
                tries.clear();
                break;
            }
            tries.push((clock, spent));
            before = after.counts[&Counter::TaskClock];
        }
        assert!(tries.is_empty(), "task clock against thread CPU time, each try: {tries:?}");
        assert!(counters.is_current_thread());
    }

    #[test]
    fn every_counter_either_counts_or_says_why_not() {
        let counters = ThreadCounters::open();
        spin(1_000_000);
        let reading = counters.read();
        for counter in Counter::ALL {
            match reading.value(counter) {
                Some(_) => assert!(reading.why_unavailable(counter).is_none()),
                None => {
                    let why = reading.why_unavailable(counter).unwrap();
                    assert!(why.contains("not available") || why.contains("never ran"), "{counter:?}: {why}");
                }
            }
        }
    }

    fn refuse_hardware(attr: &mut sys::bindings::perf_event_attr, group_fd: i32) -> Result<OwnedFd, i32> {
        if attr.type_ == sys::bindings::PERF_TYPE_SOFTWARE { open_event(attr, group_fd) } else { Err(libc::ENOENT) }
    }

    #[test]
    fn a_machine_that_hides_hardware_events_reports_each_with_the_kernels_reason() {
        let counters = ThreadCounters::open_with(&Counter::ALL, refuse_hardware);
        let reading = counters.read();
        for counter in Counter::ALL.into_iter().filter(|&c| c != Counter::TaskClock) {
            assert_eq!(reading.value(counter), None);
            let why = reading.why_unavailable(counter).unwrap();
            assert!(why.starts_with("not available on this machine"), "{why}");
            assert!(why.contains("ENOENT") && why.contains(counter.kernel_name()), "{why}");
        }
        assert_eq!(reading.ipc(), None);
        assert!(!reading.values().contains_key("instructions"));
    }

    #[test]
    fn scaling_follows_enabled_and_running_time() {
        let full = Count::new(1000, 50, 50);
        assert_eq!(full.scaled(), Some(1000));
        let half = Count::new(1000, 100, 50);
        assert_eq!(half.scaled(), Some(2000));
        assert_eq!(half.running_share(), 0.5);
        let never = Count::new(0, 100, 0);
        assert_eq!(never.scaled(), None);
        // A sum adds each thread's scaled count: one that never ran adds nothing.
        let mut sum = Count::new(1000, 100, 100);
        sum.add(&never);
        assert_eq!(sum.scaled(), Some(1000));
        sum.add(&half);
        assert_eq!(sum.scaled(), Some(3000));
    }

    #[test]
    fn readings_subtract_and_sum_over_threads() {
        let reading = |raw, unavailable: &[Counter]| Reading {
            counts: [(Counter::Instructions, Count::new(raw, raw, raw))].into(),
            unavailable: unavailable.iter().map(|&c| (c, "no".to_owned())).collect(),
        };
        let mut own = reading(500, &[Counter::Cycles]).since(&reading(200, &[]));
        assert_eq!(own.value(Counter::Instructions), Some(300));
        let mut helper = reading(40, &[]);
        helper.counts.insert(Counter::Cycles, Count::new(80, 1, 1));
        own.add(&helper);
        assert_eq!(own.value(Counter::Instructions), Some(340));
        assert_eq!(own.value(Counter::Cycles), Some(80), "counted by the helper");
        assert!(own.why_unavailable(Counter::Cycles).is_none());
    }

    #[test]
    fn names_are_perfs() {
        assert_eq!(Counter::from_name("LLC-load-misses"), Some(Counter::LlcLoadMisses));
        assert_eq!(Counter::from_name("instructions"), Some(Counter::Instructions));
        assert_eq!(Counter::from_name("bogus"), None);
        assert_eq!(
            Counter::ALL.len(),
            Counter::ALL.iter().map(|c| c.name()).collect::<std::collections::HashSet<_>>().len()
        );
    }
}

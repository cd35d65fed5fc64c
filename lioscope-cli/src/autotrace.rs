//! SET AUTOTRACE: the statistics a statement spent, as SQL*Plus prints them after it.
//!
//! Figures are the deltas of the session's own counters around the statement, so they
//! include nothing of other sessions (over a connection, they include the query that
//! reads them: see `target`). CPU is the thread's CPU clock (the time model's
//! `DB CPU`), elapsed the wall clock (`DB time`). With `SET AUTOTRACE ... CPU` the
//! session's performance counters are on, and their deltas follow ([`hardware_report`]):
//! each counter or why the machine has none, and the derived figures with their
//! derivations.

use super::target::{Counters, Target};
use lioscope::Result;
use lioscope::stats::Stat;
use lioscope::stats::hwcounters::{Counter, Reading};

/// The statistics autotrace prints, in order.
const SHOWN: &[Stat] = &[
    Stat::DbBlockGets,
    Stat::ConsistentGets,
    Stat::PhysicalReads,
    Stat::PhysicalReadIoRequests,
    Stat::PhysicalReadMultiBlockRequests,
    Stat::SortsMemory,
    Stat::SortsRows,
    Stat::TableScanBlocksGotten,
    Stat::TableScanRowsGotten,
    Stat::TableFetchContinuedRow,
    Stat::BufferIsPinned,
    Stat::LogicalReads,
];

/// Read-consistency and locking statistics, printed after the others when the statement
/// moved them.
const SHOWN_WHEN_MOVED: &[Stat] = &[
    Stat::ConsistentChanges,
    Stat::CrBlocksCreated,
    Stat::CrUndoRecordsApplied,
    Stat::ConsistentGetsExamination,
    Stat::CleanoutsOnlyConsistentReadGets,
    Stat::CleanoutsAndRollbacksConsistentReadGets,
    Stat::ImmediateCrCleanouts,
    Stat::EnqueueWaits,
];

/// Counters of a session at one moment.
pub struct Snapshot(Counters);

impl Snapshot {
    pub fn take(session: &dyn Target) -> Result<Snapshot> {
        Ok(Snapshot(session.counters()?))
    }

    /// What the performance counters counted between this snapshot and `now`; `None`
    /// when they were off at either end.
    pub fn hardware(&self, now: &Snapshot) -> Option<Reading> {
        Some(now.0.hardware.as_ref()?.since(self.0.hardware.as_ref()?))
    }

    /// How much `stat` grew between this snapshot and `now`.
    pub fn delta(&self, now: &Snapshot, stat: Stat) -> u64 {
        let at = |s: &Snapshot| s.0.stats.get(stat as usize).copied().unwrap_or(0);
        at(now).saturating_sub(at(self))
    }

    /// Microseconds of CPU (the time model's `DB CPU`) the session spent until `now`.
    pub fn cpu_us(&self, now: &Snapshot) -> u64 {
        now.0.cpu_us.saturating_sub(self.0.cpu_us)
    }

    /// Microseconds of elapsed time (the time model's `DB time`) until `now`.
    pub fn elapsed_us(&self, now: &Snapshot) -> u64 {
        now.0.elapsed_us.saturating_sub(self.0.elapsed_us)
    }

    /// The autotrace report from this snapshot to `now`. With `with_times` false the
    /// CPU and elapsed lines are left out (for output that must not vary between runs).
    pub fn report(&self, now: &Snapshot, rows_processed: u64, with_times: bool) -> String {
        let mut out = String::from("\nStatistics\n----------------------------------------------------------\n");
        for &stat in SHOWN {
            let label = match stat {
                Stat::PhysicalReadIoRequests => "physical read total IO requests (read calls)",
                other => other.name(),
            };
            out.push_str(&format!("{:>11}  {label}\n", self.delta(now, stat)));
        }
        for &stat in SHOWN_WHEN_MOVED {
            let delta = self.delta(now, stat);
            if delta > 0 {
                out.push_str(&format!("{delta:>11}  {}\n", stat.name()));
            }
        }
        out.push_str(&format!("{rows_processed:>11}  rows processed\n"));
        if with_times {
            out.push_str(&format!("{:>11.3}  CPU ms (thread CPU clock)\n", self.cpu_us(now) as f64 / 1000.0));
            out.push_str(&format!("{:>11.3}  elapsed ms\n", self.elapsed_us(now) as f64 / 1000.0));
            if let Some(hardware) = self.hardware(now) {
                let logical_reads = self.delta(now, Stat::LogicalReads);
                out.push_str(&hardware_report(&hardware, rows_processed, logical_reads));
            }
        }
        out
    }
}

/// The performance counters' section of a report: every counter's figure or why it has
/// none, the multiplexing scale where there was one, and the derived figures, each
/// saying how it was derived.
pub fn hardware_report(hardware: &Reading, rows: u64, logical_reads: u64) -> String {
    let mut out = String::from(
        "\nPerformance counters (perf_event_open, user space; the session's thread and its helpers)\n\
         ----------------------------------------------------------\n",
    );
    for counter in Counter::ALL {
        match (hardware.value(counter), hardware.counts.get(&counter)) {
            (Some(value), Some(count)) => {
                let scaled = if count.running_share() < 1.0 {
                    format!("  (scaled: counted {:.1}% of the time)", 100.0 * count.running_share())
                } else {
                    String::new()
                };
                let value = if counter == Counter::TaskClock {
                    format!("{:>15.3}  task-clock ms", value as f64 / 1e6)
                } else {
                    format!("{value:>15}  {}", counter.name())
                };
                out.push_str(&format!("{value}{scaled}\n"));
            }
            _ => out.push_str(&format!(
                "{:>15}  {}: {}\n",
                "n/a",
                counter.name(),
                hardware.why_unavailable(counter).unwrap_or("not counted")
            )),
        }
    }
    let per_row = |counter: Counter| Some(hardware.value(counter)? as f64 / (rows > 0).then_some(rows)? as f64);
    let shown = |v: Option<f64>| v.map_or_else(|| format!("{:>15}", "n/a"), |v| format!("{v:>15.3}"));
    out.push_str(&format!("{}  IPC (instructions / cycles)\n", shown(hardware.ipc())));
    out.push_str(&format!("{}  CPI (cycles / instructions)\n", shown(hardware.ipc().map(|ipc| 1.0 / ipc))));
    out.push_str(&format!(
        "{}  instructions per row (instructions / rows processed)\n",
        shown(per_row(Counter::Instructions))
    ));
    out.push_str(&format!("{}  cycles per row (cycles / rows processed)\n", shown(per_row(Counter::Cycles))));
    let lio_per_row = (rows > 0).then(|| logical_reads as f64 / rows as f64);
    out.push_str(&format!("{}  logical reads per row (session logical reads / rows processed)\n", shown(lio_per_row)));
    out
}

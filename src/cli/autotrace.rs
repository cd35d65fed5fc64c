//! SET AUTOTRACE: the statistics a statement spent, as SQL*Plus prints them after it.
//!
//! Figures are the deltas of the session's own counters around the statement, so they
//! include nothing of other sessions. CPU is the thread's CPU clock (the time model's
//! `DB CPU`), elapsed the wall clock (`DB time`).

use crate::db::Session;
use crate::stats::{Stat, TimeModel};

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
pub struct Snapshot {
    counters: Vec<u64>,
    cpu_us: u64,
    elapsed_us: u64,
}

impl Snapshot {
    pub fn take(session: &Session) -> Snapshot {
        let stats = session.stats();
        Snapshot {
            counters: stats.snapshot(),
            cpu_us: stats.time(TimeModel::DbCpu),
            elapsed_us: stats.time(TimeModel::DbTime),
        }
    }

    /// How much `stat` grew since this snapshot.
    pub fn delta(&self, session: &Session, stat: Stat) -> u64 {
        session.stats().get(stat) - self.counters[stat as usize]
    }

    /// Microseconds of CPU (the time model's `DB CPU`) the session spent since this snapshot.
    pub fn cpu_us(&self, session: &Session) -> u64 {
        session.stats().time(TimeModel::DbCpu) - self.cpu_us
    }

    /// Microseconds of elapsed time (the time model's `DB time`) since this snapshot.
    pub fn elapsed_us(&self, session: &Session) -> u64 {
        session.stats().time(TimeModel::DbTime) - self.elapsed_us
    }

    /// The autotrace report since this snapshot. With `with_times` false the CPU and
    /// elapsed lines are left out (for output that must not vary between runs).
    pub fn report(&self, session: &Session, rows_processed: u64, with_times: bool) -> String {
        let mut out = String::from("\nStatistics\n----------------------------------------------------------\n");
        for &stat in SHOWN {
            let label = match stat {
                Stat::PhysicalReadIoRequests => "physical read total IO requests (read calls)",
                other => other.name(),
            };
            out.push_str(&format!("{:>11}  {label}\n", self.delta(session, stat)));
        }
        for &stat in SHOWN_WHEN_MOVED {
            let delta = self.delta(session, stat);
            if delta > 0 {
                out.push_str(&format!("{delta:>11}  {}\n", stat.name()));
            }
        }
        out.push_str(&format!("{rows_processed:>11}  rows processed\n"));
        if with_times {
            out.push_str(&format!("{:>11.3}  CPU ms (thread CPU clock)\n", self.cpu_us(session) as f64 / 1000.0));
            out.push_str(&format!("{:>11.3}  elapsed ms\n", self.elapsed_us(session) as f64 / 1000.0));
        }
        out
    }
}

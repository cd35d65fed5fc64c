//! Work areas: what one execution of a memory-bound operation (a hash join's table, a
//! sort) did with its memory and temporary space, and the totals per plan line that
//! `v$sql_workarea` shows.
//!
//! An execution is *optimal* when its input fit the memory it was given, *one-pass* when
//! it spilled and read its spilled input back once, *multi-pass* when it had to read some
//! of it more than once. `workarea executions - optimal | onepass | multipass` count them
//! per session.
//!
//! Invariants: a line's totals only grow, its three kinds of executions add up to its
//! executions, and its `last_*` figures are those of its latest execution.

use super::{SessionStats, Stat};

/// What one execution of one work area did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkareaRun {
    /// Oracle's name for the operation: `HASH-JOIN`, `SORT (v2)`.
    pub operation_type: &'static str,
    /// `AUTO` (sized from `pga_aggregate_target`) or `MANUAL` (`hash_area_size`).
    pub policy: &'static str,
    /// The memory it was allowed.
    pub limit: u64,
    /// Memory that would have kept its whole input: what an optimal execution needs.
    pub estimated_optimal_size: u64,
    /// Memory a one-pass execution needs: the largest spilled partition and the write
    /// buffers. Equal to the optimal size when nothing spilled.
    pub estimated_onepass_size: u64,
    /// The most memory it held at once.
    pub memory_used: u64,
    /// 0 when optimal; else the most times any spilled input was read back.
    pub passes: u32,
    /// Bytes it wrote to temporary space.
    pub tempseg_size: u64,
    pub active_time_us: u64,
}

impl WorkareaRun {
    /// What `LAST_EXECUTION` calls it: `OPTIMAL`, `1 PASS` or `n PASSES`.
    pub fn execution_kind(&self) -> String {
        match self.passes {
            0 => "OPTIMAL".into(),
            1 => "1 PASS".into(),
            n => format!("{n} PASSES"),
        }
    }

    /// Counts the execution in the session's `workarea executions - ...` statistic.
    pub fn count(&self, stats: &SessionStats) {
        let stat = match self.passes {
            0 => Stat::WorkareaExecutionsOptimal,
            1 => Stat::WorkareaExecutionsOnepass,
            _ => Stat::WorkareaExecutionsMultipass,
        };
        stats.add(stat, 1);
    }
}

/// One work area of a statement (one plan line), over its executions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkareaTotals {
    pub operation_id: u32,
    pub last: WorkareaRun,
    pub total_executions: u64,
    pub optimal_executions: u64,
    pub onepass_executions: u64,
    pub multipasses_executions: u64,
    pub total_active_time_us: u64,
    /// The most temporary space one execution took (0 when none spilled).
    pub max_tempseg_size: u64,
}

impl WorkareaTotals {
    pub fn new(operation_id: u32, run: &WorkareaRun) -> WorkareaTotals {
        let mut totals = WorkareaTotals {
            operation_id,
            last: *run,
            total_executions: 0,
            optimal_executions: 0,
            onepass_executions: 0,
            multipasses_executions: 0,
            total_active_time_us: 0,
            max_tempseg_size: 0,
        };
        totals.add(run);
        totals
    }

    /// Adds one execution.
    pub fn add(&mut self, run: &WorkareaRun) {
        self.last = *run;
        self.total_executions += 1;
        match run.passes {
            0 => self.optimal_executions += 1,
            1 => self.onepass_executions += 1,
            _ => self.multipasses_executions += 1,
        }
        self.total_active_time_us += run.active_time_us;
        self.max_tempseg_size = self.max_tempseg_size.max(run.tempseg_size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_are_told_apart_by_their_passes() {
        let run = |passes, temp| WorkareaRun { passes, tempseg_size: temp, ..Default::default() };
        let mut totals = WorkareaTotals::new(3, &run(0, 0));
        totals.add(&run(1, 500));
        totals.add(&run(4, 200));
        assert_eq!(
            (
                totals.total_executions,
                totals.optimal_executions,
                totals.onepass_executions,
                totals.multipasses_executions
            ),
            (3, 1, 1, 1)
        );
        assert_eq!(totals.max_tempseg_size, 500);
        assert_eq!(totals.last.tempseg_size, 200);
        assert_eq!(run(0, 0).execution_kind(), "OPTIMAL");
        assert_eq!(run(1, 1).execution_kind(), "1 PASS");
        assert_eq!(run(4, 1).execution_kind(), "4 PASSES");
        let stats = SessionStats::default();
        run(4, 1).count(&stats);
        assert_eq!(stats.get(Stat::WorkareaExecutionsMultipass), 1);
    }
}

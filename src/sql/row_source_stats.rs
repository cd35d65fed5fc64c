//! Row-source statistics: a query run with a probe after each plan line, and the figures
//! tkprof prints for each row source: actual rows, `cr=` (consistent gets), `pr=`
//! (physical reads), `pw=` (physical writes) and `time=` (microseconds), each inclusive
//! of the line's children, as tkprof shows them.
//!
//! Rows come from the probes ([`crate::exec::probe`]). A full scan hands rows on a block
//! at a time, so under a COUNT STOPKEY its line counts the rows of the blocks it read,
//! where Oracle's row-at-a-time scan would count only the rows the stopkey took. Gets, reads and writes are done by
//! the source alone (the stages above it work on rows in memory), so every line from the
//! source up shows the statement's totals, except a row source inside the source (the
//! index scan under a table access by rowid), which counts its own. Time of a line is the
//! statement's time less what the probe above it measured downstream.
//!
//! Gathered when the session's `statistics_level` is ALL, when the query carries the
//! GATHER_PLAN_STATISTICS hint, or for SET AUTOTRACE and EXPLAIN ANALYZE.

use super::plan::{Estimate, PlanNode, Planned, RowsAt};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::pipeline::{insert_probes, probe_at};
use crate::stats::Stat;
use crate::types::Value;
use std::time::Instant;

/// What one row source did.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSourceLine {
    /// Depth in the plan tree (0 for the statement).
    pub depth: usize,
    pub operation: String,
    pub name: String,
    pub rows: u64,
    pub consistent_gets: u64,
    pub physical_reads: u64,
    pub physical_writes: u64,
    pub time_us: u64,
    pub estimate: Option<Estimate>,
}

/// The row-source statistics of one execution, top of the tree first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanStatistics {
    pub lines: Vec<RowSourceLine>,
}

/// Runs a planned query with probes and returns its rows and row-source statistics.
pub fn run_with_statistics(
    planned: Planned<'_>,
    ctx: &mut ExecContext<'_>,
) -> Result<(Vec<Vec<Value>>, PlanStatistics)> {
    let Planned { source, mut stages, tree, .. } = planned;
    // From the root down: the order the figures are printed in.
    let order = tree.pre_order();
    let exit = |id| match tree.node(id).rows_at {
        RowsAt::Stage(n) => Some(n),
        RowsAt::Result | RowsAt::InsideSource => None,
    };
    let positions: Vec<usize> = order.iter().filter_map(|&(id, _)| exit(id)).collect();
    let probe_of = insert_probes(&mut stages, &positions);
    let stats = ctx.access.stats;
    let before = [Stat::ConsistentGets, Stat::PhysicalReads, Stat::PhysicalWrites].map(|s| stats.get(s));
    let started = Instant::now();
    let rows = crate::exec::run::run_pipeline_in_place(&source, &mut stages, ctx)?;
    let total_ns = started.elapsed().as_nanos() as u64;
    let after = [Stat::ConsistentGets, Stat::PhysicalReads, Stat::PhysicalWrites].map(|s| stats.get(s));
    let io = [after[0] - before[0], after[1] - before[1], after[2] - before[2]];
    let inner = source.inner_line_figures();
    let mut probes = probe_of.iter();
    let mut out = PlanStatistics::default();
    for &(id, depth) in &order {
        let node = tree.node(id);
        out.lines.push(match (node.rows_at, inner) {
            (RowsAt::Result, _) => row_source(node, depth, rows.len() as u64, io, total_ns),
            // The index scan under a table access by rowid: the source measured it.
            (RowsAt::InsideSource, Some(f)) => {
                row_source(node, depth, f.entries, [f.consistent_gets, f.physical_reads, 0], f.time_ns)
            }
            (RowsAt::InsideSource, None) => row_source(node, depth, 0, io, total_ns),
            (RowsAt::Stage(_), _) => {
                let p = probe_at(&stages, *probes.next().expect("one probe a node that leaves at a stage"));
                row_source(node, depth, p.rows, io, total_ns.saturating_sub(p.downstream_ns))
            }
        });
    }
    Ok((rows, out))
}

fn row_source(node: &PlanNode, depth: usize, rows: u64, io: [u64; 3], ns: u64) -> RowSourceLine {
    RowSourceLine {
        depth,
        operation: node.operation.name().to_owned(),
        name: node.object.clone(),
        rows,
        consistent_gets: io[0],
        physical_reads: io[1],
        physical_writes: io[2],
        time_us: ns / 1000,
        estimate: node.estimate,
    }
}

impl PlanStatistics {
    /// The lines as tkprof prints its row source operations; `with_times` false leaves
    /// out `time=` (for output that must not vary between runs).
    pub fn format(&self, with_times: bool) -> Vec<String> {
        let mut out = vec![
            "      Rows  Row Source Operation".to_owned(),
            "----------  ---------------------------------------------------".to_owned(),
        ];
        for l in &self.lines {
            let name = if l.name.is_empty() { String::new() } else { format!(" {}", l.name) };
            let time = if with_times { format!(" time={} us", l.time_us) } else { String::new() };
            let estimate = l.estimate.map_or_else(String::new, |e| {
                format!(" cost={:.0} card={:.0}", e.cost.ceil(), e.rows.round().max(1.0))
            });
            out.push(format!(
                "{:>10}  {}{}{name} (cr={} pr={} pw={}{time}{estimate})",
                l.rows,
                " ".repeat(l.depth),
                l.operation,
                l.consistent_gets,
                l.physical_reads,
                l.physical_writes,
            ));
        }
        out
    }
}

//! Row-source statistics: a query run with a probe after each plan line, and the figures
//! tkprof prints for each row source: actual rows, `cr=` (consistent gets), `pr=`
//! (physical reads), `pw=` (physical writes) and `time=` (microseconds), each inclusive
//! of the line's children, as tkprof shows them; and for a hash join what its work area
//! did: the most memory it held (`mem=`), the temporary space it wrote (`tmp=`) and how
//! it ran (OPTIMAL, 1 PASS, n PASSES), as Used-Mem and Used-Tmp in Oracle's ALLSTATS.
//!
//! Rows come from the probes ([`crate::exec::probe`]). A full scan hands rows on a block
//! at a time, so under a COUNT STOPKEY its line counts the rows of the blocks it read,
//! where Oracle's row-at-a-time scan would count only the rows the stopkey took. Gets, reads and writes are done by
//! the source alone (the stages above it work on rows in memory), so every line from the
//! source up shows the statement's totals, except a row source inside the source (the
//! index scan under a table access by rowid), which counts its own. Time of a line is the
//! statement's time less what the probe above it measured downstream.
//!
//! A join's inputs run inside the join, their rows pushed on as they come: the figures of
//! an input's lines are its run's less what ran above it meanwhile (a nested loop's
//! inner side inside its outer input's run; the joined rows' pushes into the stages
//! above the join, which a join measures while these statistics are gathered,
//! `ExecContext::row_source_statistics`).
//!
//! Gathered when the session's `statistics_level` is ALL, when the query carries the
//! GATHER_PLAN_STATISTICS hint, or for SET AUTOTRACE and EXPLAIN ANALYZE.

use super::plan::{Estimate, NodeId, Operation, PlanNode, PlanTree, Planned, RowsAt};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::Source;
use crate::exec::join::{Join, JoinInput, JoinMethod, NestedInner};
use crate::exec::pipeline::{insert_probes, probe_at};
use crate::exec::query_block::{InitPlan, QueryBlock};
use crate::stats::Stat;
use crate::stats::workarea::WorkareaRun;
use crate::types::Value;
use std::collections::HashMap;
use std::time::Instant;

/// What one row source did.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSourceLine {
    /// Depth in the plan tree (0 for the statement).
    pub depth: usize,
    pub operation: String,
    pub name: String,
    pub rows: u64,
    /// How often the line ran: once, or once an outer row for a nested loop's inner side.
    pub starts: u64,
    pub consistent_gets: u64,
    pub physical_reads: u64,
    pub physical_writes: u64,
    pub time_us: u64,
    pub estimate: Option<Estimate>,
    /// What the line's work area did (a hash join's), when it has one.
    pub workarea: Option<WorkareaRun>,
}

/// The row-source statistics of one execution, top of the tree first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanStatistics {
    pub lines: Vec<RowSourceLine>,
}

/// Each join of the plan whose pipeline reads `source`, with the plan line id (its place
/// in the tree's pre-order, as EXPLAIN numbers it) and node of its line.
fn joins_of<'s>(tree: &PlanTree, source: &'s Source) -> Vec<(usize, NodeId, &'s Join)> {
    if !matches!(source, Source::Join(_)) {
        return Vec::new();
    }
    let order = tree.pre_order();
    let reader = order
        .iter()
        .map(|&(id, _)| id)
        .find(|&id| tree.node(id).operation.is_join() && tree.node(id).rows_at != RowsAt::InsideSource);
    let mut out = Vec::new();
    if let (Source::Join(join), Some(reader)) = (source, reader) {
        let mut nodes = Vec::new();
        each_join(tree, reader, join, &mut nodes);
        for (node, join) in nodes {
            let line = order.iter().position(|&(id, _)| id == node).expect("a join's node is in its tree");
            out.push((line, node, join));
        }
    }
    out
}

/// Join `join` at `node`, then the joins of its inputs, into `out`.
fn each_join<'s>(tree: &PlanTree, node: NodeId, join: &'s Join, out: &mut Vec<(NodeId, &'s Join)>) {
    out.push((node, join));
    let Some(inputs) = input_lines(tree, node, join) else { return };
    for (input, line) in inputs {
        if let Source::Join(inner) = &input.source {
            each_join(tree, below_sort(tree, line), inner, out);
        }
    }
}

/// The line of each input of join `join` at `node`: its top line (a SORT JOIN or BUFFER
/// SORT over the input's own line, when it has one).
fn input_lines<'j>(tree: &PlanTree, node: NodeId, join: &'j Join) -> Option<[(&'j JoinInput, NodeId); 2]> {
    let [first, second] = tree.node(node).children[..] else { return None };
    let (left, right) = match (&join.method, tree.node(node).operation) {
        (JoinMethod::Hash { build_right: true }, op) if op != Operation::MergeJoinCartesian => (second, first),
        _ => (first, second),
    };
    Some([(&join.left, left), (&join.right, right)])
}

/// `line`'s child when `line` is a SORT JOIN, a BUFFER SORT or a JOIN FILTER line (each
/// the line of the input below it, as far as the input's figures go), else `line`.
fn below_sort(tree: &PlanTree, line: NodeId) -> NodeId {
    if matches!(
        tree.node(line).operation,
        Operation::SortJoin | Operation::BufferSort | Operation::JoinFilterCreate | Operation::JoinFilterUse
    ) {
        tree.node(line).children[0]
    } else {
        line
    }
}

/// What the work areas of the plan that read `source` did in its last run, by plan line
/// id.
pub(crate) fn workareas(tree: &PlanTree, source: &Source) -> Vec<(u32, WorkareaRun)> {
    let nodes = workarea_nodes(tree, &joins_of(tree, source));
    if nodes.is_empty() {
        // Most plans have none: no walk of the tree for their line numbers.
        return Vec::new();
    }
    let order = tree.pre_order();
    nodes
        .into_iter()
        .map(|(node, run)| (order.iter().position(|&(id, _)| id == node).expect("in its tree") as u32, run))
        .collect()
}

/// The node of each work area of `joins`, with what it did: a hash join's own line; a
/// MERGE JOIN CARTESIAN's BUFFER SORT (whose rows the work area holds, `BUFFER` in
/// `v$sql_workarea`).
fn workarea_nodes(tree: &PlanTree, joins: &[(usize, NodeId, &Join)]) -> Vec<(NodeId, WorkareaRun)> {
    let mut out = Vec::new();
    for &(_, node, join) in joins {
        let Some(mut run) = join.workarea.get() else { continue };
        let mut at = node;
        if tree.node(node).operation == Operation::MergeJoinCartesian
            && let Some(&buffer) = tree.node(node).children.get(1)
        {
            at = buffer;
            run.operation_type = "BUFFER";
        }
        out.push((at, run));
    }
    out
}

/// Runs a planned query with probes and returns its rows and row-source statistics.
pub fn run_with_statistics(
    planned: Planned<'_>,
    ctx: &mut ExecContext<'_>,
) -> Result<(Vec<Vec<Value>>, PlanStatistics)> {
    let Planned { source, mut stages, tree, init, .. } = planned;
    // From the root down: the order the figures are printed in.
    let order = tree.pre_order();
    let exit = |id| match tree.node(id).rows_at {
        RowsAt::Stage(n) => Some(n),
        RowsAt::Result | RowsAt::InsideSource => None,
    };
    let positions: Vec<usize> = order.iter().filter_map(|&(id, _)| exit(id)).collect();
    let probe_of = insert_probes(&mut stages, &positions);
    ctx.row_source_statistics = true;
    let stats = ctx.access.stats;
    let before = [Stat::ConsistentGets, Stat::PhysicalReads, Stat::PhysicalWrites].map(|s| stats.get(s));
    source.clear_block_figures();
    init.iter().for_each(|p| p.block.clear_figures());
    let started = Instant::now();
    crate::exec::query_block::run_init_plans(&init, ctx)?;
    let rows = crate::exec::run::run_pipeline_in_place(&source, &mut stages, ctx)?;
    let total_ns = started.elapsed().as_nanos() as u64;
    let after = [Stat::ConsistentGets, Stat::PhysicalReads, Stat::PhysicalWrites].map(|s| stats.get(s));
    let io = [after[0] - before[0], after[1] - before[1], after[2] - before[2]];
    let inner = source.inner_line_figures();
    let mut joined = HashMap::new();
    let joins = joins_of(&tree, &source);
    if let Some(&(_, reader, join)) = joins.first() {
        join_lines(&tree, reader, join, &mut joined);
    }
    if let Some(reader) = reading_node(&tree) {
        source_lines(&tree, reader, &source, None, &mut joined);
    }
    if let Some(top) = tree.root().and_then(|r| tree.node(r).children.first().copied()) {
        init_lines(&tree, top, &init, &mut joined);
    }
    let workareas: HashMap<NodeId, WorkareaRun> = workarea_nodes(&tree, &joins).into_iter().collect();
    let mut probes = probe_of.iter();
    let mut out = PlanStatistics::default();
    for &(id, depth) in &order {
        let node = tree.node(id);
        let workarea = workareas.get(&id).copied();
        if let Some(line) = joined.get(&id) {
            out.lines.push(RowSourceLine { depth, workarea, ..row_source(node, depth, 0, [0; 3], 0) }.with(line));
            continue;
        }
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
        out.lines.last_mut().expect("just pushed").workarea = workarea;
    }
    Ok((rows, out))
}

/// The figures of a line run inside a join.
#[derive(Debug, Clone, Copy, Default)]
struct JoinedLine {
    starts: u64,
    rows: u64,
    consistent_gets: u64,
    physical_reads: u64,
    time_ns: u64,
}

impl RowSourceLine {
    fn with(self, f: &JoinedLine) -> RowSourceLine {
        RowSourceLine {
            starts: f.starts,
            rows: f.rows,
            consistent_gets: f.consistent_gets,
            physical_reads: f.physical_reads,
            time_us: f.time_ns / 1000,
            ..self
        }
    }
}

/// The figures of the lines under join node `node` (running `join`), into `out`: each
/// input's top line (and a SORT JOIN, BUFFER SORT or JOIN FILTER line over it) shows
/// what the input did (a JOIN FILTER USE line the probe rows its filter passed),
/// a nested loop's index probe its index line, and a join input recurses.
fn join_lines(tree: &PlanTree, node: NodeId, join: &Join, out: &mut HashMap<NodeId, JoinedLine>) {
    let Some(inputs) = input_lines(tree, node, join) else { return };
    // A nested loop runs its inner side inside its outer input's run: the outer line's
    // own figures are its run's less the inner side's.
    let nested = matches!(join.method, JoinMethod::NestedLoops(_));
    for (input, mut line) in inputs {
        let mut f = input.figures.get();
        if nested && std::ptr::eq(input, &join.left) {
            // Less the inner side's runs, and what the joined rows did above the join.
            f = f.less(join.right.figures.get()).less(join.emitted.get());
        } else if let JoinMethod::Hash { build_right } = join.method
            && std::ptr::eq(input, if build_right { &join.left } else { &join.right })
        {
            // The probe input's run pushed the joined rows above the join.
            f = f.less(join.emitted.get());
        }
        let figures = JoinedLine {
            starts: f.starts,
            rows: f.rows,
            consistent_gets: f.consistent_gets,
            physical_reads: f.physical_reads,
            time_ns: f.time_ns,
        };
        if below_sort(tree, line) != line {
            out.insert(line, figures);
            line = below_sort(tree, line);
        }
        out.insert(line, figures);
        let below = tree.node(line).children.first().copied();
        match (&input.source, &join.method) {
            (_, JoinMethod::NestedLoops(inner))
                if std::ptr::eq(input, &join.right) && matches!(**inner, NestedInner::Index { .. }) =>
            {
                let p = join.probe_figures.get();
                if let Some(index) = below {
                    let line = JoinedLine {
                        starts: f.starts,
                        rows: p.entries,
                        consistent_gets: p.consistent_gets,
                        physical_reads: p.physical_reads,
                        time_ns: p.time_ns,
                    };
                    out.insert(index, line);
                }
            }
            (Source::Join(inner), _) => join_lines(tree, line, inner, out),
            (Source::View(_) | Source::SetOperation(_) | Source::SubqueryFilter(_) | Source::TempTable(_), _) => {
                source_lines(tree, line, &input.source, Some(figures), out)
            }
            (Source::Index(access), _) => {
                if let Some(index) = below {
                    out.insert(index, JoinedLine::of_index(f.starts, access.totals.get()));
                }
            }
            _ => {}
        }
    }
}

/// The node reading the rows of the plan's pipeline: the lowest on the chain of first
/// children from the root that leaves at a stage.
fn reading_node(tree: &PlanTree) -> Option<NodeId> {
    let mut at = tree.root()?;
    let mut reader = at;
    while let Some(&child) = tree.node(at).children.first() {
        if tree.node(child).rows_at == RowsAt::InsideSource {
            break;
        }
        (reader, at) = (child, child);
    }
    Some(reader)
}

/// The figures of the lines inside a VIEW line, a set operation's line or a TEMP TABLE
/// TRANSFORMATION line at `node` reading `source`, into `out`.
/// `own`: what a view's block did itself, where its run also ran work above it (a nested
/// loop's inner side, run for each row the view gives): its lines show that, not the run.
fn source_lines(
    tree: &PlanTree,
    node: NodeId,
    source: &Source,
    own: Option<JoinedLine>,
    out: &mut HashMap<NodeId, JoinedLine>,
) {
    match source {
        Source::View(block) => {
            if let Some(&top) = tree.node(node).children.first() {
                block_lines(tree, top, block, own, out);
            }
        }
        Source::SubqueryFilter(filter) => {
            let children = &tree.node(node).children;
            if let Some(&input) = children.first() {
                block_lines(tree, input, &filter.input, None, out);
            }
            for (plan, &top) in filter.subplans.iter().zip(children.iter().skip(1)) {
                out.insert(top, JoinedLine::from(plan.block.figures.get()));
                block_lines(tree, top, &plan.block, None, out);
            }
        }
        Source::TempTable(temp) => {
            // The loads' lines first, the query's last.
            let children = &tree.node(node).children;
            let loads = children.len().saturating_sub(1);
            for (plan, &line) in temp.loads.iter().zip(&children[..loads]) {
                out.insert(line, JoinedLine::from(plan.block.figures.get()));
                if let Some(&top) = tree.node(line).children.first() {
                    block_lines(tree, top, &plan.block, None, out);
                }
            }
            if let Some(&top) = children.last() {
                block_lines(tree, top, &temp.body, None, out);
            }
        }
        Source::SetOperation(set) => {
            for (block, &top) in set.branches.iter().zip(&tree.node(node).children) {
                let f = block.figures.get();
                out.insert(top, JoinedLine { starts: f.starts, rows: f.rows, ..JoinedLine::from(f) });
                block_lines(tree, top, block, None, out);
            }
        }
        _ => {}
    }
}

/// The figures of the lines of query block `block`, whose top line is `top`: each line
/// leaving at a stage its rows (its probe's), every line the block's starts, gets,
/// reads and time (a block's lines run inside its one source), and the lines inside the
/// block's own source as that source's kind measures them.
/// `own`, where given, is what the block did itself (see [`source_lines`]).
fn block_lines(
    tree: &PlanTree,
    top: NodeId,
    block: &QueryBlock,
    own: Option<JoinedLine>,
    out: &mut HashMap<NodeId, JoinedLine>,
) {
    let f = own.unwrap_or_else(|| JoinedLine::from(block.figures.get()));
    let rows = block.line_rows.borrow();
    let order = tree.pre_order_from(top);
    for &id in &order {
        out.insert(id, JoinedLine { rows: 0, ..f });
    }
    for (&line, &n) in block.probe_lines.iter().zip(rows.iter()) {
        if let Some(&id) = order.get(line) {
            out.insert(id, JoinedLine { rows: n, ..f });
        }
    }
    // The block's reading line: the last of its probed lines on the chain of first
    // children from its top.
    let mut reader = top;
    let mut at = top;
    while let Some(&child) = tree.node(at).children.first() {
        let probed = order.iter().position(|&id| id == child).is_some_and(|p| block.probe_lines.contains(&p));
        if !probed {
            break;
        }
        (reader, at) = (child, child);
    }
    init_lines(tree, top, &block.init, out);
    match &block.source {
        Source::Join(join) => join_lines(tree, reader, join, out),
        Source::View(_) | Source::SetOperation(_) | Source::SubqueryFilter(_) | Source::TempTable(_) => {
            source_lines(tree, reader, &block.source, None, out)
        }
        Source::Index(access) => {
            if let Some(&index) = tree.node(reader).children.first() {
                out.insert(index, JoinedLine::of_index(f.starts, access.totals.get()));
            }
        }
        _ => {}
    }
}

/// The figures of the lines of the init plans `init`, whose top lines are the last
/// children of line `top`, into `out`.
fn init_lines(tree: &PlanTree, top: NodeId, init: &[InitPlan], out: &mut HashMap<NodeId, JoinedLine>) {
    let children = &tree.node(top).children;
    let Some(first) = children.len().checked_sub(init.len()) else { return };
    for (plan, &line) in init.iter().zip(&children[first..]) {
        out.insert(line, JoinedLine::from(plan.block.figures.get()));
        block_lines(tree, line, &plan.block, None, out);
    }
}

impl JoinedLine {
    /// The line of an index scan that ran `starts` times, doing `p` in all.
    fn of_index(starts: u64, p: crate::exec::index_source::IndexLineFigures) -> JoinedLine {
        JoinedLine {
            starts,
            rows: p.entries,
            consistent_gets: p.consistent_gets,
            physical_reads: p.physical_reads,
            time_ns: p.time_ns,
        }
    }
}

impl From<crate::exec::join::InputFigures> for JoinedLine {
    fn from(f: crate::exec::join::InputFigures) -> JoinedLine {
        JoinedLine {
            starts: f.starts,
            rows: f.rows,
            consistent_gets: f.consistent_gets,
            physical_reads: f.physical_reads,
            time_ns: f.time_ns,
        }
    }
}

fn row_source(node: &PlanNode, depth: usize, rows: u64, io: [u64; 3], ns: u64) -> RowSourceLine {
    RowSourceLine {
        depth,
        operation: node.operation.name().to_owned(),
        name: node.object.clone(),
        rows,
        starts: 1,
        consistent_gets: io[0],
        physical_reads: io[1],
        physical_writes: io[2],
        time_us: ns / 1000,
        estimate: node.estimate,
        workarea: None,
    }
}

impl PlanStatistics {
    /// What the lines' work areas did, by plan line id.
    pub(crate) fn workareas(&self) -> Vec<(u32, WorkareaRun)> {
        self.lines.iter().enumerate().filter_map(|(id, l)| Some((id as u32, l.workarea?))).collect()
    }

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
            let starts = if l.starts == 1 { String::new() } else { format!(" starts={}", l.starts) };
            let estimate = l.estimate.map_or_else(String::new, |e| {
                format!(" cost={:.0} card={:.0}", e.cost.ceil(), e.rows.round().max(1.0))
            });
            let workarea = l.workarea.map_or_else(String::new, |w| {
                let temp =
                    if w.tempseg_size > 0 { format!(" tmp={}K", w.tempseg_size.div_ceil(1024)) } else { String::new() };
                format!(" mem={}K{temp} {}", w.memory_used.div_ceil(1024), w.execution_kind())
            });
            out.push(format!(
                "{:>10}  {}{}{name} ({}cr={} pr={} pw={}{time}{estimate}{workarea})",
                l.rows,
                " ".repeat(l.depth),
                l.operation,
                starts.trim_start().to_owned() + if starts.is_empty() { "" } else { " " },
                l.consistent_gets,
                l.physical_reads,
                l.physical_writes,
            ));
        }
        out
    }
}

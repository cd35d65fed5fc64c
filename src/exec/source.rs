//! Row sources: where a pipeline's rows come from.
//!
//! - TABLE ACCESS FULL: a full scan of a table's segment, see [`super::table_scan`].
//! - TABLE ACCESS INMEMORY FULL: see [`super::inmemory_source`].
//! - FAST DUAL: the one row of DUAL, with no block read.
//! - CONNECT BY over DUAL: the row generator `LEVEL` 1..=n.
//! - COLLECTION ITERATOR: `generate_series(start, stop)`.
//! - FIXED TABLE: rows a `v$` view computed when the statement was planned.
//! - INDEX ... SCAN [+ TABLE ACCESS BY INDEX ROWID]: see [`super::index_source`].
//! - HASH JOIN, NESTED LOOPS, MERGE JOIN: see [`super::join`].
//! - VIEW, UNION-ALL, INTERSECTION HASH, MINUS HASH, and FILTER with correlated
//!   subqueries: see [`super::query_block`].
//! - TEMP TABLE TRANSFORMATION (WITH queries loaded, then the query reading them): see
//!   [`super::query_block`]; TABLE ACCESS FULL of one such load's rows, here.

use super::ExecContext;
use super::downstream::push_each;
use super::index_source::IndexAccess;
use super::pipeline::{Stage, push};
use crate::access::Flow;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::SubqueryAnswer;
use crate::types::{DataType, Datum, Value};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

pub enum Source {
    /// `columns_read`: one flag per table column, whether the plan reads it.
    TableScan {
        table: Arc<TableDef>,
        columns_read: Vec<bool>,
    },
    Dual,
    ConnectBy {
        rows: i64,
    },
    Series {
        start: i64,
        stop: i64,
    },
    Rows(Vec<Vec<Value>>),
    /// An index path, with or without table access by rowid.
    Index(Box<super::index_source::IndexAccess>),
    /// TABLE ACCESS INMEMORY FULL.
    InMemory(Box<crate::exec::inmemory_source::InMemoryAccess>),
    /// HASH JOIN, NESTED LOOPS or MERGE JOIN of two inputs.
    Join(Box<Join>),
    /// VIEW: a query read as a row source.
    View(Box<QueryBlock>),
    /// UNION-ALL, INTERSECTION HASH or MINUS HASH of query blocks.
    SetOperation(Box<SetOperation>),
    /// FILTER: the rows of a plan that meet a condition holding correlated subqueries,
    /// each run for the row's values.
    SubqueryFilter(Box<SubqueryFilter>),
    /// TEMP TABLE TRANSFORMATION: WITH queries' rows loaded, then the query reading them.
    TempTable(Box<TempTableTransformation>),
    /// The rows of a materialized WITH query, as its load left them in the statement's
    /// function context, in `slot` (TABLE ACCESS FULL of a `SYS_TEMP_` table).
    Materialized {
        slot: usize,
    },
}

impl Source {
    /// Whether running the source reads the table with data object id `object_id` (a
    /// statement that fills that table must then gather the rows before it writes).
    pub fn reads_table(&self, object_id: u32) -> bool {
        match self {
            Source::TableScan { table, .. } => table.object_id == object_id,
            Source::Index(access) => access.table.object_id == object_id,
            Source::InMemory(access) => access.table.object_id == object_id,
            Source::Join(join) => join.reads_table(object_id),
            Source::View(_) | Source::SetOperation(_) | Source::SubqueryFilter(_) | Source::TempTable(_) => {
                self.block_reads_table(object_id)
            }
            _ => false,
        }
    }

    /// Whether the source, or an input of a join in it, holds rows read when the
    /// statement was planned (a `v$` view's): such a plan must not run again.
    pub fn holds_planned_rows(&self) -> bool {
        match self {
            Source::Rows(_) => true,
            Source::Join(join) => join.left.source.holds_planned_rows() || join.right.source.holds_planned_rows(),
            Source::View(block) => block.holds_planned_rows(),
            Source::SetOperation(set) => set.branches.iter().any(QueryBlock::holds_planned_rows),
            Source::SubqueryFilter(filter) => {
                filter.input.holds_planned_rows() || filter.subplans.iter().any(|p| p.block.holds_planned_rows())
            }
            Source::TempTable(temp) => {
                temp.body.holds_planned_rows() || temp.loads.iter().any(|p| p.block.holds_planned_rows())
            }
            _ => false,
        }
    }

    /// What a row source inside this source did in its last run, if it has one: the
    /// index scan under a table access by rowid, the one row of DUAL under the row
    /// generator.
    pub fn inner_line_figures(&self) -> Option<super::index_source::IndexLineFigures> {
        match self {
            Source::Index(access) => Some(access.figures.get()),
            Source::ConnectBy { .. } => {
                Some(super::index_source::IndexLineFigures { entries: 1, ..Default::default() })
            }
            _ => None,
        }
    }

    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        match self {
            Source::TableScan { table, columns_read } => super::table_scan::run(table, columns_read, None, stages, ctx),
            Source::Index(access) => access.run(stages, ctx),
            Source::InMemory(access) => access.run(stages, ctx),
            Source::Join(join) => join.run(stages, ctx),
            Source::View(block) => block.run(stages, ctx),
            Source::SetOperation(set) => set.run(stages, ctx),
            Source::SubqueryFilter(filter) => filter.run(stages, ctx),
            Source::TempTable(temp) => temp.run(stages, ctx),
            Source::Materialized { slot } => read_materialized(*slot, stages, ctx),
            Source::Dual => push(stages, &[Datum::Str("X".into())] as &[Value], &mut ctx.functions).map(|_| ()),
            Source::ConnectBy { rows } => Self::numbers(1, *rows, stages, ctx),
            Source::Series { start, stop } => Self::numbers(*start, *stop, stages, ctx),
            Source::Rows(rows) => {
                push_each(rows, |row| push(stages, row.as_slice(), &mut ctx.functions))?;
                Ok(())
            }
        }
    }

    fn numbers(start: i64, stop: i64, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        if let [Stage::Project(project), Stage::Sink(sink)] = stages
            && project.takes_number_batches()
        {
            return project.push_numbers_to_sink(start, stop, sink, ctx);
        }
        // In runs, so that an interrupt stops a long series (a CONNECT BY LEVEL of
        // billions) between runs.
        const RUN: i64 = 1 << 16;
        let mut first = start;
        while first <= stop {
            ctx.access.stats.check_interrupt()?;
            let last = stop.min(first.saturating_add(RUN - 1));
            let f = &mut ctx.functions;
            if push_each(first..=last, |n| push(stages, [Datum::Int(n)].as_slice(), f))? == Flow::Stop
                || last == i64::MAX
            {
                break;
            }
            first = last + 1;
        }
        Ok(())
    }
}

// A join is a source whose inputs are sources: the types live here, beside the enum
// they recurse through; running a join is `super::join`'s.

/// Which rows of the two inputs a join keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// Pairs that join.
    Inner,
    /// Pairs that join, and the left input's rows that join none.
    Left,
    /// Pairs that join, and the right input's rows that join none.
    Right,
    /// Pairs that join, and the rows of either input that join none.
    Full,
    /// Each left row that joins some right row, once, with NULLs for the right input's
    /// columns (an unnested `EXISTS` or `IN`).
    Semi,
    /// Each left row that joins no right row, with NULLs for the right input's columns
    /// (an unnested `NOT EXISTS`).
    Anti,
}

impl JoinKind {
    /// Whether the left input's rows that join none are kept.
    pub fn keeps_left(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Full | JoinKind::Anti)
    }

    /// Whether the join gives the pairs that join (not so a semi or an anti join, which
    /// gives left rows alone, and needs only to know whether one right row joins).
    pub fn gives_pairs(self) -> bool {
        !matches!(self, JoinKind::Semi | JoinKind::Anti)
    }

    /// Whether the right input's rows that join none are kept.
    pub fn keeps_right(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }
}

/// How a join finds the pairs.
pub enum JoinMethod {
    /// A hash table on the keys of one input (the build input: the right one when
    /// `build_right`), probed with each row of the other.
    Hash { build_right: bool },
    /// The right input run again for each row of the left one.
    NestedLoops(Box<NestedInner>),
    /// Both inputs sorted on their keys and merged.
    Merge,
}

/// A nested loop's inner side.
pub enum NestedInner {
    /// The right input's own plan, run whole for each outer row.
    Rescan,
    /// An index probe of the right input's table: the index's leading columns equal to
    /// the outer row's `keys` (the key of each column as `types` encodes it); the rows
    /// found must also meet `filter`, the conjuncts on the right input's own columns.
    Index { access: Box<IndexAccess>, keys: Vec<Expr>, types: Vec<DataType>, filter: Option<Expr> },
}

/// What one input of a join did in the statement's last run: how often it ran (a nested
/// loop's inner input once an outer row), the rows it gave, and the gets, reads and time
/// of its runs (its children's included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputFigures {
    pub starts: u64,
    pub rows: u64,
    pub consistent_gets: u64,
    pub physical_reads: u64,
    pub time_ns: u64,
}

/// One input of a join: a plan of its own.
pub struct JoinInput {
    pub source: Source,
    /// What the input's rows must meet, on its own columns.
    pub filter: Option<Expr>,
    /// Columns the input gives the joined row.
    pub width: usize,
    /// Its leading columns the plan reads (the source locates these); the others are
    /// NULL in the joined row.
    pub read: usize,
    /// Which of the `read` columns the join and the plan above it use, when not all
    /// (those its filter alone reads are not): the others are NULL in the joined row,
    /// never decoded, and a hash join keeps only these of its build rows.
    pub used: Option<Vec<bool>>,
    /// What it did in the last run (row-source statistics).
    pub figures: Cell<InputFigures>,
}

impl JoinInput {
    /// An input reading `source` through `filter`, `width` columns of which the first
    /// `read` are read, all used.
    pub fn new(source: Source, filter: Option<Expr>, width: usize, read: usize) -> JoinInput {
        JoinInput { source, filter, width, read, used: None, figures: Cell::default() }
    }

    /// The input, of whose `read` columns only those `used` marks are used above it.
    pub fn using(mut self, used: &[bool]) -> JoinInput {
        let used: Vec<bool> = used.iter().copied().chain(std::iter::repeat(false)).take(self.read).collect();
        self.used = (!used.iter().all(|&u| u)).then_some(used);
        self
    }
}

/// A hash join's join filter (Oracle's `:BF0000`): a Bloom filter of the build input's
/// keys, checked on the probe input's rows in its scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinFilterSpec {
    /// Its number in the statement (`:BF0000` is 0).
    pub number: u32,
    /// The probe input's columns of the join keys, in the keys' order.
    pub probe_columns: Vec<usize>,
}

/// A join, ready to run.
pub struct Join {
    pub kind: JoinKind,
    pub method: JoinMethod,
    pub left: JoinInput,
    pub right: JoinInput,
    /// Key pairs: `left_keys[i]` over the left input's columns equals `right_keys[i]`
    /// over the right's.
    pub left_keys: Vec<Expr>,
    pub right_keys: Vec<Expr>,
    /// What a pair must also meet, over the joined row's columns.
    pub residual: Option<Expr>,
    /// What a nested loop's index probes did in the last run, all outer rows together
    /// (the index line under the inner table's access by rowid).
    pub probe_figures: Cell<super::index_source::IndexLineFigures>,
    /// What a hash join's work area did in the last run.
    pub workarea: Cell<Option<crate::stats::workarea::WorkareaRun>>,
    /// What pushing its rows into the stages above took while an input was running (a
    /// nested loop's outer input, a hash join's probe input), whose figures include it;
    /// measured only when row-source statistics are gathered.
    pub emitted: Cell<InputFigures>,
    /// A hash join's join filter: made from its build keys, applied in its probe input's
    /// scan (never set on a join that keeps the probe input's unmatched rows).
    pub join_filter: Option<JoinFilterSpec>,
    /// The order the joined row's columns leave in, when not their own: column `i` of
    /// a row pushed on is column `output[i]` of the joined row (the root join of a
    /// reordered FROM clause gives its columns back in the clause's order).
    pub output: Option<Vec<usize>>,
}

/// TABLE ACCESS FULL of a materialized WITH query's temporary table: pushes the rows
/// its load left in `slot` into `stages`.
fn read_materialized(slot: usize, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
    let answer = ctx.functions.subqueries.get(slot).cloned();
    let Some(SubqueryAnswer::Table(rows)) = answer.as_deref() else {
        return Err(Error::unsupported("a WITH query's temporary table read before it was loaded"));
    };
    push_each(rows, |row| push(stages, row.as_slice(), &mut ctx.functions))?;
    Ok(())
}

// A query block is a source whose plan is a source and stages of its own: the types live
// here too; running one is `super::query_block`'s.

/// A query's plan run as the row source of another.
pub struct QueryBlock {
    pub source: Source,
    pub(super) stages: BlockStages,
    /// The columns of its result rows.
    pub width: usize,
    /// Where the probes of row-source statistics go in its stages (a probe at `p` sees
    /// what leaves the first `p` stages), one per plan line inside the block that leaves
    /// at a stage, in the order of [`QueryBlock::line_rows`].
    pub(super) probe_positions: Vec<usize>,
    /// The plan line of each probe: its place in the pre-order of the block's own lines
    /// (the block's top line is 0).
    pub probe_lines: Vec<usize>,
    /// What it did in the statement's last run: its starts, rows, gets, reads and time.
    pub figures: Cell<InputFigures>,
    /// The rows that passed each probe position, all runs of the last execution together
    /// (gathered only with row-source statistics).
    pub line_rows: RefCell<Vec<u64>>,
    /// The subqueries its expressions read, run before each run of the block.
    pub init: Vec<InitPlan>,
    /// Which of its columns the plan reading it uses, when not all: the others reach it
    /// as NULL, never decoded (its source may not have read them).
    pub used: Option<Vec<bool>>,
}

/// TEMP TABLE TRANSFORMATION: the loads of the materialized WITH queries of a query,
/// run in order (a later one may read an earlier one's rows), then the query (`body`),
/// whose `Source::Materialized` lines read them.
pub struct TempTableTransformation {
    /// Each an init plan of kind [`InitKind::Table`].
    pub loads: Vec<InitPlan>,
    pub body: QueryBlock,
}

/// A subquery that reads nothing of the rows around it, run once when the plan holding
/// it starts; its answer goes into the statement's function context, in `slot`, for the
/// expressions that read it (`Expr::Subquery`).
pub struct InitPlan {
    pub block: QueryBlock,
    pub slot: usize,
    pub kind: InitKind,
}

/// What an init plan's answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitKind {
    /// Its one value (ORA-01427 when it gives more than one row).
    Scalar,
    /// Whether it gives a row (it stops at the first).
    Exists,
    /// Its distinct values (`IN`).
    Values,
    /// Its distinct rows (a multi-column `IN`).
    Rows,
    /// All its rows, in order (a materialized WITH query).
    Table,
}

/// A block's stages between its runs: never a sink (see the module's invariant).
pub struct BlockStages(RefCell<Vec<Stage<'static>>>);

// SAFETY: every kind of stage but a sink is `Send` (the check in `sql::cursor` proves
// it of each), and `BlockStages` never holds a sink: `BlockStages::new` is only given
// stages without one (`QueryBlock::new` checks) and a run takes the sink it added off
// before it puts the stages back.
unsafe impl Send for BlockStages {}

impl BlockStages {
    pub(super) fn new(stages: Vec<Stage<'static>>) -> BlockStages {
        BlockStages(RefCell::new(stages))
    }

    /// The stages, taken out of the block.
    pub(super) fn into_inner(self) -> Vec<Stage<'static>> {
        self.0.into_inner()
    }

    /// The stages, for one run (`None` while a run has them).
    pub(super) fn borrow(&self) -> Option<std::cell::RefMut<'_, Vec<Stage<'static>>>> {
        self.0.try_borrow_mut().ok()
    }
}

/// Which rows a set operation over two or more query blocks gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    /// Every row of every branch (UNION ALL; UNION is this under a HASH UNIQUE).
    UnionAll,
    /// The distinct rows of the first branch the second also gives.
    Intersect,
    /// The distinct rows of the first branch the second does not give.
    Minus,
}

/// A set operation over query blocks, run as a row source.
pub struct SetOperation {
    pub operator: SetOperator,
    /// The branches, left to right (two for INTERSECT and MINUS).
    pub branches: Vec<QueryBlock>,
}

/// FILTER with correlated subqueries: each row of `input` that meets `predicate`, whose
/// subqueries' answers are those of runs for the row's values (Oracle's FILTER with its
/// subqueries as children, and its scalar subquery caching: a row whose values were seen
/// before takes the answer of that run).
pub struct SubqueryFilter {
    pub input: QueryBlock,
    pub subplans: Vec<CorrelatedPlan>,
    /// Over the input's rows; its subqueries read the answers `subplans` set. None: every
    /// row passes (the subqueries are the select list's).
    pub predicate: Option<Expr>,
}

/// A subquery that reads columns of the row of the query around it.
pub struct CorrelatedPlan {
    pub block: QueryBlock,
    /// Where its answer goes in the statement's function context.
    pub slot: usize,
    pub kind: InitKind,
    /// The outer row's values it reads: the slot of each in the function context's outer
    /// values, and the expression over the outer row that gives it.
    pub correlation: Vec<(usize, Expr)>,
    /// The answers of the runs of this execution, by the outer values they ran for.
    pub cache: RefCell<std::collections::HashMap<Vec<Value>, std::sync::Arc<crate::expr::functions::SubqueryAnswer>>>,
}

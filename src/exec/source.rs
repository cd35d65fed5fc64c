//! Row sources: where a pipeline's rows come from.
//!
//! - TABLE ACCESS FULL: a full scan of a table's segment ([`Source::scan_table`], which
//!   may also read only some of its blocks); of a compressed table's compression units
//!   and row blocks, see [`super::hcc_source`].
//! - TABLE ACCESS INMEMORY FULL: see [`super::inmemory_source`].
//! - FAST DUAL: the one row of DUAL, with no block read.
//! - CONNECT BY over DUAL: the row generator `LEVEL` 1..=n.
//! - COLLECTION ITERATOR: `generate_series(start, stop)`.
//! - FIXED TABLE: rows a `v$` view computed when the statement was planned.
//! - INDEX ... SCAN [+ TABLE ACCESS BY INDEX ROWID]: see [`super::index_source`].

use super::ExecContext;
use super::kernel::{CountKernel, KernelVerdict};
use super::pipeline::{Stage, push, push_batch, push_each};
use crate::access::Flow;
use crate::access::fast_walk::FastRows;
use crate::access::full_scan::FullScan;
use crate::access::full_scan::{ScanConsumer, fast_rows_one_by_one};
use crate::access::{BlockBatch, BlockRow, WalkedRow};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::stats::SessionStats;
use crate::types::encoding::PayloadKind;
use crate::types::{Datum, Value};
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
}

/// Feeds what a scan finds into the pipeline.
struct Feed<'p, 'a> {
    stages: &'p mut [Stage<'a>],
    f: &'p mut FunctionContext,
    /// The selection vector, reused block after block.
    selection: Vec<u16>,
    /// Filters and counts rows in the scan loop when the plan has that shape.
    kernel: Option<CountKernel>,
}

impl Feed<'_, '_> {
    /// Gives the kernel's counts to the aggregate stage they were computed for (and the
    /// rows it passed to `stats`).
    fn hand_kernel_totals(&mut self, stats: &SessionStats) {
        if let Some(kernel) = &self.kernel {
            kernel.hand_totals(self.stages, stats);
        }
    }
}

impl ScanConsumer for Feed<'_, '_> {
    #[inline]
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow> {
        self.selection.clear();
        self.selection.extend(0..batch.len() as u16);
        push_batch(self.stages, batch, &mut self.selection, self.f)
    }

    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow> {
        push(self.stages, row, self.f)
    }

    fn rows_in_place(&self) -> bool {
        self.kernel.is_some()
    }

    #[inline(always)]
    fn row_in_place(&mut self, row: WalkedRow<'_>) -> Result<Flow> {
        match self.kernel.as_mut().map(|k| k.apply(row)) {
            Some(KernelVerdict::Done) => Ok(Flow::Continue),
            _ => push(self.stages, &row, self.f),
        }
    }

    #[inline(always)]
    fn fast_rows<const W: usize>(
        &mut self,
        rows: &mut FastRows<'_, W>,
        kinds: &[PayloadKind],
        rdba: u32,
    ) -> Result<Flow> {
        let Some(kernel) = self.kernel.as_mut() else {
            return fast_rows_one_by_one(self, rows, kinds, rdba);
        };
        // The rows the kernel cannot decide go through the pipeline.
        while let Some(row) = kernel.count_fast_rows(rows) {
            if push(self.stages, &row.walked(&row.positions(), kinds, rdba), self.f)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}

impl Source {
    /// Whether running the source reads the table with data object id `object_id` (a
    /// statement that fills that table must then gather the rows before it writes).
    pub fn reads_table(&self, object_id: u32) -> bool {
        match self {
            Source::TableScan { table, .. } => table.object_id == object_id,
            Source::Index(access) => access.table.object_id == object_id,
            Source::InMemory(access) => access.table.object_id == object_id,
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
            Source::TableScan { table, columns_read } if table.compression.is_some() => {
                super::hcc_source::run(table, columns_read, stages, ctx)
            }
            Source::TableScan { table, columns_read } => Self::scan_table(table, columns_read, None, stages, ctx),
            Source::Index(access) => access.run(stages, ctx),
            Source::InMemory(access) => access.run(stages, ctx),
            Source::Dual => push(stages, &[Datum::Str("X".into())] as &[Value], &mut ctx.functions).map(|_| ()),
            Source::ConnectBy { rows } => Self::numbers(1, *rows, stages, ctx),
            Source::Series { start, stop } => Self::numbers(*start, *stop, stages, ctx),
            Source::Rows(rows) => {
                push_each(rows, |row| push(stages, row.as_slice(), &mut ctx.functions))?;
                Ok(())
            }
        }
    }

    /// Runs a full scan of `table` (only the blocks of `runs`, when given) into `stages`,
    /// with the count kernel where the plan has its shape.
    pub fn scan_table(
        table: &TableDef,
        columns_read: &[bool],
        runs: Option<Vec<crate::storage::segment::ExtentRun>>,
        stages: &mut [Stage<'_>],
        ctx: &mut ExecContext<'_>,
    ) -> Result<()> {
        let mut scan = FullScan::new(table, columns_read);
        if let Some(runs) = runs {
            scan = scan.only(runs);
        }
        let kernel = CountKernel::for_stages(stages, scan.kinds());
        let mut feed = Feed { stages, f: &mut ctx.functions, selection: Vec::new(), kernel };
        scan.run(&ctx.access, &mut feed)?;
        feed.hand_kernel_totals(ctx.access.stats);
        Ok(())
    }

    fn numbers(start: i64, stop: i64, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        if let [Stage::Project(project), Stage::Sink(sink)] = stages
            && project.takes_number_batches()
        {
            return project.push_numbers_to_sink(start, stop, sink, ctx);
        }
        let f = &mut ctx.functions;
        push_each(start..=stop, |n| push(stages, [Datum::Int(n)].as_slice(), f))?;
        Ok(())
    }
}

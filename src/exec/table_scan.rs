//! TABLE ACCESS FULL: a full scan of a table's segment ([`run`], which may also read only
//! some of its blocks, for an in-memory scan's rest) feeding the pipeline: the rows of its
//! row blocks a block batch at a time, or counted inside the scan loop by the row kernel
//! where the plan has its shape ([`super::kernel`]), and a compressed table's compression
//! units through the column kernels ([`super::cu_feed`]), as the one walk of the segment
//! meets them.

use super::ExecContext;
use super::cu_feed::CuFeed;
use super::kernel::{CountKernel, KernelVerdict};
use super::pipeline::{Stage, push, push_batch};
use crate::access::cu::scan::ScannedCu;
use crate::access::fast_walk::FastRows;
use crate::access::full_scan::{FullScan, ScanConsumer, fast_rows_one_by_one};
use crate::access::{AccessContext, BlockBatch, BlockRow, Flow, WalkedRow};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::stats::SessionStats;
use crate::types::encoding::PayloadKind;

/// Feeds what a scan finds into the pipeline.
struct Feed<'p, 'a> {
    stages: &'p mut [Stage<'a>],
    f: &'p mut FunctionContext,
    /// The selection vector, reused block after block.
    selection: Vec<u16>,
    /// Filters and counts rows in the scan loop when the plan has that shape.
    kernel: Option<CountKernel>,
    /// The columns the plan reads, and what the compression units met need.
    columns_read: &'p [bool],
    cus: CuFeed,
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

    fn cu_columns(&self) -> Option<&[bool]> {
        Some(self.columns_read)
    }

    fn cu(&mut self, ctx: &AccessContext<'_>, table: &TableDef, cu: &ScannedCu<'_>, _: &[PayloadKind]) -> Result<Flow> {
        let stopped = self.cus.run(ctx, table, cu, self.stages, self.f)?;
        Ok(if stopped { Flow::Stop } else { Flow::Continue })
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

/// Runs a full scan of `table` (only the blocks of `runs`, when given) into `stages`,
/// with the count kernel where the plan has its shape.
pub fn run(
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
    let mut feed =
        Feed { stages, f: &mut ctx.functions, selection: Vec::new(), kernel, columns_read, cus: CuFeed::default() };
    scan.run(&ctx.access, &mut feed)?;
    feed.hand_kernel_totals(ctx.access.stats);
    Ok(())
}

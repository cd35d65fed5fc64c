//! The compression units (CUs) of a compressed table that a full scan meets
//! (`access::full_scan` walks its segment once, CUs and row blocks alike, and hands each
//! complete CU to the scan's feed): run through the column store's kernels instead of
//! being taken apart into rows.
//!
//! ```text
//!  ScannedCu (the gathered bytes of the columns the plan reads, the head as the
//!    snapshot sees it) ─► those columns decompressed ─► the column store's unit
//!    ─► predicates on codes ─► counts from bitmaps, or rows decoded ─► stages
//!                                                             (unit_scan::UnitScan)
//! ```
//!
//! A CU's rows are the unit's rows less those its deleted-row bitmap marks. A statement
//! that reads no column of the table (COUNT(*)) decompresses nothing: its rows are
//! counted from the CU's head (`EHCC Rows Not Decompressed`). The CU's blocks were gotten
//! by the scan like any others (`consistent gets`, `table scan blocks gotten`), so the
//! statistics show the HCC copy's smaller size; its live rows count as `table scan rows
//! gotten`.

use super::pipeline::Stage;
use super::unit_scan::{Shape, UnitScan, pruned, unit_predicates};
use crate::access::AccessContext;
use crate::access::cu::scan::ScannedCu;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::imcu::Imcu;
use crate::inmemory::simd::Isa;
use crate::stats::Stat;

/// What a scan keeps for the CUs it meets: the plan's shape as the column kernels see it
/// (worked out at the first CU), the kernels' instruction set and scratch for a column's
/// decompressed bytes.
#[derive(Default)]
pub struct CuFeed {
    shape: Option<Shape>,
    isa: Option<Isa>,
    scratch: Vec<u8>,
}

impl CuFeed {
    /// Runs `cu`, a CU of `table` whose gathered columns are those the plan reads, into
    /// `stages`; true when a stage stopped the scan.
    pub fn run(
        &mut self,
        ctx: &AccessContext<'_>,
        table: &TableDef,
        cu: &ScannedCu<'_>,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<bool> {
        let shape = self.shape.get_or_insert_with(|| Shape::of(stages, &f.binds));
        let isa = *self.isa.get_or_insert_with(Isa::best);
        let head = cu.head;
        let rows = head.rows as usize;
        let imcu = if cu.columns.iter().any(|&r| r) {
            crate::inmemory::hcc::decode(ctx, table, head, cu.payload, cu.columns, &mut self.scratch)
                .map_err(|e| ctx.corrupt(cu.rdba, e))?
        } else {
            ctx.stats.add(Stat::EhccRowsNotDecompressed, rows as u64);
            let columns = table.columns.iter().map(|_| None).collect();
            Imcu { population_scn: 0, rows, block_rows: vec![0, rows as u32], columns, bytes: 0 }
        };
        let mut keep = Bitmap::all(rows);
        if head.deleted > 0 {
            (0..rows).filter(|&r| head.is_deleted(r)).for_each(|r| keep.clear_range(r..r + 1));
        }
        ctx.stats.add(Stat::TableScanRowsGotten, cu.live_rows());
        let predicates = unit_predicates(&imcu, shape);
        if pruned(&imcu, &predicates) {
            return Ok(false);
        }
        let unit = UnitScan { imcu: &imcu, predicates: &predicates, shape, columns_read: cu.columns };
        unit.run(&mut keep, isa, true, stages, f)
    }
}

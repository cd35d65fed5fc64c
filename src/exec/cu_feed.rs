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
use super::unit_scan::{Shape, UnitScan, pruned, unit_predicates_into};
use crate::access::AccessContext;
use crate::access::cu::scan::ScannedCu;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::cu::{CuPredicate, UnitBuffers};
use crate::inmemory::hcc::{CuBuffers, clear_unit, decode_into};
use crate::inmemory::imcu::Imcu;
use crate::inmemory::simd::Isa;
use crate::stats::Stat;

/// What a scan keeps for the CUs it meets: the plan's shape as the column kernels see it
/// (worked out at the first CU), the kernels' instruction set, and the unit, selection and
/// predicates of the CU run last, whose arrays the next CU reuses (after the first CUs,
/// running one allocates nothing).
#[derive(Default)]
pub struct CuFeed {
    shape: Option<Shape>,
    isa: Option<Isa>,
    imcu: Imcu,
    /// A column's decompressed bytes.
    scratch: Vec<u8>,
    units: UnitBuffers,
    keep: Bitmap,
    predicates: Vec<(usize, Option<CuPredicate>)>,
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
        let imcu = &mut self.imcu;
        if cu.columns.iter().any(|&r| r) {
            let mut buffers = CuBuffers { scratch: &mut self.scratch, units: &mut self.units };
            decode_into(ctx, table, head, cu.payload, cu.columns, &mut buffers, imcu)
                .map_err(|e| ctx.corrupt(cu.rdba, e))?;
        } else {
            ctx.stats.add(Stat::EhccRowsNotDecompressed, rows as u64);
            clear_unit(imcu, rows, &mut self.units);
            imcu.columns.extend(table.columns.iter().map(|_| None));
        }
        let keep = &mut self.keep;
        keep.select_all(rows);
        if head.deleted > 0 {
            (0..rows).filter(|&r| head.is_deleted(r)).for_each(|r| keep.clear_range(r..r + 1));
        }
        ctx.stats.add(Stat::TableScanRowsGotten, cu.live_rows());
        unit_predicates_into(imcu, shape, &mut self.predicates);
        if pruned(imcu, &self.predicates) {
            return Ok(false);
        }
        let unit = UnitScan { imcu, predicates: &self.predicates, shape };
        unit.run(keep, isa, true, stages, f)
    }
}

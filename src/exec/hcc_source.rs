//! TABLE ACCESS FULL of a table compressed with Hybrid Columnar Compression: the
//! compression units (CUs) its direct-path loads wrote, decompressed column by column,
//! and the ordinary row blocks its conventional inserts filled.
//!
//! ```text
//!  blocks below the high-water mark, multiblock reads, a consistent get each
//!    CU head ─► payload from its pieces ─► the columns the plan reads, decompressed
//!               ─► the column store's units ─► predicates on codes ─► counts from
//!               bitmaps, or rows decoded ─► stages                (inmemory_source)
//!    row block ─► kept, then read by the row scan after the CUs   (Source::scan_table)
//! ```
//!
//! A CU's rows are the unit's rows less those its deleted-row bitmap marks. A statement
//! that reads no column of the table (COUNT(*)) decompresses nothing: its rows are
//! counted from the CU's head (`EHCC Rows Not Decompressed`). The CU's blocks are
//! gotten like any others (`consistent gets`, `table scan blocks gotten`), so the
//! statistics show the HCC copy's smaller size. A CU whose pieces do not follow its
//! head in order, or whose bytes do not check, is corruption naming its block.

use super::ExecContext;
use super::inmemory_source::{Shape, UnitScan, pruned, unit_predicates};
use super::pipeline::Stage;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::imcu::Imcu;
use crate::inmemory::simd::Isa;
use crate::stats::Stat;
use crate::storage::block::{BlockHeader, BlockType};
use crate::storage::hcc::{CuHead, CuInfo, PayloadAssembly, read_piece};
use crate::storage::segment::ExtentRun;

/// A CU being read: where its head is, what the scan keeps of the head, and the next
/// piece expected.
struct OpenCu {
    rdba: u32,
    head: CuInfo,
    next_piece: usize,
}

/// Runs a full scan of the compressed `table` into `stages`.
pub fn run(table: &TableDef, columns_read: &[bool], stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
    let locks = ctx.access.locks.table(table.object_id);
    let _visible = locks.visibility.read_recursive();
    // The cache and the statistics outlive the borrows of `ctx` the stages take.
    let (cache, stats) = (ctx.access.cache, ctx.access.stats);
    let map = crate::access::segments::read_map(&ctx.access, table)?;
    let long_table = (map.hwm as usize) > cache.buffer_count() / 50;
    stats.add(if long_table { Stat::TableScansLong } else { Stat::TableScansShort }, 1);
    let max_read = ctx.access.multiblock_read_count.clamp(1, (cache.buffer_count() / 4).max(1) as u32);
    let shape = Shape::of(stages, &ctx.functions.binds);
    let isa = Isa::best();
    let mut row_blocks: Vec<u32> = Vec::new();
    let mut open: Option<OpenCu> = None;
    // The head of the last CU, its buffers reused for the next.
    let mut kept = CuInfo::default();
    let mut assembly = PayloadAssembly::default();
    let mut scratch = Vec::new();
    for run in map.scan_runs(ctx.access.space.extent_blocks) {
        let mut at = run.first;
        let end = run.first + run.blocks;
        while at < end {
            let mut pinned = cache.pin_multiblock(stats, at, max_read.min(end - at))?;
            at = pinned.end();
            while let Some(guard) = pinned.next_block(stats).transpose()? {
                let rdba = guard.rdba();
                stats.add(Stat::TableScanBlocksGotten, 1);
                let access = &ctx.access;
                let block = crate::txn::cr::consistent_get_pinned(access, guard, |b| {
                    access.check_segment_block(table, rdba, b)
                })?;
                let complete = match BlockHeader(&block).block_type() {
                    Some(BlockType::TableData) => {
                        row_blocks.push(rdba);
                        false
                    }
                    Some(BlockType::CuHead) => {
                        if let Some(cu) = &open {
                            return Err(access.corrupt(cu.rdba, "compression unit ends before its last piece"));
                        }
                        let head = CuHead::read(&block).map_err(|e| access.corrupt(rdba, e))?;
                        assembly.start(&head, columns_read);
                        let mut info = std::mem::take(&mut kept);
                        head.keep_into(&mut info);
                        open = Some(OpenCu { rdba, head: info, next_piece: 1 });
                        assembly.complete()
                    }
                    Some(BlockType::CuPiece) => {
                        let (head, number, bytes) = read_piece(&block).map_err(|e| access.corrupt(rdba, e))?;
                        match &mut open {
                            Some(cu)
                                if cu.rdba == head
                                    && cu.next_piece == number
                                    && cu.head.pieces.get(number) == Some(&rdba) =>
                            {
                                cu.next_piece += 1
                            }
                            _ => {
                                return Err(access.corrupt(
                                    rdba,
                                    format!("piece {number} of the compression unit at {head:#x} out of its place"),
                                ));
                            }
                        }
                        assembly.add_piece(bytes);
                        assembly.complete()
                    }
                    _ => false,
                };
                drop(block);
                if complete {
                    let cu = open.take().expect("a complete CU is open");
                    let stop = scan_cu(table, columns_read, &cu, &assembly, &shape, isa, &mut scratch, stages, ctx)?;
                    kept = cu.head;
                    if stop {
                        return Ok(());
                    }
                }
            }
        }
    }
    if let Some(cu) = open {
        return Err(ctx.access.corrupt(cu.rdba, "compression unit ends at the high-water mark, before its last piece"));
    }
    if row_blocks.is_empty() {
        return Ok(());
    }
    super::Source::scan_table(table, columns_read, Some(ExtentRun::adjacent(&row_blocks)), stages, ctx)
}

/// Scans one complete CU; true when a stage stopped the scan.
#[allow(clippy::too_many_arguments)]
fn scan_cu(
    table: &TableDef,
    columns_read: &[bool],
    cu: &OpenCu,
    assembly: &PayloadAssembly,
    shape: &Shape,
    isa: Isa,
    scratch: &mut Vec<u8>,
    stages: &mut [Stage<'_>],
    ctx: &mut ExecContext<'_>,
) -> Result<bool> {
    let access = &ctx.access;
    let corrupt = |e: String| access.corrupt(cu.rdba, e);
    let head = &cu.head;
    let rows = head.rows as usize;
    let imcu = if columns_read.iter().any(|&r| r) {
        crate::inmemory::hcc::decode(access, table, head, assembly, columns_read, scratch).map_err(corrupt)?
    } else {
        access.stats.add(Stat::EhccRowsNotDecompressed, rows as u64);
        let columns = table.columns.iter().map(|_| None).collect();
        Imcu { population_scn: 0, rows, block_rows: vec![0, rows as u32], columns, bytes: 0 }
    };
    let mut keep = Bitmap::all(rows);
    if head.deleted > 0 {
        (0..rows).filter(|&r| head.is_deleted(r)).for_each(|r| keep.clear_range(r..r + 1));
    }
    access.stats.add(Stat::TableScanRowsGotten, (rows - head.deleted as usize) as u64);
    let predicates = unit_predicates(&imcu, shape);
    if pruned(&imcu, &predicates) {
        return Ok(false);
    }
    let unit = UnitScan { imcu: &imcu, predicates: &predicates, shape, columns_read };
    unit.run(&mut keep, isa, true, stages, ctx)
}

//! Every live row of a table's segment, whatever format holds it, in the row format:
//! for CREATE INDEX and ALTER TABLE ... MOVE, which need every live row with its rowid.
//! A segment of row blocks alone is a full scan; one with compression units (CUs) is
//! walked here, its CUs' rows one by one, then its row blocks by a full scan.
//!
//! ```text
//!  blocks below the high-water mark, multiblock reads
//!    CU head  ─► consistent get (the snapshot's deleted marks) ─► AccessContext::read_cu
//!               (a consistent get of each piece, every column decompressed) ─► each live
//!               row as a BlockRow (rdba = head, slot = row number) ─► consumer.row
//!    its pieces, met next in the segment ─► already read with the CU: let go uncounted
//!    row block ─► kept, then read by FullScan after the CUs ─► consumer.batch / row
//! ```
//!
//! Invariants: a CU's rows carry the rowid (head address, row number) an index entry
//! keeps and a fetch by rowid takes back; every block of the segment is counted as one
//! consistent get (a piece by the CU read that gets it, not again when the walk meets
//! it); pieces follow their head in segment order, as the direct-path load writes them
//! and as the compressed table's scan (`exec::hcc_source`) relies on, and a piece met anywhere else
//! is corruption naming its block.

use super::full_scan::{FullScan, ScanConsumer};
use super::{AccessContext, Flow};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::block::{BlockHeader, BlockType};
use crate::storage::row::ColumnSpan;
use crate::storage::segment::ExtentRun;
use crate::types::encoding::PayloadKind;
use std::collections::VecDeque;

/// Hands every live row of `table` to `consumer`, locating the columns `needed` marks
/// (and those before them): a compressed table's CU rows one by one, then its row
/// blocks' rows as a full scan hands them; any other table by a full scan. The caller
/// holds the table's visibility lock. Stops when the consumer says so.
pub fn scan_locked<C: ScanConsumer>(
    ctx: &AccessContext<'_>,
    table: &TableDef,
    needed: &[bool],
    consumer: &mut C,
) -> Result<()> {
    if table.compression.is_none() {
        return FullScan::new(table, needed).run_locked(ctx, consumer);
    }
    let mut walk = CuWalk::new(table, needed);
    if walk.run(ctx, consumer)? == Flow::Stop {
        return Ok(());
    }
    if walk.row_blocks.is_empty() {
        return Ok(());
    }
    FullScan::new(table, needed).only(ExtentRun::adjacent(&walk.row_blocks)).run_locked(ctx, consumer)
}

/// The walk of a compressed table's segment that reads its CUs row by row.
struct CuWalk<'t> {
    table: &'t TableDef,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    /// The row being handed over, as a whole-row piece.
    piece: Vec<u8>,
    /// Pieces of the last CU read that the walk has not met yet, in order.
    pieces_ahead: VecDeque<u32>,
    /// Row blocks met, for the row scan after the CUs.
    row_blocks: Vec<u32>,
}

impl<'t> CuWalk<'t> {
    fn new(table: &'t TableDef, needed: &[bool]) -> CuWalk<'t> {
        let width = needed.iter().rposition(|&x| x).map_or(0, |last| last + 1).min(table.columns.len());
        let kinds: Vec<PayloadKind> = table.columns[..width].iter().map(|c| PayloadKind::from(c.data_type)).collect();
        CuWalk {
            table,
            spans: vec![ColumnSpan::NULL; width],
            kinds,
            piece: Vec::new(),
            pieces_ahead: VecDeque::new(),
            row_blocks: Vec::new(),
        }
    }

    /// Every block below the high-water mark, with multiblock reads: CUs read and their
    /// rows handed over, row blocks noted.
    fn run<C: ScanConsumer>(&mut self, ctx: &AccessContext<'_>, consumer: &mut C) -> Result<Flow> {
        let (cache, stats) = (ctx.cache, ctx.stats);
        let map = crate::access::segments::read_map(ctx, self.table)?;
        let max_read = ctx.multiblock_read_count.clamp(1, (cache.buffer_count() / 4).max(1) as u32);
        let mut scans_counted = false;
        for run in map.scan_runs(ctx.space.extent_blocks) {
            let (mut at, end) = (run.first, run.first + run.blocks);
            while at < end {
                let mut pinned = cache.pin_multiblock(stats, at, max_read.min(end - at))?;
                at = pinned.end();
                while let Some(guard) = pinned.next_block(stats).transpose()? {
                    let rdba = guard.rdba();
                    if self.pieces_ahead.front() == Some(&rdba) {
                        // Gotten (and counted a consistent get) when its CU was read.
                        self.pieces_ahead.pop_front();
                        stats.add(Stat::TableScanBlocksGotten, 1);
                        continue;
                    }
                    if !scans_counted {
                        let long_table = (map.hwm as usize) > cache.buffer_count() / 50;
                        stats.add(if long_table { Stat::TableScansLong } else { Stat::TableScansShort }, 1);
                        scans_counted = true;
                    }
                    stats.add(Stat::TableScanBlocksGotten, 1);
                    let table = self.table;
                    let block =
                        crate::txn::cr::consistent_get_pinned(ctx, guard, |b| ctx.check_segment_block(table, rdba, b))?;
                    match BlockHeader(&block).block_type() {
                        Some(BlockType::TableData) => self.row_blocks.push(rdba),
                        Some(BlockType::CuHead) => {
                            if let Some(&piece) = self.pieces_ahead.front() {
                                return Err(ctx.corrupt(piece, "piece of a compression unit not met after its head"));
                            }
                            if self.cu_rows(ctx, rdba, &block, consumer)? == Flow::Stop {
                                return Ok(Flow::Stop);
                            }
                        }
                        _ => return Err(ctx.corrupt(rdba, "piece of a compression unit out of its place")),
                    }
                }
            }
        }
        if let Some(&piece) = self.pieces_ahead.front() {
            return Err(ctx.corrupt(piece, "piece of a compression unit beyond the high-water mark"));
        }
        Ok(Flow::Continue)
    }

    /// Reads the CU whose head `rdba` is `head` and hands its live rows to `consumer`.
    fn cu_rows<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        head: &[u8],
        consumer: &mut C,
    ) -> Result<Flow> {
        let cu = ctx.read_cu(self.table, rdba, head)?;
        self.pieces_ahead.extend(cu.pieces().iter().skip(1));
        let live = (0..cu.rows()).filter(|&r| !cu.is_deleted(r));
        let mut handed = 0u64;
        let mut flow = Flow::Continue;
        for r in live {
            handed += 1;
            let row = cu.row(r, &self.kinds, &mut self.spans, &mut self.piece)?;
            if consumer.row(&row)? == Flow::Stop {
                flow = Flow::Stop;
                break;
            }
        }
        ctx.stats.add(Stat::TableScanRowsGotten, handed);
        Ok(flow)
    }
}

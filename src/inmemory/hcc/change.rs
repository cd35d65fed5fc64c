//! UPDATE and DELETE of the rows of a table's compression units, inside a transaction,
//! as Oracle does them: a deleted row is marked deleted in its CU's head; an updated row
//! is marked deleted there too and moves out, its new version inserted into a row block
//! by the caller (it gets a new rowid). The values in a CU never change.
//!
//! ```text
//!  segment blocks (or the rowids an index found), a consistent get each
//!    CU head (as the snapshot sees it) ─► CuRows: rows not marked deleted ─► qualifies?
//!       ─► per candidate, in current mode: row marked and locked by an active
//!          transaction? wait, look again ─► edit ─► ITL slot of the head ─► undo record
//!          ─► mark deleted, lock bit of the slot ─► (update) new row to insert
//!    row block ─► left to the row path (access::modify)
//! ```
//!
//! Row locks: a row marked through an ITL slot whose transaction is active is locked by
//! it; a writer that meets it waits for that transaction, then looks again: a row the
//! holder deleted and committed is gone (read committed: skipped; serializable: "can't
//! serialize access"), a row it rolled back is live again. The head's ITL does not grow:
//! when both slots serve active transactions, a writer waits for one of them.
//!
//! Invariant (as for row blocks, see `txn::change`): the undo record is appended and the
//! slot pointed at it while the head is held exclusively, before the mark is made.

use super::rows::CuRows;
use super::undo::{CuChange, CuUndo};
use crate::access::AccessContext;
use crate::access::modify::{RowChanges, RowEdit, RowsFrom};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::block::{self, BlockHeader, BlockType};
use crate::storage::hcc::{CU_ITL_SLOTS, clear_locks, mark_deleted, row_mark};
use crate::storage::itl::{self, ITL_COMMITTED, Itl};
use crate::storage::row::{ColumnSpan, PieceAddr};
use crate::txn::Xid;
use crate::txn::change::{Obstacle, cannot_serialize};
use crate::txn::transaction::Transaction;
use crate::types::encoding::PayloadKind;
use std::collections::HashSet;

/// What the CU pass of an UPDATE or DELETE leaves to the row path and the caller.
#[derive(Debug, Default)]
pub struct CuPass {
    /// Rows of CUs changed (deleted, or moved out).
    pub changed: u64,
    /// The new versions of the rows an UPDATE moved out of their CUs (whole-row pieces),
    /// to insert into row blocks.
    pub moved: Vec<Vec<u8>>,
    /// The row blocks of the segment, in order (a full scan's), for the row path.
    pub row_blocks: Vec<u32>,
    /// The rowids (in the order given) that are not rows of a CU, for the row path.
    pub row_rowids: Vec<PieceAddr>,
}

/// Changes the qualifying rows of the CUs of compressed `table` among those `from`
/// names (at most `limit`), and sorts out what is left for the row path.
#[allow(clippy::too_many_arguments)]
pub fn change_cu_rows(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    from: RowsFrom<'_>,
    limit: Option<u64>,
    changes: &mut dyn RowChanges,
) -> Result<CuPass> {
    let locks = ctx.locks.table(table.object_id);
    let _no_ddl = locks.visibility.read_recursive();
    let kinds: Vec<PayloadKind> = table.columns.iter().map(|c| PayloadKind::from(c.data_type)).collect();
    let mut pass = CuPass::default();
    let mut changer = CuChanger {
        ctx,
        txn,
        sid,
        table,
        changes,
        limit: limit.unwrap_or(u64::MAX),
        spans: vec![ColumnSpan::NULL; kinds.len()],
        kinds,
        piece: Vec::new(),
    };
    match from {
        RowsFrom::Blocks(blocks) => pass.row_blocks.extend_from_slice(blocks),
        RowsFrom::FullScan => {
            let map = crate::access::segments::read_map(ctx, table)?;
            let mut pieces: HashSet<u32> = HashSet::new();
            for run in map.scan_runs(ctx.space.extent_blocks) {
                for rdba in run.first..run.first + run.blocks {
                    if pieces.remove(&rdba) {
                        continue;
                    }
                    let guard = consistent_head_or_block(ctx, table, rdba)?;
                    match BlockHeader(&guard).block_type() {
                        Some(BlockType::TableData) => pass.row_blocks.push(rdba),
                        Some(BlockType::CuHead) if pass.changed < changer.limit => {
                            let cu = CuRows::read(ctx, table, rdba, &guard)?;
                            drop(guard);
                            pieces.extend(cu.pieces().iter().skip(1));
                            changer.cu(&cu, None, &mut pass)?;
                        }
                        _ => {}
                    }
                }
            }
        }
        RowsFrom::Rowids(rowids) => {
            for run in rowids.chunk_by(|a, b| a.rdba == b.rdba) {
                let rdba = run[0].rdba;
                let guard = consistent_head_or_block(ctx, table, rdba)?;
                if BlockHeader(&guard).block_type() != Some(BlockType::CuHead) {
                    pass.row_rowids.extend_from_slice(run);
                    continue;
                }
                if pass.changed >= changer.limit {
                    continue;
                }
                let cu = CuRows::read(ctx, table, rdba, &guard)?;
                drop(guard);
                changer.cu(&cu, Some(run), &mut pass)?;
            }
        }
    }
    Ok(pass)
}

/// A consistent get of block `rdba` of compressed `table`: a row block, a CU head (as the
/// snapshot sees it) or a CU piece.
fn consistent_head_or_block<'c>(
    ctx: &AccessContext<'c>,
    table: &TableDef,
    rdba: u32,
) -> Result<crate::buffer::ReadGuard<'c>> {
    crate::txn::cr::consistent_get(ctx, rdba, |b| ctx.check_segment_block(table, rdba, b))
}

/// One statement's changing of CU rows.
struct CuChanger<'a, 'c> {
    ctx: &'a AccessContext<'c>,
    txn: &'a mut Transaction,
    sid: u32,
    table: &'a TableDef,
    changes: &'a mut dyn RowChanges,
    limit: u64,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    piece: Vec<u8>,
}

impl CuChanger<'_, '_> {
    /// Finds the qualifying rows of `cu` as the snapshot sees it (among those of `run`, or
    /// all), then changes each in current mode.
    fn cu(&mut self, cu: &CuRows, run: Option<&[PieceAddr]>, pass: &mut CuPass) -> Result<()> {
        let mut candidates = Vec::new();
        let picked = run.map(|r| r.iter().map(|a| usize::from(a.slot)));
        let all = run.is_none().then_some(0..cu.rows());
        for r in picked.into_iter().flatten().chain(all.into_iter().flatten()) {
            if pass.changed + candidates.len() as u64 >= self.limit {
                break;
            }
            if r >= cu.rows() || cu.is_deleted(r) {
                continue;
            }
            let row = cu.row(r, &self.kinds, &mut self.spans, &mut self.piece)?;
            if self.changes.qualifies(&row)? {
                candidates.push(r);
            }
        }
        for r in candidates {
            if self.change_one(cu, r, pass)? {
                pass.changed += 1;
            }
        }
        Ok(())
    }

    /// Locks and marks row `r` of `cu` in current mode; false if it is gone or no longer
    /// qualifies.
    fn change_one(&mut self, cu: &CuRows, r: usize, pass: &mut CuPass) -> Result<bool> {
        let ctx = self.ctx;
        let rdba = cu.rdba;
        let xid = self.txn.xid(ctx, self.sid)?;
        self.txn.changes_table(ctx, self.table.object_id);
        loop {
            let mut guard = ctx.cache.current_get(ctx.stats, rdba)?;
            let mark = row_mark(&guard, r).map_err(|e| ctx.corrupt(rdba, e))?;
            if mark.deleted {
                let holder = mark
                    .locked_through
                    .map(|i| itl::get(&guard, i))
                    .filter(|s| !s.is_free() && s.flags & ITL_COMMITTED == 0)
                    .map(|s| s.xid);
                match holder {
                    Some(h) if h == xid => return Ok(false),
                    Some(h) if ctx.enqueues.is_active(h) => {
                        drop(guard);
                        ctx.enqueues.wait_for(ctx.stats, xid, h)?;
                        continue;
                    }
                    // Deleted by a transaction that has ended, after the snapshot showed it.
                    _ if self.txn.snapshot.is_some() => {
                        return Err(cannot_serialize(&format!(
                            "row {r} of the compression unit at {rdba:#x} of {} was deleted by a transaction that committed after this one began",
                            self.table.name
                        )));
                    }
                    _ => return Ok(false),
                }
            }
            let row = cu.row(r, &self.kinds, &mut self.spans, &mut self.piece)?;
            let edit = if self.changes.qualifies(&row)? { self.changes.edit(&row)? } else { RowEdit::Keep };
            if matches!(edit, RowEdit::Keep) {
                return Ok(false);
            }
            let index = match take_cu_itl(&mut guard, xid, |x| ctx.enqueues.is_active(x), self.txn.snapshot) {
                Ok(index) => index,
                Err(Obstacle::Busy(holder)) => {
                    drop(guard);
                    ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
                    continue;
                }
                Err(Obstacle::CannotSerialize) => {
                    return Err(cannot_serialize(&format!(
                        "a compression unit of {} holds only changes committed after its snapshot",
                        self.table.name
                    )));
                }
            };
            let prev_itl = itl::get(&guard, index);
            let mut body = Vec::with_capacity(48);
            CuUndo {
                itl: index as u8,
                change: CuChange::RowMarked(r as u32),
                object_id: self.table.object_id,
                rdba,
                prev_itl,
            }
            .encode(&mut body);
            let uba = ctx.undo.append(ctx, xid, &body)?;
            let lock_count = if prev_itl.xid == xid { prev_itl.lock_count.saturating_add(1) } else { 1 };
            itl::put(&mut guard, index, &Itl { xid, uba, commit_scn: 0, flags: 0, lock_count });
            mark_deleted(&mut guard, r, index).map_err(|e| ctx.corrupt(rdba, e))?;
            block::set_scn(&mut guard, ctx.scn);
            ctx.rows_changed(rdba, &guard);
            drop(guard);
            self.txn.touched(ctx, rdba);
            let rowid = PieceAddr { rdba, slot: r as u16 };
            match edit {
                RowEdit::Keep => unreachable!("returned above"),
                RowEdit::Delete => {
                    ctx.stats.add(Stat::RowsDeleted, 1);
                    self.changes.changed(rowid);
                }
                RowEdit::Replace(piece) => {
                    ctx.stats.add(Stat::RowsUpdated, 1);
                    ctx.stats.add(Stat::HccRowsMovedOut, 1);
                    pass.moved.push(piece);
                    self.changes.moved_out(rowid);
                }
            }
            return Ok(true);
        }
    }
}

/// The ITL slot of a CU head `xid` marks rows through: its own, a free one, or one of an
/// ended transaction (whose lock map is cleared first). The head's ITL never grows: with
/// both slots held by active transactions, `Err(Busy)` names one to wait for. A
/// serializable transaction takes over only slots stamped committed at or before its
/// snapshot (see `txn::change::take_itl`).
pub fn take_cu_itl(
    head: &mut [u8],
    xid: Xid,
    is_active: impl Fn(Xid) -> bool,
    fixed_snapshot: Option<u64>,
) -> std::result::Result<usize, Obstacle> {
    let slots: Vec<Itl> = (0..CU_ITL_SLOTS).map(|i| itl::get(head, i)).collect();
    if let Some(i) = slots.iter().position(|s| s.xid == xid) {
        return Ok(i);
    }
    let reusable = |s: &Itl| match fixed_snapshot {
        None => s.is_free() || s.is_committed() || !is_active(s.xid),
        Some(snapshot) => s.is_free() || (s.is_committed() && s.commit_scn <= snapshot),
    };
    if let Some(i) = slots.iter().position(reusable) {
        // A CU head that reads has both bitmaps; one that does not was refused above.
        let _ = clear_locks(head, i);
        return Ok(i);
    }
    match slots.iter().find(|s| !s.is_committed() && is_active(s.xid)) {
        Some(s) => Err(Obstacle::Busy(s.xid)),
        None => Err(Obstacle::CannotSerialize),
    }
}

//! UPDATE, DELETE and MERGE's changes: the one protocol that changes a table's rows
//! inside a transaction, whatever holds them. A segment mixes two formats: row blocks, whose rows change in
//! place ([`row_block`]), and compression units (CUs) a direct-path load wrote, whose
//! rows never change but are marked deleted in their CU's head ([`cu`]); an updated row
//! of a CU moves out, its new version handed back to the caller to insert into a row
//! block (it gets a new rowid), as Oracle does.
//!
//! ```text
//!  the segment's blocks below the high-water mark, or the rowids an index found (a run
//!  a block), a consistent get each (the statement's snapshot):
//!    row block ─► its rows ─────────────────────────────────┐
//!    CU head   ─► the CU decompressed (AccessContext::read_cu) ─► rows not marked deleted
//!    CU piece  ─► read with its head: passed over             │
//!                                          qualifies? ─► candidates
//!  each candidate, in current mode (change_one, one loop for both formats):
//!    locked by an active transaction? ─► wait for it, look again
//!    serializable, and changed since the snapshot? ─► "can't serialize access"
//!    the statement's edit, decided again on the current row (no update is lost)
//!    an ITL slot (txn::change::take_itl: a row block's ITL grows, a CU head's does not)
//!    the format's change: undo record, ITL slot pointed at it, then the row changed
//!       (a row that outgrows its block migrates first: then look again)
//!    block SCN, rows_changed, the block handed to the transaction for its cleanout
//! ```
//!
//! A statement's decision may need work that must not run while a block is held (a
//! correlated subquery reading blocks of its own): it answers [`Verdict::NotReady`], and
//! the protocol lets the block go, calls [`RowChanges::prepare`], gets the block again
//! and asks again, as after a lock wait. [`qualifying_rows`] is the first half alone:
//! the rows that qualify as of the snapshot, none changed.
//!
//! Invariant: a row is changed only once its lock is free or the changing transaction's
//! own, and only through an ITL slot the transaction holds whose undo chain undoes the
//! change (see `txn::change`). The formats differ only in how a row's lock and deletion
//! are read ([`Current`]), what an edit does to a row, and how their ITL slots are handed
//! over ([`RowLocks`]).

mod cu;
mod row_block;

use super::AccessContext;
use super::row_view::BlockRow;
use crate::buffer::WriteGuard;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::storage::block::{self, BlockHeader, BlockType};
use crate::storage::row::PieceAddr;
use crate::txn::Xid;
use crate::txn::change::{Obstacle, RowLocks, cannot_serialize, take_itl};
use crate::txn::transaction::Transaction;
use std::collections::HashSet;

/// Whether a row qualifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Yes,
    No,
    /// Not decided yet: the decision needs work that must run with no block held (a
    /// subquery run for the row's values). The protocol lets its block go, calls
    /// [`RowChanges::prepare`], and asks again.
    NotReady,
}

/// What to do with one row.
pub enum RowEdit {
    /// Leave it (it no longer qualifies).
    Keep,
    /// Not decided yet ([`Verdict::NotReady`]).
    NotReady,
    Delete,
    /// Replace it with this whole-row piece (flag, lock, column count, columns).
    Replace(Vec<u8>),
}

/// The statement-side decisions of an UPDATE or DELETE.
pub trait RowChanges {
    /// Whether a row (as of the snapshot, and again in current mode) qualifies.
    fn qualifies(&mut self, row: &BlockRow<'_>) -> Result<Verdict>;
    /// Does, with no block held, the work the last [`Verdict::NotReady`] asked for.
    fn prepare(&mut self) -> Result<()> {
        Ok(())
    }
    /// What to do with the current version of a qualifying row. May be asked more than
    /// once for one row (after a wait); the last answer is the one made.
    fn edit(&mut self, row: &BlockRow<'_>) -> Result<RowEdit>;
    /// The last edit of the row at `rowid` was made.
    fn changed(&mut self, _rowid: PieceAddr) {}
    /// The last edit of the row at `rowid` (a row of a compression unit, an update) was
    /// made by marking it deleted: its new version is inserted elsewhere, at a new rowid.
    fn moved_out(&mut self, rowid: PieceAddr) {
        self.changed(rowid)
    }
}

/// Where an UPDATE or DELETE looks for its rows.
#[derive(Clone, Copy)]
pub enum RowsFrom<'r> {
    /// Every block of the segment below its high-water mark.
    FullScan,
    /// The rows at these rowids (an index range scan's, as of the statement's snapshot),
    /// in this order; each is still checked with [`RowChanges::qualifies`].
    Rowids(&'r [PieceAddr]),
}

/// What an UPDATE or DELETE did.
#[derive(Debug, Default)]
pub struct Changed {
    /// Rows changed (deleted, updated in place, or moved out of their CU).
    pub rows: u64,
    /// The new versions of the rows an UPDATE moved out of their compression units
    /// (whole-row pieces), for the caller to insert into row blocks once every row is
    /// changed, so that the statement never meets them.
    pub moved_out: Vec<Vec<u8>>,
}

/// Changes the qualifying rows of `table` among those `from` names (at most `limit`).
pub fn change_rows(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    from: RowsFrom<'_>,
    limit: Option<u64>,
    changes: &mut dyn RowChanges,
) -> Result<Changed> {
    walk(ctx, txn, sid, table, from, limit, changes, None)
}

/// The rowids of the rows of `table` among those `from` names that qualify as of the
/// snapshot (at most `limit`), changing none: the first pass of a statement that must
/// decide on every row before it changes one (a subquery reading the table it changes
/// must see the table as it was when the statement began). The second pass changes
/// them with [`RowsFrom::Rowids`], deciding on each again in current mode.
pub fn qualifying_rows(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    from: RowsFrom<'_>,
    limit: Option<u64>,
    changes: &mut dyn RowChanges,
) -> Result<Vec<PieceAddr>> {
    let mut found = Vec::new();
    walk(ctx, txn, sid, table, from, limit, changes, Some(&mut found))?;
    Ok(found)
}

/// The walk of [`change_rows`], or of [`qualifying_rows`] when `found` takes the rows.
#[allow(clippy::too_many_arguments)]
fn walk(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    from: RowsFrom<'_>,
    limit: Option<u64>,
    changes: &mut dyn RowChanges,
    found: Option<&mut Vec<PieceAddr>>,
) -> Result<Changed> {
    let locks = ctx.locks.table(table.object_id);
    let _no_ddl = locks.visibility.read_recursive();
    let mut changer =
        Changer { ctx, txn, sid, table, changes, limit: limit.unwrap_or(u64::MAX), done: Changed::default(), found };
    let mut formats = Formats { rows: row_block::RowBlocks::new(table), cus: cu::CuHeads::new(table) };
    match from {
        RowsFrom::FullScan => {
            let map = super::segments::read_map(ctx, table)?;
            // The pieces of the CUs met so far: read with their heads, passed over.
            let mut pieces: HashSet<u32> = HashSet::new();
            for run in map.scan_runs(ctx.space.extent_blocks) {
                for rdba in run.first..run.first + run.blocks {
                    if changer.done.rows >= changer.limit {
                        return Ok(changer.done);
                    }
                    if !pieces.remove(&rdba) {
                        changer.block(&mut formats, rdba, None, &mut pieces)?;
                    }
                }
            }
        }
        RowsFrom::Rowids(rowids) => {
            // Runs of rows in one block, in the order given: one consistent get a run.
            for run in rowids.chunk_by(|a, b| a.rdba == b.rdba) {
                if changer.done.rows >= changer.limit {
                    break;
                }
                changer.block(&mut formats, run[0].rdba, Some(run), &mut HashSet::new())?;
            }
        }
    }
    Ok(changer.done)
}

/// The state of a candidate row in the current version of its block.
enum Current {
    /// Free to change (unlocked, or locked by the changing transaction).
    Free,
    /// Locked by this other active transaction: wait for it, then look again.
    LockedBy(Xid),
    /// Gone since the snapshot showed it (deleted by a transaction that ended, or by
    /// this statement): nothing to change.
    Gone,
    /// Serializable: changed (the word says how) by a transaction that committed after
    /// the snapshot.
    ChangedSinceSnapshot(&'static str),
}

/// What the protocol needs of one format of the blocks that hold rows.
trait RowFormat {
    /// How the format's rows name their ITL slots (see [`take_itl`]).
    const LOCKS: RowLocks;
    /// What one of its blocks is called in an error ("a block", "a compression unit").
    const UNIT: &'static str;
    /// Row `r` of the block at `rdba`, as an error names it.
    fn row_name(&self, rdba: u32, r: usize) -> String;
    /// Forgets what the change of the last row left (a new row's change begins).
    fn begin_row(&mut self) {}
    /// The state of row `r` in `block` (current mode) for `xid`; `seen` is the row as a
    /// serializable transaction's snapshot showed it (the formats that need it keep it).
    #[allow(clippy::too_many_arguments)]
    fn current(
        &mut self,
        ctx: &AccessContext<'_>,
        block: &[u8],
        rdba: u32,
        r: usize,
        xid: Xid,
        seen: Option<&[u8]>,
        snapshot: Option<u64>,
    ) -> Result<Current>;
    /// The statement's edit of the current version of row `r` ([`RowEdit::Keep`] when it
    /// is gone or no longer qualifies).
    fn edit(
        &mut self,
        ctx: &AccessContext<'_>,
        block: &[u8],
        rdba: u32,
        r: usize,
        changes: &mut dyn RowChanges,
    ) -> Result<RowEdit>;
    /// Makes `edit` to row `r` of `block` through ITL slot `index`, the undo record
    /// first. False when the row must move first: the block is then let go,
    /// [`RowFormat::after_release`] called, and the row looked at again.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        ctx: &AccessContext<'_>,
        xid: Xid,
        block: &mut WriteGuard<'_>,
        r: usize,
        index: usize,
        edit: RowEdit,
        changes: &mut dyn RowChanges,
        done: &mut Changed,
    ) -> Result<bool>;
    /// The work a false [`RowFormat::apply`] left for once its block is let go (a row
    /// block's migration).
    fn after_release(&mut self, _ctx: &AccessContext<'_>, _txn: &mut Transaction, _xid: Xid) -> Result<()> {
        Ok(())
    }
}

/// The formats of one statement, each with its buffers.
struct Formats<'t> {
    rows: row_block::RowBlocks<'t>,
    cus: cu::CuHeads<'t>,
}

/// One statement's changing of rows.
struct Changer<'a, 'c> {
    ctx: &'a AccessContext<'c>,
    txn: &'a mut Transaction,
    sid: u32,
    table: &'a TableDef,
    changes: &'a mut dyn RowChanges,
    limit: u64,
    done: Changed,
    /// Where the rows go when they are only found, not changed ([`qualifying_rows`]).
    found: Option<&'a mut Vec<PieceAddr>>,
}

/// A row to change: its number in its block (a slot, or a row of a CU), and for a
/// serializable transaction what its snapshot showed of it (a row block's head piece).
struct Candidate {
    r: usize,
    seen: Option<Vec<u8>>,
}

impl<'c> Changer<'_, 'c> {
    /// Finds the qualifying rows of block `rdba` as of the snapshot (among the rows of
    /// `run`, all in that block, or every row without one), then changes each in current
    /// mode. A CU head's pieces go to `pieces`, for a full scan to pass over.
    fn block(
        &mut self,
        formats: &mut Formats<'_>,
        rdba: u32,
        run: Option<&[PieceAddr]>,
        pieces: &mut HashSet<u32>,
    ) -> Result<()> {
        let ctx = self.ctx;
        let room = self.limit - self.done.rows;
        let serializable = self.txn.snapshot.is_some();
        let table = self.table;
        let get = || crate::txn::cr::consistent_get(ctx, rdba, |b| ctx.check_segment_block(table, rdba, b));
        let mut guard = get()?;
        match BlockHeader(&guard).block_type() {
            Some(BlockType::TableData) => {
                let mut candidates = Vec::new();
                let mut from = 0;
                // A row not decided yet: the block goes, the work is done, the block is got
                // again (the same snapshot's version) and the rows go on from that one.
                while let Some(at) = formats.rows.candidates(
                    ctx,
                    &guard,
                    rdba,
                    run,
                    from,
                    room,
                    serializable,
                    self.changes,
                    &mut candidates,
                )? {
                    drop(guard);
                    self.changes.prepare()?;
                    from = at;
                    guard = get()?;
                }
                drop(guard);
                self.change_all(&mut formats.rows, rdba, candidates)
            }
            Some(BlockType::CuHead) => {
                let cu = ctx.read_cu(self.table, rdba, &guard)?;
                drop(guard);
                if run.is_none() {
                    pieces.extend(cu.pieces().iter().skip(1));
                }
                let candidates = formats.cus.candidates(cu, run, room, self.changes)?;
                self.change_all(&mut formats.cus, rdba, candidates)
            }
            _ if run.is_some() => {
                Err(ctx.corrupt(rdba, format!("a rowid of {} names a piece of a compression unit", self.table.name)))
            }
            // A CU's piece: read with its head.
            _ => Ok(()),
        }
    }

    fn change_all<F: RowFormat>(&mut self, format: &mut F, rdba: u32, candidates: Vec<Candidate>) -> Result<()> {
        if let Some(found) = &mut self.found {
            for c in candidates {
                let slot =
                    u16::try_from(c.r).map_err(|_| self.ctx.corrupt(rdba, format!("row {} has no rowid", c.r)))?;
                found.push(PieceAddr { rdba, slot });
                self.done.rows += 1;
            }
            return Ok(());
        }
        for c in candidates {
            if self.change_one(format, rdba, c)? {
                self.done.rows += 1;
            }
        }
        Ok(())
    }

    /// Locks and changes one row in current mode; false if it is gone or no longer
    /// qualifies.
    fn change_one<F: RowFormat>(&mut self, format: &mut F, rdba: u32, candidate: Candidate) -> Result<bool> {
        let ctx = self.ctx;
        let Candidate { r, seen } = candidate;
        let xid = self.txn.xid(ctx, self.sid)?;
        self.txn.changes_table(ctx, self.table.object_id);
        format.begin_row();
        loop {
            let mut guard = ctx.cache.current_get(ctx.stats, rdba)?;
            match format.current(ctx, &guard, rdba, r, xid, seen.as_deref(), self.txn.snapshot)? {
                Current::Free => {}
                Current::Gone => return Ok(false),
                Current::LockedBy(holder) => {
                    drop(guard);
                    ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
                    continue;
                }
                Current::ChangedSinceSnapshot(how) => {
                    return Err(cannot_serialize(&format!(
                        "{} of {} was {how} by a transaction that committed after this one began",
                        format.row_name(rdba, r),
                        self.table.name
                    )));
                }
            }
            let edit = format.edit(ctx, &guard, rdba, r, self.changes)?;
            match edit {
                RowEdit::Keep => return Ok(false),
                RowEdit::NotReady => {
                    drop(guard);
                    self.changes.prepare()?;
                    continue;
                }
                RowEdit::Delete | RowEdit::Replace(_) => {}
            }
            // The ITL slot first: taking it may grow the ITL, and with it the room a row needs.
            let index = match take_itl(&mut guard, xid, |x| ctx.enqueues.is_active(x), self.txn.snapshot, F::LOCKS) {
                Ok(index) => index,
                Err(Obstacle::Busy(holder)) => {
                    drop(guard);
                    ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
                    continue;
                }
                Err(Obstacle::CannotSerialize) => {
                    return Err(cannot_serialize(&format!(
                        "{} of {} holds only changes committed after its snapshot",
                        F::UNIT,
                        self.table.name
                    )));
                }
                Err(Obstacle::Corrupt(what)) => return Err(ctx.corrupt(rdba, what)),
            };
            if !format.apply(ctx, xid, &mut guard, r, index, edit, self.changes, &mut self.done)? {
                drop(guard);
                format.after_release(ctx, self.txn, xid)?;
                continue;
            }
            block::set_scn(&mut guard, ctx.scn);
            ctx.rows_changed(rdba, &guard);
            drop(guard);
            self.txn.touched(ctx, rdba);
            return Ok(true);
        }
    }
}

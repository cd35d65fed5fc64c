//! The compression-unit format of the change protocol (see [`super`]): a CU's values
//! never change. A deleted row is marked deleted in its CU's head; an updated row is
//! marked deleted there too and moves out, its new version handed back in
//! [`Changed::moved_out`] for the caller to insert into a row block (a new rowid).
//!
//! Row locks: a row marked through an ITL slot whose transaction is active is locked by
//! it; a writer that meets it waits for that transaction, then looks again: a row the
//! holder deleted and committed is gone (read committed: passed over; serializable:
//! "can't serialize access"), a row it rolled back is live again. The head's ITL does not
//! grow: when both slots serve active transactions, a writer waits for one of them.
//!
//! The rows are read from the CU as the statement's snapshot decompressed it: in current
//! mode only the head's marks are looked at again, since the values are the same in
//! every version.

use super::{Candidate, Changed, Current, RowChanges, RowEdit, RowFormat, Verdict};
use crate::access::AccessContext;
use crate::access::cu::DecodedCu;
use crate::access::cu::undo::{CuChange, CuUndo};
use crate::buffer::WriteGuard;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::hcc::{mark_deleted, row_mark};
use crate::storage::itl::{self, ITL_COMMITTED};
use crate::storage::row::{ColumnSpan, PieceAddr};
use crate::txn::Xid;
use crate::txn::change::{RowLocks, point_itl};
use crate::types::encoding::PayloadKind;

/// The CU heads of one statement's table: the CU at hand, and the buffers its rows are
/// read into.
pub(super) struct CuHeads<'t> {
    table: &'t TableDef,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    piece: Vec<u8>,
    /// The CU whose rows are being changed, as the snapshot saw it.
    cu: Option<Box<dyn DecodedCu>>,
}

impl<'t> CuHeads<'t> {
    pub(super) fn new(table: &'t TableDef) -> CuHeads<'t> {
        let kinds: Vec<PayloadKind> = table.columns.iter().map(|c| PayloadKind::from(c.data_type)).collect();
        CuHeads { table, spans: vec![ColumnSpan::NULL; kinds.len()], kinds, piece: Vec::new(), cu: None }
    }

    /// The qualifying rows of `cu` as the snapshot sees it, which becomes the CU at hand:
    /// among the rows of `run`, or every row; at most `room`.
    pub(super) fn candidates(
        &mut self,
        cu: Box<dyn DecodedCu>,
        run: Option<&[PieceAddr]>,
        room: u64,
        changes: &mut dyn RowChanges,
    ) -> Result<Vec<Candidate>> {
        let mut candidates = Vec::new();
        let picked = run.map(|r| r.iter().map(|a| usize::from(a.slot)));
        let all = run.is_none().then_some(0..cu.rows());
        for r in picked.into_iter().flatten().chain(all.into_iter().flatten()) {
            if candidates.len() as u64 >= room {
                break;
            }
            if r >= cu.rows() || cu.is_deleted(r) {
                continue;
            }
            // The CU is decoded apart from any block: work a row asks for runs right away.
            loop {
                let row = cu.row(r, &self.kinds, &mut self.spans, &mut self.piece)?;
                match changes.qualifies(&row)? {
                    Verdict::Yes => candidates.push(Candidate { r, seen: None }),
                    Verdict::No => {}
                    Verdict::NotReady => {
                        changes.prepare()?;
                        continue;
                    }
                }
                break;
            }
        }
        self.cu = Some(cu);
        Ok(candidates)
    }
}

impl RowFormat for CuHeads<'_> {
    const LOCKS: RowLocks = RowLocks::CuLockMaps;
    const UNIT: &'static str = "a compression unit";

    fn row_name(&self, rdba: u32, r: usize) -> String {
        format!("row {r} of the compression unit at {rdba:#x}")
    }

    fn current(
        &mut self,
        ctx: &AccessContext<'_>,
        head: &[u8],
        rdba: u32,
        r: usize,
        xid: Xid,
        _seen: Option<&[u8]>,
        snapshot: Option<u64>,
    ) -> Result<Current> {
        let mark = row_mark(head, r).map_err(|e| ctx.corrupt(rdba, e))?;
        if !mark.deleted {
            return Ok(Current::Free);
        }
        let holder = mark
            .locked_through
            .map(|i| itl::get(head, i))
            .filter(|s| !s.is_free() && s.flags & ITL_COMMITTED == 0)
            .map(|s| s.xid);
        Ok(match holder {
            // Deleted by this transaction already (this statement, or an earlier one).
            Some(h) if h == xid => Current::Gone,
            Some(h) if ctx.enqueues.is_active(h) => Current::LockedBy(h),
            // Deleted by a transaction that has ended, after the snapshot showed it.
            _ if snapshot.is_some() => Current::ChangedSinceSnapshot("deleted"),
            _ => Current::Gone,
        })
    }

    fn edit(
        &mut self,
        _ctx: &AccessContext<'_>,
        _head: &[u8],
        _rdba: u32,
        r: usize,
        changes: &mut dyn RowChanges,
    ) -> Result<RowEdit> {
        let cu = self.cu.as_ref().expect("candidates come from the CU at hand");
        let row = cu.row(r, &self.kinds, &mut self.spans, &mut self.piece)?;
        match changes.qualifies(&row)? {
            Verdict::Yes => changes.edit(&row),
            Verdict::No => Ok(RowEdit::Keep),
            Verdict::NotReady => Ok(RowEdit::NotReady),
        }
    }

    fn apply(
        &mut self,
        ctx: &AccessContext<'_>,
        xid: Xid,
        head: &mut WriteGuard<'_>,
        r: usize,
        index: usize,
        edit: RowEdit,
        changes: &mut dyn RowChanges,
        done: &mut Changed,
    ) -> Result<bool> {
        let rdba = head.rdba();
        let prev_itl = itl::get(head, index);
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
        point_itl(head, index, &prev_itl, xid, uba, 1);
        mark_deleted(head, r, index).map_err(|e| ctx.corrupt(rdba, e))?;
        let rowid = PieceAddr { rdba, slot: r as u16 };
        match edit {
            RowEdit::Keep | RowEdit::NotReady => unreachable!("only a decided change is applied"),
            RowEdit::Delete => {
                ctx.stats.add(Stat::RowsDeleted, 1);
                changes.changed(rowid);
            }
            RowEdit::Replace(piece) => {
                ctx.stats.add(Stat::RowsUpdated, 1);
                ctx.stats.add(Stat::HccRowsMovedOut, 1);
                done.moved_out.push(piece);
                changes.moved_out(rowid);
            }
        }
        Ok(true)
    }
}

//! The undo of a change to a compression unit's head: a row marked deleted (a DELETE, or
//! an UPDATE that moved the row out), or a whole CU loaded by a transaction's direct-path
//! insert. Applied to a CR clone of the head (a consistent read) or to the current head
//! (a rollback), through `txn::foreign`, like an index's records.
//!
//! ```text
//!  offset  size  field
//!  0       1     kind (5: a CU head; table records are 1 and 2, slot history 3, index 4)
//!  1       1     ITL slot (0-based) the change went through
//!  2       1     change: 1 row marked deleted, 2 CU loaded
//!  3       1     (pad)
//!  4       4     table data object id
//!  8       4     head block address
//!  12      24    the ITL slot before the change
//!  36      4     row number (a marked row; 0 for a load)
//! ```
//!
//! Applying: a marked row is unmarked (idempotent); a loaded CU has every row marked
//! deleted (its rows never existed for whoever must not see the load); then the ITL slot
//! is restored. A rollback applies a record only where the head's slot still points at
//! it, as a table block's rollback does at recovery: a record written just before a
//! crash whose change never reached the head is skipped, and so is one applied already.

use crate::error::Result;
use crate::stats::Stat;
use crate::storage::block::ITL_LEN;
use crate::storage::hcc::{mark_all_deleted, unmark_deleted};
use crate::storage::itl::{self, Itl};
use crate::txn::Uba;

/// The first byte of a CU head's undo record.
pub const CU_UNDO_KIND: u8 = 5;
const LEN: usize = 40;

/// What a record undoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CuChange {
    /// This row was marked deleted.
    RowMarked(u32),
    /// The CU was written by the transaction's direct-path load.
    Loaded,
}

/// The undo of one change to one CU head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuUndo {
    pub itl: u8,
    pub change: CuChange,
    pub object_id: u32,
    pub rdba: u32,
    pub prev_itl: Itl,
}

impl CuUndo {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        let (code, row) = match self.change {
            CuChange::RowMarked(row) => (1, row),
            CuChange::Loaded => (2, 0),
        };
        out.extend_from_slice(&[CU_UNDO_KIND, self.itl, code, 0]);
        out.extend_from_slice(&self.object_id.to_le_bytes());
        out.extend_from_slice(&self.rdba.to_le_bytes());
        out.extend_from_slice(&self.prev_itl.encode());
        out.extend_from_slice(&row.to_le_bytes());
    }

    /// Decodes a record body; the error says what is wrong with it.
    pub fn decode(body: &[u8]) -> std::result::Result<CuUndo, String> {
        if body.len() != LEN || body[0] != CU_UNDO_KIND {
            return Err(format!("a compression unit's undo record of {} bytes, not {LEN}", body.len()));
        }
        let u32_at = |o: usize| u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]);
        let change = match body[2] {
            1 => CuChange::RowMarked(u32_at(36)),
            2 => CuChange::Loaded,
            c => return Err(format!("unknown change {c} in a compression unit's undo record")),
        };
        Ok(CuUndo {
            itl: body[1],
            change,
            object_id: u32_at(4),
            rdba: u32_at(8),
            prev_itl: Itl::decode(&body[12..12 + ITL_LEN]),
        })
    }

    /// Applies the record to `head` (a CR clone or the current head block).
    pub fn apply(&self, head: &mut [u8]) -> std::result::Result<(), String> {
        if usize::from(self.itl) >= itl::itl_count(head) {
            return Err(format!("undo for ITL slot {} of a head with {} slots", self.itl + 1, itl::itl_count(head)));
        }
        match self.change {
            CuChange::RowMarked(row) => unmark_deleted(head, row as usize)?,
            CuChange::Loaded => mark_all_deleted(head)?,
        }
        itl::put(head, usize::from(self.itl), &self.prev_itl);
        Ok(())
    }
}

/// CU head records as the transaction layer sees them: registered at every open.
pub struct CuHeadUndo;

/// The one [`CuHeadUndo`] to register.
pub static CU_HEAD_UNDO: CuHeadUndo = CuHeadUndo;

impl crate::txn::foreign::ForeignUndo for CuHeadUndo {
    fn kind(&self) -> u8 {
        CU_UNDO_KIND
    }

    fn apply_to_clone(&self, body: &[u8], clone: &mut [u8]) -> std::result::Result<(), String> {
        CuUndo::decode(body)?.apply(clone)
    }

    fn roll_back(&self, ctx: &crate::txn::TxnContext<'_>, body: &[u8], at: Uba) -> Result<()> {
        let undo = CuUndo::decode(body).map_err(|r| ctx.corrupt(at.rdba, r))?;
        let mut head = ctx.cache.current_get(ctx.stats, undo.rdba)?;
        let slot = usize::from(undo.itl);
        if slot >= itl::itl_count(&head) || itl::get(&head, slot).uba != at {
            return Ok(());
        }
        undo.apply(&mut head).map_err(|r| ctx.corrupt(undo.rdba, r))?;
        crate::storage::block::set_scn(&mut head, ctx.scn);
        ctx.rows_changed(undo.rdba, &head);
        ctx.stats.add(Stat::RollbackChangesUndoRecordsApplied, 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::Xid;

    #[test]
    fn records_round_trip_and_bad_ones_are_refused() {
        let prev = Itl {
            xid: Xid { usn: 2, slot: 3, wrap: 4 },
            uba: Uba { rdba: 5, seq: 6, record: 7 },
            commit_scn: 8,
            flags: crate::storage::itl::ITL_COMMITTED,
            lock_count: 1,
        };
        for change in [CuChange::RowMarked(4_095), CuChange::Loaded] {
            let u = CuUndo { itl: 1, change, object_id: 77, rdba: 0x40_0123, prev_itl: prev };
            let mut out = Vec::new();
            u.encode(&mut out);
            assert_eq!(CuUndo::decode(&out), Ok(u));
            assert!(CuUndo::decode(&out[..LEN - 1]).is_err());
            let mut bad = out.clone();
            bad[2] = 9;
            assert!(CuUndo::decode(&bad).unwrap_err().contains("unknown change"));
        }
    }
}

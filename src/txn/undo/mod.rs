//! The undo tablespace: undo segments whose header blocks hold transaction tables, and
//! undo blocks holding undo records, all living in the buffer cache like table blocks.
//!
//! (Contract for the implementation; see each method.)

use super::{TxnStatus, Uba, Xid};
use crate::access::AccessContext;
use crate::error::Result;

/// One undo record as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRecord {
    /// The transaction that wrote it.
    pub xid: Xid,
    /// The previous record of the same transaction (`Uba::NONE` for its first).
    pub prev: Uba,
    /// What the caller appended.
    pub body: Vec<u8>,
}

/// One active transaction's use of undo, for `v$transaction`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnUsage {
    pub xid: Xid,
    /// SCN when the transaction began.
    pub start_scn: u64,
    /// Undo blocks and records used so far.
    pub used_ublk: u64,
    pub used_urec: u64,
}

/// The undo tablespace of an open database.
pub struct Undo {}

impl Undo {
    /// Starts a transaction: claims a free transaction-table slot (current-mode get of
    /// an undo segment header), marks it active and returns its xid.
    pub fn begin(&self, _ctx: &AccessContext<'_>) -> Result<Xid> {
        todo!()
    }

    /// Appends an undo record for active transaction `xid`, chained after its previous
    /// record; counts `undo change vector size`. Fails with `Error::UndoSpace` when no
    /// undo block can be had.
    pub fn append(&self, _ctx: &AccessContext<'_>, _xid: Xid, _body: &[u8]) -> Result<Uba> {
        todo!()
    }

    /// Reads the record at `uba` (a consistent get of its undo block). Fails with
    /// `Error::SnapshotTooOld` if the block has been reused since.
    pub fn read(&self, _ctx: &AccessContext<'_>, _uba: Uba) -> Result<UndoRecord> {
        todo!()
    }

    /// The newest record of active transaction `xid` (`Uba::NONE` if it wrote none).
    pub fn last_record(&self, _ctx: &AccessContext<'_>, _xid: Xid) -> Result<Uba> {
        todo!()
    }

    /// Makes `to` the newest record of active transaction `xid` again (after a rollback
    /// to a savepoint applied the records after it).
    pub fn truncate_chain(&self, _ctx: &AccessContext<'_>, _xid: Xid, _to: Uba) -> Result<()> {
        todo!()
    }

    /// Ends transaction `xid` at `scn` (commit, or the end of a rollback).
    pub fn commit(&self, _ctx: &AccessContext<'_>, _xid: Xid, _scn: u64) -> Result<()> {
        todo!()
    }

    /// What the transaction table says of `xid` (a consistent get of its segment header).
    pub fn status(&self, _ctx: &AccessContext<'_>, _xid: Xid) -> Result<TxnStatus> {
        todo!()
    }

    /// Active transactions and their undo use.
    pub fn transactions(&self) -> Vec<TxnUsage> {
        todo!()
    }
}

//! Access paths: how rows are reached in a table's segment.
//!
//! - [`full_scan`]: every block below the high-water mark, read with multiblock reads and
//!   visited with consistent gets; live rows go to a [`full_scan::ScanConsumer`] a block
//!   at a time ([`BlockBatch`], columns located), one by one to a row kernel
//!   ([`WalkedRow`], only the length bytes' positions recorded), and chained rows one by
//!   one ([`BlockRow`]); column values are decoded only when asked for.
//! - [`fast_walk`] and [`lanes`]: the row kernel's walk of a block's rows, one table
//!   lookup a column without bounds checks (rows near the block's end walked in a copy of
//!   its tail followed by zeros), and the same for eight rows at once with AVX2 gathers.
//! - [`by_rowid`]: rows fetched at the rowids an index gave, the block of the last one
//!   kept pinned (`buffer is pinned count`).
//! - [`heap`]: appending rows (chaining those too large for a block) for a transaction,
//!   and undoing the appends of a failed statement.
//! - [`modify`]: UPDATE and DELETE: rows found as of the statement's snapshot, locked
//!   and changed in current mode, migrated when they outgrow their block.
//! - [`segments`]: reading a segment's header; creating, truncating and dropping a
//!   table's segment.
//!
//! Everything here reads and writes blocks only through the buffer cache, and counts into
//! the statistics of the session it works for. Every change to the rows of a table block
//! (an insert handed to its transaction, an UPDATE or DELETE, a rollback of either) ends
//! with `AccessContext::rows_changed` while the block is still held exclusively.

pub mod by_rowid;
pub mod fast_walk;
pub mod full_scan;
pub mod heap;
pub mod lanes;
pub mod modify;
pub mod row_view;
pub mod segments;

pub use row_view::{BlockBatch, BlockRow, RowAccess, WalkedRow};

use crate::db::DbInner;
use crate::error::Error;
use crate::stats::SessionStats;
use crate::storage::block;

/// What a consumer of rows tells their producer after each row or batch: a scan, an
/// index walk and every stage of the pipeline stop early on `Stop` (a ROWNUM limit met,
/// a FETCH FIRST filled, an error recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// What an access path needs from the session it works for.
pub struct AccessContext<'a> {
    pub db: &'a DbInner,
    pub stats: &'a SessionStats,
    /// `db_file_multiblock_read_count` for this session.
    pub multiblock_read_count: u32,
    /// SCN stamped into blocks this statement changes.
    pub scn: u64,
    /// The snapshot this statement reads as of, and its session's transaction.
    pub reader: crate::txn::cr::Reader,
}

impl AccessContext<'_> {
    /// Checks that `bytes`, block `rdba` below the high-water mark of `table`, is one of
    /// the table's data blocks with a sound layout: done before its ITL or rows are read.
    pub(crate) fn check_table_block(
        &self,
        table: &crate::catalog::TableDef,
        rdba: u32,
        bytes: &[u8],
    ) -> crate::error::Result<()> {
        let header = block::BlockHeader(bytes);
        if header.block_type() != Some(block::BlockType::TableData) || header.object_id() != table.object_id {
            return Err(self.corrupt(
                rdba,
                format!(
                    "block below the high-water mark of {} is not one of its data blocks (type {:?}, object {}); the table may have been dropped or truncated during the scan",
                    table.name,
                    header.block_type(),
                    header.object_id()
                ),
            ));
        }
        block::DataBlock(bytes).check_layout().map_err(|r| self.corrupt(rdba, r))
    }

    /// A corruption error for block `rdba` of the database's datafiles.
    /// The rows of table block `rdba` (`bytes`, still held exclusively) changed: its CR
    /// clones stop serving snapshots taken from now on, and the column store takes the
    /// block's rows from the buffer cache from now on. Journaled while the block is held,
    /// so a population reads it either before the change (and gets the journal entry) or
    /// after it (and sees the change in the block's ITL).
    pub(crate) fn rows_changed(&self, rdba: u32, bytes: &[u8]) {
        self.db.cache.cap_cr_versions(rdba, self.db.current_scn() + 1);
        crate::inmemory::populate::journal(self.db, block::BlockHeader(bytes).object_id(), rdba);
    }

    pub fn corrupt(&self, rdba: u32, reason: impl Into<String>) -> Error {
        let n = block::rdba_file(rdba);
        let file = self.db.datafiles.iter().find(|f| f.number() == n).map(|f| f.path().to_owned()).unwrap_or_default();
        Error::Corrupt { file, block: Some(block::rdba_block(rdba)), reason: reason.into() }
    }
}

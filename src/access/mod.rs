//! Access paths: how rows are reached in a table's segment.
//!
//! - [`full_scan`]: every block below the high-water mark, read with multiblock reads and
//!   visited with consistent gets; live rows go to a [`full_scan::ScanConsumer`] a block
//!   at a time ([`BlockBatch`], columns located), one by one to a row kernel
//!   ([`WalkedRow`], only the length bytes' positions recorded), and chained rows one by
//!   one ([`BlockRow`]); column values are decoded only when asked for.
//! - [`fast_walk`] and [`lanes`]: the row kernel's walk of a block's rows, one table
//!   lookup a column without bounds checks (rows near the block's end walked with each
//!   position checked), and the same for eight rows at once with AVX2 gathers.
//! - [`prefetch`]: the next block's lines prefetched a few a row while the current block
//!   is walked, by full scans, the fast walk and rows fetched by rowid.
//! - [`by_rowid`]: rows fetched at the rowids an index gave, the block of the last one
//!   kept pinned (`buffer is pinned count`).
//! - [`heap`]: appending rows (chaining those too large for a block) for a transaction,
//!   and undoing the appends of a failed statement.
//! - [`load`]: the one way rows are loaded into a segment, conventional or direct-path,
//!   in the table's format (row blocks, or a compressed table's units through the
//!   column store's codec).
//! - [`change`]: UPDATE and DELETE, one protocol for both formats a segment holds: rows
//!   found as of the statement's snapshot, locked and changed in current mode; a row
//!   block's rows in place (migrated when they outgrow their block), a compression
//!   unit's rows marked deleted in its head ([`cu::undo`] undoes that).
//! - compression units (CUs) are read through [`AccessContext::read_cu`] and
//!   [`AccessContext::decode_cu`], which the column store that decodes them supplies
//!   ([`cu::CuCodec`]), so that a CU's rows are reached on every path (full scan,
//!   fetch by rowid, change, load) without this layer knowing its encodings ([`cu`]); a
//!   full scan gathers a CU's pieces as it meets them ([`cu::scan`]).
//! - [`row_at`]: a live row of a row block read by its address.
//! - [`segments`]: reading a segment's header; creating, truncating and dropping a
//!   table's segment.
//! - `fixture` (tests only): the access context of a session of `txn::fixture`, for the
//!   tests of the layers from here up.
//!
//! Everything here reads and writes blocks only through the buffer cache, and counts into
//! the statistics of the session it works for. Every change to the rows of a table block
//! (an insert handed to its transaction, an UPDATE or DELETE, a rollback of either) ends
//! with `TxnContext::rows_changed` while the block is still held exclusively.

pub mod by_rowid;
pub mod fast_walk;
#[cfg(test)]
pub mod fixture;
pub mod full_scan;
pub mod heap;
pub mod change;
pub mod cu;
pub mod lanes;
pub mod load;
pub mod prefetch;
pub mod row_at;
pub mod row_view;
pub mod segments;

pub use row_view::{BlockBatch, BlockRow, RowAccess, WalkedRow};

use crate::error::Error;
use crate::storage::block;
use crate::txn::TxnContext;

/// What a consumer of rows tells their producer after each row or batch: a scan, an
/// index walk and every stage of the pipeline stop early on `Stop` (a ROWNUM limit met,
/// a FETCH FIRST filled, an error recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// What an access path needs from the session it works for: what transactions need
/// ([`TxnContext`]: the cache, the space, undo, the enqueues and locks, the statement's
/// statistics, SCN and snapshot; reached through `Deref`), and how many blocks one
/// multiblock read asks for.
#[derive(Clone, Copy)]
pub struct AccessContext<'a> {
    pub txn: TxnContext<'a>,
    /// `db_file_multiblock_read_count` for this session.
    pub multiblock_read_count: u32,
    /// How a compression unit is read and decompressed (the column store's codec);
    /// `None` where no column store is at hand, and a CU met is then an error saying so.
    pub cus: Option<cu::CuCodec>,
}

impl<'a> std::ops::Deref for AccessContext<'a> {
    type Target = TxnContext<'a>;

    #[inline]
    fn deref(&self) -> &TxnContext<'a> {
        &self.txn
    }
}

impl AccessContext<'_> {
    /// Checks that `bytes`, block `rdba` below the high-water mark of `table`, is one of
    /// the table's data blocks with a sound layout: done before its ITL or rows are read.
    /// Inlined: an index path checks a block for each row it fetches from another one.
    #[inline(always)]
    pub(crate) fn check_table_block(
        &self,
        table: &crate::catalog::TableDef,
        rdba: u32,
        bytes: &[u8],
    ) -> crate::error::Result<()> {
        self.check_block_of(table, rdba, bytes, false)
    }

    /// Checks a block of `table`'s segment that may also be a block of one of its
    /// compression units (a CU head or piece of the table, which is compressed), else as
    /// [`AccessContext::check_table_block`].
    #[inline]
    pub fn check_segment_block(
        &self,
        table: &crate::catalog::TableDef,
        rdba: u32,
        bytes: &[u8],
    ) -> crate::error::Result<()> {
        self.check_block_of(table, rdba, bytes, table.compression.is_some())
    }

    /// The one check of a block of `table`'s segment: a data block of the table with a
    /// sound layout, or, where `units` allows, a block of one of its compression units.
    /// Inlined into the full scan's loop, where a row block is the common case and is
    /// tested first.
    #[inline(always)]
    fn check_block_of(
        &self,
        table: &crate::catalog::TableDef,
        rdba: u32,
        bytes: &[u8],
        units: bool,
    ) -> crate::error::Result<()> {
        let header = block::BlockHeader(bytes);
        match header.block_type() {
            Some(block::BlockType::TableData) if header.object_id() == table.object_id => {
                block::DataBlock(bytes).check_layout().map_err(|r| self.corrupt(rdba, r))
            }
            Some(block::BlockType::CuHead | block::BlockType::CuPiece)
                if units && header.object_id() == table.object_id =>
            {
                Ok(())
            }
            _ => Err(self.not_a_table_block(table, rdba, header)),
        }
    }

    /// Reads and decompresses the compression unit of `table` whose head block `rdba` is
    /// `head` (the version the caller sees), through [`AccessContext::cus`].
    pub fn read_cu(
        &self,
        table: &crate::catalog::TableDef,
        rdba: u32,
        head: &[u8],
    ) -> crate::error::Result<Box<dyn cu::DecodedCu>> {
        (self.codec(table, rdba)?.read)(self, table, rdba, head)
    }

    /// Decompresses the columns a scan gathered of `cu`, a compression unit of `table`,
    /// through [`AccessContext::cus`].
    pub fn decode_cu(
        &self,
        table: &crate::catalog::TableDef,
        cu: &cu::scan::ScannedCu<'_>,
    ) -> crate::error::Result<Box<dyn cu::DecodedCu>> {
        (self.codec(table, cu.rdba)?.decode)(self, table, cu)
    }

    fn codec(&self, table: &crate::catalog::TableDef, rdba: u32) -> crate::error::Result<cu::CuCodec> {
        self.cus.ok_or_else(|| Error::Unsupported {
            construct: format!("reading the compression unit at {rdba:#x} of {} without a column store", table.name),
            position: None,
        })
    }

    /// The error of a block below the high-water mark of `table` that is not one of its
    /// data blocks: out of the check's line, which runs for every block read.
    #[cold]
    #[inline(never)]
    fn not_a_table_block(&self, table: &crate::catalog::TableDef, rdba: u32, header: block::BlockHeader<'_>) -> Error {
        self.corrupt(
            rdba,
            format!(
                "block below the high-water mark of {} is not one of its data blocks (type {:?}, object {}); the table may have been dropped or truncated during the scan",
                table.name,
                header.block_type(),
                header.object_id()
            ),
        )
    }
}

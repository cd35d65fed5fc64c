//! Compression units (CUs), the second format of a compressed table's segment, as this
//! layer reaches them: their part of the segment seam, beside the row blocks'.
//!
//! - this file: what this layer needs of a decompressed CU ([`DecodedCu`]) and how one is
//!   read and written ([`CuCodec`]: from its head, from the pieces a scan gathered, by a
//!   direct-path load). Decompressing and compressing are the column store's work (a
//!   layer above, `inmemory::hcc`), so the instance hands the column store's codec to
//!   every [`AccessContext`] (`AccessContext::read_cu`, `AccessContext::decode_cu`,
//!   `access::load`). A fetch by rowid, an UPDATE or DELETE, a scan that takes rows one
//!   by one and a load reach a CU through it;
//! - [`scan`]: the CUs a full scan meets, gathered piece by piece;
//! - [`undo`]: the undo record of a change to a CU's head (a row marked deleted, a CU
//!   loaded by a transaction).
//!
//! The CU's block layout is `storage::hcc`'s; the change protocol's CU format is
//! `access::change`'s (`change/cu.rs`).
//!
//! Invariant: a decompressed CU's rows carry the rowid (head address, row number) an
//! index entry keeps; its deleted marks are those of the head version it was read or
//! last refreshed with.

pub mod scan;
pub mod undo;

use crate::access::AccessContext;
use crate::access::load::SegmentLoad;
use crate::access::row_view::BlockRow;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::storage::hcc::HccLevel;
use crate::storage::row::ColumnSpan;
use crate::txn::Xid;
use crate::types::encoding::PayloadKind;
use scan::ScannedCu;

/// A compression unit decompressed whole: what this layer needs of the column store's
/// `CuRows`, which sits above it.
pub trait DecodedCu {
    /// Block address of the CU's head.
    fn rdba(&self) -> u32;
    /// Rows of the CU, deleted ones included.
    fn rows(&self) -> usize;
    /// Block addresses of the CU's pieces, the head first.
    fn pieces(&self) -> &[u32];
    /// Whether row `row` is marked deleted in the head version last read or refreshed.
    fn is_deleted(&self, row: usize) -> bool;
    /// Takes the deleted-row marks of `head`, another version of the CU's head block.
    fn refresh_marks(&mut self, ctx: &AccessContext<'_>, head: &[u8]) -> Result<()>;
    /// Row `row` as a whole-row piece in `piece` of its first `kinds.len()` columns (each
    /// decompressed), located as the row (head, `row`) with the columns `kinds` describes.
    fn row<'b>(
        &self,
        row: usize,
        kinds: &'b [PayloadKind],
        spans: &'b mut [ColumnSpan],
        piece: &'b mut Vec<u8>,
    ) -> Result<BlockRow<'b>>;
}

/// Reads and decompresses the CU of `table` whose head block `rdba` is `head` (the version
/// the reader sees), its pieces through the buffer cache.
pub type ReadCu = fn(&AccessContext<'_>, &TableDef, u32, &[u8]) -> Result<Box<dyn DecodedCu>>;

/// Decompresses the columns a scan gathered of a CU of `table` it met.
pub type DecodeCu = fn(&AccessContext<'_>, &TableDef, &ScannedCu<'_>) -> Result<Box<dyn DecodedCu>>;

/// Opens a direct-path load of `table` into compression units at the level given: inside
/// the transaction given (one undo record a unit), or with none into a segment nobody
/// reaches before the load ends (no undo). See [`crate::access::load`].
pub type LoadCu =
    for<'a> fn(&'a AccessContext<'a>, &'a TableDef, HccLevel, Option<Xid>) -> Result<Box<dyn SegmentLoad + 'a>>;

/// How compression units are read, decompressed and written: the column store's codec.
#[derive(Clone, Copy)]
pub struct CuCodec {
    pub read: ReadCu,
    pub decode: DecodeCu,
    pub load: LoadCu,
}

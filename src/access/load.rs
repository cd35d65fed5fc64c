//! Loading rows into a table's segment, in whatever format it takes them: the one seam
//! INSERT, INSERT ... SELECT, CREATE TABLE ... AS SELECT, ALTER TABLE ... MOVE, COPY and
//! an UPDATE's rows moved out of their compression units write through. The caller says
//! how the statement loads ([`LoadPath`]); the table's format decides what is written:
//!
//! ```text
//!  Conventional (INSERT, COPY)        ─► rows into row blocks (heap::Inserter), any table
//!  Direct (INSERT /*+ APPEND */)      ─► a compressed table: compression units above the
//!                                        high-water mark, one undo record a unit
//!                                        a row table: rows into row blocks, as Conventional
//!  NewSegment (CTAS, MOVE's copy)     ─► as Direct, but a compressed table's units write
//!                                        no undo: nobody sees the segment before the
//!                                        statement ends
//! ```
//!
//! A load runs inside a transaction (the caller's `xid`) whatever the path: the row
//! format needs one for its row locks, and the caller commits a new segment's load before
//! the dictionary names it. Units are written by the column store's codec
//! ([`super::cu::CuCodec::load`]), which sits above this layer.
//!
//! Invariant: nothing a load writes is visible to another transaction before the caller's
//! transaction commits, nor reachable at all if the load fails ([`SegmentLoad::rollback`]
//! takes back what it placed; a unit load's blocks stay above the high-water mark).

use super::AccessContext;
use super::heap::Inserter;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::storage::row::PieceAddr;
use crate::txn::Xid;
use crate::types::Datum;

/// How a statement loads its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadPath {
    /// Row by row into row blocks, whatever the table's format (INSERT, COPY).
    Conventional,
    /// A direct-path load in the table's own format (`INSERT /*+ APPEND */`).
    Direct,
    /// A direct-path load into a segment no one else can reach until the statement ends
    /// (CREATE TABLE ... AS SELECT, ALTER TABLE ... MOVE).
    NewSegment,
}

/// A load under way. Values handed over are already coerced to their columns' types.
pub trait SegmentLoad {
    /// Whether the load takes rows the caller encoded in the row format
    /// ([`SegmentLoad::insert_encoded`]); when not, rows come by [`SegmentLoad::insert`].
    fn takes_encoded(&self) -> bool;
    /// Adds a row, one value a table column.
    fn insert(&mut self, values: &[Datum<'_>]) -> Result<()>;
    /// Adds a row encoded as a whole single-piece row (`storage::row::encode_whole_row`).
    fn insert_encoded(&mut self, image: &[u8]) -> Result<()>;
    /// Keeps the rowid of every row added from now on (for the table's indexes).
    fn track_rowids(&mut self);
    /// Ends the load: the rows are part of the segment, to the loading transaction.
    fn finish(self: Box<Self>) -> Result<LoadedRows>;
    /// Takes back what a failed load placed.
    fn rollback(self: Box<Self>) -> Result<()>;
}

/// What a load wrote.
#[derive(Debug, Default)]
pub struct LoadedRows {
    pub rows: u64,
    /// Blocks the transaction must clean out at commit (those whose ITL names it).
    pub touched: Vec<u32>,
    /// The rowids kept since [`SegmentLoad::track_rowids`], in load order.
    pub rowids: Vec<PieceAddr>,
}

/// Opens a load of `table` by `path` for transaction `xid` (`fixed_snapshot`: its
/// snapshot if it is serializable): in the table's format, as the module's doc shows.
pub fn open<'a>(
    ctx: &'a AccessContext<'a>,
    table: &'a TableDef,
    path: LoadPath,
    xid: Xid,
    fixed_snapshot: Option<u64>,
) -> Result<Box<dyn SegmentLoad + 'a>> {
    match (table.compression, path) {
        (Some(level), LoadPath::Direct | LoadPath::NewSegment) => {
            let codec = ctx.cus.ok_or_else(|| Error::Unsupported {
                construct: format!("a direct-path load into {} without a column store", table.name),
                position: None,
            })?;
            let in_transaction = (path == LoadPath::Direct).then_some(xid);
            (codec.load)(ctx, table, level, in_transaction)
        }
        _ => Ok(Box::new(Inserter::new(ctx, table, xid, fixed_snapshot)?)),
    }
}

impl SegmentLoad for Inserter<'_> {
    fn takes_encoded(&self) -> bool {
        true
    }

    fn insert(&mut self, values: &[Datum<'_>]) -> Result<()> {
        Inserter::insert(self, values)
    }

    fn insert_encoded(&mut self, image: &[u8]) -> Result<()> {
        Inserter::insert_encoded(self, image)
    }

    fn track_rowids(&mut self) {
        Inserter::track_rowids(self)
    }

    fn finish(mut self: Box<Self>) -> Result<LoadedRows> {
        let rowids = self.take_rowids();
        let (rows, touched) = Inserter::finish(*self)?;
        Ok(LoadedRows { rows, touched, rowids })
    }

    fn rollback(self: Box<Self>) -> Result<()> {
        Inserter::rollback(*self)
    }
}

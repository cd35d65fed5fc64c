//! Transactions: the system change number, transaction ids, undo, row locks and
//! consistent reads.
//!
//! - [`Xid`] names a transaction by the undo segment and transaction-table slot it
//!   occupies (and the slot's wrap, its incarnation); [`Uba`] addresses one undo record.
//!   Both are on-disk formats, defined in `storage::ids` and re-exported here.
//! - [`foreign`]: undo records written by a layer above (index entries), applied
//!   through a trait that layer implements.
//! - [`undo`]: the undo tablespace: undo segments, each a header block holding a
//!   transaction table and extents of undo blocks, listed in an extent map; it grows
//!   on demand up to a maximum, all read and written through the buffer cache like
//!   table blocks.
//! - [`change`]: the undo record of a change to a table block, how it is applied, and
//!   how a transaction takes an ITL slot (in a table block or an index leaf).
//! - [`cr`]: consistent reads: the version of a block a statement must see (no work,
//!   delayed cleanout, a cached or a new CR clone).
//! - [`enqueue`]: TX enqueues: waits for row locks and deadlock detection.
//! - [`transaction`]: a session's transaction: savepoints, commit (with commit cleanout)
//!   and rollback.
//! - [`clock`]: the SCN and the lock that publishes the ends of transactions in order.
//! - [`locks`]: the table and index locks that are not row locks.
//! - [`context`]: what all of these need from the database ([`TxnContext`]), built by
//!   the database for each statement; undo takes the part it needs
//!   ([`undo::UndoContext`]), which the context holds.
//! - [`files`]: the first datafile and the undo tablespace, created with the control
//!   file that lists them and opened into the cache, by the database and by `fixture`,
//!   which gives the tests of the layers from here up a cache, undo and transactions
//!   without a database around them.
//!
//! A change to a table block goes: take (or reuse) an ITL slot for the transaction,
//! write an undo record holding the before-image and the ITL slot's previous contents,
//! point the ITL slot at that record, change the row and stamp its lock byte with the
//! slot. Commit takes an SCN and marks the transaction-table slot; the ITL slots are
//! stamped later ("cleaned out") by whoever visits the block next.
//!
//! Invariants: a row changed by an active transaction is locked through an ITL slot
//! whose undo chain undoes the change; a transaction's end is recorded in its
//! transaction table before its SCN becomes the current SCN, and a reader of the table
//! that finds an end not yet current waits until it is (`Undo::status`).

pub mod change;
pub mod clock;
pub mod context;
pub mod cr;
pub mod enqueue;
pub mod files;
#[cfg(test)]
pub mod fixture;
pub mod foreign;
pub mod locks;
pub mod transaction;
pub mod undo;

pub use crate::storage::ids::{Uba, Xid};
pub use context::{Reader, RowObserver, TxnContext};

/// What a transaction table says of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    /// Not ended: its changes are uncommitted.
    Active,
    /// Ended at `scn` (a rolled-back transaction ends like a committed one, its changes
    /// having been undone first). `upper_bound`: the slot has been reused since, so only
    /// an upper bound of the commit SCN is known.
    Committed { scn: u64, upper_bound: bool },
}

//! The on-disk ids of transactions and undo records: what an ITL slot, a row's lock
//! and an undo chain store. They are defined here, below every layer that stores or
//! reads them (blocks, the buffer cache's CR versions, the transaction layer that hands
//! them out), so that no lower layer imports the transaction layer for its formats.
//!
//! Invariants: a zero undo segment number is "no transaction" and a zero block address
//! "no undo record"; their encodings in blocks are `storage::itl`'s.

/// A transaction id: undo segment number (1-based; 0 means "no transaction"), slot in
/// that segment's transaction table, and the slot's wrap (incremented each time the slot
/// is reused, so an old xid never names a newer transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Xid {
    pub usn: u16,
    pub slot: u16,
    pub wrap: u32,
}

impl Xid {
    /// The null xid of a free ITL slot.
    pub const NONE: Xid = Xid { usn: 0, slot: 0, wrap: 0 };

    pub fn is_none(&self) -> bool {
        self.usn == 0
    }
}

impl std::fmt::Display for Xid {
    /// Oracle's notation: `usn.slot.wrap`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.usn, self.slot, self.wrap)
    }
}

/// An undo record address: the undo block, the block's sequence (incremented each time
/// the block is reused, so an address into overwritten undo is detected), and the record
/// index inside the block. A zero block address means "no record".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Uba {
    pub rdba: u32,
    pub seq: u16,
    pub record: u8,
}

impl Uba {
    pub const NONE: Uba = Uba { rdba: 0, seq: 0, record: 0 };

    pub fn is_none(&self) -> bool {
        self.rdba == 0
    }
}

//! Consistent-read versions of a block: clones of the current buffer rolled back with
//! undo, kept in the block's hash chain beside the current version.
//!
//! (Contract for the implementation; see each method.)

use super::{BufferCache, ReadGuard, WriteGuard};
use crate::error::Result;
use crate::stats::SessionStats;
use crate::txn::Xid;
use smallvec::SmallVec;

/// Most versions of one block in the cache: the current one and up to five clones, as
/// Oracle's `_db_block_max_cr_dba`.
pub const MAX_VERSIONS: usize = 6;

/// Which readers a CR clone serves; set by the transaction layer when it builds the
/// clone, read back by it when a later reader considers reusing the clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrVersion {
    /// The snapshot SCN the clone was rolled back to.
    pub as_of: u64,
    /// The clone serves snapshots below this SCN only (lowered when the current block
    /// changes after the clone was made).
    pub valid_until: u64,
    /// Transactions whose uncommitted changes were rolled back in the clone: once one of
    /// them commits at or before a reader's snapshot, the clone is wrong for that reader.
    pub pending: SmallVec<[Xid; 2]>,
    /// A clone that keeps a transaction's own uncommitted changes serves only it.
    pub owner: Option<Xid>,
}

impl BufferCache {
    /// Copies `current` (the bytes of the current version of `rdba`, which the caller
    /// holds) into a free buffer registered as a CR version of `rdba`, replacing the
    /// oldest clone when the block already has [`MAX_VERSIONS`] versions. The clone comes
    /// back exclusively locked for undo to be applied; it is never dirty and never
    /// written to disk.
    pub fn clone_for_cr(
        &self,
        _stats: &SessionStats,
        _rdba: u32,
        _current: &[u8],
        _version: CrVersion,
    ) -> Result<WriteGuard<'_>> {
        todo!()
    }

    /// A CR clone of `rdba` for which `usable` holds, share-locked; `None` if there is
    /// none. Counts nothing: the caller counts its consistent get.
    pub fn find_cr(
        &self,
        _stats: &SessionStats,
        _rdba: u32,
        _usable: impl Fn(&CrVersion) -> bool,
    ) -> Option<ReadGuard<'_>> {
        todo!()
    }

    /// Lowers `valid_until` of every clone of `rdba` to `scn`: the current block changed
    /// and readers at `scn` or later must see that change.
    pub fn cap_cr_versions(&self, _rdba: u32, _scn: u64) {
        todo!()
    }

    /// Versions of `rdba` in the cache, current one included (for tests and views).
    pub fn version_count(&self, _rdba: u32) -> usize {
        todo!()
    }

    /// The current version of `rdba`, exclusively locked and dirtied, counting no get:
    /// for a block cleanout made on behalf of a consistent read, which counts its own
    /// statistics.
    pub fn cleanout_get(&self, _stats: &SessionStats, _rdba: u32) -> Result<WriteGuard<'_>> {
        todo!()
    }
}

impl<'c> WriteGuard<'c> {
    /// Turns exclusive access into shared access without letting a writer in between.
    pub fn downgrade(self) -> ReadGuard<'c> {
        todo!()
    }
}

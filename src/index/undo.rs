//! The undo of a change to a leaf entry, and how it is applied: to a CR clone of a leaf
//! (a consistent read) or to the current leaf (rollback).
//!
//! ```text
//!  offset  size  field
//!  0       1     kind (4: index entry; table records are 1 and 2, slot history 3)
//!  1       1     ITL slot (0-based) the change went through
//!  2       1     prior state: 0 absent, 1 present
//!  3       1     prior flags
//!  4       1     prior lock byte
//!  5       1     (pad)
//!  6       4     index data object id
//!  10      4     root block address
//!  14      4     leaf the change was made in
//!  18      24    the ITL slot before the change
//!  42      2     full key length
//!  44      ..    full key (key, then rowid)
//! ```
//!
//! A record names its entry by full key, not by position: a split may have moved the
//! entry to another leaf since. Applying is idempotent and confined to the leaf's range:
//! "absent before" removes the entry if the leaf holds it; "present before" restores its
//! flags and lock byte if the leaf holds it, and puts it back only if it is within the
//! leaf's fences. A split copies the ITL slots to the new leaf, so both halves follow the
//! same undo chains and each applies what concerns its own entries.
//!
//! A rollback restores an entry's lock byte only where it names the rolling-back
//! transaction's own slot ([`EntryUndo::roll_back_leaf`]), as a table row's; the leaf it
//! applies the record to is found through the tree (module `rollback`).

use super::block::{IndexBlock, IndexBlockMut, LEAF_ENTRY_OVERHEAD, ROWID_LEN};
use crate::error::Result;
use crate::storage::block::ITL_LEN;
use crate::storage::itl::{self, Itl};

/// The first byte of an index undo record.
pub const INDEX_UNDO_KIND: u8 = 4;
const HEADER: usize = 44;

/// The undo of one change to one leaf entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryUndo<'a> {
    pub itl: u8,
    /// Flags and lock byte of the entry before the change; `None` if it was absent.
    pub prior: Option<(u8, u8)>,
    pub object_id: u32,
    pub root: u32,
    pub leaf: u32,
    pub prev_itl: Itl,
    pub full_key: &'a [u8],
}

impl<'a> EntryUndo<'a> {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        let (present, flags, lock) = match self.prior {
            Some((f, l)) => (1, f, l),
            None => (0, 0, 0),
        };
        out.extend_from_slice(&[INDEX_UNDO_KIND, self.itl, present, flags, lock, 0]);
        out.extend_from_slice(&self.object_id.to_le_bytes());
        out.extend_from_slice(&self.root.to_le_bytes());
        out.extend_from_slice(&self.leaf.to_le_bytes());
        out.extend_from_slice(&self.prev_itl.encode());
        out.extend_from_slice(&(self.full_key.len() as u16).to_le_bytes());
        out.extend_from_slice(self.full_key);
    }

    /// Decodes a record body; the error says what is wrong with it.
    pub fn decode(body: &'a [u8]) -> Result<EntryUndo<'a>, String> {
        if body.len() < HEADER || body[0] != INDEX_UNDO_KIND {
            return Err(format!("index undo record of {} bytes is shorter than its header", body.len()));
        }
        let u32_at = |o: usize| u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]);
        let len = u16::from_le_bytes([body[42], body[43]]) as usize;
        if body.len() != HEADER + len || len < ROWID_LEN {
            return Err(format!("index undo record: key of {len} bytes in a record of {} bytes", body.len()));
        }
        Ok(EntryUndo {
            itl: body[1],
            prior: (body[2] == 1).then_some((body[3], body[4])),
            object_id: u32_at(6),
            root: u32_at(10),
            leaf: u32_at(14),
            prev_itl: Itl::decode(&body[18..18 + ITL_LEN]),
            full_key: &body[HEADER..],
        })
    }

    /// Applies the record to `leaf` (checked): the entry as it was, then the ITL slot.
    pub fn apply(&self, leaf: &mut [u8]) -> Result<(), String> {
        self.apply_locking(leaf, |lock| lock)
    }

    /// Applies this record to the current leaf in a rollback: as [`EntryUndo::apply`],
    /// but the restored entry's lock byte is cleared where it names another
    /// transaction's ITL slot ([`crate::txn::change::restored_lock`], the rule a table
    /// row's rollback follows). A cleared byte on a deleted entry reads as a delete
    /// committed.
    pub fn roll_back_leaf(&self, leaf: &mut [u8]) -> Result<(), String> {
        self.apply_locking(leaf, |lock| crate::txn::change::restored_lock(lock, self.itl))
    }

    /// The entry as it was, its lock byte as `restore` makes it, then the ITL slot.
    fn apply_locking(&self, leaf: &mut [u8], restore: impl Fn(u8) -> u8) -> Result<(), String> {
        if usize::from(self.itl) >= itl::itl_count(leaf) {
            return Err(format!("undo for ITL slot {} of a leaf with {} slots", self.itl + 1, itl::itl_count(leaf)));
        }
        let view = IndexBlock(leaf);
        let full = self.full_key;
        let pos = view.position(|k| k < full);
        let found = pos < view.count() && view.full_key(pos) == full;
        match (self.prior, found) {
            (None, true) => IndexBlockMut(leaf).remove_entry(pos),
            (Some((flags, lock)), true) => IndexBlockMut(leaf).set_flags(pos, flags, restore(lock)),
            (Some((flags, lock)), false) if within_fences(view, full) => {
                put_back(leaf, pos, flags, restore(lock), full)?
            }
            _ => {}
        }
        itl::put(leaf, usize::from(self.itl), &self.prev_itl);
        Ok(())
    }
}

fn within_fences(view: IndexBlock<'_>, full: &[u8]) -> bool {
    view.low_fence().is_none_or(|low| low <= full) && view.high_fence().is_none_or(|high| full < high)
}

/// Puts a removed entry back at `pos`.
fn put_back(leaf: &mut [u8], pos: usize, flags: u8, lock: u8, full: &[u8]) -> Result<(), String> {
    let key_len = full.len() - ROWID_LEN;
    let mut entry = Vec::with_capacity(full.len() + LEAF_ENTRY_OVERHEAD);
    entry.extend_from_slice(&[flags, lock]);
    entry.extend_from_slice(&(key_len as u16).to_le_bytes());
    entry.extend_from_slice(full);
    let mut block = IndexBlockMut(leaf);
    if block.insert_entry(pos, &entry) {
        return Ok(());
    }
    block.compact();
    if block.insert_entry(pos, &entry) {
        Ok(())
    } else {
        Err("an index entry removed since no longer fits its leaf".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::{Uba, Xid};

    #[test]
    fn records_round_trip() {
        let prev =
            Itl { xid: Xid { usn: 1, slot: 2, wrap: 3 }, uba: Uba { rdba: 9, seq: 1, record: 2 }, ..Itl::default() };
        for prior in [None, Some((0x10, 2))] {
            let u =
                EntryUndo { itl: 1, prior, object_id: 7, root: 11, leaf: 12, prev_itl: prev, full_key: b"abc123456" };
            let mut out = Vec::new();
            u.encode(&mut out);
            assert_eq!(out[0], INDEX_UNDO_KIND);
            assert_eq!(EntryUndo::decode(&out).unwrap(), u);
        }
    }
}

//! The in-memory run of a sort: keys packed one after another in one arena (no allocation
//! per key) and a fixed-width entry per key that holds what most comparisons need.
//!
//! ```text
//!  arena:    [k0 bytes ...][k1 bytes][k2 bytes .......] ...       (push order)
//!  entries:  SortEntry { prefix, tie, offset, len }  24 bytes each (module entry)
//! ```
//!
//! Invariants: `entries[i]` names `arena[offset..offset + len]`; `in_order` is true only
//! if the entries, as pushed, are already in order (checked one pair at a time as they
//! come, so a table read in key order is never sorted again); the run's memory (arena,
//! entries and the radix sort's scratch) stays within the bound its owner gives.

use super::entry::{ENTRY_BYTES, SortEntry};
use super::radix;
use crate::error::Result;
use crate::index::block::RowId;
use std::cmp::Ordering;

/// Keys and entries of one run, in push order until [`MemoryRun::sort`].
#[derive(Debug, Default)]
pub(super) struct MemoryRun {
    arena: Vec<u8>,
    entries: Vec<SortEntry>,
    /// Whether the entries pushed so far are in order.
    in_order: bool,
}

impl MemoryRun {
    pub fn new() -> MemoryRun {
        MemoryRun { in_order: true, ..Default::default() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes the run holds: its keys and, per entry, the entry and its scratch slot.
    pub fn bytes(&self) -> usize {
        self.arena.len() + self.entries.len() * ENTRY_BYTES
    }

    /// Appends the key `encode` writes to the arena, with `rowid`; `encode` returns false
    /// for a row that has no entry (then nothing is added). Returns the key's length when
    /// added. `room` is how many more bytes the run may take: vectors grow within it.
    pub fn push_with(
        &mut self,
        rowid: RowId,
        room: usize,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<bool>,
    ) -> Result<Option<usize>> {
        let start = self.arena.len();
        if !encode(&mut self.arena)? {
            self.arena.truncate(start);
            return Ok(None);
        }
        let entry = SortEntry::new(&self.arena[start..], start, rowid);
        if self.in_order
            && let Some(last) = self.entries.last()
        {
            self.in_order = last.cmp_in(&entry, &self.arena) != Ordering::Greater;
        }
        if self.entries.len() == self.entries.capacity() {
            // Doubling, but never past the room left: a run fills its area, not half of it.
            let more = self.entries.capacity().max(1024).min(room / ENTRY_BYTES).max(1);
            self.entries.reserve_exact(more);
        }
        self.entries.push(entry);
        Ok(Some(self.arena.len() - start))
    }

    /// Sorts the entries by (key, rowid): nothing to do when they came in order; else a
    /// radix sort on the prefixes, then each group of equal prefixes put in order.
    pub fn sort(&mut self) {
        if self.in_order {
            return;
        }
        let arena = &self.arena;
        radix::sort_by_prefix(&mut self.entries);
        for group in self.entries.chunk_by_mut(|a, b| a.prefix == b.prefix).filter(|g| g.len() > 1) {
            if !group.is_sorted_by(|a, b| a.cmp_in(b, arena) != Ordering::Greater) {
                group.sort_unstable_by(|a, b| a.cmp_in(b, arena));
            }
        }
        self.in_order = true;
    }

    /// Hands the entries to `visit` in their current order (sorted once
    /// [`MemoryRun::sort`] ran). A key of at most 8 bytes is handed from its prefix, so
    /// reading sorted entries touches the arena only for longer keys (in sorted order the
    /// arena is read at random: a cache miss a key).
    pub fn for_each(&self, mut visit: impl FnMut(&[u8], RowId) -> Result<()>) -> Result<()> {
        for e in &self.entries {
            let len = e.key_len();
            if len <= 8 {
                visit(&e.prefix.to_be_bytes()[..len], e.rowid())?;
            } else {
                visit(e.key(&self.arena), e.rowid())?;
            }
        }
        Ok(())
    }

    /// Empties the run for the next one, keeping its memory.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.entries.clear();
        self.in_order = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rowid(n: u32) -> RowId {
        RowId { rdba: n / 7, slot: (n % 7) as u16 }
    }

    fn sorted_by_run(entries: &[(Vec<u8>, RowId)]) -> Vec<(Vec<u8>, RowId)> {
        let mut run = MemoryRun::new();
        for (key, rowid) in entries {
            run.push_with(*rowid, usize::MAX, |arena| {
                arena.extend_from_slice(key);
                Ok(true)
            })
            .unwrap();
        }
        run.sort();
        let mut out = Vec::new();
        run.for_each(|k, r| {
            out.push((k.to_vec(), r));
            Ok(())
        })
        .unwrap();
        out
    }

    fn keys() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            // Short keys from a small alphabet: many duplicates and prefixes of each other.
            prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8)], 0..10),
            // Long keys sharing their first bytes, so the arena decides.
            prop::collection::vec(0u8..3, 0..4).prop_map(|tail| [b"common-prefix".as_slice(), &tail].concat()),
            prop::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest! {
        #[test]
        fn a_run_sorts_as_the_standard_sort(raw in prop::collection::vec((keys(), 0u32..50), 0..400)) {
            let entries: Vec<(Vec<u8>, RowId)> = raw.into_iter().map(|(k, r)| (k, rowid(r))).collect();
            let mut expected = entries.clone();
            expected.sort();
            prop_assert_eq!(sorted_by_run(&entries), expected);
        }
    }

    #[test]
    fn entries_in_order_are_noticed_and_left_alone() {
        let mut run = MemoryRun::new();
        for i in 0..3000u32 {
            run.push_with(rowid(i), usize::MAX, |a| {
                a.extend_from_slice(&i.to_be_bytes());
                Ok(true)
            })
            .unwrap();
        }
        assert!(run.in_order);
        run.push_with(rowid(0), usize::MAX, |a| {
            a.extend_from_slice(&0u32.to_be_bytes());
            Ok(true)
        })
        .unwrap();
        assert!(!run.in_order, "a key below the last one breaks the order");
    }

    #[test]
    fn a_row_without_an_entry_adds_nothing() {
        let mut run = MemoryRun::new();
        let added = run
            .push_with(rowid(1), usize::MAX, |a| {
                a.push(7);
                Ok(false)
            })
            .unwrap();
        assert_eq!((added, run.len(), run.bytes()), (None, 0, 0));
    }
}

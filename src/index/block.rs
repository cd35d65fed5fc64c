//! Index block formats: leaves and branches of the B-tree.
//!
//! Both start with the common block header and keep the layout of a table data block up
//! to the entries (ITL slots, then a directory of two-byte entry offsets, entries growing
//! down from the top), so that ITL handling (`txn::change::take_itl`, commit cleanout,
//! consistent reads) works on a leaf unchanged. The directory is in key order. The last
//! [`TAIL_LEN`] bytes hold what is particular to an index block:
//!
//! ```text
//!  offset            size  field
//!  0                 36    common header (type 0x22 leaf / 0x21 branch, address, object id,
//!                          SCN, checksum, ITL count (0 in a branch), entry count, top)
//!  36                24×n  ITL slots (leaves)
//!  ..                2×m   directory: offset of each entry, in key order
//!  ..                      free space
//!  top..end-24             entries and the two fence keys, in any order
//!  end-24            1     level: 0 for a leaf, 1 above the leaves, ...
//!  end-23            1     (reserved)
//!  end-22            2     offset of the low fence key (0: no lower limit)
//!  end-20            2     offset of the high fence key (0: no upper limit)
//!  end-18            2     (reserved)
//!  end-16            4     right sibling (0: none)
//!  end-12            4     left sibling (0: none)
//!  end-8             8     purge SCN: newest commit of a delete whose entry was removed
//! ```
//!
//! | piece        | bytes                                                                |
//! |--------------|----------------------------------------------------------------------|
//! | leaf entry   | flags (`DELETED` 0x10), lock (ITL slot, 1-based, 0 = none), key length u16, key, rowid (block address u32, slot u16, big-endian) |
//! | branch entry | separator length u16, separator, child block address u32             |
//! | fence key    | length u16, bytes                                                   |
//!
//! A leaf entry's *full key* is its key followed by its rowid: entries are ordered by
//! it, so duplicates of a key are ordered by rowid. A branch's separators are full keys:
//! child `i` holds the entries from separator `i` up to separator `i + 1`. Every entry
//! of a block lies in `low fence ≤ full key < high fence`; a block's low fence never
//! changes, its high fence only comes down when it splits (B-link tree: the block split
//! off to its right takes over the rest of the range, and a reader that arrives with a
//! key at or beyond the high fence moves right).
//!
//! All accessors assume [`IndexBlock::check`] passed for the block: it checks every
//! offset and length once, so reading entries never runs past the block.

use crate::storage::block::{self, BlockHeader, BlockType, HEADER_LEN, ITL_LEN};

/// Bytes of the index tail at the end of the block.
pub const TAIL_LEN: usize = 24;
/// ITL slots formatted in a new leaf.
pub const LEAF_ITL_SLOTS: u8 = 2;
/// Leaf entry flag: the entry is deleted (by the transaction its lock byte names).
pub const DELETED: u8 = 0x10;
/// Bytes of a rowid at the end of a full key.
pub const ROWID_LEN: usize = 6;
/// Leaf entry bytes besides the key and rowid.
pub const LEAF_ENTRY_OVERHEAD: usize = 4;

// The table block's layout up to the entries: ITL count, entry count, top of entries.
use crate::storage::block::{OFF_ITL_COUNT, OFF_ROW_COUNT as OFF_COUNT, OFF_ROW_TOP as OFF_TOP};

const T_LEVEL: usize = 0;
const T_LOW: usize = 2;
const T_HIGH: usize = 4;
const T_RIGHT: usize = 8;
const T_LEFT: usize = 12;
const T_PURGE: usize = 16;

/// The two-byte offsets and lengths of an index block, as sizes.
fn u16_at(b: &[u8], off: usize) -> usize {
    usize::from(block::get_u16(b, off))
}

fn put_u16(b: &mut [u8], off: usize, v: usize) {
    block::put_u16(b, off, v as u16);
}

/// A row address as an index entry holds it: block address and slot of the row's head.
pub type RowId = crate::storage::row::PieceAddr;

/// Appends a rowid in the order that makes full keys compare by rowid last.
pub fn push_rowid(rowid: RowId, out: &mut Vec<u8>) {
    out.extend_from_slice(&rowid.rdba.to_be_bytes());
    out.extend_from_slice(&rowid.slot.to_be_bytes());
}

/// The rowid at the end of a full key.
pub fn rowid_of(full: &[u8]) -> RowId {
    let r = &full[full.len() - ROWID_LEN..];
    RowId { rdba: u32::from_be_bytes([r[0], r[1], r[2], r[3]]), slot: u16::from_be_bytes([r[4], r[5]]) }
}

/// Read access to an index block that passed [`IndexBlock::check`].
#[derive(Clone, Copy)]
pub struct IndexBlock<'a>(pub &'a [u8]);

impl<'a> IndexBlock<'a> {
    fn tail(&self) -> usize {
        self.0.len() - TAIL_LEN
    }
    pub fn is_leaf(&self) -> bool {
        self.0[0] == BlockType::IndexLeaf as u8
    }
    pub fn level(&self) -> u8 {
        self.0[self.tail() + T_LEVEL]
    }
    pub fn count(&self) -> usize {
        u16_at(self.0, OFF_COUNT)
    }
    pub fn right(&self) -> u32 {
        block::get_u32(self.0, self.tail() + T_RIGHT)
    }
    pub fn left(&self) -> u32 {
        block::get_u32(self.0, self.tail() + T_LEFT)
    }
    pub fn purge_scn(&self) -> u64 {
        let at = self.tail() + T_PURGE;
        u64::from_le_bytes(self.0[at..at + 8].try_into().expect("8 bytes"))
    }
    fn directory_start(&self) -> usize {
        HEADER_LEN + self.0[OFF_ITL_COUNT] as usize * ITL_LEN
    }
    fn directory_end(&self) -> usize {
        self.directory_start() + 2 * self.count()
    }
    fn top(&self) -> usize {
        u16_at(self.0, OFF_TOP)
    }
    /// Free bytes between the directory and the entries.
    pub fn free_space(&self) -> usize {
        self.top().saturating_sub(self.directory_end())
    }
    #[inline]
    pub fn offset(&self, i: usize) -> usize {
        u16_at(self.0, self.directory_start() + 2 * i)
    }
    fn fence(&self, at: usize) -> Option<&'a [u8]> {
        let off = u16_at(self.0, self.tail() + at);
        (off != 0).then(|| &self.0[off + 2..off + 2 + u16_at(self.0, off)])
    }
    /// The low fence key (`None`: no lower limit).
    pub fn low_fence(&self) -> Option<&'a [u8]> {
        self.fence(T_LOW)
    }
    /// The high fence key (`None`: no upper limit).
    pub fn high_fence(&self) -> Option<&'a [u8]> {
        self.fence(T_HIGH)
    }

    // Leaf entries.
    #[inline]
    pub fn flags(&self, i: usize) -> u8 {
        self.0[self.offset(i)]
    }
    #[inline]
    pub fn lock(&self, i: usize) -> u8 {
        self.0[self.offset(i) + 1]
    }
    #[inline]
    pub fn is_deleted(&self, i: usize) -> bool {
        self.flags(i) & DELETED != 0
    }
    /// Key followed by rowid.
    #[inline]
    pub fn full_key(&self, i: usize) -> &'a [u8] {
        let off = self.offset(i);
        &self.0[off + 4..off + 4 + u16_at(self.0, off + 2) + ROWID_LEN]
    }
    #[inline]
    pub fn key(&self, i: usize) -> &'a [u8] {
        let off = self.offset(i);
        &self.0[off + 4..off + 4 + u16_at(self.0, off + 2)]
    }
    #[inline]
    pub fn rowid(&self, i: usize) -> RowId {
        rowid_of(self.full_key(i))
    }
    /// The live (not deleted) entries among `range`, in scan order (descending or not),
    /// as indexes appended to `positions`; with `rowids`, their rowids appended there too,
    /// in the same pass over the entries.
    pub fn live_entries(
        &self,
        range: std::ops::Range<usize>,
        descending: bool,
        positions: &mut Vec<u16>,
        rowids: Option<&mut Vec<RowId>>,
    ) {
        // The directory's entries up to the range's end, sliced once.
        let directory = &self.0[self.directory_start()..][..2 * range.end];
        // SAFETY: a range, or its reverse, yields exactly its length's entries.
        unsafe {
            if descending {
                self.live_entries_in(directory, range.rev(), positions, rowids);
            } else {
                self.live_entries_in(directory, range, positions, rowids);
            }
        }
    }

    /// [`IndexBlock::live_entries`] in the order `order` gives, `directory` being the row
    /// directory's entries up to the last `order` gives. Every entry is written at the next
    /// place out and the place kept only when the entry is live, so the loop has no branch
    /// on the flag; the outputs are written into the vectors' spare room, not zeroed first.
    ///
    /// # Safety
    /// `order` yields at most `order.len()` entries (a trait's promise unsafe code may not
    /// take from any iterator, but which a range and its reverse keep).
    #[inline(always)]
    unsafe fn live_entries_in(
        &self,
        directory: &[u8],
        order: impl ExactSizeIterator<Item = usize>,
        positions: &mut Vec<u16>,
        rowids: Option<&mut Vec<RowId>>,
    ) {
        let b = self.0;
        let offset = |i: usize| u16_at(directory, 2 * i);
        let n = order.len();
        positions.reserve(n);
        let position_out = &mut positions.spare_capacity_mut()[..n];
        let mut kept = 0;
        match rowids {
            None => {
                for i in order {
                    let live = b[offset(i)] & DELETED == 0;
                    // SAFETY: `kept` counts at most the entries before this one, fewer
                    // than `n`, the slice's length (`order` yields at most `n`).
                    unsafe { position_out.get_unchecked_mut(kept) }.write(i as u16);
                    kept += usize::from(live);
                }
            }
            Some(rowids) => {
                rowids.reserve(n);
                let rowid_out = &mut rowids.spare_capacity_mut()[..n];
                for i in order {
                    let off = offset(i);
                    let head = &b[off..off + LEAF_ENTRY_OVERHEAD];
                    let at = off + LEAF_ENTRY_OVERHEAD + u16_at(head, 2);
                    let rowid = rowid_of(&b[at..at + ROWID_LEN]);
                    // SAFETY: as above, for both slices of length `n`.
                    unsafe {
                        position_out.get_unchecked_mut(kept).write(i as u16);
                        rowid_out.get_unchecked_mut(kept).write(rowid);
                    }
                    kept += usize::from(head[0] & DELETED == 0);
                }
                // SAFETY: the first `kept` places of the spare room were written.
                unsafe { rowids.set_len(rowids.len() + kept) };
            }
        }
        // SAFETY: the first `kept` places of the spare room were written.
        unsafe { positions.set_len(positions.len() + kept) };
    }

    /// The bytes of leaf entry `i`.
    pub fn leaf_entry(&self, i: usize) -> &'a [u8] {
        let off = self.offset(i);
        &self.0[off..off + LEAF_ENTRY_OVERHEAD + u16_at(self.0, off + 2) + ROWID_LEN]
    }

    // Branch entries.
    pub fn separator(&self, i: usize) -> &'a [u8] {
        let off = self.offset(i);
        &self.0[off + 2..off + 2 + u16_at(self.0, off)]
    }
    pub fn child(&self, i: usize) -> u32 {
        let off = self.offset(i);
        block::get_u32(self.0, off + 2 + u16_at(self.0, off))
    }
    /// The bytes of branch entry `i`.
    pub fn branch_entry(&self, i: usize) -> &'a [u8] {
        let off = self.offset(i);
        &self.0[off..off + 2 + u16_at(self.0, off) + 4]
    }

    /// The number of entries whose full key (separator) is below `target` by `below`.
    pub fn position(&self, below: impl Fn(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.count());
        let leaf = self.is_leaf();
        while lo < hi {
            let mid = (lo + hi) / 2;
            let k = if leaf { self.full_key(mid) } else { self.separator(mid) };
            if below(k) { lo = mid + 1 } else { hi = mid }
        }
        lo
    }

    #[cfg(test)]
    /// Checks that this is an index block of `object_id` whose offsets and lengths all
    /// lie within it; the error says what is wrong.
    pub fn check(&self, object_id: u32) -> Result<(), String> {
        self.check_header(object_id)?;
        self.check_entries()
    }

    /// The part of [`IndexBlock::check`] that reads only the header and tail: the block's
    /// type and object, and where its directory, entries and tail lie.
    pub fn check_header(&self, object_id: u32) -> Result<(), String> {
        let b = self.0;
        let header = BlockHeader(b);
        let leaf = match header.block_type() {
            Some(BlockType::IndexLeaf) => true,
            Some(BlockType::IndexBranch) => false,
            other => return Err(format!("not an index block (type {other:?})")),
        };
        if header.object_id() != object_id {
            return Err(format!("block of object {} found in the index of object {object_id}", header.object_id()));
        }
        let tail = self.tail();
        let (top, dir_end) = (self.top(), self.directory_end());
        if top > tail || dir_end > top {
            return Err(format!("directory ({dir_end}) overlaps entries ({top}) or the tail ({tail})"));
        }
        if leaf != (self.level() == 0) {
            return Err(format!("level {} does not fit the block type", self.level()));
        }
        Ok(())
    }

    /// The part of [`IndexBlock::check`] that walks every entry and fence key (after
    /// [`IndexBlock::check_header`] passed).
    pub fn check_entries(&self) -> Result<(), String> {
        let b = self.0;
        let leaf = self.is_leaf();
        let (top, tail) = (self.top(), self.tail());
        let piece = |off: usize, fixed: usize, len_at: usize| -> Result<(), String> {
            if off < top || off + len_at + 2 > tail || off + fixed + u16_at(b, off + len_at) > tail {
                return Err(format!("entry at offset {off} lies outside the entry area {top}..{tail}"));
            }
            Ok(())
        };
        for at in [T_LOW, T_HIGH] {
            let off = u16_at(b, tail + at);
            if off != 0 {
                piece(off, 2, 0)?;
            }
        }
        for i in 0..self.count() {
            let off = self.offset(i);
            if leaf {
                piece(off, LEAF_ENTRY_OVERHEAD + ROWID_LEN, 2)?;
            } else {
                piece(off, 2 + 4, 0)?;
            }
        }
        Ok(())
    }
}

/// Write access to an index block.
pub struct IndexBlockMut<'a>(pub &'a mut [u8]);

impl IndexBlockMut<'_> {
    fn view(&self) -> IndexBlock<'_> {
        IndexBlock(self.0)
    }

    /// Formats an empty block: a leaf (`level` 0, with ITL slots) or a branch.
    pub fn format(&mut self, rdba: u32, object_id: u32, level: u8) {
        self.0.fill(0);
        self.format_zeroed(rdba, object_id, level);
    }

    /// [`Self::format`] for a block that is already all zero (a new block).
    pub fn format_zeroed(&mut self, rdba: u32, object_id: u32, level: u8) {
        let t = if level == 0 { BlockType::IndexLeaf } else { BlockType::IndexBranch };
        block::format_zeroed_block(self.0, t, rdba, object_id);
        assert!(self.0.len() <= 32 * 1024, "block sizes are at most 32 KiB, so offsets fit in 16 bits");
        self.0[OFF_ITL_COUNT] = if level == 0 { LEAF_ITL_SLOTS } else { 0 };
        let tail = self.0.len() - TAIL_LEN;
        put_u16(self.0, OFF_TOP, tail);
        self.0[tail + T_LEVEL] = level;
    }

    /// Empties the block keeping its address, type, ITL slots, siblings and purge SCN:
    /// the start of a rewrite of its entries (a split).
    pub fn clear_entries(&mut self) {
        let tail = self.0.len() - TAIL_LEN;
        put_u16(self.0, OFF_COUNT, 0);
        put_u16(self.0, OFF_TOP, tail);
        put_u16(self.0, tail + T_LOW, 0);
        put_u16(self.0, tail + T_HIGH, 0);
    }

    pub fn set_right(&mut self, rdba: u32) {
        let at = self.0.len() - TAIL_LEN + T_RIGHT;
        self.0[at..at + 4].copy_from_slice(&rdba.to_le_bytes());
    }
    pub fn set_left(&mut self, rdba: u32) {
        let at = self.0.len() - TAIL_LEN + T_LEFT;
        self.0[at..at + 4].copy_from_slice(&rdba.to_le_bytes());
    }
    pub fn set_purge_scn(&mut self, scn: u64) {
        let at = self.0.len() - TAIL_LEN + T_PURGE;
        self.0[at..at + 8].copy_from_slice(&scn.to_le_bytes());
    }

    /// Reserves `len` bytes of entry area and returns their offset; the caller checked
    /// the room.
    fn take_space(&mut self, len: usize) -> usize {
        let top = self.view().top() - len;
        put_u16(self.0, OFF_TOP, top);
        top
    }

    /// Sets the fence keys (the block must have room: a new or cleared block).
    pub fn set_fences(&mut self, low: Option<&[u8]>, high: Option<&[u8]>) {
        let tail = self.0.len() - TAIL_LEN;
        for (at, fence) in [(T_LOW, low), (T_HIGH, high)] {
            let off = match fence {
                None => 0,
                Some(bytes) => {
                    let off = self.take_space(bytes.len() + 2);
                    put_u16(self.0, off, bytes.len());
                    self.0[off + 2..off + 2 + bytes.len()].copy_from_slice(bytes);
                    off
                }
            };
            put_u16(self.0, tail + at, off);
        }
    }

    /// Inserts the entry `bytes` (a whole leaf or branch entry) at directory position
    /// `pos`; false if the free space is short (the caller compacts or splits).
    pub fn insert_entry(&mut self, pos: usize, bytes: &[u8]) -> bool {
        let view = self.view();
        if view.free_space() < bytes.len() + 2 {
            return false;
        }
        let (count, start) = (view.count(), view.directory_start());
        assert!(pos <= count, "insert position within the directory");
        let off = self.take_space(bytes.len());
        self.0[off..off + bytes.len()].copy_from_slice(bytes);
        self.0.copy_within(start + 2 * pos..start + 2 * count, start + 2 * pos + 2);
        put_u16(self.0, start + 2 * pos, off);
        put_u16(self.0, OFF_COUNT, count + 1);
        true
    }

    /// Removes the entry at directory position `pos` (its bytes stay until compaction).
    pub fn remove_entry(&mut self, pos: usize) {
        let view = self.view();
        let (count, start) = (view.count(), view.directory_start());
        assert!(pos < count, "remove position within the directory");
        self.0.copy_within(start + 2 * pos + 2..start + 2 * count, start + 2 * pos);
        put_u16(self.0, OFF_COUNT, count - 1);
    }

    /// Sets the flags and lock byte of leaf entry `pos`.
    pub fn set_flags(&mut self, pos: usize, flags: u8, lock: u8) {
        let off = self.view().offset(pos);
        self.0[off] = flags;
        self.0[off + 1] = lock;
    }

    /// Free bytes the block would have after [`Self::compact`].
    pub fn compacted_free_space(&self) -> usize {
        let v = self.view();
        let used: usize = (0..v.count())
            .map(|i| if v.is_leaf() { v.leaf_entry(i).len() } else { v.branch_entry(i).len() })
            .sum::<usize>()
            + [v.low_fence(), v.high_fence()].iter().flatten().map(|f| f.len() + 2).sum::<usize>();
        (self.0.len() - TAIL_LEN - v.directory_end()).saturating_sub(used)
    }

    /// Rewrites the entries without the gaps removed entries left.
    pub fn compact(&mut self) {
        let v = self.view();
        let entries: Vec<Vec<u8>> = (0..v.count())
            .map(|i| if v.is_leaf() { v.leaf_entry(i).to_vec() } else { v.branch_entry(i).to_vec() })
            .collect();
        let (low, high) = (v.low_fence().map(<[u8]>::to_vec), v.high_fence().map(<[u8]>::to_vec));
        self.clear_entries();
        self.set_fences(low.as_deref(), high.as_deref());
        for (i, e) in entries.iter().enumerate() {
            assert!(self.insert_entry(i, e), "compacted entries fit where they were");
        }
    }
}

/// A leaf entry: flags, lock, key and rowid.
pub fn leaf_entry(flags: u8, lock: u8, key: &[u8], rowid: RowId, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[flags, lock]);
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    push_rowid(rowid, out);
}

/// A branch entry: separator and child.
pub fn branch_entry(separator: &[u8], child: u32, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&(separator.len() as u16).to_le_bytes());
    out.extend_from_slice(separator);
    out.extend_from_slice(&child.to_le_bytes());
}

/// Longest key an index on blocks of `block_size` bytes takes: small enough that a split
/// always leaves both halves room for the entry that caused it, and a branch holds at
/// least four separators.
pub fn max_key_len(block_size: usize) -> usize {
    (block_size - HEADER_LEN - TAIL_LEN - 4 * ITL_LEN) / 8 - 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_sorted_and_checked() {
        let mut b = vec![0u8; 2048];
        IndexBlockMut(&mut b).format(block::rdba(1, 9), 7, 0);
        IndexBlockMut(&mut b).set_fences(Some(b"a"), None);
        let mut e = Vec::new();
        for (i, k) in [b"c", b"a", b"b"].iter().enumerate() {
            leaf_entry(0, 0, *k, RowId { rdba: 1, slot: i as u16 }, &mut e);
            let pos = IndexBlock(&b).position(|f| f < &e[4..]);
            assert!(IndexBlockMut(&mut b).insert_entry(pos, &e));
        }
        let v = IndexBlock(&b);
        assert_eq!(v.check(7), Ok(()));
        assert_eq!((v.key(0), v.key(1), v.key(2)), (&b"a"[..], &b"b"[..], &b"c"[..]));
        assert_eq!(v.rowid(2), RowId { rdba: 1, slot: 0 });
        assert_eq!(v.low_fence(), Some(&b"a"[..]));
        IndexBlockMut(&mut b).remove_entry(1);
        let before = IndexBlock(&b).free_space();
        IndexBlockMut(&mut b).compact();
        assert!(IndexBlock(&b).free_space() > before);
        assert_eq!(IndexBlock(&b).key(1), b"c");
        assert!(IndexBlock(&b).check(8).unwrap_err().contains("object"));
        b[26] = 200;
        assert!(IndexBlock(&b).check(7).is_err(), "a directory past the entries");
    }
}

//! The undo block: undo records in the order they were written, by the transactions that
//! held the block in turn, one at a time.
//!
//! ```text
//!  undo block (type 0x02), after the 36-byte common header:
//!  offset  size  field
//!  36      8     owner: xid of the transaction writing into this block (or that wrote last)
//!  44      2     sequence: incremented each time the block is reused (never 0 once used)
//!  46      2     record count (at most 255: a uba names a record with one byte)
//!  48      2     top of record data: lowest offset used by a record
//!  50      2     (reserved)
//!  52      2×n   record directory: offset of each record
//!  ..            free space
//!  top..end      records, the newest lowest:
//!                0  prev: uba of the writer's previous record (8 bytes, 0 for its first)
//!                8  xid of the transaction that wrote it (8 bytes)
//!                16 body length u16
//!                18 body
//! ```
//!
//! A block is handed out formatted to one transaction; when that one has ended, the next
//! transaction of its segment that needs a block may take it over and append after it
//! (the sequence stays, so the records already there keep their addresses), as Oracle's
//! successive transactions share undo blocks: a short transaction does not take a block
//! of its own.
//!
//! Invariants: the directory ends at or below the top of record data; every directory
//! offset lies in `top..block_size` with its record inside the block; only the owner
//! appends, and only while it is active; the owner changes only once it has ended, and
//! every record names the owner that wrote it. A block read back is checked against these before a record is
//! handed out.

use super::codec::{UBA_LEN, XID_LEN, get_u16, get_uba, get_xid, put_u16, put_uba, put_xid};
use crate::storage::block::{self, BlockHeader, BlockType, HEADER_LEN};
use crate::storage::block_write::BlockWrite;
use crate::txn::{Uba, Xid};

const OFF_OWNER: usize = HEADER_LEN;
const OFF_SEQ: usize = OFF_OWNER + XID_LEN;
const OFF_RECORD_COUNT: usize = OFF_SEQ + 2;
const OFF_TOP: usize = OFF_RECORD_COUNT + 2;
const OFF_DIRECTORY: usize = OFF_TOP + 4;

/// Bytes in front of a record's body: prev uba, writer's xid and body length.
pub const RECORD_HEADER_LEN: usize = UBA_LEN + XID_LEN + 2;
/// Where a record's body length lies, from the record's start.
const RECORD_LEN_AT: usize = UBA_LEN + XID_LEN;
/// Most records in one undo block.
pub const MAX_RECORDS: usize = 255;

/// The largest body one record can hold in a block of `block_size` bytes.
pub fn max_body_len(block_size: usize) -> usize {
    block_size - OFF_DIRECTORY - 2 - RECORD_HEADER_LEN
}

/// The sequence a block gets when it is reused after `seq` (0 is never used, so a zero
/// uba sequence never matches a used block).
pub fn next_seq(seq: u16) -> u16 {
    match seq.wrapping_add(1) {
        0 => 1,
        s => s,
    }
}

/// Reads an undo block.
#[derive(Debug, Clone, Copy)]
pub struct UndoBlock<'a>(pub &'a [u8]);

impl<'a> UndoBlock<'a> {
    pub fn is_undo_block(&self) -> bool {
        BlockHeader(self.0).block_type() == Some(BlockType::UndoData)
    }

    pub fn owner(&self) -> Xid {
        get_xid(self.0, OFF_OWNER)
    }

    pub fn seq(&self) -> u16 {
        get_u16(self.0, OFF_SEQ)
    }

    pub fn record_count(&self) -> usize {
        get_u16(self.0, OFF_RECORD_COUNT) as usize
    }

    fn top(&self) -> usize {
        get_u16(self.0, OFF_TOP) as usize
    }

    fn directory_end(&self) -> usize {
        OFF_DIRECTORY + 2 * self.record_count()
    }

    /// Free bytes between the directory and the top of record data.
    pub fn free_space(&self) -> usize {
        self.top().saturating_sub(self.directory_end())
    }

    /// Whether a record with a `body_len`-byte body fits.
    pub fn fits(&self, body_len: usize) -> bool {
        self.record_count() < MAX_RECORDS && self.free_space() >= 2 + RECORD_HEADER_LEN + body_len
    }

    /// Whether the header fields are consistent with the block's size.
    pub fn check_layout(&self) -> Result<(), String> {
        let (count, top, dir_end) = (self.record_count(), self.top(), self.directory_end());
        if count > MAX_RECORDS || top > self.0.len() || dir_end > top {
            return Err(format!("undo record directory of {count} entries ({dir_end}) overlaps record data ({top})"));
        }
        Ok(())
    }

    /// Record `i`: the transaction that wrote it, its prev uba and its body. `Err` says
    /// what is wrong with the block.
    pub fn record(&self, i: usize) -> Result<(Xid, Uba, &'a [u8]), String> {
        self.check_layout()?;
        if i >= self.record_count() {
            return Err(format!("undo record {i} of a block holding {}", self.record_count()));
        }
        let off = get_u16(self.0, OFF_DIRECTORY + 2 * i) as usize;
        if off < self.top() || off + RECORD_HEADER_LEN > self.0.len() {
            return Err(format!("undo record {i} at offset {off}, outside record data"));
        }
        let len = get_u16(self.0, off + RECORD_LEN_AT) as usize;
        let body = self.0.get(off + RECORD_HEADER_LEN..off + RECORD_HEADER_LEN + len);
        let body = body.ok_or_else(|| format!("undo record {i} of {len} bytes runs past the block"))?;
        Ok((get_xid(self.0, off + UBA_LEN), get_uba(self.0, off), body))
    }
}

/// Writes an undo block, naming the bytes each change writes (see [`BlockWrite`]).
pub struct UndoBlockMut<'a, B: BlockWrite + ?Sized = [u8]>(pub &'a mut B);

impl<B: BlockWrite + ?Sized> UndoBlockMut<'_, B> {
    /// Formats an empty undo block owned by `owner` at sequence `seq`, in a block that is
    /// all zero (a new block).
    pub fn format_zeroed(&mut self, rdba: u32, object_id: u32, owner: Xid, seq: u16) {
        let b = self.0.whole_mut();
        assert!(b.len() <= 32 * 1024, "block sizes are at most 32 KiB, so offsets fit in 16 bits");
        block::format_zeroed_block(b, BlockType::UndoData, rdba, object_id);
        put_xid(b, OFF_OWNER, owner);
        put_u16(b, OFF_SEQ, seq);
        put_u16(b, OFF_TOP, b.len() as u16);
    }

    /// Hands the block on to `owner`, which appends after the records already here; they
    /// keep their addresses (the sequence stays).
    pub fn take_over(&mut self, owner: Xid) {
        put_xid(self.0.range_mut(OFF_OWNER..OFF_OWNER + XID_LEN), 0, owner);
    }

    /// Appends a record of the owner; returns its index, or `None` if it does not fit.
    pub fn append(&mut self, prev: Uba, body: &[u8]) -> Option<u8> {
        let view = UndoBlock(self.0.bytes());
        if !view.fits(body.len()) {
            return None;
        }
        let (index, owner) = (view.record_count(), view.owner());
        let dir = view.directory_end();
        let top = view.top() - RECORD_HEADER_LEN - body.len();
        let record = self.0.range_mut(top..top + RECORD_HEADER_LEN + body.len());
        put_uba(record, 0, prev);
        put_xid(record, UBA_LEN, owner);
        put_u16(record, RECORD_LEN_AT, body.len() as u16);
        record[RECORD_HEADER_LEN..].copy_from_slice(body);
        self.0.put_u16(dir, top as u16);
        let counts = self.0.range_mut(OFF_RECORD_COUNT..OFF_TOP + 2);
        put_u16(counts, 0, index as u16 + 1);
        put_u16(counts, OFF_TOP - OFF_RECORD_COUNT, top as u16);
        Some(index as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;
    use proptest::prelude::*;

    const OWNER: Xid = Xid { usn: 1, slot: 5, wrap: 3 };

    #[test]
    fn largest_body_fits_an_empty_block_and_no_more() {
        for size in [2048, 8192, 32768] {
            let mut b = vec![0u8; size];
            UndoBlockMut(&mut b).format_zeroed(rdba(2, 9), 1, OWNER, 1);
            assert!(!UndoBlock(&b).fits(max_body_len(size) + 1));
            let body = vec![0xab; max_body_len(size)];
            assert_eq!(UndoBlockMut(&mut b).append(Uba::NONE, &body), Some(0));
            assert_eq!(UndoBlock(&b).record(0), Ok((OWNER, Uba::NONE, &body[..])));
            assert!(!UndoBlock(&b).fits(0));
        }
    }

    #[test]
    fn at_most_255_records() {
        let mut b = vec![0u8; 32768];
        UndoBlockMut(&mut b).format_zeroed(rdba(2, 9), 1, OWNER, 1);
        for i in 0..MAX_RECORDS {
            assert_eq!(UndoBlockMut(&mut b).append(Uba::NONE, b"x"), Some(i as u8));
        }
        assert_eq!(UndoBlockMut(&mut b).append(Uba::NONE, b"x"), None);
    }

    #[test]
    fn damaged_directory_is_an_error_not_a_panic() {
        let mut b = vec![0u8; 2048];
        UndoBlockMut(&mut b).format_zeroed(rdba(2, 9), 1, OWNER, 1);
        UndoBlockMut(&mut b).append(Uba::NONE, b"hello").unwrap();
        put_u16(&mut b, OFF_DIRECTORY, 2047);
        assert!(UndoBlock(&b).record(0).is_err());
        put_u16(&mut b, OFF_RECORD_COUNT, 4000);
        assert!(UndoBlock(&b).record(0).is_err());
    }

    #[test]
    fn a_block_taken_over_keeps_each_record_with_its_writer() {
        let next = Xid { usn: 1, slot: 6, wrap: 9 };
        let mut b = vec![0u8; 2048];
        UndoBlockMut(&mut b).format_zeroed(rdba(2, 9), 1, OWNER, 4);
        UndoBlockMut(&mut b).append(Uba::NONE, b"first").unwrap();
        UndoBlockMut(&mut b).take_over(next);
        let prev = Uba { rdba: rdba(2, 3), seq: 2, record: 7 };
        assert_eq!(UndoBlockMut(&mut b).append(prev, b"second"), Some(1));
        let view = UndoBlock(&b);
        assert_eq!((view.owner(), view.seq()), (next, 4));
        assert_eq!(view.record(0), Ok((OWNER, Uba::NONE, &b"first"[..])));
        assert_eq!(view.record(1), Ok((next, prev, &b"second"[..])));
    }

    #[test]
    fn sequence_skips_zero() {
        assert_eq!(next_seq(0), 1);
        assert_eq!(next_seq(u16::MAX), 1);
        assert_eq!(next_seq(7), 8);
    }

    proptest! {
        #[test]
        fn records_come_back_in_order(bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..80)) {
            let mut b = vec![0u8; 8192];
            UndoBlockMut(&mut b).format_zeroed(rdba(2, 9), 1, OWNER, 4);
            let mut stored = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                let prev = Uba { rdba: rdba(2, 8), seq: 3, record: i as u8 };
                match UndoBlockMut(&mut b).append(prev, body) {
                    Some(index) => { prop_assert_eq!(index as usize, stored.len()); stored.push((prev, body.clone())); }
                    None => break,
                }
            }
            let view = UndoBlock(&b);
            prop_assert_eq!(view.owner(), OWNER);
            prop_assert_eq!(view.seq(), 4);
            for (i, (prev, body)) in stored.iter().enumerate() {
                prop_assert_eq!(view.record(i), Ok((OWNER, *prev, &body[..])));
            }
        }
    }
}

//! The undo segment header block: the control SCN, the transaction table, and which undo
//! block the segment handed out last. The segment's extents are listed in the
//! tablespace's extent map (module `extent_map`), not here: the transaction table leaves
//! no room for them in a 2 KiB block.
//!
//! ```text
//!  undo segment header (type 0x0e), after the 36-byte common header:
//!  offset  size  field
//!  36      2     undo segment number (usn, 1-based)
//!  38      2     undo segments in the tablespace
//!  40      4     fixed layout only (zero once converted): blocks of each segment
//!  44      8     never-formatted run: first block u32, end block u32; blocks in it
//!                (within an extent this segment owns) have never held undo, so they
//!                need not be read to be handed out. Fixed layout: first ring block
//!                address u32, ring blocks u32
//!  52      4     ring head: address of the undo block handed out last (0: none yet);
//!                in the fixed layout, its index in the ring
//!  56      8     control SCN: highest commit SCN of a transaction whose slot was reused
//!  64      4     control time: latest commit time (unix seconds) of such a transaction
//!  68      2     transaction-table slots (34)
//!  70      4     fixed layout only: ring high-water mark
//!  74      4     address of the tablespace's extent map (0: a header of the fixed
//!                layout, converted at the next open)
//!  78      2     (reserved)
//!  80      56×n  transaction table, one slot per transaction:
//!                0  state u8 (0 free, 1 active, 2 committed), 3 bytes reserved
//!                4  wrap u32 (incremented each time the slot is claimed)
//!                8  start SCN u64
//!                16 commit SCN u64
//!                24 commit time u32 (unix seconds)
//!                28 current undo block address u32 (0 before the first record)
//!                32 first undo record address (uba, 8 bytes)
//!                40 last undo record address (uba, 8 bytes)
//!                48 undo blocks used u32
//!                52 undo records written u32
//! ```
//!
//! Invariants: a slot's wrap only grows; a slot is `Free` only while its wrap is 0 (never
//! claimed); a committed slot's commit SCN is set. The control SCN bounds the commit SCN
//! of every transaction whose slot has since been claimed again. While a transaction is
//! active its slot's record addresses and counts may lag behind what it wrote (the
//! in-memory mirror is current); commit writes the final values.

use super::codec::{get_u16, get_u32, get_u64, get_uba, put_u16, put_u32, put_u64, put_uba};
use crate::storage::block::{self, BlockHeader, BlockType, HEADER_LEN};
use crate::storage::block_write::BlockWrite;
use crate::txn::Uba;

/// Transaction-table slots in each undo segment header (Oracle's count for 8 KiB blocks;
/// they fit in the smallest block size).
pub const TXN_SLOTS: usize = 34;

const OFF_USN: usize = HEADER_LEN;
const OFF_SEGMENTS: usize = HEADER_LEN + 2;
const OFF_SEGMENT_BLOCKS: usize = HEADER_LEN + 4;
const OFF_RING_FIRST: usize = HEADER_LEN + 8;
const OFF_RING_BLOCKS: usize = HEADER_LEN + 12;
const OFF_FRESH_FIRST: usize = OFF_RING_FIRST;
const OFF_FRESH_END: usize = OFF_RING_BLOCKS;
const OFF_RING_HEAD: usize = HEADER_LEN + 16;
const OFF_CONTROL_SCN: usize = HEADER_LEN + 20;
const OFF_CONTROL_TIME: usize = HEADER_LEN + 28;
const OFF_SLOT_COUNT: usize = HEADER_LEN + 32;
const OFF_RING_HWM: usize = HEADER_LEN + 34;
const OFF_EXTENT_MAP: usize = HEADER_LEN + 38;
const OFF_TXN_TABLE: usize = 80;
const SLOT_LEN: usize = 56;

const _: () = assert!(OFF_TXN_TABLE + TXN_SLOTS * SLOT_LEN <= 2048, "the transaction table fits a 2 KiB block");

/// Where a segment of the fixed layout (before undo could grow) lies: read once, when
/// the layout is converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedLayout {
    /// Undo segments in the tablespace.
    pub segments: u16,
    /// Blocks of each segment, the header included.
    pub segment_blocks: u32,
    /// Block address of the first ring block.
    pub ring_first: u32,
    pub ring_blocks: u32,
    /// Index of the ring block handed out last.
    pub ring_head: u32,
    /// Ring blocks below this index have been formatted; those above are still zero.
    pub ring_hwm: u32,
}

/// The state of a transaction-table slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    /// Never claimed.
    Free = 0,
    Active = 1,
    /// Ended (committed or rolled back).
    Committed = 2,
}

/// One decoded transaction-table slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnSlot {
    pub state: SlotState,
    pub wrap: u32,
    pub start_scn: u64,
    pub commit_scn: u64,
    /// Unix seconds at commit (for undo retention).
    pub commit_time: u32,
    /// The undo block the transaction writes into, 0 before its first record.
    pub current_block: u32,
    pub first: Uba,
    pub last: Uba,
    pub used_ublk: u32,
    pub used_urec: u32,
}

impl TxnSlot {
    /// A slot never claimed.
    pub const FREE: TxnSlot = TxnSlot {
        state: SlotState::Free,
        wrap: 0,
        start_scn: 0,
        commit_scn: 0,
        commit_time: 0,
        current_block: 0,
        first: Uba::NONE,
        last: Uba::NONE,
        used_ublk: 0,
        used_urec: 0,
    };
}

/// Reads an undo segment header.
#[derive(Debug, Clone, Copy)]
pub struct UndoHeader<'a>(pub &'a [u8]);

impl UndoHeader<'_> {
    /// Checks the header is an undo segment header laid out for `block_size` bytes and
    /// holding segment `usn`.
    pub fn check(&self, usn: u16) -> Result<(), String> {
        if BlockHeader(self.0).block_type() != Some(BlockType::UndoHeader) {
            return Err(format!("not an undo segment header (block type {:#04x})", self.0[0]));
        }
        if self.usn() != usn {
            return Err(format!("undo segment header of segment {}, expected {usn}", self.usn()));
        }
        if get_u16(self.0, OFF_SLOT_COUNT) as usize != TXN_SLOTS {
            return Err(format!(
                "transaction table of {} slots, expected {TXN_SLOTS}",
                get_u16(self.0, OFF_SLOT_COUNT)
            ));
        }
        if let Some(fixed) = self.fixed_layout()
            && (fixed.ring_blocks == 0
                || fixed.ring_blocks + 1 != fixed.segment_blocks
                || fixed.ring_head >= fixed.ring_blocks)
        {
            return Err(format!(
                "fixed-layout ring of {} blocks in a segment of {}",
                fixed.ring_blocks, fixed.segment_blocks
            ));
        }
        (0..TXN_SLOTS).try_for_each(|i| self.slot(i).map(|_| ()))
    }

    pub fn usn(&self) -> u16 {
        get_u16(self.0, OFF_USN)
    }

    pub fn segments(&self) -> u16 {
        get_u16(self.0, OFF_SEGMENTS)
    }

    /// Address of the tablespace's extent map, or `None` in a header of the fixed layout.
    pub fn extent_map(&self) -> Option<u32> {
        Some(get_u32(self.0, OFF_EXTENT_MAP)).filter(|&a| a != 0)
    }

    /// Where the segment lies, in a header of the fixed layout not yet converted.
    pub fn fixed_layout(&self) -> Option<FixedLayout> {
        self.extent_map().is_none().then(|| FixedLayout {
            segments: self.segments(),
            segment_blocks: get_u32(self.0, OFF_SEGMENT_BLOCKS),
            ring_first: get_u32(self.0, OFF_RING_FIRST),
            ring_blocks: get_u32(self.0, OFF_RING_BLOCKS),
            ring_head: get_u32(self.0, OFF_RING_HEAD),
            ring_hwm: get_u32(self.0, OFF_RING_HWM),
        })
    }

    /// Block numbers that have never held undo (see the layout), in a converted header.
    pub fn fresh_run(&self) -> std::ops::Range<u32> {
        get_u32(self.0, OFF_FRESH_FIRST)..get_u32(self.0, OFF_FRESH_END)
    }

    /// Address of the undo block handed out last (0: none since the segment was made).
    pub fn ring_head(&self) -> u32 {
        get_u32(self.0, OFF_RING_HEAD)
    }

    pub fn control_scn(&self) -> u64 {
        get_u64(self.0, OFF_CONTROL_SCN)
    }

    pub fn control_time(&self) -> u32 {
        get_u32(self.0, OFF_CONTROL_TIME)
    }

    /// The state and the commit SCN of transaction-table slot `i` (< [`TXN_SLOTS`]),
    /// without the rest of it: what a search for the slot to reuse reads of each.
    pub fn slot_state(&self, i: usize) -> Result<(SlotState, u64), String> {
        assert!(i < TXN_SLOTS, "transaction-table slots are numbered below {TXN_SLOTS}");
        let off = OFF_TXN_TABLE + i * SLOT_LEN;
        let state = match self.0[off] {
            0 => SlotState::Free,
            1 => SlotState::Active,
            2 => SlotState::Committed,
            other => return Err(format!("transaction-table slot {i} has unknown state {other}")),
        };
        Ok((state, get_u64(self.0, off + 16)))
    }

    /// Transaction-table slot `i` (< [`TXN_SLOTS`]).
    pub fn slot(&self, i: usize) -> Result<TxnSlot, String> {
        let (state, commit_scn) = self.slot_state(i)?;
        let off = OFF_TXN_TABLE + i * SLOT_LEN;
        let b = self.0;
        Ok(TxnSlot {
            state,
            wrap: get_u32(b, off + 4),
            start_scn: get_u64(b, off + 8),
            commit_scn,
            commit_time: get_u32(b, off + 24),
            current_block: get_u32(b, off + 28),
            first: get_uba(b, off + 32),
            last: get_uba(b, off + 40),
            used_ublk: get_u32(b, off + 48),
            used_urec: get_u32(b, off + 52),
        })
    }
}

/// Writes an undo segment header, naming the bytes each change writes (see
/// [`BlockWrite`]).
pub struct UndoHeaderMut<'a, B: BlockWrite + ?Sized = [u8]>(pub &'a mut B);

impl<B: BlockWrite + ?Sized> UndoHeaderMut<'_, B> {
    /// Formats a header of segment `usn` (of `segments`) with an empty transaction
    /// table, its extents listed in the extent map at `extent_map`.
    pub fn format(&mut self, rdba: u32, object_id: u32, usn: u16, segments: u16, extent_map: u32) {
        let b = self.0.whole_mut();
        block::format_block(b, BlockType::UndoHeader, rdba, object_id);
        put_u16(b, OFF_USN, usn);
        put_u16(b, OFF_SEGMENTS, segments);
        put_u16(b, OFF_SLOT_COUNT, TXN_SLOTS as u16);
        put_u32(b, OFF_EXTENT_MAP, extent_map);
    }

    /// Writes the little-endian `u32` `value` at `off`.
    fn put_u32(&mut self, off: usize, value: u32) {
        self.0.put(off, &value.to_le_bytes());
    }

    /// Records that blocks in `fresh` have never held undo (and no others are known to).
    pub fn set_fresh_run(&mut self, fresh: std::ops::Range<u32>) {
        self.put_u32(OFF_FRESH_FIRST, fresh.start);
        self.put_u32(OFF_FRESH_END, fresh.end.max(fresh.start));
    }

    /// Turns a header of the fixed layout into one of a segment whose extents are listed
    /// in the extent map at `extent_map`: the ring head becomes a block address.
    pub fn convert_fixed_layout(&mut self, fixed: &FixedLayout, extent_map: u32) {
        for off in [OFF_SEGMENT_BLOCKS, OFF_RING_HWM] {
            self.put_u32(off, 0);
        }
        let ring_first = block::rdba_block(fixed.ring_first);
        self.set_fresh_run(ring_first + fixed.ring_hwm..ring_first + fixed.ring_blocks);
        self.put_u32(OFF_RING_HEAD, fixed.ring_first + fixed.ring_head);
        self.put_u32(OFF_EXTENT_MAP, extent_map);
    }

    /// Records that undo block `rdba` was handed out last.
    pub fn set_ring_head(&mut self, rdba: u32) {
        self.put_u32(OFF_RING_HEAD, rdba);
    }

    /// Raises the control SCN and time to cover a transaction whose slot is reused.
    pub fn raise_control(&mut self, commit_scn: u64, commit_time: u32) {
        let view = UndoHeader(self.0.bytes());
        let (scn, time) = (view.control_scn().max(commit_scn), view.control_time().max(commit_time));
        self.0.put(OFF_CONTROL_SCN, &scn.to_le_bytes());
        self.put_u32(OFF_CONTROL_TIME, time);
    }

    pub fn set_slot(&mut self, i: usize, slot: &TxnSlot) {
        assert!(i < TXN_SLOTS, "transaction-table slots are numbered below {TXN_SLOTS}");
        let off = OFF_TXN_TABLE + i * SLOT_LEN;
        let b = self.0.range_mut(off..off + SLOT_LEN);
        b.fill(0);
        b[0] = slot.state as u8;
        put_u32(b, 4, slot.wrap);
        put_u64(b, 8, slot.start_scn);
        put_u64(b, 16, slot.commit_scn);
        put_u32(b, 24, slot.commit_time);
        put_u32(b, 28, slot.current_block);
        put_uba(b, 32, slot.first);
        put_uba(b, 40, slot.last);
        put_u32(b, 48, slot.used_ublk);
        put_u32(b, 52, slot.used_urec);
    }
}

/// Formats a header of the fixed layout, as databases made before undo could grow have:
/// segment `usn` of `segments`, each `segment_blocks` long, its ring right after it.
#[cfg(test)]
pub fn format_fixed_layout(b: &mut [u8], rdba: u32, object_id: u32, usn: u16, segments: u16, segment_blocks: u32) {
    UndoHeaderMut(b).format(rdba, object_id, usn, segments, 0);
    put_u32(b, OFF_SEGMENT_BLOCKS, segment_blocks);
    put_u32(b, OFF_RING_FIRST, rdba + 1);
    put_u32(b, OFF_RING_BLOCKS, segment_blocks - 1);
    put_u32(b, OFF_RING_HEAD, segment_blocks - 2);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;

    #[test]
    fn header_round_trips_in_the_smallest_block() {
        let mut b = vec![0u8; 2048];
        UndoHeaderMut(&mut b).format(rdba(2, 3), 9, 3, 10, rdba(2, 11));
        let slot = TxnSlot {
            state: SlotState::Committed,
            wrap: 4,
            start_scn: 10,
            commit_scn: 12,
            commit_time: 1_700_000_000,
            current_block: rdba(2, 250),
            first: Uba { rdba: rdba(2, 249), seq: 2, record: 0 },
            last: Uba { rdba: rdba(2, 250), seq: 1, record: 17 },
            used_ublk: 2,
            used_urec: 40,
        };
        UndoHeaderMut(&mut b).set_slot(TXN_SLOTS - 1, &slot);
        UndoHeaderMut(&mut b).raise_control(7, 5);
        UndoHeaderMut(&mut b).raise_control(6, 9);
        UndoHeaderMut(&mut b).set_ring_head(rdba(2, 250));
        let h = UndoHeader(&b);
        assert_eq!(h.check(3), Ok(()));
        assert_eq!((h.usn(), h.segments(), h.extent_map(), h.fixed_layout()), (3, 10, Some(rdba(2, 11)), None));
        assert_eq!(h.ring_head(), rdba(2, 250));
        assert_eq!((h.control_scn(), h.control_time()), (7, 9));
        assert_eq!(h.slot(TXN_SLOTS - 1), Ok(slot));
        assert_eq!(h.slot(0), Ok(TxnSlot::FREE));
        assert!(h.check(4).unwrap_err().contains("expected 4"));
    }

    #[test]
    fn a_fixed_layout_header_is_converted_in_place() {
        let mut b = vec![0u8; 2048];
        UndoHeaderMut(&mut b).format(rdba(2, 201), 9, 3, 10, 0);
        put_u32(&mut b, OFF_SEGMENT_BLOCKS, 100);
        put_u32(&mut b, OFF_RING_FIRST, rdba(2, 202));
        put_u32(&mut b, OFF_RING_BLOCKS, 99);
        put_u32(&mut b, OFF_RING_HEAD, 98);
        put_u32(&mut b, OFF_RING_HWM, 99);
        let fixed = UndoHeader(&b).fixed_layout().expect("a header of the fixed layout");
        assert_eq!(
            fixed,
            FixedLayout {
                segments: 10,
                segment_blocks: 100,
                ring_first: rdba(2, 202),
                ring_blocks: 99,
                ring_head: 98,
                ring_hwm: 99
            }
        );
        assert_eq!(UndoHeader(&b).check(3), Ok(()));
        UndoHeaderMut(&mut b).convert_fixed_layout(&fixed, rdba(2, 1002));
        let h = UndoHeader(&b);
        assert_eq!((h.fixed_layout(), h.extent_map(), h.ring_head()), (None, Some(rdba(2, 1002)), rdba(2, 300)));
        assert_eq!(h.fresh_run(), 301..301, "every ring block was formatted");
        assert_eq!(h.check(3), Ok(()));
    }

    #[test]
    fn bad_slot_state_is_reported() {
        let mut b = vec![0u8; 4096];
        UndoHeaderMut(&mut b).format(rdba(2, 3), 9, 3, 10, rdba(2, 11));
        b[OFF_TXN_TABLE + 2 * SLOT_LEN] = 9;
        assert!(UndoHeader(&b).check(3).unwrap_err().contains("slot 2 has unknown state 9"));
    }
}

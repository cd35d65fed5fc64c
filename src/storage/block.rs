//! Block layout: every block of a datafile, whatever it holds, starts with the same
//! header; data blocks then carry ITL slots, a row directory and rows.
//!
//! ```text
//!  offset  size  field
//!  0       1     block type (BlockType)
//!  1       1     format version (1)
//!  2       2     flags (reserved)
//!  4       4     block address: file number << 22 | block number
//!  8       8     SCN of the last change
//!  16      4     checksum: CRC-32 of the block with these four bytes zero
//!  20      4     data object id of the owning segment (0 for file headers)
//!  24      1     ITL slot count
//!  25      1     (reserved)
//!  26      2     row directory entries
//!  28      2     top of row data: lowest offset used by a row (rows grow down from the end)
//!  30      6     (reserved)
//!  36      24×n  ITL slots: xid (undo segment u16, slot u16, wrap u32), undo block
//!                address (u32, sequence u16, record u8, pad), commit SCN (u48), flags u8,
//!                lock count u8
//!  ..      2×m   row directory: offset of each row piece, 0 for an empty slot
//!  ..            free space
//!  top..end      row pieces, the newest lowest
//! ```
//!
//! Invariants of a data block: the row directory ends at or below the top of row data;
//! every non-zero directory offset lies in `top..block_size`; rows never overlap. A block
//! read from disk is checked (checksum, address, type) before anyone sees it; the checksum
//! is written when the block goes back to disk.
//!
//! ## The room of a piece
//!
//! A piece's *room* is the bytes from its offset to the next piece above it (or the end
//! of the block): its own bytes, and unused bytes after them. Space is handed out in
//! three ways, each leaving every room intact:
//!
//! - a new piece, or a piece that outgrew its room, goes just below the top of row data,
//!   taking free space, and is given at least [`MIN_PIECE_ROOM`] bytes (a shorter piece
//!   is followed by zeros), so that any row can be replaced by a forwarding head where it
//!   stands when it migrates (Oracle's minimum row size);
//! - a piece that shrinks, or is replaced by one no longer than its room, stays where it
//!   is and keeps its room: an uncommitted update that shrank a row can always put the
//!   before-image back;
//! - a compaction moves the pieces up to the end of the block, keeping their order, and
//!   gives each its own bytes (at least `MIN_PIECE_ROOM`) or, for the rows its caller
//!   names ([`KeptRooms`]: those locked by transactions still active), its whole room.
//!   Only the unused room of the others, and holes left by pieces that moved or were
//!   emptied, become free space (a hole just above a kept row is part of its room, and
//!   comes back once its transaction has ended).
//!
//! ```text
//!  before:  │ free │ C: 6 bytes, room 11 │ hole: 40 │ B: 20 bytes, room 300 │ A │
//!  after:   │ free + 40 │ C: 6 bytes, room 11 │ B: 20 bytes, room 300 │ A │
//!           (B shrunk by a transaction still active, whose lock it holds)
//! ```
//!
//! So the space a transaction freed in a block stays its own until it ends, whoever
//! compacts the block meanwhile; that is what keeps every undo record applicable (see
//! `txn::change`).

use super::block_write::BlockWrite;

/// Block sizes a database may be created with.
pub const VALID_BLOCK_SIZES: [usize; 5] = [2048, 4096, 8192, 16384, 32768];
/// Bytes of the common header.
pub const HEADER_LEN: usize = 36;
/// Bytes of one ITL slot.
pub const ITL_LEN: usize = 24;
/// ITL slots formatted in a new data block (Oracle's INITRANS default for tables is 1,
/// and every block gets at least 2).
pub const DEFAULT_ITL_SLOTS: u8 = 2;
/// Bytes of row data every piece occupies at least: the length of a forwarding head, so
/// that a row can always migrate in place of its head (see the module doc).
pub const MIN_PIECE_ROOM: usize = super::row::FORWARDING_HEAD_LEN;

const OFF_TYPE: usize = 0;
const OFF_FORMAT: usize = 1;
const OFF_RDBA: usize = 4;
const OFF_SCN: usize = 8;
const OFF_CHECKSUM: usize = 16;
const OFF_OBJECT: usize = 20;
/// Where a block with ITL slots keeps their count, its directory's entry count and the
/// top of its row (or entry) space: shared by table and index blocks.
pub(crate) const OFF_ITL_COUNT: usize = 24;
pub(crate) const OFF_ROW_COUNT: usize = 26;
pub(crate) const OFF_ROW_TOP: usize = 28;

const FORMAT_VERSION: u8 = 1;

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockType {
    /// Never formatted (all zero): a block above a segment's high-water mark.
    Unformatted = 0,
    /// Block 0 of a datafile.
    FileHeader = 0x0b,
    /// Table rows (Oracle's type 6).
    TableData = 0x06,
    /// A segment header: extent map and high-water mark (Oracle's type 0x10).
    SegmentHeader = 0x10,
    /// An undo segment header: transaction table and undo ring (Oracle's type 0x0e).
    UndoHeader = 0x0e,
    /// Undo records of one transaction (Oracle's type 0x02).
    UndoData = 0x02,
    /// The undo tablespace's extent map: which undo segment owns which extent.
    UndoExtentMap = 0x1e,
    /// A B-tree leaf: index entries (key, rowid) in key order, with ITL slots.
    IndexLeaf = 0x22,
    /// A B-tree branch: separator keys and child block addresses.
    IndexBranch = 0x21,
    /// The head of a Hybrid Columnar Compression unit: its header, piece map, column
    /// directory, deleted-row bitmap and first payload bytes (see [`super::hcc`]).
    CuHead = 0x3a,
    /// A further block of a compression unit's payload.
    CuPiece = 0x3b,
}

impl BlockType {
    fn from_byte(b: u8) -> Option<BlockType> {
        Some(match b {
            0 => BlockType::Unformatted,
            0x0b => BlockType::FileHeader,
            0x06 => BlockType::TableData,
            0x10 => BlockType::SegmentHeader,
            0x0e => BlockType::UndoHeader,
            0x02 => BlockType::UndoData,
            0x1e => BlockType::UndoExtentMap,
            0x22 => BlockType::IndexLeaf,
            0x21 => BlockType::IndexBranch,
            0x3a => BlockType::CuHead,
            0x3b => BlockType::CuPiece,
            _ => return None,
        })
    }
}

/// Packs a file number and block number into a block address (Oracle's rdba).
pub fn rdba(file: u16, block: u32) -> u32 {
    assert!(file < 1024 && block < (1 << 22), "block address fields: file < 1024, block < 2^22");
    (u32::from(file) << 22) | block
}

/// The file number of a block address.
pub fn rdba_file(rdba: u32) -> u16 {
    (rdba >> 22) as u16
}

/// The block number of a block address within its file.
pub fn rdba_block(rdba: u32) -> u32 {
    rdba & ((1 << 22) - 1)
}

/// The little-endian `u16` at `off` (one bounds check for its bytes, not one a byte).
#[inline]
pub(crate) fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().expect("2 bytes"))
}

pub(crate) fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

/// The little-endian `u32` at `off` (one bounds check for its bytes, not one a byte).
#[inline]
pub(crate) fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

pub(crate) fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// Reads the header fields of any block.
#[derive(Debug, Clone, Copy)]
pub struct BlockHeader<'a>(pub &'a [u8]);

impl BlockHeader<'_> {
    pub fn block_type(&self) -> Option<BlockType> {
        BlockType::from_byte(self.0[OFF_TYPE])
    }
    pub fn rdba(&self) -> u32 {
        get_u32(self.0, OFF_RDBA)
    }
    pub fn object_id(&self) -> u32 {
        get_u32(self.0, OFF_OBJECT)
    }
    pub fn scn(&self) -> u64 {
        u64::from_le_bytes(self.0[OFF_SCN..OFF_SCN + 8].try_into().expect("8 bytes"))
    }
}

/// Writes the common header of a freshly formatted block (the rest is zeroed).
pub fn format_block(block: &mut [u8], block_type: BlockType, rdba: u32, object_id: u32) {
    block.fill(0);
    format_zeroed_block(block, block_type, rdba, object_id);
}

/// [`format_block`] for a block that is already all zero (a buffer
/// [`BufferCache::new_block`](crate::buffer::BufferCache::new_block) just gave): only the
/// header fields are written.
pub fn format_zeroed_block(block: &mut [u8], block_type: BlockType, rdba: u32, object_id: u32) {
    debug_assert!(block.iter().all(|&b| b == 0), "format_zeroed_block is given an all-zero block");
    write_header_fields(block, block_type, rdba, object_id);
}

/// The common header fields of a new block, written over zeros.
fn write_header_fields(block: &mut [u8], block_type: BlockType, rdba: u32, object_id: u32) {
    block[OFF_TYPE] = block_type as u8;
    block[OFF_FORMAT] = FORMAT_VERSION;
    put_u32(block, OFF_RDBA, rdba);
    put_u32(block, OFF_OBJECT, object_id);
}

/// Sets the SCN of the last change.
pub fn set_scn<B: BlockWrite + ?Sized>(block: &mut B, scn: u64) {
    block.put(OFF_SCN, &scn.to_le_bytes());
}

/// Stamps the checksum; called just before a block is written to disk.
pub fn seal(block: &mut [u8]) {
    put_u32(block, OFF_CHECKSUM, 0);
    let sum = crc32fast::hash(block);
    put_u32(block, OFF_CHECKSUM, sum);
}

/// Checks a block just read from disk: checksum, format and that it is the block that was
/// asked for. An all-zero block (never written) passes as `Unformatted`.
pub fn verify(block: &[u8], expected_rdba: u32) -> Result<BlockType, String> {
    if block.iter().all(|&b| b == 0) {
        return Ok(BlockType::Unformatted);
    }
    let stored = get_u32(block, OFF_CHECKSUM);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&block[..OFF_CHECKSUM]);
    hasher.update(&[0; 4]);
    hasher.update(&block[OFF_CHECKSUM + 4..]);
    let computed = hasher.finalize();
    if stored != computed {
        return Err(format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"));
    }
    if block[OFF_FORMAT] != FORMAT_VERSION {
        return Err(format!("unknown block format version {}", block[OFF_FORMAT]));
    }
    let header = BlockHeader(block);
    if header.rdba() != expected_rdba {
        return Err(format!("block claims address {:#x}, expected {expected_rdba:#x}", header.rdba()));
    }
    header.block_type().ok_or_else(|| format!("unknown block type {:#04x}", block[OFF_TYPE]))
}

/// Read access to a table data block.
#[derive(Debug, Clone, Copy)]
pub struct DataBlock<'a>(pub &'a [u8]);

impl<'a> DataBlock<'a> {
    #[inline]
    pub fn row_count(&self) -> usize {
        get_u16(self.0, OFF_ROW_COUNT) as usize
    }

    #[inline]
    fn directory_start(&self) -> usize {
        HEADER_LEN + self.0[OFF_ITL_COUNT] as usize * ITL_LEN
    }

    /// The offset of the row piece in `slot`, or 0 for an empty slot.
    #[inline]
    pub fn row_offset(&self, slot: usize) -> usize {
        get_u16(self.0, self.directory_start() + 2 * slot) as usize
    }

    /// The bytes from the piece in `slot` to the end of the block, `None` for an empty
    /// slot or an offset outside the block.
    #[inline]
    pub fn piece_bytes(&self, slot: usize) -> Option<&'a [u8]> {
        if slot >= self.row_count() {
            return None;
        }
        let off = self.row_offset(slot);
        if off == 0 { None } else { self.0.get(off..) }
    }

    /// Each slot's piece offset (0 for an empty slot), in slot order: one walk of the
    /// directory, without a bounds check a slot.
    #[inline]
    pub fn row_offsets(&self) -> impl Iterator<Item = usize> + 'a {
        self.directory().chunks_exact(2).map(|o| usize::from(u16::from_le_bytes([o[0], o[1]])))
    }

    /// The row directory: two bytes (a little-endian offset, 0 for empty) per slot.
    #[inline]
    pub fn directory(&self) -> &'a [u8] {
        let start = self.directory_start();
        &self.0[start..start + 2 * self.row_count()]
    }

    /// Offset just past the row directory.
    #[inline]
    fn directory_end(&self) -> usize {
        self.directory_start() + 2 * self.row_count()
    }

    /// Offset of the lowest row byte (the top of row data).
    #[inline]
    fn row_top(&self) -> usize {
        get_u16(self.0, OFF_ROW_TOP) as usize
    }

    /// Free bytes between the row directory and the top of row data.
    pub fn free_space(&self) -> usize {
        self.row_top().saturating_sub(self.directory_end())
    }

    /// Whether the header fields are consistent with the block's size: checked once per
    /// block before rows are trusted.
    pub fn check_layout(&self) -> Result<(), String> {
        let (top, dir_end) = (self.row_top(), self.directory_end());
        if top > self.0.len() || dir_end > top {
            return Err(format!("row directory ({dir_end}) overlaps row data ({top})"));
        }
        Ok(())
    }
}

/// The stored length of the row piece at `offset` (one the block's directory points at).
/// A piece that does not walk within the block (corrupt) counts as reaching its end, so
/// space accounting never finds room that is not there.
fn stored_len_at(block: &[u8], offset: usize) -> usize {
    let rest = block.len().saturating_sub(offset);
    block.get(offset..).and_then(super::row::RowPiece::new).and_then(|p| p.stored_len()).unwrap_or(rest).min(rest)
}

/// Bytes of row data a piece of `len` bytes is given: at least [`MIN_PIECE_ROOM`].
#[inline]
fn allocation(len: usize) -> usize {
    len.max(MIN_PIECE_ROOM)
}

/// The lock bytes (1-based ITL slot numbers) whose rows keep their whole room when a block
/// is compacted: the rows of transactions still active, whose undo may need that room to
/// put a longer before-image back. Filled by the transaction layer, which knows who is
/// active (`txn::change::kept_rooms`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeptRooms {
    /// Bit `n` set: rows whose lock byte is `n` keep their room.
    locks: [u64; 4],
}

impl KeptRooms {
    /// No room is kept: for a CR clone, a private copy nobody else takes space from.
    pub const NONE: KeptRooms = KeptRooms { locks: [0; 4] };

    /// Rows whose lock byte is `lock` keep their room.
    pub fn keep(&mut self, lock: u8) {
        self.locks[usize::from(lock / 64)] |= 1 << (lock % 64);
    }

    /// Whether rows whose lock byte is `lock` keep their room.
    #[inline]
    pub fn keeps(&self, lock: u8) -> bool {
        self.locks[usize::from(lock / 64)] & (1 << (lock % 64)) != 0
    }
}

/// One stored piece as a compaction sees it.
#[derive(Debug, Clone, Copy)]
struct PlacedPiece {
    slot: usize,
    offset: usize,
    /// Its own bytes (at most its room, even in a corrupt block).
    len: usize,
    /// The bytes a compaction gives it: its whole room if kept, else its own bytes, and
    /// never more than its room (nor, for a piece being replaced, anything).
    keep: usize,
}

/// Write access to a table data block, naming the bytes each change writes (see
/// [`BlockWrite`]): a row written in place, a lock byte, a new piece and its directory
/// entry; a layout change (a compaction, a grown ITL) writes the whole block.
pub struct DataBlockMut<'a, B: BlockWrite + ?Sized = [u8]>(pub &'a mut B);

impl DataBlockMut<'_> {
    /// Bytes needed to insert a piece of `len` bytes into a new directory slot (at least
    /// [`MIN_PIECE_ROOM`] for the piece).
    pub fn space_needed(len: usize) -> usize {
        allocation(len) + 2
    }
}

impl<B: BlockWrite + ?Sized> DataBlockMut<'_, B> {
    /// The block, to read.
    #[inline]
    fn view(&self) -> DataBlock<'_> {
        DataBlock(self.0.bytes())
    }

    #[cfg(test)]
    /// Formats an empty data block with `itl_slots` ITL slots.
    pub fn format(&mut self, rdba: u32, object_id: u32, itl_slots: u8) {
        self.0.whole_mut().fill(0);
        self.format_zeroed(rdba, object_id, itl_slots);
    }

    /// [`Self::format`] for a block that is already all zero (a buffer just claimed for a
    /// new block): only the header fields are written.
    pub fn format_zeroed(&mut self, rdba: u32, object_id: u32, itl_slots: u8) {
        let b = self.0.whole_mut();
        format_zeroed_block(b, BlockType::TableData, rdba, object_id);
        b[OFF_ITL_COUNT] = itl_slots;
        assert!(b.len() <= 32 * 1024, "block sizes are at most 32 KiB, so offsets fit in 16 bits");
        put_u16(b, OFF_ROW_TOP, b.len() as u16);
    }

    /// Inserts a row piece if, after it, at least `reserve` bytes stay free (PCTFREE).
    /// Returns the slot, or `None` if it does not fit.
    pub fn insert_piece(&mut self, piece: &[u8], reserve: usize) -> Option<u16> {
        self.insert_piece_with(piece.len(), reserve, |space| space.copy_from_slice(piece))
    }

    /// [`Self::insert_piece`] for a piece of `len` bytes that `write` writes straight into
    /// the block (it is handed exactly `len` bytes); `write` is not called if the piece
    /// does not fit.
    #[inline]
    pub fn insert_piece_with(&mut self, len: usize, reserve: usize, write: impl FnOnce(&mut [u8])) -> Option<u16> {
        let view = self.view();
        if view.free_space() < DataBlockMut::space_needed(len) + reserve {
            return None;
        }
        let slot = view.row_count();
        let dir = view.directory_end();
        let top = view.row_top() - allocation(len);
        self.write_at(top, len, write);
        self.0.put_u16(dir, top as u16);
        self.set_row_count_and_top(slot + 1, top);
        Some(slot as u16)
    }

    /// Writes the header's row count and top of row data (next to each other).
    fn set_row_count_and_top(&mut self, row_count: usize, top: usize) {
        let fields = self.0.range_mut(OFF_ROW_COUNT..OFF_ROW_TOP + 2);
        put_u16(fields, 0, row_count as u16);
        put_u16(fields, OFF_ROW_TOP - OFF_ROW_COUNT, top as u16);
    }

    /// Sets the lock byte (the second byte) of the row piece in `slot`.
    pub fn set_lock(&mut self, slot: usize, lock: u8) {
        let view = self.view();
        assert!(slot < view.row_count(), "set_lock targets a slot of the row directory");
        let offset = view.row_offset(slot);
        assert!(offset != 0 && offset + 1 < view.0.len(), "set_lock targets a stored row piece");
        self.0.range_mut(offset + 1..offset + 2)[0] = lock;
    }

    /// Sets the lock byte of every stored piece in `slots` (empty slots are skipped): one
    /// walk of the row directory, for handing a block's new rows to a transaction. The
    /// lock bytes of a few rows are named one by one; more are written as a write of the
    /// whole block (one copy of it, rather than a stretch kept for each row).
    pub fn set_locks(&mut self, slots: std::ops::Range<usize>, lock: u8) {
        /// Most rows whose lock bytes are named one by one.
        const NAMED: usize = 16;
        let view = self.view();
        assert!(slots.end <= view.row_count(), "set_locks targets slots of the row directory");
        let (start, len) = (view.directory_start(), view.0.len());
        if slots.len() > NAMED {
            self.0.whole_mut();
        }
        for slot in slots {
            let offset = get_u16(self.0.bytes(), start + 2 * slot) as usize;
            if offset != 0 {
                assert!(offset + 1 < len, "set_locks targets stored row pieces");
                self.0.range_mut(offset + 1..offset + 2)[0] = lock;
            }
        }
    }

    /// Writes a piece of `len` bytes at `offset` through `write`, zeroing the rest of its
    /// allocation (a piece shorter than [`MIN_PIECE_ROOM`]).
    fn write_at(&mut self, offset: usize, len: usize, write: impl FnOnce(&mut [u8])) {
        let room = self.0.range_mut(offset..offset + allocation(len));
        let (piece, rest) = room.split_at_mut(len);
        write(piece);
        rest.fill(0);
    }

    /// Replaces the piece in `slot` with one of `len` bytes that `write` writes: in place
    /// when it fits the piece's room (a row an uncommitted update shrank keeps its room,
    /// so its before-image always goes back), else in free space, compacting the block
    /// first if only scattered free space is left and `compaction` allows: `None` allows
    /// none, `Some(kept)` one that keeps the whole room of the rows `kept` names (see the
    /// module doc). Returns false, changing nothing, if the block cannot hold the piece.
    pub fn replace_piece(
        &mut self,
        slot: usize,
        len: usize,
        compaction: Option<&KeptRooms>,
        write: impl FnOnce(&mut [u8]),
    ) -> bool {
        let view = self.view();
        assert!(slot < view.row_count(), "replace_piece targets a slot of the row directory");
        let old = view.row_offset(slot);
        if old != 0 && len <= self.room_at(old) {
            write(self.0.range_mut(old..old + len));
            return true;
        }
        if !self.can_replace(slot, len, compaction) {
            return false;
        }
        if let Some(kept) = compaction.filter(|_| self.view().free_space() < allocation(len)) {
            self.compact_dropping(Some(slot), kept);
        }
        let top = self.view().row_top() - allocation(len);
        self.write_at(top, len, write);
        self.set_row_offset(slot, top);
        self.0.put_u16(OFF_ROW_TOP, top as u16);
        true
    }

    /// Whether [`Self::replace_piece`] would find room for a piece of `len` bytes in `slot`.
    pub fn can_replace(&self, slot: usize, len: usize, compaction: Option<&KeptRooms>) -> bool {
        let view = self.view();
        let old = view.row_offset(slot);
        if (old != 0 && len <= self.room_at(old)) || view.free_space() >= allocation(len) {
            return true;
        }
        compaction.is_some_and(|kept| self.compacted_free_space(Some(slot), kept) >= allocation(len))
    }

    /// Bytes from the piece at `offset` to the next piece above it (or the block's end).
    fn room_at(&self, offset: usize) -> usize {
        let view = self.view();
        view.row_offsets().filter(|&o| o > offset).min().unwrap_or(view.0.len()) - offset
    }

    /// Empties `slot`: the directory entry stays (slots are never renumbered) and reads 0.
    pub fn empty_slot(&mut self, slot: usize) {
        assert!(slot < self.view().row_count(), "empty_slot targets a slot of the row directory");
        self.set_row_offset(slot, 0);
    }

    fn set_row_offset(&mut self, slot: usize, offset: usize) {
        let at = self.view().directory_start() + 2 * slot;
        self.0.put_u16(at, offset as u16);
    }

    /// The stored pieces by offset, each with what a compaction keeping the rooms `kept`
    /// names gives it; the piece in `dropping` (about to be replaced) is given nothing.
    fn placed_pieces(&self, dropping: Option<usize>, kept: &KeptRooms) -> Vec<PlacedPiece> {
        let view = self.view();
        let b = view.0;
        let mut pieces: Vec<PlacedPiece> = (0..view.row_count())
            .filter(|&slot| view.row_offset(slot) != 0)
            .map(|slot| PlacedPiece { slot, offset: view.row_offset(slot), len: 0, keep: 0 })
            .collect();
        pieces.sort_unstable_by_key(|p| p.offset);
        let mut above = b.len();
        for piece in pieces.iter_mut().rev() {
            let room = above.saturating_sub(piece.offset);
            // An offset past the block's end (a corrupt block) gives no room to anyone.
            above = above.min(piece.offset);
            piece.len = stored_len_at(b, piece.offset).min(room);
            let lock = b.get(piece.offset + 1).copied().unwrap_or(0);
            piece.keep = if dropping == Some(piece.slot) {
                0
            } else if kept.keeps(lock) {
                room
            } else {
                piece.len.max(MIN_PIECE_ROOM.min(room))
            };
        }
        pieces
    }

    /// Free bytes the block would have after [`Self::compact`] with `kept`, the piece in
    /// `dropping` left out.
    fn compacted_free_space(&self, dropping: Option<usize>, kept: &KeptRooms) -> usize {
        let used: usize = self.placed_pieces(dropping, kept).iter().map(|p| p.keep).sum();
        (self.0.bytes().len() - self.view().directory_end()).saturating_sub(used)
    }

    #[cfg(test)]
    /// Moves every stored piece up to the end of the block, in the order they lie, without
    /// gaps but for the rooms `kept` keeps: the space left by pieces that moved or were
    /// emptied, and the unused room of the other pieces, becomes free space again. Slots
    /// keep their numbers.
    pub fn compact(&mut self, kept: &KeptRooms) {
        self.compact_dropping(None, kept);
    }

    /// [`Self::compact`], emptying the slot `dropping` (a piece about to be replaced).
    fn compact_dropping(&mut self, dropping: Option<usize>, kept: &KeptRooms) {
        let pieces = self.placed_pieces(dropping, kept);
        let directory = self.view().directory_start();
        let b = self.0.whole_mut();
        let mut top = b.len();
        // From the highest piece down, each moves up (never below where it was: the rooms
        // above a piece add up to the bytes above it), over pieces already moved.
        for piece in pieces.iter().rev() {
            let at = directory + 2 * piece.slot;
            if dropping == Some(piece.slot) {
                put_u16(b, at, 0);
                continue;
            }
            top -= piece.keep;
            if piece.len > 0 {
                b.copy_within(piece.offset..piece.offset + piece.len, top);
            }
            b[top + piece.len..top + piece.keep].fill(0);
            put_u16(b, at, top as u16);
        }
        put_u16(b, OFF_ROW_TOP, top as u16);
    }

    /// Adds one ITL slot if the free space allows (the row directory moves down by one
    /// slot's size; rows stay). Returns whether it did.
    pub fn grow_itl(&mut self) -> bool {
        let view = self.view();
        let count = view.0[OFF_ITL_COUNT];
        // A lock byte names slots 1..=254: 255 marks a row whose insert has not ended.
        if view.free_space() < ITL_LEN || count >= u8::MAX - 1 {
            return false;
        }
        let (start, end) = (view.directory_start(), view.directory_end());
        let b = self.0.whole_mut();
        b.copy_within(start..end, start + ITL_LEN);
        b[start..start + ITL_LEN].fill(0);
        b[OFF_ITL_COUNT] = count + 1;
        true
    }

    /// For a private copy of the block (a CR clone) whose undo needs more room: keeps its
    /// first `itl_slots` ITL slots (the caller knows the slots after them are free: see
    /// `itl::shed_unused_tail`) and drops the empty row-directory entries at the end,
    /// moving the directory up. Returns whether anything was dropped.
    pub fn shed_tail(&mut self, itl_slots: usize) -> bool {
        let view = self.view();
        let rows = (0..view.row_count()).rposition(|s| view.row_offset(s) != 0).map_or(0, |last| last + 1);
        let slots = usize::from(view.0[OFF_ITL_COUNT]);
        assert!(itl_slots <= slots, "a block sheds ITL slots, never grows them ({itl_slots} of {slots})");
        if rows == view.row_count() && itl_slots == slots {
            return false;
        }
        let (start, end, new_start) = (view.directory_start(), view.directory_end(), HEADER_LEN + itl_slots * ITL_LEN);
        let b = self.0.whole_mut();
        b.copy_within(start..start + 2 * rows, new_start);
        b[new_start + 2 * rows..end].fill(0);
        b[OFF_ITL_COUNT] = itl_slots as u8;
        put_u16(b, OFF_ROW_COUNT, rows as u16);
        true
    }

    /// Removes the newest rows so that `row_count` remain: undoes inserts of a failed
    /// statement. The rows removed must be the last ones inserted.
    pub fn truncate_rows(&mut self, row_count: usize) {
        let view = self.view();
        assert!(row_count <= view.row_count(), "truncate_rows only removes rows");
        // The lowest piece still referenced (slots may have been emptied by undo).
        let top = (0..row_count).map(|s| view.row_offset(s)).filter(|&o| o != 0).min().unwrap_or(view.0.len());
        self.set_row_count_and_top(row_count, top);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seal_then_verify() {
        let mut b = vec![0u8; 8192];
        DataBlockMut(&mut b).format(rdba(1, 130), 77, 2);
        seal(&mut b);
        assert_eq!(verify(&b, rdba(1, 130)), Ok(BlockType::TableData));
        assert!(verify(&b, rdba(1, 131)).unwrap_err().contains("claims address"));
        b[5000] ^= 1;
        assert!(verify(&b, rdba(1, 130)).unwrap_err().contains("checksum"));
    }

    #[test]
    fn pctfree_reserve_is_honoured() {
        let mut b = vec![0u8; 2048];
        let mut blk = DataBlockMut(&mut b);
        blk.format(rdba(1, 1), 1, 2);
        let piece = [0x2c, 0, 0];
        let reserve = 2048 / 10;
        while blk.insert_piece(&piece, reserve).is_some() {}
        let free = DataBlock(&b).free_space();
        // A 3-byte piece takes a forwarding head's room and a directory entry: 13 bytes.
        let each = DataBlockMut::space_needed(piece.len());
        assert_eq!(each, MIN_PIECE_ROOM + 2);
        assert!(free >= reserve && free < reserve + each, "free {free}, reserve {reserve}");
    }

    /// A whole row of `n` bytes (one column of `n - 4`), locked through ITL slot `lock`.
    fn row_piece(n: usize, lock: u8, fill: u8) -> Vec<u8> {
        let mut p = vec![0x2c, lock, 1, (n - 4) as u8];
        p.extend(std::iter::repeat_n(fill, n - 4));
        p
    }

    /// The piece in `slot`, as long as it walks.
    fn piece_at(b: &[u8], slot: usize) -> Vec<u8> {
        let bytes = DataBlock(b).piece_bytes(slot).unwrap();
        bytes[..crate::storage::row::RowPiece::new(bytes).unwrap().stored_len().unwrap()].to_vec()
    }

    /// Rows shorter than a forwarding head fill a block to its last bytes: each was given
    /// a forwarding head's room, so any of them can become one where it stands.
    #[test]
    fn a_block_full_of_short_rows_takes_a_forwarding_head_in_place_of_any() {
        let mut b = vec![0u8; 2048];
        DataBlockMut(&mut b).format(rdba(1, 1), 1, 2);
        let short = [0x2c, 0, 1, 1, 7]; // one column of one byte: 5 bytes
        while DataBlockMut(&mut b).insert_piece(&short, 0).is_some() {}
        assert!(DataBlock(&b).free_space() < MIN_PIECE_ROOM, "the block is full");
        let mut head = Vec::new();
        crate::storage::row::encode_fragment(
            true,
            1,
            Some(crate::storage::row::PieceAddr { rdba: 7, slot: 3 }),
            &[],
            &mut head,
        );
        for slot in [0, 40, DataBlock(&b).row_count() - 1] {
            assert!(DataBlockMut(&mut b).replace_piece(slot, head.len(), None, |s| s.copy_from_slice(&head)));
            assert_eq!(piece_at(&b, slot), head);
        }
        assert_eq!(piece_at(&b, 1), short, "the neighbours are untouched");
    }

    /// A directory offset past the block's end (a corrupt block) lends no room to the piece
    /// below it: a compaction moves no piece down over another.
    #[test]
    fn a_compaction_beside_an_offset_past_the_end_keeps_every_row() {
        let mut b = vec![0u8; 2048];
        DataBlockMut(&mut b).format(rdba(1, 1), 1, 2);
        for (lock, fill) in [(1, 0xA1), (0, 0xB2), (0, 0xC3)] {
            DataBlockMut(&mut b).insert_piece(&row_piece(100, lock, fill), 0).unwrap();
        }
        DataBlockMut(&mut b).set_row_offset(2, 2048 + 100);
        let mut kept = KeptRooms::NONE;
        kept.keep(1);
        DataBlockMut(&mut b).compact(&kept);
        assert_eq!(piece_at(&b, 0), row_piece(100, 1, 0xA1));
        assert_eq!(piece_at(&b, 1), row_piece(100, 0, 0xB2));
    }

    /// A compaction gives back the unused room of rows it is not told to keep, and holes;
    /// the rooms it keeps still take their rows' longer images in place.
    #[test]
    fn compaction_keeps_the_rooms_it_is_told_to_keep() {
        let mut b = vec![0u8; 2048];
        DataBlockMut(&mut b).format(rdba(1, 1), 1, 2);
        for (lock, fill) in [(1, 0xA1), (2, 0xB2), (0, 0xC3), (0, 0xD4)] {
            DataBlockMut(&mut b).insert_piece(&row_piece(100, lock, fill), 0).unwrap();
        }
        let free = DataBlock(&b).free_space();
        // Rows 0 and 1 shrink in place; row 2 outgrows its room and moves, leaving a hole.
        for slot in [0, 1] {
            let short = row_piece(20, slot as u8 + 1, 0xEE);
            assert!(DataBlockMut(&mut b).replace_piece(slot, 20, None, |s| s.copy_from_slice(&short)));
        }
        let long = row_piece(150, 0, 0xC3);
        assert!(DataBlockMut(&mut b).replace_piece(2, 150, None, |s| s.copy_from_slice(&long)));
        assert_eq!(DataBlock(&b).free_space(), free - 150);
        let mut kept = KeptRooms::NONE;
        kept.keep(1);
        DataBlockMut(&mut b).compact(&kept);
        // Back: row 1's unused 80 bytes and row 2's 100-byte hole; row 0 keeps its room.
        assert_eq!(DataBlock(&b).free_space(), free - 150 + 80 + 100);
        assert!(DataBlock(&b).check_layout().is_ok());
        assert_eq!(piece_at(&b, 2), long);
        assert_eq!(piece_at(&b, 3), row_piece(100, 0, 0xD4));
        let before = row_piece(100, 0, 0xA1);
        let full = DataBlock(&b).free_space();
        assert!(DataBlockMut(&mut b).replace_piece(0, 100, None, |s| s.copy_from_slice(&before)));
        assert_eq!(DataBlock(&b).free_space(), full, "row 0's image went back in its room");
        assert_eq!(piece_at(&b, 0), before);
    }

    /// A clone drops the ITL slots no transaction holds and the empty directory entries
    /// at its end (never below the ITL slots a block is formatted with); its rows stay.
    #[test]
    fn a_clone_sheds_the_unused_end_of_its_itl_and_directory() {
        let mut b = vec![0u8; 2048];
        DataBlockMut(&mut b).format(rdba(1, 1), 1, 2);
        assert!(DataBlockMut(&mut b).grow_itl() && DataBlockMut(&mut b).grow_itl());
        let held = crate::storage::itl::Itl {
            xid: crate::storage::ids::Xid { usn: 1, slot: 2, wrap: 3 },
            ..Default::default()
        };
        crate::storage::itl::put(&mut b, 2, &held);
        for fill in [0xA1, 0xB2, 0xC3] {
            DataBlockMut(&mut b).insert_piece(&row_piece(30, 0, fill), 0).unwrap();
        }
        DataBlockMut(&mut b).empty_slot(2);
        let free = DataBlock(&b).free_space();
        assert!(crate::storage::itl::shed_unused_tail(&mut b));
        assert_eq!((crate::storage::itl::itl_count(&b), DataBlock(&b).row_count()), (3, 2));
        assert_eq!(DataBlock(&b).free_space(), free + ITL_LEN + 2);
        assert_eq!(crate::storage::itl::get(&b, 2), held);
        assert_eq!((piece_at(&b, 0), piece_at(&b, 1)), (row_piece(30, 0, 0xA1), row_piece(30, 0, 0xB2)));
        crate::storage::itl::put(&mut b, 2, &crate::storage::itl::Itl::default());
        assert!(crate::storage::itl::shed_unused_tail(&mut b));
        assert_eq!(crate::storage::itl::itl_count(&b), 2);
        assert!(!crate::storage::itl::shed_unused_tail(&mut b), "nothing more to drop");
        assert!(DataBlock(&b).check_layout().is_ok());
        assert_eq!(piece_at(&b, 1), row_piece(30, 0, 0xB2));
    }

    #[test]
    fn formatting_a_zeroed_block_writes_what_format_does() {
        let mut formatted = vec![0xA5u8; 4096];
        DataBlockMut(&mut formatted).format(rdba(1, 9), 42, 3);
        let mut zeroed = vec![0u8; 4096];
        DataBlockMut(&mut zeroed).format_zeroed(rdba(1, 9), 42, 3);
        assert_eq!(zeroed, formatted);
    }

    /// Locking a range of slots in one walk does what locking them one by one does, and
    /// skips empty slots.
    #[test]
    fn set_locks_matches_set_lock_per_slot() {
        let mut one_by_one = vec![0u8; 2048];
        DataBlockMut(&mut one_by_one).format(rdba(1, 1), 1, 2);
        for i in 0..6u8 {
            DataBlockMut(&mut one_by_one).insert_piece(&[0x2c, 0, 1, 1, i], 0);
        }
        DataBlockMut(&mut one_by_one).empty_slot(3);
        let mut walked = one_by_one.clone();
        for slot in [1, 2, 4] {
            DataBlockMut(&mut one_by_one).set_lock(slot, 7);
        }
        DataBlockMut(&mut walked).set_locks(1..5, 7);
        assert_eq!(walked, one_by_one);
    }

    proptest! {
        #[test]
        fn pieces_come_back_and_truncate_restores(sizes in proptest::collection::vec(3usize..600, 1..60), keep in 0usize..60) {
            let mut b = vec![0u8; 8192];
            let mut blk = DataBlockMut(&mut b);
            blk.format(rdba(2, 9), 5, 2);
            let mut stored = Vec::new();
            for (i, size) in sizes.iter().enumerate() {
                let piece = vec![i as u8; *size];
                if blk.insert_piece(&piece, 0).is_some() { stored.push(piece); }
            }
            let view = DataBlock(&b);
            prop_assert!(view.check_layout().is_ok());
            prop_assert_eq!(view.row_count(), stored.len());
            for (slot, piece) in stored.iter().enumerate() {
                prop_assert_eq!(&view.piece_bytes(slot).unwrap()[..piece.len()], &piece[..]);
            }
            let keep = keep.min(stored.len());
            let free_before: usize = {
                let mut c = vec![0u8; 8192];
                let mut m = DataBlockMut(&mut c);
                m.format(rdba(2, 9), 5, 2);
                for p in &stored[..keep] { m.insert_piece(p, 0); }
                DataBlock(&c).free_space()
            };
            DataBlockMut(&mut b).truncate_rows(keep);
            prop_assert_eq!(DataBlock(&b).free_space(), free_before);
        }

        /// Inserts, replacements (in place, moved, after a compaction keeping some rows'
        /// rooms) and compactions keep the block's layout sound, every piece readable as
        /// last written, and every piece's room at least a forwarding head's.
        #[test]
        fn every_piece_keeps_room_for_a_forwarding_head(
            steps in proptest::collection::vec((0u8..3, 0usize..64, 4usize..200, 0u8..3), 1..120),
        ) {
            let mut b = vec![0u8; 2048];
            DataBlockMut(&mut b).format(rdba(1, 1), 1, 2);
            let mut kept = KeptRooms::NONE;
            kept.keep(1);
            let mut rows: Vec<Vec<u8>> = Vec::new();
            for (i, &(op, slot, len, lock)) in steps.iter().enumerate() {
                let piece = row_piece(len, lock, i as u8);
                match op {
                    0 => {
                        if DataBlockMut(&mut b).insert_piece(&piece, 0).is_some() { rows.push(piece); }
                    }
                    1 if !rows.is_empty() => {
                        let slot = slot % rows.len();
                        let compaction = (lock != 2).then_some(&kept);
                        if DataBlockMut(&mut b).replace_piece(slot, len, compaction, |s| s.copy_from_slice(&piece)) {
                            rows[slot] = piece;
                        }
                    }
                    _ => DataBlockMut(&mut b).compact(&kept),
                }
                let view = DataBlock(&b);
                prop_assert!(view.check_layout().is_ok());
                let mut offsets: Vec<usize> = (0..view.row_count()).map(|s| view.row_offset(s)).collect();
                offsets.sort_unstable();
                offsets.push(b.len());
                prop_assert!(offsets.windows(2).all(|w| w[1] - w[0] >= MIN_PIECE_ROOM), "rooms {offsets:?}");
                for (slot, row) in rows.iter().enumerate() {
                    prop_assert_eq!(&piece_at(&b, slot), row);
                }
            }
        }
    }
}

//! Hybrid Columnar Compression: the compression units (CUs) of a table compressed `FOR
//! QUERY LOW|HIGH` or `FOR ARCHIVE LOW|HIGH`, as stored in ordinary blocks of its segment.
//!
//! A CU holds a few thousand rows organised by column, each column compressed on its
//! own, so that a scan decompresses only the columns it reads. It is written by a
//! direct-path load into consecutive blocks of the segment: a head block and as many
//! piece blocks as its compressed bytes need. Each is an ordinary block (common header,
//! checksum, block address, data object id, SCN; read through the buffer cache, covered
//! by redo), typed [`BlockType::CuHead`] or [`BlockType::CuPiece`] so that no row path
//! ever mistakes one for a block of rows.
//!
//! ```text
//!  head block (BlockType::CuHead)
//!  offset        size        field
//!  0             36          common block header (block.rs); byte 24: ITL slots (2)
//!  36            48          2 ITL slots, as a data block's (itl.rs): the transactions
//!                              that marked rows of the CU deleted, or loaded it
//!  84            1           CU format version (2)
//!  85            1           level: 1 QUERY LOW, 2 QUERY HIGH, 3 ARCHIVE LOW, 4 ARCHIVE HIGH
//!  86            2           columns
//!  88            4           rows
//!  92            4           deleted rows (bits set in the deleted-row bitmap)
//!  96            4           payload bytes: every column compressed, one after another
//!  100           4           decompressed bytes: the columns before compression, in all
//!  104           4           CRC-32 of the payload
//!  108           2           pieces: blocks of the CU, the head included
//!  110           2           (reserved)
//!  112           4 × pieces  piece map: the block address of each piece, the head first
//!  ..            20 × cols   column directory, one entry a column:
//!                              kind u8 (the value kind the column store uses), 3 reserved,
//!                              offset in the payload u32, compressed bytes u32,
//!                              decompressed bytes u32, CRC-32 of the decompressed bytes u32
//!  ..            ⌈rows / 8⌉  deleted-row bitmap (bit r of byte r / 8: row r is deleted)
//!  ..            2 × ⌈rows / 8⌉  row-lock bitmaps, one an ITL slot: bit r of slot i's map
//!                              set: row r was marked deleted through slot i (locked while
//!                              the slot's transaction is active)
//!  ..            to the end  the payload's first bytes
//!
//!  piece block (BlockType::CuPiece)
//!  0             36          common block header
//!  36            4           block address of the CU's head
//!  40            2           piece number (1 for the block after the head)
//!  42            2           (reserved)
//!  44            to the end  the payload's next bytes
//! ```
//!
//! A row of a CU is addressed by the head's block address and its row number in the
//! CU, as a row of a block is by its slot.
//!
//! Rows of a CU change only by being marked deleted (a DELETE, or an UPDATE that moves
//! the row out into a row block), in the head block, through one of its ITL slots, as a
//! row of a data block changes: the slot names the transaction and its undo, and the
//! slot's lock bitmap says which rows it holds. The head's ITL never grows: a third
//! transaction waits for one of the two to end (Oracle's `enq: TX - allocate ITL
//! entry`). A slot's lock bits mean nothing once its transaction has ended; whoever
//! takes the slot over clears them.
//!
//! Levels and their algorithms, chosen as Oracle's: QUERY LOW compresses with LZ4 (an
//! LZO-class byte compressor, fastest to decompress; the `lz4_flex` crate), QUERY HIGH and
//! ARCHIVE LOW with zlib at levels 6 and 9, ARCHIVE HIGH with bzip2 at level 9
//! (`bzip2`). CUs grow with the level (about 32 KiB, 64 KiB, 256 KiB and 256 KiB of
//! compressed bytes), which the loader decides ([`HccLevel::target_payload`]).
//!
//! zlib streams are written by `miniz_oxide`'s deflate and read by `flate2` on its
//! `zlib-rs` backend: on the customers columns, `miniz_oxide` at level 6 writes a QUERY
//! HIGH copy in 3,087 blocks where `zlib-rs` takes 3,749, and `zlib-rs` inflates it in
//! 97 instructions a row of the scan where `miniz_oxide` takes 142 (callgrind, 1 M rows).
//!
//! Invariants: the payload is exactly the columns' compressed bytes, at their offsets
//! in directory order; every piece but the last is full; a column decompresses to
//! exactly its decompressed bytes and their CRC-32; the deleted count is the bitmap's
//! population. Whatever fails to hold when a CU is read is corruption, reported with
//! the block and what is wrong (never a panic). A scan relies on the blocks' own
//! checksums (checked as each is read from disk) and checks the CRC-32 of each column it
//! decompresses; the payload's CRC-32 is for whoever reads a CU whole.

use super::block::{BlockType, HEADER_LEN, ITL_LEN, get_u16, get_u32, put_u16, put_u32};
use std::io::Write;

/// The CU format this build writes and reads.
pub const CU_FORMAT_VERSION: u8 = 2;

/// ITL slots of a CU's head block (fixed: the head's ITL never grows).
pub const CU_ITL_SLOTS: usize = 2;
/// Where the CU's own fields start in its head block: after the ITL.
const FIELDS: usize = HEADER_LEN + CU_ITL_SLOTS * ITL_LEN;
const OFF_ITL_COUNT: usize = 24;
const OFF_VERSION: usize = FIELDS;
const OFF_LEVEL: usize = FIELDS + 1;
const OFF_COLUMNS: usize = FIELDS + 2;
const OFF_ROWS: usize = FIELDS + 4;
const OFF_DELETED: usize = FIELDS + 8;
const OFF_PAYLOAD_LEN: usize = FIELDS + 12;
const OFF_DECOMPRESSED_LEN: usize = FIELDS + 16;
const OFF_PAYLOAD_CRC: usize = FIELDS + 20;
const OFF_PIECES: usize = FIELDS + 24;
/// Where the piece map starts in a head block.
const OFF_PIECE_MAP: usize = FIELDS + 28;
/// Bytes of one column directory entry.
const COLUMN_ENTRY_LEN: usize = 20;

const OFF_PIECE_HEAD: usize = HEADER_LEN;
const OFF_PIECE_NUMBER: usize = HEADER_LEN + 4;
/// Where a piece block's payload starts.
pub const PIECE_PAYLOAD_START: usize = HEADER_LEN + 8;

/// Most rows a CU holds (its row numbers fit a rowid's slot).
pub const MAX_CU_ROWS: usize = 32_768;

/// Most rows a CU in blocks of `block_size` bytes holds: its deleted-row and row-lock
/// bitmaps take at most three eighths of the head block, which leaves room for the
/// piece map and the column directory.
pub fn max_cu_rows(block_size: usize) -> usize {
    block_size.min(MAX_CU_ROWS)
}

/// Bytes of each of a CU's bitmaps (deleted rows, and one lock map an ITL slot).
fn bitmap_len(rows: usize) -> usize {
    rows.div_ceil(8)
}

/// `COMPRESS FOR ...`: the Hybrid Columnar Compression levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum HccLevel {
    QueryLow,
    QueryHigh,
    ArchiveLow,
    ArchiveHigh,
}

impl HccLevel {
    pub const ALL: [HccLevel; 4] =
        [HccLevel::QueryLow, HccLevel::QueryHigh, HccLevel::ArchiveLow, HccLevel::ArchiveHigh];

    /// As `user_tables.compress_for` shows it.
    pub fn name(self) -> &'static str {
        match self {
            HccLevel::QueryLow => "QUERY LOW",
            HccLevel::QueryHigh => "QUERY HIGH",
            HccLevel::ArchiveLow => "ARCHIVE LOW",
            HccLevel::ArchiveHigh => "ARCHIVE HIGH",
        }
    }

    /// The level named by the words after `COMPRESS FOR` (`QUERY LOW`, `QUERY` alone
    /// meaning QUERY HIGH and `ARCHIVE` alone ARCHIVE LOW, as in Oracle), upper case.
    pub fn from_words(words: &[&str]) -> Option<HccLevel> {
        Some(match words {
            ["QUERY", "LOW"] => HccLevel::QueryLow,
            ["QUERY"] | ["QUERY", "HIGH"] => HccLevel::QueryHigh,
            ["ARCHIVE"] | ["ARCHIVE", "LOW"] => HccLevel::ArchiveLow,
            ["ARCHIVE", "HIGH"] => HccLevel::ArchiveHigh,
            _ => return None,
        })
    }

    fn code(self) -> u8 {
        match self {
            HccLevel::QueryLow => 1,
            HccLevel::QueryHigh => 2,
            HccLevel::ArchiveLow => 3,
            HccLevel::ArchiveHigh => 4,
        }
    }

    fn from_code(code: u8) -> Option<HccLevel> {
        HccLevel::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The compressed bytes a CU of this level aims at.
    pub fn target_payload(self) -> usize {
        match self {
            HccLevel::QueryLow => 32 << 10,
            HccLevel::QueryHigh => 64 << 10,
            HccLevel::ArchiveLow | HccLevel::ArchiveHigh => 256 << 10,
        }
    }
}

/// Compresses one column's bytes at `level`.
pub fn compress(level: HccLevel, bytes: &[u8]) -> Vec<u8> {
    match level {
        HccLevel::QueryLow => lz4_flex::block::compress(bytes),
        HccLevel::QueryHigh | HccLevel::ArchiveLow => {
            let strength = if level == HccLevel::QueryHigh { 6 } else { 9 };
            miniz_oxide::deflate::compress_to_vec_zlib(bytes, strength)
        }
        HccLevel::ArchiveHigh => {
            let mut z = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
            z.write_all(bytes).expect("compressing into memory does not fail");
            z.finish().expect("compressing into memory does not fail")
        }
    }
}

/// Decompresses one column's `compressed` bytes, which must give exactly `len` bytes,
/// into `out` (cleared first).
pub fn decompress(level: HccLevel, compressed: &[u8], len: usize, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    match level {
        HccLevel::QueryLow => {
            out.resize(len, 0);
            let n = lz4_flex::block::decompress_into(compressed, out).map_err(|e| format!("LZ4: {e}"))?;
            if n != len {
                return Err(format!("LZ4 gave {n} bytes, the directory says {len}"));
            }
        }
        // Straight into `out`, sized once: no reader's intermediate buffer to fill and
        // copy out of, a column at a time.
        HccLevel::QueryHigh | HccLevel::ArchiveLow => {
            out.reserve_exact(len + 1);
            let mut z = flate2::Decompress::new(true);
            let status =
                z.decompress_vec(compressed, out, flate2::FlushDecompress::Finish).map_err(|e| format!("zlib: {e}"))?;
            if status != flate2::Status::StreamEnd {
                return Err(format!("zlib: the column's stream does not end within {len} bytes"));
            }
        }
        HccLevel::ArchiveHigh => {
            out.reserve_exact(len + 1);
            let mut z = bzip2::Decompress::new(false);
            let status = z.decompress_vec(compressed, out).map_err(|e| format!("bzip2: {e}"))?;
            if status != bzip2::Status::StreamEnd {
                return Err(format!("bzip2: the column's stream does not end within {len} bytes"));
            }
        }
    }
    if out.len() != len {
        return Err(format!("a column decompressed to {} bytes, the directory says {len}", out.len()));
    }
    Ok(())
}

/// One column of a CU as the directory describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnEntry {
    /// How the column's values are held (the column store's value kind, as a code).
    pub kind: u8,
    /// Where its compressed bytes start in the payload.
    pub offset: u32,
    pub compressed_len: u32,
    pub decompressed_len: u32,
    /// CRC-32 of the decompressed bytes.
    pub crc: u32,
}

/// A CU ready to be written: its columns compressed and laid end to end.
#[derive(Debug, Clone)]
pub struct CompressedCu {
    pub level: HccLevel,
    pub rows: u32,
    pub columns: Vec<ColumnEntry>,
    pub payload: Vec<u8>,
}

impl CompressedCu {
    /// Compresses `columns` (each column's kind code and bytes) of a CU of `rows` rows.
    pub fn new(level: HccLevel, rows: usize, columns: &[(u8, Vec<u8>)]) -> CompressedCu {
        assert!(rows <= MAX_CU_ROWS, "a CU holds at most {MAX_CU_ROWS} rows, not {rows}");
        let mut payload = Vec::new();
        let entries = columns
            .iter()
            .map(|(kind, bytes)| {
                let compressed = compress(level, bytes);
                let entry = ColumnEntry {
                    kind: *kind,
                    offset: payload.len() as u32,
                    compressed_len: compressed.len() as u32,
                    decompressed_len: bytes.len() as u32,
                    crc: crc32fast::hash(bytes),
                };
                payload.extend_from_slice(&compressed);
                entry
            })
            .collect();
        CompressedCu { level, rows: rows as u32, columns: entries, payload }
    }

    /// Bytes of the columns before compression.
    pub fn decompressed_len(&self) -> u64 {
        self.columns.iter().map(|c| u64::from(c.decompressed_len)).sum()
    }

    /// Where the payload starts in the head block of a CU of `pieces` blocks.
    fn head_payload_start(&self, pieces: usize) -> usize {
        OFF_PIECE_MAP
            + 4 * pieces
            + COLUMN_ENTRY_LEN * self.columns.len()
            + (1 + CU_ITL_SLOTS) * bitmap_len(self.rows as usize)
    }

    /// The blocks of `block_size` bytes the CU takes, the head included; `None` when its
    /// header alone does not fit in a block (too many columns or rows for the block size).
    pub fn pieces(&self, block_size: usize) -> Option<usize> {
        let per_piece = block_size - PIECE_PAYLOAD_START;
        // The piece map grows with the pieces: start from one and grow until it fits.
        let mut pieces = 1;
        loop {
            let start = self.head_payload_start(pieces);
            if start > block_size {
                return None;
            }
            let in_head = block_size - start;
            let needed = 1 + self.payload.len().saturating_sub(in_head).div_ceil(per_piece);
            if needed <= pieces {
                return Some(pieces);
            }
            pieces = needed;
        }
    }

    /// Writes piece `number` (0 = the head) of the CU whose pieces are at `addresses`
    /// into `block`, a block already formatted (common header) as a CU head or piece.
    pub fn write_piece(&self, number: usize, addresses: &[u32], block: &mut [u8]) {
        let block_size = block.len();
        let head_start = self.head_payload_start(addresses.len());
        let in_head = (block_size - head_start).min(self.payload.len());
        if number == 0 {
            block[OFF_ITL_COUNT] = CU_ITL_SLOTS as u8;
            block[OFF_VERSION] = CU_FORMAT_VERSION;
            block[OFF_LEVEL] = self.level.code();
            put_u16(block, OFF_COLUMNS, self.columns.len() as u16);
            put_u32(block, OFF_ROWS, self.rows);
            put_u32(block, OFF_DELETED, 0);
            put_u32(block, OFF_PAYLOAD_LEN, self.payload.len() as u32);
            put_u32(block, OFF_DECOMPRESSED_LEN, self.decompressed_len() as u32);
            put_u32(block, OFF_PAYLOAD_CRC, crc32fast::hash(&self.payload));
            put_u16(block, OFF_PIECES, addresses.len() as u16);
            for (i, &a) in addresses.iter().enumerate() {
                put_u32(block, OFF_PIECE_MAP + 4 * i, a);
            }
            let directory = OFF_PIECE_MAP + 4 * addresses.len();
            for (i, c) in self.columns.iter().enumerate() {
                let at = directory + COLUMN_ENTRY_LEN * i;
                block[at] = c.kind;
                put_u32(block, at + 4, c.offset);
                put_u32(block, at + 8, c.compressed_len);
                put_u32(block, at + 12, c.decompressed_len);
                put_u32(block, at + 16, c.crc);
            }
            block[head_start..head_start + in_head].copy_from_slice(&self.payload[..in_head]);
        } else {
            let per_piece = block_size - PIECE_PAYLOAD_START;
            let from = in_head + (number - 1) * per_piece;
            let to = (from + per_piece).min(self.payload.len());
            put_u32(block, OFF_PIECE_HEAD, addresses[0]);
            put_u16(block, OFF_PIECE_NUMBER, number as u16);
            block[PIECE_PAYLOAD_START..PIECE_PAYLOAD_START + (to - from)].copy_from_slice(&self.payload[from..to]);
        }
    }
}

/// The head of a CU, read from its head block.
#[derive(Debug, Clone)]
pub struct CuHead<'b> {
    pub level: HccLevel,
    pub rows: u32,
    pub deleted: u32,
    pub payload_len: u32,
    pub decompressed_len: u32,
    /// CRC-32 of the whole payload (a scan checks the columns it reads instead).
    #[cfg_attr(not(test), expect(dead_code, reason = "kept in the format for readers of whole CUs"))]
    pub payload_crc: u32,
    /// Block addresses of the pieces, the head first.
    pieces: &'b [u8],
    directory: &'b [u8],
    /// The deleted-row bitmap.
    pub deleted_rows: &'b [u8],
    /// The payload's bytes in the head block.
    pub head_payload: &'b [u8],
}

impl<'b> CuHead<'b> {
    /// Reads the head of the CU in `block` (a block of type [`BlockType::CuHead`]),
    /// checking that its fields fit the block and each other.
    pub fn read(block: &'b [u8]) -> Result<CuHead<'b>, String> {
        if super::block::BlockHeader(block).block_type() != Some(BlockType::CuHead) {
            return Err("not the head block of a compression unit".into());
        }
        if block[OFF_VERSION] != CU_FORMAT_VERSION {
            return Err(format!("unknown compression unit format {}", block[OFF_VERSION]));
        }
        if usize::from(block[OFF_ITL_COUNT]) != CU_ITL_SLOTS {
            return Err(format!(
                "a compression unit's head with {} ITL slots, not {CU_ITL_SLOTS}",
                block[OFF_ITL_COUNT]
            ));
        }
        let level = HccLevel::from_code(block[OFF_LEVEL])
            .ok_or_else(|| format!("unknown compression level {}", block[OFF_LEVEL]))?;
        let columns = get_u16(block, OFF_COLUMNS) as usize;
        let rows = get_u32(block, OFF_ROWS);
        let pieces = get_u16(block, OFF_PIECES) as usize;
        if rows as usize > MAX_CU_ROWS || pieces == 0 {
            return Err(format!("a compression unit of {rows} rows in {pieces} blocks"));
        }
        let directory = OFF_PIECE_MAP + 4 * pieces;
        let bitmap = directory + COLUMN_ENTRY_LEN * columns;
        let payload = bitmap + (1 + CU_ITL_SLOTS) * bitmap_len(rows as usize);
        if payload > block.len() {
            return Err(format!("its header ({payload} bytes) runs past the block"));
        }
        let bitmap_end = bitmap + bitmap_len(rows as usize);
        let head = CuHead {
            level,
            rows,
            deleted: get_u32(block, OFF_DELETED),
            payload_len: get_u32(block, OFF_PAYLOAD_LEN),
            decompressed_len: get_u32(block, OFF_DECOMPRESSED_LEN),
            payload_crc: get_u32(block, OFF_PAYLOAD_CRC),
            pieces: &block[OFF_PIECE_MAP..directory],
            directory: &block[directory..bitmap],
            deleted_rows: &block[bitmap..bitmap_end],
            head_payload: &block[payload..],
        };
        let per_piece = block.len() - PIECE_PAYLOAD_START;
        let expected_pieces =
            1 + (head.payload_len as usize).saturating_sub(head.head_payload.len()).div_ceil(per_piece);
        if expected_pieces != pieces {
            return Err(format!(
                "{} payload bytes need {expected_pieces} blocks, the head names {pieces}",
                head.payload_len
            ));
        }
        let (mut end, mut decompressed) = (0u64, 0u64);
        for c in 0..columns {
            let e = head.column(c);
            if u64::from(e.offset) != end {
                return Err(format!("column {c} starts at {}, after {end} bytes of the columns before it", e.offset));
            }
            end += u64::from(e.compressed_len);
            decompressed += u64::from(e.decompressed_len);
        }
        if end != u64::from(head.payload_len) {
            return Err(format!("the columns take {end} bytes of a payload of {}", head.payload_len));
        }
        if decompressed != u64::from(head.decompressed_len) {
            return Err(format!(
                "the columns decompress to {decompressed} bytes, the head says {}",
                head.decompressed_len
            ));
        }
        let set: u32 = head.deleted_rows.iter().map(|b| b.count_ones()).sum();
        if set != head.deleted {
            return Err(format!("{set} rows marked deleted, the head counts {}", head.deleted));
        }
        Ok(head)
    }

    pub fn columns(&self) -> usize {
        self.directory.len() / COLUMN_ENTRY_LEN
    }

    /// The directory entry of column `c` (below [`CuHead::columns`]).
    pub fn column(&self, c: usize) -> ColumnEntry {
        let at = c * COLUMN_ENTRY_LEN;
        // One bounds check for the entry, then its fields at fixed offsets.
        let d: &[u8; COLUMN_ENTRY_LEN] = self.directory[at..at + COLUMN_ENTRY_LEN].try_into().expect("an entry");
        ColumnEntry {
            kind: d[0],
            offset: get_u32(d, 4),
            compressed_len: get_u32(d, 8),
            decompressed_len: get_u32(d, 12),
            crc: get_u32(d, 16),
        }
    }

    pub fn pieces(&self) -> usize {
        self.pieces.len() / 4
    }

    /// The block address of piece `i` (0 = the head).
    pub fn piece(&self, i: usize) -> u32 {
        get_u32(self.pieces, 4 * i)
    }
}

/// Where a CU head's bitmaps lie, for changing its marks in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Marks {
    rows: usize,
    /// Offset of the deleted-row bitmap; the lock maps follow it.
    deleted: usize,
}

impl Marks {
    fn of(block: &[u8]) -> Result<Marks, String> {
        let head = CuHead::read(block)?;
        let deleted = head.deleted_rows.as_ptr() as usize - block.as_ptr() as usize;
        Ok(Marks { rows: head.rows as usize, deleted })
    }

    fn bit(&self, map: usize, row: usize) -> (usize, u8) {
        (self.deleted + map * bitmap_len(self.rows) + row / 8, 1 << (row % 8))
    }
}

/// What a CU's head says of one of its rows, in current mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMark {
    pub deleted: bool,
    /// The ITL slot (0-based) whose lock map holds the row, if any (meaningful only while
    /// that slot's transaction is active).
    pub locked_through: Option<usize>,
}

/// The mark of row `row` of the CU whose head is `block`.
pub fn row_mark(block: &[u8], row: usize) -> Result<RowMark, String> {
    let m = Marks::of(block)?;
    if row >= m.rows {
        return Err(format!("row {row} of a compression unit of {} rows", m.rows));
    }
    let set = |map| {
        let (at, bit) = m.bit(map, row);
        block[at] & bit != 0
    };
    Ok(RowMark { deleted: set(0), locked_through: (0..CU_ITL_SLOTS).find(|&i| set(1 + i)) })
}

/// Marks row `row` deleted and locked through ITL slot `itl` (0-based); the row must not
/// be marked yet.
pub fn mark_deleted(block: &mut [u8], row: usize, itl: usize) -> Result<(), String> {
    let m = Marks::of(block)?;
    if row >= m.rows || itl >= CU_ITL_SLOTS {
        return Err(format!("row {row} through ITL slot {} of a compression unit of {} rows", itl + 1, m.rows));
    }
    let (at, bit) = m.bit(0, row);
    if block[at] & bit != 0 {
        return Err(format!("row {row} of the compression unit is already deleted"));
    }
    block[at] |= bit;
    let (at, bit) = m.bit(1 + itl, row);
    block[at] |= bit;
    put_u32(block, OFF_DELETED, get_u32(block, OFF_DELETED) + 1);
    Ok(())
}

/// Takes the mark of [`mark_deleted`] off row `row` (its deleted bit, and its lock bit in
/// every slot's map): the row is live again. Idempotent: a row not marked is left as is.
pub fn unmark_deleted(block: &mut [u8], row: usize) -> Result<(), String> {
    let m = Marks::of(block)?;
    if row >= m.rows {
        return Err(format!("row {row} of a compression unit of {} rows", m.rows));
    }
    for map in 1..=CU_ITL_SLOTS {
        let (at, bit) = m.bit(map, row);
        block[at] &= !bit;
    }
    let (at, bit) = m.bit(0, row);
    if block[at] & bit != 0 {
        block[at] &= !bit;
        put_u32(block, OFF_DELETED, get_u32(block, OFF_DELETED) - 1);
    }
    Ok(())
}

/// Marks every row of the CU deleted, locking none (a direct-path load undone: its rows
/// never existed for whoever must not see the load).
pub fn mark_all_deleted(block: &mut [u8]) -> Result<(), String> {
    let m = Marks::of(block)?;
    let len = bitmap_len(m.rows);
    block[m.deleted..m.deleted + len].fill(0xff);
    if m.rows % 8 != 0 {
        block[m.deleted + len - 1] = (1u8 << (m.rows % 8)) - 1;
    }
    block[m.deleted + len..m.deleted + (1 + CU_ITL_SLOTS) * len].fill(0);
    put_u32(block, OFF_DELETED, m.rows as u32);
    Ok(())
}

/// Clears the lock map of ITL slot `itl`: its transaction has ended and the slot is
/// about to serve another.
pub fn clear_locks(block: &mut [u8], itl: usize) -> Result<(), String> {
    let m = Marks::of(block)?;
    let len = bitmap_len(m.rows);
    let at = m.deleted + (1 + itl) * len;
    block[at..at + len].fill(0);
    Ok(())
}

/// Reads a piece block: the head's address, the piece's number and its payload bytes.
pub fn read_piece(block: &[u8]) -> Result<(u32, usize, &[u8]), String> {
    if super::block::BlockHeader(block).block_type() != Some(BlockType::CuPiece) {
        return Err("not a piece of a compression unit".into());
    }
    Ok((get_u32(block, OFF_PIECE_HEAD), get_u16(block, OFF_PIECE_NUMBER) as usize, &block[PIECE_PAYLOAD_START..]))
}

/// What a scan keeps of a CU's head once it has read it: the fields it needs after the
/// head block is let go.
#[derive(Debug, Clone, Default)]
pub struct CuInfo {
    pub level: Option<HccLevel>,
    pub rows: u32,
    pub deleted: u32,
    /// The column directory.
    pub columns: Vec<ColumnEntry>,
    /// Block addresses of the pieces, the head first.
    pub pieces: Vec<u32>,
    /// The deleted-row bitmap (empty when no row is deleted).
    pub deleted_rows: Vec<u8>,
}

impl CuInfo {
    /// Whether row `row` is marked deleted.
    pub fn is_deleted(&self, row: usize) -> bool {
        self.deleted_rows.get(row / 8).is_some_and(|b| b & (1 << (row % 8)) != 0)
    }
}

impl CuHead<'_> {
    /// What a scan keeps of this head (into `info`, reusing its buffers).
    pub fn keep_into(&self, info: &mut CuInfo) {
        info.level = Some(self.level);
        info.rows = self.rows;
        info.deleted = self.deleted;
        info.columns.clear();
        info.columns.extend((0..self.columns()).map(|c| self.column(c)));
        info.pieces.clear();
        info.pieces.extend((0..self.pieces()).map(|i| self.piece(i)));
        info.deleted_rows.clear();
        if self.deleted > 0 {
            info.deleted_rows.extend_from_slice(self.deleted_rows);
        }
    }
}

/// Gathers the compressed bytes of the columns a scan reads from a CU's blocks as the
/// scan meets them, and hands those columns out decompressed. Only the wanted columns'
/// bytes are copied: a scan of two columns of twenty copies a tenth of the payload.
#[derive(Debug, Default)]
pub struct PayloadAssembly {
    /// The wanted columns' compressed bytes, one after another in directory order.
    gathered: Vec<u8>,
    /// Each wanted column's byte range in the payload and where it starts in `gathered`.
    wanted: Vec<(std::ops::Range<usize>, usize)>,
    /// Payload bytes met so far, and the payload's length.
    received: usize,
    expected: usize,
}

impl PayloadAssembly {
    /// Starts the CU whose head is `head`, keeping the columns `wanted` marks (one flag a
    /// column; a column past its end is not wanted).
    pub fn start(&mut self, head: &CuHead<'_>, wanted: &[bool]) {
        self.expected = head.payload_len as usize;
        self.received = 0;
        self.gathered.clear();
        self.wanted.clear();
        let mut at = 0;
        for c in (0..head.columns()).filter(|&c| wanted.get(c).copied().unwrap_or(false)) {
            let e = head.column(c);
            let range = e.offset as usize..(e.offset + e.compressed_len) as usize;
            self.wanted.push((range.clone(), at));
            at += range.len();
        }
        self.gathered.resize(at, 0);
        let first = head.head_payload.len().min(self.expected);
        self.add_piece(&head.head_payload[..first]);
    }

    /// Adds the payload bytes of the next piece.
    pub fn add_piece(&mut self, bytes: &[u8]) {
        let take = (self.expected - self.received).min(bytes.len());
        let piece = self.received..self.received + take;
        for (range, at) in &self.wanted {
            let (from, to) = (range.start.max(piece.start), range.end.min(piece.end));
            if from < to {
                let dest = at + (from - range.start);
                self.gathered[dest..dest + (to - from)].copy_from_slice(&bytes[from - piece.start..to - piece.start]);
            }
        }
        self.received += take;
    }

    pub fn complete(&self) -> bool {
        self.received == self.expected
    }

    /// Decompresses column `entry` of a CU at `level` (one of the wanted columns) into
    /// `out`, checking its length and CRC-32.
    pub fn column(&self, level: HccLevel, entry: ColumnEntry, out: &mut Vec<u8>) -> Result<(), String> {
        let range = entry.offset as usize..(entry.offset + entry.compressed_len) as usize;
        let (_, at) = self.wanted.iter().find(|(r, _)| *r == range).ok_or("a column the scan did not gather")?;
        let compressed = &self.gathered[*at..at + range.len()];
        decompress(level, compressed, entry.decompressed_len as usize, out)?;
        let computed = crc32fast::hash(out);
        if computed != entry.crc {
            return Err(format!("column checksum mismatch (stored {:#010x}, computed {computed:#010x})", entry.crc));
        }
        Ok(())
    }
}

/// Checks the CRC-32 of a whole payload (every column's compressed bytes, in order)
/// against the head's: for readers of a CU whole; a scan checks the columns it
/// decompresses instead.
#[cfg(test)]
pub fn check_payload(payload: &[u8], crc: u32) -> Result<(), String> {
    let computed = crc32fast::hash(payload);
    if computed != crc {
        return Err(format!("payload checksum mismatch (stored {crc:#010x}, computed {computed:#010x})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::format_block;

    fn columns() -> Vec<(u8, Vec<u8>)> {
        let ids: Vec<u8> = (0..2_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let text: Vec<u8> = (0..2_000u32).flat_map(|i| format!("name {} ", i % 97).into_bytes()).collect();
        vec![(0, ids), (2, text), (1, Vec::new())]
    }

    /// Writes `cu` into blocks of `block_size` and reads it back as a scan does.
    fn round_trip(cu: &CompressedCu, block_size: usize) -> Vec<Vec<u8>> {
        let pieces = cu.pieces(block_size).expect("fits");
        let addresses: Vec<u32> = (100..100 + pieces as u32).collect();
        let blocks: Vec<Vec<u8>> = addresses
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let mut b = vec![0u8; block_size];
                format_block(&mut b, if i == 0 { BlockType::CuHead } else { BlockType::CuPiece }, a, 7);
                cu.write_piece(i, &addresses, &mut b);
                b
            })
            .collect();
        let head = CuHead::read(&blocks[0]).expect("a valid head");
        assert_eq!((head.rows, head.pieces(), head.columns()), (cu.rows, pieces, cu.columns.len()));
        assert_eq!((0..pieces).map(|i| head.piece(i)).collect::<Vec<_>>(), addresses);
        // Every column wanted, and every other one: the wanted ones decompress alike.
        let mut alternate = PayloadAssembly::default();
        alternate.start(&head, &(0..head.columns()).map(|c| c % 2 == 1).collect::<Vec<_>>());
        let mut assembly = PayloadAssembly::default();
        assembly.start(&head, &vec![true; head.columns()]);
        let mut payload = head.head_payload[..head.head_payload.len().min(head.payload_len as usize)].to_vec();
        for (i, b) in blocks.iter().enumerate().skip(1) {
            let (at, number, bytes) = read_piece(b).unwrap();
            assert_eq!((at, number), (addresses[0], i));
            assembly.add_piece(bytes);
            alternate.add_piece(bytes);
            payload.extend_from_slice(&bytes[..bytes.len().min(head.payload_len as usize - payload.len())]);
        }
        assert!(assembly.complete() && alternate.complete());
        check_payload(&payload, head.payload_crc).unwrap();
        for c in (1..head.columns()).step_by(2) {
            let (mut all, mut some) = (Vec::new(), Vec::new());
            assembly.column(head.level, head.column(c), &mut all).unwrap();
            alternate.column(head.level, head.column(c), &mut some).unwrap();
            assert_eq!(all, some);
        }
        assert!(alternate.column(head.level, head.column(0), &mut Vec::new()).is_err(), "not gathered");
        (0..head.columns())
            .map(|c| {
                let mut out = Vec::new();
                assembly.column(head.level, head.column(c), &mut out).unwrap();
                out
            })
            .collect()
    }

    #[test]
    fn every_level_round_trips_at_every_block_size() {
        let input = columns();
        for level in HccLevel::ALL {
            let cu = CompressedCu::new(level, 2_000, &input);
            assert!(cu.payload.len() < cu.decompressed_len() as usize / 2, "{level:?} compresses");
            for block_size in crate::storage::block::VALID_BLOCK_SIZES {
                let out = round_trip(&cu, block_size);
                assert_eq!(out, input.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>(), "{level:?} {block_size}");
            }
        }
    }

    #[test]
    fn levels_read_as_oracle_spells_them() {
        assert_eq!(HccLevel::from_words(&["QUERY"]), Some(HccLevel::QueryHigh));
        assert_eq!(HccLevel::from_words(&["ARCHIVE"]), Some(HccLevel::ArchiveLow));
        assert_eq!(HccLevel::from_words(&["ARCHIVE", "HIGH"]), Some(HccLevel::ArchiveHigh));
        assert_eq!(HccLevel::from_words(&["QUERY", "MEDIUM"]), None);
        for level in HccLevel::ALL {
            let words: Vec<&str> = level.name().split(' ').collect();
            assert_eq!(HccLevel::from_words(&words), Some(level));
        }
    }

    #[test]
    fn damaged_heads_and_columns_are_reported_not_panicked_on() {
        let cu = CompressedCu::new(HccLevel::QueryLow, 2_000, &columns());
        let pieces = cu.pieces(8192).unwrap();
        let addresses: Vec<u32> = (1..=pieces as u32).collect();
        let mut head = vec![0u8; 8192];
        format_block(&mut head, BlockType::CuHead, 1, 7);
        cu.write_piece(0, &addresses, &mut head);
        // Every single-byte change of the head's own fields is either caught by reading
        // the head or leaves a head that reads without panicking.
        for at in HEADER_LEN..OFF_PIECE_MAP + 4 * pieces + 3 * COLUMN_ENTRY_LEN {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut damaged = head.clone();
                damaged[at] ^= flip;
                if let Ok(h) = CuHead::read(&damaged) {
                    (0..h.columns()).for_each(|c| assert!(h.column(c).offset <= h.payload_len));
                }
            }
        }
        let mut wrong = head.clone();
        wrong[OFF_LEVEL] = 9;
        assert!(CuHead::read(&wrong).unwrap_err().contains("level"));
        // A column whose bytes changed fails its checksum or its decompression.
        let h = CuHead::read(&head).unwrap();
        let mut assembly = PayloadAssembly::default();
        assembly.start(&h, &[true]);
        assembly.gathered[10] ^= 0x55;
        let mut out = Vec::new();
        assert!(check_payload(&assembly.gathered, h.payload_crc).is_err());
        assert!(assembly.column(h.level, h.column(0), &mut out).is_err());
        // Decompressors given garbage report it.
        for level in HccLevel::ALL {
            assert!(decompress(level, &[1, 2, 3, 4, 5], 100, &mut out).is_err(), "{level:?}");
        }
    }

    #[test]
    fn marks_keep_the_deleted_count_and_the_locks() {
        let cu = CompressedCu::new(HccLevel::QueryLow, 2_000, &columns());
        let pieces = cu.pieces(8192).unwrap();
        let addresses: Vec<u32> = (1..=pieces as u32).collect();
        let mut head = vec![0u8; 8192];
        format_block(&mut head, BlockType::CuHead, 1, 7);
        cu.write_piece(0, &addresses, &mut head);
        let payload_before = CuHead::read(&head).unwrap().head_payload.to_vec();
        mark_deleted(&mut head, 5, 0).unwrap();
        mark_deleted(&mut head, 1_999, 1).unwrap();
        assert!(mark_deleted(&mut head, 5, 1).unwrap_err().contains("already deleted"));
        assert!(mark_deleted(&mut head, 2_000, 0).is_err(), "past the CU's rows");
        let h = CuHead::read(&head).unwrap();
        assert_eq!(h.deleted, 2, "the count is the bitmap's population (read checks it)");
        assert_eq!(h.head_payload, &payload_before[..], "marks never touch the payload");
        assert_eq!(row_mark(&head, 5).unwrap(), RowMark { deleted: true, locked_through: Some(0) });
        assert_eq!(row_mark(&head, 1_999).unwrap(), RowMark { deleted: true, locked_through: Some(1) });
        assert_eq!(row_mark(&head, 6).unwrap(), RowMark { deleted: false, locked_through: None });
        clear_locks(&mut head, 0).unwrap();
        assert_eq!(row_mark(&head, 5).unwrap(), RowMark { deleted: true, locked_through: None });
        unmark_deleted(&mut head, 1_999).unwrap();
        unmark_deleted(&mut head, 1_999).unwrap();
        assert_eq!(CuHead::read(&head).unwrap().deleted, 1, "unmarking twice unmarks once");
        assert_eq!(row_mark(&head, 1_999).unwrap(), RowMark { deleted: false, locked_through: None });
        mark_all_deleted(&mut head).unwrap();
        let h = CuHead::read(&head).unwrap();
        assert_eq!(h.deleted, 2_000);
        assert_eq!(h.head_payload, &payload_before[..]);
        assert!((0..2_000).all(|r| row_mark(&head, r).unwrap() == RowMark { deleted: true, locked_through: None }));
    }
}

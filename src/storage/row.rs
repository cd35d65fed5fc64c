//! Row pieces: how a row is laid out inside a data block (Oracle's row format).
//!
//! A row that fits in a block is one piece:
//!
//! | offset | size | field                                                              |
//! |--------|------|--------------------------------------------------------------------|
//! | 0      | 1    | flag byte: `H` head 0x20, `D` deleted 0x10, `F` first 0x08, `L` last 0x04 |
//! | 1      | 1    | lock byte: ITL slot (1-based) of the transaction locking the row, 0 = none, 0xFF (reserved) = inserting statement not ended |
//! | 2      | 1    | column count `cc` (trailing NULL columns are omitted)               |
//! | 3      | ...  | `cc` columns, each a length then a payload (see below)             |
//!
//! Column length: one byte 0..=250 is the payload length; `0xFF` is NULL (no payload);
//! `0xFE` is followed by a two-byte little-endian length for payloads of 251..=65535 bytes.
//! Reaching column *k* therefore means walking the lengths of columns 1..*k*-1, the cost
//! the source experiments measure for late columns in row-format blocks.
//!
//! A row too large for the free space of one block is *chained*: the column stream (the
//! bytes after the three header bytes) is cut into fragments stored in pieces linked by
//! next-piece addresses. Unlike Oracle, which cuts at column boundaries, lioscope cuts at
//! any byte; a reader assembles the fragments and then walks the columns as usual.
//!
//! | piece  | flags  | after flag, lock, cc                                          |
//! |--------|--------|---------------------------------------------------------------|
//! | head   | H F    | next piece (block address u32, slot u16), fragment length u16, fragment |
//! | middle | (none) | next piece, fragment length, fragment                          |
//! | last   | L      | fragment length u16, fragment                                 |
//!
//! Only the head piece has `cc` (the whole row's count) and is visited by a full scan;
//! middle and last pieces are reached by following next-piece addresses, each follow
//! counting `table fetch continued row`.
//!
//! A row that outgrows its block *migrates*: its column stream moves to another block as
//! a last piece, and its head becomes a *forwarding head*, a head piece with an empty
//! fragment ([`FORWARDING_HEAD_LEN`] bytes). A block gives every piece at least that many
//! bytes (`block::MIN_PIECE_ROOM`), so the forwarding head always fits where the row was.

use crate::types::Datum;
use crate::types::encoding::{payload_len, put_payload};

pub const FLAG_HEAD: u8 = 0x20;
pub const FLAG_DELETED: u8 = 0x10;
pub const FLAG_FIRST: u8 = 0x08;
pub const FLAG_LAST: u8 = 0x04;
/// Flags of a row stored whole in one piece.
pub const FLAGS_WHOLE: u8 = FLAG_HEAD | FLAG_FIRST | FLAG_LAST;

/// Lock byte of a row whose inserting statement has not ended. Scans skip such rows, so
/// a statement's rows appear together when it ends (or never, if it fails).
pub const LOCK_INSERT_IN_PROGRESS: u8 = 0xFF;

/// Length byte meaning NULL.
pub const LEN_NULL: u8 = 0xFF;
/// Length byte announcing a two-byte length.
pub const LEN_ESCAPE: u8 = 0xFE;
/// Longest payload with a one-byte length.
pub const LEN_SHORT_MAX: usize = 250;

/// Bytes of flag, lock and column count.
pub const PIECE_HEADER: usize = 3;
/// Bytes of a next-piece address (block address + slot).
pub const NEXT_PIECE_LEN: usize = 6;
/// Bytes of a forwarding head: header, next-piece address and a zero fragment length.
pub const FORWARDING_HEAD_LEN: usize = PIECE_HEADER + NEXT_PIECE_LEN + 2;
/// Most columns a table may have (the column count is one byte).
pub const MAX_COLUMNS: usize = 255;

/// Whether a piece with these flag and lock bytes is the head of a row a scan returns:
/// a head piece, not deleted, and not a row whose inserting statement has not ended.
#[inline(always)]
pub fn is_visible_head(flags: u8, lock: u8) -> bool {
    flags & (FLAG_HEAD | FLAG_DELETED) == FLAG_HEAD && lock != LOCK_INSERT_IN_PROGRESS
}

/// The address of a row piece: a block address and a slot in its row directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PieceAddr {
    pub rdba: u32,
    pub slot: u16,
}

/// A whole single-piece row (header then the column stream) in `out`, replacing what it
/// held: [`put_whole_row`] into a buffer, for a row that goes somewhere other than its
/// block (a chained row is cut into fragments from it).
pub fn encode_whole_row(values: &[Datum<'_>], out: &mut Vec<u8>) {
    out.clear();
    out.resize(whole_row_len(values), 0);
    put_whole_row(values, out);
}

/// The length of the whole single-piece row of `values`.
#[inline]
pub fn whole_row_len(values: &[Datum<'_>]) -> usize {
    let count = column_count(values);
    let stream: usize = values[..count]
        .iter()
        .map(|v| match v {
            Datum::Null => 1,
            v => {
                let len = payload_len(v);
                length_bytes(len) + len
            }
        })
        .sum();
    PIECE_HEADER + stream
}

/// Writes the whole single-piece row of `values` into `out`, which is exactly
/// [`whole_row_len`] bytes long (a load encodes each row straight into its block).
#[inline]
pub fn put_whole_row(values: &[Datum<'_>], out: &mut [u8]) {
    let count = column_count(values);
    out[..PIECE_HEADER].copy_from_slice(&[FLAGS_WHOLE, 0, count as u8]);
    let mut pos = PIECE_HEADER;
    for v in &values[..count] {
        if v.is_null() {
            out[pos] = LEN_NULL;
            pos += 1;
            continue;
        }
        let len = payload_len(v);
        if length_bytes(len) == 1 {
            out[pos] = len as u8;
        } else {
            out[pos] = LEN_ESCAPE;
            out[pos + 1..pos + 3].copy_from_slice(&(len as u16).to_le_bytes());
        }
        pos += length_bytes(len);
        put_payload(v, &mut out[pos..pos + len]);
        pos += len;
    }
    assert_eq!(pos, out.len(), "a row is written into exactly whole_row_len bytes");
}

/// Bytes of the length in front of a payload of `len` bytes: one, or the escape and two.
#[inline]
fn length_bytes(len: usize) -> usize {
    if len <= LEN_SHORT_MAX {
        return 1;
    }
    assert!(len <= u16::MAX as usize, "payload of {len} bytes exceeds the two-byte length (checked at coercion)");
    3
}

/// Columns stored of a row: trailing NULLs are omitted.
#[inline]
fn column_count(values: &[Datum<'_>]) -> usize {
    assert!(values.len() <= MAX_COLUMNS, "a row has at most {MAX_COLUMNS} columns");
    values.iter().rposition(|v| !v.is_null()).map_or(0, |i| i + 1)
}

/// Where a column's payload lies within a column stream: `NULL_COLUMN` length for NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnSpan {
    pub start: u32,
    pub len: u32,
}

/// `ColumnSpan::len` of a NULL column.
pub const NULL_COLUMN: u32 = u32::MAX;

impl ColumnSpan {
    pub const NULL: ColumnSpan = ColumnSpan { start: 0, len: NULL_COLUMN };

    #[inline]
    pub fn is_null(&self) -> bool {
        self.len == NULL_COLUMN
    }
}

/// Walks the lengths of the first `spans.len()` columns of a column stream that holds
/// `column_count` columns; columns past the count are NULL. Returns the offset just past
/// the last column walked, or `None` if the stream is shorter than its lengths claim.
#[inline(always)]
pub fn locate_columns(stream: &[u8], column_count: usize, spans: &mut [ColumnSpan]) -> Option<usize> {
    let mut pos = 0usize;
    let walk = spans.len().min(column_count);
    for span in &mut spans[..walk] {
        let len_byte = *stream.get(pos)?;
        if len_byte < LEN_ESCAPE {
            // The common case: a one-byte length.
            *span = ColumnSpan { start: pos as u32 + 1, len: u32::from(len_byte) };
            pos += 1 + len_byte as usize;
        } else if len_byte == LEN_NULL {
            *span = ColumnSpan::NULL;
            pos += 1;
        } else {
            let len = u16::from_le_bytes([*stream.get(pos + 1)?, *stream.get(pos + 2)?]) as usize;
            *span = ColumnSpan { start: pos as u32 + 3, len: len as u32 };
            pos += 3 + len;
        }
    }
    if pos > stream.len() {
        return None;
    }
    for span in &mut spans[walk..] {
        *span = ColumnSpan::NULL;
    }
    Some(pos)
}

/// Position of an absent column (past the row's column count) in [`walk_lengths`]
/// output: beyond any block, so reading it finds nothing and the column is NULL.
pub const ABSENT_COLUMN: u16 = u16::MAX;

/// Walks the lengths of the first `positions.len()` columns of a column stream that
/// holds `column_count` columns, recording where each column's length byte is; columns
/// past the count get [`ABSENT_COLUMN`]. Returns the offset just past the last column
/// walked, or `None` if the stream is shorter than its lengths claim. The cheapest walk:
/// one load and one store per column, for row kernels that read a few columns of a row.
#[inline(always)]
pub fn walk_lengths(stream: &[u8], column_count: usize, positions: &mut [u16]) -> Option<usize> {
    let mut pos = 0usize;
    let walk = positions.len().min(column_count);
    for at in &mut positions[..walk] {
        let len_byte = *stream.get(pos)?;
        *at = pos as u16;
        if len_byte < LEN_ESCAPE {
            // The common case, kept to one add on the chain of dependent loads.
            pos = pos + len_byte as usize + 1;
            continue;
        }
        pos += if len_byte == LEN_NULL {
            1
        } else {
            3 + u16::from_le_bytes([*stream.get(pos + 1)?, *stream.get(pos + 2)?]) as usize
        };
    }
    if pos > stream.len() {
        return None;
    }
    for at in &mut positions[walk..] {
        *at = ABSENT_COLUMN;
    }
    Some(pos)
}

/// The length of a whole column stream of `column_count` columns, by walking it.
pub fn stream_len(stream: &[u8], column_count: usize) -> Option<usize> {
    let mut pos = 0usize;
    for _ in 0..column_count {
        pos += match *stream.get(pos)? {
            LEN_NULL => 1,
            LEN_ESCAPE => 3 + u16::from_le_bytes([*stream.get(pos + 1)?, *stream.get(pos + 2)?]) as usize,
            short => 1 + short as usize,
        };
    }
    (pos <= stream.len()).then_some(pos)
}

/// A row piece as found in a block: the bytes from its row-directory offset to the end of
/// the block (its true length is known only by walking it).
#[derive(Debug, Clone, Copy)]
pub struct RowPiece<'b> {
    bytes: &'b [u8],
}

/// What a piece holds after its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceBody<'b> {
    /// A whole row: its column stream (which may run past the row; walk `cc` columns).
    Whole { column_count: usize, stream: &'b [u8] },
    /// One fragment of a chained row, and where the next fragment is, if any.
    Fragment { column_count: usize, fragment: &'b [u8], next: Option<PieceAddr> },
}

impl<'b> RowPiece<'b> {
    /// `None` if there are not even the three header bytes.
    pub fn new(bytes: &'b [u8]) -> Option<RowPiece<'b>> {
        (bytes.len() >= PIECE_HEADER).then_some(RowPiece { bytes })
    }

    #[inline]
    pub fn flags(&self) -> u8 {
        self.bytes[0]
    }

    /// The piece's body, or `None` if its header points outside the block.
    #[inline]
    pub fn body(&self) -> Option<PieceBody<'b>> {
        let flags = self.flags();
        let column_count = self.bytes[2] as usize;
        let rest = &self.bytes[PIECE_HEADER..];
        if flags & FLAGS_WHOLE == FLAGS_WHOLE {
            return Some(PieceBody::Whole { column_count, stream: rest });
        }
        let (next, rest) = if flags & FLAG_LAST == 0 {
            let addr = rest.get(..NEXT_PIECE_LEN)?;
            let rdba = u32::from_le_bytes([addr[0], addr[1], addr[2], addr[3]]);
            let slot = u16::from_le_bytes([addr[4], addr[5]]);
            (Some(PieceAddr { rdba, slot }), &rest[NEXT_PIECE_LEN..])
        } else {
            (None, rest)
        };
        let len = u16::from_le_bytes([*rest.first()?, *rest.get(1)?]) as usize;
        let fragment = rest.get(2..2 + len)?;
        Some(PieceBody::Fragment { column_count, fragment, next })
    }

    /// The stored length of this piece, by walking it (what reorganising a block needs;
    /// tests check the encoders against it).
    pub fn stored_len(&self) -> Option<usize> {
        match self.body()? {
            PieceBody::Whole { column_count, stream } => Some(PIECE_HEADER + stream_len(stream, column_count)?),
            PieceBody::Fragment { fragment, next, .. } => {
                Some(PIECE_HEADER + if next.is_some() { NEXT_PIECE_LEN } else { 0 } + 2 + fragment.len())
            }
        }
    }
}

/// Bytes a fragment piece needs around `fragment_len` bytes of column stream.
pub fn fragment_overhead(has_next: bool) -> usize {
    PIECE_HEADER + if has_next { NEXT_PIECE_LEN } else { 0 } + 2
}

/// Appends a fragment piece. `head` marks the first piece (flags H F, carrying the row's
/// column count); `next` is `None` for the last piece.
pub fn encode_fragment(head: bool, column_count: u8, next: Option<PieceAddr>, fragment: &[u8], out: &mut Vec<u8>) {
    assert!(fragment.len() <= u16::MAX as usize, "a fragment fits in a block, so its length fits in two bytes");
    assert!(!head || next.is_some(), "a chained row has at least two pieces (a one-piece row is stored whole)");
    let mut flags = if head { FLAG_HEAD | FLAG_FIRST } else { 0 };
    if next.is_none() {
        flags |= FLAG_LAST;
    }
    out.extend_from_slice(&[flags, 0, if head { column_count } else { 0 }]);
    if let Some(next) = next {
        out.extend_from_slice(&next.rdba.to_le_bytes());
        out.extend_from_slice(&next.slot.to_le_bytes());
    }
    out.extend_from_slice(&(fragment.len() as u16).to_le_bytes());
    out.extend_from_slice(fragment);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;
    use crate::types::encoding::{PayloadKind, read_payload};
    use proptest::prelude::*;

    fn value_strategy() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Datum::Null),
            any::<i64>().prop_map(Datum::Int),
            (any::<i64>(), 1u32..=20).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m, s))),
            "[a-z]{1,300}".prop_map(|s| Datum::Str(s.into())),
        ]
    }

    /// The column count and column stream of `values`, as a whole row stores them.
    fn column_stream(values: &[Value]) -> (u8, Vec<u8>) {
        let mut out = Vec::new();
        encode_whole_row(values, &mut out);
        (out[2], out.split_off(PIECE_HEADER))
    }

    /// Decodes with the kinds of the values that were written.
    fn decode(stream: &[u8], cc: usize, written: &[Value]) -> Vec<Value> {
        let mut spans = vec![ColumnSpan::default(); written.len()];
        locate_columns(stream, cc, &mut spans).unwrap();
        spans
            .iter()
            .zip(written)
            .map(|(s, w)| {
                if s.is_null() {
                    return Datum::Null;
                }
                let bytes = &stream[s.start as usize..(s.start + s.len) as usize];
                let kind = if matches!(w, Datum::Str(_)) { PayloadKind::Text } else { PayloadKind::Number };
                read_payload(kind, bytes).unwrap().into_owned()
            })
            .collect()
    }

    #[test]
    fn trailing_nulls_are_omitted() {
        let mut out = Vec::new();
        encode_whole_row(&[Datum::Int(1), Datum::Null, Datum::Null], &mut out);
        assert_eq!(out, vec![FLAGS_WHOLE, 0, 1, 2, 0, 1]);
    }

    #[test]
    fn a_forwarding_head_is_as_long_as_its_constant_says() {
        let mut out = Vec::new();
        encode_fragment(true, 3, Some(PieceAddr { rdba: 9, slot: 4 }), &[], &mut out);
        assert_eq!(out.len(), FORWARDING_HEAD_LEN);
        assert_eq!(RowPiece::new(&out).and_then(|p| p.stored_len()), Some(FORWARDING_HEAD_LEN));
    }

    #[test]
    fn truncated_stream_is_detected() {
        let mut out = Vec::new();
        encode_whole_row(&[Datum::Str("hello".into())], &mut out);
        let mut spans = [ColumnSpan::default(); 1];
        assert!(locate_columns(&out[3..out.len() - 1], 1, &mut spans).is_none());
    }

    proptest! {
        #[test]
        fn whole_rows_round_trip(values in proptest::collection::vec(value_strategy(), 0..40)) {
            let mut out = Vec::new();
            encode_whole_row(&values, &mut out);
            let piece = RowPiece::new(&out).unwrap();
            prop_assert!(is_visible_head(out[0], out[1]));
            prop_assert_eq!(piece.stored_len(), Some(out.len()));
            let PieceBody::Whole { column_count, stream } = piece.body().unwrap() else { panic!("whole row expected") };
            prop_assert_eq!(decode(stream, column_count, &values), values);
        }

        /// The cheap walk finds every column where the full one does: the length byte of a
        /// located column sits just before its payload (three bytes before, for a long
        /// one), NULL columns have the NULL length byte, and columns past the count are
        /// absent. A stream cut short is refused by both.
        #[test]
        fn walk_lengths_agrees_with_locate_columns(
            values in proptest::collection::vec(value_strategy(), 0..30),
            width in 0usize..34,
            cut in 0usize..8,
        ) {
            let (cc, stream) = column_stream(&values);
            let cc = cc as usize;
            let mut spans = vec![ColumnSpan::default(); width];
            let mut positions = vec![0u16; width];
            let located = locate_columns(&stream, cc, &mut spans);
            prop_assert_eq!(walk_lengths(&stream, cc, &mut positions), located);
            for (i, (span, &at)) in spans.iter().zip(&positions).enumerate() {
                if i >= cc {
                    prop_assert_eq!(at, ABSENT_COLUMN);
                } else if span.is_null() {
                    prop_assert_eq!(stream[at as usize], LEN_NULL);
                } else {
                    let header = if span.len as usize > LEN_SHORT_MAX { 3 } else { 1 };
                    prop_assert_eq!(at as u32 + header, span.start);
                }
            }
            let short = &stream[..stream.len().saturating_sub(cut)];
            prop_assert_eq!(
                walk_lengths(short, cc, &mut positions).is_some(),
                locate_columns(short, cc, &mut spans).is_some()
            );
        }

        #[test]
        fn fragments_reassemble(values in proptest::collection::vec(value_strategy(), 1..40), cut in 1usize..200) {
            let (cc, stream) = column_stream(&values);
            let chunks: Vec<&[u8]> = stream.chunks(cut).collect();
            prop_assume!(chunks.len() >= 2);
            let mut assembled = Vec::new();
            for (i, chunk) in chunks.iter().enumerate() {
                let next = (i + 1 < chunks.len()).then_some(PieceAddr { rdba: 7, slot: i as u16 + 1 });
                let mut piece_bytes = Vec::new();
                encode_fragment(i == 0, cc, next, chunk, &mut piece_bytes);
                let piece = RowPiece::new(&piece_bytes).unwrap();
                prop_assert_eq!(piece.stored_len(), Some(piece_bytes.len()));
                let Some(PieceBody::Fragment { fragment, next: got_next, column_count }) = piece.body() else { panic!("fragment expected") };
                prop_assert_eq!(got_next, next);
                if i == 0 { prop_assert_eq!(column_count, cc as usize); }
                assembled.extend_from_slice(fragment);
            }
            prop_assert_eq!(decode(&assembled, cc as usize, &values), values);
        }
    }
}

//! Rows as expressions see them: [`RowAccess`] is implemented by owned rows, by
//! [`BlockRow`], a row still inside its pinned block whose columns are decoded on demand,
//! and by [`WalkedRow`], the same with only the positions of its length bytes recorded
//! (what a row kernel needs); [`Beside`] reads two rows as one. Layers above implement
//! it too: joined rows read in place (`exec::join`), and a row of an in-memory unit
//! (`inmemory::imcu::UnitRow`). Besides a column as a value, a row answers the two fast
//! paths of numbers without building one: [`RowAccess::small_int`] and
//! [`RowAccess::small_fixed`].

use crate::error::{Error, Result};
use crate::storage::block;
use crate::storage::row::{ColumnSpan, LEN_ESCAPE, LEN_NULL};
use crate::types::encoding::{PayloadKind, read_payload, read_small_fixed_in, read_small_int_in};
use crate::types::{Datum, Fixed, Value};

/// Column access for expression evaluation.
pub trait RowAccess {
    /// Column `i` of the row. Strings may borrow from the row.
    fn column(&self, i: usize) -> Result<Datum<'_>>;

    /// Whether column `i` is NULL, without decoding it.
    fn is_null(&self, i: usize) -> bool;

    /// Column `i` as a whole number when it is stored as one: the fast path of numeric
    /// predicates. `None` when NULL or not a small whole number.
    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        match self.column(i) {
            Ok(Datum::Int(v)) => Some(v),
            _ => None,
        }
    }

    /// Column `i` as an exact decimal with a 64-bit mantissa: the fast path of
    /// arithmetic on NUMBER(p,s) columns. `None` when NULL, not a number, or wider.
    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        Fixed::of(&self.column(i).ok()?)
    }
}

impl RowAccess for [Datum<'_>] {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        Ok(match &self[i] {
            Datum::Str(s) => Datum::Str(std::borrow::Cow::Borrowed(s)),
            other => other.clone(),
        })
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self[i].is_null()
    }

    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        match self[i] {
            Datum::Int(v) => Some(v),
            _ => None,
        }
    }

    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        Fixed::of(&self[i])
    }
}

impl RowAccess for Vec<Value> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        self.as_slice().column(i)
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self[i].is_null()
    }

    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        self.as_slice().small_int(i)
    }

    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        Fixed::of(&self[i])
    }
}

/// A row followed by another's columns: column `i` is `first`'s below `first_width`,
/// `second`'s `i - first_width` from there (a row of MERGE's target beside its source
/// row).
pub struct Beside<'r, A: ?Sized, B: ?Sized> {
    pub first: &'r A,
    pub second: &'r B,
    pub first_width: usize,
}

impl<A: RowAccess + ?Sized, B: RowAccess + ?Sized> RowAccess for Beside<'_, A, B> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        if i < self.first_width { self.first.column(i) } else { self.second.column(i - self.first_width) }
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        if i < self.first_width { self.first.is_null(i) } else { self.second.is_null(i - self.first_width) }
    }

    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        if i < self.first_width { self.first.small_int(i) } else { self.second.small_int(i - self.first_width) }
    }

    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        if i < self.first_width { self.first.small_fixed(i) } else { self.second.small_fixed(i - self.first_width) }
    }
}

/// Column `i` of a row in block `rdba` does not decode. The row no longer knows its
/// datafile's path, so the file is named by number, as block addresses name it.
#[cold]
pub(crate) fn column_corrupt(rdba: u32, i: usize, reason: &str) -> Error {
    Error::Corrupt {
        file: format!("datafile #{}", block::rdba_file(rdba)).into(),
        block: Some(block::rdba_block(rdba)),
        reason: format!("column {}: {reason}", i + 1),
    }
}

/// A row inside a pinned block (or a chained row assembled in a scratch buffer).
pub struct BlockRow<'b> {
    /// The column stream.
    pub stream: &'b [u8],
    /// Where each located column lies in `stream`; columns past the end were not located
    /// and must not be asked for.
    pub spans: &'b [ColumnSpan],
    /// How to decode each column.
    pub kinds: &'b [PayloadKind],
    /// Block address of the row's head piece (the rowid's first half; named in errors).
    pub rdba: u32,
    /// The head piece's slot in its block (the rowid's second half).
    pub slot: u16,
}

impl<'b> BlockRow<'b> {
    #[inline]
    fn payload(&self, span: ColumnSpan) -> &'b [u8] {
        // Spans were checked against the stream when located.
        &self.stream[span.start as usize..(span.start + span.len) as usize]
    }

    /// Column `i`'s payload bytes as stored, `None` when NULL.
    #[inline]
    pub fn column_payload(&self, i: usize) -> Option<&'b [u8]> {
        let span = self.spans[i];
        (!span.is_null()).then(|| self.payload(span))
    }
}

impl RowAccess for BlockRow<'_> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        let span = self.spans[i];
        if span.is_null() {
            return Ok(Datum::Null);
        }
        let kind = self.kinds[i];
        // A whole number, the most common value, is read with one load.
        if kind == PayloadKind::Number
            && let Some(v) = read_small_int_in(self.stream, span.start as usize, span.len as usize)
        {
            return Ok(Datum::Int(v));
        }
        read_payload(kind, self.payload(span)).map_err(|reason| column_corrupt(self.rdba, i, reason))
    }

    #[inline(always)]
    fn is_null(&self, i: usize) -> bool {
        self.spans[i].is_null()
    }

    #[inline(always)]
    fn small_int(&self, i: usize) -> Option<i64> {
        let (start, len) = self.number_payload(i)?;
        read_small_int_in(self.stream, start, len)
    }

    #[inline(always)]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        let (start, len) = self.number_payload(i)?;
        read_small_fixed_in(self.stream, start, len)
    }
}

impl BlockRow<'_> {
    /// Where column `i`'s payload lies in the stream, when it is a non-NULL NUMBER.
    #[inline(always)]
    fn number_payload(&self, i: usize) -> Option<(usize, usize)> {
        let span = self.spans[i];
        (!span.is_null() && self.kinds[i] == PayloadKind::Number).then_some((span.start as usize, span.len as usize))
    }
}

/// A whole row inside a pinned block, walked only as far as recording where each
/// column's length byte is ([`crate::storage::row::walk_lengths`]); columns are read
/// from there on demand. Every recorded position was checked against the stream when
/// walked; an absent column's position lies beyond the stream, so it reads as NULL.
#[derive(Clone, Copy)]
pub struct WalkedRow<'b> {
    pub stream: &'b [u8],
    /// Offset in `stream` of each walked column's length byte.
    pub positions: &'b [u16],
    pub kinds: &'b [PayloadKind],
    pub rdba: u32,
}

impl WalkedRow<'_> {
    /// Column `i`'s payload, `None` when NULL or absent.
    #[inline(always)]
    fn payload(&self, i: usize) -> Option<&[u8]> {
        let at = self.positions[i] as usize;
        match *self.stream.get(at)? {
            LEN_NULL => None,
            LEN_ESCAPE => {
                let len = u16::from_le_bytes([self.stream[at + 1], self.stream[at + 2]]) as usize;
                Some(&self.stream[at + 3..at + 3 + len])
            }
            len => Some(&self.stream[at + 1..at + 1 + len as usize]),
        }
    }
}

impl WalkedRow<'_> {
    /// Column `i` (a NUMBER column) as a whole number: `Ok(None)` for NULL, `Err` when the
    /// value is not a small whole number (the caller decodes it the general way).
    #[inline(always)]
    #[allow(clippy::result_unit_err)]
    pub fn int_or_null(&self, i: usize) -> std::result::Result<Option<i64>, ()> {
        let at = self.positions[i] as usize;
        match self.stream.get(at) {
            None | Some(&LEN_NULL) => Ok(None),
            Some(&len) if len < LEN_ESCAPE => read_small_int_in(self.stream, at + 1, len as usize).map(Some).ok_or(()),
            Some(_) => Err(()),
        }
    }
}

impl RowAccess for WalkedRow<'_> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        let Some(payload) = self.payload(i) else { return Ok(Datum::Null) };
        read_payload(self.kinds[i], payload).map_err(|reason| column_corrupt(self.rdba, i, reason))
    }

    #[inline(always)]
    fn is_null(&self, i: usize) -> bool {
        self.stream.get(self.positions[i] as usize).is_none_or(|&len| len == LEN_NULL)
    }

    #[inline(always)]
    fn small_int(&self, i: usize) -> Option<i64> {
        let (start, len) = self.short_number_payload(i)?;
        read_small_int_in(self.stream, start, len)
    }

    #[inline(always)]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        let (start, len) = self.short_number_payload(i)?;
        read_small_fixed_in(self.stream, start, len)
    }
}

impl WalkedRow<'_> {
    /// Where column `i`'s payload lies in the stream, when it is a non-NULL NUMBER with
    /// a one-byte length (a longer one holds no small number).
    #[inline(always)]
    fn short_number_payload(&self, i: usize) -> Option<(usize, usize)> {
        if self.kinds[i] != PayloadKind::Number {
            return None;
        }
        let at = self.positions[i] as usize;
        let len = *self.stream.get(at)?;
        (len < LEN_ESCAPE).then_some((at + 1, len as usize))
    }
}

/// The live whole rows of one block with their columns located, handed to the pipeline
/// together so that per-row work runs in tight loops instead of one call chain per row.
pub struct BlockBatch<'b> {
    /// The pinned block.
    pub block: &'b [u8],
    /// Offset in `block` of each row's column stream.
    pub starts: &'b [u32],
    /// Each row's slot in the block's row directory.
    pub slots: &'b [u16],
    /// `width` spans per row, row after row.
    pub spans: &'b [ColumnSpan],
    pub width: usize,
    pub kinds: &'b [PayloadKind],
    pub rdba: u32,
}

impl<'b> BlockBatch<'b> {
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Row `i` of the batch.
    #[inline]
    pub fn row(&self, i: usize) -> BlockRow<'b> {
        BlockRow {
            stream: &self.block[self.starts[i] as usize..],
            spans: &self.spans[i * self.width..(i + 1) * self.width],
            kinds: self.kinds,
            rdba: self.rdba,
            slot: self.slots[i],
        }
    }

    /// Whether column `col` holds numbers.
    #[inline]
    pub fn is_number_column(&self, col: usize) -> bool {
        self.kinds.get(col) == Some(&PayloadKind::Number)
    }

    /// Column `col` (a number column) of row `i`: `Ok(None)` for NULL, `Err` when the value
    /// is not a small whole number (the caller decodes it the general way).
    #[inline(always)]
    #[allow(clippy::result_unit_err)]
    pub fn int_or_null(&self, i: usize, col: usize) -> std::result::Result<Option<i64>, ()> {
        let span = self.spans[i * self.width + col];
        if span.is_null() {
            return Ok(None);
        }
        let start = self.starts[i] as usize + span.start as usize;
        read_small_int_in(self.block, start, span.len as usize).map(Some).ok_or(())
    }

    /// Whether column `col` of row `i` is NULL.
    #[inline]
    pub fn is_null(&self, i: usize, col: usize) -> bool {
        self.spans[i * self.width + col].is_null()
    }
}

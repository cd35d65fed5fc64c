//! [`RowImage`]: a whole single-piece row built column by column, for loads that encode
//! their values straight into the stored format instead of first building values.
//!
//! The bytes are exactly what [`put_whole_row`](super::row::put_whole_row) writes for the same values (header,
//! then each column's length and payload), so a row image can be placed in a block as it
//! is. Trailing NULL columns are dropped when the row is finished, as the row format
//! requires.
//!
//! Invariants: `bytes` always starts with the three header bytes; `stored_len` is the
//! length of the row up to and including its last non-NULL column, and `stored_columns`
//! that column's 1-based position (0 while every column so far is NULL).

use super::row::{FLAGS_WHOLE, LEN_ESCAPE, LEN_NULL, LEN_SHORT_MAX, MAX_COLUMNS, PIECE_HEADER};

/// A row being encoded; reused row after row so that a load allocates nothing per row.
#[derive(Debug, Clone)]
pub struct RowImage {
    bytes: Vec<u8>,
    /// Columns pushed since the row began.
    columns: usize,
    stored_len: usize,
    stored_columns: usize,
}

impl Default for RowImage {
    fn default() -> Self {
        RowImage::new()
    }
}

impl RowImage {
    pub fn new() -> RowImage {
        let mut image = RowImage { bytes: Vec::with_capacity(256), columns: 0, stored_len: 0, stored_columns: 0 };
        image.begin();
        image
    }

    /// Starts a new row, forgetting the previous one.
    #[inline]
    pub fn begin(&mut self) {
        self.bytes.clear();
        self.bytes.extend_from_slice(&[FLAGS_WHOLE, 0, 0]);
        self.columns = 0;
        self.stored_len = PIECE_HEADER;
        self.stored_columns = 0;
    }

    /// Appends a NULL column.
    #[inline]
    pub fn push_null(&mut self) {
        self.bytes.push(LEN_NULL);
        self.columns += 1;
    }

    /// Appends a column whose payload is `payload`.
    #[inline]
    pub fn push_bytes(&mut self, payload: &[u8]) {
        self.push_length(payload.len());
        self.bytes.extend_from_slice(payload);
        self.end_column();
    }

    /// Appends a column of `len` payload bytes, which `write` fills (it is handed exactly
    /// `len` bytes).
    #[inline]
    pub fn push_with(&mut self, len: usize, write: impl FnOnce(&mut [u8])) {
        self.push_length(len);
        let start = self.bytes.len();
        self.bytes.resize(start + len, 0);
        write(&mut self.bytes[start..]);
        self.end_column();
    }

    /// Ends the row and returns its bytes: trailing NULL columns dropped, the column
    /// count set.
    #[inline]
    pub fn finish(&mut self) -> &[u8] {
        assert!(self.columns <= MAX_COLUMNS, "a row has at most {MAX_COLUMNS} columns");
        self.bytes.truncate(self.stored_len);
        self.bytes[2] = self.stored_columns as u8;
        &self.bytes
    }

    #[inline]
    fn push_length(&mut self, len: usize) {
        if len <= LEN_SHORT_MAX {
            self.bytes.push(len as u8);
        } else {
            assert!(
                len <= u16::MAX as usize,
                "payload of {len} bytes exceeds the two-byte length (checked at coercion)"
            );
            self.bytes.push(LEN_ESCAPE);
            self.bytes.extend_from_slice(&(len as u16).to_le_bytes());
        }
    }

    #[inline]
    fn end_column(&mut self) {
        self.columns += 1;
        self.stored_len = self.bytes.len();
        self.stored_columns = self.columns;
    }
}

/// The image [`super::row::encode_whole_row`] builds, for tests that compare encoders with it.
#[cfg(test)]
pub fn reference_image(values: &[crate::types::Datum<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    super::row::encode_whole_row(values, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::encoding::{payload_len, put_payload};
    use crate::types::{Datum, Value};
    use proptest::prelude::*;

    fn image_of(values: &[Value]) -> Vec<u8> {
        let mut image = RowImage::new();
        // Built twice to show that a reused image forgets the previous row.
        for _ in 0..2 {
            image.begin();
            for v in values {
                match v {
                    Datum::Null => image.push_null(),
                    v => image.push_with(payload_len(v), |out| put_payload(v, out)),
                }
            }
        }
        image.finish().to_vec()
    }

    #[test]
    fn trailing_nulls_are_dropped() {
        let values = [Datum::Int(1), Datum::Null, Datum::Null];
        assert_eq!(image_of(&values), vec![FLAGS_WHOLE, 0, 1, 2, 0, 1]);
        assert_eq!(image_of(&[Datum::Null]), vec![FLAGS_WHOLE, 0, 0]);
        assert_eq!(image_of(&[]), vec![FLAGS_WHOLE, 0, 0]);
    }

    #[test]
    fn bytes_and_writer_agree() {
        let mut a = RowImage::new();
        a.push_bytes(b"abc");
        let mut b = RowImage::new();
        b.push_with(3, |out| out.copy_from_slice(b"abc"));
        assert_eq!(a.finish(), b.finish());
    }

    fn value_strategy() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Datum::Null),
            any::<i64>().prop_map(Datum::Int),
            (any::<i64>(), 1u32..=20).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m, s))),
            "[a-z]{1,300}".prop_map(|s| Datum::Str(s.into())),
            any::<i64>().prop_map(Datum::Date),
        ]
    }

    proptest! {
        #[test]
        fn images_match_the_whole_row_encoder(values in proptest::collection::vec(value_strategy(), 0..30)) {
            prop_assert_eq!(image_of(&values), reference_image(&values));
        }
    }
}

//! Encoding the rows of an INSERT or COPY straight into the stored row format.
//!
//! A [`RowEncoder`] is built once per statement from the table's columns and the
//! statement's column list: for each table column, in table order, which provided value
//! fills it, its type and whether it may be NULL. Each row is then written into one
//! reused [`RowScratch`] without building coerced values first. The common cases take fast
//! paths decided by the column's type:
//!
//! - NUMBER / INTEGER: a whole number (or CSV text that is a plain integer) is checked
//!   against the precision on the integer and stored as it is;
//! - VARCHAR2(n) / CHAR(n): the byte length is checked (lengths are in bytes) and the
//!   bytes copied, a CHAR blank-padded;
//! - DATE: a date is stored as it is.
//!
//! Anything else goes through [`DataType::coerce`] for that one column, which is what the
//! generic path does for every column.
//!
//! Invariant: for any input, an encoded row is byte-identical to what coercing the values
//! and encoding them with [`put_whole_row`](crate::storage::row::put_whole_row) gives;
//! and a row is refused ([`Unencodable`]) exactly when that path fails. The encoder does
//! not say why a row fails: the caller builds it the generic way, whose error names the
//! column, so error messages come from one place.

use crate::catalog::TableDef;
use crate::expr::batch::{BatchRow, Cell};
use crate::storage::row::{FLAGS_WHOLE, LEN_ESCAPE, LEN_NULL, LEN_SHORT_MAX, MAX_COLUMNS, PIECE_HEADER};
use crate::types::encoding::{payload_len, put_payload};
use crate::types::{DataType, Datum};
use std::borrow::Cow;

/// A row that cannot be stored as given: a value does not fit its column, or a NOT NULL
/// column gets NULL. The generic path explains which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unencodable;

type Encoded<T = ()> = std::result::Result<T, Unencodable>;

/// Encodes the rows of one statement into one table.
pub struct RowEncoder {
    /// One per table column, in table order.
    columns: Vec<ColumnPlan>,
    image: RowScratch,
}

/// How one table column is filled.
#[derive(Debug, Clone, Copy)]
struct ColumnPlan {
    /// The provided value that fills the column (`None`: the statement leaves it NULL).
    source: Option<usize>,
    data_type: DataType,
    nullable: bool,
}

static NULL: Datum<'static> = Datum::Null;

impl RowEncoder {
    /// An encoder for rows that provide value `i` for table column `targets[i]`.
    pub fn new(table: &TableDef, targets: &[usize]) -> RowEncoder {
        let columns = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ColumnPlan {
                source: targets.iter().position(|&t| t == i),
                data_type: c.data_type,
                nullable: c.nullable,
            })
            .collect();
        RowEncoder { columns, image: RowScratch::new() }
    }

    /// The row image of provided values (one per target column).
    #[inline]
    pub fn encode_values(&mut self, values: &[Datum<'_>]) -> Encoded<&[u8]> {
        self.image.begin();
        for c in &self.columns {
            c.encode_value(c.source.map_or(&NULL, |i| &values[i]), &mut self.image)?;
        }
        Ok(self.image.finish())
    }

    /// The row image of a row of an evaluated batch (one cell per target column); the
    /// same image [`RowEncoder::encode_values`] makes of the row's values.
    #[inline]
    pub fn encode_cells(&mut self, row: &BatchRow<'_>) -> Encoded<&[u8]> {
        self.image.begin();
        for c in &self.columns {
            match c.source.map(|i| row.cell(i)) {
                Some(Cell::Int(i)) => c.encode_value(&Datum::Int(i), &mut self.image)?,
                Some(Cell::Text(s)) if !s.is_empty() => {
                    c.encode_value(&Datum::Str(Cow::Borrowed(s)), &mut self.image)?
                }
                Some(Cell::Value(v)) => c.encode_value(v, &mut self.image)?,
                _ => c.push_null(&mut self.image)?,
            }
        }
        Ok(self.image.finish())
    }

    /// The row image of the text fields of a CSV record (one per target column); an
    /// empty field, or one equal to `null`, is NULL.
    #[inline]
    pub fn encode_texts(&mut self, fields: &[&str], null: Option<&str>) -> Encoded<&[u8]> {
        self.image.begin();
        for c in &self.columns {
            match c.source.map(|i| fields[i]) {
                Some(text) if !text.is_empty() && null != Some(text) => c.encode_text(text, &mut self.image)?,
                _ => c.push_null(&mut self.image)?,
            }
        }
        Ok(self.image.finish())
    }
}

impl ColumnPlan {
    #[inline]
    fn encode_value(&self, value: &Datum<'_>, image: &mut RowScratch) -> Encoded {
        match (self.data_type, value) {
            (_, Datum::Null) => self.push_null(image),
            (DataType::Number { .. } | DataType::Integer, &Datum::Int(i)) => {
                push_whole_number(self.data_type, i, image)
            }
            (DataType::Varchar2 { max_bytes }, Datum::Str(s)) => push_text(s.as_bytes(), max_bytes, image),
            (DataType::Varchar2 { max_bytes }, &Datum::Int(i)) => {
                push_text(itoa::Buffer::new().format(i).as_bytes(), max_bytes, image)
            }
            (DataType::Char { len }, Datum::Str(s)) => push_char(s.as_bytes(), len, image),
            (DataType::Date, &Datum::Date(seconds)) => {
                image.push_bytes(&seconds.to_le_bytes());
                Ok(())
            }
            (_, value) => self.push_coerced(value.reborrow(), image),
        }
    }

    /// Encodes a non-empty CSV field.
    #[inline]
    fn encode_text(&self, text: &str, image: &mut RowScratch) -> Encoded {
        match self.data_type {
            DataType::Number { .. } | DataType::Integer => match plain_integer(text.as_bytes()) {
                Some(i) => push_whole_number(self.data_type, i, image),
                None => self.push_coerced(Datum::Str(Cow::Borrowed(text)), image),
            },
            DataType::Varchar2 { max_bytes } => push_text(text.as_bytes(), max_bytes, image),
            DataType::Char { len } => push_char(text.as_bytes(), len, image),
            DataType::Date
            | DataType::Timestamp { .. }
            | DataType::IntervalYearMonth { .. }
            | DataType::IntervalDaySecond { .. } => self.push_coerced(Datum::Str(Cow::Borrowed(text)), image),
        }
    }

    #[inline]
    fn push_null(&self, image: &mut RowScratch) -> Encoded {
        if !self.nullable {
            return Err(Unencodable);
        }
        image.push_null();
        Ok(())
    }

    /// The generic path for one column: coerce, then encode the coerced value.
    #[cold]
    fn push_coerced(&self, value: Datum<'_>, image: &mut RowScratch) -> Encoded {
        // The error is dropped: the caller's generic path reports it with its column.
        match self.data_type.coerce(value, "").map_err(|_| Unencodable)? {
            Datum::Null => self.push_null(image),
            v => {
                image.push_with(payload_len(&v), |out| put_payload(&v, out));
                Ok(())
            }
        }
    }
}

/// A whole number into a NUMBER or INTEGER column, checked against its precision.
#[inline]
fn push_whole_number(data_type: DataType, i: i64, image: &mut RowScratch) -> Encoded {
    if !data_type.holds_whole_number(i) {
        return Err(Unencodable);
    }
    image.push_int(i);
    Ok(())
}

/// Text into a VARCHAR2 column of at most `max_bytes` bytes.
#[inline]
fn push_text(bytes: &[u8], max_bytes: u32, image: &mut RowScratch) -> Encoded {
    if bytes.len() > max_bytes as usize {
        return Err(Unencodable);
    }
    image.push_bytes(bytes);
    Ok(())
}

/// Text into a CHAR(`len`) column: blank-padded to `len` bytes.
#[inline]
fn push_char(bytes: &[u8], len: u32, image: &mut RowScratch) -> Encoded {
    let len = len as usize;
    if bytes.len() > len {
        return Err(Unencodable);
    }
    image.push_with(len, |out| {
        out[..bytes.len()].copy_from_slice(bytes);
        out[bytes.len()..].fill(b' ');
    });
    Ok(())
}

/// The value of text that is a plain integer: an optional sign and 1 to 18 ASCII digits
/// (so that it cannot overflow). `None` for anything else, including surrounding blanks:
/// the generic conversion decides those.
#[inline]
fn plain_integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &c in digits {
        let digit = c.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + i64::from(digit);
    }
    Some(if negative { -value } else { value })
}

/// Bytes of slack kept after the row in [`RowScratch`], so that a whole number's nine
/// payload bytes and the eight-byte words of [`copy_short`] can always be written whole.
const SLACK: usize = 24;

/// The row being encoded: a whole single-piece row written column by column at a cursor
/// into one buffer kept for the statement, so that a column costs one length check and
/// plain stores (no per-push vector bookkeeping, no call to copy a short field).
///
/// The bytes are exactly what [`put_whole_row`](crate::storage::row::put_whole_row)
/// writes for the same values. Invariants: `bytes[..3]` is the piece header;
/// `bytes.len() >= pos + SLACK` after every push; `stored_len` is the length of the row
/// up to and including its last non-NULL column and `stored_columns` that column's
/// 1-based position (0 while every column so far is NULL).
#[derive(Debug, Clone)]
struct RowScratch {
    bytes: Vec<u8>,
    /// Where the next column's length goes.
    pos: usize,
    /// Columns pushed since the row began.
    columns: usize,
    stored_len: usize,
    stored_columns: usize,
}

impl RowScratch {
    fn new() -> RowScratch {
        let mut bytes = vec![0; 512];
        bytes[0] = FLAGS_WHOLE;
        RowScratch { bytes, pos: PIECE_HEADER, columns: 0, stored_len: PIECE_HEADER, stored_columns: 0 }
    }

    /// Starts a new row, forgetting the previous one.
    #[inline]
    fn begin(&mut self) {
        self.pos = PIECE_HEADER;
        self.columns = 0;
        self.stored_len = PIECE_HEADER;
        self.stored_columns = 0;
    }

    /// Makes room for a column of `len` payload bytes (its length bytes and the slack).
    #[inline(always)]
    fn reserve(&mut self, len: usize) {
        if self.pos + 3 + len + SLACK > self.bytes.len() {
            self.grow(len);
        }
    }

    #[cold]
    fn grow(&mut self, len: usize) {
        let want = (self.pos + 3 + len + SLACK).next_power_of_two();
        self.bytes.resize(want, 0);
    }

    /// Appends a NULL column.
    #[inline(always)]
    fn push_null(&mut self) {
        self.reserve(0);
        self.bytes[self.pos] = LEN_NULL;
        self.pos += 1;
        self.columns += 1;
    }

    /// Writes the length of a payload of `len` bytes (room reserved) and returns where the
    /// payload goes.
    #[inline(always)]
    fn put_length(&mut self, len: usize) -> usize {
        if len <= LEN_SHORT_MAX {
            self.bytes[self.pos] = len as u8;
            self.pos + 1
        } else {
            assert!(
                len <= u16::MAX as usize,
                "payload of {len} bytes exceeds the two-byte length (checked at coercion)"
            );
            self.bytes[self.pos] = LEN_ESCAPE;
            self.bytes[self.pos + 1..self.pos + 3].copy_from_slice(&(len as u16).to_le_bytes());
            self.pos + 3
        }
    }

    /// Ends a non-NULL column whose payload ends at `end`.
    #[inline(always)]
    fn end_column(&mut self, end: usize) {
        self.pos = end;
        self.columns += 1;
        self.stored_len = end;
        self.stored_columns = self.columns;
    }

    /// Appends a column whose payload is `payload`.
    #[inline(always)]
    fn push_bytes(&mut self, payload: &[u8]) {
        self.reserve(payload.len());
        let at = self.put_length(payload.len());
        copy_short(&mut self.bytes[at..], payload);
        self.end_column(at + payload.len());
    }

    /// Appends a column of `len` payload bytes, which `write` fills (it is handed exactly
    /// `len` bytes).
    #[inline(always)]
    fn push_with(&mut self, len: usize, write: impl FnOnce(&mut [u8])) {
        self.reserve(len);
        let at = self.put_length(len);
        write(&mut self.bytes[at..at + len]);
        self.end_column(at + len);
    }

    /// Appends a whole number as [`put_payload`] stores it (scale 0, then the fewest
    /// little-endian bytes that hold it): all eight bytes are written, the cursor moves
    /// past the ones that count.
    #[inline(always)]
    fn push_int(&mut self, i: i64) {
        let v = Datum::Int(i);
        let len = payload_len(&v);
        self.reserve(9);
        let at = self.put_length(len);
        self.bytes[at] = 0;
        self.bytes[at + 1..at + 9].copy_from_slice(&i.to_le_bytes());
        self.end_column(at + len);
    }

    /// Ends the row and returns its bytes: trailing NULL columns dropped, the column
    /// count set.
    #[inline]
    fn finish(&mut self) -> &[u8] {
        assert!(self.columns <= MAX_COLUMNS, "a row has at most {MAX_COLUMNS} columns");
        self.bytes[2] = self.stored_columns as u8;
        &self.bytes[..self.stored_len]
    }
}

/// Copies `src` to the start of `dst` (at least as long). A short
/// field (the usual case) is copied with at most two eight-byte words, without a call.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n <= 16 {
        if n >= 8 {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        } else if n >= 4 {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        } else {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
    } else {
        dst[..n].copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image [`crate::storage::row::encode_whole_row`] builds, which the encoders
    /// must match byte for byte.
    fn reference_image(values: &[Datum<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        crate::storage::row::encode_whole_row(values, &mut out);
        out
    }
    use crate::types::{Value, parse_date};
    use proptest::prelude::*;

    /// The generic path: coerce each value, check NOT NULL, encode the row.
    fn reference(table: &TableDef, targets: &[usize], values: &[Datum<'_>]) -> Option<Vec<u8>> {
        let mut row = vec![Datum::Null; table.columns.len()];
        for (v, &t) in values.iter().zip(targets) {
            let c = &table.columns[t];
            row[t] = c.data_type.coerce(v.reborrow(), &c.name).ok()?;
        }
        if row.iter().zip(&table.columns).any(|(v, c)| v.is_null() && !c.nullable) {
            return None;
        }
        Some(reference_image(&row))
    }

    fn csv_value(field: &str, null: Option<&str>) -> Value {
        if field.is_empty() || null == Some(field) { Datum::Null } else { Datum::Str(field.to_owned().into()) }
    }

    #[test]
    fn plain_integers() {
        assert_eq!(plain_integer(b"42"), Some(42));
        assert_eq!(plain_integer(b"-007"), Some(-7));
        assert_eq!(plain_integer(b"+5"), Some(5));
        assert_eq!(plain_integer(b"999999999999999999"), Some(999_999_999_999_999_999));
        for text in ["", "-", "+", " 1", "1 ", "1.0", "1e3", "0x1", "1234567890123456789", "--1"] {
            assert_eq!(plain_integer(text.as_bytes()), None, "{text:?}");
        }
    }

    #[test]
    fn columns_left_out_are_null_and_not_null_is_refused() {
        let t = TableDef::of_columns(&[(DataType::Integer, false), (DataType::Varchar2 { max_bytes: 3 }, true)]);
        let mut e = RowEncoder::new(&t, &[1]);
        assert_eq!(e.encode_values(&[Datum::Str("ab".into())]), Err(Unencodable));
        let mut e = RowEncoder::new(&t, &[1, 0]);
        let values = [Datum::Str("ab".into()), Datum::Int(7)];
        assert_eq!(e.encode_values(&values).map(<[u8]>::to_vec), Ok(reference(&t, &[1, 0], &values).unwrap()));
    }

    fn data_type() -> impl Strategy<Value = DataType> {
        prop_oneof![
            Just(DataType::Integer),
            (proptest::option::of(1u8..=20), proptest::option::of(0u8..=6))
                .prop_map(|(precision, scale)| DataType::Number { precision, scale }),
            (1u32..=12).prop_map(|max_bytes| DataType::Varchar2 { max_bytes }),
            (1u32..=6).prop_map(|len| DataType::Char { len }),
            Just(DataType::Date),
        ]
    }

    /// Text as a CSV field might hold it, good and bad.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|i| i.to_string()),
            (-99_999i64..99_999).prop_map(|i| i.to_string()),
            "[+-]?[0-9]{0,22}",
            "[+-]?[0-9]{1,4}\\.[0-9]{0,4}",
            " ?[0-9e.x-]{1,6} ?",
            "\\PC{0,14}",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2})?",
            Just("NA".to_owned()),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Datum::Null),
            any::<i64>().prop_map(Datum::Int),
            (-99_999i64..99_999).prop_map(Datum::Int),
            (any::<i32>(), 0u32..=6).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m.into(), s))),
            field().prop_filter_map("non-empty", |s| (!s.is_empty()).then(|| Datum::Str(s.into()))),
            (-100_000_000_000i64..100_000_000_000).prop_map(Datum::Date),
        ]
    }

    /// A table of up to 8 columns and a column list naming some of them in any order.
    fn table_and_targets() -> impl Strategy<Value = (TableDef, Vec<usize>)> {
        proptest::collection::vec((data_type(), any::<bool>()), 1..8).prop_flat_map(|columns| {
            let n = columns.len();
            let t = TableDef::of_columns(&columns);
            (Just(t), Just((0..n).collect::<Vec<_>>()).prop_shuffle(), 1..=n)
                .prop_map(|(t, order, keep)| (t, order[..keep].to_vec()))
        })
    }

    proptest! {
        #[test]
        fn values_encode_as_the_generic_path_does(
            (t, targets) in table_and_targets(),
            values in proptest::collection::vec(value(), 8),
        ) {
            let values = &values[..targets.len()];
            let mut e = RowEncoder::new(&t, &targets);
            prop_assert_eq!(e.encode_values(values).ok().map(<[u8]>::to_vec), reference(&t, &targets, values));
        }

        #[test]
        fn csv_fields_encode_as_the_generic_path_does(
            (t, targets) in table_and_targets(),
            fields in proptest::collection::vec(field(), 8),
            null in proptest::option::of(Just("NA")),
        ) {
            let fields: Vec<&str> = fields[..targets.len()].iter().map(String::as_str).collect();
            let values: Vec<Value> = fields.iter().map(|f| csv_value(f, null)).collect();
            let mut e = RowEncoder::new(&t, &targets);
            prop_assert_eq!(e.encode_texts(&fields, null).ok().map(<[u8]>::to_vec), reference(&t, &targets, &values));
        }

        #[test]
        fn whole_numbers_held_are_stored_unchanged(t in data_type(), i in any::<i64>(), small in -99_999i64..99_999) {
            for i in [i, small] {
                let coerced = t.coerce(Datum::Int(i), "C").ok();
                if t.holds_whole_number(i) {
                    prop_assert_eq!(coerced, Some(Datum::Int(i)));
                } else if matches!(t, DataType::Number { .. } | DataType::Integer) {
                    prop_assert_eq!(coerced, None);
                }
            }
        }
    }

    /// What the scratch row gives for `values`, built twice to show that a reused
    /// scratch forgets the previous row.
    fn scratch_image(values: &[Value]) -> Vec<u8> {
        let mut image = RowScratch::new();
        for _ in 0..2 {
            image.begin();
            for v in values {
                match v {
                    Datum::Null => image.push_null(),
                    &Datum::Int(i) => image.push_int(i),
                    Datum::Str(s) => image.push_bytes(s.as_bytes()),
                    v => image.push_with(payload_len(v), |out| put_payload(v, out)),
                }
            }
        }
        image.finish().to_vec()
    }

    proptest! {
        /// Every way of pushing a column writes what the row format's own encoder
        /// writes, for short and long (escaped length) payloads and rows that outgrow
        /// the first buffer.
        #[test]
        fn scratch_rows_match_the_row_encoder(values in proptest::collection::vec(prop_oneof![
            value(),
            "[a-z]{0,40}".prop_map(Datum::string),
            "[a-z]{240,700}".prop_map(|s| Datum::Str(s.into())),
        ], 0..12)) {
            prop_assert_eq!(scratch_image(&values), reference_image(&values));
        }
    }

    #[test]
    fn short_copies_of_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40 {
            let mut dst = [0u8; 48];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(&dst[..n], &src[..n]);
            assert!(dst[n..].iter().all(|&b| b == 0), "nothing written past {n} bytes");
        }
    }

    #[test]
    fn dates_in_csv_fields() {
        let t = TableDef::of_columns(&[(DataType::Date, true)]);
        let mut e = RowEncoder::new(&t, &[0]);
        let seconds = parse_date("2015-11-30 00:45:00", None).unwrap();
        let expected = reference_image(&[Datum::Date(seconds)]);
        assert_eq!(e.encode_texts(&["2015-11-30 00:45:00"], None).map(<[u8]>::to_vec), Ok(expected));
        assert_eq!(e.encode_texts(&["yesterday"], None), Err(Unencodable));
    }
}

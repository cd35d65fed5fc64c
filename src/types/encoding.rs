//! The bytes a value occupies inside a row: the column payload that follows the length
//! byte(s) written by `storage::row`.
//!
//! | type            | payload                                                              |
//! |-----------------|----------------------------------------------------------------------|
//! | NUMBER, INTEGER | 1 byte scale (0..=28), then the mantissa as little-endian two's      |
//! |                 | complement in the fewest bytes that hold it (1..=13): value = m/10^s |
//! | VARCHAR2, CHAR  | the UTF-8 bytes                                                      |
//! | DATE            | 8 bytes: seconds since 1970-01-01 00:00:00, little-endian            |
//! | TIMESTAMP       | 8 bytes: microseconds since 1970-01-01 00:00:00, little-endian       |
//! | INTERVAL Y TO M | 8 bytes: months, little-endian two's complement                      |
//! | INTERVAL D TO S | 8 bytes: microseconds, little-endian two's complement                |
//!
//! NULL has no payload (the length byte says NULL). A whole number such as a `cust_id` of
//! 4,000,000 takes 4 bytes (scale 0 + 3 mantissa bytes): decoding it is one unaligned load
//! and a sign extension, which is what keeps predicate evaluation in a scan cheap.

use super::{Datum, Fixed};
use rust_decimal::Decimal;

/// How a column's payload is decoded; derived once per column from its `DataType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    Number,
    Text,
    Date,
    Timestamp,
    YearMonth,
    DaySecond,
}

impl From<super::DataType> for PayloadKind {
    fn from(t: super::DataType) -> PayloadKind {
        use super::DataType::*;
        match t {
            Number { .. } | Integer => PayloadKind::Number,
            Varchar2 { .. } | Char { .. } => PayloadKind::Text,
            Date => PayloadKind::Date,
            Timestamp { .. } => PayloadKind::Timestamp,
            IntervalYearMonth { .. } => PayloadKind::YearMonth,
            IntervalDaySecond { .. } => PayloadKind::DaySecond,
        }
    }
}

/// Length in bytes of the payload of a non-null value.
#[inline]
pub fn payload_len(value: &Datum<'_>) -> usize {
    match value {
        Datum::Null => 0,
        Datum::Int(i) => 1 + small_int_len(*i),
        Datum::Num(d) => 1 + int_len(d.mantissa()),
        Datum::Str(s) => s.len(),
        Datum::Date(_) | Datum::Timestamp(_) | Datum::YearMonth(_) | Datum::DaySecond(_) => 8,
    }
}

/// Writes the payload of a non-null value into `out`, which is exactly [`payload_len`]
/// bytes long (so a number's mantissa takes all but the scale byte).
#[inline]
pub fn put_payload(value: &Datum<'_>, out: &mut [u8]) {
    match value {
        Datum::Null => {}
        Datum::Int(i) => {
            let mantissa_len = out.len() - 1;
            out[0] = 0;
            out[1..].copy_from_slice(&i.to_le_bytes()[..mantissa_len]);
        }
        Datum::Num(d) => {
            let mantissa_len = out.len() - 1;
            out[0] = d.scale() as u8;
            out[1..].copy_from_slice(&d.mantissa().to_le_bytes()[..mantissa_len]);
        }
        Datum::Str(s) => out.copy_from_slice(s.as_bytes()),
        Datum::Date(v) | Datum::Timestamp(v) | Datum::YearMonth(v) | Datum::DaySecond(v) => {
            out.copy_from_slice(&v.to_le_bytes())
        }
    }
}

/// [`int_len`] of a whole number that fits in `i64`.
#[inline]
fn small_int_len(m: i64) -> usize {
    let significant_bits = if m < 0 { 64 - (!m).leading_zeros() } else { 64 - m.leading_zeros() };
    (significant_bits as usize + 1).div_ceil(8).max(1)
}

fn int_len(m: i128) -> usize {
    // Fewest bytes whose two's complement holds m: strip redundant sign bytes.
    let significant_bits = if m < 0 { 128 - (!m).leading_zeros() } else { 128 - m.leading_zeros() };
    (significant_bits as usize + 1).div_ceil(8).max(1)
}

/// Decodes a payload. `Err` names what is wrong; the caller adds where (file, block).
pub fn read_payload(kind: PayloadKind, bytes: &[u8]) -> Result<Datum<'_>, &'static str> {
    match kind {
        PayloadKind::Number => read_number(bytes),
        PayloadKind::Text => {
            std::str::from_utf8(bytes).map(|s| Datum::Str(s.into())).map_err(|_| "string column is not valid UTF-8")
        }
        PayloadKind::Date => eight(bytes).map(Datum::Date).ok_or("DATE column is not 8 bytes"),
        PayloadKind::Timestamp => eight(bytes).map(Datum::Timestamp).ok_or("TIMESTAMP column is not 8 bytes"),
        PayloadKind::YearMonth => {
            eight(bytes).map(Datum::YearMonth).ok_or("INTERVAL YEAR TO MONTH column is not 8 bytes")
        }
        PayloadKind::DaySecond => {
            eight(bytes).map(Datum::DaySecond).ok_or("INTERVAL DAY TO SECOND column is not 8 bytes")
        }
    }
}

/// Eight little-endian bytes as a signed number; `None` for another length.
fn eight(bytes: &[u8]) -> Option<i64> {
    bytes.try_into().ok().map(i64::from_le_bytes)
}

/// A whole number stored with scale 0 in at most 8 mantissa bytes: the fast path of a
/// numeric predicate. `None` for anything else (the caller falls back to [`read_payload`]).
#[inline]
pub fn read_small_int(bytes: &[u8]) -> Option<i64> {
    let (&scale, mantissa) = bytes.split_first()?;
    if scale != 0 || mantissa.is_empty() || mantissa.len() > 8 {
        return None;
    }
    // Fixed-size loads for the common widths; assemble the rest byte by byte.
    Some(match *mantissa {
        [a] => i64::from(a as i8),
        [a, b] => i64::from(i16::from_le_bytes([a, b])),
        [a, b, c] => i64::from(i32::from_le_bytes([0, a, b, c]) >> 8),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        _ => {
            let mut v = 0u64;
            for (i, &b) in mantissa.iter().enumerate() {
                v |= u64::from(b) << (8 * i);
            }
            let shift = 64 - 8 * mantissa.len() as u32;
            ((v << shift) as i64) >> shift
        }
    })
}

/// [`read_small_int`] of the payload at `start..start + len` of `bytes`, reading the
/// mantissa with one unaligned 8-byte load when the bytes after it allow (inside a block
/// they nearly always do) and byte by byte otherwise.
#[inline(always)]
pub fn read_small_int_in(bytes: &[u8], start: usize, len: usize) -> Option<i64> {
    if *bytes.get(start)? != 0 {
        return None;
    }
    small_mantissa_at(bytes, start, len)
}

/// A NUMBER payload at `start..start + len` of `bytes` whose mantissa fits in 64 bits,
/// as a [`Fixed`]; `None` for anything else (the caller decodes it the general way).
#[inline(always)]
pub fn read_small_fixed_in(bytes: &[u8], start: usize, len: usize) -> Option<Fixed> {
    let scale = *bytes.get(start)?;
    if u32::from(scale) > Decimal::MAX_SCALE {
        return None;
    }
    Some(Fixed { mantissa: small_mantissa_at(bytes, start, len)?, scale })
}

/// The mantissa of the NUMBER payload at `start..start + len` of `bytes` when it has 1 to
/// 8 bytes, sign-extended: one unaligned 8-byte load when the bytes after it allow, byte
/// by byte otherwise.
#[inline(always)]
fn small_mantissa_at(bytes: &[u8], start: usize, len: usize) -> Option<i64> {
    let mantissa_len = len.wrapping_sub(1);
    if mantissa_len.wrapping_sub(1) >= 8 {
        return None;
    }
    let raw = match bytes.get(start + 1..start + 9) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
        None => {
            let mut v = 0u64;
            for (i, &b) in bytes.get(start + 1..start + len)?.iter().enumerate() {
                v |= u64::from(b) << (8 * i);
            }
            v
        }
    };
    let shift = 64 - 8 * mantissa_len as u32;
    Some(((raw << shift) as i64) >> shift)
}

fn read_number(bytes: &[u8]) -> Result<Datum<'_>, &'static str> {
    if let Some(i) = read_small_int(bytes) {
        return Ok(Datum::Int(i));
    }
    let (&scale, mantissa) = bytes.split_first().ok_or("NUMBER column has no bytes")?;
    if mantissa.is_empty() || mantissa.len() > 13 || u32::from(scale) > Decimal::MAX_SCALE {
        return Err("NUMBER column is malformed");
    }
    let fill = if mantissa[mantissa.len() - 1] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[..mantissa.len()].copy_from_slice(mantissa);
    let m = i128::from_le_bytes(buf);
    Decimal::try_from_i128_with_scale(m, u32::from(scale))
        .map(Datum::from_decimal)
        .map_err(|_| "NUMBER column is out of range")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The payload of a non-null value.
    fn payload(v: &Datum<'_>) -> Vec<u8> {
        let mut out = vec![0xAA; payload_len(v)];
        put_payload(v, &mut out);
        out
    }

    fn round_trip(kind: PayloadKind, v: Datum<'static>) -> Datum<'static> {
        read_payload(kind, &payload(&v)).unwrap().into_owned()
    }

    #[test]
    fn small_ints_take_few_bytes() {
        assert_eq!(payload_len(&Datum::Int(0)), 2);
        assert_eq!(payload_len(&Datum::Int(127)), 2);
        assert_eq!(payload_len(&Datum::Int(128)), 3);
        assert_eq!(payload_len(&Datum::Int(-128)), 2);
        assert_eq!(payload_len(&Datum::Int(4_000_000)), 4);
        assert_eq!(payload_len(&Datum::Int(i64::MIN)), 9);
    }

    #[test]
    fn malformed_numbers_are_errors() {
        assert!(read_payload(PayloadKind::Number, &[]).is_err());
        assert!(read_payload(PayloadKind::Number, &[99, 1]).is_err());
        assert!(read_payload(PayloadKind::Date, &[1, 2]).is_err());
        assert!(read_payload(PayloadKind::Timestamp, &[1; 9]).is_err());
        assert!(read_payload(PayloadKind::DaySecond, &[1; 7]).is_err());
        assert!(read_payload(PayloadKind::Text, &[0xff, 0xfe]).is_err());
    }

    proptest! {
        #[test]
        fn ints_round_trip(i in any::<i64>()) {
            prop_assert_eq!(round_trip(PayloadKind::Number, Datum::Int(i)), Datum::Int(i));
        }

        #[test]
        fn in_place_reads_agree_with_slice_reads(i in any::<i64>(), pad in 0usize..12, tail in 0usize..12) {
            let mut bytes = vec![0xAAu8; pad];
            let payload = payload(&Datum::Int(i));
            bytes.extend_from_slice(&payload);
            bytes.extend(std::iter::repeat_n(0x55u8, tail));
            prop_assert_eq!(read_small_int_in(&bytes, pad, payload.len()), read_small_int(&payload));
        }

        #[test]
        fn decimals_round_trip(m in any::<i64>(), scale in 0u32..=28) {
            let d = Datum::from_decimal(Decimal::new(m, scale));
            prop_assert_eq!(round_trip(PayloadKind::Number, d.clone()), d);
        }

        /// The fixed-point read of a number is the number the general read gives,
        /// and it declines only mantissas past 64 bits.
        #[test]
        fn fixed_reads_agree_with_general_reads(
            m in prop_oneof![any::<i64>().prop_map(i128::from), -(1i128 << 95)..(1i128 << 95)],
            scale in 0u32..=28,
            pad in 0usize..12,
            tail in 0usize..12,
        ) {
            let d = Datum::from_decimal(Decimal::from_i128_with_scale(m, scale));
            let payload = payload(&d);
            let mut bytes = vec![0xAAu8; pad];
            bytes.extend_from_slice(&payload);
            bytes.extend(std::iter::repeat_n(0x55u8, tail));
            let fixed = read_small_fixed_in(&bytes, pad, payload.len());
            prop_assert_eq!(fixed, Fixed::of(&d));
            prop_assert_eq!(fixed.map(Fixed::into_datum), Fixed::of(&d).map(|_| d));
        }

        #[test]
        fn wide_decimals_round_trip(m in -(1i128 << 95)..(1i128 << 95), scale in 0u32..=28) {
            let d = Datum::from_decimal(Decimal::from_i128_with_scale(m, scale));
            prop_assert_eq!(round_trip(PayloadKind::Number, d.clone()), d);
        }

        #[test]
        fn strings_and_dates_round_trip(s in "\\PC{1,40}", d in any::<i64>()) {
            prop_assert_eq!(round_trip(PayloadKind::Text, Datum::Str(s.clone().into())), Datum::Str(s.into()));
            prop_assert_eq!(round_trip(PayloadKind::Date, Datum::Date(d)), Datum::Date(d));
            prop_assert_eq!(round_trip(PayloadKind::Timestamp, Datum::Timestamp(d)), Datum::Timestamp(d));
            prop_assert_eq!(round_trip(PayloadKind::YearMonth, Datum::YearMonth(d)), Datum::YearMonth(d));
            prop_assert_eq!(round_trip(PayloadKind::DaySecond, Datum::DaySecond(d)), Datum::DaySecond(d));
        }
    }
}

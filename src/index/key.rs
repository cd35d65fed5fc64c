//! Index keys: a tuple of column values encoded so that comparing the bytes (memcmp)
//! orders keys as SQL orders the values, ascending with NULLs last (Oracle's order).
//!
//! Each column is encoded on its own and the encodings are concatenated; every column
//! encoding is self-delimiting, so the encoding of a leading subset of the columns is a
//! prefix of the encoding of every key that extends it, and sorts before them.
//!
//! | value   | bytes                                                                        |
//! |---------|------------------------------------------------------------------------------|
//! | NULL    | `FF`                                                                         |
//! | number  | `01` negative, `02` zero, `03` positive; then for a non-zero number the decimal exponent `e` (value = 0.d₁d₂… × 10^e) as `80+e` (complemented when negative), then the significant digits `d+1` each (complemented as `FE-d` when negative) and a terminator `00` (`FF` when negative) |
//! | string  | `01`, the bytes with `00` written `00 FF`, then `00 01`                       |
//! | DATE    | `01`, seconds since 1970 as big-endian i64 with the sign bit flipped          |
//!
//! Integers and decimals share one encoding (`5` and `5.0` are the same key), so a
//! NUMBER column holding both compares them numerically. Decoding gives back the
//! canonical [`Datum`] (an `Int` for a whole number that fits in 64 bits).

use crate::error::{Error, Result};
use crate::types::{DataType, Datum, Fixed, Value, datetime};
use rust_decimal::Decimal;

const NULL: u8 = 0xFF;
const PRESENT: u8 = 0x01;
const NEGATIVE: u8 = 0x01;
const ZERO: u8 = 0x02;
const POSITIVE: u8 = 0x03;

/// Encodes `values` (one per key column, of the columns' `types`) into `out`, replacing
/// what it held. Returns false when every value is NULL: such a row is not indexed.
/// A value that cannot be converted to its column's type is an error.
pub fn encode_key(values: &[Datum<'_>], types: &[DataType], out: &mut Vec<u8>) -> Result<bool> {
    assert_eq!(values.len(), types.len(), "one value per key column");
    out.clear();
    let mut any = false;
    for (v, t) in values.iter().zip(types) {
        any |= !v.is_null();
        encode_value(v, *t, out)?;
    }
    Ok(any)
}

/// Appends the encoding of one column value.
pub fn encode_value(value: &Datum<'_>, data_type: DataType, out: &mut Vec<u8>) -> Result<()> {
    if value.is_null() {
        out.push(NULL);
        return Ok(());
    }
    match data_type {
        DataType::Integer | DataType::Number { .. } => match value {
            Datum::Int(i) => encode_int(*i, out),
            other => {
                let d = other.to_decimal("index key")?.expect("not NULL");
                encode_decimal(d, out);
            }
        },
        DataType::Varchar2 { .. } | DataType::Char { .. } => {
            let text = value.clone().into_text().expect("not NULL");
            encode_bytes(text.as_bytes(), out);
        }
        DataType::Date => {
            let seconds = match value {
                Datum::Date(d) => *d,
                Datum::Str(s) => crate::types::parse_date(s, None).map_err(|m| Error::value("index key", m))?,
                other => return Err(Error::value("index key", format!("cannot use {} as a DATE", other.type_name()))),
            };
            encode_i64(seconds, out);
        }
        DataType::Timestamp { .. } => {
            let micros = match value {
                Datum::Timestamp(t) => *t,
                Datum::Date(d) => d.saturating_mul(datetime::MICROS_PER_SECOND),
                Datum::Str(s) => datetime::parse_timestamp(s).map_err(|m| Error::value("index key", m))?,
                other => {
                    return Err(Error::value("index key", format!("cannot use {} as a TIMESTAMP", other.type_name())));
                }
            };
            encode_i64(micros, out);
        }
        DataType::IntervalYearMonth { .. } | DataType::IntervalDaySecond { .. } => {
            let amount = match (value, data_type) {
                (Datum::YearMonth(v), DataType::IntervalYearMonth { .. })
                | (Datum::DaySecond(v), DataType::IntervalDaySecond { .. }) => *v,
                (Datum::Str(s), DataType::IntervalYearMonth { .. }) => {
                    datetime::parse_year_month(s).map_err(|m| Error::value("index key", m))?
                }
                (Datum::Str(s), _) => datetime::parse_day_second(s).map_err(|m| Error::value("index key", m))?,
                (other, _) => {
                    return Err(Error::value("index key", format!("cannot use {} as {data_type}", other.type_name())));
                }
            };
            encode_i64(amount, out);
        }
    }
    Ok(())
}

/// A signed 64-bit value in eight bytes that sort as the values do: the sign bit flipped,
/// big-endian.
fn encode_i64(v: i64, out: &mut Vec<u8>) {
    out.push(PRESENT);
    out.extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(PRESENT);
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 1]);
}

/// A whole number: its decimal digits without the formatting machinery.
#[inline]
fn encode_int(i: i64, out: &mut Vec<u8>) {
    if i == 0 {
        out.push(ZERO);
        return;
    }
    let mut digits = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = (n % 10) as u8;
        n /= 10;
    }
    let exponent = (digits.len() - at) as i32;
    encode_digits(i < 0, exponent, &digits[at..], out);
}

fn encode_decimal(d: Decimal, out: &mut Vec<u8>) {
    if d.is_zero() {
        out.push(ZERO);
        return;
    }
    let mantissa = d.mantissa().unsigned_abs();
    let text = mantissa.to_string();
    let digits: Vec<u8> = text.bytes().map(|b| b - b'0').collect();
    let exponent = digits.len() as i32 - d.scale() as i32;
    encode_digits(d.is_sign_negative(), exponent, &digits, out);
}

/// Sign, exponent and significant digits (trailing zeros are dropped here).
fn encode_digits(negative: bool, exponent: i32, digits: &[u8], out: &mut Vec<u8>) {
    let significant = digits.len() - digits.iter().rev().take_while(|&&d| d == 0).count();
    let e = (0x80 + exponent) as u8;
    if negative {
        out.push(NEGATIVE);
        out.push(!e);
        out.extend(digits[..significant].iter().map(|d| 0xFE - d));
        out.push(0xFF);
    } else {
        out.push(POSITIVE);
        out.push(e);
        out.extend(digits[..significant].iter().map(|d| d + 1));
        out.push(0x00);
    }
}

/// Decodes a key (all its columns) back into values, handing each to `put` with its
/// position among the key's columns.
pub fn decode_key(key: &[u8], types: &[DataType], mut put: impl FnMut(usize, Value)) -> Result<()> {
    let mut at = 0;
    for (i, t) in types.iter().enumerate() {
        let (v, used) = decode_value(&key[at..], *t).ok_or_else(|| bad_key(key))?;
        put(i, v);
        at += used;
    }
    if at != key.len() {
        return Err(bad_key(key));
    }
    Ok(())
}

fn bad_key(key: &[u8]) -> Error {
    Error::value("index key", format!("{} bytes do not decode as a key of the index's columns", key.len()))
}

/// One value and the bytes it took; `None` for malformed bytes.
fn decode_value(b: &[u8], t: DataType) -> Option<(Value, usize)> {
    match *b.first()? {
        NULL => return Some((Datum::Null, 1)),
        _ if matches!(t, DataType::Integer | DataType::Number { .. }) => return decode_number(b),
        PRESENT => {}
        _ => return None,
    }
    match t {
        DataType::Date
        | DataType::Timestamp { .. }
        | DataType::IntervalYearMonth { .. }
        | DataType::IntervalDaySecond { .. } => {
            let raw = u64::from_be_bytes(b.get(1..9)?.try_into().ok()?);
            let v = (raw ^ (1 << 63)) as i64;
            Some((
                match t {
                    DataType::Date => Datum::Date(v),
                    DataType::Timestamp { .. } => Datum::Timestamp(v),
                    DataType::IntervalYearMonth { .. } => Datum::YearMonth(v),
                    _ => Datum::DaySecond(v),
                },
                9,
            ))
        }
        _ => {
            let mut bytes = Vec::new();
            let mut at = 1;
            loop {
                match (*b.get(at)?, b.get(at + 1).copied()) {
                    (0, Some(1)) => break,
                    (0, Some(0xFF)) => {
                        bytes.push(0);
                        at += 2;
                    }
                    (0, _) => return None,
                    (c, _) => {
                        bytes.push(c);
                        at += 1;
                    }
                }
            }
            Some((Datum::Str(String::from_utf8(bytes).ok()?.into()), at + 2))
        }
    }
}

fn decode_number(b: &[u8]) -> Option<(Value, usize)> {
    let negative = match b[0] {
        ZERO => return Some((Datum::Int(0), 1)),
        NEGATIVE => true,
        POSITIVE => false,
        _ => return None,
    };
    let e = *b.get(1)?;
    let exponent = i32::from(if negative { !e } else { e }) - 0x80;
    let mut mantissa: i128 = 0;
    let mut count = 0i32;
    let mut at = 2;
    loop {
        let c = *b.get(at)?;
        at += 1;
        if c == if negative { 0xFF } else { 0x00 } {
            break;
        }
        let d = if negative { 0xFE_u8.checked_sub(c)? } else { c.checked_sub(1)? };
        if d > 9 || count >= 29 {
            return None;
        }
        mantissa = mantissa * 10 + i128::from(d);
        count += 1;
    }
    // value = mantissa × 10^(exponent − count)
    let shift = exponent - count;
    let value = if shift >= 0 {
        let mut m = mantissa;
        for _ in 0..shift {
            m = m.checked_mul(10)?;
        }
        Decimal::try_from_i128_with_scale(m, 0).ok()?
    } else {
        Decimal::try_from_i128_with_scale(mantissa, u32::try_from(-shift).ok()?).ok()?
    };
    let value = if negative { -value } else { value };
    Some((Datum::from_decimal(value), at))
}

/// A key that is one NUMBER value and nothing more, as an exact decimal with a 64-bit
/// mantissa (the fast path of arithmetic on a column unit's numbers); `None` when the
/// value needs more than 18 digits, its scale would pass 28, or the bytes are not such
/// a key. The number is the one [`decode_key`] gives.
#[inline]
pub fn number_key_fixed(key: &[u8]) -> Option<Fixed> {
    let (&sign, rest) = key.split_first()?;
    let negative = match sign {
        ZERO => return (rest.is_empty()).then_some(Fixed::whole(0)),
        NEGATIVE => true,
        POSITIVE => false,
        _ => return None,
    };
    let (&e, digits) = rest.split_first()?;
    let (&end, digits) = digits.split_last()?;
    if end != if negative { 0xFF } else { 0x00 } || digits.len() > 18 {
        return None;
    }
    let exponent = i32::from(if negative { !e } else { e }) - 0x80;
    let mut mantissa: i64 = 0;
    for &c in digits {
        let d = if negative { 0xFE_u8.checked_sub(c)? } else { c.checked_sub(1)? };
        if d > 9 {
            return None;
        }
        mantissa = mantissa * 10 + i64::from(d);
    }
    // value = mantissa × 10^(exponent − digits)
    let shift = exponent - digits.len() as i32;
    let fixed = if shift >= 0 {
        Fixed::whole(mantissa).checked_mul(Fixed::whole(10i64.checked_pow(shift.try_into().ok()?)?))?
    } else {
        Fixed { mantissa, scale: u8::try_from(-shift).ok().filter(|&s| s <= 28)? }
    };
    if negative { fixed.checked_neg() } else { Some(fixed) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Datum::Int),
            (-1000i64..1000).prop_map(Datum::Int),
            (any::<i64>(), 0u32..12).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
            Just(Datum::Null),
        ]
    }

    fn text() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-c\\x00]{1,5}".prop_map(|s| Datum::Str(s.into())),
            "\\PC{1,8}".prop_map(|s| Datum::Str(s.into())),
            Just(Datum::Null),
        ]
    }

    fn date() -> impl Strategy<Value = Value> {
        prop_oneof![any::<i32>().prop_map(|d| Datum::Date(i64::from(d) * 7)), Just(Datum::Null)]
    }

    /// Timestamps and the two kinds of interval, each with NULLs.
    fn times() -> impl Strategy<Value = (Value, Value, Value)> {
        let or_null = |v: i64, f: fn(i64) -> Value| if v % 5 == 0 { Datum::Null } else { f(v) };
        (any::<i64>(), any::<i64>(), -5i64..5).prop_map(move |(t, d, m)| {
            (or_null(t, Datum::Timestamp), or_null(d, Datum::DaySecond), or_null(m, Datum::YearMonth))
        })
    }

    const TYPES: [DataType; 6] = [
        DataType::Number { precision: None, scale: None },
        DataType::Varchar2 { max_bytes: 40 },
        DataType::Date,
        DataType::Timestamp { precision: 6 },
        DataType::IntervalDaySecond { day_precision: 9, second_precision: 6 },
        DataType::IntervalYearMonth { year_precision: 9 },
    ];

    fn tuple() -> impl Strategy<Value = Vec<Value>> {
        (number(), text(), date(), times()).prop_map(|(a, b, c, (t, d, m))| vec![a, b, c, t, d, m])
    }

    fn encoded(values: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key(values, &TYPES, &mut out).unwrap();
        out
    }

    fn model_cmp(a: &[Value], b: &[Value]) -> Ordering {
        a.iter().zip(b).map(|(x, y)| x.sort_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    }

    proptest! {
        #[test]
        fn byte_order_is_sql_order(a in tuple(), b in tuple()) {
            prop_assert_eq!(encoded(&a).cmp(&encoded(&b)), model_cmp(&a, &b), "{:?} vs {:?}", a, b);
        }

        #[test]
        fn keys_decode_to_their_values(a in tuple()) {
            let mut decoded = Vec::new();
            decode_key(&encoded(&a), &TYPES, |_, v| decoded.push(v)).unwrap();
            prop_assert_eq!(decoded, a);
        }

        /// A number key read as a fixed-point number is the number it decodes to, and
        /// only values past 18 digits are declined.
        #[test]
        fn number_keys_read_as_fixed_point_numbers(
            v in prop_oneof![
                number(),
                (any::<i64>(), 0u32..=28).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
                (-(1i128 << 95)..(1i128 << 95), 0u32..=28)
                    .prop_map(|(m, s)| Datum::from_decimal(Decimal::from_i128_with_scale(m, s))),
            ],
        ) {
            let t = DataType::Number { precision: None, scale: None };
            let mut key = Vec::new();
            encode_key(std::slice::from_ref(&v), &[t], &mut key).unwrap();
            let fixed = number_key_fixed(&key);
            match &v {
                Datum::Null => prop_assert_eq!(fixed, None),
                _ => {
                    if let Some(f) = fixed {
                        prop_assert_eq!(f.into_datum(), v.clone());
                    }
                    let digits = v.to_string().chars().filter(char::is_ascii_digit).collect::<String>();
                    let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
                    if significant <= 18 && Fixed::of(&v).is_some() {
                        prop_assert!(fixed.is_some(), "{v:?} has {significant} significant digits");
                    }
                }
            }
        }

        #[test]
        fn a_column_prefix_sorts_before_its_extensions(a in tuple(), b in tuple()) {
            let mut prefix = Vec::new();
            encode_key(&a[..1], &TYPES[..1], &mut prefix).unwrap();
            let full = encoded(&b);
            if full.starts_with(&prefix) {
                prop_assert_eq!(a[0].sort_cmp(&b[0]), Ordering::Equal);
            } else {
                prop_assert_eq!(prefix.as_slice().cmp(&full[..]), a[0].sort_cmp(&b[0]));
            }
        }
    }

    #[test]
    fn integers_and_decimals_compare_numerically() {
        let n = [DataType::Integer];
        let key = |d: Value| {
            let mut out = Vec::new();
            encode_key(&[d], &n, &mut out).unwrap();
            out
        };
        assert_eq!(key(Datum::Int(5)), key(Datum::Num(Decimal::new(50, 1))));
        assert!(key(Datum::Num(Decimal::new(45, 1))) < key(Datum::Int(5)));
        assert!(key(Datum::Int(-10)) < key(Datum::Num(Decimal::new(-95, 1))));
        let mut out = Vec::new();
        assert!(!encode_key(&[Datum::Null], &n, &mut out).unwrap(), "an all-NULL key is not indexed");
    }

    #[test]
    fn a_date_probes_a_timestamp_index_at_its_second() {
        let t = [DataType::Timestamp { precision: 3 }];
        let key = |d: Value| {
            let mut out = Vec::new();
            encode_key(&[d], &t, &mut out).unwrap();
            out
        };
        assert_eq!(key(Datum::Date(86_400)), key(Datum::Timestamp(86_400_000_000)));
        assert!(key(Datum::Date(86_400)) < key(Datum::Timestamp(86_400_000_001)));
        assert_eq!(key(Datum::Str("1970-01-02 00:00:00.5".into())), key(Datum::Timestamp(86_400_500_000)));
    }
}

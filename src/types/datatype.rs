//! Declared column types and the checks a value passes on its way into a column.

use super::Datum;
use super::datetime::{self, MICROS_PER_DAY, date_micros, timestamp_seconds};
use crate::error::{Error, Result};
use std::fmt;

/// Significant decimal digits a NUMBER can hold in lioscope (Oracle holds 38).
pub const MAX_NUMBER_DIGITS: u32 = 28;

/// Longest VARCHAR2 / CHAR column in bytes, as Oracle's default MAX_STRING_SIZE.
pub const MAX_STRING_BYTES: u32 = 4000;

/// The declared type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    /// NUMBER, NUMBER(p) or NUMBER(p,s): an exact decimal. `precision` limits the total
    /// digits, `scale` the digits after the point (values are rounded to it on insert).
    Number { precision: Option<u8>, scale: Option<u8> },
    /// INTEGER: NUMBER(*,0), whole numbers rounded on insert.
    Integer,
    /// VARCHAR2(n) / VARCHAR(n): up to `max_bytes` bytes of UTF-8.
    Varchar2 { max_bytes: u32 },
    /// CHAR(n): exactly `len` bytes, blank-padded on insert.
    Char { len: u32 },
    /// DATE: a calendar date and time to the second.
    Date,
    /// TIMESTAMP(p): a calendar date and time with `precision` digits of fractional
    /// seconds (0 to 6; lioscope keeps microseconds), no time zone.
    Timestamp { precision: u8 },
    /// INTERVAL YEAR(p) TO MONTH: years and months, the years in at most `year_precision`
    /// digits (0 to 9).
    IntervalYearMonth { year_precision: u8 },
    /// INTERVAL DAY(p) TO SECOND(s): days, hours, minutes and seconds, the days in at most
    /// `day_precision` digits (0 to 9), the seconds with `second_precision` digits of
    /// fraction (0 to 6).
    IntervalDaySecond { day_precision: u8, second_precision: u8 },
}

/// The fractional-second digits a TIMESTAMP or an INTERVAL DAY TO SECOND has unless
/// declared (Oracle's default), and the most lioscope keeps (microseconds).
pub const DEFAULT_FRACTION_DIGITS: u8 = 6;

/// The leading field's digits an INTERVAL has unless declared (Oracle's default).
pub const DEFAULT_LEADING_DIGITS: u8 = 2;

impl DataType {
    /// Coerces `value` into this type for storage in `column`, or explains why it does not
    /// fit. Never truncates: a string too long or a number with too many digits is an error.
    pub fn coerce<'a>(&self, value: Datum<'a>, column: &str) -> Result<Datum<'a>> {
        if value.is_null() {
            return Ok(Datum::Null);
        }
        match *self {
            DataType::Integer => coerce_number(value, None, Some(0), column),
            DataType::Number { precision, scale } => coerce_number(value, precision, scale, column),
            DataType::Varchar2 { max_bytes } => {
                let s = value.into_text().unwrap_or_default();
                check_length(&s, max_bytes, column)?;
                Ok(Datum::Str(s))
            }
            DataType::Char { len } => {
                let s = value.into_text().unwrap_or_default();
                check_length(&s, len, column)?;
                if s.len() == len as usize {
                    return Ok(Datum::Str(s));
                }
                let mut padded = s.into_owned();
                padded.extend(std::iter::repeat_n(' ', len as usize - padded.len()));
                Ok(Datum::Str(padded.into()))
            }
            DataType::Date => match value {
                Datum::Date(d) => Ok(Datum::Date(d)),
                Datum::Str(s) => Ok(Datum::Date(super::parse_date(&s, None).map_err(|m| Error::value(column, m))?)),
                Datum::Timestamp(t) => Ok(Datum::Date(timestamp_seconds(t))),
                other => Err(cannot_store(&other, "a DATE", column)),
            },
            DataType::Timestamp { precision } => {
                let micros = match value {
                    Datum::Timestamp(t) => t,
                    Datum::Date(d) => date_micros(d).ok_or_else(|| out_of_range(column))?,
                    Datum::Str(s) => datetime::parse_timestamp(&s).map_err(|m| Error::value(column, m))?,
                    other => return Err(cannot_store(&other, "a TIMESTAMP", column)),
                };
                let rounded = round_micros(micros, precision);
                if !datetime::timestamp_in_range(rounded) {
                    return Err(out_of_range(column));
                }
                Ok(Datum::Timestamp(rounded))
            }
            DataType::IntervalYearMonth { year_precision } => {
                let months = match value {
                    Datum::YearMonth(m) => m,
                    Datum::Str(s) => datetime::parse_year_month(&s).map_err(|m| Error::value(column, m))?,
                    other => return Err(cannot_store(&other, "an INTERVAL YEAR TO MONTH", column)),
                };
                check_leading(months.unsigned_abs() / 12, year_precision, column)?;
                Ok(Datum::YearMonth(months))
            }
            DataType::IntervalDaySecond { day_precision, second_precision } => {
                let micros = match value {
                    Datum::DaySecond(us) => us,
                    Datum::Str(s) => datetime::parse_day_second(&s).map_err(|m| Error::value(column, m))?,
                    other => return Err(cannot_store(&other, "an INTERVAL DAY TO SECOND", column)),
                };
                let rounded = round_interval_micros(micros, second_precision);
                check_leading(rounded.unsigned_abs() / MICROS_PER_DAY as u64, day_precision, column)?;
                Ok(Datum::DaySecond(rounded))
            }
        }
    }
}

/// A value of another type than the column's.
fn cannot_store(value: &Datum<'_>, column_type: &str, column: &str) -> Error {
    Error::value(column, format!("cannot store {} in {column_type} column", value.type_name()))
}

fn out_of_range(column: &str) -> Error {
    Error::value(column, "timestamp out of range (the year must be between 1 and 9999)")
}

/// A timestamp's `micros` rounded to `digits` digits of fractional seconds, half up (a
/// half second later in time).
pub fn round_micros(micros: i64, digits: u8) -> i64 {
    let unit = fraction_unit(digits);
    let rem = micros.rem_euclid(unit);
    let base = micros - rem;
    if rem * 2 >= unit { base.saturating_add(unit) } else { base }
}

/// An interval's `micros` rounded to `digits` digits of fractional seconds, half away
/// from zero (a negative interval rounds as its magnitude does).
pub fn round_interval_micros(micros: i64, digits: u8) -> i64 {
    let rounded = round_micros(micros.saturating_abs(), digits);
    if micros < 0 { -rounded } else { rounded }
}

/// The microseconds in one unit of the last of `digits` fractional digits.
fn fraction_unit(digits: u8) -> i64 {
    10i64.pow(u32::from(DEFAULT_FRACTION_DIGITS.saturating_sub(digits)))
}

/// Fails when an interval's leading field (years or days) has more than `precision`
/// digits (Oracle's ORA-01873).
fn check_leading(leading: u64, precision: u8, column: &str) -> Result<()> {
    if digits(u128::from(leading)) > u32::from(precision) {
        return Err(Error::value(
            column,
            format!(
                "ORA-01873: the leading precision of the interval is too small ({leading} has more than {precision} digits)"
            ),
        ));
    }
    Ok(())
}

impl DataType {
    /// Whether [`DataType::coerce`] stores the whole number `i` as it is: true for a
    /// NUMBER or INTEGER with room for its integer digits (rounding to a scale leaves a
    /// whole number unchanged); false when coercion fails or the type is not numeric.
    #[inline]
    pub fn holds_whole_number(&self, i: i64) -> bool {
        match *self {
            DataType::Integer | DataType::Number { precision: None, .. } => true,
            DataType::Number { precision: Some(p), scale } => {
                digits(u128::from(i.unsigned_abs())) <= integer_digits_allowed(p, scale.unwrap_or(0))
            }
            DataType::Varchar2 { .. }
            | DataType::Char { .. }
            | DataType::Date
            | DataType::Timestamp { .. }
            | DataType::IntervalYearMonth { .. }
            | DataType::IntervalDaySecond { .. } => false,
        }
    }
}

/// Fails when `s` is longer than `max` bytes.
fn check_length(s: &str, max: u32, column: &str) -> Result<()> {
    if s.len() > max as usize {
        return Err(Error::value(column, format!("value too large (actual: {}, maximum: {max} bytes)", s.len())));
    }
    Ok(())
}

fn coerce_number<'a>(value: Datum<'a>, precision: Option<u8>, scale: Option<u8>, column: &str) -> Result<Datum<'a>> {
    let number = match value {
        Datum::Str(s) => Datum::parse_number(s.trim()).map_err(|m| Error::value(column, m))?,
        n @ (Datum::Int(_) | Datum::Num(_) | Datum::Null) => n,
        other => return Err(Error::value(column, format!("cannot store a {} in a NUMBER column", other.type_name()))),
    };
    let Some(scale) = scale else { return check_precision(number, precision, 0, column) };
    let rounded = match number {
        Datum::Num(d) => Datum::from_decimal(
            d.round_dp_with_strategy(u32::from(scale), rust_decimal::RoundingStrategy::MidpointAwayFromZero),
        ),
        n => n,
    };
    check_precision(rounded, precision, scale, column)
}

fn check_precision<'a>(number: Datum<'a>, precision: Option<u8>, scale: u8, column: &str) -> Result<Datum<'a>> {
    let Some(p) = precision else { return Ok(number) };
    let integer_digits = match &number {
        Datum::Int(i) => digits(u128::from(i.unsigned_abs())),
        Datum::Num(d) => digits(d.trunc().abs().mantissa().unsigned_abs()),
        _ => 0,
    };
    if integer_digits > integer_digits_allowed(p, scale) {
        return Err(Error::value(
            column,
            format!("value larger than specified precision allowed for this column (NUMBER({p},{scale}))"),
        ));
    }
    Ok(number)
}

/// Digits a NUMBER(p,s) keeps before the decimal point: `p - s`, none when `s >= p`.
fn integer_digits_allowed(precision: u8, scale: u8) -> u32 {
    u32::from(precision.saturating_sub(scale))
}

/// Decimal digits of `n` (0 for 0).
fn digits(n: u128) -> u32 {
    match u64::try_from(n) {
        Ok(small) => small.checked_ilog10().map_or(0, |l| l + 1),
        Err(_) => n.ilog10() + 1,
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Number { precision: None, .. } => write!(f, "NUMBER"),
            DataType::Number { precision: Some(p), scale: None | Some(0) } => write!(f, "NUMBER({p})"),
            DataType::Number { precision: Some(p), scale: Some(s) } => write!(f, "NUMBER({p},{s})"),
            DataType::Integer => write!(f, "INTEGER"),
            DataType::Varchar2 { max_bytes } => write!(f, "VARCHAR2({max_bytes})"),
            DataType::Char { len } => write!(f, "CHAR({len})"),
            DataType::Date => write!(f, "DATE"),
            DataType::Timestamp { precision } => write!(f, "TIMESTAMP({precision})"),
            DataType::IntervalYearMonth { year_precision } => write!(f, "INTERVAL YEAR({year_precision}) TO MONTH"),
            DataType::IntervalDaySecond { day_precision, second_precision } => {
                write!(f, "INTERVAL DAY({day_precision}) TO SECOND({second_precision})")
            }
        }
    }
}

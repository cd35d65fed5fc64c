//! [`Datum`]: a SQL value during execution, with Oracle's comparison and display rules.

use super::datetime::{self, MICROS_PER_SECOND};
use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDateTime};
use rust_decimal::Decimal;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

/// A SQL value. Strings borrow (`'a`) from a pinned block while a scan evaluates a row,
/// and are owned ([`Value`]) once a row leaves the scan.
#[derive(Debug, Clone)]
pub enum Datum<'a> {
    Null,
    /// A whole number that fits in 64 bits.
    Int(i64),
    /// Any other number: never a whole number that fits in `i64` (see [`Datum::from_decimal`]).
    Num(Decimal),
    /// A non-empty string (an empty string is NULL).
    Str(Cow<'a, str>),
    /// Seconds since 1970-01-01 00:00:00, no time zone (Oracle DATE).
    Date(i64),
    /// Microseconds since 1970-01-01 00:00:00, no time zone (Oracle TIMESTAMP).
    Timestamp(i64),
    /// INTERVAL YEAR TO MONTH: a signed number of months.
    YearMonth(i64),
    /// INTERVAL DAY TO SECOND: a signed number of microseconds.
    DaySecond(i64),
}

/// A value that owns its string.
pub type Value = Datum<'static>;

/// Bind values from Rust: whole numbers, strings (an empty one is NULL, as in Oracle),
/// and `None` as NULL.
impl From<i64> for Datum<'_> {
    fn from(v: i64) -> Self {
        Datum::Int(v)
    }
}

impl From<i32> for Datum<'_> {
    fn from(v: i32) -> Self {
        Datum::Int(v.into())
    }
}

impl<'a> From<&'a str> for Datum<'a> {
    fn from(v: &'a str) -> Self {
        Datum::string(v)
    }
}

impl From<String> for Datum<'_> {
    fn from(v: String) -> Self {
        Datum::string(v)
    }
}

impl<'a, T: Into<Datum<'a>>> From<Option<T>> for Datum<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Datum::Null, Into::into)
    }
}

impl<'a> Datum<'a> {
    /// The canonical datum for a decimal: `Int` when whole and within `i64`, else the
    /// decimal without trailing zeros.
    #[inline]
    pub fn from_decimal(d: Decimal) -> Datum<'static> {
        // Most results of arithmetic on NUMBER(p,s) columns have a fraction that does
        // not end in zero: already canonical, and known not whole, from the mantissa's
        // last digit alone (what `fract` and `normalize` would find dividing by ten).
        if d.scale() > 0
            && let Ok(m) = i64::try_from(d.mantissa())
            && m % 10 != 0
        {
            return Datum::Num(d);
        }
        if d.fract().is_zero()
            && let Ok(i) = i64::try_from(d)
        {
            return Datum::Int(i);
        }
        Datum::Num(d.normalize())
    }

    /// A string datum; the empty string is NULL.
    pub fn string(s: impl Into<Cow<'a, str>>) -> Datum<'a> {
        let s = s.into();
        if s.is_empty() { Datum::Null } else { Datum::Str(s) }
    }

    /// Parses a number written as SQL text ("42", "-1.5", "1e3").
    pub fn parse_number(text: &str) -> std::result::Result<Value, String> {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Datum::Int(i));
        }
        Decimal::from_str(text)
            .or_else(|_| Decimal::from_scientific(text))
            .map(Datum::from_decimal)
            .map_err(|_| format!("invalid number '{text}'"))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// The name of this value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Datum::Null => "NULL",
            Datum::Int(_) | Datum::Num(_) => "NUMBER",
            Datum::Str(_) => "VARCHAR2",
            Datum::Date(_) => "DATE",
            Datum::Timestamp(_) => "TIMESTAMP",
            Datum::YearMonth(_) => "INTERVAL YEAR TO MONTH",
            Datum::DaySecond(_) => "INTERVAL DAY TO SECOND",
        }
    }

    /// Detaches from any borrowed block bytes.
    pub fn into_owned(self) -> Value {
        match self {
            Datum::Null => Datum::Null,
            Datum::Int(i) => Datum::Int(i),
            Datum::Num(d) => Datum::Num(d),
            Datum::Str(s) => Datum::Str(Cow::Owned(s.into_owned())),
            Datum::Date(d) => Datum::Date(d),
            Datum::Timestamp(t) => Datum::Timestamp(t),
            Datum::YearMonth(m) => Datum::YearMonth(m),
            Datum::DaySecond(us) => Datum::DaySecond(us),
        }
    }

    /// The same value borrowing this one's string (no copy).
    #[inline]
    pub fn reborrow(&self) -> Datum<'_> {
        match self {
            Datum::Null => Datum::Null,
            Datum::Int(i) => Datum::Int(*i),
            Datum::Num(d) => Datum::Num(*d),
            Datum::Str(s) => Datum::Str(Cow::Borrowed(s)),
            Datum::Date(d) => Datum::Date(*d),
            Datum::Timestamp(t) => Datum::Timestamp(*t),
            Datum::YearMonth(m) => Datum::YearMonth(*m),
            Datum::DaySecond(us) => Datum::DaySecond(*us),
        }
    }

    /// The value as text, as Oracle converts it implicitly (TO_CHAR without a format):
    /// a string as it is (borrowed if it was), anything else written out; `None` for NULL.
    pub fn into_text(self) -> Option<Cow<'a, str>> {
        match self {
            Datum::Null => None,
            Datum::Str(s) => Some(s),
            other => {
                let mut text = String::new();
                other.write_text(&mut text);
                Some(Cow::Owned(text))
            }
        }
    }

    /// [`Datum::into_text`] as an owned string, empty for NULL.
    pub fn into_string(self) -> String {
        self.into_text().map(Cow::into_owned).unwrap_or_default()
    }

    /// Appends the value as text, as [`Datum::into_text`] converts it; NULL appends
    /// nothing. Whole numbers are written without the formatting machinery.
    #[inline]
    pub fn write_text(&self, out: &mut String) {
        match self {
            Datum::Null => {}
            Datum::Str(s) => out.push_str(s),
            Datum::Int(i) => push_int(out, *i),
            other => {
                use std::fmt::Write;
                let _ = write!(out, "{other}");
            }
        }
    }

    /// The value as a decimal, converting a numeric string implicitly.
    pub fn to_decimal(&self, context: &str) -> Result<Option<Decimal>> {
        match self {
            Datum::Null => Ok(None),
            Datum::Int(i) => Ok(Some(Decimal::from(*i))),
            Datum::Num(d) => Ok(Some(*d)),
            Datum::Str(s) => match Datum::parse_number(s.trim()) {
                Ok(n) => n.to_decimal(context),
                Err(m) => Err(Error::value(context, m)),
            },
            other => Err(Error::value(context, format!("expected a NUMBER, got a {}", other.type_name()))),
        }
    }

    /// The value as a whole number (for lengths, positions, counts).
    pub fn to_i64(&self, context: &str) -> Result<Option<i64>> {
        match self {
            Datum::Int(i) => Ok(Some(*i)),
            other => match other.to_decimal(context)? {
                None => Ok(None),
                Some(d) => i64::try_from(d.trunc())
                    .map(Some)
                    .map_err(|_| Error::value(context, format!("{d} is out of range"))),
            },
        }
    }

    /// SQL comparison: `None` when either side is NULL. Numbers compare with numbers,
    /// strings byte-wise (Oracle's BINARY sort), dates and timestamps with each other,
    /// intervals with intervals of their kind; a string meeting a number, a date, a
    /// timestamp or an interval is converted as Oracle does implicitly.
    pub fn sql_cmp(&self, other: &Datum<'_>) -> Result<Option<Ordering>> {
        // Text meeting a date, a timestamp or an interval is read as one of its kind.
        let text_as = |s: &str, kind: &Datum<'_>| -> Result<i64> {
            match kind {
                Datum::Date(_) => parse_date(s, None),
                Datum::YearMonth(_) => datetime::parse_year_month(s),
                Datum::DaySecond(_) => datetime::parse_day_second(s),
                _ => datetime::parse_timestamp(s),
            }
            .map_err(|m| Error::value("comparison", m))
        };
        const MICROS: i128 = MICROS_PER_SECOND as i128;
        Ok(Some(match (self, other) {
            (Datum::Null, _) | (_, Datum::Null) => return Ok(None),
            (Datum::Int(a), Datum::Int(b)) => a.cmp(b),
            (Datum::Str(a), Datum::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Datum::Date(a), Datum::Date(b))
            | (Datum::Timestamp(a), Datum::Timestamp(b))
            | (Datum::YearMonth(a), Datum::YearMonth(b))
            | (Datum::DaySecond(a), Datum::DaySecond(b)) => a.cmp(b),
            (Datum::Date(a), Datum::Timestamp(b)) => (i128::from(*a) * MICROS).cmp(&i128::from(*b)),
            (Datum::Timestamp(a), Datum::Date(b)) => i128::from(*a).cmp(&(i128::from(*b) * MICROS)),
            (d @ (Datum::Date(a) | Datum::Timestamp(a) | Datum::YearMonth(a) | Datum::DaySecond(a)), Datum::Str(s)) => {
                a.cmp(&text_as(s, d)?)
            }
            (Datum::Str(s), d @ (Datum::Date(b) | Datum::Timestamp(b) | Datum::YearMonth(b) | Datum::DaySecond(b))) => {
                text_as(s, d)?.cmp(b)
            }
            (Datum::Int(_) | Datum::Num(_) | Datum::Str(_), Datum::Int(_) | Datum::Num(_) | Datum::Str(_)) => {
                let (Some(a), Some(b)) = (self.to_decimal("comparison")?, other.to_decimal("comparison")?) else {
                    return Ok(None);
                };
                a.cmp(&b)
            }
            _ => {
                return Err(Error::value(
                    "comparison",
                    format!("cannot compare {} with {}", self.type_name(), other.type_name()),
                ));
            }
        }))
    }

    /// Total order for ORDER BY: NULLs last (Oracle's default for ascending order),
    /// incomparable types by type name.
    pub fn sort_cmp(&self, other: &Datum<'_>) -> Ordering {
        match (self, other) {
            (Datum::Null, Datum::Null) => Ordering::Equal,
            (Datum::Null, _) => Ordering::Greater,
            (_, Datum::Null) => Ordering::Less,
            _ => match self.sql_cmp(other) {
                Ok(Some(o)) => o,
                _ => self.type_name().cmp(other.type_name()),
            },
        }
    }
}

impl PartialEq for Datum<'_> {
    /// Identity for grouping and DISTINCT: NULL equals NULL here (SQL `=` is [`Datum::sql_cmp`]).
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Int(a), Datum::Int(b)) => a == b,
            (Datum::Num(a), Datum::Num(b)) => a == b,
            (Datum::Str(a), Datum::Str(b)) => a == b,
            (Datum::Date(a), Datum::Date(b))
            | (Datum::Timestamp(a), Datum::Timestamp(b))
            | (Datum::YearMonth(a), Datum::YearMonth(b))
            | (Datum::DaySecond(a), Datum::DaySecond(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Datum<'_> {}

impl Hash for Datum<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Datum::Null => {}
            Datum::Int(i) => i.hash(state),
            Datum::Num(d) => d.hash(state),
            Datum::Str(s) => s.hash(state),
            Datum::Date(v) | Datum::Timestamp(v) | Datum::YearMonth(v) | Datum::DaySecond(v) => v.hash(state),
        }
    }
}

impl fmt::Display for Datum<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => Ok(()),
            Datum::Int(i) => write!(f, "{i}"),
            Datum::Num(d) => {
                // Oracle writes numbers below one without the leading zero: .5, -.25
                let text = d.normalize().to_string();
                match text.strip_prefix("0.").map(|r| ('+', r)).or_else(|| text.strip_prefix("-0.").map(|r| ('-', r))) {
                    Some(('-', rest)) => write!(f, "-.{rest}"),
                    Some((_, rest)) => write!(f, ".{rest}"),
                    None => f.write_str(&text),
                }
            }
            Datum::Str(s) => f.write_str(s),
            Datum::Date(d) => f.write_str(&format_date(*d)),
            Datum::Timestamp(t) => f.write_str(&datetime::format_timestamp(*t)),
            Datum::YearMonth(m) => f.write_str(&datetime::format_year_month(*m, 2)),
            Datum::DaySecond(us) => f.write_str(&datetime::format_day_second(*us, 2, 6)),
        }
    }
}

/// Appends the decimal digits of `i` (with a minus sign when negative).
#[inline]
pub fn push_int(out: &mut String, i: i64) {
    out.push_str(itoa::Buffer::new().format(i));
}

/// The default date format, lioscope's NLS_DATE_FORMAT: `YYYY-MM-DD HH24:MI:SS`.
pub const DEFAULT_DATE_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// Now in local time, as Oracle's SYSDATE and a DATE hold it (a DATE has no time zone).
pub fn local_now() -> i64 {
    chrono::Local::now().naive_local().and_utc().timestamp()
}

/// Now in local time to the microsecond, as Oracle's SYSTIMESTAMP shows it (lioscope's
/// TIMESTAMP has no time zone).
pub fn local_now_micros() -> i64 {
    chrono::Local::now().naive_local().and_utc().timestamp_micros()
}

/// Shows a DATE in the default format.
pub fn format_date(seconds: i64) -> String {
    match DateTime::from_timestamp(seconds, 0) {
        Some(dt) => dt.naive_utc().format(DEFAULT_DATE_FORMAT).to_string(),
        None => format!("<date out of range: {seconds}>"),
    }
}

/// Parses a date in the default format, or just `YYYY-MM-DD`; `format` is a chrono format
/// when the caller already translated an Oracle format mask.
pub fn parse_date(text: &str, format: Option<&str>) -> std::result::Result<i64, String> {
    let text = text.trim();
    let parsed = match format {
        Some(f) => NaiveDateTime::parse_from_str(text, f).or_else(|_| {
            chrono::NaiveDate::parse_from_str(text, f).map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
        }),
        None => NaiveDateTime::parse_from_str(text, DEFAULT_DATE_FORMAT).or_else(|_| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
        }),
    };
    parsed
        .map(|dt| dt.and_utc().timestamp())
        .map_err(|_| format!("'{text}' is not a date in the format {}", format.unwrap_or("YYYY-MM-DD HH24:MI:SS")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_decimals_become_int() {
        assert_eq!(Datum::from_decimal(Decimal::new(400, 2)), Datum::Int(4));
        assert!(matches!(Datum::from_decimal(Decimal::new(45, 1)), Datum::Num(_)));
    }

    proptest::proptest! {
        /// The mantissa's last digit decides most decimals at once; every decimal still
        /// gets the canonical form the general path gives (whole numbers as `Int`, the
        /// rest without trailing zeros).
        #[test]
        fn from_decimal_is_canonical(mantissa in proptest::prelude::any::<i64>(), wide in 0u32..3, scale in 0u32..=28) {
            let d = Decimal::from_i128_with_scale(i128::from(mantissa) << (wide * 16), scale);
            let expected = if d.fract().is_zero() && let Ok(i) = i64::try_from(d) {
                Datum::Int(i)
            } else {
                Datum::Num(d.normalize())
            };
            let got = Datum::from_decimal(d);
            proptest::prop_assert_eq!(&got, &expected);
            if let (Datum::Num(g), Datum::Num(e)) = (&got, &expected) {
                proptest::prop_assert_eq!((g.scale(), g.mantissa()), (e.scale(), e.mantissa()));
            }
        }
    }

    #[test]
    fn numbers_compare_across_representations() {
        let a = Datum::Int(4);
        let b = Datum::Num(Decimal::new(45, 1));
        assert_eq!(a.sql_cmp(&b).unwrap(), Some(Ordering::Less));
        assert_eq!(a.sql_cmp(&Datum::Null).unwrap(), None);
        assert_eq!(Datum::Str("10".into()).sql_cmp(&Datum::Int(9)).unwrap(), Some(Ordering::Greater));
    }

    #[test]
    fn dates_round_trip_through_text() {
        let d = parse_date("2015-11-30 00:45:00", None).unwrap();
        assert_eq!(format_date(d), "2015-11-30 00:45:00");
        assert!(parse_date("yesterday", None).is_err());
    }

    #[test]
    fn whole_numbers_as_text_match_display() {
        for i in [0, 1, -1, 9, 10, -10, 99_999, 1 << 40, i64::MAX, i64::MIN] {
            let mut text = String::from("x");
            Datum::Int(i).write_text(&mut text);
            assert_eq!(text, format!("x{i}"));
            assert_eq!(Datum::Int(i).into_string(), i.to_string());
        }
    }

    #[test]
    fn empty_string_is_null() {
        assert!(Datum::string("").is_null());
    }
}

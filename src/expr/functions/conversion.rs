//! Conversions: TO_CHAR, TO_DATE, TO_TIMESTAMP and TO_NUMBER, with or without a format
//! mask, and the interval makers TO_YMINTERVAL, TO_DSINTERVAL, NUMTOYMINTERVAL and
//! NUMTODSINTERVAL.

use super::*;
use crate::types::datetime::{self, MICROS_PER_SECOND, date_micros, timestamp_seconds};

/// TO_CHAR(value [, mask]): a DATE with a date mask, a number (or numeric string) with a
/// number mask; without a mask, the implicit conversion.
pub(super) fn to_char(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "TO_CHAR";
    let value = arg(args, 0);
    if args.len() < 2 {
        return Ok(text(value).map_or(Datum::Null, |t| Datum::string(t.into_owned())));
    }
    let Some(mask) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    match value {
        Datum::Null => Ok(Datum::Null),
        Datum::Date(seconds) => format_date_mask(*seconds, &mask, NAME).map(Datum::string),
        Datum::Timestamp(micros) => format_timestamp_mask(*micros, &mask, NAME).map(Datum::string),
        Datum::YearMonth(_) | Datum::DaySecond(_) => Ok(Datum::string(value.to_string())),
        other => {
            let Some(d) = number(other, NAME)? else { return Ok(Datum::Null) };
            Ok(Datum::string(NumberMask::parse(&mask, NAME)?.format(d)))
        }
    }
}

/// TO_DATE(text [, mask]): without a mask, the default format (YYYY-MM-DD [HH24:MI:SS]).
pub(super) fn to_date(args: &[Datum<'_>], now: i64) -> Result<Value> {
    const NAME: &str = "TO_DATE";
    let value = arg(args, 0);
    match value {
        Datum::Date(d) => return Ok(Datum::Date(*d)),
        Datum::Timestamp(t) => return Ok(Datum::Date(timestamp_seconds(*t))),
        _ => {}
    }
    let Some(input) = text(value) else { return Ok(Datum::Null) };
    if args.len() < 2 {
        return parse_date(&input, None).map(Datum::Date).map_err(|m| Error::value(NAME, m));
    }
    let Some(mask) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    parse_date_with_mask(&input, &mask, now).map(Datum::Date)
}

/// TO_NUMBER(text [, mask]).
pub(super) fn to_number(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "TO_NUMBER";
    let value = arg(args, 0);
    let mask = if args.len() > 1 {
        match text(arg(args, 1)) {
            Some(m) => Some(NumberMask::parse(&m, NAME)?),
            None => return Ok(Datum::Null),
        }
    } else {
        None
    };
    match (value, mask) {
        (Datum::Null, _) => Ok(Datum::Null),
        (Datum::Str(s), Some(mask)) => mask.read(s, NAME),
        (Datum::Str(s), None) => Datum::parse_number(s.trim()).map_err(|m| Error::value(NAME, m)),
        (number @ (Datum::Int(_) | Datum::Num(_)), _) => Ok(owned(number)),
        (other, _) => Err(Error::value(NAME, format!("expected NUMBER, got {}", other.type_name()))),
    }
}

/// TO_TIMESTAMP(text [, mask]): without a mask, the default format (YYYY-MM-DD
/// HH24:MI:SS.FF, or a plain date); a DATE or TIMESTAMP argument as a TIMESTAMP.
pub(super) fn to_timestamp(args: &[Datum<'_>], now: i64) -> Result<Value> {
    const NAME: &str = "TO_TIMESTAMP";
    let value = arg(args, 0);
    match value {
        Datum::Timestamp(t) => return Ok(Datum::Timestamp(*t)),
        Datum::Date(d) => {
            return date_micros(*d).map(Datum::Timestamp).ok_or_else(|| date_out_of_range(NAME));
        }
        _ => {}
    }
    let Some(input) = text(value) else { return Ok(Datum::Null) };
    if args.len() < 2 {
        return datetime::parse_timestamp(&input).map(Datum::Timestamp).map_err(|m| Error::value(NAME, m));
    }
    let Some(mask) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    parse_timestamp_with_mask(&input, &mask, now).map(Datum::Timestamp)
}

/// TO_YMINTERVAL('[+|-]years-months') and TO_DSINTERVAL('[+|-]days hh:mi:ss[.ff]').
pub(super) fn to_interval(args: &[Datum<'_>], year_month: bool) -> Result<Value> {
    let name = if year_month { "TO_YMINTERVAL" } else { "TO_DSINTERVAL" };
    let value = arg(args, 0);
    match (value, year_month) {
        (Datum::YearMonth(_), true) | (Datum::DaySecond(_), false) => return Ok(owned(value)),
        _ => {}
    }
    let Some(input) = text(value) else { return Ok(Datum::Null) };
    if year_month {
        datetime::parse_year_month(&input).map(Datum::YearMonth)
    } else {
        datetime::parse_day_second(&input).map(Datum::DaySecond)
    }
    .map_err(|m| Error::value(name, m))
}

/// NUMTOYMINTERVAL(n, 'YEAR' | 'MONTH') and NUMTODSINTERVAL(n, 'DAY' | 'HOUR' | 'MINUTE' |
/// 'SECOND'): `n` units as an interval, its fraction kept down to the month or the
/// microsecond (rounded half away from zero).
pub(super) fn number_to_interval(args: &[Datum<'_>], year_month: bool) -> Result<Value> {
    let name = if year_month { "NUMTOYMINTERVAL" } else { "NUMTODSINTERVAL" };
    let Some(n) = number(arg(args, 0), name)? else { return Ok(Datum::Null) };
    let Some(unit) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    let per_unit: i64 = match (unit.trim().to_ascii_uppercase().as_str(), year_month) {
        ("YEAR", true) => 12,
        ("MONTH", true) => 1,
        ("DAY", false) => datetime::MICROS_PER_DAY,
        ("HOUR", false) => 3600 * MICROS_PER_SECOND,
        ("MINUTE", false) => 60 * MICROS_PER_SECOND,
        ("SECOND", false) => MICROS_PER_SECOND,
        _ => {
            let units = if year_month { "'YEAR' or 'MONTH'" } else { "'DAY', 'HOUR', 'MINUTE' or 'SECOND'" };
            return Err(Error::value(name, format!("ORA-01760: illegal argument '{unit}' (expected {units})")));
        }
    };
    let amount = n
        .checked_mul(Decimal::from(per_unit))
        .map(|a| a.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero))
        .and_then(|a| i64::try_from(a).ok())
        .ok_or_else(|| overflow(name))?;
    Ok(if year_month { Datum::YearMonth(amount) } else { Datum::DaySecond(amount) })
}

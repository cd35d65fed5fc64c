//! Date functions: ADD_MONTHS, LAST_DAY, MONTHS_BETWEEN, NEXT_DAY, ROUND and TRUNC of a
//! DATE (each takes a TIMESTAMP as the DATE it holds, and gives a DATE, as Oracle's do),
//! EXTRACT, and the month steps of DATE ± INTERVAL; dates lie in the years 1 to 9999 of
//! the proleptic Gregorian calendar.

use super::*;
use crate::types::datetime::{MICROS_PER_SECOND, timestamp_seconds};

pub(super) fn date_out_of_range(name: &str) -> Error {
    Error::value(name, "date out of range (the year must be between 1 and 9999)")
}

pub(super) fn in_date_range(seconds: i64, name: &str) -> Result<i64> {
    if (MIN_DATE..=MAX_DATE).contains(&seconds) { Ok(seconds) } else { Err(date_out_of_range(name)) }
}

pub(super) fn naive(seconds: i64, name: &str) -> Result<NaiveDateTime> {
    DateTime::from_timestamp(seconds, 0).map(|d| d.naive_utc()).ok_or_else(|| date_out_of_range(name))
}

pub(super) fn seconds_of(date: NaiveDate, time: NaiveTime) -> i64 {
    date.and_time(time).and_utc().timestamp()
}

/// A DATE argument: a DATE, a TIMESTAMP (its fraction of a second dropped, as Oracle
/// converts one to a DATE), or a string in the default format.
pub(super) fn date_arg(d: &Datum<'_>, name: &str) -> Result<Option<i64>> {
    match d {
        Datum::Null => Ok(None),
        Datum::Date(s) => Ok(Some(*s)),
        Datum::Timestamp(t) => Ok(Some(timestamp_seconds(*t))),
        Datum::Str(s) => parse_date(s, None).map(Some).map_err(|m| Error::value(name, m)),
        other => Err(Error::value(name, format!("expected DATE, got {}", other.type_name()))),
    }
}

pub(super) fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub(super) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Midnight on the first day of month `month0` (0-based, may exceed 11) of `year`.
pub(super) fn month_start(year: i64, month0: i64, name: &str) -> Result<i64> {
    let total = year.checked_mul(12).and_then(|t| t.checked_add(month0)).ok_or_else(|| date_out_of_range(name))?;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let date = i32::try_from(y)
        .ok()
        .zip(u32::try_from(m).ok())
        .and_then(|(y, m)| NaiveDate::from_ymd_opt(y, m, 1))
        .ok_or_else(|| date_out_of_range(name))?;
    in_date_range(seconds_of(date, NaiveTime::MIN), name)
}

/// The year and month (1 to 12) `months` after `dt`'s.
fn months_later(dt: &NaiveDateTime, months: i64, name: &str) -> Result<(i64, u32)> {
    let total = i64::from(dt.year())
        .checked_mul(12)
        .and_then(|t| t.checked_add(i64::from(dt.month0())))
        .and_then(|t| t.checked_add(months))
        .ok_or_else(|| date_out_of_range(name))?;
    Ok((total.div_euclid(12), u32::try_from(total.rem_euclid(12) + 1).unwrap_or(1)))
}

/// Day `day` of `month` of `year` at `dt`'s time, as a DATE.
fn on_day(year: i64, month: u32, day: u32, dt: &NaiveDateTime, name: &str) -> Result<Value> {
    let date = i32::try_from(year)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, month, day))
        .ok_or_else(|| date_out_of_range(name))?;
    Ok(Datum::Date(in_date_range(seconds_of(date, dt.time()), name)?))
}

/// ADD_MONTHS(date, n): the same day n months later; the last day of a month, or a day the
/// target month lacks, gives the target month's last day. The time is kept.
pub(super) fn add_months(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "ADD_MONTHS";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let Some(months) = int_arg(arg(args, 1), NAME)? else { return Ok(Datum::Null) };
    let dt = naive(seconds, NAME)?;
    let (year, month) = months_later(&dt, months, NAME)?;
    let last = days_in_month(year, month);
    let day = if dt.day() == days_in_month(i64::from(dt.year()), dt.month()) { last } else { dt.day().min(last) };
    on_day(year, month, day, &dt, NAME)
}

/// `seconds` (a DATE) moved by `months` as DATE + INTERVAL moves it: the same day and
/// time that many months later. Unlike ADD_MONTHS, a day the target month lacks is an
/// error (Oracle's ORA-01839), and the last day of a month stays that day of the month.
pub(super) fn plus_months_strict(seconds: i64, months: i64, name: &str) -> Result<i64> {
    let dt = naive(seconds, name)?;
    let (year, month) = months_later(&dt, months, name)?;
    if (1..=9999).contains(&year) && dt.day() > days_in_month(year, month) {
        return Err(Error::value(
            name,
            format!("ORA-01839: date not valid for month specified: {year:04}-{month:02} has no day {}", dt.day()),
        ));
    }
    match on_day(year, month, dt.day(), &dt, name)? {
        Datum::Date(s) => Ok(s),
        _ => unreachable!("on_day makes a DATE"),
    }
}

/// EXTRACT(field FROM value): YEAR, MONTH or DAY of a DATE; those and HOUR, MINUTE and
/// SECOND (with its fraction) of a TIMESTAMP; YEAR and MONTH of an INTERVAL YEAR TO
/// MONTH; DAY, HOUR, MINUTE and SECOND of an INTERVAL DAY TO SECOND (negative for a
/// negative interval). A DATE's time is read with TO_CHAR, as in Oracle.
pub(super) fn extract(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "EXTRACT";
    let field = text(arg(args, 0)).unwrap_or_default();
    let invalid = |of: &str| Err(Error::value(NAME, format!("ORA-30076: invalid extract field {field} for {of}")));
    let micros_part =
        |micros: i64| -> Value { Datum::from_decimal(Decimal::new(micros.rem_euclid(60 * MICROS_PER_SECOND), 6)) };
    match arg(args, 1) {
        Datum::Null => Ok(Datum::Null),
        Datum::YearMonth(m) => Ok(Datum::Int(match &*field {
            "YEAR" => m / 12,
            "MONTH" => m % 12,
            _ => return invalid("an INTERVAL YEAR TO MONTH"),
        })),
        Datum::DaySecond(us) => {
            let (sign, us) = (us.signum(), us.unsigned_abs());
            let seconds = (us / MICROS_PER_SECOND as u64) as i64;
            let value = match &*field {
                "DAY" => Datum::Int(seconds / 86_400),
                "HOUR" => Datum::Int(seconds % 86_400 / 3600),
                "MINUTE" => Datum::Int(seconds % 3600 / 60),
                "SECOND" => micros_part((us % (60 * MICROS_PER_SECOND as u64)) as i64),
                _ => return invalid("an INTERVAL DAY TO SECOND"),
            };
            if sign < 0 { negate(&value) } else { Ok(value) }
        }
        Datum::Timestamp(t) => {
            let dt = naive(timestamp_seconds(*t), NAME)?;
            Ok(match &*field {
                "HOUR" => Datum::Int(i64::from(dt.hour())),
                "MINUTE" => Datum::Int(i64::from(dt.minute())),
                "SECOND" => micros_part(*t),
                _ => return date_field(&field, &dt).map_or_else(|| invalid("a TIMESTAMP"), Ok),
            })
        }
        other => {
            let Some(seconds) = date_arg(other, NAME)? else { return Ok(Datum::Null) };
            date_field(&field, &naive(seconds, NAME)?).map_or_else(|| invalid("a DATE"), Ok)
        }
    }
}

/// YEAR, MONTH or DAY of a date.
fn date_field(field: &str, dt: &NaiveDateTime) -> Option<Value> {
    Some(Datum::Int(match field {
        "YEAR" => i64::from(dt.year()),
        "MONTH" => i64::from(dt.month()),
        "DAY" => i64::from(dt.day()),
        _ => return None,
    }))
}

/// MONTHS_BETWEEN(date1, date2): the months from date2 to date1, negative when date1 is
/// earlier. A whole number when both fall on the same day of the month or both on the
/// last day of their months (times ignored); otherwise the days and time left over count
/// in months of 31 days, as Oracle's do.
pub(super) fn months_between(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "MONTHS_BETWEEN";
    let Some(first) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let Some(second) = date_arg(arg(args, 1), NAME)? else { return Ok(Datum::Null) };
    let (a, b) = (naive(first, NAME)?, naive(second, NAME)?);
    let months = (i64::from(a.year()) - i64::from(b.year())) * 12 + i64::from(a.month()) - i64::from(b.month());
    let last = |d: &NaiveDateTime| d.day() == days_in_month(i64::from(d.year()), d.month());
    if a.day() == b.day() || (last(&a) && last(&b)) {
        return Ok(Datum::Int(months));
    }
    let seconds_of_day = |d: &NaiveDateTime| i64::from(d.num_seconds_from_midnight());
    let rest = (i64::from(a.day()) - i64::from(b.day())) * SECONDS_PER_DAY + seconds_of_day(&a) - seconds_of_day(&b);
    let fraction =
        Decimal::from(rest).checked_div(Decimal::from(31 * SECONDS_PER_DAY)).ok_or_else(|| overflow(NAME))?;
    Ok(Datum::from_decimal(Decimal::from(months) + fraction))
}

/// NEXT_DAY(date, day): the first date after `date` that falls on the named day of the
/// week, same time. The day is named in English, any case, by at least its three-letter
/// abbreviation; what follows the abbreviation is ignored, as Oracle ignores it
/// ('TUES', 'Mondays').
pub(super) fn next_day(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "NEXT_DAY";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let Some(day) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    const DAYS: [&str; 7] = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];
    let wanted = day.trim().to_ascii_uppercase();
    let Some(target) = DAYS.iter().position(|d| wanted.len() >= 3 && wanted.starts_with(&d[..3])) else {
        return Err(Error::value(NAME, format!("'{day}' is not a valid day of the week")));
    };
    let today = naive(seconds, NAME)?.weekday().num_days_from_monday() as i64;
    let ahead = (target as i64 - today - 1).rem_euclid(7) + 1;
    Ok(Datum::Date(in_date_range(seconds + ahead * SECONDS_PER_DAY, NAME)?))
}

/// LAST_DAY(date): the last day of the date's month, same time.
pub(super) fn last_day(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "LAST_DAY";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let dt = naive(seconds, NAME)?;
    let date =
        dt.date().with_day(days_in_month(i64::from(dt.year()), dt.month())).ok_or_else(|| date_out_of_range(NAME))?;
    Ok(Datum::Date(seconds_of(date, dt.time())))
}

/// The unit of ROUND / TRUNC on a DATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DateUnit {
    Year,
    Quarter,
    Month,
    /// ISO week, starting on Monday.
    IsoWeek,
    /// The week starting on Sunday (Oracle's 'DAY' with an American territory).
    Week,
    Day,
    Hour,
    Minute,
}

impl DateUnit {
    pub(super) fn parse(format: &str, name: &str) -> Result<DateUnit> {
        Ok(match format.trim().to_ascii_uppercase().as_str() {
            "SYYYY" | "YYYY" | "YEAR" | "SYEAR" | "YYY" | "YY" | "Y" => DateUnit::Year,
            "Q" => DateUnit::Quarter,
            "MONTH" | "MON" | "MM" | "RM" => DateUnit::Month,
            "IW" => DateUnit::IsoWeek,
            "DAY" | "DY" | "D" => DateUnit::Week,
            "DDD" | "DD" | "J" => DateUnit::Day,
            "HH" | "HH12" | "HH24" => DateUnit::Hour,
            "MI" => DateUnit::Minute,
            _ => return Err(Error::value(name, format!("bad precision specifier '{format}'"))),
        })
    }
}

/// TRUNC(date, unit) is the start of the unit; ROUND(date, unit) moves to the next start
/// from the unit's middle (a day at noon, a month on the 16th, a year on July 1st, a quarter
/// on the 16th of its second month).
pub(super) fn round_date(seconds: i64, unit: DateUnit, round: bool, name: &str) -> Result<i64> {
    let dt = naive(seconds, name)?;
    let (year, month0, day) = (i64::from(dt.year()), i64::from(dt.month0()), dt.day());
    let result = match unit {
        DateUnit::Minute => step(seconds, 60, round),
        DateUnit::Hour => step(seconds, 3600, round),
        DateUnit::Day => step(seconds, SECONDS_PER_DAY, round),
        DateUnit::Month => month_start(year, month0 + i64::from(round && day >= 16), name)?,
        DateUnit::Year => month_start(year, if round && month0 >= 6 { 12 } else { 0 }, name)?,
        DateUnit::Quarter => {
            let (first, within) = (month0 - month0 % 3, month0 % 3);
            let up = round && (within == 2 || (within == 1 && day >= 16));
            month_start(year, first + if up { 3 } else { 0 }, name)?
        }
        DateUnit::IsoWeek | DateUnit::Week => {
            let back = if unit == DateUnit::IsoWeek {
                dt.weekday().num_days_from_monday()
            } else {
                dt.weekday().num_days_from_sunday()
            };
            let start = step(seconds, SECONDS_PER_DAY, false) - i64::from(back) * SECONDS_PER_DAY;
            let up = round && (seconds - start) * 2 >= 7 * SECONDS_PER_DAY;
            start + if up { 7 * SECONDS_PER_DAY } else { 0 }
        }
    };
    in_date_range(result, name)
}

/// `seconds` truncated (or rounded, half up) to a multiple of `unit`.
pub(super) fn step(seconds: i64, unit: i64, round: bool) -> i64 {
    let rem = seconds.rem_euclid(unit);
    let base = seconds - rem;
    if round && rem * 2 >= unit { base.saturating_add(unit) } else { base }
}

//! Date functions: ADD_MONTHS, LAST_DAY, ROUND and TRUNC of a DATE; dates lie in the
//! years 1 to 9999 of the proleptic Gregorian calendar.

use super::*;

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

/// A DATE argument: a DATE, or a string in the default format.
pub(super) fn date_arg(d: &Datum<'_>, name: &str) -> Result<Option<i64>> {
    match d {
        Datum::Null => Ok(None),
        Datum::Date(s) => Ok(Some(*s)),
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

/// ADD_MONTHS(date, n): the same day n months later; the last day of a month, or a day the
/// target month lacks, gives the target month's last day. The time is kept.
pub(super) fn add_months(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "ADD_MONTHS";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let Some(months) = int_arg(arg(args, 1), NAME)? else { return Ok(Datum::Null) };
    let dt = naive(seconds, NAME)?;
    let total = i64::from(dt.year())
        .checked_mul(12)
        .and_then(|t| t.checked_add(i64::from(dt.month0())))
        .and_then(|t| t.checked_add(months))
        .ok_or_else(|| date_out_of_range(NAME))?;
    let (year, month) = (total.div_euclid(12), u32::try_from(total.rem_euclid(12) + 1).unwrap_or(1));
    let last = days_in_month(year, month);
    let day = if dt.day() == days_in_month(i64::from(dt.year()), dt.month()) { last } else { dt.day().min(last) };
    let date = i32::try_from(year)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, month, day))
        .ok_or_else(|| date_out_of_range(NAME))?;
    Ok(Datum::Date(in_date_range(seconds_of(date, dt.time()), NAME)?))
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

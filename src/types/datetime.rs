//! TIMESTAMP and INTERVAL values as text: the default formats they are shown in and read
//! from, and their ranges.
//!
//! - A TIMESTAMP is microseconds since 1970-01-01 00:00:00 with no time zone, shown as
//!   `YYYY-MM-DD HH24:MI:SS.FF6` (lioscope's NLS_TIMESTAMP_FORMAT) and read from that
//!   form, with zero to nine digits of fraction (rounded to the microsecond), or from a
//!   plain date.
//! - An INTERVAL YEAR TO MONTH is a signed number of months, shown as Oracle shows it,
//!   `+01-06`; an INTERVAL DAY TO SECOND a signed number of microseconds, shown as
//!   `+04 05:12:10.222000`. Both are read back from those forms (TO_YMINTERVAL,
//!   TO_DSINTERVAL, a string stored in an interval column).
//!
//! Invariant: a timestamp made here lies in the years 1 to 9999, as a DATE does.

use chrono::{DateTime, NaiveDateTime, Timelike};

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// 0001-01-01 00:00:00, in seconds since 1970 (the first DATE).
const MIN_SECONDS: i64 = -62_135_596_800;
/// 9999-12-31 23:59:59, in seconds since 1970 (the last DATE).
const MAX_SECONDS: i64 = 253_402_300_799;

/// The first and last TIMESTAMP, in microseconds since 1970.
pub const MIN_TIMESTAMP: i64 = MIN_SECONDS * MICROS_PER_SECOND;
pub const MAX_TIMESTAMP: i64 = MAX_SECONDS * MICROS_PER_SECOND + (MICROS_PER_SECOND - 1);

/// A DATE (seconds since 1970) as a TIMESTAMP's microseconds; `None` past 64 bits.
pub fn date_micros(seconds: i64) -> Option<i64> {
    seconds.checked_mul(MICROS_PER_SECOND)
}

/// The DATE a TIMESTAMP holds: its second, the fraction dropped (toward the earlier
/// second).
pub fn timestamp_seconds(micros: i64) -> i64 {
    micros.div_euclid(MICROS_PER_SECOND)
}

/// Whether `micros` is a timestamp in the years 1 to 9999.
pub fn timestamp_in_range(micros: i64) -> bool {
    (MIN_TIMESTAMP..=MAX_TIMESTAMP).contains(&micros)
}

/// The timestamp as a calendar date and time.
pub fn naive_timestamp(micros: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp_micros(micros).map(|d| d.naive_utc())
}

/// Shows a TIMESTAMP in the default format, six digits of fraction.
pub fn format_timestamp(micros: i64) -> String {
    match naive_timestamp(micros) {
        Some(dt) => dt.format("%Y-%m-%d %H:%M:%S%.6f").to_string(),
        None => format!("<timestamp out of range: {micros}>"),
    }
}

/// Microseconds since 1970 of a calendar date and time, its nanoseconds rounded half up
/// to the microsecond.
pub fn micros_of(dt: NaiveDateTime) -> i64 {
    let whole = dt.with_nanosecond(0).unwrap_or(dt).and_utc().timestamp() * MICROS_PER_SECOND;
    whole + i64::from(dt.nanosecond()).div_euclid(1000) + i64::from(dt.nanosecond() % 1000 >= 500)
}

/// Reads a TIMESTAMP in the default format (`YYYY-MM-DD HH24:MI:SS[.FF]`) or a plain
/// `YYYY-MM-DD` (midnight).
pub fn parse_timestamp(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let parsed = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").or_else(|_| {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
    });
    let micros = parsed
        .map(micros_of)
        .map_err(|_| format!("'{text}' is not a timestamp in the format YYYY-MM-DD HH24:MI:SS.FF"))?;
    if timestamp_in_range(micros) {
        Ok(micros)
    } else {
        Err(format!("'{text}' is out of range (the year must be between 1 and 9999)"))
    }
}

/// Shows an INTERVAL YEAR TO MONTH: a sign, the years in at least `year_digits` digits, a
/// dash and two digits of months.
pub fn format_year_month(months: i64, year_digits: usize) -> String {
    let sign = if months < 0 { '-' } else { '+' };
    let m = months.unsigned_abs();
    format!("{sign}{:0year_digits$}-{:02}", m / 12, m % 12)
}

/// Shows an INTERVAL DAY TO SECOND: a sign, the days in at least `day_digits` digits, then
/// `HH:MI:SS` and `fraction_digits` digits of the second (none and no point for 0).
pub fn format_day_second(micros: i64, day_digits: usize, fraction_digits: usize) -> String {
    let sign = if micros < 0 { '-' } else { '+' };
    let us = micros.unsigned_abs();
    let seconds = us / MICROS_PER_SECOND as u64;
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let mut text = format!("{sign}{days:0day_digits$} {:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60);
    if fraction_digits > 0 {
        let fraction = format!("{:06}", us % MICROS_PER_SECOND as u64);
        text.push('.');
        text.push_str(&fraction[..fraction_digits.min(6)]);
        text.extend(std::iter::repeat_n('0', fraction_digits.saturating_sub(6)));
    }
    text
}

/// Splits an optional leading sign off `text`: whether it was a minus.
fn signed(text: &str) -> (bool, &str) {
    let text = text.trim();
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// Reads an INTERVAL YEAR TO MONTH written `[+|-]years-months` (months 0 to 11), in months.
pub fn parse_year_month(text: &str) -> Result<i64, String> {
    let invalid = || format!("'{}' is not an interval in the format [+|-]YY-MM", text.trim());
    let (negative, body) = signed(text);
    let (years, months) = body.split_once('-').ok_or_else(invalid)?;
    let years: i64 = digits(years).ok_or_else(invalid)?;
    let months: i64 = digits(months).ok_or_else(invalid)?;
    if months > 11 {
        return Err(format!("'{}': the months must be between 0 and 11", text.trim()));
    }
    let total = years.checked_mul(12).and_then(|y| y.checked_add(months)).ok_or_else(invalid)?;
    Ok(if negative { -total } else { total })
}

/// Reads an INTERVAL DAY TO SECOND written `[+|-]days hh:mi:ss[.fraction]` (or just
/// `[+|-]days`), in microseconds; the fraction is rounded to the microsecond.
pub fn parse_day_second(text: &str) -> Result<i64, String> {
    let invalid = || format!("'{}' is not an interval in the format [+|-]DD HH:MI:SS.FF", text.trim());
    let (negative, body) = signed(text);
    let (days, time) = match body.split_once(' ') {
        Some((d, t)) => (d, Some(t.trim())),
        None => (body, None),
    };
    let days: i64 = digits(days).ok_or_else(invalid)?;
    let mut micros = days.checked_mul(MICROS_PER_DAY).ok_or_else(invalid)?;
    if let Some(time) = time {
        let mut parts = time.splitn(3, ':');
        let (Some(h), Some(m), Some(s)) = (parts.next(), parts.next(), parts.next()) else { return Err(invalid()) };
        let (h, m): (i64, i64) = (digits(h).ok_or_else(invalid)?, digits(m).ok_or_else(invalid)?);
        let second = second_micros(s).ok_or_else(invalid)?;
        if h > 23 || m > 59 || second >= 60 * MICROS_PER_SECOND {
            return Err(format!(
                "'{}': a field is out of range (hours 0 to 23, minutes and seconds 0 to 59)",
                text.trim()
            ));
        }
        micros = micros.checked_add((h * 3600 + m * 60) * MICROS_PER_SECOND + second).ok_or_else(invalid)?;
    }
    Ok(if negative { -micros } else { micros })
}

/// `ss[.fraction]` in microseconds, the fraction rounded half up.
pub fn second_micros(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let whole: i64 = digits(whole)?;
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
        return None;
    }
    let padded = format!("{fraction:0<9}");
    let nanos: i64 = padded.parse().ok()?;
    whole.checked_mul(MICROS_PER_SECOND)?.checked_add((nanos + 500) / 1000)
}

/// A run of ASCII digits (at least one) as a number.
fn digits(text: &str) -> Option<i64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_through_text() {
        let t = parse_timestamp("2024-03-05 10:11:12.123456").unwrap();
        assert_eq!(format_timestamp(t), "2024-03-05 10:11:12.123456");
        assert_eq!(format_timestamp(parse_timestamp("2024-03-05").unwrap()), "2024-03-05 00:00:00.000000");
        assert_eq!(
            format_timestamp(parse_timestamp("2024-03-05 10:11:12.1234567").unwrap()),
            "2024-03-05 10:11:12.123457"
        );
        assert_eq!(format_timestamp(parse_timestamp("1969-12-31 23:59:59.5").unwrap()), "1969-12-31 23:59:59.500000");
        assert_eq!(parse_timestamp("0001-01-01 00:00:00").unwrap(), MIN_TIMESTAMP);
        assert_eq!(parse_timestamp("9999-12-31 23:59:59.999999").unwrap(), MAX_TIMESTAMP);
        assert!(parse_timestamp("2024-13-01").is_err());
        assert!(parse_timestamp("noon").unwrap_err().contains("not a timestamp"));
    }

    #[test]
    fn intervals_show_as_oracle_shows_them() {
        assert_eq!(format_year_month(18, 2), "+01-06");
        assert_eq!(format_year_month(-35, 2), "-02-11");
        assert_eq!(format_year_month(1200, 2), "+100-00");
        let d = (4 * 86_400 + 5 * 3600 + 12 * 60 + 10) * MICROS_PER_SECOND + 222_000;
        assert_eq!(format_day_second(d, 2, 6), "+04 05:12:10.222000");
        assert_eq!(format_day_second(-d, 3, 0), "-004 05:12:10");
        assert_eq!(format_day_second(-d, 2, 2), "-04 05:12:10.22");
    }

    #[test]
    fn intervals_round_trip_through_text() {
        assert_eq!(parse_year_month("+01-06").unwrap(), 18);
        assert_eq!(parse_year_month("-2-11").unwrap(), -35);
        assert!(parse_year_month("1-12").unwrap_err().contains("between 0 and 11"));
        assert!(parse_year_month("1 year").is_err());
        let d = parse_day_second("+04 05:12:10.222").unwrap();
        assert_eq!(format_day_second(d, 2, 6), "+04 05:12:10.222000");
        assert_eq!(parse_day_second("-3").unwrap(), -3 * MICROS_PER_DAY);
        assert!(parse_day_second("1 24:00:00").unwrap_err().contains("out of range"));
        assert!(parse_day_second("1 2:3").is_err());
        assert_eq!(second_micros("1.0000005"), Some(1_000_001));
    }

    proptest::proptest! {
        #[test]
        fn any_timestamp_reads_back_as_shown(micros in MIN_TIMESTAMP..=MAX_TIMESTAMP) {
            proptest::prop_assert_eq!(parse_timestamp(&format_timestamp(micros)), Ok(micros));
        }

        #[test]
        fn any_interval_reads_back_as_shown(months in -1_000_000i64..1_000_000, micros in -(1i64 << 60)..(1i64 << 60)) {
            proptest::prop_assert_eq!(parse_year_month(&format_year_month(months, 2)), Ok(months));
            proptest::prop_assert_eq!(parse_day_second(&format_day_second(micros, 2, 6)), Ok(micros));
        }
    }
}

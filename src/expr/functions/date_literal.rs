//! ANSI datetime literals: `DATE 'YYYY-MM-DD'` and `TIMESTAMP 'YYYY-MM-DD HH24:MI:SS[.FF]'`,
//! both made DATE values. Oracle reads them as TO_DATE reads a string with the fixed mask
//! (one to four digits of year, one or two of each other field), and checks each field's
//! range with the errors of TO_DATE. lioscope has no TIMESTAMP type: a TIMESTAMP literal
//! is a DATE when its fractional seconds are absent or zero, and an error otherwise, so no
//! digit the user wrote is silently dropped.

use super::*;

/// What the text of a DATE literal must look like.
const DATE_SHAPE: &str = "YYYY-MM-DD";
/// What the text of a TIMESTAMP literal must look like.
const TIMESTAMP_SHAPE: &str = "YYYY-MM-DD HH24:MI:SS[.FF]";

/// The text of `DATE '...'`: midnight on that day, in seconds since 1970. The error is the
/// message for the literal (the caller names the literal and where it stands).
pub fn date_literal(text: &str) -> std::result::Result<i64, String> {
    let mut input = LiteralText { rest: text.trim() };
    let date = input.date(DATE_SHAPE)?;
    input.end(DATE_SHAPE)?;
    Ok(seconds_of(date, NaiveTime::MIN))
}

/// The text of `TIMESTAMP '...'`: that instant in microseconds since 1970, up to nine
/// digits of fractional seconds rounded to the microsecond.
pub fn timestamp_literal(text: &str) -> std::result::Result<i64, String> {
    let mut input = LiteralText { rest: text.trim() };
    let date = input.date(TIMESTAMP_SHAPE)?;
    if !input.blanks() {
        return Err(mismatch(TIMESTAMP_SHAPE));
    }
    let hour = input.field(2, TIMESTAMP_SHAPE)?;
    input.separator(':', TIMESTAMP_SHAPE)?;
    let minute = input.field(2, TIMESTAMP_SHAPE)?;
    input.separator(':', TIMESTAMP_SHAPE)?;
    let second = input.field(2, TIMESTAMP_SHAPE)?;
    let mut fraction = 0;
    if input.rest.starts_with('.') {
        input.rest = &input.rest[1..];
        let digits = input.digits(9).ok_or_else(|| mismatch(TIMESTAMP_SHAPE))?;
        fraction = crate::types::datetime::second_micros(&format!("0.{digits}")).unwrap_or(0);
    }
    input.end(TIMESTAMP_SHAPE)?;
    if hour > 23 {
        return Err("hour must be between 0 and 23".into());
    }
    if minute > 59 {
        return Err("minutes must be between 0 and 59".into());
    }
    if second > 59 {
        return Err("seconds must be between 0 and 59".into());
    }
    let time = NaiveTime::from_hms_opt(hour, minute, second).ok_or_else(|| mismatch(TIMESTAMP_SHAPE))?;
    let micros = seconds_of(date, time) * crate::types::datetime::MICROS_PER_SECOND + fraction;
    if !crate::types::datetime::timestamp_in_range(micros) {
        return Err("year must be between 1 and 9999".into());
    }
    Ok(micros)
}

fn mismatch(shape: &str) -> String {
    format!("literal does not match format string ({shape})")
}

/// The part of a literal's text not read yet.
struct LiteralText<'a> {
    rest: &'a str,
}

impl<'a> LiteralText<'a> {
    /// `YYYY-MM-DD`, each field checked against the calendar.
    fn date(&mut self, shape: &str) -> std::result::Result<NaiveDate, String> {
        let year = self.field(4, shape)?;
        self.separator('-', shape)?;
        let month = self.field(2, shape)?;
        self.separator('-', shape)?;
        let day = self.field(2, shape)?;
        if year == 0 {
            return Err("year must be between 1 and 9999".into());
        }
        if !(1..=12).contains(&month) {
            return Err("not a valid month".into());
        }
        let year = i32::try_from(year).map_err(|_| mismatch(shape))?;
        NaiveDate::from_ymd_opt(year, month, day)
            .ok_or_else(|| "day of month must be between 1 and last day of month".to_string())
    }

    /// One to `max` ASCII digits, as written.
    fn digits(&mut self, max: usize) -> Option<&'a str> {
        let count = self.rest.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 || count > max {
            return None;
        }
        let (digits, rest) = self.rest.split_at(count);
        self.rest = rest;
        Some(digits)
    }

    /// A field of one to `max` digits.
    fn field(&mut self, max: usize, shape: &str) -> std::result::Result<u32, String> {
        self.digits(max).and_then(|d| d.parse().ok()).ok_or_else(|| mismatch(shape))
    }

    fn separator(&mut self, c: char, shape: &str) -> std::result::Result<(), String> {
        self.rest = self.rest.strip_prefix(c).ok_or_else(|| mismatch(shape))?;
        Ok(())
    }

    /// Skips a run of blanks; whether there was one.
    fn blanks(&mut self) -> bool {
        let trimmed = self.rest.trim_start();
        let skipped = trimmed.len() < self.rest.len();
        self.rest = trimmed;
        skipped
    }

    fn end(&self, shape: &str) -> std::result::Result<(), String> {
        if self.rest.is_empty() { Ok(()) } else { Err(mismatch(shape)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since 1970 of a day and time, from the calendar (chrono), not from the parser.
    fn at(y: i32, m: u32, d: u32, hms: (u32, u32, u32)) -> i64 {
        let time = NaiveTime::from_hms_opt(hms.0, hms.1, hms.2).unwrap();
        NaiveDate::from_ymd_opt(y, m, d).unwrap().and_time(time).and_utc().timestamp()
    }

    fn day(y: i32, m: u32, d: u32) -> i64 {
        at(y, m, d, (0, 0, 0))
    }

    #[test]
    fn date_literals_are_midnight_of_their_day() {
        assert_eq!(date_literal("2020-01-01"), Ok(1_577_836_800));
        assert_eq!(date_literal("1970-01-01"), Ok(0));
        assert_eq!(date_literal("2024-02-29"), Ok(day(2024, 2, 29)));
        assert_eq!(date_literal("2000-02-29"), Ok(day(2000, 2, 29)));
        assert_eq!(date_literal("2020-1-1"), Ok(day(2020, 1, 1)));
        assert_eq!(date_literal(" 2020-12-31 "), Ok(day(2020, 12, 31)));
        assert_eq!(date_literal("0001-01-01"), Ok(MIN_DATE));
        assert_eq!(date_literal("9999-12-31"), Ok(MAX_DATE - SECONDS_PER_DAY + 1));
        assert_eq!(date_literal("33-04-05"), Ok(day(33, 4, 5)));
    }

    #[test]
    fn impossible_dates_name_the_field() {
        let day_of_month = "day of month must be between 1 and last day of month";
        assert_eq!(date_literal("2020-02-30").unwrap_err(), day_of_month);
        assert_eq!(date_literal("2023-02-29").unwrap_err(), day_of_month);
        assert_eq!(date_literal("1900-02-29").unwrap_err(), day_of_month);
        assert_eq!(date_literal("2024-04-31").unwrap_err(), day_of_month);
        assert_eq!(date_literal("2024-01-00").unwrap_err(), day_of_month);
        assert_eq!(date_literal("2024-13-01").unwrap_err(), "not a valid month");
        assert_eq!(date_literal("2024-00-01").unwrap_err(), "not a valid month");
        assert_eq!(date_literal("0000-01-01").unwrap_err(), "year must be between 1 and 9999");
    }

    #[test]
    fn malformed_date_literals_do_not_match_the_format() {
        for text in
            ["2020-1-1x", "", "2020", "2020-01", "2020/01/01", "20200101", "2020-01-01 10:00:00", "10000-01-01", "x"]
        {
            assert_eq!(date_literal(text).unwrap_err(), "literal does not match format string (YYYY-MM-DD)", "{text}");
        }
        assert_eq!(date_literal("2020-001-01").unwrap_err(), "literal does not match format string (YYYY-MM-DD)");
        assert_eq!(date_literal("２０２０-01-01").unwrap_err(), "literal does not match format string (YYYY-MM-DD)");
    }

    #[test]
    fn timestamp_literals_keep_their_fraction_to_the_microsecond() {
        let micros = |seconds: i64, fraction: i64| Ok(seconds * 1_000_000 + fraction);
        assert_eq!(timestamp_literal("2020-01-01 00:00:00"), micros(1_577_836_800, 0));
        assert_eq!(timestamp_literal("2024-02-29 23:59:59"), micros(at(2024, 2, 29, (23, 59, 59)), 0));
        assert_eq!(timestamp_literal("2024-03-05 7:8:9"), micros(at(2024, 3, 5, (7, 8, 9)), 0));
        assert_eq!(timestamp_literal("2024-03-05   10:30:00.000000"), micros(at(2024, 3, 5, (10, 30, 0)), 0));
        assert_eq!(timestamp_literal("2024-03-05 10:30:00.5"), micros(at(2024, 3, 5, (10, 30, 0)), 500_000));
        assert_eq!(timestamp_literal("2024-03-05 10:30:00.000001"), micros(at(2024, 3, 5, (10, 30, 0)), 1));
        assert_eq!(timestamp_literal("2024-03-05 10:30:00.1234565"), micros(at(2024, 3, 5, (10, 30, 0)), 123_457));
    }

    #[test]
    fn bad_timestamp_literals_name_the_field() {
        assert_eq!(timestamp_literal("2024-03-05 24:00:00").unwrap_err(), "hour must be between 0 and 23");
        assert_eq!(timestamp_literal("2024-03-05 10:60:00").unwrap_err(), "minutes must be between 0 and 59");
        assert_eq!(timestamp_literal("2024-03-05 10:00:60").unwrap_err(), "seconds must be between 0 and 59");
        assert_eq!(
            timestamp_literal("2023-02-29 10:00:00").unwrap_err(),
            "day of month must be between 1 and last day of month"
        );
        let shape = "literal does not match format string (YYYY-MM-DD HH24:MI:SS[.FF])";
        for text in [
            "2024-03-05",
            "2024-03-05 10:00",
            "2024-03-05T10:00:00",
            "2024-03-05 10:00:00.",
            "2024-03-05 10:00:00.0000000000",
            "2024-03-05 10:00:00 +02:00",
            "2024-03-05 10:00:00x",
        ] {
            assert_eq!(timestamp_literal(text).unwrap_err(), shape, "{text}");
        }
    }
}

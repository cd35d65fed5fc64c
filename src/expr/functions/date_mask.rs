//! Date format masks: TO_CHAR of a DATE or TIMESTAMP, TO_DATE and TO_TIMESTAMP (English
//! names, the American week).

use super::*;
use crate::types::datetime::{MICROS_PER_SECOND, timestamp_seconds};

pub(super) const MONTH_NAMES: [&str; 12] = [
    "JANUARY",
    "FEBRUARY",
    "MARCH",
    "APRIL",
    "MAY",
    "JUNE",
    "JULY",
    "AUGUST",
    "SEPTEMBER",
    "OCTOBER",
    "NOVEMBER",
    "DECEMBER",
];
pub(super) const DAY_NAMES: [&str; 7] = ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"];
/// Width of MONTH and DAY without FM: the longest name.
pub(super) const NAME_WIDTH: usize = 9;

/// How a mask element is written: 'MON' → JAN, 'Mon' → Jan, 'mon' → jan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Case {
    Upper,
    Capital,
    Lower,
}

impl Case {
    fn of(element: &[char]) -> Case {
        match element {
            [first, ..] if first.is_lowercase() => Case::Lower,
            [_, second, ..] if second.is_lowercase() => Case::Capital,
            _ => Case::Upper,
        }
    }

    fn apply(self, s: &str) -> String {
        match self {
            Case::Upper => s.to_uppercase(),
            Case::Lower => s.to_lowercase(),
            Case::Capital => {
                let mut chars = s.chars();
                chars
                    .next()
                    .map(|c| c.to_uppercase().collect::<String>() + &chars.as_str().to_lowercase())
                    .unwrap_or_default()
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Year4,
    Year3,
    Year2,
    Year1,
    /// RRRR: four digits, or two read with the RR rule.
    RoundYear4,
    /// RR: two digits, the century chosen to be near the current year.
    RoundYear2,
    Month,
    MonthName,
    MonthAbbr,
    DayOfYear,
    DayName,
    DayAbbr,
    Day,
    DayOfWeek,
    Hour24,
    Hour12,
    Minute,
    SecondsOfDay,
    Second,
    Meridian,
    MeridianDots,
    Quarter,
    Julian,
    /// FF, FF1 to FF9: fractional seconds in that many digits (FF: six), of a TIMESTAMP
    /// only.
    Fraction(u8),
}

/// The mask elements, longest first where one is a prefix of another.
pub(super) const DATE_FIELDS: &[(&str, Field)] = &[
    ("FF1", Field::Fraction(1)),
    ("FF2", Field::Fraction(2)),
    ("FF3", Field::Fraction(3)),
    ("FF4", Field::Fraction(4)),
    ("FF5", Field::Fraction(5)),
    ("FF6", Field::Fraction(6)),
    ("FF7", Field::Fraction(7)),
    ("FF8", Field::Fraction(8)),
    ("FF9", Field::Fraction(9)),
    ("FF", Field::Fraction(6)),
    ("SSSSS", Field::SecondsOfDay),
    ("SS", Field::Second),
    ("YYYY", Field::Year4),
    ("YYY", Field::Year3),
    ("YY", Field::Year2),
    ("Y", Field::Year1),
    ("RRRR", Field::RoundYear4),
    ("RR", Field::RoundYear2),
    ("MONTH", Field::MonthName),
    ("MON", Field::MonthAbbr),
    ("MM", Field::Month),
    ("MI", Field::Minute),
    ("DDD", Field::DayOfYear),
    ("DAY", Field::DayName),
    ("DD", Field::Day),
    ("DY", Field::DayAbbr),
    ("D", Field::DayOfWeek),
    ("HH24", Field::Hour24),
    ("HH12", Field::Hour12),
    ("HH", Field::Hour12),
    ("A.M.", Field::MeridianDots),
    ("P.M.", Field::MeridianDots),
    ("AM", Field::Meridian),
    ("PM", Field::Meridian),
    ("Q", Field::Quarter),
    ("J", Field::Julian),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DateElement {
    Field(Field, Case),
    /// Punctuation, blanks and "quoted text", copied as they are.
    Literal(String),
    /// FM: toggles fill mode (no padding of numbers and names).
    FillMode,
    /// FX: exact matching; accepted and ignored.
    Exact,
}

pub(super) fn starts_with_ignore_case(chars: &[char], key: &str) -> bool {
    key.len() <= chars.len() && key.chars().zip(chars).all(|(k, c)| c.to_ascii_uppercase() == k)
}

/// Splits a date format mask into elements (case-insensitive).
pub(super) fn parse_date_mask(mask: &str, name: &str) -> Result<Vec<DateElement>> {
    let chars: Vec<char> = mask.chars().collect();
    let mut elements = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let rest = chars.get(i..).unwrap_or(&[]);
        if c == '"' {
            let quoted = rest.get(1..).unwrap_or(&[]);
            let end = quoted
                .iter()
                .position(|&q| q == '"')
                .ok_or_else(|| Error::value(name, format!("unterminated quoted text in format '{mask}'")))?;
            elements.push(DateElement::Literal(quoted.iter().take(end).collect()));
            i += end + 2;
        } else if !c.is_alphanumeric() {
            elements.push(DateElement::Literal(c.to_string()));
            i += 1;
        } else if starts_with_ignore_case(rest, "FM") {
            elements.push(DateElement::FillMode);
            i += 2;
        } else if starts_with_ignore_case(rest, "FX") {
            elements.push(DateElement::Exact);
            i += 2;
        } else {
            let (key, field) = DATE_FIELDS
                .iter()
                .find(|(key, _)| starts_with_ignore_case(rest, key))
                .ok_or_else(|| Error::value(name, format!("date format not recognized: '{mask}'")))?;
            elements.push(DateElement::Field(*field, Case::of(rest)));
            i += key.len();
        }
    }
    Ok(elements)
}

/// TO_CHAR(date, mask).
pub(super) fn format_date_mask(seconds: i64, mask: &str, name: &str) -> Result<String> {
    format_datetime_mask(seconds, None, mask, name)
}

/// TO_CHAR(timestamp, mask).
pub(super) fn format_timestamp_mask(micros: i64, mask: &str, name: &str) -> Result<String> {
    let (seconds, fraction) = (timestamp_seconds(micros), micros.rem_euclid(MICROS_PER_SECOND));
    format_datetime_mask(seconds, Some(fraction), mask, name)
}

/// A DATE (`fraction` None) or a TIMESTAMP (its microseconds past the second) written
/// with a mask; FF is refused for a DATE, as Oracle refuses it.
fn format_datetime_mask(seconds: i64, fraction: Option<i64>, mask: &str, name: &str) -> Result<String> {
    let elements = parse_date_mask(mask, name)?;
    let dt = naive(seconds, name)?;
    let mut out = String::new();
    let mut fill_mode = false;
    for element in &elements {
        match element {
            DateElement::FillMode => fill_mode = !fill_mode,
            DateElement::Exact => {}
            DateElement::Literal(s) => out.push_str(s),
            DateElement::Field(Field::Fraction(digits), _) => {
                let Some(micros) = fraction else { return Err(fraction_of_a_date(mask, name)) };
                let nine = format!("{:09}", micros * 1000);
                out.push_str(&nine[..usize::from(*digits)]);
            }
            DateElement::Field(field, case) => write_field(&mut out, *field, *case, &dt, fill_mode),
        }
    }
    Ok(out)
}

/// FF in a mask given a DATE, which has no fraction of a second (Oracle's ORA-01821).
fn fraction_of_a_date(mask: &str, name: &str) -> Error {
    Error::value(name, format!("ORA-01821: date format not recognized: '{mask}' (FF reads a TIMESTAMP)"))
}

pub(super) fn write_number(out: &mut String, value: i64, width: usize, fill_mode: bool) {
    if fill_mode {
        out.push_str(&value.to_string());
    } else {
        out.push_str(&format!("{value:0width$}"));
    }
}

pub(super) fn write_name(out: &mut String, name: &str, case: Case, fill_mode: bool, width: usize) {
    let s = case.apply(name);
    if fill_mode { out.push_str(&s) } else { out.push_str(&format!("{s:<width$}")) }
}

pub(super) fn write_field(out: &mut String, field: Field, case: Case, dt: &NaiveDateTime, fill_mode: bool) {
    let year = i64::from(dt.year());
    let month_name = MONTH_NAMES.get(dt.month0() as usize).copied().unwrap_or_default();
    let day_name = DAY_NAMES.get(dt.weekday().num_days_from_sunday() as usize).copied().unwrap_or_default();
    let (pm, hour12) = dt.hour12();
    match field {
        Field::Year4 | Field::RoundYear4 => write_number(out, year, 4, fill_mode),
        Field::Year3 => write_number(out, year.rem_euclid(1000), 3, fill_mode),
        Field::Year2 | Field::RoundYear2 => write_number(out, year.rem_euclid(100), 2, fill_mode),
        Field::Year1 => write_number(out, year.rem_euclid(10), 1, fill_mode),
        Field::Month => write_number(out, i64::from(dt.month()), 2, fill_mode),
        Field::MonthName => write_name(out, month_name, case, fill_mode, NAME_WIDTH),
        Field::MonthAbbr => write_name(out, month_name.get(..3).unwrap_or_default(), case, true, 3),
        Field::DayOfYear => write_number(out, i64::from(dt.ordinal()), 3, fill_mode),
        Field::DayName => write_name(out, day_name, case, fill_mode, NAME_WIDTH),
        Field::DayAbbr => write_name(out, day_name.get(..3).unwrap_or_default(), case, true, 3),
        Field::Day => write_number(out, i64::from(dt.day()), 2, fill_mode),
        Field::DayOfWeek => write_number(out, i64::from(dt.weekday().number_from_sunday()), 1, fill_mode),
        Field::Hour24 => write_number(out, i64::from(dt.hour()), 2, fill_mode),
        Field::Hour12 => write_number(out, i64::from(hour12), 2, fill_mode),
        Field::Minute => write_number(out, i64::from(dt.minute()), 2, fill_mode),
        Field::Second => write_number(out, i64::from(dt.second()), 2, fill_mode),
        Field::SecondsOfDay => write_number(out, i64::from(dt.num_seconds_from_midnight()), 5, fill_mode),
        Field::Meridian => out.push_str(&case.apply(if pm { "PM" } else { "AM" })),
        Field::MeridianDots => out.push_str(&case.apply(if pm { "P.M." } else { "A.M." })),
        Field::Quarter => write_number(out, i64::from(dt.month0() / 3 + 1), 1, fill_mode),
        Field::Julian => {
            write_number(out, i64::from(dt.num_days_from_ce()) + JULIAN_DAY_OF_CE, 7, fill_mode);
        }
        Field::Fraction(_) => unreachable!("written by format_datetime_mask"),
    }
}

/// The year as written in a TO_DATE input, resolved against the current year.
#[derive(Debug, Clone, Copy)]
pub(super) enum YearInput {
    Full(i64),
    /// The last `digits` digits of a year in the current millennium/century/decade.
    Last {
        value: i64,
        modulus: i64,
    },
    /// RR: two digits, the century chosen so that the year is near the current one.
    Near(i64),
}

/// The fields read by TO_DATE.
#[derive(Debug, Default)]
pub(super) struct DateInput {
    year: Option<YearInput>,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    julian: Option<i64>,
    hour24: Option<i64>,
    hour12: Option<i64>,
    pm: Option<bool>,
    minute: Option<i64>,
    second: Option<i64>,
    seconds_of_day: Option<i64>,
    /// Fractional seconds, in microseconds.
    fraction: Option<i64>,
}

/// A position in a TO_DATE input.
pub(super) struct Cursor {
    chars: Vec<char>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// 1 to `max` digits.
    fn digits(&mut self, max: usize) -> Option<(i64, usize)> {
        self.skip_blanks();
        let mut value: i64 = 0;
        let mut count = 0;
        while count < max {
            let Some(d) = self.peek().and_then(|c| c.to_digit(10)) else { break };
            value = value.checked_mul(10)?.checked_add(i64::from(d))?;
            count += 1;
            self.pos += 1;
        }
        (count > 0).then_some((value, count))
    }

    fn number(&mut self, max: usize) -> Option<i64> {
        self.digits(max).map(|(v, _)| v)
    }

    /// The index of the first of `words` the input continues with (case-insensitive).
    fn word(&mut self, words: &[&str]) -> Option<usize> {
        self.skip_blanks();
        let rest = self.chars.get(self.pos..)?;
        let (index, word) = words.iter().enumerate().find(|(_, w)| starts_with_ignore_case(rest, w))?;
        self.pos += word.len();
        Some(index)
    }

    /// A month or day name, full or abbreviated to three letters; its 0-based index.
    fn name(&mut self, names: &[&str]) -> Option<usize> {
        let abbreviations: Vec<&str> = names.iter().map(|n| n.get(..3).unwrap_or(n)).collect();
        self.word(names).or_else(|| self.word(&abbreviations))
    }

    /// Mask punctuation matches any punctuation; a blank matches any run of blanks;
    /// other text matches itself, ignoring case.
    fn literal(&mut self, text: &str) -> Option<()> {
        for expected in text.chars() {
            if expected.is_whitespace() {
                self.skip_blanks();
                continue;
            }
            let found = self.peek()?;
            let punctuation = |c: char| !c.is_alphanumeric() && !c.is_whitespace();
            if found.to_lowercase().eq(expected.to_lowercase()) || (punctuation(expected) && punctuation(found)) {
                self.pos += 1;
            } else {
                return None;
            }
        }
        Some(())
    }

    fn field(&mut self, field: Field, input: &mut DateInput) -> Option<()> {
        match field {
            Field::Year4 => input.year = Some(YearInput::Full(self.number(4)?)),
            Field::Year3 => input.year = Some(YearInput::Last { value: self.number(3)?, modulus: 1000 }),
            Field::Year2 => input.year = Some(YearInput::Last { value: self.number(2)?, modulus: 100 }),
            Field::Year1 => input.year = Some(YearInput::Last { value: self.number(1)?, modulus: 10 }),
            Field::RoundYear4 => {
                let (value, count) = self.digits(4)?;
                input.year = Some(if count <= 2 { YearInput::Near(value) } else { YearInput::Full(value) });
            }
            Field::RoundYear2 => input.year = Some(YearInput::Near(self.number(2)?)),
            Field::Month => input.month = Some(self.number(2)?),
            Field::MonthName | Field::MonthAbbr => {
                input.month = Some(i64::try_from(self.name(&MONTH_NAMES)?).ok()? + 1)
            }
            Field::DayOfYear => input.day_of_year = Some(self.number(3)?),
            Field::DayName | Field::DayAbbr => {
                self.name(&DAY_NAMES)?;
            }
            Field::Day => input.day = Some(self.number(2)?),
            Field::DayOfWeek => {
                self.number(1)?;
            }
            Field::Hour24 => input.hour24 = Some(self.number(2)?),
            Field::Hour12 => input.hour12 = Some(self.number(2)?),
            Field::Minute => input.minute = Some(self.number(2)?),
            Field::Second => input.second = Some(self.number(2)?),
            Field::SecondsOfDay => input.seconds_of_day = Some(self.number(5)?),
            Field::Meridian | Field::MeridianDots => {
                input.pm = Some(self.word(&["A.M.", "P.M.", "AM", "PM"])? % 2 == 1);
            }
            Field::Quarter => return None,
            Field::Julian => input.julian = Some(self.number(7)?),
            Field::Fraction(_) => {
                let (value, count) = self.digits(9)?;
                let nanos = value * 10i64.pow(9 - count as u32);
                input.fraction = Some((nanos + 500) / 1000);
            }
        }
        Some(())
    }
}

/// TO_DATE(text, mask). Missing trailing fields default as in Oracle: the current year and
/// month, day 1, midnight.
pub(super) fn parse_date_with_mask(input: &str, mask: &str, now: i64) -> Result<i64> {
    let (seconds, _) = parse_datetime_with_mask(input, mask, now, "TO_DATE", false)?;
    Ok(seconds)
}

/// TO_TIMESTAMP(text, mask), in microseconds: TO_DATE's rules, and FF reads the fraction
/// of a second.
pub(super) fn parse_timestamp_with_mask(input: &str, mask: &str, now: i64) -> Result<i64> {
    let (seconds, fraction) = parse_datetime_with_mask(input, mask, now, "TO_TIMESTAMP", true)?;
    // A fraction rounded up to a whole second carries into the next one.
    Ok(seconds * MICROS_PER_SECOND + fraction)
}

/// The DATE (seconds) and the fraction of a second (microseconds) `input` holds, read
/// with `mask` for function `name`; FF is refused unless `fraction` (TO_TIMESTAMP).
fn parse_datetime_with_mask(input: &str, mask: &str, now: i64, name: &str, fraction: bool) -> Result<(i64, i64)> {
    let elements = parse_date_mask(mask, name)?;
    if !fraction && elements.iter().any(|e| matches!(e, DateElement::Field(Field::Fraction(_), _))) {
        return Err(fraction_of_a_date(mask, name));
    }
    if elements.iter().any(|e| matches!(e, DateElement::Field(Field::Quarter, _))) {
        return Err(Error::value(name, "format code 'Q' cannot appear in date input format"));
    }
    let mismatch = || Error::value(name, format!("'{input}' does not match format '{mask}'"));
    let mut cursor = Cursor { chars: input.trim().chars().collect(), pos: 0 };
    if cursor.at_end() {
        return Err(mismatch());
    }
    let mut fields = DateInput::default();
    for element in &elements {
        if cursor.at_end() {
            break;
        }
        match element {
            DateElement::FillMode | DateElement::Exact => {}
            DateElement::Literal(text) => cursor.literal(text).ok_or_else(mismatch)?,
            DateElement::Field(field, _) => cursor.field(*field, &mut fields).ok_or_else(mismatch)?,
        }
    }
    cursor.skip_blanks();
    if !cursor.at_end() {
        return Err(mismatch());
    }
    let today = DateTime::from_timestamp(now, 0).map(|d| d.naive_utc()).unwrap_or_default();
    Ok((resolve_date(&fields, &today)?, fields.fraction.unwrap_or(0)))
}

/// Checks the fields read by TO_DATE and builds the DATE.
pub(super) fn resolve_date(input: &DateInput, today: &NaiveDateTime) -> Result<i64> {
    const NAME: &str = "TO_DATE";
    let fail = |message: &str| Err(Error::value(NAME, message.to_string()));
    let current = i64::from(today.year());
    let year = match input.year {
        None => current,
        Some(YearInput::Full(y)) => y,
        Some(YearInput::Last { value, modulus }) => current - current.rem_euclid(modulus) + value,
        Some(YearInput::Near(yy)) => {
            let century = current - current.rem_euclid(100);
            match (yy < 50, current.rem_euclid(100) < 50) {
                (true, false) => century + 100 + yy,
                (false, true) => century - 100 + yy,
                _ => century + yy,
            }
        }
    };
    if !(1..=9999).contains(&year) {
        return fail("year must be between 1 and 9999");
    }
    let y = i32::try_from(year).unwrap_or(1);
    let date = if let Some(j) = input.julian {
        let days = i32::try_from(j - JULIAN_DAY_OF_CE).ok();
        match days.and_then(NaiveDate::from_num_days_from_ce_opt) {
            Some(d) if (1..=9999).contains(&d.year()) => d,
            _ => return fail("julian date must be between 1721426 and 5373484"),
        }
    } else if let Some(ordinal) = input.day_of_year {
        match u32::try_from(ordinal).ok().and_then(|o| NaiveDate::from_yo_opt(y, o)) {
            Some(d) => d,
            None => return fail("day of year must be between 1 and 365 (366 for leap year)"),
        }
    } else {
        let month = input.month.unwrap_or(i64::from(today.month()));
        let Some(month) = u32::try_from(month).ok().filter(|m| (1..=12).contains(m)) else {
            return fail("not a valid month");
        };
        let day = u32::try_from(input.day.unwrap_or(1)).unwrap_or(0);
        match NaiveDate::from_ymd_opt(y, month, day) {
            Some(d) => d,
            None => return fail("day of month must be between 1 and last day of month"),
        }
    };
    let (mut hour, mut minute, mut second) = (0, 0, 0);
    if let Some(s) = input.seconds_of_day {
        if !(0..SECONDS_PER_DAY).contains(&s) {
            return fail("seconds in day must be between 0 and 86399");
        }
        (hour, minute, second) = (s / 3600, s / 60 % 60, s % 60);
    }
    if let Some(h) = input.hour24 {
        if !(0..=23).contains(&h) {
            return fail("hour must be between 0 and 23");
        }
        hour = h;
    } else if let Some(h) = input.hour12 {
        if !(1..=12).contains(&h) {
            return fail("hour must be between 1 and 12");
        }
        hour = h % 12 + if input.pm == Some(true) { 12 } else { 0 };
    }
    if let Some(m) = input.minute {
        if !(0..=59).contains(&m) {
            return fail("minutes must be between 0 and 59");
        }
        minute = m;
    }
    if let Some(s) = input.second {
        if !(0..=59).contains(&s) {
            return fail("seconds must be between 0 and 59");
        }
        second = s;
    }
    let time = NaiveTime::from_num_seconds_from_midnight_opt(
        u32::try_from(hour * 3600 + minute * 60 + second).unwrap_or(0),
        0,
    )
    .unwrap_or(NaiveTime::MIN);
    in_date_range(seconds_of(date, time), NAME)
}

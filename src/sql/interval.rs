//! INTERVAL literals, as Oracle writes them: `INTERVAL '3' MONTH`, `INTERVAL '90' DAY(3)`,
//! `INTERVAL '1-6' YEAR TO MONTH`, `INTERVAL '4 05:12:10.5' DAY TO SECOND`, read into an
//! INTERVAL YEAR TO MONTH (months) or an INTERVAL DAY TO SECOND (microseconds) value.
//!
//! Rules, Oracle's: the leading field's digits are at most its precision (2 unless
//! written: `DAY(3)` takes 999 days), the fields after it keep to their ranges (months
//! 0 to 11, hours 0 to 23, minutes and seconds 0 to 59), and the text is a number for each
//! field the interval names, in order, with `-` between years and months, a blank between
//! days and hours and `:` between the time's fields; a sign may lead. A fraction of a
//! second is rounded to its precision (`SECOND(2, 3)`, six digits unless written).

use crate::error::{Error, Result};
use crate::types::datetime::MICROS_PER_SECOND;
use crate::types::{Datum, Value, round_interval_micros};
use sqlparser::ast::{self, DateTimeField};

/// The fields of an interval, leading first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Field {
    fn of(field: &DateTimeField) -> Option<Field> {
        Some(match field {
            DateTimeField::Year => Field::Year,
            DateTimeField::Month => Field::Month,
            DateTimeField::Day => Field::Day,
            DateTimeField::Hour => Field::Hour,
            DateTimeField::Minute => Field::Minute,
            DateTimeField::Second => Field::Second,
            _ => return None,
        })
    }

    /// What one unit of the field is worth, in months or in microseconds.
    fn unit(self) -> i64 {
        match self {
            Field::Year => 12,
            Field::Month => 1,
            Field::Day => 86_400 * MICROS_PER_SECOND,
            Field::Hour => 3_600 * MICROS_PER_SECOND,
            Field::Minute => 60 * MICROS_PER_SECOND,
            Field::Second => MICROS_PER_SECOND,
        }
    }

    /// The largest value of a field after the leading one.
    fn max_trailing(self) -> i64 {
        match self {
            Field::Month => 11,
            Field::Hour => 23,
            _ => 59,
        }
    }

    /// The separator written before this field when it follows another.
    fn separator(self) -> char {
        match self {
            Field::Month => '-',
            Field::Hour => ' ',
            _ => ':',
        }
    }
}

/// Reads an INTERVAL literal.
pub fn read(interval: &ast::Interval) -> Result<Value> {
    let literal = interval.to_string();
    let invalid = |message: &str| Error::InvalidValue { context: literal.clone(), message: message.to_owned() };
    let text = match &*interval.value {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.as_str(),
            _ => return Err(invalid("the interval's value must be a string literal ('3')")),
        },
        _ => return Err(invalid("the interval's value must be a string literal ('3')")),
    };
    let Some(leading) = interval.leading_field.as_ref() else {
        return Err(invalid("name the interval's unit, as Oracle does: INTERVAL '1' DAY"));
    };
    let unknown = |f: &DateTimeField| invalid(&format!("{f} is not a field of an INTERVAL (YEAR to SECOND)"));
    let first = Field::of(leading).ok_or_else(|| unknown(leading))?;
    let last = match &interval.last_field {
        Some(f) => Field::of(f).ok_or_else(|| unknown(f))?,
        None => first,
    };
    let year_month = |f: Field| f <= Field::Month;
    if last < first || year_month(first) != year_month(last) {
        return Err(invalid("the interval's fields must run from YEAR to MONTH, or from DAY to SECOND"));
    }
    let fields: Vec<Field> = [Field::Year, Field::Month, Field::Day, Field::Hour, Field::Minute, Field::Second]
        .into_iter()
        .filter(|f| (first..=last).contains(f))
        .collect();
    let (negative, digits) = match text.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.trim().strip_prefix('+').unwrap_or(text.trim())),
    };
    let mut rest = digits;
    let mut total: i64 = 0;
    for (i, &field) in fields.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix(field.separator()).ok_or_else(|| invalid("the interval is invalid"))?;
        }
        let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let (number, after) = rest.split_at(end);
        rest = after;
        if number.is_empty() {
            return Err(invalid("the interval is invalid"));
        }
        let mut fraction = 0;
        if field == Field::Second
            && let Some(digits) = rest.strip_prefix('.')
        {
            fraction = crate::types::datetime::second_micros(&format!("0.{digits}"))
                .ok_or_else(|| invalid("the interval is invalid"))?;
            rest = "";
        }
        let value: i64 = number.parse().map_err(|_| invalid("the leading precision of the interval is too small"))?;
        if i == 0 {
            let precision = interval.leading_precision.unwrap_or(2);
            if precision > 9 {
                return Err(invalid("the interval's leading precision is at most 9"));
            }
            if number.trim_start_matches('0').len() as u64 > precision {
                return Err(invalid(&format!(
                    "the leading precision of the interval is too small: {number} has more than {precision} digits"
                )));
            }
        } else if value > field.max_trailing() {
            let name = format!("{field:?}").to_ascii_uppercase();
            return Err(invalid(&format!(
                "{value} is out of range for the interval's {name} (0 to {})",
                field.max_trailing()
            )));
        }
        total = value
            .checked_mul(field.unit())
            .and_then(|v| v.checked_add(fraction))
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| invalid("the interval is too large"))?;
    }
    if !rest.is_empty() {
        return Err(invalid("the interval is invalid"));
    }
    let total = if negative { -total } else { total };
    if year_month(first) {
        return Ok(Datum::YearMonth(total));
    }
    let digits = match interval.fractional_seconds_precision {
        None => crate::types::DEFAULT_FRACTION_DIGITS,
        Some(p) if p <= 9 => u8::try_from(p).unwrap_or(9),
        Some(_) => return Err(invalid("the interval's fractional seconds precision is at most 9")),
    };
    Ok(Datum::DaySecond(round_interval_micros(total, digits)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::OracleDialect;
    use sqlparser::parser::Parser;

    /// The interval of `SELECT d + <text> FROM dual`.
    fn interval(text: &str) -> Result<Value> {
        let sql = format!("SELECT d + {text} FROM dual");
        let statement = Parser::parse_sql(&OracleDialect {}, &sql).unwrap().remove(0);
        let ast::Statement::Query(q) = statement else { panic!("a query") };
        let ast::SetExpr::Select(s) = *q.body else { panic!("a select") };
        let ast::SelectItem::UnnamedExpr(ast::Expr::BinaryOp { right, .. }) = &s.projection[0] else {
            panic!("d + interval")
        };
        let ast::Expr::Interval(i) = &**right else { panic!("{right:?}") };
        read(i)
    }

    fn error(text: &str) -> String {
        interval(text).unwrap_err().to_string()
    }

    #[test]
    fn single_fields_count_in_months_or_seconds() {
        assert_eq!(interval("INTERVAL '3' MONTH").unwrap(), Datum::YearMonth(3));
        assert_eq!(interval("INTERVAL '1' YEAR").unwrap(), Datum::YearMonth(12));
        assert_eq!(interval("INTERVAL '90' DAY (3)").unwrap(), Datum::DaySecond((90 * 86_400) * MICROS_PER_SECOND));
        assert_eq!(interval("INTERVAL '90' DAY").unwrap(), Datum::DaySecond((90 * 86_400) * MICROS_PER_SECOND));
        assert_eq!(interval("INTERVAL '7' HOUR").unwrap(), Datum::DaySecond((7 * 3_600) * MICROS_PER_SECOND));
        assert_eq!(interval("INTERVAL '-15' MINUTE").unwrap(), Datum::DaySecond((-900) * MICROS_PER_SECOND));
        assert_eq!(interval("INTERVAL '59.75' SECOND").unwrap(), Datum::DaySecond(59_750_000));
        assert_eq!(interval("INTERVAL '+5' day").unwrap(), Datum::DaySecond((5 * 86_400) * MICROS_PER_SECOND));
    }

    #[test]
    fn ranges_read_each_field_after_its_separator() {
        assert_eq!(interval("INTERVAL '1-6' YEAR TO MONTH").unwrap(), Datum::YearMonth(18));
        assert_eq!(interval("INTERVAL '-2-11' YEAR TO MONTH").unwrap(), Datum::YearMonth(-35));
        assert_eq!(
            interval("INTERVAL '4 05:12:10.222' DAY TO SECOND").unwrap(),
            Datum::DaySecond((4 * 86_400 + 5 * 3_600 + 12 * 60 + 10) * MICROS_PER_SECOND + 222_000)
        );
        assert_eq!(
            interval("INTERVAL '3 12' DAY TO HOUR").unwrap(),
            Datum::DaySecond((3 * 86_400 + 12 * 3_600) * MICROS_PER_SECOND)
        );
        assert_eq!(
            interval("INTERVAL '11:20' HOUR TO MINUTE").unwrap(),
            Datum::DaySecond((11 * 3_600 + 1_200) * MICROS_PER_SECOND)
        );
        assert_eq!(interval("INTERVAL '10:30' MINUTE TO SECOND").unwrap(), Datum::DaySecond((630) * MICROS_PER_SECOND));
        assert_eq!(
            interval("INTERVAL '100 10:00:00' DAY(3) TO SECOND").unwrap(),
            Datum::DaySecond((8_676_000) * MICROS_PER_SECOND)
        );
    }

    #[test]
    fn bad_intervals_are_errors_naming_them() {
        assert!(
            error("INTERVAL '100' DAY").contains("precision of the interval is too small"),
            "{}",
            error("INTERVAL '100' DAY")
        );
        assert!(error("INTERVAL '1-12' YEAR TO MONTH").contains("12 is out of range"));
        assert!(error("INTERVAL '1 24:00:00' DAY TO SECOND").contains("24 is out of range"));
        assert!(error("INTERVAL '1:2' DAY TO HOUR").contains("invalid"));
        assert!(error("INTERVAL 'x' DAY").contains("invalid"));
        assert!(error("INTERVAL '1' DAY TO MONTH").contains("YEAR to MONTH, or from DAY to SECOND"));
        assert!(error("INTERVAL '5 days'").contains("name the interval's unit"));
        assert!(error("INTERVAL '100' DAY").starts_with("INTERVAL '100' DAY:"), "{}", error("INTERVAL '100' DAY"));
    }
}

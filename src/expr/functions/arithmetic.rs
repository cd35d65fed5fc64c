//! The operators on values: `+ - * /` ([`arithmetic`]), unary minus ([`negate`]) and
//! CONCAT ([`concat()`]); DATE arithmetic counts in days, TIMESTAMP and INTERVAL
//! arithmetic in months and microseconds.

use super::*;
use crate::types::datetime::{MICROS_PER_SECOND, date_micros, timestamp_seconds};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// One side of an operator after implicit conversion.
#[derive(Debug, Clone, Copy)]
pub(super) enum Operand {
    Int(i64),
    Dec(Decimal),
    /// Seconds since 1970.
    Date(i64),
    /// Microseconds since 1970.
    Timestamp(i64),
    /// Months.
    YearMonth(i64),
    /// Microseconds.
    DaySecond(i64),
}

impl Operand {
    /// `None` for NULL; a string becomes a number.
    fn of(d: &Datum<'_>, context: &str) -> Result<Option<Operand>> {
        Ok(Some(match d {
            Datum::Null => return Ok(None),
            Datum::Int(i) => Operand::Int(*i),
            Datum::Num(n) => Operand::Dec(*n),
            Datum::Date(s) => Operand::Date(*s),
            Datum::Timestamp(t) => Operand::Timestamp(*t),
            Datum::YearMonth(m) => Operand::YearMonth(*m),
            Datum::DaySecond(us) => Operand::DaySecond(*us),
            Datum::Str(s) => match Datum::parse_number(s.trim()).map_err(|m| Error::value(context, m))? {
                Datum::Int(i) => Operand::Int(i),
                Datum::Num(n) => Operand::Dec(n),
                _ => return Ok(None),
            },
        }))
    }

    fn decimal(self) -> Decimal {
        match self {
            Operand::Int(i) => Decimal::from(i),
            Operand::Dec(d) => d,
            _ => Decimal::ZERO,
        }
    }

    fn is_number(self) -> bool {
        matches!(self, Operand::Int(_) | Operand::Dec(_))
    }

    fn type_name(self) -> &'static str {
        match self {
            Operand::Int(_) | Operand::Dec(_) => "NUMBER",
            Operand::Date(_) => "DATE",
            Operand::Timestamp(_) => "TIMESTAMP",
            Operand::YearMonth(_) => "INTERVAL YEAR TO MONTH",
            Operand::DaySecond(_) => "INTERVAL DAY TO SECOND",
        }
    }

    /// A date or a timestamp in microseconds since 1970.
    fn micros(self) -> Option<i64> {
        match self {
            Operand::Date(s) => date_micros(s),
            Operand::Timestamp(t) => Some(t),
            _ => None,
        }
    }
}

/// `+ - * /` with Oracle's rules: exact integers (moving to a decimal on `i64` overflow),
/// exact decimal division, strings converted to numbers; DATE ± days, DATE - DATE in
/// days; a TIMESTAMP ± days is a DATE; DATE or TIMESTAMP ± INTERVAL keeps its type, and
/// the difference of two where one is a TIMESTAMP is an INTERVAL DAY TO SECOND; intervals
/// of one kind add and subtract, and multiply or divide by a number. NULL on either side
/// gives NULL.
pub fn arithmetic(op: ArithOp, left: &Datum<'_>, right: &Datum<'_>) -> Result<Value> {
    if left.is_null() || right.is_null() {
        return Ok(Datum::Null);
    }
    let (Some(l), Some(r)) = (Operand::of(left, ARITHMETIC)?, Operand::of(right, ARITHMETIC)?) else {
        return Ok(Datum::Null);
    };
    use ArithOp::*;
    use Operand as O;
    match (op, l, r) {
        (_, a, b) if a.is_number() && b.is_number() => numeric(op, a, b),
        (Sub, O::Date(a), O::Date(b)) => Ok(days_between(a, b)),
        (Add | Sub, O::Date(d), n) | (Add, n, O::Date(d)) if n.is_number() => shift_date(d, n, op == Sub),
        (Add | Sub, O::Timestamp(t), n) | (Add, n, O::Timestamp(t)) if n.is_number() => {
            shift_date(timestamp_seconds(t), n, op == Sub)
        }
        (Sub, a @ (O::Date(_) | O::Timestamp(_)), b @ (O::Date(_) | O::Timestamp(_))) => {
            let (Some(a), Some(b)) = (a.micros(), b.micros()) else { return Err(overflow(ARITHMETIC)) };
            a.checked_sub(b).map(Datum::DaySecond).ok_or_else(|| overflow(ARITHMETIC))
        }
        (Add | Sub, d @ (O::Date(_) | O::Timestamp(_)), i @ (O::YearMonth(_) | O::DaySecond(_)))
        | (Add, i @ (O::YearMonth(_) | O::DaySecond(_)), d @ (O::Date(_) | O::Timestamp(_))) => {
            shift_by_interval(d, i, op == Sub)
        }
        (Add | Sub, O::YearMonth(a), O::YearMonth(b)) => {
            checked(a, b, op).map(Datum::YearMonth).ok_or_else(|| overflow(ARITHMETIC))
        }
        (Add | Sub, O::DaySecond(a), O::DaySecond(b)) => {
            checked(a, b, op).map(Datum::DaySecond).ok_or_else(|| overflow(ARITHMETIC))
        }
        (Mul | Div, i @ (O::YearMonth(_) | O::DaySecond(_)), n) | (Mul, n, i @ (O::YearMonth(_) | O::DaySecond(_)))
            if n.is_number() =>
        {
            scale_interval(i, n, op)
        }
        (op, a, b) => Err(Error::value(
            ARITHMETIC,
            format!(
                "ORA-30081: invalid data type for datetime/interval arithmetic ({} {} {})",
                a.type_name(),
                symbol(op),
                b.type_name()
            ),
        )),
    }
}

fn checked(a: i64, b: i64, op: ArithOp) -> Option<i64> {
    if op == ArithOp::Sub { a.checked_sub(b) } else { a.checked_add(b) }
}

/// A DATE or TIMESTAMP moved by an interval, keeping its type: months keep the day and
/// time (a day the target month lacks is Oracle's ORA-01839), microseconds are added (a
/// DATE drops the fraction of a second left over).
fn shift_by_interval(at: Operand, interval: Operand, subtract: bool) -> Result<Value> {
    const NAME: &str = "datetime + INTERVAL";
    let sign = if subtract { -1 } else { 1 };
    match (at, interval) {
        (Operand::Date(s), Operand::YearMonth(m)) => {
            Ok(Datum::Date(plus_months_strict(s, m.checked_mul(sign).ok_or_else(|| overflow(NAME))?, NAME)?))
        }
        (Operand::Timestamp(t), Operand::YearMonth(m)) => {
            let (seconds, fraction) = (timestamp_seconds(t), t.rem_euclid(MICROS_PER_SECOND));
            let moved = plus_months_strict(seconds, m.checked_mul(sign).ok_or_else(|| overflow(NAME))?, NAME)?;
            Ok(Datum::Timestamp(moved * MICROS_PER_SECOND + fraction))
        }
        (Operand::Date(s), Operand::DaySecond(us)) => {
            let micros = date_micros(s).and_then(|m| m.checked_add(us.checked_mul(sign)?));
            let seconds = timestamp_seconds(micros.ok_or_else(|| date_out_of_range(NAME))?);
            Ok(Datum::Date(in_date_range(seconds, NAME)?))
        }
        (Operand::Timestamp(t), Operand::DaySecond(us)) => {
            let micros = us.checked_mul(sign).and_then(|d| t.checked_add(d)).ok_or_else(|| date_out_of_range(NAME))?;
            if !crate::types::datetime::timestamp_in_range(micros) {
                return Err(date_out_of_range(NAME));
            }
            Ok(Datum::Timestamp(micros))
        }
        _ => unreachable!("called with a datetime and an interval"),
    }
}

/// An interval times or divided by a number: months truncated toward zero, microseconds
/// rounded half away from zero.
fn scale_interval(interval: Operand, n: Operand, op: ArithOp) -> Result<Value> {
    let (amount, months) = match interval {
        Operand::YearMonth(m) => (m, true),
        Operand::DaySecond(us) => (us, false),
        _ => unreachable!("called with an interval"),
    };
    let factor = n.decimal();
    let product = match op {
        ArithOp::Div if factor.is_zero() => return Err(Error::value(ARITHMETIC, "divisor is equal to zero")),
        ArithOp::Div => Decimal::from(amount).checked_div(factor),
        _ => Decimal::from(amount).checked_mul(factor),
    }
    .ok_or_else(|| overflow(ARITHMETIC))?;
    let whole = if months {
        product.trunc()
    } else {
        product.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
    };
    let v = i64::try_from(whole).map_err(|_| overflow(ARITHMETIC))?;
    Ok(if months { Datum::YearMonth(v) } else { Datum::DaySecond(v) })
}

pub(super) fn symbol(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "/",
    }
}

pub(super) fn numeric(op: ArithOp, a: Operand, b: Operand) -> Result<Value> {
    if let (Operand::Int(x), Operand::Int(y)) = (a, b) {
        let exact = match op {
            ArithOp::Add => x.checked_add(y),
            ArithOp::Sub => x.checked_sub(y),
            ArithOp::Mul => x.checked_mul(y),
            ArithOp::Div => None,
        };
        if let Some(v) = exact {
            return Ok(Datum::Int(v));
        }
    }
    let (x, y) = (a.decimal(), b.decimal());
    let result = match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div if y.is_zero() => return Err(Error::value(ARITHMETIC, "divisor is equal to zero")),
        ArithOp::Div => x.checked_div(y),
    };
    result.map(Datum::from_decimal).ok_or_else(|| overflow(ARITHMETIC))
}

/// DATE ± `days` (fractions of a day become seconds, rounded half away from zero).
pub(super) fn shift_date(date: i64, days: Operand, subtract: bool) -> Result<Value> {
    let seconds = match days {
        Operand::Int(d) => d.checked_mul(SECONDS_PER_DAY),
        other => other
            .decimal()
            .checked_mul(Decimal::from(SECONDS_PER_DAY))
            .and_then(|s| i64::try_from(s.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)).ok()),
    };
    let seconds = if subtract { seconds.and_then(i64::checked_neg) } else { seconds };
    let shifted = seconds.and_then(|s| date.checked_add(s)).ok_or_else(|| date_out_of_range(ARITHMETIC))?;
    Ok(Datum::Date(in_date_range(shifted, ARITHMETIC)?))
}

pub(super) fn days_between(a: i64, b: i64) -> Value {
    let seconds = Decimal::from(i128::from(a) - i128::from(b));
    // |seconds| < 2^65 and the divisor is not zero: neither step can fail.
    seconds.checked_div(Decimal::from(SECONDS_PER_DAY)).map_or(Datum::Null, Datum::from_decimal)
}

/// `||`: NULLs are treated as empty strings (Oracle); a result '' is NULL.
pub fn concat(left: &Datum<'_>, right: &Datum<'_>) -> Value {
    let mut text = String::new();
    left.write_text(&mut text);
    right.write_text(&mut text);
    Datum::string(text)
}

/// Unary minus.
pub fn negate(v: &Datum<'_>) -> Result<Value> {
    Ok(match Operand::of(v, ARITHMETIC)? {
        None => Datum::Null,
        Some(Operand::Int(i)) => i.checked_neg().map_or_else(|| Datum::from_decimal(-Decimal::from(i)), Datum::Int),
        Some(Operand::Dec(d)) => Datum::from_decimal(-d),
        Some(Operand::YearMonth(m)) => Datum::YearMonth(m.checked_neg().ok_or_else(|| overflow(ARITHMETIC))?),
        Some(Operand::DaySecond(us)) => Datum::DaySecond(us.checked_neg().ok_or_else(|| overflow(ARITHMETIC))?),
        Some(other) => {
            let name = other.type_name();
            return Err(Error::value(ARITHMETIC, format!("expected NUMBER, got {name} (-{name} is not allowed)")));
        }
    })
}

//! The operators on values: `+ - * /` ([`arithmetic`]), unary minus ([`negate`]) and
//! CONCAT ([`concat()`]); DATE arithmetic counts in days.

use super::*;

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
    Date(i64),
}

impl Operand {
    /// `None` for NULL; a string becomes a number.
    fn of(d: &Datum<'_>, context: &str) -> Result<Option<Operand>> {
        Ok(Some(match d {
            Datum::Null => return Ok(None),
            Datum::Int(i) => Operand::Int(*i),
            Datum::Num(n) => Operand::Dec(*n),
            Datum::Date(s) => Operand::Date(*s),
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
            Operand::Date(_) => Decimal::ZERO,
        }
    }
}

/// `+ - * /` with Oracle's rules: exact integers (moving to a decimal on `i64` overflow),
/// exact decimal division, DATE ± days, DATE - DATE in days, strings converted to numbers.
/// NULL on either side gives NULL.
pub fn arithmetic(op: ArithOp, left: &Datum<'_>, right: &Datum<'_>) -> Result<Value> {
    if left.is_null() || right.is_null() {
        return Ok(Datum::Null);
    }
    let (Some(l), Some(r)) = (Operand::of(left, ARITHMETIC)?, Operand::of(right, ARITHMETIC)?) else {
        return Ok(Datum::Null);
    };
    match (op, l, r) {
        (ArithOp::Sub, Operand::Date(a), Operand::Date(b)) => Ok(days_between(a, b)),
        (ArithOp::Add, Operand::Date(_), Operand::Date(_)) => {
            Err(Error::value(ARITHMETIC, "DATE + DATE is not allowed"))
        }
        (ArithOp::Add, Operand::Date(d), n) | (ArithOp::Add, n, Operand::Date(d)) => shift_date(d, n, false),
        (ArithOp::Sub, Operand::Date(d), n) => shift_date(d, n, true),
        (_, Operand::Date(_), _) | (_, _, Operand::Date(_)) => {
            Err(Error::value(ARITHMETIC, format!("expected NUMBER, got DATE (DATE {} is not allowed)", symbol(op))))
        }
        (op, a, b) => numeric(op, a, b),
    }
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
        Some(Operand::Date(_)) => {
            return Err(Error::value(ARITHMETIC, "expected NUMBER, got DATE (-DATE is not allowed)"));
        }
    })
}

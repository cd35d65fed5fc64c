//! Number functions: MOD, ABS, SIGN, FLOOR, CEIL, ROUND and TRUNC of a number, POWER,
//! SQRT (the only two that go through `f64`).

use super::*;

/// MOD(a, b) = a - b * TRUNC(a / b) (the sign of a); MOD(a, 0) = a.
pub(super) fn modulo(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "MOD";
    if let (Datum::Int(a), Datum::Int(b)) = (arg(args, 0), arg(args, 1)) {
        return Ok(Datum::Int(if *b == 0 { *a } else { a.checked_rem(*b).unwrap_or(0) }));
    }
    let (Some(a), Some(b)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    if b.is_zero() {
        return Ok(Datum::from_decimal(a));
    }
    a.checked_rem(b).map(Datum::from_decimal).ok_or_else(|| overflow(NAME))
}

pub(super) fn abs(args: &[Datum<'_>]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Datum::Int(i) => i.checked_abs().map_or_else(|| Datum::from_decimal(Decimal::from(*i).abs()), Datum::Int),
        other => number(other, "ABS")?.map_or(Datum::Null, |d| Datum::from_decimal(d.abs())),
    })
}

pub(super) fn sign(args: &[Datum<'_>]) -> Result<Value> {
    Ok(match number(arg(args, 0), "SIGN")? {
        None => Datum::Null,
        Some(d) if d.is_zero() => Datum::Int(0),
        Some(d) => Datum::Int(if d.is_sign_negative() { -1 } else { 1 }),
    })
}

pub(super) fn floor_or_ceil(args: &[Datum<'_>], floor: bool, name: &str) -> Result<Value> {
    Ok(match arg(args, 0) {
        Datum::Int(i) => Datum::Int(*i),
        other => {
            number(other, name)?.map_or(Datum::Null, |d| Datum::from_decimal(if floor { d.floor() } else { d.ceil() }))
        }
    })
}

/// ROUND / TRUNC of a number to `digits` (negative: left of the point) or of a DATE to a
/// unit given by a format ('DD' by default).
pub(super) fn round_or_trunc(args: &[Datum<'_>], round: bool, name: &str) -> Result<Value> {
    if let Datum::Date(_) | Datum::Timestamp(_) = arg(args, 0) {
        let Some(seconds) = date_arg(arg(args, 0), name)? else { return Ok(Datum::Null) };
        let Some(format) = text_or(args, 1, "DD") else { return Ok(Datum::Null) };
        let unit = DateUnit::parse(&format, name)?;
        return round_date(seconds, unit, round, name).map(Datum::Date);
    }
    let Some(d) = number(arg(args, 0), name)? else { return Ok(Datum::Null) };
    let Some(digits) = int_or(args, 1, 0, name)? else { return Ok(Datum::Null) };
    if let (Datum::Int(i), true) = (arg(args, 0), digits >= 0) {
        return Ok(Datum::Int(*i));
    }
    round_decimal(d, digits, round, name).map(Datum::from_decimal)
}

/// Rounds (half away from zero) or truncates `d` to `digits` after the point.
pub(super) fn round_decimal(d: Decimal, digits: i64, round: bool, name: &str) -> Result<Decimal> {
    let strategy = if round { RoundingStrategy::MidpointAwayFromZero } else { RoundingStrategy::ToZero };
    if digits >= 0 {
        let dp = u32::try_from(digits.min(28)).unwrap_or(28);
        return Ok(d.round_dp_with_strategy(dp, strategy));
    }
    let places = digits.unsigned_abs();
    if places > 28 {
        // 10^29 and above exceed Decimal: ROUND(x, -29) is 10^29 (an overflow) when
        // |x| >= 5e28, and every other result is 0.
        let half = Decimal::try_from_i128_with_scale(5 * 10_i128.pow(28), 0).unwrap_or(Decimal::MAX);
        return if round && places == 29 && d.abs() >= half { Err(overflow(name)) } else { Ok(Decimal::ZERO) };
    }
    let factor = Decimal::try_from_i128_with_scale(10_i128.pow(u32::try_from(places).unwrap_or(28)), 0)
        .map_err(|_| overflow(name))?;
    let whole = d.trunc();
    let rem = whole.checked_rem(factor).ok_or_else(|| overflow(name))?;
    let base = whole.checked_sub(rem).ok_or_else(|| overflow(name))?;
    let low = rem.checked_add(d.fract()).ok_or_else(|| overflow(name))?;
    let half = factor.checked_div(Decimal::TWO).ok_or_else(|| overflow(name))?;
    if !round || low.abs() < half {
        return Ok(base);
    }
    let step = if d.is_sign_negative() { -factor } else { factor };
    base.checked_add(step).ok_or_else(|| overflow(name))
}

/// POWER(a, b): exact for an integer b (repeated multiplication), through f64 otherwise.
pub(super) fn power(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "POWER";
    let (Some(base), Some(exponent)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    if let (true, Ok(e)) = (exponent.fract().is_zero(), i64::try_from(exponent)) {
        return integer_power(base, e).map(Datum::from_decimal);
    }
    if base.is_sign_negative() && !base.is_zero() {
        return Err(out_of_range(NAME, base));
    }
    let (Some(b), Some(e)) = (base.to_f64(), exponent.to_f64()) else { return Err(overflow(NAME)) };
    f64_to_decimal(b.powf(e), NAME).map(Datum::from_decimal)
}

pub(super) fn integer_power(base: Decimal, exponent: i64) -> Result<Decimal> {
    const NAME: &str = "POWER";
    if base.is_zero() && exponent < 0 {
        return Err(Error::value(NAME, "divisor is equal to zero"));
    }
    let mut result = Decimal::ONE;
    let mut square = base;
    let mut e = exponent.unsigned_abs();
    while e > 0 {
        if e & 1 == 1 {
            result = result.checked_mul(square).ok_or_else(|| overflow(NAME))?;
        }
        e >>= 1;
        if e > 0 {
            square = square.checked_mul(square).ok_or_else(|| overflow(NAME))?;
        }
    }
    if exponent >= 0 {
        return Ok(result);
    }
    if result.is_zero() {
        return Err(overflow(NAME));
    }
    Decimal::ONE.checked_div(result).ok_or_else(|| overflow(NAME))
}

/// SQRT through f64 (15 significant digits); a negative argument is an error.
pub(super) fn sqrt(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "SQRT";
    let Some(d) = number(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    if d.is_sign_negative() && !d.is_zero() {
        return Err(out_of_range(NAME, d));
    }
    let x = d.to_f64().ok_or_else(|| overflow(NAME))?;
    f64_to_decimal(x.sqrt(), NAME).map(Datum::from_decimal)
}

/// A finite f64 as a decimal rounded to 15 significant digits (below 1e-28: 0).
pub(super) fn f64_to_decimal(x: f64, name: &str) -> Result<Decimal> {
    if !x.is_finite() {
        return Err(overflow(name));
    }
    if x == 0.0 {
        return Ok(Decimal::ZERO);
    }
    match Decimal::from_scientific_lossy(&format!("{x:.14e}")) {
        Ok(d) => Ok(d.normalize()),
        Err(_) if x.abs() < 1.0 => Ok(Decimal::ZERO),
        Err(_) => Err(overflow(name)),
    }
}

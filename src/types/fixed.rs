//! [`Fixed`]: an exact decimal `mantissa / 10^scale` with a 64-bit mantissa, the fast
//! path of arithmetic on the values of NUMBER(p,s) columns (prices, discounts, rates).
//!
//! Every operation is exact or refused: `None` when the result would not fit, so the
//! caller evaluates the general way (through `rust_decimal`) and gets what it always got.
//! Within range the results are the same numbers as `rust_decimal`'s: sums, differences
//! and products of exact decimals are exact in both, and [`Fixed::into_datum`] hands the
//! result to [`Datum::from_decimal`], which gives each number its one representation.

use super::Datum;
use rust_decimal::Decimal;

/// The largest scale a `Decimal` holds.
const MAX_SCALE: u8 = 28;

/// Powers of ten that fit in `i64`: `POW10[k]` = 10^k.
const POW10: [i64; 19] = {
    let mut p = [1i64; 19];
    let mut k = 1;
    while k < 19 {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// `mantissa / 10^scale`, with `scale <= 28`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    pub mantissa: i64,
    pub scale: u8,
}

impl Fixed {
    /// A whole number.
    #[inline]
    pub const fn whole(i: i64) -> Fixed {
        Fixed { mantissa: i, scale: 0 }
    }

    /// A number value as a fixed-point one: `None` for NULL, a non-number, or a
    /// decimal whose mantissa does not fit in 64 bits.
    #[inline]
    pub fn of(d: &Datum<'_>) -> Option<Fixed> {
        match d {
            Datum::Int(i) => Some(Fixed::whole(*i)),
            Datum::Num(n) => Some(Fixed { mantissa: i64::try_from(n.mantissa()).ok()?, scale: n.scale() as u8 }),
            _ => None,
        }
    }

    /// The same number with `scale` digits after the point (`scale >= self.scale`).
    #[inline]
    fn rescaled(self, scale: u8) -> Option<i64> {
        let up = usize::from(scale - self.scale);
        self.mantissa.checked_mul(*POW10.get(up)?)
    }

    #[inline]
    pub fn checked_add(self, other: Fixed) -> Option<Fixed> {
        let scale = self.scale.max(other.scale);
        let mantissa = self.rescaled(scale)?.checked_add(other.rescaled(scale)?)?;
        Some(Fixed { mantissa, scale })
    }

    #[inline]
    pub fn checked_sub(self, other: Fixed) -> Option<Fixed> {
        self.checked_add(other.checked_neg()?)
    }

    #[inline]
    pub fn checked_mul(self, other: Fixed) -> Option<Fixed> {
        let scale = self.scale + other.scale;
        if scale > MAX_SCALE {
            return None;
        }
        Some(Fixed { mantissa: self.mantissa.checked_mul(other.mantissa)?, scale })
    }

    #[inline]
    pub fn checked_neg(self) -> Option<Fixed> {
        Some(Fixed { mantissa: self.mantissa.checked_neg()?, scale: self.scale })
    }

    /// The numeric order of the two; `None` when aligning their scales would overflow.
    #[inline]
    pub fn cmp_exact(self, other: Fixed) -> Option<std::cmp::Ordering> {
        if self.scale == other.scale {
            return Some(self.mantissa.cmp(&other.mantissa));
        }
        let to = self.scale.max(other.scale);
        let a = rescale_wide(i128::from(self.mantissa), self.scale, to)?;
        let b = rescale_wide(i128::from(other.mantissa), other.scale, to)?;
        Some(a.cmp(&b))
    }

    /// The value, in its one representation ([`Datum::Int`] when whole).
    #[inline]
    pub fn into_datum(self) -> Datum<'static> {
        if self.scale == 0 { Datum::Int(self.mantissa) } else { Datum::from_decimal(self.into_decimal()) }
    }

    /// The same number without trailing zeros in its mantissa (the scale a decimal
    /// value of it has).
    #[inline]
    pub fn normalized(mut self) -> Fixed {
        while self.scale > 0 && self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.scale -= 1;
        }
        self
    }

    #[inline]
    pub fn into_decimal(self) -> Decimal {
        Decimal::new(self.mantissa, u32::from(self.scale))
    }
}

/// A running sum of [`Fixed`] values, exact in 128 bits at the largest scale seen, and
/// always below 2^96 in magnitude, what a `Decimal` holds: [`ExactSum::add`] refuses a
/// value that would take it past. It is then the decimal a sum of decimals would hold
/// at that point ([`ExactSum::into_decimal`]), for the caller to go on with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExactSum {
    sum: i128,
    scale: u8,
}

/// 2^96: the first magnitude a `Decimal`'s mantissa cannot hold.
const DECIMAL_LIMIT: u128 = 1 << 96;

impl ExactSum {
    /// Adds `value`; `false` (the sum unchanged) when the exact result would reach 2^96.
    #[inline]
    pub fn add(&mut self, value: Fixed) -> bool {
        let mantissa = i128::from(value.mantissa);
        let (a, b, to) = if value.scale == self.scale {
            (self.sum, mantissa, value.scale)
        } else {
            let to = self.scale.max(value.scale);
            let (Some(a), Some(b)) = (rescale_wide(self.sum, self.scale, to), rescale_wide(mantissa, value.scale, to))
            else {
                return false;
            };
            (a, b, to)
        };
        match a.checked_add(b) {
            Some(sum) if sum.unsigned_abs() < DECIMAL_LIMIT => {
                *self = ExactSum { sum, scale: to };
                true
            }
            _ => false,
        }
    }

    /// Adds the sum of a run of values at `scale` whose magnitudes add up to
    /// `magnitude`, when no running sum of them added one by one (at this scale or a
    /// smaller one), in any order, could reach 2^96: the sum is then the one they give
    /// added one by one. `false` (the sum unchanged) otherwise.
    #[inline]
    pub fn add_run(&mut self, sum: i128, magnitude: u128, scale: u8) -> bool {
        let to = self.scale.max(scale);
        let (Some(a), Some(b), Some(up)) = (
            rescale_wide(self.sum, self.scale, to),
            rescale_wide(sum, scale, to),
            10u128.checked_pow(u32::from(to - scale)),
        ) else {
            return false;
        };
        match magnitude.checked_mul(up).and_then(|m| m.checked_add(a.unsigned_abs())) {
            Some(bound) if bound < DECIMAL_LIMIT => {
                *self = ExactSum { sum: a + b, scale: to };
                true
            }
            _ => false,
        }
    }

    /// Whether nothing was added (or only whole numbers that cancel out).
    pub fn is_empty(&self) -> bool {
        *self == ExactSum::default()
    }

    /// The sum as a decimal, at the largest scale of the values added.
    pub fn into_decimal(self) -> Decimal {
        Decimal::from_i128_with_scale(self.sum, u32::from(self.scale))
    }
}

fn rescale_wide(m: i128, from: u8, to: u8) -> Option<i128> {
    let up = u32::from(to - from);
    m.checked_mul(10i128.checked_pow(up)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixed() -> impl Strategy<Value = Fixed> {
        prop_oneof![
            (any::<i64>(), 0u8..=28).prop_map(|(mantissa, scale)| Fixed { mantissa, scale }),
            (-1_000_000i64..1_000_000, 0u8..=4).prop_map(|(mantissa, scale)| Fixed { mantissa, scale }),
        ]
    }

    proptest! {
        /// Whatever `Fixed` computes is what `rust_decimal` computes; it refuses only
        /// results beyond 64 bits.
        #[test]
        fn operations_agree_with_decimal(a in fixed(), b in fixed()) {
            let (x, y) = (a.into_decimal(), b.into_decimal());
            for (got, exact) in [
                (a.checked_add(b), x.checked_add(y)),
                (a.checked_sub(b), x.checked_sub(y)),
                (a.checked_mul(b), x.checked_mul(y)),
                (a.checked_neg(), Some(-x)),
            ] {
                if let Some(got) = got {
                    prop_assert_eq!(got.into_datum(), Datum::from_decimal(exact.expect("in range")));
                }
            }
            if let Some(order) = a.cmp_exact(b) {
                prop_assert_eq!(order, x.cmp(&y));
            }
            let whole = |i: i64| Fixed::whole(i);
            prop_assert_eq!(whole(a.mantissa).cmp_exact(whole(b.mantissa)), Some(a.mantissa.cmp(&b.mantissa)));
        }

        #[test]
        fn a_sum_is_exact_until_it_refuses(values in proptest::collection::vec(fixed(), 1..20)) {
            let mut sum = ExactSum::default();
            let mut decimal = Decimal::ZERO;
            for v in values {
                let before = sum;
                match decimal.checked_add(v.into_decimal()) {
                    // A decimal sum that is exact: the mantissa fits at the larger scale.
                    Some(d) if d.scale() == decimal.scale().max(v.into_decimal().scale()) => {
                        prop_assert!(sum.add(v), "{before:?} + {v:?}");
                        decimal = d;
                    }
                    _ => {
                        prop_assert!(!sum.add(v));
                        prop_assert_eq!(sum, before);
                        return Ok(());
                    }
                }
                prop_assert_eq!(sum.into_decimal(), decimal);
                prop_assert_eq!(sum.into_decimal().scale(), decimal.scale());
            }
        }

        #[test]
        fn normalizing_keeps_the_number_and_drops_trailing_zeros(a in fixed()) {
            let n = a.normalized();
            prop_assert_eq!(n.into_decimal(), a.into_decimal());
            prop_assert_eq!(n.into_decimal().scale(), a.into_decimal().normalize().scale());
        }
    }

    #[test]
    fn overflow_is_refused() {
        let big = Fixed { mantissa: i64::MAX, scale: 2 };
        assert_eq!(big.checked_add(big), None);
        assert_eq!(big.checked_mul(Fixed::whole(2)), None);
        assert_eq!(Fixed { mantissa: 1, scale: 20 }.checked_mul(Fixed { mantissa: 1, scale: 9 }), None);
        assert_eq!(Fixed::whole(1).checked_add(Fixed { mantissa: 1, scale: 19 }), None);
        let mut sum = ExactSum { sum: DECIMAL_LIMIT as i128 - 1, scale: 1 };
        assert!(!sum.add(Fixed { mantissa: 1, scale: 1 }));
        assert_eq!(sum.sum, DECIMAL_LIMIT as i128 - 1);
        let mut whole = ExactSum { sum: DECIMAL_LIMIT as i128 - 1, scale: 0 };
        assert!(!whole.add(Fixed::whole(1)));
        assert!(whole.add(Fixed::whole(-1)));
    }
}

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

    /// The value, in its one representation ([`Datum::Int`] when whole).
    #[inline]
    pub fn into_datum(self) -> Datum<'static> {
        if self.scale == 0 { Datum::Int(self.mantissa) } else { Datum::from_decimal(self.into_decimal()) }
    }

    #[inline]
    pub fn into_decimal(self) -> Decimal {
        Decimal::new(self.mantissa, u32::from(self.scale))
    }
}

/// A running sum of [`Fixed`] values, exact in 128 bits at the largest scale seen.
///
/// Stays below 2^96 in magnitude (what a `Decimal` holds) while its scale is above zero:
/// [`ExactSum::add`] refuses a value that would take it past, and the caller then moves
/// the sum into a `Decimal` ([`ExactSum::take_decimal`]) and goes on there, as a sum of
/// decimals always did. A whole-number sum may grow to the full 128 bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExactSum {
    pub sum: i128,
    pub scale: u8,
}

/// 2^96: the first magnitude a `Decimal`'s mantissa cannot hold.
const DECIMAL_LIMIT: i128 = 1 << 96;

impl ExactSum {
    /// Adds `value`; `false` (the sum unchanged) when the exact result would overflow.
    #[inline]
    pub fn add(&mut self, value: Fixed) -> bool {
        self.add_wide(i128::from(value.mantissa), value.scale)
    }

    /// Adds `mantissa / 10^scale`; `false` (the sum unchanged) on overflow.
    #[inline]
    pub fn add_wide(&mut self, mantissa: i128, scale: u8) -> bool {
        let (a, b, to) = if scale == self.scale {
            (self.sum, mantissa, scale)
        } else {
            let to = self.scale.max(scale);
            let (Some(a), Some(b)) = (rescale_wide(self.sum, self.scale, to), rescale_wide(mantissa, scale, to)) else {
                return false;
            };
            (a, b, to)
        };
        let Some(sum) = a.checked_add(b) else { return false };
        if to > 0 && sum.unsigned_abs() >= DECIMAL_LIMIT as u128 {
            return false;
        }
        *self = ExactSum { sum, scale: to };
        true
    }

    /// The sum as a decimal, leaving zero; `None` when it is too large for one (a
    /// whole-number sum past 2^96).
    pub fn take_decimal(&mut self) -> Option<Decimal> {
        let d = Decimal::try_from_i128_with_scale(self.sum, u32::from(self.scale)).ok()?;
        *self = ExactSum::default();
        Some(d)
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
        }

        #[test]
        fn a_sum_is_exact_until_it_refuses(values in proptest::collection::vec(fixed(), 1..20)) {
            let mut sum = ExactSum::default();
            let mut decimal = Some(Decimal::ZERO);
            for v in values {
                if !sum.add(v) {
                    return Ok(());
                }
                decimal = decimal.and_then(|d| d.checked_add(v.into_decimal()));
                let Some(d) = decimal else { return Ok(()) };
                let mut copy = sum;
                prop_assert_eq!(copy.take_decimal().map(Datum::from_decimal), Some(Datum::from_decimal(d)));
            }
        }
    }

    #[test]
    fn overflow_is_refused() {
        let big = Fixed { mantissa: i64::MAX, scale: 2 };
        assert_eq!(big.checked_add(big), None);
        assert_eq!(big.checked_mul(Fixed::whole(2)), None);
        assert_eq!(Fixed { mantissa: 1, scale: 20 }.checked_mul(Fixed { mantissa: 1, scale: 9 }), None);
        assert_eq!(Fixed::whole(1).checked_add(Fixed { mantissa: 1, scale: 19 }), None);
        let mut sum = ExactSum { sum: DECIMAL_LIMIT - 1, scale: 1 };
        assert!(!sum.add(Fixed { mantissa: 1, scale: 1 }));
        assert_eq!(sum.sum, DECIMAL_LIMIT - 1);
        let mut whole = ExactSum { sum: DECIMAL_LIMIT, scale: 0 };
        assert!(whole.add(Fixed::whole(1)));
        assert_eq!(whole.take_decimal(), None);
    }
}

//! DBMS_RANDOM: a seeded splitmix64 generator ([`RandomState`]; same seed, same
//! sequence, so a statement is reproducible from its seed), VALUE and STRING.

use super::*;

/// A seeded pseudo-random generator (splitmix64). Same seed → same sequence.
#[derive(Debug, Clone)]
pub struct RandomState {
    state: u64,
}

impl RandomState {
    pub fn new(seed: u64) -> Self {
        RandomState { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    #[cfg(test)]
    /// A number in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [0, n) (0 when n is 0).
    pub fn next_below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The splitmix64 finalizer: a bijection that spreads every input bit over the output.
pub(super) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// DBMS_RANDOM.VALUE: [0, 1) with 15 random decimal places; VALUE(lo, hi): [lo, hi).
pub(super) fn random_value(args: &[Datum<'_>], random: &mut RandomState) -> Result<Value> {
    const NAME: &str = "DBMS_RANDOM.VALUE";
    const PLACES: u64 = 1_000_000_000_000_000;
    let fraction = Decimal::new(i64::try_from(random.next_below(PLACES)).unwrap_or(0), 15);
    if args.is_empty() {
        return Ok(Datum::from_decimal(fraction));
    }
    let (Some(low), Some(high)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    let value = high
        .checked_sub(low)
        .and_then(|span| span.checked_mul(fraction))
        .and_then(|offset| low.checked_add(offset))
        .ok_or_else(|| overflow(NAME))?;
    // Decimal rounding can reach `high` when it has many more digits than the span.
    let value = if low < high && value >= high { low } else { value };
    Ok(Datum::from_decimal(value))
}

/// DBMS_RANDOM.STRING(opt, len): 'U' upper case letters, 'L' lower case, 'A' both, 'X'
/// upper case letters and digits, 'P' any printable ASCII; anything else (or NULL) is 'U'.
/// Lengths above 4000 give 4000 characters, as Oracle.
pub(super) fn random_string(args: &[Datum<'_>], random: &mut RandomState) -> Result<Value> {
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const PRINTABLE: &[u8] =
        b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
    let option = text(arg(args, 0)).and_then(|s| s.chars().next()).unwrap_or('U');
    let Some(len) = int_arg(arg(args, 1), "DBMS_RANDOM.STRING")? else { return Ok(Datum::Null) };
    let alphabet = match option.to_ascii_uppercase() {
        'L' => LOWER,
        'A' => ALPHA,
        'X' => ALNUM,
        'P' => PRINTABLE,
        _ => UPPER,
    };
    let len = usize::try_from(len.clamp(0, MAX_RANDOM_STRING)).unwrap_or(0);
    let s: String = (0..len)
        .map(|_| {
            let i = usize::try_from(random.next_below(alphabet.len() as u64)).unwrap_or(0);
            char::from(alphabet.get(i).copied().unwrap_or(b'A'))
        })
        .collect();
    Ok(Datum::string(s))
}

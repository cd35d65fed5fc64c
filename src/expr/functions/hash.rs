//! ORA_HASH: an FNV-1a hash of a value's canonical bytes, bucketed; whole numbers take
//! a fast path ([`WholeNumberHash`]) that the batch evaluator uses.

use super::*;

/// 64-bit FNV-1a.
pub(super) struct Fnv(u64);

impl Fnv {
    /// The state after the seed, where every ORA_HASH starts.
    pub(super) fn seeded(seed: i64) -> Fnv {
        let mut h = Fnv(0xCBF2_9CE4_8422_2325);
        h.write(&seed.to_le_bytes());
        h
    }

    /// The hash, mixed, reduced to `0..=max_bucket` (which is in `0..=u32::MAX`).
    pub(super) fn bucket(&self, max_bucket: i64) -> i64 {
        let buckets = u64::try_from(max_bucket).unwrap_or(0) + 1;
        i64::try_from(mix64(self.0) % buckets).unwrap_or(0)
    }

    /// A whole number's canonical bytes: a number of scale 0 and its 128-bit mantissa.
    pub(super) fn write_whole_number(&mut self, i: i64) {
        self.write(&[b'N', 0]);
        self.write(&i128::from(i).to_le_bytes());
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(FNV_PRIME);
        }
    }
}

/// ORA_HASH(expr [, max_bucket [, seed]]): FNV-1a over the seed and the value's canonical
/// bytes, finished by the splitmix64 mixer, reduced to 0..=max_bucket. Deterministic, but
/// the values differ from Oracle's.
pub(super) fn ora_hash(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "ORA_HASH";
    let value = arg(args, 0);
    if value.is_null() {
        return Ok(Datum::Null);
    }
    let (Some(max_bucket), Some(seed)) = (int_or(args, 1, ORA_HASH_LIMIT, NAME)?, int_or(args, 2, 0, NAME)?) else {
        return Ok(Datum::Null);
    };
    if let Some(v) = [max_bucket, seed].into_iter().find(|v| !(0..=ORA_HASH_LIMIT).contains(v)) {
        return Err(out_of_range(NAME, v));
    }
    let mut h = Fnv::seeded(seed);
    match value {
        Datum::Null => {}
        Datum::Int(i) => h.write_whole_number(*i),
        Datum::Num(d) => {
            let d = d.normalize();
            h.write(&[b'N', u8::try_from(d.scale()).unwrap_or(u8::MAX)]);
            h.write(&d.mantissa().to_le_bytes());
        }
        Datum::Str(s) => {
            h.write(b"S");
            h.write(s.as_bytes());
        }
        Datum::Date(v) | Datum::Timestamp(v) | Datum::YearMonth(v) | Datum::DaySecond(v) => {
            let tag = match value {
                Datum::Date(_) => b"D",
                Datum::Timestamp(_) => b"T",
                Datum::YearMonth(_) => b"Y",
                _ => b"I",
            };
            h.write(tag);
            h.write(&v.to_le_bytes());
        }
    }
    Ok(Datum::Int(h.bucket(max_bucket)))
}

/// Largest bucket and seed ORA_HASH accepts (and the default bucket).
pub(super) const ORA_HASH_LIMIT: i64 = u32::MAX as i64;

/// [`ora_hash`] of a whole number, with whole-number bucket and seed: `None` when they
/// are out of range (the general path reports that).
pub(super) fn ora_hash_whole(value: i64, max_bucket: i64, seed: i64) -> Option<i64> {
    Some(WholeNumberHash::new(max_bucket, seed)?.hash(value))
}

/// ORA_HASH of whole numbers with one bucket count and seed, prepared once: the hash
/// state after the seed and a whole number's two leading bytes is kept, and the zero
/// bytes that end a non-negative number's 16 canonical bytes are one multiplication
/// (an FNV-1a step of a zero byte multiplies by the prime, so `k` of them multiply by
/// its `k`-th power). Gives exactly what ORA_HASH gives a whole number.
#[derive(Debug, Clone, Copy)]
pub struct WholeNumberHash {
    /// The FNV state after the seed and the tag bytes of a whole number.
    start: u64,
    max_bucket: i64,
}

/// The 64-bit FNV prime.
pub(super) const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// `FNV_PRIME` to the power `k`, for `k` in `0..=16`.
pub(super) const FNV_PRIME_POWERS: [u64; 17] = {
    let mut powers = [1u64; 17];
    let mut k = 1;
    while k < 17 {
        powers[k] = powers[k - 1].wrapping_mul(FNV_PRIME);
        k += 1;
    }
    powers
};

impl WholeNumberHash {
    /// `None` when the bucket or seed is out of range (the general path reports that).
    pub fn new(max_bucket: i64, seed: i64) -> Option<WholeNumberHash> {
        if !(0..=ORA_HASH_LIMIT).contains(&max_bucket) || !(0..=ORA_HASH_LIMIT).contains(&seed) {
            return None;
        }
        let mut h = Fnv::seeded(seed);
        h.write(&[b'N', 0]);
        Some(WholeNumberHash { start: h.0, max_bucket })
    }

    /// ORA_HASH(`value`, max_bucket, seed).
    #[inline]
    pub fn hash(&self, value: i64) -> i64 {
        let mut h = Fnv(self.start);
        if value < 0 {
            h.write(&i128::from(value).to_le_bytes());
        } else {
            // Bytes past the significant ones are zero, up to the 16th.
            let significant = (64 - value.leading_zeros() as usize).div_ceil(8);
            h.write(&value.to_le_bytes()[..significant]);
            h.0 = h.0.wrapping_mul(FNV_PRIME_POWERS[16 - significant]);
        }
        h.bucket(self.max_bucket)
    }
}

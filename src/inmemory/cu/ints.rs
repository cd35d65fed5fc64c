//! Encoding a unit of integers: frame of reference at the packing asked for, or, under
//! [`Packing::Smallest`], whichever of tight frame of reference, tight dictionary and
//! run-length encoding takes the fewest bytes.
//!
//! Invariants: the frame of reference is based at the smallest value, so every code fits
//! in `bits_for(max - min)` bits; a column with no non-NULL value is `Body::AllNull`.

use super::codes::{Codes, Lanes, Runs, bits_for, count_runs, fill_nulls};
use super::domain::{Domain, offset};
use super::{Body, Packing};
use crate::inmemory::area::InMemoryArea;
use crate::inmemory::bitmap::Bitmap;

/// The NULL rows of `values` as set bits; `None` when there are none.
pub(super) fn null_bitmap<T>(values: &[Option<T>]) -> Option<Bitmap> {
    values.iter().any(Option::is_none).then(|| Bitmap::from_fn(values.len(), |i| values[i].is_none()))
}

pub(super) fn build_ints(values: &[Option<i64>], packing: Packing, area: Option<&InMemoryArea>) -> Body {
    let Some((min, max)) = values.iter().flatten().fold(None, |acc, &v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    }) else {
        return Body::AllNull;
    };
    let offsets = fill_nulls(values, |v| offset(min, v));
    let domain = Domain::IntOffsets { base: min, max };
    let bits = bits_for(offset(min, max));
    if packing != Packing::Smallest {
        return Body::Encoded { domain, codes: Codes::Lanes(Lanes::new(&offsets, bits, packing, area)) };
    }
    smallest_ints(values, domain, offsets, area)
}

/// The smallest of tight frame of reference, tight dictionary and run-length encoding; ties
/// go to the faster scan (in that order).
fn smallest_ints(values: &[Option<i64>], for_domain: Domain, offsets: Vec<u64>, area: Option<&InMemoryArea>) -> Body {
    let rows = offsets.len();
    let for_bits = bits_for(for_domain.max_code());
    let for_bytes = Lanes::bytes_for(rows, for_bits, Packing::Tight);
    let runs = count_runs(&offsets);
    let rle_bytes = runs * size_of::<u32>() + Lanes::bytes_for(runs, for_bits, Packing::Tight);
    let mut dict: Vec<i64> = values.iter().flatten().copied().collect();
    dict.sort_unstable();
    dict.dedup();
    let dict_bits = bits_for(dict.len() as u64 - 1);
    let dict_bytes = size_of_val(dict.as_slice()) + Lanes::bytes_for(rows, dict_bits, Packing::Tight);
    if for_bytes <= dict_bytes.min(rle_bytes) {
        let codes = Codes::Lanes(Lanes::new(&offsets, for_bits, Packing::Tight, area));
        Body::Encoded { domain: for_domain, codes }
    } else if dict_bytes <= rle_bytes {
        dict.shrink_to_fit();
        let codes = fill_nulls(values, |v| dict.binary_search(&v).expect("the dictionary holds every value") as u64);
        let codes = Codes::Lanes(Lanes::new(&codes, dict_bits, Packing::Tight, area));
        Body::Encoded { domain: Domain::IntDict(dict), codes }
    } else {
        Body::Encoded { domain: for_domain, codes: Codes::Runs(Runs::new(&offsets, for_bits, area)) }
    }
}

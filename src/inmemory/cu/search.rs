//! Binary search by position over a sorted dictionary (of integers or of keys): the
//! first position a prefix predicate fails at, and the codes between two bounds. Used by
//! the domains and the key dictionary alike.

/// The inclusive range of codes in a sorted dictionary of `n` entries that lie between two
/// bounds: `below(i)` holds for the entries under the lower bound, `within(i)` for those
/// up to the upper bound (each true on a prefix); `None` when no entry is between.
pub(super) fn positions(n: usize, below: impl Fn(usize) -> bool, within: impl Fn(usize) -> bool) -> Option<(u64, u64)> {
    let start = partition_point(n, below);
    let end = partition_point(n, within);
    (start < end).then(|| (start as u64, end as u64 - 1))
}

/// The first `i` in `0..n` where `pred(i)` is false, `pred` being true for a prefix.
pub(super) fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

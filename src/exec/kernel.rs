//! Row kernels: the whole per-row work of a simple plan, done by the full scan while it
//! walks each row, as Oracle's specialised scan functions (the `kdstf...` family) filter
//! and count rows inside the scan loop.
//!
//! [`CountKernel`] takes the plan shape `TABLE ACCESS FULL → [FILTER of column-vs-integer
//! comparisons on NUMBER columns] → SORT AGGREGATE of COUNT(*) / COUNT(column)`. Each
//! comparison is compiled to a range test on the stored integer (`cust_id > 0` is
//! `1 <= cust_id <= i64::MAX`; `<>` is the complement of a one-value range), so a row
//! costs one subtraction and one unsigned compare per term, then one NULL test per
//! COUNT(column). The aggregate stage receives the totals when the scan ends. A row it
//! cannot decide (a value that is not a small whole number) is handed back to the
//! general pipeline, which filters and counts it the usual way, so results never depend
//! on which path a row took.

use super::Stage;
use crate::access::{RowAccess, WalkedRow};
use crate::exec::aggregate::CountShape;
use crate::sql::expr::CmpOp;
use crate::types::encoding::PayloadKind;

/// Filters and counts rows inside the scan loop.
pub struct CountKernel {
    /// The filter's terms; a row passes when all hold.
    terms: Box<[RangeTerm]>,
    /// What each aggregate call counts, in call order.
    counts: Vec<CountShape>,
    /// Rows that passed the filter.
    passed: u64,
    /// The columns some COUNT(column) counts, and per column the passing rows where it
    /// is not NULL.
    counted_columns: Box<[usize]>,
    not_null: Box<[u64]>,
}

/// `lo <= column <= hi`, or its complement when `outside`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RangeTerm {
    column: usize,
    lo: i64,
    hi: i64,
    outside: bool,
}

impl RangeTerm {
    /// The range form of `column op k`.
    fn new(column: usize, op: CmpOp, k: i64) -> RangeTerm {
        let (lo, hi, outside) = match op {
            CmpOp::Eq => (k, k, false),
            CmpOp::NotEq => (k, k, true),
            // `v < i64::MIN` holds for no v: the complement of the whole range.
            CmpOp::Lt => k.checked_sub(1).map_or((i64::MIN, i64::MAX, true), |hi| (i64::MIN, hi, false)),
            CmpOp::LtEq => (i64::MIN, k, false),
            CmpOp::Gt => k.checked_add(1).map_or((i64::MIN, i64::MAX, true), |lo| (lo, i64::MAX, false)),
            CmpOp::GtEq => (k, i64::MAX, false),
        };
        RangeTerm { column, lo, hi, outside }
    }

    #[inline(always)]
    fn holds(&self, v: i64) -> bool {
        let inside = (v.wrapping_sub(self.lo) as u64) <= (self.hi.wrapping_sub(self.lo) as u64);
        inside != self.outside
    }
}

/// What the kernel did with a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelVerdict {
    /// Filtered out or counted.
    Done,
    /// Not decidable here: the general pipeline must take the row.
    Fallback,
}

impl CountKernel {
    /// A kernel for `stages` over rows whose columns decode as `kinds`, if the stages
    /// have the shape this kernel runs.
    pub fn for_stages(stages: &[Stage<'_>], kinds: &[PayloadKind]) -> Option<CountKernel> {
        let (terms, rest) = match stages.split_first()? {
            (Stage::Filter(f), rest) => (f.int_comparisons()?.terms(), rest),
            _ => (&[][..], stages),
        };
        if terms.iter().any(|&(col, _, _)| kinds.get(col) != Some(&PayloadKind::Number)) {
            return None;
        }
        let Some(Stage::Aggregate(agg)) = rest.first() else { return None };
        let counts = agg.count_shapes()?;
        let mut counted_columns: Vec<usize> = counts
            .iter()
            .filter_map(|s| match *s {
                CountShape::NotNull(col) => Some(col),
                CountShape::Rows => None,
            })
            .collect();
        counted_columns.sort_unstable();
        counted_columns.dedup();
        Some(CountKernel {
            terms: terms.iter().map(|&(col, op, k)| RangeTerm::new(col, op, k)).collect(),
            counts,
            passed: 0,
            not_null: vec![0; counted_columns.len()].into(),
            counted_columns: counted_columns.into(),
        })
    }

    /// Filters and counts one row.
    #[inline(always)]
    pub fn apply(&mut self, row: WalkedRow<'_>) -> KernelVerdict {
        for term in &*self.terms {
            match row.int_or_null(term.column) {
                Ok(Some(v)) if term.holds(v) => {}
                // Failed, or compared a NULL (UNKNOWN does not pass a filter).
                Ok(_) => return KernelVerdict::Done,
                Err(()) => return KernelVerdict::Fallback,
            }
        }
        self.passed += 1;
        for (&col, n) in self.counted_columns.iter().zip(&mut *self.not_null) {
            *n += u64::from(!row.is_null(col));
        }
        KernelVerdict::Done
    }

    /// The totals, one per aggregate call in call order.
    pub fn totals(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|shape| match *shape {
                CountShape::Rows => self.passed,
                CountShape::NotNull(col) => {
                    let at = self.counted_columns.binary_search(&col).expect("every counted column is listed");
                    self.not_null[at]
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn op_strategy() -> impl Strategy<Value = CmpOp> {
        prop_oneof![
            Just(CmpOp::Eq),
            Just(CmpOp::NotEq),
            Just(CmpOp::Lt),
            Just(CmpOp::LtEq),
            Just(CmpOp::Gt),
            Just(CmpOp::GtEq)
        ]
    }

    fn edge_or_any() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(i64::MIN),
            Just(i64::MIN + 1),
            Just(-1i64),
            Just(0i64),
            Just(1i64),
            Just(i64::MAX - 1),
            Just(i64::MAX),
            any::<i64>(),
            -3i64..3
        ]
    }

    proptest! {
        /// The range form of a comparison agrees with the comparison for every value,
        /// including the ends of the i64 range.
        #[test]
        fn range_term_agrees_with_comparison(op in op_strategy(), k in edge_or_any(), v in edge_or_any()) {
            prop_assert_eq!(RangeTerm::new(0, op, k).holds(v), op.holds(v.cmp(&k)));
        }
    }
}

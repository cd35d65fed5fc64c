//! FILTER: passes on the rows for which a condition is TRUE.
//!
//! A condition that is a conjunction of `column <op> whole-number` comparisons, the
//! common shape of a scan predicate, is also compiled into [`IntComparisons`]: one
//! [`RangeTerm`] per comparison (`cust_id > 0` is `1 <= cust_id <= i64::MAX`; `<>` is the
//! arc of the wrapping integer circle around the value), tested on the stored integers, a block of rows at a
//! time here and row by row in the scan's count kernel. Row by row, and for any other
//! condition or a value that is not a small whole number, the general evaluator decides
//! (it reads stored integers directly too). Rows a columnar scan has already tested
//! against every conjunct on a unit's codes pass unchecked
//! ([`FilterStage::set_checked_upstream`]).

use super::downstream::{Downstream, Push};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::expr::{CmpOp, Expr};
use crate::types::Datum;

pub struct FilterStage {
    pub predicate: Expr,
    compiled: Option<IntComparisons>,
    /// The rows pushed now are known to meet the condition (a columnar scan ran every
    /// conjunct on a unit's codes): they pass unchecked.
    checked_upstream: bool,
}

/// `col op k AND col op k ...` over whole numbers, as range terms.
#[derive(Debug, Clone)]
pub struct IntComparisons {
    terms: Vec<RangeTerm>,
}

/// `column - lo <= span`, the difference taken on the wrapping integer circle and compared
/// unsigned: one arc of the circle, which `lo <= column <= hi` is and so is its complement
/// (`column <> k` is the arc from `k + 1` round to `k - 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeTerm {
    pub column: usize,
    lo: i64,
    span: u64,
}

impl RangeTerm {
    /// The range form of `column op k`; `None` for a comparison no value meets
    /// (`< i64::MIN`, `> i64::MAX`), which no arc is.
    pub fn new(column: usize, op: CmpOp, k: i64) -> Option<RangeTerm> {
        let (lo, hi) = match op {
            CmpOp::Eq => (k, k),
            CmpOp::NotEq => (k.wrapping_add(1), k.wrapping_sub(1)),
            CmpOp::Lt => (i64::MIN, k.checked_sub(1)?),
            CmpOp::LtEq => (i64::MIN, k),
            CmpOp::Gt => (k.checked_add(1)?, i64::MAX),
            CmpOp::GtEq => (k, i64::MAX),
        };
        Some(RangeTerm { column, lo, span: hi.wrapping_sub(lo) as u64 })
    }

    /// The term as eight-row lanes test it.
    pub fn lane_filter(&self) -> crate::access::lanes::LaneFilter {
        crate::access::lanes::LaneFilter::new(self.column, self.lo, self.span)
    }

    /// Whether the comparison holds for `v`: one subtraction and one unsigned compare.
    #[inline(always)]
    pub fn holds(&self, v: i64) -> bool {
        (v.wrapping_sub(self.lo) as u64) <= self.span
    }
}

impl IntComparisons {
    fn compile(e: &Expr) -> Option<IntComparisons> {
        let mut terms = Vec::new();
        Self::collect(e, &mut terms).then_some(IntComparisons { terms })
    }

    fn collect(e: &Expr, terms: &mut Vec<RangeTerm>) -> bool {
        match e {
            Expr::And(l, r) => Self::collect(l, terms) && Self::collect(r, terms),
            Expr::Compare { op, left, right } => match (&**left, &**right) {
                // A comparison no value meets is left to the general evaluator.
                (Expr::Column(i), Expr::Literal(Datum::Int(k))) => match RangeTerm::new(*i, *op, *k) {
                    Some(term) => {
                        terms.push(term);
                        true
                    }
                    None => false,
                },
                _ => false,
            },
            _ => false,
        }
    }

    /// The terms, all of which a passing row meets.
    pub fn terms(&self) -> &[RangeTerm] {
        &self.terms
    }

    /// Narrows `selection` term by term in tight loops, keeping the rows that meet every
    /// term (NULL is UNKNOWN and drops the row). Returns false if some selected value is
    /// not a small whole number: the selection then holds every row not yet known to
    /// fail, and the caller decides those the general way.
    fn filter_batch(&self, batch: &BlockBatch<'_>, selection: &mut Vec<u16>) -> bool {
        if self.terms.iter().any(|t| !batch.is_number_column(t.column)) {
            return false;
        }
        self.terms.iter().all(|term| narrow(batch, selection, term))
    }
}

/// Keeps in `selection` the rows of `batch` whose column `term.column` meets `term`;
/// stops at a value that is not a small whole number (false), keeping it and the rows
/// after it.
#[inline(always)]
fn narrow(batch: &BlockBatch<'_>, selection: &mut Vec<u16>, term: &RangeTerm) -> bool {
    let mut kept = 0;
    for k in 0..selection.len() {
        let i = selection[k];
        match batch.int_or_null(i as usize, term.column) {
            Ok(v) => {
                selection[kept] = i;
                kept += usize::from(v.is_some_and(|v| term.holds(v)));
            }
            Err(()) => {
                selection.copy_within(k.., kept);
                selection.truncate(kept + selection.len() - k);
                return false;
            }
        }
    }
    selection.truncate(kept);
    true
}

impl FilterStage {
    /// The condition as integer range terms, when it is only that.
    pub fn int_comparisons(&self) -> Option<&IntComparisons> {
        self.compiled.as_ref()
    }

    pub fn new(predicate: Expr) -> FilterStage {
        FilterStage { compiled: IntComparisons::compile(&predicate), predicate, checked_upstream: false }
    }

    /// Whether the rows pushed from now on are known to meet the condition already.
    pub fn set_checked_upstream(&mut self, checked: bool) {
        self.checked_upstream = checked;
    }

    /// Keeps in `selection` the rows of `batch` for which the condition is TRUE.
    #[inline]
    pub fn filter_batch(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        f: &mut FunctionContext,
    ) -> Result<()> {
        if let Some(c) = &self.compiled
            && c.filter_batch(batch, selection)
        {
            return Ok(());
        }
        let mut kept = 0;
        for k in 0..selection.len() {
            let i = selection[k];
            let pass = self.predicate.eval_condition(&batch.row(i as usize), f)? == Some(true);
            selection[kept] = i;
            kept += usize::from(pass);
        }
        selection.truncate(kept);
        Ok(())
    }
}

impl Push for FilterStage {
    #[inline]
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if self.checked_upstream || self.predicate.eval_condition(row, f)? == Some(true) {
            rest.push(row, f)
        } else {
            Ok(Flow::Continue)
        }
    }

    /// Narrows the selection, then pushes what is left on.
    #[inline]
    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.filter_batch(batch, selection, f)?;
        rest.push_batch(batch, selection, f)
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
            let term = RangeTerm::new(0, op, k);
            prop_assert_eq!(term.is_some_and(|t| t.holds(v)), op.holds(v.cmp(&k)));
        }
    }
}

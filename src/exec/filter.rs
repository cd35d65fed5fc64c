//! FILTER: passes on the rows for which a condition is TRUE.
//!
//! A condition that is a conjunction of `column <op> whole-number` comparisons, the
//! common shape of a scan predicate, is also compiled into [`IntComparisons`], which reads
//! the stored integers directly; any other condition, or a value that is not a small whole
//! number, goes through the general evaluator.

use super::pipeline::{Stage, push};
use crate::access::full_scan::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::sql::expr::{CmpOp, Expr};
use crate::sql::functions::FunctionContext;
use crate::types::Datum;

pub struct FilterStage {
    pub predicate: Expr,
    compiled: Option<IntComparisons>,
}

/// `col op k AND col op k ...` over whole numbers.
struct IntComparisons {
    terms: Vec<(usize, CmpOp, i64)>,
}

impl IntComparisons {
    fn compile(e: &Expr) -> Option<IntComparisons> {
        let mut terms = Vec::new();
        Self::collect(e, &mut terms).then_some(IntComparisons { terms })
    }

    fn collect(e: &Expr, terms: &mut Vec<(usize, CmpOp, i64)>) -> bool {
        match e {
            Expr::And(l, r) => Self::collect(l, terms) && Self::collect(r, terms),
            Expr::Compare { op, left, right } => match (&**left, &**right) {
                (Expr::Column(i), Expr::Literal(Datum::Int(k))) => {
                    terms.push((*i, *op, *k));
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// `Some(truth)` when every column held a small whole number, else `None`.
    #[inline(always)]
    fn eval<R: RowAccess + ?Sized>(&self, row: &R) -> Option<bool> {
        let mut all = true;
        for &(col, op, k) in &self.terms {
            let v = row.small_int(col)?;
            all &= op.holds(v.cmp(&k));
        }
        Some(all)
    }
}

impl IntComparisons {
    /// As [`IntComparisons::eval`], for row `i` of a block batch.
    #[inline(always)]
    fn eval_in_batch(&self, batch: &BlockBatch<'_>, i: usize) -> Option<bool> {
        let mut all = true;
        for &(col, op, k) in &self.terms {
            let v = batch.small_int(i, col)?;
            all &= op.holds(v.cmp(&k));
        }
        Some(all)
    }
}

impl FilterStage {
    pub fn new(predicate: Expr) -> FilterStage {
        FilterStage { compiled: IntComparisons::compile(&predicate), predicate }
    }

    #[inline]
    pub fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        let pass = match self.compiled.as_ref().and_then(|c| c.eval(row)) {
            Some(pass) => pass,
            None => self.predicate.eval_condition(row, f)? == Some(true),
        };
        if pass { push(rest, row, f) } else { Ok(Flow::Continue) }
    }

    /// Keeps in `selection` the rows of `batch` for which the condition is TRUE.
    #[inline]
    pub fn filter_batch(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        f: &mut FunctionContext,
    ) -> Result<()> {
        let mut kept = 0;
        for k in 0..selection.len() {
            let i = selection[k];
            let fast = self.compiled.as_ref().and_then(|c| c.eval_in_batch(batch, i as usize));
            let pass = match fast {
                Some(pass) => pass,
                None => self.predicate.eval_condition(&batch.row(i as usize), f)? == Some(true),
            };
            selection[kept] = i;
            kept += usize::from(pass);
        }
        selection.truncate(kept);
        Ok(())
    }
}

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
    /// Scratch verdicts of the batch filter, reused block after block.
    verdicts: Vec<bool>,
}

/// `col op k AND col op k ...` over whole numbers.
#[derive(Debug, Clone)]
pub struct IntComparisons {
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

    /// The terms: column, operator, whole number.
    pub fn terms(&self) -> &[(usize, CmpOp, i64)] {
        &self.terms
    }

    /// Whether the row passes: `Some(true)` if every comparison holds, `Some(false)` if
    /// one fails or compares a NULL (UNKNOWN does not pass a filter), `None` if a value is
    /// not a small whole number (the caller evaluates the condition the general way).
    #[inline(always)]
    pub fn eval<R: RowAccess + ?Sized>(&self, row: &R) -> Option<bool> {
        for &(col, op, k) in &self.terms {
            match row.small_int(col) {
                Some(v) if op.holds(v.cmp(&k)) => {}
                Some(_) => return Some(false),
                None if row.is_null(col) => return Some(false),
                None => return None,
            }
        }
        Some(true)
    }
}

impl IntComparisons {
    /// Narrows `selection` term by term in tight loops. Returns false, leaving the
    /// selection as it was, if some selected value is not a small whole number (the caller
    /// then evaluates row by row); NULL is UNKNOWN and drops the row.
    fn filter_batch(&self, batch: &BlockBatch<'_>, selection: &mut Vec<u16>, verdicts: &mut Vec<bool>) -> bool {
        if self.terms.iter().any(|&(col, _, _)| !batch.is_number_column(col)) {
            return false;
        }
        verdicts.clear();
        verdicts.resize(selection.len(), true);
        for &(col, op, k) in &self.terms {
            // One loop per operator, so the comparison is chosen once per batch.
            let complete = match op {
                CmpOp::Eq => narrow(batch, selection, verdicts, col, |v| v == k),
                CmpOp::NotEq => narrow(batch, selection, verdicts, col, |v| v != k),
                CmpOp::Lt => narrow(batch, selection, verdicts, col, |v| v < k),
                CmpOp::LtEq => narrow(batch, selection, verdicts, col, |v| v <= k),
                CmpOp::Gt => narrow(batch, selection, verdicts, col, |v| v > k),
                CmpOp::GtEq => narrow(batch, selection, verdicts, col, |v| v >= k),
            };
            if !complete {
                return false;
            }
        }
        let mut kept = 0;
        for k in 0..selection.len() {
            selection[kept] = selection[k];
            kept += usize::from(verdicts[k]);
        }
        selection.truncate(kept);
        true
    }
}

/// Clears the verdict of every selected row of `batch` whose column `col` is NULL or
/// fails `test`; false if a value is not a small whole number.
#[inline(always)]
fn narrow(
    batch: &BlockBatch<'_>,
    selection: &[u16],
    verdicts: &mut [bool],
    col: usize,
    test: impl Fn(i64) -> bool,
) -> bool {
    for (keep, &i) in verdicts.iter_mut().zip(selection) {
        match batch.int_or_null(i as usize, col) {
            Ok(Some(v)) => *keep &= test(v),
            Ok(None) => *keep = false,
            Err(()) => return false,
        }
    }
    true
}

impl FilterStage {
    /// The condition as `column op integer` terms, when it is only that.
    pub fn int_comparisons(&self) -> Option<&IntComparisons> {
        self.compiled.as_ref()
    }

    pub fn new(predicate: Expr) -> FilterStage {
        FilterStage { compiled: IntComparisons::compile(&predicate), predicate, verdicts: Vec::new() }
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
        if let Some(c) = &self.compiled
            && c.filter_batch(batch, selection, &mut self.verdicts)
        {
            return Ok(());
        }
        let mut kept = 0;
        for k in 0..selection.len() {
            let i = selection[k];
            let row = batch.row(i as usize);
            let pass = match self.compiled.as_ref().and_then(|c| c.eval(&row)) {
                Some(pass) => pass,
                None => self.predicate.eval_condition(&row, f)? == Some(true),
            };
            selection[kept] = i;
            kept += usize::from(pass);
        }
        selection.truncate(kept);
        Ok(())
    }
}

//! FILTER: passes on the rows for which a condition is TRUE.

use super::pipeline::{Stage, push};
use crate::access::RowAccess;
use crate::access::full_scan::Flow;
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::functions::FunctionContext;

pub struct FilterStage {
    pub predicate: Expr,
}

impl FilterStage {
    #[inline]
    pub fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if self.predicate.eval_condition(row, f)? == Some(true) { push(rest, row, f) } else { Ok(Flow::Continue) }
    }
}

//! Projection: computes the output expressions of each row into an owned row.

use super::pipeline::{Stage, push_owned};
use crate::access::RowAccess;
use crate::access::full_scan::Flow;
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::functions::FunctionContext;
use crate::types::Value;

pub struct ProjectStage {
    pub exprs: Vec<Expr>,
}

impl ProjectStage {
    pub fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        let out: Vec<Value> =
            self.exprs.iter().map(|e| e.eval(row, f).map(|v| v.into_owned())).collect::<Result<_>>()?;
        push_owned(rest, out, f)
    }
}

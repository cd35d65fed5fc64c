//! COUNT: numbers the rows that passed the WHERE clause (ROWNUM), appending the number
//! as a column after the source's `width` columns.

use super::downstream::{Downstream, Push, owned_prefix};
use crate::access::Flow;
use crate::access::RowAccess;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::types::Datum;

pub struct RownumStage {
    /// Columns of the source row; ROWNUM becomes column `width`.
    pub width: usize,
    /// Rows numbered so far (the last ROWNUM given).
    pub next: i64,
}

impl Push for RownumStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.next += 1;
        let mut out = owned_prefix(row, self.width)?;
        out.push(Datum::Int(self.next));
        rest.push_owned(out, f)
    }
}

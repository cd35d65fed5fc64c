//! COUNT STOPKEY and FETCH FIRST / LIMIT: skips `offset` rows, passes `limit` rows, then
//! stops the source.

use super::pipeline::{Stage, push};
use crate::access::RowAccess;
use crate::access::full_scan::Flow;
use crate::error::Result;
use crate::sql::functions::FunctionContext;

pub struct LimitStage {
    pub offset: u64,
    pub limit: Option<u64>,
    pub seen: u64,
}

impl LimitStage {
    pub fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.seen += 1;
        if self.seen <= self.offset {
            return Ok(Flow::Continue);
        }
        let passed = self.seen - self.offset;
        if self.limit.is_some_and(|l| passed > l) {
            return Ok(Flow::Stop);
        }
        let flow = push(rest, row, f)?;
        if self.limit == Some(passed) { Ok(Flow::Stop) } else { Ok(flow) }
    }

    /// Whether this limit lets no row through at all.
    pub fn is_empty(&self) -> bool {
        self.limit == Some(0)
    }
}

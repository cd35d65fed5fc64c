//! COUNT STOPKEY and FETCH FIRST / LIMIT: skips `offset` rows, passes `limit` rows, then
//! stops the source.

use super::downstream::{Downstream, Push};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::functions::FunctionContext;

pub struct LimitStage {
    pub offset: u64,
    pub limit: Option<u64>,
    /// Rows skipped so far (at most `offset`).
    pub skipped: u64,
    /// Rows passed on so far (at most `limit`).
    pub passed: u64,
}

impl LimitStage {
    pub fn new(offset: u64, limit: Option<u64>) -> LimitStage {
        LimitStage { offset, limit, skipped: 0, passed: 0 }
    }

    fn full(&self) -> bool {
        self.limit.is_some_and(|l| self.passed >= l)
    }

    /// `flow`, the answer of the stages after this one, or stop once the limit is reached.
    fn stop_when_full(&self, flow: Flow) -> Flow {
        if self.full() { Flow::Stop } else { flow }
    }
}

impl Push for LimitStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if self.skipped < self.offset {
            self.skipped += 1;
            return Ok(Flow::Continue);
        }
        if self.full() {
            return Ok(Flow::Stop);
        }
        self.passed += 1;
        let flow = rest.push(row, f)?;
        Ok(self.stop_when_full(flow))
    }

    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        let skip = (self.offset - self.skipped).min(selection.len() as u64);
        self.skipped += skip;
        selection.drain(..skip as usize);
        if let Some(l) = self.limit {
            selection.truncate((l - self.passed.min(l)) as usize);
        }
        if selection.is_empty() {
            return Ok(self.stop_when_full(Flow::Continue));
        }
        self.passed += selection.len() as u64;
        let flow = rest.push_batch(batch, selection, f)?;
        Ok(self.stop_when_full(flow))
    }
}

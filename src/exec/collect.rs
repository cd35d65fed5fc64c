//! The end of every pipeline: keeps the first `visible` columns of each row as the
//! statement's result (the columns after them only carried sort keys).

use super::downstream::{Downstream, Push, hold, hold_owned};
use crate::access::Flow;
use crate::access::RowAccess;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::types::Value;

pub struct CollectStage {
    pub visible: usize,
    rows: Vec<Vec<Value>>,
}

impl CollectStage {
    pub fn new(visible: usize) -> CollectStage {
        CollectStage { visible, rows: Vec::new() }
    }

    /// The rows kept so far, leaving none.
    pub fn take_rows(&mut self) -> Vec<Vec<Value>> {
        std::mem::take(&mut self.rows)
    }
}

impl Push for CollectStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold(&mut self.rows, row, self.visible)
    }

    /// Keeps a row built upstream, without copying its values.
    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        row: Vec<Value>,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold_owned(&mut self.rows, row, self.visible)
    }
}

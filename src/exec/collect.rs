//! The end of every pipeline: keeps the first `visible` columns of each row as the
//! statement's result (the columns after them only carried sort keys).

use super::pipeline::owned_prefix;
use crate::access::Flow;
use crate::access::RowAccess;
use crate::error::Result;
use crate::types::Value;

pub struct CollectStage {
    pub visible: usize,
    rows: Vec<Vec<Value>>,
}

impl CollectStage {
    pub fn new(visible: usize) -> CollectStage {
        CollectStage { visible, rows: Vec::new() }
    }

    pub fn push<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<Flow> {
        self.rows.push(owned_prefix(row, self.visible)?);
        Ok(Flow::Continue)
    }

    /// Keeps a row built upstream, without copying its values.
    pub fn push_owned(&mut self, mut row: Vec<Value>) -> Result<Flow> {
        row.truncate(self.visible);
        self.rows.push(row);
        Ok(Flow::Continue)
    }

    /// The rows kept so far, leaving none.
    pub fn take_rows(&mut self) -> Vec<Vec<Value>> {
        std::mem::take(&mut self.rows)
    }
}

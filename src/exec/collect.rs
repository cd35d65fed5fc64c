//! The end of every pipeline: keeps the first `visible` columns of each row as the
//! statement's result (the columns after them only carried sort keys).

use crate::access::RowAccess;
use crate::access::full_scan::Flow;
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
        let out = (0..self.visible).map(|i| row.column(i).map(|v| v.into_owned())).collect::<Result<_>>()?;
        self.rows.push(out);
        Ok(Flow::Continue)
    }

    pub fn into_rows(self) -> Vec<Vec<Value>> {
        self.rows
    }
}

//! Projection: computes the output expressions of each row. A row bound for a sink
//! (INSERT ... SELECT) is handed over in place, its concatenations built in buffers the
//! stage reuses row after row; for any other stage it becomes an owned row.

use super::pipeline::{RowSink, SinkRow, Stage, push_owned};
use crate::access::RowAccess;
use crate::access::full_scan::Flow;
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::functions::FunctionContext;
use crate::types::Value;

pub struct ProjectStage {
    pub exprs: Vec<Expr>,
    /// One string per expression, reused for every row that goes to a sink: the text a
    /// concatenation builds lives here until the sink has taken the row.
    buffers: Vec<String>,
}

impl ProjectStage {
    pub fn new(exprs: Vec<Expr>) -> ProjectStage {
        let buffers = exprs.iter().map(|_| String::new()).collect();
        ProjectStage { exprs, buffers }
    }

    pub fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if let Some(Stage::Sink(sink)) = rest.first_mut() {
            return self.push_to_sink(row, sink, f);
        }
        let out: Vec<Value> =
            self.exprs.iter().map(|e| e.eval(row, f).map(|v| v.into_owned())).collect::<Result<_>>()?;
        push_owned(rest, out, f)
    }

    fn push_to_sink<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        sink: &mut RowSink<'_>,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        let mut out = SinkRow::new();
        for (e, buffer) in self.exprs.iter().zip(&mut self.buffers) {
            out.push(e.eval_buffered(row, f, buffer)?);
        }
        (sink.consume)(&out[..sink.visible.min(out.len())])?;
        Ok(Flow::Continue)
    }
}

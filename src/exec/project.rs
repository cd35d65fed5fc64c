//! Projection: computes the output expressions of each row. A row bound for a sink
//! (INSERT ... SELECT) is handed over in place, its concatenations built in buffers the
//! stage reuses row after row; for any other stage it becomes an owned row. Rows of the
//! CONNECT BY generator bound for a sink are evaluated a batch at a time when every
//! expression compiles for batches ([`BatchProjection`]).

use super::pipeline::{RowSink, SinkRow, Stage, push_owned};
use crate::access::RowAccess;
use crate::access::full_scan::Flow;
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::expr_batch::{BATCH, BatchProjection};
use crate::sql::functions::FunctionContext;
use crate::types::{Datum, Value};

pub struct ProjectStage {
    pub exprs: Vec<Expr>,
    /// One string per expression, reused for every row that goes to a sink: the text a
    /// concatenation builds lives here until the sink has taken the row.
    buffers: Vec<String>,
    /// The expressions compiled for batches of generator rows: compiled on the first
    /// batch (`None` until then), `Some(None)` when they do not compile.
    batch: Option<Option<BatchProjection>>,
}

impl ProjectStage {
    pub fn new(exprs: Vec<Expr>) -> ProjectStage {
        let buffers = exprs.iter().map(|_| String::new()).collect();
        ProjectStage { exprs, buffers, batch: None }
    }

    /// Whether the generator's rows can be pushed a batch at a time
    /// ([`ProjectStage::push_numbers_to_sink`]).
    pub fn takes_number_batches(&mut self) -> bool {
        let exprs = &self.exprs;
        self.batch.get_or_insert_with(|| BatchProjection::compile(exprs)).is_some()
    }

    /// Pushes the generator rows `start..=stop` (one whole number each) to `sink`, a
    /// batch at a time; a row the batch cannot give is evaluated the general way, in its
    /// place. Only when [`ProjectStage::takes_number_batches`].
    pub fn push_numbers_to_sink(
        &mut self,
        start: i64,
        stop: i64,
        sink: &mut RowSink<'_>,
        f: &mut FunctionContext,
    ) -> Result<()> {
        let mut input = Vec::with_capacity(BATCH);
        let mut next = start;
        while next <= stop {
            let last = next.saturating_add(BATCH as i64 - 1).min(stop);
            input.clear();
            input.extend(next..=last);
            self.push_batch_to_sink(&input, sink, f)?;
            match last.checked_add(1) {
                Some(n) if last < stop => next = n,
                _ => break,
            }
        }
        Ok(())
    }

    fn push_batch_to_sink(&mut self, input: &[i64], sink: &mut RowSink<'_>, f: &mut FunctionContext) -> Result<()> {
        let ProjectStage { exprs, buffers, batch: Some(Some(batch)) } = self else {
            unreachable!("checked by takes_number_batches")
        };
        batch.eval(input);
        let visible = sink.visible.min(batch.len());
        for (i, &n) in input.iter().enumerate() {
            if batch.falls_back(i) {
                sink_row(exprs, buffers, [Datum::Int(n)].as_slice(), sink, f)?;
                continue;
            }
            sink.consume.consume_batch_row(batch.row(input, i, visible))?;
        }
        Ok(())
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
        sink_row(&self.exprs, &mut self.buffers, row, sink, f)?;
        Ok(Flow::Continue)
    }
}

/// Evaluates `exprs` on `row`, building texts in `buffers`, and hands the row to `sink`.
fn sink_row<R: RowAccess + ?Sized>(
    exprs: &[Expr],
    buffers: &mut [String],
    row: &R,
    sink: &mut RowSink<'_>,
    f: &mut FunctionContext,
) -> Result<()> {
    let mut out = SinkRow::new();
    for (e, buffer) in exprs.iter().zip(buffers) {
        out.push(e.eval_buffered(row, f, buffer)?);
    }
    sink.consume.consume(&out[..sink.visible.min(out.len())])
}

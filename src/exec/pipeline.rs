//! The pipeline: stages in push order, what a stage does with the rows pushed into it
//! ([`Push`]: each states how it takes a row and overrides only what else it does
//! differently), and the one dispatch between them ([`push`], [`push_owned`],
//! [`push_batch`], [`finish`]).

use super::{AggregateStage, CollectStage, FilterStage, LimitStage, ProbeStage, ProjectStage, RownumStage, SortStage};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::batch::BatchRow;
use crate::expr::functions::FunctionContext;
use crate::types::{Datum, Value};
use smallvec::SmallVec;

/// One stage of a pipeline.
pub enum Stage<'a> {
    Filter(FilterStage),
    Rownum(RownumStage),
    Limit(LimitStage),
    Project(ProjectStage),
    Aggregate(AggregateStage),
    Sort(SortStage),
    Collect(CollectStage),
    /// Hands each finished row to a consumer (INSERT ... SELECT), in place of Collect.
    Sink(RowSink<'a>),
    /// Counts and times what passes (row-source statistics); passes everything on.
    Probe(ProbeStage),
}

impl Stage<'_> {
    /// Puts the stage back as it was before its plan first ran, so the plan can run again
    /// (a cursor's next execution). A sink keeps nothing of its own: what it handed on
    /// is its consumer's.
    pub fn reset(&mut self) {
        match self {
            Stage::Filter(_) | Stage::Project(_) | Stage::Sink(_) => {}
            Stage::Rownum(s) => s.next = 0,
            Stage::Limit(s) => (s.skipped, s.passed) = (0, 0),
            Stage::Aggregate(s) => s.reset(),
            Stage::Sort(s) => (s.rows, s.sorted) = (Vec::new(), 0),
            Stage::Collect(s) => drop(s.take_rows()),
            Stage::Probe(s) => *s = Default::default(),
        }
    }
}

/// A consumer of result rows that are not collected, such as the rows INSERT ... SELECT
/// writes. It sees each row only while it is being pushed (the values may borrow from a
/// pinned block or from the projection's buffers), so a row reaches it without being
/// copied into owned values.
pub struct RowSink<'a> {
    /// The row's leading columns the consumer sees (a projection may carry more).
    pub visible: usize,
    pub consume: Box<dyn ConsumeRow + 'a>,
}

/// What a sink does with each row it is handed.
pub trait ConsumeRow {
    /// Takes one row of values.
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()>;

    /// Takes one row of a batch the projection evaluated (see
    /// [`crate::expr::batch`]); by default as values.
    fn consume_batch_row(&mut self, row: BatchRow<'_>) -> Result<()> {
        let values: SinkRow<'_> = (0..row.len()).map(|c| row.datum(c)).collect();
        self.consume(&values)
    }
}

impl<F: FnMut(&[Datum<'_>]) -> Result<()>> ConsumeRow for F {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self(values)
    }
}

/// Most columns a row handed to a sink holds on the stack before spilling to the heap.
pub const SINK_INLINE_COLUMNS: usize = 16;

/// A row being handed to a sink.
pub type SinkRow<'v> = SmallVec<[Datum<'v>; SINK_INLINE_COLUMNS]>;

/// What a stage does with the rows pushed into it, `rest` being the stages after it. A
/// stage states how it takes one row, and overrides the other ways in only where it does
/// something else than the default: a row the caller built is read in place, a block
/// batch's selected rows are taken one by one, and the end of the input is passed on.
pub trait Push {
    /// Takes one row.
    fn push<R: RowAccess + ?Sized>(&mut self, row: &R, rest: &mut [Stage<'_>], f: &mut FunctionContext)
    -> Result<Flow>;

    /// Takes a row the caller built and no longer needs.
    #[inline]
    fn push_owned(&mut self, row: Vec<Value>, rest: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<Flow> {
        self.push(row.as_slice(), rest, f)
    }

    /// Takes the selected rows of a block batch (`selection`: row indexes, ascending, not
    /// empty).
    #[inline]
    fn push_batch(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        push_each(selection.iter(), |&i| self.push(&batch.row(i as usize), rest, f))
    }

    /// The input is done: a stage that holds rows pushes them on, then the stages after
    /// it are told.
    #[inline]
    fn finish(&mut self, rest: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<()> {
        finish(rest, f)
    }
}

/// `$body` with `$s` the stage inside `$stage`, whichever kind it is.
macro_rules! on_stage {
    ($stage:expr, $s:ident => $body:expr) => {
        match $stage {
            Stage::Filter($s) => $body,
            Stage::Rownum($s) => $body,
            Stage::Limit($s) => $body,
            Stage::Project($s) => $body,
            Stage::Aggregate($s) => $body,
            Stage::Sort($s) => $body,
            Stage::Collect($s) => $body,
            Stage::Sink($s) => $body,
            Stage::Probe($s) => $body,
        }
    };
}

/// A sink's rows go to its consumer; nothing is pushed on.
impl Push for RowSink<'_> {
    #[inline]
    fn push<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut [Stage<'_>],
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        let out = (0..self.visible).map(|i| row.column(i)).collect::<Result<SinkRow<'_>>>()?;
        self.consume.consume(&out)?;
        Ok(Flow::Continue)
    }

    fn push_owned(&mut self, mut row: Vec<Value>, _rest: &mut [Stage<'_>], _f: &mut FunctionContext) -> Result<Flow> {
        row.truncate(self.visible);
        self.consume.consume(&row)?;
        Ok(Flow::Continue)
    }
}

/// Pushes one row into the first of `stages`.
#[inline]
pub fn push<R: RowAccess + ?Sized>(stages: &mut [Stage<'_>], row: &R, f: &mut FunctionContext) -> Result<Flow> {
    let Some((stage, rest)) = stages.split_first_mut() else { return Ok(Flow::Continue) };
    on_stage!(stage, s => s.push(row, rest, f))
}

/// Pushes a row the caller built and no longer needs: the stages that keep rows (sort,
/// collect) take it as it is, a sink and any other stage read it in place.
#[inline]
pub fn push_owned(stages: &mut [Stage<'_>], row: Vec<Value>, f: &mut FunctionContext) -> Result<Flow> {
    let Some((stage, rest)) = stages.split_first_mut() else { return Ok(Flow::Continue) };
    on_stage!(stage, s => s.push_owned(row, rest, f))
}

/// Pushes `rows` one by one with `push_one`, until one says stop; says whether one did.
#[inline]
pub fn push_each<T>(rows: impl IntoIterator<Item = T>, mut push_one: impl FnMut(T) -> Result<Flow>) -> Result<Flow> {
    for row in rows {
        if push_one(row)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// The first `n` columns of `row` as owned values (strings copied out of their block).
pub fn owned_prefix<R: RowAccess + ?Sized>(row: &R, n: usize) -> Result<Vec<Value>> {
    (0..n).map(|i| row.column(i).map(Datum::into_owned)).collect()
}

/// Pushes the selected rows of a block batch (`selection`: row indexes, ascending) into
/// the first of `stages`. Filters narrow the selection in place; stages without a batch
/// form take the selected rows one by one.
pub fn push_batch(
    stages: &mut [Stage<'_>],
    batch: &BlockBatch<'_>,
    selection: &mut Vec<u16>,
    f: &mut FunctionContext,
) -> Result<Flow> {
    if selection.is_empty() {
        return Ok(Flow::Continue);
    }
    let Some((stage, rest)) = stages.split_first_mut() else { return Ok(Flow::Continue) };
    on_stage!(stage, s => s.push_batch(batch, selection, rest, f))
}

/// Tells the first of `stages` that its input is done; holding stages emit their rows.
pub fn finish(stages: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<()> {
    let Some((stage, rest)) = stages.split_first_mut() else { return Ok(()) };
    on_stage!(stage, s => s.finish(rest, f))
}

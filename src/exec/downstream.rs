//! What a stage of a pipeline is and sees: [`Push`], how it takes the rows pushed into
//! it, and [`Downstream`], the stages after it, to which it passes rows on. A stage
//! knows the rest of the pipeline only through that trait, so the stages' files need
//! nothing of the pipeline that names them all (`pipeline::Stage`); the pipeline is the
//! one implementation of `Downstream`. Also here: the sink a result row may be handed to
//! in place ([`RowSink`]), and the small helpers every stage shares.
//!
//! Invariant: a stage's pushes reach the stages after it only through `Downstream`, in
//! the order it makes them, and `finish` is passed on exactly once, after every row.

use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::batch::BatchRow;
use crate::expr::functions::FunctionContext;
use crate::types::{Datum, Value};
use smallvec::SmallVec;

/// The stages after a stage, as that stage sees them: the same four ways in as [`Push`]
/// has, and the sink, if the next stage is one.
pub trait Downstream {
    /// Pushes one row on.
    fn push<R: RowAccess + ?Sized>(&mut self, row: &R, f: &mut FunctionContext) -> Result<Flow>;

    /// Pushes on a row this stage built and no longer needs.
    fn push_owned(&mut self, row: Vec<Value>, f: &mut FunctionContext) -> Result<Flow>;

    /// Pushes on the selected rows of a block batch (`selection`: row indexes, ascending).
    fn push_batch(&mut self, batch: &BlockBatch<'_>, selection: &mut Vec<u16>, f: &mut FunctionContext)
    -> Result<Flow>;

    /// Tells the stages after this one that the input is done.
    fn finish(&mut self, f: &mut FunctionContext) -> Result<()>;

    /// The sink, when the next stage is one: a projection hands its rows over in place.
    fn sink(&mut self) -> Option<SinkTarget<'_>>;
}

/// What a stage does with the rows pushed into it, `rest` being the stages after it. A
/// stage states how it takes one row, and overrides the other ways in only where it does
/// something else than the default: a row the caller built is read in place, a block
/// batch's selected rows are taken one by one, and the end of the input is passed on.
pub trait Push {
    /// Takes one row.
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow>;

    /// Takes a row the caller built and no longer needs.
    #[inline]
    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        row: Vec<Value>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.push(row.as_slice(), rest, f)
    }

    /// Takes the selected rows of a block batch (`selection`: row indexes, ascending, not
    /// empty).
    #[inline]
    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        push_each(selection.iter(), |&i| self.push(&batch.row(i as usize), rest, f))
    }

    /// The input is done: a stage that holds rows pushes them on, then the stages after
    /// it are told.
    #[inline]
    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        rest.finish(f)
    }
}

/// A consumer of result rows that are not collected, such as the rows INSERT ... SELECT
/// writes. It sees each row only while it is being pushed (the values may borrow from a
/// pinned block or from the projection's buffers), so a row reaches it without being
/// copied into owned values.
pub struct RowSink<'a> {
    /// The row's leading columns the consumer sees (a projection may carry more).
    pub visible: usize,
    /// Which of those the consumer uses, when not all: the others reach it as NULL,
    /// never decoded (a join's input, whose columns only the plan above reads).
    pub used: Option<&'a [bool]>,
    /// When set, the row handed over holds only these columns, in this order, and
    /// nothing else is decoded (a hash join's input, which maps them back). Such a sink
    /// is never handed rows in place ([`Downstream::sink`] gives none).
    pub only: Option<&'a [usize]>,
    pub consume: Box<dyn ConsumeRow + 'a>,
}

impl<'a> RowSink<'a> {
    /// A sink handing `consume` the first `visible` columns of each row.
    pub fn new(visible: usize, consume: Box<dyn ConsumeRow + 'a>) -> RowSink<'a> {
        RowSink { visible, used: None, only: None, consume }
    }
}

impl RowSink<'_> {
    /// The sink as a stage before it reaches it.
    pub fn target(&mut self) -> SinkTarget<'_> {
        SinkTarget { visible: self.visible, consume: &mut *self.consume }
    }
}

/// A sink borrowed for the pushing of rows into it.
pub struct SinkTarget<'s> {
    /// The row's leading columns the consumer sees.
    pub visible: usize,
    pub consume: &'s mut dyn ConsumeRow,
}

/// What a sink does with each row it is handed.
pub trait ConsumeRow {
    /// Takes one row of values.
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()>;

    /// Whether the consumer wants no more rows (the stages it pushes into stopped): the
    /// pipeline feeding it stops as a limit stops it.
    fn stopped(&self) -> bool {
        false
    }

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

/// A sink's rows go to its consumer; nothing is pushed on.
impl Push for RowSink<'_> {
    #[inline]
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        let mut out = SinkRow::new();
        match (self.only, self.used) {
            (Some(only), _) => {
                for &c in only {
                    out.push(row.column(c)?);
                }
            }
            (None, None) => {
                for i in 0..self.visible {
                    out.push(row.column(i)?);
                }
            }
            (None, Some(used)) => {
                for (i, &u) in used.iter().enumerate().take(self.visible) {
                    out.push(if u { row.column(i)? } else { Datum::Null });
                }
                out.resize(self.visible, Datum::Null);
            }
        }
        self.consume.consume(&out)?;
        Ok(if self.consume.stopped() { Flow::Stop } else { Flow::Continue })
    }

    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        mut row: Vec<Value>,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        match self.only {
            Some(only) => {
                let out: SmallVec<[Value; SINK_INLINE_COLUMNS]> = only
                    .iter()
                    .map(|&c| row.get_mut(c).map_or(Datum::Null, |v| std::mem::replace(v, Datum::Null)))
                    .collect();
                self.consume.consume(&out)?;
            }
            None => {
                row.truncate(self.visible);
                self.consume.consume(&row)?;
            }
        }
        Ok(if self.consume.stopped() { Flow::Stop } else { Flow::Continue })
    }
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

/// Keeps the first `width` columns of `row` in `rows`: what a stage that holds its whole
/// input (collect, sort, window) does with a row; the source goes on.
pub fn hold<R: RowAccess + ?Sized>(rows: &mut Vec<Vec<Value>>, row: &R, width: usize) -> Result<Flow> {
    rows.push(owned_prefix(row, width)?);
    Ok(Flow::Continue)
}

/// [`hold`] of a row built upstream, kept without copying its values.
pub fn hold_owned(rows: &mut Vec<Vec<Value>>, mut row: Vec<Value>, width: usize) -> Result<Flow> {
    row.truncate(width);
    rows.push(row);
    Ok(Flow::Continue)
}

/// The first `n` columns of `row` as owned values (strings copied out of their block).
pub fn owned_prefix<R: RowAccess + ?Sized>(row: &R, n: usize) -> Result<Vec<Value>> {
    (0..n).map(|i| row.column(i).map(Datum::into_owned)).collect()
}

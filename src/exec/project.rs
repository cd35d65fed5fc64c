//! Projection: computes the output expressions of each row. A row bound for a sink
//! (INSERT ... SELECT) is handed over in place, its concatenations built in buffers the
//! stage reuses row after row; for any other stage it becomes an owned row. Rows of the
//! CONNECT BY generator bound for a sink are evaluated a batch at a time when every
//! expression compiles for batches ([`BatchProjection`]); for a long run of them, on a
//! helper thread while the session's thread stores the rows of the batch before. Each
//! batch the session receives from the helper counts in `PX local messages recv'd`.
//!
//! Invariant: a projection whose expressions read NEXTVAL takes the sequences' next
//! values for each row before evaluating any of its expressions (the once-a-row rule;
//! such expressions never compile for batches).

use super::ExecContext;
use super::downstream::{Downstream, Push, RowSink, SinkRow, SinkTarget};
use crate::access::Flow;
use crate::access::RowAccess;
use crate::error::Result;
use crate::expr::Expr;
use crate::expr::batch::{BATCH, BatchProjection};
use crate::expr::functions::FunctionContext;
use crate::stats::osstat::thread_cpu_time_ns;
use crate::stats::{Stat, WaitEvent};
use crate::types::{Datum, Value};
use std::sync::mpsc::{self, TryRecvError};

/// Rows of the generator below which a helper thread is not started: its start and the
/// hand-over of batches would cost more than they save.
const HELPED_ROWS: i64 = 16 * BATCH as i64;

/// Evaluated batches between the helper and the session's thread: enough that neither
/// waits for the other while both keep pace, few enough to stay in the CPU caches.
const BATCHES_IN_FLIGHT: usize = 3;

pub struct ProjectStage {
    pub exprs: Vec<Expr>,
    /// One string per expression, reused for every row that goes to a sink: the text a
    /// concatenation builds lives here until the sink has taken the row.
    buffers: Vec<String>,
    /// The expressions compiled for batches of generator rows: compiled on the first
    /// batch (`None` until then), `Some(None)` when they do not compile.
    batch: Option<Option<BatchProjection>>,
    /// The sequences whose NEXTVAL an expression reads: each row takes their next values
    /// before its expressions are evaluated (NEXTVAL moves on once a row).
    nextvals: Vec<std::sync::Arc<str>>,
}

/// A batch of generator values and the projection evaluated over them.
struct Evaluated {
    projection: BatchProjection,
    input: Vec<i64>,
}

impl ProjectStage {
    pub fn new(exprs: Vec<Expr>) -> ProjectStage {
        let buffers = exprs.iter().map(|_| String::new()).collect();
        let nextvals = crate::expr::functions::nextval_sequences(&exprs);
        ProjectStage { exprs, buffers, batch: None, nextvals }
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
    ///
    /// With a helper thread allowed ([`ExecContext::helpers`]) and rows enough to be worth
    /// it, the helper evaluates the batches while this thread stores them.
    pub fn push_numbers_to_sink(
        &mut self,
        start: i64,
        stop: i64,
        sink: &mut RowSink<'_>,
        ctx: &mut ExecContext<'_>,
    ) -> Result<()> {
        if ctx.helpers > 0
            && stop.saturating_sub(start) >= HELPED_ROWS
            && let Some(stored) = self.push_numbers_with_helper(start, stop, sink, ctx)
        {
            return stored;
        }
        let ProjectStage { exprs, buffers, batch: Some(Some(batch)), .. } = self else {
            unreachable!("checked by takes_number_batches")
        };
        let mut input = Vec::with_capacity(BATCH);
        for range in batches(start, stop) {
            input.clear();
            input.extend(range);
            batch.eval(&input);
            store_batch(exprs, buffers, batch, &input, &mut sink.target(), &mut ctx.functions)?;
        }
        Ok(())
    }

    /// [`ProjectStage::push_numbers_to_sink`] in two threads: a helper evaluates the
    /// batches, in order, into the projections this thread hands back once it has stored
    /// their rows ([`BATCHES_IN_FLIGHT`] of them). Rows are stored in generator order and
    /// a row's error stops the statement exactly as without the helper (batch evaluation
    /// raises none). This thread's waits for an evaluated batch are timed as
    /// `PX Deq: Table Q Normal`, and each batch it receives counts in `PX local messages
    /// recv'd`; the helper's CPU time is added to the session's, and its performance
    /// counters' counts when the session counts.
    /// `None`, with nothing stored, when the system cannot start a thread.
    fn push_numbers_with_helper(
        &mut self,
        start: i64,
        stop: i64,
        sink: &mut RowSink<'_>,
        ctx: &mut ExecContext<'_>,
    ) -> Option<Result<()>> {
        let ProjectStage { exprs, buffers, .. } = self;
        let (free_tx, free_rx) = mpsc::sync_channel::<Evaluated>(BATCHES_IN_FLIGHT);
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Evaluated>(BATCHES_IN_FLIGHT);
        for _ in 0..BATCHES_IN_FLIGHT {
            let projection = BatchProjection::compile(exprs).expect("compiled before");
            free_tx.send(Evaluated { projection, input: Vec::with_capacity(BATCH) }).expect("room for each");
        }
        let stats = ctx.access.stats;
        let count = stats.counting_helpers();
        let timed = stats.cpu_timed();
        std::thread::scope(|scope| {
            let helper = std::thread::Builder::new()
                .name("lioscope-batch-helper".into())
                .spawn_scoped(scope, move || {
                    // The CPU clock starts first: opening the counters (a dozen system
                    // calls, slow on some virtual machines) is the helper's work too, and
                    // task-clock counts it once it is open.
                    let cpu_started = timed.then(thread_cpu_time_ns);
                    let counters = count.then(crate::stats::hwcounters::ThreadCounters::open);
                    for range in batches(start, stop) {
                        let Ok(mut work) = free_rx.recv() else { break };
                        work.input.clear();
                        work.input.extend(range);
                        work.projection.eval(&work.input);
                        if ready_tx.send(work).is_err() {
                            break;
                        }
                    }
                    let cpu_ns = cpu_started.map_or(0, |started| thread_cpu_time_ns().saturating_sub(started));
                    (cpu_ns, counters.map(|c| c.read()))
                })
                .ok()?;
            let mut stored = Ok(());
            loop {
                let work = match ready_rx.try_recv() {
                    Ok(work) => work,
                    Err(TryRecvError::Disconnected) => break,
                    Err(TryRecvError::Empty) => {
                        let _wait = stats.begin_wait(WaitEvent::PxDeqTableQNormal);
                        match ready_rx.recv() {
                            Ok(work) => work,
                            Err(_) => break,
                        }
                    }
                };
                stats.add(Stat::PxLocalMessagesRecvd, 1);
                stored =
                    store_batch(exprs, buffers, &work.projection, &work.input, &mut sink.target(), &mut ctx.functions);
                if stored.is_err() {
                    break;
                }
                // The helper may have finished and let go of its end: nothing to hand back to.
                let _ = free_tx.send(work);
            }
            // Unblocks a helper waiting for a projection or for room to hand one over.
            drop((free_tx, ready_rx));
            let (helper_cpu_ns, counts) = helper.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            stats.add_helper_cpu(helper_cpu_ns / 1000);
            if let Some(counts) = counts {
                stats.add_helper_counts(&counts);
            }
            Some(stored)
        })
    }

    fn push_to_sink<R: RowAccess + ?Sized>(
        &mut self,
        row: &R,
        sink: &mut SinkTarget<'_>,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if !self.nextvals.is_empty() {
            f.start_sequence_row(&self.nextvals)?;
        }
        sink_row(&self.exprs, &mut self.buffers, row, sink, f)?;
        Ok(Flow::Continue)
    }
}

impl Push for ProjectStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if let Some(mut sink) = rest.sink() {
            return self.push_to_sink(row, &mut sink, f);
        }
        if !self.nextvals.is_empty() {
            f.start_sequence_row(&self.nextvals)?;
        }
        let out: Vec<Value> =
            self.exprs.iter().map(|e| e.eval(row, f).map(|v| v.into_owned())).collect::<Result<_>>()?;
        rest.push_owned(out, f)
    }
}

/// The generator values `start..=stop` in batches of at most [`BATCH`].
fn batches(start: i64, stop: i64) -> impl Iterator<Item = std::ops::RangeInclusive<i64>> {
    let mut next = Some(start).filter(|&s| s <= stop);
    std::iter::from_fn(move || {
        let first = next?;
        let last = first.saturating_add(BATCH as i64 - 1).min(stop);
        next = last.checked_add(1).filter(|_| last < stop);
        Some(first..=last)
    })
}

/// Hands the rows of `batch`, evaluated over `input`, to `sink` in order; a row the
/// batch could not give is evaluated the general way, in its place.
fn store_batch(
    exprs: &[Expr],
    buffers: &mut [String],
    batch: &BatchProjection,
    input: &[i64],
    sink: &mut SinkTarget<'_>,
    f: &mut FunctionContext,
) -> Result<()> {
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

/// Evaluates `exprs` on `row`, building texts in `buffers`, and hands the row to `sink`.
fn sink_row<R: RowAccess + ?Sized>(
    exprs: &[Expr],
    buffers: &mut [String],
    row: &R,
    sink: &mut SinkTarget<'_>,
    f: &mut FunctionContext,
) -> Result<()> {
    let mut out = SinkRow::new();
    for (e, buffer) in exprs.iter().zip(buffers) {
        out.push(e.eval_buffered(row, f, buffer)?);
    }
    sink.consume.consume(&out[..sink.visible.min(out.len())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_the_range_once_in_order() {
        for (start, stop) in [(1, 1), (1, 1024), (1, 1025), (-5, 3000), (i64::MAX - 2000, i64::MAX), (5, 4)] {
            let all: Vec<i64> = batches(start, stop).flatten().collect();
            let expected: Vec<i64> = (start..=stop).collect();
            assert_eq!(all, expected, "{start}..={stop}");
            assert!(batches(start, stop).all(|b| b.clone().count() <= BATCH));
        }
    }
}

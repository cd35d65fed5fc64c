//! Row-source statistics: a probe stage between two stages of a pipeline counts the rows
//! that pass it and times everything downstream of it, as Oracle gathers the figures
//! tkprof and `DBMS_XPLAN.DISPLAY_CURSOR(format => 'ALLSTATS')` print when
//! `statistics_level = ALL`.
//!
//! A plan line's output flows through the probe placed right after the line's stages, so
//! the probe's row count is the line's actual rows. The line's time is inclusive of its
//! children, as tkprof shows it: the statement's time minus what the probe measured
//! downstream (the stages above the line in the plan tree). Rows move in blocks through
//! full scans, and a probe times a block at a time there; where rows move one by one
//! (after a projection, out of an index access) a probe reads the clock twice a row, the
//! cost that makes Oracle's `statistics_level = ALL` expensive too. Pipelines without
//! probes pay nothing.
//!
//! Invariant: a probe is transparent: it passes on exactly what it receives, and the
//! stages around it behave as if it were not there.

use super::downstream::{Downstream, Push};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::types::Value;
use std::time::Instant;

/// Counts and times what passes one point of a pipeline.
#[derive(Debug, Default, Clone)]
pub struct ProbeStage {
    /// Rows that passed.
    pub rows: u64,
    /// Nanoseconds spent downstream of the probe (pushes and finishes of later stages).
    pub downstream_ns: u64,
}

impl ProbeStage {
    /// Rows a row kernel passed on without pushing them (it counted them in the scan).
    pub fn add_rows(&mut self, rows: u64) {
        self.rows += rows;
    }

    /// Counts `rows` as passing the probe and times `work`, what the stages after it do
    /// with them.
    #[inline]
    fn downstream<T>(&mut self, rows: u64, work: impl FnOnce() -> T) -> T {
        self.rows += rows;
        let started = Instant::now();
        let done = work();
        self.downstream_ns += started.elapsed().as_nanos() as u64;
        done
    }
}

/// Everything passes on, in the form it came, timed.
impl Push for ProbeStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.downstream(1, || rest.push(row, f))
    }

    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        row: Vec<Value>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.downstream(1, || rest.push_owned(row, f))
    }

    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.downstream(selection.len() as u64, || rest.push_batch(batch, selection, f))
    }

    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        self.downstream(0, || rest.finish(f))
    }
}

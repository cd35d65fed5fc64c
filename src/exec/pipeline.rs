//! The pipeline: stages in push order ([`Stage`], the enum that names every kind), the
//! one dispatch between them ([`push`], [`push_owned`], [`push_batch`], [`finish`]), and
//! the stages after a stage as it sees them (`[Stage]` is the [`Downstream`] each
//! stage's [`Push`] passes its rows on to). Also the placing of row-source probes.

use super::downstream::{Downstream, Push, RowSink, SinkTarget};
use super::join_filter::JoinFilterStage;
use super::{AggregateStage, CollectStage, FilterStage, LimitStage, ProbeStage, ProjectStage, RownumStage, SortStage};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::types::Value;

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
    /// JOIN FILTER USE: drops the probe rows a hash join's Bloom filter says cannot join.
    JoinFilter(JoinFilterStage<'a>),
    /// WINDOW SORT: appends analytic functions' values to every row.
    Window(super::window::WindowStage),
}

impl Stage<'_> {
    /// Puts the stage back as it was before its plan first ran, so the plan can run again
    /// (a cursor's next execution). A sink keeps nothing of its own: what it handed on
    /// is its consumer's.
    pub fn reset(&mut self) {
        match self {
            Stage::Filter(_) | Stage::Project(_) | Stage::Sink(_) | Stage::JoinFilter(_) => {}
            Stage::Rownum(s) => s.next = 0,
            Stage::Limit(s) => (s.skipped, s.passed) = (0, 0),
            Stage::Aggregate(s) => s.reset(),
            Stage::Window(s) => s.reset(),
            Stage::Sort(s) => (s.rows, s.sorted) = (Vec::new(), 0),
            Stage::Collect(s) => drop(s.take_rows()),
            Stage::Probe(s) => *s = Default::default(),
        }
    }
}

impl<'a> Stage<'a> {
    /// The stage as one that borrows nothing, when it is: every kind but a sink and a
    /// join filter's use, which a run adds and takes off again.
    pub fn detached(self) -> Option<Stage<'static>> {
        Some(match self {
            Stage::Filter(s) => Stage::Filter(s),
            Stage::Rownum(s) => Stage::Rownum(s),
            Stage::Limit(s) => Stage::Limit(s),
            Stage::Project(s) => Stage::Project(s),
            Stage::Aggregate(s) => Stage::Aggregate(s),
            Stage::Sort(s) => Stage::Sort(s),
            Stage::Collect(s) => Stage::Collect(s),
            Stage::Window(s) => Stage::Window(s),
            Stage::Probe(_) => return None,
            Stage::Sink(_) | Stage::JoinFilter(_) => return None,
        })
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
            Stage::JoinFilter($s) => $body,
            Stage::Window($s) => $body,
        }
    };
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

/// The stages after a stage: a push goes to the first of them, which passes it on.
impl Downstream for [Stage<'_>] {
    #[inline]
    fn push<R: RowAccess + ?Sized>(&mut self, row: &R, f: &mut FunctionContext) -> Result<Flow> {
        push(self, row, f)
    }

    #[inline]
    fn push_owned(&mut self, row: Vec<Value>, f: &mut FunctionContext) -> Result<Flow> {
        push_owned(self, row, f)
    }

    #[inline]
    fn push_batch(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        push_batch(self, batch, selection, f)
    }

    #[inline]
    fn finish(&mut self, f: &mut FunctionContext) -> Result<()> {
        finish(self, f)
    }

    #[inline]
    fn sink(&mut self) -> Option<SinkTarget<'_>> {
        match self.first_mut() {
            Some(Stage::Sink(sink)) if sink.only.is_none() => Some(sink.target()),
            _ => None,
        }
    }
}

/// Inserts a probe at each of `positions` (a probe at `p` sees what leaves `stages[..p]`);
/// returns where each probe went, in the order of `positions`.
pub fn insert_probes(stages: &mut Vec<Stage<'_>>, positions: &[usize]) -> Vec<usize> {
    let mut sorted: Vec<usize> = positions.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for (shift, &p) in sorted.iter().enumerate() {
        stages.insert(p + shift, Stage::Probe(ProbeStage::default()));
    }
    positions.iter().map(|p| p + sorted.iter().position(|s| s == p).expect("sorted holds every position")).collect()
}

/// The probe at `index` of `stages`.
pub fn probe_at<'s>(stages: &'s [Stage<'_>], index: usize) -> &'s ProbeStage {
    match &stages[index] {
        Stage::Probe(p) => p,
        _ => unreachable!("insert_probes put a probe there"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{CollectStage, FilterStage, LimitStage};

    #[test]
    fn probes_land_after_the_stages_they_follow() {
        let mut stages: Vec<Stage<'_>> = vec![
            Stage::Limit(LimitStage::new(0, Some(3))),
            Stage::Filter(FilterStage::new(crate::expr::Expr::Literal(crate::types::Datum::Int(1)))),
            Stage::Collect(CollectStage::new(1)),
        ];
        let at = insert_probes(&mut stages, &[2, 0, 2]);
        assert_eq!(at, vec![3, 0, 3]);
        assert!(matches!(stages[0], Stage::Probe(_)));
        assert!(matches!(stages[1], Stage::Limit(_)));
        assert!(matches!(stages[3], Stage::Probe(_)));
        assert_eq!(stages.len(), 5);
    }
}

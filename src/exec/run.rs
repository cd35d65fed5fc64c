//! Running a plan's pipeline: its source pushes every row into the stages, then the
//! stages are told the input is done; the rows the last stage collected are the result
//! (none when the pipeline ends in a sink).

use super::pipeline::{Stage, finish};
use super::{ExecContext, Source};
use crate::error::Result;
use crate::stats::Stat;
use crate::types::Value;

/// Runs `source` through `stages` and returns the collected rows (none when the
/// pipeline ends in a sink).
pub fn run_pipeline(source: &Source, mut stages: Vec<Stage<'_>>, ctx: &mut ExecContext<'_>) -> Result<Vec<Vec<Value>>> {
    run_pipeline_in_place(source, &mut stages, ctx)
}

/// [`run_pipeline`], leaving the stages to the caller (to read what probes measured);
/// the collected rows are taken out of the final stage.
pub fn run_pipeline_in_place(
    source: &Source,
    stages: &mut [Stage<'_>],
    ctx: &mut ExecContext<'_>,
) -> Result<Vec<Vec<Value>>> {
    source.run(stages, ctx)?;
    finish(stages, &mut ctx.functions)?;
    for stage in stages.iter() {
        if let Stage::Sort(s) = stage {
            ctx.access.stats.add(Stat::SortsMemory, 1);
            ctx.access.stats.add(Stat::SortsRows, s.sorted);
        }
    }
    match stages.last_mut() {
        Some(Stage::Collect(c)) => Ok(c.take_rows()),
        Some(Stage::Sink(_)) => Ok(Vec::new()),
        _ => unreachable!("every pipeline ends with a Collect or Sink stage"),
    }
}

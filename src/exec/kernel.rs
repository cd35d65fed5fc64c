//! Row kernels: the whole per-row work of a simple plan, done by the full scan while it
//! walks each row, as Oracle's specialised scan functions (the `kdstf...` family) filter
//! and count rows inside the scan loop.
//!
//! [`CountKernel`] takes the plan shape `TABLE ACCESS FULL → [FILTER of column-vs-integer
//! comparisons] → SORT AGGREGATE of COUNT(*) / COUNT(column)`. For each row it evaluates
//! the comparisons on the stored integers and adds to the counts; the aggregate stage
//! receives the totals when the scan ends. A row it cannot decide (a value that is not a
//! small whole number) is handed back to the general pipeline, which filters and counts
//! it the usual way, so results never depend on which path a row took.

use super::Stage;
use crate::access::{BlockRow, RowAccess};
use crate::exec::aggregate::CountShape;
use crate::exec::filter::IntComparisons;

/// Filters and counts rows inside the scan loop.
pub struct CountKernel {
    /// The filter, when the plan has one.
    filter: Option<IntComparisons>,
    /// What each aggregate call counts, in call order.
    counts: Vec<CountShape>,
    /// Running totals, one per call.
    pub totals: Vec<u64>,
}

/// What the kernel did with a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelVerdict {
    /// Filtered out or counted.
    Done,
    /// Not decidable here: the general pipeline must take the row.
    Fallback,
}

impl CountKernel {
    /// A kernel for `stages`, if they have the shape this kernel runs.
    pub fn for_stages(stages: &[Stage<'_>]) -> Option<CountKernel> {
        let (filter, rest) = match stages.split_first()? {
            (Stage::Filter(f), rest) => (Some(f.int_comparisons()?.clone()), rest),
            _ => (None, stages),
        };
        let Some(Stage::Aggregate(agg)) = rest.first() else { return None };
        let counts = agg.count_shapes()?;
        let totals = vec![0; counts.len()];
        Some(CountKernel { filter, counts, totals })
    }

    /// Filters and counts one row.
    #[inline(always)]
    pub fn apply(&mut self, row: &BlockRow<'_>) -> KernelVerdict {
        match self.filter.as_ref().map_or(Some(true), |f| f.eval(row)) {
            Some(true) => {}
            Some(false) => return KernelVerdict::Done,
            None => return KernelVerdict::Fallback,
        }
        for (total, shape) in self.totals.iter_mut().zip(&self.counts) {
            *total += match *shape {
                CountShape::Rows => 1,
                CountShape::NotNull(col) => u64::from(!row.is_null(col)),
            };
        }
        KernelVerdict::Done
    }
}

//! Row kernels: the whole per-row work of a simple plan, done by the full scan while it
//! walks each row, as Oracle's specialised scan functions (the `kdstf...` family) filter
//! and count rows inside the scan loop.
//!
//! [`CountKernel`] takes the plan shape `TABLE ACCESS FULL → [FILTER of column-vs-integer
//! comparisons on NUMBER columns] → SORT AGGREGATE of COUNT(*) / COUNT(column)`. It tests
//! the filter's range terms ([`RangeTerm`]) on the stored integers, one subtraction and
//! one unsigned compare per term, then adds to each count (one NULL test per
//! COUNT(column)). The aggregate stage receives the totals when the scan ends. A row it
//! cannot decide (a value that is not a small whole number) is handed back to the
//! general pipeline, which filters and counts it the usual way, so results never depend
//! on which path a row took.
//!
//! With at most one term and one count, the kernel hands the scan its term and count
//! ([`LaneCount`]) so that eight rows at a time are walked, filtered and counted in AVX2
//! lanes where this machine runs them ([`crate::access::lanes::choice`]); the rows that
//! cannot run in lanes, and every row where lanes are off, come back one by one
//! to a loop made for the kernel's shape, which knows which [`Column`] each test reads.
//! Where lanes are off that loop is a fold ([`FastRows::fold`]): its totals travel by
//! value, so they stay in registers, where counters a closure captures are kept in
//! memory (11% of the instructions a row, by callgrind). An index path's runs of rows in
//! one table block take the same steps ([`CountKernel::fold_rows`], through
//! [`FoldRows`]), so each shape's loop is one piece of code for both.
//!
//! The rows a kernel passed and counted itself are added to the session's `count kernel
//! rows passed` once, when it hands its totals on: what shows that a count took this path
//! (the rows it handed back are not in it).

use super::Stage;
use crate::access::fast_walk::{Column, FastRow, FastRows};
use crate::access::lanes::LaneCount;
use crate::access::{RowAccess, WalkedRow};
use crate::error::Result;
use crate::exec::aggregate::CountShape;
use crate::exec::filter::RangeTerm;
use crate::stats::{SessionStats, Stat};
use crate::types::encoding::PayloadKind;

/// `$body` with `$name` bound to the [`Column`] of `$col` in a walk of `W` columns, in one
/// arm per kind of column, so that each arm's loop is made for its kind.
macro_rules! for_column {
    ($col:expr, |$name:ident| $body:expr) => {
        match Column::of::<W>($col) {
            Column::First => {
                let $name = Column::First;
                $body
            }
            Column::Last => {
                let $name = Column::Last;
                $body
            }
            nth => {
                let $name = nth;
                $body
            }
        }
    };
}

/// `$body` with `$counted` a function of a walked row giving what the count of `$shape`
/// adds, in one arm per shape (and counted column).
macro_rules! for_count {
    ($shape:expr, |$counted:ident| $body:expr) => {
        match $shape {
            CountShape::Rows => {
                let $counted = |_: &FastRow<'_, W>| 1u64;
                $body
            }
            CountShape::NotNull(col) => for_column!(col, |column| {
                // Moved in, so that each arm's loop knows its column.
                let $counted = move |row: &FastRow<'_, W>| u64::from(!row.is_null(column));
                $body
            }),
        }
    };
}

/// The rows passed and counted by a fold, carried by value from row to row.
pub type FoldTotals = (u64, u64);

/// A step of a fold ([`FoldRows`]): the totals after one row the fast walk of `W` columns
/// took, or `None` for a row it cannot decide. Any such function is one.
pub trait FoldStep<const W: usize>: for<'b> Fn(FoldTotals, &FastRow<'b, W>) -> Option<FoldTotals> + Copy {}

impl<const W: usize, S> FoldStep<W> for S where S: for<'b> Fn(FoldTotals, &FastRow<'b, W>) -> Option<FoldTotals> + Copy {}

/// A walk that folds the rows the fast walk of `W` columns takes into totals carried by
/// value ([`CountKernel::fold_rows`] gives the step, made for the kernel's shape): the
/// full scan's rows of a block, or an index path's runs of rows in one table block each.
pub trait FoldRows<const W: usize> {
    /// What the walk returns besides the totals.
    type Out;

    /// Folds the rows from `(0, 0)` with `step`, which answers `None` for a row it cannot
    /// decide. `kernel` is the kernel the step was made for, to decide a row the fast walk
    /// cannot take the general way ([`CountKernel::apply`]; what it counts goes to its own
    /// totals, not the fold's).
    fn fold(self, kernel: &mut CountKernel, step: impl FoldStep<W>) -> (Self::Out, FoldTotals);
}

impl<'b, const W: usize> FoldRows<W> for &mut FastRows<'b, W> {
    /// The row the step could not decide, if one stopped the fold.
    type Out = Option<FastRow<'b, W>>;

    #[inline(always)]
    fn fold(self, _kernel: &mut CountKernel, step: impl FoldStep<W>) -> (Self::Out, FoldTotals) {
        let (totals, refused) = FastRows::fold(self, (0, 0), step);
        (refused, totals)
    }
}

/// Filters and counts rows inside the scan loop.
pub struct CountKernel {
    /// The filter's terms; a row passes when all hold.
    terms: Box<[RangeTerm]>,
    /// What each aggregate call counts, in call order, and its running total.
    counts: Box<[(CountShape, u64)]>,
    /// Rows that passed the filter (what a row-source probe after it would have seen).
    passed: u64,
    /// The term and the count in lanes, where there are at most one term and one count.
    lanes: Option<LaneCount>,
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
    /// A kernel for `stages` over rows whose columns decode as `kinds`, if the stages
    /// have the shape this kernel runs.
    /// Row-source probes between the stages do not change the shape: the rows the kernel
    /// passes are handed to them at the end ([`CountKernel::passed`]).
    pub fn for_stages(stages: &[Stage<'_>], kinds: &[PayloadKind]) -> Option<CountKernel> {
        let stages: Vec<&Stage<'_>> = stages.iter().filter(|s| !matches!(s, Stage::Probe(_))).collect();
        let (terms, rest) = match stages.split_first()? {
            (Stage::Filter(f), rest) => (f.int_comparisons()?.terms(), rest),
            _ => (&[][..], &stages[..]),
        };
        if terms.iter().any(|t| kinds.get(t.column) != Some(&PayloadKind::Number)) {
            return None;
        }
        let Some(Stage::Aggregate(agg)) = rest.first() else { return None };
        let counts: Box<[(CountShape, u64)]> = agg.count_shapes()?.into_iter().map(|shape| (shape, 0)).collect();
        let lanes = match (terms, &counts[..]) {
            ([term], [(shape, _)]) => Some(LaneCount { filter: Some(term.lane_filter()), not_null: shape.column() }),
            ([], [(shape, _)]) => Some(LaneCount { filter: None, not_null: shape.column() }),
            _ => None,
        };
        Some(CountKernel { terms: terms.into(), counts, passed: 0, lanes })
    }

    /// Filters and counts one row.
    #[inline(always)]
    pub fn apply(&mut self, row: WalkedRow<'_>) -> KernelVerdict {
        self.decide(|col| row.int_or_null(col), |col| row.is_null(col))
    }

    /// Filters and counts one row whose NUMBER columns read as `int_or_null` gives them
    /// (`Err` for a value that is not a small whole number) and whose NULLs `is_null`
    /// finds.
    #[inline(always)]
    fn decide(
        &mut self,
        int_or_null: impl Fn(usize) -> std::result::Result<Option<i64>, ()>,
        is_null: impl Fn(usize) -> bool,
    ) -> KernelVerdict {
        for term in &*self.terms {
            match int_or_null(term.column) {
                Ok(Some(v)) if term.holds(v) => {}
                // Failed, or compared a NULL (UNKNOWN does not pass a filter).
                Ok(_) => return KernelVerdict::Done,
                Err(()) => return KernelVerdict::Fallback,
            }
        }
        self.passed += 1;
        for (shape, total) in &mut *self.counts {
            *total += match *shape {
                CountShape::Rows => 1,
                CountShape::NotNull(col) => u64::from(!is_null(col)),
            };
        }
        KernelVerdict::Done
    }

    /// Filters and counts the rows of a block the fast walk takes, until the block's end,
    /// a row the walk cannot take (see [`FastRows::pending`]), or a row the kernel cannot
    /// decide, which it returns. The common shapes (at most one term, one count) run in
    /// loops made for them, which hold the term and the totals in registers and know which
    /// [`Column`] each reads.
    #[inline(always)]
    pub fn count_fast_rows<'b, const W: usize>(&mut self, rows: &mut FastRows<'b, W>) -> Option<FastRow<'b, W>> {
        // One by one, the common shapes fold their totals by value (kept in registers).
        // Decided here rather than inside `count_in_lanes`: that function taking a fold
        // for its leftover rows (one mechanism, no second closure here) was measured at
        // 86.0 instructions a row one by one against this form's 81.8 (at 2ce6c85), its
        // lanes' code crowding the fold's registers, and 99 with the fold out of line.
        if self.lanes.as_ref().is_some_and(|lanes| !rows.counts_in_lanes(lanes))
            && let Ok(refused) = self.fold_rows(&mut *rows)
        {
            return refused;
        }
        let mut undecided = None;
        let (mut passed, mut total) = (0u64, 0u64);
        let in_lanes = match (&*self.terms, &*self.counts, &self.lanes) {
            (&[term], &[(shape, _)], Some(lanes)) => {
                for_column!(term.column, |column| for_count!(shape, |counted| {
                    rows.count_in_lanes(lanes, |row| {
                        match row.int_or_null(column) {
                            Ok(Some(v)) if term.holds(v) => {}
                            Ok(_) => return true,
                            Err(()) => {
                                undecided = Some(row);
                                return false;
                            }
                        }
                        passed += 1;
                        total += counted(&row);
                        true
                    })
                }))
            }
            (&[], &[(shape, _)], Some(lanes)) => {
                for_count!(shape, |counted| rows.count_in_lanes(lanes, |row| {
                    passed += 1;
                    total += counted(&row);
                    true
                }))
            }
            _ => {
                rows.visit(|row| {
                    let decided = self.apply_fast(&row) == KernelVerdict::Done;
                    if !decided {
                        undecided = Some(row);
                    }
                    decided
                });
                return undecided;
            }
        };
        self.passed += passed + in_lanes.passed;
        self.counts[0].1 += total + in_lanes.counted;
        undecided
    }

    /// Folds `rows` with a step made for this kernel's shape, at most one term and one
    /// count, and adds the totals; `Err(rows)` for any other shape, whose rows take the
    /// general form ([`CountKernel::apply_fast`]). Each shape and column gets a loop of its
    /// own, holding the term and the totals in registers.
    #[inline(always)]
    pub fn fold_rows<const W: usize, F: FoldRows<W>>(&mut self, rows: F) -> std::result::Result<F::Out, F> {
        let (term, shape) = match (&*self.terms, &*self.counts) {
            (&[term], &[(shape, _)]) => (Some(term), shape),
            (&[], &[(shape, _)]) => (None, shape),
            _ => return Err(rows),
        };
        let (out, (passed, total)) = match term {
            Some(term) => for_column!(term.column, |column| for_count!(shape, |counted| {
                rows.fold(self, move |(passed, total), row| match row.int_or_null(column) {
                    Ok(Some(v)) if term.holds(v) => Some((passed + 1, total + counted(row))),
                    // Failed, or compared a NULL.
                    Ok(_) => Some((passed, total)),
                    Err(()) => None,
                })
            })),
            None => for_count!(shape, |counted| {
                rows.fold(self, move |(passed, total), row| Some((passed + 1, total + counted(row))))
            }),
        };
        self.passed += passed;
        self.counts[0].1 += total;
        Ok(out)
    }

    /// Whether every column the kernel reads is one of the first `width`: then a fast
    /// walk of `width` columns finds them all ([`CountKernel::apply_fast`]).
    pub fn reads_below(&self, width: usize) -> bool {
        let counted = self.counts.iter().filter_map(|(shape, _)| shape.column());
        self.terms.iter().map(|t| t.column).chain(counted).all(|c| c < width)
    }

    /// [`CountKernel::apply`] for a row the fast walk of `W` columns took; the kernel
    /// [`CountKernel::reads_below`] `W`.
    #[inline(always)]
    pub fn apply_fast<const W: usize>(&mut self, row: &FastRow<'_, W>) -> KernelVerdict {
        self.decide(|col| row.int_or_null(Column::of::<W>(col)), |col| row.is_null(Column::of::<W>(col)))
    }

    /// Whether the kernel reads nothing of a row: no filter, and only COUNT(*) calls. Rows
    /// can then be counted without being looked at ([`CountKernel::count_rows`]).
    pub fn reads_no_columns(&self) -> bool {
        self.terms.is_empty() && self.counts.iter().all(|&(shape, _)| shape == CountShape::Rows)
    }

    /// Counts `n` rows at once, for a kernel that [`CountKernel::reads_no_columns`].
    pub fn count_rows(&mut self, n: u64) {
        debug_assert!(self.reads_no_columns(), "rows counted unread by a kernel that reads columns");
        self.passed += n;
        for (_, total) in &mut *self.counts {
            *total += n;
        }
    }

    /// Rows that passed the filter here (not those handed back to the pipeline).
    pub fn passed(&self) -> u64 {
        self.passed
    }

    /// Gives the counts to the aggregate stage of `stages` they were computed for, and the
    /// rows passed to the row-source probes before it; adds those rows to `stats`'s
    /// `count kernel rows passed`.
    pub fn hand_totals(&self, stages: &mut [Stage<'_>], stats: &SessionStats) {
        stats.add(Stat::CountKernelRowsPassed, self.passed());
        hand_counts(stages, self.passed(), &self.totals());
    }

    /// The totals, one per aggregate call in call order.
    pub fn totals(&self) -> Vec<u64> {
        self.counts.iter().map(|&(_, total)| total).collect()
    }
}

/// Gives counts made outside the pipeline to the aggregate stage of `stages` (`totals`,
/// one per aggregate call in call order), and the `passed` rows to the row-source probes
/// before it: what a count kernel, or an in-memory scan answering from its bitmaps, hands
/// over when it ends.
pub fn hand_counts(stages: &mut [Stage<'_>], passed: u64, totals: &[u64]) {
    aggregate_after(stages, passed).add_counts(totals)
}

/// Gives what a scan folded without rows to the aggregate stage (one
/// [`super::aggregate::Partial`] per call), and the `passed` rows to the probes before it.
pub fn hand_partials(stages: &mut [Stage<'_>], passed: u64, partials: &[super::aggregate::Partial]) -> Result<()> {
    aggregate_after(stages, passed).add_partials(partials)
}

/// The aggregate stage of `stages`, after telling the row-source probes before it of the
/// `passed` rows.
pub(crate) fn aggregate_after<'s>(
    stages: &'s mut [Stage<'_>],
    passed: u64,
) -> &'s mut super::aggregate::AggregateStage {
    for stage in stages.iter_mut() {
        match stage {
            Stage::Probe(p) => p.add_rows(passed),
            Stage::Aggregate(a) => return a,
            _ => {}
        }
    }
    unreachable!("counts are made only for a plan with an aggregate stage")
}

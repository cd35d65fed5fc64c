//! One unit of a columnar scan, an IMCU of the column store or a decompressed
//! compression unit of a compressed table, and what the statement asks of it
//! ([`UnitScan`]): the plan's shape as a columnar scan sees it ([`Shape`]: the WHERE
//! clause's conjuncts that test one column, by bounds or by LIKE, the aggregate's
//! folds), those conjuncts as tests on a unit's codes ([`unit_predicates`]: a LIKE
//! matches each distinct key of a dictionary once, or each row's bytes of plain keys),
//! a unit pruned by its columns' smallest and largest values ([`pruned`]), then counts,
//! sums, MIN and MAX folded from bitmaps and codes, a HASH GROUP BY folded a column at a
//! time ([`crate::exec::unit_group`]), or the kept rows pushed through the stages, each
//! read in place ([`UnitRow`]: a column is decoded when a stage asks for it). A hash
//! join's probe scan first narrows the kept rows by the join's filter, reading the key
//! columns only ([`JoinFilterStage::check_unit`]), so a row the filter drops is never
//! decoded nor folded (the filter of a join with a grouped view comes before the view's
//! GROUP BY).
//!
//! Invariant: the result never depends on which conjuncts ran on codes: rows a unit
//! decodes go through the WHERE clause's filter stage again, unless the unit ran every
//! conjunct (then the stage passes them unchecked, as a fold would count them).

use crate::access::Flow;
use crate::error::Result;
use crate::exec::Stage;
use crate::exec::aggregate::{FoldShape, Partial};
use crate::exec::join_filter::JoinFilterStage;
use crate::exec::kernel;
use crate::exec::unit_group::{self, GroupedShape};
use crate::expr::functions::FunctionContext;
use crate::expr::predicates::{self, ColumnBound};
use crate::expr::{Expr, LikePattern};
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::cu::{CuPredicate, UnitFold};
use crate::inmemory::imcu::{Imcu, UnitNumbers, UnitRow, ValueKind};
use crate::inmemory::simd::Isa;
use crate::types::{DataType, Datum, Value};
use smallvec::SmallVec;
use std::ops::Bound;

/// Bound `bound` (what a conjunct says about one column, as the optimizer reads it) as a
/// test on a unit's codes, given the column's kind and type there; `None` when the unit
/// cannot run it (`<>`, a LIKE prefix, a literal of another type, CHAR).
fn predicate(bound: &ColumnBound, kind: ValueKind, data_type: DataType) -> Option<CuPredicate> {
    let range = |lower: &Option<(Value, bool)>, upper: &Option<(Value, bool)>| match kind {
        ValueKind::Int | ValueKind::Date | ValueKind::Timestamp | ValueKind::YearMonth | ValueKind::DaySecond => {
            // `inclusive` false moves the end one whole number inwards.
            let lo = match lower {
                None => i64::MIN,
                Some((v, inclusive)) => whole(v, kind)?.checked_add(i64::from(!*inclusive))?,
            };
            let hi = match upper {
                None => i64::MAX,
                Some((v, inclusive)) => whole(v, kind)?.checked_sub(i64::from(!*inclusive))?,
            };
            Some(CuPredicate::IntRange { lo, hi })
        }
        ValueKind::Text | ValueKind::NumberKey => {
            let end = |end: &Option<(Value, bool)>| -> Option<Bound<Vec<u8>>> {
                Some(match end {
                    None => Bound::Unbounded,
                    Some((v, true)) => Bound::Included(key(v, kind, data_type)?),
                    Some((v, false)) => Bound::Excluded(key(v, kind, data_type)?),
                })
            };
            Some(CuPredicate::KeyRange { lo: end(lower)?, hi: end(upper)? })
        }
    };
    match bound {
        ColumnBound::IsNull => Some(CuPredicate::IsNull),
        ColumnBound::IsNotNull => Some(CuPredicate::IsNotNull),
        ColumnBound::Eq(v) => range(&Some((v.clone(), true)), &Some((v.clone(), true))),
        ColumnBound::Range { lower, upper, exact: true } => range(lower, upper),
        ColumnBound::In(values) => match kind {
            ValueKind::Int | ValueKind::Date | ValueKind::Timestamp | ValueKind::YearMonth | ValueKind::DaySecond => {
                Some(CuPredicate::IntIn(values.iter().map(|v| whole(v, kind)).collect::<Option<_>>()?))
            }
            _ => Some(CuPredicate::KeyIn(values.iter().map(|v| key(v, kind, data_type)).collect::<Option<_>>()?)),
        },
        ColumnBound::Range { exact: false, .. } | ColumnBound::NotEq(_) => None,
    }
}

/// A literal as the whole number an Int, Date, Timestamp or interval unit compares (a
/// literal of another type is left to the row path).
fn whole(v: &Value, kind: ValueKind) -> Option<i64> {
    match (kind, v) {
        (ValueKind::Int, Datum::Int(i))
        | (ValueKind::Date, Datum::Date(i))
        | (ValueKind::Timestamp, Datum::Timestamp(i))
        | (ValueKind::YearMonth, Datum::YearMonth(i))
        | (ValueKind::DaySecond, Datum::DaySecond(i)) => Some(*i),
        _ => None,
    }
}

/// A literal as the bytes a Text or NumberKey unit compares.
fn key(v: &Value, kind: ValueKind, data_type: DataType) -> Option<Vec<u8>> {
    match (kind, v) {
        // CHAR compares blank-padded: left to the row path.
        (ValueKind::Text, Datum::Str(s)) if matches!(data_type, DataType::Varchar2 { .. }) && !s.is_empty() => {
            Some(s.as_bytes().to_vec())
        }
        (ValueKind::NumberKey, Datum::Int(_) | Datum::Num(_)) => {
            let mut out = Vec::new();
            crate::index::key::encode_value(v, data_type, &mut out).ok()?;
            Some(out)
        }
        _ => None,
    }
}

/// What one conjunct of the WHERE clause asks of one column, as a unit may test it.
enum ColumnTest {
    /// A comparison, range, IN list or NULL test with constants.
    Bound(ColumnBound),
    /// `col [NOT] LIKE pattern` (the pattern not NULL).
    Like { pattern: LikePattern, negated: bool },
}

impl ColumnTest {
    /// What conjunct `c` asks of one column, if it asks of one alone.
    fn of(c: predicates::Conjunct) -> Option<(usize, ColumnTest)> {
        match c.expr {
            Expr::Like { expr, pattern, negated } if !pattern.is_null() => match *expr {
                Expr::Column(column) => Some((column, ColumnTest::Like { pattern, negated })),
                _ => None,
            },
            _ => c.bound.map(|(column, bound)| (column, ColumnTest::Bound(bound))),
        }
    }

    /// The test on the codes of a unit whose column has `kind` and `data_type`; `None`
    /// when the unit cannot run it.
    fn predicate(&self, kind: ValueKind, data_type: DataType) -> Option<CuPredicate> {
        match self {
            ColumnTest::Bound(bound) => predicate(bound, kind, data_type),
            // Text keys are the values' UTF-8, what the row path matches.
            ColumnTest::Like { pattern, negated } => {
                (kind == ValueKind::Text).then(|| CuPredicate::Like { pattern: pattern.clone(), negated: *negated })
            }
        }
    }
}

/// The plan's shape as the scan sees it.
pub(crate) struct Shape {
    /// The conjuncts of the WHERE clause that test one column.
    tests: Vec<(usize, ColumnTest)>,
    /// Every conjunct tests one column.
    all_tests: bool,
    /// What each call of an aggregate after the filter folds, if a unit can fold them all.
    folds: Option<Vec<FoldShape>>,
    /// A HASH GROUP BY after the filter, when a unit can fold it a column at a time.
    grouped: Option<GroupedShape>,
}

impl Shape {
    pub(crate) fn of(stages: &[Stage<'_>], binds: &[crate::types::Value]) -> Shape {
        let plain: Vec<&Stage<'_>> = stages.iter().filter(|s| !before_the_where_clause(s)).collect();
        let (tests, all_tests, rest) = match plain.split_first() {
            Some((Stage::Filter(f), rest)) => {
                let conjuncts = predicates::conjuncts(&f.predicate, binds);
                let count = conjuncts.len();
                let tests: Vec<_> = conjuncts.into_iter().filter_map(ColumnTest::of).collect();
                let all = tests.len() == count;
                (tests, all, rest)
            }
            _ => (Vec::new(), true, &plain[..]),
        };
        let (folds, grouped) = match rest.first() {
            Some(Stage::Aggregate(a)) => (a.fold_shapes(), GroupedShape::of(a)),
            _ => (None, None),
        };
        Shape { tests, all_tests, folds, grouped }
    }
}

/// The predicates of `shape` each column of `imcu` can run on its codes, a conjunct at a
/// time (`None` where the unit cannot run it).
pub(crate) fn unit_predicates(imcu: &Imcu, shape: &Shape) -> Vec<(usize, Option<CuPredicate>)> {
    let mut predicates = Vec::new();
    unit_predicates_into(imcu, shape, &mut predicates);
    predicates
}

/// [`unit_predicates`] into `predicates`, emptied first.
pub(crate) fn unit_predicates_into(imcu: &Imcu, shape: &Shape, predicates: &mut Vec<(usize, Option<CuPredicate>)>) {
    predicates.clear();
    predicates.extend(
        shape
            .tests
            .iter()
            .map(|(c, test)| (*c, imcu.columns[*c].as_ref().and_then(|col| test.predicate(col.kind, col.data_type)))),
    );
}

/// Whether a column's smallest and largest values show that no row of `imcu` can pass.
pub(crate) fn pruned(imcu: &Imcu, predicates: &[(usize, Option<CuPredicate>)]) -> bool {
    predicates
        .iter()
        .any(|(c, p)| p.as_ref().is_some_and(|p| imcu.columns[*c].as_ref().is_some_and(|col| col.unit.excludes(p))))
}

/// One unit of a columnar scan (an IMCU, or a decompressed compression unit of a
/// compressed table) and what the statement asks of it.
pub(crate) struct UnitScan<'u> {
    /// Holds every table column the plan reads.
    pub imcu: &'u Imcu,
    pub predicates: &'u [(usize, Option<CuPredicate>)],
    pub shape: &'u Shape,
}

impl UnitScan<'_> {
    /// Runs the predicates on the rows set in `keep`, then folds the aggregates from the
    /// codes when every conjunct ran there, or pushes the kept rows through the stages;
    /// true when a stage stopped the scan.
    pub(crate) fn run(
        &self,
        keep: &mut Bitmap,
        isa: Isa,
        min_max: bool,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<bool> {
        let imcu = self.imcu;
        for (c, p) in self.predicates {
            if let (Some(p), Some(col)) = (p, imcu.columns[*c].as_ref()) {
                col.unit.filter_with(p, keep, isa, min_max);
            }
        }
        // A hash join's filter on the probe rows: checked on the key columns alone, so
        // the rows it drops are never decoded. Where the unit cannot check it, its stage
        // checks each row pushed, and nothing is folded past it.
        let checked = match join_filter(stages) {
            Some(j) => j.check_unit(imcu, keep)?,
            None => true,
        };
        // Every conjunct ran on the codes: the kept rows meet the WHERE clause.
        let filtered = self.shape.all_tests && self.predicates.iter().all(|(_, p)| p.is_some());
        let foldable = checked && filtered;
        match &self.shape.folds {
            Some(folds) if foldable && folds_in_memory(imcu, folds) => {
                let passed = keep.count_ones();
                let mut by_column = SmallVec::new();
                // Held inline: a unit's folds allocate nothing (a statement has few).
                let partials: SmallVec<[Partial; 4]> =
                    folds.iter().map(|&f| fold(imcu, f, keep, passed, &mut by_column)).collect::<Result<_>>()?;
                crate::exec::kernel::hand_partials(stages, passed, &partials)?;
                Ok(false)
            }
            _ => {
                if foldable && let Some(grouped) = &self.shape.grouped {
                    let folded = unit_group::fold_unit(imcu, keep, grouped, kernel::aggregate_after(stages, 0))?;
                    kernel::aggregate_after(stages, keep.count_ones_in(0..folded.div_ceil(64)));
                    if folded >= imcu.rows {
                        return Ok(false);
                    }
                    // The rest through the row path.
                    keep.clear_range(0..folded);
                }
                set_checked_upstream(stages, checked, filtered);
                let pushed = self.push_rows(keep, stages, f);
                set_checked_upstream(stages, false, false);
                pushed
            }
        }
    }

    /// Pushes the kept rows through the stages, each read in place ([`UnitRow`]: a
    /// column is decoded only when a stage asks for it); true when a stage stopped the
    /// scan.
    fn push_rows(&self, keep: &Bitmap, stages: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<bool> {
        let numbers = UnitNumbers::new(self.imcu, keep.count_ones() as usize);
        for row in keep.iter_ones() {
            if crate::exec::pipeline::push(stages, &UnitRow { imcu: self.imcu, row, numbers: &numbers }, f)?
                == Flow::Stop
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The join filter stage of `stages` (a hash join's probe input), if it has one.
fn join_filter<'s, 'a>(stages: &'s mut [Stage<'a>]) -> Option<&'s mut JoinFilterStage<'a>> {
    stages.iter_mut().find_map(|s| match s {
        Stage::JoinFilter(j) => Some(j),
        _ => None,
    })
}

/// Tells the join filter stage of `stages`, if any, whether the rows pushed now were
/// checked already (`joined`), and the WHERE clause's filter stage whether they meet
/// every conjunct (`filtered`): the stage [`Shape::of`] read the conjuncts from.
fn set_checked_upstream(stages: &mut [Stage<'_>], joined: bool, filtered: bool) {
    if let Some(j) = join_filter(stages) {
        j.set_checked_upstream(joined);
    }
    if let Some(Stage::Filter(f)) = stages.iter_mut().find(|s| !before_the_where_clause(s)) {
        f.set_checked_upstream(filtered);
    }
}

/// Whether the scan looks past `stage` for the WHERE clause's filter and the aggregate:
/// a probe, and a join filter, which narrows the kept rows before anything else reads
/// them.
fn before_the_where_clause(stage: &Stage<'_>) -> bool {
    matches!(stage, Stage::Probe(_) | Stage::JoinFilter(_))
}

/// Whether the unit can fold every call: each column is in it, and a sum is of whole
/// numbers (a DATE or a NUMBER with fractions is summed, or refused, by the general path).
fn folds_in_memory(imcu: &Imcu, folds: &[FoldShape]) -> bool {
    let column = |c: usize| imcu.columns.get(c).and_then(Option::as_ref);
    folds.iter().all(|f| match *f {
        FoldShape::Rows => true,
        FoldShape::NotNull(c) | FoldShape::Min(c) | FoldShape::Max(c) => column(c).is_some(),
        FoldShape::Sum(c) => column(c).is_some_and(|col| col.kind == ValueKind::Int),
    })
}

/// What call `shape` folds over the `passed` rows set in `keep`, from the unit's codes: a
/// count from the bitmaps, a sum from the codes, MIN and MAX as one value each. A column's
/// codes are folded once for all the calls on it (`by_column` keeps each column's fold).
fn fold<'u>(
    imcu: &'u Imcu,
    shape: FoldShape,
    keep: &Bitmap,
    passed: u64,
    by_column: &mut SmallVec<[(usize, UnitFold<'u>); 4]>,
) -> Result<Partial> {
    let column = |c: usize| imcu.columns[c].as_ref().expect("folds_in_memory checked the column");
    let mut folded = |c: usize| -> UnitFold<'u> {
        if let Some((_, f)) = by_column.iter().find(|(col, _)| *col == c) {
            return f.clone();
        }
        let f = column(c).unit.fold(keep);
        by_column.push((c, f.clone()));
        f
    };
    Ok(match shape {
        FoldShape::Rows => Partial { count: passed, ..Default::default() },
        FoldShape::NotNull(c) => {
            let count = match column(c).unit.null_bitmap() {
                None => passed,
                Some(nulls) => {
                    let mut not_null = keep.clone();
                    not_null.and_not_with(nulls);
                    not_null.count_ones()
                }
            };
            Partial { count, ..Default::default() }
        }
        FoldShape::Sum(c) => {
            let f = folded(c);
            // No value kept (or a unit of NULLs only): nothing to add.
            let sum = if f.count == 0 { 0 } else { f.sum.expect("a unit of whole numbers sums") };
            Partial { count: f.count, int_sum: sum, best: None }
        }
        FoldShape::Min(c) | FoldShape::Max(c) => {
            let f = folded(c);
            let best = if matches!(shape, FoldShape::Min(_)) { f.min } else { f.max };
            Partial { count: f.count, int_sum: 0, best: best.map(|v| column(c).to_datum(Some(v))).transpose()? }
        }
    })
}

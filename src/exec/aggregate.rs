//! SORT AGGREGATE (no GROUP BY) and HASH GROUP BY: folds rows into accumulators and, when
//! the input is done, pushes one row per group: the GROUP BY keys, then each aggregate.
//!
//! COUNT of a column only asks whether the column is NULL, so counting rows of a block
//! decodes nothing. A row's group is found by its keys as evaluated, borrowed from the
//! row (hashed with `foldhash`, a fixed seed); only a new group's keys are copied out.
//! Sums of whole numbers add in 128 bits and become decimal only when a value has a
//! fraction. LISTAGG keeps each value's text with its WITHIN GROUP keys and
//! sorts them when the group is done (a stable sort: equal keys keep the rows' order).

use super::downstream::{Downstream, Push, push_each};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::aggregate::{AggCall, AggFunc, LISTAGG_MAX_BYTES, Listagg};
use crate::expr::functions::FunctionContext;
use crate::types::{Datum, Value};
use hashbrown::HashTable;
use rust_decimal::Decimal;
use smallvec::SmallVec;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};

/// The running state of one aggregate call.
#[derive(Debug, Clone, Default)]
struct Accumulator {
    /// Non-null inputs seen (rows, for COUNT(*)).
    count: u64,
    int_sum: i128,
    decimal_sum: Option<Decimal>,
    /// SUM or AVG of intervals: `Some(true)` of YEAR TO MONTH ones (months in
    /// `int_sum`), `Some(false)` of DAY TO SECOND ones (microseconds).
    interval: Option<bool>,
    best: Option<Value>,
    distinct: Option<HashSet<Value>>,
    /// LISTAGG's values as text, each with its WITHIN GROUP keys.
    items: Vec<(Vec<Value>, String)>,
}

impl Accumulator {
    fn new(call: &AggCall) -> Accumulator {
        Accumulator { distinct: call.distinct.then(HashSet::new), ..Default::default() }
    }

    #[inline]
    fn add<R: RowAccess + ?Sized>(
        &mut self,
        call: &AggCall,
        shape: Shape,
        row: &R,
        f: &mut FunctionContext,
    ) -> Result<()> {
        if let Some(listagg) = &call.listagg {
            return self.add_item(call, listagg, row, f);
        }
        match (shape, &call.arg) {
            (Shape::CountRows, _) | (_, None) => self.count += 1,
            (Shape::CountColumn(i), _) => self.count += u64::from(!row.is_null(i)),
            (Shape::SumColumn(i), _)
                if self.interval.is_none()
                    && let Some(v) = row.small_int(i) =>
            {
                self.count += 1;
                self.int_sum += i128::from(v);
            }
            (Shape::SumColumn(_) | Shape::General, Some(arg)) => {
                let func = call.func;
                let v = arg.eval(row, f)?;
                if v.is_null() {
                    return Ok(());
                }
                if let Some(seen) = &mut self.distinct {
                    seen.insert(v.into_owned());
                    return Ok(());
                }
                self.fold(func, v)?;
            }
        }
        Ok(())
    }

    /// Keeps a LISTAGG value's text and its WITHIN GROUP keys (a NULL value is left out).
    fn add_item<R: RowAccess + ?Sized>(
        &mut self,
        call: &AggCall,
        listagg: &Listagg,
        row: &R,
        f: &mut FunctionContext,
    ) -> Result<()> {
        let Some(arg) = &call.arg else { return Ok(()) };
        let Some(text) = arg.eval(row, f)?.into_text().map(|t| t.into_owned()) else { return Ok(()) };
        let keys =
            listagg.order_by.iter().map(|k| k.expr.eval(row, f).map(Datum::into_owned)).collect::<Result<_>>()?;
        self.items.push((keys, text));
        Ok(())
    }

    /// LISTAGG's answer: the texts in WITHIN GROUP order (DISTINCT: each text once, where
    /// it first comes), joined by the delimiter; NULL when there are none.
    fn joined(mut self, call: &AggCall, listagg: &Listagg) -> Result<Value> {
        // Keys of different types (a DATE and a number under one CASE) are an error before
        // the sort, as Oracle's ORA-00932: within one type the order is total.
        for k in 0..listagg.order_by.len() {
            let mut values = self.items.iter().map(|(keys, _)| &keys[k]).filter(|v| !v.is_null());
            if let Some(first) = values.next()
                && let Some(other) = values.find(|v| type_family(v) != type_family(first))
            {
                return Err(Error::value(
                    "LISTAGG",
                    format!(
                        "inconsistent datatypes in WITHIN GROUP (ORDER BY ...): {} and {}",
                        first.type_name(),
                        other.type_name()
                    ),
                ));
            }
        }
        self.items.sort_by(|(a, _), (b, _)| {
            for ((x, y), key) in a.iter().zip(b).zip(&listagg.order_by) {
                let order = match (x.is_null(), y.is_null()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => {
                        return if key.nulls_first { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater };
                    }
                    (false, true) => {
                        return if key.nulls_first { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less };
                    }
                    // One family, checked above: the values always compare.
                    (false, false) => x.sql_cmp(y).ok().flatten().unwrap_or(std::cmp::Ordering::Equal),
                };
                let order = if key.descending { order.reverse() } else { order };
                if order.is_ne() {
                    return order;
                }
            }
            std::cmp::Ordering::Equal
        });
        let mut seen = HashSet::new();
        let mut out = String::new();
        let mut first = true;
        for (_, text) in &self.items {
            if call.distinct && !seen.insert(text.as_str()) {
                continue;
            }
            if !first {
                out.push_str(&listagg.delimiter);
            }
            first = false;
            out.push_str(text);
            if out.len() > LISTAGG_MAX_BYTES {
                return Err(Error::value(
                    "LISTAGG",
                    format!("result of string concatenation is too long (more than {LISTAGG_MAX_BYTES} bytes)"),
                ));
            }
        }
        Ok(if first { Datum::Null } else { Datum::string(out) })
    }

    fn fold(&mut self, func: AggFunc, v: Datum<'_>) -> Result<()> {
        self.count += 1;
        match func {
            AggFunc::Count | AggFunc::CountStar | AggFunc::Listagg => {}
            AggFunc::Sum | AggFunc::Avg => match v {
                Datum::Int(i) if self.interval.is_none() => self.int_sum += i128::from(i),
                Datum::YearMonth(x) | Datum::DaySecond(x) => {
                    let year_month = matches!(v, Datum::YearMonth(_));
                    let first = self.count == 1;
                    if !(first || self.interval == Some(year_month)) {
                        return Err(mixed(func, &v));
                    }
                    self.interval = Some(year_month);
                    self.int_sum += i128::from(x);
                }
                other if self.interval.is_some() => return Err(mixed(func, &other)),
                other => {
                    let d = other.to_decimal(func.name())?.expect("NULL was skipped");
                    let sum = self.decimal_sum.unwrap_or_default();
                    self.decimal_sum =
                        Some(sum.checked_add(d).ok_or_else(|| Error::value(func.name(), "numeric overflow"))?);
                }
            },
            AggFunc::Min | AggFunc::Max => self.consider(func, v)?,
        }
        Ok(())
    }

    /// Keeps `v` as MIN's or MAX's answer when it is better than the one kept.
    fn consider(&mut self, func: AggFunc, v: Datum<'_>) -> Result<()> {
        let better = match &self.best {
            None => true,
            Some(b) => {
                let o = v.sql_cmp(b)?.unwrap_or(std::cmp::Ordering::Equal);
                if func == AggFunc::Min { o.is_lt() } else { o.is_gt() }
            }
        };
        if better {
            self.best = Some(v.into_owned());
        }
        Ok(())
    }

    /// Merges what a scan folded without the rows (see [`Partial`]).
    fn merge(&mut self, func: AggFunc, partial: &Partial) -> Result<()> {
        if let Some(seen) = &mut self.distinct {
            // MIN or MAX (DISTINCT): the best value is the one value that matters.
            seen.extend(partial.best.iter().cloned());
            return Ok(());
        }
        self.count += partial.count;
        self.int_sum =
            self.int_sum.checked_add(partial.int_sum).ok_or_else(|| Error::value(func.name(), "numeric overflow"))?;
        if let Some(best) = &partial.best {
            self.consider(func, best.clone())?;
        }
        Ok(())
    }

    fn result(mut self, call: &AggCall) -> Result<Value> {
        if let Some(listagg) = &call.listagg {
            return self.joined(call, listagg);
        }
        if let Some(seen) = self.distinct.take() {
            let mut plain = Accumulator::default();
            for v in seen {
                plain.fold(call.func, v)?;
            }
            return plain.value(call.func);
        }
        self.value(call.func)
    }

    /// The answer of a call that is not LISTAGG, from what was folded.
    fn value(self, func: AggFunc) -> Result<Value> {
        Ok(match func {
            AggFunc::Count | AggFunc::CountStar => Datum::Int(self.count as i64),
            _ if self.count == 0 => Datum::Null,
            AggFunc::Min | AggFunc::Max => self.best.unwrap_or(Datum::Null),
            AggFunc::Listagg => unreachable!("LISTAGG's answer is joined above"),
            AggFunc::Sum | AggFunc::Avg if let Some(year_month) = self.interval => {
                let overflow = || Error::value(func.name(), "numeric overflow");
                let total = if func == AggFunc::Avg {
                    // Months truncated, microseconds rounded half away from zero.
                    let n = i128::from(self.count);
                    let (q, r) = (self.int_sum / n, self.int_sum % n);
                    if !year_month && 2 * r.abs() >= n { q + self.int_sum.signum() } else { q }
                } else {
                    self.int_sum
                };
                let v = i64::try_from(total).map_err(|_| overflow())?;
                if year_month { Datum::YearMonth(v) } else { Datum::DaySecond(v) }
            }
            AggFunc::Sum => self.total(func)?,
            AggFunc::Avg => {
                let total = self.total(func)?.to_decimal("AVG")?.unwrap_or_default();
                let avg = total
                    .checked_div(Decimal::from(self.count))
                    .ok_or_else(|| Error::value("AVG", "numeric overflow"))?;
                Datum::from_decimal(avg)
            }
        })
    }

    fn total(&self, func: AggFunc) -> Result<Value> {
        let overflow = || Error::value(func.name(), "numeric overflow");
        match self.decimal_sum {
            None => Ok(i64::try_from(self.int_sum).map(Datum::Int).or_else(|_| {
                Decimal::try_from_i128_with_scale(self.int_sum, 0).map(Datum::from_decimal).map_err(|_| overflow())
            })?),
            Some(d) => {
                let ints = Decimal::try_from_i128_with_scale(self.int_sum, 0).map_err(|_| overflow())?;
                Ok(Datum::from_decimal(d.checked_add(ints).ok_or_else(overflow)?))
            }
        }
    }
}

/// SUM or AVG given a value that is not of the kind of those before it.
fn mixed(func: AggFunc, v: &Datum<'_>) -> Error {
    Error::value(
        func.name(),
        format!("ORA-00932: inconsistent datatypes: {} among values of another type", v.type_name()),
    )
}

/// Numbers, strings, dates and timestamps, and each kind of interval: values of one
/// family compare with each other.
fn type_family(v: &Datum<'_>) -> u8 {
    match v {
        Datum::Int(_) | Datum::Num(_) => 0,
        Datum::Str(_) => 1,
        Datum::Date(_) | Datum::Timestamp(_) => 2,
        Datum::Null => 3,
        Datum::YearMonth(_) => 4,
        Datum::DaySecond(_) => 5,
    }
}

/// What an aggregate call needs from each row, decided once: counting rows or non-null
/// values of a column needs no value at all.
#[derive(Debug, Clone, Copy)]
enum Shape {
    CountRows,
    CountColumn(usize),
    /// SUM or AVG of a column (not DISTINCT): a whole number is added as it is read.
    SumColumn(usize),
    General,
}

impl Shape {
    fn of(call: &AggCall) -> Shape {
        match (&call.arg, call.func, call.distinct) {
            (None, _, _) => Shape::CountRows,
            (Some(Expr::Column(i)), AggFunc::Count, false) => Shape::CountColumn(*i),
            (Some(Expr::Column(i)), AggFunc::Sum | AggFunc::Avg, false) => Shape::SumColumn(*i),
            _ => Shape::General,
        }
    }
}

/// What an aggregate call of a plan without GROUP BY folds, when a scan can fold it
/// without handing over rows (the in-memory scan, from a unit's codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldShape {
    /// COUNT(*).
    Rows,
    /// COUNT(column).
    NotNull(usize),
    /// SUM(column) or AVG(column): the non-NULL values' count and sum.
    Sum(usize),
    /// MIN(column) or MAX(column) (DISTINCT or not): the count and the best value.
    Min(usize),
    Max(usize),
}

/// What a scan folded for one call: non-NULL values (rows for COUNT(*)), the sum of whole
/// numbers, and MIN's or MAX's best value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Partial {
    pub count: u64,
    pub int_sum: i128,
    pub best: Option<Value>,
}

/// What a COUNT call counts, for the scan's row kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountShape {
    Rows,
    NotNull(usize),
}

impl CountShape {
    /// The column whose non-NULL values are counted, if any.
    pub fn column(self) -> Option<usize> {
        match self {
            CountShape::Rows => None,
            CountShape::NotNull(col) => Some(col),
        }
    }
}

/// The groups' room an aggregate keeps from one execution of its plan to the next.
const KEPT_GROUPS: usize = 1024;

pub struct AggregateStage {
    pub group_by: Vec<Expr>,
    pub calls: Vec<AggCall>,
    shapes: Vec<Shape>,
    /// HAVING, over the output row (keys then aggregates).
    pub having: Option<Expr>,
    /// The single group of an aggregate without GROUP BY.
    single: Vec<Accumulator>,
    groups: HashTable<(Vec<Value>, Vec<Accumulator>)>,
}

/// A group's keys as hashed for [`AggregateStage::groups`]: the same for the keys borrowed
/// from a row and for the group's own copy of them.
fn group_hash(key: &[Datum<'_>]) -> u64 {
    let mut h = foldhash::fast::FixedState::with_seed(0x6c69_6f73_636f_7065).build_hasher();
    for d in key {
        d.hash(&mut h);
    }
    h.finish()
}

impl AggregateStage {
    pub fn new(group_by: Vec<Expr>, calls: Vec<AggCall>, having: Option<Expr>) -> AggregateStage {
        let single = calls.iter().map(Accumulator::new).collect();
        let shapes = calls.iter().map(Shape::of).collect();
        AggregateStage { group_by, calls, shapes, having, single, groups: HashTable::new() }
    }

    /// Back to no rows seen, for the plan's next execution. A kept plan holds no more
    /// than a small table's room for groups between executions.
    pub fn reset(&mut self) {
        self.single = self.calls.iter().map(Accumulator::new).collect();
        self.groups.clear();
        self.groups.shrink_to(KEPT_GROUPS, |(key, _)| group_hash(key));
    }

    /// Folds one row into its group's accumulators; the source goes on (an aggregate
    /// stops nothing).
    #[inline]
    fn fold_row<R: RowAccess + ?Sized>(&mut self, row: &R, f: &mut FunctionContext) -> Result<Flow> {
        let accs = if self.group_by.is_empty() {
            &mut self.single
        } else {
            let mut key = SmallVec::<[Datum<'_>; 4]>::new();
            for e in &self.group_by {
                key.push(e.eval(row, f)?);
            }
            let hash = group_hash(&key);
            let calls = &self.calls;
            match self.groups.find_mut(hash, |(k, _)| k.as_slice() == key.as_slice()) {
                Some((_, accs)) => accs,
                None => {
                    let group = (
                        key.into_iter().map(Datum::into_owned).collect(),
                        calls.iter().map(Accumulator::new).collect(),
                    );
                    &mut self.groups.insert_unique(hash, group, |(k, _)| group_hash(k)).into_mut().1
                }
            }
        };
        for ((acc, call), &shape) in accs.iter_mut().zip(&self.calls).zip(&self.shapes) {
            acc.add(call, shape, row, f)?;
        }
        Ok(Flow::Continue)
    }

    /// When every call is COUNT(*) or COUNT(column) and there is no GROUP BY: what each
    /// call counts (the shape a scan's row kernel can compute).
    pub fn count_shapes(&self) -> Option<Vec<CountShape>> {
        self.fold_shapes()?
            .into_iter()
            .map(|f| match f {
                FoldShape::Rows => Some(CountShape::Rows),
                FoldShape::NotNull(c) => Some(CountShape::NotNull(c)),
                FoldShape::Sum(_) | FoldShape::Min(_) | FoldShape::Max(_) => None,
            })
            .collect()
    }

    /// What each call folds, when every call is one a scan can fold from encoded values
    /// (COUNT, or SUM, AVG, MIN, MAX of a column, without GROUP BY); `None` otherwise.
    pub fn fold_shapes(&self) -> Option<Vec<FoldShape>> {
        if !self.group_by.is_empty() {
            return None;
        }
        self.calls
            .iter()
            .map(|call| match (&call.arg, call.func, call.distinct) {
                (None, _, _) => Some(FoldShape::Rows),
                (Some(Expr::Column(c)), AggFunc::Count, false) => Some(FoldShape::NotNull(*c)),
                (Some(Expr::Column(c)), AggFunc::Sum | AggFunc::Avg, false) => Some(FoldShape::Sum(*c)),
                (Some(Expr::Column(c)), AggFunc::Min, _) => Some(FoldShape::Min(*c)),
                (Some(Expr::Column(c)), AggFunc::Max, _) => Some(FoldShape::Max(*c)),
                _ => None,
            })
            .collect()
    }

    /// Merges what a scan folded, one [`Partial`] per call (of a plan
    /// [`AggregateStage::fold_shapes`] accepted).
    pub fn add_partials(&mut self, partials: &[Partial]) -> Result<()> {
        for ((acc, call), partial) in self.single.iter_mut().zip(&self.calls).zip(partials) {
            acc.merge(call.func, partial)?;
        }
        Ok(())
    }

    /// Adds counts computed by a row kernel, one per call.
    pub fn add_counts(&mut self, totals: &[u64]) {
        for (acc, t) in self.single.iter_mut().zip(totals) {
            acc.count += t;
        }
    }

    /// The groups and their accumulators, leaving none (the single group, without GROUP
    /// BY, with no key).
    fn take_groups(&mut self) -> Vec<(Vec<Value>, Vec<Accumulator>)> {
        if self.group_by.is_empty() {
            vec![(Vec::new(), std::mem::take(&mut self.single))]
        } else {
            std::mem::take(&mut self.groups).into_iter().collect()
        }
    }

    /// The output row of the group of `key`: the key, then each aggregate's result; `None`
    /// when HAVING does not keep it.
    fn output_row(
        &self,
        mut key: Vec<Value>,
        accs: Vec<Accumulator>,
        f: &mut FunctionContext,
    ) -> Result<Option<Vec<Value>>> {
        for (acc, call) in accs.into_iter().zip(&self.calls) {
            key.push(acc.result(call)?);
        }
        match &self.having {
            Some(h) if h.eval_condition(key.as_slice(), f)? != Some(true) => Ok(None),
            _ => Ok(Some(key)),
        }
    }
}

/// Rows are folded, not pushed on: the groups go on when the input is done.
impl Push for AggregateStage {
    #[inline]
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        self.fold_row(row, f)
    }

    /// Folds the selected rows of a block batch. Without GROUP BY, counts need no row
    /// access beyond the NULL flags of their column.
    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        _rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if !self.group_by.is_empty() {
            for &i in selection.iter() {
                self.fold_row(&batch.row(i as usize), f)?;
            }
            return Ok(Flow::Continue);
        }
        for ((acc, call), &shape) in self.single.iter_mut().zip(&self.calls).zip(&self.shapes) {
            match shape {
                Shape::CountRows => acc.count += selection.len() as u64,
                Shape::CountColumn(col) => {
                    acc.count += selection.iter().filter(|&&i| !batch.is_null(i as usize, col)).count() as u64
                }
                Shape::SumColumn(_) | Shape::General => {
                    for &i in selection.iter() {
                        acc.add(call, shape, &batch.row(i as usize), f)?;
                    }
                }
            }
        }
        Ok(Flow::Continue)
    }

    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        let groups = self.take_groups();
        push_each(groups, |(key, accs)| match self.output_row(key, accs, f)? {
            Some(row) => rest.push_owned(row, f),
            None => Ok(Flow::Continue),
        })?;
        rest.finish(f)
    }
}

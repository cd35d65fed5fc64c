//! SORT AGGREGATE (no GROUP BY) and HASH GROUP BY: folds rows into accumulators and, when
//! the input is done, pushes one row per group: the GROUP BY keys, then each aggregate.
//!
//! COUNT of a column only asks whether the column is NULL, so counting rows of a block
//! decodes nothing. A row's group is found by its keys as evaluated, borrowed from the
//! row (hashed with `foldhash`, a fixed seed); only a new group's keys are copied out.
//! A row whose keys are the last row's goes to that group without a look in the table
//! (rows often come in the order of their keys: lineitem by its order key).
//! A one-column whole-number key finds its group by its number (`IntGroups`, a dense
//! array where the numbers are not spread thin), which names the same group its keys
//! do; so does the column-at-a-time fold of in-memory units, by a slot's number. The
//! groups go on in the order they were made.
//! Sums of whole numbers add in 128 bits. Sums of other numbers with 64-bit mantissas
//! (the values of NUMBER(p,s) columns, and `+ - *` of them) add exactly in 128 bits at
//! the largest scale seen, without becoming values, until a value would take the sum
//! past a decimal's 96 bits; from there they go on as decimals, one after the other, so
//! that the answer is always the one decimals summed in row order give. LISTAGG keeps
//! each value's text with its WITHIN GROUP keys and sorts them when the group is done
//! (a stable sort: equal keys keep the rows' order).

use super::downstream::{Downstream, Push};
use crate::access::Flow;
use crate::access::{BlockBatch, RowAccess};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::aggregate::{AggCall, AggFunc, LISTAGG_MAX_BYTES, Listagg};
use crate::expr::functions::FunctionContext;
use crate::types::{Datum, ExactSum, Fixed, Value};
use hashbrown::HashTable;
use rust_decimal::Decimal;
use smallvec::SmallVec;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};

/// The distinct values a DISTINCT call has seen.
#[derive(Debug, Clone, Default)]
struct Seen(HashSet<Value>);

/// The running state of one aggregate call.
#[derive(Debug, Clone, Default)]
struct Accumulator {
    /// Non-null inputs seen (rows, for COUNT(*)).
    count: u64,
    /// The whole numbers (or the months or microseconds of intervals), exactly.
    int_sum: i128,
    /// The other numbers, while their sum is exact in 128 bits (see
    /// [`Accumulator::add_fraction`]) and `decimal_sum` is `None`.
    fractions: ExactSum,
    /// The other numbers once they are summed as decimals, one after the other.
    decimal_sum: Option<Decimal>,
    /// SUM or AVG of intervals: `Some(true)` of YEAR TO MONTH ones (months in
    /// `int_sum`), `Some(false)` of DAY TO SECOND ones (microseconds).
    interval: Option<bool>,
    best: Option<Value>,
    /// The values seen, for a DISTINCT call (boxed: an accumulator of a group stays small).
    distinct: Option<Box<Seen>>,
    /// LISTAGG's values as text, each with its WITHIN GROUP keys.
    items: Vec<(Vec<Value>, String)>,
}

impl Accumulator {
    fn new(call: &AggCall) -> Accumulator {
        Accumulator { distinct: call.distinct.then(Box::default), ..Default::default() }
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
                    && let Some(v) = row.small_fixed(i) =>
            {
                self.count += 1;
                self.add_number(call.func, v)?;
            }
            (Shape::SumExpr, Some(arg))
                if self.interval.is_none()
                    && let Some(v) = arg.fixed_point(row) =>
            {
                self.count += 1;
                self.add_number(call.func, v)?;
            }
            (Shape::SumColumn(_) | Shape::SumExpr | Shape::General, Some(arg)) => {
                let func = call.func;
                let v = arg.eval(row, f)?;
                if v.is_null() {
                    return Ok(());
                }
                if let Some(seen) = &mut self.distinct {
                    seen.0.insert(v.into_owned());
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
    fn joined(&mut self, call: &AggCall, listagg: &Listagg) -> Result<Value> {
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
                Datum::Int(i) if self.interval.is_none() => self.add_whole(func, i128::from(i))?,
                Datum::YearMonth(x) | Datum::DaySecond(x) => {
                    let year_month = matches!(v, Datum::YearMonth(_));
                    let first = self.count == 1;
                    if !(first || self.interval == Some(year_month)) {
                        return Err(mixed(func, &v));
                    }
                    self.interval = Some(year_month);
                    self.add_whole(func, i128::from(x))?;
                }
                other if self.interval.is_some() => return Err(mixed(func, &other)),
                other if let Some(v) = Fixed::of(&other) => self.add_number(func, v)?,
                other => {
                    let d = other.to_decimal(func.name())?.expect("NULL was skipped");
                    self.add_decimal(func, d)?;
                }
            },
            AggFunc::Min | AggFunc::Max => self.consider(func, v)?,
        }
        Ok(())
    }

    /// Adds a number that fits in a [`Fixed`]: a whole one to `int_sum`, any other
    /// with [`Accumulator::add_fraction`].
    #[inline]
    fn add_number(&mut self, func: AggFunc, v: Fixed) -> Result<()> {
        let v = v.normalized();
        if v.scale == 0 { self.add_whole(func, i128::from(v.mantissa)) } else { self.add_fraction(func, v) }
    }

    /// Adds `count` numbers at `scale` given by their exact `sum` and the sum of their
    /// magnitudes, when that gives the state adding them one by one with
    /// [`Accumulator::add_number`] would (so that the answer is the same): whole numbers
    /// whose sum fits, or numbers whose running sums cannot leave the exact range.
    /// `false`, nothing added, otherwise: the caller adds them one by one.
    fn add_run(&mut self, count: u64, sum: i128, magnitude: u128, scale: u8) -> bool {
        if self.interval.is_some() || self.decimal_sum.is_some() {
            return false;
        }
        if scale == 0 {
            let Some(total) = self.int_sum.checked_add(sum) else { return false };
            self.int_sum = total;
        } else if !self.fractions.add_run(sum, magnitude, scale) {
            return false;
        }
        self.count += count;
        true
    }

    #[inline]
    fn add_whole(&mut self, func: AggFunc, v: i128) -> Result<()> {
        self.int_sum = self.int_sum.checked_add(v).ok_or_else(|| Error::value(func.name(), "numeric overflow"))?;
        Ok(())
    }

    /// Adds a number with a fraction (in its one representation: no trailing zero).
    /// The numbers that are not whole are summed in order as decimals, which are exact
    /// until a sum needs more than 96 bits at its scale and then round; the sum of
    /// [`Fixed`] values is that same number, kept exactly in 128 bits up to the first
    /// value that would take it past 96 bits, where it becomes the decimal it stands
    /// for and the sum goes on as decimals. So a sum rounds where, and as, a sum of
    /// decimals does.
    #[inline]
    fn add_fraction(&mut self, func: AggFunc, v: Fixed) -> Result<()> {
        if self.decimal_sum.is_none() && self.fractions.add(v) {
            return Ok(());
        }
        self.add_decimal(func, v.into_decimal())
    }

    /// Adds a number that is not whole as a decimal, after the sum held exactly so far.
    fn add_decimal(&mut self, func: AggFunc, d: Decimal) -> Result<()> {
        let sum = match self.decimal_sum {
            Some(sum) => sum,
            None => std::mem::take(&mut self.fractions).into_decimal(),
        };
        self.decimal_sum = Some(sum.checked_add(d).ok_or_else(|| Error::value(func.name(), "numeric overflow"))?);
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
            seen.0.extend(partial.best.iter().cloned());
            return Ok(());
        }
        self.count += partial.count;
        self.add_whole(func, partial.int_sum)?;
        if let Some(best) = &partial.best {
            self.consider(func, best.clone())?;
        }
        Ok(())
    }

    fn result(&mut self, call: &AggCall) -> Result<Value> {
        if let Some(listagg) = &call.listagg {
            return self.joined(call, listagg);
        }
        if let Some(seen) = self.distinct.take() {
            let mut plain = Accumulator::default();
            for v in seen.0 {
                plain.fold(call.func, v)?;
            }
            return plain.value(call.func);
        }
        self.value(call.func)
    }

    /// The answer of a call that is not LISTAGG, from what was folded (MIN's or MAX's
    /// value taken out).
    fn value(&mut self, func: AggFunc) -> Result<Value> {
        Ok(match func {
            AggFunc::Count | AggFunc::CountStar => Datum::Int(self.count as i64),
            _ if self.count == 0 => Datum::Null,
            AggFunc::Min | AggFunc::Max => self.best.take().unwrap_or(Datum::Null),
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
        let fractions = match self.decimal_sum {
            Some(d) => d,
            None if self.fractions.is_empty() => {
                return i64::try_from(self.int_sum).map(Datum::Int).or_else(|_| {
                    Decimal::try_from_i128_with_scale(self.int_sum, 0).map(Datum::from_decimal).map_err(|_| overflow())
                });
            }
            None => self.fractions.into_decimal(),
        };
        let ints = Decimal::try_from_i128_with_scale(self.int_sum, 0).map_err(|_| overflow())?;
        Ok(Datum::from_decimal(fractions.checked_add(ints).ok_or_else(overflow)?))
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
    /// SUM or AVG of a column (not DISTINCT): a number with a 64-bit mantissa is added
    /// as it is read, without becoming a value.
    SumColumn(usize),
    /// SUM or AVG of another expression (not DISTINCT): tried as an exact decimal
    /// first ([`Expr::fixed_point`]).
    SumExpr,
    General,
}

impl Shape {
    fn of(call: &AggCall) -> Shape {
        match (&call.arg, call.func, call.distinct) {
            (None, _, _) => Shape::CountRows,
            (Some(Expr::Column(i)), AggFunc::Count, false) => Shape::CountColumn(*i),
            (Some(Expr::Column(i)), AggFunc::Sum | AggFunc::Avg, false) => Shape::SumColumn(*i),
            (Some(_), AggFunc::Sum | AggFunc::Avg, false) => Shape::SumExpr,
            _ => Shape::General,
        }
    }
}

/// What one aggregate call folds over a run of rows given a column at a time
/// ([`AggregateStage::fold_columns`]): row `i` of each slice is the run's row `i`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ColumnInput<'a> {
    /// COUNT(*): every row.
    Rows,
    /// COUNT(column): the rows not NULL (`None`: none is NULL).
    NotNull(Option<&'a [bool]>),
    /// SUM or AVG: each row's number, `mantissas[i]` × 10^-`scale`, unless NULL.
    Numbers { mantissas: &'a [i64], scale: u8, nulls: Option<&'a [bool]> },
}

/// The groups of the slots of one unit ([`AggregateStage::fold_columns`]): a slot's
/// group is looked up once per unit; and room the folds use again run after run.
pub(crate) struct SlotMap {
    /// Each slot's group number, `u32::MAX` until a row of it is folded.
    group: Vec<u32>,
    /// Each slot's place in the run being folded, `u32::MAX` between runs.
    place: Vec<u32>,
    /// The run's places: the slot and its group.
    place_group: Vec<(u32, usize)>,
    /// Each row's place.
    places: Vec<usize>,
    /// Each place's count, sum and sum of magnitudes, for one call.
    runs: Vec<(u64, i128, u128)>,
}

impl SlotMap {
    pub(crate) fn new(slots: usize) -> SlotMap {
        SlotMap {
            group: vec![u32::MAX; slots],
            place: vec![u32::MAX; slots],
            place_group: Vec::new(),
            places: Vec::new(),
            runs: Vec::new(),
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
    groups: Groups,
}

/// The groups of a HASH GROUP BY, stored flat: group `g`'s keys are
/// `keys[g × key_width ..]` and its accumulators `accs[g × calls ..]`, so a new group
/// costs no allocation of its own; the table finds a group's number by its keys' hash.
/// The groups go on in the order they were made (their keys and accumulators read in
/// the order they lie in memory, not the table's, whose order is its hashes').
#[derive(Default)]
struct Groups {
    /// Each group's hash ([`group_hash`] of its keys) and number.
    table: HashTable<(u64, u32)>,
    keys: Vec<Value>,
    accs: Vec<Accumulator>,
    /// The groups of a one-column whole-number key by its value, as rows and the
    /// column-at-a-time fold ([`AggregateStage::fold_columns`]) find them.
    by_int: IntGroups,
    /// The group found or made last: rows in the order of their keys (a table loaded
    /// in key order, a join probing in it) find theirs without a look in the table.
    last: Option<usize>,
}

/// Group numbers by a whole number, held densely from the least number seen: a row's
/// one-column whole-number key finds its group here without hashing the key, probing
/// the table and comparing keys, and so does a unit's slot (its own codes), in every
/// unit the fold meets it. Numbers past [`INT_GROUPS_SPAN`] from the least, or that
/// would spread the numbers held too thin, are not held (their groups are found by
/// their keys).
#[derive(Default)]
struct IntGroups {
    /// The number `groups[0]` is for.
    base: i64,
    /// Each number's group, `u32::MAX` for none yet.
    groups: Vec<u32>,
    /// How many numbers have a group.
    held: usize,
}

/// The widest span of numbers [`IntGroups`] holds: 16 MiB of group numbers.
const INT_GROUPS_SPAN: usize = 1 << 22;
/// The span [`IntGroups`] may take whatever it holds; past it, at most this many
/// numbers a number held (sparser numbers are found by their keys, not by a span mostly
/// empty).
const INT_GROUPS_FLOOR: usize = 1 << 16;
const INT_GROUPS_SPREAD: usize = 16;

impl IntGroups {
    #[inline]
    fn get(&self, v: i64) -> Option<u32> {
        let i = usize::try_from(v.checked_sub(self.base)?).ok()?;
        self.groups.get(i).copied().filter(|&g| g != u32::MAX)
    }

    /// Holds `group` for `v`, unless that would take the span past [`INT_GROUPS_SPAN`],
    /// or past [`INT_GROUPS_SPREAD`] numbers a number held (and [`INT_GROUPS_FLOOR`]).
    fn insert(&mut self, v: i64, group: u32) {
        if self.groups.is_empty() {
            self.base = v;
        }
        let widest = INT_GROUPS_SPAN.min(INT_GROUPS_FLOOR.max(INT_GROUPS_SPREAD * (self.held + 1)));
        if v < self.base {
            // Room below, at least as much again as held (numbers met in falling order
            // move the rest once per doubling).
            let Some(short) = self.base.checked_sub(v).and_then(|d| usize::try_from(d).ok()) else { return };
            let grow = short.max(self.groups.len());
            let Some(base) = self.base.checked_sub(grow as i64) else { return };
            if grow + self.groups.len() > widest {
                return;
            }
            let mut groups = vec![u32::MAX; grow];
            groups.extend_from_slice(&self.groups);
            self.groups = groups;
            self.base = base;
        }
        let Some(i) = v.checked_sub(self.base).and_then(|d| usize::try_from(d).ok()) else { return };
        if i >= widest {
            return;
        }
        if i >= self.groups.len() {
            self.groups.resize(i + 1, u32::MAX);
        }
        if self.groups[i] == u32::MAX {
            self.held += 1;
        }
        self.groups[i] = group;
    }
}

impl Groups {
    /// Empty again, keeping at most [`KEPT_GROUPS`] slots of the table and values of
    /// each vector.
    fn clear(&mut self) {
        self.table.clear();
        self.table.shrink_to(KEPT_GROUPS, |&(hash, _)| hash);
        self.keys.clear();
        self.keys.shrink_to(KEPT_GROUPS);
        self.accs.clear();
        self.accs.shrink_to(KEPT_GROUPS);
        self.by_int = IntGroups::default();
        self.last = None;
    }

    /// The accumulators of the group of `key`, a new group's made by `new_accs` when no
    /// group has that key.
    #[inline]
    fn accumulators(
        &mut self,
        key: SmallVec<[Datum<'_>; 4]>,
        calls: usize,
        new_accs: impl FnOnce(&mut Vec<Accumulator>),
    ) -> &mut [Accumulator] {
        let one_int = match key[..] {
            [Datum::Int(v)] => Some(v),
            _ => None,
        };
        let found = self.group_by_number(one_int, || Ok::<_, std::convert::Infallible>(key), new_accs);
        let g = found.unwrap_or_else(|never| match never {});
        &mut self.accs[g * calls..(g + 1) * calls]
    }

    /// The number of the group whose one-column whole-number key is `number`, found by
    /// the number ([`IntGroups`]); when the number is not held or there is none, the
    /// group of the keys `key` makes ([`Groups::group`]), then held by the number.
    #[inline]
    fn group_by_number<'k, E>(
        &mut self,
        number: Option<i64>,
        key: impl FnOnce() -> std::result::Result<SmallVec<[Datum<'k>; 4]>, E>,
        new_accs: impl FnOnce(&mut Vec<Accumulator>),
    ) -> std::result::Result<usize, E> {
        if let Some(g) = number.and_then(|v| self.by_int.get(v)) {
            return Ok(g as usize);
        }
        let g = self.group(key()?, new_accs);
        if let Some(v) = number {
            self.by_int.insert(v, g as u32);
        }
        Ok(g)
    }

    /// The number of the group of `key`, a new group's accumulators made by `new_accs`
    /// when no group has that key.
    #[inline]
    fn group(&mut self, key: SmallVec<[Datum<'_>; 4]>, new_accs: impl FnOnce(&mut Vec<Accumulator>)) -> usize {
        let width = key.len();
        if let Some(last) = self.last
            && self.keys[last * width..(last + 1) * width] == key[..]
        {
            return last;
        }
        let hash = group_hash(&key);
        let keys = &self.keys;
        let found = self.table.find(hash, |&(h, g)| {
            let at = g as usize * width;
            h == hash && keys[at..at + width] == key[..]
        });
        let g = match found {
            Some(&(_, g)) => g as usize,
            None => {
                let g = self.table.len();
                self.keys.extend(key.into_iter().map(Datum::into_owned));
                new_accs(&mut self.accs);
                let number = u32::try_from(g).expect("fewer than 2^32 groups fit in memory");
                self.table.insert_unique(hash, (hash, number), |&(h, _)| h);
                g
            }
        };
        self.last = Some(g);
        g
    }

    /// Hands each group's keys and accumulators to `each`, in the order they were made,
    /// until it says stop; then holds no group (and frees their room).
    fn drain(
        &mut self,
        key_width: usize,
        calls: usize,
        mut each: impl FnMut(&mut [Value], &mut [Accumulator]) -> Result<Flow>,
    ) -> Result<Flow> {
        let Groups { table, keys, accs, .. } = std::mem::take(self);
        let (mut keys, mut accs) = (keys, accs);
        for g in 0..table.len() {
            let flow = each(&mut keys[g * key_width..(g + 1) * key_width], &mut accs[g * calls..(g + 1) * calls])?;
            if flow == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
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
        AggregateStage { group_by, calls, shapes, having, single, groups: Groups::default() }
    }

    /// Back to no rows seen, for the plan's next execution. A kept plan holds no more
    /// than a small table's room for groups between executions.
    pub fn reset(&mut self) {
        self.single = self.calls.iter().map(Accumulator::new).collect();
        self.groups.clear();
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
            let calls = &self.calls;
            self.groups.accumulators(key, calls.len(), |accs| accs.extend(calls.iter().map(Accumulator::new)))
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

    /// The GROUP BY keys, over the stage's input rows.
    pub(crate) fn group_by(&self) -> &[Expr] {
        &self.group_by
    }

    /// The aggregate calls, over the stage's input rows.
    pub(crate) fn calls(&self) -> &[AggCall] {
        &self.calls
    }

    /// Folds a run of rows given a column at a time (a chunk of a unit's kept rows, see
    /// [`super::unit_group`]): row `i`'s group is the one of the keys `slot_key` gives
    /// for `slots[i]` (asked once per slot while `map` lasts; where `slot_int` gives the
    /// value of a one-column whole-number key, only for a value no unit gave before),
    /// and call `k` folds `inputs[k]`. The accumulators end as the rows pushed one by
    /// one leave them.
    pub(crate) fn fold_columns(
        &mut self,
        slots: &[u32],
        map: &mut SlotMap,
        mut slot_key: impl FnMut(u32) -> Result<SmallVec<[Value; 4]>>,
        slot_int: impl Fn(u32) -> Option<i64>,
        inputs: &[ColumnInput<'_>],
    ) -> Result<()> {
        debug_assert!(!self.group_by.is_empty() && inputs.len() == self.calls.len());
        // Each slot's place among the groups this run touches, and each place's group.
        let SlotMap { group, place, place_group, places, runs } = map;
        place_group.clear();
        places.clear();
        for &slot in slots {
            let p = &mut place[slot as usize];
            if *p == u32::MAX {
                let g = &mut group[slot as usize];
                if *g == u32::MAX {
                    let calls = &self.calls;
                    *g = self.groups.group_by_number(
                        slot_int(slot),
                        || slot_key(slot),
                        |accs| accs.extend(calls.iter().map(Accumulator::new)),
                    )? as u32;
                }
                *p = place_group.len() as u32;
                place_group.push((slot, *g as usize));
            }
            places.push(*p as usize);
        }
        for &(slot, _) in place_group.iter() {
            place[slot as usize] = u32::MAX;
        }
        let width = self.calls.len();
        let accs = &mut self.groups.accs;
        let present = |nulls: Option<&[bool]>, i: usize| nulls.is_none_or(|n| !n[i]);
        for (k, (call, input)) in self.calls.iter().zip(inputs).enumerate() {
            let acc_of = |p: usize| place_group[p].1 * width + k;
            match *input {
                ColumnInput::Rows => places.iter().for_each(|&p| accs[acc_of(p)].count += 1),
                ColumnInput::NotNull(nulls) => {
                    for (i, &p) in places.iter().enumerate() {
                        accs[acc_of(p)].count += u64::from(present(nulls, i));
                    }
                }
                ColumnInput::Numbers { mantissas, scale, nulls } => {
                    // Each place's count, exact sum and sum of magnitudes, added to its
                    // accumulator at once where that gives what adding them one by one
                    // does, one by one where it might not.
                    runs.clear();
                    runs.resize(place_group.len(), (0, 0, 0));
                    for (i, (&p, &m)) in places.iter().zip(mantissas).enumerate() {
                        if present(nulls, i) {
                            let run = &mut runs[p];
                            run.0 += 1;
                            run.1 += i128::from(m);
                            run.2 += u128::from(m.unsigned_abs());
                        }
                    }
                    for (p, &(count, sum, magnitude)) in runs.iter().enumerate() {
                        let acc = &mut accs[acc_of(p)];
                        if count == 0 || acc.add_run(count, sum, magnitude, scale) {
                            continue;
                        }
                        for (i, (&q, &mantissa)) in places.iter().zip(mantissas).enumerate() {
                            if q == p && present(nulls, i) {
                                acc.count += 1;
                                acc.add_number(call.func, Fixed { mantissa, scale })?;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Pushes each group's output row into `rest`: the single group's without GROUP BY,
    /// else each group's in the order they were made; then holds no group.
    fn push_groups<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<Flow> {
        let (calls, having) = (&self.calls, &self.having);
        if self.group_by.is_empty() {
            let mut single = std::mem::take(&mut self.single);
            return match output_row(calls, having, Vec::with_capacity(calls.len()), &mut single, f)? {
                Some(row) => rest.push_owned(row, f),
                None => Ok(Flow::Continue),
            };
        }
        let key_width = self.group_by.len();
        self.groups.drain(key_width, calls.len(), |key, accs| {
            let mut row = Vec::with_capacity(key_width + calls.len());
            row.extend(key.iter_mut().map(|v| std::mem::replace(v, Datum::Null)));
            match output_row(calls, having, row, accs, f)? {
                Some(row) => rest.push_owned(row, f),
                None => Ok(Flow::Continue),
            }
        })
    }
}

/// The output row of a group whose keys `row` holds: the keys, then each aggregate's
/// result (taken from `accs`); `None` when HAVING does not keep it.
fn output_row(
    calls: &[AggCall],
    having: &Option<Expr>,
    mut row: Vec<Value>,
    accs: &mut [Accumulator],
    f: &mut FunctionContext,
) -> Result<Option<Vec<Value>>> {
    for (acc, call) in accs.iter_mut().zip(calls) {
        row.push(acc.result(call)?);
    }
    match having {
        Some(h) if h.eval_condition(row.as_slice(), f)? != Some(true) => Ok(None),
        _ => Ok(Some(row)),
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
                Shape::SumColumn(_) | Shape::SumExpr | Shape::General => {
                    for &i in selection.iter() {
                        acc.add(call, shape, &batch.row(i as usize), f)?;
                    }
                }
            }
        }
        Ok(Flow::Continue)
    }

    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        self.push_groups(rest, f)?;
        rest.finish(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::functions::ArithOp;
    use proptest::prelude::*;

    #[test]
    fn int_groups_hold_each_number_met_in_any_order_within_their_span() {
        let mut held = IntGroups::default();
        // Rising, then falling below the first, then far apart.
        for (v, g) in [(10, 0), (12, 1), (7, 2), (-100, 3), (11, 4)] {
            held.insert(v, g);
        }
        for (v, g) in [(10, 0), (12, 1), (7, 2), (-100, 3), (11, 4)] {
            assert_eq!(held.get(v), Some(g), "{v}");
        }
        assert_eq!(held.get(8), None);
        assert_eq!(held.get(13), None);
        assert_eq!(held.get(i64::MIN), None);
        assert_eq!(held.get(i64::MAX), None);
        // Past the span from the least held: not held, and nothing else lost.
        held.insert(-100 + INT_GROUPS_SPAN as i64, 5);
        assert_eq!(held.get(-100 + INT_GROUPS_SPAN as i64), None);
        held.insert(i64::MIN, 6);
        assert_eq!(held.get(i64::MIN), None);
        // Sparse numbers: past the floor, no more than 16 numbers a number held.
        let mut sparse = IntGroups::default();
        sparse.insert(1, 0);
        sparse.insert(1 + INT_GROUPS_FLOOR as i64 - 1, 1);
        sparse.insert(1_000_000, 2);
        assert_eq!(
            (sparse.get(1), sparse.get(INT_GROUPS_FLOOR as i64), sparse.get(1_000_000)),
            (Some(0), Some(1), None)
        );
        assert!(sparse.groups.len() <= INT_GROUPS_FLOOR);
        assert_eq!(held.get(-100), Some(3));
        assert!(held.groups.len() <= INT_GROUPS_SPAN);
    }

    fn sum_call(arg: Expr) -> AggCall {
        AggCall { func: AggFunc::Sum, arg: Some(arg), distinct: false, text: "SUM(X)".into(), listagg: None }
    }

    /// SUM as decimals give it, the model the accumulator must match in every case:
    /// whole numbers added exactly, every other value added as a decimal in row order
    /// (rounding where a decimal sum rounds), the two added at the end.
    fn decimal_sum(values: &[Value]) -> std::result::Result<Value, String> {
        let overflow = || Error::value("SUM", "numeric overflow").to_string();
        if values.iter().all(Datum::is_null) {
            return Ok(Datum::Null);
        }
        let (mut ints, mut decimals) = (0i128, None::<Decimal>);
        for v in values.iter().filter(|v| !v.is_null()) {
            match v {
                Datum::Int(i) => ints += i128::from(*i),
                other => {
                    let d = other.to_decimal("SUM").map_err(|e| e.to_string())?.expect("not NULL");
                    decimals = Some(decimals.unwrap_or_default().checked_add(d).ok_or_else(overflow)?);
                }
            }
        }
        let ints_decimal = Decimal::try_from_i128_with_scale(ints, 0).map_err(|_| overflow());
        Ok(match decimals {
            None => i64::try_from(ints).map(Datum::Int).or_else(|_| ints_decimal.map(Datum::from_decimal))?,
            Some(d) => Datum::from_decimal(d.checked_add(ints_decimal?).ok_or_else(overflow)?),
        })
    }

    /// Numbers of every size, with values that make decimal sums round: a large whole
    /// number beside many digits of fraction.
    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Datum::Int),
            Just(Datum::Int(100_000_000_000)),
            (1i64..10, 15u32..=20).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
            (-100_000i64..100_000, 0u32..=6).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
            (any::<i64>(), 0u32..=28).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
            (-(1i128 << 95)..(1i128 << 95), 0u32..=28)
                .prop_map(|(m, s)| Datum::from_decimal(Decimal::from_i128_with_scale(m, s))),
            Just(Datum::Null),
        ]
    }

    fn sum_rows(call: &AggCall, rows: &[Vec<Value>]) -> std::result::Result<Value, String> {
        let shape = Shape::of(call);
        let mut acc = Accumulator::new(call);
        let mut f = FunctionContext::new(0, 1);
        for row in rows {
            acc.add(call, shape, row.as_slice(), &mut f).map_err(|e| e.to_string())?;
        }
        acc.result(call).map_err(|e| e.to_string())
    }

    /// The output rows of a HASH GROUP BY on column 0 with `calls` over `rows`, each
    /// execution of the stage (it is reset between them) giving the same rows.
    fn grouped(calls: Vec<AggCall>, rows: &[Vec<Value>]) -> Vec<Vec<Value>> {
        let width = 1 + calls.len();
        let mut stages = vec![
            crate::exec::pipeline::Stage::Aggregate(AggregateStage::new(vec![Expr::Column(0)], calls, None)),
            crate::exec::pipeline::Stage::Collect(crate::exec::CollectStage::new(width)),
        ];
        let mut f = FunctionContext::new(0, 1);
        let mut runs = Vec::new();
        for _ in 0..2 {
            stages.iter_mut().for_each(crate::exec::pipeline::Stage::reset);
            for row in rows {
                crate::exec::pipeline::push(&mut stages, row.as_slice(), &mut f).expect("folds");
            }
            crate::exec::pipeline::finish(&mut stages, &mut f).expect("finishes");
            let crate::exec::pipeline::Stage::Collect(c) = &mut stages[1] else { unreachable!() };
            let mut out = c.take_rows();
            out.sort_by(|a, b| a[0].sql_cmp(&b[0]).ok().flatten().unwrap_or(std::cmp::Ordering::Equal));
            runs.push(out);
        }
        assert_eq!(runs[0], runs[1], "a second execution gives the same groups");
        runs.pop().expect("two runs")
    }

    proptest! {
        /// Each key's group holds the count and sum of its rows, as a map of the keys
        /// counts them, with aggregate calls and without (GROUP BY alone).
        #[test]
        fn groups_hold_what_a_map_of_their_keys_holds(
            rows in proptest::collection::vec((0i64..40, -1000i64..1000), 0..300),
        ) {
            let mut model = std::collections::BTreeMap::<i64, (i64, i64)>::new();
            for &(k, v) in &rows {
                let e = model.entry(k).or_default();
                e.0 += 1;
                e.1 += v;
            }
            let values: Vec<Vec<Value>> = rows.iter().map(|&(k, v)| vec![Datum::Int(k), Datum::Int(v)]).collect();
            let count = AggCall { func: AggFunc::CountStar, arg: None, distinct: false, text: "COUNT(*)".into(), listagg: None };
            let with_calls = grouped(vec![count, sum_call(Expr::Column(1))], &values);
            let expected: Vec<Vec<Value>> =
                model.iter().map(|(&k, &(n, sum))| vec![Datum::Int(k), Datum::Int(n), Datum::Int(sum)]).collect();
            prop_assert_eq!(with_calls, expected);
            let keys_only = grouped(Vec::new(), &values);
            let expected: Vec<Vec<Value>> = model.keys().map(|&k| vec![Datum::Int(k)]).collect();
            prop_assert_eq!(keys_only, expected);
        }
    }

    proptest! {
        /// SUM of a column is what decimals summed in row order give, to the last
        /// digit and in every error, whichever values fit in 64 bits.
        #[test]
        fn sums_of_a_column_are_the_decimal_sums(values in proptest::collection::vec(number(), 1..12)) {
            let rows: Vec<Vec<Value>> = values.iter().map(|v| vec![v.clone()]).collect();
            prop_assert_eq!(sum_rows(&sum_call(Expr::Column(0)), &rows), decimal_sum(&values));
        }

        /// SUM of a product is what decimals summed in row order give for the products
        /// as evaluated the general way (whose scales are the canonical ones).
        #[test]
        fn sums_of_a_product_are_the_decimal_sums(
            pairs in proptest::collection::vec((number(), number()), 1..12),
        ) {
            let product = Expr::Arith { op: ArithOp::Mul, left: Box::new(Expr::Column(0)), right: Box::new(Expr::Column(1)) };
            let rows: Vec<Vec<Value>> = pairs.iter().map(|(a, b)| vec![a.clone(), b.clone()]).collect();
            // In row order: a row's product, then the sum so far, so that the first
            // overflow met (of a product or of the sum) is the error.
            let mut products = Vec::new();
            let mut expected = Ok(Datum::Null);
            for (a, b) in &pairs {
                match crate::expr::functions::arithmetic(ArithOp::Mul, a, b) {
                    Ok(p) => products.push(p),
                    Err(e) => {
                        expected = Err(e.to_string());
                        break;
                    }
                }
                expected = decimal_sum(&products);
                if expected.is_err() {
                    break;
                }
            }
            prop_assert_eq!(sum_rows(&sum_call(product), &rows), expected);
        }
    }

    #[test]
    fn a_sum_rounds_where_a_decimal_sum_rounds_whatever_the_row_order() {
        let tiny = Datum::from_decimal(Decimal::new(5, 18));
        let big = Datum::Int(100_000_000_000);
        let mut first: Vec<Value> = vec![big.clone()];
        first.extend(std::iter::repeat_n(tiny.clone(), 10));
        let mut last: Vec<Value> = std::iter::repeat_n(tiny, 10).collect();
        last.push(big);
        let call = sum_call(Expr::Column(0));
        for values in [first, last] {
            let rows: Vec<Vec<Value>> = values.iter().map(|v| vec![v.clone()]).collect();
            let sum = sum_rows(&call, &rows).unwrap();
            assert_eq!(sum.to_string(), "100000000000.00000000000000005");
        }
    }

    #[test]
    fn a_whole_sum_too_large_for_a_decimal_is_an_overflow() {
        let call = sum_call(Expr::Column(0));
        let mut acc = Accumulator::new(&call);
        acc.merge(AggFunc::Sum, &Partial { count: 1, int_sum: 1i128 << 100, best: None }).unwrap();
        acc.add_number(AggFunc::Sum, Fixed { mantissa: 5, scale: 1 }).unwrap();
        let e = acc.result(&call).unwrap_err().to_string();
        assert!(e.contains("numeric overflow"), "{e}");
    }
}

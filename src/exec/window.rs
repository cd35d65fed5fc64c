//! WINDOW SORT: analytic functions (`ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)`).
//! The stage holds every row it is pushed, then for each call sorts the rows by the
//! call's partition and order keys, walks each partition computing the call's value
//! for every row, and appends the values as columns after the row's own; the rows then
//! go on in the order of the last call's sort.
//!
//! The window of a row is Oracle's default: with an ORDER BY, the partition's rows up
//! to the row and its peers (rows of equal order keys: `RANGE BETWEEN UNBOUNDED
//! PRECEDING AND CURRENT ROW`); without one, the whole partition. Aggregates over the
//! window follow SQL's NULL rules (SUM, AVG, MIN, MAX of no value are NULL, COUNT is 0).

use super::downstream::{Downstream, Push, hold, hold_owned, push_each};
use super::sort::{SortKey, compare_rows};
use crate::access::{Flow, RowAccess};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::{ArithOp, FunctionContext, arithmetic};
use crate::types::{Datum, Value};
use std::cmp::Ordering;

/// An analytic function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    /// NTILE(n): the bucket (1..=n) of the row, the partition cut in n parts of sizes
    /// differing by at most one, the larger first.
    Ntile,
    /// LAG / LEAD (expr [, offset [, default]]): `expr` of the row `offset` before / after.
    Lag,
    Lead,
    FirstValue,
    LastValue,
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

impl WindowFunc {
    pub fn from_name(name: &str, star: bool) -> Option<WindowFunc> {
        Some(match name {
            "ROW_NUMBER" => WindowFunc::RowNumber,
            "RANK" => WindowFunc::Rank,
            "DENSE_RANK" => WindowFunc::DenseRank,
            "NTILE" => WindowFunc::Ntile,
            "LAG" => WindowFunc::Lag,
            "LEAD" => WindowFunc::Lead,
            "FIRST_VALUE" => WindowFunc::FirstValue,
            "LAST_VALUE" => WindowFunc::LastValue,
            "COUNT" if star => WindowFunc::CountStar,
            "COUNT" => WindowFunc::Count,
            "SUM" => WindowFunc::Sum,
            "AVG" => WindowFunc::Avg,
            "MIN" => WindowFunc::Min,
            "MAX" => WindowFunc::Max,
            _ => return None,
        })
    }

    /// The arguments it takes: at least, at most.
    pub fn arity(self) -> (usize, usize) {
        match self {
            WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::CountStar => (0, 0),
            WindowFunc::Ntile => (1, 1),
            WindowFunc::Lag | WindowFunc::Lead => (1, 3),
            _ => (1, 1),
        }
    }
}

/// One order key of a window.
#[derive(Debug, Clone)]
pub struct WindowOrder {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: bool,
}

/// One analytic function call.
#[derive(Debug, Clone)]
pub struct WindowCall {
    pub func: WindowFunc,
    pub args: Vec<Expr>,
    pub partition: Vec<Expr>,
    pub order: Vec<WindowOrder>,
}

pub struct WindowStage {
    /// The columns of the rows it is pushed; each call's value is appended after them.
    pub width: usize,
    pub calls: Vec<WindowCall>,
    rows: Vec<Vec<Value>>,
}

impl WindowStage {
    pub fn new(width: usize, calls: Vec<WindowCall>) -> WindowStage {
        WindowStage { width, calls, rows: Vec::new() }
    }

    /// Back to no rows held, for the plan's next execution.
    pub fn reset(&mut self) {
        self.rows = Vec::new();
    }
}

impl Push for WindowStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold(&mut self.rows, row, self.width)
    }

    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        row: Vec<Value>,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold_owned(&mut self.rows, row, self.width)
    }

    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        let mut rows = std::mem::take(&mut self.rows);
        let mut order: Vec<usize> = (0..rows.len()).collect();
        for call in &self.calls {
            order = compute(call, &mut rows, f)?;
        }
        let mut slots: Vec<Option<Vec<Value>>> = rows.into_iter().map(Some).collect();
        push_each(order, |i| rest.push_owned(slots[i].take().expect("each row goes on once"), f))?;
        rest.finish(f)
    }
}

/// Appends `call`'s value to every row; returns the rows' indexes in the call's order.
fn compute(call: &WindowCall, rows: &mut [Vec<Value>], f: &mut FunctionContext) -> Result<Vec<usize>> {
    let parts = call.partition.len();
    // Each row's partition values, then its order values: the sort keys.
    let mut keys: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    let mut args: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let mut k = Vec::with_capacity(parts + call.order.len());
        for e in call.partition.iter().chain(call.order.iter().map(|o| &o.expr)) {
            k.push(e.eval(row.as_slice(), f)?.into_owned());
        }
        keys.push(k);
        args.push(call.args.iter().map(|a| a.eval(row.as_slice(), f).map(Datum::into_owned)).collect::<Result<_>>()?);
    }
    let mut sort_keys: Vec<SortKey> =
        (0..parts).map(|column| SortKey { column, descending: false, nulls_first: false }).collect();
    sort_keys.extend(call.order.iter().enumerate().map(|(i, o)| SortKey {
        column: parts + i,
        descending: o.descending,
        nulls_first: o.nulls_first,
    }));
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| compare_rows(&sort_keys, &keys[a], &keys[b]));
    let same =
        |a: usize, b: usize, upto: usize| compare_rows(&sort_keys[..upto], &keys[a], &keys[b]) == Ordering::Equal;
    let mut values: Vec<Value> = vec![Datum::Null; rows.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && same(order[start], order[end], parts) {
            end += 1;
        }
        partition(call, &order[start..end], &|a, b| same(a, b, sort_keys.len()), &args, &mut values)?;
        start = end;
    }
    for (row, value) in rows.iter_mut().zip(values) {
        row.push(value);
    }
    Ok(order)
}

/// The values of `call` for the rows of one partition, `members` in the call's order;
/// `peers` says whether two rows have equal order keys.
fn partition(
    call: &WindowCall,
    members: &[usize],
    peers: &dyn Fn(usize, usize) -> bool,
    args: &[Vec<Value>],
    out: &mut [Value],
) -> Result<()> {
    let n = members.len();
    let ordered = !call.order.is_empty();
    // The last row of each row's window: its last peer, or the partition's last row.
    let mut window_end = vec![n - 1; n];
    if ordered {
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && peers(members[i], members[j + 1]) {
                j += 1;
            }
            window_end[i..=j].fill(j);
            i = j + 1;
        }
    }
    let arg = |pos: usize, a: usize| args[members[pos]].get(a).cloned().unwrap_or(Datum::Null);
    match call.func {
        WindowFunc::RowNumber => {
            for (pos, &m) in members.iter().enumerate() {
                out[m] = Datum::Int(pos as i64 + 1);
            }
        }
        WindowFunc::Rank | WindowFunc::DenseRank => {
            let (mut rank, mut dense) = (0i64, 0i64);
            for pos in 0..n {
                if pos == 0 || !peers(members[pos - 1], members[pos]) {
                    rank = pos as i64 + 1;
                    dense += 1;
                }
                out[members[pos]] = Datum::Int(if call.func == WindowFunc::Rank { rank } else { dense });
            }
        }
        WindowFunc::Ntile => {
            let buckets = match arg(0, 0) {
                Datum::Int(b) if b > 0 => b as usize,
                other => {
                    return Err(Error::value(
                        "NTILE",
                        format!("takes a positive whole number of buckets, not {other}"),
                    ));
                }
            };
            let (size, larger) = (n / buckets, n % buckets);
            let mut pos = 0;
            for bucket in 0..buckets.min(n) {
                let rows = size + usize::from(bucket < larger);
                for _ in 0..rows {
                    out[members[pos]] = Datum::Int(bucket as i64 + 1);
                    pos += 1;
                }
            }
        }
        WindowFunc::Lag | WindowFunc::Lead => {
            for pos in 0..n {
                let offset = match arg(pos, 1) {
                    Datum::Null if call.args.len() < 2 => 1,
                    Datum::Int(o) if o >= 0 => o as usize,
                    other => {
                        return Err(Error::value("LAG/LEAD", format!("takes an offset of 0 or more, not {other}")));
                    }
                };
                let at = if call.func == WindowFunc::Lag { pos.checked_sub(offset) } else { pos.checked_add(offset) };
                out[members[pos]] = match at.filter(|&p| p < n) {
                    Some(p) => arg(p, 0),
                    None => arg(pos, 2),
                };
            }
        }
        WindowFunc::FirstValue => {
            for &m in members {
                out[m] = arg(0, 0);
            }
        }
        WindowFunc::LastValue => {
            for pos in 0..n {
                out[members[pos]] = arg(window_end[pos], 0);
            }
        }
        _ => {
            // Running aggregates, window by window: each window extends the last.
            let mut acc = Running::default();
            let mut taken = 0;
            for pos in 0..n {
                while taken <= window_end[pos] {
                    acc.add(call.func, &arg(taken, 0))?;
                    taken += 1;
                }
                out[members[pos]] = acc.value(call.func)?;
            }
        }
    }
    Ok(())
}

/// An aggregate over a growing window.
#[derive(Default)]
struct Running {
    rows: i64,
    count: i64,
    sum: Option<Value>,
    best: Option<Value>,
}

impl Running {
    fn add(&mut self, func: WindowFunc, v: &Value) -> Result<()> {
        self.rows += 1;
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match func {
            WindowFunc::Sum | WindowFunc::Avg => {
                self.sum = Some(match &self.sum {
                    None => v.clone(),
                    Some(s) => arithmetic(ArithOp::Add, s, v)?,
                });
            }
            WindowFunc::Min | WindowFunc::Max => {
                let better = match &self.best {
                    None => true,
                    Some(b) => {
                        let o = v.sql_cmp(b)?;
                        if func == WindowFunc::Min { o == Some(Ordering::Less) } else { o == Some(Ordering::Greater) }
                    }
                };
                if better {
                    self.best = Some(v.clone());
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn value(&self, func: WindowFunc) -> Result<Value> {
        Ok(match func {
            WindowFunc::CountStar => Datum::Int(self.rows),
            WindowFunc::Count => Datum::Int(self.count),
            WindowFunc::Sum => self.sum.clone().unwrap_or(Datum::Null),
            WindowFunc::Avg => match &self.sum {
                None => Datum::Null,
                Some(s) => arithmetic(ArithOp::Div, s, &Datum::Int(self.count))?,
            },
            WindowFunc::Min | WindowFunc::Max => self.best.clone().unwrap_or(Datum::Null),
            _ => Datum::Null,
        })
    }
}

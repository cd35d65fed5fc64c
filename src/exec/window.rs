//! WINDOW SORT: analytic functions (`ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)`);
//! WINDOW BUFFER when every window is the whole input (`OVER ()`), which needs no sort;
//! WINDOW SORT PUSHED RANK when the query reading its block keeps only the rows ranked
//! up to some N ([`WindowStage::push_rank`]): the rows ranked past it stop here, and with
//! one ranking call over one partition only the rows that can rank within N are sorted.
//! The stage holds every row it is pushed, then sorts the rows by a call's partition and
//! order keys (once for calls one after the other over the same window), walks each
//! partition computing each call's value for every row, and appends the values as
//! columns after the row's own, in the calls' order; the rows then go on in the order of
//! the last sort.
//!
//! The window of a row is its call's frame ([`WindowFrame`]: `ROWS` counts rows before
//! and after it, `RANGE` takes the rows whose one order key lies within a distance of
//! its own, a `CURRENT ROW` of RANGE taking its peers, the rows of equal order keys), or
//! Oracle's default: with an ORDER BY, the partition's rows up to the row and its peers
//! (`RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`); without one, the whole
//! partition. An offset bound of RANGE puts a row whose key is NULL at its peers' edge
//! (the other NULLs).
//! Aggregates over the window follow SQL's NULL rules (SUM, AVG, MIN, MAX of no value
//! are NULL, COUNT is 0); an empty window (`1 FOLLOWING` on the last row) gives those.
//!
//! Invariant: a partition's windows are computed in one pass, the window sliding forward
//! (values added at its end, taken off at its start; MIN and MAX keep a queue of the
//! candidates); a window that moves back starts again from empty.

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

    /// Whether it reads the rows' order rather than a window of them: the ranking
    /// functions, NTILE, LAG and LEAD need an ORDER BY and take no frame.
    pub fn reads_order(self) -> bool {
        matches!(
            self,
            WindowFunc::RowNumber
                | WindowFunc::Rank
                | WindowFunc::DenseRank
                | WindowFunc::Ntile
                | WindowFunc::Lag
                | WindowFunc::Lead
        )
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
#[derive(Debug, Clone, PartialEq)]
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
    /// Its `ROWS | RANGE BETWEEN ...` clause (`None`: the default window).
    pub frame: Option<WindowFrame>,
    /// The call as written, for the plan's predicates.
    pub text: Box<str>,
}

/// `ROWS | RANGE BETWEEN start AND end`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    /// RANGE (distances of the one order key) rather than ROWS (counts of rows).
    pub range: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

/// One end of a window frame; an offset is a number of 0 or more (a whole number for
/// ROWS), checked when the call is bound.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Value),
    CurrentRow,
    Following(Value),
    UnboundedFollowing,
}

pub struct WindowStage {
    /// The columns of the rows it is pushed; each call's value is appended after them.
    pub width: usize,
    pub calls: Vec<WindowCall>,
    /// WINDOW SORT PUSHED RANK: only the rows whose value of ranking call `.0` is at most
    /// `.1` go on (the query reading the block filters on it).
    pub pushed_rank: Option<(usize, i64)>,
    rows: Vec<Vec<Value>>,
}

impl WindowStage {
    pub fn new(width: usize, calls: Vec<WindowCall>) -> WindowStage {
        WindowStage { width, calls, pushed_rank: None, rows: Vec::new() }
    }

    /// Keeps only the rows whose rank by call `call` (ROW_NUMBER, RANK or DENSE_RANK) is
    /// at most `limit` (the lower of two bounds on it); false when the call is not a
    /// ranking one, or another call's rank was pushed already (one bound a stage).
    pub fn push_rank(&mut self, call: usize, limit: i64) -> bool {
        let ranks = self
            .calls
            .get(call)
            .is_some_and(|c| matches!(c.func, WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank));
        let limit = match self.pushed_rank {
            Some((c, _)) if c != call => return false,
            Some((_, l)) => l.min(limit),
            None => limit,
        };
        if ranks {
            self.pushed_rank = Some((call, limit));
        }
        ranks
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
        // Calls one after the other over the same window share one sort.
        let mut first = 0;
        // With one ROW_NUMBER or RANK call and no partition, a pushed rank sorts only the
        // rows it keeps (a DENSE_RANK up to N may reach past the first N rows).
        let keep = self.pushed_rank.filter(|_| {
            let [call] = &self.calls[..] else { return false };
            call.partition.is_empty() && matches!(call.func, WindowFunc::RowNumber | WindowFunc::Rank)
        });
        while first < self.calls.len() {
            let call = &self.calls[first];
            let shared = self.calls[first..]
                .iter()
                .take_while(|c| c.partition == call.partition && c.order == call.order)
                .count();
            order = compute(&self.calls[first..first + shared], &mut rows, keep.map(|(_, l)| l), f)?;
            first += shared;
        }
        if let Some((call, limit)) = self.pushed_rank {
            let at = self.width + call;
            order.retain(|&i| matches!(rows[i].get(at), Some(Datum::Int(r)) if *r <= limit));
        }
        let mut slots: Vec<Option<Vec<Value>>> = rows.into_iter().map(Some).collect();
        push_each(order, |i| rest.push_owned(slots[i].take().expect("each row goes on once"), f))?;
        rest.finish(f)
    }
}

/// Appends the value of each of `calls` (which share one window: their partition and
/// order keys) to every row, sorting the rows once; returns the rows' indexes in the
/// window's order. With `keep` (one ranking call over one partition, whose rows past
/// that rank are dropped after), only the rows that can rank within it are sorted and
/// ranked: the first `keep` in the window's order and those tied with the last of them;
/// the others get NULL.
fn compute(
    calls: &[WindowCall],
    rows: &mut [Vec<Value>],
    keep: Option<i64>,
    f: &mut FunctionContext,
) -> Result<Vec<usize>> {
    let window = &calls[0];
    let parts = window.partition.len();
    // Each row's partition values, then its order values: the sort keys.
    let mut keys: Vec<Vec<Value>> = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let mut k = Vec::with_capacity(parts + window.order.len());
        for e in window.partition.iter().chain(window.order.iter().map(|o| &o.expr)) {
            k.push(e.eval(row.as_slice(), f)?.into_owned());
        }
        keys.push(k);
    }
    let mut sort_keys: Vec<SortKey> =
        (0..parts).map(|column| SortKey { column, descending: false, nulls_first: false }).collect();
    sort_keys.extend(window.order.iter().enumerate().map(|(i, o)| SortKey {
        column: parts + i,
        descending: o.descending,
        nulls_first: o.nulls_first,
    }));
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if let Some(keep) = keep.and_then(|k| usize::try_from(k).ok())
        && keep < order.len()
    {
        if keep == 0 {
            order.clear();
        } else {
            // Ties are broken by the rows' order, as the full (stable) sort breaks them:
            // the rows kept are the ones it would put first.
            let cmp = |a: &usize, b: &usize| compare_rows(&sort_keys, &keys[*a], &keys[*b]);
            order.select_nth_unstable_by(keep - 1, |a, b| cmp(a, b).then(a.cmp(b)));
            let last = order[keep - 1];
            let (head, tail) = order.split_at_mut(keep);
            let tied: Vec<usize> = tail.iter().copied().filter(|r| cmp(r, &last) == Ordering::Equal).collect();
            let mut kept = head.to_vec();
            kept.extend(tied);
            kept.sort_unstable();
            order = kept;
        }
    }
    // A window of the whole input (`OVER ()`) keeps the rows' order: nothing to sort.
    if !sort_keys.is_empty() {
        order.sort_by(|&a, &b| compare_rows(&sort_keys, &keys[a], &keys[b]));
    }
    let same =
        |a: usize, b: usize, upto: usize| compare_rows(&sort_keys[..upto], &keys[a], &keys[b]) == Ordering::Equal;
    let order_key = |m: usize| keys[m].get(parts).cloned().unwrap_or(Datum::Null);
    for call in calls {
        let args: Vec<Vec<Value>> = rows
            .iter()
            .map(|row| call.args.iter().map(|a| a.eval(row.as_slice(), f).map(Datum::into_owned)).collect())
            .collect::<Result<_>>()?;
        let mut values: Vec<Value> = vec![Datum::Null; rows.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && same(order[start], order[end], parts) {
                end += 1;
            }
            let peers = |a, b| same(a, b, sort_keys.len());
            partition(call, &order[start..end], &peers, &order_key, &args, &mut values)?;
            start = end;
        }
        for (row, value) in rows.iter_mut().zip(values) {
            row.push(value);
        }
    }
    Ok(order)
}

/// The values of `call` for the rows of one partition, `members` in the call's order;
/// `peers` says whether two rows have equal order keys, `order_key` gives a row's first
/// order key (a RANGE frame's).
fn partition(
    call: &WindowCall,
    members: &[usize],
    peers: &dyn Fn(usize, usize) -> bool,
    order_key: &dyn Fn(usize) -> Value,
    args: &[Vec<Value>],
    out: &mut [Value],
) -> Result<()> {
    let n = members.len();
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
        _ => {
            let frames = Frames::new(call, members, peers, order_key)?;
            let mut window = Sliding::new(call.func);
            for pos in 0..n {
                let (lo, hi) = frames.of(pos)?;
                out[members[pos]] = match call.func {
                    WindowFunc::FirstValue => {
                        if lo <= hi {
                            arg(lo as usize, 0)
                        } else {
                            Datum::Null
                        }
                    }
                    WindowFunc::LastValue => {
                        if lo <= hi {
                            arg(hi as usize, 0)
                        } else {
                            Datum::Null
                        }
                    }
                    func => {
                        window.slide(lo, hi, &|p| arg(p, 0))?;
                        window.value(func)?
                    }
                };
            }
        }
    }
    Ok(())
}

/// The windows of one partition's rows: for each position, the first and last position
/// of its window (first > last for an empty one).
struct Frames {
    frame: WindowFrame,
    descending: bool,
    /// Each position's first and last peer.
    peer_groups: Vec<(usize, usize)>,
    /// The positions whose order key is not NULL (a RANGE frame's offsets measure them).
    keyed: std::ops::Range<usize>,
    keys: Vec<Value>,
}

impl Frames {
    fn new(
        call: &WindowCall,
        members: &[usize],
        peers: &dyn Fn(usize, usize) -> bool,
        order_key: &dyn Fn(usize) -> Value,
    ) -> Result<Frames> {
        let n = members.len();
        let ordered = !call.order.is_empty();
        let frame = call.frame.clone().unwrap_or(WindowFrame {
            range: true,
            start: FrameBound::UnboundedPreceding,
            end: if ordered { FrameBound::CurrentRow } else { FrameBound::UnboundedFollowing },
        });
        let mut peer_groups = vec![(0, n.saturating_sub(1)); n];
        if ordered {
            let mut i = 0;
            while i < n {
                let mut j = i;
                while j + 1 < n && peers(members[i], members[j + 1]) {
                    j += 1;
                }
                peer_groups[i..=j].fill((i, j));
                i = j + 1;
            }
        }
        let offsets = matches!(frame.start, FrameBound::Preceding(_) | FrameBound::Following(_))
            || matches!(frame.end, FrameBound::Preceding(_) | FrameBound::Following(_));
        let (keys, keyed) = if frame.range && offsets {
            let keys: Vec<Value> = members.iter().map(|&m| order_key(m)).collect();
            let first = keys.iter().position(|k| !k.is_null()).unwrap_or(n);
            let last = keys.iter().rposition(|k| !k.is_null()).map_or(first, |l| l + 1);
            (keys, first..last)
        } else {
            (Vec::new(), 0..n)
        };
        let descending = call.order.first().is_some_and(|o| o.descending);
        Ok(Frames { frame, descending, peer_groups, keyed, keys })
    }

    /// The window of position `pos`, as (first, last) positions.
    fn of(&self, pos: usize) -> Result<(i64, i64)> {
        let n = self.peer_groups.len() as i64;
        let lo = self.bound(&self.frame.start, true, pos)?.max(0);
        let hi = self.bound(&self.frame.end, false, pos)?.min(n - 1);
        Ok((lo, hi))
    }

    /// Where bound `b` puts the start (`start`) or the end of `pos`'s window.
    fn bound(&self, b: &FrameBound, start: bool, pos: usize) -> Result<i64> {
        let n = self.peer_groups.len() as i64;
        let peer_edge = || {
            let (first, last) = self.peer_groups[pos];
            if start { first as i64 } else { last as i64 }
        };
        Ok(match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n - 1,
            FrameBound::CurrentRow if self.frame.range => peer_edge(),
            FrameBound::CurrentRow => pos as i64,
            FrameBound::Preceding(v) | FrameBound::Following(v) if !self.frame.range => {
                let v = match v {
                    Datum::Int(v) => *v,
                    _ => 0,
                };
                if matches!(b, FrameBound::Preceding(_)) {
                    (pos as i64).saturating_sub(v)
                } else {
                    (pos as i64).saturating_add(v)
                }
            }
            FrameBound::Preceding(v) | FrameBound::Following(v) => {
                let key = &self.keys[pos];
                if key.is_null() {
                    return Ok(peer_edge());
                }
                // An offset measures a number, a date or a timestamp (Oracle refuses the
                // call when it is parsed; the key's type shows here, and an interval offset
                // from a number key is arithmetic's error).
                if let Datum::Str(_) = key {
                    return Err(Error::value(
                        "RANGE",
                        "ORA-00902: invalid datatype (a RANGE offset needs an ORDER BY key that is a number or a date)",
                    ));
                }
                // "Preceding" lies before the row in the sort: smaller keys ascending,
                // larger descending.
                let toward_smaller = matches!(b, FrameBound::Preceding(_)) != self.descending;
                let op = if toward_smaller { ArithOp::Sub } else { ArithOp::Add };
                let target = match (key, v) {
                    (Datum::Timestamp(_), _) | (Datum::Date(_), Datum::YearMonth(_) | Datum::DaySecond(_)) => {
                        timestamp_edge(op, key, v)?
                    }
                    _ => arithmetic(op, key, v)?,
                };
                // Positions of `keyed` whose key sorts before the target (or at it).
                let before = |k: &Value, or_equal: bool| -> bool {
                    let o = k.sql_cmp(&target).ok().flatten().unwrap_or(Ordering::Equal);
                    let o = if self.descending { o.reverse() } else { o };
                    o == Ordering::Less || (or_equal && o == Ordering::Equal)
                };
                let keyed = &self.keys[self.keyed.clone()];
                // The start: the first key not before the target; the end: the last key
                // not after it.
                let at = (self.keyed.start + keyed.partition_point(|k| before(k, !start))) as i64;
                if start { at } else { at - 1 }
            }
        })
    }
}

/// The edge of a RANGE frame `offset` from a TIMESTAMP key, or from a DATE key by an
/// interval, measured to the microsecond: the key as a TIMESTAMP moved by the offset (a
/// number of days, or an interval). `key ± offset` would give a DATE for a TIMESTAMP and a
/// number, and drop a DATE's fraction of a second, moving the edge.
fn timestamp_edge(op: ArithOp, key: &Value, offset: &Value) -> Result<Value> {
    use crate::types::datetime::{MICROS_PER_DAY, date_micros};
    let out_of_range = || Error::value("RANGE", "the window frame's edge is out of range");
    let key = match key {
        Datum::Date(s) => Datum::Timestamp(date_micros(*s).ok_or_else(out_of_range)?),
        other => other.clone(),
    };
    let offset = match offset {
        Datum::Int(_) | Datum::Num(_) => {
            let days = offset.to_decimal("RANGE")?.unwrap_or_default();
            let micros = days
                .checked_mul(rust_decimal::Decimal::from(MICROS_PER_DAY))
                .map(|m| m.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero))
                .and_then(|m| i64::try_from(m).ok())
                .ok_or_else(out_of_range)?;
            Datum::DaySecond(micros)
        }
        other => other.clone(),
    };
    arithmetic(op, &key, &offset)
}

/// An aggregate over a window sliding forward: values enter at its end and leave at its
/// start; MIN and MAX keep the positions that may still be the best, best first.
struct Sliding {
    func: WindowFunc,
    /// The window now held, `lo..=hi` (empty when `hi < lo`).
    lo: i64,
    hi: i64,
    rows: i64,
    count: i64,
    sum: Option<Value>,
    best: std::collections::VecDeque<(usize, Value)>,
}

impl Sliding {
    fn new(func: WindowFunc) -> Sliding {
        Sliding { func, lo: 0, hi: -1, rows: 0, count: 0, sum: None, best: Default::default() }
    }

    /// Moves the window to `lo..=hi`.
    fn slide(&mut self, lo: i64, hi: i64, value: &dyn Fn(usize) -> Value) -> Result<()> {
        if lo > hi {
            *self = Sliding { lo, hi: lo - 1, ..Sliding::new(self.func) };
            return Ok(());
        }
        if lo < self.lo || hi < self.hi || self.hi < self.lo || lo > self.hi {
            // Moved back, or past everything held: start again from empty.
            *self = Sliding { lo, hi: lo - 1, ..Sliding::new(self.func) };
        }
        while self.hi < hi {
            self.hi += 1;
            self.add(self.hi as usize, value(self.hi as usize))?;
        }
        while self.lo < lo {
            self.remove(self.lo as usize, &value(self.lo as usize))?;
            self.lo += 1;
        }
        Ok(())
    }

    fn add(&mut self, pos: usize, v: Value) -> Result<()> {
        self.rows += 1;
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match self.func {
            WindowFunc::Sum | WindowFunc::Avg => {
                self.sum = Some(match &self.sum {
                    None => v,
                    Some(s) => arithmetic(ArithOp::Add, s, &v)?,
                });
            }
            WindowFunc::Min | WindowFunc::Max => {
                let keep = if self.func == WindowFunc::Min { Ordering::Less } else { Ordering::Greater };
                while let Some((_, last)) = self.best.back() {
                    // A candidate no better than the new value never becomes the best.
                    if last.sql_cmp(&v)? == Some(keep) {
                        break;
                    }
                    self.best.pop_back();
                }
                self.best.push_back((pos, v));
            }
            _ => {}
        }
        Ok(())
    }

    fn remove(&mut self, pos: usize, v: &Value) -> Result<()> {
        self.rows -= 1;
        if v.is_null() {
            return Ok(());
        }
        self.count -= 1;
        match self.func {
            WindowFunc::Sum | WindowFunc::Avg => {
                self.sum = match (&self.sum, self.count) {
                    (_, 0) => None,
                    (Some(s), _) => Some(arithmetic(ArithOp::Sub, s, v)?),
                    (None, _) => None,
                };
            }
            WindowFunc::Min | WindowFunc::Max if self.best.front().is_some_and(|(p, _)| *p == pos) => {
                self.best.pop_front();
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
            WindowFunc::Min | WindowFunc::Max => self.best.front().map_or(Datum::Null, |(_, v)| v.clone()),
            _ => Datum::Null,
        })
    }
}

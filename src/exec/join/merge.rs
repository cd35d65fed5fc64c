//! MERGE JOIN: both inputs kept and sorted on their keys (SORT JOIN), then merged in key
//! order; rows with a NULL key sort first and join nothing.

use super::{Join, JoinInput, JoinKind, Pair, collect, joined, key_of};
use crate::access::Flow;
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::pipeline::Stage;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::stats::Stat;
use crate::types::Value;
use std::cmp::Ordering;

impl Join {
    /// MERGE JOIN: both inputs kept and sorted on their keys (SORT JOIN), then merged in
    /// key order.
    pub(super) fn merge(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let sorted =
            |input: &JoinInput, keys: &[Expr], ctx: &mut ExecContext<'_>| -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
                let rows = collect(input, ctx)?;
                let mut keyed = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut key = Vec::new();
                    // A row with a NULL key joins nothing: it sorts with an empty key, first.
                    if !key_of(keys, &row, &mut ctx.functions, &mut key)? {
                        key.clear();
                    }
                    keyed.push((key, row));
                }
                keyed.sort_by(|a, b| compare_keys(&a.0, &b.0));
                ctx.access.stats.add(Stat::SortsMemory, 1);
                ctx.access.stats.add(Stat::SortsRows, keyed.len() as u64);
                Ok(keyed)
            };
        let left = sorted(&self.left, &self.left_keys, ctx)?;
        let right = sorted(&self.right, &self.right_keys, ctx)?;
        let f = &mut ctx.functions;
        let mut right_matched = vec![false; right.len()];
        let (mut i, mut j) = (0, 0);
        let emit = |out: &Pair<'_, '_>, stages: &mut [Stage<'_>], f: &mut FunctionContext| self.emit(out, stages, f);
        while i < left.len() {
            let key = &left[i].0;
            let group_end =
                left[i..].iter().position(|r| compare_keys(&r.0, key) != Ordering::Equal).map_or(left.len(), |n| i + n);
            if key.is_empty() {
                for (_, row) in &left[i..group_end] {
                    if self.kind.keeps_left()
                        && emit(&joined(Some(row), self.left.width, None), stages, f)? == Flow::Stop
                    {
                        return Ok(());
                    }
                }
                i = group_end;
                continue;
            }
            while j < right.len() && (right[j].0.is_empty() || compare_keys(&right[j].0, key) == Ordering::Less) {
                j += 1;
            }
            let right_end = right[j..]
                .iter()
                .position(|r| compare_keys(&r.0, key) != Ordering::Equal)
                .map_or(right.len(), |n| j + n);
            for (_, l) in &left[i..group_end] {
                let mut any = false;
                for (k, (_, r)) in right[j..right_end].iter().enumerate() {
                    let out = joined(Some(l), self.left.width, Some(r));
                    if !self.residual_holds(&out, f)? {
                        continue;
                    }
                    any = true;
                    right_matched[j + k] = true;
                    // A semi or anti join needs only to know that one right row joins.
                    if !self.kind.gives_pairs() {
                        break;
                    }
                    if emit(&out, stages, f)? == Flow::Stop {
                        return Ok(());
                    }
                }
                let alone = if any { self.kind == JoinKind::Semi } else { self.kind.keeps_left() };
                if alone && emit(&joined(Some(l), self.left.width, None), stages, f)? == Flow::Stop {
                    return Ok(());
                }
            }
            i = group_end;
        }
        if self.kind.keeps_right() {
            for ((_, r), _) in right.iter().zip(&right_matched).filter(|(_, m)| !**m) {
                if emit(&joined(None, self.left.width, Some(r)), stages, f)? == Flow::Stop {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Orders two keys of one type family (an empty key, a row with a NULL key, first).
fn compare_keys(a: &[Value], b: &[Value]) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.iter().zip(b).map(|(x, y)| x.sort_cmp(y)).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal),
    }
}

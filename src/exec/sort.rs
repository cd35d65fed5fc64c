//! SORT ORDER BY: holds every row, sorts on finish, then pushes them on in order.

use super::downstream::{Downstream, Push, hold, hold_owned, push_each};
use crate::access::Flow;
use crate::access::RowAccess;
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::types::Value;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    pub column: usize,
    pub descending: bool,
    /// NULLs first; Oracle's default is NULLS LAST ascending and NULLS FIRST descending.
    pub nulls_first: bool,
}

pub struct SortStage {
    pub keys: Vec<SortKey>,
    pub width: usize,
    pub rows: Vec<Vec<Value>>,
    /// Rows sorted, for `sorts (rows)`.
    pub sorted: u64,
}

impl Push for SortStage {
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold(&mut self.rows, row, self.width)
    }

    /// Holds a row built upstream, without copying its values.
    fn push_owned<D: Downstream + ?Sized>(
        &mut self,
        row: Vec<Value>,
        _rest: &mut D,
        _f: &mut FunctionContext,
    ) -> Result<Flow> {
        hold_owned(&mut self.rows, row, self.width)
    }

    fn finish<D: Downstream + ?Sized>(&mut self, rest: &mut D, f: &mut FunctionContext) -> Result<()> {
        let keys = self.keys.clone();
        self.sorted = self.rows.len() as u64;
        self.rows.sort_by(|a, b| compare_rows(&keys, a, b));
        push_each(std::mem::take(&mut self.rows), |row| rest.push_owned(row, f))?;
        rest.finish(f)
    }
}

pub(super) fn compare_rows(keys: &[SortKey], a: &[Value], b: &[Value]) -> Ordering {
    for k in keys {
        let (x, y) = (&a[k.column], &b[k.column]);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let o = x.sort_cmp(y);
                if k.descending { o.reverse() } else { o }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

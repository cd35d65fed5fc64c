//! The conditions of a WHERE clause as the optimizer sees them: each conjunct that bounds
//! one column by constants (`col op literal`, `literal op col`, `col BETWEEN a AND b`,
//! `col IN (a)`, `col LIKE 'prefix%'`, `col IS [NOT] NULL`) becomes a [`ColumnBound`];
//! the others stay opaque. Bounds are what index access turns into key ranges and what
//! selectivity estimates read.
//!
//! A constant may be a bind variable, or arithmetic on binds and literals: the bound then
//! holds the value of the execution the conjuncts are made for (the one planned, or a
//! later one whose index range is computed again).

use crate::expr::{CmpOp, Expr};
use crate::types::{Datum, Value};

/// What one conjunct says about one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnBound {
    /// `col = v`.
    Eq(Value),
    /// `lower <(=) col <(=) upper`; a missing end is unbounded. `exact` is false when the
    /// range only contains the rows (LIKE 'ab%' lies within ['ab', 'ac')): the conjunct
    /// must still be checked on each row.
    Range {
        lower: Option<(Value, bool)>,
        upper: Option<(Value, bool)>,
        exact: bool,
    },
    /// `col <> v`.
    NotEq(Value),
    /// `col IN (v1, v2, ...)` with more than one value.
    In(Vec<Value>),
    IsNull,
    IsNotNull,
}

impl ColumnBound {
    /// Whether the bound can hold only for a non-NULL value of the column.
    pub fn implies_not_null(&self) -> bool {
        !matches!(self, ColumnBound::IsNull)
    }
}

/// One conjunct of a WHERE clause.
#[derive(Debug, Clone)]
pub struct Conjunct {
    pub expr: Expr,
    /// The column and what the conjunct says about it, when it bounds one column.
    pub bound: Option<(usize, ColumnBound)>,
}

/// Splits a bound condition into its conjuncts and recognises the column bounds, with
/// `binds` as the values of its bind variables.
pub fn conjuncts(predicate: &Expr, binds: &[Value]) -> Vec<Conjunct> {
    let mut parts = Vec::new();
    split(predicate, &mut parts);
    parts.into_iter().map(|expr| Conjunct { bound: bound_of(&expr, binds), expr }).collect()
}

/// The conjuncts' bounds recognised anew for other bind values.
pub fn rebind(conjuncts: &mut [Conjunct], binds: &[Value]) {
    for c in conjuncts {
        c.bound = bound_of(&c.expr, binds);
    }
}

fn split(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            split(a, out);
            split(b, out);
        }
        other => out.push(other.clone()),
    }
}

/// The non-NULL value of a constant: a literal, a bind variable, or arithmetic on them.
fn literal(e: &Expr, binds: &[Value]) -> Option<Value> {
    let value = match e {
        Expr::Literal(v) => v.clone(),
        Expr::Bind { slot, .. } => binds.get(*slot)?.clone(),
        Expr::Arith { op, left, right } => {
            crate::expr::functions::arithmetic(*op, &literal(left, binds)?, &literal(right, binds)?).ok()?
        }
        Expr::Negate(x) => crate::expr::functions::negate(&literal(x, binds)?).ok()?,
        _ => return None,
    };
    (!matches!(value, Datum::Null)).then_some(value)
}

fn bound_of(e: &Expr, binds: &[Value]) -> Option<(usize, ColumnBound)> {
    let literal = |e: &Expr| literal(e, binds);
    match e {
        Expr::Compare { op, left, right } => {
            let (col, op, v) = match (&**left, &**right) {
                (Expr::Column(c), r) => (*c, *op, literal(r)?),
                (l, Expr::Column(c)) => (*c, op.flipped(), literal(l)?),
                _ => return None,
            };
            let bound = match op {
                CmpOp::Eq => ColumnBound::Eq(v),
                CmpOp::NotEq => ColumnBound::NotEq(v),
                CmpOp::Lt => ColumnBound::Range { lower: None, upper: Some((v, false)), exact: true },
                CmpOp::LtEq => ColumnBound::Range { lower: None, upper: Some((v, true)), exact: true },
                CmpOp::Gt => ColumnBound::Range { lower: Some((v, false)), upper: None, exact: true },
                CmpOp::GtEq => ColumnBound::Range { lower: Some((v, true)), upper: None, exact: true },
            };
            Some((col, bound))
        }
        Expr::Between { expr, low, high, negated: false } => {
            let Expr::Column(c) = &**expr else { return None };
            let (lo, hi) = (literal(low)?, literal(high)?);
            Some((*c, ColumnBound::Range { lower: Some((lo, true)), upper: Some((hi, true)), exact: true }))
        }
        Expr::InList { expr, list, negated: false } => {
            let Expr::Column(c) = &**expr else { return None };
            let values = list.iter().map(literal).collect::<Option<Vec<_>>>()?;
            match values.len() {
                1 => Some((*c, ColumnBound::Eq(values.into_iter().next().expect("one value")))),
                _ => Some((*c, ColumnBound::In(values))),
            }
        }
        Expr::IsNull { expr, negated } => {
            let Expr::Column(c) = &**expr else { return None };
            Some((*c, if *negated { ColumnBound::IsNotNull } else { ColumnBound::IsNull }))
        }
        Expr::Like { expr, pattern, negated: false } => {
            let Expr::Column(c) = &**expr else { return None };
            let prefix = pattern.literal_prefix();
            if prefix.is_empty() {
                return None;
            }
            let upper = successor(&prefix).map(|s| (Datum::string(s), false));
            Some((*c, ColumnBound::Range { lower: Some((Datum::string(prefix), true)), upper, exact: false }))
        }
        _ => None,
    }
}

/// The least string greater than every string starting with `prefix`, if any.
fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = char::from_u32(last as u32 + 1) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col_cmp(c: usize, op: CmpOp, v: i64) -> Expr {
        Expr::Compare { op, left: Box::new(Expr::Column(c)), right: Box::new(Expr::Literal(Datum::Int(v))) }
    }

    #[test]
    fn recognises_comparisons_either_way_round() {
        let e = Expr::And(
            Box::new(col_cmp(0, CmpOp::Gt, 5)),
            Box::new(Expr::Compare {
                op: CmpOp::Lt,
                left: Box::new(Expr::Literal(Datum::Int(3))),
                right: Box::new(Expr::Column(1)),
            }),
        );
        let c = conjuncts(&e, &[]);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].bound,
            Some((0, ColumnBound::Range { lower: Some((Datum::Int(5), false)), upper: None, exact: true }))
        );
        assert_eq!(
            c[1].bound,
            Some((1, ColumnBound::Range { lower: Some((Datum::Int(3), false)), upper: None, exact: true }))
        );
    }

    #[test]
    fn comparisons_with_null_or_expressions_are_opaque() {
        let e = Expr::Compare {
            op: CmpOp::Eq,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Literal(Datum::Null)),
        };
        assert_eq!(conjuncts(&e, &[])[0].bound, None);
    }

    #[test]
    fn successor_of_a_prefix() {
        assert_eq!(successor("ab").as_deref(), Some("ac"));
        assert_eq!(successor("").as_deref(), None);
    }
}

//! Conjuncts every branch of an OR shares, taken out of it: `(a AND b) OR (a AND c)` is
//! `(b OR c) AND a`, and `a OR (a AND c)` is `a`. TPC-H's Q19 writes its join condition
//! in each of three OR branches; taken out, it is a conjunct the optimizer joins by.
//!
//! Invariant: the rewritten condition has the original's truth value for every row, NULL
//! included: in SQL's three-valued logic AND and OR distribute over each other and absorb
//! as they do in two. A conjunct is shared when it is the same bound expression in every
//! branch (the same columns, operators and constants, in the same order); one that calls
//! a function whose result changes from call to call (DBMS_RANDOM) is never taken out,
//! since that would change how often it is called.
//!
//! [`implied_filter`] reads another consequence of an OR out of it: what one table's
//! rows must meet for the OR to hold. From Q7's `(n1.n_name = 'FRANCE' AND n2.n_name =
//! 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE')` it gives
//! `n1.n_name = 'FRANCE' OR n1.n_name = 'GERMANY'`, a filter of `n1` alone. Invariant:
//! a row the OR makes TRUE makes the implied filter TRUE; the OR itself stays where it
//! was, since the filter is weaker.

use super::Expr;

/// `e` with the conjuncts shared by every branch of its top OR taken out of it (see the
/// module doc); any other expression as it is.
pub fn factor_or(e: Expr) -> Expr {
    if !matches!(e, Expr::Or(..)) {
        return e;
    }
    let mut branches = Vec::new();
    split(e, false, &mut branches);
    let branches: Vec<Vec<Expr>> = branches
        .into_iter()
        .map(|b| {
            let mut conjuncts = Vec::new();
            split(b, true, &mut conjuncts);
            conjuncts
        })
        .collect();
    let (first, others) = branches.split_first().expect("an OR has branches");
    let mut shared: Vec<Expr> = Vec::new();
    for c in first {
        if deterministic(c) && !shared.contains(c) && others.iter().all(|b| b.contains(c)) {
            shared.push(c.clone());
        }
    }
    let rests: Vec<Vec<Expr>> =
        branches.into_iter().map(|b| b.into_iter().filter(|c| !shared.contains(c)).collect()).collect();
    if shared.is_empty() {
        return join(rests.into_iter().map(|r| join(r, true)).collect(), false);
    }
    // A branch left with nothing is true: the OR is, and only the shared conjuncts stay.
    // Otherwise what is left of the OR comes first: a shared conjunct each branch guarded
    // (`b <> 0 AND a / b > 1`) is still evaluated only where a guard let it be.
    let mut out = Vec::new();
    if rests.iter().all(|r| !r.is_empty()) {
        out.push(join(rests.into_iter().map(|r| join(r, true)).collect(), false));
    }
    out.extend(shared);
    join(out, true)
}

/// The filter a row meets whenever the OR `e` is TRUE, made of the conjuncts of its
/// branches that `keep` accepts: the OR of each branch's kept conjuncts (joined by AND).
/// `None` when `e` is not an OR, or when a branch has no conjunct `keep` accepts (that
/// branch could be TRUE whatever the kept conjuncts say). Conjuncts that change from one
/// evaluation to the next (DBMS_RANDOM), read a subquery or a sequence are never kept:
/// the filter adds evaluations of what it holds.
pub fn implied_filter(e: &Expr, keep: impl Fn(&Expr) -> bool) -> Option<Expr> {
    if !matches!(e, Expr::Or(..)) {
        return None;
    }
    let mut branches = Vec::new();
    split(e.clone(), false, &mut branches);
    let mut implied = Vec::with_capacity(branches.len());
    for branch in branches {
        let mut conjuncts = Vec::new();
        split(branch, true, &mut conjuncts);
        conjuncts.retain(|c| keep(c) && deterministic(c) && !reads_a_subquery_or_sequence(c));
        if conjuncts.is_empty() {
            return None;
        }
        implied.push(join(conjuncts, true));
    }
    Some(join(implied, false))
}

/// Whether `e` reads a subquery or a sequence anywhere.
fn reads_a_subquery_or_sequence(e: &Expr) -> bool {
    let mut reads = false;
    e.visit_nodes(&mut |node| reads |= matches!(node, Expr::Subquery { .. } | Expr::Sequence { .. }));
    reads
}

/// Whether no part of `e` changes from one evaluation to the next.
fn deterministic(e: &Expr) -> bool {
    let mut deterministic = true;
    e.visit_nodes(&mut |node| {
        if let Expr::Function { func, .. } = node {
            deterministic &= func.is_deterministic();
        }
    });
    deterministic
}

/// The operands of a chain of ANDs (`and`) or ORs, in order.
fn split(e: Expr, and: bool, out: &mut Vec<Expr>) {
    match e {
        Expr::And(l, r) if and => {
            split(*l, and, out);
            split(*r, and, out);
        }
        Expr::Or(l, r) if !and => {
            split(*l, and, out);
            split(*r, and, out);
        }
        other => out.push(other),
    }
}

/// `parts` joined by AND (`and`) or OR, left to right; at least one part.
fn join(parts: Vec<Expr>, and: bool) -> Expr {
    parts
        .into_iter()
        .reduce(|l, r| if and { Expr::And(Box::new(l), Box::new(r)) } else { Expr::Or(Box::new(l), Box::new(r)) })
        .expect("at least one part")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CmpOp;
    use crate::expr::functions::{FunctionContext, ScalarFunction};
    use crate::types::{Datum, Value};
    use proptest::prelude::*;

    fn eq(c: usize, v: i64) -> Expr {
        Expr::Compare { op: CmpOp::Eq, left: Box::new(Expr::Column(c)), right: Box::new(Expr::Literal(Datum::Int(v))) }
    }
    fn and(l: Expr, r: Expr) -> Expr {
        Expr::And(Box::new(l), Box::new(r))
    }
    fn or(l: Expr, r: Expr) -> Expr {
        Expr::Or(Box::new(l), Box::new(r))
    }

    #[test]
    fn shared_conjuncts_leave_the_or() {
        let (a, b, c) = (eq(0, 1), eq(1, 2), eq(2, 3));
        assert_eq!(
            factor_or(or(and(a.clone(), b.clone()), and(c.clone(), a.clone()))),
            and(or(b.clone(), c.clone()), a.clone())
        );
        // Absorption: a OR (a AND c) is a.
        assert_eq!(factor_or(or(a.clone(), and(a.clone(), c.clone()))), a.clone());
        // Nothing shared: the same OR.
        assert_eq!(factor_or(or(b.clone(), c.clone())), or(b.clone(), c.clone()));
        // Not an OR: as it is.
        assert_eq!(factor_or(and(a.clone(), b.clone())), and(a.clone(), b.clone()));
    }

    #[test]
    fn a_shared_conjunct_each_branch_guards_stays_guarded() {
        // (b <> 0 AND a / b > 1) OR (b > 5 AND a / b > 1), on a row where b is 0.
        let cmp = |op, left: Expr, v: i64| Expr::Compare {
            op,
            left: Box::new(left),
            right: Box::new(Expr::Literal(Datum::Int(v))),
        };
        let ratio = Expr::Arith {
            op: crate::expr::functions::ArithOp::Div,
            left: Box::new(Expr::Column(0)),
            right: Box::new(Expr::Column(1)),
        };
        let shared = cmp(CmpOp::Gt, ratio, 1);
        let e = or(
            and(cmp(CmpOp::NotEq, Expr::Column(1), 0), shared.clone()),
            and(cmp(CmpOp::Gt, Expr::Column(1), 5), shared),
        );
        let row: Vec<Value> = vec![Datum::Int(7), Datum::Int(0)];
        let mut f = FunctionContext::new(0, 0);
        assert_eq!(e.eval_condition(row.as_slice(), &mut f).unwrap(), Some(false));
        assert_eq!(factor_or(e).eval_condition(row.as_slice(), &mut f).unwrap(), Some(false));
    }

    #[test]
    fn a_changing_function_stays_in_each_branch() {
        let random = Expr::Compare {
            op: CmpOp::Lt,
            left: Box::new(Expr::Function { func: ScalarFunction::RandomValue, args: Vec::new() }),
            right: Box::new(Expr::Literal(Datum::Int(1))),
        };
        let e = or(and(random.clone(), eq(0, 1)), and(random.clone(), eq(1, 1)));
        assert_eq!(factor_or(e.clone()), e);
    }

    /// A random AND/OR tree over a few comparisons of three columns.
    fn condition() -> impl Strategy<Value = Expr> {
        let leaf = (0usize..3, 0i64..3).prop_map(|(c, v)| eq(c, v));
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(l, r)| and(l, r)),
                (inner.clone(), inner).prop_map(|(l, r)| or(l, r)),
            ]
        })
    }

    #[test]
    fn an_or_implies_each_tables_share_of_its_branches() {
        // Columns 0 and 1 are one table's, 2 another's.
        let ours = |e: &Expr| {
            let mut only = true;
            e.visit_columns(&mut |c| only &= c < 2);
            only
        };
        let (a, b, c, d) = (eq(0, 1), eq(2, 1), eq(1, 2), eq(2, 2));
        // (a AND b) OR (c AND d): a OR c.
        let e = or(and(a.clone(), b.clone()), and(c.clone(), d.clone()));
        assert_eq!(implied_filter(&e, ours), Some(or(a.clone(), c.clone())));
        // A branch with nothing of ours: nothing implied.
        assert_eq!(implied_filter(&or(and(a.clone(), b.clone()), d.clone()), ours), None);
        // Not an OR: nothing.
        assert_eq!(implied_filter(&and(a.clone(), b.clone()), ours), None);
        // A changing function is never kept.
        let random = Expr::Compare {
            op: CmpOp::Lt,
            left: Box::new(Expr::Function { func: ScalarFunction::RandomValue, args: Vec::new() }),
            right: Box::new(Expr::Literal(Datum::Int(1))),
        };
        assert_eq!(
            implied_filter(&or(and(random, b.clone()), and(a.clone(), d.clone())), |_| true),
            Some(or(b, and(a, d)))
        );
    }

    proptest! {
        /// A row that makes an OR TRUE makes the filter it implies for columns 0 and 1
        /// TRUE.
        #[test]
        fn a_row_meeting_the_or_meets_the_filter_it_implies(
            e in condition(),
            rows in proptest::collection::vec(proptest::collection::vec(proptest::option::of(0i64..3), 3), 1..20),
        ) {
            let ours = |e: &Expr| {
                let mut only = true;
                e.visit_columns(&mut |c| only &= c < 2);
                only
            };
            let Some(implied) = implied_filter(&e, ours) else { return Ok(()) };
            let mut f = FunctionContext::new(0, 0);
            for row in rows {
                let row: Vec<Value> = row.into_iter().map(|v| v.map_or(Datum::Null, Datum::Int)).collect();
                if e.eval_condition(row.as_slice(), &mut f).unwrap() == Some(true) {
                    prop_assert_eq!(
                        implied.eval_condition(row.as_slice(), &mut f).unwrap(),
                        Some(true),
                        "{:?} implies {:?}", e, implied
                    );
                }
            }
        }

        /// Every row, NULLs among its values, meets the rewritten condition exactly when
        /// it meets the original (TRUE, FALSE or NULL alike).
        #[test]
        fn factoring_keeps_the_truth_of_every_row(
            e in condition(),
            rows in proptest::collection::vec(proptest::collection::vec(proptest::option::of(0i64..3), 3), 1..20),
        ) {
            let factored = factor_or(e.clone());
            let mut f = FunctionContext::new(0, 0);
            for row in rows {
                let row: Vec<Value> = row.into_iter().map(|v| v.map_or(Datum::Null, Datum::Int)).collect();
                prop_assert_eq!(
                    factored.eval_condition(row.as_slice(), &mut f).unwrap(),
                    e.eval_condition(row.as_slice(), &mut f).unwrap(),
                    "{:?} as {:?}", e, factored
                );
            }
        }
    }
}

//! The expression layer: what every operator above evaluates, below the pipeline and the
//! planner that build it. Bound expressions ([`Expr`], here), their batch evaluation over
//! a block's rows ([`batch`]), the scalar functions and format masks ([`functions`]),
//! aggregate calls ([`aggregate`]), LIKE patterns ([`like`]), and the column bounds a
//! WHERE clause's conjuncts give ([`predicates`]). It reads rows through
//! `access::RowAccess` and nothing above it.
//!
//! Bound expressions: SQL expressions whose names are resolved to column positions of
//! the row they are evaluated on, ready to run once per row.
//!
//! Evaluation borrows: a column read from a block row yields a string slice of the block,
//! a literal yields a slice of the expression, so predicates such as `cust_valid = 'A'`
//! or `name LIKE 'A%'` allocate nothing. A chain of `||` is built operand by operand into
//! one string, a buffer the caller reuses when it evaluates with [`Expr::eval_buffered`]
//! (which builds LPAD and RPAD there too).
//!
//! Numbers take two fast paths. Whole numbers ([`Expr::whole_number`]): a column stored
//! as a whole number is read as an `i64` ([`RowAccess::small_int`]), and `+ - *`, unary
//! minus, MOD, ABS and ORA_HASH of whole numbers compute on `i64` without building
//! values. Exact decimals ([`Expr::fixed_point`]): a NUMBER(p,s) value whose mantissa
//! fits in 64 bits is read as a `Fixed` ([`RowAccess::small_fixed`]), and `+ - *` and
//! unary minus compute on mantissa and scale. Functions use the first; operators,
//! comparisons and BETWEEN the second, which covers whole numbers too. Each falls back to
//! the general evaluation when any part does not fit or the result would not (an
//! overflow, an argument out of range, a division); the values and errors are the
//! general evaluation's either way. An attempt has no effects (it calls no
//! non-deterministic function and raises no error), so falling back is always safe. A
//! failed operator evaluates its operands the general way at once, so an attempt walks
//! the subtree once.
//!
//! Conditions use SQL's three-valued logic: [`Expr::eval_condition`] returns `None` for
//! UNKNOWN.

pub mod aggregate;
pub mod batch;
pub mod functions;
pub mod like;
pub mod or_factoring;
pub mod predicates;

use crate::access::RowAccess;
use crate::error::{Error, Result};
use crate::types::{Datum, Fixed, Value};
use functions::{ArithOp, FunctionContext, ScalarFunction};
pub use like::LikePattern;
use smallvec::SmallVec;
use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    /// Whether the comparison holds for an ordering of its operands.
    #[inline(always)]
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::NotEq => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::LtEq => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::GtEq => o != Ordering::Less,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "<>",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
        }
    }

    /// The operator with its operands swapped (`5 < x` is `x > 5`).
    pub fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }
}

/// A bound expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Column(usize),
    Literal(Value),
    /// A bind variable (`:name` or `:1`): the value in `slot` of the statement's
    /// bind values ([`FunctionContext::binds`]), given at each execution.
    Bind {
        slot: usize,
        name: Box<str>,
    },
    Arith {
        op: ArithOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Concat(Box<Expr>, Box<Expr>),
    Negate(Box<Expr>),
    Compare {
        op: CmpOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: LikePattern,
        negated: bool,
    },
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Function {
        func: ScalarFunction,
        args: Vec<Expr>,
    },
    /// A column of the row of the query around a correlated subquery: the value in
    /// `slot` of the statement's [`FunctionContext::outer`], set for each row before the
    /// subquery runs.
    Outer {
        slot: usize,
        name: Box<str>,
    },
    /// A subquery's answer: its value, whether it gives a row, or whether it gives
    /// `expr`'s value, read from the answer in `slot` of the statement's
    /// [`FunctionContext::subqueries`] (set before the expression runs). `text` is the
    /// subquery as plan predicates show it.
    Subquery {
        slot: usize,
        test: SubqueryTest,
        text: Box<str>,
    },
    /// `CAST(expr AS type)`: the value converted as a column of `to` stores it (rounded
    /// to a NUMBER's scale, a CHAR blank-padded, a text read as a number or a date).
    Cast {
        expr: Box<Expr>,
        to: crate::types::DataType,
    },
    /// `name.NEXTVAL` (`next`) or `name.CURRVAL`: a sequence's value for the row, read
    /// through [`FunctionContext::sequence`].
    Sequence {
        name: std::sync::Arc<str>,
        next: bool,
    },
}

/// What an expression asks of a subquery's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryTest {
    /// Its one value (NULL for no row): `(SELECT MAX(x) FROM t)`.
    Scalar,
    /// Whether it gives a row: `[NOT] EXISTS (...)`.
    Exists { negated: bool },
    /// Whether its values hold `expr`'s, with SQL's NULL rules: `expr [NOT] IN (...)`.
    /// `blank_padded` when `expr` is a CHAR column: texts compare as equal when they
    /// differ in trailing blanks only, as Oracle compares CHAR values.
    In { expr: Box<Expr>, negated: bool, blank_padded: bool },
    /// Whether its rows hold the row of `exprs`' values, with SQL's NULL rules: `(a, b)
    /// [NOT] IN (SELECT x, y ...)`; `blank_padded` for each a CHAR column (compared
    /// without trailing blanks, as Oracle compares CHAR values).
    InRow { exprs: Vec<Expr>, negated: bool, blank_padded: Vec<bool> },
    /// Whether `expr op` holds for any (`expr op ANY (...)`, `SOME`) or for all (`ALL`) of
    /// its values, with SQL's NULL rules.
    Quantified { expr: Box<Expr>, op: CmpOp, all: bool },
}

impl Expr {
    /// Whether this expression is a condition (evaluated with [`Expr::eval_condition`]).
    pub fn is_condition(&self) -> bool {
        matches!(
            self,
            Expr::Compare { .. }
                | Expr::And(..)
                | Expr::Or(..)
                | Expr::Not(_)
                | Expr::IsNull { .. }
                | Expr::InList { .. }
                | Expr::Between { .. }
                | Expr::Like { .. }
                | Expr::Subquery {
                    test: SubqueryTest::Exists { .. }
                        | SubqueryTest::In { .. }
                        | SubqueryTest::InRow { .. }
                        | SubqueryTest::Quantified { .. },
                    ..
                }
        )
    }

    /// The value of this expression for `row`. A column or a literal, the most common
    /// by far, is read here, inlined into the caller; the rest goes through
    /// [`Expr::eval_compound`], whose frame is large.
    #[inline]
    pub fn eval<'a, R: RowAccess + ?Sized>(&'a self, row: &'a R, f: &mut FunctionContext) -> Result<Datum<'a>> {
        match self {
            Expr::Column(i) => row.column(*i),
            Expr::Literal(v) => Ok(v.reborrow()),
            _ => self.eval_compound(row, f),
        }
    }

    /// An operand of an operator whose fixed-point path failed ([`Expr::fixed_point`]):
    /// an operator under it goes the general way at once, without a try of its own. The
    /// try failed on some operand (a wide decimal, a string, a NULL, a division), and
    /// trying again below would read the same columns only to fail on them; where an
    /// operator under it is all whole numbers (`price / (a + b)`), the general way adds
    /// them in 64 bits just the same. Both ways give the same value and the same errors.
    #[inline]
    fn eval_operand<'a, R: RowAccess + ?Sized>(&'a self, row: &'a R, f: &mut FunctionContext) -> Result<Datum<'a>> {
        match self {
            Expr::Arith { op, left, right } => {
                functions::arithmetic(*op, &left.eval_operand(row, f)?, &right.eval_operand(row, f)?)
            }
            _ => self.eval(row, f),
        }
    }

    /// [`Expr::eval`] of an expression that is neither a column nor a literal.
    #[inline(never)]
    fn eval_compound<'a, R: RowAccess + ?Sized>(&'a self, row: &'a R, f: &mut FunctionContext) -> Result<Datum<'a>> {
        Ok(match self {
            Expr::Column(i) => row.column(*i)?,
            Expr::Literal(v) => v.reborrow(),
            Expr::Bind { slot, name } => f.bind(*slot, name)?,
            Expr::Outer { slot, name } => f.outer_value(*slot, name)?,
            Expr::Sequence { name, next } => f.sequence(name, *next)?,
            Expr::Cast { expr, to } => cast(expr.eval_operand(row, f)?, *to)?,
            Expr::Subquery { slot, test: SubqueryTest::Scalar, .. } => f.subquery(*slot)?.scalar()?.clone(),
            Expr::Arith { .. } | Expr::Negate(_) if let Some(x) = self.fixed_point(row) => x.into_datum(),
            Expr::Function { .. } if let Some(i) = self.whole_number(row) => Datum::Int(i),
            Expr::Arith { op, left, right } => {
                functions::arithmetic(*op, &left.eval_operand(row, f)?, &right.eval_operand(row, f)?)?
            }
            Expr::Concat(..) => {
                let mut text = String::new();
                self.append_text(row, f, &mut text)?;
                Datum::string(text)
            }
            Expr::Negate(e) => functions::negate(&e.eval(row, f)?)?,
            Expr::Case { operand, branches, otherwise } => {
                return self.eval_case(operand.as_deref(), branches, otherwise.as_deref(), row, f);
            }
            Expr::Function { func, args } => {
                let mut values: SmallVec<[Datum<'a>; 4]> = SmallVec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(row, f)?);
                }
                func.call(&values, f)?
            }
            cond => {
                return Err(Error::unsupported(format!("a condition used as a value: {}", cond.display(&[]))));
            }
        })
    }

    /// The value of this expression when it is a whole number computed from whole
    /// numbers alone: `Some(i)` only when [`Expr::eval`] gives `Datum::Int(i)`; `None`
    /// when any operand is not a whole number, the function has no whole-number form, or
    /// the result would not be a whole number in `i64`. Evaluates nothing that has
    /// effects, so `None` leaves the caller free to evaluate the general way.
    #[inline]
    pub fn whole_number<R: RowAccess + ?Sized>(&self, row: &R) -> Option<i64> {
        match self {
            Expr::Column(i) => row.small_int(*i),
            Expr::Literal(Datum::Int(i)) => Some(*i),
            Expr::Arith { op, left, right } => {
                let (a, b) = (left.whole_number(row)?, right.whole_number(row)?);
                match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => None,
                }
            }
            Expr::Negate(e) => e.whole_number(row)?.checked_neg(),
            Expr::Function { func, args } if func.has_whole_number_form() && args.len() <= WHOLE_ARGS => {
                let mut values = [0; WHOLE_ARGS];
                for (value, arg) in values.iter_mut().zip(args) {
                    *value = arg.whole_number(row)?;
                }
                func.call_whole(&values[..args.len()])
            }
            _ => None,
        }
    }

    /// The value of this expression when it is an exact decimal computed from numbers
    /// with 64-bit mantissas alone (NUMBER(p,s) columns, literals, `+ - *` and unary
    /// minus, and the functions [`Expr::whole_number`] computes): `Some(x)` only when
    /// [`Expr::eval`] gives `x.into_datum()`. `None` when an operand is anything else,
    /// is NULL, or a result would not fit; like [`Expr::whole_number`], evaluates
    /// nothing that has effects.
    #[inline]
    pub fn fixed_point<R: RowAccess + ?Sized>(&self, row: &R) -> Option<Fixed> {
        match self {
            Expr::Column(i) => row.small_fixed(*i),
            Expr::Literal(v) => Fixed::of(v),
            Expr::Arith { op, left, right } => {
                let (a, b) = (left.fixed_point(row)?, right.fixed_point(row)?);
                match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => None,
                }
            }
            Expr::Negate(e) => e.fixed_point(row)?.checked_neg(),
            Expr::Function { .. } => self.whole_number(row).map(Fixed::whole),
            _ => None,
        }
    }

    /// [`Expr::eval`], building the text of a concatenation, LPAD or RPAD in `buffer`
    /// (cleared first and reused by the caller row after row) instead of a new string.
    #[inline]
    pub fn eval_buffered<'a, R: RowAccess + ?Sized>(
        &'a self,
        row: &'a R,
        f: &mut FunctionContext,
        buffer: &'a mut String,
    ) -> Result<Datum<'a>> {
        match self {
            Expr::Concat(..) => {
                buffer.clear();
                self.append_text(row, f, buffer)?;
            }
            Expr::Function { func: func @ (ScalarFunction::Lpad | ScalarFunction::Rpad), args } => {
                func.check_arg_count(args.len())?;
                let mut values: SmallVec<[Datum<'a>; 4]> = SmallVec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(row, f)?);
                }
                let left = *func == ScalarFunction::Lpad;
                if !functions::pad_into(&values, left, func.name(), buffer)? {
                    return Ok(Datum::Null);
                }
            }
            _ => return self.eval(row, f),
        }
        Ok(Datum::string(buffer.as_str()))
    }

    /// Appends the text of this expression as `||` converts it (NULL is the empty
    /// string). A chain `a || b || c` is walked operand by operand into one string, which
    /// is the same as concatenating pairwise: the result is NULL exactly when it is empty.
    fn append_text<R: RowAccess + ?Sized>(&self, row: &R, f: &mut FunctionContext, out: &mut String) -> Result<()> {
        match self {
            Expr::Concat(l, r) => {
                l.append_text(row, f, out)?;
                r.append_text(row, f, out)
            }
            e => {
                e.eval(row, f)?.write_text(out);
                Ok(())
            }
        }
    }

    fn eval_case<'a, R: RowAccess + ?Sized>(
        &'a self,
        operand: Option<&'a Expr>,
        branches: &'a [(Expr, Expr)],
        otherwise: Option<&'a Expr>,
        row: &'a R,
        f: &mut FunctionContext,
    ) -> Result<Datum<'a>> {
        let subject = operand.map(|o| o.eval(row, f)).transpose()?;
        for (when, then) in branches {
            let hit = match &subject {
                Some(s) => when.eval(row, f)?.sql_cmp(s)? == Some(Ordering::Equal),
                None => when.eval_condition(row, f)? == Some(true),
            };
            if hit {
                return then.eval(row, f);
            }
        }
        otherwise.map_or(Ok(Datum::Null), |e| e.eval(row, f))
    }

    /// The truth of a condition: `Some(true)`, `Some(false)`, or `None` for UNKNOWN.
    #[inline]
    pub fn eval_condition<R: RowAccess + ?Sized>(&self, row: &R, f: &mut FunctionContext) -> Result<Option<bool>> {
        match self {
            Expr::Compare { op, left, right } => compare(*op, left, right, row, f),
            Expr::And(l, r) => Ok(match l.eval_condition(row, f)? {
                Some(false) => Some(false),
                lv => and3(lv, r.eval_condition(row, f)?),
            }),
            Expr::Or(l, r) => Ok(match l.eval_condition(row, f)? {
                Some(true) => Some(true),
                lv => not3(and3(not3(lv), not3(r.eval_condition(row, f)?))),
            }),
            Expr::Not(e) => Ok(not3(e.eval_condition(row, f)?)),
            Expr::IsNull { expr, negated } => Ok(Some(is_null(expr, row, f)? != *negated)),
            Expr::InList { expr, list, negated } => in_list(expr, list, *negated, row, f),
            Expr::Between { expr, low, high, negated }
                if let Some(v) = expr.fixed_point(row)
                    && let Some(low) = low.fixed_point(row)
                    && let Some(high) = high.fixed_point(row)
                    && let (Some(ge), Some(le)) = (v.cmp_exact(low), v.cmp_exact(high)) =>
            {
                Ok(Some((ge != Ordering::Less && le != Ordering::Greater) != *negated))
            }
            Expr::Between { expr, low, high, negated } => {
                let v = expr.eval(row, f)?;
                let ge = v.sql_cmp(&low.eval(row, f)?)?.map(|o| o != Ordering::Less);
                let le = v.sql_cmp(&high.eval(row, f)?)?.map(|o| o != Ordering::Greater);
                Ok(and3(ge, le).map(|b| b != *negated))
            }
            Expr::Like { expr, pattern, negated } => {
                if pattern.is_null() {
                    return Ok(None);
                }
                Ok(expr.eval(row, f)?.into_text().and_then(|text| pattern.matches(&text)).map(|m| m != *negated))
            }
            Expr::Subquery { slot, test: SubqueryTest::Exists { negated }, .. } => {
                Ok(Some(f.subquery(*slot)?.exists() != *negated))
            }
            Expr::Subquery { slot, test: SubqueryTest::In { expr, negated, blank_padded }, .. } => {
                let v = expr.eval(row, f)?.into_owned();
                Ok(f.subquery(*slot)?.holds(&v, *blank_padded)?.map(|b| b != *negated))
            }
            Expr::Subquery { slot, test: SubqueryTest::InRow { exprs, negated, blank_padded }, .. } => {
                let values = exprs.iter().map(|e| e.eval(row, f).map(Datum::into_owned)).collect::<Result<Vec<_>>>()?;
                Ok(f.subquery(*slot)?.holds_row(&values, blank_padded)?.map(|b| b != *negated))
            }
            Expr::Subquery { slot, test: SubqueryTest::Quantified { expr, op, all }, .. } => {
                let v = expr.eval(row, f)?.into_owned();
                f.subquery(*slot)?.compares(&v, |o| op.holds(o), *all)
            }
            value => Err(Error::unsupported(format!("a value used as a condition: {}", value.display(&[])))),
        }
    }

    /// The conjuncts of this condition (itself when it is no AND), borrowed.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            match e {
                Expr::And(l, r) => pending.extend([&**r, &**l]),
                other => out.push(other),
            }
        }
        out
    }

    /// Calls `visit` on every column this expression reads.
    pub fn visit_columns(&self, visit: &mut impl FnMut(usize)) {
        self.visit_nodes(&mut |e| {
            if let Expr::Column(i) = e {
                visit(*i);
            }
        });
    }

    /// Calls `visit` on the slot of every bind variable this expression reads.
    pub fn visit_binds(&self, visit: &mut impl FnMut(usize)) {
        self.visit_nodes(&mut |e| {
            if let Expr::Bind { slot, .. } = e {
                visit(*slot);
            }
        });
    }

    /// Calls `visit` on this expression and every expression in it, parents first.
    pub fn visit_nodes(&self, visit: &mut impl FnMut(&Expr)) {
        visit(self);
        match self {
            Expr::Column(_) | Expr::Literal(_) | Expr::Bind { .. } | Expr::Outer { .. } | Expr::Sequence { .. } => {}
            Expr::Arith { left, right, .. } | Expr::Compare { left, right, .. } => {
                left.visit_nodes(visit);
                right.visit_nodes(visit);
            }
            Expr::Concat(l, r) | Expr::And(l, r) | Expr::Or(l, r) => {
                l.visit_nodes(visit);
                r.visit_nodes(visit);
            }
            Expr::Negate(e)
            | Expr::Not(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::Like { expr: e, .. }
            | Expr::Cast { expr: e, .. } => e.visit_nodes(visit),
            Expr::InList { expr, list, .. } => {
                expr.visit_nodes(visit);
                list.iter().for_each(|e| e.visit_nodes(visit));
            }
            Expr::Between { expr, low, high, .. } => {
                for e in [expr, low, high] {
                    e.visit_nodes(visit);
                }
            }
            Expr::Case { operand, branches, otherwise } => {
                operand.iter().chain(otherwise.iter()).for_each(|e| e.visit_nodes(visit));
                for (w, t) in branches {
                    w.visit_nodes(visit);
                    t.visit_nodes(visit);
                }
            }
            Expr::Function { args, .. } => args.iter().for_each(|e| e.visit_nodes(visit)),
            Expr::Subquery { test, .. } => match test {
                SubqueryTest::In { expr, .. } | SubqueryTest::Quantified { expr, .. } => expr.visit_nodes(visit),
                SubqueryTest::InRow { exprs, .. } => exprs.iter().for_each(|e| e.visit_nodes(visit)),
                SubqueryTest::Scalar | SubqueryTest::Exists { .. } => {}
            },
        }
    }

    /// Renumbers every column reference: column `i` becomes `map(i)`.
    pub fn remap_columns(&mut self, map: &impl Fn(usize) -> usize) {
        self.visit_nodes_mut(&mut |e| {
            if let Expr::Column(i) = e {
                *i = map(*i);
            }
        });
    }

    /// Calls `visit` on every expression in this one and then on this one, children
    /// first; what `visit` puts in a node's place is not visited again.
    pub fn visit_nodes_mut(&mut self, visit: &mut impl FnMut(&mut Expr)) {
        match self {
            Expr::Column(_) | Expr::Literal(_) | Expr::Bind { .. } | Expr::Outer { .. } | Expr::Sequence { .. } => {}
            Expr::Arith { left, right, .. } | Expr::Compare { left, right, .. } => {
                left.visit_nodes_mut(visit);
                right.visit_nodes_mut(visit);
            }
            Expr::Concat(l, r) | Expr::And(l, r) | Expr::Or(l, r) => {
                l.visit_nodes_mut(visit);
                r.visit_nodes_mut(visit);
            }
            Expr::Negate(e)
            | Expr::Not(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::Like { expr: e, .. }
            | Expr::Cast { expr: e, .. } => e.visit_nodes_mut(visit),
            Expr::InList { expr, list, .. } => {
                expr.visit_nodes_mut(visit);
                list.iter_mut().for_each(|e| e.visit_nodes_mut(visit));
            }
            Expr::Between { expr, low, high, .. } => {
                for e in [expr, low, high] {
                    e.visit_nodes_mut(visit);
                }
            }
            Expr::Case { operand, branches, otherwise } => {
                operand.iter_mut().chain(otherwise.iter_mut()).for_each(|e| e.visit_nodes_mut(visit));
                for (w, t) in branches {
                    w.visit_nodes_mut(visit);
                    t.visit_nodes_mut(visit);
                }
            }
            Expr::Function { args, .. } => args.iter_mut().for_each(|e| e.visit_nodes_mut(visit)),
            Expr::Subquery { test, .. } => match test {
                SubqueryTest::In { expr, .. } | SubqueryTest::Quantified { expr, .. } => expr.visit_nodes_mut(visit),
                SubqueryTest::InRow { exprs, .. } => exprs.iter_mut().for_each(|e| e.visit_nodes_mut(visit)),
                SubqueryTest::Scalar | SubqueryTest::Exists { .. } => {}
            },
        }
        visit(self);
    }

    /// Shows the expression with column names, as plan predicates print.
    pub fn display<'a>(&'a self, names: &'a [String]) -> ExprDisplay<'a> {
        ExprDisplay { expr: self, names, place: Binding::Top }
    }
}

/// Most arguments a function takes on the whole-number path (ORA_HASH's three).
const WHOLE_ARGS: usize = 3;

/// `CAST(value AS to)`: converted as a column of type `to` stores the value. Numbers,
/// dates and timestamps, and each kind of interval convert only within their kind (and
/// from and to text; ORA-00932 otherwise); a text too long for `to` is ORA-25137.
fn cast(value: Datum<'_>, to: crate::types::DataType) -> Result<Datum<'_>> {
    use crate::types::DataType;
    // The kinds of value that convert into one another, numbered (text converts into
    // any).
    let of_value = match &value {
        Datum::Int(_) | Datum::Num(_) => Some(0),
        Datum::Date(_) | Datum::Timestamp(_) => Some(1),
        Datum::YearMonth(_) => Some(2),
        Datum::DaySecond(_) => Some(3),
        Datum::Null | Datum::Str(_) => None,
    };
    let of_type = match to {
        DataType::Number { .. } | DataType::Integer => Some(0),
        DataType::Date | DataType::Timestamp { .. } => Some(1),
        DataType::IntervalYearMonth { .. } => Some(2),
        DataType::IntervalDaySecond { .. } => Some(3),
        DataType::Varchar2 { .. } | DataType::Char { .. } => None,
    };
    let inconsistent = matches!((of_value, of_type), (Some(a), Some(b)) if a != b);
    if inconsistent {
        return Err(Error::InvalidValue {
            context: "CAST".into(),
            message: format!("ORA-00932: inconsistent datatypes: expected {to} got {}", value.type_name()),
        });
    }
    let text = matches!(to, DataType::Varchar2 { .. } | DataType::Char { .. });
    to.coerce(value, "CAST").map_err(|e| match (text, e) {
        // A text longer than the type: Oracle's CAST error, not a column's.
        (true, Error::InvalidValue { context, message }) => {
            Error::InvalidValue { context, message: format!("ORA-25137: Data value out of range ({message})") }
        }
        (_, e) => e,
    })
}

/// Three-valued AND: FALSE if either is FALSE, TRUE if both are TRUE, else UNKNOWN.
#[inline]
fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// Three-valued NOT: UNKNOWN stays UNKNOWN.
#[inline]
fn not3(a: Option<bool>) -> Option<bool> {
    a.map(|b| !b)
}

#[inline]
fn compare<R: RowAccess + ?Sized>(
    op: CmpOp,
    left: &Expr,
    right: &Expr,
    row: &R,
    f: &mut FunctionContext,
) -> Result<Option<bool>> {
    if let Some(l) = left.fixed_point(row)
        && let Some(r) = right.fixed_point(row)
        && let Some(order) = l.cmp_exact(r)
    {
        return Ok(Some(op.holds(order)));
    }
    let l = left.eval(row, f)?;
    let r = right.eval(row, f)?;
    Ok(l.sql_cmp(&r)?.map(|o| op.holds(o)))
}

fn is_null<R: RowAccess + ?Sized>(expr: &Expr, row: &R, f: &mut FunctionContext) -> Result<bool> {
    match expr {
        Expr::Column(i) => Ok(row.is_null(*i)),
        e => Ok(e.eval(row, f)?.is_null()),
    }
}

fn in_list<R: RowAccess + ?Sized>(
    expr: &Expr,
    list: &[Expr],
    negated: bool,
    row: &R,
    f: &mut FunctionContext,
) -> Result<Option<bool>> {
    let v = expr.eval(row, f)?;
    let mut unknown = false;
    for item in list {
        match v.sql_cmp(&item.eval(row, f)?)? {
            Some(Ordering::Equal) => return Ok(Some(!negated)),
            None => unknown = true,
            _ => {}
        }
    }
    Ok(if unknown { None } else { Some(negated) })
}

/// How tightly an expression binds when printed, loosest first: a part printed where a
/// tighter binding is needed goes in parentheses, and only then. `+ - ||` share a level
/// and `* /` the one above, as in Oracle's grammar; a condition's operators bind looser
/// than any arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Binding {
    /// A whole predicate, a function argument, an IN list item: anything goes.
    Top,
    Or,
    And,
    Not,
    /// `= <> < <= > >=`, IS NULL, IN, BETWEEN, LIKE.
    Comparison,
    /// `+ -` and `||`.
    Additive,
    /// `* /`.
    Multiplicative,
    /// Unary minus, and a negative number.
    Unary,
    /// Names, literals, binds, function calls, CASE.
    Atom,
}

impl Expr {
    /// How tightly this expression binds when printed.
    fn binding(&self) -> Binding {
        match self {
            Expr::Or(..) => Binding::Or,
            Expr::And(..) => Binding::And,
            Expr::Not(_) => Binding::Not,
            Expr::Compare { .. }
            | Expr::IsNull { .. }
            | Expr::InList { .. }
            | Expr::Between { .. }
            | Expr::Like { .. } => Binding::Comparison,
            Expr::Arith { op: ArithOp::Add | ArithOp::Sub, .. } | Expr::Concat(..) => Binding::Additive,
            Expr::Arith { op: ArithOp::Mul | ArithOp::Div, .. } => Binding::Multiplicative,
            Expr::Negate(_) => Binding::Unary,
            Expr::Literal(Datum::Int(i)) if *i < 0 => Binding::Unary,
            Expr::Literal(Datum::Num(n)) if n.is_sign_negative() && !n.is_zero() => Binding::Unary,
            _ => Binding::Atom,
        }
    }

    /// Shows the expression as one of several conditions joined by AND (an OR among them
    /// goes in parentheses).
    pub fn display_conjunct<'a>(&'a self, names: &'a [String]) -> ExprDisplay<'a> {
        ExprDisplay { expr: self, names, place: Binding::And }
    }
}

/// Display of an expression with column names, with parentheses where the expression's
/// shape differs from what its text would parse as: `("A"+1)*2`, `"A"-("B"-"C")`,
/// `("X"=1 OR "Y"=2) AND "Z"=3`, `NOT ("X"=1 AND "Y"=2)`, and never `--` (a comment).
pub struct ExprDisplay<'a> {
    expr: &'a Expr,
    names: &'a [String],
    /// The binding the place the expression is printed in needs; looser gets parentheses.
    place: Binding,
}

impl ExprDisplay<'_> {
    /// `e` printed where `place` is needed.
    fn part(&self, e: &Expr, place: Binding) -> String {
        let text = ExprDisplay { expr: e, names: self.names, place: Binding::Top }.to_string();
        if e.binding() < place { format!("({text})") } else { text }
    }

    /// `e` printed after a minus sign: also in parentheses when its text starts with one.
    fn after_minus(&self, e: &Expr, place: Binding) -> String {
        let text = self.part(e, place);
        if text.starts_with('-') { format!("({text})") } else { text }
    }
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.expr.binding() < self.place {
            let inner = ExprDisplay { expr: self.expr, names: self.names, place: Binding::Top };
            return write!(f, "({inner})");
        }
        let top = |e: &'_ Expr| self.part(e, Binding::Top);
        // An operand of a comparison, IN, BETWEEN, LIKE or IS NULL.
        let operand = |e: &'_ Expr| self.part(e, Binding::Additive);
        let not = |negated: bool| if negated { "NOT " } else { "" };
        match self.expr {
            Expr::Column(i) => match self.names.get(*i) {
                Some(n) => write!(f, "\"{n}\""),
                None => write!(f, "#{i}"),
            },
            Expr::Literal(Datum::Str(s)) => write!(f, "'{}'", s.replace('\'', "''")),
            Expr::Literal(Datum::Null) => write!(f, "NULL"),
            Expr::Literal(v @ Datum::Date(_)) => write!(f, "TO_DATE('{v}')"),
            Expr::Literal(v @ Datum::Timestamp(_)) => write!(f, "TIMESTAMP'{v}'"),
            Expr::Literal(Datum::YearMonth(m)) => {
                let years = (m.unsigned_abs() / 12).max(1).ilog10() as usize + 1;
                let digits = years.max(2);
                write!(f, "INTERVAL'{}' YEAR({digits}) TO MONTH", crate::types::datetime::format_year_month(*m, 2))
            }
            Expr::Literal(Datum::DaySecond(us)) => {
                let days =
                    (us.unsigned_abs() / crate::types::datetime::MICROS_PER_DAY as u64).max(1).ilog10() as usize + 1;
                let digits = days.max(2);
                write!(
                    f,
                    "INTERVAL'{}' DAY({digits}) TO SECOND(6)",
                    crate::types::datetime::format_day_second(*us, 2, 6)
                )
            }
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Bind { name, .. } | Expr::Outer { name, .. } => write!(f, "{name}"),
            Expr::Sequence { name, next } => write!(f, "{name}.{}", if *next { "NEXTVAL" } else { "CURRVAL" }),
            Expr::Cast { expr, to } => write!(f, "CAST({} AS {to})", top(expr)),
            Expr::Subquery { test, text, .. } => match test {
                SubqueryTest::Scalar => write!(f, "({text})"),
                SubqueryTest::Exists { negated } => write!(f, "{}EXISTS ({text})", not(*negated)),
                SubqueryTest::In { expr, negated, .. } => {
                    write!(f, "{} {}IN ({text})", operand(expr), not(*negated))
                }
                SubqueryTest::InRow { exprs, negated, .. } => {
                    let row: Vec<String> = exprs.iter().map(|e| top(e).to_string()).collect();
                    write!(f, "({}) {}IN ({text})", row.join(","), not(*negated))
                }
                SubqueryTest::Quantified { expr, op, all } => {
                    let quantifier = if *all { "ALL" } else { "ANY" };
                    write!(f, "{}{}{quantifier} ({text})", operand(expr), op.symbol())
                }
            },
            Expr::Arith { op, left, right } => {
                let (s, binding) = match op {
                    ArithOp::Add => ("+", Binding::Additive),
                    ArithOp::Sub => ("-", Binding::Additive),
                    ArithOp::Mul => ("*", Binding::Multiplicative),
                    ArithOp::Div => ("/", Binding::Multiplicative),
                };
                // Left-associative: the right operand of the same level keeps its parentheses.
                let right = match op {
                    ArithOp::Sub => self.after_minus(right, Binding::Multiplicative),
                    ArithOp::Add => self.part(right, Binding::Multiplicative),
                    ArithOp::Mul | ArithOp::Div => self.part(right, Binding::Unary),
                };
                write!(f, "{}{s}{right}", self.part(left, binding))
            }
            Expr::Concat(l, r) => {
                // `||` is associative, so a chain prints flat whichever way it nests; a
                // `+` or `-` on its right is not part of the chain.
                let right = if matches!(**r, Expr::Concat(..)) {
                    self.part(r, Binding::Additive)
                } else {
                    self.part(r, Binding::Multiplicative)
                };
                write!(f, "{}||{right}", self.part(l, Binding::Additive))
            }
            Expr::Negate(e) => write!(f, "-{}", self.after_minus(e, Binding::Unary)),
            Expr::Compare { op, left, right } => write!(f, "{}{}{}", operand(left), op.symbol(), operand(right)),
            Expr::And(l, r) => write!(f, "{} AND {}", self.part(l, Binding::And), self.part(r, Binding::And)),
            Expr::Or(l, r) => write!(f, "{} OR {}", self.part(l, Binding::Or), self.part(r, Binding::Or)),
            Expr::Not(e) => write!(f, "NOT {}", self.part(e, Binding::Not)),
            Expr::IsNull { expr, negated } => write!(f, "{} IS {}NULL", operand(expr), not(*negated)),
            Expr::InList { expr, list, negated } => {
                let items: Vec<String> = list.iter().map(top).collect();
                write!(f, "{} {}IN ({})", operand(expr), not(*negated), items.join(","))
            }
            Expr::Between { expr, low, high, negated } => {
                write!(f, "{} {}BETWEEN {} AND {}", operand(expr), not(*negated), operand(low), operand(high))
            }
            Expr::Like { expr, pattern, negated } => match pattern.source() {
                Some(source) => write!(f, "{} {}LIKE '{}'", operand(expr), not(*negated), source),
                None => write!(f, "{} {}LIKE NULL", operand(expr), not(*negated)),
            },
            Expr::Case { .. } => write!(f, "CASE ... END"),
            Expr::Function { func: ScalarFunction::Extract, args } if args.len() == 2 => {
                let field = match &args[0] {
                    Expr::Literal(Datum::Str(field)) => field.to_string(),
                    other => top(other),
                };
                write!(f, "EXTRACT({field} FROM {})", top(&args[1]))
            }
            Expr::Function { func, args } => {
                let items: Vec<String> = args.iter().map(top).collect();
                write!(f, "{}({})", func.name(), items.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Evaluation without the whole-number and fixed-point paths: operators and functions on values.
    fn reference(e: &Expr, row: &[Value], f: &mut FunctionContext) -> Result<Value> {
        Ok(match e {
            Expr::Column(i) => row[*i].clone(),
            Expr::Literal(v) => v.clone(),
            Expr::Arith { op, left, right } => {
                functions::arithmetic(*op, &reference(left, row, f)?, &reference(right, row, f)?)?
            }
            Expr::Negate(e) => functions::negate(&reference(e, row, f)?)?,
            Expr::Function { func, args } => {
                let values = args.iter().map(|a| reference(a, row, f)).collect::<Result<Vec<_>>>()?;
                func.call(&values, f)?
            }
            other => unreachable!("not generated: {other:?}"),
        })
    }

    fn leaf() -> impl Strategy<Value = Expr> {
        prop_oneof![
            (0usize..3).prop_map(Expr::Column),
            prop_oneof![
                any::<i64>().prop_map(Datum::Int),
                (-20i64..20).prop_map(Datum::Int),
                Just(Datum::Int(u32::MAX.into())),
                Just(Datum::Num(rust_decimal::Decimal::new(25, 1))),
                (any::<i64>(), 1u32..=28).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m, s))),
                Just(Datum::Str("7".into())),
                Just(Datum::Null),
            ]
            .prop_map(Expr::Literal),
        ]
    }

    fn expr() -> impl Strategy<Value = Expr> {
        leaf().prop_recursive(4, 24, 3, |inner| {
            let op = prop_oneof![Just(ArithOp::Add), Just(ArithOp::Sub), Just(ArithOp::Mul), Just(ArithOp::Div)];
            prop_oneof![
                (op, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Arith {
                    op,
                    left: Box::new(l),
                    right: Box::new(r)
                }),
                inner.clone().prop_map(|e| Expr::Negate(Box::new(e))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Expr::Function { func: ScalarFunction::Mod, args: vec![a, b] }),
                inner.clone().prop_map(|a| Expr::Function { func: ScalarFunction::Abs, args: vec![a] }),
                proptest::collection::vec(inner, 1..=3)
                    .prop_map(|args| Expr::Function { func: ScalarFunction::OraHash, args }),
            ]
        })
    }

    fn row_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Datum::Int),
            (-1000i64..1000).prop_map(Datum::Int),
            Just(Datum::Num(rust_decimal::Decimal::new(-35, 1))),
            (-100_000i64..100_000, 1u32..=4).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m, s))),
            Just(Datum::Str("x".into())),
            Just(Datum::Null),
        ]
    }

    proptest! {
        #[test]
        fn whole_number_and_fixed_point_paths_agree_with_general_evaluation(
            e in expr(),
            row in proptest::collection::vec(row_value(), 3),
        ) {
            let mut f = FunctionContext::new(0, 1);
            let expected = reference(&e, &row, &mut f);
            let got = e.eval(row.as_slice(), &mut f).map(Datum::into_owned);
            match (&got, &expected) {
                (Ok(g), Ok(x)) => prop_assert_eq!(g, x),
                (Err(g), Err(x)) => prop_assert_eq!(g.to_string(), x.to_string()),
                _ => prop_assert!(false, "{got:?} vs {expected:?}"),
            }
            if let Some(i) = e.whole_number(row.as_slice()) {
                prop_assert_eq!(expected.as_ref().ok().cloned(), Some(Datum::Int(i)));
            }
            if let Some(x) = e.fixed_point(row.as_slice()) {
                prop_assert_eq!(expected.ok(), Some(x.into_datum()));
            }
            let condition = Expr::Compare { op: CmpOp::Lt, left: Box::new(e.clone()), right: Box::new(Expr::Column(0)) };
            let cmp = match (reference(&e, &row, &mut f), &row[0]) {
                (Ok(v), c) => v.sql_cmp(c).map(|o| o.map(|o| o == Ordering::Less)).map_err(|e| e.to_string()),
                (Err(e), _) => Err(e.to_string()),
            };
            prop_assert_eq!(condition.eval_condition(row.as_slice(), &mut f).map_err(|e| e.to_string()), cmp);
            let between = Expr::Between {
                expr: Box::new(e.clone()),
                low: Box::new(Expr::Column(0)),
                high: Box::new(Expr::Column(1)),
                negated: false,
            };
            let within = reference(&e, &row, &mut f).map_err(|e| e.to_string()).and_then(|v| {
                let ge = v.sql_cmp(&row[0]).map_err(|e| e.to_string())?.map(|o| o != Ordering::Less);
                let le = v.sql_cmp(&row[1]).map_err(|e| e.to_string())?.map(|o| o != Ordering::Greater);
                Ok(and3(ge, le))
            });
            prop_assert_eq!(between.eval_condition(row.as_slice(), &mut f).map_err(|e| e.to_string()), within);
        }
    }

    fn pad_arg() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Datum::Null),
            (-30i64..30).prop_map(Datum::Int),
            any::<i64>().prop_map(Datum::Int),
            Just(Datum::Num(rust_decimal::Decimal::new(45, 1))),
            "[a-cé*]{1,6}".prop_map(|s| Datum::Str(s.into())),
        ]
    }

    proptest! {
        #[test]
        fn buffered_pads_give_what_the_functions_give(
            left in any::<bool>(),
            args in proptest::collection::vec(pad_arg(), 2..=3),
        ) {
            let func = if left { ScalarFunction::Lpad } else { ScalarFunction::Rpad };
            let e = Expr::Function { func, args: args.into_iter().map(Expr::Literal).collect() };
            let mut f = FunctionContext::new(0, 1);
            let mut buffer = "left over".to_owned();
            let row: &[Value] = &[];
            let plain = e.eval(row, &mut f).map(Datum::into_owned).map_err(|e| e.to_string());
            let buffered = e.eval_buffered(row, &mut f, &mut buffer).map(Datum::into_owned).map_err(|e| e.to_string());
            prop_assert_eq!(buffered, plain);
        }
    }

    mod display {
        use super::*;

        fn col(i: usize) -> Expr {
            Expr::Column(i)
        }
        fn num(i: i64) -> Expr {
            Expr::Literal(Datum::Int(i))
        }
        fn arith(op: ArithOp, l: Expr, r: Expr) -> Expr {
            Expr::Arith { op, left: Box::new(l), right: Box::new(r) }
        }
        fn eq(l: Expr, r: Expr) -> Expr {
            Expr::Compare { op: CmpOp::Eq, left: Box::new(l), right: Box::new(r) }
        }
        fn and(l: Expr, r: Expr) -> Expr {
            Expr::And(Box::new(l), Box::new(r))
        }
        fn or(l: Expr, r: Expr) -> Expr {
            Expr::Or(Box::new(l), Box::new(r))
        }
        fn shown(e: &Expr) -> String {
            let names: Vec<String> = ["A", "B", "C"].map(String::from).to_vec();
            e.display(&names).to_string()
        }

        #[test]
        fn products_of_sums_keep_their_parentheses() {
            let e = eq(arith(ArithOp::Mul, arith(ArithOp::Add, col(0), num(1)), num(2)), col(1));
            assert_eq!(shown(&e), r#"("A"+1)*2="B""#);
            let e = arith(ArithOp::Add, col(0), arith(ArithOp::Mul, num(1), num(2)));
            assert_eq!(shown(&e), r#""A"+1*2"#);
            let e = arith(ArithOp::Div, col(0), arith(ArithOp::Sub, col(1), col(2)));
            assert_eq!(shown(&e), r#""A"/("B"-"C")"#);
        }

        #[test]
        fn left_associative_operators_keep_right_parentheses_only() {
            let right = arith(ArithOp::Sub, col(0), arith(ArithOp::Sub, col(1), col(2)));
            assert_eq!(shown(&right), r#""A"-("B"-"C")"#);
            let left = arith(ArithOp::Sub, arith(ArithOp::Sub, col(0), col(1)), col(2));
            assert_eq!(shown(&left), r#""A"-"B"-"C""#);
            let div = arith(ArithOp::Div, col(0), arith(ArithOp::Mul, col(1), col(2)));
            assert_eq!(shown(&div), r#""A"/("B"*"C")"#);
            let mul = arith(ArithOp::Mul, arith(ArithOp::Div, col(0), col(1)), col(2));
            assert_eq!(shown(&mul), r#""A"/"B"*"C""#);
        }

        #[test]
        fn unary_minus_binds_tightest_and_never_prints_two_minus_signs() {
            let e = Expr::Negate(Box::new(arith(ArithOp::Add, col(0), col(1))));
            assert_eq!(shown(&e), r#"-("A"+"B")"#);
            let e = arith(ArithOp::Mul, Expr::Negate(Box::new(col(0))), col(1));
            assert_eq!(shown(&e), r#"-"A"*"B""#);
            let e = arith(ArithOp::Sub, col(0), num(-5));
            assert_eq!(shown(&e), r#""A"-(-5)"#);
            let e = Expr::Negate(Box::new(Expr::Negate(Box::new(col(0)))));
            assert_eq!(shown(&e), r#"-(-"A")"#);
            let e = arith(ArithOp::Add, col(0), num(-5));
            assert_eq!(shown(&e), r#""A"+-5"#);
        }

        #[test]
        fn concatenation_shares_the_level_of_addition() {
            let chain = Expr::Concat(Box::new(col(0)), Box::new(Expr::Concat(Box::new(col(1)), Box::new(col(2)))));
            assert_eq!(shown(&chain), r#""A"||"B"||"C""#);
            let sum = Expr::Concat(Box::new(col(0)), Box::new(arith(ArithOp::Add, col(1), num(1))));
            assert_eq!(shown(&sum), r#""A"||("B"+1)"#);
            let left = Expr::Concat(Box::new(arith(ArithOp::Add, col(1), num(1))), Box::new(col(0)));
            assert_eq!(shown(&left), r#""B"+1||"A""#);
            let product = arith(ArithOp::Mul, Expr::Concat(Box::new(col(0)), Box::new(col(1))), num(2));
            assert_eq!(shown(&product), r#"("A"||"B")*2"#);
        }

        #[test]
        fn or_inside_and_and_and_inside_not_keep_their_parentheses() {
            let e = and(or(eq(col(0), num(1)), eq(col(1), num(2))), eq(col(2), num(3)));
            assert_eq!(shown(&e), r#"("A"=1 OR "B"=2) AND "C"=3"#);
            let e = or(and(eq(col(0), num(1)), eq(col(1), num(2))), eq(col(2), num(3)));
            assert_eq!(shown(&e), r#""A"=1 AND "B"=2 OR "C"=3"#);
            let e = Expr::Not(Box::new(and(eq(col(0), num(1)), eq(col(1), num(2)))));
            assert_eq!(shown(&e), r#"NOT ("A"=1 AND "B"=2)"#);
            let e = Expr::Not(Box::new(eq(col(0), num(1))));
            assert_eq!(shown(&e), r#"NOT "A"=1"#);
            let e = and(eq(col(0), num(1)), Expr::Not(Box::new(or(eq(col(1), num(2)), eq(col(2), num(3))))));
            assert_eq!(shown(&e), r#""A"=1 AND NOT ("B"=2 OR "C"=3)"#);
        }

        #[test]
        fn an_or_joined_with_others_by_and_is_parenthesized() {
            let names: Vec<String> = ["A", "B"].map(String::from).to_vec();
            let e = or(eq(col(0), num(1)), eq(col(1), num(2)));
            assert_eq!(e.display(&names).to_string(), r#""A"=1 OR "B"=2"#);
            assert_eq!(e.display_conjunct(&names).to_string(), r#"("A"=1 OR "B"=2)"#);
            let c = eq(col(0), num(1));
            assert_eq!(c.display_conjunct(&names).to_string(), r#""A"=1"#);
        }

        #[test]
        fn operands_of_conditions_need_no_parentheses() {
            let sum = arith(ArithOp::Add, col(0), num(1));
            let e = Expr::Between {
                expr: Box::new(sum.clone()),
                low: Box::new(num(1)),
                high: Box::new(sum.clone()),
                negated: false,
            };
            assert_eq!(shown(&e), r#""A"+1 BETWEEN 1 AND "A"+1"#);
            let e = Expr::InList { expr: Box::new(sum.clone()), list: vec![sum.clone(), num(2)], negated: true };
            assert_eq!(shown(&e), r#""A"+1 NOT IN ("A"+1,2)"#);
            let e = Expr::Function { func: ScalarFunction::Abs, args: vec![sum] };
            assert_eq!(shown(&arith(ArithOp::Mul, e, num(2))), r#"ABS("A"+1)*2"#);
        }
    }
}

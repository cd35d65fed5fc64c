//! The families of values a column or an expression gives: numbers, text or dates,
//! the types whose values compare, hash and sort alike. A join key pairs expressions of
//! one family; a set operation's branches must give one family a column; a view's
//! columns carry theirs to the query that reads it.

use crate::expr::Expr;
use crate::expr::aggregate::{AggCall, AggFunc};
use crate::types::{DataType, Datum, Value};

/// Types whose values compare, hash and sort alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Number,
    Text,
    Date,
}

impl Family {
    pub fn of_type(t: DataType) -> Family {
        match t {
            DataType::Number { .. } | DataType::Integer => Family::Number,
            DataType::Varchar2 { .. } | DataType::Char { .. } => Family::Text,
            DataType::Date => Family::Date,
        }
    }

    /// The family as an error names it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Number => "a number",
            Family::Text => "text",
            Family::Date => "a date",
        }
    }

    pub fn of_value(v: &Value) -> Option<Family> {
        match v {
            Datum::Null => None,
            Datum::Int(_) | Datum::Num(_) => Some(Family::Number),
            Datum::Str(_) => Some(Family::Text),
            Datum::Date(_) => Some(Family::Date),
        }
    }
}

/// The family of the values `e` gives, when a join key can tell it: its columns' (by
/// `column`), a literal's, and what arithmetic, `||` and the scalar functions make of
/// them. `None` (the equality stays a residual condition, compared with Oracle's
/// conversions) for a CASE, a bind variable, or a function whose type depends on its
/// arguments' in a way not followed here.
pub fn expr_family(e: &Expr, column: &dyn Fn(usize) -> Option<Family>) -> Option<Family> {
    use crate::expr::functions::{ArithOp, ScalarFunction as F};
    use Family::*;
    let of = |x: &Expr| expr_family(x, column);
    match e {
        Expr::Column(c) => column(*c),
        Expr::Literal(v) => Family::of_value(v),
        Expr::Arith { op, left, right } => match (op, of(left)?, of(right)?) {
            (_, Number, Number) => Some(Number),
            (ArithOp::Add | ArithOp::Sub, Date, Number) | (ArithOp::Add, Number, Date) => Some(Date),
            (ArithOp::Sub, Date, Date) => Some(Number),
            _ => None,
        },
        Expr::Negate(x) => (of(x)? == Number).then_some(Number),
        Expr::Cast { to, .. } => Some(match to {
            crate::types::DataType::Number { .. } | crate::types::DataType::Integer => Number,
            crate::types::DataType::Varchar2 { .. } | crate::types::DataType::Char { .. } => Text,
            crate::types::DataType::Date => Date,
        }),
        Expr::Sequence { .. } => Some(Number),
        Expr::Concat(..) => Some(Text),
        Expr::Function { func, args } => match func {
            F::Upper
            | F::Lower
            | F::Trim
            | F::Ltrim
            | F::Rtrim
            | F::Substr
            | F::Rpad
            | F::Lpad
            | F::Replace
            | F::Chr
            | F::Concat
            | F::ToChar => Some(Text),
            F::Length
            | F::Abs
            | F::Floor
            | F::Ceil
            | F::Sqrt
            | F::Sign
            | F::Ascii
            | F::Instr
            | F::Mod
            | F::Power
            | F::ToNumber
            | F::OraHash
            | F::MonthsBetween
            | F::Extract => Some(Number),
            F::ToDate | F::AddMonths | F::LastDay | F::NextDay | F::AddIntervalMonths | F::AddIntervalSeconds => {
                Some(Date)
            }
            F::Round | F::Trunc => match of(args.first()?)? {
                Text => None,
                f => Some(f),
            },
            F::Nvl | F::Coalesce | F::Greatest | F::Least => {
                let first = of(args.first()?)?;
                args.iter().all(|a| of(a) == Some(first)).then_some(first)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The family of what aggregate `call` gives, its argument's by `column`.
pub fn aggregate_family(call: &AggCall, column: &dyn Fn(usize) -> Option<Family>) -> Option<Family> {
    match call.func {
        AggFunc::CountStar | AggFunc::Count | AggFunc::Sum | AggFunc::Avg => Some(Family::Number),
        AggFunc::Listagg => Some(Family::Text),
        AggFunc::Min | AggFunc::Max => expr_family(call.arg.as_ref()?, column),
    }
}

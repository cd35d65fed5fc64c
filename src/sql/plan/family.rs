//! The families of values a column or an expression gives: numbers, text, dates,
//! timestamps and the two kinds of interval, the types whose values compare, hash and
//! sort alike. A join key pairs expressions of
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
    Timestamp,
    YearMonth,
    DaySecond,
}

impl Family {
    pub fn of_type(t: DataType) -> Family {
        match t {
            DataType::Number { .. } | DataType::Integer => Family::Number,
            DataType::Varchar2 { .. } | DataType::Char { .. } => Family::Text,
            DataType::Date => Family::Date,
            DataType::Timestamp { .. } => Family::Timestamp,
            DataType::IntervalYearMonth { .. } => Family::YearMonth,
            DataType::IntervalDaySecond { .. } => Family::DaySecond,
        }
    }

    /// The family as an error names it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Number => "a number",
            Family::Text => "text",
            Family::Date => "a date",
            Family::Timestamp => "a timestamp",
            Family::YearMonth => "an interval year to month",
            Family::DaySecond => "an interval day to second",
        }
    }

    pub fn of_value(v: &Value) -> Option<Family> {
        match v {
            Datum::Null => None,
            Datum::Int(_) | Datum::Num(_) => Some(Family::Number),
            Datum::Str(_) => Some(Family::Text),
            Datum::Date(_) => Some(Family::Date),
            Datum::Timestamp(_) => Some(Family::Timestamp),
            Datum::YearMonth(_) => Some(Family::YearMonth),
            Datum::DaySecond(_) => Some(Family::DaySecond),
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
        Expr::Arith { op, left, right } => {
            let additive = matches!(op, ArithOp::Add | ArithOp::Sub);
            match (op, of(left)?, of(right)?) {
                (_, Number, Number) => Some(Number),
                (_, Date | Timestamp, Number) | (ArithOp::Add, Number, Date | Timestamp) if additive => Some(Date),
                (ArithOp::Sub, Date, Date) => Some(Number),
                (ArithOp::Sub, Date | Timestamp, Date | Timestamp) => Some(DaySecond),
                (_, d @ (Date | Timestamp), YearMonth | DaySecond) if additive => Some(d),
                (ArithOp::Add, YearMonth | DaySecond, d @ (Date | Timestamp)) => Some(d),
                (_, i @ (YearMonth | DaySecond), j) if additive && i == j => Some(i),
                (ArithOp::Mul | ArithOp::Div, i @ (YearMonth | DaySecond), Number)
                | (ArithOp::Mul, Number, i @ (YearMonth | DaySecond)) => Some(i),
                _ => None,
            }
        }
        Expr::Negate(x) => match of(x)? {
            f @ (Number | YearMonth | DaySecond) => Some(f),
            _ => None,
        },
        Expr::Cast { to, .. } => Some(Family::of_type(*to)),
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
            F::ToDate | F::AddMonths | F::LastDay | F::NextDay => Some(Date),
            F::ToTimestamp => Some(Timestamp),
            F::NumToDsInterval | F::ToDsInterval => Some(DaySecond),
            F::NumToYmInterval | F::ToYmInterval => Some(YearMonth),
            F::Round | F::Trunc => match of(args.first()?)? {
                Number => Some(Number),
                Date | Timestamp => Some(Date),
                _ => None,
            },
            F::NullIf => of(args.first()?),
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
        AggFunc::CountStar | AggFunc::Count => Some(Family::Number),
        // The sum or mean of intervals is an interval of their kind.
        AggFunc::Sum | AggFunc::Avg => match call.arg.as_ref().and_then(|a| expr_family(a, column)) {
            Some(f @ (Family::YearMonth | Family::DaySecond)) => Some(f),
            _ => Some(Family::Number),
        },
        AggFunc::Listagg => Some(Family::Text),
        AggFunc::Min | AggFunc::Max => expr_family(call.arg.as_ref()?, column),
    }
}

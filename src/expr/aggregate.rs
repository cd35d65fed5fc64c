//! Aggregate calls: the function (COUNT, SUM, MIN, MAX, AVG, LISTAGG) and its bound
//! argument (with LISTAGG's delimiter and WITHIN GROUP order), as the binder makes them
//! and the aggregate stage (and the full scan's count kernel) computes them.

use super::Expr;

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// LISTAGG(expr [, delimiter]) [WITHIN GROUP (ORDER BY ...)]: the values' text joined.
    Listagg,
}

impl AggFunc {
    pub fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name {
            "COUNT" => AggFunc::Count,
            "SUM" => AggFunc::Sum,
            "MIN" => AggFunc::Min,
            "MAX" => AggFunc::Max,
            "AVG" => AggFunc::Avg,
            "LISTAGG" => AggFunc::Listagg,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "COUNT",
            AggFunc::Sum => "SUM",
            AggFunc::Min => "MIN",
            AggFunc::Max => "MAX",
            AggFunc::Avg => "AVG",
            AggFunc::Listagg => "LISTAGG",
        }
    }
}

/// One aggregate call of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    /// The argument, bound over the source scope (`None` for COUNT(*)).
    pub arg: Option<Expr>,
    pub distinct: bool,
    /// Canonical text, to share one call written twice.
    pub text: String,
    /// LISTAGG's delimiter and order (`None` for the other functions).
    pub listagg: Option<Box<Listagg>>,
}

impl AggCall {
    /// The expressions the call reads from each row: its argument and LISTAGG's order keys.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        let keys = self.listagg.iter().flat_map(|l| l.order_by.iter().map(|k| &k.expr));
        self.arg.iter().chain(keys)
    }
}

/// What LISTAGG joins its values with, and in what order.
#[derive(Debug, Clone, PartialEq)]
pub struct Listagg {
    /// Written between two values (empty for none, or a NULL delimiter).
    pub delimiter: String,
    /// WITHIN GROUP (ORDER BY ...), bound over the source scope; empty: the order the
    /// rows came in.
    pub order_by: Vec<OrderKey>,
}

/// One key of an ORDER BY inside a call.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderKey {
    pub expr: Expr,
    pub descending: bool,
    /// NULLs before the other values (Oracle's default: last ascending, first descending).
    pub nulls_first: bool,
}

/// The longest text LISTAGG returns, in bytes: a VARCHAR2's 4000, as Oracle's
/// (longer is ORA-01489).
pub const LISTAGG_MAX_BYTES: usize = 4000;

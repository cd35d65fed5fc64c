//! Selectivity: the fraction of a table's rows a WHERE clause keeps, from ANALYZE's
//! statistics, as Oracle estimates it without histograms:
//!
//! - `col = v`: `1 / num_distinct` of the non-NULL rows; `col <> v` the rest of them;
//!   `col IN (...)`: one `1 / num_distinct` a value;
//! - a range: the part of `[low_value, high_value]` it covers (strings compared by their
//!   first 8 bytes as a base-256 fraction, dates by their seconds), plus `1 / num_distinct`
//!   for each closed end; ranges on one column in several conjuncts are combined first;
//! - `IS NULL`: `num_nulls / num_rows`;
//! - anything else, and every condition on a table without statistics: Oracle's defaults,
//!   1% for an equality, 5% for anything else; a `NOT LIKE` or a `NOT IN` list of
//!   constants what the condition it negates leaves of the non-NULL rows (95% for
//!   `NOT LIKE`).
//!
//! Conjuncts are taken as independent: their selectivities multiply.

use super::facts::TableFacts;
use crate::expr::Expr;
use crate::expr::predicates::{ColumnBound, Conjunct};
use crate::types::{Datum, Value};
use std::cmp::Ordering;

const DEFAULT_EQUALITY: f64 = 0.01;
const DEFAULT_OTHER: f64 = 0.05;

/// One end of a range: the value and whether it is included.
type RangeEnd = super::End;

/// The selectivity of a condition over rows nothing is known about (Oracle's defaults).
pub fn default_selectivity(condition: &crate::expr::Expr) -> f64 {
    combined(&TableFacts::unknown(), &crate::expr::predicates::conjuncts(condition, &[]))
}

/// The selectivity of all `conjuncts` together.
pub fn combined(facts: &TableFacts<'_>, conjuncts: &[Conjunct]) -> f64 {
    // Ranges on one column combine into one range before they are estimated.
    let mut ranges: Vec<(usize, RangeEnd, RangeEnd)> = Vec::new();
    let mut s = 1.0;
    for c in conjuncts {
        match &c.bound {
            Some((col, ColumnBound::Range { lower, upper, .. })) => match ranges.iter_mut().find(|r| r.0 == *col) {
                Some(r) => {
                    super::narrow(&mut r.1, lower, Ordering::Greater);
                    super::narrow(&mut r.2, upper, Ordering::Less);
                }
                None => ranges.push((*col, lower.clone(), upper.clone())),
            },
            Some((col, bound)) => s *= bound_selectivity(facts, *col, bound),
            None => s *= opaque_selectivity(facts, &c.expr),
        }
    }
    for (col, lower, upper) in ranges {
        s *= range_selectivity(facts, col, lower.as_ref(), upper.as_ref());
    }
    s.clamp(0.0, 1.0)
}

/// The selectivity of a conjunct that bounds no column: Oracle's 5%, or for `NOT LIKE`
/// and `NOT IN` a list of constants, the non-NULL rows the condition they negate leaves.
fn opaque_selectivity(facts: &TableFacts<'_>, condition: &Expr) -> f64 {
    let non_null = |e: &Expr| match e {
        Expr::Column(c) => facts.non_null(*c),
        _ => 1.0,
    };
    match condition {
        Expr::Like { expr, negated: true, .. } => non_null(expr) * (1.0 - DEFAULT_OTHER),
        Expr::InList { expr, list, negated: true } if list.iter().all(|e| matches!(e, Expr::Literal(_))) => {
            let density = match &**expr {
                Expr::Column(c) => facts.column(*c).map_or(DEFAULT_EQUALITY, |stats| stats.density()),
                _ => DEFAULT_EQUALITY,
            };
            non_null(expr) * (1.0 - (list.len() as f64 * density).min(1.0))
        }
        _ => DEFAULT_OTHER,
    }
}

fn bound_selectivity(facts: &TableFacts<'_>, col: usize, bound: &ColumnBound) -> f64 {
    let Some(stats) = facts.column(col) else {
        return match bound {
            ColumnBound::Eq(_) | ColumnBound::IsNull => DEFAULT_EQUALITY,
            ColumnBound::In(v) => (v.len() as f64 * DEFAULT_EQUALITY).min(1.0),
            ColumnBound::NotEq(_) | ColumnBound::IsNotNull => 1.0 - DEFAULT_EQUALITY,
            ColumnBound::Range { .. } => DEFAULT_OTHER,
        };
    };
    let density = stats.density();
    let non_null = facts.non_null(col);
    match bound {
        ColumnBound::Eq(_) => density * non_null,
        ColumnBound::NotEq(_) => (1.0 - density) * non_null,
        ColumnBound::In(values) => (values.len() as f64 * density).min(1.0) * non_null,
        ColumnBound::IsNull => 1.0 - non_null,
        ColumnBound::IsNotNull => non_null,
        ColumnBound::Range { lower, upper, .. } => range_selectivity(facts, col, lower.as_ref(), upper.as_ref()),
    }
}

fn range_selectivity(
    facts: &TableFacts<'_>,
    col: usize,
    lower: Option<&(Value, bool)>,
    upper: Option<&(Value, bool)>,
) -> f64 {
    let Some(stats) = facts.column(col) else { return DEFAULT_OTHER };
    let (Some(low), Some(high)) = (&stats.low_value, &stats.high_value) else { return 0.0 };
    let (low_value, high_value) = (low.to_value(), high.to_value());
    let (Some(low), Some(high)) = (position(&low_value), position(&high_value)) else { return DEFAULT_OTHER };
    // A bound is placed on the column's own scale: a string compared with a DATE column
    // is read as a date; a value of another kind (a number against a string column,
    // compared after conversion) has no place there, and the default applies.
    let at = |e: Option<&(Value, bool)>, default: f64| match e {
        None => Some(default),
        Some((v, _)) => match (&low_value, v) {
            (Datum::Date(_), Datum::Str(s)) => crate::types::parse_date(s, None).ok().map(|t| t as f64),
            (Datum::Timestamp(_), Datum::Str(s)) => crate::types::datetime::parse_timestamp(s).ok().map(|t| t as f64),
            (Datum::Timestamp(_), Datum::Date(d)) => Some(*d as f64 * 1e6),
            (Datum::Date(_), Datum::Timestamp(t)) => Some(*t as f64 / 1e6),
            (Datum::Int(_) | Datum::Num(_), Datum::Int(_) | Datum::Num(_))
            | (Datum::Str(_), Datum::Str(_))
            | (Datum::Date(_), Datum::Date(_))
            | (Datum::Timestamp(_), Datum::Timestamp(_))
            | (Datum::YearMonth(_), Datum::YearMonth(_))
            | (Datum::DaySecond(_), Datum::DaySecond(_)) => position(v),
            _ => None,
        },
    };
    let (Some(lo), Some(hi)) = (at(lower, low), at(upper, high)) else { return DEFAULT_OTHER };
    let density = stats.density();
    let width = high - low;
    let covered = if width <= 0.0 {
        f64::from(u8::from(lo <= low && low <= hi))
    } else {
        ((hi.min(high) - lo.max(low)) / width).clamp(0.0, 1.0)
    };
    let closed_ends = [lower, upper].iter().filter(|e| e.is_some_and(|(_, inclusive)| *inclusive)).count() as f64;
    ((covered + closed_ends * density).min(1.0)) * facts.non_null(col)
}

/// A value's position on a number line that keeps its order: numbers as themselves,
/// dates as seconds, timestamps and intervals in their units (microseconds, months),
/// strings by their first 8 bytes as a base-256 fraction.
fn position(v: &Value) -> Option<f64> {
    match v {
        Datum::Int(i) => Some(*i as f64),
        Datum::Num(d) => d.to_string().parse().ok(),
        Datum::Date(t) | Datum::Timestamp(t) | Datum::YearMonth(t) | Datum::DaySecond(t) => Some(*t as f64),
        Datum::Str(s) => {
            let mut x = 0.0;
            let mut scale = 1.0;
            for &b in s.as_bytes().iter().take(8) {
                scale /= 256.0;
                x += f64::from(b) * scale;
            }
            Some(x)
        }
        Datum::Null => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnStats, StatValue, TableDef, TableStats};
    use crate::expr::predicates::conjuncts;
    use crate::expr::{CmpOp, LikePattern};

    fn table(num_rows: u64, low: i64, high: i64, ndv: u64, nulls: u64) -> TableDef {
        TableDef {
            name: "T".into(),
            object_id: 1,
            columns: vec![crate::catalog::ColumnDef {
                name: "C".into(),
                data_type: crate::types::DataType::Integer,
                nullable: true,
            }],
            pctfree: 10,
            segment_header: 0,
            created: 0,
            stats: Some(TableStats {
                num_rows,
                blocks: 100,
                avg_row_len: 10,
                sample_size: num_rows,
                analyzed: 0,
                columns: vec![ColumnStats {
                    num_distinct: ndv,
                    num_nulls: nulls,
                    low_value: Some(StatValue::Number(low.to_string())),
                    high_value: Some(StatValue::Number(high.to_string())),
                    avg_col_len: 4,
                }],
            }),
            inmemory: None,
            compression: None,
            constraints: Vec::new(),
            identity: None,
        }
    }

    fn cmp(op: CmpOp, v: i64) -> Expr {
        Expr::Compare { op, left: Box::new(Expr::Column(0)), right: Box::new(Expr::Literal(Datum::Int(v))) }
    }

    #[test]
    fn ranges_interpolate_between_low_and_high() {
        let t = table(1000, 1, 1001, 1000, 0);
        let f = TableFacts::new(&t, 100, 8192);
        let s = combined(&f, &conjuncts(&cmp(CmpOp::Gt, 501), &[]));
        assert!((s - 0.5).abs() < 1e-9, "{s}");
        // Both ends in two conjuncts: combined into one range.
        let both = Expr::And(Box::new(cmp(CmpOp::Gt, 101)), Box::new(cmp(CmpOp::Lt, 201)));
        let s = combined(&f, &conjuncts(&both, &[]));
        assert!((s - 0.1).abs() < 1e-9, "{s}");
        // Outside the values: nothing (plus the density of a closed end).
        let s = combined(&f, &conjuncts(&cmp(CmpOp::Gt, 5000), &[]));
        assert_eq!(s, 0.0);
    }

    #[test]
    fn ranges_on_one_column_combine_to_the_tighter_ends() {
        let t = table(1000, 1, 1001, 1000, 0);
        let f = TableFacts::new(&t, 100, 8192);
        let and = |a, b| Expr::And(Box::new(a), Box::new(b));
        let alone = combined(&f, &conjuncts(&cmp(CmpOp::Gt, 501), &[]));
        for both in [and(cmp(CmpOp::Gt, 501), cmp(CmpOp::Gt, 101)), and(cmp(CmpOp::Gt, 101), cmp(CmpOp::Gt, 501))] {
            assert_eq!(combined(&f, &conjuncts(&both, &[])), alone);
        }
        let upper = combined(&f, &conjuncts(&cmp(CmpOp::Lt, 101), &[]));
        assert_eq!(combined(&f, &conjuncts(&and(cmp(CmpOp::Lt, 101), cmp(CmpOp::Lt, 501)), &[])), upper);
    }

    #[test]
    fn equality_uses_distinct_values_of_non_null_rows() {
        let t = table(1000, 1, 100, 100, 500);
        let f = TableFacts::new(&t, 100, 8192);
        let s = combined(&f, &conjuncts(&cmp(CmpOp::Eq, 7), &[]));
        assert!((s - 0.005).abs() < 1e-12, "{s}");
    }

    #[test]
    fn without_statistics_the_defaults_apply() {
        let mut t = table(1000, 1, 100, 100, 0);
        t.stats = None;
        let f = TableFacts::new(&t, 10, 8192);
        assert_eq!(f.rows, 819.0);
        assert_eq!(combined(&f, &conjuncts(&cmp(CmpOp::Eq, 7), &[])), 0.01);
        assert_eq!(combined(&f, &conjuncts(&cmp(CmpOp::Gt, 7), &[])), 0.05);
    }

    #[test]
    fn negations_keep_what_the_condition_they_negate_leaves() {
        let t = table(1000, 1, 100, 100, 200);
        let f = TableFacts::new(&t, 100, 8192);
        let like = |negated| Expr::Like {
            expr: Box::new(Expr::Column(0)),
            pattern: LikePattern::compile(Some("%x%"), None),
            negated,
        };
        assert_eq!(combined(&f, &conjuncts(&like(false), &[])), 0.05);
        assert!((combined(&f, &conjuncts(&like(true), &[])) - 0.8 * 0.95).abs() < 1e-12);
        let list = vec![Expr::Literal(Datum::Int(1)), Expr::Literal(Datum::Int(2))];
        let not_in = Expr::InList { expr: Box::new(Expr::Column(0)), list, negated: true };
        assert!((combined(&f, &conjuncts(&not_in, &[])) - 0.8 * 0.98).abs() < 1e-12);
    }

    #[test]
    fn strings_keep_their_order_as_positions() {
        let a = position(&Datum::string("AB".to_string())).unwrap();
        let b = position(&Datum::string("AC".to_string())).unwrap();
        assert!(a < b);
    }
}

//! Describing a statement before it runs: the names and types of a query's result
//! columns, and the types its bind variables are compared with or stored as. What a
//! client protocol sends ahead of the rows (PostgreSQL's Describe), and what a driver
//! reads to convert values.
//!
//! The names are the plan's: the query is planned (its bind variables NULL) as its first
//! execution would plan it. The types are derived from the text, as Oracle derives a
//! cursor's column types: a column of a table or view has its declared type, a literal,
//! a CAST, an arithmetic or `||` expression, an aggregate or a function of a known
//! family has the type it yields, and a CASE, NVL or MIN the type of its operand; a
//! fixed view's column (`v$`, `pg_catalog`) the type of the values it holds as the
//! statement is described (NUMBER, VARCHAR2, DATE, ...). What is not derived (an empty
//! fixed view's column, a subquery's in some shapes) is `None`: the value is still what
//! the query gives, and a client reads it as text.
//!
//! A bind variable's type is that of the column it is compared with (`col = :1`,
//! `col BETWEEN :1 AND :2`, `col IN (:1, ...)`), assigned to (`SET col = :1`) or inserted
//! into (`INSERT INTO t (col) VALUES (:1)`); `None` where it stands elsewhere.

use super::bind::{function_name, ident_name};
use crate::catalog::ColumnDef;
use crate::error::Result;
use crate::instance::Session;
use crate::types::{DataType, Value};
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;

/// A result column of a described query.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultColumn {
    pub name: String,
    /// Its type, when derived from the text (see the module's documentation).
    pub data_type: Option<DataType>,
}

/// What a statement gives and takes, known before it runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Description {
    /// A query's result columns; empty for any other statement.
    pub columns: Vec<ResultColumn>,
    /// The type each bind variable (by slot) is compared with, assigned to or inserted
    /// into, where the text says.
    pub binds: Vec<Option<DataType>>,
}

const NUMBER: DataType = DataType::Number { precision: None, scale: None };
const TEXT: DataType = DataType::Varchar2 { max_bytes: 4000 };

/// The columns a query `query` gives, named as planned with its bind variables `names`
/// NULL.
pub(crate) fn query_columns(session: &Session, query: &ast::Query, names: &Arc<[String]>) -> Result<Vec<ResultColumn>> {
    let mut functions = super::function_context(session);
    functions.bind_names = names.clone();
    functions.binds = vec![Value::Null; names.len()];
    let names = super::plan::plan_statement_query(query, session, &functions)?.columns;
    let types = query_types(session, query).filter(|types| types.len() == names.len());
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(i, name)| ResultColumn { name, data_type: types.as_ref().and_then(|t| t[i]) })
        .collect())
}

/// The types of bind variables `names` (by slot) in `statement`.
pub(crate) fn bind_types(session: &Session, statement: &ast::Statement, names: &[String]) -> Vec<Option<DataType>> {
    let mut tables: Vec<ColumnsOf> = Vec::new();
    let _ = ast::visit_relations(statement, |relation| {
        if let Some(columns) = named_relation(session, &function_name(relation)) {
            tables.push(columns);
        }
        ControlFlow::<()>::Continue(())
    });
    let scope = Scope { relations: tables.into_iter().map(|c| (String::new(), c)).collect() };
    let mut types: Vec<Option<DataType>> = vec![None; names.len()];
    let mut set = |bind: &ast::Expr, column: &ast::Expr| {
        if let Some(slot) = bind_slot(bind, names)
            && types[slot].is_none()
        {
            types[slot] = scope.column(column);
        }
    };
    let _ = ast::visit_expressions(statement, |expr| {
        match expr {
            ast::Expr::BinaryOp { left, op, right } if is_comparison(op) => {
                set(right, left);
                set(left, right);
            }
            ast::Expr::Between { expr, low, high, .. } => {
                set(low, expr);
                set(high, expr);
            }
            ast::Expr::InList { expr, list, .. } => list.iter().for_each(|item| set(item, expr)),
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    match statement {
        ast::Statement::Insert(insert) => {
            let table = match &insert.table {
                ast::TableObject::TableName(name) => named_relation(session, &function_name(name)),
                _ => None,
            };
            if let (Some(table), Some(source)) = (table, &insert.source)
                && let ast::SetExpr::Values(values) = &*source.body
            {
                let targets: Vec<Option<DataType>> = if insert.columns.is_empty() {
                    table.iter().map(|(_, t)| *t).collect()
                } else {
                    insert.columns.iter().map(|c| table_column(&table, &function_name(c))).collect()
                };
                for row in &values.rows {
                    for (value, target) in row.iter().zip(&targets) {
                        if let Some(slot) = bind_slot(value, names)
                            && types[slot].is_none()
                        {
                            types[slot] = *target;
                        }
                    }
                }
            }
        }
        ast::Statement::Update(update) => {
            for assignment in &update.assignments {
                if let ast::AssignmentTarget::ColumnName(name) = &assignment.target {
                    let column = ast::Expr::Identifier(
                        name.0.last().and_then(|p| p.as_ident()).cloned().unwrap_or_else(|| ast::Ident::new("")),
                    );
                    set(&assignment.value, &column);
                }
            }
        }
        _ => {}
    }
    types
}

fn is_comparison(op: &ast::BinaryOperator) -> bool {
    use ast::BinaryOperator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq)
}

/// The slot of the bind variable `expr` is, if it is one.
fn bind_slot(expr: &ast::Expr, names: &[String]) -> Option<usize> {
    let ast::Expr::Value(v) = expr else { return None };
    let ast::Value::Placeholder(name) = &v.value else { return None };
    let name = crate::expr::functions::normalized_bind_name(name);
    names.iter().position(|n| *n == name)
}

/// A relation's columns and their types, in order.
type ColumnsOf = Vec<(String, Option<DataType>)>;

fn table_column(columns: &ColumnsOf, name: &str) -> Option<DataType> {
    columns.iter().find(|(n, _)| n == name).and_then(|(_, t)| *t)
}

/// The columns of the table or view called `name`.
fn named_relation(session: &Session, name: &str) -> Option<ColumnsOf> {
    if let Some(table) = session.db.catalog.table(name) {
        return Some(table.columns.iter().map(|c: &ColumnDef| (c.name.clone(), Some(c.data_type))).collect());
    }
    if let Ok(Some((columns, rows))) = super::views::fixed_view(name, session) {
        // A fixed view's columns have the types of the values it holds now.
        let typed = |i: usize| rows.iter().find_map(|row| value_type(row.get(i)?));
        return Some(columns.into_iter().enumerate().map(|(i, c)| (c, typed(i))).collect());
    }
    let view = session.db.catalog.view(name)?;
    let types = match super::parse_one(&view.text) {
        Ok(ast::Statement::Query(query)) => query_types(session, &query),
        _ => None,
    };
    Some(
        view.columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), types.as_ref().filter(|t| t.len() == view.columns.len()).and_then(|t| t[i])))
            .collect(),
    )
}

/// The type a fixed view's column holding `value` is described with.
fn value_type(value: &Value) -> Option<DataType> {
    use crate::types::Datum;
    match value {
        Datum::Null => None,
        Datum::Int(_) | Datum::Num(_) => Some(NUMBER),
        Datum::Str(_) => Some(TEXT),
        Datum::Date(_) => Some(DataType::Date),
        Datum::Timestamp(_) => Some(DataType::Timestamp { precision: crate::types::DEFAULT_FRACTION_DIGITS }),
        Datum::YearMonth(_) => {
            Some(DataType::IntervalYearMonth { year_precision: crate::types::DEFAULT_LEADING_DIGITS })
        }
        Datum::DaySecond(_) => Some(DataType::IntervalDaySecond {
            day_precision: crate::types::DEFAULT_LEADING_DIGITS,
            second_precision: crate::types::DEFAULT_FRACTION_DIGITS,
        }),
    }
}

/// The relations a query block reads, by the name it calls them.
struct Scope {
    relations: Vec<(String, ColumnsOf)>,
}

impl Scope {
    fn of(session: &Session, select: &ast::Select) -> Scope {
        let mut relations = Vec::new();
        for from in &select.from {
            for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation)) {
                match factor {
                    ast::TableFactor::Table { name, alias, .. } => {
                        let table_name = function_name(name);
                        if let Some(columns) = named_relation(session, &table_name) {
                            let called = alias.as_ref().map_or(table_name, |a| ident_name(&a.name));
                            relations.push((called, columns));
                        }
                    }
                    ast::TableFactor::Derived { subquery, alias: Some(alias), .. } => {
                        let names = derived_names(subquery);
                        let types = query_types(session, subquery).unwrap_or_default();
                        if names.len() == types.len() {
                            relations.push((ident_name(&alias.name), names.into_iter().zip(types).collect()));
                        }
                    }
                    _ => {}
                }
            }
        }
        Scope { relations }
    }

    /// The type of a column reference `expr` (`c` or `t.c`).
    fn column(&self, expr: &ast::Expr) -> Option<DataType> {
        let (table, column) = match expr {
            ast::Expr::Identifier(id) => (None, ident_name(id)),
            ast::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                (Some(ident_name(&parts[0])), ident_name(&parts[1]))
            }
            _ => return None,
        };
        self.relations
            .iter()
            .filter(|(called, _)| table.as_ref().is_none_or(|t| t == called))
            .find_map(|(_, columns)| columns.iter().find(|(n, _)| *n == column))
            .and_then(|(_, t)| *t)
    }

    /// Every column of the relations, or of the one called `table`.
    fn all(&self, table: Option<&str>) -> Vec<Option<DataType>> {
        self.relations
            .iter()
            .filter(|(called, _)| table.is_none_or(|t| t == called))
            .flat_map(|(_, columns)| columns.iter().map(|(_, t)| *t))
            .collect()
    }
}

/// The names a derived table's columns go by (their aliases or column names); empty
/// when one is not a plain name.
fn derived_names(query: &ast::Query) -> Vec<String> {
    let ast::SetExpr::Select(select) = &*query.body else { return Vec::new() };
    let mut names = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => names.push(ident_name(alias)),
            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(id)) => names.push(ident_name(id)),
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(parts)) => {
                names.push(parts.last().map(ident_name).unwrap_or_default())
            }
            _ => return Vec::new(),
        }
    }
    names
}

/// The types of a query's result columns, by position; `None` when the shape of its
/// select list cannot be followed (a wildcard over a relation not described).
fn query_types(session: &Session, query: &ast::Query) -> Option<Vec<Option<DataType>>> {
    let mut body = &*query.body;
    // A set operation's columns are typed by its first branch.
    while let ast::SetExpr::SetOperation { left, .. } = body {
        body = left;
    }
    let select = match body {
        ast::SetExpr::Select(select) => select,
        ast::SetExpr::Query(inner) => return query_types(session, inner),
        _ => return None,
    };
    let scope = Scope::of(session, select);
    let mut types = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::Wildcard(_) => types.extend(scope.all(None)),
            ast::SelectItem::QualifiedWildcard(ast::SelectItemQualifiedWildcardKind::ObjectName(name), _) => {
                types.extend(scope.all(Some(&function_name(name))))
            }
            ast::SelectItem::UnnamedExpr(expr) | ast::SelectItem::ExprWithAlias { expr, .. } => {
                types.push(expr_type(session, &scope, expr))
            }
            _ => return None,
        }
    }
    Some(types)
}

/// The type `expr` yields in `scope`, where the text says.
fn expr_type(session: &Session, scope: &Scope, expr: &ast::Expr) -> Option<DataType> {
    use ast::BinaryOperator as Op;
    let of = |e: &ast::Expr| expr_type(session, scope, e);
    match expr {
        ast::Expr::Identifier(id) if matches!(ident_name(id).as_str(), "LEVEL" | "ROWNUM") => Some(NUMBER),
        ast::Expr::Identifier(id) if matches!(ident_name(id).as_str(), "SYSDATE") => Some(DataType::Date),
        ast::Expr::Identifier(id) if matches!(ident_name(id).as_str(), "SYSTIMESTAMP" | "LOCALTIMESTAMP") => {
            Some(DataType::Timestamp { precision: 6 })
        }
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => scope.column(expr),
        ast::Expr::Nested(e) => of(e),
        ast::Expr::Cast { data_type, .. } => super::data_types::data_type(data_type).ok(),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(..) => Some(NUMBER),
            ast::Value::SingleQuotedString(s) => Some(DataType::Varchar2 { max_bytes: s.len().max(1) as u32 }),
            _ => None,
        },
        ast::Expr::TypedString(typed) => super::data_types::data_type(&typed.data_type).ok(),
        ast::Expr::UnaryOp { expr, .. } => of(expr).filter(|t| !is_datetime(t)).or(Some(NUMBER)),
        ast::Expr::BinaryOp { op: Op::StringConcat, .. } => Some(TEXT),
        ast::Expr::BinaryOp { left, op: op @ (Op::Plus | Op::Minus | Op::Multiply | Op::Divide), right } => {
            match (of(left), op, of(right)) {
                (Some(l), Op::Minus, Some(r)) if is_datetime(&l) && is_datetime(&r) => {
                    if l == DataType::Date && r == DataType::Date { Some(NUMBER) } else { None }
                }
                (Some(l), Op::Plus | Op::Minus, _) if is_datetime(&l) => Some(l),
                (_, Op::Plus, Some(r)) if is_datetime(&r) => Some(r),
                (Some(DataType::IntervalDaySecond { .. } | DataType::IntervalYearMonth { .. }), ..) => None,
                _ => Some(NUMBER),
            }
        }
        ast::Expr::Case { operand: _, conditions, else_result, .. } => {
            conditions.iter().find_map(|c| of(&c.result)).or_else(|| else_result.as_deref().and_then(of))
        }
        ast::Expr::Extract { .. } => Some(NUMBER),
        ast::Expr::Subquery(query) => query_types(session, query).and_then(|t| t.into_iter().next().flatten()),
        ast::Expr::Function(function) => function_type(&function_name(&function.name), &arguments(function), of),
        ast::Expr::Substring { .. } | ast::Expr::Trim { .. } => Some(TEXT),
        ast::Expr::Ceil { .. } | ast::Expr::Floor { .. } | ast::Expr::Position { .. } => Some(NUMBER),
        _ => None,
    }
}

fn is_datetime(t: &DataType) -> bool {
    matches!(t, DataType::Date | DataType::Timestamp { .. })
}

/// A function call's plain arguments.
fn arguments(function: &ast::Function) -> Vec<&ast::Expr> {
    let ast::FunctionArguments::List(list) = &function.args else { return Vec::new() };
    list.args
        .iter()
        .filter_map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
            ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(e), .. } => Some(e),
            _ => None,
        })
        .collect()
}

/// The type function `name` yields for `args` (typed by `of`).
fn function_type(name: &str, args: &[&ast::Expr], of: impl Fn(&ast::Expr) -> Option<DataType>) -> Option<DataType> {
    let first = || args.first().and_then(|a| of(a));
    match name {
        "COUNT" | "SUM" | "AVG" | "STDDEV" | "STDDEV_POP" | "STDDEV_SAMP" | "VARIANCE" | "VAR_POP" | "VAR_SAMP"
        | "MEDIAN" | "ABS" | "MOD" | "REMAINDER" | "LENGTH" | "LENGTHB" | "INSTR" | "TO_NUMBER" | "FLOOR" | "CEIL"
        | "SIGN" | "POWER" | "SQRT" | "EXP" | "LN" | "LOG" | "ROW_NUMBER" | "RANK" | "DENSE_RANK" | "NTILE"
        | "PERCENT_RANK" | "CUME_DIST" | "ORA_HASH" | "ASCII" | "MONTHS_BETWEEN" | "BITAND" | "CORR" | "COVAR_POP"
        | "COVAR_SAMP" | "RATIO_TO_REPORT" | "WIDTH_BUCKET" | "NEXTVAL" | "CURRVAL" => Some(NUMBER),
        "ROUND" | "TRUNC" => match first() {
            Some(t) if is_datetime(&t) => Some(DataType::Date),
            _ => Some(NUMBER),
        },
        "MIN" | "MAX" | "FIRST_VALUE" | "LAST_VALUE" | "LAG" | "LEAD" | "NTH_VALUE" | "ANY_VALUE" => first(),
        "NVL" | "COALESCE" | "GREATEST" | "LEAST" | "NULLIF" => args.iter().find_map(|a| of(a)),
        "NVL2" => args.iter().skip(1).find_map(|a| of(a)),
        "DECODE" => args
            .iter()
            .skip(2)
            .step_by(2)
            .find_map(|a| of(a))
            .or_else(|| args.len().is_multiple_of(2).then(|| args.last().and_then(|a| of(a))).flatten()),
        "UPPER" | "LOWER" | "INITCAP" | "SUBSTR" | "SUBSTRB" | "TRIM" | "LTRIM" | "RTRIM" | "LPAD" | "RPAD"
        | "REPLACE" | "TRANSLATE" | "TO_CHAR" | "CONCAT" | "LISTAGG" | "CHR" | "REVERSE" | "DUMP" | "RAWTOHEX"
        | "STANDARD_HASH" | "SYS_GUID" | "USER" | "SYS_CONTEXT" | "REGEXP_SUBSTR" | "REGEXP_REPLACE" => Some(TEXT),
        "TO_DATE" | "ADD_MONTHS" | "LAST_DAY" | "NEXT_DAY" | "SYSDATE" | "CURRENT_DATE" => Some(DataType::Date),
        "TO_TIMESTAMP" | "SYSTIMESTAMP" | "LOCALTIMESTAMP" | "CURRENT_TIMESTAMP" => {
            Some(DataType::Timestamp { precision: 6 })
        }
        "NUMTODSINTERVAL" | "TO_DSINTERVAL" => {
            Some(DataType::IntervalDaySecond { day_precision: 9, second_precision: 6 })
        }
        "NUMTOYMINTERVAL" | "TO_YMINTERVAL" => Some(DataType::IntervalYearMonth { year_precision: 9 }),
        _ => None,
    }
}

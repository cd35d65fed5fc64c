//! CREATE TABLE ... AS SELECT: the new table's columns, named and typed from the query's
//! select list, as Oracle derives them.
//!
//! A select item that is a column of a table in the FROM clause (`c`, `t.c`, `*`,
//! `t.*`) gives its name, type and NOT NULL; `CAST(e AS type)` its type; a number
//! literal NUMBER, a string literal VARCHAR2 of its length; the pseudocolumns LEVEL and
//! ROWNUM NUMBER. An alias names the column. Any other expression needs an alias and a
//! CAST to say its type: lioscope does not infer the types of expressions, and says so
//! rather than guess.

use super::bind::{function_name, ident_name};
use crate::catalog::{ColumnDef, TableDef};
use crate::error::{Error, Result};
use crate::instance::Session;
use crate::types::DataType;
use sqlparser::ast;
use std::sync::Arc;

/// The columns of the table `query` creates.
pub fn columns_of(session: &Session, query: &ast::Query) -> Result<Vec<ColumnDef>> {
    let ast::SetExpr::Select(select) = &*query.body else {
        return Err(Error::unsupported("CREATE TABLE ... AS a query that is not a single SELECT"));
    };
    // The columns are typed from the tables the query reads: a view, an inline view or
    // a WITH query has no types to give them.
    let typeless = || Error::unsupported("CREATE TABLE ... AS a query reading a view, an inline view or a WITH query");
    if query.with.is_some() {
        return Err(typeless());
    }
    let flat = super::plan::unparenthesized(select)?;
    let select = flat.as_ref().unwrap_or(select);
    let mut tables: Vec<(String, Arc<TableDef>)> = Vec::new();
    for from in &select.from {
        for relation in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation)) {
            if matches!(relation, ast::TableFactor::Derived { .. }) {
                return Err(typeless());
            }
            if let ast::TableFactor::Table { name, alias, .. } = relation {
                let table_name = function_name(name);
                if session.db.catalog.view(&table_name).is_some() {
                    return Err(typeless());
                }
                if let Some(table) = session.db.catalog.table(&table_name) {
                    let called = alias.as_ref().map_or(table_name, |a| ident_name(&a.name));
                    tables.push((called, table));
                }
            }
        }
    }
    let mut columns: Vec<ColumnDef> = Vec::new();
    for item in &select.projection {
        let derived = match item {
            ast::SelectItem::Wildcard(_) => tables.iter().flat_map(|(_, t)| t.columns.iter().cloned()).collect(),
            ast::SelectItem::QualifiedWildcard(ast::SelectItemQualifiedWildcardKind::ObjectName(name), _) => {
                let called = function_name(name);
                let (_, table) = tables
                    .iter()
                    .find(|(n, _)| *n == called)
                    .ok_or_else(|| Error::UnknownObject { kind: "table", name: called.clone() })?;
                table.columns.clone()
            }
            ast::SelectItem::UnnamedExpr(expr) => vec![column_of(&tables, expr, None)?],
            ast::SelectItem::ExprWithAlias { expr, alias } => vec![column_of(&tables, expr, Some(ident_name(alias)))?],
            other => return Err(Error::unsupported(format!("select item {other} in CREATE TABLE ... AS SELECT"))),
        };
        for column in derived {
            if columns.iter().any(|c| c.name == column.name) {
                return Err(Error::ObjectExists { kind: "column", name: column.name });
            }
            columns.push(column);
        }
    }
    Ok(columns)
}

/// The column a select item `expr` (called `alias`, when it has one) makes.
fn column_of(tables: &[(String, Arc<TableDef>)], expr: &ast::Expr, alias: Option<String>) -> Result<ColumnDef> {
    let source = match expr {
        ast::Expr::Identifier(id) => find(tables, None, &ident_name(id)),
        ast::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            find(tables, Some(&ident_name(&parts[0])), &ident_name(&parts[1]))
        }
        _ => None,
    };
    if let Some(column) = source {
        return Ok(ColumnDef { name: alias.unwrap_or(column.name), ..column });
    }
    let Some(name) = alias.or_else(|| match expr {
        ast::Expr::Identifier(id) if matches!(ident_name(id).as_str(), "LEVEL" | "ROWNUM") => Some(ident_name(id)),
        _ => None,
    }) else {
        return Err(Error::value(
            expr.to_string(),
            "name this expression with a column alias in CREATE TABLE ... AS SELECT",
        ));
    };
    let data_type = type_of(expr).ok_or_else(|| {
        Error::value(
            &name,
            format!("give `{expr}` a type with CAST(... AS type): CREATE TABLE ... AS SELECT types columns, literals and CASTs"),
        )
    })?;
    Ok(ColumnDef { name, data_type, nullable: true })
}

/// The column `column` of the table called `table` (or of any table in the FROM clause).
fn find(tables: &[(String, Arc<TableDef>)], table: Option<&str>, column: &str) -> Option<ColumnDef> {
    tables
        .iter()
        .filter(|(called, _)| table.is_none_or(|t| t == called))
        .find_map(|(_, t)| t.columns.iter().find(|c| c.name == column).cloned())
}

/// The type of an expression that is not a column: a CAST's, a literal's, a pseudocolumn's.
fn type_of(expr: &ast::Expr) -> Option<DataType> {
    match expr {
        ast::Expr::Cast { data_type, .. } => super::data_types::data_type(data_type).ok(),
        ast::Expr::Nested(e) => type_of(e),
        ast::Expr::Identifier(id) if matches!(ident_name(id).as_str(), "LEVEL" | "ROWNUM") => {
            Some(DataType::Number { precision: None, scale: None })
        }
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(..) => Some(DataType::Number { precision: None, scale: None }),
            ast::Value::SingleQuotedString(s) => Some(DataType::Varchar2 { max_bytes: s.len().max(1) as u32 }),
            _ => None,
        },
        _ => None,
    }
}

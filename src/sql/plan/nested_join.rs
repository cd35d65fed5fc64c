//! Parenthesized joins in FROM, spelled out as the flat list of items and joins the
//! planner reads:
//!
//! ```text
//!   FROM (a JOIN b ON x) LEFT JOIN c ON y      FROM a JOIN b ON x LEFT JOIN c ON y
//!   FROM a JOIN (b JOIN c ON x) ON y      ─►   FROM a CROSS JOIN b JOIN c ON (x) AND (y)
//!   FROM (a CROSS JOIN b)                      FROM a CROSS JOIN b
//! ```
//!
//! Joins associate to the left, so a parenthesized join that leads its FROM item is the
//! same rows as its items and joins written first. One on the right of a join is the
//! same rows flattened only where that join and every join inside are inner joins: its
//! items are then joined to what comes before, and the ON condition around them is
//! checked with the last one's. Its inner ON conditions then see the items before the
//! parentheses too, so each name they read must be qualified by an item inside (a bare
//! name could mean another item's column, or the enclosing query's). Anything else (an
//! outer join around or inside it, a USING or NATURAL join around it, a bare name or a
//! subquery in an inner ON, an alias on it) is refused with the reason.

use super::*;

/// `select` with its FROM clause's parenthesized joins spelled out, or `None` where it
/// holds none (the common case, with nothing copied).
pub(crate) fn unparenthesized(select: &ast::Select) -> Result<Option<ast::Select>> {
    let nested = |f: &ast::TableFactor| matches!(f, ast::TableFactor::NestedJoin { .. });
    if !select.from.iter().any(|t| nested(&t.relation) || t.joins.iter().any(|j| nested(&j.relation))) {
        return Ok(None);
    }
    let mut flat = select.clone();
    flat.from = select.from.iter().map(flatten).collect::<Result<_>>()?;
    Ok(Some(flat))
}

/// One FROM item with its parenthesized joins spelled out.
fn flatten(item: &ast::TableWithJoins) -> Result<ast::TableWithJoins> {
    let mut out = match &item.relation {
        ast::TableFactor::NestedJoin { table_with_joins, alias } => {
            refuse_alias(&item.relation, alias.as_ref())?;
            flatten(table_with_joins)?
        }
        other => ast::TableWithJoins { relation: other.clone(), joins: Vec::new() },
    };
    for join in &item.joins {
        let ast::TableFactor::NestedJoin { table_with_joins, alias } = &join.relation else {
            out.joins.push(join.clone());
            continue;
        };
        refuse_alias(&join.relation, alias.as_ref())?;
        let inner = flatten(table_with_joins)?;
        let around = inner_condition(&join.join_operator)
            .ok_or_else(|| refused("a parenthesized join on the right of an outer, USING or NATURAL join", join))?;
        if inner.joins.iter().any(|j| inner_condition(&j.join_operator).is_none()) {
            return Err(refused(
                "an outer, USING or NATURAL join inside a parenthesized join on the right of a join",
                join,
            ));
        }
        // Spelled out, the inner ON conditions see the items before the parentheses too:
        // each of their names must be qualified by an item inside, to mean what it did.
        let labels: Option<Vec<String>> =
            std::iter::once(&inner.relation).chain(inner.joins.iter().map(|j| &j.relation)).map(label_of).collect();
        let own_names = |x: &ast::Expr| labels.as_ref().is_some_and(|labels| names_only_items(x, labels));
        if !inner.joins.iter().all(|j| inner_condition(&j.join_operator).flatten().is_none_or(own_names)) {
            return Err(refused(
                "a parenthesized join on the right of a join whose ON conditions name a column without the \
                 alias of a table inside the parentheses",
                join,
            ));
        }
        let mut first = ast::Join {
            relation: inner.relation,
            global: false,
            join_operator: ast::JoinOperator::CrossJoin(ast::JoinConstraint::None),
        };
        let mut rest = inner.joins;
        // The ON condition around the parenthesized join is checked where its last item
        // joins, with that join's own condition.
        let last = rest.last_mut().unwrap_or(&mut first);
        if let Some(y) = around {
            let on = match inner_condition(&last.join_operator).flatten() {
                Some(x) => ast::Expr::BinaryOp {
                    left: Box::new(ast::Expr::Nested(Box::new(x.clone()))),
                    op: ast::BinaryOperator::And,
                    right: Box::new(ast::Expr::Nested(Box::new(y.clone()))),
                },
                None => y.clone(),
            };
            last.join_operator = ast::JoinOperator::Inner(ast::JoinConstraint::On(on));
        }
        out.joins.push(first);
        out.joins.append(&mut rest);
    }
    Ok(out)
}

/// An inner join's ON condition (`Some(None)` for a cross join or a join without one);
/// `None` for an outer, USING or NATURAL join.
fn inner_condition(op: &ast::JoinOperator) -> Option<Option<&ast::Expr>> {
    use ast::JoinOperator as J;
    match op {
        J::Join(c) | J::Inner(c) | J::CrossJoin(c) => match c {
            ast::JoinConstraint::On(e) => Some(Some(e)),
            ast::JoinConstraint::None => Some(None),
            ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural => None,
        },
        _ => None,
    }
}

/// The name a FROM item is qualified by: its alias, else its table's name.
fn label_of(factor: &ast::TableFactor) -> Option<String> {
    match factor {
        ast::TableFactor::Table { alias: Some(a), .. } | ast::TableFactor::Derived { alias: Some(a), .. } => {
            Some(ident_name(&a.name))
        }
        ast::TableFactor::Table { name, alias: None, .. } => Some(crate::sql::bind::function_name(name)),
        _ => None,
    }
}

/// Whether every name `x` reads is qualified by one of `labels`, and it holds no subquery.
fn names_only_items(x: &ast::Expr, labels: &[String]) -> bool {
    ast::visit_expressions(x, |e| {
        let own = match e {
            ast::Expr::Identifier(_)
            | ast::Expr::Subquery(_)
            | ast::Expr::Exists { .. }
            | ast::Expr::InSubquery { .. } => false,
            ast::Expr::CompoundIdentifier(parts) => {
                matches!(parts.as_slice(), [q, _] if labels.contains(&ident_name(q)))
            }
            _ => true,
        };
        if own { std::ops::ControlFlow::Continue(()) } else { std::ops::ControlFlow::Break(()) }
    })
    .is_continue()
}

fn refuse_alias(factor: &ast::TableFactor, alias: Option<&ast::TableAlias>) -> Result<()> {
    match alias {
        Some(_) => Err(unsupported("an alias on a parenthesized join (write it as a subquery)".into(), factor)),
        None => Ok(()),
    }
}

fn refused(what: &str, join: &ast::Join) -> Error {
    unsupported(what.into(), &join.relation)
}

//! EXPLAIN PLAN of INSERT, UPDATE and DELETE: the plan each statement would run, as
//! Oracle's DBMS_XPLAN shows it, without running it.
//!
//! ```text
//!   INSERT STATEMENT                         UPDATE STATEMENT
//!     LOAD TABLE CONVENTIONAL  T               UPDATE                       T
//!       (the query's lines)                      TABLE ACCESS BY INDEX ROWID  T
//!                                                  INDEX RANGE SCAN           T_K
//!                                                (the subqueries' lines)
//! ```
//!
//! INSERT loads through the buffer cache (`LOAD TABLE CONVENTIONAL`), or above the
//! high-water mark (`LOAD AS SELECT`) for `APPEND` with a query; its query's lines
//! are the query's plan. UPDATE and DELETE find their rows by the access path the
//! optimizer chooses for them, the one the statement takes (module `modify`): a full
//! scan with the WHERE clause as its filter, or an index unique or range scan with
//! the conjuncts bounding its key range as `access(...)` and the others as the table
//! access's `filter(...)`; `ROWNUM < n` is a COUNT STOPKEY. Their subqueries' lines
//! follow under the UPDATE or DELETE line. MERGE is refused.

use super::bind::Binder;
use super::modify;
use super::optimizer::{self, AccessPath};
use super::plan::{Estimate, Operation, PlanNode, PlanTree, Predicate, RowsRule};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::index::IndexScanKind;
use crate::instance::Session;
use sqlparser::ast::{self, Statement};

/// The plan of INSERT, UPDATE or DELETE `statement` (its values from `f`), and its notes.
pub(super) fn plan_of(
    session: &Session,
    statement: &Statement,
    f: &FunctionContext,
) -> Result<(PlanTree, Vec<String>)> {
    match statement {
        Statement::Insert(insert) => insert_plan(session, insert, f),
        Statement::Update(update) => {
            let hints = modify::hints_of(&update.optimizer_hints);
            let what = Change { relation: modify::update_relation(update)?, selection: update.selection.as_ref() };
            change_plan(session, what, Some(&update.assignments), &hints, f)
        }
        Statement::Delete(delete) => {
            let hints = modify::hints_of(&delete.optimizer_hints);
            let what = Change { relation: modify::delete_relation(delete)?, selection: delete.selection.as_ref() };
            change_plan(session, what, None, &hints, f)
        }
        _ => Err(Error::unsupported("EXPLAIN PLAN of a statement other than a query, INSERT, UPDATE or DELETE")),
    }
}

/// INSERT's plan: the load line over the query's lines (none for VALUES).
fn insert_plan(session: &Session, insert: &ast::Insert, f: &FunctionContext) -> Result<(PlanTree, Vec<String>)> {
    let name = super::dml::insert_target(insert)?;
    let Some(source) = &insert.source else { return Err(Error::unsupported("INSERT without VALUES or SELECT")) };
    let table = super::dml::checked_insert_table(session, name, &insert.columns, &[])?;
    let load = match super::dml::load_path(&table, insert) {
        crate::access::load::LoadPath::Conventional => Operation::LoadTableConventional,
        _ => Operation::LoadAsSelect,
    };
    let mut node = PlanNode::new(load, &table.name);
    let (mut tree, notes) = match &*source.body {
        ast::SetExpr::Values(values) => {
            let widths: Vec<usize> = values.rows.iter().map(|r| r.content.len()).collect();
            super::dml::checked_insert_table(session, name, &insert.columns, &widths)?;
            let rows = values.rows.len() as f64;
            node.rows_rule = RowsRule::Source(rows);
            node.estimate = Some(Estimate { rows, cost: 0.0 });
            (PlanTree::default(), Vec::new())
        }
        _ => {
            let planned = super::plan::plan_statement_query(source, session, f)?;
            super::dml::checked_insert_table(session, name, &insert.columns, &[planned.columns.len()])?;
            let mut tree = planned.tree;
            if let Some(statement) = tree.root() {
                tree.splice_out(statement);
            }
            (tree, planned.notes)
        }
    };
    tree.push_above(node);
    tree.push_above(PlanNode::new(Operation::InsertStatement, ""));
    tree.estimate();
    Ok((tree, notes))
}

/// The table an UPDATE or DELETE changes, and its WHERE clause.
struct Change<'a> {
    relation: &'a ast::TableFactor,
    selection: Option<&'a ast::Expr>,
}

/// UPDATE's (with `sets`) or DELETE's plan: the statement's line over the line finding
/// the rows and the subqueries' lines.
fn change_plan(
    session: &Session,
    what: Change<'_>,
    sets: Option<&[ast::Assignment]>,
    hints: &optimizer::hints::Hints,
    f: &FunctionContext,
) -> Result<(PlanTree, Vec<String>)> {
    let privilege = match sets {
        Some(_) => crate::catalog::ObjectPrivilege::Update,
        None => crate::catalog::ObjectPrivilege::Delete,
    };
    let (table, scope) = modify::target(session, what.relation, privilege)?;
    let subqueries = super::plan::StatementSubqueries::new(session, f);
    let binder = Binder { scope: &scope, f, grouping: None, subqueries: Some(subqueries.planner()) };
    let (limit, filter) = modify::bind_where(&binder, what.selection)?;
    if let Some(sets) = sets {
        modify::bind_assignments(&binder, &table, &scope.qualifiers, sets)?;
    }
    // The statement finds its rows by the conjuncts without correlated subqueries (those
    // run on the rows found), as `modify` does.
    let correlated = subqueries.correlated_slots();
    let lines = subqueries.into_lines();
    let holds_correlated = |e: &Expr| {
        let mut holds = false;
        e.visit_nodes(&mut |x| holds |= matches!(x, Expr::Subquery { slot, .. } if correlated.contains(slot)));
        holds
    };
    let (plain, held): (Vec<Expr>, Vec<Expr>) = filter.into_iter().partition(|e| !holds_correlated(e));
    let mut conjuncts = modify::filter_conjuncts(&plain, &f.binds);
    let finding = conjuncts.len();
    conjuncts.extend(modify::filter_conjuncts(&held, &f.binds));
    let ctx = session.access_context();
    let indexes = session.db.catalog.indexes_of(table.object_id);
    let mut decision = modify::access_decision(session, &ctx, &table, &indexes, hints, &conjuncts[..finding])?;
    if let AccessPath::Index(path) = &decision.path
        && !matches!(path.kind, IndexScanKind::Unique | IndexScanKind::Range)
    {
        // UPDATE and DELETE take no other index path: they scan the table.
        let note = format!(
            "the optimizer's cheapest path, {} of {}, is not one UPDATE and DELETE take: the table is scanned",
            path.kind.operation(false),
            path.index.name
        );
        decision = modify::access_decision(session, &ctx, &table, &[], hints, &conjuncts[..finding])?;
        decision.notes.push(note);
    }
    let text = |at: &[usize]| -> Option<String> {
        let shown: Vec<String> = at.iter().map(|&i| conjuncts[i].expr.display(&scope.names).to_string()).collect();
        (!shown.is_empty()).then(|| shown.join(" AND "))
    };
    let all: Vec<usize> = (0..conjuncts.len()).collect();
    let estimate = Estimate { rows: decision.rows, cost: decision.path.cost() };
    let mut tree = PlanTree::default();
    match &decision.path {
        AccessPath::Index(path) if matches!(path.kind, IndexScanKind::Unique | IndexScanKind::Range) => {
            let mut index = PlanNode::new(Operation::Index { kind: path.kind, descending: false }, &path.index.name);
            index.predicates.extend(text(&path.bounds).map(Predicate::Access));
            index.rows_rule = RowsRule::Source(path.entries);
            index.estimate = Some(Estimate { rows: path.entries, cost: path.index_cost });
            tree.push_above(index);
            let residual: Vec<usize> = all.iter().copied().filter(|i| !path.access.contains(i)).collect();
            let mut by_rowid = PlanNode::new(Operation::TableAccessByIndexRowid, &table.name);
            by_rowid.predicates.extend(text(&residual).map(Predicate::Filter));
            by_rowid.rows_rule = RowsRule::Source(decision.rows);
            by_rowid.estimate = Some(estimate);
            tree.push_above(by_rowid);
        }
        _ => {
            let mut full = PlanNode::new(Operation::TableAccessFull, &table.name);
            full.predicates.extend(text(&all).map(Predicate::Filter));
            full.rows_rule = RowsRule::Source(decision.rows);
            full.estimate = Some(estimate);
            tree.push_above(full);
        }
    }
    if let Some(n) = limit {
        let mut stopkey = PlanNode::new(Operation::CountStopkey, "");
        stopkey.predicates.push(Predicate::Filter(format!("ROWNUM<={n}")));
        stopkey.rows_rule = RowsRule::AtMost(n);
        tree.push_above(stopkey);
    }
    let (statement, change) = match sets {
        Some(_) => (Operation::UpdateStatement, Operation::Update),
        None => (Operation::DeleteStatement, Operation::Delete),
    };
    let top = tree.push_above(PlanNode::new(change, &table.name));
    for line in lines {
        let below = tree.adopt(line);
        tree.node_mut(top).children.extend(below);
    }
    tree.push_above(PlanNode::new(statement, ""));
    tree.estimate();
    Ok((tree, decision.notes))
}

//! UPDATE and DELETE: binding the statement, then changing rows through
//! [`crate::access::change`] inside the session's transaction.
//!
//! `WHERE` may hold `ROWNUM < n` / `ROWNUM <= n` conjuncts (the row limit, as the source
//! experiment's `WHERE ROWNUM < 1000000`); the other conjuncts filter. Each new value is
//! computed from the current version of its row and coerced to its column's type; a
//! value that does not fit fails the whole statement, which the caller rolls back. SET
//! may read NEXTVAL (once a changed row), never assign a GENERATED ALWAYS identity
//! column (ORA-32796).
//!
//! Subqueries: those that read nothing of the changed row run once, before any row
//! changes. A correlated one runs for each row's values (its answers cached by them for
//! the statement), WHERE's before the row is judged and SET's once it qualifies; never
//! while a block is held: a row whose answer is missing is [`Verdict::NotReady`], and the
//! change protocol lets its block go and calls [`RowChanges::prepare`] to run it. All of
//! them read the statement's snapshot; when a correlated one reads the table changed, the
//! statement finds every row first ([`qualifying_rows`]) and changes them after, so that
//! no subquery sees a row the statement changed (a consistent read shows a transaction
//! its own changes, the statement's included).
//!
//! MERGE changes its target here too ([`change_with_partner`]): its source, a
//! [`RowPartner`], judges each row in place of a WHERE clause, and the assignments read
//! the row beside the source row it met (the source's columns after the table's).
//!
//! Access path: the optimizer chooses between a full scan of the table and an index
//! unique or range scan, as for a query (same statistics, cost model and hints: `FULL`,
//! `INDEX`, `NO_INDEX`). An index path first gathers the rowids of the entries in its
//! key range as of the statement's snapshot, then changes those rows in that order;
//! every row is still checked against the whole WHERE clause, as of the snapshot and
//! again in current mode. Gathering them all first means a row whose key the statement
//! moves within the range is not met twice. A cursor keeps the statement's binding and
//! access path between executions ([`BoundChange`], [`KeptAccess`]), as a query keeps its
//! plan: only the index range's ends are computed again from each execution's binds.
//!
//! Indexes: the statement reads the table's indexes (for an UPDATE, only those on
//! assigned columns, unless an update may move rows: `TableDef::updates_move_rows`)
//! under the table's visibility lock, which DDL waits for, and holds it until
//! the last entry is changed; each edit notes the row's old and new keys, and
//! [`super::index_maintenance`] applies them after the rows are changed.
//!
//! Constraints: a new value NULL in a NOT NULL column is refused (ORA-01407), and each
//! updated row is checked against the table's enabled CHECK constraints, read under
//! the same lock (`super::row_checks::RowChecks`); keys through their unique indexes.
//! Foreign keys (`super::foreign_keys`), once the rows and their index entries are
//! changed: an updated row's new foreign keys are looked for in their parents, and the
//! parent keys the statement deleted or changed among the children. The children an
//! ON DELETE CASCADE or SET NULL key reaches are deleted or updated next by the same
//! code, in the same statement, one child table at a time from a work list (no
//! recursion, however deep the cascade goes).

use super::bind::{Binder, Scope, ident_name, position_of};
use super::dml::qualify;
use super::foreign_keys::{ChildAction, ChildKeys, GoneKey, KeyMatch, ParentRules};
use super::index_maintenance::{KeyChange, TableIndexes};
use super::optimizer::{self, IndexScanKind, hints::Hints};
use super::plan::{rownum_limit, split_and};
use super::row_checks::{RowChecks, column_path};
use crate::access::AccessContext;
use crate::access::RowAccess;
use crate::access::change::{RowChanges, RowEdit, RowsFrom, Verdict, change_rows, qualifying_rows};
use crate::access::row_view::{Beside, BlockRow};
use crate::catalog::{IndexDef, TableDef};
use crate::error::{Error, Result};
use crate::exec::ExecContext;
use crate::exec::query_block::CorrelatedPlan;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::expr::predicates;
use crate::index::RowId;
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::types::{Datum, Value};
use sqlparser::ast;
use std::sync::Arc;

/// The table a statement changes, and its scope for binding. The acting user must hold `privilege` on it.
pub(super) fn target(
    session: &Session,
    relation: &ast::TableFactor,
    privilege: crate::catalog::ObjectPrivilege,
) -> Result<(Arc<TableDef>, Scope)> {
    let ast::TableFactor::Table { name, alias, args: None, .. } = relation else {
        return Err(Error::Unsupported { construct: format!("changing {relation}"), position: position_of(relation) });
    };
    let table_name = super::bind::function_name(name);
    let table = session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
        kind: "table",
        name: table_name.clone(),
        position: position_of(name),
    })?;
    super::privileges::require_on(session, &table.name, privilege)?;
    let mut qualifiers = vec![table.name.clone()];
    if let Some(a) = alias {
        qualifiers.push(ident_name(&a.name));
    }
    let names = table.columns.iter().map(|c| c.name.clone()).collect();
    Ok((table, Scope { names, qualifiers, ..Default::default() }))
}

/// WHERE split into its row limit and its filter.
pub(super) fn bind_where(binder: &Binder<'_>, selection: Option<&ast::Expr>) -> Result<(Option<u64>, Vec<Expr>)> {
    let mut conjuncts = Vec::new();
    if let Some(e) = selection {
        split_and(e, &mut conjuncts);
    }
    let mut limit: Option<u64> = None;
    let mut filter = Vec::new();
    for c in conjuncts {
        match rownum_limit(c, binder.f)? {
            Some(n) => limit = Some(limit.map_or(n, |l| l.min(n))),
            None => filter.push(binder.bind(c)?),
        }
    }
    Ok((limit, filter))
}

/// The statement's side of changing rows.
struct Changes<'s> {
    table: &'s TableDef,
    /// WHERE's conjuncts; shared with a kept binding, which later executions reuse.
    filter: Arc<[Expr]>,
    /// (column, new value) for UPDATE; empty for DELETE.
    assignments: Arc<[(usize, Expr)]>,
    /// The sequences whose NEXTVAL the assignments read (each changed row takes their
    /// next values).
    nextvals: Vec<std::sync::Arc<str>>,
    f: FunctionContext,
    /// WHERE's conjuncts that hold a correlated subquery: checked after `filter`'s, once
    /// their subqueries are answered.
    correlated_filter: Vec<Expr>,
    /// The correlated subqueries of WHERE and SET, each with whether WHERE reads it.
    subqueries: Vec<(CorrelatedPlan, bool)>,
    /// Where they run: the statement's snapshot (set by [`run`]).
    runner: Option<ExecContext<'s>>,
    /// The SCN the statement reads as of (its source's and subqueries' too), taken when
    /// it began; `None`: as of when the rows are changed (a cascade's current mode).
    snapshot: Option<u64>,
    /// The runs the row at hand waits for: a subquery's place in `subqueries`, and the
    /// row's values it reads.
    wanted: Vec<(usize, Vec<Value>)>,
    /// MERGE's source: each row is judged, and updated beside the source row it meets
    /// (the assignments read both, the source's columns after the table's).
    merge: Option<&'s mut dyn RowPartner>,
    /// The table's indexes, if it has any.
    indexes: Option<TableIndexes>,
    /// The table's enabled CHECK constraints (UPDATE only), if it has any.
    checks: Option<RowChecks>,
    /// Each index's key before and after the edit last decided.
    pending: Vec<KeyChange>,
    /// The key changes of the rows changed so far.
    key_changes: Vec<(RowId, Vec<KeyChange>)>,
    /// Only rows with this key (the children of a cascading delete or SET NULL).
    key_match: Option<KeyMatch>,
    /// The table's enabled foreign keys on assigned columns (UPDATE only), if any.
    child_keys: Option<ChildKeys>,
    /// The new foreign keys of the edit last decided, and of the rows changed so far.
    pending_child: Vec<Option<Vec<u8>>>,
    new_child_keys: Vec<Vec<Option<Vec<u8>>>>,
    /// The enabled foreign keys that refer to the table's keys (on assigned columns, for
    /// an UPDATE), if any.
    parent_rules: Option<ParentRules>,
    /// The parent keys the edit last decided removes, and those the changed rows removed.
    pending_gone: Vec<GoneKey>,
    gone: Vec<GoneKey>,
}

impl<'s> Changes<'s> {
    /// The table's indexes are read by [`run`], under the lock that keeps DDL out.
    fn new(
        table: &'s TableDef,
        filter: Arc<[Expr]>,
        assignments: Arc<[(usize, Expr)]>,
        f: FunctionContext,
    ) -> Changes<'s> {
        let nextvals = crate::expr::functions::nextval_sequences(assignments.iter().map(|(_, e)| e));
        Changes {
            table,
            filter,
            assignments,
            nextvals,
            f,
            correlated_filter: Vec::new(),
            subqueries: Vec::new(),
            runner: None,
            snapshot: None,
            wanted: Vec::new(),
            merge: None,
            indexes: None,
            checks: None,
            pending: Vec::new(),
            key_changes: Vec::new(),
            key_match: None,
            child_keys: None,
            pending_child: Vec::new(),
            new_child_keys: Vec::new(),
            parent_rules: None,
            pending_gone: Vec::new(),
            gone: Vec::new(),
        }
    }
}

impl<'s> Changes<'s> {
    /// The changes of an UPDATE (or, with no `assignments`, a DELETE) of `table` that
    /// reads as of SCN `scn`, with its subqueries (`plans`, planned as its expressions
    /// were bound): those that read nothing of the rows run now.
    fn of_statement(
        session: &Session,
        table: &'s TableDef,
        filter: Arc<[Expr]>,
        assignments: Arc<[(usize, Expr)]>,
        functions: FunctionContext,
        plans: (Vec<crate::exec::query_block::InitPlan>, Vec<CorrelatedPlan>),
        scn: u64,
    ) -> Result<Changes<'s>> {
        let (init, correlated) = plans;
        let functions = with_subqueries_run(session, functions, &init, scn)?;
        let mut changes = Changes::new(table, filter, assignments, functions).with_subqueries(correlated);
        changes.snapshot = Some(scn);
        Ok(changes)
    }

    /// Takes the statement's correlated subqueries `plans`: those the filter reads are
    /// answered before it is evaluated, the others (SET's) once a row qualifies.
    fn with_subqueries(mut self, plans: Vec<CorrelatedPlan>) -> Changes<'s> {
        if plans.is_empty() {
            return self;
        }
        let correlated: std::collections::HashSet<usize> = plans.iter().map(|p| p.slot).collect();
        let mut read_by_where = std::collections::HashSet::new();
        let (mut plain, mut held) = (Vec::new(), Vec::new());
        for c in self.filter.iter().cloned() {
            let mut holds = false;
            c.visit_nodes(&mut |e| {
                if let Expr::Subquery { slot, .. } = e
                    && correlated.contains(slot)
                {
                    read_by_where.insert(*slot);
                    holds = true;
                }
            });
            if holds { held.push(c) } else { plain.push(c) }
        }
        // The plain conjuncts first: a row they leave out runs no subquery.
        self.filter = plain.into();
        self.correlated_filter = held;
        self.subqueries = plans
            .into_iter()
            .map(|p| {
                let w = read_by_where.contains(&p.slot);
                (p, w)
            })
            .collect();
        self
    }

    /// The edit deleting `row`: its index entries and the parent keys it holds go.
    fn delete(&mut self, row: &BlockRow<'_>) -> Result<RowEdit> {
        if let Some(ix) = &self.indexes {
            self.pending = ix.keys(|c| row.column(c))?.into_iter().map(|old| (old, None)).collect();
        }
        if let Some(rules) = &self.parent_rules {
            self.pending_gone.clear();
            rules.gone(|c| row.column(c), None, &mut self.pending_gone)?;
        }
        Ok(RowEdit::Delete)
    }
}

/// Sets the answers, for `row`'s values, of the correlated subqueries in `subqueries`
/// that WHERE reads (`of_where`) or of SET's; false when one has not run for those values
/// yet (it is then added to `wanted`, for [`RowChanges::prepare`] to run).
fn answers_ready<R: RowAccess + ?Sized>(
    subqueries: &[(CorrelatedPlan, bool)],
    f: &mut FunctionContext,
    wanted: &mut Vec<(usize, Vec<Value>)>,
    row: &R,
    of_where: bool,
) -> Result<bool> {
    let mut ready = true;
    for (i, (plan, in_where)) in subqueries.iter().enumerate() {
        if *in_where != of_where {
            continue;
        }
        let key = plan.key_of(row, f)?;
        match plan.cached(&key) {
            Some(answer) => f.set_subquery(plan.slot, answer),
            None => {
                wanted.push((i, key));
                ready = false;
            }
        }
    }
    Ok(ready)
}

impl RowChanges for Changes<'_> {
    fn qualifies(&mut self, row: &BlockRow<'_>) -> Result<Verdict> {
        if let Some(merge) = &mut self.merge {
            // MERGE's filter is its UPDATE's WHERE, judged on each pair.
            return Ok(if merge.judge(row, &mut self.f)? { Verdict::Yes } else { Verdict::No });
        }
        if let Some(key) = &self.key_match
            && !key.matches(row)?
        {
            return Ok(Verdict::No);
        }
        for c in self.filter.iter() {
            if c.eval_condition(row, &mut self.f)? != Some(true) {
                return Ok(Verdict::No);
            }
        }
        let has_subqueries = !self.subqueries.is_empty();
        if has_subqueries && !answers_ready(&self.subqueries, &mut self.f, &mut self.wanted, row, true)? {
            return Ok(Verdict::NotReady);
        }
        for c in &self.correlated_filter {
            if c.eval_condition(row, &mut self.f)? != Some(true) {
                return Ok(Verdict::No);
            }
        }
        if has_subqueries && !answers_ready(&self.subqueries, &mut self.f, &mut self.wanted, row, false)? {
            return Ok(Verdict::NotReady);
        }
        Ok(Verdict::Yes)
    }

    /// Runs the subqueries the row at hand waits for, on the statement's snapshot.
    fn prepare(&mut self) -> Result<()> {
        let Some(runner) = self.runner.as_mut() else {
            return Err(Error::unsupported("a correlated subquery with no statement to run in"));
        };
        for (i, key) in self.wanted.drain(..) {
            self.subqueries[i].0.run_for(key, runner)?;
        }
        Ok(())
    }

    fn edit(&mut self, row: &BlockRow<'_>) -> Result<RowEdit> {
        if self.assignments.is_empty() {
            return self.delete(row);
        }
        let mut values: Vec<Datum<'_>> = (0..self.table.columns.len()).map(|i| row.column(i)).collect::<Result<_>>()?;
        let mut new_values = Vec::with_capacity(self.assignments.len());
        if !self.nextvals.is_empty() {
            self.f.start_sequence_row(&self.nextvals)?;
        }
        // The assignments read the row beside MERGE's source row (none for UPDATE).
        let source = self.merge.as_deref().map_or(&[][..], |m| m.partner());
        let read = Beside { first: row, second: source, first_width: self.table.columns.len() };
        for (i, e) in self.assignments.iter() {
            let col = &self.table.columns[*i];
            let v = e.eval(&read, &mut self.f)?.into_owned();
            let v = col.data_type.coerce(v, &col.name).map_err(|e| qualify(&self.table.name, e))?;
            if v.is_null() && !col.nullable {
                return Err(Error::NullUpdated { column: column_path(&self.table.name, &col.name) });
            }
            new_values.push((*i, v));
        }
        let old_keys = match &self.indexes {
            Some(ix) => Some(ix.keys(|c| Ok(values[c].clone()))?),
            None => None,
        };
        for (i, v) in new_values {
            values[i] = v;
        }
        // MERGE's DELETE WHERE reads the updated row: a row it is true of goes.
        if let Some(merge) = &self.merge
            && merge.deletes(&values, &mut self.f)?
        {
            return self.delete(row);
        }
        if let Some(checks) = &self.checks {
            checks.check(&values[..])?;
        }
        if let Some(keys) = &self.child_keys {
            self.pending_child = keys.keys(|c| Ok(values[c].reborrow()))?;
        }
        if let Some(rules) = &self.parent_rules {
            self.pending_gone.clear();
            rules.gone(|c| row.column(c), Some(&values), &mut self.pending_gone)?;
        }
        if let (Some(ix), Some(old_keys)) = (&self.indexes, old_keys) {
            let new_keys = ix.keys(|c| Ok(values[c].clone()))?;
            self.pending = old_keys.into_iter().zip(new_keys).collect();
        }
        let mut piece = Vec::new();
        crate::storage::row::encode_whole_row(&values, &mut piece);
        Ok(RowEdit::Replace(piece))
    }

    fn changed(&mut self, rowid: RowId) {
        if self.indexes.is_some() {
            self.key_changes.push((rowid, std::mem::take(&mut self.pending)));
        }
        self.foreign_keys_changed();
    }

    /// The row's entries go; the new version's come with its insertion, at its new rowid.
    fn moved_out(&mut self, rowid: RowId) {
        if self.indexes.is_some() {
            let gone = std::mem::take(&mut self.pending).into_iter().map(|(old, _)| (old, None)).collect();
            self.key_changes.push((rowid, gone));
        }
        self.foreign_keys_changed();
    }
}

impl Changes<'_> {
    /// The last edit decided was made: its foreign keys and lost parent keys count.
    fn foreign_keys_changed(&mut self) {
        if self.child_keys.is_some() {
            self.new_child_keys.push(std::mem::take(&mut self.pending_child));
        }
        self.gone.append(&mut self.pending_gone);
    }
}

/// An UPDATE or DELETE bound once and kept by its cursor, as a query's plan is: a later
/// execution runs it again, with its own bind values, while the dictionary and the
/// parameters are as they were when it was bound (DDL, a GRANT or REVOKE, ANALYZE,
/// ALTER SESSION or SYSTEM make it anew). Kept only when its binding holds no value of
/// the execution that made it (SYSDATE folded into a constant, a bind value sizing a
/// ROWNUM limit) and it has no subquery. The acting user's privilege on the table is
/// checked at every execution.
pub(crate) struct BoundChange {
    version: (u64, u64),
    table: Arc<TableDef>,
    limit: Option<u64>,
    filter: Arc<[Expr]>,
    /// (column, new value); empty for a DELETE.
    assignments: Arc<[(usize, Expr)]>,
    /// How its rows are found, once decided.
    access: KeptAccess,
}

/// How a kept UPDATE or DELETE finds its rows, decided at its first execution (the
/// optimizer peeking at that execution's bind values, as for a query's kept plan) and
/// kept with it: a full scan, or an index range whose ends later executions compute from
/// their own bind values. Values that give the range another shape (a NULL where the
/// range used a value) make the decision anew, and a full scan chosen while a bind value
/// was NULL is not kept.
#[derive(Default)]
pub(crate) enum KeptAccess {
    #[default]
    Undecided,
    FullScan,
    Index(Box<KeptRange>),
}

/// An index unique or range scan of a kept UPDATE or DELETE: the index, the kind of
/// scan, and how its range follows from the bind values.
pub(crate) struct KeptRange {
    index: Arc<IndexDef>,
    kind: IndexScanKind,
    rebind: super::plan::RangeRebind,
}

/// What an UPDATE or DELETE reads: the table, the privilege the acting user needs on
/// it, WHERE, the assignments (none for DELETE) and the hints.
struct ChangeStatement<'a> {
    relation: &'a ast::TableFactor,
    privilege: crate::catalog::ObjectPrivilege,
    selection: Option<&'a ast::Expr>,
    assignments: &'a [ast::Assignment],
    hints: &'a [ast::OptimizerHint],
}

/// Runs an UPDATE, through `kept`'s binding when it still holds (see [`BoundChange`]),
/// keeping the binding made otherwise when it may be kept.
pub fn update(session: &Session, update: &ast::Update, kept: &mut Option<BoundChange>) -> Result<QueryResult> {
    let statement = ChangeStatement {
        relation: update_relation(update)?,
        privilege: crate::catalog::ObjectPrivilege::Update,
        selection: update.selection.as_ref(),
        assignments: &update.assignments,
        hints: &update.optimizer_hints,
    };
    let rows = bind_and_change(session, &statement, kept)?;
    Ok(changed(rows, "updated"))
}

/// Runs a DELETE, through `kept`'s binding when it still holds (see [`BoundChange`]).
pub fn delete(session: &Session, delete: &ast::Delete, kept: &mut Option<BoundChange>) -> Result<QueryResult> {
    let statement = ChangeStatement {
        relation: delete_relation(delete)?,
        privilege: crate::catalog::ObjectPrivilege::Delete,
        selection: delete.selection.as_ref(),
        assignments: &[],
        hints: &delete.optimizer_hints,
    };
    let rows = bind_and_change(session, &statement, kept)?;
    Ok(changed(rows, "deleted"))
}

/// Binds `statement` (or takes `kept`'s binding) and changes its rows; returns how many.
fn bind_and_change(session: &Session, statement: &ChangeStatement<'_>, kept: &mut Option<BoundChange>) -> Result<u64> {
    let version = super::kept_version(session);
    let hints = hints_of(statement.hints);
    if let Some(bound) = kept.as_mut().filter(|b| b.version == version) {
        super::privileges::require_on(session, &bound.table.name, statement.privilege)?;
        let scn = session.db.clock.current();
        let functions = super::function_context(session);
        let (filter, assignments) = (bound.filter.clone(), bound.assignments.clone());
        let mut changes =
            Changes::of_statement(session, &bound.table, filter, assignments, functions, Default::default(), scn)?;
        return run_and_cascade(session, &bound.table, &hints, bound.limit, &mut changes, &mut bound.access);
    }
    *kept = None;
    let (table, scope) = target(session, statement.relation, statement.privilege)?;
    let scn = session.db.clock.current();
    let functions = super::function_context(session);
    let subqueries = super::plan::StatementSubqueries::new(session, &functions);
    let binder = Binder { scope: &scope, f: &functions, grouping: None, subqueries: Some(subqueries.planner()) };
    let (limit, filter) = bind_where(&binder, statement.selection)?;
    let filter: Arc<[Expr]> = filter.into();
    let assignments: Arc<[(usize, Expr)]> =
        bind_assignments(&binder, &table, &scope.qualifiers, statement.assignments)?.into();
    let plans = subqueries.into_plans();
    let holds_execution_values = *functions.taken.borrow() != Default::default();
    let mut unkept = KeptAccess::Undecided;
    let access = match plans.0.is_empty() && plans.1.is_empty() && !holds_execution_values {
        true => {
            let (filter, assignments) = (filter.clone(), assignments.clone());
            let access = KeptAccess::Undecided;
            &mut kept.insert(BoundChange { version, table: table.clone(), limit, filter, assignments, access }).access
        }
        false => &mut unkept,
    };
    let mut changes = Changes::of_statement(session, &table, filter, assignments, functions, plans, scn)?;
    run_and_cascade(session, &table, &hints, limit, &mut changes, access)
}

/// The table UPDATE changes, refusing the forms lioscope does not implement.
pub(super) fn update_relation(update: &ast::Update) -> Result<&ast::TableFactor> {
    if update.from.is_some() || update.returning.is_some() || !update.table.joins.is_empty() || update.limit.is_some() {
        return Err(Error::Unsupported {
            construct: "UPDATE with FROM, joins, LIMIT or RETURNING".into(),
            position: position_of(&update.table),
        });
    }
    Ok(&update.table.relation)
}

/// The table DELETE changes, refusing the forms lioscope does not implement.
pub(super) fn delete_relation(delete: &ast::Delete) -> Result<&ast::TableFactor> {
    let from = match &delete.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    if from.len() != 1
        || !from[0].joins.is_empty()
        || !delete.tables.is_empty()
        || delete.using.is_some()
        || delete.returning.is_some()
        || delete.limit.is_some()
        || !delete.order_by.is_empty()
    {
        return Err(Error::unsupported("DELETE of more than one table, with USING, LIMIT, ORDER BY or RETURNING"));
    }
    Ok(&from[0].relation)
}

/// The column `SET name = ...` assigns: `c`, or `q.c` where `q` is one of `qualifiers`
/// (the table's name and alias); any other qualifier is ORA-00904.
fn assigned_column(name: &ast::ObjectName, qualifiers: &[String]) -> Result<String> {
    let parts: Vec<String> = name.0.iter().map(|p| p.as_ident().map_or_else(|| p.to_string(), ident_name)).collect();
    match &parts[..] {
        [column] => Ok(column.clone()),
        [qualifier, column] if qualifiers.contains(qualifier) => Ok(column.clone()),
        _ => Err(Error::InvalidValue {
            context: name.to_string(),
            message: "ORA-00904: invalid identifier (SET names a column of the table changed)".into(),
        }),
    }
}

/// SET's assignments, bound by `binder` over `table`'s columns (and, in MERGE, the
/// source's after them), each naming a column of the table (qualified, if at all, by
/// one of `qualifiers`): each column once, never a GENERATED ALWAYS identity column.
pub(super) fn bind_assignments(
    binder: &Binder<'_>,
    table: &TableDef,
    qualifiers: &[String],
    sets: &[ast::Assignment],
) -> Result<Vec<(usize, Expr)>> {
    let functions = binder.f;
    let mut assignments = Vec::new();
    for a in sets {
        let ast::AssignmentTarget::ColumnName(name) = &a.target else {
            return Err(Error::Unsupported {
                construct: format!("assigning to {}", a.target),
                position: position_of(&a.value),
            });
        };
        let col = assigned_column(name, qualifiers)?;
        let i = table.column_index(&col).ok_or_else(|| Error::UnknownName {
            kind: "column",
            name: format!("{}.{col}", table.name),
            position: position_of(name),
        })?;
        if table.identity.as_ref().is_some_and(|id| id.column == i && id.always) {
            return Err(Error::InvalidValue {
                context: format!("{}.{col}", table.name),
                message: "ORA-32796: cannot update a generated always identity column".into(),
            });
        }
        if assignments.iter().any(|(j, _)| *j == i) {
            return Err(Error::value(
                format!("{}.{col}", table.name),
                "ORA-00957: duplicate column name (assigned twice)",
            ));
        }
        // SET is where an UPDATE may read sequences (NEXTVAL moves on once a row).
        functions.sequence_refs_allowed.set(true);
        let value = binder.bind(&a.value);
        functions.sequence_refs_allowed.set(false);
        assignments.push((i, value?));
    }
    Ok(assignments)
}

/// `functions` with the answers of the statement's subqueries `init`, run now: before
/// any row changes, as of the statement's SCN `scn` (a subquery reading the changed
/// table sees it as it was).
pub(super) fn with_subqueries_run(
    session: &Session,
    functions: crate::expr::functions::FunctionContext,
    init: &[crate::exec::query_block::InitPlan],
    scn: u64,
) -> Result<crate::expr::functions::FunctionContext> {
    if init.is_empty() {
        return Ok(functions);
    }
    let mut ctx = super::exec_context_at(session, functions, scn);
    crate::exec::query_block::run_init_plans(init, &mut ctx)?;
    Ok(ctx.functions)
}

/// The hints of a statement's comments (`/*+ ... */`).
pub(super) fn hints_of(hints: &[ast::OptimizerHint]) -> Hints {
    optimizer::hints::parse(&hints.iter().map(|h| h.text.as_str()).collect::<Vec<_>>())
}

/// Rows each changed row is read beside: MERGE's source, whose judgement is the
/// statement's filter.
pub(super) trait RowPartner {
    /// Judges table row `row`: whether it changes (then beside the partner row it holds
    /// from now on).
    fn judge(&mut self, row: &BlockRow<'_>, f: &mut FunctionContext) -> Result<bool>;
    /// The partner row of the row at hand (none before one is judged).
    fn partner(&self) -> &[Value];
    /// Whether the row at hand, updated to `values`, is deleted instead.
    fn deletes(&self, values: &[Datum<'_>], f: &mut FunctionContext) -> Result<bool>;
    /// Whether [`RowPartner::deletes`] may say yes: every index and every foreign key
    /// referring to the table then counts, not only those on assigned columns.
    fn may_delete(&self) -> bool;
    /// The rowids of the only rows it may judge true, found through one of `indexes`
    /// when that is cheaper than a full scan of `table` (`None`: scan it).
    fn rows_by_index(
        &self,
        ctx: &AccessContext<'_>,
        table: &TableDef,
        indexes: &[Arc<IndexDef>],
    ) -> Result<Option<Vec<RowId>>>;
}

/// Changes the rows of `table` that `partner` judges, reading as of SCN `scn`: updates
/// them with `assignments` (over the row beside its partner row), or deletes them when
/// the partner says so; returns how many.
#[allow(clippy::too_many_arguments, reason = "the statement's parts, each used")]
pub(super) fn change_with_partner(
    session: &Session,
    table: &TableDef,
    hints: &Hints,
    assignments: Vec<(usize, Expr)>,
    functions: FunctionContext,
    partner: &mut dyn RowPartner,
    scn: u64,
) -> Result<u64> {
    let mut changes = Changes::new(table, Arc::from([]), assignments.into(), functions);
    changes.merge = Some(partner);
    changes.snapshot = Some(scn);
    run_and_cascade(session, table, hints, None, &mut changes, &mut KeptAccess::Undecided)
}

/// [`run`], then what the foreign keys that refer to the table do to the children of the
/// parent keys it deleted, and to theirs in turn (a work list: a deep cascade takes no
/// stack). Returns the rows the statement itself changed.
fn run_and_cascade<'s>(
    session: &'s Session,
    table: &TableDef,
    hints: &Hints,
    limit: Option<u64>,
    changes: &mut Changes<'s>,
    access: &mut KeptAccess,
) -> Result<u64> {
    let (rows, mut actions) = run(session, table, hints, limit, changes, access)?;
    while let Some(action) = actions.pop() {
        actions.extend(child_action(session, action)?);
    }
    Ok(rows)
}

/// Deletes the children `action` names (ON DELETE CASCADE), or sets their foreign key
/// NULL (ON DELETE SET NULL); returns what that does to their own children.
fn child_action(session: &Session, action: ChildAction) -> Result<Vec<ChildAction>> {
    let assignments = match action.delete {
        true => Vec::new(),
        false => action.matching.columns.iter().map(|&c| (c, Expr::Literal(Datum::Null))).collect(),
    };
    let functions = super::function_context(session);
    let mut changes = Changes::new(&action.child, Arc::from([]), assignments.into(), functions);
    changes.key_match = Some(action.matching);
    run(session, &action.child, &Hints::default(), None, &mut changes, &mut KeptAccess::Undecided)
        .map(|(_, actions)| actions)
}

/// Changes the rows of `table` that `changes` picks; returns how many, and what the
/// parent keys it removed do to the children that refer to them.
fn run<'s>(
    session: &'s Session,
    table: &TableDef,
    hints: &Hints,
    limit: Option<u64>,
    changes: &mut Changes<'s>,
    access: &mut KeptAccess,
) -> Result<(u64, Vec<ChildAction>)> {
    // DDL (CREATE or DROP INDEX, TRUNCATE) waits for this lock: the indexes read under it
    // are the ones the rows' changes must be applied to, until the last entry is written.
    let locks = session.db.locks.table(table.object_id);
    let _no_ddl = locks.visibility.read_recursive();
    let indexes = session.db.catalog.indexes_of(table.object_id);
    // A MERGE whose DELETE WHERE may remove a row it updates is a DELETE for these.
    let deletes_too = changes.merge.as_deref().is_some_and(|m| m.may_delete());
    changes.indexes = TableIndexes::from_defs(table, indexes.clone()).and_then(|ix| match &changes.assignments[..] {
        [] => Some(ix),
        _ if table.updates_move_rows() || deletes_too => Some(ix),
        assigned => ix.on_columns(&assigned.iter().map(|(c, _)| *c).collect::<Vec<_>>()),
    });
    // The constraints too are read under it: ALTER TABLE ... ADD waits for it.
    let current = session.db.catalog.table(&table.name).filter(|t| t.object_id == table.object_id);
    let current = current.as_deref().unwrap_or(table);
    let assigned: Vec<usize> = changes.assignments.iter().map(|(c, _)| *c).collect();
    if !changes.assignments.is_empty() {
        changes.checks = RowChecks::of(session, current)?;
        changes.child_keys = ChildKeys::of(session, current, Some(&assigned))?;
    }
    let assigned = (!assigned.is_empty() && !deletes_too).then_some(assigned.as_slice());
    changes.parent_rules = ParentRules::of(session, current, assigned)?;
    // A cascade reads the children as of now (they were looked for in current mode).
    let ctx = match changes.key_match {
        Some(_) => super::foreign_keys::current_mode(session),
        None => {
            let mut ctx = session.access_context();
            if let Some(scn) = changes.snapshot {
                ctx.txn.reader = session.txn.borrow_mut().reader(scn);
            }
            ctx
        }
    };
    if !changes.subqueries.is_empty() {
        let scn = changes.snapshot.unwrap_or_else(|| session.db.clock.current());
        changes.runner = Some(super::exec_context_at(session, changes.f.clone(), scn).for_inner_runs());
    }
    let found = match changes.merge.as_deref() {
        Some(partner) => partner.rows_by_index(&ctx, table, &indexes)?,
        None => rows_by_index(session, &ctx, table, &indexes, hints, changes, access)?,
    };
    // A subquery that reads the table must see it as the statement found it: every row
    // is decided on first, then the rows found are changed.
    let first_pass = changes.subqueries.iter().any(|(p, _)| p.block.reads_table(table.object_id));
    let found = match first_pass {
        true => {
            let from = found.as_deref().map_or(RowsFrom::FullScan, RowsFrom::Rowids);
            let mut txn = session.txn.borrow_mut();
            Some(qualifying_rows(&ctx, &mut txn, session.sid(), table, from, limit, changes)?)
        }
        false => found,
    };
    let from = found.as_deref().map_or(RowsFrom::FullScan, RowsFrom::Rowids);
    let done = {
        let mut txn = session.txn.borrow_mut();
        change_rows(&ctx, &mut txn, session.sid(), table, from, limit, changes)?
    };
    if let Some(indexes) = &changes.indexes {
        indexes.rows_changed(&ctx, session, &changes.key_changes)?;
    }
    // The new versions of rows that moved out of their compression units, inserted once
    // every row is changed, so that the statement never meets them.
    if !done.moved_out.is_empty() {
        super::dml::with_load(session, table, crate::access::load::LoadPath::Conventional, |load| {
            done.moved_out.iter().try_for_each(|piece| load.insert_encoded(piece))
        })?;
    }
    if let Some(keys) = &changes.child_keys {
        keys.check(session, changes.new_child_keys.iter().map(Vec::as_slice))?;
    }
    let actions = match &changes.parent_rules {
        Some(rules) => rules.after_statement(session, std::mem::take(&mut changes.gone))?,
        None => Vec::new(),
    };
    Ok((done.rows, actions))
}

/// The rowids of the rows an index unique or range scan finds for the WHERE clause, as
/// of the statement's snapshot, when the optimizer prefers that to a full scan (`None`:
/// scan the table). The decision kept in `access` stands when it fits these bind values;
/// one made here is kept there.
fn rows_by_index(
    session: &Session,
    ctx: &AccessContext<'_>,
    table: &TableDef,
    indexes: &[Arc<IndexDef>],
    hints: &Hints,
    changes: &Changes<'_>,
    access: &mut KeptAccess,
) -> Result<Option<Vec<RowId>>> {
    if indexes.is_empty() || changes.filter.is_empty() {
        return Ok(None);
    }
    let binds = &changes.f.binds;
    let (lower, upper) = match access {
        KeptAccess::FullScan => return Ok(None),
        KeptAccess::Index(kept) => match kept.range_for(binds, indexes) {
            Some(range) => range,
            None => {
                *access = KeptAccess::Undecided;
                return rows_by_index(session, ctx, table, indexes, hints, changes, access);
            }
        },
        KeptAccess::Undecided => {
            let conjuncts = filter_conjuncts(&changes.filter, binds);
            let decision = access_decision(session, ctx, table, indexes, hints, &conjuncts)?;
            let path = match decision.path {
                optimizer::AccessPath::Index(path)
                    if matches!(path.kind, IndexScanKind::Unique | IndexScanKind::Range) =>
                {
                    path
                }
                _ => {
                    // A full scan chosen for a NULL bind value (which bounds no range) is
                    // not what other values would choose: decided again next time.
                    if !binds.iter().any(Value::is_null) {
                        *access = KeptAccess::FullScan;
                    }
                    return Ok(None);
                }
            };
            let types = path.index.key_types(table);
            let range = (super::plan::key_bound(&path.lower, &types)?, super::plan::key_bound(&path.upper, &types)?);
            let rebind = super::plan::RangeRebind::new(conjuncts, types, &path);
            *access = KeptAccess::Index(Box::new(KeptRange { index: path.index, kind: path.kind, rebind }));
            range
        }
    };
    let KeptAccess::Index(kept) = access else { unreachable!("an index range was taken above") };
    let mut scan = crate::exec::index_source::open_scan(&kept.index, kept.kind, lower, upper, false);
    let (mut rowids, mut leaf) = (Vec::new(), Vec::new());
    while scan.next_leaf_with(ctx, Some(&mut leaf))?.is_some() {
        rowids.append(&mut leaf);
    }
    Ok(Some(rowids))
}

/// The ends of a kept index range for an execution.
type RangeEnds = (crate::index::KeyBound, crate::index::KeyBound);

impl KeptRange {
    /// The range's ends for bind values `binds`; `None` when these values give a range
    /// of another shape, or the index is no longer among the table's `indexes`.
    fn range_for(&mut self, binds: &[Value], indexes: &[Arc<IndexDef>]) -> Option<RangeEnds> {
        if !indexes.iter().any(|ix| Arc::ptr_eq(ix, &self.index)) {
            return None;
        }
        let range = self.rebind.range_for(binds, &self.index)?;
        let lower = super::plan::key_bound(&range.lower, self.rebind.types()).ok()?;
        let upper = super::plan::key_bound(&range.upper, self.rebind.types()).ok()?;
        Some((lower, upper))
    }
}

/// The conjuncts of an UPDATE's or DELETE's filter, with `binds` as its bind values.
pub(super) fn filter_conjuncts(filter: &[Expr], binds: &[Value]) -> Vec<predicates::Conjunct> {
    filter.iter().flat_map(|e| predicates::conjuncts(e, binds)).collect()
}

/// How the optimizer finds the rows of `table` an UPDATE or DELETE with WHERE
/// `conjuncts` changes: a full scan, or an index path (only a unique or range scan is
/// taken; any other is a full scan).
pub(super) fn access_decision(
    session: &Session,
    ctx: &AccessContext<'_>,
    table: &TableDef,
    indexes: &[Arc<IndexDef>],
    hints: &Hints,
    conjuncts: &[predicates::Conjunct],
) -> Result<optimizer::Decision> {
    let segment_blocks = super::plan::blocks_to_estimate_from(ctx, table)?;
    let columns_read = vec![true; table.columns.len()];
    let query =
        optimizer::Query { table, alias: None, segment_blocks, conjuncts, columns_read: &columns_read, order_by: &[] };
    let model = super::plan::cost_model(session);
    Ok(optimizer::choose(&query, indexes, hints, &model))
}

fn changed(rows: u64, verb: &str) -> QueryResult {
    let noun = if rows == 1 { "row" } else { "rows" };
    let mut result = QueryResult::message(StatementKind::Change, format!("{rows} {noun} {verb}."));
    result.rows_affected = rows;
    result
}

//! ALTER TABLE on constraints: ADD [CONSTRAINT name] ..., DROP CONSTRAINT, ENABLE and
//! DISABLE CONSTRAINT. Each takes the table exclusively (as CREATE INDEX does); adding or
//! enabling a constraint reads every row and fails naming the constraint if one violates
//! it (ORA-02293, ORA-02296, ORA-02437, ORA-02299, and ORA-02298 for a foreign key whose
//! parent keys, as committed, are not all there); a key a foreign key refers to cannot
//! be dropped (ORA-02273) nor, while that is enabled, disabled (ORA-02297); a key gets a
//! unique index of the constraint's name built from the rows, or uses a unique index on
//! its columns that exists. Disabling or dropping a key drops its index if the constraint made it. The
//! dictionary changes once, after the rows were checked and any index built.

use super::bind::ident_name;
use super::constraints::{
    Declared, drop_index_segments, mark_not_null, new_key_index, set_key_index, settle, table_constraint,
};
use super::ddl::{Exclusive, exclusive};
use super::row_checks::{bind_condition, qualified};
use crate::access::full_scan::{FullScan, ScanConsumer};
use crate::access::{BlockBatch, BlockRow, Flow, RowAccess, WalkedRow};
use crate::catalog::{ConstraintDef, ConstraintKind, IndexDef, KeyIndex, TableDef};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use sqlparser::ast;

/// Gives key constraint `i` of `table` its index: a unique index of the table on the
/// same columns if there is one, else a new one of the constraint's name, built from the
/// table's rows (a duplicate key fails naming the constraint). A new index is returned,
/// to be added to the dictionary with the table's change.
fn key_index(session: &Session, table: &mut TableDef, i: usize) -> Result<IndexDef> {
    let primary = matches!(table.constraints[i].kind, ConstraintKind::PrimaryKey(_));
    let mut def = new_key_index(session, table, i)?;
    match super::index_ddl::build_for(session, table, &def) {
        Ok(stats) => def.stats = Some(stats),
        Err(e) => {
            drop_index_segments(session, std::slice::from_ref(&def));
            set_key_index(&mut table.constraints[i], KeyIndex { index: None, own: true });
            return Err(match e {
                Error::InvalidValue { message, .. } if message.contains("duplicate keys") => Error::CannotValidate {
                    code: if primary { 2437 } else { 2299 },
                    constraint: qualified(&def.name),
                    what: if primary { "primary key violated" } else { "duplicate keys found" },
                },
                other => other,
            });
        }
    }
    Ok(def)
}

/// An existing unique index of `table` whose key is the constraint's columns (in any
/// order), not already used by another key.
fn existing_key_index(session: &Session, table: &TableDef, c: &ConstraintDef) -> Option<String> {
    let mut wanted = c.columns.clone();
    wanted.sort_unstable();
    session.db.catalog.indexes_of(table.object_id).into_iter().find_map(|ix| {
        let mut cols = ix.columns.clone();
        cols.sort_unstable();
        let used =
            table.constraints.iter().any(|o| o.kind.key_index().and_then(|k| k.index.as_ref()) == Some(&ix.name));
        (ix.unique && cols == wanted && !used).then(|| ix.name.clone())
    })
}

/// One operation of ALTER TABLE on constraints.
pub enum AlterConstraint {
    Add(Vec<Declared>),
    Drop { name: String },
    Enable { name: String },
    Disable { name: String },
}

/// ALTER TABLE ... ADD [CONSTRAINT name] ... / DROP CONSTRAINT name, as sqlparser parsed
/// them; other operations are not supported.
pub fn alter_table(session: &Session, alter: &ast::AlterTable) -> Result<QueryResult> {
    if alter.if_exists || alter.only || alter.location.is_some() || alter.on_cluster.is_some() {
        return Err(Error::unsupported(format!("ALTER TABLE clause in: {alter}")));
    }
    let table = super::ddl::single_name(&alter.name)?;
    for op in &alter.operations {
        let change = match op {
            ast::AlterTableOperation::AddConstraint { constraint, not_valid: false } => {
                AlterConstraint::Add(vec![table_constraint(constraint)?])
            }
            ast::AlterTableOperation::DropConstraint { if_exists: false, name, drop_behavior: None } => {
                AlterConstraint::Drop { name: ident_name(name) }
            }
            other => return Err(Error::unsupported(format!("ALTER TABLE {} {other}", alter.name))),
        };
        alter_constraint(session, &table, change)?;
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table altered."))
}

/// Adds, drops, enables or disables constraints of table `name`, with the table held
/// exclusively; the dictionary changes once the rows were checked and any index built.
pub fn alter_constraint(session: &Session, name: &str, change: AlterConstraint) -> Result<QueryResult> {
    let table =
        session.db.catalog.table(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })?;
    let locks = session.db.locks.table(table.object_id);
    let _exclusive = exclusive(&locks, &table.name)?;
    // Read again under the lock: a DDL statement may have changed it meanwhile.
    let table = session
        .db
        .catalog
        .table(name)
        .filter(|t| t.object_id == table.object_id)
        .ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })?;
    let mut changed = (*table).clone();
    let mut added = Vec::new();
    let mut removed = Vec::new();
    // The parents of the foreign keys this change enables, held as the table is until the
    // dictionary changes (Oracle's share lock on the parent): refused while a parent has
    // uncommitted changes (a delete of a key the rows need), so the rows are checked
    // against the parent keys that stay.
    let parent_locks: Vec<_>;
    let _parents: Vec<Exclusive<'_>>;
    let outcome = match change {
        AlterConstraint::Add(declared) => {
            let new = settle(session, &changed, declared)?;
            parent_locks = parents_of(session, &changed, &new);
            _parents = parent_locks.iter().map(|(l, name)| exclusive(l, name)).collect::<Result<_>>()?;
            let first = changed.constraints.len();
            changed.constraints.extend(new);
            (first..changed.constraints.len()).try_for_each(|i| enable(session, &mut changed, i, &mut added))
        }
        AlterConstraint::Drop { name } => {
            let i = position(&changed, &name, 2443)?;
            refuse_if_referenced(session, &changed, &changed.constraints[i], false)?;
            let c = changed.constraints.remove(i);
            if let Some(KeyIndex { index: Some(index), own: true }) = c.kind.key_index() {
                removed.push(index.clone());
            }
            release_not_null(&mut changed, &c)
        }
        AlterConstraint::Enable { name } => {
            let i = position(&changed, &name, 2431)?;
            parent_locks = parents_of(session, &changed, std::slice::from_ref(&changed.constraints[i]));
            _parents = parent_locks.iter().map(|(l, name)| exclusive(l, name)).collect::<Result<_>>()?;
            match changed.constraints[i].enabled {
                true => Ok(()),
                false => enable(session, &mut changed, i, &mut added),
            }
        }
        AlterConstraint::Disable { name } => {
            let i = position(&changed, &name, 2431)?;
            refuse_if_referenced(session, &changed, &changed.constraints[i], true)?;
            let c = &mut changed.constraints[i];
            if c.enabled {
                c.enabled = false;
                if let Some(KeyIndex { index: Some(index), own }) = c.kind.key_index().cloned() {
                    if own {
                        removed.push(index);
                    }
                    set_key_index(c, KeyIndex { index: None, own: true });
                }
                let c = c.clone();
                release_not_null(&mut changed, &c)?;
            }
            Ok(())
        }
    };
    // The indexes the constraints made and no longer use, as they were before the change.
    let gone: Vec<_> = removed.iter().filter_map(|n| session.db.catalog.index(n)).collect();
    let saved = outcome.and_then(|()| session.db.catalog.alter_table(changed, added.clone(), &removed));
    if let Err(e) = saved {
        drop_index_segments(session, &added);
        return Err(e);
    }
    let ctx = session.access_context();
    for index in gone {
        crate::access::segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name)?;
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table altered."))
}

/// The position of constraint `name` of `table`; an error with Oracle's `code` if it has
/// none.
fn position(table: &TableDef, name: &str, code: u32) -> Result<usize> {
    table.constraints.iter().position(|c| c.name == name).ok_or_else(|| Error::UnknownConstraint {
        code,
        name: name.to_owned(),
        table: table.name.clone(),
    })
}

/// Makes columns nullable again where `gone` (dropped or disabled) was the last enabled
/// constraint keeping them NOT NULL; refuses to for an identity column (ORA-30671).
fn release_not_null(table: &mut TableDef, gone: &ConstraintDef) -> Result<()> {
    if matches!(gone.kind, ConstraintKind::NotNull | ConstraintKind::PrimaryKey(_)) {
        for &i in &gone.columns {
            if !table.column_kept_not_null(i, &gone.name) {
                // An identity column takes a sequence's values: never NULL.
                if table.identity.as_ref().is_some_and(|id| id.column == i) {
                    return Err(Error::InvalidValue {
                        context: format!("{}.{}", table.name, gone.name),
                        message: "ORA-30671: cannot modify NOT NULL constraint on an identity column".into(),
                    });
                }
                table.columns[i].nullable = true;
            }
        }
    }
    Ok(())
}

/// The locks of the parent tables (other than `table` itself) of the foreign keys among
/// `constraints`, with the parents' names.
fn parents_of(
    session: &Session,
    table: &TableDef,
    constraints: &[ConstraintDef],
) -> Vec<(std::sync::Arc<crate::txn::locks::TableLocks>, String)> {
    let mut out: Vec<(std::sync::Arc<crate::txn::locks::TableLocks>, String)> = Vec::new();
    for c in constraints {
        if let ConstraintKind::ForeignKey { parent, .. } = &c.kind
            && let Some(p) = session.db.catalog.table(parent)
            && p.object_id != table.object_id
            && !out.iter().any(|(_, name)| *name == p.name)
        {
            out.push((session.db.locks.table(p.object_id), p.name.clone()));
        }
    }
    out
}

/// Enables constraint `i` of `table` (new, or disabled): checks the table's rows against
/// it and, for a key, gives it an index (new ones are pushed to `added`).
fn enable(session: &Session, table: &mut TableDef, i: usize, added: &mut Vec<IndexDef>) -> Result<()> {
    table.constraints[i].enabled = true;
    let c = table.constraints[i].clone();
    match &c.kind {
        ConstraintKind::NotNull => validate_rows(session, table, &c, None)?,
        ConstraintKind::Check { condition } => {
            let condition = bind_condition(session, table, condition)?;
            validate_rows(session, table, &c, Some(condition))?;
        }
        ConstraintKind::PrimaryKey(_) | ConstraintKind::Unique(_) => {
            if matches!(c.kind, ConstraintKind::PrimaryKey(_)) {
                validate_rows(session, table, &c, None)?;
            }
            match existing_key_index(session, table, &c) {
                Some(index) => set_key_index(&mut table.constraints[i], KeyIndex { index: Some(index), own: false }),
                None => added.push(key_index(session, table, i)?),
            }
        }
        ConstraintKind::ForeignKey { .. } => validate_foreign_key(session, table, &c)?,
    }
    mark_not_null(table);
    Ok(())
}

/// Refuses to drop (or, `disable`, to disable) key `c` of `table` while a foreign key
/// of another constraint (an enabled one, to disable it) refers to it: ORA-02273,
/// ORA-02297.
fn refuse_if_referenced(session: &Session, table: &TableDef, c: &ConstraintDef, disable: bool) -> Result<()> {
    if c.kind.key_index().is_none() || (disable && !c.enabled) {
        return Ok(());
    }
    let referring = super::foreign_keys::referencing(session, &table.name).into_iter().find(|(child, fk)| {
        let ConstraintKind::ForeignKey { parent_constraint, .. } = &fk.kind else { return false };
        // A self-referencing key of the table is read from the table being changed.
        let fk = if child.name == table.name { table.constraint(&fk.name) } else { Some(fk) };
        fk.is_some_and(|fk| parent_constraint == &c.name && (fk.enabled || !disable))
    });
    match referring {
        None => Ok(()),
        Some((_, fk)) if disable => Err(Error::KeyReferenced {
            code: 2297,
            what: format!("cannot disable constraint ({}) - dependencies exist", qualified(&c.name)),
            foreign_key: qualified(&fk.name),
        }),
        Some((_, fk)) => Err(Error::KeyReferenced {
            code: 2273,
            what: "this unique/primary key is referenced by some foreign keys".into(),
            foreign_key: qualified(&fk.name),
        }),
    }
}

/// Reads every row of `table` and fails naming foreign key `c` (ORA-02298) if the key
/// of one, where no column is NULL, is not a key of the parent as committed now.
fn validate_foreign_key(session: &Session, table: &TableDef, c: &ConstraintDef) -> Result<()> {
    let keys = super::foreign_keys::ChildKeys::of_constraint(session, table, c)?;
    let ctx = session.access_context();
    let mut needed = vec![false; table.columns.len()];
    c.columns.iter().for_each(|&i| needed[i] = true);
    let mut gathered = KeyGatherer { keys: &keys, found: std::collections::BTreeSet::new() };
    FullScan::new(table, &needed).run_locked(&ctx, &mut gathered)?;
    if !keys.committed_parents_hold(session, &gathered.found)? {
        return Err(Error::CannotValidate {
            code: 2298,
            constraint: qualified(&c.name),
            what: "parent keys not found",
        });
    }
    Ok(())
}

/// Gathers the distinct parent keys a table's rows refer to.
struct KeyGatherer<'k> {
    keys: &'k super::foreign_keys::ChildKeys,
    found: std::collections::BTreeSet<Vec<u8>>,
}

impl KeyGatherer<'_> {
    fn visit<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<()> {
        if let Some(key) = self.keys.keys(|c| row.column(c))?.pop().flatten() {
            self.found.insert(key);
        }
        Ok(())
    }
}

impl ScanConsumer for KeyGatherer<'_> {
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow> {
        for i in 0..batch.len() {
            self.visit(&batch.row(i))?;
        }
        Ok(Flow::Continue)
    }

    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow> {
        self.visit(row)?;
        Ok(Flow::Continue)
    }

    fn row_in_place(&mut self, _row: WalkedRow<'_>) -> Result<Flow> {
        unreachable!("rows_in_place is false: the scan hands whole batches")
    }
}

/// Reads every row of `table` and fails naming `c` at the first that violates it: a
/// NULL in a NOT NULL or primary key column, or `condition` FALSE.
fn validate_rows(session: &Session, table: &TableDef, c: &ConstraintDef, condition: Option<Expr>) -> Result<()> {
    let ctx = session.access_context();
    let mut needed = vec![false; table.columns.len()];
    match &condition {
        Some(_) => needed.iter_mut().for_each(|n| *n = true),
        None => c.columns.iter().for_each(|&i| needed[i] = true),
    }
    let (code, what) = match (&c.kind, &condition) {
        (_, Some(_)) => (2293, "check constraint violated"),
        _ => (2296, "null values found"),
    };
    let mut validator =
        Validator { columns: &c.columns, condition, f: super::function_context(session), violated: false };
    FullScan::new(table, &needed).run_locked(&ctx, &mut validator)?;
    if validator.violated {
        return Err(Error::CannotValidate { code, constraint: qualified(&c.name), what });
    }
    Ok(())
}

/// Looks for a row that violates a constraint being enabled.
struct Validator<'c> {
    /// Columns that must not be NULL (when `condition` is `None`).
    columns: &'c [usize],
    condition: Option<Expr>,
    f: FunctionContext,
    violated: bool,
}

impl Validator<'_> {
    fn visit<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<Flow> {
        self.violated = match &self.condition {
            Some(condition) => condition.eval_condition(row, &mut self.f)? == Some(false),
            None => self.columns.iter().any(|&i| row.is_null(i)),
        };
        Ok(if self.violated { Flow::Stop } else { Flow::Continue })
    }
}

impl ScanConsumer for Validator<'_> {
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow> {
        for i in 0..batch.len() {
            if self.visit(&batch.row(i))? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow> {
        self.visit(row)
    }

    fn row_in_place(&mut self, _row: WalkedRow<'_>) -> Result<Flow> {
        unreachable!("rows_in_place is false: the scan hands whole batches")
    }
}

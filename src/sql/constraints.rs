//! Table constraints as Oracle has them: NOT NULL, CHECK, PRIMARY KEY and UNIQUE, declared
//! inline or out of line in CREATE TABLE, added, dropped, enabled and disabled by ALTER
//! TABLE, kept with the table in the dictionary (`TableDef::constraints`).
//!
//! Names: a constraint the statement does not name is called `SYS_C` and a data object
//! id (seven digits at least: `SYS_C0001234`), which no other object of the database has.
//! Constraint names are unique in the database (ORA-02264).
//!
//! Enforcement, where each row is checked before it is written:
//! - NOT NULL (and a primary key's columns) through the columns' `nullable` flag, which
//!   every insert path checks (`dml::RowShape`, the row encoder) and UPDATE too
//!   (ORA-01400, ORA-01407). The flag is false while an enabled NOT NULL or primary key
//!   constraint covers the column.
//! - CHECK by [`RowChecks`]: each enabled condition is evaluated on the row as it will be
//!   stored (INSERT, INSERT ... SELECT, APPEND, COPY, UPDATE); FALSE refuses the row
//!   (ORA-02290), TRUE and UNKNOWN pass.
//! - PRIMARY KEY and UNIQUE by a unique index of the constraint's name (made for it, or a
//!   unique index on the same columns that existed before): the index refuses a key a
//!   committed or own row holds and waits for an uncommitted one (ORA-00001, naming the
//!   index, so the constraint). Rows whose key columns are all NULL have no entry, so
//!   UNIQUE allows any number of them.
//!
//! Adding or enabling a constraint takes the table exclusively (as CREATE INDEX does),
//! checks every row and fails naming the constraint if one violates it; a key builds its
//! index from the rows. Disabling a key drops its index if the constraint made it.

use super::bind::{Binder, Scope, ident_name, position_of};
use super::ddl::exclusive;
use crate::access::full_scan::{FullScan, ScanConsumer};
use crate::access::{BlockBatch, BlockRow, Flow, RowAccess, WalkedRow};
use crate::catalog::{ConstraintDef, ConstraintKind, IndexDef, KeyIndex, SCHEMA, TableDef};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use sqlparser::ast;
use std::cell::RefCell;

/// A constraint as a statement declares it, before its name is settled.
pub(super) struct Declared {
    name: Option<String>,
    kind: DeclaredKind,
    /// Column names, upper case unless quoted.
    columns: Vec<String>,
}

enum DeclaredKind {
    NotNull,
    Check(Box<ast::Expr>),
    PrimaryKey,
    Unique,
}

/// The constraints declared by a column's options (NOT NULL, CHECK, PRIMARY KEY,
/// UNIQUE, each perhaps named), and whether the column is declared NOT NULL.
pub(super) fn column_constraints(column: &str, options: &[ast::ColumnOptionDef]) -> Result<Vec<Declared>> {
    let mut out = Vec::new();
    for option in options {
        let named = option.name.as_ref().map(ident_name);
        let on = |kind, inner: &Option<ast::Ident>| Declared {
            name: named.clone().or_else(|| inner.as_ref().map(ident_name)),
            kind,
            columns: vec![column.to_owned()],
        };
        match &option.option {
            ast::ColumnOption::Null if named.is_none() => {}
            ast::ColumnOption::NotNull => out.push(on(DeclaredKind::NotNull, &None)),
            ast::ColumnOption::Check(c) => {
                check_enforced(c.enforced, &option.option)?;
                // A CHECK's condition names its columns, wherever it is declared.
                out.push(Declared { columns: Vec::new(), ..on(DeclaredKind::Check(c.expr.clone()), &c.name) });
            }
            ast::ColumnOption::PrimaryKey(c) => {
                key_characteristics(c.characteristics.as_ref(), &option.option)?;
                out.push(on(DeclaredKind::PrimaryKey, &c.name));
            }
            ast::ColumnOption::Unique(c) => {
                key_characteristics(c.characteristics.as_ref(), &option.option)?;
                out.push(on(DeclaredKind::Unique, &c.name));
            }
            other => {
                return Err(Error::Unsupported {
                    construct: format!("column option {other} on {column}"),
                    position: None,
                });
            }
        }
    }
    Ok(out)
}

/// An out-of-line constraint (`[CONSTRAINT name] PRIMARY KEY (a, b)`, ...).
pub(super) fn table_constraint(c: &ast::TableConstraint) -> Result<Declared> {
    let names = |cols: &[ast::IndexColumn]| -> Result<Vec<String>> {
        cols.iter()
            .map(|c| match &c.column.expr {
                ast::Expr::Identifier(i)
                    if c.column.options.sort.is_none() && c.column.options.nulls_first.is_none() =>
                {
                    Ok(ident_name(i))
                }
                other => Err(Error::Unsupported {
                    construct: format!("key column {other} in constraint {c}"),
                    position: position_of(other),
                }),
            })
            .collect()
    };
    let unsupported = || Error::Unsupported { construct: format!("constraint {c}"), position: None };
    Ok(match c {
        ast::TableConstraint::PrimaryKey(k) => {
            if k.index_name.is_some() || k.index_type.is_some() || !k.include.is_empty() || !k.index_options.is_empty()
            {
                return Err(unsupported());
            }
            key_characteristics(k.characteristics.as_ref(), c)?;
            Declared {
                name: k.name.as_ref().map(ident_name),
                kind: DeclaredKind::PrimaryKey,
                columns: names(&k.columns)?,
            }
        }
        ast::TableConstraint::Unique(k) => {
            if k.index_name.is_some() || k.index_type.is_some() || !k.include.is_empty() || !k.index_options.is_empty()
            {
                return Err(unsupported());
            }
            key_characteristics(k.characteristics.as_ref(), c)?;
            Declared { name: k.name.as_ref().map(ident_name), kind: DeclaredKind::Unique, columns: names(&k.columns)? }
        }
        ast::TableConstraint::Check(k) => {
            check_enforced(k.enforced, c)?;
            Declared {
                name: k.name.as_ref().map(ident_name),
                kind: DeclaredKind::Check(k.expr.clone()),
                columns: Vec::new(),
            }
        }
        _ => return Err(unsupported()),
    })
}

fn check_enforced(enforced: Option<bool>, what: &dyn std::fmt::Display) -> Result<()> {
    match enforced {
        Some(false) => Err(Error::unsupported(format!("NOT ENFORCED in {what}"))),
        _ => Ok(()),
    }
}

/// Refuses DEFERRABLE and the other characteristics lioscope does not keep.
fn key_characteristics(c: Option<&ast::ConstraintCharacteristics>, what: &dyn std::fmt::Display) -> Result<()> {
    match c {
        Some(c) if c.deferrable == Some(true) || c.initially.is_some() || c.enforced == Some(false) => {
            Err(Error::unsupported(format!("DEFERRABLE, INITIALLY or NOT ENFORCED in {what}")))
        }
        _ => Ok(()),
    }
}

/// A system name for a new constraint: `SYS_C` and a new data object id.
fn system_name(session: &Session) -> String {
    format!("SYS_C{:07}", session.db.catalog.next_object_id())
}

/// Settles the constraints `declared` for `table` (which may already have some): names,
/// column positions, conditions bound once to find unknown columns, one primary key.
/// Returns them in order, enabled; the table's NOT NULL flags are not yet changed.
fn settle(session: &Session, table: &TableDef, declared: Vec<Declared>) -> Result<Vec<ConstraintDef>> {
    let mut settled: Vec<ConstraintDef> = Vec::new();
    let has_primary = |list: &[ConstraintDef]| list.iter().any(|c| matches!(c.kind, ConstraintKind::PrimaryKey(_)));
    for d in declared {
        let mut columns = Vec::new();
        for name in &d.columns {
            let i = table.column_index(name).ok_or_else(|| Error::UnknownName {
                kind: "column",
                name: format!("{}.{name}", table.name),
                position: None,
            })?;
            if columns.contains(&i) {
                return Err(Error::value(format!("{}.{name}", table.name), "column listed twice in a constraint"));
            }
            columns.push(i);
        }
        let kind = match d.kind {
            DeclaredKind::NotNull => ConstraintKind::NotNull,
            DeclaredKind::Check(e) => {
                let condition = e.to_string();
                bind_condition(session, table, &condition)?;
                ConstraintKind::Check { condition }
            }
            DeclaredKind::PrimaryKey => {
                if has_primary(&table.constraints) || has_primary(&settled) {
                    return Err(Error::SecondPrimaryKey { table: table.name.clone() });
                }
                ConstraintKind::PrimaryKey(KeyIndex { index: None, own: true })
            }
            DeclaredKind::Unique => ConstraintKind::Unique(KeyIndex { index: None, own: true }),
        };
        if columns.len() > 32 {
            return Err(Error::value(&table.name, "a key has at most 32 columns"));
        }
        let generated = d.name.is_none();
        let name = match d.name {
            Some(n) if n.is_empty() => {
                return Err(Error::Parse {
                    message: "a constraint name cannot be empty (\"\")".into(),
                    position: None,
                });
            }
            Some(n) => n,
            None => system_name(session),
        };
        let taken = table.constraint(&name).is_some() || settled.iter().any(|c| c.name == name);
        if taken || session.db.catalog.constraint_table(&name).is_some() {
            return Err(Error::ConstraintNameUsed { name });
        }
        settled.push(ConstraintDef { name, kind, columns, enabled: true, generated });
    }
    Ok(settled)
}

/// Binds a CHECK condition over `table`'s columns.
fn bind_condition(session: &Session, table: &TableDef, condition: &str) -> Result<Expr> {
    let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::OracleDialect {})
        .try_with_sql(condition)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| Error::Parse { message: format!("CHECK condition {condition}: {e}"), position: None })?;
    let names = table.columns.iter().map(|c| c.name.clone()).collect();
    let scope = Scope { names, qualifiers: vec![table.name.clone()], ..Default::default() };
    let f = super::function_context(session);
    Binder { scope: &scope, f: &f, grouping: None }.bind(&parsed)
}

/// `"SCHEMA"."TABLE"."COLUMN"`, as ORA-01400 and ORA-01407 name a column.
pub(super) fn column_path(table: &str, column: &str) -> String {
    format!("\"{SCHEMA}\".\"{table}\".\"{column}\"")
}

/// `SCHEMA.NAME`, as Oracle's constraint errors name a constraint.
fn qualified(name: &str) -> String {
    format!("{SCHEMA}.{name}")
}

/// The enabled CHECK conditions of a table, bound, for checking rows before they are
/// written.
pub(super) struct RowChecks {
    /// (qualified constraint name, condition)
    checks: Vec<(String, Expr)>,
    /// The statement's function context, for evaluating the conditions.
    f: RefCell<FunctionContext>,
}

impl RowChecks {
    /// The checks of `table`, or `None` if it has no enabled CHECK constraint.
    pub(super) fn of(session: &Session, table: &TableDef) -> Result<Option<RowChecks>> {
        let mut checks = Vec::new();
        for c in table.constraints.iter().filter(|c| c.enabled) {
            if let ConstraintKind::Check { condition } = &c.kind {
                checks.push((qualified(&c.name), bind_condition(session, table, condition)?));
            }
        }
        if checks.is_empty() {
            return Ok(None);
        }
        Ok(Some(RowChecks { checks, f: RefCell::new(super::function_context(session)) }))
    }

    /// Refuses `row` (the whole row as it will be stored) if a condition is FALSE.
    pub(super) fn check<R: RowAccess + ?Sized>(&self, row: &R) -> Result<()> {
        let mut f = self.f.borrow_mut();
        for (name, condition) in &self.checks {
            if condition.eval_condition(row, &mut f)? == Some(false) {
                return Err(Error::CheckViolation { constraint: name.clone() });
            }
        }
        Ok(())
    }
}

/// CREATE TABLE's constraints: settled on the new `table` (its segment made, not yet in
/// the dictionary), their NOT NULL columns marked, and the indexes of its keys made
/// (empty: the table has no rows). Returns the indexes, to be added with the table.
pub(super) fn for_new_table(session: &Session, table: &mut TableDef, declared: Vec<Declared>) -> Result<Vec<IndexDef>> {
    let constraints = settle(session, table, declared)?;
    table.constraints = constraints;
    mark_not_null(table);
    let mut indexes = Vec::new();
    let keys: Vec<usize> =
        (0..table.constraints.len()).filter(|&i| table.constraints[i].kind.key_index().is_some()).collect();
    for i in keys {
        match key_index(session, table, i) {
            Ok(index) => indexes.push(index),
            Err(e) => {
                drop_index_segments(session, &indexes);
                return Err(e);
            }
        }
    }
    Ok(indexes)
}

/// Frees the segments of indexes made for constraints that were not added after all.
pub(super) fn drop_index_segments(session: &Session, indexes: &[IndexDef]) {
    let ctx = session.access_context();
    for ix in indexes {
        let _ = crate::access::segments::drop_object_segment(&ctx, ix.object_id, ix.segment_header, &ix.name);
    }
}

/// Marks NOT NULL each column an enabled NOT NULL or primary key constraint covers.
fn mark_not_null(table: &mut TableDef) {
    for c in table.constraints.iter().filter(|c| c.enabled) {
        if matches!(c.kind, ConstraintKind::NotNull | ConstraintKind::PrimaryKey(_)) {
            for &i in &c.columns {
                table.columns[i].nullable = false;
            }
        }
    }
}

/// Gives key constraint `i` of `table` its index: a unique index of the table on the
/// same columns if there is one, else a new one of the constraint's name, built from the
/// table's rows (a duplicate key fails naming the constraint). A new index is returned,
/// to be added to the dictionary with the table's change.
fn key_index(session: &Session, table: &mut TableDef, i: usize) -> Result<IndexDef> {
    let (name, columns, primary) = {
        let c = &table.constraints[i];
        (c.name.clone(), c.columns.clone(), matches!(c.kind, ConstraintKind::PrimaryKey(_)))
    };
    let ctx = session.access_context();
    let object_id = session.db.catalog.next_object_id();
    let segment_header = crate::index::create_segment(&ctx, object_id)?;
    let mut def = IndexDef {
        name: name.clone(),
        table: table.name.clone(),
        table_object_id: table.object_id,
        object_id,
        segment_header,
        columns,
        unique: true,
        pctfree: 10,
        created: crate::types::local_now(),
        stats: None,
    };
    match super::index_ddl::build_for(session, table, &def) {
        Ok(stats) => def.stats = Some(stats),
        Err(e) => {
            let _ = crate::access::segments::drop_object_segment(&ctx, object_id, segment_header, &name);
            return Err(match e {
                Error::InvalidValue { message, .. } if message.contains("duplicate keys") => Error::CannotValidate {
                    code: if primary { 2437 } else { 2299 },
                    constraint: qualified(&name),
                    what: if primary { "primary key violated" } else { "duplicate keys found" },
                },
                other => other,
            });
        }
    }
    set_key_index(&mut table.constraints[i], KeyIndex { index: Some(name), own: true });
    Ok(def)
}

fn set_key_index(c: &mut ConstraintDef, key: KeyIndex) {
    match &mut c.kind {
        ConstraintKind::PrimaryKey(k) | ConstraintKind::Unique(k) => *k = key,
        _ => unreachable!("only a key has an index"),
    }
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
    let outcome = match change {
        AlterConstraint::Add(declared) => {
            let new = settle(session, &changed, declared)?;
            let first = changed.constraints.len();
            changed.constraints.extend(new);
            (first..changed.constraints.len()).try_for_each(|i| enable(session, &mut changed, i, &mut added))
        }
        AlterConstraint::Drop { name } => {
            let i = position(&changed, &name, 2443)?;
            let c = changed.constraints.remove(i);
            if let Some(KeyIndex { index: Some(index), own: true }) = c.kind.key_index() {
                removed.push(index.clone());
            }
            release_not_null(&mut changed, &c);
            Ok(())
        }
        AlterConstraint::Enable { name } => {
            let i = position(&changed, &name, 2431)?;
            match changed.constraints[i].enabled {
                true => Ok(()),
                false => enable(session, &mut changed, i, &mut added),
            }
        }
        AlterConstraint::Disable { name } => {
            let i = position(&changed, &name, 2431)?;
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
                release_not_null(&mut changed, &c);
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

/// Makes column NOT NULL flags true again where `gone` (dropped or disabled) was the last
/// enabled constraint keeping them.
fn release_not_null(table: &mut TableDef, gone: &ConstraintDef) {
    if matches!(gone.kind, ConstraintKind::NotNull | ConstraintKind::PrimaryKey(_)) {
        for &i in &gone.columns {
            if !table.column_kept_not_null(i, &gone.name) {
                table.columns[i].nullable = true;
            }
        }
    }
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
        ConstraintKind::ForeignKey { .. } => {
            return Err(Error::unsupported(format!("enabling foreign key {}", c.name)));
        }
    }
    mark_not_null(table);
    Ok(())
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

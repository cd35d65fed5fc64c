//! CREATE TABLE (with its constraints, see `constraints`, and its identity column, whose
//! sequence is made and dropped with it), DROP TABLE (and its indexes and constraints), TRUNCATE TABLE (its indexes emptied into
//! new segments with new data object ids, as Oracle's TRUNCATE). Each takes the table
//! exclusively ([`exclusive`]), which CREATE and DROP INDEX (`index_ddl`) share; DROP and
//! TRUNCATE also take the table out of the column store.
//!
//! ALTER TABLE ... INMEMORY / NO INMEMORY records the attributes and starts or stops the
//! table's population, waiting only for the scans running on it; POPULATE_WAIT waits for
//! the workers.

use super::bind::{ident_name, position_of};
use super::constraints;
use crate::access::segments;
use crate::catalog::{ColumnDef, TableDef};
use crate::error::{Error, Result};
use crate::instance::Session;
use crate::sql::front::Clauses;
use crate::sql::{QueryResult, StatementKind};
use crate::storage::row::MAX_COLUMNS;
use sqlparser::ast::{self, ObjectType};
use std::sync::Arc;

/// PCTFREE when CREATE TABLE does not say (Oracle's default).
const DEFAULT_PCTFREE: u8 = 10;

/// CREATE TABLE, with columns or AS SELECT; COMPRESS FOR a level makes the rows of AS
/// SELECT a direct-path load into compression units, as Oracle's Hybrid Columnar
/// Compression does (rows inserted later go to ordinary row blocks).
pub fn create_table(session: &Session, create: &ast::CreateTable, clauses: Clauses) -> Result<QueryResult> {
    if create.or_replace || create.temporary || create.external || create.global.is_some() || create.if_not_exists {
        return Err(Error::unsupported("CREATE [OR REPLACE | GLOBAL TEMPORARY | EXTERNAL] TABLE or IF NOT EXISTS"));
    }
    let name = new_object_name(&create.name, "table")?;
    if session.db.catalog.table(&name).is_some() {
        return Err(Error::ObjectExists { kind: "table", name });
    }
    let mut declared = Vec::new();
    let columns = match &create.query {
        Some(_) if !create.columns.is_empty() || !create.constraints.is_empty() => {
            return Err(Error::unsupported(
                "a column list in CREATE TABLE ... AS SELECT (name the columns with aliases in the query)",
            ));
        }
        Some(query) => super::ctas::columns_of(session, query)?,
        None => {
            let mut columns: Vec<ColumnDef> = Vec::new();
            for c in &create.columns {
                let column = column_def(c)?;
                if columns.iter().any(|x| x.name == column.name) {
                    return Err(Error::ObjectExists { kind: "column", name: format!("{name}.{}", column.name) });
                }
                declared.extend(constraints::column_constraints(&column.name, &c.options)?);
                columns.push(column);
            }
            for c in &create.constraints {
                declared.push(constraints::table_constraint(c)?);
            }
            columns
        }
    };
    if columns.is_empty() || columns.len() > MAX_COLUMNS {
        return Err(Error::value(&name, format!("a table has 1 to {MAX_COLUMNS} columns, not {}", columns.len())));
    }
    let ctx = session.access_context();
    let object_id = session.db.catalog.next_object_id();
    let segment_header = segments::create_segment(&ctx, object_id)?;
    let mut table = TableDef {
        name,
        object_id,
        columns,
        pctfree: clauses.pctfree.unwrap_or(DEFAULT_PCTFREE),
        segment_header,
        created: crate::types::local_now(),
        stats: None,
        inmemory: None,
        compression: clauses.compress.flatten(),
        constraints: Vec::new(),
        identity: None,
    };
    // The segments are not reachable until the dictionary holds the table: if that fails
    // (a bad constraint or identity clause, a concurrent CREATE of the same name, a failed
    // write), their extents are freed again.
    let sequence = match clauses.identity.as_ref().map(|c| identity_column(&mut table, c, &mut declared)).transpose() {
        Ok(sequence) => sequence,
        Err(e) => {
            let _ = segments::drop_segment(&ctx, &table);
            return Err(e);
        }
    };
    let indexes = match constraints::for_new_table(session, &mut table, declared) {
        Ok(indexes) => indexes,
        Err(e) => {
            let _ = segments::drop_segment(&ctx, &table);
            return Err(e);
        }
    };
    if let Err(e) = session.db.catalog.add_table_with(table.clone(), indexes.clone(), sequence, &session.user()) {
        constraints::drop_index_segments(session, &indexes);
        let _ = segments::drop_segment(&ctx, &table);
        return Err(e);
    }
    if let Some(query) = &create.query {
        // A load that fails takes the table with it, as if it had never been created.
        if let Err(e) = super::dml::load_new_table(session, &table, query) {
            let _ = session.db.catalog.remove_table(&table.name);
            let _ = segments::drop_segment(&ctx, &table);
            return Err(e);
        }
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table created."))
}

/// Makes `clause`'s column of `table` its identity column, NOT NULL (a system-named
/// constraint in `declared`), and returns its sequence. The column is a NUMBER or
/// INTEGER (ORA-30675).
fn identity_column(
    table: &mut TableDef,
    clause: &super::front::IdentityClause,
    declared: &mut Vec<constraints::Declared>,
) -> Result<crate::catalog::SequenceDef> {
    let column = table.column_index(&clause.column).ok_or_else(|| Error::UnknownName {
        kind: "column",
        name: format!("{}.{}", table.name, clause.column),
        position: clause.position.clone(),
    })?;
    if !matches!(
        table.columns[column].data_type,
        crate::types::DataType::Number { .. } | crate::types::DataType::Integer
    ) {
        return Err(Error::InvalidValue {
            context: format!("{}.{}", table.name, clause.column),
            message: "ORA-30675: identity column must be a numeric type".into(),
        });
    }
    let name = crate::catalog::IdentityColumn::sequence_name(table.object_id);
    let sequence = crate::catalog::SequenceDef::create(name.clone(), &clause.options, crate::types::local_now())?;
    if table.columns[column].nullable {
        declared.push(constraints::identity_not_null(&table.columns[column].name));
    }
    table.identity =
        Some(crate::catalog::IdentityColumn { column, sequence: name, always: clause.always, on_null: clause.on_null });
    Ok(sequence)
}

/// The name of a new `kind` (table, index): one name, not an unquoted reserved word.
pub(super) fn new_object_name(name: &ast::ObjectName, kind: &str) -> Result<String> {
    let single = single_name(name)?;
    match name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)]
            if i.quote_style.is_none() && super::reserved_words::RESERVED_WORDS.contains(&single.as_str()) =>
        {
            Err(Error::Parse {
                message: format!("invalid {kind} name: {single} is a reserved word (quote it to use it as a name)"),
                position: position_of(name),
            })
        }
        _ => Ok(single),
    }
}

pub(crate) fn single_name(name: &ast::ObjectName) -> Result<String> {
    match name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)] if i.value.is_empty() => {
            Err(Error::Parse { message: "a name cannot be empty (\"\")".into(), position: position_of(name) })
        }
        [ast::ObjectNamePart::Identifier(i)] => Ok(ident_name(i)),
        _ => Err(Error::Unsupported {
            construct: format!("qualified name {name} (lioscope has one schema)"),
            position: position_of(name),
        }),
    }
}

fn column_def(c: &ast::ColumnDef) -> Result<ColumnDef> {
    let name = ident_name(&c.name);
    if name.is_empty() {
        return Err(Error::Parse { message: "a column name cannot be empty (\"\")".into(), position: None });
    }
    let data_type = super::data_types::data_type(&c.data_type)
        .map_err(|message| Error::InvalidValue { context: name.clone(), message })?;
    // NOT NULL comes with the column's constraints (`constraints::column_constraints`).
    Ok(ColumnDef { name, data_type, nullable: true })
}

pub fn drop(
    session: &Session,
    object_type: ObjectType,
    if_exists: bool,
    names: &[ast::ObjectName],
    cascade: bool,
    _purge: bool,
) -> Result<QueryResult> {
    if object_type != ObjectType::Table {
        return Err(Error::unsupported(format!("DROP {object_type}")));
    }
    if cascade {
        return Err(Error::unsupported("DROP TABLE ... CASCADE (Oracle's is CASCADE CONSTRAINTS)"));
    }
    let names = names.iter().map(single_name).collect::<Result<Vec<_>>>()?;
    drop_tables(session, if_exists, &names, false)
}

/// DROP TABLE of each of `names`, with its indexes and constraints. A table whose keys
/// foreign keys of other tables refer to is refused (ORA-02449), unless
/// `cascade_constraints`: those foreign keys are then dropped first.
pub(super) fn drop_tables(
    session: &Session,
    if_exists: bool,
    names: &[String],
    cascade_constraints: bool,
) -> Result<QueryResult> {
    drop_each(
        session,
        names,
        if_exists,
        "table",
        |name| {
            let table = session.db.catalog.table(name)?;
            Some(((table.object_id, table.name.clone()), table))
        },
        |table| {
            let children: Vec<_> = super::foreign_keys::referencing(session, &table.name)
                .into_iter()
                .filter(|(child, _)| child.object_id != table.object_id)
                .collect();
            if let Some((_, fk)) = children.first() {
                if !cascade_constraints {
                    return Err(Error::KeyReferenced {
                        code: 2449,
                        what: "unique/primary keys in table referenced by foreign keys".into(),
                        foreign_key: super::row_checks::qualified(&fk.name),
                    });
                }
                drop_foreign_keys(session, &table.name, &children)?;
            }
            // An identity column's sequence goes with the table, its cache emptied.
            let (_, indexes) = match &table.identity {
                Some(identity) => session
                    .db
                    .sequences
                    .emptied(&identity.sequence, |_| session.db.catalog.remove_table(&table.name))?,
                None => session.db.catalog.remove_table(&table.name)?,
            };
            session.db.inmemory.drop_segment(table.object_id);
            let ctx = session.access_context();
            segments::drop_segment(&ctx, &table)?;
            for index in indexes {
                segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name)?;
            }
            Ok(())
        },
    )?;
    Ok(QueryResult::message(StatementKind::Ddl, "Table dropped."))
}

/// Drops the foreign keys of `children` (tables and their constraints) that refer to
/// table `parent`, each child table held exclusively while its definition changes.
fn drop_foreign_keys(
    session: &Session,
    parent: &str,
    children: &[(Arc<crate::catalog::TableDef>, crate::catalog::ConstraintDef)],
) -> Result<()> {
    let mut done: Vec<u32> = Vec::new();
    for (child, _) in children {
        if done.contains(&child.object_id) {
            continue;
        }
        done.push(child.object_id);
        let locks = session.db.locks.table(child.object_id);
        let _exclusive = exclusive(&locks, &child.name)?;
        let Some(current) = session.db.catalog.table(&child.name).filter(|t| t.object_id == child.object_id) else {
            continue;
        };
        let mut changed = (*current).clone();
        changed.constraints.retain(
            |c| !matches!(&c.kind, crate::catalog::ConstraintKind::ForeignKey { parent: p, .. } if p == parent),
        );
        session.db.catalog.alter_table(changed, Vec::new(), &[])?;
    }
    Ok(())
}

/// DROP of each of `names` (objects of `kind`): `find` gives an object's table (its
/// object id and name) and the object, or nothing when there is none (an error, or
/// skipped under IF EXISTS); `drop` then runs with that table's locks held exclusively.
pub(super) fn drop_each<T>(
    session: &Session,
    names: &[String],
    if_exists: bool,
    kind: &'static str,
    find: impl Fn(&str) -> Option<((u32, String), T)>,
    drop: impl Fn(T) -> Result<()>,
) -> Result<()> {
    for name in names {
        let name = name.clone();
        let Some(((table_object_id, table_name), object)) = find(&name) else {
            if if_exists {
                continue;
            }
            return Err(Error::UnknownObject { kind, name });
        };
        let locks = session.db.locks.table(table_object_id);
        let _exclusive = exclusive(&locks, &table_name)?;
        drop(object)?;
    }
    Ok(())
}

/// How long DDL waits for the statements running on its table to end (Oracle's
/// `ddl_lock_timeout`, there 0 by default: DDL never waits on a transaction).
const DDL_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

pub(super) type Exclusive<'l> = (parking_lot::RwLockWriteGuard<'l, ()>, parking_lot::MutexGuard<'l, ()>);

/// The table's locks, exclusively, for TRUNCATE or DROP: refused at once if another
/// transaction has uncommitted changes in it (Oracle's ORA-00054), and after
/// [`DDL_LOCK_WAIT`] if statements on it do not end. It waits for the statements that
/// read or change rows first (an UPDATE may be waiting for a row lock held by a
/// transaction whose next statement inserts), and only then for the inserter.
pub(super) fn exclusive<'l>(locks: &'l crate::txn::locks::TableLocks, table: &str) -> Result<Exclusive<'l>> {
    let busy = |why: String| Error::Transaction { message: format!("resource busy: {table} {why}") };
    let changed = |locks: &crate::txn::locks::TableLocks| match locks.changers.lock().first() {
        Some(xid) => Err(busy(format!("has uncommitted changes of transaction {xid}; commit or roll it back first"))),
        None => Ok(()),
    };
    changed(locks)?;
    let waited = format!("is in use by statements that did not end within {} s", DDL_LOCK_WAIT.as_secs());
    let invisible = locks.visibility.try_write_for(DDL_LOCK_WAIT).ok_or_else(|| busy(waited.clone()))?;
    let writer = locks.writer.try_lock_for(DDL_LOCK_WAIT).ok_or_else(|| busy(waited))?;
    changed(locks)?;
    Ok((invisible, writer))
}

/// ALTER TABLE name INMEMORY ... / NO INMEMORY: records the attributes and starts (or
/// stops) the table's population. The table's units are dropped either way: a changed
/// MEMCOMPRESS or column list is populated again.
pub fn alter_inmemory(
    session: &Session,
    name: &str,
    clause: Option<super::front::InMemoryClause>,
) -> Result<QueryResult> {
    let table =
        session.db.catalog.table(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.into() })?;
    let spec = match clause {
        None => None,
        Some(c) => {
            let mut excluded = Vec::new();
            for column in &c.excluded {
                let i = table.column_index(column).ok_or_else(|| Error::UnknownName {
                    kind: "column",
                    name: format!("{}.{column}", table.name),
                    position: None,
                })?;
                excluded.push(i);
            }
            Some(crate::catalog::InMemorySpec { compression: c.compression, priority: c.priority, excluded })
        }
    };
    TableDef { inmemory: spec.clone(), ..(*table).clone() }.check_attributes()?;
    // Scans of the table finish first: none finds a segment the catalog no longer marks.
    let locks = session.db.locks.table(table.object_id);
    let visible = locks.visibility.write();
    let table = session.db.catalog.set_inmemory(&table.name, spec)?;
    session.db.inmemory.drop_segment(table.object_id);
    std::mem::drop(visible);
    let on = session.db.parameters.read().get_u64(crate::instance::params::INMEMORY_SIZE) > 0;
    if on
        && table.inmemory.as_ref().is_some_and(|s| s.priority > crate::catalog::Priority::None)
        && let Some(segment) = session.db.inmemory.segment_for(&table)
    {
        session.db.inmemory.queue_plan(&segment);
        crate::inmemory::populate::ensure_workers(&*session.db);
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table altered."))
}

/// EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT: one row, Oracle's return code and its name.
pub fn populate_wait(
    session: &Session,
    priority: crate::catalog::Priority,
    percentage: f64,
    timeout_seconds: f64,
) -> Result<QueryResult> {
    let timeout = std::time::Duration::from_secs_f64(timeout_seconds.min(1e9));
    let ctx = session.access_context();
    // The workers' counters over the wait count for the statement that waited for them.
    let counting = session.stats().counting_helpers();
    let counted_before = counting.then(|| crate::inmemory::populate::population_counts(&session.db.inmemory));
    let outcome = crate::inmemory::populate::populate_wait(&*session.db, &ctx, priority, percentage, timeout)?;
    if let Some(before) = counted_before {
        let after = crate::inmemory::populate::population_counts(&session.db.inmemory);
        session.stats().add_helper_counts(&after.since(&before));
    }
    Ok(QueryResult::rows(
        StatementKind::Query,
        vec!["POPULATE_WAIT".into(), "MEANING".into()],
        vec![vec![crate::types::Datum::Int(outcome.code()), crate::types::Datum::string(outcome.meaning())]],
    ))
}

pub fn truncate(session: &Session, t: &ast::Truncate) -> Result<QueryResult> {
    for target in &t.table_names {
        let name = single_name(&target.name)?;
        let table = session
            .db
            .catalog
            .table(&name)
            .ok_or_else(|| Error::UnknownObject { kind: "table", name: name.clone() })?;
        let locks = session.db.locks.table(table.object_id);
        let _exclusive = exclusive(&locks, &table.name)?;
        let referring = super::foreign_keys::referencing(session, &table.name)
            .into_iter()
            .find(|(child, fk)| fk.enabled && child.object_id != table.object_id);
        if let Some((_, fk)) = referring {
            return Err(Error::KeyReferenced {
                code: 2266,
                what: "unique/primary keys in table referenced by enabled foreign keys".into(),
                foreign_key: super::row_checks::qualified(&fk.name),
            });
        }
        let ctx = session.access_context();
        // The units are of rows that are gone; a marked table is populated again from
        // what is loaded next.
        session.db.inmemory.drop_segment(table.object_id);
        segments::truncate_segment(&ctx, &table)?;
        // Each index starts over empty in a new segment with a new data object id, as
        // Oracle's TRUNCATE gives one; the old segment is freed once the dictionary points
        // at the new one.
        for index in session.db.catalog.indexes_of(table.object_id) {
            let object_id = session.db.catalog.next_object_id();
            let segment_header = crate::index::create_segment(&ctx, object_id)?;
            let emptied = crate::catalog::IndexDef { object_id, segment_header, ..(*index).clone() };
            if let Err(e) = session.db.catalog.replace_index(emptied) {
                let _ = segments::drop_object_segment(&ctx, object_id, segment_header, &index.name);
                return Err(e);
            }
            segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name)?;
        }
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table truncated."))
}

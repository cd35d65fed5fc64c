//! CREATE TABLE, DROP TABLE (and its indexes), TRUNCATE TABLE (its indexes emptied into
//! new segments with new data object ids, as Oracle's TRUNCATE). Each takes the table
//! exclusively ([`exclusive`]), which CREATE and DROP INDEX (`index_ddl`) share; DROP and
//! TRUNCATE also take the table out of the column store.
//!
//! ALTER TABLE ... INMEMORY / NO INMEMORY records the attributes and starts or stops the
//! table's population, waiting only for the scans running on it; POPULATE_WAIT waits for
//! the workers.

use super::bind::{function_name, ident_name, position_of};
use crate::access::row_view::RowAccess;
use crate::access::segments;
use crate::catalog::{ColumnDef, TableDef};
use crate::error::{Error, Result};
use crate::instance::Session;
use crate::sql::front::Clauses;
use crate::sql::{QueryResult, StatementKind};
use crate::storage::hcc::HccLevel;
use crate::storage::row::MAX_COLUMNS;
use crate::types::DataType;
use sqlparser::ast::{self, CharacterLength, ColumnOption, DataType as AstType, ExactNumberInfo, ObjectType};

/// PCTFREE when CREATE TABLE does not say (Oracle's default).
const DEFAULT_PCTFREE: u8 = 10;

/// CREATE TABLE, with columns or AS SELECT; COMPRESS FOR a level makes the rows of AS
/// SELECT a direct-path load into compression units, as Oracle's Hybrid Columnar
/// Compression does (rows inserted later go to ordinary row blocks).
pub fn create_table(session: &Session, create: &ast::CreateTable, clauses: Clauses) -> Result<QueryResult> {
    if let Some(c) = create.constraints.first() {
        return Err(Error::unsupported(format!("table constraint {c}")));
    }
    if create.or_replace || create.temporary || create.external || create.global.is_some() || create.if_not_exists {
        return Err(Error::unsupported("CREATE [OR REPLACE | GLOBAL TEMPORARY | EXTERNAL] TABLE or IF NOT EXISTS"));
    }
    let name = new_object_name(&create.name, "table")?;
    if session.db.catalog.table(&name).is_some() {
        return Err(Error::ObjectExists { kind: "table", name });
    }
    let columns = match &create.query {
        Some(_) if !create.columns.is_empty() => {
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
                columns.push(column);
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
    let table = TableDef {
        name,
        object_id,
        columns,
        pctfree: clauses.pctfree.unwrap_or(DEFAULT_PCTFREE),
        segment_header,
        created: crate::types::local_now(),
        stats: None,
        inmemory: None,
        compression: clauses.compress.flatten(),
    };
    // The segment is not reachable until the dictionary holds the table: if that fails
    // (a concurrent CREATE of the same name, a failed write), its extents are freed again.
    if let Err(e) = session.db.catalog.add_table(table.clone()) {
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

/// Oracle's reserved words (SQL Language Reference, "Oracle SQL Reserved Words"): none
/// names a new table or index unless quoted.
const RESERVED_WORDS: &[&str] = &[
    "ACCESS",
    "ADD",
    "ALL",
    "ALTER",
    "AND",
    "ANY",
    "AS",
    "ASC",
    "AUDIT",
    "BETWEEN",
    "BY",
    "CHAR",
    "CHECK",
    "CLUSTER",
    "COLUMN",
    "COMMENT",
    "COMPRESS",
    "CONNECT",
    "CREATE",
    "CURRENT",
    "DATE",
    "DECIMAL",
    "DEFAULT",
    "DELETE",
    "DESC",
    "DISTINCT",
    "DROP",
    "ELSE",
    "EXCLUSIVE",
    "EXISTS",
    "FILE",
    "FLOAT",
    "FOR",
    "FROM",
    "GRANT",
    "GROUP",
    "HAVING",
    "IDENTIFIED",
    "IMMEDIATE",
    "IN",
    "INCREMENT",
    "INDEX",
    "INITIAL",
    "INSERT",
    "INTEGER",
    "INTERSECT",
    "INTO",
    "IS",
    "LEVEL",
    "LIKE",
    "LOCK",
    "LONG",
    "MAXEXTENTS",
    "MINUS",
    "MLSLABEL",
    "MODE",
    "MODIFY",
    "NOAUDIT",
    "NOCOMPRESS",
    "NOT",
    "NOWAIT",
    "NULL",
    "NUMBER",
    "OF",
    "OFFLINE",
    "ON",
    "ONLINE",
    "OPTION",
    "OR",
    "ORDER",
    "PCTFREE",
    "PRIOR",
    "PUBLIC",
    "RAW",
    "RENAME",
    "RESOURCE",
    "REVOKE",
    "ROW",
    "ROWID",
    "ROWNUM",
    "ROWS",
    "SELECT",
    "SESSION",
    "SET",
    "SHARE",
    "SIZE",
    "SMALLINT",
    "START",
    "SUCCESSFUL",
    "SYNONYM",
    "SYSDATE",
    "TABLE",
    "THEN",
    "TO",
    "TRIGGER",
    "UID",
    "UNION",
    "UNIQUE",
    "UPDATE",
    "USER",
    "VALIDATE",
    "VALUES",
    "VARCHAR",
    "VARCHAR2",
    "VIEW",
    "WHENEVER",
    "WHERE",
    "WITH",
];

/// The name of a new `kind` (table, index): one name, not an unquoted reserved word.
pub(super) fn new_object_name(name: &ast::ObjectName, kind: &str) -> Result<String> {
    let single = single_name(name)?;
    match name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)]
            if i.quote_style.is_none() && RESERVED_WORDS.contains(&single.as_str()) =>
        {
            Err(Error::Parse {
                message: format!("invalid {kind} name: {single} is a reserved word (quote it to use it as a name)"),
                position: position_of(name),
            })
        }
        _ => Ok(single),
    }
}

pub(super) fn single_name(name: &ast::ObjectName) -> Result<String> {
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
    let mut nullable = true;
    for option in &c.options {
        match &option.option {
            ColumnOption::NotNull => nullable = false,
            ColumnOption::Null => nullable = true,
            other => {
                return Err(Error::Unsupported {
                    construct: format!("column option {other} on {name}"),
                    position: None,
                });
            }
        }
    }
    let data_type =
        data_type(&c.data_type).map_err(|message| Error::InvalidValue { context: name.clone(), message })?;
    Ok(ColumnDef { name, data_type, nullable })
}

/// Maps a declared type to lioscope's types; `Err` says why it is not accepted.
pub(super) fn data_type(t: &AstType) -> std::result::Result<DataType, String> {
    match t {
        AstType::Int(_) | AstType::Integer(_) => Ok(DataType::Integer),
        AstType::Numeric(info) | AstType::Decimal(info) => number_type(info_args(info)),
        AstType::Varchar(len) | AstType::CharVarying(len) | AstType::Nvarchar(len) => string_type(len, true),
        AstType::Char(len) | AstType::Character(len) => string_type(len, false),
        AstType::Date => Ok(DataType::Date),
        AstType::Custom(name, args) => match function_name(name).as_str() {
            "NUMBER" => {
                let parsed: std::result::Result<Vec<i64>, _> = args.iter().map(|a| a.trim().parse::<i64>()).collect();
                number_type(
                    parsed.map_err(|_| {
                        format!("NUMBER({}) has a precision or scale that is not a number", args.join(","))
                    })?,
                )
            }
            "VARCHAR2" | "NVARCHAR2" => {
                if args.first().is_some_and(|a| a.to_ascii_uppercase().ends_with("CHAR")) {
                    return Err(
                        "lengths in characters (n CHAR) are not supported: lioscope lengths are bytes (n BYTE)".into(),
                    );
                }
                let n = args.first().and_then(|a| a.split_whitespace().next()?.parse::<u64>().ok());
                match n {
                    Some(n) => string_type(&Some(CharacterLength::IntegerLength { length: n, unit: None }), true),
                    None => Err("VARCHAR2 needs a length, e.g. VARCHAR2(20)".into()),
                }
            }
            other => Err(format!("data type {other} is not supported")),
        },
        other => Err(format!("data type {other} is not supported")),
    }
}

fn info_args(info: &ExactNumberInfo) -> Vec<i64> {
    match info {
        ExactNumberInfo::None => vec![],
        ExactNumberInfo::Precision(p) => vec![*p as i64],
        ExactNumberInfo::PrecisionAndScale(p, s) => vec![*p as i64, *s],
    }
}

fn number_type(args: Vec<i64>) -> std::result::Result<DataType, String> {
    let check_p = |p: i64| {
        if (1..=38).contains(&p) { Ok(p as u8) } else { Err(format!("NUMBER precision {p} is outside 1..38")) }
    };
    match args.as_slice() {
        [] => Ok(DataType::Number { precision: None, scale: None }),
        [p] => Ok(DataType::Number { precision: Some(check_p(*p)?), scale: Some(0) }),
        [p, s] => {
            let p = check_p(*p)?;
            let max_scale = i64::from(crate::types::MAX_NUMBER_DIGITS);
            if !(0..=i64::from(p)).contains(s) || *s > max_scale {
                return Err(format!(
                    "NUMBER scale {s} is outside 0..{} (lioscope stores scales up to {max_scale})",
                    i64::from(p).min(max_scale)
                ));
            }
            Ok(DataType::Number { precision: Some(p), scale: Some(*s as u8) })
        }
        _ => Err("NUMBER takes at most a precision and a scale".into()),
    }
}

fn string_type(len: &Option<CharacterLength>, varying: bool) -> std::result::Result<DataType, String> {
    let n = match len {
        Some(CharacterLength::IntegerLength { unit: Some(ast::CharLengthUnits::Characters), .. }) => {
            return Err("lengths in characters (n CHAR) are not supported: lioscope lengths are bytes (n BYTE)".into());
        }
        Some(CharacterLength::IntegerLength { length, .. }) => *length,
        Some(CharacterLength::Max) => return Err("MAX lengths are not supported; give a length up to 4000".into()),
        None if varying => return Err("VARCHAR2 needs a length, e.g. VARCHAR2(20)".into()),
        None => 1,
    };
    if n == 0 || n > u64::from(crate::types::MAX_STRING_BYTES) {
        return Err(format!("length {n} is outside 1..{}", crate::types::MAX_STRING_BYTES));
    }
    let n = n as u32;
    Ok(if varying { DataType::Varchar2 { max_bytes: n } } else { DataType::Char { len: n } })
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
        return Err(Error::unsupported("DROP TABLE ... CASCADE"));
    }
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
            let (_, indexes) = session.db.catalog.remove_table(&table.name)?;
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

/// DROP of each of `names` (objects of `kind`): `find` gives an object's table (its
/// object id and name) and the object, or nothing when there is none (an error, or
/// skipped under IF EXISTS); `drop` then runs with that table's locks held exclusively.
pub(super) fn drop_each<T>(
    session: &Session,
    names: &[ast::ObjectName],
    if_exists: bool,
    kind: &'static str,
    find: impl Fn(&str) -> Option<((u32, String), T)>,
    drop: impl Fn(T) -> Result<()>,
) -> Result<()> {
    for name in names {
        let name = single_name(name)?;
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

/// ALTER TABLE name MOVE [COMPRESS FOR level | NOCOMPRESS]: the table's live rows copied
/// into a new segment (a new data object id, as Oracle's MOVE gives), compressed into
/// units by a direct-path load at the level named (or the table's own, when none is), or
/// as rows; its indexes rebuilt on the new rowids; the dictionary switched to the new
/// segments in one change; the old segments freed. The table is held exclusively
/// throughout (a transaction with changes to it makes the MOVE fail as busy).
///
/// Durability: the new rows are in the log (a row load commits, a direct-path load's redo
/// is flushed) before the dictionary names them; a crash before the switch leaves the
/// table as it was (the new segments' space is lost until the database is recreated, as
/// a failed CREATE TABLE's would be).
pub fn alter_table_move(session: &Session, name: &str, compress: Option<Option<HccLevel>>) -> Result<QueryResult> {
    let table =
        session.db.catalog.table(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.into() })?;
    let level = compress.unwrap_or(table.compression);
    TableDef { compression: level, ..(*table).clone() }.check_attributes()?;
    let locks = session.db.locks.table(table.object_id);
    let exclusive_lock = exclusive(&locks, &table.name)?;
    let ctx = session.access_context();
    let old_indexes = session.db.catalog.indexes_of(table.object_id);
    let object_id = session.db.catalog.next_object_id();
    let segment_header = segments::create_segment(&ctx, object_id)?;
    let moved = TableDef { object_id, segment_header, compression: level, stats: None, ..(*table).clone() };
    let mut new_indexes: Vec<crate::catalog::IndexDef> = Vec::new();
    let outcome = (|| -> Result<()> {
        copy_rows(session, &table, &moved)?;
        for index in &old_indexes {
            let object_id = session.db.catalog.next_object_id();
            let segment_header = crate::index::create_segment(&ctx, object_id)?;
            let mut def = crate::catalog::IndexDef {
                object_id,
                segment_header,
                table_object_id: moved.object_id,
                stats: None,
                ..(**index).clone()
            };
            new_indexes.push(def.clone());
            def.stats = Some(super::index_ddl::build_for(session, &moved, &def)?);
            *new_indexes.last_mut().expect("pushed") = def;
        }
        let redo = &session.db.redo;
        {
            let _wait = ctx.stats.begin_wait(crate::stats::WaitEvent::LogFileSync);
            redo.wait_flushed(redo.last_appended(), true)?;
        }
        session.db.catalog.replace_table(moved.clone(), new_indexes.clone())
    })();
    if let Err(e) = outcome {
        let _ = segments::drop_object_segment(&ctx, moved.object_id, moved.segment_header, &moved.name);
        for index in &new_indexes {
            let _ = segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name);
        }
        return Err(e);
    }
    std::mem::drop(exclusive_lock);
    session.db.inmemory.drop_segment(table.object_id);
    segments::drop_object_segment(&ctx, table.object_id, table.segment_header, &table.name)?;
    for index in &old_indexes {
        segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name)?;
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Table altered."))
}

/// Copies the live rows of `from` into `to` (a new segment of the same table) and commits
/// them: a direct-path load into the new segment, in `to`'s format.
fn copy_rows(session: &Session, from: &TableDef, to: &TableDef) -> Result<()> {
    let ctx = session.access_context();
    let width = from.columns.len();
    let mut values: Vec<crate::types::Value> = Vec::with_capacity(width);
    let copied = super::dml::with_load(session, to, crate::access::load::LoadPath::NewSegment, |load| {
        for_each_live_row_locked(&ctx, from, |row| {
            values.clear();
            for c in 0..width {
                values.push(row.column(c)?.into_owned());
            }
            load.insert(&values)
        })
    });
    if let Err(e) = copied {
        super::transaction::rollback(session, None)?;
        return Err(e);
    }
    super::transaction::commit(session, Default::default()).map(|_| ())
}

/// Hands every live row of `table` (its compression units' and its row blocks') to `f`,
/// for a caller that holds the table's visibility lock.
fn for_each_live_row_locked(
    ctx: &crate::access::AccessContext<'_>,
    table: &TableDef,
    f: impl FnMut(&crate::access::BlockRow<'_>) -> Result<()>,
) -> Result<()> {
    struct EachRow<F>(F);
    impl<F: FnMut(&crate::access::BlockRow<'_>) -> Result<()>> crate::access::full_scan::ScanConsumer for EachRow<F> {
        fn batch(&mut self, batch: &crate::access::row_view::BlockBatch<'_>) -> Result<crate::access::Flow> {
            for i in 0..batch.len() {
                (self.0)(&batch.row(i))?;
            }
            Ok(crate::access::Flow::Continue)
        }
        fn row(&mut self, row: &crate::access::BlockRow<'_>) -> Result<crate::access::Flow> {
            (self.0)(row)?;
            Ok(crate::access::Flow::Continue)
        }
        fn row_in_place(&mut self, _row: crate::access::row_view::WalkedRow<'_>) -> Result<crate::access::Flow> {
            unreachable!("rows_in_place is false: the scan hands whole batches")
        }
    }
    let needed = vec![true; table.columns.len()];
    crate::access::full_scan::FullScan::new(table, &needed).run_locked(ctx, &mut EachRow(f))
}

//! CREATE [UNIQUE] INDEX and DROP INDEX (refused for the index a primary or unique key
//! is enforced with, ORA-02429).
//!
//! CREATE INDEX takes the table exclusively, as TRUNCATE does (refused while another
//! transaction has uncommitted changes in it; queries and changes of the table wait for
//! the build), reads every row with one full scan through the buffer cache (multiblock
//! reads; a compressed table's compression units decompressed as the scan meets them,
//! each row keyed by its rowid in the unit, see [`crate::access::cu::scan`]), encodes each
//! row's key straight into the build's sort (no allocation per row) and builds the B-tree bottom-up from the sorted entries ([`crate::index::Builder`]):
//! the sort stays in memory within the session's `sort_area_size`, else spills sorted runs
//! to a temporary file in the database directory, removed when the build ends. The
//! build's statistics (blevel, leaf blocks, distinct keys, clustering factor) go into the
//! dictionary with the index, as Oracle gathers them when it creates an index. The
//! segment is reachable only once the dictionary holds the index; a failed build frees it.

use super::ddl::{exclusive, new_object_name, single_name};
use crate::access::Flow;
use crate::access::full_scan::ScanConsumer;
use crate::access::{BlockBatch, BlockRow, RowAccess, WalkedRow};
use crate::catalog::{IndexDef, TableDef};
use crate::error::{Error, Result};
use crate::index::sort::SortArea;
use crate::index::{self, Builder, RowId};
use crate::instance::{Session, params};
use crate::sql::{QueryResult, StatementKind};
use crate::types::DataType;
use sqlparser::ast;

/// PCTFREE of an index's leaves when the statement names none (Oracle's default).
const DEFAULT_INDEX_PCTFREE: u8 = 10;
/// Most columns an index key may have (Oracle's limit).
const MAX_KEY_COLUMNS: usize = 32;

pub fn create_index(session: &Session, create: &ast::CreateIndex, pctfree: Option<u8>) -> Result<QueryResult> {
    if create.using.is_some()
        || create.concurrently
        || create.r#async
        || !create.include.is_empty()
        || create.nulls_distinct.is_some()
        || !create.with.is_empty()
        || create.predicate.is_some()
        || !create.index_options.is_empty()
        || !create.alter_options.is_empty()
    {
        return Err(Error::unsupported(format!("CREATE INDEX clause in: {create}")));
    }
    let name = create
        .name
        .as_ref()
        .ok_or_else(|| Error::Parse { message: "CREATE INDEX needs an index name".into(), position: None })
        .and_then(|n| new_object_name(n, "index"))?;
    let table_name = single_name(&create.table_name)?;
    let table = session
        .db
        .catalog
        .table(&table_name)
        .ok_or_else(|| Error::UnknownObject { kind: "table", name: table_name.clone() })?;
    if session.db.catalog.index(&name).is_some() && create.if_not_exists {
        return Ok(QueryResult::message(StatementKind::Ddl, "Index created."));
    }
    if session.db.catalog.index(&name).is_some() {
        return Err(Error::ObjectExists { kind: "index", name });
    }
    if session.db.catalog.table(&name).is_some() {
        return Err(Error::ObjectExists { kind: "table", name });
    }
    if session.db.catalog.view(&name).is_some() {
        return Err(Error::ObjectExists { kind: "view", name });
    }
    let columns = key_columns(&table, &create.columns)?;
    let locks = session.db.locks.table(table.object_id);
    let _exclusive = exclusive(&locks, &table.name)?;
    // The snapshot is taken once the table is ours: rows committed while CREATE INDEX
    // waited for the lock are read too.
    let ctx = session.access_context();
    let object_id = session.db.catalog.next_object_id();
    let segment_header = index::create_segment(&ctx, object_id)?;
    let mut def = IndexDef {
        name,
        table: table.name.clone(),
        table_object_id: table.object_id,
        object_id,
        segment_header,
        columns,
        unique: create.unique,
        pctfree: pctfree.unwrap_or(DEFAULT_INDEX_PCTFREE),
        created: crate::types::local_now(),
        stats: None,
    };
    let area = SortArea {
        memory: usize::try_from(session.parameter_u64(params::SORT_AREA_SIZE)).unwrap_or(usize::MAX),
        dir: &session.db.dir,
        io: &*session.db.io,
    };
    let built = build(&ctx, &table, &def, area);
    let added = built.and_then(|stats| {
        def.stats = Some(stats);
        session.db.catalog.add_index(def.clone())
    });
    if let Err(e) = added {
        let _ = crate::access::segments::drop_object_segment(&ctx, object_id, segment_header, &def.name);
        return Err(e);
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Index created."))
}

/// The key columns, as positions among the table's columns.
fn key_columns(table: &TableDef, columns: &[ast::IndexColumn]) -> Result<Vec<usize>> {
    if columns.len() > MAX_KEY_COLUMNS {
        return Err(Error::value(
            "CREATE INDEX",
            format!("{} columns: an index has at most {MAX_KEY_COLUMNS}", columns.len()),
        ));
    }
    let mut out = Vec::new();
    for c in columns {
        let ast::Expr::Identifier(ident) = &c.column.expr else {
            return Err(Error::unsupported(format!(
                "index on the expression {} (function-based index)",
                c.column.expr
            )));
        };
        if matches!(c.column.options.sort, Some(ast::OrderBySort::Desc))
            || c.column.options.nulls_first.is_some()
            || c.operator_class.is_some()
        {
            return Err(Error::unsupported(format!(
                "index column {} (descending, NULLS FIRST/LAST or an operator class)",
                c.column
            )));
        }
        let name = super::bind::ident_name(ident);
        let i = table.column_index(&name).ok_or_else(|| Error::UnknownName {
            kind: "column",
            name: format!("{}.{name}", table.name),
            position: super::bind::position_of(&c.column.expr),
        })?;
        if out.contains(&i) {
            return Err(Error::value(format!("{}.{name}", table.name), "column listed twice in the index"));
        }
        out.push(i);
    }
    Ok(out)
}

/// Reads every row into the build of `def` (rows whose key columns are all NULL have no
/// entry), then writes the index.
fn build(
    ctx: &crate::access::AccessContext<'_>,
    table: &TableDef,
    def: &IndexDef,
    area: SortArea<'_>,
) -> Result<crate::catalog::IndexStats> {
    let mut needed = vec![false; table.columns.len()];
    def.columns.iter().for_each(|&c| needed[c] = true);
    let types = def.key_types(table);
    let builder = Builder::new(def, ctx.space.block_size, area);
    let mut collector = Collector { columns: &def.columns, types, builder, stats: ctx.stats };
    crate::access::full_scan::FullScan::new(table, &needed).run_locked(ctx, &mut collector)?;
    collector.builder.finish(ctx)
}

/// Hands each row's key to the build.
struct Collector<'d> {
    columns: &'d [usize],
    types: Vec<DataType>,
    builder: Builder<'d>,
    stats: &'d crate::stats::SessionStats,
}

impl Collector<'_> {
    fn add(&mut self, row: &BlockRow<'_>) -> Result<()> {
        let (columns, types) = (self.columns, &self.types);
        self.builder.add(self.stats, RowId { rdba: row.rdba, slot: row.slot }, |key| {
            let mut any = false;
            for (&c, &t) in columns.iter().zip(types) {
                let value = row.column(c)?;
                any |= !value.is_null();
                index::key::encode_value(&value, t, key)?;
            }
            Ok(any)
        })
    }
}

impl ScanConsumer for Collector<'_> {
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow> {
        for i in 0..batch.len() {
            self.add(&batch.row(i))?;
        }
        Ok(Flow::Continue)
    }

    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow> {
        self.add(row)?;
        Ok(Flow::Continue)
    }

    fn row_in_place(&mut self, _row: WalkedRow<'_>) -> Result<Flow> {
        unreachable!("rows_in_place is false: the scan hands whole batches")
    }
}

/// DROP INDEX name.
pub fn drop_index(session: &Session, names: &[ast::ObjectName], if_exists: bool) -> Result<QueryResult> {
    let names = names.iter().map(super::ddl::single_name).collect::<Result<Vec<_>>>()?;
    super::ddl::drop_each(
        session,
        &names,
        if_exists,
        "index",
        |name| {
            let index = session.db.catalog.index(name)?;
            Some(((index.table_object_id, index.table.clone()), index))
        },
        |index| {
            let table = session.db.catalog.table(&index.table).filter(|t| t.object_id == index.table_object_id);
            let enforced = table.as_ref().and_then(|t| {
                t.constraints.iter().find(|c| c.kind.key_index().and_then(|k| k.index.as_ref()) == Some(&index.name))
            });
            if let Some(c) = enforced {
                return Err(Error::IndexEnforcesKey { index: index.name.clone(), constraint: c.name.clone() });
            }
            session.db.catalog.remove_index(&index.name)?;
            let ctx = session.access_context();
            crate::access::segments::drop_object_segment(&ctx, index.object_id, index.segment_header, &index.name)
        },
    )?;
    Ok(QueryResult::message(StatementKind::Ddl, "Index dropped."))
}

/// Builds `def` (its segment created) on `table` from the table's rows: an index rebuilt
/// for a table whose rows moved (ALTER TABLE MOVE), under the caller's exclusive lock.
pub(super) fn build_for(session: &Session, table: &TableDef, def: &IndexDef) -> Result<crate::catalog::IndexStats> {
    let area = SortArea {
        memory: usize::try_from(session.parameter_u64(params::SORT_AREA_SIZE)).unwrap_or(usize::MAX),
        dir: &session.db.dir,
        io: &*session.db.io,
    };
    build(&session.access_context(), table, def, area)
}

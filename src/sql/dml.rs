//! INSERT (VALUES or SELECT) and COPY FROM a CSV file.
//!
//! A statement's rows are coerced to the column types (never truncated) and appended by
//! an [`Inserter`]; if any row fails, the statement's rows are removed again, so a failed
//! INSERT or COPY leaves the table as it was. Rows are not copied on the way: a row of
//! INSERT ... SELECT borrows from the projection that computed it, a COPY row from the
//! read buffer of [`CsvRecords`], and a [`RowEncoder`] writes it straight into its
//! stored form. A row the encoder refuses is built again the generic way
//! ([`RowShape::build`]: coerced values, then NOT NULL), whose error names the column.
//! Two cases gather owned rows first: the evaluated rows of a VALUES list, and a query
//! that reads the table it fills. Column counts are checked once per query or VALUES
//! row; coercion and NOT NULL once per row stored. When the table has indexes, the
//! inserter keeps the rows' rowids and [`super::index_maintenance`] adds their entries
//! once the rows are in their blocks, within the statement.

use super::bind::{Binder, Scope, function_name, ident_name, position_of};
use super::csv_records::CsvRecords;
use super::plan;
use super::row_encoder::{RowEncoder, Unencodable};
use crate::access::heap::Inserter;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::exec::pipeline::{ConsumeRow, SINK_INLINE_COLUMNS, SinkRow};
use crate::exec::run_pipeline;
use crate::expr::batch::BatchRow;
use crate::expr::functions::FunctionContext;
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::types::{Datum, Value};
use smallvec::SmallVec;
use sqlparser::ast::{self, CopyLegacyOption, CopyOption, CopySource, CopyTarget};
use std::path::PathBuf;
use std::sync::Arc;

/// Where each provided value goes: `targets[i]` is the table column of value `i`.
struct RowShape {
    table: Arc<TableDef>,
    targets: Vec<usize>,
}

impl RowShape {
    fn new(session: &Session, name: &ast::ObjectName, columns: &[ast::ObjectName]) -> Result<RowShape> {
        let table_name = function_name(name);
        let table = session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
            kind: "table",
            name: table_name.clone(),
            position: position_of(name),
        })?;
        let targets = if columns.is_empty() {
            (0..table.columns.len()).collect()
        } else {
            let mut targets = Vec::new();
            for c in columns {
                let col = function_name(c);
                let i = table.column_index(&col).ok_or_else(|| Error::UnknownName {
                    kind: "column",
                    name: format!("{}.{col}", table.name),
                    position: position_of(c),
                })?;
                if targets.contains(&i) {
                    return Err(Error::value(&col, "column listed twice"));
                }
                targets.push(i);
            }
            targets
        };
        Ok(RowShape { table, targets })
    }

    /// Checks that a statement provides one value per target column (once per query or
    /// VALUES row, not per row produced).
    fn check_count(&self, provided: usize) -> Result<()> {
        if provided == self.targets.len() {
            return Ok(());
        }
        Err(Error::value(&self.table.name, format!("{provided} values for {} columns", self.targets.len())))
    }

    /// Builds the full table row from the provided values, one per target column,
    /// coerced and checked; the row borrows the values' strings.
    fn build<'v>(&self, values: impl Iterator<Item = Datum<'v>>) -> std::result::Result<SinkRow<'v>, RowFault> {
        let mut row: SinkRow<'v> = smallvec::smallvec![Datum::Null; self.table.columns.len()];
        for (value, (v, &i)) in values.zip(&self.targets).enumerate() {
            let col = &self.table.columns[i];
            row[i] = col.data_type.coerce(v, &col.name).map_err(|error| RowFault::Coerce { value, error })?;
        }
        match row.iter().zip(&self.table.columns).position(|(v, col)| v.is_null() && !col.nullable) {
            Some(column) => Err(RowFault::NullInNotNull { column }),
            None => Ok(row),
        }
    }

    /// An encoder of this shape's rows.
    fn encoder(&self) -> RowEncoder {
        RowEncoder::new(&self.table, &self.targets)
    }

    /// Inserts one row of provided values: encoded in place, or, when the encoder refuses
    /// it, built the generic way so that the error names the table and column.
    fn insert(&self, encoder: &mut RowEncoder, ins: &mut Inserter<'_>, values: &[Datum<'_>]) -> Result<()> {
        match encoder.encode_values(values) {
            Ok(image) => ins.insert_encoded(image),
            Err(Unencodable) => ins.insert(&self.row(values)?),
        }
    }

    /// [`RowShape::build`] for INSERT, whose errors name the table and column.
    fn row<'v>(&self, values: &'v [Datum<'_>]) -> Result<SinkRow<'v>> {
        debug_assert_eq!(values.len(), self.targets.len(), "counts are checked per statement");
        self.build(values.iter().map(Datum::reborrow)).map_err(|fault| match fault {
            RowFault::Coerce { error, .. } => qualify(&self.table.name, error),
            RowFault::NullInNotNull { column } => Error::value(
                format!("{}.{}", self.table.name, self.table.columns[column].name),
                "cannot insert NULL into a NOT NULL column",
            ),
        })
    }
}

/// Why a row cannot be stored.
enum RowFault {
    /// Provided value `value` (0-based) does not fit its column.
    Coerce { value: usize, error: Error },
    /// Table column `column` (0-based) is NOT NULL and got no value.
    NullInNotNull { column: usize },
}

/// Names the table in a value error about one of its columns ("T.NAME: ...").
pub(super) fn qualify(table: &str, e: Error) -> Error {
    match e {
        Error::InvalidValue { context, message } => {
            Error::InvalidValue { context: format!("{table}.{context}"), message }
        }
        other => other,
    }
}

/// Runs `fill` with an inserter for `table`; rolls the statement back if it fails.
pub(super) fn with_inserter(
    session: &Session,
    table: &TableDef,
    fill: impl FnOnce(&mut Inserter<'_>) -> Result<()>,
) -> Result<u64> {
    let ctx = session.access_context();
    let (xid, fixed_snapshot) = {
        let mut txn = session.txn.borrow_mut();
        let xid = txn.xid(&ctx, session.sid())?;
        txn.changes_table(&ctx, table.object_id);
        (xid, txn.snapshot)
    };
    let mut inserter = Inserter::new(&ctx, table, xid, fixed_snapshot)?;
    let indexes = super::index_maintenance::TableIndexes::of(session, table);
    if indexes.is_some() {
        inserter.track_rowids();
    }
    match fill(&mut inserter) {
        Ok(()) => {
            let rowids = inserter.take_rowids();
            let (rows, blocks) = inserter.finish()?;
            {
                let mut txn = session.txn.borrow_mut();
                blocks.into_iter().for_each(|rdba| txn.touched(&ctx, rdba));
            }
            // The rows are in their blocks: their index entries follow (a failure here
            // fails the statement, whose rollback removes the rows too).
            if let Some(indexes) = indexes {
                indexes.rows_inserted(session, table, &rowids)?;
            }
            Ok(rows)
        }
        Err(e) => match inserter.rollback() {
            Ok(()) => Err(e),
            Err(undo) => Err(Error::UndoFailed { statement: Box::new(e), undo: Box::new(undo) }),
        },
    }
}

pub fn insert(session: &Session, insert: &ast::Insert) -> Result<QueryResult> {
    let ast::TableObject::TableName(name) = &insert.table else {
        return Err(Error::unsupported("INSERT into a table function"));
    };
    if insert.returning.is_some()
        || insert.on.is_some()
        || insert.or.is_some()
        || insert.ignore
        || insert.overwrite
        || insert.partitioned.is_some()
    {
        return Err(Error::unsupported("INSERT clause (RETURNING, ON CONFLICT, IGNORE, OVERWRITE, PARTITION)"));
    }
    let shape = RowShape::new(session, name, &insert.columns)?;
    let Some(source) = &insert.source else { return Err(Error::unsupported("INSERT without VALUES or SELECT")) };
    let table = shape.table.clone();
    let hints: Vec<&str> = insert.optimizer_hints.iter().map(|h| h.text.as_str()).collect();
    let direct = super::optimizer::hints::parse(&hints).append();
    let rows = match &*source.body {
        ast::SetExpr::Select(_) | ast::SetExpr::Query(_) | ast::SetExpr::SetOperation { .. }
            if direct && table.compression.is_some() =>
        {
            insert_direct(session, &shape, source)?
        }
        ast::SetExpr::Values(values) => {
            let rows = values_rows(session, values)?;
            rows.iter().try_for_each(|r| shape.check_count(r.len()))?;
            let mut encoder = shape.encoder();
            with_inserter(session, &table, |ins| rows.iter().try_for_each(|r| shape.insert(&mut encoder, ins, r)))?
        }
        _ => insert_select(session, &shape, source)?,
    };
    Ok(inserted(rows))
}

/// The result of a statement that inserted `rows` rows.
fn inserted(rows: u64) -> QueryResult {
    let message = if rows == 1 { "1 row created.".into() } else { format!("{rows} rows created.") };
    QueryResult {
        kind: StatementKind::Insert,
        columns: Vec::new(),
        rows: Vec::new(),
        rows_affected: rows,
        message: Some(message),
        plan_statistics: None,
    }
}

/// Evaluates the rows of a VALUES list (constant expressions).
fn values_rows(session: &Session, values: &ast::Values) -> Result<Vec<Vec<Value>>> {
    let mut f = super::function_context(session);
    let scope = Scope::default();
    let context = f.clone();
    let binder = Binder { scope: &scope, f: &context, grouping: None };
    let empty: &[Value] = &[];
    values
        .rows
        .iter()
        .map(|row| row.iter().map(|e| binder.bind(e)?.eval(empty, &mut f).map(Datum::into_owned)).collect())
        .collect()
}

/// INSERT ... SELECT: rows stream from the query into the table, except when the query
/// reads the table being filled; then they are gathered first (the query sees the table
/// as it was when the statement began, as in Oracle).
fn insert_select(session: &Session, shape: &RowShape, query: &ast::Query) -> Result<u64> {
    let functions = super::function_context(session);
    let planned = plan::plan_query(query, session, &functions)?;
    shape.check_count(planned.columns.len())?;
    let mut ctx = super::exec_context(session, functions);
    let reads_target = planned.source.reads_table(shape.table.object_id);
    let mut encoder = shape.encoder();
    if reads_target {
        let rows = run_pipeline(&planned.source, planned.stages, &mut ctx)?;
        return with_inserter(session, &shape.table, |ins| {
            rows.iter().try_for_each(|r| shape.insert(&mut encoder, ins, r))
        });
    }
    with_inserter(session, &shape.table, |ins| {
        let planned = planned.into_sink(Box::new(InsertSink { shape, encoder, ins }));
        run_pipeline(&planned.source, planned.stages, &mut ctx).map(|_| ())
    })
}

/// `INSERT /*+ APPEND */ ... SELECT` into a compressed table: a direct-path load of the
/// query's rows into new compression units above the high-water mark, inside the
/// session's transaction (its undo makes the units' rows invisible to others until it
/// commits, and deleted if it rolls back), then their index entries. The query reads the
/// table as it was: the units are above the high-water mark until the load ends.
fn insert_direct(session: &Session, shape: &RowShape, query: &ast::Query) -> Result<u64> {
    let level = shape.table.compression.expect("a compressed table");
    let planned = plan_rows_to_load(session, shape, query)?;
    let access = session.access_context();
    let xid = {
        let mut txn = session.txn.borrow_mut();
        let xid = txn.xid(&access, session.sid())?;
        txn.changes_table(&access, shape.table.object_id);
        xid
    };
    let loader = crate::inmemory::hcc::HccLoader::in_transaction(&access, &shape.table, level, xid)?;
    let loaded = load_units(session, shape, planned, loader)?;
    {
        let mut txn = session.txn.borrow_mut();
        loaded.units.iter().for_each(|&(head, _)| txn.touched(&access, head));
    }
    access.stats.add(crate::stats::Stat::RowsInserted, loaded.rows);
    if let Some(indexes) = super::index_maintenance::TableIndexes::of(session, &shape.table) {
        let rowids: Vec<crate::storage::row::PieceAddr> = loaded
            .units
            .iter()
            .flat_map(|&(rdba, rows)| (0..rows).map(move |r| crate::storage::row::PieceAddr { rdba, slot: r as u16 }))
            .collect();
        indexes.rows_inserted(session, &shape.table, &rowids)?;
    }
    Ok(loaded.rows)
}

/// The plan of `query`, whose rows go into the shape's table, with the functions its
/// execution evaluates in.
fn plan_rows_to_load<'p>(
    session: &Session,
    shape: &RowShape,
    query: &ast::Query,
) -> Result<(plan::Planned<'p>, FunctionContext)> {
    let functions = super::function_context(session);
    let planned = plan::plan_query(query, session, &functions)?;
    shape.check_count(planned.columns.len())?;
    Ok((planned, functions))
}

/// Runs a planned query into `loader`, a direct-path load into new compression units of
/// the shape's table, each row coerced and checked as an INSERT's is.
fn load_units(
    session: &Session,
    shape: &RowShape,
    (planned, functions): (plan::Planned<'_>, FunctionContext),
    mut loader: crate::inmemory::hcc::HccLoader<'_, '_>,
) -> Result<crate::inmemory::hcc::Loaded> {
    let mut ctx = super::exec_context(session, functions);
    {
        let sink = |values: &[Datum<'_>]| -> Result<()> { loader.push(&shape.row(values)?) };
        let planned = planned.into_sink(Box::new(sink));
        run_pipeline(&planned.source, planned.stages, &mut ctx)?;
    }
    loader.finish()
}

/// Where INSERT ... SELECT hands its rows: each encoded and appended.
struct InsertSink<'s, 'i, 'a> {
    shape: &'s RowShape,
    encoder: RowEncoder,
    ins: &'i mut Inserter<'a>,
}

impl ConsumeRow for InsertSink<'_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.shape.insert(&mut self.encoder, self.ins, values)
    }

    /// A row of a batch is encoded from its cells; one the encoder refuses is built the
    /// generic way from its values, whose error names the column.
    fn consume_batch_row(&mut self, row: BatchRow<'_>) -> Result<()> {
        match self.encoder.encode_cells(&row) {
            Ok(image) => self.ins.insert_encoded(image),
            Err(Unencodable) => {
                let values: SinkRow<'_> = (0..row.len()).map(|c| row.datum(c)).collect();
                self.ins.insert(&self.shape.row(&values)?)
            }
        }
    }
}

/// Loads the rows of `query` into `table`, just created by CREATE TABLE ... AS SELECT, and
/// commits them: a direct-path load into compression units when the table is compressed
/// (no undo: they become part of the table when the segment header moves its high-water
/// mark, at the end), else rows inserted as INSERT ... SELECT inserts them. Either way a
/// row is coerced and checked as an INSERT's is.
pub(super) fn load_new_table(session: &Session, table: &TableDef, query: &ast::Query) -> Result<u64> {
    let table = session.db.catalog.table(&table.name).filter(|t| t.object_id == table.object_id).ok_or_else(|| {
        Error::Transaction { message: format!("table {} was dropped while it was being created", table.name) }
    })?;
    let shape = RowShape { targets: (0..table.columns.len()).collect(), table };
    let Some(level) = shape.table.compression else {
        let inserted = super::transaction::statement(session, || insert_select(session, &shape, query).map(inserted))?;
        super::transaction::commit(session, Default::default())?;
        return Ok(inserted.rows_affected);
    };
    let planned = plan_rows_to_load(session, &shape, query)?;
    let access = session.access_context();
    let loader = crate::inmemory::hcc::HccLoader::new(&access, &shape.table, level)?;
    let loaded = load_units(session, &shape, planned, loader)?;
    // The load's redo reaches the log before the statement returns, as a commit's does:
    // a table acknowledged as created keeps its rows whatever crashes next.
    let redo = &session.db.redo;
    {
        let _wait = access.stats.begin_wait(crate::stats::WaitEvent::LogFileSync);
        redo.wait_flushed(redo.last_appended(), true)?;
    }
    Ok(loaded.rows)
}

/// The parts of a COPY statement.
pub struct CopyStatement<'a> {
    pub source: &'a CopySource,
    pub to: bool,
    pub target: &'a CopyTarget,
    pub options: &'a [CopyOption],
    pub legacy_options: &'a [CopyLegacyOption],
    pub values: &'a [Option<String>],
}

/// How to read the CSV file.
struct CsvFormat {
    header: bool,
    delimiter: u8,
    quote: u8,
    null: Option<String>,
}

fn csv_format(options: &[CopyOption]) -> Result<CsvFormat> {
    let mut f = CsvFormat { header: false, delimiter: b',', quote: b'"', null: None };
    for o in options {
        match o {
            CopyOption::Header(h) => f.header = *h,
            CopyOption::Delimiter(c) => f.delimiter = ascii_byte(*c, "DELIMITER")?,
            CopyOption::Quote(c) => f.quote = ascii_byte(*c, "QUOTE")?,
            CopyOption::Null(s) => f.null = Some(s.clone()),
            CopyOption::Format(name) if ident_name(name) == "CSV" => {}
            other => return Err(Error::unsupported(format!("COPY option {other}"))),
        }
    }
    Ok(f)
}

fn ascii_byte(c: char, what: &str) -> Result<u8> {
    u8::try_from(c)
        .ok()
        .filter(u8::is_ascii)
        .ok_or_else(|| Error::value(format!("COPY {what}"), format!("'{c}' is not a single ASCII character")))
}

/// COPY table [(columns)] FROM 'file' [(HEADER, DELIMITER ',', NULL '', QUOTE '"')].
pub fn copy(session: &Session, stmt: CopyStatement<'_>) -> Result<QueryResult> {
    let CopySource::Table { table_name, columns } = stmt.source else {
        return Err(Error::unsupported("COPY (query) TO"));
    };
    let CopyTarget::File { filename } = stmt.target else {
        return Err(Error::unsupported("COPY from STDIN or a program"));
    };
    if stmt.to {
        return Err(Error::unsupported("COPY ... TO a file"));
    }
    if !stmt.legacy_options.is_empty() || !stmt.values.is_empty() {
        return Err(Error::unsupported("COPY legacy options"));
    }
    let column_names: Vec<ast::ObjectName> = columns.iter().map(|c| ast::ObjectName::from(vec![c.clone()])).collect();
    let shape = RowShape::new(session, table_name, &column_names)?;
    let format = csv_format(stmt.options)?;
    let path = PathBuf::from(filename);
    let file = std::fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = CsvRecords::new(file, format.delimiter, format.quote);
    let mut progress = session.state.lock().progress.take();
    let result = with_inserter(session, &shape.table, |ins| {
        load_csv(&mut reader, &shape, &format, &path, total, &mut progress, ins)
    });
    session.state.lock().progress = progress;
    let rows = result?;
    Ok(inserted(rows))
}

fn load_csv<R: std::io::Read>(
    reader: &mut CsvRecords<R>,
    shape: &RowShape,
    format: &CsvFormat,
    path: &std::path::Path,
    total: u64,
    progress: &mut Option<crate::instance::ProgressFn>,
    ins: &mut Inserter<'_>,
) -> Result<()> {
    let mut encoder = shape.encoder();
    let mut first = true;
    while let Some(record) = reader.next_record().map_err(|e| Error::io("read", path, e))? {
        if std::mem::take(&mut first) && format.header {
            continue;
        }
        let csv_error = |column, message| Error::Csv { file: path.to_owned(), line: record.line, column, message };
        let mut fields: SmallVec<[&str; SINK_INLINE_COLUMNS]> = SmallVec::new();
        record.texts(&mut fields).map_err(|i| csv_error(i + 1, "the field is not valid UTF-8".to_owned()))?;
        if fields.len() != shape.targets.len() {
            let message = format!("{} fields, expected {}", fields.len(), shape.targets.len());
            return Err(csv_error(fields.len().min(shape.targets.len()) + 1, message));
        }
        match encoder.encode_texts(&fields, format.null.as_deref()) {
            Ok(image) => ins.insert_encoded(image)?,
            Err(Unencodable) => {
                let row = csv_row(&fields, shape, format).map_err(|(column, e)| csv_error(column, e.to_string()))?;
                ins.insert(&row)?;
            }
        }
        if ins.rows().is_multiple_of(65_536)
            && let Some(p) = progress.as_mut()
        {
            p(record.byte, total);
        }
    }
    if let Some(p) = progress.as_mut() {
        p(total, total);
    }
    Ok(())
}

/// One CSV record as a table row borrowing its fields; `Err((column, error))` names the
/// 1-based field (0 for a NOT NULL column the column list leaves out).
fn csv_row<'r>(
    fields: &[&'r str],
    shape: &RowShape,
    format: &CsvFormat,
) -> std::result::Result<SinkRow<'r>, (usize, Error)> {
    let values = fields.iter().map(|&field| {
        let is_null = field.is_empty() || format.null.as_deref() == Some(field);
        if is_null { Datum::Null } else { Datum::Str(std::borrow::Cow::Borrowed(field)) }
    });
    shape.build(values).map_err(|fault| match fault {
        RowFault::Coerce { value, error } => (value + 1, error),
        RowFault::NullInNotNull { column } => {
            let field = shape.targets.iter().position(|&t| t == column).map_or(0, |f| f + 1);
            (field, Error::value(&shape.table.columns[column].name, "cannot insert NULL into a NOT NULL column"))
        }
    })
}

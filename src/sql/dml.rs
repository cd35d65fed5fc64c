//! INSERT (VALUES or SELECT), COPY FROM a CSV file or from STDIN (the rows the caller
//! gives, `Session::copy_from_reader`), and the rows MERGE inserts ([`insert_values`]).
//! Each needs INSERT on its table; COPY from a file of the server's also needs CREATE ANY
//! DIRECTORY (`authorize`).
//!
//! A statement's rows are coerced to the column types (never truncated) and loaded
//! through `access::load`, which writes them in the table's format: INSERT and COPY into
//! row blocks, `INSERT /*+ APPEND */ ... SELECT` and CREATE TABLE ... AS SELECT by a
//! direct-path load (a compressed table's compression units); if any row fails, the
//! statement's rows are removed again, so a failed INSERT or COPY leaves the table as it
//! was. Rows are not copied on the way: a row of
//! INSERT ... SELECT borrows from the projection that computed it, a COPY row from the
//! read buffer of [`CsvRecords`], and a [`RowEncoder`] writes it straight into its
//! stored form. A row the encoder refuses is built again the generic way
//! ([`RowShape::build`]: coerced values, then NOT NULL), whose error names the column.
//!
//! A table's identity column takes its sequence's next value in each row a statement
//! leaves it to ([`IdentityFill`]): such a row is copied with the value added, and built
//! the generic way for COPY. A VALUES row may read NEXTVAL, once a row.
//! A table with CHECK constraints has every row built that way, and checked
//! ([`RowChecks`]) before it is written. Foreign keys are checked once the rows and
//! their index entries are in (`super::foreign_keys`); APPEND into a table with an
//! enabled foreign key loads the conventional way, as Oracle does.
//! A cursor keeps what a VALUES list was bound to between executions ([`BoundInsert`]),
//! evaluating it anew each time, unless the table's CHECK constraints or identity
//! column hold state of the session.
//! Two cases gather owned rows first: the evaluated rows of a VALUES list, and a query
//! that reads the table it fills. Column counts are checked once per query or VALUES
//! row; coercion and NOT NULL once per row stored. When the table has indexes, the
//! load keeps the rows' rowids and [`super::index_maintenance`] adds their entries
//! once the rows are in their blocks, within the statement.

use super::bind::{Binder, Scope, function_name, ident_name, position_of};
use super::csv_records::CsvRecords;
use super::plan;
use super::row_checks::{RowChecks, column_path};
use super::row_encoder::{RowEncoder, Unencodable};
use crate::access::load::{self, LoadPath, SegmentLoad};
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::exec::downstream::{ConsumeRow, SINK_INLINE_COLUMNS, SinkRow};
use crate::exec::run_pipeline;
use crate::expr::batch::BatchRow;
use crate::expr::{Expr, functions::FunctionContext};
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
    /// The table's enabled CHECK constraints, if it has any: each row is then built the
    /// generic way and checked before it is written.
    checks: Option<RowChecks>,
    /// How the table's identity column gets its values, if the statement leaves any to it.
    identity: Option<IdentityFill>,
}

/// The values a statement leaves to a table's identity column: its sequence's next value
/// for each row, as the last of the row's values (the statement leaves the column out,
/// which is then the last target), or in place of a NULL given for it (`at`, ON NULL).
struct IdentityFill {
    sequence: String,
    source: Arc<dyn crate::expr::functions::SequenceSource>,
    at: Option<usize>,
}

impl RowShape {
    fn new(session: &Session, name: &ast::ObjectName, columns: &[ast::ObjectName]) -> Result<RowShape> {
        let table_name = function_name(name);
        let table = session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
            kind: "table",
            name: table_name.clone(),
            position: position_of(name),
        })?;
        super::privileges::require_on(session, &table.name, crate::catalog::ObjectPrivilege::Insert)?;
        RowShape::of_table(session, table, columns)
    }

    /// The shape of rows of `table` giving values for `columns` (all when empty).
    fn of_table(session: &Session, table: Arc<TableDef>, columns: &[ast::ObjectName]) -> Result<RowShape> {
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
        let checks = RowChecks::of(session, &table)?;
        let mut targets = targets;
        let identity = match &table.identity {
            None => None,
            Some(id) => match targets.iter().position(|&t| t == id.column) {
                Some(_) if id.always => {
                    return Err(Error::InvalidValue {
                        context: column_path(&table.name, &table.columns[id.column].name),
                        message: "ORA-32795: cannot insert into a generated always identity column".into(),
                    });
                }
                Some(at) => id.on_null.then_some(Some(at)),
                None => {
                    targets.push(id.column);
                    Some(None)
                }
            }
            .map(|at| IdentityFill {
                sequence: id.sequence.clone(),
                source: session.sequence_source(),
                at,
            }),
        };
        Ok(RowShape { table, targets, checks, identity })
    }

    /// The number of values a row of the statement provides: one per target, but for an
    /// identity column the statement leaves out.
    fn provided(&self) -> usize {
        self.targets.len() - usize::from(self.identity.as_ref().is_some_and(|f| f.at.is_none()))
    }

    /// Gives the identity column its value in `row` (see [`IdentityFill`]), if the
    /// statement leaves one to it.
    fn fill_identity(&self, row: &mut SinkRow<'_>) -> Result<()> {
        let Some(fill) = &self.identity else { return Ok(()) };
        let next = || fill.source.next_value(&fill.sequence).map(crate::expr::functions::sequence_value);
        match fill.at {
            None => row.push(next()?),
            Some(at) if row[at].is_null() => row[at] = next()?,
            Some(_) => {}
        }
        Ok(())
    }

    /// Whether rows go to `load` encoded by the [`RowEncoder`] (which checks no CHECK
    /// constraint).
    fn encodes(&self, load: &dyn SegmentLoad) -> bool {
        load.takes_encoded() && self.checks.is_none()
    }

    /// Checks that a statement provides one value per target column (once per query or
    /// VALUES row, not per row produced).
    fn check_count(&self, provided: usize) -> Result<()> {
        if provided == self.provided() {
            return Ok(());
        }
        Err(Error::value(&self.table.name, format!("{provided} values for {} columns", self.provided())))
    }

    /// Builds the full table row from the provided values, one per target column,
    /// coerced and checked; the row borrows the values' strings.
    fn build<'v>(&self, values: impl Iterator<Item = Datum<'v>>) -> std::result::Result<SinkRow<'v>, RowFault> {
        let mut row: SinkRow<'v> = smallvec::smallvec![Datum::Null; self.table.columns.len()];
        for (value, (v, &i)) in values.zip(&self.targets).enumerate() {
            let col = &self.table.columns[i];
            row[i] = col.data_type.coerce(v, &col.name).map_err(|error| RowFault::Coerce { value, error })?;
        }
        if let Some(column) = row.iter().zip(&self.table.columns).position(|(v, col)| v.is_null() && !col.nullable) {
            return Err(RowFault::NullInNotNull { column });
        }
        if let Some(checks) = &self.checks {
            checks.check(&row[..]).map_err(RowFault::Constraint)?;
        }
        Ok(row)
    }

    /// An encoder of this shape's rows.
    fn encoder(&self) -> RowEncoder {
        RowEncoder::new(&self.table, &self.targets)
    }

    /// Inserts one row of provided values: encoded in place, or, when the encoder refuses
    /// it, built the generic way so that the error names the table and column.
    fn insert(&self, encoder: &mut RowEncoder, load: &mut dyn SegmentLoad, values: &[Datum<'_>]) -> Result<()> {
        if self.identity.is_some() {
            let mut row: SinkRow<'_> = values.iter().map(Datum::reborrow).collect();
            self.fill_identity(&mut row)?;
            return self.insert_filled(encoder, load, &row);
        }
        self.insert_filled(encoder, load, values)
    }

    /// [`RowShape::insert`] of a row whose identity column has its value.
    fn insert_filled(&self, encoder: &mut RowEncoder, load: &mut dyn SegmentLoad, values: &[Datum<'_>]) -> Result<()> {
        if !self.encodes(load) {
            return load.insert(&self.row(values)?);
        }
        match encoder.encode_values(values) {
            Ok(image) => load.insert_encoded(image),
            Err(Unencodable) => load.insert(&self.row(values)?),
        }
    }

    /// [`RowShape::build`] for INSERT, whose errors name the table and column.
    fn row<'v>(&self, values: &'v [Datum<'_>]) -> Result<SinkRow<'v>> {
        debug_assert_eq!(values.len(), self.targets.len(), "counts are checked per statement");
        self.build(values.iter().map(Datum::reborrow)).map_err(|fault| match fault {
            RowFault::Coerce { error, .. } => qualify(&self.table.name, error),
            RowFault::NullInNotNull { column } => self.null_inserted(column),
            RowFault::Constraint(e) => e,
        })
    }

    /// ORA-01400 for table column `column`.
    fn null_inserted(&self, column: usize) -> Error {
        Error::NullInserted { column: column_path(&self.table.name, &self.table.columns[column].name) }
    }
}

/// Why a row cannot be stored.
enum RowFault {
    /// Provided value `value` (0-based) does not fit its column.
    Coerce { value: usize, error: Error },
    /// Table column `column` (0-based) is NOT NULL and got no value.
    NullInNotNull { column: usize },
    /// A constraint refused the row.
    Constraint(Error),
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

/// Runs `fill` with a load of `table` by `path` in the session's transaction, then adds
/// the rows' index entries; takes the load back if it fails.
pub(super) fn with_load(
    session: &Session,
    table: &TableDef,
    path: LoadPath,
    fill: impl FnOnce(&mut dyn SegmentLoad) -> Result<()>,
) -> Result<u64> {
    let ctx = session.access_context();
    let (xid, fixed_snapshot) = {
        let mut txn = session.txn.borrow_mut();
        let xid = txn.xid(&ctx, session.sid())?;
        txn.changes_table(&ctx, table.object_id);
        (xid, txn.snapshot)
    };
    let foreign_keys = super::foreign_keys::ChildKeys::of(session, table, None)?;
    let mut loading = load::open(&ctx, table, path, xid, fixed_snapshot)?;
    let indexes = super::index_maintenance::TableIndexes::of(session, table);
    if indexes.is_some() || foreign_keys.is_some() {
        loading.track_rowids();
    }
    match fill(loading.as_mut()) {
        Ok(()) => {
            let loaded = loading.finish()?;
            {
                let mut txn = session.txn.borrow_mut();
                loaded.touched.into_iter().for_each(|rdba| txn.touched(&ctx, rdba));
            }
            // The rows are in their blocks: their index entries follow (a failure here
            // fails the statement, whose rollback removes the rows too).
            if let Some(indexes) = indexes {
                indexes.rows_inserted(session, table, &loaded.rowids)?;
            }
            // Then their foreign keys, once the rows and their entries are in: a parent
            // delete that runs from now on finds them (or waits for them).
            if let Some(foreign_keys) = foreign_keys {
                foreign_keys.rows_inserted(session, table, &loaded.rowids)?;
            }
            Ok(loaded.rows)
        }
        Err(e) => match loading.rollback() {
            Ok(()) => Err(e),
            Err(undo) => Err(Error::UndoFailed { statement: Box::new(e), undo: Box::new(undo) }),
        },
    }
}

pub fn insert(session: &Session, insert: &ast::Insert, kept: &mut Option<BoundInsert>) -> Result<QueryResult> {
    let version = super::kept_version(session);
    if let Some(bound) = kept.as_ref().filter(|b| b.version == version) {
        super::privileges::require_on(session, &bound.table.name, crate::catalog::ObjectPrivilege::Insert)?;
        let shape =
            RowShape { table: bound.table.clone(), targets: bound.targets.clone(), checks: None, identity: None };
        let rows = evaluated_rows(&mut super::function_context(session), &bound.rows)?;
        return Ok(inserted(insert_rows(session, &shape, &rows)?));
    }
    *kept = None;
    let name = insert_target(insert)?;
    let shape = RowShape::new(session, name, &insert.columns)?;
    let Some(source) = &insert.source else { return Err(Error::unsupported("INSERT without VALUES or SELECT")) };
    let path = load_path(&shape.table, insert);
    let rows = match &*source.body {
        ast::SetExpr::Values(values) => {
            let mut f = super::function_context(session);
            let (bound, keepable) = bound_values(&f, values)?;
            bound.iter().try_for_each(|r| shape.check_count(r.len()))?;
            let rows = evaluated_rows(&mut f, &bound)?;
            if keepable && shape.checks.is_none() && shape.identity.is_none() {
                let (table, targets) = (shape.table.clone(), shape.targets.clone());
                *kept = Some(BoundInsert { version, table, targets, rows: bound });
            }
            insert_rows(session, &shape, &rows)?
        }
        _ => insert_select(session, &shape, source, path)?,
    };
    Ok(inserted(rows))
}

/// What an INSERT ... VALUES was bound to, kept by its cursor for later executions while
/// the dictionary and parameters are as they were when it was bound (the version of
/// `super::kept_version`): the table, the columns its values go to, and each row's value
/// expressions, evaluated anew at each execution with that execution's bind values.
/// Kept only when it holds nothing of the execution that bound it (SYSDATE folded into a
/// constant) nor of its session (a CHECK constraint's or an identity column's state, in
/// [`RowShape`]); the acting user's privilege on the table is checked at every execution.
pub(crate) struct BoundInsert {
    version: (u64, u64),
    table: Arc<TableDef>,
    targets: Vec<usize>,
    rows: Vec<Vec<Expr>>,
}

/// The table INSERT names, refusing the clauses lioscope does not implement.
pub(super) fn insert_target(insert: &ast::Insert) -> Result<&ast::ObjectName> {
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
    Ok(name)
}

/// Checks INSERT's table and column list, and that rows of each of `widths` values fit
/// them, as the statement checks them; gives the table (for EXPLAIN PLAN).
pub(super) fn checked_insert_table(
    session: &Session,
    name: &ast::ObjectName,
    columns: &[ast::ObjectName],
    widths: &[usize],
) -> Result<Arc<TableDef>> {
    let shape = RowShape::new(session, name, columns)?;
    widths.iter().try_for_each(|&w| shape.check_count(w))?;
    Ok(shape.table)
}

/// How INSERT loads its rows into `table`: APPEND asks for a direct-path load of a
/// query's rows (Oracle ignores it for VALUES, and for a table with an enabled foreign
/// key, whose rows it then inserts the conventional way).
pub(super) fn load_path(table: &TableDef, insert: &ast::Insert) -> LoadPath {
    let hints: Vec<&str> = insert.optimizer_hints.iter().map(|h| h.text.as_str()).collect();
    let has_foreign_key = table
        .constraints
        .iter()
        .any(|c| c.enabled && matches!(c.kind, crate::catalog::ConstraintKind::ForeignKey { .. }));
    let values = insert.source.as_ref().is_some_and(|s| matches!(&*s.body, ast::SetExpr::Values(_)));
    match super::optimizer::hints::parse(&hints).append() && !has_foreign_key && !values {
        true => LoadPath::Direct,
        false => LoadPath::Conventional,
    }
}

/// Inserts `rows`, each `width` values for `columns` of `table` (all of them when none
/// is named), into row blocks; returns how many (MERGE's inserts).
pub(super) fn insert_values(
    session: &Session,
    table: Arc<TableDef>,
    columns: &[ast::ObjectName],
    width: usize,
    rows: &[Vec<Value>],
) -> Result<u64> {
    let shape = RowShape::of_table(session, table, columns)?;
    shape.check_count(width)?;
    if rows.is_empty() {
        return Ok(0);
    }
    insert_rows(session, &shape, rows)
}

/// Inserts `rows` of `shape`'s values, their counts checked, into row blocks.
fn insert_rows(session: &Session, shape: &RowShape, rows: &[Vec<Value>]) -> Result<u64> {
    let mut encoder = shape.encoder();
    with_load(session, &shape.table, LoadPath::Conventional, |load| {
        rows.iter().try_for_each(|r| shape.insert(&mut encoder, load, r))
    })
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

/// Binds the rows of a VALUES list with (a copy of) the statement's function context
/// `f`; whether the binding may be kept (it folded no value of this execution into a
/// constant).
fn bound_values(f: &FunctionContext, values: &ast::Values) -> Result<(Vec<Vec<Expr>>, bool)> {
    let context = f.clone();
    // A VALUES row may read sequences: NEXTVAL moves on once a row.
    context.sequence_refs_allowed.set(true);
    let scope = Scope::default();
    let binder = Binder { scope: &scope, f: &context, grouping: None, subqueries: None };
    let rows = values.rows.iter().map(|row| row.iter().map(|e| binder.bind(e)).collect()).collect::<Result<_>>()?;
    let keepable = *context.taken.borrow() == Default::default();
    Ok((rows, keepable))
}

/// Evaluates the bound rows of a VALUES list (expressions of no column): NEXTVAL moves
/// on once a row.
fn evaluated_rows(f: &mut FunctionContext, rows: &[Vec<Expr>]) -> Result<Vec<Vec<Value>>> {
    let empty: &[Value] = &[];
    rows.iter()
        .map(|bound| {
            let nextvals = crate::expr::functions::nextval_sequences(bound);
            if !nextvals.is_empty() {
                f.start_sequence_row(&nextvals)?;
            }
            bound.iter().map(|e| e.eval(empty, f).map(Datum::into_owned)).collect()
        })
        .collect()
}

/// INSERT ... SELECT, loaded by `path`: rows stream from the query into the table, except
/// when the query reads the table being filled; then they are gathered first (the query
/// sees the table as it was when the statement began, as in Oracle).
fn insert_select(session: &Session, shape: &RowShape, query: &ast::Query, path: LoadPath) -> Result<u64> {
    let functions = super::function_context(session);
    let planned = plan::plan_statement_query(query, session, &functions)?;
    shape.check_count(planned.columns.len())?;
    let mut ctx = super::exec_context(session, functions);
    // The subqueries run first, on the table as it is before the statement writes it.
    crate::exec::query_block::run_init_plans(&planned.init, &mut ctx)?;
    let reads_target = planned.reads_table(shape.table.object_id);
    let mut encoder = shape.encoder();
    if reads_target {
        let rows = run_pipeline(&planned.source, planned.stages, &mut ctx)?;
        return with_load(session, &shape.table, path, |load| {
            rows.iter().try_for_each(|r| shape.insert(&mut encoder, load, r))
        });
    }
    with_load(session, &shape.table, path, |load| {
        let encoded = shape.encodes(load);
        let planned = planned.into_sink(Box::new(InsertSink { shape, encoder, load, encoded }));
        run_pipeline(&planned.source, planned.stages, &mut ctx).map(|_| ())
    })
}

/// Where INSERT ... SELECT hands its rows: each encoded and appended, or handed over as
/// values to a load that takes no encoded rows (`encoded` false).
struct InsertSink<'s, 'l> {
    shape: &'s RowShape,
    encoder: RowEncoder,
    load: &'l mut dyn SegmentLoad,
    encoded: bool,
}

impl ConsumeRow for InsertSink<'_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.shape.insert(&mut self.encoder, self.load, values)
    }

    /// A row of a batch is encoded from its cells; one the encoder refuses is built the
    /// generic way from its values, whose error names the column.
    fn consume_batch_row(&mut self, row: BatchRow<'_>) -> Result<()> {
        if self.shape.identity.is_some() {
            let values: SinkRow<'_> = (0..row.len()).map(|c| row.datum(c)).collect();
            return self.shape.insert(&mut self.encoder, self.load, &values);
        }
        let image = match self.encoded {
            true => self.encoder.encode_cells(&row),
            false => Err(Unencodable),
        };
        match image {
            Ok(image) => self.load.insert_encoded(image),
            Err(Unencodable) => {
                let values: SinkRow<'_> = (0..row.len()).map(|c| row.datum(c)).collect();
                self.load.insert(&self.shape.row(&values)?)
            }
        }
    }
}

/// Loads the rows of `query` into `table`, just created by CREATE TABLE ... AS SELECT, and
/// commits them (the commit's log write makes a table acknowledged as created keep its
/// rows whatever crashes next): a direct-path load into a new segment, each row coerced
/// and checked as an INSERT's is.
pub(super) fn load_new_table(session: &Session, table: &TableDef, query: &ast::Query) -> Result<u64> {
    let table = session.db.catalog.table(&table.name).filter(|t| t.object_id == table.object_id).ok_or_else(|| {
        Error::Transaction { message: format!("table {} was dropped while it was being created", table.name) }
    })?;
    let checks = RowChecks::of(session, &table)?;
    let shape = RowShape { targets: (0..table.columns.len()).collect(), table, checks, identity: None };
    let loaded = super::transaction::statement(session, || {
        insert_select(session, &shape, query, LoadPath::NewSegment).map(inserted)
    })?;
    super::transaction::commit(session, Default::default())?;
    Ok(loaded.rows_affected)
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

/// COPY table [(columns)] FROM 'file' | STDIN [(HEADER, DELIMITER ',', NULL '', QUOTE '"')]: STDIN's rows are
/// those the caller gave (`Session::copy_from_reader`).
pub fn copy(session: &Session, stmt: CopyStatement<'_>) -> Result<QueryResult> {
    let CopySource::Table { table_name, columns } = stmt.source else {
        return Err(Error::unsupported("COPY (query) TO"));
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
    // Where the rows come from, and how many bytes they are (for the progress report).
    let (path, file, total): (PathBuf, Box<dyn std::io::Read>, u64) = match stmt.target {
        CopyTarget::File { filename } => {
            let path = PathBuf::from(filename);
            let file = std::fs::File::open(&path).map_err(|e| Error::io("open", &path, e))?;
            let total = file.metadata().map(|m| m.len()).unwrap_or(0);
            (path, Box::new(file), total)
        }
        CopyTarget::Stdin => {
            let rows = session.copy_input.borrow_mut().take().ok_or_else(|| {
                Error::unsupported("COPY FROM STDIN without rows to read (a client's COPY through the server)")
            })?;
            (PathBuf::from("STDIN"), rows, 0)
        }
        _ => return Err(Error::unsupported("COPY from a program")),
    };
    let mut reader = CsvRecords::new(file, format.delimiter, format.quote);
    let mut progress = session.state.lock().progress.take();
    let result = with_load(session, &shape.table, LoadPath::Conventional, |load| {
        load_csv(&mut reader, &shape, &format, &path, total, &mut progress, load)
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
    load: &mut dyn SegmentLoad,
) -> Result<()> {
    let mut encoder = shape.encoder();
    // A row an identity column takes a value for is built the generic way.
    let encoded = shape.encodes(load) && shape.identity.is_none();
    let mut first = true;
    let mut rows = 0u64;
    while let Some(record) = reader.next_record().map_err(|e| Error::io("read", path, e))? {
        if std::mem::take(&mut first) && format.header {
            continue;
        }
        let csv_error = |column, message| Error::Csv { file: path.to_owned(), line: record.line, column, message };
        let mut fields: SmallVec<[&str; SINK_INLINE_COLUMNS]> = SmallVec::new();
        record.texts(&mut fields).map_err(|i| csv_error(i + 1, "the field is not valid UTF-8".to_owned()))?;
        if fields.len() != shape.provided() {
            let message = format!("{} fields, expected {}", fields.len(), shape.provided());
            return Err(csv_error(fields.len().min(shape.provided()) + 1, message));
        }
        let image = match encoded {
            true => encoder.encode_texts(&fields, format.null.as_deref()),
            false => Err(Unencodable),
        };
        match image {
            Ok(image) => load.insert_encoded(image)?,
            Err(Unencodable) => {
                let row = csv_row(&fields, shape, format).map_err(|(column, e)| csv_error(column, e.to_string()))?;
                load.insert(&row)?;
            }
        }
        rows += 1;
        if rows.is_multiple_of(65_536)
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
    let mut values: SinkRow<'r> = fields
        .iter()
        .map(|&field| {
            let is_null = field.is_empty() || format.null.as_deref() == Some(field);
            if is_null { Datum::Null } else { Datum::Str(std::borrow::Cow::Borrowed(field)) }
        })
        .collect();
    shape.fill_identity(&mut values).map_err(|e| (0, e))?;
    shape.build(values.into_iter()).map_err(|fault| match fault {
        RowFault::Coerce { value, error } => (value + 1, error),
        RowFault::NullInNotNull { column } => {
            let field = shape.targets.iter().position(|&t| t == column).map_or(0, |f| f + 1);
            (field, shape.null_inserted(column))
        }
        RowFault::Constraint(e) => (0, e),
    })
}

//! ALTER TABLE ... MOVE: a table's live rows copied into a new segment, in the format
//! asked for (compressed at a level, or as rows), its indexes rebuilt on the new rowids,
//! and the dictionary switched to the new segments in one change.

use super::ddl::exclusive;
use crate::access::row_view::RowAccess;
use crate::access::segments;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::storage::hcc::HccLevel;

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

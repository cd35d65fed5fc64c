//! Keeping a table's indexes in step with its rows, for INSERT, COPY, UPDATE and DELETE.
//!
//! Inserted rows: the inserter keeps their rowids; when the rows are in their blocks, each
//! is read back by rowid (its own transaction sees it), its keys are encoded, and each
//! index gets its entries sorted by key, so that consecutive inserts go to the same
//! leaves. Changed rows: the statement notes each row's old and new keys when it decides
//! the change, and the rowid once the change is made; then each index whose key changed
//! loses the old entry and gains the new one. Rows whose key columns are all NULL have no
//! entry.
//!
//! Every index change is part of the statement's transaction: a unique violation (or any
//! failure) fails the statement, and its statement-level rollback removes the rows and
//! the entries it added.

use crate::access::by_rowid::RowFetcher;
use crate::access::{AccessContext, RowAccess};
use crate::catalog::{IndexDef, TableDef};
use crate::error::Result;
use crate::index::{self, RowId};
use crate::instance::Session;
use crate::types::{DataType, Datum};
use std::sync::Arc;

/// The indexes of one table, with their key types.
pub struct TableIndexes {
    indexes: Vec<(Arc<IndexDef>, Vec<DataType>)>,
    /// Columns to locate in a row to build every key (one past the last key column).
    width: usize,
}

/// One index's entry for a row before and after a change (`None`: no entry).
pub type KeyChange = (Option<Vec<u8>>, Option<Vec<u8>>);

impl TableIndexes {
    /// The indexes of `table`, or `None` if it has none.
    pub fn of(session: &Session, table: &TableDef) -> Option<TableIndexes> {
        TableIndexes::from_defs(table, session.db.catalog.indexes_of(table.object_id))
    }

    /// The indexes `defs` of `table` (read from the catalog by the caller); `None` if
    /// there are none.
    pub fn from_defs(table: &TableDef, defs: Vec<Arc<IndexDef>>) -> Option<TableIndexes> {
        let indexes: Vec<_> = defs
            .into_iter()
            .map(|ix| {
                let types = ix.key_types(table);
                (ix, types)
            })
            .collect();
        let width = indexes.iter().flat_map(|(ix, _)| ix.columns.iter().map(|c| c + 1)).max()?;
        Some(TableIndexes { indexes, width })
    }

    /// Only the indexes with a key column among `columns` (the columns an UPDATE assigns:
    /// no other index's key can change); `None` if there is none.
    pub fn on_columns(mut self, columns: &[usize]) -> Option<TableIndexes> {
        self.indexes.retain(|(ix, _)| ix.columns.iter().any(|c| columns.contains(c)));
        self.width = self.indexes.iter().flat_map(|(ix, _)| ix.columns.iter().map(|c| c + 1)).max()?;
        Some(self)
    }

    /// Each index's key for a row whose column `c` is `column(c)`.
    pub fn keys<'v>(&self, column: impl Fn(usize) -> Result<Datum<'v>>) -> Result<Vec<Option<Vec<u8>>>> {
        let mut keys = Vec::with_capacity(self.indexes.len());
        let mut values = Vec::new();
        for (ix, types) in &self.indexes {
            values.clear();
            for &c in &ix.columns {
                values.push(column(c)?);
            }
            let mut key = Vec::new();
            keys.push(if index::encode_key(&values, types, &mut key)? { Some(key) } else { None });
        }
        Ok(keys)
    }

    /// Adds the entries of the rows just inserted at `rowids`.
    pub fn rows_inserted(&self, session: &Session, table: &TableDef, rowids: &[RowId]) -> Result<()> {
        let ctx = session.access_context();
        let mut entries: Vec<Vec<(Vec<u8>, RowId)>> = vec![Vec::new(); self.indexes.len()];
        let mut fetcher = RowFetcher::new(&ctx, table, self.width);
        for &rowid in rowids {
            let keys = fetcher.fetch(&ctx, rowid, |row| self.keys(|c| row.column(c)))?;
            let keys =
                keys.ok_or_else(|| ctx.corrupt(rowid.rdba, format!("row {} just inserted is not there", rowid.slot)))?;
            for (i, key) in keys.into_iter().enumerate() {
                if let Some(key) = key {
                    entries[i].push((key, rowid));
                }
            }
        }
        fetcher.release();
        let mut txn = session.txn.borrow_mut();
        for ((ix, _), mut list) in self.indexes.iter().zip(entries) {
            list.sort_unstable();
            for (key, rowid) in list {
                index::insert(&ctx, &mut txn, session.sid(), ix, &key, rowid)?;
            }
        }
        Ok(())
    }

    /// Applies the key changes of changed rows: `changes[i]` is a row's rowid and, per
    /// index, its entry before and after.
    pub fn rows_changed(
        &self,
        ctx: &AccessContext<'_>,
        session: &Session,
        changes: &[(RowId, Vec<KeyChange>)],
    ) -> Result<()> {
        let mut txn = session.txn.borrow_mut();
        // All of an index's old entries go before any new one comes: a statement that
        // moves keys among its rows (`SET id = id + 1`) meets no key it is itself moving.
        for (i, (ix, _)) in self.indexes.iter().enumerate() {
            let moved = changes.iter().filter(|(_, keys)| keys[i].0 != keys[i].1);
            for (rowid, keys) in moved.clone() {
                if let Some(old) = &keys[i].0 {
                    index::delete(ctx, &mut txn, session.sid(), ix, old, *rowid)?;
                }
            }
            let mut added: Vec<(&Vec<u8>, RowId)> =
                moved.filter_map(|(rowid, keys)| keys[i].1.as_ref().map(|k| (k, *rowid))).collect();
            added.sort_unstable();
            for (new, rowid) in added {
                index::insert(ctx, &mut txn, session.sid(), ix, new, rowid)?;
            }
        }
        Ok(())
    }
}

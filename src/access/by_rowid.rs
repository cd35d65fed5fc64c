//! TABLE ACCESS BY ROWID: rows fetched one by one at the addresses an index gave.
//!
//! The fetcher keeps the block of the last row pinned (its consistent version, a CR clone
//! if the snapshot needs one). A row in the same block as the one before is read from
//! the pinned buffer and counts `buffer is pinned count`, no new logical read; a row in
//! another block releases it and takes a consistent get of the new one. So an index
//! whose entries visit the table's blocks in order (a low clustering factor) costs about
//! one logical read a table block, and one in random order about one a row, as in
//! Oracle. A chained or migrated row is followed (`table fetch continued row`).
//!
//! Invariant: a row is handed out only while its block (or the clone it was read from)
//! is pinned, and only if it is a live row head as the snapshot sees it.

use super::AccessContext;
use super::modify::whole_row;
use super::row_view::BlockRow;
use crate::buffer::ReadGuard;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::row::{ColumnSpan, PieceAddr};
use crate::txn::cr::consistent_block;
use crate::types::encoding::PayloadKind;

/// Fetches rows of one table by rowid for one statement.
pub struct RowFetcher<'c> {
    table: &'c TableDef,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    scratch: Vec<u8>,
    /// The block of the last row, as the snapshot sees it.
    pinned: Option<ReadGuard<'c>>,
}

impl<'c> RowFetcher<'c> {
    /// A fetcher locating the first `width` columns of each row.
    pub fn new(table: &'c TableDef, width: usize) -> RowFetcher<'c> {
        let width = width.min(table.columns.len());
        RowFetcher {
            table,
            kinds: table.columns[..width].iter().map(|c| PayloadKind::from(c.data_type)).collect(),
            spans: vec![ColumnSpan::NULL; width],
            scratch: Vec::new(),
            pinned: None,
        }
    }

    /// The row at `rowid` as the statement's snapshot sees it, handed to `f`; `None` if
    /// there is no live row there for the snapshot.
    pub fn fetch<R>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowid: PieceAddr,
        f: impl FnOnce(&BlockRow<'_>) -> Result<R>,
    ) -> Result<Option<R>> {
        ctx.stats.add(Stat::TableFetchByRowid, 1);
        match &self.pinned {
            Some(guard) if guard.rdba() == rowid.rdba => ctx.stats.add(Stat::BufferIsPinned, 1),
            _ => {
                self.pinned = None;
                let current = ctx.db.cache.consistent_get(ctx.stats, rowid.rdba)?;
                ctx.check_table_block(self.table, rowid.rdba, &current)?;
                self.pinned = Some(consistent_block(ctx, current, ctx.reader)?);
            }
        }
        let guard = self.pinned.as_ref().expect("pinned above");
        let slot = usize::from(rowid.slot);
        if slot >= crate::storage::block::DataBlock(guard).row_count() {
            return Ok(None);
        }
        let row = whole_row(ctx, guard, rowid.rdba, slot, &self.kinds, &mut self.spans, &mut self.scratch)?;
        match row {
            Some(row) => f(&row).map(Some),
            None => Ok(None),
        }
    }

    /// Lets go of the pinned block.
    pub fn release(&mut self) {
        self.pinned = None;
    }
}

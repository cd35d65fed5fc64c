//! Row sources: where a pipeline's rows come from.
//!
//! - TABLE ACCESS FULL: a full scan of a table's segment, see [`super::table_scan`].
//! - TABLE ACCESS INMEMORY FULL: see [`super::inmemory_source`].
//! - FAST DUAL: the one row of DUAL, with no block read.
//! - CONNECT BY over DUAL: the row generator `LEVEL` 1..=n.
//! - COLLECTION ITERATOR: `generate_series(start, stop)`.
//! - FIXED TABLE: rows a `v$` view computed when the statement was planned.
//! - INDEX ... SCAN [+ TABLE ACCESS BY INDEX ROWID]: see [`super::index_source`].
//! - HASH JOIN, NESTED LOOPS, MERGE JOIN: see [`super::join`].

use super::ExecContext;
use super::downstream::push_each;
use super::pipeline::{Stage, push};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::types::{Datum, Value};
use std::sync::Arc;

pub enum Source {
    /// `columns_read`: one flag per table column, whether the plan reads it.
    TableScan {
        table: Arc<TableDef>,
        columns_read: Vec<bool>,
    },
    Dual,
    ConnectBy {
        rows: i64,
    },
    Series {
        start: i64,
        stop: i64,
    },
    Rows(Vec<Vec<Value>>),
    /// An index path, with or without table access by rowid.
    Index(Box<super::index_source::IndexAccess>),
    /// TABLE ACCESS INMEMORY FULL.
    InMemory(Box<crate::exec::inmemory_source::InMemoryAccess>),
    /// HASH JOIN, NESTED LOOPS or MERGE JOIN of two inputs.
    Join(Box<super::join::Join>),
}

impl Source {
    /// Whether running the source reads the table with data object id `object_id` (a
    /// statement that fills that table must then gather the rows before it writes).
    pub fn reads_table(&self, object_id: u32) -> bool {
        match self {
            Source::TableScan { table, .. } => table.object_id == object_id,
            Source::Index(access) => access.table.object_id == object_id,
            Source::InMemory(access) => access.table.object_id == object_id,
            Source::Join(join) => join.reads_table(object_id),
            _ => false,
        }
    }

    /// What a row source inside this source did in its last run, if it has one: the
    /// index scan under a table access by rowid, the one row of DUAL under the row
    /// generator.
    pub fn inner_line_figures(&self) -> Option<super::index_source::IndexLineFigures> {
        match self {
            Source::Index(access) => Some(access.figures.get()),
            Source::ConnectBy { .. } => {
                Some(super::index_source::IndexLineFigures { entries: 1, ..Default::default() })
            }
            _ => None,
        }
    }

    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        match self {
            Source::TableScan { table, columns_read } => super::table_scan::run(table, columns_read, None, stages, ctx),
            Source::Index(access) => access.run(stages, ctx),
            Source::InMemory(access) => access.run(stages, ctx),
            Source::Join(join) => join.run(stages, ctx),
            Source::Dual => push(stages, &[Datum::Str("X".into())] as &[Value], &mut ctx.functions).map(|_| ()),
            Source::ConnectBy { rows } => Self::numbers(1, *rows, stages, ctx),
            Source::Series { start, stop } => Self::numbers(*start, *stop, stages, ctx),
            Source::Rows(rows) => {
                push_each(rows, |row| push(stages, row.as_slice(), &mut ctx.functions))?;
                Ok(())
            }
        }
    }

    fn numbers(start: i64, stop: i64, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        if let [Stage::Project(project), Stage::Sink(sink)] = stages
            && project.takes_number_batches()
        {
            return project.push_numbers_to_sink(start, stop, sink, ctx);
        }
        let f = &mut ctx.functions;
        push_each(start..=stop, |n| push(stages, [Datum::Int(n)].as_slice(), f))?;
        Ok(())
    }
}

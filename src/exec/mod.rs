//! Execution: a plan runs as a push pipeline. A source (full scan, in-memory scan, index
//! path, generator, fixed rows) pushes each row through a chain of stages, each of which passes rows on, holds
//! them (sort, aggregate) or stops the source early (limits).
//!
//! ```text
//!  FullScan ──BlockBatch──► Filter ──► Aggregate ┄┄(at finish)┄┄► Project ──► Collect
//! ```
//!
//! Stages are an enum ([`pipeline::Stage`]), each stating what it does with a row in its
//! [`downstream::Push`] (and, only where it differs from the default, with a row built
//! upstream, a block batch or the end of its input) and seeing the stages after it only
//! as a [`downstream::Downstream`], so no stage's file needs the enum that names them
//! all; `push` is generic over the row type, so a row
//! still inside its pinned block goes through filters and aggregates without being
//! copied out; rows are materialised only by the stages that must (project, sort, group). A full scan pushes
//! a block's rows together ([`pipeline::push_batch`]): filters narrow a selection vector
//! and aggregates fold it in tight loops, so stage dispatch is paid per block, not per
//! row. For the plan shape of a filtered count, a [`kernel::CountKernel`] does the whole
//! per-row work inside the scan loop (and on rows fetched by rowid). One file per stage,
//! and one per scan source: `source` (the sources a plan names, and the generators),
//! [`table_scan`] (the full scan feeding the pipeline), [`index_source`] (the index
//! paths), [`inmemory_source`] (the column store's scan), `cu_feed` (the compression
//! units a full scan of a compressed table meets); [`unit_scan`] is what the last two do
//! with one columnar unit, [`run`] runs a whole pipeline, and [`probe`] is the stage
//! that measures row-source statistics between two others. The joins ([`join`]) keep
//! rows within the statement's [`workarea`] and spill beyond it ([`temp_rows`]); a hash
//! join's [`join_filter`] drops, in its probe input's scan, the rows that cannot join. A
//! query inside a query (a view, a set operation's branch, a subquery) runs as a
//! [`query_block`], and analytic functions as the [`window`] stage. The
//! pipeline evaluates expressions of the layer below (`expr`) and reads rows through
//! `access`, `index` and `inmemory`; it knows no `Session`: an [`ExecContext`] is made
//! from the parts of one.

pub mod aggregate;
mod collect;
pub mod filter;
mod cu_feed;
pub mod downstream;
pub mod index_source;
pub mod inmemory_source;
pub mod join;
pub mod join_filter;
mod join_key;
pub mod kernel;
mod limit;
pub mod pipeline;
pub mod probe;
mod project;
pub mod query_block;
mod rownum;
pub mod run;
mod sort;
pub mod table_scan;
mod unit_group;
pub mod unit_scan;
mod source;
pub mod temp_rows;
pub mod window;
pub mod workarea;

pub use aggregate::AggregateStage;
pub use collect::CollectStage;
pub use downstream::RowSink;
pub use filter::FilterStage;
pub use limit::LimitStage;
pub use pipeline::Stage;
pub use probe::ProbeStage;
pub use project::ProjectStage;
pub use rownum::RownumStage;
pub use run::run_pipeline;
pub use sort::{SortKey, SortStage};
pub use source::Source;

use crate::access::AccessContext;
use crate::catalog::Catalog;
use crate::expr::functions::FunctionContext;
use crate::inmemory::InMemoryStore;

/// What a running statement needs.
pub struct ExecContext<'a> {
    pub access: AccessContext<'a>,
    /// The dictionary as it is now: a scan checks that its object was not dropped or
    /// rebuilt since the plan was made.
    pub catalog: &'a Catalog,
    /// The column store, for in-memory scans.
    pub inmemory: &'a InMemoryStore,
    pub functions: FunctionContext,
    /// Helper threads the statement may use beside its session's own
    /// (`parallel_max_servers`, and none on a machine with one CPU).
    pub helpers: usize,
    /// The memory a hash join's table may take, and where it spills beyond it
    /// (unbounded until the session's parameters say otherwise).
    pub workarea: workarea::WorkArea<'a>,
    /// Whether the statement gathers row-source statistics (a probe at each plan line):
    /// then a join also measures what pushing its rows up took while an input ran, so
    /// that the input's line leaves it out.
    pub row_source_statistics: bool,
}

impl<'a> ExecContext<'a> {
    /// A context for plans run inside this statement's run, once for each row of an outer
    /// input (a nested loop's inner side, a correlated subquery): the same statement, its
    /// own function context (a copy of this one's), and no helper threads.
    pub fn for_inner_runs(&self) -> ExecContext<'a> {
        ExecContext {
            access: self.access,
            catalog: self.catalog,
            inmemory: self.inmemory,
            functions: self.functions.clone(),
            helpers: 0,
            workarea: self.workarea,
            row_source_statistics: self.row_source_statistics,
        }
    }

    /// The context of a statement that reads through `access`, finds its objects in
    /// `catalog` and `inmemory`, with the functions' context `functions`, allowed
    /// `parallel_max_servers` helper threads (fewer when the machine has fewer other CPUs).
    pub fn new(
        access: AccessContext<'a>,
        catalog: &'a Catalog,
        inmemory: &'a InMemoryStore,
        functions: FunctionContext,
        parallel_max_servers: u64,
    ) -> ExecContext<'a> {
        let helpers =
            usize::try_from(parallel_max_servers).unwrap_or(usize::MAX).min(crate::stats::osstat::usable_cpus() - 1);
        ExecContext {
            access,
            catalog,
            inmemory,
            functions,
            helpers,
            workarea: workarea::WorkArea::unbounded(),
            row_source_statistics: false,
        }
    }
}

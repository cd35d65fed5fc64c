//! TABLE ACCESS INMEMORY FULL: a full scan that answers from the column store's units
//! what they hold for the statement's snapshot, and reads the rest from the buffer cache.
//!
//! ```text
//!  units usable at the snapshot ── rows not in journaled blocks ── predicates on the
//!       │                            (a bitmap per unit)          encoded columns (SIMD)
//!       │                                                                │
//!       │               aggregate-only plan: popcounts, codes ◄──────┤
//!       │                              any other plan: rows read ◄───────┘ → stages
//!  buffer cache: journaled blocks, units not usable, blocks no unit covers → full scan
//! ```
//!
//! Conjuncts of the WHERE clause that compare a column with a literal (`=`, `<`, `<=`,
//! `>`, `>=`, BETWEEN, IN, IS \[NOT\] NULL) are evaluated on the encoded values; min/max
//! of a unit's column prune the unit when they show no row can match, and skip the
//! codes of a column they show every row passes (unless the `NO_INMEMORY_PRUNING` hint:
//! then every conjunct reads its codes). A plan that only aggregates without GROUP BY
//! (COUNT(*), COUNT, SUM and AVG of whole numbers, MIN and MAX of a column) over conjuncts
//! that all run on the encoded values never decodes a row: counts come from the bitmaps,
//! sums from the codes (`base × count + Σ codes` under frame of reference), MIN and MAX
//! from the smallest and largest code kept. Any other plan gets the kept rows, read in
//! place from the unit, and filters them again by the WHERE clause, so results never
//! depend on which conjuncts ran where. What a scan does with one unit
//! ([`super::unit_scan`]: predicates, folds or rows) is shared with the scan of a compressed table's units
//! ([`super::cu_feed`]).

use super::unit_scan::{Shape, UnitScan, pruned, unit_predicates};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::exec::{ExecContext, Stage};
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::imcu::Imcu;
use crate::inmemory::simd::Isa;
use crate::stats::Stat;
use crate::storage::segment::ExtentRun;
use std::sync::Arc;

/// An in-memory full scan, ready to run.
#[derive(Debug)]
pub struct InMemoryAccess {
    pub table: Arc<TableDef>,
    /// Table columns the plan reads.
    pub columns_read: Vec<bool>,
    /// Whether min/max may skip units.
    pub prune: bool,
}

/// A unit the scan uses, and the blocks of it the scan reads from the cache instead.
struct UsableUnit {
    imcu: Arc<Imcu>,
    journaled: Vec<u32>,
}

impl InMemoryAccess {
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        // DDL that frees the table's blocks waits for the whole scan (the cache part takes
        // the lock again, recursively).
        let locks = ctx.access.locks.table(self.table.object_id);
        let _visible = locks.visibility.read_recursive();
        // The table as it is now: a table no longer INMEMORY (or dropped) since planning
        // gets no segment.
        let current = ctx.catalog.table(&self.table.name).filter(|t| t.object_id == self.table.object_id);
        let Some(segment) = current.as_ref().and_then(|t| ctx.inmemory.segment_for(t)) else {
            return super::table_scan::run(&self.table, &self.columns_read, None, stages, ctx);
        };
        let snapshot = ctx.access.reader.snapshot;
        let stats = ctx.access.stats;
        let _inmemory = stats.activity().enter(crate::stats::activity::flags::IN_INMEMORY_QUERY, 0);
        stats.add(Stat::ImScanSegments, 1);
        // What the units hold for this snapshot; the rest goes to the cache.
        let mut usable = Vec::new();
        let mut cache_blocks: Vec<u32> = Vec::new();
        let units: Vec<_> = segment.units.read().clone();
        let mut unpopulated = false;
        for unit in &units {
            let state = unit.state.lock();
            match &state.imcu {
                Some(imcu) if imcu.population_scn <= snapshot => {
                    let journaled: Vec<u32> = state.journal.blocks.iter().copied().collect();
                    cache_blocks.extend(journaled.iter().map(|&b| unit.blocks[b as usize]));
                    usable.push(UsableUnit { imcu: imcu.clone(), journaled });
                }
                other => {
                    unpopulated |= other.is_none() && !state.queued;
                    cache_blocks.extend_from_slice(&unit.blocks);
                }
            }
        }
        // Blocks no unit covers: the table grew since it was planned (or never was).
        let map = crate::access::segments::read_map(&ctx.access, &self.table)?;
        let all_runs = map.scan_runs(ctx.access.space.extent_blocks);
        // From the units this scan took: a unit planned since is read from the cache.
        let planned = units.last().map_or(0, |u| u.first_position as usize + u.blocks.len());
        let total: usize = all_runs.iter().map(|r| r.blocks as usize).sum();
        if total > planned || unpopulated {
            // Population on first access (PRIORITY NONE), or of what was added since.
            ctx.inmemory.queue_plan(&segment);
            ctx.inmemory.start_workers();
        }
        cache_blocks.extend(all_runs.iter().flat_map(|r| r.first..r.first + r.blocks).skip(planned));

        let shape = Shape::of(stages, &ctx.functions.binds);
        let isa = Isa::best();
        let mut stopped = false;
        for unit in &usable {
            if stopped {
                break;
            }
            stats.check_interrupt()?;
            let imcu = &unit.imcu;
            stats.add(Stat::ImScanCus, 1);
            let predicates = unit_predicates(imcu, &shape);
            if self.prune && pruned(imcu, &predicates) {
                stats.add(Stat::ImScanCusPruned, 1);
                continue;
            }
            let mut keep = Bitmap::all(imcu.rows);
            let mut journal_rows = 0u64;
            for &b in &unit.journaled {
                let (from, to) = (imcu.block_rows[b as usize] as usize, imcu.block_rows[b as usize + 1] as usize);
                keep.clear_range(from..to);
                journal_rows += (to - from) as u64;
            }
            stats.add(Stat::ImScanRows, imcu.rows as u64);
            stats.add(Stat::ImScanRowsValid, imcu.rows as u64 - journal_rows);
            stats.add(Stat::ImScanRowsJournal, journal_rows);
            let unit = UnitScan { imcu, predicates: &predicates, shape: &shape };
            stopped = unit.run(&mut keep, isa, self.prune, stages, &mut ctx.functions)?;
        }
        if stopped {
            return Ok(());
        }
        stats.add(Stat::ImScanBlocksCache, cache_blocks.len() as u64);
        if cache_blocks.is_empty() {
            return Ok(());
        }
        // Units in order, each one's journal in block order, then the tail: scan order.
        let runs = ExtentRun::adjacent(&cache_blocks);
        super::table_scan::run(&self.table, &self.columns_read, Some(runs), stages, ctx)
    }
}

/// Whether every column `columns_read` marks is held in memory for `table` (a column
/// left out with NO INMEMORY makes the table's scans row-store scans).
pub fn columns_in_memory(table: &TableDef, columns_read: &[bool]) -> bool {
    table
        .inmemory
        .as_ref()
        .is_some_and(|spec| columns_read.iter().enumerate().all(|(c, &read)| !read || !spec.excluded.contains(&c)))
}

//! Instance recovery at open, as Oracle's SMON does it: roll forward, then roll back.
//!
//! 1. **Roll forward** (before anything reads a block): apply every redo record from the
//!    control file's checkpoint position to the end of the log through the buffer cache,
//!    with redo not yet attached, so nothing is logged twice. Images and new blocks are
//!    not read first, so a block torn on disk is rebuilt from its image.
//! 2. Write every block recovery changed and sync the datafiles; start a new log
//!    sequence in the next group and take a checkpoint at its start: the redo just
//!    applied is never needed again, and a torn tail of the old log is never appended to.
//! 3. **Space map**: the control file's record of which extents are in use is only as
//!    new as its last checkpoint, so after a crash it is rebuilt from the dictionary and
//!    the segment headers recovery brought up to date.
//! 4. **Transaction recovery**: every transaction the transaction tables still show
//!    active died with the instance; each is rolled back from its undo and ended, so its
//!    rows are unlocked and its undo blocks can be reused.
//!
//! What was done is kept ([`RecoveryReport`]) for the shell's banner, `v$recovery_progress`
//! and `v$sysstat` (the `SMON` session that ran it counts the records and blocks applied
//! and the transactions rolled back).

use super::DbInner;
use crate::error::Result;
use crate::redo::{Lsn, RedoLog, reader};
use crate::stats::{SessionStats, Stat};
use std::collections::BTreeSet;
use std::time::Instant;

/// What instance recovery did at open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Whether the database was shut down uncleanly (there was redo to apply).
    pub needed: bool,
    pub log_files: u64,
    pub redo_records: u64,
    pub redo_bytes: u64,
    /// Distinct blocks redo was applied to.
    pub blocks: u64,
    pub transactions_rolled_back: u64,
    pub roll_forward_ms: u64,
    pub elapsed_ms: u64,
}

impl RecoveryReport {
    /// One line for the shell's banner, or `None` after a clean shutdown.
    pub fn summary(&self) -> Option<String> {
        self.needed.then(|| {
            format!(
                "Instance recovery: {} redo records ({:.1} MB) applied to {} blocks, {} transactions rolled back, {} ms.",
                self.redo_records,
                self.redo_bytes as f64 / 1e6,
                self.blocks,
                self.transactions_rolled_back,
                self.elapsed_ms
            )
        })
    }
}

/// Roll forward: applies the redo from `checkpoint` through the cache of `db`'s parts;
/// returns the report so far, the highest SCN in the redo and the newest sequence.
pub(super) fn roll_forward(
    cache: &crate::buffer::BufferCache,
    redo: &RedoLog,
    checkpoint: Lsn,
    stats: &SessionStats,
) -> Result<(RecoveryReport, u64, u32)> {
    let start = Instant::now();
    let mut blocks = BTreeSet::new();
    let mut highest_scn = 0;
    let end = reader::scan(&redo.sequences(), checkpoint, |_, _, record| {
        highest_scn = highest_scn.max(record.scn);
        for vector in &record.vectors {
            cache.apply_redo(stats, vector)?;
            blocks.insert(vector.rdba);
        }
        stats.add(Stat::RedoRecordsApplied, 1);
        Ok(())
    })?;
    stats.add(Stat::RecoveryBlocksApplied, blocks.len() as u64);
    let report = RecoveryReport {
        needed: end.records > 0,
        log_files: end.files,
        redo_records: end.records,
        redo_bytes: end.bytes,
        blocks: blocks.len() as u64,
        roll_forward_ms: start.elapsed().as_millis() as u64,
        ..Default::default()
    };
    Ok((report, highest_scn, end.newest_seq))
}

impl DbInner {
    /// Rebuilds the space map of the first datafile from the segments the dictionary
    /// names: every extent in a segment's map is in use, every other one below the
    /// high-water mark of the file is free.
    pub(super) fn rebuild_space_map(&self, stats: &SessionStats) -> Result<()> {
        let ctx = self.system_context(stats);
        let mut used = BTreeSet::new();
        let headers = self
            .catalog
            .tables()
            .iter()
            .map(|t| (t.segment_header, t.name.clone()))
            .chain(self.catalog.indexes().iter().map(|i| (i.segment_header, i.name.clone())))
            .collect::<Vec<_>>();
        for (header, owner) in headers {
            let map = crate::access::segments::read_segment_map(&ctx, header, &owner)?;
            for run in &map.runs {
                let mut first = run.first;
                while first < run.first + run.blocks {
                    used.insert(crate::storage::block::rdba_block(first));
                    first += self.space.extent_blocks;
                }
            }
        }
        let mut control = self.space.control.lock();
        let extent = control.extent_blocks;
        let entry = control.datafiles.first_mut().expect("a database has at least one datafile");
        let top = used.iter().map(|&b| b + extent).max().unwrap_or(extent).max(entry.allocated_blocks);
        entry.allocated_blocks = top;
        entry.free_extents = (1..top / extent).map(|i| i * extent).filter(|b| !used.contains(b)).rev().collect();
        let file = self.space.datafile(entry.number).expect("control file entries are open");
        file.ensure_blocks(top)
    }

    /// Transaction recovery: rolls back and ends every transaction left active.
    pub(super) fn recover_transactions(&self, stats: &SessionStats) -> Result<u64> {
        let ctx = self.system_context(stats);
        let dead = self.undo.dead_transactions(&ctx)?;
        // All registered first: a rollback compacting a block keeps the rooms of every
        // transaction still to be rolled back.
        for &xid in &dead {
            self.enqueues.register(xid, 0);
        }
        for &xid in &dead {
            let ctx = self.system_context(stats);
            crate::txn::transaction::recover(&ctx, xid)?;
            stats.add(Stat::TransactionsRolledBackAtOpen, 1);
        }
        Ok(dead.len() as u64)
    }

    /// An access context for work the instance does on its own (recovery, checkpoints).
    pub(super) fn system_context<'a>(&'a self, stats: &'a SessionStats) -> crate::access::AccessContext<'a> {
        let now = self.clock.current();
        self.access_context(stats, 8, now, crate::txn::cr::Reader { snapshot: now, own: None })
    }
}

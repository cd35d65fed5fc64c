//! Instance recovery at open, as Oracle's SMON does it: roll forward, then roll back.
//!
//! 1. **Roll forward** (before anything reads a block): apply every redo record from the
//!    control file's checkpoint position to the end of the log through the buffer cache,
//!    with redo not yet attached, so nothing is logged twice. Images and new blocks are
//!    not read first, so a block torn on disk is rebuilt from its image.
//!    A block whose first change there is a partial one is built on its datafile copy;
//!    before recovery writes such a block back in place (an eviction, or step 2), its
//!    recovered version is kept, synced, in the double-write file
//!    (`storage::doublewrite`), so that a crash tearing that write leaves a copy the next
//!    open puts back before it replays the same redo.
//! 2. Write every block recovery changed and sync the datafiles; record in the control
//!    file a checkpoint at the start of the next sequence (the redo just applied is never
//!    needed again), and only then start that sequence in the next group, writing its
//!    header over whatever the group held: no group is reused while the control file may
//!    still send recovery to it, and a torn tail of the old log is never appended to.
//! 3. **Space map**: the control file's record of which extents are in use is only as
//!    new as its last checkpoint, so at every open it is rebuilt from the dictionary and
//!    the segment headers (after a crash, as recovery brought them up to date; after a
//!    crash of an earlier open, too, though that open may have left no redo to apply).
//!
//! Every step is safe to crash at and to repeat: until the control file's checkpoint
//! moves, the next open replays the same redo over blocks at least as new as the first
//! replay left them (whose first change after the checkpoint logged their whole image,
//! so a write torn by the crash is rebuilt); after it moves, no redo is needed, the space
//! map is rebuilt again, and the transactions still active are rolled back again from
//! where their undo says the last rollback got to.
//! 4. **Transaction recovery**: every transaction the transaction tables still show
//!    active died with the instance; each is rolled back from its undo and ended, so its
//!    rows are unlocked and its undo blocks can be reused.
//!
//! What was done is kept ([`RecoveryReport`]) for the shell's banner, `v$recovery_progress`
//! and `v$sysstat` (the `SMON` session that ran it counts the records and blocks applied
//! and the transactions rolled back).

use super::DbInner;
use crate::buffer::{BufferCache, WriteBarrier};
use crate::error::Result;
use crate::redo::record::Op;
use crate::redo::{Lsn, RedoLog, reader};
use crate::stats::{SessionStats, Stat};
use crate::storage::doublewrite::{self, DoubleWrite};
use crate::storage::io::Io;
use parking_lot::Mutex;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What instance recovery did at open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Whether the database was shut down uncleanly (there was redo to apply).
    pub needed: bool,
    /// Valid redo found beyond where the newest log sequence's records stopped (a torn
    /// last write, or damage): said in the banner, never applied.
    pub damage: Option<reader::TailDamage>,
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
    /// One line for the shell's banner (two when redo beyond a damaged stretch was
    /// found), or `None` after a clean shutdown.
    pub fn summary(&self) -> Option<String> {
        self.needed.then(|| {
            let mut line = format!(
                "Instance recovery: {} redo records ({:.1} MB) applied to {} blocks, {} transactions rolled back, {} ms.",
                self.redo_records,
                self.redo_bytes as f64 / 1e6,
                self.blocks,
                self.transactions_rolled_back,
                self.elapsed_ms
            );
            if let Some(damage) = &self.damage {
                line.push_str(&format!("\nWarning: {damage}."));
            }
            line
        })
    }
}

/// Roll forward: applies the redo from `checkpoint` through `cache` (whose write barrier
/// is `writes`); returns the report so far, the highest SCN in the redo and where the
/// scan ended.
pub(super) fn roll_forward(
    cache: &BufferCache,
    redo: &RedoLog,
    checkpoint: Lsn,
    writes: &RecoveryWrites,
    stats: &SessionStats,
) -> Result<(RecoveryReport, u64, reader::ScanEnd)> {
    let start = Instant::now();
    let mut blocks = BTreeSet::new();
    let mut highest_scn = 0;
    let end = reader::scan(&redo.sequences(), checkpoint, |_, _, record| {
        highest_scn = highest_scn.max(record.scn);
        for vector in &record.vectors {
            let first_seen = blocks.insert(vector.rdba);
            if first_seen && vector.op == Op::Change {
                writes.built_on_datafile(vector.rdba);
            }
            cache.apply_redo(stats, vector)?;
        }
        stats.add(Stat::RedoRecordsApplied, 1);
        Ok(())
    })?;
    stats.add(Stat::RecoveryBlocksApplied, blocks.len() as u64);
    let report = RecoveryReport {
        needed: end.records > 0 || end.damage.is_some(),
        damage: end.damage.clone(),
        log_files: end.files,
        redo_records: end.records,
        redo_bytes: end.bytes,
        blocks: blocks.len() as u64,
        roll_forward_ms: start.elapsed().as_millis() as u64,
        ..Default::default()
    };
    Ok((report, highest_scn, end))
}

/// Recovery's writes in place, made safe to tear (see `storage::doublewrite`): the
/// blocks whose recovered version was built on their datafile copy get a synced copy in
/// the double-write file before they are written.
pub(super) struct RecoveryWrites {
    io: Arc<dyn Io>,
    dir: PathBuf,
    db_id: u64,
    checkpoint: Lsn,
    block_size: usize,
    /// The double-write file, made at the first copy.
    file: Mutex<Option<DoubleWrite>>,
    /// Blocks built on their datafile copy that have no synced copy yet.
    at_risk: Mutex<HashSet<u32>>,
}

impl RecoveryWrites {
    /// Puts back in place, synced, the copies an interrupted recovery from `checkpoint`
    /// left in `dir`'s double-write file (versions at least as new as the checkpoint,
    /// so the redo from it applies over them), through `cache`'s datafiles; returns
    /// what will keep this recovery's.
    pub(super) fn start(
        io: Arc<dyn Io>,
        dir: &Path,
        db_id: u64,
        checkpoint: Lsn,
        cache: &BufferCache,
    ) -> Result<RecoveryWrites> {
        let block_size = cache.block_size();
        let copies = doublewrite::copies(dir, db_id, checkpoint, block_size)?;
        if !copies.is_empty() {
            for (rdba, block) in &copies {
                cache.write_in_place(*rdba, block)?;
            }
            cache.sync_files()?;
        }
        Ok(RecoveryWrites {
            io,
            dir: dir.to_owned(),
            db_id,
            checkpoint,
            block_size,
            file: Mutex::new(None),
            at_risk: Mutex::new(HashSet::new()),
        })
    }

    /// Block `rdba`'s first change after the checkpoint is a partial one: a replay of
    /// the same redo reads its datafile copy (even if an image of it comes later).
    fn built_on_datafile(&self, rdba: u32) {
        self.at_risk.lock().insert(rdba);
    }

    /// Adds a copy of `sealed` (block `rdba`) to the double-write file if the block is
    /// at risk; returns whether it did (the copy is not synced yet).
    fn stage(&self, rdba: u32, sealed: &[u8]) -> Result<bool> {
        if !self.at_risk.lock().contains(&rdba) {
            return Ok(false);
        }
        let mut file = self.file.lock();
        if file.is_none() {
            *file =
                Some(DoubleWrite::create(self.io.as_ref(), &self.dir, self.db_id, self.checkpoint, self.block_size)?);
        }
        file.as_mut().expect("made above").stage(sealed)?;
        Ok(true)
    }

    fn sync(&self) -> Result<()> {
        self.file.lock().as_ref().map_or(Ok(()), DoubleWrite::sync)
    }

    /// Stages a copy of every dirty block at risk and syncs them at once (before the
    /// checkpoint that writes them all), so that its writes need no sync each.
    pub(super) fn protect_dirty(&self, cache: &BufferCache, stats: &SessionStats) -> Result<()> {
        let mut staged = Vec::new();
        cache.each_dirty_block(stats, |rdba, sealed| {
            if self.stage(rdba, sealed)? {
                staged.push(rdba);
            }
            Ok(())
        })?;
        self.sync()?;
        let mut at_risk = self.at_risk.lock();
        for rdba in staged {
            at_risk.remove(&rdba);
        }
        Ok(())
    }

    /// Once the control file records a checkpoint past the redo applied: the copies are
    /// no longer needed (nor any an earlier recovery left).
    pub(super) fn finish(self) -> Result<()> {
        drop(self.file.into_inner());
        doublewrite::remove(self.io.as_ref(), &self.dir)
    }
}

impl WriteBarrier for RecoveryWrites {
    fn before_write(&self, rdba: u32, sealed: &[u8]) -> Result<()> {
        if self.stage(rdba, sealed)? {
            self.sync()?;
            self.at_risk.lock().remove(&rdba);
        }
        Ok(())
    }
}

impl DbInner {
    /// Rebuilds the space map of the first datafile from the segments the dictionary
    /// names: every extent in a segment's map is in use, every other one below the
    /// high-water mark of the file is free; but if a segment's map cannot be read, only
    /// the extents the stored map has free (and no readable segment holds) are.
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
        // A segment whose map cannot be read (a damaged header: its statements report
        // it) leaves every extent the stored map has in use in use.
        let mut unreadable = false;
        for (header, owner) in headers {
            let Ok(map) = crate::access::segments::read_segment_map(&ctx, header, &owner) else {
                unreadable = true;
                continue;
            };
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
        let (stored_top, stored_free) = (entry.allocated_blocks, entry.free_extents.clone());
        let free = |b: &u32| !used.contains(b) && (!unreadable || stored_free.contains(b) || *b >= stored_top);
        entry.allocated_blocks = top;
        entry.free_extents = (1..top / extent).map(|i| i * extent).filter(free).rev().collect();
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
        self.access_context(stats, 8, now, crate::txn::Reader { snapshot: now, own: None })
    }
}

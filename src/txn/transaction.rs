//! A session's transaction: begun by its first change, ended by COMMIT or ROLLBACK.
//!
//! The transaction keeps its xid, its savepoints (each the address of the newest undo
//! record when it was set), and the blocks it changed, which commit cleans out while
//! they are still cached. Each statement begins with an implicit savepoint, so a failed
//! statement is rolled back alone and the transaction goes on.
//!
//! Commit and rollback publish their end under the database's commit lock: the ending
//! SCN is written to the transaction table before it becomes the current SCN, so a
//! query whose snapshot includes that SCN always finds the transaction ended.

use super::change::BlockUndo;
use super::{Uba, Xid};
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block_write::BlockWrite;
use crate::storage::itl::{self, ITL_COMMITTED};
use crate::txn::TxnContext;

/// Most blocks a commit cleans out: Oracle cleans out at commit only blocks still in the
/// cache, up to a tenth of it.
pub fn commit_cleanout_limit(cache: &crate::buffer::BufferCache) -> usize {
    cache.buffer_count() / 10
}

/// The isolation of a transaction's queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Each statement sees what was committed when it began (Oracle's default).
    #[default]
    ReadCommitted,
    /// Every statement sees what was committed when the transaction began.
    Serializable,
    /// As serializable, and changes are refused.
    ReadOnly,
}

/// A session's transaction.
#[derive(Debug, Default)]
pub struct Transaction {
    /// `None` until the first change claims a transaction-table slot.
    pub xid: Option<Xid>,
    pub isolation: Isolation,
    /// SCN of the transaction's snapshot (serializable and read-only transactions).
    pub snapshot: Option<u64>,
    savepoints: Vec<(String, Uba)>,
    /// Blocks changed, for commit cleanout (bounded).
    touched: Vec<u32>,
    /// Tables changed (object ids), whose `changers` list this transaction is in.
    tables: Vec<u32>,
}

impl Transaction {
    /// How a statement beginning when the SCN is `now` reads: as of `now`, or as of the
    /// transaction's snapshot (taken now if it has none) when its isolation keeps one,
    /// seeing its own changes.
    pub fn reader(&mut self, now: u64) -> super::Reader {
        let snapshot = match self.isolation {
            Isolation::ReadCommitted => now,
            _ => *self.snapshot.get_or_insert(now),
        };
        super::Reader { snapshot, own: self.xid }
    }

    /// Whether the transaction has made changes (has an xid).
    pub fn is_active(&self) -> bool {
        self.xid.is_some()
    }

    /// The transaction's xid, claiming one on the first change.
    pub fn xid(&mut self, ctx: &TxnContext<'_>, sid: u32) -> Result<Xid> {
        if self.isolation == Isolation::ReadOnly {
            return Err(Error::Transaction { message: "cannot change data in a read-only transaction".into() });
        }
        if let Some(xid) = self.xid {
            return Ok(xid);
        }
        let xid = ctx.undo.begin(ctx)?;
        ctx.enqueues.register(xid, sid);
        self.xid = Some(xid);
        Ok(xid)
    }

    /// Records that the transaction changes table `object_id` (before its first change
    /// there), so that DDL on the table refuses to run until it ends.
    pub fn changes_table(&mut self, ctx: &TxnContext<'_>, object_id: u32) {
        if let Some(xid) = self.xid
            && !self.tables.contains(&object_id)
        {
            self.tables.push(object_id);
            ctx.locks.table(object_id).changers.lock().push(xid);
        }
    }

    /// Takes the transaction out of the `changers` of the tables it changed.
    fn leave_tables(&self, ctx: &TxnContext<'_>) {
        if let Some(xid) = self.xid {
            for &object_id in &self.tables {
                ctx.locks.table(object_id).changers.lock().retain(|&x| x != xid);
            }
        }
    }

    /// Remembers a block changed by the transaction, for commit cleanout.
    pub fn touched(&mut self, ctx: &TxnContext<'_>, rdba: u32) {
        if self.touched.last() != Some(&rdba) && self.touched.len() < commit_cleanout_limit(ctx.cache) {
            self.touched.push(rdba);
        }
    }

    /// Where the undo stands now: a statement or savepoint rolls back to here.
    pub fn mark(&self, ctx: &TxnContext<'_>) -> Result<Uba> {
        match self.xid {
            Some(xid) => ctx.undo.last_record(ctx, xid),
            None => Ok(Uba::NONE),
        }
    }

    pub fn savepoint(&mut self, ctx: &TxnContext<'_>, name: &str) -> Result<()> {
        let mark = self.mark(ctx)?;
        self.savepoints.retain(|(n, _)| n != name);
        self.savepoints.push((name.to_owned(), mark));
        Ok(())
    }

    /// ROLLBACK TO SAVEPOINT: undoes the changes made since, keeps the savepoint.
    pub fn rollback_to_savepoint(&mut self, ctx: &TxnContext<'_>, name: &str) -> Result<()> {
        let Some(at) = self.savepoints.iter().position(|(n, _)| n == name) else {
            return Err(Error::Transaction {
                message: format!("savepoint {name} never established in this transaction"),
            });
        };
        let mark = self.savepoints[at].1;
        self.savepoints.truncate(at + 1);
        self.rollback_to(ctx, mark)
    }

    /// Undoes the transaction's changes newer than `mark`, newest first.
    pub fn rollback_to(&mut self, ctx: &TxnContext<'_>, mark: Uba) -> Result<()> {
        match self.xid {
            Some(xid) => undo_to(ctx, xid, mark, false),
            None => Ok(()),
        }
    }

    /// COMMIT: ends the transaction at a new SCN, then cleans out the blocks it changed
    /// that are still cached. Counts `user commits` even with nothing to commit, as Oracle.
    pub fn commit(&mut self, ctx: &TxnContext<'_>) -> Result<()> {
        ctx.stats.add(Stat::UserCommits, 1);
        if let Some(xid) = self.xid {
            let scn = end(ctx, xid)?;
            self.leave_tables(ctx);
            self.clean_out(ctx, xid, scn);
        }
        *self = Transaction::default();
        Ok(())
    }

    /// ROLLBACK: undoes every change, then ends the transaction.
    pub fn rollback(&mut self, ctx: &TxnContext<'_>) -> Result<()> {
        ctx.stats.add(Stat::UserRollbacks, 1);
        if let Some(xid) = self.xid {
            self.rollback_to(ctx, Uba::NONE)?;
            end(ctx, xid)?;
            self.leave_tables(ctx);
        }
        *self = Transaction::default();
        Ok(())
    }

    /// Commit cleanout: stamps the commit SCN into the ITL slots of the changed blocks
    /// still in the cache (`commit cleanouts`, `commit cleanouts successfully completed`)
    /// and not held by another session at that moment (a hot block is left to its next
    /// visitor's delayed cleanout: `commit cleanout failures: cannot pin`);
    /// a block written since the transaction changed it is stamped in the cache only,
    /// with no redo (see `BufferCache::commit_cleanout_get`).
    fn clean_out(&self, ctx: &TxnContext<'_>, xid: Xid, scn: u64) {
        for &rdba in &self.touched {
            ctx.stats.add(Stat::CommitCleanouts, 1);
            let Some(mut guard) = ctx.cache.commit_cleanout_get(ctx.stats, rdba) else { continue };
            if stamp_commit(&mut guard, xid, scn) {
                ctx.stats.add(Stat::CommitCleanoutsCompleted, 1);
            }
        }
    }
}

/// Undoes the changes of active transaction `xid` newer than `mark` (its newest undo
/// record when the statement or savepoint began), newest first, in the current blocks;
/// then makes `mark` its newest record again. The record of the transaction-table slot's
/// history, always its first, stays: it tells of the slot's previous holder.
///
/// `recovering`: the transaction died in a crash, so some of its records may have been
/// applied already (a rollback under way, a savepoint's) or never reached their block
/// (the crash came between the undo and the change): a record is applied only where
/// the block's ITL slot still points at it, as the change left it.
pub fn undo_to(ctx: &TxnContext<'_>, xid: Xid, mark: Uba, recovering: bool) -> Result<()> {
    let mut at = ctx.undo.last_record(ctx, xid)?;
    let mut mark = mark;
    while !at.is_none() && at != mark {
        let record = ctx.undo.read(ctx, at)?;
        if record.body.first() == Some(&crate::txn::undo::SLOT_HISTORY_KIND) {
            mark = at;
            break;
        }
        if let Some(kind) = super::foreign::owner(&record.body) {
            kind.roll_back(ctx, &record.body, at)?;
            at = record.prev;
            continue;
        }
        let undo = BlockUndo::decode(&record.body).map_err(|r| ctx.corrupt(at.rdba, r))?;
        let mut guard = ctx.cache.current_get(ctx.stats, undo.rdba)?;
        if recovering && !points_at(&guard, usize::from(undo.itl), xid, at) {
            at = record.prev;
            continue;
        }
        // Compacting keeps the rooms of active transactions' rows: this one's too, whose
        // older records may need them.
        let kept = super::change::kept_rooms(&guard, |x| ctx.enqueues.is_active(x));
        undo.roll_back(&mut guard, &kept).map_err(|r| ctx.corrupt(undo.rdba, r))?;
        crate::storage::block::set_scn(&mut guard, ctx.scn);
        ctx.rows_changed(undo.rdba, &guard);
        ctx.stats.add(Stat::RollbackChangesUndoRecordsApplied, 1);
        at = record.prev;
    }
    ctx.undo.truncate_chain(ctx, xid, mark)
}

/// Transaction recovery (SMON's job at open): rolls back every change of dead
/// transaction `xid`, then ends it, so that its rows are unlocked and its undo freed.
pub fn recover(ctx: &TxnContext<'_>, xid: Xid) -> Result<()> {
    undo_to(ctx, xid, Uba::NONE, true)?;
    end(ctx, xid)?;
    Ok(())
}

/// Ends transaction `xid` at a new SCN: records the end in its transaction table,
/// then publishes the SCN, then wakes the sessions waiting for its row locks.
pub fn end(ctx: &TxnContext<'_>, xid: Xid) -> Result<u64> {
    let scn = ctx.clock.end_at_next(|scn| ctx.undo.commit(ctx, xid, scn))?;
    // Published before the waiters wake: a session that waited for this transaction's
    // row lock reads its commit in every statement it starts next.
    ctx.enqueues.end(xid);
    Ok(scn)
}

/// Whether ITL slot `itl` of `block` names `xid` with its newest undo record at `at`.
pub fn points_at(block: &[u8], itl: usize, xid: Xid, at: Uba) -> bool {
    itl < itl::itl_count(block) && {
        let slot = itl::get(block, itl);
        slot.xid == xid && slot.uba == at
    }
}

/// Stamps `xid`'s ITL slot in `block` committed at `scn`; false if no slot is its.
pub fn stamp_commit<B: BlockWrite + ?Sized>(block: &mut B, xid: Xid, scn: u64) -> bool {
    for i in 0..itl::itl_count(block.bytes()) {
        let mut slot = itl::get(block.bytes(), i);
        if slot.xid == xid && slot.flags & ITL_COMMITTED == 0 {
            slot.flags |= ITL_COMMITTED;
            slot.commit_scn = scn;
            itl::put(block, i, &slot);
            return true;
        }
    }
    false
}

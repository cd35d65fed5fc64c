//! Consistent reads: the block as a query must see it.
//!
//! A query reads as of its snapshot SCN. For each block it gets (a consistent get of the
//! current version), it looks at the ITL:
//!
//! 1. Every slot free or stamped committed at or before the snapshot: the current block
//!    is the answer (`no work - consistent read gets`). This is the check every block of
//!    a scan pays: a few bytes of the block header, already in cache.
//! 2. A slot not stamped: its transaction's state is in the transaction table of its
//!    undo segment (a consistent get of the segment header). If it has committed, the
//!    slot is stamped now in the current block, under a short exclusive hold: delayed
//!    block cleanout (`immediate (CR) block cleanout applications`).
//! 3. A slot whose transaction is active (and not the reader's own), or committed after
//!    the snapshot: the block must be rolled back. A cached clone that serves this
//!    snapshot is reused if there is one; otherwise the current block is copied into a
//!    free buffer (`CR blocks created`) and undo records are applied to the copy, each
//!    read through the cache (`consistent gets - examination`), following the chain of
//!    each such slot until the slot shows a transaction the reader may see (`consistent
//!    changes`, `data blocks consistent reads - undo records applied`). The clone stays in
//!    the cache as a version of the block for later readers of the same era.
//!
//! Several slots may hold changes to the same row: a writer that waited for a row lock
//! changes the row after the holder ended, in a slot of its own, before anyone cleans
//! the holder's slot out. Undo is therefore applied newest transaction first (active
//! ones, then by commit SCN, highest first), never in slot order:
//!
//! ```text
//!  slot 0: A, committed at 120   row 7: 10 ─A─► 11 ─B─► 12   reader as of 110:
//!  slot 1: B, active                                          undo B (12 → 11), then A (11 → 10)
//! ```
//!
//! The rows fit the clone as they fitted the block: once the changes of transactions
//! that ended after some moment are undone, the newer changes left are of transactions
//! active at that moment, whose rows kept their rooms (`txn::change`), so a before-image
//! never needs room that a later change took.
//!
//! The ITL and row directory of the current block only grow; where a before-image lacks
//! room, the clone drops the ITL slots and directory entries at its end that only the
//! changes it has undone had taken. One mix stays out of reach: a reader's own changes
//! stay in its clone however recent, so a change its statement made after a transaction
//! committed after the snapshot, in room that transaction had freed, cannot stand beside
//! that transaction's before-image (a statement that reads a block it has changed itself,
//! such as the piece block of a row it migrated); building that clone fails.
//!
//! A clone records which snapshots it serves ([`CrVersion`]): from the snapshot it was
//! built for up to the earliest commit it rolled back, and only while the transactions
//! it rolled back as active have not committed by the reader's snapshot. Writers lower
//! that bound when they change the current block. A clone built for a reader with
//! changes of its own in the block keeps them and serves only that reader's transaction.
//!
//! Index leaves are read the same way: their ITL and entry lock bytes are laid out as a
//! table block's, and a record of an index entry change is applied by the index module,
//! as a [`super::foreign::ForeignUndo`]. A leaf's chain may lead into records written for the leaf it was
//! split from: a split copies the ITL slots, so both halves keep their undo chains.

use super::change::BlockUndo;
use super::{TxnStatus, Xid};
use crate::buffer::{CrVersion, ReadGuard};
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::itl::{self, ITL_COMMITTED, Itl};
use crate::txn::{Reader, TxnContext};
use smallvec::SmallVec;

/// More undo records than a block could ever need (rows × changes kept): a chain longer
/// than this is a cycle in corrupt undo.
const MAX_UNDO_PER_CLONE: usize = 1 << 20;

/// What a slot means for a reader.
enum SlotView {
    /// Visible as it stands (free, the reader's own, or committed by the snapshot).
    Visible,
    /// Committed at `scn` but not stamped: clean it out.
    CleanOut(u64),
    /// Must be rolled back: active, or committed after the snapshot.
    RollBack,
}

/// Oracle's consistent get, whole: block `rdba` from the buffer cache (a consistent get of
/// the current version, counted there), checked by `check` before anything in it is read,
/// then as the statement's reader must see it ([`consistent_block`]).
#[inline(always)]
pub fn consistent_get<'c>(
    ctx: &TxnContext<'c>,
    rdba: u32,
    check: impl FnOnce(&[u8]) -> Result<()>,
) -> Result<ReadGuard<'c>> {
    let current = ctx.cache.consistent_get(ctx.stats, rdba)?;
    check(&current)?;
    consistent_block(ctx, current, ctx.reader)
}

/// [`consistent_get`] of a block a multiblock read pinned ahead of the scan: counted as a
/// consistent get now, as the scan reaches it.
#[inline(always)]
pub fn consistent_get_pinned<'c>(
    ctx: &TxnContext<'c>,
    pinned: ReadGuard<'c>,
    check: impl FnOnce(&[u8]) -> Result<()>,
) -> Result<ReadGuard<'c>> {
    crate::buffer::BufferCache::count_consistent_get(ctx.stats);
    check(&pinned)?;
    consistent_block(ctx, pinned, ctx.reader)
}

/// The block `current` (a consistent get of the current version, already counted) as
/// `reader` must see it: `current` itself, cleaned out, or a CR clone. The step of a
/// consistent get after the buffer: [`consistent_get`] and [`consistent_get_pinned`] are
/// the whole of it; the index's leaves come here after their descent.
#[inline(always)]
pub fn consistent_block<'c>(ctx: &TxnContext<'c>, current: ReadGuard<'c>, reader: Reader) -> Result<ReadGuard<'c>> {
    if needs_no_work(ctx, &current, reader) {
        return Ok(current);
    }
    consistent_block_slow(ctx, current, reader)
}

/// Whether the reader sees `block` as it stands (every change in it committed by the
/// snapshot), counted as `no work - consistent read gets` when it does.
#[inline(always)]
fn needs_no_work(ctx: &TxnContext<'_>, block: &[u8], reader: Reader) -> bool {
    let no_work = itl::all_committed_by(block, reader.snapshot);
    if no_work {
        ctx.stats.add(Stat::NoWorkConsistentReadGets, 1);
    }
    no_work
}

/// [`consistent_block`] of the guard in `slot`, in place: when every change in the block
/// is committed by the snapshot (the common case) the guard stays where it is.
#[inline(always)]
pub fn make_consistent_in_place<'c>(
    ctx: &TxnContext<'c>,
    slot: &mut Option<ReadGuard<'c>>,
    reader: Reader,
) -> Result<()> {
    let Some(current) = slot.as_ref() else { return Ok(()) };
    if needs_no_work(ctx, current, reader) {
        return Ok(());
    }
    let current = slot.take().expect("checked above");
    *slot = Some(consistent_block_slow(ctx, current, reader)?);
    Ok(())
}

#[cold]
fn consistent_block_slow<'c>(ctx: &TxnContext<'c>, current: ReadGuard<'c>, reader: Reader) -> Result<ReadGuard<'c>> {
    let rdba = current.rdba();
    let mut known = Statuses::new();
    let mut current = current;
    let mut cleaned = false;
    // Classify the slots; after a cleanout (which lets go of the block for a moment, so a
    // writer may have changed it), classify them again on the block as it is now.
    let (roll_back, owns_changes) = loop {
        let mut cleanouts: SmallVec<[(Xid, u64); 2]> = SmallVec::new();
        let mut roll_back = false;
        let mut owns_changes = false;
        for i in 0..itl::itl_count(&current) {
            let slot = itl::get(&current, i);
            if reader.own.is_some_and(|own| own == slot.xid) {
                owns_changes = true;
                continue;
            }
            match view_of(ctx, &slot, reader, &mut known)? {
                SlotView::Visible => {}
                SlotView::CleanOut(scn) => {
                    cleanouts.push((slot.xid, scn));
                    if scn > reader.snapshot {
                        roll_back = true;
                    }
                }
                SlotView::RollBack => roll_back = true,
            }
        }
        if cleanouts.is_empty() || cleaned {
            break (roll_back, owns_changes);
        }
        current = clean_out(ctx, current, &cleanouts, roll_back)?;
        cleaned = true;
    };
    if !roll_back {
        if !cleaned {
            ctx.stats.add(Stat::NoWorkConsistentReadGets, 1);
        }
        return Ok(current);
    }
    let owner = owns_changes.then_some(reader.own).flatten();
    let usable = |v: &CrVersion| {
        v.owner == owner
            && v.as_of <= reader.snapshot
            && reader.snapshot < v.valid_until
            && (owner.is_none() || v.as_of == reader.snapshot)
            && v.pending.iter().all(|&xid| uncommitted_at(ctx, xid, reader.snapshot, &known))
    };
    if let Some(clone) = ctx.cache.find_cr(ctx.stats, rdba, usable) {
        return Ok(clone);
    }
    build_clone(ctx, current, reader, owner, &mut known)
}

/// Whether a transaction `snapshot` does not see holds an ITL slot of `block`: one still
/// active (even one still filling the block, its rows hidden by their lock bytes), or
/// one committed after `snapshot`. The rows of such a block as of `snapshot` are not
/// its rows for later snapshots; the column store journals the block when it populates
/// it. Reads transaction tables (`consistent gets - examination`) for unstamped slots.
pub fn changes_after(ctx: &TxnContext<'_>, block: &[u8], snapshot: u64) -> Result<bool> {
    let known = Statuses::new();
    for i in 0..itl::itl_count(block) {
        if slot_changes_after(ctx, &itl::get(block, i), snapshot, &known)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the row piece at `offset` of `block` was last changed by a transaction other
/// than `own` that `snapshot` does not see: its lock byte names an ITL slot whose
/// transaction is active or committed after `snapshot`. A lock byte cleared by a cleanout
/// or by the slot's reuse tells nothing (false): the caller also compares the row.
pub fn row_changed_after(ctx: &TxnContext<'_>, block: &[u8], offset: usize, snapshot: u64, own: Xid) -> Result<bool> {
    let lock = block.get(offset + 1).map_or(0, |&l| usize::from(l));
    if lock == 0 || lock > itl::itl_count(block) {
        return Ok(false);
    }
    let slot = itl::get(block, lock - 1);
    if slot.xid == own {
        return Ok(false);
    }
    slot_changes_after(ctx, &slot, snapshot, &Statuses::new())
}

/// Whether ITL slot `slot` holds a change `snapshot` does not see: of a transaction still
/// active (or still filling the block, with no undo yet), or committed after `snapshot`.
fn slot_changes_after(ctx: &TxnContext<'_>, slot: &Itl, snapshot: u64, known: &Statuses) -> Result<bool> {
    if slot.is_free() {
        return Ok(false);
    }
    if slot.is_committed() {
        return Ok(slot.commit_scn > snapshot);
    }
    if slot.uba.is_none() {
        return Ok(true);
    }
    Ok(!matches!(status_of(ctx, slot.xid, known)?, TxnStatus::Committed { scn, .. } if scn <= snapshot))
}

/// Whether `xid` is surely not committed at or before `snapshot`, from the transaction
/// table unless this consistent get already read its state (`known`). Only an exact
/// answer counts: an upper bound of its commit (its slot reused since) or an error counts
/// as no, so the clone that rolled it back is not reused, which is always safe.
fn uncommitted_at(ctx: &TxnContext<'_>, xid: Xid, snapshot: u64, known: &Statuses) -> bool {
    match status_of(ctx, xid, known) {
        Ok(TxnStatus::Active) => true,
        Ok(TxnStatus::Committed { scn, upper_bound: false }) => scn > snapshot,
        Ok(TxnStatus::Committed { upper_bound: true, .. }) | Err(_) => false,
    }
}

/// The state of `xid`: as this consistent get already read it (`known`), else from its
/// transaction table (a `consistent gets - examination`).
fn status_of(ctx: &TxnContext<'_>, xid: Xid, known: &Statuses) -> Result<TxnStatus> {
    if let Some(&(_, status)) = known.iter().find(|(x, _)| *x == xid) {
        return Ok(status);
    }
    ctx.stats.add(Stat::ConsistentGetsExamination, 1);
    ctx.undo.status(ctx, xid)
}

/// Transaction-table answers already read for one block: each transaction's state is
/// looked up once per consistent get, however many of its undo records are applied.
type Statuses = SmallVec<[(Xid, TxnStatus); 4]>;

/// What slot `slot` means for `reader` (not its own slot).
fn view_of(ctx: &TxnContext<'_>, slot: &Itl, reader: Reader, known: &mut Statuses) -> Result<SlotView> {
    if slot.is_free() || slot.uba.is_none() {
        // No undo yet: a statement still filling the block, whose rows are hidden by
        // their lock byte until they are handed to the transaction.
        return Ok(SlotView::Visible);
    }
    if slot.flags & ITL_COMMITTED != 0 {
        return Ok(if slot.commit_scn <= reader.snapshot { SlotView::Visible } else { SlotView::RollBack });
    }
    let status = status_of(ctx, slot.xid, known)?;
    if !known.iter().any(|(xid, _)| *xid == slot.xid) {
        known.push((slot.xid, status));
    }
    match status {
        TxnStatus::Active => Ok(SlotView::RollBack),
        TxnStatus::Committed { scn, upper_bound: false } => Ok(SlotView::CleanOut(scn)),
        TxnStatus::Committed { scn, upper_bound: true } if scn <= reader.snapshot => Ok(SlotView::Visible),
        TxnStatus::Committed { .. } => Err(Error::SnapshotTooOld {
            reason: format!(
                "the commit of transaction {} is no longer recorded; its transaction-table slot was reused after SCN {}",
                slot.xid, reader.snapshot
            ),
        }),
    }
}

/// Stamps committed slots into the current block (delayed block cleanout) and hands the
/// block back share-locked.
fn clean_out<'c>(
    ctx: &TxnContext<'c>,
    current: ReadGuard<'c>,
    committed: &[(Xid, u64)],
    also_rolls_back: bool,
) -> Result<ReadGuard<'c>> {
    let rdba = current.rdba();
    drop(current);
    let mut guard = ctx.cache.cleanout_get(ctx.stats, rdba)?;
    for &(xid, scn) in committed {
        if super::transaction::stamp_commit(&mut guard, xid, scn) {
            ctx.stats.add(Stat::ImmediateCrCleanouts, 1);
        }
    }
    ctx.stats.add(
        if also_rolls_back {
            Stat::CleanoutsAndRollbacksConsistentReadGets
        } else {
            Stat::CleanoutsOnlyConsistentReadGets
        },
        1,
    );
    Ok(guard.downgrade())
}

/// Copies `current` into a CR clone and applies undo until every slot shows what
/// `reader` may see. A clone whose undo cannot be applied is discarded.
fn build_clone<'c>(
    ctx: &TxnContext<'c>,
    current: ReadGuard<'c>,
    reader: Reader,
    owner: Option<Xid>,
    known: &mut Statuses,
) -> Result<ReadGuard<'c>> {
    let rdba = current.rdba();
    let mut version = CrVersion { as_of: reader.snapshot, valid_until: u64::MAX, pending: SmallVec::new(), owner };
    let mut clone = ctx.cache.clone_for_cr(ctx.stats, rdba, &current, version.clone())?;
    drop(current);
    ctx.stats.add(Stat::CrBlocksCreated, 1);
    match roll_back(ctx, &mut clone, rdba, reader, &mut version, known) {
        Ok(()) => {
            ctx.cache.set_cr_version(&clone, version);
            Ok(clone.downgrade())
        }
        Err(e) => {
            clone.discard_cr();
            Err(e)
        }
    }
}

/// The slot of `clone` whose newest change `reader` must not see and that was made last:
/// an active transaction's (two active ones never changed the same row), else the one
/// that committed last. A row changed by several transactions is rolled back through
/// their changes newest first, so each before-image lands on the image its change
/// replaced: a writer that waited for a row lock changes the row only after the holder
/// ended, and so commits after it. Narrows `version` by what each such slot shows.
fn newest_to_roll_back(
    ctx: &TxnContext<'_>,
    clone: &[u8],
    reader: Reader,
    version: &mut CrVersion,
    known: &mut Statuses,
) -> Result<Option<Itl>> {
    // (commit SCN, slot); an active transaction counts as committing at the end of time.
    let mut newest: Option<(u64, Itl)> = None;
    for i in 0..itl::itl_count(clone) {
        let slot = itl::get(clone, i);
        if slot.is_free() || reader.own == Some(slot.xid) {
            continue;
        }
        let ends_at = match view_of(ctx, &slot, reader, known)? {
            SlotView::Visible => continue,
            SlotView::CleanOut(scn) if scn <= reader.snapshot => continue,
            SlotView::CleanOut(scn) => {
                version.valid_until = version.valid_until.min(scn);
                scn
            }
            SlotView::RollBack if slot.flags & ITL_COMMITTED != 0 => {
                version.valid_until = version.valid_until.min(slot.commit_scn);
                slot.commit_scn
            }
            SlotView::RollBack => {
                if !version.pending.contains(&slot.xid) {
                    version.pending.push(slot.xid);
                }
                u64::MAX
            }
        };
        if newest.is_none_or(|(scn, _)| ends_at > scn) {
            newest = Some((ends_at, slot));
        }
    }
    Ok(newest.map(|(_, slot)| slot))
}

/// Applies `undo` to `clone`, which is private: compacting it takes no room from anyone,
/// and where it still lacks room, the ITL slots and row-directory entries that only
/// changes since undone had taken are dropped first (the block's ITL and directory only
/// grow, and the clone starts with those of the current block).
fn apply_to_clone(undo: &BlockUndo<'_>, clone: &mut [u8]) -> std::result::Result<(), String> {
    use crate::storage::block::KeptRooms;
    match undo.apply(clone, &KeptRooms::NONE) {
        Err(_) if itl::shed_unused_tail(clone) => undo.apply(clone, &KeptRooms::NONE),
        result => result,
    }
}

/// Applies undo to `clone` (of block `rdba`), newest change first, following each slot's
/// chain while the slot shows a transaction `reader` must not see; narrows `version` to
/// what the clone serves.
fn roll_back(
    ctx: &TxnContext<'_>,
    clone: &mut [u8],
    rdba: u32,
    reader: Reader,
    version: &mut CrVersion,
    known: &mut Statuses,
) -> Result<()> {
    for applied in 0.. {
        if applied > MAX_UNDO_PER_CLONE {
            return Err(ctx.corrupt(
                rdba,
                format!("undo chain of the block is longer than {MAX_UNDO_PER_CLONE} records (a cycle)"),
            ));
        }
        let Some(slot) = newest_to_roll_back(ctx, clone, reader, version, known)? else { return Ok(()) };
        ctx.stats.add(Stat::ConsistentGetsExamination, 1);
        let record = ctx.undo.read(ctx, slot.uba)?;
        if let Some(kind) = super::foreign::owner(&record.body) {
            // An index leaf: its records may come from the leaf it split off from.
            kind.apply_to_clone(&record.body, clone).map_err(|r| ctx.corrupt(rdba, r))?;
            ctx.stats.add(Stat::ConsistentChanges, 1);
            ctx.stats.add(Stat::CrUndoRecordsApplied, 1);
            continue;
        }
        let undo = BlockUndo::decode(&record.body).map_err(|r| ctx.corrupt(slot.uba.rdba, r))?;
        if undo.rdba != rdba {
            return Err(
                ctx.corrupt(rdba, format!("undo record at {:?} is for block {:#x}, not this one", slot.uba, undo.rdba))
            );
        }
        apply_to_clone(&undo, clone).map_err(|r| ctx.corrupt(rdba, r))?;
        ctx.stats.add(Stat::ConsistentChanges, 1);
        ctx.stats.add(Stat::CrUndoRecordsApplied, 1);
    }
    Ok(())
}

//! The undo tablespace: undo segments whose header blocks hold transaction tables, and
//! undo blocks holding undo records, all living in the buffer cache like table blocks.
//! The tablespace grows on demand, an extent at a time, up to `undo_tablespace_maxsize`.
//!
//! ```text
//!  undotbs01.dbf (file 2)
//!  ┌────────┬─────────┬─────────┬───┬────────┬────────────┬────────────┬───┬─────────────┬──
//!  │ file   │ header  │ header  │ ..│ extent │ extent 0   │ extent 1   │ ..│ extent 10   │ ..
//!  │ header │ _SYSSMU1│ _SYSSMU2│   │ map    │ owner 1    │ owner 2    │   │ owner 1     │
//!  └────────┴──┬──────┴─────────┴───┴────────┴────────────┴────────────┴───┴─────────────┴──
//!              │                     extent k ─ first block, blocks, owner ─ (module `extent_map`)
//!              │ transaction table: slot 5 ─ wrap 3, active, last record ──┐
//!              │                                                          ▼
//!              │   undo block (owner 1.5.3, seq 2): [rec 0] [rec 1] [rec 2 prev=rec 1]
//!              │                                        ▲ prev ─ rec 0 of an older block
//! ```
//!
//! A transaction is named by the slot it claims in one segment's transaction table
//! ([`Xid`]: usn.slot.wrap). Its undo records go into undo blocks of that segment's
//! extents, one block at a time: the block it writes into is its own while it is active,
//! and it starts in the block the segment handed out last when that one's owner has
//! ended and there is room (successive short transactions share a block, as in Oracle),
//! else in a block handed out to it. Each record names its transaction and points back
//! at the transaction's previous record, so following `prev` from the newest record walks
//! the transaction's changes backwards: a rollback, or a consistent read building a CR
//! clone. An undo record address ([`Uba`]) names the block, the block's sequence number
//! when the record was written, and the record; a block handed out again gets the next
//! sequence, so a read of an old address fails with snapshot too old, whichever segment
//! now owns the block.
//!
//! Costs, as Oracle counts them: [`Undo::begin`], [`Undo::commit`] and
//! [`Undo::truncate_chain`] change the segment header (db block gets); [`Undo::append`]
//! changes the transaction's undo block (a db block get), and a move to another block also
//! the header (a block handed out is formatted in the cache, not read; one taken over is
//! a db block get), and the extent map when an
//! extent is stolen or added; [`Undo::read`] and [`Undo::status`] are consistent gets,
//! which read the block from disk if it is not cached. Building CR clones thus costs
//! logical (and maybe physical) reads of undo.
//!
//! The blocks are the source of truth: a committed transaction's status is read from the
//! transaction table, the extents and the tablespace's size from the extent map, after a
//! reopen too. In-memory mirrors spare the hot paths gets: each active transaction's
//! current block and newest record (written to its slot when it moves to another block and
//! at commit), when each slot's last transaction ended, and each undo block's owner
//! (filled lazily after open). Space management (module `space`) reuses blocks of ended
//! transactions, steals extents from other segments, and grows the file, in Oracle's
//! order; module `tablespace` lays a new file out and converts one of the fixed layout
//! that came before growth.
//!
//! Slot reuse: `begin` claims the segment's non-active slot with the oldest commit and
//! increments its wrap, raising the segment's control SCN to that slot's old commit SCN.
//! The new transaction's first undo record is the slot's history: the wrap and commit
//! SCN of the transaction that held the slot before, and that transaction's own first
//! record. [`Undo::status`] of an xid whose slot has been reused rolls the slot back along
//! these records (`transaction tables consistent reads - undo records applied`) until
//! it reaches the xid's incarnation and its exact commit SCN; where the history is gone
//! (a slot never reused before, undo overwritten), the control SCN, an upper bound, is
//! the answer.

mod codec;
mod extent_map;
mod header;
mod segment;
mod space;
mod stats;
mod tablespace;
mod undo_block;
#[cfg(test)]
mod tests;

pub use header::TXN_SLOTS;
pub use stats::UndoStats;
pub use tablespace::{UNDO_FILE_NO, create as create_tablespace, segment_name};

use super::clock::ScnClock;
use super::{TxnStatus, Uba, Xid};
use crate::buffer::BufferCache;
use crate::error::{Error, Result};
use crate::stats::{SessionStats, Stat};
use crate::storage::block::{self, BlockHeader, BlockType};
use crate::storage::block_write::BlockWrite;
use crate::storage::datafile::DataFile;
use header::{SlotState, TxnSlot, UndoHeader, UndoHeaderMut};
use parking_lot::Mutex;
use segment::{ActiveTxn, Segment};
use space::Space;
use stats::UndoCounters;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use undo_block::{RECORD_HEADER_LEN, UndoBlock, UndoBlockMut};

/// What undo needs of the database it works in, for one statement: the buffer cache its
/// blocks are read and changed through, the space of the datafiles (where the tablespace
/// grows, and whose errors name a corrupt block's file), the SCN clock (a status waits
/// for an end to be published), and the statement's statistics and SCN. A
/// [`TxnContext`](crate::txn::TxnContext) holds one, and hands it to undo through
/// `Deref`.
#[derive(Clone, Copy)]
pub struct UndoContext<'a> {
    pub cache: &'a BufferCache,
    pub space: &'a crate::storage::space::Space,
    pub clock: &'a ScnClock,
    pub stats: &'a SessionStats,
    /// SCN stamped into blocks this statement changes.
    pub scn: u64,
}

impl UndoContext<'_> {
    /// A corruption error for block `rdba` of the database's datafiles.
    pub fn corrupt(&self, rdba: u32, reason: impl Into<String>) -> Error {
        self.space.corrupt(rdba, reason)
    }
}

/// One undo record as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRecord {
    /// The transaction that wrote it.
    pub xid: Xid,
    /// The previous record of the same transaction (`Uba::NONE` for its first).
    pub prev: Uba,
    /// What the caller appended.
    pub body: Vec<u8>,
}

/// One active transaction's use of undo, for `v$transaction`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnUsage {
    pub xid: Xid,
    /// SCN when the transaction began.
    pub start_scn: u64,
    /// Undo blocks and records used so far.
    pub used_ublk: u64,
    pub used_urec: u64,
}

/// One undo segment's figures, for `v$rollstat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentUsage {
    pub usn: u16,
    /// Extents and blocks it owns now.
    pub extents: u64,
    pub blocks: u64,
    /// Transactions active in it now.
    pub active: u64,
    /// Extents added to it by growing the tablespace since open.
    pub extends: u64,
}

/// The undo tablespace of an open database.
pub struct Undo {
    /// The undo datafile: error messages, and extending it as the tablespace grows.
    path: PathBuf,
    file: Arc<DataFile>,
    block_size: usize,
    /// Segment `usn` is `segments[usn - 1]`.
    segments: Vec<Segment>,
    /// The extent map and what is known of each undo block; its lock is held while a
    /// block is handed out (module `space`).
    space: Mutex<Space>,
    /// Blocks of the tablespace: `space.header.blocks`, read without the lock.
    tablespace_blocks: AtomicU32,
    /// Where the next `begin` starts looking for a free slot (round robin).
    next_segment: AtomicUsize,
    counters: UndoCounters,
    /// `undo_retention`: seconds the undo of a committed transaction is kept from reuse
    /// while unexpired undo can be found elsewhere (set at open and by ALTER SYSTEM).
    pub(super) retention: AtomicU64,
}

impl Undo {
    /// Opens the undo tablespace in `file` (file [`UNDO_FILE_NO`], attached to `cache`):
    /// reads the extent map and every segment header, and notes the transactions active
    /// in them. A tablespace of the fixed layout is converted first, to grow up to
    /// `max_bytes`.
    pub(crate) fn open(cache: &BufferCache, file: Arc<DataFile>, max_bytes: u64) -> Result<Undo> {
        let stats = SessionStats::default();
        let path = file.path().to_owned();
        let corrupt = |rdba: u32, reason: String| Error::Corrupt {
            file: path.clone(),
            block: Some(block::rdba_block(rdba)),
            reason,
        };
        let first = block::rdba(UNDO_FILE_NO, 1);
        let map_rdba = {
            let guard = cache.consistent_get(&stats, first)?;
            let view = UndoHeader(&guard);
            view.check(1).map_err(|r| corrupt(first, format!("undo segment header: {r}")))?;
            match view.fixed_layout() {
                None => view.extent_map().expect("a header not of the fixed layout names its extent map"),
                Some(fixed) => {
                    drop(guard);
                    tablespace::convert_fixed_layout(cache, &stats, &file, &fixed, max_bytes)?;
                    block::rdba(UNDO_FILE_NO, 1 + u32::from(fixed.segments) * fixed.segment_blocks)
                }
            }
        };
        let mut space = Space::load(cache, &stats, map_rdba, &path)?;
        let mut segments = Vec::new();
        let mut active = 0;
        for usn in 1..=space.header.segments {
            let rdba = block::rdba(UNDO_FILE_NO, space.header.header_block(usn));
            let guard = cache.consistent_get(&stats, rdba)?;
            let view = UndoHeader(&guard);
            view.check(usn).map_err(|r| corrupt(rdba, format!("undo segment header: {r}")))?;
            if view.extent_map() != Some(map_rdba) {
                return Err(corrupt(rdba, "undo segment header disagrees with segment 1 on the extent map".into()));
            }
            let (segment, n) = Segment::open(rdba, view).map_err(|r| corrupt(rdba, r))?;
            space.note_fresh(usn, view.fresh_run());
            active += n;
            segments.push(segment);
        }
        let counters = UndoCounters::default();
        counters.found_active(active);
        Ok(Undo {
            path,
            file,
            block_size: cache.block_size(),
            segments,
            tablespace_blocks: AtomicU32::new(space.header.blocks),
            space: Mutex::new(space),
            next_segment: AtomicUsize::new(0),
            counters,
            retention: AtomicU64::new(0),
        })
    }

    /// Sets `undo_retention`, in seconds.
    pub fn set_retention(&self, seconds: u64) {
        self.retention.store(seconds, Ordering::Relaxed);
    }

    #[cfg(test)]
    /// Undo segments in the tablespace.
    pub fn segment_count(&self) -> u16 {
        self.segments.len() as u16
    }

    /// Bytes of the tablespace (file header, segment headers, extent map and extents).
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.tablespace_blocks.load(Ordering::Acquire)) * self.block_size as u64
    }

    /// Bytes the tablespace may grow to (`undo_tablespace_maxsize` when it was created).
    pub fn max_size_bytes(&self) -> u64 {
        u64::from(self.space.lock().header.max_blocks) * self.block_size as u64
    }

    /// Each segment's extents, blocks and transactions, for `v$rollstat`.
    pub fn segment_usage(&self) -> Vec<SegmentUsage> {
        let space = self.space.lock();
        self.segments
            .iter()
            .map(|s| {
                let (extents, blocks) = space.segment_size(s.usn);
                SegmentUsage {
                    usn: s.usn,
                    extents,
                    blocks,
                    active: s.active.lock().iter().filter(|t| t.is_some()).count() as u64,
                    extends: s.extends.load(Ordering::Relaxed),
                }
            })
            .collect()
    }

    /// The largest body [`Undo::append`] takes: what an empty undo block holds.
    pub fn max_body_len(&self) -> usize {
        undo_block::max_body_len(self.block_size)
    }

    /// Figures since open, for `v$undostat`.
    pub fn stats(&self) -> UndoStats {
        self.counters.snapshot()
    }

    /// Starts a transaction: claims a free transaction-table slot (current-mode get of
    /// an undo segment header), marks it active and returns its xid.
    pub fn begin(&self, ctx: &UndoContext<'_>) -> Result<Xid> {
        let n = self.segments.len();
        let start = self.next_segment.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            let segment = &self.segments[(start + i) % n];
            if segment.active.lock().iter().all(Option::is_some) {
                continue;
            }
            if let Some((xid, before)) = self.claim_slot(ctx, segment)? {
                self.counters.began();
                if before.state == SlotState::Committed {
                    self.append(ctx, xid, &SlotHistory::of(&before).encode())?;
                }
                return Ok(xid);
            }
        }
        Err(Error::UndoSpace {
            reason: format!("all {} transaction-table slots of {n} undo segments are in use", n * TXN_SLOTS),
        })
    }

    /// Claims the non-active slot of `segment` with the oldest commit, or `None` if every
    /// slot is active.
    fn claim_slot(&self, ctx: &UndoContext<'_>, segment: &Segment) -> Result<Option<(Xid, TxnSlot)>> {
        let mut header = self.header_for_change(ctx, segment)?;
        let view = UndoHeader(&header);
        let mut oldest: Option<(usize, u64)> = None;
        for i in 0..TXN_SLOTS {
            let (state, commit_scn) = view.slot_state(i).map_err(|r| self.corrupt(segment.header_rdba, r))?;
            if state != SlotState::Active && oldest.is_none_or(|(_, o)| commit_scn < o) {
                oldest = Some((i, commit_scn));
            }
        }
        let Some((i, _)) = oldest else { return Ok(None) };
        let old = view.slot(i).map_err(|r| self.corrupt(segment.header_rdba, r))?;
        if old.state == SlotState::Committed {
            UndoHeaderMut(&mut header).raise_control(old.commit_scn, old.commit_time);
        }
        let wrap = old.wrap.wrapping_add(1);
        let slot = TxnSlot { state: SlotState::Active, wrap, start_scn: ctx.scn, ..TxnSlot::FREE };
        UndoHeaderMut(&mut header).set_slot(i, &slot);
        block::set_scn(&mut header, ctx.scn);
        let ended_at = if old.state == SlotState::Committed { old.commit_time } else { 0 };
        segment.note_claimed(i, ActiveTxn::new(wrap, ctx.scn), ended_at);
        Ok(Some((Xid { usn: segment.usn, slot: i as u16, wrap }, old)))
    }

    /// Appends an undo record for active transaction `xid`, chained after its previous
    /// record; counts `undo change vector size`. Fails with `Error::UndoSpace` when no
    /// undo block can be had.
    pub fn append(&self, ctx: &UndoContext<'_>, xid: Xid, body: &[u8]) -> Result<Uba> {
        if body.len() > self.max_body_len() {
            return Err(Error::InvalidValue {
                context: "undo record".into(),
                message: format!("{} bytes is more than an undo block holds ({})", body.len(), self.max_body_len()),
            });
        }
        let (segment, txn) = self.active(xid)?;
        let uba = self.append_record(ctx, segment, xid, &txn, body)?;
        ctx.stats.add(Stat::UndoChangeVectorSize, (RECORD_HEADER_LEN + body.len()) as u64);
        Ok(uba)
    }

    /// Writes the record into the transaction's current undo block, or a new one if it
    /// does not fit there.
    fn append_record(
        &self,
        ctx: &UndoContext<'_>,
        segment: &Segment,
        xid: Xid,
        txn: &ActiveTxn,
        body: &[u8],
    ) -> Result<Uba> {
        if let Some((rdba, seq)) = txn.current {
            let mut guard = ctx.cache.current_get(ctx.stats, rdba)?;
            self.check_owned(&guard, rdba, xid, seq)?;
            if let Some(record) = UndoBlockMut(&mut guard).append(txn.last, body) {
                block::set_scn(&mut guard, ctx.scn);
                let uba = Uba { rdba, seq, record };
                segment.update_txn(xid, |t| t.record_written(uba, false));
                return Ok(uba);
            }
        }
        self.append_in_another_block(ctx, segment, xid, txn.last, body)
    }

    /// Moves `xid` to another undo block and writes its record there: the block its
    /// segment handed out last, if that one's owner has ended and the record fits, else
    /// a block claimed for it. The transaction's slot in the header catches up with its
    /// mirror. The block's guard is released before the header's (declared after it), so
    /// the header never names a block whose change comes later.
    fn append_in_another_block(
        &self,
        ctx: &UndoContext<'_>,
        segment: &Segment,
        xid: Xid,
        prev: Uba,
        body: &[u8],
    ) -> Result<Uba> {
        let mut header = self.header_for_change(ctx, segment)?;
        let (mut guard, seq) = match self.take_over_head(ctx, segment, &header, xid, body.len())? {
            Some(taken) => taken,
            None => self.claim_block(ctx, segment, &mut header, xid)?,
        };
        let record = UndoBlockMut(&mut guard).append(prev, body);
        let record = record.expect("a body that fits the block taken over, or at most max_body_len bytes, fits");
        block::set_scn(&mut guard, ctx.scn);
        let uba = Uba { rdba: guard.rdba(), seq, record };
        let txn = segment.update_txn(xid, |t| t.record_written(uba, true));
        self.write_slot(ctx, &mut header, xid, &txn, SlotState::Active, 0, 0)?;
        Ok(uba)
    }

    /// Reads the record at `uba` (a consistent get of its undo block). Fails with
    /// `Error::SnapshotTooOld` if the block has been reused since.
    pub fn read(&self, ctx: &UndoContext<'_>, uba: Uba) -> Result<UndoRecord> {
        let block_no = block::rdba_block(uba.rdba);
        if block::rdba_file(uba.rdba) != UNDO_FILE_NO || block_no >= self.tablespace_blocks.load(Ordering::Acquire) {
            return Err(self.corrupt_xid(format!("undo address {uba:?} names no undo block")));
        }
        let guard = ctx.cache.consistent_get(ctx.stats, uba.rdba)?;
        let view = UndoBlock(&guard);
        if !view.is_undo_block() {
            return Err(self.corrupt(uba.rdba, format!("undo address {uba:?} names a block that holds no undo")));
        }
        if view.seq() != uba.seq {
            UndoCounters::bump(&self.counters.snapshot_too_old);
            let found = view.seq();
            // Released before the space lock: a session handing out this block holds that
            // lock while it waits for the block.
            drop(guard);
            let owner = self.space.lock().owner_of(block_no);
            let owner = owner.map_or_else(|| "no segment".into(), segment_name);
            let file = self
                .path
                .file_name()
                .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned());
            return Err(Error::SnapshotTooOld {
                reason: format!(
                    "undo block {block_no} of {file}, now {owner}'s, has been reused: sequence {found}, the record needs {}",
                    uba.seq
                ),
            });
        }
        let (xid, prev, body) = view.record(uba.record as usize).map_err(|r| self.corrupt(uba.rdba, r))?;
        Ok(UndoRecord { xid, prev, body: body.to_vec() })
    }

    /// The newest record of active transaction `xid` (`Uba::NONE` if it wrote none).
    pub fn last_record(&self, _ctx: &UndoContext<'_>, xid: Xid) -> Result<Uba> {
        Ok(self.active(xid)?.1.last)
    }

    /// Makes `to` the newest record of active transaction `xid` again (after a rollback
    /// to a savepoint applied the records after it).
    pub fn truncate_chain(&self, ctx: &UndoContext<'_>, xid: Xid, to: Uba) -> Result<()> {
        let (segment, _) = self.active(xid)?;
        let mut header = self.header_for_change(ctx, segment)?;
        let txn = segment.update_txn(xid, |t| {
            t.last = to;
            if to.is_none() {
                t.first = Uba::NONE;
            }
        });
        self.write_slot(ctx, &mut header, xid, &txn, SlotState::Active, 0, 0)
    }

    /// Ends transaction `xid` at `scn` (commit, or the end of a rollback).
    pub fn commit(&self, ctx: &UndoContext<'_>, xid: Xid, scn: u64) -> Result<()> {
        let (segment, txn) = self.active(xid)?;
        let mut header = self.header_for_change(ctx, segment)?;
        let now = segment::unix_now();
        self.write_slot(ctx, &mut header, xid, &txn, SlotState::Committed, scn, now)?;
        block::set_scn(&mut header, ctx.scn.max(scn));
        segment.note_ended(xid, now);
        self.counters.ended();
        Ok(())
    }

    /// What the transaction table says of `xid` (a consistent get of its segment header).
    pub fn status(&self, ctx: &UndoContext<'_>, xid: Xid) -> Result<TxnStatus> {
        let segment = self.segment(xid).ok_or_else(|| self.corrupt_xid(format!("xid {xid} names no undo slot")))?;
        let header = ctx.cache.consistent_get(ctx.stats, segment.header_rdba)?;
        let view = self.checked_header(&header, segment)?;
        let slot = view.slot(xid.slot as usize).map_err(|r| self.corrupt(segment.header_rdba, r))?;
        if slot.wrap > xid.wrap {
            let upper_bound = TxnStatus::Committed { scn: view.control_scn(), upper_bound: true };
            drop(header);
            return Ok(self.slot_history(ctx, slot.first, xid)?.unwrap_or(upper_bound));
        }
        match slot.state {
            _ if slot.wrap < xid.wrap => {}
            SlotState::Active => return Ok(TxnStatus::Active),
            SlotState::Committed => {
                drop(header);
                // Written here a moment before its SCN is published: a session that acted
                // on the commit in that moment would take its next snapshot below it.
                ctx.clock.wait_published(slot.commit_scn);
                return Ok(TxnStatus::Committed { scn: slot.commit_scn, upper_bound: false });
            }
            SlotState::Free => {}
        }
        Err(self.corrupt(segment.header_rdba, format!("xid {xid} is newer than its slot (wrap {})", slot.wrap)))
    }

    /// The commit of `xid`, found by rolling its transaction-table slot back along the
    /// history records from `first` (the first record of the slot's current holder);
    /// `None` where the history does not reach it.
    fn slot_history(&self, ctx: &UndoContext<'_>, mut first: Uba, xid: Xid) -> Result<Option<TxnStatus>> {
        while !first.is_none() {
            let record = match self.read(ctx, first) {
                Ok(record) => record,
                // The history has been overwritten: the upper bound is all there is.
                Err(Error::SnapshotTooOld { .. }) => return Ok(None),
                Err(e) => return Err(e),
            };
            let Some(history) = SlotHistory::decode(&record.body) else { return Ok(None) };
            ctx.stats.add(Stat::TransactionTablesCrUndoRecordsApplied, 1);
            if history.wrap == xid.wrap {
                return Ok(Some(TxnStatus::Committed { scn: history.commit_scn, upper_bound: false }));
            }
            if history.wrap < xid.wrap {
                return Ok(None);
            }
            first = history.first;
        }
        Ok(None)
    }

    /// Active transactions and their undo use.
    pub fn transactions(&self) -> Vec<TxnUsage> {
        let mut out = Vec::new();
        for segment in &self.segments {
            for (slot, txn) in segment.active.lock().iter().enumerate() {
                if let Some(t) = txn {
                    out.push(TxnUsage {
                        xid: Xid { usn: segment.usn, slot: slot as u16, wrap: t.wrap },
                        start_scn: t.start_scn,
                        used_ublk: u64::from(t.used_ublk),
                        used_urec: u64::from(t.used_urec),
                    });
                }
            }
        }
        out
    }

    /// The segment of `xid`, if its usn and slot name one.
    fn segment(&self, xid: Xid) -> Option<&Segment> {
        let index = usize::from(xid.usn).checked_sub(1)?;
        self.segments.get(index).filter(|_| (xid.slot as usize) < TXN_SLOTS)
    }

    /// The segment and mirror of active transaction `xid`.
    fn active(&self, xid: Xid) -> Result<(&Segment, ActiveTxn)> {
        let segment = self.segment(xid);
        let txn = segment.and_then(|s| s.active_txn(xid));
        match (segment, txn) {
            (Some(s), Some(t)) => Ok((s, t)),
            _ => Err(Error::Transaction { message: format!("transaction {xid} is not active") }),
        }
    }

    /// The segment header, for changing (a db block get), checked.
    fn header_for_change<'a>(&self, ctx: &UndoContext<'a>, segment: &Segment) -> Result<crate::buffer::WriteGuard<'a>> {
        let header = ctx.cache.current_get(ctx.stats, segment.header_rdba)?;
        self.checked_header(&header, segment)?;
        Ok(header)
    }

    /// Checks a segment header block read from the cache is the header of `segment`.
    fn checked_header<'b>(&self, bytes: &'b [u8], segment: &Segment) -> Result<UndoHeader<'b>> {
        let view = UndoHeader(bytes);
        if BlockHeader(bytes).block_type() != Some(BlockType::UndoHeader) || view.usn() != segment.usn {
            return Err(self.corrupt(segment.header_rdba, "not the undo segment header it should be"));
        }
        Ok(view)
    }

    /// Writes transaction `xid`'s slot from its mirror, in `state` (committed at `scn`, at
    /// unix time `commit_time`).
    #[allow(clippy::too_many_arguments)]
    fn write_slot<H: BlockWrite + ?Sized>(
        &self,
        ctx: &UndoContext<'_>,
        header: &mut H,
        xid: Xid,
        txn: &ActiveTxn,
        state: SlotState,
        scn: u64,
        commit_time: u32,
    ) -> Result<()> {
        let rdba = block::BlockHeader(header.bytes()).rdba();
        let old = UndoHeader(header.bytes()).slot(xid.slot as usize).map_err(|r| self.corrupt(rdba, r))?;
        if old.state != SlotState::Active || old.wrap != xid.wrap {
            return Err(
                self.corrupt(rdba, format!("slot of active transaction {xid} says {:?}, wrap {}", old.state, old.wrap))
            );
        }
        let slot = TxnSlot {
            state,
            wrap: xid.wrap,
            start_scn: txn.start_scn,
            commit_scn: scn,
            commit_time,
            current_block: txn.current.map_or(0, |(b, _)| b),
            first: txn.first,
            last: txn.last,
            used_ublk: txn.used_ublk,
            used_urec: txn.used_urec,
        };
        UndoHeaderMut(header).set_slot(xid.slot as usize, &slot);
        block::set_scn(header, ctx.scn);
        Ok(())
    }

    /// Checks that undo block `rdba` (the current block of `xid`) still is.
    fn check_owned(&self, bytes: &[u8], rdba: u32, xid: Xid, seq: u16) -> Result<()> {
        let view = UndoBlock(bytes);
        if !view.is_undo_block() || view.owner() != xid || view.seq() != seq {
            return Err(self.corrupt(rdba, format!("current undo block of {xid} (sequence {seq}) belongs to another")));
        }
        Ok(())
    }

    fn corrupt(&self, rdba: u32, reason: impl Into<String>) -> Error {
        Error::Corrupt { file: self.path.clone(), block: Some(block::rdba_block(rdba)), reason: reason.into() }
    }

    /// A corruption error for an xid or undo address (read from a data block) that names
    /// nothing in the undo tablespace.
    fn corrupt_xid(&self, reason: String) -> Error {
        Error::Corrupt { file: self.path.clone(), block: None, reason }
    }
}

impl Undo {
    /// Transaction recovery, first step: the transactions the transaction tables show
    /// active (dead, since the database has just opened), with each one's newest undo
    /// record found: the slot keeps the transaction's current undo block, and the
    /// newest record there is the chain's head (the slot's own copy may lag).
    pub fn dead_transactions(&self, ctx: &UndoContext<'_>) -> Result<Vec<Xid>> {
        let mut dead = Vec::new();
        for segment in &self.segments {
            let slots: Vec<(usize, TxnSlot)> = {
                let header = ctx.cache.consistent_get(ctx.stats, segment.header_rdba)?;
                let view = self.checked_header(&header, segment)?;
                (0..TXN_SLOTS)
                    .map(|i| view.slot(i).map(|s| (i, s)).map_err(|r| self.corrupt(segment.header_rdba, r)))
                    .collect::<Result<Vec<_>>>()?
            };
            for (i, slot) in slots.into_iter().filter(|(_, s)| s.state == SlotState::Active) {
                let xid = Xid { usn: segment.usn, slot: i as u16, wrap: slot.wrap };
                let mut newest = None;
                if slot.current_block != 0 && block::rdba_file(slot.current_block) == UNDO_FILE_NO {
                    let block = ctx.cache.consistent_get(ctx.stats, slot.current_block)?;
                    let view = UndoBlock(&block);
                    if view.is_undo_block() && view.owner() == xid && view.record_count() > 0 {
                        let record = (view.record_count() - 1) as u8;
                        newest = Some(Uba { rdba: slot.current_block, seq: view.seq(), record });
                    }
                }
                if segment.active_txn(xid).is_none() {
                    segment.active.lock()[i] = Some(ActiveTxn::new(slot.wrap, slot.start_scn));
                }
                segment.update_txn(xid, |t| {
                    if let Some(uba) = newest {
                        t.last = uba;
                        t.current = Some((uba.rdba, uba.seq));
                        if t.first.is_none() {
                            t.first = slot.first;
                        }
                    }
                });
                dead.push(xid);
            }
        }
        Ok(dead)
    }
}

/// The first byte of a slot-history record's body: the kinds of undo records for table
/// blocks (see `txn::change`) are 1 and 2.
pub const SLOT_HISTORY_KIND: u8 = 3;

/// The undo record a transaction writes first when it takes over a transaction-table slot:
/// who held the slot before. Rollback leaves it in place; [`Undo::status`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SlotHistory {
    wrap: u32,
    commit_scn: u64,
    /// The previous holder's own first record (its history record, if it had one).
    first: Uba,
}

impl SlotHistory {
    const LEN: usize = 1 + 4 + 8 + codec::UBA_LEN;

    fn of(slot: &TxnSlot) -> SlotHistory {
        SlotHistory { wrap: slot.wrap, commit_scn: slot.commit_scn, first: slot.first }
    }

    fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; Self::LEN];
        b[0] = SLOT_HISTORY_KIND;
        codec::put_u32(&mut b, 1, self.wrap);
        codec::put_u64(&mut b, 5, self.commit_scn);
        codec::put_uba(&mut b, 13, self.first);
        b
    }

    fn decode(body: &[u8]) -> Option<SlotHistory> {
        (body.len() == Self::LEN && body[0] == SLOT_HISTORY_KIND).then(|| SlotHistory {
            wrap: codec::get_u32(body, 1),
            commit_scn: codec::get_u64(body, 5),
            first: codec::get_uba(body, 13),
        })
    }
}

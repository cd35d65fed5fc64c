//! Space management of the undo tablespace: which extents each segment owns, and handing
//! out an undo block to a transaction that needs one, reusing, stealing or growing.
//!
//! A segment's ring is its extents in the order they lie in the file; its header records
//! the block handed out last (the ring head). A transaction that needs a block first
//! takes over the ring head, if its owner has ended and there is room in it
//! ([`Undo::take_over_head`]); otherwise the next block is sought after the head,
//! wrapping around, and handed out from the first of these that has one:
//!
//! ```text
//!  1. the segment's own ring: a free or expired block      (EXPBLKREUCNT)
//!  2. an extent of another segment, every block free or expired: stolen
//!                                                           (EXPSTEALCNT)
//!  3. a new extent at the end of the file: the tablespace grows, up to its maximum
//!                                                           (EXTENDS)
//!  4. the segment's own ring: an unexpired block            (UNXPBLKREUCNT)
//!  5. an extent of another segment, no block active: stolen (UNXPSTEALCNT)
//!  6. none: the append fails with Error::UndoSpace, naming the maximum
//! ```
//!
//! (Oracle's order, for an undo tablespace that autoextends.) A stolen extent moves with
//! a change of its owner in the extent map; its blocks keep their contents until handed
//! out, each then getting the next sequence number, so a reader of an address into its
//! old contents gets `Error::SnapshotTooOld`, never another transaction's record.
//!
//! Each change is one block at a time, through the buffer cache, and every prefix of
//! them is a consistent tablespace: the file is extended before an extent that lies in
//! the new part is entered in the map; an extent's map entry is written before the
//! extent count that makes it count; a block is formatted, and its guard released,
//! before the segment header that names it (its caller's guard) is released. A block of
//! a segment's extent owned by another segment's transaction (an extent stolen, its
//! block not yet handed out again) is judged by that transaction's slot.
//!
//! What is known of each block (owner and sequence) is kept in memory; after open a
//! block is read once to learn it, except blocks in its segment header's never-formatted
//! run: the rest of the segment's newest extent that no transaction has used yet. A run
//! is believed only inside an extent never stolen (the map's flag), since a segment whose
//! extent was stolen keeps its stale run until it next takes an extent.
//!
//! Invariants: the extent map, `Space` and every segment's ring change only under
//! the `Undo::space` mutex; a block owned by an active transaction is never handed out
//! nor taken over, and an extent holding one is never stolen. Lock order: a segment header's content
//! lock, then the space mutex, then a block's content lock, then the control file's.

use super::extent_map::{self, Extent, MapHeader};
use super::segment::{Reuse, Segment, unix_now};
use super::stats::UndoCounters;
use super::tablespace::{self, UNDO_FILE_NO, segment_name};
use super::undo_block::{UndoBlock, UndoBlockMut, next_seq};
use super::{Undo, UndoContext, header::UndoHeaderMut};
use crate::buffer::{BufferCache, WriteGuard};
use crate::error::{Error, Result};
use crate::stats::SessionStats;
use crate::storage::block::{self, BlockHeader, BlockType};
use crate::storage::block_write::BlockWrite;
use crate::txn::Xid;
use std::path::Path;
use std::sync::atomic::Ordering;

/// What the undo layer knows of one block of an extent without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockEntry {
    /// Not looked at since the database was opened.
    Unknown,
    /// Owned by `owner` (`Xid::NONE` for a block never formatted) at sequence `seq`.
    Known { owner: Xid, seq: u16 },
}

/// A never formatted block.
const FRESH: BlockEntry = BlockEntry::Known { owner: Xid::NONE, seq: 0 };

/// The extent map in memory, and what is known of each block.
pub(super) struct Space {
    /// Map block 0's fields, as last written.
    pub header: MapHeader,
    /// Block number of map block 0.
    map_first: u32,
    /// Every extent, in map order (which is file order).
    pub extents: Vec<Extent>,
    /// Per segment (`usn - 1`): its extents, as indexes into `extents`, ascending.
    rings: Vec<Vec<u32>>,
    /// Per block of the tablespace, by block number.
    blocks: Vec<BlockEntry>,
}

impl Space {
    /// Reads the extent map whose block 0 is at `map_rdba`. `Err` names the block and what
    /// is wrong with it.
    pub fn load(cache: &BufferCache, stats: &SessionStats, map_rdba: u32, path: &Path) -> Result<Space> {
        let block_size = cache.block_size();
        let corrupt = |rdba: u32, reason: String| Error::Corrupt {
            file: path.to_owned(),
            block: Some(block::rdba_block(rdba)),
            reason: format!("undo extent map: {reason}"),
        };
        let header = {
            let guard = cache.consistent_get(stats, map_rdba)?;
            if !extent_map::is_map_block(&guard) {
                return Err(corrupt(map_rdba, "not an extent-map block".into()));
            }
            extent_map::read_header(&guard)
        };
        extent_map::check_header(&header, block_size).map_err(|r| corrupt(map_rdba, r))?;
        let map_first = block::rdba_block(map_rdba);
        let mut extents = Vec::with_capacity(header.extents as usize);
        for j in 0..header.extents.div_ceil(extent_map::entries_per_block(block_size)) {
            let rdba = block::rdba(UNDO_FILE_NO, map_first + j);
            let guard = cache.consistent_get(stats, rdba)?;
            if !extent_map::is_map_block(&guard) {
                return Err(corrupt(rdba, "not an extent-map block".into()));
            }
            for i in 0..extent_map::entries_per_block(block_size) as usize {
                if extents.len() < header.extents as usize {
                    extents.push(extent_map::read_extent(&guard, i));
                }
            }
        }
        let space = Space::new(header, map_first, extents, BlockEntry::Unknown);
        space.check().map_err(|r| corrupt(map_rdba, r))?;
        Ok(space)
    }

    fn new(header: MapHeader, map_first: u32, extents: Vec<Extent>, entry: BlockEntry) -> Space {
        let mut rings = vec![Vec::new(); usize::from(header.segments)];
        for (k, e) in extents.iter().enumerate() {
            if let Some(ring) = rings.get_mut(usize::from(e.owner).wrapping_sub(1)) {
                ring.push(k as u32);
            }
        }
        Space { header, map_first, extents, rings, blocks: vec![entry; header.blocks as usize] }
    }

    /// Checks that the extents lie apart, below the tablespace's end and past its headers
    /// and map, and that a segment owns each.
    fn check(&self) -> Result<(), String> {
        let reserved_end = self.map_first + self.header.map_blocks;
        let mut sorted: Vec<&Extent> = self.extents.iter().collect();
        sorted.sort_by_key(|e| e.first);
        for (k, e) in self.extents.iter().enumerate() {
            let headers = (1..=self.header.segments).map(|u| self.header.header_block(u));
            if e.blocks == 0
                || e.end() > self.header.blocks
                || e.owner == 0
                || e.owner > self.header.segments
                || headers.chain(self.map_first..reserved_end).any(|b| e.contains(b))
            {
                return Err(format!("extent {k} {e:?} lies outside the tablespace's undo blocks"));
            }
        }
        match sorted.windows(2).find(|w| w[0].end() > w[1].first) {
            Some(w) => Err(format!("extents {:?} and {:?} overlap", w[0], w[1])),
            None => Ok(()),
        }
    }

    /// Notes that blocks in `fresh`, by segment `usn`'s header, have never held undo:
    /// believed only where one extent of `usn`, never stolen, holds them all (a segment
    /// whose extent was stolen keeps a stale run in its header until it next takes an
    /// extent).
    pub fn note_fresh(&mut self, usn: u16, fresh: std::ops::Range<u32>) {
        let mut owned = self.rings[usize::from(usn - 1)].iter().map(|&k| self.extents[k as usize]);
        if fresh.is_empty() || !owned.any(|e| !e.stolen && e.contains(fresh.start) && fresh.end <= e.end()) {
            return;
        }
        for entry in &mut self.blocks[fresh.start as usize..fresh.end as usize] {
            if *entry == BlockEntry::Unknown {
                *entry = FRESH;
            }
        }
    }

    /// The segment owning block `block_no`, if an extent holds it.
    pub fn owner_of(&self, block_no: u32) -> Option<u16> {
        self.extents.iter().find(|e| e.contains(block_no)).map(|e| e.owner)
    }

    /// Extents and blocks of segment `usn`.
    pub fn segment_size(&self, usn: u16) -> (u64, u64) {
        let ring = &self.rings[usize::from(usn - 1)];
        (ring.len() as u64, ring.iter().map(|&k| u64::from(self.extents[k as usize].blocks)).sum())
    }

    /// The blocks of segment `usn`'s ring in ring order, from the one after block `head`
    /// (from the ring's start if `head` is not in it).
    fn ring_after(&self, usn: u16, head: u32) -> Vec<std::ops::Range<u32>> {
        let ring = &self.rings[usize::from(usn - 1)];
        let at = ring.iter().position(|&k| self.extents[k as usize].contains(head));
        let Some(i) = at else { return ring.iter().map(|&k| self.range(k)).collect() };
        let here = self.range(ring[i]);
        let later = ring[i + 1..].iter().chain(&ring[..i]).map(|&k| self.range(k));
        std::iter::once(head + 1..here.end).chain(later).chain(std::iter::once(here.start..head + 1)).collect()
    }

    fn range(&self, k: u32) -> std::ops::Range<u32> {
        let e = &self.extents[k as usize];
        e.first..e.end()
    }

    /// The owner and sequence of block `block_no`, reading its header (a consistent get)
    /// the first time it is looked at since open.
    fn entry(&mut self, ctx: &UndoContext<'_>, block_no: u32) -> Result<(Xid, u16)> {
        if let BlockEntry::Known { owner, seq } = self.blocks[block_no as usize] {
            return Ok((owner, seq));
        }
        let rdba = block::rdba(UNDO_FILE_NO, block_no);
        let guard = ctx.cache.consistent_get(ctx.stats, rdba)?;
        let (owner, seq) = match BlockHeader(&guard).block_type() {
            Some(BlockType::Unformatted) => (Xid::NONE, 0),
            Some(BlockType::UndoData) => (UndoBlock(&guard).owner(), UndoBlock(&guard).seq()),
            _ => return Err(ctx.corrupt(rdba, "block of an undo extent holds neither undo nor zeros")),
        };
        self.blocks[block_no as usize] = BlockEntry::Known { owner, seq };
        Ok((owner, seq))
    }
}

/// How a block was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// From the segment's own ring, reusable as said.
    OwnRing(Reuse),
    /// From an extent stolen from another segment, the worst of its blocks as said.
    Stolen(Reuse),
    /// From an extent just added to the tablespace.
    Grown,
}

impl Undo {
    /// Hands out an undo block to `xid` of `segment`, whose header (exclusively held) is
    /// `header`: formats it (a new block in the cache, not read) and records it as the
    /// ring head. Returns the block, exclusively held, and its new sequence.
    pub(super) fn claim_block<'a, H: BlockWrite + ?Sized>(
        &self,
        ctx: &UndoContext<'a>,
        segment: &Segment,
        header: &mut H,
        xid: Xid,
    ) -> Result<(WriteGuard<'a>, u16)> {
        let retention = self.retention.load(std::sync::atomic::Ordering::Relaxed);
        let now = unix_now();
        let mut space = self.space.lock();
        let head = block::rdba_block(super::header::UndoHeader(header.bytes()).ring_head());
        let (block_no, source) = self.choose(ctx, &mut space, segment, head, now, retention)?;
        self.count(segment, source);
        let (_, old_seq) = space.entry(ctx, block_no)?;
        let seq = next_seq(old_seq);
        let rdba = block::rdba(UNDO_FILE_NO, block_no);
        let object_id = tablespace::object_id(segment.usn);
        let mut guard = ctx.cache.new_block(ctx.stats, rdba, object_id)?;
        UndoBlockMut(&mut guard).format_zeroed(rdba, object_id, xid, seq);
        space.blocks[block_no as usize] = BlockEntry::Known { owner: xid, seq };
        UndoHeaderMut(header).set_ring_head(rdba);
        let fresh = super::header::UndoHeader(header.bytes()).fresh_run();
        let end = space.extents.iter().find(|e| e.contains(block_no)).map_or(block_no + 1, Extent::end);
        UndoHeaderMut(header).set_fresh_run(match source {
            // The rest of a new extent has never held undo.
            Source::Grown => block_no + 1..end,
            // A stolen extent's blocks may have; and the old run may lie in an extent
            // stolen from this segment, to which it must not apply if that comes back.
            Source::Stolen(_) => 0..0,
            Source::OwnRing(_) if fresh.contains(&block_no) => block_no + 1..fresh.end,
            Source::OwnRing(_) => fresh,
        });
        Ok((guard, seq))
    }

    /// The block `segment` handed out last (its header, exclusively held, is `header`),
    /// taken over by `xid` if its owner has ended and a record of `body_len` bytes still
    /// fits: successive transactions of a segment fill one block, as Oracle's do, where
    /// each taking a block of its own would spread a few hundred bytes of undo over a
    /// whole block. Returns the block, exclusively held, and its sequence (unchanged).
    pub(super) fn take_over_head<'a>(
        &self,
        ctx: &UndoContext<'a>,
        segment: &Segment,
        header: &[u8],
        xid: Xid,
        body_len: usize,
    ) -> Result<Option<(WriteGuard<'a>, u16)>> {
        // 0 (none handed out yet) names no block of the undo file either.
        let head = super::header::UndoHeader(header).ring_head();
        if block::rdba_file(head) != UNDO_FILE_NO {
            return Ok(None);
        }
        let block_no = block::rdba_block(head);
        let mut space = self.space.lock();
        if space.owner_of(block_no) != Some(segment.usn) {
            // The extent holding it has been stolen since.
            return Ok(None);
        }
        // Free: never formatted, nothing to append after; Active: its owner still writes
        // into it.
        if matches!(self.block_reuse(ctx, &mut space, block_no, unix_now(), 0)?, Reuse::Free | Reuse::Active) {
            return Ok(None);
        }
        let (owner, seq) = space.entry(ctx, block_no)?;
        let mut guard = ctx.cache.current_get(ctx.stats, head)?;
        let view = UndoBlock(&guard);
        if !view.is_undo_block() || view.owner() != owner || view.seq() != seq {
            return Err(ctx.corrupt(
                head,
                format!(
                    "undo block handed out last holds {} at sequence {}, not {owner} at {seq}",
                    view.owner(),
                    view.seq()
                ),
            ));
        }
        if !view.fits(body_len) {
            return Ok(None);
        }
        UndoBlockMut(&mut guard).take_over(xid);
        space.blocks[block_no as usize] = BlockEntry::Known { owner: xid, seq };
        Ok(Some((guard, seq)))
    }

    /// The block to hand out next, and where it came from (see the module comment).
    fn choose(
        &self,
        ctx: &UndoContext<'_>,
        space: &mut Space,
        segment: &Segment,
        head: u32,
        now: u32,
        retention: u64,
    ) -> Result<(u32, Source)> {
        let usn = segment.usn;
        let mut unexpired = None;
        for range in space.ring_after(usn, head) {
            for block_no in range {
                match self.block_reuse(ctx, space, block_no, now, retention)? {
                    reuse @ (Reuse::Free | Reuse::Expired) => return Ok((block_no, Source::OwnRing(reuse))),
                    Reuse::Unexpired => {
                        unexpired.get_or_insert(block_no);
                    }
                    Reuse::Active => {}
                }
            }
        }
        if let Some(first) = self.steal(ctx, space, usn, Reuse::Expired, now, retention)? {
            return Ok((first, Source::Stolen(Reuse::Expired)));
        }
        if let Some(first) = self.grow(ctx, space, usn)? {
            return Ok((first, Source::Grown));
        }
        if let Some(block_no) = unexpired {
            return Ok((block_no, Source::OwnRing(Reuse::Unexpired)));
        }
        if let Some(first) = self.steal(ctx, space, usn, Reuse::Unexpired, now, retention)? {
            return Ok((first, Source::Stolen(Reuse::Unexpired)));
        }
        UndoCounters::bump(&self.counters.no_space);
        Err(self.full(space, usn))
    }

    /// The error of a tablespace at its maximum whose every block is held.
    fn full(&self, space: &Space, usn: u16) -> Error {
        let max = u64::from(space.header.max_blocks) * self.block_size as u64;
        Error::UndoSpace {
            reason: format!(
                "undo segment {}: the undo tablespace is at its maximum of {} blocks ({max} bytes, undo_tablespace_maxsize) and all {} of its undo blocks belong to active transactions",
                segment_name(usn),
                space.header.max_blocks,
                space.extents.iter().map(|e| u64::from(e.blocks)).sum::<u64>(),
            ),
        }
    }

    fn count(&self, segment: &Segment, source: Source) {
        let c = &self.counters;
        UndoCounters::bump(&c.undo_blocks);
        match source {
            Source::OwnRing(Reuse::Expired) => UndoCounters::bump(&c.expired_reuse),
            Source::OwnRing(Reuse::Unexpired) => UndoCounters::bump(&c.unexpired_reuse),
            Source::OwnRing(_) => {}
            Source::Stolen(Reuse::Unexpired) => UndoCounters::bump(&c.unexpired_steals),
            Source::Stolen(_) => UndoCounters::bump(&c.expired_steals),
            Source::Grown => {
                UndoCounters::bump(&c.extends);
                segment.extends.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether block `block_no` may be reused, judged by its owner's transaction table.
    fn block_reuse(
        &self,
        ctx: &UndoContext<'_>,
        space: &mut Space,
        block_no: u32,
        now: u32,
        retention: u64,
    ) -> Result<Reuse> {
        let (owner, _) = space.entry(ctx, block_no)?;
        self.reuse_of(owner, now, retention)
            .map_err(|r| ctx.corrupt(block::rdba(UNDO_FILE_NO, block_no), format!("owner of undo block: {r}")))
    }

    /// Whether a block owned by `owner` may be reused.
    fn reuse_of(&self, owner: Xid, now: u32, retention: u64) -> Result<Reuse, String> {
        if owner.is_none() {
            return Ok(Reuse::Free);
        }
        let segment = usize::from(owner.usn).checked_sub(1).and_then(|i| self.segments.get(i));
        let segment = segment.ok_or_else(|| format!("transaction {owner} names no undo segment"))?;
        segment.reuse_of(owner, now, retention)
    }

    /// Steals for segment `usn` the first extent of another segment whose blocks are all
    /// at most `worst` (`Expired` or `Unexpired`); returns its first block.
    fn steal(
        &self,
        ctx: &UndoContext<'_>,
        space: &mut Space,
        usn: u16,
        worst: Reuse,
        now: u32,
        retention: u64,
    ) -> Result<Option<u32>> {
        let n = space.header.segments;
        for victim in (1..n).map(|i| (usn - 1 + i) % n + 1) {
            for k in space.rings[usize::from(victim - 1)].clone() {
                if self.extent_reuse(ctx, space, k, worst, now, retention)? {
                    self.move_extent(ctx, space, k, usn)?;
                    return Ok(Some(space.extents[k as usize].first));
                }
            }
        }
        Ok(None)
    }

    /// Whether every block of extent `k` may be reused, none worse than `worst`.
    fn extent_reuse(
        &self,
        ctx: &UndoContext<'_>,
        space: &mut Space,
        k: u32,
        worst: Reuse,
        now: u32,
        retention: u64,
    ) -> Result<bool> {
        for block_no in space.range(k) {
            if self.block_reuse(ctx, space, block_no, now, retention)? > worst {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Gives extent `k` to segment `usn`: its entry in the extent map, then the mirrors.
    fn move_extent(&self, ctx: &UndoContext<'_>, space: &mut Space, k: u32, usn: u16) -> Result<()> {
        let extent = Extent { owner: usn, stolen: true, ..space.extents[k as usize] };
        self.write_extent_entry(ctx, space, k, &extent)?;
        let from = &mut space.rings[usize::from(space.extents[k as usize].owner - 1)];
        from.retain(|&x| x != k);
        let to = &mut space.rings[usize::from(usn - 1)];
        let at = to.partition_point(|&x| x < k);
        to.insert(at, k);
        space.extents[k as usize] = extent;
        Ok(())
    }

    /// Adds an extent at the end of the tablespace for segment `usn`; returns its first
    /// block, or `None` at the maximum size.
    fn grow(&self, ctx: &UndoContext<'_>, space: &mut Space, usn: u16) -> Result<Option<u32>> {
        let header = space.header;
        let blocks = tablespace::next_extent_blocks(header.blocks, header.max_blocks, self.block_size);
        let capacity = header.map_blocks * extent_map::entries_per_block(self.block_size);
        if blocks == 0 || header.extents >= capacity {
            return Ok(None);
        }
        let extent = Extent { first: header.blocks, blocks, owner: usn, stolen: false };
        self.file.ensure_blocks(extent.end())?;
        self.write_extent_entry(ctx, space, header.extents, &extent)?;
        let grown = MapHeader { blocks: extent.end(), extents: header.extents + 1, ..header };
        {
            let mut map = self.map_block_for_change(ctx, space, 0)?;
            extent_map::write_header(&mut map, &grown);
            block::set_scn(&mut map, ctx.scn);
        }
        if let Some(entry) = ctx.space.control.lock().datafiles.iter_mut().find(|d| d.number == UNDO_FILE_NO) {
            entry.allocated_blocks = entry.allocated_blocks.max(extent.end());
        }
        space.header = grown;
        space.rings[usize::from(usn - 1)].push(space.extents.len() as u32);
        space.extents.push(extent);
        space.blocks.resize(extent.end() as usize, FRESH);
        self.tablespace_blocks.store(extent.end(), Ordering::Release);
        Ok(Some(extent.first))
    }

    /// Writes extent `k`'s entry in the extent map (a db block get of its map block).
    fn write_extent_entry(&self, ctx: &UndoContext<'_>, space: &Space, k: u32, extent: &Extent) -> Result<()> {
        let (j, i) = extent_map::entry_position(k, self.block_size);
        let mut map = self.map_block_for_change(ctx, space, j)?;
        extent_map::write_extent(&mut map, i, extent);
        block::set_scn(&mut map, ctx.scn);
        Ok(())
    }

    /// Map block `j`, for changing, checked.
    fn map_block_for_change<'a>(&self, ctx: &UndoContext<'a>, space: &Space, j: u32) -> Result<WriteGuard<'a>> {
        let rdba = block::rdba(UNDO_FILE_NO, space.map_first + j);
        let guard = ctx.cache.current_get(ctx.stats, rdba)?;
        if !extent_map::is_map_block(&guard) {
            return Err(self.corrupt(rdba, "not an extent-map block"));
        }
        Ok(guard)
    }
}

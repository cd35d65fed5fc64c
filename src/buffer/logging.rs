//! How the cache makes redo: each write guard on a block's current version keeps what
//! its redo needs (the [`Capture`] it carries, made here) as it is written through, and
//! appends one redo record when it is released, under the block's exclusive content lock
//! (see the `redo` module for the whole picture). Also the buffer's two LSNs and the
//! checkpoint position they give.
//!
//! ```text
//!  take guard:   LOGGED set? ──► compare: the release logs what differs from before
//!  write:        compare, a stretch asked for (BlockWrite::range_mut) ─► copy its bytes
//!                compare, the whole block (deref_mut) ──► copy the block, the first time
//!  release:      new block ───────► Op::New, ranges that differ from zeros
//!                not compare ─────► Op::Image, the whole block; LOGGED set
//!                compare ─────────► Op::Change, ranges that differ from the copies
//!                                   (none: nothing is logged)
//!                then page LSN = end of the record; first-dirty LSN = its start if unset
//! ```
//!
//! Every byte a guard changes lies in a stretch it asked for or was written after the
//! whole block was copied (the borrow checker sees to it: see `storage::block_write`),
//! and the first copy that holds a byte holds it as it was: so the comparison finds every
//! byte that differs. A change that names its stretches costs a copy and a comparison of
//! those bytes, not of the block.
//!
//! A change that spans blocks and must be recovered whole (an index split) holds all its
//! write guards and hands them to [`BufferCache::release_together`]: one record of one
//! vector a block, every buffer's page LSN its end. The database writer's incremental
//! checkpoints write, oldest first, the buffers first changed before a given LSN
//! ([`BufferCache::write_older_than`]).
//!
//! LOGGED (a state bit) says the redo since the block was last read or written holds an
//! image of it; reads and writes clear it. So after any write that a crash may tear,
//! the block's next change logs it whole (torn-block protection). The one change that
//! skips this is a commit cleanout of a block without LOGGED: it only repeats what the
//! transaction table records, so it is made in the cache alone, unlogged and without
//! dirtying the buffer, rather than cost a block image
//! ([`BufferCache::commit_cleanout_guard`]).
//!
//! Invariants: a block is written only once the redo up to its page LSN is on disk
//! (`write_locked`); a buffer's first-dirty LSN is set (nonzero) from its first change
//! after it was last written until that write is done, and a write whose sync is still
//! to come holds `unsynced_min` at or below it: so the checkpoint position
//! ([`BufferCache::unwritten_lsn`]) never passes a change not yet synced in its datafile.

use super::guard::{Capture, Spans, WriteGuard};
use super::{BufferCache, DIRTY, IN_CHAIN, LOGGED};
use crate::error::Result;
use crate::redo::record::{self, Op};
use crate::redo::{Lsn, RedoLog};
use crate::stats::SessionStats;
use crate::storage::block;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A buffer's LSNs.
#[derive(Debug, Default)]
pub(super) struct BufferLsns {
    /// End of the redo of the latest change: written only after the log is past it.
    pub page: AtomicU64,
    /// Start of the redo of the first change since the block was last written (0: none).
    pub first_dirty: AtomicU64,
}

thread_local! {
    /// The changed byte ranges of one diff, reused from guard to guard.
    static RANGES: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
}

/// The change made through one of several guards released together: the guard's place
/// in their list, the kind of change, the changed byte ranges.
type GuardChange = (usize, Op, Vec<(usize, usize)>);

/// Zeros to compare a new block with (the largest block size).
static ZEROS: [u8; 32768] = [0; 32768];

impl BufferCache {
    /// Starts making redo for every change from now on.
    pub fn attach_redo(&self, redo: Arc<RedoLog>) {
        let _ = self.redo.set(redo);
    }

    /// What a write guard on the current version in buffer `index` (exclusively locked)
    /// keeps for its redo; `None` while no redo is made (recovery, tests of the cache).
    /// Nothing is copied yet: the guard keeps the bytes it is asked to write, before
    /// they are written.
    pub(super) fn capture<'c>(&'c self, stats: &'c SessionStats, index: u32, new: bool) -> Option<Capture<'c>> {
        self.redo.get()?;
        let compare = !new && self.headers[index as usize].has(LOGGED);
        Some(Capture { stats, new, compare, whole: None, spans: Spans::default() })
    }

    /// Appends the redo of the change made through a guard on buffer `index` (still
    /// exclusively locked) and updates the buffer's LSNs. A change the log cannot take
    /// (it failed) leaves the block never to be written: recovery will not know it.
    pub(super) fn log_change(&self, index: u32, rdba: u32, mut capture: Capture<'_>) {
        let Some(redo) = self.redo.get() else { return };
        // SAFETY: the caller holds the buffer's pin and exclusive content lock.
        let after = unsafe { self.buffer_bytes(index) };
        RANGES.with(|r| {
            let mut ranges = r.borrow_mut();
            let ranges = &mut *ranges;
            let op = change_of(&mut capture, after, ranges);
            let stats = capture.stats;
            capture.recycle();
            if op != Op::Change || !ranges.is_empty() {
                let scn = block::BlockHeader(after).scn();
                let len = record::encoded_len(ranges);
                let appended =
                    redo.append(stats, len, scn, |out, seq| record::encode_one(out, seq, scn, rdba, op, after, ranges));
                self.note_logged(index, appended.ok(), redo);
            }
        });
    }

    /// Logs the changes made through `guards` as one redo record, then releases them:
    /// recovery applies all of them or none. A change that spans blocks and must not be
    /// seen half done after a crash (an index split: the two halves, the sibling's link
    /// and the segment header's high-water mark) holds all its guards until here. Every
    /// buffer gets the record's end as its page LSN, so none is written before the whole
    /// record is on disk.
    pub fn release_together(&self, mut guards: Vec<WriteGuard<'_>>) {
        let Some(redo) = self.redo.get() else { return };
        let mut captured: Vec<(usize, Capture<'_>)> =
            guards.iter_mut().enumerate().filter_map(|(i, g)| g.capture.take().map(|c| (i, c))).collect();
        let Some(stats) = captured.first().map(|(_, c)| c.stats) else { return };
        // SAFETY: each use: the guards hold their buffers' pins and exclusive locks.
        let block = |i: usize| unsafe { self.buffer_bytes(guards[i].index) };
        let changes: Vec<GuardChange> = captured
            .iter_mut()
            .map(|(i, capture)| {
                let mut ranges = Vec::new();
                let op = change_of(capture, block(*i), &mut ranges);
                (*i, op, ranges)
            })
            .filter(|(_, op, ranges)| *op != Op::Change || !ranges.is_empty())
            .collect();
        if !changes.is_empty() {
            let scn = changes.iter().map(|&(i, ..)| block::BlockHeader(block(i)).scn()).max().unwrap_or(0);
            let len = record::RECORD_HEADER + changes.iter().map(|(_, _, r)| record::vector_len(r)).sum::<usize>();
            let vectors: Vec<record::VectorToEncode<'_>> =
                changes.iter().map(|(i, op, r)| (guards[*i].rdba, *op, block(*i), r.as_slice())).collect();
            let appended = redo.append(stats, len, scn, |out, seq| record::encode_many(out, seq, scn, &vectors)).ok();
            for &(i, ..) in &changes {
                self.note_logged(guards[i].index, appended, redo);
            }
        }
        for (_, capture) in captured {
            capture.recycle();
        }
    }

    /// Sets buffer `index`'s LSNs after its change was appended at `appended` (start,
    /// end); `None`: the log could not take it, and the block is never to be written.
    fn note_logged(&self, index: u32, appended: Option<(Lsn, Lsn)>, redo: &RedoLog) {
        let lsns = &self.lsns[index as usize];
        match appended {
            Some((start, end)) => {
                lsns.page.store(end, Ordering::Release);
                let _ = lsns.first_dirty.compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed);
                self.headers[index as usize].state.fetch_or(LOGGED, Ordering::AcqRel);
                redo.note_appended(end);
            }
            None => lsns.page.store(Lsn::MAX, Ordering::Release),
        }
    }

    /// Before block `index` is written: the redo up to its page LSN must be on disk.
    /// Returns whether it is. A checkpoint's write does not wait while a log switch
    /// waits for a checkpoint (the log writer cannot write that redo until one frees the
    /// next group, so the two would wait for each other): the block is left dirty, its
    /// first-dirty LSN holding the checkpoint position back.
    pub(super) fn write_ahead(&self, index: u32, why: super::io::WriteFor) -> crate::error::Result<bool> {
        let Some(redo) = self.redo.get() else { return Ok(true) };
        let page = self.lsns[index as usize].page.load(Ordering::Acquire);
        match why {
            super::io::WriteFor::Checkpoint => redo.flush_to_unless_switch_waits(page),
            super::io::WriteFor::Eviction => redo.flush_to(page).map(|()| true),
        }
    }

    /// After block `index` was written (not yet synced): its next change logs it whole,
    /// and its first-dirty LSN moves to `unsynced_min` until the files are synced.
    pub(super) fn written(&self, index: u32) {
        let h = &self.headers[index as usize];
        h.state.fetch_and(!LOGGED, Ordering::AcqRel);
        let lsns = &self.lsns[index as usize];
        let first = lsns.first_dirty.load(Ordering::Acquire);
        if first != 0 {
            self.unsynced_min.fetch_min(first, Ordering::AcqRel);
            if h.state.load(Ordering::Acquire) & DIRTY == 0 {
                let _ = lsns.first_dirty.compare_exchange(first, 0, Ordering::AcqRel, Ordering::Relaxed);
            }
        }
    }

    /// Forgets the LSNs of buffer `index`, whose block leaves the cache unwritten (its
    /// object was dropped) or is reused.
    pub(super) fn forget_lsns(&self, index: u32) {
        let lsns = &self.lsns[index as usize];
        lsns.first_dirty.store(0, Ordering::Release);
        lsns.page.store(0, Ordering::Release);
    }

    /// The oldest redo a datafile may still lack: the first-dirty LSN of every buffer
    /// changed since it was written, and of writes not yet synced; `None` if none.
    pub fn unwritten_lsn(&self) -> Option<Lsn> {
        let unsynced = self.unsynced_min.load(Ordering::Acquire);
        let buffers = self.lsns.iter().map(|l| l.first_dirty.load(Ordering::Acquire)).filter(|&l| l != 0).min();
        let oldest = buffers.unwrap_or(Lsn::MAX).min(unsynced);
        (oldest != Lsn::MAX).then_some(oldest)
    }

    /// An incremental checkpoint's writes: every dirty buffer whose first change since it
    /// was last written is older than `below` (first-dirty LSN under it), oldest first,
    /// then a sync of the datafiles. Buffers changed later stay dirty, so the checkpoint
    /// position moves up to `below` without writing the blocks being changed now.
    pub fn write_older_than(&self, stats: &SessionStats, below: Lsn) -> Result<usize> {
        let mut oldest: Vec<(Lsn, u32)> = (0..self.headers.len() as u32)
            .filter_map(|index| {
                let first = self.lsns[index as usize].first_dirty.load(Ordering::Acquire);
                (first != 0 && first < below && self.headers[index as usize].has(IN_CHAIN)).then_some((first, index))
            })
            .collect();
        oldest.sort_unstable();
        let mut written = 0;
        for (_, index) in oldest {
            let h = &self.headers[index as usize];
            if h.has(DIRTY) && self.write_back(stats, index, super::io::WriteFor::Checkpoint)? {
                written += 1;
            }
        }
        self.sync_files()?;
        Ok(written)
    }

    /// Takes the unsynced writes' minimum before a sync of every datafile (which covers
    /// them); `restore_unsynced` puts it back if the sync fails.
    pub(super) fn take_unsynced(&self) -> Lsn {
        self.unsynced_min.swap(Lsn::MAX, Ordering::AcqRel)
    }

    pub(super) fn restore_unsynced(&self, lsn: Lsn) {
        self.unsynced_min.fetch_min(lsn, Ordering::AcqRel);
    }

    /// Instance recovery: applies one change vector to its block in the cache (before
    /// redo is attached, so nothing is logged). A whole image or a new block is not read
    /// first, so a block torn on disk is rebuilt; a change needs the block as a
    /// checkpoint or an earlier vector left it, and reads it (checked) if not cached.
    pub fn apply_redo(&self, stats: &SessionStats, vector: &record::Vector<'_>) -> crate::error::Result<()> {
        debug_assert!(self.redo.get().is_none(), "recovery applies redo before the log is attached");
        let mut guard = match vector.op {
            Op::Change => self.current_get(stats, vector.rdba)?,
            Op::Image | Op::New => self.new_block(stats, vector.rdba, 0)?,
        };
        vector.apply(&mut guard).map_err(|reason| self.corrupt(vector.rdba, reason))?;
        let object_id = block::BlockHeader(&guard).object_id();
        self.headers[guard.index as usize].object_id.store(object_id, Ordering::Relaxed);
        Ok(())
    }
}

/// The kind of change a guard made to `after`, and its changed byte ranges in `ranges`:
/// a new block against zeros; a block logged since it was read or written against what
/// the guard kept of it (the copy of the whole block, the stretches asked for), sorted,
/// stretches closer than a range header merged; else the whole image.
fn change_of(capture: &mut Capture<'_>, after: &[u8], ranges: &mut Vec<(usize, usize)>) -> Op {
    if capture.new {
        record::diff(&ZEROS[..after.len()], after, ranges);
        return Op::New;
    }
    if !capture.compare {
        ranges.clear();
        ranges.push((0, after.len()));
        return Op::Image;
    }
    match &capture.whole {
        Some(before) => record::diff(before, after, ranges),
        None => ranges.clear(),
    }
    let spans = &mut capture.spans;
    if !spans.ranges.is_empty() {
        // Slack after the last copy, so that its tail is compared as a whole chunk too.
        spans.before.extend_from_slice(&[0; record::CHUNK]);
        let mut kept = 0;
        for &(offset, len) in &spans.ranges {
            record::diff_stretch(after, offset, len, &spans.before[kept..], ranges);
            kept += len;
        }
        record::sort_and_merge(ranges);
    }
    Op::Change
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::MIN_BUFFERS;
    use crate::redo::reader;
    use crate::storage::block_write::BlockWrite;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// One write through a guard: bytes at an offset, in a stretch the guard is asked
    /// for, or anywhere through the whole block.
    #[derive(Debug, Clone)]
    enum Write {
        Stretch(usize, Vec<u8>),
        Whole(usize, Vec<u8>),
    }

    fn writes() -> impl Strategy<Value = Vec<Write>> {
        let bytes = || (0usize..8192, vec(any::<u8>(), 1..80));
        let write = prop_oneof![
            4 => bytes().prop_map(|(at, b)| Write::Stretch(at, b)),
            1 => bytes().prop_map(|(at, b)| Write::Whole(at, b)),
        ];
        vec(write, 0..12)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever a guard writes, through stretches it names, through the whole block,
        /// or both in any order (the same bytes again, bytes put back as they were), its
        /// record applied to the block as it was gives the block as it is; the ranges
        /// come sorted and apart, and a guard that changed nothing logs nothing.
        #[test]
        fn the_redo_of_a_change_turns_the_block_as_it_was_into_the_block_as_it_is(writes in writes()) {
            let dir = tempfile::tempdir().unwrap();
            let io = crate::storage::io::os();
            RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 1 << 20).unwrap();
            let log = Arc::new(RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap());
            let start = log.start(1, 1, 0).unwrap();
            let cache = BufferCache::new(MIN_BUFFERS * 8192, 8192);
            cache.attach_redo(log.clone());
            let stats = SessionStats::default();
            let rdba = block::rdba(1, 7);
            // A new block, logged against zeros: from then on its changes are compared.
            for (i, b) in cache.new_block(&stats, rdba, 9).unwrap().iter_mut().enumerate() {
                *b = (i % 251) as u8;
            }
            let before = cache.current_get(&stats, rdba).unwrap().to_vec();
            {
                let mut guard = cache.current_get(&stats, rdba).unwrap();
                for write in &writes {
                    let (Write::Stretch(at, bytes) | Write::Whole(at, bytes)) = write;
                    let end = (at + bytes.len()).min(8192);
                    match write {
                        Write::Stretch(..) => guard.range_mut(*at..end).copy_from_slice(&bytes[..end - at]),
                        Write::Whole(..) => guard[*at..end].copy_from_slice(&bytes[..end - at]),
                    }
                }
            }
            let after = cache.current_get(&stats, rdba).unwrap().to_vec();
            log.flush_all().unwrap();
            let mut records = Vec::new();
            reader::scan(&log.sequences(), start, |_, _, r| {
                records.push(r.vectors.clone().into_iter().map(|v| (v.op, v.ranges.iter().map(|&(o, b)| (o, b.to_vec())).collect::<Vec<_>>())).collect::<Vec<_>>());
                Ok(())
            }).unwrap();
            log.close();
            prop_assert_eq!(records.len(), if before == after { 1 } else { 2 }, "the new block's record, then the change's if any");
            let mut block = before.clone();
            for (op, ranges) in records.iter().skip(1).flatten() {
                prop_assert_eq!(*op, Op::Change);
                prop_assert!(ranges.windows(2).all(|w| w[0].0 + w[0].1.len() < w[1].0), "sorted, apart: {:?}", ranges.iter().map(|(o, b)| (o, b.len())).collect::<Vec<_>>());
                for (offset, bytes) in ranges {
                    block[*offset..offset + bytes.len()].copy_from_slice(bytes);
                }
            }
            prop_assert!(block == after, "the redo applied to the block as it was gives the block as it is");
        }
    }
}

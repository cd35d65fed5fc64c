//! Pinned access to a buffer's bytes: the only way any code touches block contents.
//!
//! Releasing (dropping or downgrading) a write guard on a block's current version is
//! where its change is logged: the guard carries what its redo needs ([`Capture`], made
//! and logged by the `logging` module), so no change to a block escapes the redo. A
//! write guard hands its bytes out whole (`DerefMut`) or stretch by stretch
//! ([`BlockWrite::range_mut`]): the first costs the redo a copy of the block and a
//! comparison of all of it, the second a copy and a comparison of each stretch.
//!
//! A [`ReadGuard`] holds a pin (the buffer cannot be evicted or reused) and the buffer's
//! content lock in shared mode; a [`WriteGuard`] holds a pin and the content lock in
//! exclusive mode. A write guard on a block's current version marks the buffer dirty; one
//! on a CR clone never does (clones are never written). Dropping a guard releases both,
//! so a pin cannot leak; [`WriteGuard::downgrade`] hands both to a read guard. A
//! [`PinnedRun`] holds the pins of a multiblock read until a scan turns them into read
//! guards one by one, and releases the rest when dropped.
//!
//! A read guard also carries the buffer's verified mark
//! ([`ReadGuard::structure_verified`]): set by a reader whose structural check passed,
//! cleared by the release or downgrade of every write guard, so it never outlives the
//! bytes it vouches for.

use super::BufferCache;
use crate::error::Result;
use crate::stats::SessionStats;
use crate::storage::block_write::BlockWrite;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

/// Shared, pinned access to one block in the cache.
pub struct ReadGuard<'c> {
    pub(super) cache: &'c BufferCache,
    pub(super) index: u32,
    pub(super) rdba: u32,
}

impl ReadGuard<'_> {
    /// The block address of the pinned block.
    pub fn rdba(&self) -> u32 {
        self.rdba
    }

    /// Whether a reader's structural check of these bytes passed since they last came
    /// into the buffer or were written ([`ReadGuard::mark_structure_verified`]): a check
    /// that walks every entry of a block need then run once per change, not once per get.
    /// Reading a block from disk, formatting it, building a clone and releasing any write
    /// guard on it all clear the mark.
    #[inline]
    pub fn structure_verified(&self) -> bool {
        self.cache.headers[self.index as usize].state.load(Ordering::Acquire) & super::VERIFIED != 0
    }

    /// Records that the caller's structural check of these bytes passed. The shared
    /// content lock held keeps any writer out until the guard is dropped, and a writer's
    /// release clears the mark again.
    #[inline]
    pub fn mark_structure_verified(&self) {
        self.cache.headers[self.index as usize].state.fetch_or(super::VERIFIED, Ordering::AcqRel);
    }
}

impl Deref for ReadGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this guard holds a pin and the shared content lock of the buffer, so no
        // writer changes it and it is not reused while the slice lives (bounded by &self).
        unsafe { self.cache.buffer_bytes(self.index) }
    }
}

impl Drop for ReadGuard<'_> {
    fn drop(&mut self) {
        self.cache.release_shared(self.index);
    }
}

/// Exclusive, pinned access to one block in the cache: its current version (dirty) or a
/// CR clone being built (never dirty).
pub struct WriteGuard<'c> {
    pub(super) cache: &'c BufferCache,
    pub(super) index: u32,
    pub(super) rdba: u32,
    /// What the release needs to log the change (current blocks, while redo is made).
    pub(super) capture: Option<Capture<'c>>,
}

/// What a write guard on a current block keeps for its redo.
pub(super) struct Capture<'c> {
    pub stats: &'c SessionStats,
    /// A block formatted without being read.
    pub new: bool,
    /// Whether the release logs the bytes that differ from the block as it was (else the
    /// whole block, or the bytes that differ from zeros for a new one).
    pub compare: bool,
    /// While `compare`: the whole block as it was when first written as a whole
    /// ([`WriteGuard::deref_mut`], [`BlockWrite::whole_mut`]).
    pub whole: Option<Box<[u8]>>,
    /// While `compare`: the stretches asked for by [`BlockWrite::range_mut`], each with
    /// its bytes as they were when first asked for.
    pub spans: Spans,
}

/// Stretches of a block (offset, length) and their bytes before a change, end to end.
#[derive(Default)]
pub(super) struct Spans {
    pub ranges: Vec<(usize, usize)>,
    pub before: Vec<u8>,
}

impl Capture<'_> {
    /// Before the block is written anywhere: keeps a copy of it, the first time.
    #[inline]
    fn before_whole_write(&mut self, block: &[u8]) {
        if self.compare && self.whole.is_none() {
            self.whole = Some(copy_of(block));
        }
    }

    /// Before `range` of the block is written: keeps its bytes, unless the whole block's
    /// copy has them already (a stretch asked for twice is kept twice: the first copy is
    /// the one that holds the bytes as they were).
    #[inline]
    fn before_range_write(&mut self, block: &[u8], range: &std::ops::Range<usize>) {
        if self.compare && self.whole.is_none() {
            if self.spans.ranges.capacity() == 0 {
                self.spans = spans();
            }
            self.spans.ranges.push((range.start, range.len()));
            self.spans.before.extend_from_slice(&block[range.clone()]);
        }
    }

    /// Keeps what this capture holds for the thread's next guards.
    pub fn recycle(self) {
        SCRATCH.with(|s| {
            let mut scratch = s.borrow_mut();
            if let Some(copy) = self.whole {
                scratch.copies.push(copy);
            }
            let mut spans = self.spans;
            if spans.ranges.capacity() != 0 {
                spans.ranges.clear();
                spans.before.clear();
                scratch.spans.push(spans);
            }
        });
    }
}

/// What captures keep, reused from guard to guard: copies of whole blocks, lists of
/// stretches with their bytes.
#[derive(Default)]
struct Scratch {
    copies: Vec<Box<[u8]>>,
    spans: Vec<Spans>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A copy of `block`, in a buffer reused from an earlier guard of the thread if one fits.
fn copy_of(block: &[u8]) -> Box<[u8]> {
    let copy = SCRATCH.with(|s| s.borrow_mut().copies.pop()).filter(|c| c.len() == block.len());
    let mut copy = copy.unwrap_or_else(|| vec![0u8; block.len()].into_boxed_slice());
    copy.copy_from_slice(block);
    copy
}

/// An empty list of stretches, reused from an earlier guard of the thread if any.
fn spans() -> Spans {
    SCRATCH.with(|s| s.borrow_mut().spans.pop()).unwrap_or_default()
}

impl WriteGuard<'_> {
    pub fn rdba(&self) -> u32 {
        self.rdba
    }

    /// [`ReadGuard::structure_verified`] of the bytes as this guard found them: it says
    /// nothing once the holder has written through the guard (its release clears it).
    #[inline]
    pub fn structure_verified(&self) -> bool {
        self.cache.headers[self.index as usize].state.load(Ordering::Acquire) & super::VERIFIED != 0
    }
}

impl Deref for WriteGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this guard holds a pin and the exclusive content lock.
        unsafe { self.cache.buffer_bytes(self.index) }
    }
}

impl DerefMut for WriteGuard<'_> {
    /// The whole block to write: the release compares all of it with a copy taken here
    /// (see [`BlockWrite`] for the cheaper way).
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        if let Some(capture) = &mut self.capture {
            // SAFETY: this guard holds a pin and the exclusive content lock.
            capture.before_whole_write(unsafe { self.cache.buffer_bytes(self.index) });
        }
        // SAFETY: this guard holds a pin and the exclusive content lock, and `&mut self`
        // makes this the only live reference derived from it.
        unsafe { self.cache.buffer_bytes_mut(self.index) }
    }
}

impl BlockWrite for WriteGuard<'_> {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }

    /// The bytes in `range`: the release compares only them with their copy taken here.
    #[inline]
    fn range_mut(&mut self, range: std::ops::Range<usize>) -> &mut [u8] {
        if let Some(capture) = &mut self.capture {
            // SAFETY: this guard holds a pin and the exclusive content lock.
            capture.before_range_write(unsafe { self.cache.buffer_bytes(self.index) }, &range);
        }
        // SAFETY: as in `deref_mut`; the stretch's bytes were kept above.
        unsafe { &mut self.cache.buffer_bytes_mut(self.index)[range] }
    }

    #[inline]
    fn whole_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.cache.release_exclusive(self.index, self.rdba, self.capture.take());
    }
}

/// Blocks pinned by a multiblock read ([`BufferCache::pin_multiblock`]), in block order,
/// waiting for a scan to visit them. Dropping the run releases the pins of the blocks not
/// taken, so a scan that stops early leaves nothing pinned.
pub struct PinnedRun<'c> {
    pub(super) cache: &'c BufferCache,
    /// (block address, buffer), each pinned once by this run.
    pub(super) blocks: VecDeque<(u32, u32)>,
    /// The block after the last one the read pinned.
    pub(super) end: u32,
    /// The cache's `run_pins` this run holds: one for each block in `blocks` once the
    /// read is done (more while it pins), given back as blocks are taken or dropped.
    pub(super) reserved: u32,
}

impl<'c> PinnedRun<'c> {
    /// The block after the last one the read pinned: short of the blocks asked for when
    /// the read stopped rather than wait for a free buffer while holding pins, or when
    /// the runs of all sessions already pin as many buffers as they may.
    pub fn end(&self) -> u32 {
        self.end
    }

    /// The next block, share-locked, or `None` when the run is done. Its consistent get
    /// is the caller's to count.
    #[inline]
    pub fn next_block(&mut self, stats: &SessionStats) -> Option<Result<ReadGuard<'c>>> {
        let (rdba, index) = self.blocks.pop_front()?;
        self.reserved -= 1;
        self.cache.release_run_pins(1);
        Some(self.cache.read_guard_for_pinned(stats, rdba, index))
    }
}

impl Drop for PinnedRun<'_> {
    fn drop(&mut self) {
        for &(_, index) in &self.blocks {
            self.cache.headers[index as usize].unpin();
        }
        self.cache.release_run_pins(self.reserved);
    }
}

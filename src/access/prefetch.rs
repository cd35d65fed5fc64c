//! Prefetching the next block of a scan, or of a run of rows fetched by rowid, while the
//! current one is walked (module `full_scan`, `fast_walk`, `by_rowid`).

use crate::buffer::PrefetchTarget;

/// Prefetches the next block of a scan (or of a run of rows fetched by rowid) a few cache
/// lines per row of the current one: its header and row directory at once, into L1,
/// then its rows from the end of the block down, the order a walk reads them (rows are
/// stored bottom-up), `LINES_PER_ROW` lines per row, into L2 (see `buffer::prefetch`:
/// lines headed for L1 a block ahead would take the line-fill buffers the walk's own
/// reads need), through about four fifths of its rows. Spread this way the lines arrive
/// about one block ahead of use, without a burst.
#[derive(Clone, Copy)]
pub struct NextBlockPrefetch<'b> {
    block: PrefetchTarget<'b>,
    /// Offset of the next line to prefetch, counting down; done below `HEAD_BYTES`.
    cursor: usize,
}

/// Bytes of the next block's start (header, ITL, row directory) prefetched first.
pub(super) const HEAD_BYTES: usize = 256;
/// Lines of the next block prefetched per row of a group of the lanes, times 4: 2.5
/// lines, the 160 bytes of the usual row (see [`NextBlockPrefetch::step_rows`]).
const LINES_PER_GROUP_ROW_TIMES_4: usize = 10;

/// Lines of the next block prefetched per row of the current one: 128 bytes, short of
/// the usual row's 160, so the hints cover the next block from its end through about
/// four fifths of its rows, and the hardware prefetcher brings the lines of the fifth
/// the walk reaches last. Fewer hints than lines pay on an Intel Xeon (family 6, model
/// 207), whose scan is bound by memory: 5,000,000 cached rows counted in 78.5 ms with
/// two lines a row, 84.7 with 2.5 (every line of the block), 86.5 with three (every line,
/// sooner) and 95 with one.
const LINES_PER_ROW: usize = 2;

impl<'b> NextBlockPrefetch<'b> {
    pub fn new(next: Option<PrefetchTarget<'b>>) -> NextBlockPrefetch<'b> {
        let block = next.unwrap_or(PrefetchTarget::of(&[]));
        block.range(0, HEAD_BYTES);
        NextBlockPrefetch { block, cursor: block.len().saturating_sub(64) }
    }

    #[inline(always)]
    pub fn step(&mut self) {
        if self.cursor >= HEAD_BYTES {
            for line in 0..LINES_PER_ROW {
                self.block.line_to_l2(self.cursor - line * 64);
            }
            self.cursor -= LINES_PER_ROW * 64;
        }
    }

    /// [`NextBlockPrefetch::step`] for `ROWS` rows taken at once (the lanes' groups):
    /// 2.5 lines a row, the usual row's 160 bytes, so every line of the block, without a
    /// check per row while they all lie inside the block. (The two lines a row of `step`
    /// were timed against this rate for the rows one by one only; the lanes run only on
    /// request.)
    #[inline(always)]
    pub fn step_rows<const ROWS: usize>(&mut self) {
        let lines = ROWS * LINES_PER_GROUP_ROW_TIMES_4 / 4;
        if self.cursor >= HEAD_BYTES + (lines - 1) * 64 {
            for line in 0..lines {
                self.block.line_to_l2(self.cursor - line * 64);
            }
            self.cursor -= lines * 64;
        } else {
            for _ in 0..ROWS {
                self.step();
            }
        }
    }
}

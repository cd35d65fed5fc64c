//! The fast walk of a row's column lengths, for row kernels that count rows inside a full
//! scan, or rows an index path fetches ([`FastBlock::row_at`], one row at a time):
//! one table lookup and one add a column, no bounds check, no branch.
//!
//! The general walk ([`crate::storage::row::walk_lengths`]) checks every length byte
//! against the end of the stream and branches on its kind. This walk instead relies on
//! *room*: a [`RoomyStream`] of `W` columns is a column stream with at least
//! [`reach`]`(W)` bytes after its start, which no walk of `W` short or NULL columns can
//! leave, nor a read of a small integer's payload after the last of them:
//!
//! ```text
//!  stream start                      last length byte at most here     reach(W)
//!  |                                 |  (W-1) × 256: each column's      |
//!  v                                 v   length byte + ≤250 bytes       v
//!  [len][payload...][len][...] ... [len][scale][8-byte mantissa load]  |
//!  |<------------------------ every byte the walk reads ------------->|
//! ```
//!
//! Each step adds [`LENGTH_STEP`]`[length byte]`: 1 + the length for a short column, 1
//! for NULL, and 0 for the escape of a long column and for the bytes no length uses, which
//! keeps the walk on that byte. A walk that met one therefore ends on it, and
//! [`RoomyStream::walk`] refuses the row (the caller walks it the general way), so a
//! [`FastRow`] holds only short and NULL columns up to its last one.
//!
//! [`FastBlock::row_at`] decides whether the fast walk takes the row of one slot, and
//! walks it: [`FastRows`] asks it of every slot of a block, an index path's run of the
//! slots its rowids name. It first walks a row as one of small columns (at most
//! [`SMALL_COLUMN_MAX`] bytes each, [`SMALL_STEP`]), which needs a quarter of the room;
//! a row with a longer column is walked again over any short column. Rows far enough
//! from the block's end have the room; the rest, in the block's last [`small_tail_len`]
//! bytes (or [`tail_len`] for a row with a longer column), are walked with each length
//! byte's position checked against the block's end before it is read
//! ([`RoomyStream::walk_near_end`]), and taken only when the reads of their values stay
//! inside the block too. Rows it cannot take (chained, deleted, locked by an unfinished
//! insert, with fewer columns or a long one) it leaves to the caller's general walk. A
//! row's head (flags, lock byte, column count) that equals the last taken row's
//! ([`KnownHead`]) passes with one compare; any other is tested byte by byte, and the
//! known head starts as no head at all, so that no piece passes untested.
//! [`FastRows::count_in_lanes`] counts them eight at a time where lanes are chosen
//! ([`super::lanes::choice`]), the rest one by one; [`FastRows::fold`] hands them one by
//! one to a step that carries its totals by value.

use super::WalkedRow;
use super::lanes::{Group, LANES, LaneCount, LaneTotals, SMALL_INT_READ};
use super::prefetch::NextBlockPrefetch;
use crate::buffer::PrefetchTarget;
use crate::storage::row::{
    FLAG_DELETED, FLAGS_WHOLE, LEN_ESCAPE, LEN_NULL, LEN_SHORT_MAX, LOCK_INSERT_IN_PROGRESS, PIECE_HEADER,
};
use crate::types::encoding::PayloadKind;
use std::marker::PhantomData;

/// How far a length byte moves the walk to the next column's length byte: 1 + the length
/// for a short column (0..=250), 1 for NULL, and 0 for the escape and the unused bytes
/// 251..=253, so that a walk stays on a byte it cannot step over.
pub static LENGTH_STEP: [usize; 256] = steps_up_to(LEN_SHORT_MAX);

/// A step table: 1 + the length for a length byte of at most `max`, 1 for NULL, and 0
/// for every other byte, on which a walk stays.
const fn steps_up_to(max: usize) -> [usize; 256] {
    let mut steps = [0usize; 256];
    let mut b = 0;
    while b <= max {
        steps[b] = b + 1;
        b += 1;
    }
    steps[LEN_NULL as usize] = 1;
    steps
}

/// Longest column the small-column walk steps over. Most columns are this short, and a
/// walk that steps at most [`SMALL_STEP_MAX`] bytes a column needs a quarter of the room
/// of one that may step over 250: fewer of a block's rows lie too near its end for it.
pub const SMALL_COLUMN_MAX: usize = 63;

/// Longest step of the small-column walk: over a column of [`SMALL_COLUMN_MAX`] bytes.
pub const SMALL_STEP_MAX: usize = SMALL_COLUMN_MAX + 1;

/// [`LENGTH_STEP`] for the small-column walk: 1 + the length for a column of at most
/// [`SMALL_COLUMN_MAX`] bytes, 1 for NULL, and 0 for every other byte (a longer column,
/// the escape, the unused bytes), on which the walk stays.
pub static SMALL_STEP: [usize; 256] = steps_up_to(SMALL_COLUMN_MAX);

/// Bytes of stream the small-column walk of `w` columns, and the reads of its rows'
/// values, may touch (see [`reach`]).
pub const fn small_reach(w: usize) -> usize {
    w.saturating_sub(1) * SMALL_STEP_MAX + SMALL_INT_READ
}

/// Longest step of a walk: 251 bytes over a short column here, at most 256 in the lanes
/// of [`super::lanes`], which step over any byte and sort out the lanes that met one they
/// cannot step over afterwards.
pub const MAX_STEP: usize = 256;

/// Bytes of stream a fast walk of `w` columns, and the reads of its rows' values, may
/// touch: the last length byte lies at most `(w - 1) ×` [`MAX_STEP`] bytes in, and a
/// small integer's payload is read up to 10 bytes past it.
pub const fn reach(w: usize) -> usize {
    w.saturating_sub(1) * MAX_STEP + SMALL_INT_READ
}

/// The lanes of a block's last group that hold its last `n` rows (0..8): the group is
/// the block's last eight slots, so they are its last `n` lanes.
const fn last_rows(n: usize) -> u32 {
    0xFF << (LANES - n) & 0xFF
}

/// Whether a length byte stops a fast walk: the escape of a long column, or a byte no
/// length uses.
#[inline(always)]
fn stops_walk(len: u8) -> bool {
    len.wrapping_sub(LEN_SHORT_MAX as u8 + 1) <= LEN_ESCAPE - (LEN_SHORT_MAX as u8 + 1)
}

/// A column stream with room for a fast walk of `W` columns: at least [`reach`]`(W)` bytes,
/// or, for a stream walked by [`RoomyStream::walk_small_at`] or
/// [`RoomyStream::walk_near_end`] (which only a [`FastRow`] holds), the bytes up to
/// [`SMALL_INT_READ`] past its last walked length byte. Held as two pointers into the
/// stream's slice, the end being the same for every row of a block, so a row costs one
/// pointer.
#[derive(Clone, Copy)]
pub struct RoomyStream<'b, const W: usize> {
    start: *const u8,
    end: *const u8,
    _bytes: PhantomData<&'b [u8]>,
}

impl<'b, const W: usize> RoomyStream<'b, W> {
    /// `stream`, if it has the room.
    #[cfg(test)]
    pub fn new(stream: &'b [u8]) -> Option<Self> {
        (W > 0 && stream.len() >= reach(W)).then_some(RoomyStream {
            start: stream.as_ptr(),
            end: stream.as_ptr_range().end,
            _bytes: PhantomData,
        })
    }

    /// The stream at `start` of `bytes`, which must have the room.
    ///
    /// # Safety
    /// `start + reach(W) <= bytes.len()`.
    #[inline(always)]
    unsafe fn at(bytes: &'b [u8], start: usize) -> Self {
        debug_assert!(start + reach(W) <= bytes.len());
        // SAFETY: by the caller's promise.
        unsafe { Self::starting_at(bytes, start) }
    }

    /// The stream at `start` of `bytes`, whatever its room.
    ///
    /// # Safety
    /// `start <= bytes.len()`.
    #[inline(always)]
    unsafe fn starting_at(bytes: &'b [u8], start: usize) -> Self {
        // SAFETY: `start` lies inside `bytes` (or at its end), by the caller's promise.
        RoomyStream { start: unsafe { bytes.as_ptr().add(start) }, end: bytes.as_ptr_range().end, _bytes: PhantomData }
    }

    /// The stream as a slice.
    #[inline(always)]
    fn bytes(self) -> &'b [u8] {
        // SAFETY: `start..end` is the tail of one slice borrowed for 'b.
        unsafe { std::slice::from_raw_parts(self.start, self.end.offset_from(self.start) as usize) }
    }

    /// The byte `at` bytes in.
    ///
    /// # Safety
    /// `at < reach(W)`.
    #[inline(always)]
    unsafe fn byte(self, at: usize) -> u8 {
        // SAFETY: the room holds reach(W) bytes.
        unsafe { *self.start.add(at) }
    }

    /// Where the length byte of column `col` (< W) is: `col` steps from the start.
    #[inline(always)]
    fn position(self, col: usize) -> usize {
        let mut pos = 0usize;
        for _ in 0..col.min(W - 1) {
            // SAFETY: `pos <= i × MAX_STEP` after i steps (no step is longer), and
            // `i × MAX_STEP < reach(W)` for i < W; in a stream walked near its end, the
            // steps of an earlier walk, each position checked then; in one walked by
            // `walk_small_at`, the steps it took, each over a small column or NULL.
            pos += LENGTH_STEP[unsafe { self.byte(pos) } as usize];
        }
        pos
    }

    /// Walks the first `W` columns' length bytes. `None` when one of them is the escape of
    /// a long column or a byte no length uses: the row must be walked the general way.
    #[inline(always)]
    pub fn walk(self) -> Option<FastRow<'b, W>> {
        let last = self.position(W - 1);
        // SAFETY: as in `position`, for the last column.
        unsafe { self.ending_at(last) }
    }

    /// The row whose last walked length byte is at `last`, unless that byte stops a walk.
    ///
    /// # Safety
    /// `last` lies inside the stream.
    #[inline(always)]
    unsafe fn ending_at(self, last: usize) -> Option<FastRow<'b, W>> {
        // SAFETY: by the caller's promise.
        let len = unsafe { self.byte(last) };
        (!stops_walk(len)).then_some(FastRow { stream: self, last: last as u16 })
    }

    /// [`RoomyStream::walk`] with [`SMALL_STEP`]: the walk of the stream at `start` of
    /// `bytes`, taken only when its first `W` columns are NULL or of at most
    /// [`SMALL_COLUMN_MAX`] bytes (a walk that met any other byte stays on it, and ends
    /// there). Its steps are then those [`LENGTH_STEP`] takes, so the row's later walks
    /// to a column ([`FastRow`]'s) find the same positions.
    ///
    /// # Safety
    /// `start + small_reach(W) <= bytes.len()`.
    #[inline(always)]
    pub unsafe fn walk_small_at(bytes: &'b [u8], start: usize) -> Option<FastRow<'b, W>> {
        debug_assert!(W > 0 && start + small_reach(W) <= bytes.len());
        // SAFETY: `start` lies inside `bytes`, by the caller's promise.
        let stream = unsafe { RoomyStream::<W>::starting_at(bytes, start) };
        let mut pos = 0usize;
        for _ in 0..W - 1 {
            // SAFETY: `pos <= i × SMALL_STEP_MAX` after i steps, below small_reach(W).
            pos += SMALL_STEP[unsafe { stream.byte(pos) } as usize];
        }
        // SAFETY: as above, for the last column.
        let len = unsafe { stream.byte(pos) };
        (SMALL_STEP[len as usize] != 0).then_some(FastRow { stream, last: pos as u16 })
    }

    /// [`RoomyStream::walk`] of a stream that may have less room than [`reach`]`(W)` (a
    /// row near its block's end): each length byte's position is checked against the
    /// stream's end before it is read, and the walk is taken only when a value's read at
    /// its last length byte ([`SMALL_INT_READ`] bytes) stays inside the stream too. Every
    /// later read of the row lies at or before that length byte, plus such a read.
    #[inline(always)]
    pub fn walk_near_end(stream: &'b [u8]) -> Option<FastRow<'b, W>> {
        if W == 0 {
            return None;
        }
        let mut pos = 0usize;
        for _ in 0..W - 1 {
            pos += LENGTH_STEP[*stream.get(pos)? as usize];
        }
        if pos + SMALL_INT_READ > stream.len() {
            return None;
        }
        let row = RoomyStream { start: stream.as_ptr(), end: stream.as_ptr_range().end, _bytes: PhantomData };
        // SAFETY: checked just above.
        unsafe { row.ending_at(pos) }
    }
}

/// A column of a [`FastRow`], as a row kernel names it: the first and the last walked
/// columns cost nothing to find (position 0, and the walk's end), any other is walked to
/// again. A kernel matches on this once per block, so that each arm's loop knows which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    First,
    Last,
    Nth(usize),
}

impl Column {
    /// Column `col` (< W) of a walk of `W` columns.
    pub fn of<const W: usize>(col: usize) -> Column {
        match col {
            0 => Column::First,
            c if c + 1 == W => Column::Last,
            c => Column::Nth(c),
        }
    }
}

/// A row walked by [`RoomyStream::walk`]: its first `W` columns are short or NULL, with
/// room after the last for its value. Only the last column's position is kept; the others
/// are found by walking again (see [`Column`]).
#[derive(Clone, Copy)]
pub struct FastRow<'b, const W: usize> {
    stream: RoomyStream<'b, W>,
    /// Where the last column's length byte is.
    last: u16,
}

impl<'b, const W: usize> FastRow<'b, W> {
    /// The column stream (running on past the row).
    pub fn stream(&self) -> &'b [u8] {
        self.stream.bytes()
    }

    /// Where each column's length byte is in the stream.
    pub fn positions(&self) -> [u16; W] {
        std::array::from_fn(|col| self.position(Column::of::<W>(col)) as u16)
    }

    /// The row as a [`WalkedRow`] whose columns decode as `kinds`, in block `rdba`, with
    /// its [`FastRow::positions`].
    pub fn walked<'r>(&self, positions: &'r [u16; W], kinds: &'r [PayloadKind], rdba: u32) -> WalkedRow<'r>
    where
        'b: 'r,
    {
        WalkedRow { stream: self.stream(), positions, kinds, rdba }
    }

    /// Offset just past the last walked column.
    #[cfg(test)]
    pub fn end(&self) -> usize {
        let at = self.last as usize;
        // SAFETY: the last position lies inside the room.
        at + LENGTH_STEP[unsafe { self.stream.byte(at) } as usize]
    }

    /// Where column `col`'s length byte is.
    #[inline(always)]
    fn position(&self, col: Column) -> usize {
        match col {
            Column::First => 0,
            Column::Last => self.last as usize,
            Column::Nth(c) => self.stream.position(c),
        }
    }

    /// Whether column `col` is NULL.
    #[inline(always)]
    pub fn is_null(&self, col: Column) -> bool {
        // SAFETY: a position lies at most (W-1) × MAX_STEP bytes in, inside the room.
        unsafe { self.stream.byte(self.position(col)) == LEN_NULL }
    }

    /// Column `col` (a NUMBER column) as a whole number: `Ok(None)` for NULL, `Err` when it
    /// is not one of up to 8 mantissa bytes with scale 0 (the caller decodes it the general
    /// way).
    #[inline(always)]
    #[allow(clippy::result_unit_err)]
    pub fn int_or_null(&self, col: Column) -> std::result::Result<Option<i64>, ()> {
        let at = self.position(col);
        // SAFETY: `at` lies at most (W-1) × MAX_STEP bytes in, and the room holds
        // SMALL_INT_READ bytes past that.
        let (len_and_scale, word) = unsafe {
            let p = self.stream.start.add(at);
            (std::ptr::read_unaligned(p as *const u16), std::ptr::read_unaligned(p.add(2) as *const u64))
        };
        let len_and_scale = u16::from_le(len_and_scale);
        // Length 2..=9 (a scale byte and 1..=8 mantissa bytes) and scale 0, at once.
        if len_and_scale.wrapping_sub(2) > 7 {
            return if len_and_scale as u8 == LEN_NULL { Ok(None) } else { Err(()) };
        }
        let shift = 72 - 8 * len_and_scale as u32;
        Ok(Some(((u64::from_le(word) << shift) as i64) >> shift))
    }
}

/// Bytes at the end of a block whose pieces have no room in place for a fast walk of `w`
/// columns: a piece there starts after `block.len() - tail_len(w)`, and is walked with its
/// positions checked ([`RoomyStream::walk_near_end`]).
pub const fn tail_len(w: usize) -> usize {
    PIECE_HEADER + reach(w)
}

/// [`tail_len`] for the small-column walk ([`small_reach`]).
pub const fn small_tail_len(w: usize) -> usize {
    PIECE_HEADER + small_reach(w)
}

/// The rows of one block a fast walk of `W` columns takes, in slot order: whole rows, not
/// deleted, not locked by an unfinished insert, with at least `W` columns, the first `W`
/// of them short or NULL. [`FastRows::visit`] hands them over until it meets a row it
/// cannot take ([`FastRows::pending`] then names it, for the caller to visit the general
/// way; visiting again goes on past it) or the block ends. It prefetches the next block a
/// few lines per row.
pub struct FastRows<'b, const W: usize> {
    block: FastBlock<'b, W>,
    directory: &'b [u8],
    /// The next slot to look at.
    slot: usize,
    upcoming: NextBlockPrefetch<'b>,
    pending: Option<usize>,
    /// Rows handed over.
    taken: u64,
    /// Whether groups of rows may run in lanes ([`super::lanes::choice`]).
    lanes: bool,
}

impl<'b, const W: usize> FastRows<'b, W> {
    /// The rows of `block` (whose row directory is `directory`), prefetching `next` on
    /// the way.
    pub fn new(block: &'b [u8], directory: &'b [u8], next: Option<PrefetchTarget<'b>>) -> FastRows<'b, W> {
        FastRows {
            block: FastBlock::new(block),
            directory,
            slot: 0,
            upcoming: NextBlockPrefetch::new(next),
            pending: None,
            taken: 0,
            lanes: super::lanes::choice().on,
        }
    }

    /// The slot and directory entry of the row visiting stopped at, if it stopped short
    /// of the block's end; taking it lets visiting go on past it.
    pub fn pending(&mut self) -> Option<(usize, &'b [u8])> {
        let slot = self.pending.take()?;
        Some((slot, &self.directory[2 * slot..2 * slot + 2]))
    }

    /// Rows handed over so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Hands `visit` the rows the fast walk takes, in slot order, while it returns true;
    /// stops before a row the walk cannot take (see [`FastRows::pending`]).
    #[inline(always)]
    pub fn visit(&mut self, visit: impl FnMut(FastRow<'b, W>) -> bool) {
        self.visit_slots(usize::MAX, visit);
    }

    /// [`FastRows::visit`] of at most `limit` slots. Returns whether it went through them
    /// all (to the block's end, or `limit`), rather than stopping at a row.
    #[inline(always)]
    fn visit_slots(&mut self, limit: usize, mut visit: impl FnMut(FastRow<'b, W>) -> bool) -> bool {
        if self.pending.is_some() {
            return false;
        }
        let slots = self.directory.len() / 2;
        let end = 2 * self.slot.saturating_add(limit).min(slots);
        let mut entries = self.directory.get(2 * self.slot..end).unwrap_or_default().chunks_exact(2);
        let mut stopped = false;
        let mut known = KnownHead::default();
        // A copy, kept in registers over the loop rather than stored at every row.
        let mut upcoming = self.upcoming;
        while let Some(entry) = entries.next() {
            upcoming.step();
            let Some(row) = self.block.row_at(u16::from_le_bytes([entry[0], entry[1]]) as usize, &mut known) else {
                self.pending = Some(end / 2 - entries.len() - 1);
                stopped = true;
                break;
            };
            if !visit(row) {
                stopped = true;
                break;
            }
        }
        self.upcoming = upcoming;
        let slot = end / 2 - entries.len();
        // Every slot passed was a row handed over, but for the one pending.
        self.taken += (slot - self.slot - usize::from(self.pending.is_some())) as u64;
        self.slot = slot;
        !stopped
    }

    /// Whether [`FastRows::count_in_lanes`] runs groups in lanes: the CPU's choice
    /// ([`super::lanes::choice`]), for a count whose columns the walk reaches. (That
    /// function repeats the test rather than calling this: calling it moved the one-by-one
    /// loop's registers, 83.0 instructions a row against 81.8.)
    pub fn counts_in_lanes(&self, count: &LaneCount) -> bool {
        self.lanes && count.filter.iter().map(|f| f.column).chain(count.not_null).all(|c| c < W)
    }

    /// Folds the rows the fast walk takes into `acc`, in slot order, as
    /// [`FastRows::visit`] hands them over, until the block's end or a row the walk cannot
    /// take (see [`FastRows::pending`]), or until `step` cannot fold a row (`None`): that
    /// row is returned with the total before it, and visiting goes on after it.
    ///
    /// The total travels by value, so that a loop adding to counters keeps them in
    /// registers rather than in the memory a closure's captures would be.
    #[inline(always)]
    pub fn fold<A: Copy>(
        &mut self,
        mut acc: A,
        step: impl Fn(A, &FastRow<'b, W>) -> Option<A>,
    ) -> (A, Option<FastRow<'b, W>>) {
        let mut refused = None;
        self.visit(|row| match step(acc, &row) {
            Some(next) => {
                acc = next;
                true
            }
            None => {
                refused = Some(row);
                false
            }
        });
        (acc, refused)
    }

    /// Counts the rows of the block the fast walk takes, eight at a time in lanes where
    /// the CPU allows (see [`super::lanes`]), and hands `visit` the rows of the groups
    /// that cannot run in lanes, one by one, as [`FastRows::visit`] does (stopping where
    /// it does). Returns what the lanes passed and counted; `visit` counts the others.
    #[inline(always)]
    pub fn count_in_lanes(&mut self, count: &LaneCount, visit: impl FnMut(FastRow<'b, W>) -> bool) -> LaneTotals {
        let columns_walked = count.filter.iter().map(|f| f.column).chain(count.not_null).all(|c| c < W);
        if !(self.lanes && columns_walked) {
            self.visit(visit);
            return LaneTotals::default();
        }
        // Decided once a block: whether the groups keep every column's position.
        if count.reads_between(W) {
            self.count_groups::<true>(count, visit)
        } else {
            self.count_groups::<false>(count, visit)
        }
    }

    /// [`FastRows::count_in_lanes`] once lanes may run, `BETWEEN` being
    /// [`LaneCount::reads_between`] of `count`.
    #[inline(always)]
    fn count_groups<const BETWEEN: bool>(
        &mut self,
        count: &LaneCount,
        mut visit: impl FnMut(FastRow<'b, W>) -> bool,
    ) -> LaneTotals {
        let mut totals = LaneTotals::default();
        let slots = self.directory.len() / 2;
        #[cfg(target_arch = "x86_64")]
        let block = super::lanes::avx2::Block { bytes: self.block.bytes.as_ptr(), len: self.block.bytes.len() };
        #[cfg(not(target_arch = "x86_64"))]
        let block = ();
        while self.pending.is_none() && self.slot < slots {
            // Whole groups in a row, in one call.
            let (counted, found, stopped) = self.groups::<BETWEEN>(&block, (slots - self.slot) / LANES, count);
            totals += found;
            self.slot += counted * LANES;
            self.taken += (counted * LANES) as u64;
            // The group that stopped them, or the last rows, fewer than a group, which run
            // as the block's last group with the rows before them left out.
            let left = slots - self.slot;
            let (first, take) = match left {
                0 => break,
                n if n >= LANES => (self.slot, 0xFFu32),
                n if slots >= LANES => (slots - LANES, last_rows(n)),
                _ => {
                    self.visit_slots(left, &mut visit);
                    break;
                }
            };
            let rows = left.min(LANES);
            let group = match stopped {
                Some(group) => group,
                None => self.group::<BETWEEN>(&block, first, take, count),
            };
            let (rows, group) = match group {
                // The rows up to a change of region, as a group of their own.
                Group::Split(n) if take == 0xFF => (n, self.group::<BETWEEN>(&block, first, (1 << n) - 1, count)),
                group => (rows, group),
            };
            let visited = match group {
                Group::Counted { passed, counted } => {
                    totals += LaneTotals { passed: passed.into(), counted: counted.into() };
                    self.slot += rows;
                    self.taken += rows as u64;
                    // A whole group's lines, for fewer rows too: one bound check rather
                    // than one a row, and the next block is prefetched a little sooner.
                    self.upcoming.step_rows::<LANES>();
                    true
                }
                _ => self.visit_slots(rows, &mut visit),
            };
            if !visited {
                break;
            }
        }
        totals
    }

    /// The rows `take` marks of the group of eight from slot `first` of `block`, in lanes
    /// if they can be.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn group<const BETWEEN: bool>(
        &self,
        block: &super::lanes::avx2::Block,
        first: usize,
        take: u32,
        count: &LaneCount,
    ) -> Group {
        // SAFETY: `lanes` says the CPU has AVX2; eight entries from `first`; `block` was
        // made from this block; the caller checked the columns.
        unsafe { super::lanes::avx2::group::<W, BETWEEN>(block, self.directory.as_ptr().add(2 * first), take, count) }
    }

    /// Up to `groups` whole groups from the next slot, in lanes, while they can be: how
    /// many were, what they counted, and what became of the one that stopped them.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn groups<const BETWEEN: bool>(
        &mut self,
        block: &super::lanes::avx2::Block,
        groups: usize,
        count: &LaneCount,
    ) -> (usize, LaneTotals, Option<Group>) {
        let (entries, upcoming) = (self.directory.as_ptr(), &mut self.upcoming);
        // SAFETY: as in `group`, for each of the `groups` whole groups from `slot`.
        unsafe {
            super::lanes::avx2::groups::<W, BETWEEN>(block, entries.add(2 * self.slot), groups, count, || {
                upcoming.step_rows::<LANES>()
            })
        }
    }

    /// Without AVX2 no group runs in lanes.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn groups<const BETWEEN: bool>(
        &mut self,
        _block: &(),
        _groups: usize,
        _count: &LaneCount,
    ) -> (usize, LaneTotals, Option<Group>) {
        (0, LaneTotals::default(), None)
    }

    /// Without AVX2 no group runs in lanes.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn group<const BETWEEN: bool>(&self, _block: &(), _first: usize, _take: u32, _count: &LaneCount) -> Group {
        Group::Unclean
    }
}

/// The head bytes (flags, lock byte, column count) of a row [`FastBlock::row_at`] took,
/// which another row's head that equals them needs no test of its own: the rows of a
/// block mostly share them. Starts as no head at all: a word with bits outside
/// [`KnownHead::MASK`], which no head read under it equals (not even the three zero
/// bytes a middle piece of a chained row, or an unused place, may start with).
#[derive(Debug, Clone, Copy)]
pub struct KnownHead(u32);

impl KnownHead {
    /// The head's bytes in a little-endian word read at the row's start.
    const MASK: u32 = 0x00FF_FFFF;
}

impl Default for KnownHead {
    fn default() -> Self {
        KnownHead(!KnownHead::MASK)
    }
}

/// One block as the fast walk of `W` columns takes its rows, slot by slot: every slot
/// for [`FastRows`], the slots an index path's rowids name for its runs.
#[derive(Clone, Copy)]
pub struct FastBlock<'b, const W: usize> {
    bytes: &'b [u8],
    /// Directory offsets `1..=last_small` have room in place for the small-column walk
    /// (see [`small_reach`]).
    last_small: usize,
    /// Directory offsets `1..=last_in_place` have room in place for the walk over any
    /// short column (see [`reach`]).
    last_in_place: usize,
}

impl<'b, const W: usize> FastBlock<'b, W> {
    /// The rows of `block`.
    #[inline(always)]
    pub fn new(block: &'b [u8]) -> FastBlock<'b, W> {
        FastBlock {
            bytes: block,
            last_small: block.len().saturating_sub(small_tail_len(W)),
            last_in_place: block.len().saturating_sub(tail_len(W)),
        }
    }

    /// The row at directory offset `offset`, if the fast walk takes it: a whole row, not
    /// deleted, not locked by an unfinished insert, with at least `W` columns, the first
    /// `W` short or NULL, with room for their reads. `None` for any other row (an empty
    /// slot or one outside the block included), which the general way decides.
    ///
    /// A row with room for the small-column walk ([`RoomyStream::walk_small_at`]) that
    /// the walk takes costs one lookup and one add a column, as in the walk over any short
    /// column, and that room leaves only the rows in a block's last [`small_tail_len`]
    /// bytes (a few hundred) to the walk with each position checked. A row with a longer
    /// column is walked again over short columns ([`FastBlock::row_over_short_columns`]).
    ///
    /// `known` is the head of the last row taken in place: a row whose head is the same
    /// bytes (as a block's rows mostly are) passes the test of its head with one compare.
    #[inline(always)]
    pub fn row_at(self, offset: usize, known: &mut KnownHead) -> Option<FastRow<'b, W>> {
        if offset.wrapping_sub(1) < self.last_small {
            // SAFETY: room in place, `offset + PIECE_HEADER + small_reach(W) <= block.len()`,
            // and the room holds at least one byte past the header.
            let head = unsafe { std::ptr::read_unaligned(self.bytes.as_ptr().add(offset) as *const u32) };
            let head = u32::from_le(head) & KnownHead::MASK;
            if head != known.0 {
                // SAFETY: as above.
                if !Self::head(unsafe { self.bytes.get_unchecked(offset..offset + PIECE_HEADER) }) {
                    return None;
                }
                known.0 = head;
            }
            // SAFETY: the same room in place holds the small-column walk's reads.
            if let Some(row) = unsafe { RoomyStream::walk_small_at(self.bytes, offset + PIECE_HEADER) } {
                return Some(row);
            }
        }
        self.row_over_short_columns(offset)
    }

    /// Whether a piece whose first bytes are `header` is a row the fast walk may take: a
    /// whole row, not deleted, not locked by an unfinished insert, of at least `W`
    /// columns.
    #[inline(always)]
    fn head(header: &[u8]) -> bool {
        let (flags, lock, column_count) = (header[0], header[1], header[2]);
        flags & (FLAGS_WHOLE | FLAG_DELETED) == FLAGS_WHOLE
            && lock != LOCK_INSERT_IN_PROGRESS
            && column_count as usize >= W
    }

    /// [`FastBlock::row_at`] with the walk over any short column: in place where the row
    /// has the room ([`reach`]), else with each position checked against the block's end.
    #[inline(always)]
    fn row_over_short_columns(self, offset: usize) -> Option<FastRow<'b, W>> {
        if offset.wrapping_sub(1) < self.last_in_place {
            // SAFETY: room in place, `offset + PIECE_HEADER + reach(W) <= block.len()`.
            let header = unsafe { self.bytes.get_unchecked(offset..offset + PIECE_HEADER) };
            return if Self::head(header) {
                // SAFETY: the same room in place holds the row's whole walk.
                unsafe { RoomyStream::at(self.bytes, offset + PIECE_HEADER) }.walk()
            } else {
                None
            };
        }
        // A row near the end: walked in place, each position checked.
        let start = offset.checked_add(PIECE_HEADER).filter(|&s| offset != 0 && s <= self.bytes.len())?;
        if !Self::head(&self.bytes[offset..]) {
            return None;
        }
        RoomyStream::<W>::walk_near_end(&self.bytes[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::RowAccess;
    use crate::access::lanes::LaneFilter;
    use crate::storage::row::{PieceAddr, encode_fragment, encode_whole_row, locate_columns, walk_lengths};
    use crate::types::Datum;
    use proptest::prelude::*;

    fn value_strategy() -> impl Strategy<Value = Datum<'static>> {
        prop_oneof![
            Just(Datum::Null),
            any::<i64>().prop_map(Datum::Int),
            (-1000i64..1000).prop_map(Datum::Int),
            "[a-z]{0,300}".prop_map(|s| Datum::Str(s.into())),
            "[a-z]{0,70}".prop_map(|s| Datum::Str(s.into())),
        ]
    }

    /// The column stream of `values`, followed by `pad` bytes of `fill`.
    fn stream_of(values: &[Datum<'static>], pad: usize, fill: u8) -> (usize, Vec<u8>) {
        let mut row = Vec::new();
        encode_whole_row(values, &mut row);
        let cc = row[2] as usize;
        let mut stream = row[crate::storage::row::PIECE_HEADER..].to_vec();
        stream.extend(std::iter::repeat_n(fill, pad));
        (cc, stream)
    }

    fn check_walk<const W: usize>(values: &[Datum<'static>], fill: u8) -> std::result::Result<(), TestCaseError> {
        let (cc, stream) = stream_of(values, reach(W), fill);
        if cc < W {
            // Columns past the count are absent: the scan walks such rows the general way.
            return Ok(());
        }
        let mut general = [0u16; W];
        let walked = walk_lengths(&stream, cc, &mut general);
        let fast = RoomyStream::<W>::new(&stream).unwrap().walk();
        let mut spans = vec![crate::storage::row::ColumnSpan::default(); W];
        locate_columns(&stream, cc, &mut spans).unwrap();
        let long = spans.iter().any(|s| !s.is_null() && s.len as usize > LEN_SHORT_MAX);
        match fast {
            None => prop_assert!(long, "refused a row of short columns"),
            Some(row) => {
                prop_assert!(!long);
                prop_assert_eq!(&row.positions(), &general);
                prop_assert_eq!(Some(row.end()), walked);
                for (col, v) in values.iter().take(W).enumerate() {
                    let pick = Column::of::<W>(col);
                    prop_assert_eq!(row.is_null(pick), v.is_null());
                    prop_assert_eq!(row.is_null(Column::Nth(col)), v.is_null());
                    // What the general reader says, when the fast one decides.
                    let general_row =
                        crate::access::WalkedRow { stream: &stream, positions: &general, kinds: &[], rdba: 0 };
                    prop_assert_eq!(row.int_or_null(pick), row.int_or_null(Column::Nth(col)));
                    match row.int_or_null(pick) {
                        Ok(x) => prop_assert_eq!(Ok(x), general_row.int_or_null(col)),
                        Err(()) => prop_assert!(!v.is_null()),
                    }
                    if let (Datum::Int(j), Ok(x)) = (v, row.int_or_null(pick)) {
                        prop_assert_eq!(x, Some(*j));
                    }
                }
            }
        }
        // The small-column walk, in a stream of just its room (the next page faults):
        // taken exactly when the first W columns are NULL or small, and then it finds
        // what the walk over any short column finds.
        let small_columns = spans.iter().all(|s| s.is_null() || s.len as usize <= SMALL_COLUMN_MAX);
        let roomy = Guarded::new(&stream[..small_reach(W)]);
        // SAFETY: the stream holds small_reach(W) bytes.
        let small = unsafe { RoomyStream::<W>::walk_small_at(roomy.bytes(), 0) };
        prop_assert_eq!(small.is_some(), small_columns && !long);
        if let (Some(small), Some(fast)) = (small, fast) {
            prop_assert_eq!(&small.positions(), &general);
            for col in 0..W {
                let pick = Column::of::<W>(col);
                prop_assert_eq!(small.is_null(pick), fast.is_null(pick));
                prop_assert_eq!(small.int_or_null(pick), fast.int_or_null(pick));
                prop_assert_eq!(small.int_or_null(Column::Nth(col)), fast.int_or_null(pick));
            }
        }
        // The same row at its block's very end, with a few bytes after it or none: walked
        // near the end, taken when its values' reads fit, and reading nothing past it (the
        // next page faults).
        if let (Some(end), Some(fast)) = (walked, fast) {
            for extra in [0, 1, 9, 10, 11, 40] {
                let bytes = Guarded::new(&stream[..(end + extra).min(stream.len())]);
                let near = RoomyStream::<W>::walk_near_end(bytes.bytes());
                let fits = general[W - 1] as usize + SMALL_INT_READ <= bytes.len;
                prop_assert_eq!(near.is_some(), fits, "{} bytes after the row", extra);
                let Some(near) = near else { continue };
                prop_assert_eq!(&near.positions(), &general);
                for col in 0..W {
                    let pick = Column::of::<W>(col);
                    prop_assert_eq!(near.is_null(pick), fast.is_null(pick));
                    prop_assert_eq!(near.int_or_null(pick), fast.int_or_null(pick));
                    prop_assert_eq!(near.int_or_null(Column::Nth(col)), fast.int_or_null(pick));
                }
            }
        }
        Ok(())
    }

    proptest! {
        /// The fast walk finds every column where the general walk does, refuses exactly
        /// the rows with a long column among the walked ones, and reads integers and
        /// NULLs as stored, whatever bytes follow the row.
        #[test]
        fn fast_walk_agrees_with_the_general_walk(
            values in proptest::collection::vec(value_strategy(), 1..12),
            fill in any::<u8>(),
        ) {
            check_walk::<1>(&values, fill)?;
            check_walk::<3>(&values, fill)?;
            check_walk::<8>(&values, fill)?;
        }
    }

    /// How a row of a made-up block is stored.
    #[derive(Debug, Clone, Copy)]
    enum Stored {
        Live,
        Deleted,
        /// Its inserting statement has not ended.
        Inserting,
        /// A piece that is not a row's head.
        NotHead,
        /// The row's column stream as the middle piece of a chained row: its flag, lock
        /// and count bytes all zero, a next-piece address before its fragment.
        MiddlePiece,
        /// The row's column stream as the last piece of a chained row.
        LastPiece,
        /// An empty directory slot.
        Empty,
    }

    fn stored_strategy() -> impl Strategy<Value = Stored> {
        prop_oneof![
            12 => Just(Stored::Live),
            1 => Just(Stored::Deleted),
            1 => Just(Stored::Inserting),
            1 => Just(Stored::NotHead),
            1 => Just(Stored::MiddlePiece),
            1 => Just(Stored::LastPiece),
            1 => Just(Stored::Empty),
        ]
    }

    /// A value of the filtered NUMBER column.
    fn number_strategy() -> impl Strategy<Value = Datum<'static>> {
        prop_oneof![
            4 => (-300i64..300).prop_map(Datum::Int),
            2 => any::<i64>().prop_map(Datum::Int),
            1 => Just(Datum::Null),
            1 => (1i64..1000).prop_map(|n| Datum::Num(rust_decimal::Decimal::new(n * 10 + 5, 1))),
        ]
    }

    /// Any other column.
    fn other_strategy() -> impl Strategy<Value = Datum<'static>> {
        prop_oneof![
            4 => "[a-z]{1,40}".prop_map(|s| Datum::Str(s.into())),
            1 => "[a-z]{60,70}".prop_map(|s| Datum::Str(s.into())),
            1 => "[a-z]{251,300}".prop_map(|s| Datum::Str(s.into())),
            2 => Just(Datum::Null),
            2 => any::<i64>().prop_map(Datum::Int),
        ]
    }

    /// A block of `len` bytes with `rows` stored from its end down as they fit, and its
    /// row directory.
    fn block_of(rows: &[(Stored, Vec<Datum<'static>>)], len: usize) -> (Vec<u8>, Vec<u8>) {
        let mut block = vec![0xEE; len];
        let mut directory = Vec::new();
        let mut top = len;
        for (stored, values) in rows {
            let mut piece = Vec::new();
            encode_whole_row(values, &mut piece);
            if let Stored::MiddlePiece | Stored::LastPiece = stored {
                let next = matches!(stored, Stored::MiddlePiece)
                    .then_some(PieceAddr { rdba: 0x0040_0000 + directory.len() as u32, slot: 3 });
                let stream = piece.split_off(PIECE_HEADER);
                piece.clear();
                encode_fragment(false, 0, next, &stream, &mut piece);
            }
            if piece.len() + 64 > top {
                break;
            }
            let offset = match stored {
                Stored::Empty => 0,
                _ => {
                    top -= piece.len();
                    match stored {
                        Stored::Deleted => piece[0] |= crate::storage::row::FLAG_DELETED,
                        Stored::Inserting => piece[1] = LOCK_INSERT_IN_PROGRESS,
                        Stored::NotHead => piece[0] &= !crate::storage::row::FLAG_HEAD,
                        _ => {}
                    }
                    block[top..top + piece.len()].copy_from_slice(&piece);
                    top
                }
            };
            directory.extend_from_slice(&(offset as u16).to_le_bytes());
        }
        (block, directory)
    }

    /// Whether the filter holds for `v`: from `lo` up to `hi`, or, when the arc wraps,
    /// from `lo` up or from `hi` down.
    fn holds(filter: &LaneFilter, v: &Datum<'_>) -> bool {
        let (lo, span) = filter.range();
        let hi = lo.wrapping_add(span as i64);
        let (above_lo, below_hi) = match v {
            Datum::Int(i) => (*i >= lo, *i <= hi),
            Datum::Num(d) => (*d >= lo.into(), *d <= hi.into()),
            _ => return false,
        };
        if lo <= hi { above_lo && below_hi } else { above_lo || below_hi }
    }

    /// The filter `lo <= column <= lo + span`, or its complement when `outside` (the arc
    /// from just past its end round to just before its start); `None` for the complement
    /// of the whole circle, which no arc is.
    fn filter_of(column: usize, lo: i64, span: u64, outside: bool) -> Option<LaneFilter> {
        match outside {
            false => Some(LaneFilter::new(column, lo, span)),
            true if span == u64::MAX => None,
            true => Some(LaneFilter::new(column, lo.wrapping_add(span as i64).wrapping_add(1), u64::MAX - span - 1)),
        }
    }

    /// Adds `row` to `totals` (passed, counted) as a count kernel would: the filtered
    /// column decodes as a number; the counted one is only tested for NULL.
    fn decide(count: &LaneCount, totals: &mut (u64, u64), row: &dyn RowAccess) {
        let number = |c: usize| row.column(c).map(|d| d.into_owned()).unwrap_or(Datum::Null);
        if count.filter.is_none_or(|f| holds(&f, &number(f.column))) {
            totals.0 += 1;
            totals.1 += u64::from(count.not_null.is_none_or(|c| !row.is_null(c)));
        }
    }

    /// How [`count_block`] hands the fast walk's rows over.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Way {
        /// One by one to `count_in_lanes`' visitor, lanes off.
        RowByRow,
        /// Eight at a time where they can be.
        InLanes,
        /// Folded, the rows whose filtered column is not a whole number refused and
        /// decided afterwards, as the kernel hands such rows back.
        Folded,
    }

    /// What a count kernel finds in the block, by the scan's way: rows the fast walk takes
    /// handed over `way`, and the rows it does not take decoded the general way.
    /// (passed, counted).
    fn count_block<const W: usize>(block: &[u8], directory: &[u8], count: &LaneCount, way: Way) -> (u64, u64) {
        let kinds = vec![PayloadKind::Number; W];
        let mut rows = FastRows::<W>::new(block, directory, None);
        rows.lanes = way == Way::InLanes;
        let mut totals = (0u64, 0u64);
        let walked_decide = |totals: &mut (u64, u64), row: &FastRow<'_, W>| {
            let positions = row.positions();
            decide(count, totals, &row.walked(&positions, &kinds, 0));
        };
        loop {
            if way == Way::Folded {
                let (folded, refused) = rows.fold((0u64, 0u64), |mut totals, row| {
                    let whole = count
                        .filter
                        .is_none_or(|f| f.column >= W || row.int_or_null(Column::of::<W>(f.column)).is_ok());
                    whole.then(|| {
                        walked_decide(&mut totals, row);
                        totals
                    })
                });
                totals.0 += folded.0;
                totals.1 += folded.1;
                if let Some(row) = refused {
                    walked_decide(&mut totals, &row);
                    continue;
                }
            } else {
                let in_lanes = rows.count_in_lanes(count, |row| {
                    walked_decide(&mut totals, &row);
                    true
                });
                totals.0 += in_lanes.passed;
                totals.1 += in_lanes.counted;
            }
            let Some((_, entry)) = rows.pending() else { break };
            let offset = u16::from_le_bytes([entry[0], entry[1]]) as usize;
            if offset == 0 || !crate::storage::row::is_visible_head(block[offset], block[offset + 1]) {
                continue;
            }
            let stream = &block[offset + PIECE_HEADER..];
            let mut spans = vec![crate::storage::row::ColumnSpan::NULL; W];
            locate_columns(stream, block[offset + 2] as usize, &mut spans).unwrap();
            let row = crate::access::BlockRow { stream, spans: &spans, kinds: &kinds, rdba: 0, slot: 0 };
            decide(count, &mut totals, &row);
        }
        totals
    }

    /// The same from the values the block was made of.
    fn expected(rows: &[(Stored, Vec<Datum<'static>>)], stored_rows: usize, count: &LaneCount) -> (u64, u64) {
        let (mut passed, mut counted) = (0, 0);
        for (stored, values) in &rows[..stored_rows] {
            if !matches!(stored, Stored::Live) {
                continue;
            }
            let column = |c: usize| values.get(c).cloned().unwrap_or(Datum::Null);
            if count.filter.is_none_or(|f| holds(&f, &column(f.column))) {
                passed += 1;
                counted += u64::from(count.not_null.is_none_or(|c| !column(c).is_null()));
            }
        }
        (passed, counted)
    }

    fn check_lanes<const W: usize>(
        rows: &[(Stored, Vec<Datum<'static>>)],
        count: &LaneCount,
        len: usize,
    ) -> std::result::Result<(), TestCaseError> {
        let (block, directory) = block_of(rows, len);
        let want = expected(rows, directory.len() / 2, count);
        // The block ends where readable memory does: a read past its end faults.
        let block = Guarded::new(&block);
        for way in [Way::RowByRow, Way::InLanes, Way::Folded] {
            prop_assert_eq!(count_block::<W>(block.bytes(), &directory, count, way), want, "{:?}", way);
        }
        Ok(())
    }

    /// A copy of some bytes at the very end of a mapping whose next page cannot be read:
    /// any read past them faults, so a test over them shows that nothing reads there.
    struct Guarded {
        map: *mut libc::c_void,
        size: usize,
        readable: usize,
        len: usize,
    }

    impl Guarded {
        fn new(bytes: &[u8]) -> Guarded {
            // SAFETY: a fresh private mapping, written only inside its first pages; the
            // page after them is made unreadable.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
                let readable = bytes.len().div_ceil(page).max(1) * page;
                let size = readable + page;
                let map = libc::mmap(
                    std::ptr::null_mut(),
                    size,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(map, libc::MAP_FAILED);
                assert_eq!(libc::mprotect(map.cast::<u8>().add(readable).cast(), page, libc::PROT_NONE), 0);
                let start = map.cast::<u8>().add(readable - bytes.len());
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
                Guarded { map, size, readable, len: bytes.len() }
            }
        }

        fn bytes(&self) -> &[u8] {
            // SAFETY: the copy's bytes, inside the readable pages, for as long as self.
            unsafe { std::slice::from_raw_parts(self.map.cast::<u8>().add(self.readable - self.len), self.len) }
        }
    }

    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, no longer borrowed.
            unsafe { libc::munmap(self.map, self.size) };
        }
    }

    /// Rows whose walked column lies within 10 bytes of the block's end are not taken in
    /// lanes (a read there would be clamped): their group goes row by row, the groups
    /// further from the end run in lanes, and every row is counted once.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_group_reaching_into_the_last_bytes_goes_row_by_row() {
        if !super::super::lanes::available() {
            eprintln!("skipped: this CPU has no AVX2, so no group runs in lanes");
            return;
        }
        // Sixteen rows of one small number each (6 bytes): the first two end the block
        // with their length bytes 3 and 9 bytes before its end, too near it for a read of
        // their value's bytes.
        let rows: Vec<(Stored, Vec<Datum<'static>>)> =
            (0..16).map(|i| (Stored::Live, vec![Datum::Int(i % 7 + 1)])).collect();
        let (bytes, directory) = block_of(&rows, 1024);
        let block = Guarded::new(&bytes);
        let count = LaneCount { filter: None, not_null: None };
        let lanes = super::super::lanes::avx2::Block { bytes: block.bytes().as_ptr(), len: block.len };
        // SAFETY: AVX2 is there; two whole groups of entries; no column is counted.
        let group = |first: usize| unsafe {
            super::super::lanes::avx2::group::<1, false>(&lanes, directory.as_ptr().add(2 * first), 0xFF, &count)
        };
        assert_eq!(group(0), Group::Unclean, "the first rows reach into the block's last 10 bytes");
        assert_eq!(group(8), Group::Counted { passed: 8, counted: 8 });
        let mut rows = FastRows::<1>::new(block.bytes(), &directory, None);
        // In lanes whatever this machine chooses for scans (the CPU can: above).
        rows.lanes = true;
        let (mut in_lanes, mut one_by_one, mut general) = (0, 0, Vec::new());
        loop {
            in_lanes += rows
                .count_in_lanes(&count, |_| {
                    one_by_one += 1;
                    true
                })
                .counted;
            match rows.pending() {
                Some((slot, _)) => general.push(slot),
                None => break,
            }
        }
        // The two rows whose value's read would pass the block's end go the general way;
        // the groups from the next slot run in lanes.
        assert_eq!((in_lanes, one_by_one, general), (14, 0, vec![0, 1]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::txn::fixture::proptest_cases(200)))]

        /// Counted in lanes, row by row, or from the values the block was made of, a
        /// filtered count finds the same rows: whatever the rows' columns (NULL, long,
        /// missing at the end, not small whole numbers), how they are stored (deleted,
        /// being inserted, not a head, a chained row's middle or last piece, empty
        /// slots), near the block's end or not.
        #[test]
        fn lanes_count_what_rows_count(
            rows in proptest::collection::vec(
                (stored_strategy(), number_strategy(), proptest::collection::vec(other_strategy(), 0..9)),
                0..120,
            ),
            filter_column in 0usize..3,
            lo in -200i64..200,
            span in prop_oneof![0u64..50, 0u64..400, Just(u64::MAX >> 1)],
            outside in any::<bool>(),
            filtered in any::<bool>(),
            counted_column in proptest::option::of(0usize..8),
            len in prop_oneof![Just(8192usize), Just(2048), Just(900)],
        ) {
            // The filtered column at `filter_column`, the others around it.
            let rows: Vec<(Stored, Vec<Datum<'static>>)> = rows
                .into_iter()
                .map(|(stored, number, mut others)| {
                    others.insert(filter_column.min(others.len()), number);
                    (stored, others)
                })
                .collect();
            let span = span.min(i64::MAX.abs_diff(lo));
            let filter = if filtered { filter_of(filter_column, lo, span, outside) } else { None };
            let count = LaneCount { filter, not_null: counted_column };
            check_lanes::<8>(&rows, &count, len)?;
            if counted_column.is_none_or(|c| c < 3) {
                check_lanes::<3>(&rows, &count, len)?;
            }
            if filter_column == 0 && counted_column.is_none_or(|c| c == 0) {
                check_lanes::<1>(&rows, &count, len)?;
            }
        }
    }

    /// A whole number that mostly fits in 32 bits (near zero or near either end of the
    /// 32-bit line), or NULL, so that most groups are tested in 32-bit lanes.
    fn narrow_number_strategy() -> impl Strategy<Value = Datum<'static>> {
        prop_oneof![
            4 => narrow_edge().prop_map(Datum::Int),
            1 => Just(Datum::Null),
            1 => prop_oneof![Just(i64::from(i32::MAX) + 1), Just(i64::from(i32::MIN) - 1)].prop_map(Datum::Int),
        ]
    }

    fn narrow_edge() -> impl Strategy<Value = i64> {
        let near = |at: i32| {
            (-2i64..=2).prop_map(move |d| i64::from(at) + d).prop_filter("32 bits", |v| i32::try_from(*v).is_ok())
        };
        prop_oneof![-300i64..300, near(i32::MIN), near(i32::MAX), any::<i32>().prop_map(i64::from)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::txn::fixture::proptest_cases(200)))]

        /// Groups whose values all fit in 32 bits are tested in 32-bit lanes: they count
        /// what rows count, for ranges cut at either end of the 32-bit line or beyond it.
        #[test]
        fn narrow_lanes_count_what_rows_count(
            numbers in proptest::collection::vec(narrow_number_strategy(), 0..120),
            ends in (prop_oneof![narrow_edge(), Just(i64::MIN), Just(i64::MAX)], prop_oneof![narrow_edge(), Just(i64::MAX)]),
            outside in any::<bool>(),
        ) {
            let rows: Vec<(Stored, Vec<Datum<'static>>)> = numbers
                .into_iter()
                .enumerate()
                .map(|(i, number)| (Stored::Live, vec![Datum::Int(i as i64), number, Datum::Str("x".into())]))
                .collect();
            let (lo, hi) = (ends.0.min(ends.1), ends.0.max(ends.1));
            let filter = filter_of(1, lo, hi.abs_diff(lo), outside);
            prop_assume!(filter.is_some());
            check_lanes::<3>(&rows, &LaneCount { filter, not_null: Some(2) }, 8192)?;
        }
    }

    /// A row whose lengths run past the end of its block is never taken, in lanes or one
    /// by one: it is left to the general walk, which reports the corruption.
    #[test]
    fn a_row_running_past_the_block_is_left_to_the_general_walk() {
        let values: Vec<Datum<'static>> = (0..8).map(|i| Datum::Int(i + 1)).collect();
        let rows = vec![(Stored::Live, values); 16];
        let (mut block, directory) = block_of(&rows, 8192);
        // The first row sits at the block's end: its last column now claims 200 bytes.
        let first = u16::from_le_bytes([directory[0], directory[1]]) as usize;
        let mut positions = [0u16; 8];
        walk_lengths(&block[first + PIECE_HEADER..], 8, &mut positions).unwrap();
        block[first + PIECE_HEADER + positions[7] as usize] = 200;
        let count = LaneCount { filter: None, not_null: Some(7) };
        for lanes in [false, true] {
            let mut rows = FastRows::<8>::new(&block, &directory, None);
            rows.lanes = lanes;
            let mut one_by_one = 0;
            let in_lanes = rows.count_in_lanes(&count, |_| {
                one_by_one += 1;
                true
            });
            assert_eq!((in_lanes.counted, one_by_one), (0, 0), "lanes: {lanes}");
            assert_eq!(rows.pending().map(|(slot, _)| slot), Some(0), "lanes: {lanes}");
        }
    }

    #[test]
    fn a_stream_without_room_is_refused() {
        assert!(RoomyStream::<4>::new(&[0; 10]).is_none());
        assert!(RoomyStream::<4>::new(&vec![0; reach(4)]).is_some());
        assert!(RoomyStream::<0>::new(&[0; 64]).is_none());
    }

    #[test]
    fn a_known_head_passes_only_rows_whose_head_is_the_same() {
        let ints = |n: usize| -> Vec<Datum<'static>> { (0..n as i64).map(Datum::Int).collect() };
        // NULLs and a last value (a row's trailing NULLs are not stored).
        let nulls = |n: usize| -> Vec<Datum<'static>> {
            std::iter::repeat_n(Datum::Null, n - 1).chain([Datum::Int(1)]).collect()
        };
        let stored = [
            // A long value, to leave the block's last bytes (walked with each position
            // checked) to it alone.
            (Stored::Live, vec![Datum::Str("x".repeat(600).into())]),
            // Made a piece whose head is three zero bytes (a middle piece of a chained
            // row): before any row is known, it must not pass for the known head.
            (Stored::Live, ints(8)),
            (Stored::Live, nulls(60)),
            (Stored::Live, nulls(8)),
            // Fewer columns than the walk's: walked on, its steps would run through the
            // rows above it, all small steps, and end on a NULL.
            (Stored::Live, nulls(3)),
            (Stored::Deleted, ints(8)),
            (Stored::Inserting, ints(8)),
            (Stored::NotHead, ints(8)),
            (Stored::Live, ints(9)),
            (Stored::Live, ints(8)),
            (Stored::Live, ints(8)),
        ];
        let (mut block, directory) = block_of(&stored, 8192);
        let offset = |slot: usize| u16::from_le_bytes([directory[2 * slot], directory[2 * slot + 1]]) as usize;
        assert!(offset(1) + small_tail_len(8) <= block.len(), "the rows after the first have room");
        block[offset(1)..offset(1) + PIECE_HEADER].fill(0);
        // The last row was changed through another ITL slot than the rest.
        block[offset(10) + 1] = 7;
        let in_block = FastBlock::<8>::new(&block);
        let mut known = KnownHead::default();
        let taken: Vec<bool> =
            (0..stored.len()).map(|slot| in_block.row_at(offset(slot), &mut known).is_some()).collect();
        assert_eq!(taken, [false, false, true, true, false, false, false, false, true, true, true]);
        // Each taken row found its columns, whichever head the test compared.
        for slot in [8, 9, 10, 9] {
            let row = in_block.row_at(offset(slot), &mut known).expect("taken");
            assert_eq!(row.int_or_null(Column::First), Ok(Some(0)));
            assert_eq!(row.int_or_null(Column::Last), Ok(Some(7)));
        }
    }

    #[test]
    fn small_steps_skip_small_and_null_columns_and_stop_on_the_rest() {
        assert_eq!(SMALL_STEP[0], 1);
        assert_eq!(SMALL_STEP[SMALL_COLUMN_MAX], SMALL_STEP_MAX);
        assert_eq!(SMALL_STEP[LEN_NULL as usize], 1);
        for (b, &step) in SMALL_STEP.iter().enumerate().take(LEN_NULL as usize).skip(SMALL_COLUMN_MAX + 1) {
            assert_eq!(step, 0, "length byte {b}");
        }
    }

    #[test]
    fn steps_skip_short_and_null_columns_and_stop_on_the_rest() {
        assert_eq!(LENGTH_STEP[0], 1);
        assert_eq!(LENGTH_STEP[250], 251);
        assert_eq!(LENGTH_STEP[LEN_NULL as usize], 1);
        for b in 251..=LEN_ESCAPE {
            assert_eq!(LENGTH_STEP[b as usize], 0);
            assert!(stops_walk(b));
        }
        assert!(!stops_walk(LEN_NULL) && !stops_walk(250) && !stops_walk(0));
    }
}

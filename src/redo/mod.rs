//! Redo: the record of every change to every block, written ahead of the blocks, and
//! what instance recovery replays after a crash.
//!
//! The seam: a block's bytes change only through a buffer-cache write guard (see
//! `buffer::guard`), and releasing one (drop or downgrade) is where redo is made. The
//! guard keeps the bytes it is asked to write as they were before (the stretches a
//! writer names through `storage::block_write::BlockWrite`, or a copy of the whole
//! block for a writer that takes all of it; nothing when the block's first change since
//! it was read or written logs its whole image), compares them with what it leaves, and
//! appends one record to the log buffer under the block's content lock, so records of
//! one block are in the order of its changes. No caller can change a block and forget
//! its redo: there is no other way to a block's bytes.
//!
//! ```text
//!   txn / access / index           buffer                         redo
//!   ───────────────────            ──────                         ────
//!   cache.current_get(rdba) ─────► WriteGuard
//!   guard.range_mut(stretch) ────► copy of the stretch's bytes
//!   (or &mut guard[..]) ─────────► copy of the whole block
//!   change bytes through it
//!   drop(guard) ─────────────────► diff(copies, after) ─────────► RedoLog::append
//!                                  page LSN, first-dirty LSN ◄──── (start, end) LSN
//!   commit: undo header change ──► (same) ───────────────────────► flush_to(end):
//!                                                                   log file sync
//!   DBWR / eviction writes a block: flush_to(page LSN) first (write-ahead rule)
//! ```
//!
//! Below `buffer` and above `storage`: the log writes its files through the I/O layer
//! (`storage::io`); the instance (`instance`) opens the log, runs recovery through the cache
//! before anything else reads a block, then attaches the log to the cache.
//!
//! Torn blocks: a block's first change after it was read or written logs the whole
//! block (Op::Image, as PostgreSQL's full_page_writes does after each checkpoint), so
//! a block half-written when the power went is rebuilt from its image, never read.

mod format;
pub mod log;
pub mod reader;
pub mod record;
pub mod inspect;

pub use log::RedoLog;

/// Bytes of a log block: every write starts on one.
pub const LOG_BLOCK: u64 = 512;
/// Bytes of a log file's header; records start after it.
pub const FILE_HEADER: u64 = LOG_BLOCK;
/// Fewest bytes left in a log block where a record may start: its length field. Fewer
/// zeros before a boundary could not be told from the start of a record, so records
/// never start there and a reader skips them.
pub const MIN_RECORD_ROOM: u64 = 4;

/// A log sequence number: `sequence << 32 | byte offset` in that sequence's file.
pub type Lsn = u64;

/// The LSN of byte `offset` of sequence `seq`.
pub fn lsn(seq: u32, offset: u64) -> Lsn {
    (u64::from(seq) << 32) | offset
}

/// The sequence of an LSN.
pub fn lsn_seq(lsn: Lsn) -> u32 {
    (lsn >> 32) as u32
}

/// The byte offset of an LSN in its sequence's file.
pub fn lsn_offset(lsn: Lsn) -> u64 {
    lsn & 0xFFFF_FFFF
}

thread_local! {
    /// The log this thread appended to last (its address) and the end of that record:
    /// what its commit waits for.
    static LAST_APPENDED: std::cell::Cell<(usize, Lsn)> = const { std::cell::Cell::new((0, 0)) };
}

impl RedoLog {
    /// Notes that this thread appended a record ending at `lsn` to this log.
    pub fn note_appended(&self, lsn: Lsn) {
        LAST_APPENDED.with(|c| c.set((self as *const RedoLog as usize, lsn)));
    }

    /// The end of the newest record this thread appended to this log, or where the next
    /// record goes if its last record went to another log.
    pub fn last_appended(&self) -> Lsn {
        match LAST_APPENDED.with(|c| c.get()) {
            (log, lsn) if log == self as *const RedoLog as usize => lsn,
            _ => self.append_lsn(),
        }
    }
}

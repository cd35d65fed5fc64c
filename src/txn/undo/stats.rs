//! Figures of the undo tablespace since the database was opened, as Oracle's
//! `v$undostat` shows them (one interval: the whole time the database has been open).
//!
//! They are counted with relaxed atomics by whichever session does the work; they are
//! figures to look at, not to synchronise on.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the undo figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UndoStats {
    /// Undo blocks handed out to transactions (`UNDOBLKS`).
    pub undo_blocks: u64,
    /// Transactions begun (`TXNCOUNT`).
    pub transactions: u64,
    /// Most transactions active at once (`MAXCONCURRENCY`).
    pub max_concurrency: u64,
    /// Transactions active now.
    pub active: u64,
    /// Reads of undo that had been overwritten (`SSOLDERRCNT`).
    pub snapshot_too_old: u64,
    /// Undo appends refused for want of a reusable block (`NOSPACEERRCNT`).
    pub no_space: u64,
    /// Extents taken from another segment while a block of theirs was still within
    /// `undo_retention` (`UNXPSTEALCNT`).
    pub unexpired_steals: u64,
    /// Extents taken from another segment, every block free or past `undo_retention`
    /// (`EXPSTEALCNT`).
    pub expired_steals: u64,
    /// Blocks of a segment's own ring reused within `undo_retention` (`UNXPBLKREUCNT`).
    pub unexpired_reuse: u64,
    /// Blocks of a segment's own ring reused after `undo_retention` (`EXPBLKREUCNT`).
    pub expired_reuse: u64,
    /// Extents added by growing the tablespace (the sum of `v$rollstat.EXTENDS`).
    pub extends: u64,
}

/// The live counters behind [`UndoStats`].
#[derive(Debug, Default)]
pub(super) struct UndoCounters {
    pub undo_blocks: AtomicU64,
    pub transactions: AtomicU64,
    pub max_concurrency: AtomicU64,
    pub active: AtomicU64,
    pub snapshot_too_old: AtomicU64,
    pub no_space: AtomicU64,
    pub unexpired_steals: AtomicU64,
    pub expired_steals: AtomicU64,
    pub unexpired_reuse: AtomicU64,
    pub expired_reuse: AtomicU64,
    pub extends: AtomicU64,
}

impl UndoCounters {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A transaction began: counts it and raises the concurrency high mark.
    pub fn began(&self) {
        Self::bump(&self.transactions);
        let now = self.active.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_concurrency.fetch_max(now, Ordering::Relaxed);
    }

    /// `n` transactions found active in the transaction tables at open.
    pub fn found_active(&self, n: u64) {
        self.active.store(n, Ordering::Relaxed);
        self.max_concurrency.store(n, Ordering::Relaxed);
    }

    pub fn ended(&self) {
        self.active.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> UndoStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        UndoStats {
            undo_blocks: get(&self.undo_blocks),
            transactions: get(&self.transactions),
            max_concurrency: get(&self.max_concurrency),
            active: get(&self.active),
            snapshot_too_old: get(&self.snapshot_too_old),
            no_space: get(&self.no_space),
            unexpired_steals: get(&self.unexpired_steals),
            expired_steals: get(&self.expired_steals),
            unexpired_reuse: get(&self.unexpired_reuse),
            expired_reuse: get(&self.expired_reuse),
            extends: get(&self.extends),
        }
    }
}

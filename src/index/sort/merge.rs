//! The merge of spilled runs: one reader per run, each with a buffer of its run's
//! records, and a binary heap of the readers ordered by their current record, so each
//! entry out costs one comparison per level of the heap (log₂ of the runs).
//!
//! Invariants: a reader's current record lies whole in its buffer; the heap holds exactly
//! the readers that have a current record, the smallest (key, rowid) on top; the runs are
//! read once, front to back, in calls of the reader's buffer size.

use super::temp::{RECORD_HEADER, TempFile};
use crate::error::{Error, Result};
use crate::index::block::RowId;
use crate::stats::SessionStats;
use std::cmp::Ordering;

/// Where one run lies in the temporary file.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunExtent {
    pub start: u64,
    pub end: u64,
}

/// The smallest buffer a run's reader gets.
const MIN_READ_BYTES: usize = 64 << 10;

/// Reads the records of one run.
struct RunReader {
    buf: Vec<u8>,
    /// Bytes of `buf` read from the file.
    filled: usize,
    /// Where the current record starts in `buf` (`filled` when there is none).
    at: usize,
    /// The file offset of the next read, and the run's end.
    next: u64,
    end: u64,
}

impl RunReader {
    fn new(run: RunExtent, buffer: usize) -> RunReader {
        RunReader { buf: vec![0; buffer], filled: 0, at: 0, next: run.start, end: run.end }
    }

    fn key_len(&self) -> usize {
        usize::from(u16::from_le_bytes([self.buf[self.at], self.buf[self.at + 1]]))
    }

    fn key(&self) -> &[u8] {
        &self.buf[self.at + RECORD_HEADER..self.at + RECORD_HEADER + self.key_len()]
    }

    fn rowid(&self) -> RowId {
        let r = &self.buf[self.at + 2..self.at + RECORD_HEADER];
        RowId { rdba: u32::from_be_bytes([r[0], r[1], r[2], r[3]]), slot: u16::from_be_bytes([r[4], r[5]]) }
    }

    fn cmp(&self, other: &RunReader) -> Ordering {
        self.key().cmp(other.key()).then_with(|| self.rowid().cmp(&other.rowid()))
    }

    /// Makes the record at `at` the current one, reading more of the run when it is not
    /// whole in the buffer. Returns false at the end of the run.
    fn load(&mut self, file: &mut TempFile, stats: &SessionStats) -> Result<bool> {
        if !self.whole(RECORD_HEADER) || !self.whole(RECORD_HEADER + self.key_len()) {
            self.refill(file, stats)?;
            if self.at == self.filled {
                return Ok(false);
            }
            if !self.whole(RECORD_HEADER) || !self.whole(RECORD_HEADER + self.key_len()) {
                return Err(damaged(file, "a record runs past the end of its run"));
            }
        }
        Ok(true)
    }

    fn whole(&self, bytes: usize) -> bool {
        self.at + bytes <= self.filled
    }

    /// Moves the unread rest to the front of the buffer and fills the buffer after it.
    fn refill(&mut self, file: &mut TempFile, stats: &SessionStats) -> Result<()> {
        self.buf.copy_within(self.at..self.filled, 0);
        self.filled -= self.at;
        self.at = 0;
        let want = (self.buf.len() - self.filled).min((self.end - self.next) as usize);
        if want > 0 {
            let got = file.read_at(stats, &mut self.buf[self.filled..self.filled + want], self.next)?;
            if got < want {
                return Err(damaged(file, "the file is shorter than its runs"));
            }
            self.filled += got;
            self.next += got as u64;
        }
        Ok(())
    }

    /// Steps past the current record and loads the next. Returns false at the run's end.
    fn advance(&mut self, file: &mut TempFile, stats: &SessionStats) -> Result<bool> {
        self.at += RECORD_HEADER + self.key_len();
        self.load(file, stats)
    }
}

fn damaged(file: &TempFile, reason: &str) -> Error {
    Error::Corrupt { file: file.path().to_owned(), block: None, reason: format!("sort temporary file: {reason}") }
}

/// A k-way merge of the runs of one temporary file.
pub(super) struct Merge {
    file: TempFile,
    readers: Vec<RunReader>,
    /// Indexes of the readers with a current record, as a binary min-heap.
    heap: Vec<usize>,
}

impl Merge {
    /// A merge of `runs` of `file`, reading with `memory` bytes of buffers in all.
    pub fn new(file: TempFile, runs: &[RunExtent], memory: usize) -> Merge {
        let buffer = (memory / runs.len().max(1)).max(MIN_READ_BYTES);
        Merge { file, readers: runs.iter().map(|&r| RunReader::new(r, buffer)).collect(), heap: Vec::new() }
    }

    /// Hands every record of every run to `visit` in (key, rowid) order.
    pub fn for_each(&mut self, stats: &SessionStats, mut visit: impl FnMut(&[u8], RowId) -> Result<()>) -> Result<()> {
        for i in 0..self.readers.len() {
            if self.readers[i].load(&mut self.file, stats)? {
                self.heap.push(i);
                self.sift_up(self.heap.len() - 1);
            }
        }
        while let Some(&top) = self.heap.first() {
            let reader = &self.readers[top];
            visit(reader.key(), reader.rowid())?;
            if !self.readers[top].advance(&mut self.file, stats)? {
                let last = self.heap.pop().expect("the heap has a top");
                if self.heap.is_empty() {
                    break;
                }
                self.heap[0] = last;
            }
            self.sift_down(0);
        }
        Ok(())
    }

    fn less(&self, a: usize, b: usize) -> bool {
        self.readers[self.heap[a]].cmp(&self.readers[self.heap[b]]) == Ordering::Less
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 && self.less(i, (i - 1) / 2) {
            self.heap.swap(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut smallest = i;
            if l < self.heap.len() && self.less(l, smallest) {
                smallest = l;
            }
            if r < self.heap.len() && self.less(r, smallest) {
                smallest = r;
            }
            if smallest == i {
                return;
            }
            self.heap.swap(i, smallest);
            i = smallest;
        }
    }
}

//! The sort of an index build: every (key, rowid) entry of a table in (key, rowid) order,
//! sorted in memory within a bound (the session's `sort_area_size`) and, beyond it, as
//! sorted runs spilled to a temporary file under the database directory and merged.
//!
//! ```text
//!  push ─► in-memory run (module memory): keys packed in one arena, a 24-byte entry each
//!          │ full: keys + entries + the radix sort's scratch would pass sort_area_size
//!          ▼
//!          sort the run, append it to the temporary file (module temp), empty the run
//!  finish ─► nothing spilled: sort the run in memory              sorts (memory) + 1
//!            runs spilled:    spill the last run, then one k-way  sorts (disk) + 1
//!                             merge of them all (module merge)
//! ```
//!
//! A run's sort does nothing when its keys came in order (a sorted check as they are
//! pushed); else it is a radix sort on each key's first 8 bytes (module radix) and a
//! comparison sort of the entries whose prefixes tie, which for keys of at most 8 bytes
//! compares no key bytes at all (module memory; the entries, module entry).
//!
//! Invariants: entries come out in (key bytes, rowid) order, the order of an index's full
//! keys; the in-memory part of a sort takes at most `sort_area_size` bytes (less a few
//! KiB of slack for the vectors' growth); the temporary file lives only as long as the
//! [`KeySort`] or the [`Sorted`] it became, and is removed when that is dropped, whether
//! the build succeeded or failed.

mod entry;
mod memory;
mod merge;
mod radix;
mod temp;

#[cfg(test)]
use crate::storage::temp::is_temp_file_name;

use crate::error::Result;
use crate::index::block::RowId;
use crate::stats::{SessionStats, Stat};
use crate::storage::io::Io;
use memory::MemoryRun;
use merge::{Merge, RunExtent};
use std::path::Path;
use temp::TempFile;

/// The most memory a sort's run takes, whatever `sort_area_size` says: entries address
/// their arena with 32 bits.
const MAX_AREA: usize = 2 << 30;

/// What a sort may use: memory, and where it spills.
#[derive(Clone, Copy)]
pub struct SortArea<'a> {
    /// Bytes the in-memory run may take (`sort_area_size`).
    pub memory: usize,
    /// The directory of the temporary file (the database's).
    pub dir: &'a Path,
    /// The I/O layer its writes go through (the database's).
    pub io: &'a dyn Io,
}

/// Runs spilled so far.
struct Spill {
    file: TempFile,
    runs: Vec<RunExtent>,
}

/// A sort being filled (see the module documentation).
pub struct KeySort<'a> {
    area: SortArea<'a>,
    run: MemoryRun,
    spill: Option<Spill>,
    /// Entries pushed, and the longest key among them.
    rows: u64,
    longest: usize,
}

impl<'a> KeySort<'a> {
    pub fn new(area: SortArea<'a>) -> KeySort<'a> {
        let area = SortArea { memory: area.memory.min(MAX_AREA), ..area };
        KeySort { area, run: MemoryRun::new(), spill: None, rows: 0, longest: 0 }
    }

    /// Adds the entry whose key `encode` appends to the vector it is given, with `rowid`;
    /// `encode` returns false for a row without an entry. Returns the key's length when
    /// an entry was added. A run that filled its area is sorted and spilled first, so the
    /// caller may refuse the key just added (too long) before it reaches the disk.
    pub fn push_with(
        &mut self,
        stats: &SessionStats,
        rowid: RowId,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<bool>,
    ) -> Result<Option<usize>> {
        if self.run.bytes() >= self.area.memory {
            self.spill_run(stats)?;
        }
        let room = self.area.memory.saturating_sub(self.run.bytes());
        let added = self.run.push_with(rowid, room, encode)?;
        if let Some(len) = added {
            self.rows += 1;
            self.longest = self.longest.max(len);
        }
        Ok(added)
    }

    /// Sorts the run and appends it to the temporary file (made at the first spill).
    fn spill_run(&mut self, stats: &SessionStats) -> Result<()> {
        self.run.sort();
        let spill = match &mut self.spill {
            Some(spill) => spill,
            none => none.insert(Spill { file: TempFile::create(self.area.io, self.area.dir)?, runs: Vec::new() }),
        };
        let start = spill.file.position();
        self.run.for_each(|key, rowid| spill.file.append(stats, key, rowid))?;
        spill.file.flush(stats)?;
        spill.runs.push(RunExtent { start, end: spill.file.position() });
        self.run.clear();
        Ok(())
    }

    /// Ends the input: the entries, ready to be read in order. Counts the sort.
    pub fn finish(mut self, stats: &SessionStats) -> Result<Sorted> {
        stats.add(Stat::SortsRows, self.rows);
        let source = if self.spill.is_none() {
            stats.add(Stat::SortsMemory, 1);
            self.run.sort();
            Source::Memory(std::mem::take(&mut self.run))
        } else {
            stats.add(Stat::SortsDisk, 1);
            if self.run.len() > 0 {
                self.spill_run(stats)?;
            }
            self.run = MemoryRun::new();
            let Spill { file, runs } = self.spill.take().expect("spilled");
            Source::Merge(Box::new(Merge::new(file, &runs, self.area.memory)))
        };
        Ok(Sorted { source, longest: self.longest })
    }
}

enum Source {
    Memory(MemoryRun),
    Merge(Box<Merge>),
}

/// The sorted entries of a finished [`KeySort`].
pub struct Sorted {
    source: Source,
    longest: usize,
}

impl Sorted {
    /// The length of the longest key.
    pub fn longest_key(&self) -> usize {
        self.longest
    }

    /// Hands every entry to `visit` in (key, rowid) order; stops at its first error.
    pub fn for_each(&mut self, stats: &SessionStats, visit: impl FnMut(&[u8], RowId) -> Result<()>) -> Result<()> {
        match &mut self.source {
            Source::Memory(run) => run.for_each(visit),
            Source::Merge(merge) => merge.for_each(stats, visit),
        }
    }
}

#[cfg(test)]
mod tests;

//! Formatting the online log files ahead of their redo: zeros over the allocated space.
//!
//! A log file's space is allocated at creation but not written, and the first write into
//! each allocated extent changes the file system's metadata, which a data sync must then
//! commit to its journal: a second device flush, and on ext4 (ordered data) the flush of
//! every other file's newly allocated dirty blocks before it. So zeros go over each file
//! ahead of its redo (as PostgreSQL zero-fills its WAL segments), and a commit's sync
//! flushes the commit's own blocks alone. Two formatters:
//!
//! - **the writer of the moment**, when its write would go past a file's mark (the first
//!   write of this process into the file, or a background that fell behind): zeros from
//!   its write to a [`STEP`] boundary at least a step past it, flushed by its own sync;
//! - **the log writer's thread**, asked by every write that leaves less than half of
//!   [`MARGIN`] formatted past itself: [`BACKGROUND_STEP`] at a time up to a margin past
//!   that write, each step synced before the mark moves, so that no commit's sync
//!   carries zeros or the metadata they change.
//!
//! Invariants: zeros are written only under the formatter's lock, at or past a file's
//! mark; the mark moves only once the zeros below it are written (and, in the
//! background, synced); redo is written only below the mark (a writer formats first,
//! under the lock, when its write would pass it). So zeros never go over redo this
//! process wrote; and the background formats only a file whose mark a write of this
//! process set, so never over redo an earlier process left there.

use crate::error::Result;
use crate::storage::io::IoFile;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A writer formats to a boundary of this many bytes, at least this far past its write.
pub const STEP: u64 = 512 << 10;

/// Zeros a step of the background writes, then syncs: few and large, since each sync of
/// zeros commits the file system's journal, which a commit's sync then waits for.
pub const BACKGROUND_STEP: u64 = 4 << 20;

/// How far past its latest write the log writer keeps a file formatted.
pub const MARGIN: u64 = 16 << 20;

static ZEROS: [u8; STEP as usize] = [0; STEP as usize];

/// How far this process has written a file with zeros or redo (0 at open: the space past
/// the header may be allocated but never written).
#[derive(Debug, Default)]
pub struct FormatMark(AtomicU64);

impl FormatMark {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// The formatting of one log's files: the lock every zero is written under, and the
/// background's next request.
#[derive(Debug, Default)]
pub struct Formatter {
    lock: Mutex<()>,
    wanted: Mutex<Option<Wanted>>,
}

/// A request for the background: format `file` up to `upto`.
#[derive(Debug)]
struct Wanted {
    file: Arc<dyn IoFile>,
    mark: Arc<FormatMark>,
    upto: u64,
}

impl Formatter {
    /// Before redo is written at `from..to` of a file (whose mark is `mark`, whose size
    /// is `file_size`): formats it that far first through the writer's `file` if its
    /// mark is short of `to`, leaving the zeros to the write's sync. Returns whether the
    /// background should format further (less than half the margin is formatted past
    /// `to`); the request is then recorded, replacing any earlier one, naming the file
    /// as the background's own open of it, `background_file`: Linux reports a failed
    /// writeback once to each open file, so the writers' next sync still sees an error
    /// the background's sync met first.
    pub fn before_write(
        &self,
        (file, background_file): (&Arc<dyn IoFile>, &Arc<dyn IoFile>),
        mark: &Arc<FormatMark>,
        (from, to): (u64, u64),
        file_size: u64,
    ) -> Result<bool> {
        if to > mark.get() {
            let _lock = self.lock.lock();
            let formatted = mark.get();
            if to > formatted {
                let end = (to + STEP).next_multiple_of(STEP).min(file_size);
                write_zeros(file.as_ref(), from.max(formatted), end)?;
                mark.0.store(end.max(to), Ordering::Release);
            }
        }
        if mark.get() >= (to + MARGIN / 2).min(file_size) {
            return Ok(false);
        }
        let upto = (to + MARGIN).min(file_size);
        *self.wanted.lock() = Some(Wanted { file: background_file.clone(), mark: mark.clone(), upto });
        Ok(true)
    }

    /// One step of the background's formatting: zeros from the requested file's mark,
    /// [`BACKGROUND_STEP`] or up to the request's end, synced, then the mark moved past
    /// them. Returns whether more is wanted. The lock is held for one step, so a writer
    /// that must format waits a step at most. A file whose mark no write of this process
    /// has set is left alone (see the invariants).
    pub fn step(&self) -> Result<bool> {
        let Some((file, mark, upto)) = self.wanted.lock().as_ref().map(|w| (w.file.clone(), w.mark.clone(), w.upto))
        else {
            return Ok(false);
        };
        let more = {
            let _lock = self.lock.lock();
            let at = mark.get();
            if at > 0 && at < upto {
                let end = (at + BACKGROUND_STEP).min(upto);
                write_zeros(file.as_ref(), at, end)?;
                file.sync()?;
                mark.0.store(end, Ordering::Release);
            }
            at > 0 && mark.get() < upto
        };
        let mut wanted = self.wanted.lock();
        if !more && wanted.as_ref().is_some_and(|w| Arc::ptr_eq(&w.mark, &mark) && w.upto == upto) {
            *wanted = None;
        }
        Ok(more || wanted.is_some())
    }
}

/// Writes zeros over `from..to` of `file` (nothing if `to <= from`).
fn write_zeros(file: &dyn IoFile, from: u64, to: u64) -> Result<()> {
    let mut at = from;
    while at < to {
        let len = (to - at).min(STEP);
        file.write_at(&ZEROS[..len as usize], at)?;
        at += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// What a [`Formatter`] did to a file: writes of zeros (offset, length) and syncs,
    /// in order.
    #[derive(Debug, Default)]
    struct SeenFile {
        done: Mutex<Vec<Done>>,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Done {
        Zeros(u64, u64),
        Sync,
    }

    impl IoFile for SeenFile {
        fn path(&self) -> &Path {
            Path::new("redo01.log")
        }
        fn fd(&self) -> std::os::fd::RawFd {
            -1
        }
        fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
            assert!(buf.iter().all(|b| *b == 0), "only zeros from a formatter");
            self.done.lock().push(Done::Zeros(offset, buf.len() as u64));
            Ok(())
        }
        fn sync(&self) -> Result<()> {
            self.done.lock().push(Done::Sync);
            Ok(())
        }
        fn len(&self) -> Result<u64> {
            Ok(0)
        }
        fn extend(&self, _len: u64) -> Result<()> {
            Ok(())
        }
        fn allocate(&self, _len: u64) -> Result<()> {
            Ok(())
        }
    }

    fn seen() -> (Arc<SeenFile>, Arc<dyn IoFile>) {
        let seen = Arc::new(SeenFile::default());
        let file: Arc<dyn IoFile> = seen.clone();
        (seen, file)
    }

    /// The zeros of `done` written between syncs, as (from, to) stretches, each with
    /// whether a sync followed it.
    fn stretches(done: &[Done]) -> Vec<(u64, u64, bool)> {
        let mut out: Vec<(u64, u64, bool)> = Vec::new();
        for d in done {
            match *d {
                Done::Zeros(at, len) => match out.last_mut() {
                    Some((_, end, false)) if *end == at => *end = at + len,
                    _ => out.push((at, at + len, false)),
                },
                Done::Sync => out.last_mut().expect("a sync after zeros").2 = true,
            }
        }
        out
    }

    /// The first write formats in the foreground (unsynced, from the write to a step
    /// boundary a step past it) and asks for more; the background then formats a step at
    /// a time, each synced before the mark moves, to a margin past the write; a later
    /// write inside the margin formats nothing and asks for nothing.
    #[test]
    fn a_first_write_formats_a_step_and_the_background_keeps_a_margin_ahead() {
        let (seen, file) = seen();
        let (mark, formatter) = (Arc::new(FormatMark::default()), Formatter::default());
        let size = 64 << 20;
        assert!(formatter.before_write((&file, &file), &mark, (4096, 5000), size).unwrap());
        assert_eq!(stretches(&seen.done.lock()), [(4096, 2 * STEP, false)], "to a boundary a step past, unsynced");
        assert_eq!(mark.get(), 2 * STEP);
        seen.done.lock().clear();
        let mut steps = 0;
        while formatter.step().unwrap() {
            steps += 1;
            assert!(steps < 100, "the background never stops");
        }
        let upto = 5000 + MARGIN;
        let mut at = 2 * STEP;
        for (from, to, synced) in stretches(&seen.done.lock()) {
            assert_eq!((from, to, synced), (at, (at + BACKGROUND_STEP).min(upto), true), "a step, then its sync");
            at = to;
        }
        assert_eq!((at, mark.get()), (upto, upto));
        seen.done.lock().clear();
        assert!(!formatter.before_write((&file, &file), &mark, (5000, 6000), size).unwrap());
        assert!(!formatter.step().unwrap());
        assert!(seen.done.lock().is_empty(), "nothing more to format");
    }

    /// The background never formats a file no write of this process has marked (redo an
    /// earlier process left there lies at unknown offsets), and never past the file.
    #[test]
    fn the_background_formats_only_marked_files_and_stops_at_their_end() {
        let (seen, file) = seen();
        let formatter = Formatter::default();
        let unmarked = Arc::new(FormatMark::default());
        *formatter.wanted.lock() = Some(Wanted { file: file.clone(), mark: unmarked.clone(), upto: MARGIN });
        assert!(!formatter.step().unwrap());
        assert!(seen.done.lock().is_empty(), "an unmarked file is left alone");
        assert_eq!(unmarked.get(), 0);

        let mark = Arc::new(FormatMark::default());
        let size = 12 * STEP;
        assert!(formatter.before_write((&file, &file), &mark, (8192, 9000), size).unwrap());
        while formatter.step().unwrap() {}
        assert_eq!(mark.get(), size, "formatted to the file's end, no further");
        let zeros: u64 = stretches(&seen.done.lock()).iter().map(|(from, to, _)| to - from).sum();
        assert_eq!(zeros, size - 8192, "each byte from the first write on zeroed once");
    }
}

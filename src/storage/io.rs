//! The one I/O layer: every write, sync and atomic replacement of a database file
//! (datafiles, online redo logs, the control file and the dictionary) goes through an
//! [`Io`], so a test can put a fault-injecting one ([`FaultIo`]) under a whole database.
//!
//! [`OsIo`] is the operating system: `pwrite`, `fdatasync`, and [`Io::replace`] as a
//! temporary file, fsync, rename and fsync of the directory. Reads go straight to the
//! file descriptor ([`IoFile::fd`]): a crash never changes what was read, and the scan
//! path keeps its `preadv` into the cache's buffers.
//!
//! [`FaultIo`] writes through to the real files but remembers, for each write not yet
//! synced, the bytes it overwrote. Its failure plan can turn the Nth sync into a power
//! loss: from then on every write and sync fails (the machine is off), and once the
//! database is gone [`FaultIo::power_loss`] decides the fate of each unsynced write, as
//! SQLite's crash tests do: kept, dropped (the old bytes put back), or torn (some of its
//! 512-byte sectors old, some new, some garbage), chosen by a seed. It can also fail a
//! chosen write or sync with an errno (ENOSPC, EIO) without crashing, every write to
//! the files whose names contain a given part ([`FaultIo::fail_writes_to`]), or the next
//! sync of such a file ([`FaultIo::fail_next_sync_of`]).
//!
//! A sync that fails with an errno does what Linux does when a writeback fails: the
//! file's unsynced writes are dropped (their old bytes put back, a growth undone) and
//! forgotten, so a later sync of the file succeeds with them lost. A database that
//! retries a failed sync and trusts the retry loses data under `FaultIo` as it would
//! on Linux (the "fsyncgate" problem).
//!
//! Invariant: after `sync` returns Ok for a file, every write to it made before the call
//! survives a power loss, unless an earlier sync of the file failed; an atomic
//! replacement that returned Ok survives whole, and one that failed leaves the old file.

use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens files and replaces whole ones.
pub trait Io: Send + Sync + std::fmt::Debug {
    /// Opens `path` for reading and writing; `create` makes a new file (failing if it
    /// exists); `direct` asks for `O_DIRECT`.
    fn open(&self, path: &Path, create: bool, direct: bool) -> Result<Arc<dyn IoFile>>;
    /// Replaces the file at `path` with `contents` atomically and durably.
    fn replace(&self, path: &Path, contents: &[u8]) -> Result<()>;
    /// Makes the directory's entries durable (`fsync` of the directory): a file created
    /// in it survives a power loss only after this.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
}

/// One open file.
#[allow(clippy::len_without_is_empty)] // a file's size is read for offsets, never tested for emptiness
pub trait IoFile: Send + Sync + std::fmt::Debug {
    fn path(&self) -> &Path;
    /// The descriptor, for reads.
    fn fd(&self) -> RawFd;
    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()>;
    /// Makes every write made so far durable (`fdatasync`).
    fn sync(&self) -> Result<()>;
    /// The file's size in bytes.
    fn len(&self) -> Result<u64>;
    /// Grows the file to `len` bytes (never shrinks it), sparsely: the disk space is
    /// found only when the blocks are written.
    fn extend(&self, len: u64) -> Result<()>;
    /// Grows the file to `len` bytes (never shrinks it) with its disk space reserved
    /// now (`posix_fallocate`), so a full disk fails here rather than at a later write.
    fn allocate(&self, len: u64) -> Result<()>;
}

/// The default: the operating system's file calls.
pub fn os() -> Arc<dyn Io> {
    Arc::new(OsIo)
}

/// The operating system's I/O.
#[derive(Debug, Default)]
pub struct OsIo;

impl Io for OsIo {
    fn open(&self, path: &Path, create: bool, direct: bool) -> Result<Arc<dyn IoFile>> {
        Ok(Arc::new(OsFile::open(path, create, direct)?))
    }

    fn replace(&self, path: &Path, contents: &[u8]) -> Result<()> {
        replace_with_rename(path, contents)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        sync_directory(dir)
    }
}

/// A file opened by [`OsIo`].
#[derive(Debug)]
pub struct OsFile {
    file: File,
    path: PathBuf,
}

impl OsFile {
    fn open(path: &Path, create: bool, direct: bool) -> Result<OsFile> {
        let mut options = OpenOptions::new();
        options.read(true).write(true);
        if create {
            options.create_new(true);
        }
        if direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let verb = match (create, direct) {
            (true, _) => "create",
            (false, true) => "open with O_DIRECT",
            (false, false) => "open",
        };
        let file = options.open(path).map_err(|e| Error::io(verb, path, e))?;
        Ok(OsFile { file, path: path.to_owned() })
    }
}

impl IoFile for OsFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.file.write_all_at(buf, offset).map_err(|e| Error::io("write", &self.path, e))
    }

    fn sync(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io("sync", &self.path, e))
    }

    fn len(&self) -> Result<u64> {
        Ok(self.file.metadata().map_err(|e| Error::io("stat", &self.path, e))?.len())
    }

    fn extend(&self, len: u64) -> Result<()> {
        if self.len()? < len {
            self.file.set_len(len).map_err(|e| Error::io("extend", &self.path, e))?;
        }
        Ok(())
    }

    fn allocate(&self, len: u64) -> Result<()> {
        let Ok(len) = libc::off_t::try_from(len) else {
            return Err(Error::io("allocate", &self.path, std::io::Error::from_raw_os_error(libc::EFBIG)));
        };
        // SAFETY: posix_fallocate only reads its integer arguments; the descriptor is open.
        match unsafe { libc::posix_fallocate(self.file.as_raw_fd(), 0, len) } {
            0 => Ok(()),
            errno => Err(Error::io("allocate", &self.path, std::io::Error::from_raw_os_error(errno))),
        }
    }
}

/// Writes a temporary file beside `path`, syncs it, renames it over `path`, then syncs
/// the directory so that the rename itself survives a crash.
fn replace_with_rename(path: &Path, contents: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    std::fs::write(tmp, contents).map_err(|e| Error::io("write", tmp, e))?;
    File::open(tmp).and_then(|f| f.sync_all()).map_err(|e| Error::io("sync", tmp, e))?;
    std::fs::rename(tmp, path).map_err(|e| Error::io("rename", path, e))?;
    sync_directory(path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")))
}

/// `fsync` of a directory: the entries made or renamed in it are durable.
fn sync_directory(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io("sync", dir, e))
}

/// What a [`FaultIo`] does to a chosen operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The power goes at this point: the operation and everything after it fail.
    PowerLoss,
    /// The operation fails with this errno (e.g. `libc::ENOSPC`, `libc::EIO`); later
    /// ones work again.
    Errno(i32),
}

/// Which operations a [`FaultIo`] fails, counted from 1 since it was made.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// The Nth sync (or atomic replacement, which syncs) meets this fault.
    pub at_sync: Option<(u64, Fault)>,
    /// The Nth write meets this fault.
    pub at_write: Option<(u64, Fault)>,
}

/// A write not yet made durable: the bytes it replaced, or the length a growth replaced.
#[derive(Debug)]
enum Unsynced {
    /// `old` is as long as the write (zeros past the old end of the file).
    Write {
        offset: u64,
        old: Vec<u8>,
    },
    Extend {
        old_len: u64,
    },
}

#[derive(Debug, Default)]
struct FaultState {
    plan: FaultPlan,
    writes: u64,
    syncs: u64,
    off: bool,
    /// Files whose writes fail, by a part of their name, with the errno they fail with.
    failing_files: Vec<(String, i32)>,
    /// Files whose next sync fails (once each), by a part of their name, with the errno.
    failing_syncs: Vec<(String, i32)>,
    /// Unsynced changes, oldest first, by file.
    unsynced: Vec<(PathBuf, Unsynced)>,
}

/// The fault-injecting I/O layer for tests (see the module documentation).
#[derive(Debug, Default)]
pub struct FaultIo {
    state: Arc<Mutex<FaultState>>,
}

/// How [`FaultIo::power_loss`] treated the unsynced writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PowerLossReport {
    pub kept: u64,
    pub dropped: u64,
    pub torn: u64,
}

impl FaultIo {
    pub fn new(plan: FaultPlan) -> Arc<FaultIo> {
        Arc::new(FaultIo { state: Arc::new(Mutex::new(FaultState { plan, ..Default::default() })) })
    }

    /// Syncs counted so far (to plan a power loss at each of them in turn).
    pub fn syncs(&self) -> u64 {
        self.state.lock().syncs
    }

    /// Writes counted so far.
    pub fn writes(&self) -> u64 {
        self.state.lock().writes
    }

    /// Whether the planned power loss has happened.
    pub fn is_off(&self) -> bool {
        self.state.lock().off
    }

    /// Makes every later write (and growth) of a file whose name contains `name_part`
    /// fail with `errno`, as a full or failing disk under one kind of file would.
    pub fn fail_writes_to(&self, name_part: &str, errno: i32) {
        self.state.lock().failing_files.push((name_part.to_owned(), errno));
    }

    /// Makes the next sync of a file whose name contains `name_part` fail with `errno`
    /// (once), dropping that file's unsynced writes as a failed writeback does on Linux.
    pub fn fail_next_sync_of(&self, name_part: &str, errno: i32) {
        self.state.lock().failing_syncs.push((name_part.to_owned(), errno));
    }

    /// Cuts the power now: every later operation fails.
    pub fn cut_power(&self) {
        self.state.lock().off = true;
    }

    /// Decides the fate of every write not synced when the power went (call it once the
    /// database using this layer has been dropped): each is kept, dropped, or torn
    /// sector by sector, by a generator seeded with `seed`.
    pub fn power_loss(&self, seed: u64) -> Result<PowerLossReport> {
        let mut state = self.state.lock();
        state.off = true;
        let mut rng = SplitMix(seed);
        let mut report = PowerLossReport::default();
        // Newest first, so that an older write's old bytes are what a drop leaves.
        let unsynced = std::mem::take(&mut state.unsynced);
        for (path, change) in unsynced.into_iter().rev() {
            let file =
                OpenOptions::new().write(true).read(true).open(&path).map_err(|e| Error::io("open", &path, e))?;
            match change {
                Unsynced::Extend { old_len } => {
                    if rng.next().is_multiple_of(2) {
                        file.set_len(old_len).map_err(|e| Error::io("truncate", &path, e))?;
                        report.dropped += 1;
                    } else {
                        report.kept += 1;
                    }
                }
                Unsynced::Write { offset, old } => match rng.next() % 3 {
                    0 => report.kept += 1,
                    1 => {
                        write_old(&file, &path, offset, &old)?;
                        report.dropped += 1;
                    }
                    _ => {
                        tear(&file, &path, offset, &old, &mut rng)?;
                        report.torn += 1;
                    }
                },
            }
        }
        Ok(report)
    }
}

/// Counts a write or sync and applies the plan to it.
fn check(state: &Mutex<FaultState>, path: &Path, is_sync: bool) -> Result<()> {
    let mut state = state.lock();
    if state.off {
        return Err(power_is_off(path));
    }
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if !is_sync && let Some((_, errno)) = state.failing_files.iter().find(|(part, _)| name.contains(part.as_str())) {
        return Err(Error::io("write", path, std::io::Error::from_raw_os_error(*errno)));
    }
    if is_sync && let Some(i) = state.failing_syncs.iter().position(|(part, _)| name.contains(part.as_str())) {
        let (_, errno) = state.failing_syncs.remove(i);
        return Err(Error::io("sync", path, std::io::Error::from_raw_os_error(errno)));
    }
    let (n, planned) = if is_sync {
        state.syncs += 1;
        (state.syncs, state.plan.at_sync)
    } else {
        state.writes += 1;
        (state.writes, state.plan.at_write)
    };
    match planned {
        Some((at, Fault::PowerLoss)) if at == n => {
            state.off = true;
            Err(power_is_off(path))
        }
        Some((at, Fault::Errno(errno))) if at == n => {
            Err(Error::io(if is_sync { "sync" } else { "write" }, path, std::io::Error::from_raw_os_error(errno)))
        }
        _ => Ok(()),
    }
}

fn power_is_off(path: &Path) -> Error {
    Error::io("write", path, std::io::Error::other("simulated power loss: the machine is off"))
}

fn write_old(file: &File, path: &Path, offset: u64, old: &[u8]) -> Result<()> {
    file.write_all_at(old, offset).map_err(|e| Error::io("write", path, e))
}

/// Leaves each 512-byte sector of a write new, old, or garbage.
fn tear(file: &File, path: &Path, offset: u64, old: &[u8], rng: &mut SplitMix) -> Result<()> {
    const SECTOR: usize = 512;
    let mut at = 0;
    while at < old.len() {
        let end = (at + SECTOR).min(old.len());
        match rng.next() % 3 {
            0 => {}
            1 => {
                file.write_all_at(&old[at..end], offset + at as u64).map_err(|e| Error::io("write", path, e))?;
            }
            _ => {
                let garbage: Vec<u8> = (at..end).map(|_| rng.next() as u8).collect();
                file.write_all_at(&garbage, offset + at as u64).map_err(|e| Error::io("write", path, e))?;
            }
        }
        at = end;
    }
    Ok(())
}

impl Io for FaultIo {
    fn open(&self, path: &Path, create: bool, direct: bool) -> Result<Arc<dyn IoFile>> {
        if self.state.lock().off {
            return Err(power_is_off(path));
        }
        let inner = OsFile::open(path, create, direct)?;
        // A file made after the last sync of its directory may vanish; the engine syncs
        // what it creates before it relies on it, so a new file counts as synced empty.
        Ok(Arc::new(FaultFile { inner, state: self.state.clone() }))
    }

    fn replace(&self, path: &Path, contents: &[u8]) -> Result<()> {
        // An atomic replacement is one sync point: the power going there leaves the old file.
        check(&self.state, path, true)?;
        replace_with_rename(path, contents)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        check(&self.state, dir, true)?;
        sync_directory(dir)
    }
}

/// A file opened by a [`FaultIo`].
#[derive(Debug)]
struct FaultFile {
    inner: OsFile,
    /// The state of the `FaultIo` that opened it.
    state: Arc<Mutex<FaultState>>,
}

impl IoFile for FaultFile {
    fn path(&self) -> &Path {
        &self.inner.path
    }

    fn fd(&self) -> RawFd {
        self.inner.fd()
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        check(&self.state, &self.inner.path, false)?;
        // Bytes past the end of the file read as zeros: what a dropped write leaves there.
        let mut old = vec![0u8; buf.len()];
        read_some_at(&self.inner.file, &mut old, offset);
        self.inner.write_at(buf, offset)?;
        self.state.lock().unsynced.push((self.inner.path.clone(), Unsynced::Write { offset, old }));
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        if let Err(e) = check(&self.state, &self.inner.path, true) {
            if !self.state.lock().off {
                self.drop_unsynced()?;
            }
            return Err(e);
        }
        self.inner.sync()?;
        self.state.lock().unsynced.retain(|(p, _)| p != &self.inner.path);
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        self.inner.len()
    }

    fn extend(&self, len: u64) -> Result<()> {
        let old_len = self.inner.len()?;
        if old_len >= len {
            return Ok(()); // nothing to write
        }
        check(&self.state, &self.inner.path, false)?;
        self.inner.extend(len)?;
        self.state.lock().unsynced.push((self.inner.path.clone(), Unsynced::Extend { old_len }));
        Ok(())
    }

    fn allocate(&self, len: u64) -> Result<()> {
        let old_len = self.inner.len()?;
        if old_len >= len {
            return Ok(()); // the engine never leaves holes: nothing to allocate
        }
        check(&self.state, &self.inner.path, false)?;
        self.inner.allocate(len)?;
        self.state.lock().unsynced.push((self.inner.path.clone(), Unsynced::Extend { old_len }));
        Ok(())
    }
}

impl FaultFile {
    /// A failed sync, as Linux handles a failed writeback: this file's unsynced writes
    /// are dropped (old bytes back, newest first; growths undone) and forgotten, so a
    /// later sync succeeds without them.
    fn drop_unsynced(&self) -> Result<()> {
        let path = &self.inner.path;
        let mine: Vec<(PathBuf, Unsynced)> = {
            let mut state = self.state.lock();
            let (mine, others) = std::mem::take(&mut state.unsynced).into_iter().partition(|(p, _)| p == path);
            state.unsynced = others;
            mine
        };
        for (_, change) in mine.into_iter().rev() {
            match change {
                Unsynced::Write { offset, old } => write_old(&self.inner.file, path, offset, &old)?,
                Unsynced::Extend { old_len } => {
                    self.inner.file.set_len(old_len).map_err(|e| Error::io("truncate", path, e))?
                }
            }
        }
        Ok(())
    }
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many there were.
fn read_some_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    got
}

/// A small deterministic generator (SplitMix64) for the fate of writes.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_writes_survive_and_unsynced_ones_may_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let io = FaultIo::new(FaultPlan::default());
        let file = io.open(&path, true, false).unwrap();
        file.write_at(&[1u8; 4096], 0).unwrap();
        file.sync().unwrap();
        file.write_at(&[2u8; 4096], 0).unwrap();
        drop(file);
        let mut kept_or_not = [false; 2];
        for seed in 0..16 {
            let io2 = FaultIo::new(FaultPlan::default());
            std::fs::write(&path, [1u8; 4096]).unwrap();
            let f = io2.open(&path, false, false).unwrap();
            f.write_at(&[2u8; 4096], 0).unwrap();
            drop(f);
            let report = io2.power_loss(seed).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes.len(), 4096);
            if report.kept == 1 {
                assert!(bytes.iter().all(|&b| b == 2));
                kept_or_not[0] = true;
            }
            if report.dropped == 1 {
                assert!(bytes.iter().all(|&b| b == 1));
                kept_or_not[1] = true;
            }
        }
        assert_eq!(kept_or_not, [true, true], "16 seeds keep one write and drop another");
        let _ = io.power_loss(0).unwrap();
    }

    #[test]
    fn the_planned_sync_cuts_the_power_and_errno_faults_pass() {
        let dir = tempfile::tempdir().unwrap();
        let io = FaultIo::new(FaultPlan {
            at_sync: Some((2, Fault::PowerLoss)),
            at_write: Some((1, Fault::Errno(libc::ENOSPC))),
        });
        let file = io.open(&dir.path().join("f"), true, false).unwrap();
        let e = file.write_at(b"x", 0).unwrap_err().to_string();
        assert!(e.contains("No space left"), "{e}");
        file.write_at(b"x", 0).unwrap();
        file.sync().unwrap();
        assert!(file.sync().is_err());
        assert!(io.is_off());
        assert!(file.write_at(b"y", 0).is_err(), "nothing works once the power is off");
    }

    #[test]
    fn a_failed_sync_drops_the_unsynced_writes_and_a_retry_succeeds_without_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.dbf");
        let other_path = dir.path().join("redo01.log");
        let io = FaultIo::new(FaultPlan::default());
        let file = io.open(&path, true, false).unwrap();
        let other = io.open(&other_path, true, false).unwrap();
        file.write_at(&[1u8; 4096], 0).unwrap();
        file.sync().unwrap();
        file.write_at(&[2u8; 4096], 0).unwrap();
        file.write_at(&[3u8; 512], 4096).unwrap();
        other.write_at(&[4u8; 512], 0).unwrap();
        io.fail_next_sync_of(".dbf", libc::EIO);
        let e = file.sync().unwrap_err().to_string();
        assert!(e.contains("Input/output error") && e.contains("data.dbf"), "{e}");
        assert!(!io.is_off(), "an errno is not a power loss");
        // A dropped write past the old end leaves zeros there, as a power loss's does.
        let synced: Vec<u8> = [[1u8; 4096].as_slice(), &[0u8; 512]].concat();
        assert_eq!(std::fs::read(&path).unwrap(), synced, "the unsynced writes are gone");
        file.sync().expect("a retry succeeds, the dropped writes lost");
        assert_eq!(std::fs::read(&path).unwrap(), synced);
        assert_eq!(std::fs::read(&other_path).unwrap(), vec![4u8; 512], "another file's writes stay");
        other.sync().unwrap();
        assert_eq!(io.power_loss(0).unwrap(), PowerLossReport::default(), "nothing was left unsynced");
    }

    #[test]
    fn allocate_reserves_the_space_and_counts_as_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let io = FaultIo::new(FaultPlan::default());
        let file = io.open(&dir.path().join("redo01.log"), true, false).unwrap();
        file.allocate(1 << 16).unwrap();
        assert_eq!(file.len().unwrap(), 1 << 16);
        io.fail_writes_to("redo", libc::ENOSPC);
        let e = file.allocate(1 << 17).unwrap_err().to_string();
        assert!(e.contains("No space left") && e.contains("redo01.log"), "{e}");
        assert_eq!(file.len().unwrap(), 1 << 16);
    }
}

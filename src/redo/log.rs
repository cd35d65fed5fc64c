//! The redo log buffer, the log writer (LGWR) and the online redo log files it writes in
//! a circle.
//!
//! ```text
//!  sessions ──append──► log buffer: [chunk seq 7 @ 81,920: rec rec rec] [chunk seq 8 ..]
//!   (a record per block change,       │ LGWR takes every chunk, pads the last one to a
//!    under the block's content lock)  │ 512-byte boundary (redo wastage), writes, syncs
//!                                     ▼
//!  redo01.log  seq 7 (CURRENT)   redo02.log  seq 5 (INACTIVE)   redo03.log seq 6 (ACTIVE)
//!  ┌────────┬──────────────────┐
//!  │ header │ records ...      │ header (512 bytes): magic, db id, group, sequence,
//!  └────────┴──────────────────┘ first SCN, file size, CRC
//! ```
//!
//! A log sequence number (LSN, Oracle's RBA) is `sequence << 32 | byte offset` in that
//! sequence's file, so LSNs grow with the log. A record never spans two files: one that
//! does not fit the rest of the current file goes at the start of the next sequence.
//!
//! Every record is appended under the buffer's one lock (`LogState`), most while their
//! session holds a block exclusive; an appender that finds it held waits in `latch: redo
//! allocation`.
//!
//! Group commit: a committing session waits (`log file sync`) until redo past its commit
//! record is synced. If no write is under way it makes the write itself, taking whatever
//! the buffer holds by then, as a PostgreSQL backend flushes WAL itself: no hand-over to
//! the log writer's thread and back, two wake-ups a commit that a busy machine schedules
//! late. Sessions committing while a write is under way are all covered by the next one,
//! which the first of them to find the log free makes. One write at a time, whoever makes
//! it (`LogState::writing`); the log writer thread makes the writes nobody waits for (a
//! megabyte unwritten, a batched commit, a checkpoint's write-ahead, every 200 ms), and
//! every write counts in the log writer's session (`redo writes`, `log file parallel
//! write`), whoever made it, so its statistics read as Oracle's. Every write starts on a
//! fresh 512-byte log block, so a block once synced is never written again and a torn
//! write can only lose records nobody was told are durable. A file's space is allocated
//! at creation and formatted with zeros ahead of its redo (see `format`): by the log
//! writer's thread, megabytes ahead of the writes and synced, so that a commit's sync
//! overwrites blocks already written and flushes its data alone, with no file-system
//! metadata to commit (a writer formats a step itself, for its own sync to flush, only
//! where the background has not been: its first write into a file in this process).
//!
//! A switch to the next group (a full file, or `ALTER SYSTEM SWITCH LOGFILE`) reuses its
//! file only when the checkpoint has passed all of its old sequence. A session whose
//! record would start a sequence no group is free for waits before appending it (`log
//! file switch (checkpoint incomplete)`), asking the database writer for the checkpoint
//! that frees one: redo never runs ahead of a switch the log writer could not make, for
//! a block changed there could not be written until that redo is, and the checkpoint
//! would wait for it while the switch waited for the checkpoint. Every switch asks for
//! a checkpoint of what was changed before the new sequence, so that the next group is
//! free by the time it is needed. The waits are bounded: past two seconds, the circle
//! grows by a new group (its file and directory entry synced first) rather than
//! overwrite redo that recovery needs; the next open finds it by its header.
//!
//! Each header records where the sequence before it ended, so that recovery can tell a
//! sequence it read to its end from one a damaged record cut short (see `reader`).
//!
//! Invariants: `flushed` only grows, and every record ending at or below it is on disk
//! (synced); once a write or sync fails the log is failed for good and no later commit
//! is acknowledged.

use super::format::{FormatMark, Formatter};
use super::{FILE_HEADER, LOG_BLOCK, Lsn, MIN_RECORD_ROOM};
use crate::error::{Error, Result};
use crate::stats::{SessionInfo, SessionStats, Stat, WaitEvent};
use crate::storage::io::{Io, IoFile};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

const MAGIC: &[u8; 16] = b"LIOSCOPE REDOLOG";
/// Unwritten redo past which the log writer writes without being asked (Oracle: 1 MB).
const WRITE_THRESHOLD: usize = 1 << 20;
/// How long the log writer sleeps when nobody asks it to write.
const IDLE_WRITE: Duration = Duration::from_millis(200);
/// The most unwritten redo the buffer holds before appenders wait (`log buffer space`).
const LOG_BUFFER: usize = 32 << 20;
/// How long a log switch waits for a checkpoint before it grows the circle instead.
const SWITCH_PATIENCE: Duration = Duration::from_secs(2);

/// One online redo log file (Oracle: a group with one member).
#[derive(Debug)]
pub struct LogGroup {
    pub group: u32,
    pub path: PathBuf,
    file: Arc<dyn IoFile>,
    /// The sequence the file holds (0: never used, or a header that could not be read) and
    /// the SCN it began at.
    seq: AtomicU64,
    first_scn: AtomicU64,
    /// Where the records of the sequence before this one ended, as its header says (0:
    /// not recorded).
    prev_end: AtomicU64,
    /// Why the header found at open could not be read (cleared once the log writer writes
    /// a new one): recovery names the file if a sequence it needs is missing.
    damaged: Mutex<Option<String>>,
    /// How far this process has written the file with zeros or redo.
    formatted: Arc<FormatMark>,
    /// The file opened a second time, for the background's zeros and syncs: Linux tells
    /// a failed writeback to each open file once, so a sync of the background's that
    /// meets a redo block's write error leaves the error for the writers' next sync too.
    format_file: Arc<dyn IoFile>,
}

impl LogGroup {
    /// The group whose file is at `path`, opened (twice: see `format_file`) through `io`.
    fn open(
        io: &dyn Io,
        group: u32,
        path: PathBuf,
        header: Option<&FileHeader>,
        damaged: Option<String>,
    ) -> Result<Self> {
        let file = io.open(&path, false, false)?;
        let format_file = io.open(&path, false, false)?;
        Ok(LogGroup {
            group,
            path,
            file,
            format_file,
            seq: AtomicU64::new(header.map_or(0, |h| u64::from(h.seq))),
            first_scn: AtomicU64::new(header.map_or(0, |h| h.first_scn)),
            prev_end: AtomicU64::new(header.map_or(0, |h| h.prev_end)),
            damaged: Mutex::new(damaged),
            formatted: Arc::default(),
        })
    }
}

/// A file header read back.
///
/// ```text
///  offset  size  field
///  0       16    magic "LIOSCOPE REDOLOG"
///  16      8     database id
///  24      4     group
///  28      4     sequence (0: never used)
///  32      8     first SCN
///  40      8     file size
///  48      8     where the previous sequence's records ended (byte offset in its file)
///  56      4     CRC-32 of bytes 0..56
/// ```
///
/// A header of the first layout (CRC-32 of bytes 0..48 at 48, no previous end) is still
/// read, with the previous end unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub group: u32,
    pub seq: u32,
    pub first_scn: u64,
    pub file_size: u64,
    /// Byte offset just past the last record of sequence `seq - 1` (0: not recorded).
    /// Recovery checks that it read that sequence this far.
    pub prev_end: u64,
}

fn encode_header(db_id: u64, h: &FileHeader) -> Vec<u8> {
    let mut b = vec![0u8; FILE_HEADER as usize];
    b[..16].copy_from_slice(MAGIC);
    b[16..24].copy_from_slice(&db_id.to_le_bytes());
    b[24..28].copy_from_slice(&h.group.to_le_bytes());
    b[28..32].copy_from_slice(&h.seq.to_le_bytes());
    b[32..40].copy_from_slice(&h.first_scn.to_le_bytes());
    b[40..48].copy_from_slice(&h.file_size.to_le_bytes());
    b[48..56].copy_from_slice(&h.prev_end.to_le_bytes());
    let crc = crc32fast::hash(&b[..56]);
    b[56..60].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a log file header; `Err` says why it is not one of this database's.
pub fn decode_header(db_id: u64, b: &[u8]) -> std::result::Result<FileHeader, String> {
    if b.len() < 60 || &b[..16] != MAGIC {
        return Err("not a lioscope redo log file".into());
    }
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let prev_end = if crc32fast::hash(&b[..56]) == u32_at(56) {
        u64_at(48)
    } else if crc32fast::hash(&b[..48]) == u32_at(48) {
        0
    } else {
        return Err("redo log file header fails its checksum".into());
    };
    if u64_at(16) != db_id {
        return Err("redo log file of another database".into());
    }
    Ok(FileHeader { group: u32_at(24), seq: u32_at(28), first_scn: u64_at(32), file_size: u64_at(40), prev_end })
}

/// A group as `v$log` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogStatus {
    pub group: u32,
    pub path: PathBuf,
    pub seq: u32,
    pub bytes: u64,
    /// CURRENT, ACTIVE (needed by recovery), INACTIVE or UNUSED.
    pub status: &'static str,
    pub first_scn: u64,
}

/// Unwritten redo of one sequence, starting at `offset` of its file.
#[derive(Debug)]
struct Chunk {
    seq: u32,
    offset: u64,
    bytes: Vec<u8>,
}

#[derive(Debug, Default)]
struct LogState {
    /// Where the next record goes.
    seq: u32,
    offset: u64,
    chunks: Vec<Chunk>,
    pending: usize,
    flush_requested: bool,
    closing: bool,
    /// A write is under way (by the log writer or a committing session): the only one
    /// allowed to take chunks and lock the `WritePosition` is whoever set it.
    writing: bool,
    failed: Option<String>,
    highest_scn: u64,
    /// Counted by appenders, folded into the log writer's statistics by it.
    wastage: u64,
    /// A write asked the log writer to format further ahead.
    format_wanted: bool,
}

/// Where the writes stand: touched only by the writer of the moment (who set
/// `LogState::writing`), so its lock is never waited for.
#[derive(Debug, Default)]
struct WritePosition {
    /// The group being written.
    current: Option<Arc<LogGroup>>,
    /// The end of the last bytes written: where the current sequence's records end.
    written_end: Lsn,
}

/// Who makes a write: the log writer's own thread, or a session waiting for its commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    LogWriter,
    Committer,
}

/// The redo log of an open database.
#[derive(Debug)]
pub struct RedoLog {
    io: Arc<dyn Io>,
    dir: PathBuf,
    db_id: u64,
    file_size: u64,
    /// The circle, in order of use.
    groups: Mutex<Vec<Arc<LogGroup>>>,
    state: Mutex<LogState>,
    position: Mutex<WritePosition>,
    /// The log writer's session: every write counts in its statistics.
    log_writer: OnceLock<Arc<SessionInfo>>,
    /// Wakes the log writer.
    work: Condvar,
    /// Wakes sessions waiting for a write (log file sync, log buffer space).
    written: Condvar,
    flushed: AtomicU64,
    /// Set once a write or sync has failed (`LogState::failed` says how): read without
    /// the state's lock by every commit's wait, whose fast path must not succeed then.
    failed: AtomicBool,
    /// The checkpoint position: redo before it is no longer needed by recovery.
    checkpoint: Mutex<Lsn>,
    checkpoint_moved: Condvar,
    /// The checkpoint the log writer wants (0: none): the database writer writes every
    /// buffer first changed before this LSN. Asked for at every switch, so that the
    /// checkpoint keeps ahead of the circle, and while a switch waits for a group.
    checkpoint_wanted: Mutex<CheckpointWanted>,
    checkpoint_wake: Condvar,
    /// Set while a switch waits for a checkpoint: redo past `flushed` cannot be written
    /// until the checkpoint frees the next group, so the checkpoint must not wait for it.
    switch_waiting: AtomicBool,
    /// Zeros ahead of the redo in the files (see `format`).
    formatter: Formatter,
}

/// What the database writer is asked for.
#[derive(Debug, Default)]
struct CheckpointWanted {
    /// Write every buffer first changed before this LSN (0: nothing asked).
    target: Lsn,
    /// Woken to notice a close.
    woken: bool,
}

/// The name of online log group `group`'s file.
pub fn file_name(group: u32) -> String {
    format!("redo{group:02}.log")
}

impl RedoLog {
    /// Creates the files of `groups` log groups of `file_size` bytes each in `dir`,
    /// synced, with the directory.
    pub fn create_files(io: &dyn Io, dir: &Path, db_id: u64, groups: u32, file_size: u64) -> Result<()> {
        for group in 1..=groups {
            create_group_file(io, dir, db_id, group, file_size)?;
        }
        io.sync_dir(dir)
    }

    /// Opens the online logs of `dir`: the groups the control file names (`listed`, in
    /// the circle's order), then every other `redoNN.log` whose header is this database's
    /// (a group the log writer added after the control file was last written). A listed
    /// file whose header cannot be read opens as unused, its damage noted for recovery;
    /// an unlisted one is left alone (a group whose creation a crash interrupted, reused
    /// by the next group of its number). Nothing is written until [`RedoLog::start`].
    pub fn open(io: Arc<dyn Io>, dir: &Path, db_id: u64, file_size: u64, listed: &[u32]) -> Result<RedoLog> {
        let mut opened = Vec::new();
        for &group in listed {
            let path = dir.join(file_name(group));
            let (header, damaged) = match read_header(&path, db_id) {
                Ok(h) if h.group == group && h.file_size == file_size => (Some(h), None),
                Ok(h) => (None, Some(format!("its header says group {} of {} bytes", h.group, h.file_size))),
                Err(e) => (None, Some(e.to_string())),
            };
            opened.push(Arc::new(LogGroup::open(io.as_ref(), group, path, header.as_ref(), damaged)?));
        }
        for (group, path) in unlisted_log_files(dir, listed)? {
            match read_header(&path, db_id) {
                Ok(h) if h.group == group && h.file_size == file_size => {
                    opened.push(Arc::new(LogGroup::open(io.as_ref(), group, path, Some(&h), None)?));
                }
                _ => {}
            }
        }
        if opened.is_empty() {
            return Err(corrupt(dir, "the control file names no online redo log"));
        }
        Ok(RedoLog {
            io,
            dir: dir.to_owned(),
            db_id,
            file_size,
            groups: Mutex::new(opened),
            state: Mutex::new(LogState::default()),
            position: Mutex::new(WritePosition::default()),
            log_writer: OnceLock::new(),
            work: Condvar::new(),
            written: Condvar::new(),
            flushed: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            checkpoint: Mutex::new(0),
            checkpoint_moved: Condvar::new(),
            checkpoint_wanted: Mutex::new(CheckpointWanted::default()),
            checkpoint_wake: Condvar::new(),
            switch_waiting: AtomicBool::new(false),
            formatter: Formatter::default(),
        })
    }

    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The groups, in the circle's order.
    pub fn group_numbers(&self) -> Vec<u32> {
        self.groups.lock().iter().map(|g| g.group).collect()
    }

    /// Each group's file as recovery reads it: the sequence in it (0: never used, or
    /// unreadable), where the sequence before it ended, and any damage to its header.
    pub fn sequences(&self) -> Vec<super::reader::LogFile> {
        self.groups
            .lock()
            .iter()
            .map(|g| super::reader::LogFile {
                seq: g.seq.load(Ordering::Relaxed) as u32,
                path: g.path.clone(),
                prev_end: g.prev_end.load(Ordering::Relaxed),
                damaged: g.damaged.lock().clone(),
            })
            .collect()
    }

    /// Begins sequence `seq` in the group after the one holding the newest sequence,
    /// writing its header (synced; `prev_end`: where the records of sequence `seq - 1`
    /// ended), and sets the checkpoint to its start. The caller has made every group's
    /// redo unneeded first: recovery brought every block up to date, synced the
    /// datafiles and recorded a checkpoint past the newest sequence in the control file,
    /// so that a crash here leaves nothing recovery needs overwritten. Returns the LSN
    /// where redo starts.
    pub fn start(&self, seq: u32, scn: u64, prev_end: u64) -> Result<Lsn> {
        let groups = self.groups.lock().clone();
        let newest = groups.iter().enumerate().max_by_key(|(_, g)| g.seq.load(Ordering::Relaxed)).map_or(0, |(i, _)| i);
        let next = &groups[(newest + 1) % groups.len()];
        self.begin_sequence(next, seq, scn, prev_end)?;
        let lsn = super::lsn(seq, FILE_HEADER);
        *self.position.lock() = WritePosition { current: Some(next.clone()), written_end: lsn };
        let mut state = self.state.lock();
        state.seq = seq;
        state.offset = FILE_HEADER;
        state.highest_scn = scn;
        *self.checkpoint.lock() = lsn;
        self.flushed.store(lsn, Ordering::Release);
        Ok(lsn)
    }

    /// Writes `group`'s header for sequence `seq`, synced.
    fn begin_sequence(&self, group: &LogGroup, seq: u32, first_scn: u64, prev_end: u64) -> Result<()> {
        let header = FileHeader { group: group.group, seq, first_scn, file_size: self.file_size, prev_end };
        group.file.write_at(&encode_header(self.db_id, &header), 0)?;
        group.file.sync()?;
        group.seq.store(u64::from(seq), Ordering::Release);
        group.first_scn.store(first_scn, Ordering::Relaxed);
        group.prev_end.store(prev_end, Ordering::Relaxed);
        *group.damaged.lock() = None;
        Ok(())
    }

    /// Appends a record of `len` bytes that `encode` writes (given the sequence it goes
    /// in); returns the LSNs where it starts and ends. Counts `redo entries` and `redo
    /// size`. Waits (`log buffer space`) while the buffer is full, and (`latch: redo
    /// allocation`) while another session appends or takes the buffer to write it.
    pub fn append(
        &self,
        stats: &SessionStats,
        len: usize,
        scn: u64,
        encode: impl FnOnce(&mut Vec<u8>, u32),
    ) -> Result<(Lsn, Lsn)> {
        let mut state =
            stats.get_or_wait(WaitEvent::LatchRedoAllocation, || self.state.try_lock(), || self.state.lock());
        if state.pending > LOG_BUFFER {
            let _wait = stats.begin_wait(WaitEvent::LogBufferSpace);
            while state.pending > LOG_BUFFER && state.failed.is_none() {
                state.flush_requested = true;
                self.work.notify_one();
                self.written.wait_for(&mut state, Duration::from_millis(100));
            }
        }
        if let Some(failed) = &state.failed {
            return Err(Error::Transaction { message: format!("the redo log cannot be written: {failed}") });
        }
        let mut skip = skip_before_record(state.offset);
        while state.offset + skip + len as u64 > self.file_size {
            let next = state.seq + 1;
            if self.group_free_for(next) {
                state.seq = next;
                state.offset = FILE_HEADER;
                skip = 0;
                break;
            }
            drop(state);
            self.wait_for_group(stats, next)?;
            state = self.state.lock();
            skip = skip_before_record(state.offset);
        }
        let (seq, offset) = (state.seq, state.offset);
        let chunk = match state.chunks.last_mut() {
            Some(c) if c.seq == seq => c,
            _ => {
                state.chunks.push(Chunk { seq, offset, bytes: Vec::with_capacity(64 << 10) });
                state.chunks.last_mut().expect("just pushed")
            }
        };
        chunk.bytes.resize(chunk.bytes.len() + skip as usize, 0);
        encode(&mut chunk.bytes, seq);
        let offset = offset + skip;
        state.offset = offset + len as u64;
        state.wastage += skip;
        state.pending += skip as usize + len;
        state.highest_scn = state.highest_scn.max(scn);
        if state.pending >= WRITE_THRESHOLD {
            self.work.notify_one();
        }
        stats.add(Stat::RedoEntries, 1);
        stats.add(Stat::RedoSize, len as u64);
        Ok((super::lsn(seq, offset), super::lsn(seq, offset + len as u64)))
    }

    /// Whether a group is free to hold sequence `seq`: the circle has room for it and
    /// every sequence recovery still needs (from the checkpoint's to `seq - 1`).
    fn group_free_for(&self, seq: u32) -> bool {
        let groups = self.groups.lock().len() as u32;
        free_for(seq, self.checkpoint_lsn(), groups)
    }

    /// `log file switch (checkpoint incomplete)` for an appender whose record starts
    /// sequence `seq` while no group is free for it: asks for the checkpoint that frees
    /// one and waits for it, so that no redo is appended past a switch the log writer
    /// could not make (a block changed there could not be written, since its redo could
    /// not be, and the checkpoint would wait for it). If it does not come in time, the
    /// circle grows by a group.
    fn wait_for_group(&self, stats: &SessionStats, seq: u32) -> Result<()> {
        let groups = || self.groups.lock().len() as u32;
        let target = || super::lsn(seq + 1 - groups(), 0);
        if self.wait_for_checkpoint_at(stats, target, |checkpoint| free_for(seq, checkpoint, groups())) {
            return Ok(());
        }
        self.grow_for(stats, seq)
    }

    /// Adds a group for sequence `seq`, which a session gave up waiting for, unless one
    /// is free for it once the groups' lock is held: sessions that gave up at once grow
    /// the circle once (the first adds a group, the others then find one free).
    fn grow_for(&self, stats: &SessionStats, seq: u32) -> Result<()> {
        self.add_group(stats, None, |groups| free_for(seq, self.checkpoint_lsn(), groups)).map(|_| ())
    }

    /// `log file switch (checkpoint incomplete)`: asks for the checkpoint at `target()`
    /// and waits for it until `freed(checkpoint)` holds, at most `SWITCH_PATIENCE`, with
    /// the switch marked waiting (so that no checkpoint write waits for redo held back
    /// behind it). Returns whether it holds.
    fn wait_for_checkpoint_at(
        &self,
        stats: &SessionStats,
        target: impl Fn() -> Lsn,
        freed: impl Fn(Lsn) -> bool,
    ) -> bool {
        let _wait = stats.begin_wait(WaitEvent::LogFileSwitchCheckpointIncomplete);
        stats.add(Stat::CheckpointNotComplete, 1);
        let deadline = std::time::Instant::now() + SWITCH_PATIENCE;
        self.set_switch_waiting(true);
        // `freed` may take the groups' lock, which is taken before the checkpoint's
        // (`add_group`), so it is asked with the checkpoint unlocked; a checkpoint that
        // moves before the wait below begins is seen by comparing, not missed.
        loop {
            let seen = self.checkpoint_lsn();
            if freed(seen) || std::time::Instant::now() >= deadline {
                break;
            }
            self.want_checkpoint(target());
            let mut at = self.checkpoint.lock();
            if *at == seen {
                self.checkpoint_moved.wait_for(&mut at, Duration::from_millis(50));
            }
        }
        self.set_switch_waiting(false);
        freed(self.checkpoint_lsn())
    }

    /// Marks (or clears) that a switch, or an appender starting a sequence, waits for a
    /// checkpoint, waking checkpoint writes that wait for redo (they must not now).
    fn set_switch_waiting(&self, waiting: bool) {
        self.switch_waiting.store(waiting, Ordering::Release);
        let _state = self.state.lock();
        self.written.notify_all();
    }

    /// Where the next record goes: every record appended so far ends at or before it.
    pub fn append_lsn(&self) -> Lsn {
        let state = self.state.lock();
        super::lsn(state.seq, state.offset)
    }

    /// The LSN up to which redo is on disk.
    pub fn flushed(&self) -> Lsn {
        self.flushed.load(Ordering::Acquire)
    }

    /// Waits until redo up to `lsn` is on disk (asking the log writer to write now).
    pub fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.wait_flushed(lsn, true)
    }

    /// Waits until redo up to `lsn` is on disk; `now`: writes it at once, unless a write
    /// is under way (then the next one, made by the first waiter to find the log free),
    /// else the wait lasts until the log writer's next write, as a batched commit's does.
    /// Once the log has failed, it fails whatever `lsn` is: a transaction whose own
    /// append failed waits for an older LSN, and no commit is acknowledged any more.
    pub fn wait_flushed(&self, lsn: Lsn, now: bool) -> Result<()> {
        if self.flushed() >= lsn && !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut state = self.state.lock();
        loop {
            if let Some(failed) = &state.failed {
                return Err(Error::Transaction {
                    message: format!("the redo log cannot be written, so the commit is not durable: {failed}"),
                });
            }
            if self.flushed() >= lsn {
                return Ok(());
            }
            if now && !state.writing {
                if !state.chunks.is_empty() {
                    state = self.write_out(state, Writer::Committer);
                    continue;
                }
                // Nothing left to write yet not flushed: only the log writer knows.
                state.flush_requested = true;
                self.work.notify_one();
            }
            self.written.wait_for(&mut state, Duration::from_millis(100));
        }
    }

    /// Waits until redo up to `lsn` is on disk, as [`RedoLog::flush_to`], unless a log
    /// switch is waiting for a checkpoint (or comes to): returns whether it is on disk.
    /// What a checkpoint's write waits with, since the switch waits for the checkpoint.
    pub fn flush_to_unless_switch_waits(&self, lsn: Lsn) -> Result<bool> {
        if self.flushed() >= lsn {
            return Ok(true);
        }
        let mut state = self.state.lock();
        while self.flushed() < lsn {
            if let Some(failed) = &state.failed {
                return Err(Error::Transaction { message: format!("the redo log cannot be written: {failed}") });
            }
            if self.switch_waiting() {
                return Ok(false);
            }
            state.flush_requested = true;
            self.work.notify_one();
            self.written.wait_for(&mut state, Duration::from_millis(100));
        }
        Ok(true)
    }

    /// Asks the log writer to write what the buffer holds, without waiting.
    pub fn nudge(&self) {
        self.state.lock().flush_requested = true;
        self.work.notify_one();
    }

    /// Makes everything appended so far durable.
    pub fn flush_all(&self) -> Result<()> {
        self.flush_to(self.append_lsn())
    }

    /// Starts a new sequence now (`ALTER SYSTEM SWITCH LOGFILE`) and waits until the log
    /// writer has switched to it.
    pub fn switch_logfile(&self) -> Result<()> {
        let lsn = {
            let mut state = self.state.lock();
            state.seq += 1;
            state.offset = FILE_HEADER;
            let seq = state.seq;
            state.chunks.push(Chunk { seq, offset: FILE_HEADER, bytes: Vec::new() });
            super::lsn(seq, FILE_HEADER)
        };
        self.flush_to(lsn)
    }

    /// Bytes of log between `from` and `to` (`to` later): exact within one sequence;
    /// across sequences, each log switched between counts as full.
    pub fn bytes_between(&self, from: Lsn, to: Lsn) -> u64 {
        let (from_seq, from_offset) = (super::lsn_seq(from), super::lsn_offset(from));
        let (to_seq, to_offset) = (super::lsn_seq(to), super::lsn_offset(to));
        if to <= from {
            return 0;
        }
        if from_seq == to_seq {
            return to_offset - from_offset;
        }
        let whole = u64::from(to_seq - from_seq - 1) * (self.file_size - FILE_HEADER);
        self.file_size.saturating_sub(from_offset) + whole + to_offset.saturating_sub(FILE_HEADER)
    }

    /// Records a checkpoint at `lsn` (redo before it is no longer needed).
    pub fn checkpoint_done(&self, lsn: Lsn) {
        let mut at = self.checkpoint.lock();
        if lsn > *at {
            *at = lsn;
        }
        self.checkpoint_moved.notify_all();
    }

    pub fn checkpoint_lsn(&self) -> Lsn {
        *self.checkpoint.lock()
    }

    /// Waits up to `timeout` for the log writer to want a checkpoint; returns the LSN
    /// before which every buffer's first change must be written (and clears the wish),
    /// or `None` when the wait ended without one (a timeout, or a wake to notice a close).
    pub fn wait_checkpoint_wanted(&self, timeout: Duration) -> Option<Lsn> {
        let mut wanted = self.checkpoint_wanted.lock();
        if wanted.target == 0 && !wanted.woken {
            self.checkpoint_wake.wait_for(&mut wanted, timeout);
        }
        wanted.woken = false;
        Some(std::mem::take(&mut wanted.target)).filter(|&t| t != 0)
    }

    /// Asks the database writer for a checkpoint that writes every buffer first changed
    /// before `target`, so that recovery no longer needs the redo before it.
    pub fn want_checkpoint(&self, target: Lsn) {
        let mut wanted = self.checkpoint_wanted.lock();
        wanted.target = wanted.target.max(target);
        self.checkpoint_wake.notify_all();
    }

    /// Wakes the database writer, to notice a close.
    pub fn wake_database_writer(&self) {
        self.checkpoint_wanted.lock().woken = true;
        self.checkpoint_wake.notify_all();
    }

    /// Whether a log switch is waiting for a checkpoint: redo past [`RedoLog::flushed`]
    /// is not written until the checkpoint frees the next group, so a checkpoint must
    /// not wait for it (it leaves such blocks dirty instead).
    pub fn switch_waiting(&self) -> bool {
        self.switch_waiting.load(Ordering::Acquire)
    }

    /// The groups as `v$log` shows them.
    pub fn status(&self) -> Vec<LogStatus> {
        let current = self.state.lock().seq;
        let checkpoint_seq = super::lsn_seq(self.checkpoint_lsn());
        self.groups
            .lock()
            .iter()
            .map(|g| {
                let seq = g.seq.load(Ordering::Relaxed) as u32;
                let status = match seq {
                    0 => "UNUSED",
                    s if s == current => "CURRENT",
                    s if s >= checkpoint_seq => "ACTIVE",
                    _ => "INACTIVE",
                };
                LogStatus {
                    group: g.group,
                    path: g.path.clone(),
                    seq,
                    bytes: self.file_size,
                    status,
                    first_scn: g.first_scn.load(Ordering::Relaxed),
                }
            })
            .collect()
    }

    /// Names the log writer's session, whose statistics count every write of the log,
    /// whoever makes it; until one is named, writes count in a session of no one's.
    pub fn set_log_writer(&self, info: Arc<SessionInfo>) {
        let _ = self.log_writer.set(info);
    }

    fn writer_stats(&self) -> &SessionStats {
        static UNNAMED: LazyLock<SessionStats> = LazyLock::new(SessionStats::default);
        self.log_writer.get().map_or(&UNNAMED, |w| &w.stats)
    }

    /// The log writer's loop: writes when asked (a checkpoint's write-ahead, a batched
    /// commit, a megabyte unwritten, a close) or every `IDLE_WRITE`, unless a
    /// committing session is writing already; formats the files ahead of the writes a
    /// step at a time when a write asks, between its own writes; returns when the log is
    /// closed (everything appended written) or failed. A failed format fails the log as
    /// a failed write does: its sync's error may have been a redo block's.
    pub fn run_writer(&self) {
        let mut state = self.state.lock();
        loop {
            if state.failed.is_some() {
                return;
            }
            if !state.writing {
                let urgent = state.flush_requested || state.pending >= WRITE_THRESHOLD || state.closing;
                if !state.chunks.is_empty() && urgent {
                    state = self.write_out(state, Writer::LogWriter);
                    continue;
                }
                if state.closing {
                    return;
                }
            }
            if state.format_wanted {
                state.format_wanted = false;
                match MutexGuard::unlocked(&mut state, || self.formatter.step()) {
                    Ok(more) => state.format_wanted |= more,
                    Err(e) => {
                        self.fail(&mut state, format!("formatting the log ahead: {e}"));
                        self.written.notify_all();
                    }
                }
                continue;
            }
            let timed_out = self.work.wait_for(&mut state, IDLE_WRITE).timed_out();
            if timed_out && !state.writing && !state.chunks.is_empty() {
                state = self.write_out(state, Writer::LogWriter);
            }
        }
    }

    /// Writes and syncs everything the buffer holds, as the one writer of the moment:
    /// marks the log as being written, takes the chunks (the last padded to a log block),
    /// writes them with the state unlocked, then publishes how far redo is on disk and
    /// wakes every waiter, and the log writer if a write it was asked for is left to
    /// make or a write asked it to format further ahead. Called with no write under way and something to write; returns with the
    /// state locked again. A failed write fails the log for good. The log writer's
    /// session is the one the write counts in, and a log switch's waits show in its
    /// activity whoever makes them: `writing` keeps its activity to one thread at a time.
    fn write_out<'a>(&'a self, mut state: MutexGuard<'a, LogState>, by: Writer) -> MutexGuard<'a, LogState> {
        debug_assert!(!state.writing && !state.chunks.is_empty());
        state.writing = true;
        let pad = padding(state.offset);
        let seq = state.seq;
        if let Some(last) = state.chunks.last_mut().filter(|c| c.seq == seq) {
            last.bytes.resize(last.bytes.len() + pad as usize, 0);
            state.offset += pad;
            state.wastage += pad;
        }
        if by == Writer::LogWriter {
            state.flush_requested = false;
        }
        state.pending = 0;
        let target = super::lsn(state.seq, state.offset);
        let chunks = std::mem::take(&mut state.chunks);
        let wastage = std::mem::take(&mut state.wastage);
        drop(state);
        let stats = self.writer_stats();
        stats.add(Stat::RedoWastage, wastage);
        let unwinding = FailIfUnwinding(self);
        let mut format_wanted = false;
        let written = {
            let mut position = self.position.lock();
            self.write_chunks(stats, by, &mut position, &chunks, &mut format_wanted)
        };
        std::mem::forget(unwinding);
        let mut state = self.state.lock();
        state.writing = false;
        match written {
            Ok(()) => self.flushed.store(target, Ordering::Release),
            Err(e) => self.fail(&mut state, e.to_string()),
        }
        self.written.notify_all();
        state.format_wanted |= format_wanted;
        let asked = state.flush_requested || state.pending >= WRITE_THRESHOLD;
        if by == Writer::Committer && (state.closing || format_wanted || (asked && !state.chunks.is_empty())) {
            self.work.notify_one();
        }
        state
    }

    /// Fails the log for good: no later commit is acknowledged. The caller wakes the
    /// waiters.
    fn fail(&self, state: &mut LogState, why: String) {
        state.failed.get_or_insert(why);
        self.failed.store(true, Ordering::Release);
    }

    /// Closes the log: the log writer writes what is left and returns.
    pub fn close(&self) {
        self.state.lock().closing = true;
        self.work.notify_all();
        self.wake_database_writer();
    }

    /// Whether the log has failed, without taking its lock.
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Whether the log has failed (no commit is acknowledged any more).
    pub fn failure(&self) -> Option<String> {
        self.state.lock().failed.clone()
    }

    /// Writes the chunks taken from the buffer, switching groups where their sequence
    /// changes, then syncs: one `redo writes` per chunk, `log file parallel write` (the
    /// log writer's wait when it writes; its time only, when a committing session writes,
    /// whose wait is `log file sync`). The position follows the end of the bytes written.
    /// Sets `format_wanted` if a write asked the log writer to format further ahead.
    fn write_chunks(
        &self,
        stats: &SessionStats,
        by: Writer,
        position: &mut WritePosition,
        chunks: &[Chunk],
        format_wanted: &mut bool,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let _wait = (by == Writer::LogWriter).then(|| stats.begin_wait(WaitEvent::LogFileParallelWrite));
        let WritePosition { current, written_end } = position;
        for chunk in chunks {
            if current.as_ref().is_none_or(|g| g.seq.load(Ordering::Relaxed) as u32 != chunk.seq) {
                *current = Some(self.switch(stats, current.as_deref(), chunk.seq, *written_end)?);
                *written_end = super::lsn(chunk.seq, FILE_HEADER);
            }
            let group = current.as_ref().expect("switched above");
            if !chunk.bytes.is_empty() {
                let span = (chunk.offset, chunk.offset + chunk.bytes.len() as u64);
                let (files, mark) = ((&group.file, &group.format_file), &group.formatted);
                *format_wanted |= self.formatter.before_write(files, mark, span, self.file_size)?;
                group.file.write_at(&chunk.bytes, chunk.offset)?;
                *written_end = super::lsn(chunk.seq, chunk.offset + chunk.bytes.len() as u64);
                stats.add(Stat::RedoWrites, 1);
                stats.add(Stat::RedoBlocksWritten, (chunk.bytes.len() as u64).div_ceil(LOG_BLOCK));
            }
        }
        if let Some(group) = current {
            group.file.sync()?;
        }
        if by == Writer::Committer {
            stats.record_wait(WaitEvent::LogFileParallelWrite, started.elapsed().as_micros() as u64);
        }
        Ok(())
    }

    /// Moves from `from` to the next group for sequence `seq`: syncs the old file (the
    /// redo up to `written_end`, all of the old sequence, is then durable and published
    /// as flushed, so that a checkpoint the switch waits for never waits for it), waits
    /// for a checkpoint if the next group's redo is still needed (growing the circle if
    /// it does not come), and writes the new header, which records where the old
    /// sequence ended.
    fn switch(
        &self,
        stats: &SessionStats,
        from: Option<&LogGroup>,
        seq: u32,
        written_end: Lsn,
    ) -> Result<Arc<LogGroup>> {
        if let Some(old) = from {
            old.file.sync()?;
            if written_end > self.flushed() {
                self.flushed.store(written_end, Ordering::Release);
                let _state = self.state.lock();
                self.written.notify_all();
            }
        }
        let _wait = stats.begin_wait(WaitEvent::LogFileSwitchCompletion);
        let next = {
            let groups = self.groups.lock();
            let at = from.and_then(|f| groups.iter().position(|g| g.group == f.group)).unwrap_or(groups.len() - 1);
            groups[(at + 1) % groups.len()].clone()
        };
        let next = if self.needed(&next) { self.wait_for_checkpoint(stats, next, from)? } else { next };
        let scn = self.state.lock().highest_scn;
        let prev_end = if super::lsn_seq(written_end) + 1 == seq { super::lsn_offset(written_end) } else { 0 };
        self.begin_sequence(&next, seq, scn, prev_end)?;
        stats.add(Stat::RedoLogSwitches, 1);
        // A checkpoint at every switch, of the buffers first changed before the new
        // sequence: the group the next switch reuses (with three groups, the one before
        // the sequence just left) is free once it has passed the sequence before, so it
        // has the whole of this sequence to get there, and writes a hot block while its
        // latest change is still in redo the log writer can write.
        self.want_checkpoint(super::lsn(seq, 0));
        Ok(next)
    }

    /// Whether recovery still needs the redo in `group` (its sequence is at or after the
    /// checkpoint's).
    fn needed(&self, group: &LogGroup) -> bool {
        needed_by(group, self.checkpoint_lsn())
    }

    /// `checkpoint not complete`: asks for the checkpoint that frees `next` (every buffer
    /// first changed in its sequence or before written) and waits for it; if it does not
    /// come in time, adds a group after `from` and returns that instead. Appenders wait
    /// for a free group before they start a sequence, so this wait is left to the
    /// sequences `ALTER SYSTEM SWITCH LOGFILE` starts.
    fn wait_for_checkpoint(
        &self,
        stats: &SessionStats,
        next: Arc<LogGroup>,
        from: Option<&LogGroup>,
    ) -> Result<Arc<LogGroup>> {
        let frees_next = super::lsn(next.seq.load(Ordering::Relaxed) as u32 + 1, 0);
        if self.wait_for_checkpoint_at(stats, || frees_next, |checkpoint| !needed_by(&next, checkpoint)) {
            return Ok(next);
        }
        Ok(self.add_group(stats, from, |_| !self.needed(&next))?.unwrap_or(next))
    }

    /// Adds a group to the circle after `from` (or after the group holding the current
    /// sequence), its file and directory entry synced before any redo goes into it: the
    /// next open finds it by its header whether or not the control file names it yet.
    /// Adds none, returning `None`, if `enough(groups)` holds for the circle's size once
    /// its lock is held (a group became free since the caller looked).
    fn add_group(
        &self,
        stats: &SessionStats,
        from: Option<&LogGroup>,
        enough: impl Fn(u32) -> bool,
    ) -> Result<Option<Arc<LogGroup>>> {
        let current = self.state.lock().seq;
        let mut groups = self.groups.lock();
        if enough(groups.len() as u32) {
            return Ok(None);
        }
        let number = groups.iter().map(|g| g.group).max().unwrap_or(0) + 1;
        create_group_file(self.io.as_ref(), &self.dir, self.db_id, number, self.file_size)?;
        self.io.sync_dir(&self.dir)?;
        let group = Arc::new(LogGroup::open(self.io.as_ref(), number, self.dir.join(file_name(number)), None, None)?);
        let after = |g: &Arc<LogGroup>| match from {
            Some(f) => g.group == f.group,
            None => g.seq.load(Ordering::Relaxed) as u32 == current,
        };
        let at = groups.iter().position(after).map_or(groups.len(), |i| i + 1);
        groups.insert(at, group.clone());
        stats.add(Stat::RedoLogGroupsAdded, 1);
        Ok(Some(group))
    }
}

/// Fails the log if the write under way panics (its thread unwinds), so that no waiter
/// waits for a write that will never end and no commit is acknowledged after it.
struct FailIfUnwinding<'a>(&'a RedoLog);

impl Drop for FailIfUnwinding<'_> {
    fn drop(&mut self) {
        let log = self.0;
        let mut state = log.state.lock();
        state.writing = false;
        log.fail(&mut state, "a write of the redo log panicked".to_owned());
        log.written.notify_all();
        log.work.notify_one();
    }
}

/// Zeros that take a write ending at `offset` to a log block boundary.
fn padding(offset: u64) -> u64 {
    (LOG_BLOCK - offset % LOG_BLOCK) % LOG_BLOCK
}

/// Zeros put before a record at `offset`: none, unless fewer than [`MIN_RECORD_ROOM`]
/// bytes are left in the log block, where no record starts (see [`super::reader`]).
pub fn skip_before_record(offset: u64) -> u64 {
    match padding(offset) {
        short if short < MIN_RECORD_ROOM => short,
        _ => 0,
    }
}

/// Whether a circle of `groups` groups has one free for sequence `seq` when the
/// checkpoint is at `checkpoint` (every sequence before the checkpoint's is reusable).
fn free_for(seq: u32, checkpoint: Lsn, groups: u32) -> bool {
    seq < super::lsn_seq(checkpoint).max(1) + groups
}

/// Whether recovery from checkpoint `checkpoint` needs the redo in `group`.
fn needed_by(group: &LogGroup, checkpoint: Lsn) -> bool {
    let seq = group.seq.load(Ordering::Relaxed) as u32;
    seq != 0 && seq >= super::lsn_seq(checkpoint)
}

/// Creates one group's file: its header (sequence 0, unused), sized, synced (the
/// caller syncs the directory). A file of that name already there belongs to no group
/// (a creation a crash interrupted, or one whose header was never this database's): it
/// is reused.
fn create_group_file(io: &dyn Io, dir: &Path, db_id: u64, group: u32, file_size: u64) -> Result<()> {
    let path = dir.join(file_name(group));
    let file = io.open(&path, !path.exists(), false)?;
    let header = FileHeader { group, seq: 0, first_scn: 0, file_size, prev_end: 0 };
    file.write_at(&encode_header(db_id, &header), 0)?;
    file.allocate(file_size)?;
    file.sync()
}

/// The `redoNN.log` files of `dir` whose group is not in `listed`, by group number.
fn unlisted_log_files(dir: &Path, listed: &[u32]) -> Result<Vec<(u32, PathBuf)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read directory", dir, e))?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io("read directory", dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let group = name.strip_prefix("redo").and_then(|n| n.strip_suffix(".log")).and_then(|n| n.parse::<u32>().ok());
        if let Some(group) = group.filter(|g| !listed.contains(g) && file_name(*g) == name) {
            found.push((group, path));
        }
    }
    found.sort();
    Ok(found)
}

/// Reads the header of the log file at `path`.
pub fn read_header(path: &Path, db_id: u64) -> Result<FileHeader> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut b = vec![0u8; FILE_HEADER as usize];
    file.read_exact_at(&mut b, 0).map_err(|e| Error::io("read", path, e))?;
    decode_header(db_id, &b).map_err(|r| corrupt(path, r))
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { file: path.to_owned(), block: None, reason: reason.into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redo::{reader, record};

    /// Appends records of many lengths, some flushed at once and some left for the
    /// writer's own pace, across log switches; the scan must find every one in order.
    #[test]
    fn every_record_written_is_read_back_whatever_its_length_and_padding() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 1 << 20).unwrap();
        let log = Arc::new(RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap());
        let start = log.start(1, 1, 0).unwrap();
        let writer_log = log.clone();
        let lgwr = crate::stats::Registry::default().register("LGWR");
        log.set_log_writer(lgwr.clone());
        let writer = std::thread::spawn(move || writer_log.run_writer());
        let stats = SessionStats::default();
        let mut expected = Vec::new();
        let mut seed = 0x9e37_79b9_u64;
        for i in 0..3000u32 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 33) as usize % 700 + 1;
            let block: Vec<u8> = (0..len.next_multiple_of(8)).map(|b| (b as u32 ^ i) as u8).collect();
            let ranges = [(0usize, len)];
            let n = record::encoded_len(&ranges);
            let (_, end) = log
                .append(&stats, n, u64::from(i), |out, seq| {
                    record::encode_one(out, seq, u64::from(i), i, record::Op::Change, &block, &ranges)
                })
                .unwrap();
            expected.push(i);
            if seed.is_multiple_of(7) {
                log.flush_to(end).unwrap();
            }
            if i % 1000 == 999 {
                log.switch_logfile().unwrap();
            }
        }
        log.flush_all().unwrap();
        log.checkpoint_done(start);
        log.close();
        writer.join().unwrap();
        if std::env::var_os("LIOSCOPE_KEEP_LOG").is_some() {
            let kept = dir.path().to_owned();
            std::mem::forget(dir);
            eprintln!("log kept in {}", kept.display());
        }
        let mut seen = Vec::new();
        reader::scan(&log.sequences(), start, |_, _, r| {
            seen.push(r.vectors[0].rdba);
            Ok(())
        })
        .unwrap();
        let first_missing = expected.iter().zip(&seen).position(|(e, s)| e != s);
        assert_eq!((seen.len(), first_missing), (expected.len(), None), "records read back, first one missing");
        let writer_stats = &lgwr.stats;
        assert!(writer_stats.get(Stat::RedoWastage) > 0 && writer_stats.get(Stat::RedoLogSwitches) >= 3);
    }

    /// An append that finds the log buffer's lock held waits for it in `latch: redo
    /// allocation`; one that finds it free does not wait.
    #[test]
    fn an_append_waits_for_the_log_buffer_in_latch_redo_allocation() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 2, 1 << 20).unwrap();
        let log = RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2]).unwrap();
        log.start(1, 1, 0).unwrap();
        let append = |stats: &SessionStats| {
            let ranges = [(0usize, 8)];
            let n = record::encoded_len(&ranges);
            log.append(stats, n, 1, |out, seq| {
                record::encode_one(out, seq, 1, 1, record::Op::Change, &[7; 8], &ranges)
            })
            .unwrap();
            stats.event(WaitEvent::LatchRedoAllocation)
        };
        assert_eq!(append(&SessionStats::default()).waits, 0, "a free buffer is not waited for");
        let held = log.state.lock();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| append(&SessionStats::default()));
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(held);
            let waited = waiter.join().unwrap();
            assert_eq!(waited.waits, 1);
            assert!(waited.time_waited_micro >= 40_000, "waited {} µs", waited.time_waited_micro);
        });
    }

    /// A record that does not fit the rest of its file goes at the start of the next
    /// sequence, encoded for that sequence: files filled by records alone, with no switch
    /// asked for, are read back whole.
    #[test]
    fn a_record_moved_to_the_next_sequence_by_a_full_file_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 1 << 20).unwrap();
        let log = RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap();
        let start = log.start(1, 1, 0).unwrap();
        let stats = SessionStats::default();
        let block = vec![0x5a_u8; 4096];
        let ranges = [(0usize, 4000)];
        let n = record::encoded_len(&ranges);
        // Two files and a half of records: two switches made by appends.
        let records = (5 << 20) / 2 / n as u32;
        let mut sequences = std::collections::BTreeSet::new();
        for i in 0..records {
            let (at, _) = log
                .append(&stats, n, u64::from(i), |out, seq| {
                    record::encode_one(out, seq, u64::from(i), i, record::Op::Change, &block, &ranges)
                })
                .unwrap();
            sequences.insert(at >> 32);
        }
        log.flush_all().unwrap();
        assert_eq!(sequences.len(), 3, "the records filled two files");
        let mut seen = Vec::new();
        reader::scan(&log.sequences(), start, |_, _, r| {
            seen.push(r.vectors[0].rdba);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..records).collect::<Vec<_>>(), "every record read back, in order");
    }

    /// Committing sessions make the writes themselves: with no log writer thread at all,
    /// four threads' commits all come back durable, each write covering those that
    /// came while the one before was under way, and the writes count in the log
    /// writer's session.
    #[test]
    fn committers_write_the_log_themselves_one_write_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 1 << 20).unwrap();
        let log = Arc::new(RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap());
        let start = log.start(1, 1, 0).unwrap();
        let lgwr = crate::stats::Registry::default().register("LGWR");
        log.set_log_writer(lgwr.clone());
        let (commits_per_thread, threads) = (150u32, 4u32);
        let (done_tx, done) = std::sync::mpsc::channel();
        for t in 0..threads {
            let (log, done_tx) = (log.clone(), done_tx.clone());
            std::thread::spawn(move || {
                let stats = SessionStats::default();
                for i in 0..commits_per_thread {
                    let id = t * commits_per_thread + i;
                    let block = vec![id as u8; 96];
                    let ranges = [(0usize, 96)];
                    let (_, end) = log
                        .append(&stats, record::encoded_len(&ranges), u64::from(id), |out, seq| {
                            record::encode_one(out, seq, u64::from(id), id, record::Op::Change, &block, &ranges)
                        })
                        .unwrap();
                    log.flush_to(end).unwrap();
                    assert!(log.flushed() >= end, "a commit came back before its redo was on disk");
                }
                done_tx.send(()).unwrap();
            });
        }
        for _ in 0..threads {
            done.recv_timeout(Duration::from_secs(60)).expect("a commit waited for a log writer that never came");
        }
        let mut seen = Vec::new();
        reader::scan(&log.sequences(), start, |_, _, r| {
            seen.push(r.vectors[0].rdba);
            Ok(())
        })
        .unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..threads * commits_per_thread).collect::<Vec<_>>());
        let writes = lgwr.stats.get(Stat::RedoWrites);
        assert!(writes > 0 && writes <= u64::from(threads * commits_per_thread), "{writes} writes");
        assert_eq!(lgwr.stats.event(WaitEvent::LogFileParallelWrite).waits, writes);
    }

    /// One write a [`WatchedIo`] saw: file, offset, length, and whether it was all zeros.
    type SeenWrite = (PathBuf, u64, usize, bool);

    /// An I/O layer that records every write and whose syncs panic once `panics` is set.
    #[derive(Debug, Default)]
    struct WatchedIo {
        panics: Arc<AtomicBool>,
        writes: Arc<Mutex<Vec<SeenWrite>>>,
    }

    #[derive(Debug)]
    struct WatchedFile {
        inner: Arc<dyn IoFile>,
        panics: Arc<AtomicBool>,
        writes: Arc<Mutex<Vec<SeenWrite>>>,
    }

    impl Io for WatchedIo {
        fn open(&self, path: &Path, create: bool, direct: bool) -> Result<Arc<dyn IoFile>> {
            let inner = crate::storage::io::os().open(path, create, direct)?;
            Ok(Arc::new(WatchedFile { inner, panics: self.panics.clone(), writes: self.writes.clone() }))
        }
        fn replace(&self, path: &Path, contents: &[u8]) -> Result<()> {
            crate::storage::io::os().replace(path, contents)
        }
        fn sync_dir(&self, dir: &Path) -> Result<()> {
            crate::storage::io::os().sync_dir(dir)
        }
    }

    impl IoFile for WatchedFile {
        fn path(&self) -> &Path {
            self.inner.path()
        }
        fn fd(&self) -> std::os::fd::RawFd {
            self.inner.fd()
        }
        fn write_at(&self, buf: &[u8], offset: u64) -> Result<()> {
            let zeros = buf.iter().all(|b| *b == 0);
            self.writes.lock().push((self.inner.path().to_owned(), offset, buf.len(), zeros));
            self.inner.write_at(buf, offset)
        }
        fn sync(&self) -> Result<()> {
            assert!(!self.panics.load(Ordering::Relaxed), "the disk driver panics");
            self.inner.sync()
        }
        fn len(&self) -> Result<u64> {
            self.inner.len()
        }
        fn extend(&self, len: u64) -> Result<()> {
            self.inner.extend(len)
        }
        fn allocate(&self, len: u64) -> Result<()> {
            self.inner.allocate(len)
        }
    }

    /// Every write of redo goes where zeros were written first, far ahead of it, and the
    /// zeros never go over redo written before them nor over a file twice: a commit's
    /// sync never has an allocated extent's first write to commit. Committers and the
    /// log writer's background formatting run at once.
    #[test]
    fn the_writer_formats_each_file_ahead_of_its_redo_once() {
        let dir = tempfile::tempdir().unwrap();
        let io = Arc::new(WatchedIo::default());
        let file_size = 12 * super::super::format::STEP;
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, file_size).unwrap();
        let log = Arc::new(RedoLog::open(io.clone(), dir.path(), 7, file_size, &[1, 2, 3]).unwrap());
        log.start(1, 1, 0).unwrap();
        io.writes.lock().clear();
        let writer_log = log.clone();
        let writer = std::thread::spawn(move || writer_log.run_writer());
        let stats = SessionStats::default();
        let records = 24_000u32; // about 24 MB: past the circle's 18, into reused files
        for i in 0..records {
            let block = vec![i as u8 | 1; 1000];
            let ranges = [(0usize, 1000)];
            let (_, end) = log
                .append(&stats, record::encoded_len(&ranges), u64::from(i), |out, seq| {
                    record::encode_one(out, seq, u64::from(i), i, record::Op::Change, &block, &ranges)
                })
                .unwrap();
            if i % 4 == 3 {
                log.flush_to(end).unwrap();
                log.checkpoint_done(end);
            }
        }
        log.close();
        writer.join().unwrap();
        let mut formatted = std::collections::HashMap::<PathBuf, (u64, u64)>::new();
        let mut redo_end = std::collections::HashMap::<PathBuf, u64>::new();
        let mut redo_writes = 0;
        for (path, offset, len, zeros) in io.writes.lock().iter() {
            let end = offset + *len as u64;
            if *offset == 0 {
                continue; // a header, written at a switch
            }
            if *zeros {
                let written = redo_end.get(path).copied().unwrap_or(0);
                assert!(
                    *offset >= written,
                    "zeros at {offset} under redo this process wrote up to {written} in {path:?}"
                );
                let (upto, total) = formatted.entry(path.clone()).or_default();
                (*upto, *total) = ((*upto).max(end), *total + *len as u64);
            } else {
                let upto = formatted.get(path).map_or(0, |f| f.0);
                assert!(end <= upto, "redo up to {end} written where zeros reach {upto} only in {path:?}");
                let highest = redo_end.entry(path.clone()).or_default();
                *highest = (*highest).max(end);
                redo_writes += 1;
            }
        }
        assert!(redo_writes >= records as usize / 4, "{redo_writes} writes of redo");
        assert!(log.sequences().iter().any(|f| f.seq > 3), "the circle was never reused");
        assert_eq!(formatted.len(), 3, "every file formatted: {formatted:?}");
        for (path, (_, total)) in &formatted {
            assert!(*total <= file_size, "{path:?} had {total} bytes of zeros written, more than its size");
        }
    }

    /// A committer whose write of the log panics fails the log: the next commit gets an
    /// error at once instead of waiting for a write that never ends.
    #[test]
    fn a_write_that_panics_fails_the_log_for_every_later_commit() {
        let dir = tempfile::tempdir().unwrap();
        let panics = Arc::new(AtomicBool::new(false));
        let io: Arc<dyn Io> = Arc::new(WatchedIo { panics: panics.clone(), ..WatchedIo::default() });
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 1 << 20).unwrap();
        let log = Arc::new(RedoLog::open(io, dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap());
        log.start(1, 1, 0).unwrap();
        let stats = SessionStats::default();
        let append = |id: u32| {
            let block = [id as u8; 8];
            let ranges = [(0usize, 8)];
            let (_, end) = log
                .append(&stats, record::encoded_len(&ranges), u64::from(id), |out, seq| {
                    record::encode_one(out, seq, u64::from(id), id, record::Op::Change, &block, &ranges)
                })
                .unwrap();
            end
        };
        let end = append(1);
        log.flush_to(end).unwrap();
        panics.store(true, Ordering::Relaxed);
        let end = append(2);
        let writer = log.clone();
        assert!(std::thread::spawn(move || writer.flush_to(end)).join().is_err(), "the write panicked");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = log.clone();
        std::thread::spawn(move || tx.send(waiter.flush_to(end)).unwrap());
        let next = rx.recv_timeout(Duration::from_secs(10)).expect("the next commit waits for a write that never ends");
        let e = next.unwrap_err().to_string();
        assert!(e.contains("panicked") && log.has_failed(), "{e}");
    }

    /// Writes `records` records of about 300 bytes through a log of three 64 KB groups,
    /// switching every `per_seq`; returns the directory, the log's files after it closed,
    /// and where the scan starts.
    fn write_log(records: u32, per_seq: u32) -> (tempfile::TempDir, Vec<reader::LogFile>, Lsn) {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 64 << 10).unwrap();
        let log = Arc::new(RedoLog::open(io, dir.path(), 7, 64 << 10, &[1, 2, 3]).unwrap());
        let start = log.start(1, 1, 0).unwrap();
        let writer_log = log.clone();
        let writer = std::thread::spawn(move || writer_log.run_writer());
        let stats = SessionStats::default();
        for i in 0..records {
            let block = vec![i as u8; 296];
            let ranges = [(0usize, 296)];
            let n = record::encoded_len(&ranges);
            let (_, end) = log
                .append(&stats, n, u64::from(i), |out, seq| {
                    record::encode_one(out, seq, u64::from(i), i, record::Op::Change, &block, &ranges)
                })
                .unwrap();
            if i % 17 == 0 {
                log.flush_to(end).unwrap();
            }
            if i % per_seq == per_seq - 1 {
                log.switch_logfile().unwrap();
            }
        }
        log.flush_all().unwrap();
        log.close();
        writer.join().unwrap();
        let files = log.sequences();
        (dir, files, start)
    }

    #[test]
    fn each_header_records_where_the_sequence_before_it_ended() {
        let (_dir, files, start) = write_log(300, 100);
        let mut ends = std::collections::BTreeMap::new();
        reader::scan(&files, start, |_, end, _| {
            ends.insert(super::super::lsn_seq(end), super::super::lsn_offset(end));
            Ok(())
        })
        .unwrap();
        for file in files.iter().filter(|f| f.seq > 1) {
            let before = ends[&(file.seq - 1)];
            assert!(
                file.prev_end >= before && file.prev_end < before + LOG_BLOCK,
                "sequence {} says {} ended at {}; its last record ends at {before}",
                file.seq,
                file.seq - 1,
                file.prev_end
            );
        }
        let headers: Vec<FileHeader> = files.iter().map(|f| read_header(&f.path, 7).unwrap()).collect();
        assert!(headers.iter().all(|h| h.seq == 0 || h.seq == 1 || h.prev_end > FILE_HEADER), "{headers:?}");
    }

    #[test]
    fn a_damaged_record_in_an_older_sequence_is_an_error_naming_it_never_the_end_of_the_log() {
        let (_dir, files, start) = write_log(300, 100);
        let older = files.iter().find(|f| f.seq == 2).unwrap();
        let mut bytes = std::fs::read(&older.path).unwrap();
        bytes[FILE_HEADER as usize + 5_000] ^= 0x40;
        std::fs::write(&older.path, &bytes).unwrap();
        let mut applied = 0;
        let e = reader::scan(&files, start, |_, _, _| {
            applied += 1;
            Ok(())
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("log sequence 2 has no valid record at byte")
                && e.contains(older.path.file_name().unwrap().to_str().unwrap()),
            "{e}"
        );
        assert!(applied < 200, "nothing of sequence 3 was applied ({applied} records)");
    }

    #[test]
    fn valid_records_beyond_a_damaged_one_in_the_newest_sequence_are_reported() {
        let (_dir, files, start) = write_log(250, 100);
        let newest = files.iter().max_by_key(|f| f.seq).unwrap();
        let mut bytes = std::fs::read(&newest.path).unwrap();
        bytes[FILE_HEADER as usize + 2_000] ^= 0x40;
        std::fs::write(&newest.path, &bytes).unwrap();
        let end = reader::scan(&files, start, |_, _, _| Ok(())).unwrap();
        let damage = end.damage.expect("the damage is reported");
        assert_eq!((damage.seq, damage.path.clone()), (newest.seq, newest.path.clone()));
        assert!(damage.offset <= FILE_HEADER + 2_000 && damage.next_valid > damage.offset, "{damage}");
    }

    #[test]
    fn a_log_group_missing_from_the_list_is_found_by_its_header_and_a_stale_file_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 4, 1 << 20).unwrap();
        std::fs::write(dir.path().join(file_name(5)), b"half made").unwrap();
        let log = RedoLog::open(io.clone(), dir.path(), 7, 1 << 20, &[1, 2, 3]).unwrap();
        assert_eq!(log.group_numbers(), vec![1, 2, 3, 4], "group 4 found by its header, the stale file left alone");
        create_group_file(io.as_ref(), dir.path(), 7, 5, 1 << 20).unwrap();
        assert_eq!(read_header(&dir.path().join(file_name(5)), 7).unwrap().group, 5, "the stale file is reused");
    }

    /// A log of three 64 KB groups started at sequence 1, its checkpoint there: no group
    /// is free for sequence 4 until a checkpoint moves or the circle grows.
    fn full_circle() -> (tempfile::TempDir, RedoLog) {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        RedoLog::create_files(io.as_ref(), dir.path(), 7, 3, 64 << 10).unwrap();
        let log = RedoLog::open(io, dir.path(), 7, 64 << 10, &[1, 2, 3]).unwrap();
        log.start(1, 1, 0).unwrap();
        assert!(!log.group_free_for(4), "sequences 1 to 3 fill the three groups");
        (dir, log)
    }

    /// Two sessions whose redo would start a sequence no group is free for, and no
    /// checkpoint to free one: both give up at once, and the circle grows by one group.
    #[test]
    fn sessions_that_give_up_waiting_for_a_group_at_once_add_one_group() {
        let (_dir, log) = full_circle();
        let log = Arc::new(log);
        let start = Arc::new(std::sync::Barrier::new(2));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let (log, start) = (log.clone(), start.clone());
                std::thread::spawn(move || {
                    let stats = SessionStats::default();
                    start.wait();
                    log.wait_for_group(&stats, 4).unwrap();
                    stats.get(Stat::RedoLogGroupsAdded)
                })
            })
            .collect();
        let added: u64 = waiters.into_iter().map(|w| w.join().unwrap()).sum();
        let mut groups = log.group_numbers();
        groups.sort_unstable();
        assert_eq!((added, groups), (1, vec![1, 2, 3, 4]), "one group added for one sequence");
        assert!(log.group_free_for(4));
    }

    /// Two sessions that gave up waiting for a group for the same sequence, the second
    /// having looked before the first grew the circle (the order that, unchecked under
    /// the groups' lock, grows it twice): the second finds the first's group free.
    #[test]
    fn a_session_that_gave_up_after_another_grew_the_circle_adds_no_group() {
        let (_dir, log) = full_circle();
        let (first, second) = (SessionStats::default(), SessionStats::default());
        log.grow_for(&first, 4).unwrap();
        log.grow_for(&second, 4).unwrap();
        let added = (first.get(Stat::RedoLogGroupsAdded), second.get(Stat::RedoLogGroupsAdded));
        let mut groups = log.group_numbers();
        groups.sort_unstable();
        assert_eq!((added, groups), ((1, 0), vec![1, 2, 3, 4]), "one group added for one sequence");
    }

    #[test]
    fn a_header_of_the_first_layout_is_read_with_no_previous_end() {
        let h = FileHeader { group: 2, seq: 9, first_scn: 44, file_size: 1 << 20, prev_end: 0 };
        let mut b = encode_header(7, &h);
        b[48..].fill(0);
        let crc = crc32fast::hash(&b[..48]);
        b[48..52].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(decode_header(7, &b), Ok(h));
        b[30] ^= 1;
        assert!(decode_header(7, &b).is_err());
    }

    #[test]
    fn no_record_starts_in_the_last_bytes_of_a_log_block() {
        for offset in 512..2048 {
            let start = offset + skip_before_record(offset);
            assert!(padding(start) == 0 || padding(start) >= MIN_RECORD_ROOM, "offset {offset}");
            assert!(start - offset < MIN_RECORD_ROOM);
        }
    }
}

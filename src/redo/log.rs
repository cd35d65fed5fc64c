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
//! Group commit: a committing session waits (`log file sync`) until the log writer has
//! synced past its commit record; sessions committing while a write is under way are all
//! covered by the next one. Every write starts on a fresh 512-byte log block, so a block
//! once synced is never written again and a torn write can only lose records nobody was
//! told are durable.
//!
//! A switch to the next group (a full file, or `ALTER SYSTEM SWITCH LOGFILE`) reuses its
//! file only when the checkpoint has passed all of its old sequence; until then the log
//! writer asks for a checkpoint and waits (`log file switch (checkpoint incomplete)`).
//! A checkpoint can itself wait on redo not yet written (a block is written only after
//! its redo), so the wait is bounded: past it, the circle grows by a new group rather
//! than overwrite redo that recovery needs.
//!
//! Invariants: `flushed` only grows, and every record ending at or below it is on disk
//! (synced); once a write or sync fails the log is failed for good and no later commit
//! is acknowledged.

use super::Lsn;
use crate::error::{Error, Result};
use crate::stats::{SessionStats, Stat, WaitEvent};
use crate::storage::io::{Io, IoFile};
use parking_lot::{Condvar, Mutex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Bytes of a log block: every write starts on one.
pub const LOG_BLOCK: u64 = 512;
/// Bytes of a log file's header; records start after it.
pub const FILE_HEADER: u64 = LOG_BLOCK;
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
    /// The sequence the file holds (0: never used) and the SCN it began at.
    seq: AtomicU64,
    first_scn: AtomicU64,
}

/// A file header read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub group: u32,
    pub seq: u32,
    pub first_scn: u64,
    pub file_size: u64,
}

fn encode_header(db_id: u64, h: &FileHeader) -> Vec<u8> {
    let mut b = vec![0u8; FILE_HEADER as usize];
    b[..16].copy_from_slice(MAGIC);
    b[16..24].copy_from_slice(&db_id.to_le_bytes());
    b[24..28].copy_from_slice(&h.group.to_le_bytes());
    b[28..32].copy_from_slice(&h.seq.to_le_bytes());
    b[32..40].copy_from_slice(&h.first_scn.to_le_bytes());
    b[40..48].copy_from_slice(&h.file_size.to_le_bytes());
    let crc = crc32fast::hash(&b[..48]);
    b[48..52].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a log file header; `Err` says why it is not one of this database's.
pub fn decode_header(db_id: u64, b: &[u8]) -> std::result::Result<FileHeader, String> {
    if b.len() < 52 || &b[..16] != MAGIC {
        return Err("not a lioscope redo log file".into());
    }
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    if crc32fast::hash(&b[..48]) != u32_at(48) {
        return Err("redo log file header fails its checksum".into());
    }
    if u64_at(16) != db_id {
        return Err("redo log file of another database".into());
    }
    Ok(FileHeader { group: u32_at(24), seq: u32_at(28), first_scn: u64_at(32), file_size: u64_at(40) })
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
    failed: Option<String>,
    highest_scn: u64,
    /// Counted by appenders, folded into the log writer's statistics by it.
    wastage: u64,
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
    /// Set by the log writer when a switch waits for a checkpoint; the database writer
    /// watches it.
    checkpoint_wanted: Mutex<bool>,
    checkpoint_wake: Condvar,
}

/// The name of online log group `group`'s file.
pub fn file_name(group: u32) -> String {
    format!("redo{group:02}.log")
}

impl RedoLog {
    /// Creates the files of `groups` log groups of `file_size` bytes each in `dir`
    /// (sparse: blocks are allocated as redo is written), synced.
    pub fn create_files(io: &dyn Io, dir: &Path, db_id: u64, groups: u32, file_size: u64) -> Result<()> {
        for group in 1..=groups {
            create_group_file(io, dir, db_id, group, file_size)?;
        }
        Ok(())
    }

    /// Opens the log groups named (by group number, in the circle's order) in `dir`.
    /// Nothing is written until [`RedoLog::start`].
    pub fn open(io: Arc<dyn Io>, dir: &Path, db_id: u64, file_size: u64, groups: &[u32]) -> Result<RedoLog> {
        let mut opened = Vec::new();
        for &group in groups {
            let path = dir.join(file_name(group));
            let file = io.open(&path, false, false)?;
            let header = read_header(&path, db_id)?;
            if header.group != group || header.file_size != file_size {
                return Err(corrupt(
                    &path,
                    format!("header says group {} of {} bytes", header.group, header.file_size),
                ));
            }
            opened.push(Arc::new(LogGroup {
                group,
                path,
                file,
                seq: AtomicU64::new(u64::from(header.seq)),
                first_scn: AtomicU64::new(header.first_scn),
            }));
        }
        Ok(RedoLog {
            io,
            dir: dir.to_owned(),
            db_id,
            file_size,
            groups: Mutex::new(opened),
            state: Mutex::new(LogState::default()),
            work: Condvar::new(),
            written: Condvar::new(),
            flushed: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            checkpoint: Mutex::new(0),
            checkpoint_moved: Condvar::new(),
            checkpoint_wanted: Mutex::new(false),
            checkpoint_wake: Condvar::new(),
        })
    }

    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The groups, in the circle's order.
    pub fn group_numbers(&self) -> Vec<u32> {
        self.groups.lock().iter().map(|g| g.group).collect()
    }

    /// Each group's file and the sequence in it (0: never used), for recovery.
    pub fn sequences(&self) -> Vec<(u32, PathBuf)> {
        self.groups.lock().iter().map(|g| (g.seq.load(Ordering::Relaxed) as u32, g.path.clone())).collect()
    }

    /// Begins sequence `seq` in the group after the one holding the newest sequence,
    /// writing its header (synced), and sets the checkpoint to its start: recovery has
    /// brought every block up to date and written it. Returns the LSN where redo starts.
    pub fn start(&self, seq: u32, scn: u64) -> Result<Lsn> {
        let groups = self.groups.lock().clone();
        let newest = groups.iter().enumerate().max_by_key(|(_, g)| g.seq.load(Ordering::Relaxed)).map_or(0, |(i, _)| i);
        let next = &groups[(newest + 1) % groups.len()];
        self.begin_sequence(next, seq, scn)?;
        let lsn = super::lsn(seq, FILE_HEADER);
        let mut state = self.state.lock();
        state.seq = seq;
        state.offset = FILE_HEADER;
        state.highest_scn = scn;
        *self.checkpoint.lock() = lsn;
        self.flushed.store(lsn, Ordering::Release);
        Ok(lsn)
    }

    /// Writes `group`'s header for sequence `seq`, synced.
    fn begin_sequence(&self, group: &LogGroup, seq: u32, first_scn: u64) -> Result<()> {
        let header = FileHeader { group: group.group, seq, first_scn, file_size: self.file_size };
        group.file.write_at(&encode_header(self.db_id, &header), 0)?;
        group.file.sync()?;
        group.seq.store(u64::from(seq), Ordering::Release);
        group.first_scn.store(first_scn, Ordering::Relaxed);
        Ok(())
    }

    /// Appends a record of `len` bytes that `encode` writes (given the sequence it goes
    /// in); returns the LSNs where it starts and ends. Counts `redo entries` and `redo
    /// size`. Waits (`log buffer space`) while the buffer is full.
    pub fn append(
        &self,
        stats: &SessionStats,
        len: usize,
        scn: u64,
        encode: impl FnOnce(&mut Vec<u8>, u32),
    ) -> Result<(Lsn, Lsn)> {
        let mut state = self.state.lock();
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
        if state.offset + skip + len as u64 > self.file_size {
            state.seq += 1;
            state.offset = FILE_HEADER;
            skip = 0;
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

    /// Waits until redo up to `lsn` is on disk; `now`: asks the log writer to write at
    /// once (else the wait lasts until its next write, as a batched commit's does).
    /// Once the log has failed, it fails whatever `lsn` is: a transaction whose own
    /// append failed waits for an older LSN, and no commit is acknowledged any more.
    pub fn wait_flushed(&self, lsn: Lsn, now: bool) -> Result<()> {
        if self.flushed() >= lsn && !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut state = self.state.lock();
        while self.flushed() < lsn || state.failed.is_some() {
            if let Some(failed) = &state.failed {
                return Err(Error::Transaction {
                    message: format!("the redo log cannot be written, so the commit is not durable: {failed}"),
                });
            }
            if now {
                state.flush_requested = true;
                self.work.notify_one();
            }
            self.written.wait_for(&mut state, Duration::from_millis(100));
        }
        Ok(())
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

    /// Waits up to `timeout` for the log writer to want a checkpoint; returns whether it
    /// does (and clears the wish).
    pub fn wait_checkpoint_wanted(&self, timeout: Duration) -> bool {
        let mut wanted = self.checkpoint_wanted.lock();
        if !*wanted {
            self.checkpoint_wake.wait_for(&mut wanted, timeout);
        }
        std::mem::take(&mut *wanted)
    }

    /// Wakes the database writer (to checkpoint now, or to notice a shutdown).
    pub fn want_checkpoint(&self) {
        *self.checkpoint_wanted.lock() = true;
        self.checkpoint_wake.notify_all();
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

    /// The log writer's loop; returns when the log is closed (everything appended
    /// written) or failed. `stats` are the log writer's own.
    pub fn run_writer(&self, stats: &SessionStats) {
        let mut current: Option<Arc<LogGroup>> = self.group_with_seq(self.state.lock().seq);
        loop {
            let (chunks, target, wastage) = {
                let mut state = self.state.lock();
                loop {
                    if state.failed.is_some() {
                        return;
                    }
                    let urgent = state.flush_requested || state.pending >= WRITE_THRESHOLD || state.closing;
                    if !state.chunks.is_empty() && urgent {
                        break;
                    }
                    if state.closing {
                        return;
                    }
                    let timed_out = self.work.wait_for(&mut state, IDLE_WRITE).timed_out();
                    if timed_out && !state.chunks.is_empty() {
                        break;
                    }
                }
                let pad = padding(state.offset);
                let seq = state.seq;
                if let Some(last) = state.chunks.last_mut().filter(|c| c.seq == seq) {
                    last.bytes.resize(last.bytes.len() + pad as usize, 0);
                    state.offset += pad;
                    state.wastage += pad;
                }
                state.flush_requested = false;
                state.pending = 0;
                let target = super::lsn(state.seq, state.offset);
                (std::mem::take(&mut state.chunks), target, std::mem::take(&mut state.wastage))
            };
            stats.add(Stat::RedoWastage, wastage);
            if let Err(e) = self.write_chunks(stats, &mut current, &chunks) {
                self.state.lock().failed = Some(e.to_string());
                self.failed.store(true, Ordering::Release);
                self.written.notify_all();
                return;
            }
            self.flushed.store(target, Ordering::Release);
            let _state = self.state.lock();
            self.written.notify_all();
        }
    }

    /// Closes the log: the log writer writes what is left and returns.
    pub fn close(&self) {
        self.state.lock().closing = true;
        self.work.notify_all();
        self.want_checkpoint();
    }

    /// Whether the log has failed, without taking its lock.
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Whether the log has failed (no commit is acknowledged any more).
    pub fn failure(&self) -> Option<String> {
        self.state.lock().failed.clone()
    }

    fn group_with_seq(&self, seq: u32) -> Option<Arc<LogGroup>> {
        self.groups.lock().iter().find(|g| g.seq.load(Ordering::Relaxed) as u32 == seq).cloned()
    }

    /// Writes the chunks taken from the buffer, switching groups where their sequence
    /// changes, then syncs: one `redo writes` per chunk, `log file parallel write`.
    fn write_chunks(&self, stats: &SessionStats, current: &mut Option<Arc<LogGroup>>, chunks: &[Chunk]) -> Result<()> {
        let _wait = stats.begin_wait(WaitEvent::LogFileParallelWrite);
        for chunk in chunks {
            if current.as_ref().is_none_or(|g| g.seq.load(Ordering::Relaxed) as u32 != chunk.seq) {
                *current = Some(self.switch(stats, current.as_deref(), chunk.seq)?);
            }
            let group = current.as_ref().expect("switched above");
            if !chunk.bytes.is_empty() {
                group.file.write_at(&chunk.bytes, chunk.offset)?;
                stats.add(Stat::RedoWrites, 1);
                stats.add(Stat::RedoBlocksWritten, (chunk.bytes.len() as u64).div_ceil(LOG_BLOCK));
            }
        }
        if let Some(group) = current {
            group.file.sync()?;
        }
        Ok(())
    }

    /// Moves from `from` to the next group for sequence `seq`: syncs the old file, waits
    /// for a checkpoint if the next group's redo is still needed (growing the circle if
    /// it does not come), and writes the new header.
    fn switch(&self, stats: &SessionStats, from: Option<&LogGroup>, seq: u32) -> Result<Arc<LogGroup>> {
        if let Some(old) = from {
            old.file.sync()?;
        }
        let _wait = stats.begin_wait(WaitEvent::LogFileSwitchCompletion);
        let next = {
            let groups = self.groups.lock();
            let at = from.and_then(|f| groups.iter().position(|g| g.group == f.group)).unwrap_or(groups.len() - 1);
            groups[(at + 1) % groups.len()].clone()
        };
        let next = if self.needed(&next) { self.wait_for_checkpoint(stats, next, from)? } else { next };
        let scn = self.state.lock().highest_scn;
        self.begin_sequence(&next, seq, scn)?;
        stats.add(Stat::RedoLogSwitches, 1);
        // A checkpoint at every switch, as Oracle takes one: by the time the circle comes
        // back to the group just left, its redo is no longer needed.
        self.want_checkpoint();
        Ok(next)
    }

    /// Whether recovery still needs the redo in `group` (its sequence is at or after the
    /// checkpoint's).
    fn needed(&self, group: &LogGroup) -> bool {
        needed_by(group, self.checkpoint_lsn())
    }

    /// `checkpoint not complete`: asks for a checkpoint and waits for it to free `next`;
    /// if it does not in time, adds a group after `from` and returns that instead.
    fn wait_for_checkpoint(
        &self,
        stats: &SessionStats,
        next: Arc<LogGroup>,
        from: Option<&LogGroup>,
    ) -> Result<Arc<LogGroup>> {
        let _wait = stats.begin_wait(WaitEvent::LogFileSwitchCheckpointIncomplete);
        stats.add(Stat::CheckpointNotComplete, 1);
        let deadline = std::time::Instant::now() + SWITCH_PATIENCE;
        let mut at = self.checkpoint.lock();
        while needed_by(&next, *at) && std::time::Instant::now() < deadline {
            self.want_checkpoint();
            self.checkpoint_moved.wait_for(&mut at, Duration::from_millis(50));
        }
        drop(at);
        if !self.needed(&next) {
            return Ok(next);
        }
        let mut groups = self.groups.lock();
        let number = groups.iter().map(|g| g.group).max().unwrap_or(0) + 1;
        create_group_file(self.io.as_ref(), &self.dir, self.db_id, number, self.file_size)?;
        let path = self.dir.join(file_name(number));
        let group = Arc::new(LogGroup {
            group: number,
            file: self.io.open(&path, false, false)?,
            path,
            seq: AtomicU64::new(0),
            first_scn: AtomicU64::new(0),
        });
        let at = from.and_then(|f| groups.iter().position(|g| g.group == f.group)).map_or(groups.len(), |i| i + 1);
        groups.insert(at, group.clone());
        stats.add(Stat::RedoLogGroupsAdded, 1);
        Ok(group)
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

/// Fewest bytes left in a log block where a record may start: its length field. Fewer
/// zeros before a boundary could not be told from the start of a record, so records
/// never start there and a reader skips them.
pub const MIN_RECORD_ROOM: u64 = 4;

/// Whether recovery from checkpoint `checkpoint` needs the redo in `group`.
fn needed_by(group: &LogGroup, checkpoint: Lsn) -> bool {
    let seq = group.seq.load(Ordering::Relaxed) as u32;
    seq != 0 && seq >= super::lsn_seq(checkpoint)
}

/// Creates one group's file: its header (sequence 0, unused), sized, synced.
fn create_group_file(io: &dyn Io, dir: &Path, db_id: u64, group: u32, file_size: u64) -> Result<()> {
    let path = dir.join(file_name(group));
    let file = io.open(&path, true, false)?;
    let header = FileHeader { group, seq: 0, first_scn: 0, file_size };
    file.write_at(&encode_header(db_id, &header), 0)?;
    file.allocate(file_size)?;
    file.sync()
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
        let start = log.start(1, 1).unwrap();
        let writer_log = log.clone();
        let writer_stats = Arc::new(SessionStats::default());
        let ws = writer_stats.clone();
        let writer = std::thread::spawn(move || writer_log.run_writer(&ws));
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
        assert!(writer_stats.get(Stat::RedoWastage) > 0 && writer_stats.get(Stat::RedoLogSwitches) >= 3);
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

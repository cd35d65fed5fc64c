//! The database writer (DBWR) and the log writer (LGWR) threads, and checkpoints.
//!
//! The log writer runs [`RedoLog::run_writer`] until the log closes. The database writer
//! takes an incremental checkpoint every `log_checkpoint_timeout` seconds, and whenever
//! the log writer wants one (a log switch, or a switch waiting for `checkpoint not
//! complete`): it writes every dirty buffer (each only once its redo is on disk), syncs
//! the datafiles, and records in the control file the position recovery would start
//! from: the oldest first-dirty LSN of a buffer changed since, or where the log stood
//! when it began. It holds the database weakly and stops when the database goes.
//!
//! Invariant: the control file's checkpoint position never passes a change whose block
//! is not synced in its datafile; the log reuses a file only once the position has
//! passed all of its redo.

use super::DbInner;
use crate::error::Result;
use crate::redo::RedoLog;
use crate::stats::Stat;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Starts the log writer; returns its thread.
pub(super) fn start_log_writer(db: &DbInner, redo: Arc<RedoLog>) -> std::thread::JoinHandle<()> {
    let info = db.registry.register("LGWR");
    std::thread::Builder::new()
        .name("lioscope LGWR".into())
        .spawn(move || redo.run_writer(&info.stats))
        .expect("the log writer thread starts")
}

/// Starts the database writer, which holds `db` weakly; returns its thread.
pub(super) fn start_database_writer(db: Weak<DbInner>, redo: Arc<RedoLog>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("lioscope DBW0".into())
        .spawn(move || {
            loop {
                let timeout = match db.upgrade() {
                    Some(db) if !db.closing.load(Ordering::Acquire) => db.checkpoint_interval(),
                    _ => return,
                };
                redo.wait_checkpoint_wanted(timeout);
                let Some(db) = db.upgrade() else { return };
                if db.closing.load(Ordering::Acquire) {
                    return;
                }
                if let Err(e) = db.checkpoint() {
                    eprintln!("lioscope: checkpoint of {}: {e}", db.dir.display());
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        })
        .expect("the database writer thread starts")
}

impl DbInner {
    /// How long the database writer waits between incremental checkpoints.
    fn checkpoint_interval(&self) -> Duration {
        match self.parameters.read().get_u64(super::params::LOG_CHECKPOINT_TIMEOUT) {
            0 => Duration::from_secs(3600),
            seconds => Duration::from_secs(seconds),
        }
    }

    /// A checkpoint: makes the redo so far durable (commits that did not wait for it
    /// included), writes every dirty buffer, syncs the datafiles, then records the
    /// checkpoint position (and the space map) in the control file.
    pub(crate) fn checkpoint(&self) -> Result<()> {
        self.redo.flush_all()?;
        let _one_at_a_time = self.checkpoint_lock.lock();
        let session = self.registry.register("CKPT");
        let result = self.checkpoint_as(&session.stats);
        self.registry.unregister(session.sid);
        result
    }

    fn checkpoint_as(&self, stats: &crate::stats::SessionStats) -> Result<()> {
        let target = self.redo.append_lsn();
        let scn = self.scn.load(Ordering::Acquire);
        let written = self.cache.checkpoint(stats)?;
        stats.add(Stat::DbwrCheckpoints, 1);
        stats.add(Stat::DbwrCheckpointBuffersWritten, written as u64);
        let position = self.cache.unwritten_lsn().map_or(target, |u| u.min(target));
        {
            let mut control = self.control.lock();
            control.checkpoint_scn = scn;
            control.checkpoint_lsn = position;
            control.log_groups = self.redo.group_numbers();
            let _wait = stats.begin_wait(crate::stats::WaitEvent::ControlFileParallelWrite);
            control.write(self.io.as_ref(), &self.dir)?;
        }
        self.redo.checkpoint_done(position);
        Ok(())
    }
}

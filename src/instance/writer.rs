//! The database writer (DBWR) and the log writer (LGWR) threads, and checkpoints.
//!
//! The log writer runs [`RedoLog::run_writer`] until the log closes; committing sessions
//! write the log themselves when no write is under way, counted in its session.
//!
//! The database writer wakes every second. It takes an *incremental checkpoint* when the
//! checkpoint position lags more than `log_checkpoint_timeout` seconds behind the log
//! (Oracle's meaning of that parameter): it notes where the log stood at each wake, and
//! writes, oldest first, only the dirty buffers whose first change is older than where
//! the log stood `log_checkpoint_timeout` seconds ago, syncs the datafiles and moves the
//! checkpoint position there; blocks changed since stay dirty (a hot block is not
//! rewritten at every pass). The log writer asks for the same kind at every log switch,
//! with the start of the sequence it left as the target (so the group the next switch
//! reuses is free by then), and, with the precise target, while a switch waits for
//! `checkpoint not complete`. Neither waits for the log writer beyond what it can write:
//! the target is below the redo already written, and while a switch waits, a buffer
//! whose latest change is in redo not yet written is left dirty rather than waited for
//! (the log writer waits for the checkpoint: the two must not wait for each other). A
//! *full checkpoint* (every dirty buffer, after making all redo durable) is taken on
//! `ALTER SYSTEM CHECKPOINT`, buffer cache flushes and close. Either kind writes a block
//! only once its redo is on disk and records in the control file the position recovery
//! would start from. The writer holds the database weakly and stops
//! when the database goes. It is a session (`v$session` program DBW0), active while it
//! checkpoints, which counts what its checkpoints do; a checkpoint asked for elsewhere
//! (ALTER SYSTEM CHECKPOINT, a close) counts in a session of its own, program CKPT.
//!
//! ```text
//!  log:      ──────────────|────────────────────────|──────────► append LSN
//!                     checkpoint        target = the log as of timeout seconds ago
//!  DBWR:     writes buffers with first-dirty LSN < target, oldest first; position = target
//! ```
//!
//! Invariant: the control file's checkpoint position never passes a change whose block
//! is not synced in its datafile; the log reuses a file only once the position has
//! passed all of its redo. After a failed datafile sync no checkpoint completes (the
//! sync is never retried: see `BufferCache::sync_files`) and the database writer stops.

use super::DbInner;
use crate::error::Result;
use crate::redo::{Lsn, RedoLog};
use crate::stats::Stat;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Starts the log writer; returns its thread.
pub(super) fn start_log_writer(db: &DbInner, redo: Arc<RedoLog>) -> std::thread::JoinHandle<()> {
    redo.set_log_writer(db.registry.register("LGWR"));
    std::thread::Builder::new()
        .name("lioscope LGWR".into())
        .spawn(move || redo.run_writer())
        .expect("the log writer thread starts")
}

/// How often the database writer wakes to look for an incremental checkpoint to take.
const WRITER_TICK: Duration = Duration::from_secs(1);

/// Starts the database writer, a session (`v$session` program DBW0) whose thread holds
/// `db` weakly; returns its thread.
pub(super) fn start_database_writer(db: &Arc<DbInner>, redo: Arc<RedoLog>) -> std::thread::JoinHandle<()> {
    let info = db.registry.register("DBW0");
    let db = Arc::downgrade(db);
    std::thread::Builder::new()
        .name("lioscope DBW0".into())
        .spawn(move || {
            write_while_open(&db, &redo, &info);
            if let Some(db) = db.upgrade() {
                db.registry.unregister(info.sid);
            }
        })
        .expect("the database writer thread starts")
}

/// The database writer's life: a look every tick (or when a checkpoint is wanted) until
/// the database closes or is gone. It is active (for Active Session History) while it
/// checkpoints.
fn write_while_open(db: &Weak<DbInner>, redo: &RedoLog, info: &crate::stats::SessionInfo) {
    let mut log_positions = LogPositions::default();
    loop {
        let wanted = redo.wait_checkpoint_wanted(WRITER_TICK);
        let Some(db) = db.upgrade() else { return };
        if db.closing.load(Ordering::Acquire) || db.check_alive().is_err() {
            return;
        }
        log_positions.note(Instant::now(), redo.append_lsn());
        info.active.store(true, Ordering::Relaxed);
        let by_timeout = db.checkpoint_timeout().and_then(|t| log_positions.as_of(Instant::now(), t));
        let result = match wanted.max(by_timeout) {
            Some(target) if target > redo.checkpoint_lsn() => {
                let before = redo.checkpoint_lsn();
                let done = db.checkpoint_with(Scope::OlderThan(target), Some(&info.stats));
                if done.is_ok() && redo.checkpoint_lsn() > before {
                    info.stats.add(Stat::BackgroundCheckpointsCompleted, 1);
                } else if done.is_ok() {
                    // Nothing older could be written yet (what is left waits for redo
                    // a waiting switch holds back): let the log writer move first.
                    std::thread::sleep(Duration::from_millis(10));
                }
                done
            }
            _ => Ok(()),
        };
        info.active.store(false, Ordering::Relaxed);
        if let Err(e) = result {
            eprintln!("lioscope: checkpoint of {}: {e}", db.dir.display());
            std::thread::sleep(WRITER_TICK);
        }
    }
}

/// Where the log stood at each of the database writer's recent wakes, to find where it
/// stood a given time ago.
#[derive(Debug, Default)]
struct LogPositions {
    /// (time, append LSN), oldest first.
    seen: VecDeque<(Instant, Lsn)>,
}

impl LogPositions {
    fn note(&mut self, at: Instant, lsn: Lsn) {
        self.seen.push_back((at, lsn));
    }

    /// The newest position noted at least `ago` before `now` (older ones are dropped).
    fn as_of(&mut self, now: Instant, ago: Duration) -> Option<Lsn> {
        let old_enough = |(at, _): &(Instant, Lsn)| now.duration_since(*at) >= ago;
        while self.seen.len() > 1 && old_enough(&self.seen[1]) {
            self.seen.pop_front();
        }
        self.seen.front().filter(|p| old_enough(p)).map(|&(_, lsn)| lsn)
    }
}

impl DbInner {
    /// How far the checkpoint position may lag behind the log (`log_checkpoint_timeout`;
    /// `None` when 0: checkpoints only at log switches and when asked).
    fn checkpoint_timeout(&self) -> Option<Duration> {
        match self.parameters.read().get_u64(super::params::LOG_CHECKPOINT_TIMEOUT) {
            0 => None,
            seconds => Some(Duration::from_secs(seconds)),
        }
    }

    /// A full checkpoint: makes the redo so far durable (commits that did not wait for it
    /// included), writes every dirty buffer, syncs the datafiles, then records the
    /// checkpoint position (and the space map) in the control file.
    pub(crate) fn checkpoint(&self) -> Result<()> {
        self.redo.flush_all()?;
        self.checkpoint_with(Scope::Full, None)
    }

    /// A checkpoint of `scope` (an incremental one writes the buffers first changed
    /// before its target and moves the position there), counted in `by` (the database
    /// writer's statistics), or else in a session of its own (program CKPT).
    fn checkpoint_with(&self, scope: Scope, by: Option<&crate::stats::SessionStats>) -> Result<()> {
        let _one_at_a_time = self.checkpoint_lock.lock();
        if let Some(stats) = by {
            return self.checkpoint_as(stats, scope);
        }
        let session = self.registry.register("CKPT");
        let result = self.checkpoint_as(&session.stats, scope);
        self.registry.unregister(session.sid);
        result
    }

    fn checkpoint_as(&self, stats: &crate::stats::SessionStats, scope: Scope) -> Result<()> {
        let scn = self.clock.current();
        // Where the position goes when no change is left unwritten: a full checkpoint
        // covers everything appended before it began (every buffer dirty then is
        // written); an incremental one, what came before its target.
        let (bound, written) = match scope {
            Scope::Full => {
                let bound = self.redo.append_lsn();
                let written = self.cache.checkpoint(stats)?;
                stats.add(Stat::DbwrCheckpoints, 1);
                (bound, written)
            }
            Scope::OlderThan(target) => (target, self.cache.write_older_than(stats, target)?),
        };
        stats.add(Stat::DbwrCheckpointBuffersWritten, written as u64);
        let position = self.cache.unwritten_lsn().map_or(bound, |u| u.min(bound));
        if matches!(scope, Scope::OlderThan(_)) && position <= self.redo.checkpoint_lsn() {
            return Ok(()); // the position did not move: nothing to record
        }
        {
            let mut control = self.space.control.lock();
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

/// Which buffers a checkpoint writes.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// Every dirty buffer.
    Full,
    /// The dirty buffers first changed before this LSN.
    OlderThan(Lsn),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_position_as_of_a_time_ago_is_the_newest_noted_that_long_ago() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut positions = LogPositions::default();
        let ago = Duration::from_secs(3);
        assert_eq!(positions.as_of(at(0), ago), None, "nothing noted");
        positions.note(at(0), 100);
        positions.note(at(1000), 200);
        positions.note(at(2000), 300);
        assert_eq!(positions.as_of(at(2500), ago), None, "nothing noted three seconds ago yet");
        assert_eq!(positions.as_of(at(3000), ago), Some(100));
        positions.note(at(3000), 400);
        assert_eq!(positions.as_of(at(4200), ago), Some(200));
        assert_eq!(positions.seen.len(), 3, "positions older than the one used are dropped");
        assert_eq!(positions.as_of(at(9000), ago), Some(400), "an idle log: the last position noted");
    }
}

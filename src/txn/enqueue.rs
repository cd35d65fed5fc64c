//! TX enqueues: the registry of active transactions that lets a writer wait for the
//! transaction holding a row lock, and detects deadlocks among waiters.
//!
//! A row lock itself lives in the block (the row's lock byte names an ITL slot, the slot
//! names the transaction). A writer that finds a row locked by another active
//! transaction waits here, on that transaction's TX enqueue, until it ends; then it
//! reads the row again. Before it sleeps, it follows the chain "who waits for whom" from
//! the holder; if the chain comes back to the writer, waiting would never end, and the
//! writer's statement fails with [`Error::Deadlock`] instead (as Oracle's ORA-00060: the
//! statement is rolled back, the transaction stays).
//!
//! A session may bound its waits (`SessionStats::set_lock_wait_limit`, a client's
//! `lock_timeout`): a wait past the bound fails its statement with ORA-30006, the
//! transaction staying, as for a cancel (ORA-01013), seen within one recheck.
//!
//! Invariants: a transaction is registered from its first change until its end is
//! recorded in the transaction table; `waits_for` holds an edge only while its waiter
//! sleeps; every end wakes all waiters of that transaction.

use super::Xid;
use crate::error::{Error, Result};
use crate::stats::activity::WaitParameters;
use crate::stats::{SessionStats, Stat, WaitEvent};
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, HashSet};

/// How long a waiter sleeps before it looks again (a missed wake-up costs at most this).
const RECHECK: std::time::Duration = std::time::Duration::from_millis(50);

#[derive(Default)]
struct State {
    /// Active transactions and the session each belongs to.
    active: HashMap<Xid, u32>,
    /// Waiter → the transaction it waits for.
    waits_for: HashMap<Xid, Xid>,
}

/// The TX enqueues of one database.
#[derive(Default)]
pub struct Enqueues {
    state: Mutex<State>,
    ended: Condvar,
}

impl Enqueues {
    /// Registers a transaction that has just begun in session `sid`.
    pub fn register(&self, xid: Xid, sid: u32) {
        self.state.lock().active.insert(xid, sid);
    }

    /// Records the end of a transaction and wakes everyone waiting for it.
    pub fn end(&self, xid: Xid) {
        let mut state = self.state.lock();
        state.active.remove(&xid);
        state.waits_for.remove(&xid);
        drop(state);
        self.ended.notify_all();
    }

    /// The session holding the row lock session `sid` waits for, if it waits for one.
    pub fn blocking_session(&self, sid: u32) -> Option<u32> {
        let state = self.state.lock();
        let (_, holder) = state.waits_for.iter().find(|(waiter, _)| state.active.get(waiter) == Some(&sid))?;
        state.active.get(holder).copied()
    }

    /// Whether `xid` is registered as active.
    pub fn is_active(&self, xid: Xid) -> bool {
        self.state.lock().active.contains_key(&xid)
    }

    /// Waits (`enq: TX - row lock contention`) until `holder` ends. Fails with a
    /// deadlock error, without waiting, if `holder` already waits (directly or through
    /// others) for `waiter`; fails with ORA-01013 if the waiter's call is interrupted
    /// (seen within one recheck), and with ORA-30006 once the session's lock wait limit
    /// has passed.
    pub fn wait_for(&self, stats: &SessionStats, waiter: Xid, holder: Xid) -> Result<()> {
        let mut state = self.state.lock();
        if !state.active.contains_key(&holder) {
            return Ok(());
        }
        if let Some(cycle) = cycle_through(&state.waits_for, waiter, holder) {
            stats.add(Stat::EnqueueDeadlocks, 1);
            return Err(Error::Deadlock { cycle });
        }
        stats.add(Stat::EnqueueWaits, 1);
        let parameters = tx_wait_parameters(holder, state.active.get(&holder).copied());
        let _wait = stats.begin_wait_with(WaitEvent::EnqTxRowLockContention, parameters);
        state.waits_for.insert(waiter, holder);
        let started = std::time::Instant::now();
        let deadline = stats.lock_wait_limit().map(|limit| started + limit);
        while state.active.contains_key(&holder) {
            if let Err(cancelled) = stats.check_interrupt() {
                state.waits_for.remove(&waiter);
                return Err(cancelled);
            }
            let now = std::time::Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                state.waits_for.remove(&waiter);
                return Err(Error::LockWaitTimeout { waited_ms: started.elapsed().as_millis() as u64 });
            }
            let pause = deadline.map_or(RECHECK, |d| RECHECK.min(d.saturating_duration_since(now)));
            self.ended.wait_for(&mut state, pause);
        }
        state.waits_for.remove(&waiter);
        Ok(())
    }
}

/// `name|mode` of a TX enqueue held exclusive: 'T' 'X' and mode 6, Oracle's P1 of
/// `enq: TX - row lock contention` (1415053318).
const TX_NAME_MODE: u64 = (b'T' as u64) << 24 | (b'X' as u64) << 16 | 6;

/// P1–P3 of a wait for transaction `holder` (Oracle's: `name|mode`, the undo segment and
/// slot as `usn<<16 | slot`, the sequence), and the session holding it.
fn tx_wait_parameters(holder: Xid, holder_sid: Option<u32>) -> WaitParameters {
    let p2 = u64::from(holder.usn) << 16 | u64::from(holder.slot);
    WaitParameters { p: [TX_NAME_MODE, p2, u64::from(holder.wrap)], blocking_session: holder_sid }
}

/// The chain of waits from `holder` if it leads back to `waiter`, written out
/// ("1.2.3 waits for 4.5.6 waits for 1.2.3").
fn cycle_through(waits_for: &HashMap<Xid, Xid>, waiter: Xid, holder: Xid) -> Option<String> {
    let mut chain = vec![waiter, holder];
    let mut seen = HashSet::from([waiter, holder]);
    let mut at = holder;
    while let Some(&next) = waits_for.get(&at) {
        chain.push(next);
        if next == waiter {
            let text: Vec<String> = chain.iter().map(|x| format!("transaction {x}")).collect();
            return Some(text.join(" waits for "));
        }
        if !seen.insert(next) {
            return None;
        }
        at = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn xid(n: u16) -> Xid {
        Xid { usn: 1, slot: n, wrap: 1 }
    }

    #[test]
    fn a_tx_wait_names_the_enqueue_as_oracle_does() {
        let w = tx_wait_parameters(Xid { usn: 2, slot: 5, wrap: 9 }, Some(7));
        assert_eq!(w.p, [1415053318, 2 << 16 | 5, 9]);
        assert_eq!(w.blocking_session, Some(7));
    }

    #[test]
    fn waiting_for_an_ended_transaction_returns_at_once() {
        let e = Enqueues::default();
        let stats = SessionStats::default();
        e.wait_for(&stats, xid(1), xid(2)).unwrap();
        assert_eq!(stats.get(Stat::EnqueueWaits), 0);
    }

    #[test]
    fn a_waiter_wakes_when_the_holder_ends() {
        let e = Arc::new(Enqueues::default());
        e.register(xid(1), 10);
        e.register(xid(2), 11);
        let waiter = {
            let e = e.clone();
            std::thread::spawn(move || {
                let stats = SessionStats::default();
                e.wait_for(&stats, xid(2), xid(1)).unwrap();
                stats.get(Stat::EnqueueWaits)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        e.end(xid(1));
        assert_eq!(waiter.join().unwrap(), 1);
    }

    #[test]
    fn a_cycle_is_a_deadlock() {
        let e = Arc::new(Enqueues::default());
        for n in 1..=3 {
            e.register(xid(n), u32::from(n));
        }
        let sleepers: Vec<_> = [(1, 2), (2, 3)]
            .into_iter()
            .map(|(w, h)| {
                let e = e.clone();
                std::thread::spawn(move || e.wait_for(&SessionStats::default(), xid(w), xid(h)))
            })
            .collect();
        while e.state.lock().waits_for.len() < 2 {
            std::thread::yield_now();
        }
        let stats = SessionStats::default();
        let err = e.wait_for(&stats, xid(3), xid(1)).unwrap_err();
        assert!(err.to_string().contains("transaction 1.3.1 waits for transaction 1.1.1"), "{err}");
        assert_eq!(stats.get(Stat::EnqueueDeadlocks), 1);
        for n in 1..=3 {
            e.end(xid(n));
        }
        for s in sleepers {
            s.join().unwrap().unwrap();
        }
    }
}

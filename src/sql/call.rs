//! A user call: one statement run for a session, accounted as Oracle accounts a call.
//! The statement is published in `v$session` while it runs (and the snapshot it reads
//! as of, for the purge of index entries), and for Active Session History (its SQL_ID,
//! a new SQL_EXEC_ID, IN_SQL_EXECUTION); its time goes to DB time and DB CPU, and its
//! figures (with what its work areas did) to `v$sql` and `v$sql_workarea`. Its CPU is
//! read from the thread's CPU clock before and after (two system calls), unless the
//! session's `timed_statistics` is FALSE: then DB CPU does not grow, and the call asks
//! the operating system for nothing.

use super::QueryResult;
use crate::error::Result;
use crate::instance::Session;
use crate::stats::{Stat, TimeModel, osstat};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Runs statement `sql` by `run` as one user call of `session` (see the module doc).
pub(crate) fn user_call(
    session: &Session,
    sql: &str,
    run: impl FnOnce() -> Result<QueryResult>,
) -> Result<QueryResult> {
    let sql = super::user_statement::redacted(sql);
    user_call_hashed(session, &sql, crate::stats::sqlarea::sql_hash(super::statement_text(&sql)), run)
}

/// [`user_call`] of a statement whose SQL_ID hash is known (a cursor keeps it); `sql` is
/// published as it is, so a text that may hold a password comes redacted
/// ([`super::user_statement::redacted`]).
pub(crate) fn user_call_hashed(
    session: &Session,
    sql: &str,
    sql_hash: u64,
    run: impl FnOnce() -> Result<QueryResult>,
) -> Result<QueryResult> {
    let started = Instant::now();
    let stats = session.stats();
    stats.set_cpu_timed(session.times_cpu());
    let cpu_started = stats.thread_cpu_ns();
    stats.activity().begin_call(sql_hash, session.db.registry.next_sql_exec_id());
    session.call_workareas.borrow_mut().clear();
    session.info.active.store(true, Ordering::Relaxed);
    // Published before the statement takes its snapshot (which is no older), so a
    // purge of index entries deleted after that snapshot sees this reader.
    let since = session.txn.borrow().snapshot.unwrap_or_else(|| session.db.clock.current()).max(1);
    session.info.reading_since.store(since, Ordering::Release);
    {
        let mut text = session.info.sql_text.lock();
        text.clear();
        text.push_str(sql.trim());
    }
    stats.begin_interruptible_call();
    stats.add(Stat::UserCalls, 1);
    let counters_before = session.hardware_counters();
    let (gets_before, reads_before) = (stats.get(Stat::LogicalReads), stats.get(Stat::PhysicalReads));
    let db_cpu_before = stats.time(TimeModel::DbCpu);
    let result = run();
    // A serializable or read-only transaction keeps its snapshot between statements:
    // it stays published until the transaction ends.
    let kept = session.txn.borrow().snapshot.unwrap_or(0);
    session.info.reading_since.store(kept, Ordering::Release);
    let elapsed_us = started.elapsed().as_micros() as u64;
    let cpu_us = cpu_started.map_or(0, |started| osstat::thread_cpu_time_ns().saturating_sub(started) / 1000);
    stats.add_time(TimeModel::SqlExecuteElapsed, elapsed_us);
    stats.add_time_and_centiseconds(TimeModel::DbTime, Stat::DbTime, elapsed_us);
    stats.add_time_and_centiseconds(TimeModel::DbCpu, Stat::CpuUsedBySession, cpu_us);
    let execution = crate::stats::sqlarea::Execution {
        rows_processed: result.as_ref().map_or(0, |r| r.rows_affected.max(r.rows.len() as u64)),
        buffer_gets: stats.get(Stat::LogicalReads) - gets_before,
        disk_reads: stats.get(Stat::PhysicalReads) - reads_before,
        elapsed_us,
        // The statement's helper threads' CPU is in DB CPU too.
        cpu_us: stats.time(TimeModel::DbCpu) - db_cpu_before,
        counters: counters_before.and_then(|before| Some(session.hardware_counters()?.since(&before))),
        workareas: std::mem::take(&mut *session.call_workareas.borrow_mut()),
    };
    session.db.sql_area.record(super::statement_text(sql), &execution);
    session.info.active.store(false, Ordering::Relaxed);
    stats.activity().end_call();
    result
}

//! Transaction control: COMMIT, ROLLBACK [TO SAVEPOINT], SAVEPOINT, SET TRANSACTION, and
//! the statement-level atomicity every changing statement gets.
//!
//! A statement that changes data runs after an implicit savepoint; if it fails, its
//! changes alone are rolled back and the transaction goes on (as Oracle). With
//! autocommit on, a statement that succeeds is committed at once. DDL commits the
//! session's transaction first, as in Oracle, and returns only once its redo is on disk
//! ([`ddl`]), as a commit does.
//!
//! Once the instance is dead (its redo log cannot be written, or a datafile sync failed:
//! `DbInner::check_alive`), every statement and COMMIT fails, a statement that was
//! running when the log failed included, and the transaction can only be rolled back.
//! A commit's wait fails too, whatever LSN it waits for, so a transaction whose own
//! redo the log never took is never acknowledged.

use crate::error::{Error, Result};
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::stats::{Stat, WaitEvent};
use crate::txn::transaction::Isolation;
use sqlparser::ast;

/// The WRITE clause of a COMMIT (`COMMIT WRITE BATCH NOWAIT`); what it leaves out comes
/// from the session's `commit_logging` and `commit_wait`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitWrite {
    /// BATCH (true) or IMMEDIATE (false).
    pub batch: Option<bool>,
    /// NOWAIT (true) or WAIT (false).
    pub nowait: Option<bool>,
}

/// Commits the session's transaction: writes its commit record, then, unless told not
/// to wait, waits until the redo is on disk (`log file sync`), so that a commit
/// acknowledged is a commit that survives a crash.
fn commit_now(session: &Session, write: CommitWrite) -> Result<()> {
    session.db.check_alive()?;
    let had_changes = session.in_transaction();
    let ctx = session.access_context();
    session.txn.borrow_mut().commit(&ctx)?;
    if !had_changes {
        return Ok(());
    }
    let (batch_setting, nowait_setting, force_wait) = session.commit_settings();
    let batch = write.batch.unwrap_or(batch_setting);
    let nowait = !force_wait && write.nowait.unwrap_or(nowait_setting);
    let redo = &session.db.redo;
    let lsn = redo.last_appended();
    let stats = ctx.stats;
    if nowait {
        stats.add(Stat::CommitBatchNowait, 1);
        if !batch {
            redo.nudge();
        }
        return Ok(());
    }
    let started = std::time::Instant::now();
    {
        let _wait = stats.begin_wait(WaitEvent::LogFileSync);
        redo.wait_flushed(lsn, !batch)?;
    }
    let micros = started.elapsed().as_micros() as u64;
    stats.add(Stat::RedoSynchWrites, 1);
    stats.add(Stat::RedoSynchTimeUsec, micros);
    stats.add(Stat::RedoSynchTime, micros / 10_000);
    Ok(())
}

/// Runs a statement that changes data: rolled back alone if it fails, committed if it
/// succeeds and autocommit is on.
pub fn statement(session: &Session, run: impl FnOnce() -> Result<QueryResult>) -> Result<QueryResult> {
    session.db.check_alive()?;
    let ctx = session.access_context();
    let mark = session.txn.borrow().mark(&ctx)?;
    // A change the log could not take leaves its block never to be written: the
    // statement fails rather than report rows it could never store.
    match run().and_then(|result| session.db.check_alive().map(|()| result)) {
        Ok(result) => {
            if session.autocommit() && session.in_transaction() {
                commit_now(session, CommitWrite::default())?;
            }
            Ok(result)
        }
        Err(e) => {
            let mut txn = session.txn.borrow_mut();
            let undone = txn.rollback_to(&ctx, mark).and_then(|()| {
                // With autocommit, a failed statement leaves no transaction behind.
                if session.autocommit() { txn.rollback(&ctx) } else { Ok(()) }
            });
            match undone {
                Ok(()) => Err(e),
                Err(undo) => Err(Error::UndoFailed { statement: Box::new(e), undo: Box::new(undo) }),
            }
        }
    }
}

/// Commits the session's transaction before DDL.
pub fn implicit_commit(session: &Session) -> Result<()> {
    if session.in_transaction() {
        commit_now(session, CommitWrite::default())?;
    }
    Ok(())
}

/// Runs DDL: commits the session's transaction first, runs the statement, then waits
/// (`log file sync`) until every redo record appended so far is on disk, whichever
/// blocks the statement changed and on whichever thread: DDL acknowledged survives any
/// crash, as a commit does.
pub fn ddl(session: &Session, run: impl FnOnce() -> Result<QueryResult>) -> Result<QueryResult> {
    session.db.check_alive()?;
    implicit_commit(session)?;
    let result = run()?;
    {
        let _wait = session.stats().begin_wait(WaitEvent::LogFileSync);
        session.db.redo.flush_all()?;
    }
    Ok(result)
}

/// COMMIT [WRITE [IMMEDIATE | BATCH] [WAIT | NOWAIT]].
pub fn commit(session: &Session, write: CommitWrite) -> Result<QueryResult> {
    commit_now(session, write)?;
    Ok(QueryResult::message(StatementKind::Transaction, "Commit complete."))
}

pub fn rollback(session: &Session, savepoint: Option<&ast::Ident>) -> Result<QueryResult> {
    let ctx = session.access_context();
    match savepoint {
        Some(name) => {
            let name = super::bind::ident_name(name);
            session.txn.borrow_mut().rollback_to_savepoint(&ctx, &name)?;
            Ok(QueryResult::message(StatementKind::Transaction, "Rollback complete."))
        }
        None => {
            session.txn.borrow_mut().rollback(&ctx)?;
            Ok(QueryResult::message(StatementKind::Transaction, "Rollback complete."))
        }
    }
}

pub fn savepoint(session: &Session, name: &ast::Ident) -> Result<QueryResult> {
    let name = super::bind::ident_name(name);
    let ctx = session.access_context();
    session.txn.borrow_mut().savepoint(&ctx, &name)?;
    Ok(QueryResult::message(StatementKind::Transaction, "Savepoint created."))
}

/// SET TRANSACTION ISOLATION LEVEL SERIALIZABLE | READ COMMITTED, SET TRANSACTION READ
/// ONLY | READ WRITE: only as the first statement of a transaction, as in Oracle.
pub fn set_transaction(session: &Session, modes: &[ast::TransactionMode]) -> Result<QueryResult> {
    let mut txn = session.txn.borrow_mut();
    if txn.is_active() || txn.snapshot.is_some() {
        return Err(Error::Transaction {
            message: "SET TRANSACTION must be the first statement of a transaction".into(),
        });
    }
    for mode in modes {
        txn.isolation = match mode {
            ast::TransactionMode::IsolationLevel(ast::TransactionIsolationLevel::Serializable) => {
                Isolation::Serializable
            }
            ast::TransactionMode::IsolationLevel(ast::TransactionIsolationLevel::ReadCommitted) => {
                Isolation::ReadCommitted
            }
            ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadOnly) => Isolation::ReadOnly,
            ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => txn.isolation,
            other => return Err(Error::unsupported(format!("SET TRANSACTION {other}"))),
        };
    }
    Ok(QueryResult::message(StatementKind::Transaction, "Transaction set."))
}

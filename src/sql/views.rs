//! Fixed views: `v$` performance views and `user_` dictionary views (the session's
//! user's own objects), computed when a statement that reads them is planned; the views
//! of users and grants are `security_views`', PostgreSQL's catalogs `pg_catalog`'s and
//! the standard's `information_schema`'s. Reading a `v$` or `dba_` view needs SELECT
//! ANY DICTIONARY (`privileges`). Columns follow Oracle's where the concept is the
//! same; `v$mystat` and `v$sesstat` also carry the statistic NAME (Oracle users join with
//! `v$statname` for it, which works here too).

use super::fixed_rows::{Rows, cols, int, text};
use crate::access::AccessContext;
use crate::error::Result;
use crate::instance::{Modifiable, PARAMETERS, Session};
use crate::stats::{HISTOGRAM_BUCKETS, Stat, TimeModel, WaitEvent, osstat};
use crate::types::{Datum, Value};

/// The rows of fixed view `name`, or `None` if there is no such view (a table of that
/// name is then the caller's to find). A session that may not read the `V$` and `DBA_`
/// views is refused once the name is known to be one.
pub fn fixed_view(name: &str, session: &Session) -> Result<Option<Rows>> {
    let rows = match name {
        "V$STATNAME" => statname(),
        "V$MYSTAT" => sesstat(session, Some(session.sid())),
        "V$SESSTAT" => sesstat(session, None),
        "V$SYSSTAT" => sysstat(session),
        "V$SESSION" => v_session(session),
        "V$ACTIVE_SESSION_HISTORY" => active_session_history(session),
        "V$SQL" => v_sql(session),
        "V$SQL_WORKAREA" => sql_workarea(session),
        "V$SESSION_EVENT" => session_event(session),
        "V$SYSTEM_EVENT" => system_event(session),
        "V$EVENT_HISTOGRAM" => event_histogram(session, false),
        "V$EVENT_HISTOGRAM_MICRO" => event_histogram(session, true),
        "V$LATCH" => latch(session),
        "V$SYS_TIME_MODEL" => sys_time_model(session),
        "V$SESS_TIME_MODEL" => sess_time_model(session),
        "V$PARAMETER" => parameter(session),
        "V$OSSTAT" => v_osstat(),
        "V$TRANSACTION" => transaction(session),
        "V$UNDOSTAT" => undostat(session),
        "V$LOG" => v_log(session),
        "V$LOGFILE" => v_logfile(session),
        "V$RECOVERY_PROGRESS" => recovery_progress(session),
        "V$INSTANCE_RECOVERY" => instance_recovery(session),
        "V$ROLLSTAT" => rollstat(session),
        "USER_TABLES" => user_tables(session),
        "USER_TAB_COLUMNS" => user_tab_columns(session),
        "USER_INDEXES" => user_indexes(session),
        "USER_VIEWS" => user_views(session),
        "USER_SEQUENCES" => user_sequences(session),
        "USER_TAB_IDENTITY_COLS" => user_tab_identity_cols(session),
        "USER_IND_COLUMNS" => user_ind_columns(session),
        "USER_CONSTRAINTS" => user_constraints(session),
        "USER_CONS_COLUMNS" => user_cons_columns(session),
        "USER_SEGMENTS" => user_segments(session)?,
        "V$IM_SEGMENTS" => im_segments(session)?,
        "V$IM_COLUMN_LEVEL" => im_column_level(session),
        "V$INMEMORY_AREA" => inmemory_area(session),
        name => match super::security_views::view(name, session)
            .or_else(|| super::pg_catalog::view(name, session))
            .or_else(|| super::information_schema::view(name, session))
        {
            Some(rows) => rows,
            None => return Ok(None),
        },
    };
    super::privileges::require_dictionary_view(session, name)?;
    Ok(Some(rows))
}

/// Whether the session's user owns table, view, sequence or index `name` (what the
/// `USER_` views list).
fn owned(session: &Session, name: &str) -> bool {
    *session.db.catalog.owner_of(name) == *session.user()
}

/// `v$log`: the online redo log groups (one member each, never archived).
fn v_log(session: &Session) -> Rows {
    let rows = session
        .db
        .redo
        .status()
        .into_iter()
        .map(|g| {
            vec![
                int(u64::from(g.group)),
                int(1),
                int(u64::from(g.seq)),
                int(g.bytes),
                int(1),
                text("NO"),
                text(g.status),
                int(g.first_scn),
            ]
        })
        .collect();
    (cols(&["GROUP#", "THREAD#", "SEQUENCE#", "BYTES", "MEMBERS", "ARCHIVED", "STATUS", "FIRST_CHANGE#"]), rows)
}

/// `v$logfile`: the file of each online redo log group.
fn v_logfile(session: &Session) -> Rows {
    let rows = session
        .db
        .redo
        .status()
        .into_iter()
        .map(|g| vec![int(u64::from(g.group)), Datum::Null, text("ONLINE"), text(g.path.display().to_string())])
        .collect();
    (cols(&["GROUP#", "STATUS", "TYPE", "MEMBER"]), rows)
}

/// `v$recovery_progress`: what instance recovery did when the database was opened.
fn recovery_progress(session: &Session) -> Rows {
    let r = session.db.recovery.get().cloned().unwrap_or_default();
    let items: [(&str, &str, u64); 7] = [
        ("Log Files", "Files", r.log_files),
        ("Redo Applied", "Megabytes", r.redo_bytes >> 20),
        ("Redo Records Applied", "Records", r.redo_records),
        ("Data Blocks", "Blocks", r.blocks),
        ("Transactions Rolled Back", "Transactions", r.transactions_rolled_back),
        ("Roll Forward Time", "Milliseconds", r.roll_forward_ms),
        ("Elapsed Time", "Milliseconds", r.elapsed_ms),
    ];
    let rows = items
        .into_iter()
        .map(|(item, units, sofar)| vec![text("Instance Recovery"), text(item), text(units), int(sofar)])
        .collect();
    (cols(&["TYPE", "ITEM", "UNITS", "SOFAR"]), rows)
}

/// `v$instance_recovery`: what recovery would face if the instance failed now: the
/// dirty buffers it may have to read (`RECOVERY_ESTIMATED_IOS`), the redo between the
/// checkpoint position and the end of the log in 512-byte blocks (`ACTUAL_REDO_BLKS`;
/// a log switched between counts as full), one log file in blocks, and the buffers the
/// database writer's checkpoints have written.
fn instance_recovery(session: &Session) -> Rows {
    let redo = &session.db.redo;
    let block = crate::redo::LOG_BLOCK;
    let actual = redo.bytes_between(redo.checkpoint_lsn(), redo.append_lsn()).div_ceil(block);
    let written = Stat::ALL.iter().position(|s| *s == Stat::DbwrCheckpointBuffersWritten).expect("a statistic");
    let row = vec![
        int(session.db.cache.dirty_buffers() as u64),
        int(actual),
        int(redo.file_size() / block),
        int(session.db.registry.system_counters()[written]),
    ];
    (cols(&["RECOVERY_ESTIMATED_IOS", "ACTUAL_REDO_BLKS", "LOG_FILE_SIZE_REDO_BLKS", "CKPT_BLOCK_WRITES"]), vec![row])
}

fn statname() -> Rows {
    let rows = Stat::ALL
        .iter()
        .enumerate()
        .map(|(i, s)| vec![int(i as u64), text(s.name()), int(u64::from(s.class()))])
        .collect();
    (cols(&["STATISTIC#", "NAME", "CLASS"]), rows)
}

fn sesstat(session: &Session, only: Option<u32>) -> Rows {
    let mut rows = Vec::new();
    for s in session.db.registry.sessions() {
        if only.is_some_and(|sid| sid != s.sid) {
            continue;
        }
        for (i, v) in s.stats.snapshot().into_iter().enumerate() {
            rows.push(vec![int(u64::from(s.sid)), int(i as u64), text(Stat::ALL[i].name()), int(v)]);
        }
    }
    (cols(&["SID", "STATISTIC#", "NAME", "VALUE"]), rows)
}

fn sysstat(session: &Session) -> Rows {
    let totals = session.db.registry.system_counters();
    let rows = Stat::ALL
        .iter()
        .enumerate()
        .map(|(i, s)| vec![int(i as u64), text(s.name()), int(u64::from(s.class())), int(totals[i])])
        .collect();
    (cols(&["STATISTIC#", "NAME", "CLASS", "VALUE"]), rows)
}

fn v_session(session: &Session) -> Rows {
    let rows = session
        .db
        .registry
        .sessions()
        .iter()
        .map(|s| {
            let active = s.active.load(std::sync::atomic::Ordering::Relaxed);
            let event = s.stats.current_wait();
            let blocker = event.and_then(|_| session.db.enqueues.blocking_session(s.sid));
            let client = s.client.lock().clone();
            vec![
                int(u64::from(s.sid)),
                text(if s.kind == "USER" { "USER" } else { "BACKGROUND" }),
                text(s.program().to_string()),
                Some(s.user.lock().clone()).filter(|u| !u.is_empty()).map_or(Datum::Null, |u| text(u.to_string())),
                client.as_ref().map_or(Datum::Null, |c| text(c.machine.clone())),
                text(if active { "ACTIVE" } else { "INACTIVE" }),
                Datum::Date(s.logon_time),
                text(s.sql_text.lock().clone()),
                event.map_or(Datum::Null, |e| text(e.name())),
                blocker.map_or(Datum::Null, |b| int(u64::from(b))),
            ]
        })
        .collect();
    (
        cols(&[
            "SID",
            "TYPE",
            "PROGRAM",
            "USERNAME",
            "MACHINE",
            "STATUS",
            "LOGON_TIME",
            "SQL_TEXT",
            "EVENT",
            "BLOCKING_SESSION",
        ]),
        rows,
    )
}

/// `v$active_session_history`: the sampler's ring, oldest sample first. Oracle's columns,
/// NULL where Oracle shows NULL (no statement, no plan line, on CPU), then lioscope's
/// SAMPLE_INTERVAL_MS: the interval the sample was taken with (samples × interval =
/// time). SAMPLE_TIME is a DATE (whole seconds: SAMPLE_ID orders the samples within
/// one); TIME_WAITED is how long the wait had lasted when sampled, in microseconds (Oracle
/// fixes it up to the whole wait later); CURRENT_FILE# and CURRENT_BLOCK# are those of a
/// wait for a block, CURRENT_OBJ# is not known (NULL).
fn active_session_history(session: &Session) -> Rows {
    use crate::stats::activity::flags;
    let yes_no = |on: bool| text(if on { "Y" } else { "N" });
    let or_null = |v: Option<u64>| v.map_or(Datum::Null, int);
    let rows = session
        .db
        .ash
        .samples()
        .into_iter()
        .map(|s| {
            let operation = s.plan_line.and_then(|(_, code)| super::operation::Operation::from_code(code));
            let block = s.current_block();
            vec![
                int(s.sample_id),
                Datum::Date(s.sample_time),
                int(u64::from(s.sid)),
                text(if s.is_foreground() { "FOREGROUND" } else { "BACKGROUND" }),
                text(s.program.to_string()),
                s.sql.map_or(Datum::Null, |(hash, _)| text(crate::stats::sqlarea::sql_id_of_hash(hash))),
                or_null(s.sql.map(|(_, exec_id)| exec_id)),
                or_null(s.plan_line.map(|(line, _)| u64::from(line))),
                operation.map_or(Datum::Null, |op| text(op.name())),
                text(if s.event.is_some() { "WAITING" } else { "ON CPU" }),
                s.event.map_or(Datum::Null, |e| text(e.name())),
                s.event.map_or(Datum::Null, |e| text(e.class())),
                or_null(s.p.map(|p| p[0])),
                or_null(s.p.map(|p| p[1])),
                or_null(s.p.map(|p| p[2])),
                int(s.time_waited_us),
                or_null(s.blocking_session.map(u64::from)),
                Datum::Null,
                or_null(block.map(|b| b.0)),
                or_null(block.map(|b| b.1)),
                yes_no(s.has(flags::IN_PARSE)),
                yes_no(s.has(flags::IN_HARD_PARSE)),
                yes_no(s.has(flags::IN_SQL_EXECUTION)),
                yes_no(s.has(flags::IN_INMEMORY_QUERY)),
                yes_no(s.has(flags::IN_INMEMORY_POPULATE)),
                yes_no(s.has(flags::IN_INMEMORY_REPOPULATE)),
                int(u64::from(s.interval_ms)),
            ]
        })
        .collect();
    (cols(&crate::stats::ash::VIEW_COLUMNS), rows)
}

fn event_row(prefix: Vec<Value>, event: WaitEvent, e: &crate::stats::EventSnapshot) -> Vec<Value> {
    let mut row = prefix;
    row.extend([
        text(event.name()),
        text(event.class()),
        int(e.waits),
        int(e.time_waited_micro / 10_000),
        Datum::from_decimal(if e.waits == 0 {
            rust_decimal::Decimal::ZERO
        } else {
            rust_decimal::Decimal::from(e.time_waited_micro) / rust_decimal::Decimal::from(e.waits * 10_000)
        }),
        int(e.max_wait_micro / 10_000),
        int(e.time_waited_micro),
    ]);
    row
}

const EVENT_COLUMNS: [&str; 7] =
    ["EVENT", "WAIT_CLASS", "TOTAL_WAITS", "TIME_WAITED", "AVERAGE_WAIT", "MAX_WAIT", "TIME_WAITED_MICRO"];

/// `v$sql`: Oracle's columns (times in microseconds), then lioscope's performance-counter
/// totals of the executions that ran with counters on (`COUNTED_EXECUTIONS`); a counter
/// is NULL when none was counted.
fn v_sql(session: &Session) -> Rows {
    use crate::stats::hwcounters::Counter;
    let counters =
        [Counter::TaskClock, Counter::Cycles, Counter::Instructions, Counter::Branches, Counter::BranchMisses];
    let rows = session
        .db
        .sql_area
        .entries()
        .into_iter()
        .map(|e| {
            let mut row = vec![
                text(e.sql_id.clone()),
                text(e.sql_text.clone()),
                int(e.executions),
                int(e.rows_processed),
                int(e.buffer_gets),
                int(e.disk_reads),
                int(e.elapsed_us),
                int(e.cpu_us),
                int(e.counted_executions),
            ];
            row.extend(counters.iter().map(|c| e.counters.get(c).map_or(Datum::Null, |&v| int(v))));
            row
        })
        .collect();
    let names = [
        "SQL_ID",
        "SQL_TEXT",
        "EXECUTIONS",
        "ROWS_PROCESSED",
        "BUFFER_GETS",
        "DISK_READS",
        "ELAPSED_TIME",
        "CPU_TIME",
        "COUNTED_EXECUTIONS",
        "TASK_CLOCK_NS",
        "CYCLES",
        "INSTRUCTIONS",
        "BRANCHES",
        "BRANCH_MISSES",
    ];
    (cols(&names), rows)
}

/// `v$sql_workarea`: each work area of each statement in `v$sql` (one a hash join's plan
/// line), with Oracle's columns. Sizes are in bytes; `ACTIVE_TIME` is the average time
/// an execution held the area, in hundredths of a second, as in Oracle; the temporary
/// segment sizes are NULL when no execution (or not the last) spilled.
fn sql_workarea(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for e in session.db.sql_area.entries() {
        for w in &e.workareas {
            let last = &w.last;
            let some_bytes = |b: u64| if b == 0 { Datum::Null } else { int(b) };
            rows.push(vec![
                text(e.sql_id.clone()),
                int(0),
                text(last.operation_type),
                int(u64::from(w.operation_id)),
                text(last.policy),
                int(last.estimated_optimal_size),
                int(last.estimated_onepass_size),
                int(last.memory_used),
                text(last.execution_kind()),
                int(1),
                int(w.total_executions),
                int(w.optimal_executions),
                int(w.onepass_executions),
                int(w.multipasses_executions),
                int(w.total_active_time_us / w.total_executions.max(1) / 10_000),
                some_bytes(w.max_tempseg_size),
                some_bytes(last.tempseg_size),
            ]);
        }
    }
    let names = [
        "SQL_ID",
        "CHILD_NUMBER",
        "OPERATION_TYPE",
        "OPERATION_ID",
        "POLICY",
        "ESTIMATED_OPTIMAL_SIZE",
        "ESTIMATED_ONEPASS_SIZE",
        "LAST_MEMORY_USED",
        "LAST_EXECUTION",
        "LAST_DEGREE",
        "TOTAL_EXECUTIONS",
        "OPTIMAL_EXECUTIONS",
        "ONEPASS_EXECUTIONS",
        "MULTIPASSES_EXECUTIONS",
        "ACTIVE_TIME",
        "MAX_TEMPSEG_SIZE",
        "LAST_TEMPSEG_SIZE",
    ];
    (cols(&names), rows)
}

fn session_event(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for s in session.db.registry.sessions() {
        for &event in WaitEvent::ALL {
            let e = s.stats.event(event);
            if e.waits > 0 {
                rows.push(event_row(vec![int(u64::from(s.sid))], event, &e));
            }
        }
    }
    let mut names = vec!["SID"];
    names.extend(EVENT_COLUMNS);
    (cols(&names), rows)
}

fn system_event(session: &Session) -> Rows {
    let rows = WaitEvent::ALL
        .iter()
        .map(|&event| (event, session.db.registry.system_event(event)))
        .filter(|(_, e)| e.waits > 0)
        .map(|(event, e)| event_row(Vec::new(), event, &e))
        .collect();
    (cols(&EVENT_COLUMNS), rows)
}

/// Bucket k counts waits shorter than 2^k µs. The milli view folds them into Oracle's
/// millisecond buckets (waits below 1 ms count in bucket 1, below 2 ms in bucket 2, ...).
fn event_histogram(session: &Session, micro: bool) -> Rows {
    let mut rows = Vec::new();
    for &event in WaitEvent::ALL {
        let e = session.db.registry.system_event(event);
        if e.waits == 0 {
            continue;
        }
        if micro {
            for (k, &count) in e.histogram.iter().enumerate().filter(|(_, c)| **c > 0) {
                rows.push(vec![text(event.name()), int(1u64 << k), int(count)]);
            }
            continue;
        }
        let mut milli = [0u64; HISTOGRAM_BUCKETS];
        for (k, &count) in e.histogram.iter().enumerate() {
            // Waits below 2^k µs are below 2^(k-10) ms (1024 µs ~ 1 ms).
            milli[k.saturating_sub(10)] += count;
        }
        for (k, &count) in milli.iter().enumerate().filter(|(_, c)| **c > 0) {
            rows.push(vec![text(event.name()), int(1u64 << k), int(count)]);
        }
    }
    let bound = if micro { "WAIT_TIME_MICRO" } else { "WAIT_TIME_MILLI" };
    (cols(&["EVENT", bound, "WAIT_COUNT"]), rows)
}

fn latch(session: &Session) -> Rows {
    let t = session.db.cache.latch_totals();
    (
        cols(&["NAME", "CHILDREN", "GETS", "MISSES", "SLEEPS"]),
        vec![vec![text("cache buffers chains"), int(t.children), int(t.gets), int(t.misses), int(t.sleeps)]],
    )
}

fn sys_time_model(session: &Session) -> Rows {
    let rows = TimeModel::ALL.iter().map(|&m| vec![text(m.name()), int(session.db.registry.system_time(m))]).collect();
    (cols(&["STAT_NAME", "VALUE"]), rows)
}

fn sess_time_model(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for s in session.db.registry.sessions() {
        for &m in TimeModel::ALL {
            rows.push(vec![int(u64::from(s.sid)), text(m.name()), int(s.stats.time(m))]);
        }
    }
    (cols(&["SID", "STAT_NAME", "VALUE"]), rows)
}

fn parameter(session: &Session) -> Rows {
    let values = session.parameters();
    let rows = PARAMETERS
        .iter()
        .map(|p| {
            let value = values.get(p.name).to_owned();
            vec![
                text(p.name),
                text(value),
                text(if values.is_set(p.name) { "FALSE" } else { "TRUE" }),
                text(if p.modifiable == Modifiable::SessionAndSystem { "TRUE" } else { "FALSE" }),
                text(match p.modifiable {
                    Modifiable::SessionAndSystem | Modifiable::SystemImmediate => "IMMEDIATE",
                    Modifiable::SystemDeferredToOpen => "DEFERRED",
                    Modifiable::Never => "FALSE",
                }),
                text(p.description),
            ]
        })
        .collect();
    (cols(&["NAME", "VALUE", "ISDEFAULT", "ISSES_MODIFIABLE", "ISSYS_MODIFIABLE", "DESCRIPTION"]), rows)
}

fn v_osstat() -> Rows {
    let rows = osstat::osstat_rows().into_iter().map(|s| vec![text(s.name), int(s.value), text(s.comments)]).collect();
    (cols(&["STAT_NAME", "VALUE", "COMMENTS"]), rows)
}

/// Active transactions: their undo segment, slot and wrap, and the undo they used.
fn transaction(session: &Session) -> Rows {
    let rows = session
        .db
        .undo
        .transactions()
        .into_iter()
        .map(|t| {
            vec![
                int(t.xid.usn.into()),
                int(t.xid.slot.into()),
                int(t.xid.wrap.into()),
                int(t.start_scn),
                int(t.used_ublk),
                int(t.used_urec),
                text("ACTIVE"),
            ]
        })
        .collect();
    (cols(&["XIDUSN", "XIDSLOT", "XIDSQN", "START_SCN", "USED_UBLK", "USED_UREC", "STATUS"]), rows)
}

/// One row: the undo figures since the database was opened.
fn undostat(session: &Session) -> Rows {
    let s = session.db.undo.stats();
    let figures = [
        ("UNDOBLKS", s.undo_blocks),
        ("TXNCOUNT", s.transactions),
        ("MAXCONCURRENCY", s.max_concurrency),
        ("SSOLDERRCNT", s.snapshot_too_old),
        ("NOSPACEERRCNT", s.no_space),
        ("UNXPSTEALCNT", s.unexpired_steals),
        ("EXPSTEALCNT", s.expired_steals),
        ("UNXPBLKREUCNT", s.unexpired_reuse),
        ("EXPBLKREUCNT", s.expired_reuse),
    ];
    let names: Vec<&str> = figures.iter().map(|(name, _)| *name).collect();
    (cols(&names), vec![figures.iter().map(|(_, v)| int(*v)).collect()])
}

/// One row per undo segment: its size now and the extents growth added to it since open.
fn rollstat(session: &Session) -> Rows {
    let block_size = session.db.space.block_size as u64;
    let rows = session
        .db
        .undo
        .segment_usage()
        .into_iter()
        .map(|u| vec![int(u.usn.into()), int(u.extents), int(u.blocks * block_size), int(u.active), int(u.extends)])
        .collect();
    (cols(&["USN", "EXTENTS", "RSSIZE", "XACTS", "EXTENDS"]), rows)
}

/// `user_views`: each view, the text of its query and its columns' count.
fn user_views(session: &Session) -> Rows {
    let rows = session
        .db
        .catalog
        .views()
        .iter()
        .filter(|v| owned(session, &v.name))
        .map(|v| {
            vec![text(v.name.clone()), int(v.text.len() as u64), text(v.text.clone()), int(v.columns.len() as u64)]
        })
        .collect();
    (cols(&["VIEW_NAME", "TEXT_LENGTH", "TEXT", "COLUMNS"]), rows)
}

/// `user_sequences`: each sequence's options and LAST_NUMBER, the first value no cache
/// has taken.
fn user_sequences(session: &Session) -> Rows {
    use crate::expr::functions::sequence_value;
    let flag = |on: bool| text(if on { "Y" } else { "N" });
    let rows = session
        .db
        .catalog
        .sequences()
        .iter()
        .filter(|s| owned(session, &s.name))
        .map(|s| {
            vec![
                text(s.name.clone()),
                sequence_value(s.min_value),
                sequence_value(s.max_value),
                sequence_value(s.increment_by),
                flag(s.cycle),
                flag(s.order),
                int(u64::from(s.cache_size)),
                sequence_value(s.last_number),
            ]
        })
        .collect();
    let names = ["SEQUENCE_NAME", "MIN_VALUE", "MAX_VALUE", "INCREMENT_BY", "CYCLE_FLAG", "ORDER_FLAG"];
    (cols(&[&names[..], &["CACHE_SIZE", "LAST_NUMBER"]].concat()), rows)
}

fn user_tables(session: &Session) -> Rows {
    let rows = session
        .db
        .catalog
        .tables()
        .iter()
        .filter(|t| owned(session, &t.name))
        .map(|t| {
            let s = t.stats.as_ref();
            vec![
                text(t.name.clone()),
                text("USERS"),
                int(u64::from(t.pctfree)),
                int(u64::from(t.object_id)),
                Datum::Date(t.created),
                s.map_or(Datum::Null, |s| int(s.num_rows)),
                s.map_or(Datum::Null, |s| int(s.blocks)),
                s.map_or(Datum::Null, |s| int(s.avg_row_len)),
                s.map_or(Datum::Null, |s| int(s.sample_size)),
                s.map_or(Datum::Null, |s| Datum::Date(s.analyzed)),
                text(if t.inmemory.is_some() { "ENABLED" } else { "DISABLED" }),
                t.inmemory.as_ref().map_or(Datum::Null, |m| text(m.priority.name())),
                t.inmemory.as_ref().map_or(Datum::Null, |m| text(m.compression.name())),
                text(if t.compression.is_some() { "ENABLED" } else { "DISABLED" }),
                t.compression.map_or(Datum::Null, |level| text(level.name())),
            ]
        })
        .collect();
    (
        cols(&[
            "TABLE_NAME",
            "TABLESPACE_NAME",
            "PCT_FREE",
            "OBJECT_ID",
            "CREATED",
            "NUM_ROWS",
            "BLOCKS",
            "AVG_ROW_LEN",
            "SAMPLE_SIZE",
            "LAST_ANALYZED",
            "INMEMORY",
            "INMEMORY_PRIORITY",
            "INMEMORY_COMPRESSION",
            "COMPRESSION",
            "COMPRESS_FOR",
        ]),
        rows,
    )
}

/// `user_constraints`: each table's constraints, in the order they were declared.
fn user_constraints(session: &Session) -> Rows {
    use crate::catalog::ConstraintKind;
    let mut rows = Vec::new();
    for t in session.db.catalog.tables().into_iter().filter(|t| owned(session, &t.name)) {
        for c in &t.constraints {
            let condition = match &c.kind {
                ConstraintKind::NotNull => text(format!("\"{}\" IS NOT NULL", t.columns[c.columns[0]].name)),
                ConstraintKind::Check { condition } => text(condition.clone()),
                _ => Datum::Null,
            };
            let (r_constraint, delete_rule) = match &c.kind {
                ConstraintKind::ForeignKey { parent_constraint, on_delete, .. } => {
                    (text(parent_constraint.clone()), text(on_delete.name()))
                }
                _ => (Datum::Null, Datum::Null),
            };
            let index = c.kind.key_index().and_then(|k| k.index.clone()).map_or(Datum::Null, text);
            rows.push(vec![
                text(crate::catalog::SCHEMA),
                text(c.name.clone()),
                text(c.kind.code()),
                text(t.name.clone()),
                condition,
                r_constraint,
                delete_rule,
                text(if c.enabled { "ENABLED" } else { "DISABLED" }),
                text("NOT DEFERRABLE"),
                text(if c.enabled { "VALIDATED" } else { "NOT VALIDATED" }),
                text(if c.generated { "GENERATED NAME" } else { "USER NAME" }),
                index,
            ]);
        }
    }
    (
        cols(&[
            "OWNER",
            "CONSTRAINT_NAME",
            "CONSTRAINT_TYPE",
            "TABLE_NAME",
            "SEARCH_CONDITION",
            "R_CONSTRAINT_NAME",
            "DELETE_RULE",
            "STATUS",
            "DEFERRABLE",
            "VALIDATED",
            "GENERATED",
            "INDEX_NAME",
        ]),
        rows,
    )
}

/// `user_cons_columns`: the columns of each constraint (POSITION counts a key's columns
/// from 1; a CHECK's columns have none).
fn user_cons_columns(session: &Session) -> Rows {
    use crate::catalog::ConstraintKind;
    let mut rows = Vec::new();
    for t in session.db.catalog.tables().into_iter().filter(|t| owned(session, &t.name)) {
        for c in &t.constraints {
            let keyed = !matches!(c.kind, ConstraintKind::NotNull | ConstraintKind::Check { .. });
            for (p, &i) in c.columns.iter().enumerate() {
                rows.push(vec![
                    text(crate::catalog::SCHEMA),
                    text(c.name.clone()),
                    text(t.name.clone()),
                    text(t.columns[i].name.clone()),
                    if keyed { int(p as u64 + 1) } else { Datum::Null },
                ]);
            }
        }
    }
    (cols(&["OWNER", "CONSTRAINT_NAME", "TABLE_NAME", "COLUMN_NAME", "POSITION"]), rows)
}

fn user_indexes(session: &Session) -> Rows {
    let rows = session
        .db
        .catalog
        .indexes()
        .iter()
        .filter(|i| owned(session, &i.table))
        .map(|i| {
            let s = i.stats.as_ref();
            vec![
                text(i.name.clone()),
                text("NORMAL"),
                text(i.table.clone()),
                text(if i.unique { "UNIQUE" } else { "NONUNIQUE" }),
                text("VALID"),
                int(u64::from(i.pctfree)),
                int(u64::from(i.object_id)),
                s.map_or(Datum::Null, |s| int(u64::from(s.blevel))),
                s.map_or(Datum::Null, |s| int(s.leaf_blocks)),
                s.map_or(Datum::Null, |s| int(s.distinct_keys)),
                s.map_or(Datum::Null, |s| int(s.clustering_factor)),
                s.map_or(Datum::Null, |s| int(s.num_rows)),
                s.map_or(Datum::Null, |s| Datum::Date(s.analyzed)),
            ]
        })
        .collect();
    (
        cols(&[
            "INDEX_NAME",
            "INDEX_TYPE",
            "TABLE_NAME",
            "UNIQUENESS",
            "STATUS",
            "PCT_FREE",
            "OBJECT_ID",
            "BLEVEL",
            "LEAF_BLOCKS",
            "DISTINCT_KEYS",
            "CLUSTERING_FACTOR",
            "NUM_ROWS",
            "LAST_ANALYZED",
        ]),
        rows,
    )
}

fn user_ind_columns(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for i in session.db.catalog.indexes().into_iter().filter(|i| owned(session, &i.table)) {
        let Some(table) = session.db.catalog.table(&i.table) else { continue };
        for (position, &c) in i.columns.iter().enumerate() {
            rows.push(vec![
                text(i.name.clone()),
                text(i.table.clone()),
                text(table.columns.get(c).map_or_else(String::new, |c| c.name.clone())),
                int(position as u64 + 1),
                text("ASC"),
            ]);
        }
    }
    (cols(&["INDEX_NAME", "TABLE_NAME", "COLUMN_NAME", "COLUMN_POSITION", "DESCEND"]), rows)
}

fn user_tab_columns(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for t in session.db.catalog.tables().into_iter().filter(|t| owned(session, &t.name)) {
        for (i, c) in t.columns.iter().enumerate() {
            use crate::types::DataType::*;
            let named = c.data_type.to_string();
            let (ty, len, precision, scale): (&str, u64, Value, Value) = match c.data_type {
                Number { precision, scale } => (
                    "NUMBER",
                    22,
                    precision.map_or(Datum::Null, |p| int(p.into())),
                    scale.map_or(Datum::Null, |s| int(s.into())),
                ),
                Integer => ("NUMBER", 22, Datum::Null, int(0)),
                Varchar2 { max_bytes } => ("VARCHAR2", max_bytes.into(), Datum::Null, Datum::Null),
                Char { len } => ("CHAR", len.into(), Datum::Null, Datum::Null),
                Date => ("DATE", 7, Datum::Null, Datum::Null),
                // As Oracle shows them: the type with its precisions (TIMESTAMP(6),
                // INTERVAL DAY(2) TO SECOND(6)), the leading field's digits in
                // DATA_PRECISION and the fraction's in DATA_SCALE.
                Timestamp { precision } => (&named, 11, Datum::Null, int(precision.into())),
                IntervalYearMonth { year_precision } => (&named, 5, int(year_precision.into()), int(0)),
                IntervalDaySecond { day_precision, second_precision } => {
                    (&named, 11, int(day_precision.into()), int(second_precision.into()))
                }
            };
            rows.push(vec![
                text(t.name.clone()),
                text(c.name.clone()),
                text(ty),
                int(len),
                precision,
                scale,
                text(if c.nullable { "Y" } else { "N" }),
                int(i as u64 + 1),
            ]);
            let row = rows.last_mut().expect("just pushed");
            match t.stats.as_ref().and_then(|s| s.columns.get(i).map(|c| (s, c))) {
                Some((s, c)) => row.extend([
                    int(c.num_distinct),
                    c.low_value.as_ref().map_or(Datum::Null, |v| v.to_value()),
                    c.high_value.as_ref().map_or(Datum::Null, |v| v.to_value()),
                    int(c.num_nulls),
                    int(c.avg_col_len),
                    int(s.sample_size),
                    Datum::Date(s.analyzed),
                ]),
                None => row.extend(std::iter::repeat_n(Datum::Null, 7)),
            }
            let identity = t.identity.as_ref().is_some_and(|id| id.column == i);
            row.push(text(if identity { "YES" } else { "NO" }));
        }
    }
    (
        cols(&[
            "TABLE_NAME",
            "COLUMN_NAME",
            "DATA_TYPE",
            "DATA_LENGTH",
            "DATA_PRECISION",
            "DATA_SCALE",
            "NULLABLE",
            "COLUMN_ID",
            "NUM_DISTINCT",
            "LOW_VALUE",
            "HIGH_VALUE",
            "NUM_NULLS",
            "AVG_COL_LEN",
            "SAMPLE_SIZE",
            "LAST_ANALYZED",
            "IDENTITY_COLUMN",
        ]),
        rows,
    )
}

/// `user_tab_identity_cols`: each identity column, how it is generated and its sequence.
fn user_tab_identity_cols(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for t in session.db.catalog.tables().into_iter().filter(|t| owned(session, &t.name)) {
        let Some(id) = &t.identity else { continue };
        let sequence = session.db.catalog.sequence(&id.sequence);
        let options = sequence.map_or(String::new(), |s| {
            format!(
                "INCREMENT BY: {}, MAX_VALUE: {}, MIN_VALUE: {}, CYCLE_FLAG: {}, CACHE_SIZE: {}, ORDER_FLAG: {}, \
                 LAST_NUMBER: {}",
                s.increment_by,
                s.max_value,
                s.min_value,
                if s.cycle { "Y" } else { "N" },
                s.cache_size,
                if s.order { "Y" } else { "N" },
                s.last_number
            )
        });
        rows.push(vec![
            text(t.name.clone()),
            text(t.columns[id.column].name.clone()),
            text(id.generation()),
            text(id.sequence.clone()),
            text(if id.on_null { "YES" } else { "NO" }),
            text(options),
        ]);
    }
    let names = ["TABLE_NAME", "COLUMN_NAME", "GENERATION_TYPE", "SEQUENCE_NAME", "DEFAULT_ON_NULL"];
    (cols(&[&names[..], &["IDENTITY_OPTIONS"]].concat()), rows)
}

/// The In-Memory Area (no row while `inmemory_size` is 0): one pool of 64 KiB extents
/// holding the units' large arrays; FALLBACK_BYTES counts arrays that found no room in
/// it and went to the heap, PRE_PAGE_STATUS whether its pages are populated ahead of use.
fn inmemory_area(session: &Session) -> Rows {
    let rows = session
        .db
        .inmemory
        .area_figures()
        .map(|f| {
            vec![
                text("64KB POOL"),
                int(f.alloc_bytes),
                int(f.used_bytes),
                int(f.free_runs),
                int(f.fallback_bytes),
                text(f.pre_page.name()),
            ]
        })
        .into_iter()
        .collect();
    (cols(&["POOL", "ALLOC_BYTES", "USED_BYTES", "FREE_RUNS", "FALLBACK_BYTES", "PRE_PAGE_STATUS"]), rows)
}

/// Reads each table's segment header with a consistent get, as Oracle's dictionary does.
/// The tables in the column store: how far populated, the memory their units take.
/// BYTES is the table's data below the high-water mark, BYTES_NOT_POPULATED the part of
/// it no populated unit holds.
fn im_segments(session: &Session) -> Result<Rows> {
    let ctx: AccessContext<'_> = session.access_context();
    let mut rows = Vec::new();
    let block_size = session.db.space.block_size as u64;
    for segment in session.db.inmemory.segments() {
        let Some(table) = session.db.catalog.table(&segment.table.name) else { continue };
        let map = crate::access::segments::read_map(&ctx, &table)?;
        let blocks = u64::from(map.hwm.saturating_sub(1));
        let sum = segment.summary();
        let status = if sum.out_of_memory && !sum.busy {
            "OUT OF MEMORY"
        } else if sum.completed(blocks, u64::from(segment.planned_positions())) {
            "COMPLETED"
        } else {
            "STARTED"
        };
        rows.push(vec![
            text(table.name.clone()),
            text(status),
            int(blocks * block_size),
            int(sum.bytes),
            int(blocks.saturating_sub(sum.blocks) * block_size),
            text(segment.spec.priority.name()),
            text(segment.spec.compression.name()),
            int(sum.units),
            int(sum.rows),
            int(sum.journaled_blocks),
        ]);
    }
    rows.sort_by(|a, b| a[0].sql_cmp(&b[0]).ok().flatten().unwrap_or(std::cmp::Ordering::Equal));
    Ok((
        cols(&[
            "SEGMENT_NAME",
            "POPULATE_STATUS",
            "BYTES",
            "INMEMORY_SIZE",
            "BYTES_NOT_POPULATED",
            "INMEMORY_PRIORITY",
            "INMEMORY_COMPRESSION",
            "CUS",
            "POPULATED_ROWS",
            "JOURNALED_BLOCKS",
        ]),
        rows,
    ))
}

/// Per table column in the column store: how its units encode it, and the memory they
/// take (summed over the populated units).
fn im_column_level(session: &Session) -> Rows {
    let mut rows = Vec::new();
    for segment in session.db.inmemory.segments() {
        let units = segment.units.read().clone();
        for (c, column) in segment.table.columns.iter().enumerate() {
            let mut encodings: Vec<String> = Vec::new();
            let (mut bytes, mut nulls) = (0u64, 0u64);
            for unit in &units {
                let state = unit.state.lock();
                let Some(imcu) = &state.imcu else { continue };
                if let Some(col) = imcu.columns.get(c).and_then(Option::as_ref) {
                    bytes += col.unit.bytes() as u64;
                    nulls += col.unit.nulls() as u64;
                    let e = col.unit.encoding().to_string();
                    if !encodings.contains(&e) {
                        encodings.push(e);
                    }
                }
            }
            let excluded = segment.spec.excluded.contains(&c);
            rows.push(vec![
                text(segment.table.name.clone()),
                text(column.name.clone()),
                text(if excluded { "NO INMEMORY" } else { "DEFAULT" }),
                if encodings.is_empty() { Datum::Null } else { text(encodings.join(", ")) },
                int(bytes),
                int(nulls),
            ]);
        }
    }
    (cols(&["TABLE_NAME", "COLUMN_NAME", "INMEMORY_COMPRESSION", "ENCODINGS", "INMEMORY_SIZE", "NULLS"]), rows)
}

fn user_segments(session: &Session) -> Result<Rows> {
    let ctx: AccessContext<'_> = session.access_context();
    let mut rows = Vec::new();
    for t in session.db.catalog.tables().into_iter().filter(|t| owned(session, &t.name)) {
        let map = crate::access::segments::read_map(&ctx, &t)?;
        let extents: u32 = map.runs.iter().map(|r| r.blocks / session.db.space.extent_blocks).sum();
        rows.push(vec![
            text(t.name.clone()),
            text("TABLE"),
            text("USERS"),
            int(u64::from(map.allocated) * session.db.space.block_size as u64),
            int(map.allocated.into()),
            int(extents.into()),
            int(map.hwm.into()),
        ]);
    }
    Ok((
        cols(&["SEGMENT_NAME", "SEGMENT_TYPE", "TABLESPACE_NAME", "BYTES", "BLOCKS", "EXTENTS", "BLOCKS_BELOW_HWM"]),
        rows,
    ))
}

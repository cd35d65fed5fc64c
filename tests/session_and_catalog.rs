//! The dictionary under concurrent DDL, and what a session counts: concurrent CREATEs all
//! reach `dictionary.json`; a CREATE whose dictionary write fails leaves no table behind;
//! parameters report the block size the database was created with; many short statements
//! still add up to the session's CPU and DB time statistics.

mod common;

use common::*;
use std::sync::{Arc, Barrier};

const BS: usize = 2048;

/// Names of the tables the threads of `concurrent_creates_all_reach_the_dictionary` create.
fn table_name(thread: usize, n: usize) -> String {
    format!("T{thread}_{n}")
}

#[test]
fn concurrent_creates_all_reach_the_dictionary() {
    const THREADS: usize = 8;
    const TABLES: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let db = create(&db_dir, options(BS, "2M"));
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, barrier) = (db.clone(), barrier.clone());
            std::thread::spawn(move || {
                let s = db.session();
                barrier.wait();
                for n in 0..TABLES {
                    exec(&s, &format!("CREATE TABLE {} (id INTEGER)", table_name(t, n)));
                    exec(&s, &format!("INSERT INTO {} VALUES ({t})", table_name(t, n)));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a creating thread panicked");
    }
    drop(db);

    let db = open(&db_dir, lioscope::DatabaseOptions::default());
    let s = db.session();
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables"), (THREADS * TABLES) as i64);
    for t in 0..THREADS {
        for n in 0..TABLES {
            assert_eq!(scalar(&s, &format!("SELECT id FROM {}", table_name(t, n))), t.to_string());
        }
    }
    assert!(!db_dir.join("dictionary.json.tmp").exists(), "no temporary dictionary is left behind");
}

#[test]
fn a_create_whose_dictionary_write_fails_leaves_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let db = create(&db_dir, options(BS, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE kept (id INTEGER)");
    // A directory where the temporary dictionary goes makes the next write fail.
    let blocker = db_dir.join("dictionary.json.tmp");
    std::fs::create_dir(&blocker).unwrap();
    let e = fail(&s, "CREATE TABLE lost (id INTEGER)");
    assert!(matches!(e, lioscope::Error::Io { .. }), "{e:?}");
    assert!(matches!(fail(&s, "SELECT COUNT(*) FROM lost"), lioscope::Error::UnknownName { .. }));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables"), 1);
    // The failed CREATE gave its extent back: creating the table again reuses it, so the
    // datafile does not grow.
    let datafile = db_dir.join("users01.dbf");
    let file_len = || std::fs::metadata(&datafile).unwrap().len();
    let len_after_failure = file_len();

    std::fs::remove_dir(&blocker).unwrap();
    exec(&s, "CREATE TABLE lost (id INTEGER)");
    assert_eq!(file_len(), len_after_failure, "the failed CREATE's extent was not freed");
    drop(s);
    drop(db);
    let db = open(&db_dir, lioscope::DatabaseOptions::default());
    assert_eq!(int(&db.session(), "SELECT COUNT(*) FROM user_tables"), 2);
}

#[test]
fn parameters_report_the_block_size_the_database_was_created_with() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let db = create(&db_dir, options(4096, "2M"));
    let s = db.session();
    assert_eq!(s.parameters().get("db_block_size"), "4096");
    assert!(!s.parameters().is_set("db_block_size"), "a value fixed at creation is not an explicit setting");
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 8");
    assert_eq!(s.parameters().get("db_block_size"), "4096");
    drop(s);
    drop(db);
    assert_eq!(open(&db_dir, lioscope::DatabaseOptions::default()).session().parameters().get("db_block_size"), "4096");
}

/// `CPU used by this session` and `DB time` are the whole centiseconds of the time model's
/// `DB CPU` and `DB time` microseconds, however short each statement was.
#[test]
fn short_statements_add_up_to_cpu_and_db_time() {
    use lioscope::stats::TimeModel;
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir.path().join("db"), options(BS, "2M"));
    let s = db.session();
    // Each of these takes far less than a centisecond; run them until 3 cs of CPU are spent.
    let mut statements = 0;
    while s.stats().time(TimeModel::DbCpu) < 30_000 {
        exec(&s, "SELECT COUNT(*) FROM dual");
        statements += 1;
    }
    // Each figure is read between statements, as is v$mystat: a statement counts its time
    // only when it ends.
    let mystat = |name: &str| int(&s, &format!("SELECT value FROM v$mystat WHERE name = '{name}'")) as u64;
    let cpu_us = s.stats().time(TimeModel::DbCpu);
    let cpu_cs = mystat("CPU used by this session");
    assert_eq!(cpu_cs, cpu_us / 10_000, "CPU used by this session after {statements} statements of {cpu_us} µs");
    assert!(cpu_cs >= 3);
    let db_time_us = s.stats().time(TimeModel::DbTime);
    assert_eq!(mystat("DB time"), db_time_us / 10_000, "DB time after {db_time_us} µs");
}

/// `timed_statistics = FALSE` stops a session's calls reading their thread's CPU clock:
/// its DB CPU stays where it was while DB time goes on; another session's is still timed;
/// TRUE times the next call again.
#[test]
fn timed_statistics_false_stops_db_cpu_for_the_session_alone() {
    use lioscope::stats::TimeModel;
    const BUSY: &str = "SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 200000";
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir.path().join("db"), options(BS, "2M"));
    let (s, other) = (db.session(), db.session());
    assert_eq!(s.parameters().get("timed_statistics"), "TRUE");
    exec(&s, "ALTER SESSION SET timed_statistics = FALSE");
    assert_eq!(s.parameters().get("timed_statistics"), "FALSE");
    let (cpu, db_time) = (s.stats().time(TimeModel::DbCpu), s.stats().time(TimeModel::DbTime));
    let other_cpu = other.stats().time(TimeModel::DbCpu);
    for _ in 0..3 {
        exec(&s, BUSY);
        exec(&other, BUSY);
    }
    assert_eq!(s.stats().time(TimeModel::DbCpu), cpu, "DB CPU of the untimed session");
    assert!(s.stats().time(TimeModel::DbTime) > db_time, "DB time goes on");
    assert!(other.stats().time(TimeModel::DbCpu) > other_cpu, "the other session is still timed");
    exec(&s, "ALTER SESSION SET timed_statistics = TRUE");
    exec(&s, BUSY);
    assert!(s.stats().time(TimeModel::DbCpu) > cpu, "timed again");
    let refused = error(&s, "ALTER SESSION SET timed_statistics = maybe");
    assert!(refused.contains("timed_statistics") && refused.contains("TRUE or FALSE"), "{refused}");
}

#[test]
fn statistics_level_basic_turns_timed_statistics_off_unless_it_is_set() {
    use lioscope::stats::TimeModel;
    const BUSY: &str = "SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 200000";
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir.path().join("db"), options(BS, "2M"));
    let timed = |s: &lioscope::Session| {
        let before = s.stats().time(TimeModel::DbCpu);
        exec(s, BUSY);
        exec(s, BUSY);
        s.stats().time(TimeModel::DbCpu) > before
    };
    let (s, other) = (db.session(), db.session());
    exec(&s, "ALTER SESSION SET statistics_level = basic");
    assert_eq!(s.parameters().get("timed_statistics"), "FALSE", "derived from the session's level");
    assert!(!timed(&s), "DB CPU of a basic session");
    assert!(timed(&other), "the other session keeps its level and its timing");
    // Set explicitly, the parameter wins over the level.
    exec(&s, "ALTER SESSION SET timed_statistics = TRUE");
    assert!(timed(&s), "timed when set, at basic");

    // The same at the system's level: a level set for all, then the parameter itself.
    exec(&other, "ALTER SYSTEM SET statistics_level = basic");
    let fresh = db.session();
    assert_eq!(fresh.parameters().get("timed_statistics"), "FALSE");
    assert!(!timed(&fresh), "a new session under the system's basic level");
    let typical = db.session();
    exec(&typical, "ALTER SESSION SET statistics_level = typical");
    assert!(timed(&typical), "a session's own level under the system's basic one");
    assert!(timed(&s), "a session's own setting outlives the system's change");
    exec(&other, "ALTER SYSTEM SET timed_statistics = TRUE");
    assert!(timed(&fresh), "the system's explicit TRUE wins over its level");
    exec(&other, "ALTER SESSION SET timed_statistics = FALSE");
    exec(&other, "ALTER SYSTEM SET statistics_level = typical");
    assert!(!timed(&other), "and a session's explicit FALSE over the system's");
}

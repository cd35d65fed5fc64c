//! What is stored survives closing and reopening the database: rows (byte for byte), the
//! dictionary, the space map (dropped and truncated segments give their extents back) and
//! parameters set with ALTER SYSTEM.

mod common;

use common::*;
use lioscope::stats::Stat;
use lioscope::types::Value;
use lioscope::{Database, DatabaseOptions, Error, Session};
use std::path::Path;

const BS: usize = 2048;

/// The control file as JSON.
fn control(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("control.json")).unwrap()).unwrap()
}

fn free_extents(dir: &Path) -> usize {
    control(dir)["datafiles"][0]["free_extents"].as_array().unwrap().len()
}

fn allocated_blocks(dir: &Path) -> u64 {
    control(dir)["datafiles"][0]["allocated_blocks"].as_u64().unwrap()
}

fn datafile_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("users01.dbf")).unwrap().len()
}

/// Rows of a table in id order, with column names.
fn snapshot(s: &Session, table: &str) -> (Vec<String>, Vec<Vec<Value>>) {
    let r = exec(s, &format!("SELECT * FROM {table} ORDER BY id"));
    (r.columns, r.rows)
}

/// (name, extents, blocks, blocks below HWM) of every segment.
fn segments(s: &Session) -> Vec<(String, i64, i64, i64)> {
    rows(s, "SELECT segment_name, extents, blocks, blocks_below_hwm FROM user_segments ORDER BY segment_name")
        .into_iter()
        .map(|r| {
            let n = |i: usize| r[i].to_string().parse::<i64>().unwrap();
            (r[0].to_string(), n(1), n(2), n(3))
        })
        .collect()
}

const CREATE_MIXED: &str = "CREATE TABLE mixed (id INTEGER NOT NULL, amount NUMBER(12,4), big NUMBER, \
     name VARCHAR2(60), code CHAR(4), born DATE)";

/// Hand-picked values at the edges, then generated rows.
fn fill_mixed(s: &Session) {
    exec(
        s,
        "INSERT INTO mixed VALUES \
         (1, 12345678.1234, 12345678901234567890123.45, 'plain', 'ab', '2020-02-29 13:14:15'), \
         (2, -0.0001, -1, 'naïve café – ünïcödé ✓', 'x', '1970-01-01'), \
         (3, 0, 0.000000000000000001, 'it''s quoted, \"double\" too', NULL, '9999-12-31 23:59:59'), \
         (4, NULL, NULL, NULL, NULL, NULL), \
         (5, -99999999.9999, 9223372036854775807, RPAD('z', 60, 'y'), 'abcd', '1900-01-01 00:00:01'), \
         (6, 3.14159, -9223372036854775808, '   leading and trailing   ', '  ', '2000-01-01 12:00:00')",
    );
    exec(
        s,
        "INSERT INTO mixed SELECT LEVEL + 100, LEVEL / 7, LEVEL * 1000003, 'generated row ' || LEVEL, \
         'c' || MOD(LEVEL, 100), TO_DATE('2001-01-01', 'YYYY-MM-DD') + LEVEL FROM dual CONNECT BY LEVEL <= 3000",
    );
}

#[test]
fn rows_survive_close_and_reopen_byte_for_byte() {
    let (_dir, db_dir, db) = temp_db(options(BS, "2M"));
    let s = db.session();
    exec(&s, CREATE_MIXED);
    fill_mixed(&s);
    let before = snapshot(&s, "mixed");
    let aggregates =
        rows(&s, "SELECT COUNT(*), SUM(id), SUM(amount), SUM(big), MIN(born), MAX(born), MAX(name) FROM mixed");
    assert_eq!(before.1.len(), 3006);
    // Spot checks of what was stored.
    let by_id = |id: i64| before.1.iter().find(|r| r[0].to_string() == id.to_string()).unwrap();
    assert_eq!(by_id(1)[1].to_string(), "12345678.1234");
    assert_eq!(by_id(1)[2].to_string(), "12345678901234567890123.45");
    assert_eq!(by_id(2)[3].to_string(), "naïve café – ünïcödé ✓");
    assert_eq!(by_id(2)[1].to_string(), "-.0001");
    assert_eq!(by_id(3)[3].to_string(), "it's quoted, \"double\" too");
    assert_eq!(by_id(3)[5].to_string(), "9999-12-31 23:59:59");
    assert_eq!(by_id(5)[1].to_string(), "-99999999.9999");
    assert_eq!(by_id(6)[1].to_string(), "3.1416");
    assert_eq!(by_id(6)[3].to_string(), "   leading and trailing   ");
    assert_eq!(by_id(2)[4].to_string(), "x   ");
    assert!(by_id(4)[1..].iter().all(Value::is_null));
    // Dropping every handle closes the database.
    drop(s);
    drop(db);
    for round in 0..2 {
        let db = open(&db_dir, options(BS, "2M"));
        let s = db.session();
        assert_eq!(snapshot(&s, "mixed"), before, "round {round}: rows changed across reopen");
        assert_eq!(
            rows(&s, "SELECT COUNT(*), SUM(id), SUM(amount), SUM(big), MIN(born), MAX(born), MAX(name) FROM mixed"),
            aggregates
        );
        // Nothing was read from the cache of the previous open: every block came from disk.
        assert!(s.stats().get(Stat::PhysicalReads) > 0);
        assert_eq!(
            scalar(&s, "SELECT data_type FROM user_tab_columns WHERE table_name = 'MIXED' AND column_name = 'CODE'"),
            "CHAR"
        );
    }
}

#[test]
fn explicit_close_checkpoint_and_a_lingering_session() {
    let (_dir, db_dir, db) = temp_db(options(BS, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, v VARCHAR2(30))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'v' || LEVEL FROM dual CONNECT BY LEVEL <= 500");
    // close() checkpoints: the files hold everything, no dirty buffer is left.
    db.close().unwrap();
    assert_eq!(db.cache_summary().dirty, 0);
    // The database is still usable after close().
    exec(&s, "INSERT INTO t SELECT LEVEL + 500, 'v' || (LEVEL + 500) FROM dual CONNECT BY LEVEL <= 500");
    exec(&s, "ALTER SYSTEM CHECKPOINT");
    assert_eq!(db.cache_summary().dirty, 0);
    exec(&s, "INSERT INTO t VALUES (1001, 'last')");
    // Dropping the Database handle while a session lives keeps it open.
    drop(db);
    assert_eq!(count(&s, "t"), 1001);
    exec(&s, "INSERT INTO t VALUES (1002, 'after the handle went')");
    drop(s);

    let db = open(&db_dir, options(BS, "2M"));
    let s = db.session();
    assert_eq!(count_and_id_sum(&s, "t"), ids_up_to(1002));
    assert_eq!(scalar(&s, "SELECT v FROM t WHERE id = 1002"), "after the handle went");
    assert_eq!(scalar(&s, "SELECT v FROM t WHERE id = 777"), "v777");
}

#[test]
fn several_tables_with_interleaved_extents_survive() {
    // 16-block extents, so the tables' extents interleave in the datafile.
    let opts = options_with_extent(BS, 16 * BS, "2M");
    let (_dir, db_dir, db) = temp_db(opts.clone());
    let s = db.session();
    exec(&s, "CREATE TABLE a (id INTEGER, pad VARCHAR2(100))");
    exec(&s, "CREATE TABLE b (id INTEGER, d DATE, n NUMBER(10,3))");
    exec(&s, "CREATE TABLE c (id INTEGER, s VARCHAR2(4000))");
    exec(&s, "CREATE TABLE d (id INTEGER)");
    for round in 0..5 {
        let base = round * 1000;
        exec(
            &s,
            &format!("INSERT INTO a SELECT {base} + LEVEL, RPAD('a', 100, 'a') FROM dual CONNECT BY LEVEL <= 300"),
        );
        exec(
            &s,
            &format!(
                "INSERT INTO b SELECT {base} + LEVEL, TO_DATE('2020-01-01', 'YYYY-MM-DD') + LEVEL, LEVEL / 8 \
                 FROM dual CONNECT BY LEVEL <= 400"
            ),
        );
        exec(
            &s,
            &format!(
                "INSERT INTO c SELECT {base} + LEVEL, RPAD('c', 300 + LEVEL, 'c') FROM dual CONNECT BY LEVEL <= 40"
            ),
        );
        exec(&s, &format!("INSERT INTO d SELECT {base} + LEVEL FROM dual CONNECT BY LEVEL <= 200"));
    }
    let expected_segments = segments(&s);
    assert!(
        expected_segments.iter().filter(|x| x.0 != "D").all(|(_, extents, _, _)| *extents >= 2),
        "{expected_segments:?}"
    );
    let names = ["a", "b", "c", "d"];
    let expected = names.map(|t| snapshot(&s, t));
    drop(s);
    drop(db);
    let db = open(&db_dir, opts);
    let s = db.session();
    for (t, want) in names.iter().zip(&expected) {
        assert_eq!(&snapshot(&s, t), want, "table {t} changed across reopen");
    }
    assert_eq!(segments(&s), expected_segments, "segments changed across reopen");
    assert_eq!(count(&s, "a"), 1500);
    assert_eq!(count(&s, "b"), 2000);
    assert_eq!(count(&s, "c"), 200);
    assert_eq!(count(&s, "d"), 1000);
    // The tables still grow correctly after the reopen.
    exec(&s, "INSERT INTO d SELECT 10000 + LEVEL FROM dual CONNECT BY LEVEL <= 100");
    assert_eq!(count(&s, "d"), 1100);
    assert_eq!(count(&s, "a"), 1500);
}

#[test]
fn dropped_table_is_gone_after_reopen_and_its_space_is_reused() {
    let opts = options_with_extent(BS, 16 * BS, "2M");
    let (_dir, db_dir, db) = temp_db(opts.clone());
    let s = db.session();
    exec(&s, "CREATE TABLE old_t (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "CREATE TABLE keep (id INTEGER, v VARCHAR2(20))");
    exec(&s, "INSERT INTO old_t SELECT LEVEL, RPAD('o', 200, 'o') FROM dual CONNECT BY LEVEL <= 1000");
    exec(&s, "INSERT INTO keep SELECT LEVEL, 'keep ' || LEVEL FROM dual CONNECT BY LEVEL <= 300");
    let keep_rows = snapshot(&s, "keep");
    let old_extents = segments(&s).iter().find(|x| x.0 == "OLD_T").unwrap().1;
    assert!(old_extents >= 5, "old_t has several extents: {old_extents}");
    exec(&s, "DROP TABLE old_t");
    let e = fail(&s, "SELECT COUNT(*) FROM old_t");
    assert!(matches!(&e, Error::UnknownName { name, .. } if name == "OLD_T"), "{e:?}");
    db.close().unwrap();
    let old_len = datafile_len(&db_dir);
    let old_allocated = allocated_blocks(&db_dir);
    assert_eq!(free_extents(&db_dir) as i64, old_extents, "the dropped table's extents are free");
    drop(s);
    drop(db);
    {
        let db = open(&db_dir, opts.clone());
        let s = db.session();
        let e = fail(&s, "SELECT COUNT(*) FROM old_t");
        assert!(matches!(&e, Error::UnknownName { kind: "table or view", name, .. } if name == "OLD_T"), "{e:?}");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'OLD_T'"), 0);
        assert_eq!(segments(&s).len(), 1);
        // The name can be used again, and the new table takes the freed extents.
        exec(&s, "CREATE TABLE old_t (id INTEGER, note VARCHAR2(200))");
        exec(&s, "CREATE TABLE fresh (id INTEGER, pad VARCHAR2(200))");
        // Together as large as the dropped table.
        exec(&s, "INSERT INTO old_t SELECT LEVEL, RPAD('n', 200, 'n') FROM dual CONNECT BY LEVEL <= 350");
        exec(&s, "INSERT INTO fresh SELECT LEVEL, RPAD('f', 200, 'f') FROM dual CONNECT BY LEVEL <= 350");
        let segs = segments(&s);
        let used: i64 = segs.iter().filter(|x| x.0 != "KEEP").map(|x| x.1).sum();
        assert!(used <= old_extents, "new tables use {used} extents, the dropped one freed {old_extents}: {segs:?}");
        // No row of the dropped table shows up in the blocks reused.
        assert_eq!(count(&s, "old_t"), 350);
        assert_eq!(int(&s, "SELECT COUNT(*) FROM old_t WHERE note = RPAD('n', 200, 'n')"), 350);
        assert_eq!(count(&s, "fresh"), 350);
        assert_eq!(snapshot(&s, "keep"), keep_rows);
    }
    // The datafile did not grow: the space came from the dropped table.
    assert_eq!(datafile_len(&db_dir), old_len, "the datafile grew although freed extents were available");
    assert_eq!(allocated_blocks(&db_dir), old_allocated);
    let db = open(&db_dir, opts);
    let s = db.session();
    assert_eq!(count_and_id_sum(&s, "old_t"), ids_up_to(350));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM old_t WHERE note = RPAD('n', 200, 'n')"), 350);
    assert_eq!(count(&s, "fresh"), 350);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM fresh WHERE pad = RPAD('f', 200, 'f')"), 350);
    assert_eq!(snapshot(&s, "keep"), keep_rows);
}

#[test]
fn drop_and_create_in_one_open_reuses_space_and_survives_reopen() {
    let opts = options_with_extent(BS, 16 * BS, "2M");
    let (_dir, db_dir, db) = temp_db(opts.clone());
    let s = db.session();
    exec(&s, "CREATE TABLE a (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "INSERT INTO a SELECT LEVEL, RPAD('a', 200, 'a') FROM dual CONNECT BY LEVEL <= 800");
    // The first extent of the file holds its header; the rest is A's.
    let allocated = 16 + 16 * segments(&s)[0].1 as u64;
    // Every block of A is still dirty in the cache when it is dropped.
    exec(&s, "DROP TABLE a");
    exec(&s, "CREATE TABLE b (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "INSERT INTO b SELECT LEVEL, RPAD('b', 200, 'b') FROM dual CONNECT BY LEVEL <= 800");
    db.close().unwrap();
    assert_eq!(allocated_blocks(&db_dir), allocated, "B should have reused A's extents");
    assert_eq!(count(&s, "b"), 800);
    drop(s);
    drop(db);
    let db = open(&db_dir, opts);
    let s = db.session();
    assert_eq!(count_and_id_sum(&s, "b"), ids_up_to(800));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM b WHERE pad = RPAD('b', 200, 'b')"), 800);
}

#[test]
fn truncate_survives_reopen_and_gives_extents_back() {
    let opts = options_with_extent(BS, 16 * BS, "2M");
    let (_dir, db_dir, db) = temp_db(opts.clone());
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "CREATE TABLE other (id INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('t', 200, 't') FROM dual CONNECT BY LEVEL <= 1000");
    exec(&s, "INSERT INTO other SELECT LEVEL FROM dual CONNECT BY LEVEL <= 100");
    let extents_before = segments(&s).iter().find(|x| x.0 == "T").unwrap().1;
    assert!(extents_before > 3);
    let r = exec(&s, "TRUNCATE TABLE t");
    assert_eq!(r.message.as_deref(), Some("Table truncated."));
    assert_eq!(count(&s, "t"), 0);
    assert_eq!(segments(&s).iter().find(|x| x.0 == "T").unwrap(), &("T".to_owned(), 1, 16, 1));
    drop(s);
    drop(db);
    assert_eq!(free_extents(&db_dir) as i64, extents_before - 1);
    let len = datafile_len(&db_dir);
    {
        let db = open(&db_dir, opts.clone());
        let s = db.session();
        assert_eq!(count(&s, "t"), 0, "truncated rows came back after reopen");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE pad IS NOT NULL"), 0);
        assert_eq!(segments(&s).iter().find(|x| x.0 == "T").unwrap(), &("T".to_owned(), 1, 16, 1));
        assert_eq!(count(&s, "other"), 100);
        // Refill a little less than before: uses the freed extents.
        exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('u', 200, 'u') FROM dual CONNECT BY LEVEL <= 700");
        assert_eq!(count(&s, "t"), 700);
    }
    assert_eq!(datafile_len(&db_dir), len, "the datafile grew although freed extents were available");
    let db = open(&db_dir, opts);
    let s = db.session();
    assert_eq!(count_and_id_sum(&s, "t"), ids_up_to(700));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE pad = RPAD('u', 200, 'u')"), 700);
    assert_eq!(count(&s, "other"), 100);
}

/// Read requests of a scan of `table` starting from an empty cache.
fn cold_scan_requests(s: &Session, table: &str) -> u64 {
    exec(s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    let before = s.stats().get(Stat::PhysicalReadIoRequests);
    count(s, table);
    s.stats().get(Stat::PhysicalReadIoRequests) - before
}

#[test]
fn alter_system_multiblock_read_count_persists() {
    let (_dir, db_dir, db) = temp_db(options(BS, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('t', 200, 't') FROM dual CONNECT BY LEVEL <= 500");
    let data_blocks = blocks_below_hwm(&s, "t") as u64 - 1;
    // All data blocks lie in the first 1 MiB extent (512 blocks), so runs are not cut.
    assert!(data_blocks > 40 && data_blocks < 500, "{data_blocks}");
    assert_eq!(parameter(&s, "db_file_multiblock_read_count"), "128");
    let r = exec(&s, "ALTER SYSTEM SET db_file_multiblock_read_count = 8");
    assert_eq!(r.message.as_deref(), Some("System altered."));
    // Immediate, and for other sessions too.
    let other = db.session();
    assert_eq!(parameter(&other, "db_file_multiblock_read_count"), "8");
    // One single-block read of the segment header, then reads of up to 8 blocks.
    assert_eq!(cold_scan_requests(&other, "t"), 1 + data_blocks.div_ceil(8));
    drop((s, other));
    drop(db);
    let db = open(&db_dir, options(BS, "2M"));
    let s = db.session();
    assert_eq!(parameter(&s, "db_file_multiblock_read_count"), "8");
    assert_eq!(scalar(&s, "SELECT isdefault FROM v$parameter WHERE name = 'db_file_multiblock_read_count'"), "FALSE");
    assert_eq!(cold_scan_requests(&s, "t"), 1 + data_blocks.div_ceil(8));
    // A session's own value wins over the system's, and only for that session.
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 4");
    assert_eq!(parameter(&s, "db_file_multiblock_read_count"), "4");
    assert_eq!(cold_scan_requests(&s, "t"), 1 + data_blocks.div_ceil(4));
    assert_eq!(parameter(&db.session(), "db_file_multiblock_read_count"), "8");
    drop(s);
    drop(db);
    // ALTER SESSION does not persist.
    let db = open(&db_dir, options(BS, "2M"));
    assert_eq!(parameter(&db.session(), "db_file_multiblock_read_count"), "8");
    assert_eq!(control(&db_dir)["parameters"]["db_file_multiblock_read_count"], "8");
}

#[test]
fn alter_system_db_cache_size_takes_effect_at_next_open() {
    let (_dir, db_dir, db) = temp_db(options(BS, "2M"));
    assert_eq!(db.cache_summary().buffers, 1024);
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 100");
    let r = exec(&s, "ALTER SYSTEM SET db_cache_size = 3M");
    assert_eq!(
        r.message.as_deref(),
        Some("System altered. db_cache_size takes effect when the database is next opened.")
    );
    // Deferred: this open keeps its cache and shows the value in use.
    assert_eq!(parameter(&s, "db_cache_size"), "2M");
    assert_eq!(db.cache_summary().buffers, 1024);
    let r = exec(&s, "ALTER SYSTEM SET filesystemio_options = none");
    assert!(r.message.unwrap().contains("next opened"));
    drop(s);
    drop(db);
    {
        // Opened without parameters: the stored value applies.
        let db = open(&db_dir, DatabaseOptions::default());
        let s = db.session();
        assert_eq!(parameter(&s, "db_cache_size"), "3M");
        assert_eq!(scalar(&s, "SELECT isdefault FROM v$parameter WHERE name = 'db_cache_size'"), "FALSE");
        assert_eq!(scalar(&s, "SELECT issys_modifiable FROM v$parameter WHERE name = 'db_cache_size'"), "DEFERRED");
        assert_eq!(parameter(&s, "filesystemio_options"), "none");
        assert_eq!(db.cache_summary().buffers, 3 * 1024 * 1024 / BS);
        assert_eq!(count(&s, "t"), 100);
    }
    {
        // A parameter given when opening wins for that open only.
        let db = open(&db_dir, options(BS, "1M"));
        assert_eq!(parameter(&db.session(), "db_cache_size"), "1M");
        assert_eq!(db.cache_summary().buffers, 512);
    }
    let db = open(&db_dir, DatabaseOptions::default());
    assert_eq!(parameter(&db.session(), "db_cache_size"), "3M");
    assert_eq!(db.cache_summary().buffers, 1536);
    // The block size was fixed at creation; options when opening do not change it.
    drop(db);
    let db = open(&db_dir, DatabaseOptions { block_size: 8192, ..Default::default() });
    assert_eq!(parameter(&db.session(), "db_block_size"), "2048");
}

#[test]
fn opening_an_open_database_again_is_refused() {
    let (_dir, db_dir, first) = temp_db(options(BS, "1M"));
    let second = Database::open(&db_dir, options(BS, "1M"));
    if let Ok(second) = second {
        // Show what a second open leads to.
        let (s1, s2) = (first.session(), second.session());
        exec(&s1, "CREATE TABLE a (id INTEGER)");
        exec(&s1, "INSERT INTO a SELECT LEVEL FROM dual CONNECT BY LEVEL <= 100");
        exec(&s2, "CREATE TABLE b (id INTEGER)");
        exec(&s2, "INSERT INTO b SELECT LEVEL FROM dual CONNECT BY LEVEL <= 100");
        drop((s1, s2, first, second));
        let db = open(&db_dir, options(BS, "2M"));
        let tables = rows(&db.session(), "SELECT table_name FROM user_tables ORDER BY table_name");
        panic!(
            "the directory was opened twice; after both closed, user_tables holds {tables:?} (A and B were created)"
        );
    }
}

#[test]
fn deleting_files_of_an_open_database_does_not_free_it_for_a_second_opener() {
    let (_dir, db_dir, first) = temp_db(options(BS, "1M"));
    // A lock file of an older version, or any file a user deletes to "unlock" it.
    let _ = std::fs::remove_file(db_dir.join("lioscope.lock"));
    assert_in_use(Database::open(&db_dir, options(BS, "1M")), &db_dir);
    drop(first);
    // Closed, the directory opens again.
    let db = open(&db_dir, options(BS, "1M"));
    exec(&db.session(), "CREATE TABLE a (id INTEGER)");
}

#[test]
fn a_second_opener_of_a_live_database_is_told_it_is_open_before_any_file_is_read() {
    let (_dir, db_dir, first) = temp_db(options(BS, "1M"));
    // While the instance runs, its control file is the instance's to write: a second
    // opener must not read it (here it is away, so a read would say "not a database").
    let control = db_dir.join("control.json");
    let aside = db_dir.with_extension("control-aside");
    std::fs::rename(&control, &aside).unwrap();
    let second = Database::open(&db_dir, options(BS, "1M"));
    if !control.exists() {
        std::fs::rename(&aside, &control).unwrap();
    }
    assert_in_use(second, &db_dir);
    drop(first);
    let db = open(&db_dir, options(BS, "1M"));
    exec(&db.session(), "CREATE TABLE a (id INTEGER)");
}

/// A second open of `dir`, live in another instance, must have been refused as in use.
fn assert_in_use(second: lioscope::Result<Database>, dir: &Path) {
    match second {
        Err(Error::DatabaseInUse { path }) => assert_eq!(path, dir),
        Err(other) => panic!("expected DatabaseInUse, got {other}"),
        Ok(_) => panic!("a second instance opened a live database"),
    }
}

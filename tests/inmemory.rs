//! The in-memory column store through SQL: marking and population (POPULATE_WAIT,
//! `v$im_segments`), plans and hints, in-memory scans against row-store scans of the
//! same snapshot (random tables and predicates; concurrent DML; a store too small for
//! the table; chained rows), and clear errors for bad INMEMORY clauses.

mod common;

use common::*;
use lioscope::types::{Datum, Value};
use lioscope::{Session, Stat};
use proptest::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Turns the column store on for `s`'s database.
fn store_on(s: &Session, size: &str) {
    exec(s, &format!("ALTER SYSTEM SET inmemory_size = {size}"));
}

/// Marks `table` and waits for its population; returns POPULATE_WAIT's code.
fn populate(s: &Session, table: &str, clause: &str) -> i64 {
    exec(s, &format!("ALTER TABLE {table} INMEMORY {clause} PRIORITY HIGH"));
    wait_code(s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)")
}

/// POPULATE_WAIT's return code (its first column).
fn wait_code(s: &Session, sql: &str) -> i64 {
    match &rows(s, sql)[0][0] {
        Datum::Int(code) => *code,
        other => panic!("{sql}: {other:?}"),
    }
}

/// The plan's operations, as EXPLAIN PLAN prints them.
fn plan(s: &Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN PLAN FOR {sql}"))
        .into_iter()
        .map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_marked_table_is_populated_and_scanned_in_memory() {
    let (_t, _d, db) = temp_db(options(8192, "32M"));
    let s = db.session();
    customers_like(&s, 30_000);
    store_on(&s, "64M");
    assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let status = rows(
        &s,
        "SELECT populate_status, bytes_not_populated, populated_rows FROM v$im_segments WHERE segment_name = 'T'",
    );
    assert_eq!(format!("{status:?}"), format!("{:?}", vec![vec![text("COMPLETED"), int_v(0), int_v(30_000)]]));
    // Where the workers' time went, by phase: each phase did some of the work (the
    // table has key columns, so dictionaries were built).
    let phases = [
        "IM populate time reading blocks (us)",
        "IM populate time decoding rows (us)",
        "IM populate time building dictionaries (us)",
        "IM populate time encoding (us)",
        "IM populate time compressing (us)",
    ];
    for phase in phases {
        assert!(sysstat(&s, phase) > 0, "{phase}");
    }
    let p = plan(&s, "SELECT COUNT(*) FROM t WHERE id > 10");
    assert!(p.contains("TABLE ACCESS INMEMORY FULL"), "{p}");
    let hinted = plan(&s, "SELECT /*+ NO_INMEMORY(t) */ COUNT(*) FROM t WHERE id > 10");
    assert!(hinted.contains("TABLE ACCESS FULL") && !hinted.contains("INMEMORY FULL"), "{hinted}");
    let before = sysstat(&s, "IM scan rows");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id > 10"), 29_990);
    assert_eq!(sysstat(&s, "IM scan rows") - before, 30_000, "every row came from the unit");
    assert_eq!(
        int(&s, "SELECT COUNT(amount) FROM t WHERE flag = 'Y'"),
        int(&s, "SELECT /*+ NO_INMEMORY(t) */ COUNT(amount) FROM t WHERE flag = 'Y'")
    );
    // A column left out keeps the queries that read it in the row store.
    exec(&s, "ALTER TABLE t INMEMORY PRIORITY HIGH NO INMEMORY (note)");
    let p = plan(&s, "SELECT COUNT(note) FROM t");
    assert!(!p.contains("INMEMORY FULL"), "{p}");
    let p = plan(&s, "SELECT /*+ INMEMORY(t) */ COUNT(note) FROM t");
    assert!(p.contains("hint not used: INMEMORY(T)") && p.contains("NO INMEMORY"), "{p}");
}

/// The sorted rows of `sql` and the `IM scan segments` it added to the session's
/// statistics: 1 when it scanned the table in memory, 0 when in the row store.
fn with_im_scans(s: &Session, sql: &str) -> (Vec<String>, i64) {
    let scans = || s.stats().get(Stat::ImScanSegments) as i64;
    let before = scans();
    let rows = sorted_rows(s, sql);
    (rows, scans() - before)
}

fn text(s: &str) -> Value {
    Datum::string(s.to_owned())
}

fn int_v(i: i64) -> Value {
    Datum::Int(i)
}

/// Predicates over the table's columns, including ones the kernels run and ones they
/// leave to the row path.
fn predicate() -> impl Strategy<Value = String> {
    let one = prop_oneof![
        (0i64..1200).prop_map(|k| format!("id > {k}")),
        (0i64..1200, 0i64..400).prop_map(|(a, b)| format!("id BETWEEN {a} AND {}", a + b)),
        (0i64..1000).prop_map(|k| format!("amount <= {k}")),
        (0i64..1000).prop_map(|k| format!("amount = {k}")),
        Just("amount IS NULL".to_owned()),
        Just("note IS NOT NULL".to_owned()),
        (0i64..97).prop_map(|k| format!("name = 'name-{k}'")),
        (0i64..97).prop_map(|k| format!("name >= 'name-{k}'")),
        (0i64..13, 0i64..13).prop_map(|(a, b)| format!("note IN ('n{a}', 'n{b}', 'zz')")),
        Just("flag = 'Y'".to_owned()),
        (0i64..400).prop_map(|d| format!("born < TO_DATE('2020-01-01', 'YYYY-MM-DD') + {d}")),
        (0i64..50).prop_map(|k| format!("amount * 2 > {k}")),
        Just("name LIKE 'name-1%'".to_owned()),
        (0i64..10).prop_map(|k| format!("name NOT LIKE '%{k}%'")),
        (0i64..10).prop_map(|k| format!("name LIKE '%e-_{k}'")),
        (0i64..13).prop_map(|k| format!("note NOT LIKE 'n{k}%'")),
        Just("note NOT LIKE NULL".to_owned()),
        (1i64..5).prop_map(|k| format!("amount > {k}.5")),
    ];
    prop::collection::vec(one, 0..3)
        .prop_map(|terms| if terms.is_empty() { "1 = 1".into() } else { terms.join(" AND ") })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(24), ..ProptestConfig::default() })]

    /// For random predicates, over units of every compression level and with some rows
    /// changed after population, the in-memory answer is the row store's.
    #[test]
    fn in_memory_scans_answer_as_row_store_scans(
        level in prop_oneof![Just("FOR DML"), Just("FOR QUERY LOW"), Just("FOR QUERY HIGH"), Just("FOR CAPACITY HIGH")],
        predicates in prop::collection::vec(predicate(), 1..6),
        changed in 0i64..1200,
    ) {
        let (_t, _d, db) = temp_db(options(2048, "16M"));
        let s = db.session();
        customers_like(&s, 1200);
        // Some fractions make the amount column's units hold index keys.
        exec(&s, "UPDATE t SET amount = amount + 0.25 WHERE MOD(id, 7) = 0");
        exec(&s, "COMMIT");
        store_on(&s, "16M");
        prop_assert_eq!(populate(&s, "t", &format!("MEMCOMPRESS {level}")), 0);
        exec(&s, &format!("UPDATE t SET name = 'late', amount = NULL WHERE id = {changed}"));
        exec(&s, &format!("DELETE FROM t WHERE id = {}", changed + 1));
        exec(&s, "COMMIT");
        for p in &predicates {
            for (select, group_by) in [
                ("COUNT(*), COUNT(amount), COUNT(note)", ""),
                ("SUM(amount), MIN(name), MAX(born)", ""),
                // Folded from the codes: sums of whole numbers, MIN and MAX of any kind.
                ("SUM(id), AVG(id), MIN(amount), MAX(amount), MIN(DISTINCT id), MAX(note), MIN(born), COUNT(flag)", ""),
                ("id, name, amount, born, flag, note", ""),
                // Groups folded a column at a time (keys that are columns; COUNT, SUM
                // and AVG of + - * over numbers), and ones that are not (MAX).
                (
                    "flag, note, COUNT(*), COUNT(amount), SUM(amount), AVG(amount * 2 - id), SUM(-amount * 0.5 + 1)",
                    " GROUP BY flag, note",
                ),
                ("note, SUM(id * amount), MAX(name)", " GROUP BY note"),
            ] {
                let (im, im_scans) =
                    with_im_scans(&s, &format!("SELECT /*+ INMEMORY(t) */ {select} FROM t WHERE {p}{group_by}"));
                let (row_store, row_store_im_scans) =
                    with_im_scans(&s, &format!("SELECT /*+ NO_INMEMORY(t) */ {select} FROM t WHERE {p}{group_by}"));
                // The comparison is of two paths: the first scanned the column store.
                prop_assert_eq!((im_scans, row_store_im_scans), (1, 0), "IM scan segments of SELECT {} WHERE {}", select, p);
                prop_assert_eq!(im, row_store, "SELECT {} WHERE {}", select, p);
            }
        }
    }
}

#[test]
fn concurrent_changes_never_show_in_memory_differently() {
    let (_t, _d, db) = temp_db(options(2048, "16M"));
    let s = db.session();
    customers_like(&s, 3000);
    store_on(&s, "16M");
    assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let w = db.session();
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                let id = (k * 7919) % 3000;
                exec(&w, &format!("UPDATE t SET amount = amount + 1, name = 'w{k}' WHERE id = {id}"));
                exec(&w, &format!("INSERT INTO t VALUES ({}, 'new', {k}, SYSDATE, 'N', NULL)", 10_000 + k));
                exec(&w, &format!("DELETE FROM t WHERE id = {}", (id + 1500) % 3000));
                exec(&w, if k.is_multiple_of(4) { "ROLLBACK" } else { "COMMIT" });
            }
            k
        })
    };
    let reader = db.session();
    let started = std::time::Instant::now();
    let mut rounds = 0;
    while started.elapsed() < std::time::Duration::from_secs(3) {
        if rounds % 5 == 4 {
            // Population starts over while the writer goes on.
            exec(&reader, "ALTER TABLE t NO INMEMORY");
            exec(&reader, "ALTER TABLE t INMEMORY PRIORITY HIGH");
        }
        // One snapshot for both answers.
        exec(&reader, "SET TRANSACTION READ ONLY");
        for q in ["COUNT(*), SUM(amount)", "COUNT(name), MAX(id)"] {
            let (im, _) = with_im_scans(&reader, &format!("SELECT /*+ INMEMORY(t) */ {q} FROM t WHERE id > 100"));
            let (rs, rs_im_scans) =
                with_im_scans(&reader, &format!("SELECT /*+ NO_INMEMORY(t) */ {q} FROM t WHERE id > 100"));
            assert_eq!(rs_im_scans, 0, "the row-store answer never came from the column store: {q}");
            assert_eq!(im, rs, "{q}");
        }
        exec(&reader, "COMMIT");
        rounds += 1;
    }
    // Repopulation the writer keeps queuing does not hold POPULATE_WAIT up.
    assert_eq!(wait_code(&reader, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 60)"), 0);
    stop.store(true, Ordering::Relaxed);
    let changes = writer.join().unwrap();
    assert!(rounds > 3 && changes > 10, "{rounds} rounds beside {changes} changes");
    assert!(sysstat(&reader, "IM scan rows journal") > 0, "some rows came from the journal's blocks");
    assert!(sysstat(&reader, "IM populate CUs") >= 2, "populated again while the writer wrote");
    // The workers are background sessions with their own statistics.
    let workers = rows(&reader, "SELECT sid FROM v$session WHERE program LIKE 'W0%'");
    assert!(!workers.is_empty(), "population workers in v$session");
}

#[test]
fn a_store_too_small_populates_part_and_answers_right() {
    let (_t, _d, db) = temp_db(options(2048, "32M"));
    let s = db.session();
    customers_like(&s, 60_000);
    store_on(&s, "300K");
    // Units of 2 KiB blocks cover 32,768 blocks each: one unit; cut smaller by a tiny store.
    let code = populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW");
    assert_eq!(code, 1, "POPULATE_OUT_OF_MEMORY");
    let status = rows(&s, "SELECT populate_status, bytes_not_populated FROM v$im_segments");
    assert_eq!(format!("{:?}", status[0][0]), format!("{:?}", text("OUT OF MEMORY")));
    assert!(matches!(status[0][1], Datum::Int(n) if n > 0), "{status:?}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id > 7"), 59_993);
    // Room enough now: what did not fit is populated.
    store_on(&s, "64M");
    assert_eq!(wait_code(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)"), 0);
    assert_eq!(scalar(&s, "SELECT populate_status FROM v$im_segments"), "COMPLETED");
}

/// A population after NO INMEMORY writes its units into the extents the first one gave
/// back: the area's use is the same and nothing went to the heap.
#[test]
fn populations_reuse_the_in_memory_area() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    customers_like(&s, 60_000);
    store_on(&s, "64M");
    let area = |s: &Session| {
        let r = rows(s, "SELECT alloc_bytes, used_bytes, free_runs, fallback_bytes FROM v$inmemory_area");
        r[0].iter()
            .map(|v| match v {
                Datum::Int(n) => *n,
                other => panic!("v$inmemory_area figure {other:?}"),
            })
            .collect::<Vec<i64>>()
    };
    assert_eq!(area(&s), vec![64 << 20, 0, 1, 0]);
    assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let first = area(&s);
    assert!(first[1] > 0, "the units' arrays are in the area: {first:?}");
    exec(&s, "ALTER TABLE t NO INMEMORY");
    assert_eq!(area(&s), vec![64 << 20, 0, 1, 0], "dropped units gave their extents back");
    assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW"), 0);
    assert_eq!(area(&s), first);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id > 7"), 59_993);
}

/// An `inmemory_size` the machine cannot back is refused with an error naming it, and
/// changes nothing: the parameter, the area and the populated units stay as they were.
#[test]
fn an_inmemory_size_beyond_physical_memory_is_refused() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    customers_like(&s, 10_000);
    store_on(&s, "32M");
    assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let used = int(&s, "SELECT used_bytes FROM v$inmemory_area");
    let err = fail(&s, "ALTER SYSTEM SET inmemory_size = 1000000G").to_string();
    assert!(err.contains("inmemory_size") && err.contains("physical memory"), "{err}");
    assert_eq!(parameter(&s, "inmemory_size"), "32M");
    assert_eq!(int(&s, "SELECT alloc_bytes FROM v$inmemory_area"), 32 << 20);
    assert_eq!(int(&s, "SELECT used_bytes FROM v$inmemory_area"), used);
    assert_eq!(int(&s, "SELECT populated_rows FROM v$im_segments"), 10_000);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id > 7"), 9_993);
}

#[test]
fn population_follows_chained_rows() {
    let (_t, _d, db) = temp_db(options(2048, "32M"));
    let s = db.session();
    exec(&s, "CREATE TABLE c (id INTEGER, a VARCHAR2(4000), b VARCHAR2(100))");
    exec(&s, "INSERT INTO c SELECT LEVEL, RPAD('x', 3000, 'y'), 'b' || LEVEL FROM dual CONNECT BY LEVEL <= 200");
    exec(&s, "COMMIT");
    store_on(&s, "16M");
    let before = sysstat(&s, "table fetch continued row");
    let chained_before = sysstat(&s, "IM populate time following chained rows (us)");
    assert_eq!(populate(&s, "c", "MEMCOMPRESS FOR QUERY LOW"), 0);
    assert!(sysstat(&s, "table fetch continued row") - before >= 200, "each row is chained across 2 KiB blocks");
    // Following 200 rows' pieces takes well over a microsecond, and is its own phase.
    assert!(sysstat(&s, "IM populate time following chained rows (us)") > chained_before, "the chained phase counted");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM c WHERE b = 'b77'"), 1);
    assert_eq!(int(&s, "SELECT SUM(id) FROM c WHERE a IS NOT NULL"), 200 * 201 / 2);
}

/// Table `m`: 20,000 short rows packed with PCTFREE 0, then given 150-byte notes, so
/// nearly every row migrates (its head stays, its body goes to a block of its own);
/// returns the row store's answer to [`MIGRATED_SUM`].
fn migrated_rows(s: &Session) -> i64 {
    exec(s, "CREATE TABLE m (id INTEGER, note VARCHAR2(200)) PCTFREE 0");
    exec(s, "INSERT INTO m SELECT LEVEL, 'short-note-' FROM dual CONNECT BY LEVEL <= 20000");
    exec(s, "UPDATE m SET note = RPAD('migrated ' || id, 150, '.')");
    exec(s, "COMMIT");
    int(s, &format!("SELECT /*+ NO_INMEMORY(m) */ {MIGRATED_SUM}"))
}

/// A query that reads the migrated rows' bodies (their notes), in memory once `m` is populated.
const MIGRATED_SUM: &str = "SUM(id) FROM m WHERE note LIKE 'migrated 1%'";

/// Rows migrated together have their pieces in the same few blocks: population keeps the
/// last piece block while it reads a head block's rows, so most pieces are found pinned
/// (`buffer is pinned count`) rather than got again, and the units hold the rows a
/// row-store scan reads.
#[test]
fn population_keeps_the_piece_block_of_migrated_rows() {
    let (_t, _d, db) = temp_db(options(8192, "32M"));
    let s = db.session();
    let expected = migrated_rows(&s);
    store_on(&s, "32M");
    let (continued, pinned) = (sysstat(&s, "table fetch continued row"), sysstat(&s, "buffer is pinned count"));
    assert_eq!(populate(&s, "m", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let continued = sysstat(&s, "table fetch continued row") - continued;
    let pinned = sysstat(&s, "buffer is pinned count") - pinned;
    assert!(continued >= 15_000, "most rows migrated: {continued} pieces followed");
    assert!(pinned * 10 >= continued * 9, "{pinned} of {continued} pieces found in the kept block");
    assert_eq!(int(&s, &format!("SELECT /*+ INMEMORY(m) */ {MIGRATED_SUM}")), expected);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM m WHERE note IS NULL"), 0);
}

/// Units are cut by rows as well as by blocks: the short heads of migrated rows fill few
/// blocks, and each unit over them ends once it holds about `_inmemory_imcu_target_rows`.
/// Rows are counted in cached blocks only: with the table out of the cache, planning
/// reads nothing and cuts by blocks alone.
#[test]
fn units_are_cut_by_rows_counted_in_cached_blocks() {
    let (_t, _d, db) = temp_db(options(8192, "32M"));
    let s = db.session();
    let expected = migrated_rows(&s);
    assert!(blocks_below_hwm(&s, "m") < 8192, "one unit of blocks");
    // No 8 KiB block holds more than this many row heads (11 bytes at least each).
    let heads_per_block = 8192 / 11;
    store_on(&s, "32M");
    exec(&s, "ALTER SYSTEM SET \"_inmemory_imcu_target_rows\" = 2000");
    let cus = sysstat(&s, "IM populate CUs");
    assert_eq!(populate(&s, "m", "MEMCOMPRESS FOR QUERY LOW"), 0);
    let cus = sysstat(&s, "IM populate CUs") - cus;
    // Each unit over the heads ends within one block of 2,000 rows; the pieces' blocks
    // (no heads) make one more unit. Planning counts one block in 16, so up to 15 blocks
    // past the last head count as the last block of heads: a few more units at most.
    let most = 20_000 / 2000 + 1 + 15 * heads_per_block / 2000;
    let least = 20_000 / (2000 + heads_per_block) + 1;
    assert!((least..=most).contains(&cus), "{cus} units, not {least}..={most}");
    assert_eq!(int(&s, &format!("SELECT /*+ INMEMORY(m) */ {MIGRATED_SUM}")), expected);

    exec(&s, "ALTER TABLE m NO INMEMORY");
    exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    let cus = sysstat(&s, "IM populate CUs");
    assert_eq!(populate(&s, "m", "MEMCOMPRESS FOR QUERY LOW"), 0);
    assert_eq!(sysstat(&s, "IM populate CUs") - cus, 1, "no block cached: cut by blocks alone");
    assert_eq!(int(&s, &format!("SELECT /*+ INMEMORY(m) */ {MIGRATED_SUM}")), expected);

    for bad in ["0", "4294967296", "'many'"] {
        let e = fail(&s, &format!("ALTER SYSTEM SET \"_inmemory_imcu_target_rows\" = {bad}")).to_string();
        assert!(e.contains("_inmemory_imcu_target_rows"), "{bad}: {e}");
    }
}

#[test]
fn bad_inmemory_clauses_are_errors_that_name_what_is_wrong() {
    let (_t, _d, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER)");
    for (sql, says) in [
        ("ALTER TABLE t INMEMORY MEMCOMPRESS FOR SPEED", "DML, QUERY"),
        ("ALTER TABLE t INMEMORY PRIORITY URGENT", "PRIORITY"),
        ("ALTER TABLE t INMEMORY NO INMEMORY (nope)", "NOPE"),
        ("ALTER TABLE missing INMEMORY", "MISSING"),
        ("EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('SOON')", "unknown priority"),
        ("EXEC DBMS_OUTPUT.PUT_LINE('x')", "POPULATE_WAIT"),
    ] {
        let e = fail(&s, sql).to_string();
        assert!(e.contains(says), "{sql}: {e}");
    }
    assert_eq!(
        wait_code(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT"),
        3,
        "POPULATE_INACTIVE while inmemory_size is 0"
    );
}

#[test]
fn a_priority_table_is_populated_again_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = create(&path, options(8192, "16M"));
        let s = db.session();
        customers_like(&s, 5000);
        store_on(&s, "32M");
        assert_eq!(populate(&s, "t", "MEMCOMPRESS FOR CAPACITY HIGH"), 0);
        drop(s);
        db.close().unwrap();
    }
    let db = open(&path, options(8192, "16M"));
    let s = db.session();
    assert_eq!(scalar(&s, "SELECT inmemory_compression FROM user_tables WHERE table_name = 'T'"), "FOR CAPACITY HIGH");
    assert_eq!(wait_code(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)"), 0);
    let before = sysstat(&s, "IM scan rows");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE amount IS NULL"), 5000 / 11);
    assert_eq!(sysstat(&s, "IM scan rows") - before, 5000);
}

//! The hash join's work area: a build input larger than the area spills partitions to a
//! temporary file and still gives every row of every kind of join; executions are told
//! apart as optimal, one-pass and multi-pass in `v$mystat`, `v$sql_workarea` and the
//! row-source statistics; the temporary file goes whatever happens, and a failing write
//! to it is an error that leaves the database as it was.

mod common;

use common::*;
use lioscope::Session;
use lioscope::io::{FaultIo, FaultPlan};

/// `a` (3,000 rows) and `b` (4,000 rows), joining on `id` where `a.id` is even, and on `g`
/// in groups of 7.
fn tables(s: &Session) {
    exec(s, "CREATE TABLE a (id INTEGER, g INTEGER, pad VARCHAR2(40))");
    exec(s, "CREATE TABLE b (id INTEGER, g INTEGER, pad VARCHAR2(40))");
    exec(s, "INSERT INTO a SELECT level * 2, MOD(level, 7), 'a-' || level FROM dual CONNECT BY level <= 3000");
    exec(s, "INSERT INTO b SELECT level, MOD(level, 11), 'b-' || level FROM dual CONNECT BY level <= 4000");
    exec(s, "COMMIT");
}

const JOINS: [&str; 5] = [
    "SELECT /*+ USE_HASH(b) */ a.id, a.pad, b.pad FROM a JOIN b ON a.id = b.id",
    "SELECT /*+ USE_HASH(b) */ a.id, b.id FROM a LEFT JOIN b ON a.id = b.id + 3000",
    "SELECT /*+ USE_HASH(b) */ a.id, b.id FROM a RIGHT JOIN b ON a.id = b.id AND b.g < 5",
    "SELECT /*+ USE_HASH(b) */ a.id, b.id FROM a FULL JOIN b ON a.id = b.id AND a.g <> 3",
    "SELECT /*+ USE_HASH(b) */ a.g, COUNT(*) FROM a JOIN b ON a.g = b.g GROUP BY a.g",
];

#[test]
fn a_join_larger_than_its_work_area_spills_and_gives_the_same_rows() {
    let (_tmp, dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    let optimal: Vec<Vec<String>> = JOINS.iter().map(|q| sorted_rows(&s, q)).collect();
    assert_eq!(optimal[0].len(), 2000, "the inner join's rows");
    let (onepass, multipass) =
        (mystat(&s, "workarea executions - onepass"), mystat(&s, "workarea executions - multipass"));
    assert_eq!(onepass + multipass, 0, "the default work area holds these joins");
    assert!(mystat(&s, "workarea executions - optimal") >= JOINS.len() as i64);

    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 64K");
    let writes = mystat(&s, "physical writes direct temporary tablespace");
    for (q, expected) in JOINS.iter().zip(&optimal) {
        assert_eq!(&sorted_rows(&s, q), expected, "{q} in a 64K work area");
        assert!(temp_files(&dir).is_empty(), "{q} left {:?}", temp_files(&dir));
    }
    let spilled = mystat(&s, "workarea executions - onepass") + mystat(&s, "workarea executions - multipass");
    assert_eq!(spilled, JOINS.len() as i64, "every join spilled");
    assert!(mystat(&s, "physical writes direct temporary tablespace") > writes);
    assert!(mystat(&s, "physical reads direct temporary tablespace") > 0);
    let waits = int(
        &s,
        &format!(
            "SELECT total_waits FROM v$session_event WHERE event = 'direct path write temp' AND sid = {}",
            s.sid()
        ),
    );
    assert!(waits > 0, "temporary writes are timed as direct path write temp");
}

#[test]
fn executions_are_optimal_one_pass_or_multi_pass_by_what_fits() {
    let (_tmp, _dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    let q = "SELECT /*+ USE_HASH(b) SWAP_JOIN_INPUTS(b) */ COUNT(b.pad) FROM a JOIN b ON a.id = b.id";
    let kind = |s: &Session| {
        scalar(
            s,
            &workarea_of(
                "last_execution || ' ' || NVL(w.last_tempseg_size, 0)",
                "SWAP_JOIN_INPUTS(b) */ COUNT(b.pad) FROM a JOIN b ON a.id",
            ),
        )
    };
    assert_eq!(int(&s, q), 2000);
    assert_eq!(kind(&s), "OPTIMAL 0");
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    // About 380K of build rows (b's 4,000, each its id and pad kept) hashed into 16
    // partitions of about 24K: each fits 256K when read back.
    exec(&s, "ALTER SESSION SET hash_area_size = 256K");
    assert_eq!(int(&s, q), 2000);
    let one = kind(&s);
    assert!(one.starts_with("1 PASS "), "{one}");
    assert_ne!(one, "1 PASS 0", "a one-pass execution wrote temporary space");
    // Every build row has one key: no partition can be split, so it is read in segments
    // of the area, the probe rows once for each.
    let skewed = "SELECT /*+ USE_HASH(b) SWAP_JOIN_INPUTS(b) */ COUNT(*) FROM a JOIN b ON a.g = b.g * 0";
    let expected = int(&s, "SELECT COUNT(*) FROM a WHERE g = 0") * 4000;
    exec(&s, "ALTER SESSION SET hash_area_size = 16K");
    assert_eq!(int(&s, skewed), expected);
    let passes = scalar(&s, &workarea_of("last_execution", "b.g * 0"));
    assert!(passes.ends_with(" PASSES"), "{passes}");
    let totals = rows(
        &s,
        &workarea_of(
            "total_executions, optimal_executions, onepass_executions, multipasses_executions, policy, operation_type",
            "SWAP_JOIN_INPUTS(b) */ COUNT(b.pad) FROM a JOIN b ON a.id",
        ),
    );
    let text: Vec<String> = totals[0].iter().map(|v| v.to_string()).collect();
    assert_eq!(text, ["2", "1", "1", "0", "MANUAL", "HASH-JOIN"]);
}

#[test]
fn row_source_statistics_show_the_memory_and_temporary_space_of_the_join() {
    let (_tmp, _dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 64K");
    let lines = rows(&s, "EXPLAIN ANALYZE SELECT /*+ USE_HASH(b) */ COUNT(*) FROM a JOIN b ON a.id = b.id");
    let join = lines.iter().map(|r| r[0].to_string()).find(|l| l.contains("HASH JOIN")).expect("a hash join line");
    assert!(join.contains(" mem=") && join.contains(" tmp=") && join.contains("PASS"), "{join}");
    assert!(!join.contains(" pw=0 "), "its temporary writes count as the line's physical writes: {join}");
    exec(&s, "ALTER SESSION SET workarea_size_policy = auto");
    let lines = rows(&s, "EXPLAIN ANALYZE SELECT /*+ USE_HASH(b) */ COUNT(*) FROM a JOIN b ON a.id = b.id");
    let join = lines.iter().map(|r| r[0].to_string()).find(|l| l.contains("HASH JOIN")).expect("a hash join line");
    assert!(join.contains(" mem=") && join.contains("OPTIMAL") && !join.contains("tmp="), "{join}");
}

#[test]
fn a_join_stopped_early_removes_its_temporary_file() {
    let (_tmp, dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 16K");
    let got = rows(&s, "SELECT /*+ USE_HASH(b) */ a.id FROM a JOIN b ON a.g = b.g WHERE ROWNUM <= 5");
    assert_eq!(got.len(), 5);
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
}

#[test]
fn a_failing_temporary_write_is_an_error_and_the_database_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let io = FaultIo::new(FaultPlan::default());
    let db = create(&dir, lioscope::DatabaseOptions { io: Some(io.clone()), ..options(8192, "8M") });
    let s = db.session();
    tables(&s);
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 16K");
    io.fail_writes_to("hash_", libc::ENOSPC);
    let q = "SELECT /*+ USE_HASH(b) */ COUNT(*) FROM a JOIN b ON a.id = b.id";
    let e = fail(&s, q).to_string();
    assert!(e.contains("hash_") && e.contains(".tmp"), "the error names the temporary file: {e}");
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    exec(&s, "ALTER SESSION SET workarea_size_policy = auto");
    assert_eq!(int(&s, q), 2000, "the same join in memory");
    exec(&s, "INSERT INTO a VALUES (2, 0, 'again')");
    exec(&s, "COMMIT");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM a"), 3001);
}

#[test]
fn temporary_files_a_crash_left_are_removed_at_open() {
    let (_tmp, dir, db) = temp_db(options(8192, "8M"));
    drop(db);
    std::fs::write(dir.join("hash_999_0.tmp"), b"left by a crash").unwrap();
    let db = open(&dir, options(8192, "8M"));
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    drop(db);
}

#[test]
fn a_build_input_over_the_area_only_by_rows_it_drops_runs_optimal() {
    let (_tmp, dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    exec(&s, "CREATE TABLE n (k INTEGER, pad VARCHAR2(40))");
    exec(&s, "INSERT INTO n SELECT NULL, RPAD('n', 30, 'x') FROM dual CONNECT BY level <= 40");
    exec(&s, "INSERT INTO n VALUES (2, 'kept')");
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 1K");
    // The 40 rows of NULL keys fill the area before partitioning drops them (they join
    // nothing): what is left fits, nothing is written.
    let q = "SELECT /*+ LEADING(n) USE_HASH(a) */ MAX(n.pad) FROM n JOIN a ON a.id = n.k";
    assert_eq!(scalar(&s, q), "kept");
    assert_eq!(
        scalar(&s, &workarea_of("last_execution || ' ' || NVL(w.last_tempseg_size, 0)", "LEADING(n) USE_HASH(a)")),
        "OPTIMAL 0"
    );
    assert!(temp_files(&dir).is_empty());
}

#[test]
fn a_join_building_on_a_join_keeps_only_the_columns_used_above_it() {
    let (_tmp, _dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    exec(&s, "CREATE TABLE c (id INTEGER, note VARCHAR2(10))");
    exec(&s, "INSERT INTO c SELECT level, 'c-' || level FROM dual CONNECT BY level <= 4000");
    exec(&s, "COMMIT");
    // The join of a and b (the rows of a with ids below 400) builds the join with c: its
    // rows hold a.pad and b.pad only where the select list reads them.
    let query = |label: &str, select: &str| {
        format!(
            "SELECT /*+ {label} LEADING(a b c) USE_HASH(b) USE_HASH(c) NO_SWAP_JOIN_INPUTS(c) */ {select} \
             FROM a JOIN b ON a.id = b.id JOIN c ON c.id = b.id WHERE a.id < 400"
        )
    };
    // The bytes the root join (the first work area in the plan) built on.
    let built = |label: &str| -> i64 {
        int(
            &s,
            &format!(
                "{} ORDER BY w.operation_id FETCH FIRST 1 ROWS ONLY",
                workarea_of("w.estimated_optimal_size", label)
            ),
        )
    };
    // Each query's ids and notes, sorted.
    let ids_and_notes = |label: &str, select: &str| {
        let mut out: Vec<String> =
            rows(&s, &query(label, select)).iter().map(|r| format!("{} {}", r[0], r[r.len() - 1])).collect();
        out.sort();
        out
    };
    let wide = ids_and_notes("WIDE", "a.id, a.pad, b.pad, c.note");
    assert_eq!(wide.len(), 199);
    assert_eq!(wide, ids_and_notes("NARROW", "a.id, c.note"));
    let (wide_bytes, narrow_bytes) = (built("WIDE"), built("NARROW"));
    assert!(
        narrow_bytes * 3 < wide_bytes * 2,
        "the join of a and b keeps its pads unread: {narrow_bytes} bytes against {wide_bytes} with them"
    );
}

#[test]
fn a_build_row_keeps_no_column_only_its_filter_reads() {
    let (_tmp, _dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    tables(&s);
    // b builds; its pad is read by a filter in WHERE or in the ON clause, checked in b's
    // scan, and by the select list only in the WIDE queries.
    let queries = [
        "SELECT /*+ {label} LEADING(a b) USE_HASH(b) SWAP_JOIN_INPUTS(b) */ a.id{more} \
         FROM a JOIN b ON a.id = b.id WHERE b.pad LIKE 'b-1%'",
        "SELECT /*+ {label} LEADING(a b) USE_HASH(b) SWAP_JOIN_INPUTS(b) */ a.id{more} \
         FROM a LEFT JOIN b ON a.id = b.id AND b.pad NOT LIKE '%7%'",
    ];
    for (i, query) in queries.iter().enumerate() {
        let (narrow_label, wide_label) = (format!("NARROW{i}"), format!("WIDE{i}"));
        let sql = |label: &str, more: &str| query.replace("{label}", label).replace("{more}", more);
        let (narrow, wide) = (sql(&narrow_label, ""), sql(&wide_label, ", b.pad"));
        let ids = |sql: &str| {
            let mut ids: Vec<String> = rows(&s, sql).iter().map(|r| format!("{:?}", r[0])).collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(&narrow), ids(&wide), "{narrow}");
        let built = |label: &str| int(&s, &workarea_of("w.estimated_optimal_size", label));
        let (narrow_bytes, wide_bytes) = (built(&narrow_label), built(&wide_label));
        assert!(
            narrow_bytes * 3 < wide_bytes * 2,
            "{narrow}: b's rows keep no pad: {narrow_bytes} bytes against {wide_bytes} with it"
        );
    }
}

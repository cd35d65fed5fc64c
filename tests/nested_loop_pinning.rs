//! A nested loop's index probes keep the inner table's last block pinned from one outer
//! row to the next: a probe whose row is in the block the previous probe's row was in
//! counts `buffer is pinned count`, not a consistent get. So outer rows in the inner
//! table's order cost about one get an inner block, and outer rows that jump from block
//! to block one get a probe. The rows are the hash join's, read as of the statement's
//! snapshot, and the pin is let go when the join ends, however it ends.

mod common;

use common::*;
use lioscope::{Database, PlanStatistics, Session};

/// Inner rows: keys 1..=10,000 inserted in key order, about 60 to an 8 KiB block.
const INNER_ROWS: i64 = 10_000;
/// Outer rows of each outer table.
const OUTER_ROWS: i64 = 200;

/// `i` (the inner table, unique index `i_k` on `k`) and three outer tables of keys of
/// `i`, each scanned in the order its rows were inserted:
/// - `o_good`: 1..=200, ascending (the inner table's order);
/// - `o_bad`: 1, 5001, 2, 5002, ... (every key in another block than the one before);
/// - `o_twice`: the keys of `o_bad`, each twice in a row.
fn tables(s: &Session) {
    exec(s, "CREATE TABLE i (k INTEGER, pad VARCHAR2(120))");
    exec(
        s,
        &format!("INSERT INTO i SELECT level, RPAD('r' || level, 120, '.') FROM dual CONNECT BY level <= {INNER_ROWS}"),
    );
    exec(s, "CREATE UNIQUE INDEX i_k ON i (k)");
    for t in ["o_good", "o_bad", "o_twice"] {
        exec(s, &format!("CREATE TABLE {t} (k INTEGER)"));
    }
    for n in 1..=OUTER_ROWS {
        exec(s, &format!("INSERT INTO o_good VALUES ({n})"));
    }
    for n in 1..=OUTER_ROWS / 2 {
        for k in [n, n + INNER_ROWS / 2] {
            exec(s, &format!("INSERT INTO o_bad VALUES ({k})"));
            exec(s, &format!("INSERT INTO o_twice VALUES ({k})"));
            exec(s, &format!("INSERT INTO o_twice VALUES ({k})"));
        }
    }
    exec(s, "COMMIT");
}

fn stat(s: &Session, name: &str) -> i64 {
    int(s, &format!("SELECT value FROM v$mystat WHERE name = '{name}'"))
}

/// What a statement did, from `v$mystat` before and after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    gets: i64,
    pinned: i64,
    fetched: i64,
}

impl std::ops::Sub for Counts {
    type Output = Counts;
    fn sub(self, o: Counts) -> Counts {
        Counts { gets: self.gets - o.gets, pinned: self.pinned - o.pinned, fetched: self.fetched - o.fetched }
    }
}

fn counts(s: &Session) -> Counts {
    Counts {
        gets: stat(s, "consistent gets"),
        pinned: stat(s, "buffer is pinned count"),
        fetched: stat(s, "table fetch by rowid"),
    }
}

/// The counts of running `sql`, less those of reading `v$mystat` (measured around an
/// empty interval), its rows, and its row-source statistics.
fn measured(s: &Session, sql: &str) -> (Counts, Vec<String>, PlanStatistics) {
    let (a, b) = (counts(s), counts(s));
    let reading = b - a;
    s.set_plan_statistics(true);
    let before = counts(s);
    let result = exec(s, sql);
    let after = counts(s);
    s.set_plan_statistics(false);
    let mut got: Vec<String> =
        result.rows.iter().map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join("|")).collect();
    got.sort();
    let lines = result.plan_statistics.expect("statistics were asked for");
    (after - before - reading, got, lines)
}

/// The gets of the plan's table access by index rowid beyond its index line's: the
/// table blocks' gets.
fn table_gets(lines: &PlanStatistics) -> i64 {
    let at = lines.lines.iter().position(|l| l.operation == "TABLE ACCESS BY INDEX ROWID").expect("a table access");
    let (by_rowid, index) = (&lines.lines[at], &lines.lines[at + 1]);
    assert!(index.operation.starts_with("INDEX"), "{lines:?}");
    (by_rowid.consistent_gets - index.consistent_gets) as i64
}

/// The nested loop of outer table `outer` into `i` through `i_k`.
fn nested_loop(outer: &str, columns: &str) -> String {
    format!("SELECT /*+ LEADING(o) USE_NL(i) INDEX(i i_k) */ o.k, {columns} FROM {outer} o JOIN i ON i.k = o.k")
}

/// What the nested loop from `outer` did to the inner table: the table blocks' gets (the
/// plan line's), and from `v$mystat` the pinned visits and the rows fetched; and the
/// statement's consistent gets in `v$mystat` less its index line's (a probe whose key
/// ends a leaf reads the next leaf too, so the index's gets depend on the keys). Checks that the plan is a nested loop
/// through `i_k` and that its rows are the hash join's.
fn table_side(s: &Session, outer: &str) -> (Counts, i64) {
    let sql = nested_loop(outer, "i.pad");
    let text = explain(s, &sql);
    assert!(text.contains("NESTED LOOPS") && text.contains("TABLE ACCESS BY INDEX ROWID"), "{text}");
    assert!(text.contains("I_K"), "{text}");
    let (counts, got, lines) = measured(s, &sql);
    let hashed =
        sorted_rows(s, &format!("SELECT /*+ LEADING(o) USE_HASH(i) */ o.k, i.pad FROM {outer} o JOIN i ON i.k = o.k"));
    assert!(got == hashed, "the nested loop from {outer} gives the hash join's rows");
    let index = lines.lines.iter().find(|l| l.operation.starts_with("INDEX")).expect("the probe's line");
    (Counts { gets: table_gets(&lines), ..counts }, counts.gets - index.consistent_gets as i64)
}

fn explain(s: &Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN PLAN FOR {sql}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n")
}

/// The table gets of one index range scan of `i` over keys `low..=high`: one a distinct
/// block, the rows in one block read from its pin (the index path's own accounting).
fn range_table_gets(s: &Session, low: i64, high: i64) -> i64 {
    let range = format!("SELECT /*+ INDEX(i i_k) */ k, pad FROM i WHERE k BETWEEN {low} AND {high}");
    let (counts, got, lines) = measured(s, &range);
    assert_eq!((got.len() as i64, counts.fetched), (high - low + 1, high - low + 1));
    table_gets(&lines)
}

#[test]
fn outer_rows_in_the_inner_tables_order_take_one_get_an_inner_block() {
    let (_dir, _path, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    let blocks = range_table_gets(&s, 1, OUTER_ROWS);
    assert!((2..=OUTER_ROWS / 20).contains(&blocks), "keys 1..=200 span a few blocks: {blocks}");
    let (nl, all_gets) = table_side(&s, "o_good");
    assert_eq!(nl.fetched, OUTER_ROWS, "one inner row an outer row");
    assert_eq!(nl.gets, blocks, "one get a distinct inner block, as one range scan over the same keys: {nl:?}");
    assert_eq!(nl.pinned, OUTER_ROWS - blocks, "every other probe reads the block still pinned: {nl:?}");
    // The same join from outer rows in another block each: the session's gets differ by
    // the revisits alone (the outer scans read as many blocks; the index's are left out).
    let (bad, bad_gets) = table_side(&s, "o_bad");
    assert_eq!(bad.pinned, 0);
    assert_eq!(bad_gets - all_gets, OUTER_ROWS - blocks, "v$mystat's consistent gets fall by the pinned visits");
}

#[test]
fn outer_rows_that_jump_between_inner_blocks_take_one_get_a_probe() {
    let (_dir, _path, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    let (bad, _) = table_side(&s, "o_bad");
    assert_eq!(
        bad,
        Counts { gets: OUTER_ROWS, pinned: 0, fetched: OUTER_ROWS },
        "no two probes in a row share a block"
    );
    // Each key twice in a row: the second probe reads the block the first pinned.
    let (twice, _) = table_side(&s, "o_twice");
    assert_eq!(
        twice,
        Counts { gets: OUTER_ROWS, pinned: OUTER_ROWS, fetched: 2 * OUTER_ROWS },
        "a repeated key's second probe is a pinned visit"
    );
}

#[test]
fn the_pinned_block_is_the_snapshots_version() {
    let (_dir, _path, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    let sql = nested_loop("o_good", "i.pad");
    let (_, before, _) = measured(&s, &sql);
    // Another session changes rows in the first blocks and keeps its change open: the
    // probes read the blocks as the snapshot sees them (CR clones, kept pinned).
    let writer = db.session();
    manual(&writer);
    exec(&writer, "UPDATE i SET pad = 'changed' WHERE k IN (1, 2, 100, 150)");
    let (counts, during, _) = measured(&s, &sql);
    assert!(during == before, "the uncommitted change is not seen");
    assert!(counts.pinned > 0, "{counts:?}");
    exec(&writer, "COMMIT");
    let (_, after, _) = measured(&s, &sql);
    assert_eq!(after.iter().filter(|r| !before.contains(r)).count(), 4, "the committed change is seen");
}

/// Buffers pinned in the cache now.
fn pinned_buffers(db: &Database) -> usize {
    db.cache_summary().pinned
}

#[test]
fn the_pin_is_let_go_when_the_join_ends_stops_or_fails() {
    let (_dir, _path, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    assert_eq!(pinned_buffers(&db), 0, "no statement runs");
    let (counts, got, _) = measured(&s, &nested_loop("o_good", "i.pad"));
    assert_eq!((got.len() as i64, counts.fetched), (OUTER_ROWS, OUTER_ROWS));
    assert_eq!(pinned_buffers(&db), 0, "after the join ended");

    let stopped = format!("{} WHERE ROWNUM <= 3", nested_loop("o_good", "i.pad"));
    assert!(explain(&s, &stopped).contains("COUNT STOPKEY"), "{}", explain(&s, &stopped));
    let (counts, got, _) = measured(&s, &stopped);
    assert_eq!((got.len(), counts.fetched), (3, 3), "the join stopped after three rows");
    assert_eq!(pinned_buffers(&db), 0, "after a stage above stopped the join");

    let failing = nested_loop("o_good", "1 / (i.k - 50)");
    let e = fail(&s, &failing);
    assert!(e.to_string().contains("divisor is equal to zero"), "{e}");
    assert_eq!(pinned_buffers(&db), 0, "after the join failed");

    // The block the join pinned last can be changed at once.
    exec(&s, "UPDATE i SET pad = 'x' WHERE k = 200");
    exec(&s, "ROLLBACK");
}

#[test]
fn insert_select_through_a_nested_loop_over_the_target_sees_the_table_as_it_began() {
    let (_dir, _path, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    // `small` fits in one block with room to spare: the join's probes keep it pinned, and
    // the rows inserted go into it.
    exec(&s, "CREATE TABLE small (k INTEGER, pad VARCHAR2(20))");
    exec(&s, "INSERT INTO small SELECT level * 4, 'first' FROM dual CONNECT BY level <= 50");
    exec(&s, "CREATE INDEX small_k ON small (k)");
    // The query reads the table it fills: its rows are gathered before any is inserted
    // (the query sees the table as the statement began, so the copies it makes, which
    // join the same outer rows, are not read again), and no insert waits on the block
    // the join holds pinned. Run aside, so that such a wait fails the test.
    let insert = "INSERT INTO small SELECT /*+ LEADING(o) USE_NL(i) INDEX(i small_k) */ i.k, 'copy' \
                  FROM o_good o JOIN small i ON i.k = o.k";
    assert!(explain(&s, &insert["INSERT INTO small ".len()..]).contains("NESTED LOOPS"));
    let (done, finished) = std::sync::mpsc::channel();
    let aside = db.clone();
    std::thread::spawn(move || {
        let s = aside.session();
        let _ = done.send(s.execute(insert).map(|r| r.rows_affected).map_err(|e| e.to_string()));
    });
    let inserted = finished.recv_timeout(std::time::Duration::from_secs(60)).expect("the insert finishes");
    assert_eq!(inserted, Ok(50), "each of the 50 rows joined once, copied once");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM small WHERE pad = 'copy'"), 50);
    assert_eq!(int(&s, "SELECT COUNT(DISTINCT k) FROM small"), 50);
    assert_eq!(pinned_buffers(&db), 0);
    // Streaming into another table while the join keeps blocks of i pinned.
    exec(&s, "CREATE TABLE copy (k INTEGER, pad VARCHAR2(120))");
    let copy = "INSERT INTO copy SELECT /*+ LEADING(o) USE_NL(i) INDEX(i i_k) */ i.k, i.pad \
                FROM o_twice o JOIN i ON i.k = o.k";
    assert_eq!(exec(&s, copy).rows_affected, 2 * OUTER_ROWS as u64);
    let hashed = "SELECT /*+ LEADING(o) USE_HASH(i) */ i.k, i.pad FROM o_twice o JOIN i ON i.k = o.k";
    assert!(sorted_rows(&s, "SELECT k, pad FROM copy") == sorted_rows(&s, hashed), "the copied rows are the join's");
    assert_eq!(pinned_buffers(&db), 0);
}

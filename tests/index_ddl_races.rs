//! Indexes beside DDL and DML of other sessions: an UPDATE that overlaps CREATE INDEX
//! maintains the new index; CREATE INDEX reads rows committed while it waited for the
//! table; an index scan that overlaps TRUNCATE finishes with the rows it started with
//! (TRUNCATE waits for it); fast full and range scans count every entry while another
//! session's changes split leaves.

mod common;

use common::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A query over `t` that takes a while (long string work per row).
const SLOW_FILTER: &str = "LENGTH(RPAD(pad, 3000, 'x')) + MOD(id, 7) > 0 AND INSTR(RPAD(pad, 2000, 'y'), 'z') = 0";

fn padded_table(s: &lioscope::Session, rows: u32) {
    exec(s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100))");
    exec(s, &format!("INSERT INTO t SELECT LEVEL, RPAD('p', 100, 'p') FROM dual CONNECT BY LEVEL <= {rows}"));
}

#[test]
fn an_update_overlapping_create_index_maintains_the_new_index() {
    let (_dir, _, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, k INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 200");
    let done = Arc::new(AtomicBool::new(false));
    let updater = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let s = db.session();
            let mut updated = 0;
            while !done.load(Ordering::Acquire) {
                // Refused at times while the DDL holds the table ("resource busy"); never
                // any other error, and each update that succeeds moves row 7's key.
                match s.execute("UPDATE t SET k = k + 1000 WHERE id = 7") {
                    Ok(r) => updated += r.rows_affected as i64,
                    Err(e) => assert_busy(&e, "the UPDATE beside CREATE INDEX"),
                }
            }
            updated
        })
    };
    let started = Instant::now();
    let mut checked = 0;
    while started.elapsed() < Duration::from_secs(3) {
        if let Err(e) = s.execute("CREATE INDEX t_k ON t (k)") {
            assert_busy(&e, "CREATE INDEX beside the UPDATE");
            continue;
        }
        // Row 7 is found through the index by its current key, whatever the updater did.
        let mut stable = None;
        for _ in 0..50 {
            let k = scalar(&s, "SELECT /*+ FULL(t) */ k FROM t WHERE id = 7");
            let found = scalar(&s, &format!("SELECT /*+ INDEX(t t_k) */ COUNT(*) FROM t WHERE k = {k}"));
            if k == scalar(&s, "SELECT /*+ FULL(t) */ k FROM t WHERE id = 7") {
                stable = Some(found);
                break;
            }
        }
        if let Some(found) = stable {
            assert_eq!(found, "1", "row 7 must be in the index under its current key");
            checked += 1;
        }
        // DROP INDEX too may be refused while the updater's change is uncommitted.
        while let Err(e) = s.execute("DROP INDEX t_k") {
            assert_busy(&e, "DROP INDEX beside the UPDATE");
        }
    }
    done.store(true, Ordering::Release);
    let updated = updater.join().unwrap();
    assert!(checked > 0, "at least one CREATE INDEX got through");
    // Every committed update is in the table, and an index built now agrees with it.
    assert_eq!(int(&s, "SELECT k FROM t WHERE id = 7"), 7 + 1000 * updated, "{updated} updates of row 7");
    exec(&s, "CREATE INDEX t_k ON t (k)");
    let full = sorted_rows(&s, "SELECT /*+ FULL(t) */ id, k FROM t");
    assert_eq!(sorted_rows(&s, "SELECT /*+ INDEX(t t_k) */ id, k FROM t WHERE k > 0"), full);
}

/// Fails the test unless `e` is the refusal of a statement that met DDL (or DML) of
/// another session on its table: Oracle's ORA-00054, "resource busy".
fn assert_busy(e: &lioscope::Error, what: &str) {
    let busy = matches!(e, lioscope::Error::Transaction { message } if message.starts_with("resource busy: T "));
    assert!(busy, "{what} failed with an error the race cannot explain: {e} ({e:?})");
}

#[test]
fn create_index_reads_rows_committed_while_it_waited() {
    let (_dir, _, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    padded_table(&s, 30_000);
    // A long query holds the table; CREATE INDEX waits for it; meanwhile rows commit.
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || {
            db.session().execute(&format!("SELECT COUNT(*) FROM t WHERE {SLOW_FILTER}")).map(|_| ())
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let builder = {
        let db = db.clone();
        std::thread::spawn(move || db.session().execute("CREATE INDEX t_id ON t (id)").map(|_| ()))
    };
    std::thread::sleep(Duration::from_millis(50));
    exec(&db.session(), "INSERT INTO t SELECT 1000000 + LEVEL, 'new' FROM dual CONNECT BY LEVEL <= 100");
    reader.join().unwrap().unwrap();
    builder.join().unwrap().unwrap();
    let full = scalar(&s, "SELECT /*+ FULL(t) */ COUNT(*) FROM t WHERE id > 1000000");
    let indexed = scalar(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 1000000");
    assert_eq!((full.as_str(), indexed.as_str()), ("100", "100"));
}

#[test]
fn truncate_waits_for_an_index_scan_of_its_table() {
    let (_dir, _, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    padded_table(&s, 30_000);
    exec(&s, "CREATE INDEX t_id ON t (id)");
    let scan = {
        let db = db.clone();
        std::thread::spawn(move || {
            let s = db.session();
            s.execute(&format!("SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 0 AND {SLOW_FILTER}"))
                .map(|r| r.rows[0][0].to_string())
        })
    };
    // The scan's statement has begun (a loaded machine may take a while to start the
    // thread), and had time to reach its table.
    let started = Instant::now();
    while scalar(
        &s,
        "SELECT COUNT(*) FROM v$session WHERE status = 'ACTIVE' AND INSTR(sql_text, 'INDEX(t ' || 't_id)') > 0",
    ) == "0"
    {
        assert!(started.elapsed() < Duration::from_secs(30), "the scan never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    // Either TRUNCATE waited for the scan or was refused after its wait; the scan's
    // answer is whole either way.
    let truncated = match s.execute("TRUNCATE TABLE t") {
        Ok(_) => true,
        Err(e) => {
            assert_busy(&e, "TRUNCATE beside the index scan");
            false
        }
    };
    assert_eq!(scan.join().unwrap().expect("the scan is not broken by TRUNCATE"), "30000");
    // The table and its index agree afterwards: empty, or all the rows.
    let rows = if truncated { 0 } else { 30_000 };
    assert_eq!(int(&s, "SELECT /*+ FULL(t) */ COUNT(*) FROM t"), rows, "truncated: {truncated}");
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 0"), rows, "truncated: {truncated}");
}

/// Readers count every entry by an index fast full scan and by a range scan while another
/// session moves keys to the right end of the index, splitting leaves: the counts never
/// change. A fast full scan reads the blocks below the high-water mark it started with;
/// the entries a split moves into a new block above it are found through the leaf's
/// right link (and not counted twice when the scan read the leaf before the split).
#[test]
fn index_scans_count_every_entry_while_leaves_split() {
    let (_t, _d, db) = temp_db(options(2048, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER NOT NULL, v INTEGER, pad VARCHAR2(40))");
    exec(&s, "INSERT INTO t SELECT LEVEL, LEVEL, RPAD('p', 40, 'p') FROM dual CONNECT BY LEVEL <= 3000");
    exec(&s, "CREATE INDEX t_id ON t (id)");
    exec(&s, "COMMIT");
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let w = db.session();
            let started = Instant::now();
            let mut k = 0u64;
            while started.elapsed() < Duration::from_secs(3) {
                k += 1;
                exec(&w, &format!("UPDATE t SET id = id + 1000000 WHERE MOD(v, 3000) = {}", (k * 7919) % 3000));
                exec(&w, if k.is_multiple_of(5) { "ROLLBACK" } else { "COMMIT" });
            }
            stop.store(true, Ordering::Relaxed);
            k
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
            std::thread::spawn(move || {
                let r = db.session();
                let mut wrong = Vec::new();
                let mut rounds = 0;
                while !stop.load(Ordering::Relaxed) {
                    for q in [
                        "SELECT /*+ INDEX_FFS(t t_id) */ COUNT(*) FROM t",
                        "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 0",
                        "SELECT /*+ INDEX(t t_id) */ COUNT(v) FROM t WHERE id > 0",
                        "SELECT /*+ INDEX_DESC(t t_id) */ COUNT(*) FROM t WHERE id > 0",
                        "SELECT /*+ INDEX_DESC(t t_id) */ COUNT(v) FROM t WHERE id > 0",
                    ] {
                        let n = int(&r, q);
                        if n != 3000 {
                            wrong.push(format!("{q}: {n}"));
                        }
                    }
                    rounds += 1;
                }
                (rounds, wrong)
            })
        })
        .collect();
    let changes = writer.join().unwrap();
    assert!(changes > 20, "the writer moved keys ({changes} statements)");
    for reader in readers {
        let (rounds, wrong) = reader.join().unwrap();
        assert!(rounds > 0);
        assert!(wrong.is_empty(), "{} of {} rounds counted wrong, first: {:?}", wrong.len(), rounds, wrong.first());
    }
}

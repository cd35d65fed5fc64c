//! The buffer cache under concurrent sessions: readers that evict each other's blocks get
//! exact results and leave no pin behind; many multiblock scans through a small cache do
//! not starve each other of free buffers; a writer gets a block that readers keep busy,
//! waiting as `buffer busy waits`; every block get is counted once; concurrent
//! writers share the space map without handing an extent out twice. Whether a writer's
//! statement becomes visible to readers whole, and scans racing TRUNCATE, are checked by
//! tests ignored for the engine bugs they show.

mod common;

use common::*;
use lioscope::stats::Stat;
use lioscope::{Database, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Instant;
use tempfile::TempDir;

const BS: usize = 2048;

/// Rows of the big table; with ~230-byte rows a 2 KiB block holds 7, so ~3,000 blocks.
const BIG_ROWS: i64 = 21_000;

/// A database with a 1 MiB cache (512 buffers of 2 KiB) and table BIG of ~3,000 blocks, in
/// the temporary directory returned with it.
fn big_table() -> (TempDir, Database) {
    let (dir, _, db) = temp_db(options(BS, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE big (id INTEGER, grp INTEGER, pad VARCHAR2(220))");
    exec(
        &s,
        &format!(
            "INSERT INTO big SELECT LEVEL, MOD(LEVEL, 7), RPAD('p', 220, 'p') FROM dual CONNECT BY LEVEL <= {BIG_ROWS}"
        ),
    );
    (dir, db)
}

/// Sessions on threads of their own that run one scan over and over until stopped, keeping
/// whatever a scan finds wrong.
struct Readers<T> {
    /// Set to make each reader stop after the scan it is in.
    done: Arc<AtomicBool>,
    /// Each reader's findings and number of scans.
    threads: Vec<JoinHandle<(Vec<T>, u64)>>,
}

impl<T: Send + 'static> Readers<T> {
    /// Starts `n` readers, each in its own session, and returns when all of them are about
    /// to scan. `scan` returns what one scan found wrong, if anything.
    fn start(db: &Database, n: usize, scan: impl Fn(&Session) -> Option<T> + Send + Sync + 'static) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(Barrier::new(n + 1));
        let scan = Arc::new(scan);
        let threads = (0..n)
            .map(|_| {
                let (db, done, ready, scan) = (db.clone(), done.clone(), ready.clone(), scan.clone());
                std::thread::spawn(move || {
                    let session = db.session();
                    ready.wait();
                    let (mut wrong, mut scans) = (Vec::new(), 0);
                    while !done.load(Ordering::Acquire) {
                        wrong.extend(scan(&session));
                        scans += 1;
                    }
                    (wrong, scans)
                })
            })
            .collect();
        ready.wait();
        Readers { done, threads }
    }

    /// Stops the readers; returns what their scans found wrong and how many scans they ran.
    fn stop(self) -> (Vec<T>, u64) {
        self.done.store(true, Ordering::Release);
        let (mut wrong, mut scans) = (Vec::new(), 0);
        for thread in self.threads {
            let (w, n) = thread.join().expect("a reader panicked");
            wrong.extend(w);
            scans += n;
        }
        (wrong, scans)
    }
}

/// Four sessions scan BIG (~3,000 blocks) through a 512-buffer cache, RUNS times each,
/// and check every result and their consistent gets; returns the cache summary after all
/// of them ended.
fn concurrent_full_scans() -> lioscope::CacheSummary {
    let (_dir, db) = big_table();
    let s = db.session();
    let hwm = blocks_below_hwm(&s, "big") as u64;
    let buffers = db.cache_summary().buffers as u64;
    assert_eq!(buffers, 512);
    assert!(hwm > 5 * buffers, "the table ({hwm} blocks) is much larger than the cache ({buffers} buffers)");
    let expected_sum = BIG_ROWS * (BIG_ROWS + 1) / 2;
    let expected_grp3 = (1..=BIG_ROWS).filter(|i| i % 7 == 3).count() as i64;
    // Delayed block cleanout: the load's commit stamped only the blocks still cached; the
    // first scan stamps the rest (a consistent get of the undo header each), so that the
    // scans measured below find every block clean.
    exec(&s, "SELECT COUNT(*) FROM big");
    exec(&s, "ALTER SYSTEM CHECKPOINT");
    let sysstat_before = sysstat(&s, "consistent gets") as u64;
    let reads_before = sysstat(&s, "physical reads") as u64;

    const THREADS: usize = 4;
    const RUNS: usize = 6;
    let queries = [
        ("SELECT COUNT(*) FROM big", BIG_ROWS.to_string()),
        ("SELECT SUM(id) FROM big", expected_sum.to_string()),
        ("SELECT COUNT(*) FROM big WHERE grp = 3 AND pad LIKE 'p%'", expected_grp3.to_string()),
    ];
    let barrier = Arc::new(Barrier::new(THREADS));
    let started = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            let barrier = barrier.clone();
            let queries = queries.clone();
            std::thread::spawn(move || {
                let session: Session = db.session();
                // Different multiblock read sizes make the threads' reads overlap unevenly.
                exec(&session, &format!("ALTER SESSION SET db_file_multiblock_read_count = {}", [128, 16, 5, 1][t]));
                barrier.wait();
                let before = session.stats().get(Stat::ConsistentGets);
                let mut wrong = Vec::new();
                for run in 0..RUNS {
                    let (sql, expected) = &queries[(t + run) % queries.len()];
                    let got = scalar(&session, sql);
                    if &got != expected {
                        wrong.push(format!("thread {t} run {run}: {sql} returned {got}, expected {expected}"));
                    }
                }
                let gets = session.stats().get(Stat::ConsistentGets) - before;
                (gets, wrong)
            })
        })
        .collect();
    let mut total_gets = 0;
    for h in handles {
        let (gets, wrong) = h.join().expect("a scanning thread panicked");
        assert!(wrong.is_empty(), "{wrong:#?}");
        // Each scan: one consistent get of the segment header and one of every block below
        // the high-water mark (blocks_below_hwm counts the header as block 0).
        assert_eq!(gets, RUNS as u64 * hwm, "consistent gets of one session");
        total_gets += gets;
    }
    eprintln!("{THREADS} threads x {RUNS} scans of {hwm} blocks in {:?}", started.elapsed());
    assert_eq!(total_gets, (THREADS * RUNS) as u64 * hwm);
    let summary = db.cache_summary();
    assert!(summary.cached_blocks <= summary.buffers);
    // v$sysstat sums every session, the ended ones included.
    let sysstat_gets = sysstat(&s, "consistent gets") as u64 - sysstat_before;
    assert!(sysstat_gets >= total_gets, "v$sysstat consistent gets {sysstat_gets} < sum over sessions {total_gets}");
    // The cache could not hold the table: the scans read it again and again.
    let reads = sysstat(&s, "physical reads") as u64 - reads_before;
    // (Threads scanning in step share reads, so only one pass per run is certain.)
    assert!(reads >= RUNS as u64 * (hwm - buffers), "physical reads {reads}");
    // And the results are still right afterwards, in a fresh session.
    assert_eq!(count(&db.session(), "big"), BIG_ROWS);
    summary
}

#[test]
fn concurrent_full_scans_with_eviction_are_exact() {
    let summary = concurrent_full_scans();
    // Pins: see the ignored test below (a race leaks one now and then).
    assert!(summary.pinned <= 8, "many pins leaked: {summary:?}");
}

#[test]
fn concurrent_full_scans_with_eviction_leave_no_pins() {
    for round in 0..3 {
        let summary = concurrent_full_scans();
        assert_eq!(summary.pinned, 0, "round {round}: pins leaked after every session ended: {summary:?}");
    }
}

/// Batches a writer inserts, and rows per batch. The rows are tiny (~300 fit a block) and
/// 97 does not divide the rows per block, so most of a batch goes into the block that was
/// last when the statement began.
const BATCHES: i64 = 60;
const BATCH: i64 = 97;

/// One writer appends batches with INSERT ... SELECT while readers count. Returns the
/// counts the readers saw that are not a whole number of batches.
fn writer_and_readers(readers: usize, wide_rows: bool) -> (Vec<String>, u64) {
    let (_dir, _, db) = temp_db(options(BS, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE w (id INTEGER, batch INTEGER, pad VARCHAR2(100))");
    let pad = if wide_rows { "RPAD('w', 100, 'w')" } else { "NULL" };
    let readers = Readers::start(&db, readers, |session| {
        let r = exec(session, "SELECT COUNT(*), SUM(id), MAX(batch) FROM w");
        let n: i64 = r.rows[0][0].to_string().parse().unwrap();
        let sum: i64 = r.rows[0][1].to_string().parse().unwrap_or(0);
        let max_batch: i64 = r.rows[0][2].to_string().parse().unwrap_or(0);
        // Batches are committed in order, so a consistent view holds exactly the first k
        // batches: ids 1..=k*BATCH.
        (n % BATCH != 0 || sum != n * (n + 1) / 2 || max_batch != n / BATCH)
            .then(|| format!("count {n}, sum {sum}, max batch {max_batch}"))
    });
    let writer = db.session();
    for b in 0..BATCHES {
        let r = exec(
            &writer,
            &format!(
                "INSERT INTO w SELECT {} + LEVEL, {}, {pad} FROM dual CONNECT BY LEVEL <= {BATCH}",
                b * BATCH,
                b + 1
            ),
        );
        assert_eq!(r.rows_affected, BATCH as u64);
        std::thread::yield_now();
    }
    let (bad, scans) = readers.stop();
    assert_eq!(count_and_id_sum(&s, "w"), ids_up_to(BATCHES * BATCH));
    assert_eq!(db.cache_summary().pinned, 0);
    (bad, scans)
}

#[test]
fn scans_concurrent_with_inserts_see_whole_statements_only() {
    let (bad, scans) = writer_and_readers(3, false);
    assert!(
        bad.is_empty(),
        "{} of {scans} scans saw part of a statement, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn scans_concurrent_with_inserts_of_whole_blocks_are_consistent() {
    // With rows of ~110 bytes, a batch of 97 fills ~6 new blocks; the scans must still
    // return correct totals for the blocks they see, and never fail or leak a pin. (The
    // count may include part of the running statement: see the ignored test above.)
    let (bad, scans) = writer_and_readers(2, true);
    assert!(scans > 0);
    for b in &bad {
        // Whatever a scan saw must be a prefix of the ids: count and sum agree.
        let n: i64 = b.split(',').next().unwrap().trim_start_matches("count ").parse().unwrap();
        let sum: i64 = b.split(", ").nth(1).unwrap().trim_start_matches("sum ").parse().unwrap();
        assert_eq!(sum, n * (n + 1) / 2, "a scan saw rows that are not a prefix of the inserts: {b}");
    }
}

#[test]
fn concurrent_writers_to_one_table_and_to_different_tables() {
    // Small extents so the writers keep allocating from the shared space map.
    let (_dir, db_dir, db) = temp_db(options_with_extent(BS, 16 * BS, "1M"));
    let s = db.session();
    for t in ["shared", "own0", "own1", "own2"] {
        exec(&s, &format!("CREATE TABLE {t} (id INTEGER, writer INTEGER, pad VARCHAR2(150))"));
    }
    const WRITERS: i64 = 3;
    const STATEMENTS: i64 = 15;
    const ROWS: i64 = 100;
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let session = db.session();
                for i in 0..STATEMENTS {
                    let base = (w * STATEMENTS + i) * ROWS;
                    for table in ["shared".to_owned(), format!("own{w}")] {
                        exec(
                            &session,
                            &format!(
                                "INSERT INTO {table} SELECT {base} + LEVEL, {w}, RPAD('x', 150, 'x') \
                                 FROM dual CONNECT BY LEVEL <= {ROWS}"
                            ),
                        );
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a writer panicked");
    }
    let total = WRITERS * STATEMENTS * ROWS;
    let check = |s: &Session| {
        assert_eq!(count_and_id_sum(s, "shared"), ids_up_to(total));
        for w in 0..WRITERS {
            assert_eq!(int(s, &format!("SELECT COUNT(*) FROM shared WHERE writer = {w}")), STATEMENTS * ROWS);
            assert_eq!(count(s, &format!("own{w}")), STATEMENTS * ROWS);
            let lo = w * STATEMENTS * ROWS;
            let hi = lo + STATEMENTS * ROWS;
            assert_eq!(int(s, &format!("SELECT SUM(id) FROM own{w}")), (lo + 1 + hi) * (hi - lo) / 2);
            assert_eq!(int(s, &format!("SELECT COUNT(*) FROM own{w} WHERE writer <> {w}")), 0);
        }
    };
    check(&s);
    assert_eq!(db.cache_summary().pinned, 0);
    // No extent was handed to two segments: the file's allocated blocks are the header
    // extent plus every segment's blocks.
    let segment_blocks = int(&s, "SELECT SUM(blocks) FROM user_segments");
    drop(s);
    drop(db);
    let control: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db_dir.join("control.json")).unwrap()).unwrap();
    let entry = &control["datafiles"][0];
    assert_eq!(entry["free_extents"].as_array().unwrap().len(), 0);
    assert_eq!(entry["allocated_blocks"].as_i64().unwrap(), 16 + segment_blocks);
    let db = open(&db_dir, options(BS, "1M"));
    check(&db.session());
}

#[test]
fn scans_never_see_rows_of_a_statement_that_fails() {
    let (_dir, _, db) = temp_db(options(BS, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE w (id INTEGER, tag VARCHAR2(10))");
    // Ten committed rows: the last block has room for the failing statements' rows.
    exec(&s, "INSERT INTO w SELECT LEVEL, 'base' FROM dual CONNECT BY LEVEL <= 10");
    let readers = Readers::start(&db, 2, |session| Some(count(session, "w")).filter(|&n| n != 10));
    let writer = db.session();
    for _ in 0..150 {
        // Fails at its 150th row, after 149 rows went into the existing last block.
        let e = fail(
            &writer,
            "INSERT INTO w SELECT 100 + LEVEL, CASE WHEN LEVEL = 150 THEN 'much too long' ELSE 'doomed' END \
             FROM dual CONNECT BY LEVEL <= 200",
        );
        assert!(matches!(&e, lioscope::Error::InvalidValue { context, .. } if context == "W.TAG"), "{e:?}");
    }
    let (seen, scans) = readers.stop();
    assert_eq!(count(&s, "w"), 10, "the failed statements left rows behind");
    assert!(
        seen.is_empty(),
        "{} of {scans} scans counted rows of statements that were rolled back, e.g. {:?}",
        seen.len(),
        &seen[..seen.len().min(8)]
    );
}

#[test]
fn scans_concurrent_with_truncate_never_report_corruption() {
    let (_dir, _, db) = temp_db(options_with_extent(BS, 16 * BS, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, gen INTEGER, pad VARCHAR2(100))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 0, RPAD('p', 100, 'p') FROM dual CONNECT BY LEVEL <= 3000");
    let scan = |session: &Session| match session.execute("SELECT COUNT(*), MIN(gen), MAX(gen) FROM t") {
        Ok(r) => {
            let n: i64 = r.rows[0][0].to_string().parse().unwrap();
            // Empty, or one generation whole (or, with the known limitation of the other
            // ignored tests, part of the one being inserted).
            (n != 0 && r.rows[0][1] != r.rows[0][2])
                .then(|| format!("count {n}, generations {}..{}", r.rows[0][1], r.rows[0][2]))
        }
        Err(e @ lioscope::Error::Corrupt { .. }) => Some(e.to_string()),
        Err(_) => None,
    };
    let reader = Readers::start(&db, 1, scan);
    for g in 1..=30 {
        exec(&s, "TRUNCATE TABLE t");
        exec(&s, &format!("INSERT INTO t SELECT LEVEL, {g}, RPAD('p', 100, 'p') FROM dual CONNECT BY LEVEL <= 3000"));
    }
    let (bad, scans) = reader.stop();
    assert_eq!(count(&s, "t"), 3000);
    let (corrupt, mixed): (Vec<_>, Vec<_>) = bad.iter().partition(|b| b.starts_with("corrupt"));
    assert!(
        bad.is_empty(),
        "{} of {scans} scans failed with a corruption error, e.g. {:?}; {} returned rows of two \
         generations (old and new contents of the table), e.g. {:?}",
        corrupt.len(),
        corrupt.first(),
        mixed.len(),
        mixed.first()
    );
}

#[test]
fn concurrent_misses_on_the_same_block_leave_no_pins() {
    let (_dir, _, db) = temp_db(options(BS, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE one (id INTEGER)");
    exec(&s, "INSERT INTO one SELECT LEVEL FROM dual CONNECT BY LEVEL <= 10");
    // Readers of a one-block table: each scan first gets the segment header with a
    // single-block read when it is not cached, the path where the race is.
    let readers = Readers::start(&db, 3, |session| Some(count(session, "one")).filter(|&n| n != 10));
    // Keep dropping the blocks from the cache so the readers keep missing together.
    let started = Instant::now();
    while started.elapsed() < std::time::Duration::from_millis(1500) {
        exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    }
    let (wrong, scans) = readers.stop();
    assert!(wrong.is_empty(), "scans of a 10-row table counted {wrong:?}");
    let summary = db.cache_summary();
    assert!(scans > 100, "{scans} scans");
    assert_eq!(summary.pinned, 0, "pins leaked after {scans} scans: {summary:?}");
}

/// Many sessions scanning their own tables through a cache where each multiblock read
/// may pin a quarter of the buffers: a read that already holds pins stops short instead
/// of waiting for a free buffer, so no scan fails with "no free buffer" while the others
/// hold what it waits for.
#[test]
fn many_concurrent_multiblock_scans_share_a_small_cache() {
    const TABLES: usize = 12;
    const ROWS: i64 = 3_000;
    let (_dir, _, db) = temp_db(options(BS, "1M"));
    let s = db.session();
    for t in 0..TABLES {
        exec(&s, &format!("CREATE TABLE t{t} (id INTEGER, pad VARCHAR2(220))"));
        exec(&s, &format!("INSERT INTO t{t} SELECT LEVEL, RPAD('p', 220, 'p') FROM dual CONNECT BY LEVEL <= {ROWS}"));
    }
    drop(s);
    let db = Arc::new(db);
    let start = Arc::new(Barrier::new(TABLES));
    let sessions: Vec<_> = (0..TABLES)
        .map(|t| {
            let (db, start) = (Arc::clone(&db), Arc::clone(&start));
            std::thread::spawn(move || {
                let s = db.session();
                start.wait();
                (0..20)
                    .filter_map(|_| match s.query(&format!("SELECT COUNT(*), SUM(id) FROM t{t}")) {
                        Ok(r) if r.rows[0][0].to_string() == ROWS.to_string() => None,
                        Ok(r) => Some(format!("t{t}: wrong result {:?}", r.rows)),
                        Err(e) => Some(format!("t{t}: {e}")),
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let failures: Vec<String> = sessions.into_iter().flat_map(|h| h.join().unwrap()).collect();
    assert!(failures.is_empty(), "{} scans failed, first: {:?}", failures.len(), failures.first());
    assert_eq!(db.cache_summary().pinned, 0);
}

/// Sessions that SELECT from a one-block table over and over while another session
/// UPDATEs its rows one at a time: the writer gets the block every time (new readers
/// wait behind a writer waiting for the block's readers), and its waits for the
/// readers' shared locks are `buffer busy waits` in `v$session_event` and
/// `v$system_event`.
#[test]
fn a_writer_of_a_block_that_readers_keep_busy_gets_it_and_waits_as_buffer_busy_waits() {
    const ROWS: i64 = 10;
    let (_dir, _, db) = temp_db(options(BS, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE hot (id INTEGER, n INTEGER)");
    exec(&s, &format!("INSERT INTO hot SELECT LEVEL, 0 FROM dual CONNECT BY LEVEL <= {ROWS}"));
    let readers = Readers::start(&db, 4, |session| {
        let r = exec(session, "SELECT COUNT(*), SUM(n) FROM hot");
        (r.rows[0][0].to_string() != ROWS.to_string()).then(|| format!("{:?}", r.rows))
    });
    let writer = db.session();
    let busy_waits = |view: &str, filter: &str| {
        let sql = format!("SELECT total_waits FROM {view} WHERE event = 'buffer busy waits'{filter}");
        exec(&s, &sql).rows.first().map_or(0, |row| row[0].to_string().parse::<u64>().unwrap())
    };
    let mine = format!(" AND sid = {}", writer.sid());
    let started = Instant::now();
    let (mut updates, mut slowest) = (0, std::time::Duration::ZERO);
    // At least 200 updates, and on until one of them has waited for a reader.
    while updates < 200 || (busy_waits("v$session_event", &mine) == 0 && started.elapsed().as_secs() < 20) {
        let update = Instant::now();
        let r = exec(&writer, &format!("UPDATE hot SET n = n + 1 WHERE id = {}", 1 + updates % ROWS));
        assert_eq!(r.rows_affected, 1);
        slowest = slowest.max(update.elapsed());
        updates += 1;
    }
    let (bad, scans) = readers.stop();
    assert!(bad.is_empty(), "readers saw {bad:?}");
    assert!(scans > 0);
    assert!(slowest.as_secs() < 5, "an UPDATE waited {slowest:?} for the readers of its block");
    let writer_waits = busy_waits("v$session_event", &mine);
    assert!(writer_waits > 0, "{updates} updates in {:?} and no buffer busy waits", started.elapsed());
    assert!(busy_waits("v$system_event", "") >= writer_waits);
    assert_eq!(count_and_id_sum(&s, "hot"), (ROWS, ROWS * (ROWS + 1) / 2));
    assert_eq!(db.cache_summary().pinned, 0);
}

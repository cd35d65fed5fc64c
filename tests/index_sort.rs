//! CREATE INDEX whose sort spills: indexes built with a tiny `sort_area_size` answer
//! queries as a full scan does, count `sorts (disk)` (an in-memory build `sorts
//! (memory)`), wait on temporary I/O, and leave no temporary file behind, also when the
//! build fails (a unique index's duplicates found during the merge, a temporary write
//! refused by the I/O layer). An index built by CREATE INDEX has the statistics of the
//! same index maintained row by row by inserts, and the ones ANALYZE finds afterwards.

mod common;
use common::*;
use lioscope::io::{FaultIo, FaultPlan, Io};
use lioscope::stats::{Stat, WaitEvent};
use lioscope::{DatabaseOptions, Session};
use std::path::Path;
use std::sync::Arc;

const ROWS: u64 = 20_000;

/// A table of `rows` rows: `id` in insert order, `code` random with many duplicates and
/// some NULLs, `name` long keys sharing their first 40 bytes, `grp` a few values.
fn load(s: &Session, table: &str, rows: u64) {
    exec(s, &format!("CREATE TABLE {table} (id NUMBER NOT NULL, code VARCHAR2(10), name VARCHAR2(80), grp NUMBER)"));
    exec(
        s,
        &format!(
            "INSERT INTO {table} SELECT LEVEL,
                CASE WHEN MOD(LEVEL, 50) = 0 THEN NULL ELSE LPAD(ORA_HASH(LEVEL, 999, 1), 4, '0') END,
                'customer name with a long common prefix ' || ORA_HASH(LEVEL, 99999, 2),
                MOD(LEVEL, 7)
             FROM dual CONNECT BY LEVEL <= {rows}"
        ),
    );
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sort_"))
        .collect()
}

/// Rows of `select` through index `ix` (checked to be used) and by a full scan, sorted.
fn by_index_and_full_scan(s: &Session, ix: &str, select: &str) -> (Vec<String>, Vec<String>) {
    let sorted = |hint: &str| {
        let sql = select.replace("SELECT", &format!("SELECT /*+ {hint} */"));
        let mut out: Vec<String> = rows(s, &sql).iter().map(|r| format!("{r:?}")).collect();
        out.sort();
        out
    };
    let index_scans = || s.stats().get(Stat::IndexScansKdiixs1) + s.stats().get(Stat::IndexFetchByKey);
    let before = index_scans();
    let by_index = sorted(&format!("INDEX(t {ix})"));
    assert!(index_scans() > before, "{select} reads {ix}");
    (by_index, sorted("FULL(t)"))
}

#[test]
fn spilled_builds_answer_as_a_full_scan_and_leave_no_temporary_file() {
    let (_tmp, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    assert_eq!(parameter(&s, "sort_area_size"), "512M");
    for (bad, says) in [("1K", "below the minimum"), ("lots", "is not a size"), ("'-5'", "is not a size")] {
        let e = fail(&s, &format!("ALTER SESSION SET sort_area_size = {bad}")).to_string();
        assert!(e.contains("sort_area_size") && e.contains(says), "{bad}: {e}");
    }
    load(&s, "t", ROWS);
    exec(&s, "ALTER SESSION SET sort_area_size = 64K");
    let indexes = [
        ("t_id", "CREATE UNIQUE INDEX t_id ON t (id)"),
        ("t_code", "CREATE INDEX t_code ON t (code)"),
        ("t_name", "CREATE INDEX t_name ON t (name)"),
        ("t_grp_code", "CREATE INDEX t_grp_code ON t (grp, code)"),
    ];
    for (_, create) in indexes {
        let (disk, memory, rows_sorted) =
            (s.stats().get(Stat::SortsDisk), s.stats().get(Stat::SortsMemory), s.stats().get(Stat::SortsRows));
        let writes = s.stats().event(WaitEvent::DirectPathWriteTemp).waits;
        let reads = s.stats().event(WaitEvent::DirectPathReadTemp).waits;
        exec(&s, create);
        assert_eq!(s.stats().get(Stat::SortsDisk), disk + 1, "{create} spills");
        assert_eq!(s.stats().get(Stat::SortsMemory), memory, "{create}");
        assert!(s.stats().get(Stat::SortsRows) - rows_sorted >= ROWS - ROWS / 50, "{create}");
        assert!(s.stats().event(WaitEvent::DirectPathWriteTemp).waits > writes, "{create}");
        assert!(s.stats().event(WaitEvent::DirectPathReadTemp).waits > reads, "{create}");
        assert!(temp_files(&dir).is_empty(), "{create}: {:?}", temp_files(&dir));
    }
    let queries = [
        ("t_id", "SELECT id, code FROM t t WHERE id BETWEEN 777 AND 4321"),
        ("t_id", "SELECT id, name FROM t t WHERE id = 19999"),
        ("t_code", "SELECT id FROM t t WHERE code = '0042'"),
        ("t_code", "SELECT id, code FROM t t WHERE code BETWEEN '0100' AND '0200'"),
        ("t_code", "SELECT code FROM t t WHERE code > '0990'"),
        ("t_name", "SELECT id FROM t t WHERE name LIKE 'customer name with a long common prefix 12%'"),
        ("t_name", "SELECT id FROM t t WHERE name > 'customer name with a long common prefix 99'"),
        ("t_grp_code", "SELECT id FROM t t WHERE grp = 3 AND code > '0500'"),
        ("t_grp_code", "SELECT id, code FROM t t WHERE grp = 0 AND code = '0007'"),
    ];
    for (ix, select) in queries {
        let (by_index, full) = by_index_and_full_scan(&s, ix, select);
        assert!(!full.is_empty(), "{select} finds rows");
        assert_eq!(by_index, full, "{select}");
    }
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_code) */ COUNT(*) FROM t t WHERE code > '0'"), (ROWS - ROWS / 50) as i64);
}

#[test]
fn an_in_memory_build_counts_a_memory_sort() {
    let (_tmp, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    load(&s, "t", 5000);
    let (disk, memory) = (s.stats().get(Stat::SortsDisk), s.stats().get(Stat::SortsMemory));
    exec(&s, "CREATE INDEX t_code ON t (code)");
    assert_eq!((s.stats().get(Stat::SortsDisk), s.stats().get(Stat::SortsMemory)), (disk, memory + 1));
    assert_eq!(s.stats().event(WaitEvent::DirectPathWriteTemp).waits, 0);
    assert!(temp_files(&dir).is_empty());
    let (by_index, full) = by_index_and_full_scan(&s, "t_code", "SELECT id FROM t t WHERE code = '0042'");
    assert_eq!(by_index, full);
}

#[test]
fn duplicates_found_during_the_merge_fail_a_unique_build_cleanly() {
    let (_tmp, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    load(&s, "t", ROWS);
    exec(&s, "ALTER SESSION SET sort_area_size = 64K");
    let free_before = int(&s, "SELECT COUNT(*) FROM user_segments");
    let disk = s.stats().get(Stat::SortsDisk);
    let e = fail(&s, "CREATE UNIQUE INDEX t_code ON t (code)").to_string();
    assert!(e.contains("duplicate keys found"), "{e}");
    assert_eq!(s.stats().get(Stat::SortsDisk), disk + 1, "the sort spilled before the duplicates were met");
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_segments"), free_before);
    exec(&s, "CREATE UNIQUE INDEX t_code ON t (id)");
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_code) */ COUNT(*) FROM t t WHERE id > 0"), ROWS as i64);
}

#[test]
fn a_failed_temporary_write_fails_the_build_and_leaves_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let io = FaultIo::new(FaultPlan::default());
    let db = create(&dir, DatabaseOptions { io: Some(io.clone() as Arc<dyn Io>), ..options(8192, "16M") });
    let s = db.session();
    load(&s, "t", ROWS);
    exec(&s, "ALTER SESSION SET sort_area_size = 64K");
    io.fail_writes_to("sort_", libc::ENOSPC);
    let e = fail(&s, "CREATE INDEX t_name ON t (name)").to_string();
    assert!(e.contains("No space left") && e.contains("sort_"), "{e}");
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    // In memory the same build needs no temporary space.
    exec(&s, "ALTER SESSION SET sort_area_size = 16M");
    exec(&s, "CREATE INDEX t_name ON t (name)");
    assert_eq!(count(&s, "t"), ROWS as i64);
    assert!(temp_files(&dir).is_empty());
}

/// BLEVEL, LEAF_BLOCKS, DISTINCT_KEYS, CLUSTERING_FACTOR and NUM_ROWS of an index.
fn index_stats(s: &Session, ix: &str) -> [i64; 5] {
    let r = rows(
        s,
        &format!(
            "SELECT blevel, leaf_blocks, distinct_keys, clustering_factor, num_rows FROM user_indexes WHERE index_name = '{}'",
            ix.to_uppercase()
        ),
    );
    assert_eq!(r.len(), 1, "{ix}");
    std::array::from_fn(|i| r[0][i].to_string().parse().unwrap())
}

#[test]
fn a_built_index_has_the_statistics_of_one_maintained_by_inserts() {
    let (_tmp, _dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    let rows = 6000;
    for (sort_area, table) in [("512M", "built_in_memory"), ("64K", "built_spilled")] {
        load(&s, table, rows);
        exec(&s, &format!("ALTER SESSION SET sort_area_size = {sort_area}"));
        exec(&s, &format!("CREATE INDEX {table}_code ON {table} (code)"));
        exec(&s, &format!("CREATE INDEX {table}_id ON {table} (id)"));
    }
    exec(&s, "CREATE TABLE inserted (id NUMBER NOT NULL, code VARCHAR2(10), name VARCHAR2(80), grp NUMBER)");
    exec(&s, "CREATE INDEX inserted_code ON inserted (code)");
    exec(&s, "CREATE INDEX inserted_id ON inserted (id)");
    exec(&s, "INSERT INTO inserted SELECT * FROM built_in_memory");
    for table in ["built_in_memory", "built_spilled", "inserted"] {
        let at_build = [index_stats(&s, &format!("{table}_code")), index_stats(&s, &format!("{table}_id"))];
        exec(&s, &format!("ANALYZE TABLE {table} COMPUTE STATISTICS"));
        let analyzed = [index_stats(&s, &format!("{table}_code")), index_stats(&s, &format!("{table}_id"))];
        if table != "inserted" {
            assert_eq!(at_build, analyzed, "{table}: what CREATE INDEX recorded is what ANALYZE finds");
        }
    }
    for ix in ["code", "id"] {
        let [blevel, leaves, distinct, clustering, num_rows] = index_stats(&s, &format!("built_in_memory_{ix}"));
        let spilled = index_stats(&s, &format!("built_spilled_{ix}"));
        assert_eq!(spilled, [blevel, leaves, distinct, clustering, num_rows], "{ix}: spilled or not, one index");
        let [_, inserted_leaves, inserted_distinct, inserted_clustering, inserted_rows] =
            index_stats(&s, &format!("inserted_{ix}"));
        assert_eq!(
            (distinct, clustering, num_rows),
            (inserted_distinct, inserted_clustering, inserted_rows),
            "{ix}: the same entries in the same order"
        );
        // Leaves differ: a build fills them to 100 - PCTFREE percent, inserts split them
        // 50-50, or 90-10 at the right edge (where rows with equal codes go in insert order).
        println!("{ix}: leaf blocks built {leaves}, by inserts {inserted_leaves}; clustering factor {clustering}");
        assert!(leaves > 0 && inserted_leaves > 0);
    }
}

#[test]
fn a_key_too_long_for_a_block_is_an_error_in_a_spilling_build() {
    let (_tmp, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    exec(&s, "CREATE TABLE wide (id NUMBER, s VARCHAR2(4000))");
    exec(&s, "INSERT INTO wide SELECT LEVEL, LPAD(LEVEL, 500, 'x') FROM dual CONNECT BY LEVEL <= 3000");
    exec(&s, "INSERT INTO wide VALUES (0, LPAD('y', 3000, 'y'))");
    exec(&s, "ALTER SESSION SET sort_area_size = 64K");
    let e = fail(&s, "CREATE INDEX wide_s ON wide (s)").to_string();
    assert!(e.contains("maximum key length") && e.contains("WIDE_S"), "{e}");
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    exec(&s, "DELETE FROM wide WHERE id = 0");
    exec(&s, "CREATE INDEX wide_s ON wide (s)");
    assert_eq!(int(&s, "SELECT /*+ INDEX(w wide_s) */ COUNT(*) FROM wide w WHERE s > 'x'"), 3000);
}

//! Indexes on tables compressed with Hybrid Columnar Compression: CREATE INDEX on a
//! compressed copy (compression units plus rows inserted later into row blocks) at every
//! level gives index paths that answer as the row table does, fetching rows by rowid
//! out of compression units (`EHCC Rowid CUs Decompressed`); ANALYZE of a compressed
//! table gives its true row count, blocks and column figures, and its indexes' figures;
//! EXPLAIN costs a full scan of the compressed copy below the row table's, and a fetch by
//! rowid into a compression unit as the unit it decompresses.

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;

const LEVELS: [&str; 4] = ["QUERY LOW", "QUERY HIGH", "ARCHIVE LOW", "ARCHIVE HIGH"];

/// The session's value of statistic `name` (v$mystat).
fn mystat(s: &Session, name: &str) -> i64 {
    int(s, &format!("SELECT value FROM v$mystat WHERE name = '{name}'"))
}

/// The plan of a query, as one text.
fn plan(s: &Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN PLAN FOR {sql}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n")
}

/// The cost EXPLAIN PLAN gives the line of the plan of `sql` that holds `operation`.
fn cost_of(s: &Session, sql: &str, operation: &str) -> f64 {
    let shown = plan(s, sql);
    let line = shown.lines().find(|l| l.contains(operation)).unwrap_or_else(|| panic!("{operation} in:\n{shown}"));
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    let header = shown.lines().find(|l| l.contains("Cost")).expect("a header line");
    let at = header.split('|').map(str::trim).position(|c| c.starts_with("Cost")).expect("a Cost column");
    let cost = cells[at].split_whitespace().next().expect("a cost");
    cost.parse().unwrap_or_else(|_| panic!("cost {cost:?} in {line}"))
}

/// Row table `t` (the customers-like rows), its compressed copy `c{i}` at each level, a
/// few rows inserted into both afterwards (into the copies' row blocks), and the same
/// indexes on each: on `id` (unique in load order), on `name` (97 values spread over every
/// unit) and on (`flag`, `amount`).
fn tables(s: &Session, rows: u32, inserted: u32) {
    customers_like(s, rows);
    for (i, level) in LEVELS.iter().enumerate() {
        exec(s, &format!("CREATE TABLE c{i} COMPRESS FOR {level} AS SELECT * FROM t"));
    }
    let late = format!(
        "SELECT 100000 + LEVEL, 'name-' || MOD(LEVEL, 5), LEVEL, TO_DATE('2021-06-01', 'YYYY-MM-DD'), 'Y', NULL FROM dual CONNECT BY LEVEL <= {inserted}"
    );
    exec(s, &format!("INSERT INTO t {late}"));
    for i in 0..LEVELS.len() {
        exec(s, &format!("INSERT INTO c{i} {late}"));
    }
    exec(s, "COMMIT");
    for table in std::iter::once("t".to_owned()).chain((0..LEVELS.len()).map(|i| format!("c{i}"))) {
        exec(s, &format!("CREATE UNIQUE INDEX {table}_id ON {table} (id)"));
        exec(s, &format!("CREATE INDEX {table}_name ON {table} (name)"));
        exec(s, &format!("CREATE INDEX {table}_flag ON {table} (flag, amount)"));
    }
}

/// `select` with `where_` through index `index` of each compressed copy answers as the
/// row table through a full scan; the plan shows the index.
fn same_as_row_table(s: &Session, select: &str, index: &str, where_: &str) -> Result<(), TestCaseError> {
    let want = sorted_rows(s, &format!("SELECT /*+ FULL(t) */ {select} FROM t WHERE {where_}"));
    for (i, level) in LEVELS.iter().enumerate() {
        let sql = format!("SELECT /*+ INDEX(c{i} c{i}_{index}) */ {select} FROM c{i} WHERE {where_}");
        let shown = plan(s, &sql);
        prop_assert!(shown.to_uppercase().contains(&format!("C{i}_{}", index.to_uppercase())), "{sql}:\n{shown}");
        let got = sorted_rows(s, &sql);
        prop_assert_eq!(&got, &want, "{} ({})", sql, level);
    }
    Ok(())
}

#[test]
fn index_paths_into_compressed_copies_answer_as_the_row_table() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    tables(&s, 20_000, 30);
    let all = "id, name, amount, born, flag, note";
    let checks = [
        (all, "id", "id = 777"),
        (all, "id", "id = 100007"),
        (all, "id", "id = 0"),
        (all, "id", "id BETWEEN 4990 AND 5130"),
        (all, "id", "id >= 19990"),
        ("COUNT(*), SUM(amount)", "id", "id BETWEEN 100 AND 9000"),
        (all, "name", "name = 'name-3'"),
        ("COUNT(note), MAX(born)", "name", "name BETWEEN 'name-1' AND 'name-19'"),
        (all, "flag", "flag = 'Y' AND amount BETWEEN 10 AND 12"),
        ("id, note", "flag", "flag = 'N' AND amount IS NULL AND id < 300"),
    ];
    for (select, index, where_) in checks {
        let before = mystat(&s, "EHCC Rowid CUs Decompressed");
        same_as_row_table(&s, select, index, where_).unwrap();
        let moved = mystat(&s, "EHCC Rowid CUs Decompressed") - before;
        if where_ != "id = 0" && where_ != "id = 100007" {
            assert!(moved > 0, "{where_}: rows fetched out of compression units");
        }
    }
    // Consecutive rowids into one unit decompress it once: a range of ids in load order
    // (one unit's rows, or two) decompresses one or two units, not a unit a row.
    let before = mystat(&s, "EHCC Rowid CUs Decompressed");
    let fetched = mystat(&s, "table fetch by rowid");
    assert_eq!(int(&s, "SELECT /*+ INDEX(c0 c0_id) */ COUNT(note) FROM c0 WHERE id BETWEEN 1000 AND 1100"), 80);
    assert_eq!(mystat(&s, "table fetch by rowid") - fetched, 101);
    let units = mystat(&s, "EHCC Rowid CUs Decompressed") - before;
    assert!((1..=2).contains(&units), "{units} units decompressed for 101 rows in load order");
    // A row inserted after the load is in a row block: no unit to decompress.
    let before = mystat(&s, "EHCC Rowid CUs Decompressed");
    assert_eq!(scalar(&s, "SELECT /*+ INDEX(c3 c3_id) */ name FROM c3 WHERE id = 100012"), "name-2");
    assert_eq!(mystat(&s, "EHCC Rowid CUs Decompressed"), before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(6), ..ProptestConfig::default() })]

    /// Random ranges of ids and names through the compressed copies' indexes answer as
    /// the row table's full scan.
    #[test]
    fn random_index_ranges_answer_as_the_row_table(
        ranges in prop::collection::vec((0i64..3100, 0i64..600, 0i64..97, 0i64..20), 1..5),
        inserted in 0u32..40,
    ) {
        let (_t, _d, db) = temp_db(options(4096, "32M"));
        let s = db.session();
        tables(&s, 3000, inserted);
        for (low, width, name, names) in ranges {
            let ids = format!("id BETWEEN {low} AND {}", low + width);
            same_as_row_table(&s, "id, name, amount, born, flag, note", "id", &ids)?;
            same_as_row_table(&s, "COUNT(*), SUM(amount), MIN(note)", "id", &format!("{ids} AND flag = 'Y'"))?;
            let names = format!("name BETWEEN 'name-{name}' AND 'name-{}'", name + names);
            same_as_row_table(&s, "id, amount", "name", &names)?;
            same_as_row_table(&s, "COUNT(*)", "flag", &format!("flag = 'Y' AND amount > {}", low % 1000))?;
        }
    }
}

#[test]
fn analyze_of_a_compressed_table_counts_its_rows_blocks_columns_and_indexes() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    tables(&s, 12_000, 25);
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    for (i, level) in LEVELS.iter().enumerate() {
        let c = format!("C{i}");
        let built = rows(
            &s,
            &format!(
                "SELECT index_name, blevel, leaf_blocks, distinct_keys, clustering_factor, num_rows FROM user_indexes WHERE table_name = '{c}' ORDER BY 1"
            ),
        );
        exec(&s, &format!("ANALYZE TABLE {c} COMPUTE STATISTICS"));
        let (num_rows, blocks) = (
            int(&s, &format!("SELECT num_rows FROM user_tables WHERE table_name = '{c}'")),
            int(&s, &format!("SELECT blocks FROM user_tables WHERE table_name = '{c}'")),
        );
        assert_eq!(num_rows, count(&s, &c), "{}", level);
        assert_eq!(num_rows, 12_025);
        assert_eq!(blocks, blocks_below_hwm(&s, &c) - 1, "{}: the segment header is not counted", level);
        assert!(
            blocks < int(&s, "SELECT blocks FROM user_tables WHERE table_name = 'T'"),
            "{}: fewer blocks than the row table",
            level
        );
        // The column figures are the row table's: the same values.
        let columns = |t: &str| {
            sorted_rows(
                &s,
                &format!(
                    "SELECT column_name, num_distinct, low_value, high_value, num_nulls, avg_col_len FROM user_tab_columns WHERE table_name = '{t}'"
                ),
            )
        };
        assert_eq!(columns(&c), columns("T"), "{}", level);
        // The indexes' figures: what their build gathered, and what the rows say.
        let analyzed = rows(
            &s,
            &format!(
                "SELECT index_name, blevel, leaf_blocks, distinct_keys, clustering_factor, num_rows FROM user_indexes WHERE table_name = '{c}' ORDER BY 1"
            ),
        );
        assert_eq!(analyzed, built, "{}", level);
        let figure =
            |ix: &str, what: &str| int(&s, &format!("SELECT {what} FROM user_indexes WHERE index_name = '{c}_{ix}'"));
        assert_eq!(figure("ID", "num_rows"), num_rows);
        assert_eq!(figure("ID", "distinct_keys"), num_rows);
        assert_eq!(figure("NAME", "distinct_keys"), int(&s, &format!("SELECT COUNT(DISTINCT name) FROM {c}")));
        // Rows of one unit share its head's address: an index in load order changes
        // "block" once a unit (and once a row block for the rows inserted later), far
        // fewer times than the row table's index changes block.
        let units = figure("ID", "clustering_factor");
        let row_table = int(&s, "SELECT clustering_factor FROM user_indexes WHERE index_name = 'T_ID'");
        assert!(units >= 2 && units < row_table, "{}: clustering factor {units}, the row table's {row_table}", level);
        assert!(figure("NAME", "clustering_factor") > units, "names are spread over every unit");
    }
}

#[test]
fn explain_costs_a_compressed_full_scan_below_the_row_table_and_rowid_access_by_its_units() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    tables(&s, 20_000, 0);
    // Eight blocks a multiblock read: the row table takes several reads, each copy fewer.
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 8");
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    let row_cost = cost_of(&s, "SELECT COUNT(note) FROM t", "TABLE ACCESS FULL");
    let mut costs = Vec::new();
    for (i, level) in LEVELS.iter().enumerate() {
        exec(&s, &format!("ANALYZE TABLE c{i} COMPUTE STATISTICS"));
        let sql = format!("SELECT COUNT(note) FROM c{i}");
        let cost = cost_of(&s, &sql, "TABLE ACCESS FULL");
        assert!(cost < row_cost, "{}: full scan cost {cost}, the row table's {row_cost}", level);
        costs.push(cost);
    }
    // An index path into compression units pays a unit's blocks (two or more) for each
    // unit it visits, where a row table's pays one block a block visited: the visits
    // are the clustering factor's share, ceil(clustering_factor / 97) for one name.
    let table_part = |t: &str| {
        let sql = format!("SELECT /*+ INDEX({t} {t}_name) */ id, note FROM {t} WHERE name = 'name-5'");
        let cf = int(
            &s,
            &format!("SELECT clustering_factor FROM user_indexes WHERE index_name = '{}_NAME'", t.to_uppercase()),
        );
        let part = cost_of(&s, &sql, "TABLE ACCESS BY INDEX ROWID") - cost_of(&s, &sql, "INDEX RANGE SCAN");
        (part, (cf as f64 / 97.0).ceil())
    };
    let (row_part, row_visits) = table_part("t");
    assert!(row_part <= row_visits + 1.0, "the row table's {row_part} for {row_visits} blocks");
    for (i, level) in LEVELS.iter().enumerate() {
        let (part, visits) = table_part(&format!("c{i}"));
        assert!(part >= 2.0 * visits, "{}: {part} for {visits} units", level);
        // Unhinted, the optimizer prefers the compressed copy's full scan for a value
        // spread over every unit; one row by its unique key costs a unit's blocks, more
        // than the row table's one block.
        let unhinted = plan(&s, &format!("SELECT id, note FROM c{i} WHERE name = 'name-5'"));
        assert!(unhinted.contains("TABLE ACCESS FULL"), "{}:\n{unhinted}", level);
        let one = |t: &str| {
            let sql = format!("SELECT /*+ INDEX({t} {t}_id) */ id, note FROM {t} WHERE id = 4242");
            cost_of(&s, &sql, "TABLE ACCESS BY INDEX ROWID")
        };
        assert!(one(&format!("c{i}")) > one("t"), "{}", level);
    }
}

#[test]
fn a_damaged_compression_unit_is_reported_by_a_fetch_by_rowid() {
    let (_t, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    customers_like(&s, 2000);
    exec(&s, "CREATE TABLE h COMPRESS FOR QUERY LOW AS SELECT * FROM t");
    exec(&s, "CREATE INDEX h_id ON h (id)");
    drop(s);
    db.close().unwrap();
    drop(db);
    // Flip a byte of the first compression unit's head block (type 0x3a) on disk.
    let mut damaged = false;
    for file in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        let Ok(mut bytes) = std::fs::read(&file) else { continue };
        if let Some(block) = (0..bytes.len() / 8192).find(|b| bytes[b * 8192] == 0x3a) {
            bytes[block * 8192 + 4000] ^= 0x5a;
            std::fs::write(&file, &bytes).unwrap();
            damaged = true;
            break;
        }
    }
    assert!(damaged, "a compression unit's head block on disk");
    let db = open(&dir, options(8192, "16M"));
    let s = db.session();
    let e = fail(&s, "SELECT /*+ INDEX(h h_id) */ name FROM h WHERE id = 5").to_string();
    assert!(e.contains("corrupt") || e.contains("checksum"), "{e}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 2000, "the rest of the database reads");
}

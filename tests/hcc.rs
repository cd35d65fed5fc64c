//! Tables compressed with Hybrid Columnar Compression through SQL: CREATE TABLE ...
//! COMPRESS FOR each level AS SELECT answers every query as the row table it was copied
//! from (random predicates and aggregates, rows inserted afterwards into row blocks,
//! beside a concurrent writer), takes fewer blocks, counts its decompression in the EHCC
//! statistics, survives a restart and a crash, refuses what it does not take with a
//! clear error, and reports a damaged block instead of reading it.

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;

const LEVELS: [&str; 4] = ["QUERY LOW", "QUERY HIGH", "ARCHIVE LOW", "ARCHIVE HIGH"];

/// The customers-like table with fractions in `amount`, so its units hold NUMBER keys too.
fn customers_like(s: &Session, rows: u32) {
    common::customers_like(s, rows);
    exec(s, "UPDATE t SET amount = amount + 0.25 WHERE MOD(id, 7) = 0");
    exec(s, "COMMIT");
}

/// Predicates the column kernels run, and ones left to the row path.
fn predicate() -> impl Strategy<Value = String> {
    let one = prop_oneof![
        (0i64..3000).prop_map(|k| format!("id > {k}")),
        (0i64..3000, 0i64..400).prop_map(|(a, b)| format!("id BETWEEN {a} AND {}", a + b)),
        (0i64..1000).prop_map(|k| format!("amount <= {k}")),
        Just("amount IS NULL".to_owned()),
        Just("note IS NOT NULL".to_owned()),
        (0i64..97).prop_map(|k| format!("name = 'name-{k}'")),
        (0i64..13, 0i64..13).prop_map(|(a, b)| format!("note IN ('n{a}', 'n{b}', 'zz')")),
        Just("flag = 'Y'".to_owned()),
        (0i64..400).prop_map(|d| format!("born < TO_DATE('2020-01-01', 'YYYY-MM-DD') + {d}")),
        (0i64..50).prop_map(|k| format!("amount * 2 > {k}")),
        Just("name LIKE 'name-1%'".to_owned()),
        (0i64..10).prop_map(|k| format!("name NOT LIKE '%{k}%'")),
        (0i64..13).prop_map(|k| format!("note LIKE '%{k}'")),
        (1i64..5).prop_map(|k| format!("amount > {k}.5")),
    ];
    prop::collection::vec(one, 0..3)
        .prop_map(|terms| if terms.is_empty() { "1 = 1".into() } else { terms.join(" AND ") })
}

/// Select lists, each with what follows the WHERE clause.
const SELECTS: [(&str, &str); 5] = [
    ("COUNT(*), COUNT(amount), COUNT(note)", ""),
    ("SUM(amount), MIN(name), MAX(born)", ""),
    ("SUM(id), AVG(id), MIN(amount), MAX(amount), MAX(note), MIN(born), COUNT(flag)", ""),
    ("id, name, amount, born, flag, note", ""),
    // Groups a compression unit folds a column at a time.
    ("flag, note, COUNT(*), COUNT(amount), SUM(amount * 3 - id), AVG(amount)", " GROUP BY flag, note"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(8), ..ProptestConfig::default() })]

    /// For random predicates, at every level, a compressed copy answers as the row table;
    /// still after rows are inserted into both (the copy's go to row blocks).
    #[test]
    fn compressed_copies_answer_as_the_row_table(
        predicates in prop::collection::vec(predicate(), 1..5),
        inserted in 0i64..40,
    ) {
        let (_t, _d, db) = temp_db(options(4096, "32M"));
        let s = db.session();
        customers_like(&s, 3000);
        for (i, level) in LEVELS.iter().enumerate() {
            exec(&s, &format!("CREATE TABLE h{i} COMPRESS FOR {level} AS SELECT * FROM t"));
        }
        for round in 0..2 {
            if round == 1 {
                let insert = format!(
                    "SELECT 5000 + LEVEL, 'late', LEVEL, TO_DATE('2021-06-01', 'YYYY-MM-DD'), 'Y', NULL FROM dual CONNECT BY LEVEL <= {inserted}"
                );
                exec(&s, &format!("INSERT INTO t {insert}"));
                for i in 0..LEVELS.len() {
                    exec(&s, &format!("INSERT INTO h{i} {insert}"));
                }
                exec(&s, "COMMIT");
            }
            for p in &predicates {
                for (select, tail) in SELECTS {
                    let want = sorted_rows(&s, &format!("SELECT {select} FROM t WHERE {p}{tail}"));
                    for (i, level) in LEVELS.iter().enumerate() {
                        let got = sorted_rows(&s, &format!("SELECT {select} FROM h{i} WHERE {p}{tail}"));
                        prop_assert_eq!(&got, &want, "{} {}: SELECT {} WHERE {}", round, level, select, p);
                    }
                }
            }
        }
    }
}

#[test]
fn a_compressed_copy_is_smaller_shows_its_level_and_counts_its_decompression() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    customers_like(&s, 40_000);
    let result = exec(&s, "CREATE TABLE h COMPRESS FOR QUERY LOW AS SELECT * FROM t");
    assert_eq!(result.message.as_deref(), Some("Table created."));
    exec(&s, "CREATE TABLE plain NOCOMPRESS AS SELECT id, name AS who, amount AS amt, 'x' AS tag, 7 AS seven FROM t");
    exec(&s, "CREATE TABLE later COLUMN STORE COMPRESS FOR ARCHIVE HIGH AS SELECT * FROM t WHERE id <= 100");
    assert_eq!(
        sorted_rows(
            &s,
            "SELECT table_name, compression, compress_for FROM user_tables WHERE table_name IN ('T', 'H', 'PLAIN', 'LATER')"
        ),
        [
            "Str(\"H\")|Str(\"ENABLED\")|Str(\"QUERY LOW\")",
            "Str(\"LATER\")|Str(\"ENABLED\")|Str(\"ARCHIVE HIGH\")",
            "Str(\"PLAIN\")|Str(\"DISABLED\")|Null",
            "Str(\"T\")|Str(\"DISABLED\")|Null",
        ]
    );
    assert_eq!(int(&s, "SELECT COUNT(*) FROM plain WHERE tag = 'x' AND seven = 7 AND who IS NOT NULL"), 40_000);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM later"), 100);
    let (rows_blocks, hcc_blocks) = (blocks_below_hwm(&s, "T"), blocks_below_hwm(&s, "H"));
    assert!(hcc_blocks * 2 < rows_blocks, "the compressed copy takes {hcc_blocks} blocks, the rows {rows_blocks}");
    // A full scan reads every block of the copy and decompresses only what it reads.
    let (gets, cus, columns, not_decompressed) = (
        sysstat(&s, "consistent gets"),
        sysstat(&s, "EHCC CUs Decompressed"),
        sysstat(&s, "EHCC Columns Decompressed"),
        sysstat(&s, "EHCC Rows Not Decompressed"),
    );
    let ql = sysstat(&s, "EHCC Query Low CUs Decompressed");
    assert_eq!(int(&s, "SELECT COUNT(name) FROM h WHERE id > 0"), int(&s, "SELECT COUNT(name) FROM t WHERE id > 0"));
    let decompressed = sysstat(&s, "EHCC CUs Decompressed") - cus;
    assert!(decompressed > 0);
    assert_eq!(sysstat(&s, "EHCC Query Low CUs Decompressed") - ql, decompressed);
    assert_eq!(sysstat(&s, "EHCC Columns Decompressed") - columns, 2 * decompressed, "id and name only");
    assert!(sysstat(&s, "consistent gets") - gets >= hcc_blocks - 1, "every block of the copy");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 40_000);
    assert_eq!(sysstat(&s, "EHCC Rows Not Decompressed") - not_decompressed, 40_000, "COUNT(*) reads the heads");
    assert!(sysstat(&s, "HCC load direct rows") >= 40_100);
    assert!(sysstat(&s, "EHCC Compressed Length Decompressed") < sysstat(&s, "EHCC Decompressed Length Decompressed"));
}

#[test]
fn what_a_compressed_table_does_not_take_is_refused_clearly() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    customers_like(&s, 500);
    exec(&s, "CREATE TABLE h COMPRESS FOR QUERY HIGH AS SELECT * FROM t");
    let e = fail(&s, "ALTER TABLE h INMEMORY").to_string();
    assert!(e.contains("INMEMORY") && e.contains("FOR QUERY HIGH"), "{e}");
    for (sql, says) in [
        ("CREATE TABLE x COMPRESS AS SELECT * FROM t", "COMPRESS"),
        ("CREATE TABLE x COMPRESS FOR OLTP AS SELECT * FROM t", "COMPRESS FOR OLTP"),
        ("CREATE TABLE x COMPRESS FOR QUERY MEDIUM AS SELECT * FROM t", "QUERY LOW"),
        ("CREATE TABLE x AS SELECT id + 1 FROM t", "alias"),
        ("CREATE TABLE x AS SELECT id + 1 AS n FROM t", "CAST"),
        ("CREATE TABLE x (a NUMBER) AS SELECT id FROM t", "aliases"),
        ("CREATE TABLE x AS SELECT id, id FROM t", "ID"),
        ("CREATE INDEX x ON t (id) COMPRESS FOR QUERY LOW", "COMPRESS"),
    ] {
        let e = fail(&s, sql).to_string();
        assert!(e.contains(says), "{sql}: {e}");
    }
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'X'"), 0, "nothing left behind");
    // A load that fails part of the way (a row's predicate divides by zero) leaves no
    // table, compressed or not.
    for compress in ["COMPRESS FOR QUERY LOW", "NOCOMPRESS"] {
        let e = fail(&s, &format!("CREATE TABLE y {compress} AS SELECT * FROM t WHERE 1 / (id - 400) > -5"));
        assert!(e.to_string().contains("zero"), "{e}");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'Y'"), 0);
    }
    // INSERT still works: into row blocks after the compression units.
    exec(&s, "INSERT INTO h SELECT * FROM t WHERE id <= 10");
    exec(&s, "COMMIT");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 510);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h WHERE id <= 10"), 20);
}

#[test]
fn compressed_tables_survive_a_restart_and_a_crash_after_their_creation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let want;
    {
        let db = create(&dir, options(8192, "32M"));
        let s = db.session();
        customers_like(&s, 5000);
        exec(&s, "CREATE TABLE h COMPRESS FOR ARCHIVE LOW AS SELECT * FROM t");
        want = sorted_rows(&s, "SELECT id, name, amount, born, flag, note FROM t");
        drop(s);
        db.close().unwrap();
    }
    {
        let db = open(&dir, options(8192, "32M"));
        let s = db.session();
        assert_eq!(sorted_rows(&s, "SELECT id, name, amount, born, flag, note FROM h"), want, "after a restart");
    }
    // Created, acknowledged, then the power fails before any datafile write: recovery
    // replays the load from the log.
    let db = crash_after(&dir, options(8192, "32M"), 11, |db| {
        exec(&db.session(), "CREATE TABLE h2 COMPRESS FOR QUERY LOW AS SELECT * FROM t WHERE MOD(id, 2) = 0");
    });
    let s = db.session();
    assert_eq!(
        sorted_rows(&s, "SELECT id, name, amount, born, flag, note FROM h2"),
        sorted_rows(&s, "SELECT id, name, amount, born, flag, note FROM t WHERE MOD(id, 2) = 0"),
        "after a crash"
    );
}

#[test]
fn a_damaged_compression_unit_is_reported_not_read() {
    let (_t, dir, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    customers_like(&s, 2000);
    exec(&s, "CREATE TABLE h COMPRESS FOR QUERY LOW AS SELECT * FROM t");
    drop(s);
    db.close().unwrap();
    drop(db);
    // Flip a byte in the middle of the first compression unit's head block (type 0x3a)
    // in whichever datafile holds it.
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
    let e = fail(&s, "SELECT COUNT(name) FROM h").to_string();
    assert!(e.contains("corrupt") || e.contains("checksum"), "{e}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 2000, "the rest of the database reads");
}

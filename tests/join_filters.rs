//! Join filters: a hash join's Bloom filter of its build keys, checked in the probe side's
//! scan (row blocks, compression units, the column store). The answers with the filter
//! forced on (`PX_JOIN_FILTER`) equal those with it forced off (`NO_PX_JOIN_FILTER`) and
//! those of a sort-merge join, for inner joins, outer joins that keep the build side,
//! NULL and duplicate keys, keys of two columns, of strings and of few values, a build
//! side spilled to temp; `join filter rows removed` shows the filter ran; joins that
//! keep the probe side's unmatched rows never get one; the plan shows its lines and the
//! optimizer takes one by itself when the build side is selective.

mod common;

use common::*;
use lioscope::Session;
use lioscope::types::Datum;

/// `c`: 2,000 customers (id, region = id mod 10, code 'k' || id), one with NULL keys and
/// twins of every hundredth; `o`: 20,000 orders whose `cust_id` runs over 1..2,600 (so
/// some join no customer), every 53rd NULL, `region` = order id mod 7.
fn tables(s: &Session) {
    exec(s, "CREATE TABLE c (id INTEGER, region INTEGER, code VARCHAR2(12), name VARCHAR2(40))");
    exec(
        s,
        "INSERT INTO c SELECT LEVEL, MOD(LEVEL, 10), 'k' || LEVEL, 'customer ' || LEVEL FROM dual CONNECT BY LEVEL <= 2000",
    );
    exec(s, "INSERT INTO c VALUES (NULL, 3, NULL, 'no id')");
    exec(s, "INSERT INTO c SELECT id, region, code, 'twin ' || id FROM c WHERE MOD(id, 100) = 3");
    exec(s, "CREATE TABLE o (id INTEGER, cust_id INTEGER, region INTEGER, code VARCHAR2(12), amount NUMBER)");
    exec(
        s,
        "INSERT INTO o SELECT LEVEL, CASE WHEN MOD(LEVEL, 53) = 0 THEN NULL ELSE MOD(LEVEL * 7, 2600) + 1 END, \
         MOD(LEVEL, 7), CASE WHEN MOD(LEVEL, 53) = 0 THEN NULL ELSE 'k' || (MOD(LEVEL * 7, 2600) + 1) END, \
         MOD(LEVEL, 1000) / 4 FROM dual CONNECT BY LEVEL <= 20000",
    );
    exec(s, "COMMIT");
}

/// Joins a filter may serve (the probe side `o` keeps no unmatched row), `{h}` for the
/// hints and `{o}` for the orders' table.
const FILTERED: [&str; 7] = [
    "SELECT /*+ {h} */ c.id, c.name, o.id, o.amount FROM c JOIN {o} o ON o.cust_id = c.id WHERE c.region = 3",
    "SELECT /*+ {h} */ c.id, o.id FROM c JOIN {o} o ON o.cust_id = c.id AND o.region = c.region WHERE c.name LIKE 'customer 1%'",
    "SELECT /*+ {h} */ c.code, o.id FROM c JOIN {o} o ON o.code = c.code WHERE c.region IN (1, 2)",
    "SELECT /*+ {h} */ c.id, o.id FROM c LEFT JOIN {o} o ON o.cust_id = c.id AND o.amount > 100 WHERE c.region = 5",
    "SELECT /*+ {h} */ c.id, o.id FROM {o} o RIGHT JOIN c ON o.cust_id = c.id WHERE c.region = 7",
    "SELECT /*+ {h} */ COUNT(*), SUM(o.amount), COUNT(c.name) FROM c JOIN {o} o ON o.cust_id = c.id WHERE c.id < 300",
    // A key of few values (`o.region`: 0 to 6), each checked once a unit in the column store.
    "SELECT /*+ {h} */ c.id, o.id FROM c JOIN {o} o ON o.region = c.id WHERE c.id < 3",
];

/// Joins that keep the probe side's unmatched rows: a filter would lose them.
const NOT_FILTERED: [&str; 2] = [
    "SELECT /*+ {h} */ o.id, c.id FROM {o} o LEFT JOIN c ON o.cust_id = c.id AND c.region = 3",
    "SELECT /*+ {h} */ o.id, c.id FROM c FULL JOIN {o} o ON o.cust_id = c.id AND c.region = 3",
];

const ON: &str = "LEADING(c o) USE_HASH(o) PX_JOIN_FILTER(o)";
const OFF: &str = "LEADING(c o) USE_HASH(o) NO_PX_JOIN_FILTER(o)";
const MERGE: &str = "LEADING(c o) USE_MERGE(o) NO_PX_JOIN_FILTER(o)";

fn query(template: &str, hints: &str, orders: &str) -> String {
    template.replace("{h}", hints).replace("{o}", orders)
}

/// The rows of `sql` and the rows its join filter removed and checked meanwhile.
fn run_counted(s: &Session, sql: &str) -> (Vec<String>, i64, i64) {
    let (removed, checked) = (mystat(s, "join filter rows removed"), mystat(s, "join filter rows checked"));
    let out = sorted_rows(s, sql);
    (out, mystat(s, "join filter rows removed") - removed, mystat(s, "join filter rows checked") - checked)
}

/// Each query of FILTERED over `orders`: with the filter, the same rows as without it
/// and as the merge join over the row table `o`; the filter removed rows, and its plan
/// has its lines. Returns the rows each filtered run removed.
fn filtered_answers_agree(s: &Session, orders: &str) -> Vec<i64> {
    let mut removed_each = Vec::new();
    for template in FILTERED {
        let expected = sorted_rows(s, &query(template, MERGE, "o"));
        assert!(!expected.is_empty(), "{template}");
        let (off, removed_off, _) = run_counted(s, &query(template, OFF, orders));
        assert_eq!(off, expected, "{template} over {orders}, hash join without a filter");
        assert_eq!(removed_off, 0, "{template}: no filter, nothing removed");
        let on_sql = query(template, ON, orders);
        let (on, removed, checked) = run_counted(s, &on_sql);
        assert_eq!(on, expected, "{template} over {orders}, with the join filter");
        assert!(removed > 0, "{template} over {orders}: the filter removed nothing");
        assert!(checked >= removed, "{checked} rows checked, {removed} removed");
        let p = plan(s, &on_sql);
        for line in ["JOIN FILTER CREATE", "JOIN FILTER USE", ":BF0000", "SYS_OP_BLOOM_FILTER(:BF0000,"] {
            assert!(p.contains(line), "{on_sql}: no {line} in\n{p}");
        }
        removed_each.push(removed);
    }
    removed_each
}

#[test]
fn the_filter_changes_no_answer_of_the_row_table_and_removes_rows() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    let removed = filtered_answers_agree(&s, "o");
    // The first query's build side is region 3: 200 customer ids of the 2,600 values
    // `cust_id` runs over. Every order that joins none goes (those with a NULL key too),
    // but for the filter's false positives, about 1%.
    let joining = int(&s, "SELECT COUNT(*) FROM o WHERE MOD(cust_id, 10) = 3 AND cust_id <= 2000");
    let not_joining = 20_000 - joining;
    assert!(removed[0] <= not_joining, "it removed {} rows, {not_joining} join nothing", removed[0]);
    assert!(removed[0] as f64 >= not_joining as f64 * 0.97, "{} removed of {not_joining}", removed[0]);
}

#[test]
fn joins_keeping_the_probe_side_unmatched_rows_take_no_filter() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    for template in NOT_FILTERED {
        let expected = sorted_rows(&s, &query(template, MERGE, "o"));
        let on_sql = query(template, ON, "o");
        let (on, removed, checked) = run_counted(&s, &on_sql);
        assert_eq!(on, expected, "{template}");
        assert_eq!((removed, checked), (0, 0), "{template}: a filter ran");
        let p = plan(&s, &on_sql);
        assert!(!p.contains("JOIN FILTER"), "{p}");
        assert!(p.contains("hint not used: PX_JOIN_FILTER(O)"), "{p}");
    }
}

#[test]
fn a_spilled_build_side_still_gives_every_row() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    let optimal: Vec<Vec<String>> = FILTERED.iter().map(|q| sorted_rows(&s, &query(q, ON, "o"))).collect();
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 64K");
    let spilled_before = mystat(&s, "workarea executions - onepass") + mystat(&s, "workarea executions - multipass");
    let template = "SELECT /*+ {h} */ c.id, c.name, o.id FROM c JOIN {o} o ON o.cust_id = c.id WHERE c.region < 8";
    let expected = sorted_rows(&s, &query(template, MERGE, "o"));
    let (on, removed, _) = run_counted(&s, &query(template, ON, "o"));
    assert_eq!(on, expected);
    assert!(removed > 0);
    let spilled = mystat(&s, "workarea executions - onepass") + mystat(&s, "workarea executions - multipass");
    assert!(spilled > spilled_before, "the build side of 1,600 customers spilled from 64K");
    for (q, expected) in FILTERED.iter().zip(&optimal) {
        assert_eq!(&sorted_rows(&s, &query(q, ON, "o")), expected, "{q} in a 64K work area");
    }
}

#[test]
fn the_compressed_scan_applies_the_filter_on_its_units() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    exec(&s, "CREATE TABLE oh COMPRESS FOR QUERY HIGH AS SELECT * FROM o");
    let cus = sysstat(&s, "EHCC CUs Decompressed");
    filtered_answers_agree(&s, "oh");
    assert!(sysstat(&s, "EHCC CUs Decompressed") > cus, "the orders were read from compression units");
}

#[test]
fn the_in_memory_scan_applies_the_filter_on_its_units() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ALTER SYSTEM SET inmemory_size = 64M");
    exec(&s, "ALTER TABLE o INMEMORY PRIORITY HIGH");
    let code = &rows(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)")[0][0];
    assert_eq!(code, &Datum::Int(0), "populated");
    let p = plan(&s, &query(FILTERED[0], ON, "o"));
    assert!(p.contains("TABLE ACCESS INMEMORY FULL"), "{p}");
    let im_rows = sysstat(&s, "IM scan rows");
    filtered_answers_agree(&s, "o");
    assert!(sysstat(&s, "IM scan rows") > im_rows, "the orders were read from the column store");
}

#[test]
fn the_optimizer_takes_a_filter_when_the_build_side_is_selective() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ANALYZE TABLE c COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE o COMPUTE STATISTICS");
    let selective =
        "SELECT /*+ USE_HASH(o) USE_HASH(c) */ c.name, o.amount FROM c JOIN o ON o.cust_id = c.id WHERE c.region = 3";
    let p = plan(&s, selective);
    assert!(p.contains("JOIN FILTER USE") && p.contains("SYS_OP_BLOOM_FILTER(:BF0000,\"O\".\"CUST_ID\")"), "{p}");
    let (rows_auto, removed, _) = run_counted(&s, selective);
    assert!(removed > 0);
    assert_eq!(rows_auto, sorted_rows(&s, &selective.replace("USE_HASH(c) */", "USE_HASH(c) NO_PX_JOIN_FILTER(o) */")));
    // Every customer: their keys cover most of the orders' values, a filter would pass
    // most rows.
    let whole = "SELECT /*+ USE_HASH(o) USE_HASH(c) */ c.name, o.amount FROM c JOIN o ON o.cust_id = c.id";
    assert!(!plan(&s, whole).contains("JOIN FILTER"), "{}", plan(&s, whole));
    let refused = plan(&s, &selective.replace("USE_HASH(c) */", "USE_HASH(c) NO_PX_JOIN_FILTER(o) */"));
    assert!(!refused.contains("JOIN FILTER"), "{refused}");
}

#[test]
fn the_filter_line_counts_the_rows_it_passed() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    s.set_plan_statistics(true);
    let result = exec(&s, &query(FILTERED[0], ON, "o"));
    let stats = result.plan_statistics.expect("asked for");
    let line = |op: &str| stats.lines.iter().find(|l| l.operation == op).unwrap_or_else(|| panic!("{op}: {stats:?}"));
    let passed = line("JOIN FILTER USE").rows;
    // Every order that joins passes, and few others (the false positives).
    let joining = int(&s, "SELECT COUNT(*) FROM o WHERE MOD(cust_id, 10) = 3 AND cust_id <= 2000") as u64;
    assert!(passed >= joining && passed <= joining + 20_000 / 50, "{passed} rows passed, {joining} join");
    let scan = stats.lines.iter().find(|l| l.name == "O").expect("the orders' scan");
    assert_eq!(scan.rows, passed, "the scan's line shows the rows its filter passed");
    let build = line("JOIN FILTER CREATE").rows;
    assert_eq!(build, int(&s, "SELECT COUNT(*) FROM c WHERE region = 3") as u64);
}

#[test]
fn semi_and_anti_joins_of_unnested_subqueries_filter_their_probe_scan() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ANALYZE TABLE c COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE o COMPUTE STATISTICS");
    // (query, the join's line, whether its probe scan takes a filter): the 200 customers
    // of region 3 build; the 20,000 orders probe.
    let cases = [
        // The query's rows build, the subquery's table probes.
        (
            "SELECT c.id, c.name FROM c WHERE c.region = 3 AND EXISTS (SELECT /*+ {h} */ 1 FROM o WHERE o.cust_id = c.id)",
            "HASH JOIN SEMI",
            true,
        ),
        (
            "SELECT c.id, c.name FROM c WHERE c.region = 3 AND NOT EXISTS (SELECT /*+ {h} */ 1 FROM o WHERE o.cust_id = c.id)",
            "HASH JOIN ANTI",
            true,
        ),
        // The subquery's rows build, the query's table probes.
        (
            "SELECT o.id, o.amount FROM o WHERE EXISTS (SELECT /*+ {h} */ 1 FROM c WHERE c.id = o.cust_id AND c.region = 3)",
            "HASH JOIN RIGHT SEMI",
            true,
        ),
        // The query's rows that join nothing are the answer: no filter may drop them.
        (
            "SELECT o.id FROM o WHERE NOT EXISTS (SELECT /*+ {h} */ 1 FROM c WHERE c.id = o.cust_id AND c.region = 3)",
            "HASH JOIN RIGHT ANTI",
            false,
        ),
    ];
    for (template, join, filtered) in cases {
        let expected = sorted_rows(&s, &template.replace("{h}", "NO_UNNEST"));
        assert!(!expected.is_empty(), "{template}");
        let sql = template.replace("{h}", "UNNEST HASH_SJ HASH_AJ");
        let p = plan(&s, &sql);
        assert!(p.contains(join), "{sql}: no {join} in\n{p}");
        let (answer, removed, checked) = run_counted(&s, &sql);
        assert_eq!(answer, expected, "{sql}: the unnested join against the FILTER");
        if filtered {
            for line in ["JOIN FILTER CREATE", "JOIN FILTER USE", "SYS_OP_BLOOM_FILTER(:BF0000,\"O\".\"CUST_ID\")"] {
                assert!(p.contains(line) || p.contains(&line.replace("\"O\".", "")), "{sql}: no {line} in\n{p}");
            }
            // Every order but those of region 3's customers (and the false positives).
            assert!(removed > 15_000 && checked >= removed, "{sql}: {removed} removed of {checked} checked");
        } else {
            assert!(!p.contains("JOIN FILTER"), "{sql}:\n{p}");
            assert_eq!(removed, 0, "{sql}");
        }
    }
}

#[test]
fn a_grouped_view_of_an_unnested_subquery_is_filtered_before_its_group_by() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    tables(&s);
    exec(&s, "ANALYZE TABLE c COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE o COMPUTE STATISTICS");
    // The 200 customers of region 3 build; the view groups the 20,000 orders by customer.
    let templates = [
        "SELECT c.id, c.name FROM c WHERE c.region = 3 AND c.id / 10 < (SELECT /*+ {h} */ MAX(o.amount) FROM o WHERE o.cust_id = c.id)",
        "SELECT c.id FROM c WHERE c.region = 3 AND c.id < (SELECT /*+ {h} */ 0.5 * SUM(o.amount) FROM o WHERE o.cust_id = c.id AND o.region < 5)",
    ];
    let check = |s: &Session, columnar: bool| {
        for template in templates {
            let expected = sorted_rows(s, &template.replace("{h}", "NO_UNNEST"));
            assert!(!expected.is_empty(), "{template}");
            let sql = template.replace("{h}", "UNNEST");
            let p = plan(s, &sql);
            for line in [
                "VIEW",
                "HASH GROUP BY",
                "JOIN FILTER CREATE",
                "JOIN FILTER USE",
                "SYS_OP_BLOOM_FILTER(:BF0000,\"CUST_ID\")",
            ] {
                assert!(p.contains(line), "{sql}: no {line} in\n{p}");
            }
            assert_eq!(p.contains("INMEMORY"), columnar, "{p}");
            let (answer, removed, checked) = run_counted(s, &sql);
            assert_eq!(answer, expected, "{sql}: the join with the filtered view against the FILTER");
            // The orders of other customers (about 92% of those the view's own filter
            // keeps) never reach the GROUP BY.
            assert!(
                checked > 10_000 && removed as f64 > checked as f64 * 0.85,
                "{sql}: {removed} removed of {checked} checked"
            );
        }
    };
    check(&s, false);
    exec(&s, "ALTER SYSTEM SET inmemory_size = 64M");
    exec(&s, "ALTER TABLE o INMEMORY PRIORITY HIGH");
    let code = &rows(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)")[0][0];
    assert_eq!(code, &Datum::Int(0), "populated");
    check(&s, true);
}

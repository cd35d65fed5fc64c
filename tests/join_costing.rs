//! The optimizer's join costs for cached tables: an unhinted join of a mid-size outer
//! row count to a cached inner table through its unique index is a HASH JOIN when every
//! read is costed as a disk read (the defaults), and a NESTED LOOPS with
//! `optimizer_cache_awareness` (the blocks counted in the cache, costed as logical
//! reads' CPU) or with Oracle's `optimizer_index_caching` and `optimizer_index_cost_adj`
//! set far enough; awareness of a cache that holds none of the tables changes nothing.
//! The parameters refuse values out of their ranges, naming them.

mod common;

use common::*;
use lioscope::{Error, Session};

/// `join_inner` (20,000 rows, a 60-byte pad, a unique index on `k`) and `join_outer`
/// (20,000 rows), analyzed, every block of both and of the index read into the cache.
fn tables(s: &Session) {
    exec(s, "CREATE TABLE join_inner (k INTEGER, pad VARCHAR2(60))");
    exec(s, "CREATE TABLE join_outer (n INTEGER, k INTEGER)");
    exec(s, "INSERT INTO join_inner SELECT level, RPAD('x', 60, 'x') FROM dual CONNECT BY level <= 20000");
    exec(s, "INSERT INTO join_outer SELECT level, level FROM dual CONNECT BY level <= 20000");
    exec(s, "COMMIT");
    exec(s, "CREATE UNIQUE INDEX join_inner_k ON join_inner (k)");
    exec(s, "ANALYZE TABLE join_inner COMPUTE STATISTICS");
    exec(s, "ANALYZE TABLE join_outer COMPUTE STATISTICS");
    warm(s);
}

/// Every block of both tables and of the index in the cache.
fn warm(s: &Session) {
    assert_eq!(int(s, "SELECT /*+ FULL(i) */ COUNT(i.pad) FROM join_inner i"), 20_000);
    assert_eq!(int(s, "SELECT /*+ INDEX(i join_inner_k) */ COUNT(i.pad) FROM join_inner i WHERE i.k > 0"), 20_000);
    assert_eq!(int(s, "SELECT /*+ FULL(o) */ COUNT(o.k) FROM join_outer o"), 20_000);
}

/// 300 outer rows, each joined to one inner row.
const JOIN: &str = "SELECT COUNT(i.pad) FROM join_outer o JOIN join_inner i ON i.k = o.k WHERE o.n <= 300";

/// The join line of the unhinted plan.
fn method(s: &Session) -> &'static str {
    let plan =
        rows(s, &format!("EXPLAIN PLAN FOR {JOIN}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n");
    let found = ["NESTED LOOPS", "HASH JOIN", "MERGE JOIN"].into_iter().find(|m| plan.contains(m));
    let method = found.unwrap_or_else(|| panic!("no join line in\n{plan}"));
    if method == "NESTED LOOPS" {
        assert!(plan.contains("INDEX UNIQUE SCAN") && plan.contains("JOIN_INNER_K"), "a probe of the index:\n{plan}");
    }
    method
}

#[test]
fn a_cached_inner_table_turns_the_join_into_a_nested_loop_only_when_the_model_sees_the_cache() {
    let (_tmp, _dir, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    tables(&s);
    assert_eq!(int(&s, JOIN), 300);

    // Every read a disk read: four single-block reads a probe against two full scans.
    assert_eq!(method(&s), "HASH JOIN");

    // Cache-aware: a probe costs about 1 µs of CPU, while the hash join scans every
    // inner row and checks it against its join filter: the nested loop is cheaper up to
    // about 1,000 outer rows (there callgrind counts 14.2 M instructions for it, 15.2 M
    // for the hash join with its filter, 27.8 M without).
    exec(&s, "ALTER SESSION SET optimizer_cache_awareness = TRUE");
    assert_eq!(method(&s), "NESTED LOOPS");
    assert_eq!(int(&s, JOIN), 300);

    // The same awareness of a cache holding none of it costs as the defaults do.
    exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    assert_eq!(method(&s), "HASH JOIN");
    warm(&s);
    assert_eq!(method(&s), "NESTED LOOPS");
    exec(&s, "ALTER SESSION SET optimizer_cache_awareness = FALSE");
    assert_eq!(method(&s), "HASH JOIN");

    // Oracle's knobs: 90% of the probes' index blocks cached and index paths at 25% of
    // their cost still leave a probe at a third of a disk read, dearer than a thousand
    // rows' share of the two scans; at 100% and 1%, the probe is almost free.
    exec(&s, "ALTER SESSION SET optimizer_index_caching = 90");
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 25");
    assert_eq!(method(&s), "HASH JOIN");
    exec(&s, "ALTER SESSION SET optimizer_index_caching = 100");
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 1");
    assert_eq!(method(&s), "NESTED LOOPS");
    // The cost adjustment alone, at 1%: each of the four reads costs 0.01.
    exec(&s, "ALTER SESSION SET optimizer_index_caching = 0");
    assert_eq!(method(&s), "NESTED LOOPS");
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 100");
    assert_eq!(method(&s), "HASH JOIN");
}

/// `optimizer_index_cost_adj` moves a single table's choice between an index range scan
/// and a full scan, as Oracle's does.
#[test]
fn the_index_cost_adjustment_moves_a_single_tables_access_path() {
    let (_tmp, _dir, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    tables(&s);
    let query = "EXPLAIN PLAN FOR SELECT COUNT(i.pad) FROM join_inner i WHERE i.k <= 4000";
    let plan = |s: &Session| rows(s, query).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n");
    // A fifth of the table by a well-clustered index is still dearer than the full scan.
    assert!(plan(&s).contains("TABLE ACCESS FULL"), "{}", plan(&s));
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 10");
    assert!(plan(&s).contains("INDEX RANGE SCAN"), "{}", plan(&s));
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 100");
    assert!(plan(&s).contains("TABLE ACCESS FULL"), "{}", plan(&s));
}

#[test]
fn the_optimizer_parameters_refuse_values_out_of_range() {
    let (_tmp, _dir, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    let invalid = |sql: &str, name: &str, fragment: &str| match s.execute(sql) {
        Err(Error::InvalidParameter { name: n, message }) => {
            assert_eq!(n, name);
            assert!(message.contains(fragment), "message '{message}' should contain '{fragment}'");
        }
        other => panic!("{sql}: expected an invalid parameter error, got {other:?}"),
    };
    invalid(
        "ALTER SESSION SET optimizer_index_caching = 101",
        "optimizer_index_caching",
        "101 is not between 0 and 100",
    );
    invalid(
        "ALTER SYSTEM SET optimizer_index_caching = 'most'",
        "optimizer_index_caching",
        "'most' is not a whole number",
    );
    invalid(
        "ALTER SESSION SET optimizer_index_cost_adj = 0",
        "optimizer_index_cost_adj",
        "0 is not between 1 and 10000",
    );
    invalid(
        "ALTER SYSTEM SET optimizer_index_cost_adj = 10001",
        "optimizer_index_cost_adj",
        "10001 is not between 1 and 10000",
    );
    invalid(
        "ALTER SESSION SET optimizer_cache_awareness = maybe",
        "optimizer_cache_awareness",
        "'maybe' is not TRUE or FALSE",
    );
    // Nothing changed; good values are taken by either statement.
    let value =
        |name: &str| rows(&s, &format!("SELECT value FROM v$parameter WHERE name = '{name}'"))[0][0].to_string();
    assert_eq!(
        (value("optimizer_index_caching"), value("optimizer_index_cost_adj"), value("optimizer_cache_awareness")),
        ("0".into(), "100".into(), "FALSE".into())
    );
    exec(&s, "ALTER SYSTEM SET optimizer_index_caching = 90");
    exec(&s, "ALTER SESSION SET optimizer_index_cost_adj = 25");
    exec(&s, "ALTER SESSION SET optimizer_cache_awareness = true");
    assert_eq!(
        (value("optimizer_index_caching"), value("optimizer_index_cost_adj"), value("optimizer_cache_awareness")),
        ("90".into(), "25".into(), "TRUE".into())
    );
}

/// Equalities on every column of a table's primary key find one of its rows for each
/// row of the other side, whatever the product of the columns' selectivities says: the
/// join order weighs them together, so a filtered table is joined to the large one
/// before the table keyed on both columns (TPC-H Q9's part, lineitem and partsupp).
#[test]
fn a_join_on_a_whole_composite_key_is_estimated_as_one_row_of_that_table_each() {
    let (_tmp, _dir, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE parts (p_id INTEGER PRIMARY KEY, p_kind INTEGER)");
    exec(&s, "CREATE TABLE offers (o_part INTEGER, o_supp INTEGER, o_cost NUMBER, PRIMARY KEY (o_part, o_supp))");
    exec(&s, "CREATE TABLE sales (s_part INTEGER, s_supp INTEGER, s_qty INTEGER)");
    exec(&s, "INSERT INTO parts SELECT level, MOD(level, 20) FROM dual CONNECT BY level <= 2000");
    // Four offers a part, from 1,000 suppliers: the two columns' distinct values
    // multiply to 2,000,000, against 8,000 offers.
    exec(
        &s,
        "INSERT INTO offers SELECT p_id, MOD(p_id * 7 + k * 250, 1000) + 1, p_id + k \
         FROM parts, (SELECT level k FROM dual CONNECT BY level <= 4) four",
    );
    // Each sale of one of its part's offers.
    exec(
        &s,
        "INSERT INTO sales SELECT MOD(level, 2000) + 1, \
         MOD((MOD(level, 2000) + 1) * 7 + (MOD(TRUNC(level / 2000), 4) + 1) * 250, 1000) + 1, level \
         FROM dual CONNECT BY level <= 40000",
    );
    exec(&s, "COMMIT");
    for t in ["parts", "offers", "sales"] {
        exec(&s, &format!("ANALYZE TABLE {t} COMPUTE STATISTICS"));
    }
    let query = "SELECT COUNT(o_cost) FROM parts, sales, offers \
                 WHERE p_id = s_part AND o_part = s_part AND o_supp = s_supp AND p_kind = 3";
    assert_eq!(int(&s, query), 2000);
    let plan = rows(&s, &format!("EXPLAIN PLAN FOR {query}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>();
    // Each line's operation, indented by its depth, and its object's name.
    let cells: Vec<(&str, &str)> = plan
        .iter()
        .filter_map(|l| {
            let mut cells = l.split('|').skip(2);
            Some((cells.next()?, cells.next()?.trim()))
        })
        .collect();
    let depth = |op: &str| op.len() - op.trim_start().len();
    let joined_first = cells.iter().enumerate().any(|(i, (op, _))| {
        let below: Vec<&str> =
            cells[i + 1..].iter().take_while(|(o, _)| depth(o) > depth(op)).map(|&(_, name)| name).collect();
        op.contains("JOIN") && below.contains(&"PARTS") && below.contains(&"SALES") && !below.contains(&"OFFERS")
    });
    assert!(joined_first, "PARTS and SALES joined first:\n{}", plan.join("\n"));
}

/// Where both sides' columns hold a key of their table, a join finds at most one row of
/// the smaller table for each of its rows: its estimate is the larger table's one pair in
/// as many rows, whichever side is joined first.
#[test]
fn a_join_of_two_composite_keys_estimates_the_same_rows_in_either_order() {
    let (_tmp, _dir, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE ka (x INTEGER, y INTEGER, PRIMARY KEY (x, y))");
    exec(&s, "CREATE TABLE kb (x INTEGER, y INTEGER, z INTEGER, PRIMARY KEY (x, y))");
    exec(&s, "INSERT INTO ka SELECT level, MOD(level, 7) FROM dual CONNECT BY level <= 100");
    exec(&s, "INSERT INTO kb SELECT level, MOD(level, 7), level FROM dual CONNECT BY level <= 10000");
    exec(&s, "COMMIT");
    exec(&s, "ANALYZE TABLE ka COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE kb COMPUTE STATISTICS");
    for hint in ["", "/*+ LEADING(ka kb) */", "/*+ LEADING(kb ka) */"] {
        let query = format!("SELECT {hint} COUNT(kb.z) FROM ka, kb WHERE ka.x = kb.x AND ka.y = kb.y");
        assert_eq!(int(&s, &query), 100);
        let plan = rows(&s, &format!("EXPLAIN PLAN FOR {query}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>();
        let join = plan.iter().find(|l| l.contains("JOIN")).unwrap_or_else(|| panic!("a join in {plan:#?}"));
        let rows: Vec<&str> = join.split('|').map(str::trim).collect();
        assert_eq!(rows.get(4), Some(&"100"), "{hint}: the join's rows in\n{}", plan.join("\n"));
    }
}

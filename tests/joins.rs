//! Joins against an independent engine: random tables (with NULLs and duplicate keys)
//! and random queries of two to five tables (inner joins in either syntax, LEFT, RIGHT
//! and FULL outer joins, conditions that are and are not equalities, WHERE clauses on
//! one table and on several), run by lioscope under each join method forced by hint and
//! in more than one join order, and by SQLite; the result multisets must agree. Each
//! forced method is checked to be the one the plan shows.
//!
//! Outer joins that Oracle's `(+)` operator can say are also run in that syntax.
//!
//! Also the name resolution a join brings: ambiguous and unknown names, aliases.

mod common;

use common::*;
use lioscope::Session;
use lioscope::types::Value;
use proptest::prelude::*;

/// A random table: rows of (id, a, b, c); `a` and `c` small numbers, `b` a short text,
/// each possibly NULL.
type Row = (i64, Option<i64>, Option<&'static str>, Option<i64>);

#[derive(Debug, Clone)]
struct Table {
    rows: Vec<Row>,
    index_on_a: bool,
    analyzed: bool,
}

fn table() -> impl Strategy<Value = Table> {
    let row = (
        0i64..1000,
        proptest::option::weighted(0.85, 0i64..5),
        proptest::option::weighted(0.8, prop_oneof![Just("x"), Just("y"), Just("z")]),
        proptest::option::weighted(0.85, 0i64..8),
    );
    (proptest::collection::vec(row, 0..12), any::<bool>(), any::<bool>())
        .prop_map(|(rows, index_on_a, analyzed)| Table { rows, index_on_a, analyzed })
}

/// How a table joins the ones before it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `, tN` with the condition in WHERE.
    Comma,
    Inner,
    Left,
    Right,
    Full,
}

/// A join of table `i` to a table before it: the kind, the equality's columns, and an
/// extra condition that is not an equality of two columns.
#[derive(Debug, Clone)]
struct Step {
    kind: Kind,
    partner: usize,
    on_b: bool,
    extra: Option<u8>,
}

#[derive(Debug, Clone)]
struct Query {
    tables: Vec<Table>,
    steps: Vec<Step>,
    /// Conditions of the WHERE clause: (table, kind of condition).
    filters: Vec<(usize, u8)>,
    /// How far apart the values of column `a`, a join key, lie: `a` is stored as
    /// `(a - 1) * spread` (1: numbers close together, which a hash join finds by number;
    /// 2^40: numbers far apart, which it finds by hash).
    spread: i64,
    /// Whether the select list reads each table's `id` alone: the columns the joins and
    /// filters read are then read by nothing above them.
    ids_only: bool,
}

impl Query {
    /// Column `a`'s stored value for drawn value `a`.
    fn stored_a(&self, a: i64) -> i64 {
        (a - 1) * self.spread
    }
}

fn query() -> impl Strategy<Value = Query> {
    (2usize..=5)
        .prop_flat_map(|n| {
            let steps = (1..n)
                .map(|i| {
                    (
                        prop_oneof![
                            Just(Kind::Comma),
                            Just(Kind::Inner),
                            Just(Kind::Left),
                            Just(Kind::Right),
                            Just(Kind::Full)
                        ],
                        0..i,
                        any::<bool>(),
                        proptest::option::weighted(0.3, 0u8..3),
                    )
                        .prop_map(|(kind, partner, on_b, extra)| Step {
                            kind,
                            partner,
                            on_b,
                            extra,
                        })
                })
                .collect::<Vec<_>>();
            (
                proptest::collection::vec(table(), n),
                steps,
                proptest::collection::vec((0..n, 0u8..5), 0..3),
                prop_oneof![Just(1i64), Just(1i64 << 40)],
                any::<bool>(),
            )
        })
        .prop_map(|(tables, mut steps, filters, spread, ids_only)| {
            // Oracle does not mix the comma with ANSI joins after it in one FROM clause
            // the way SQLite reads it: a comma only starts the clause's inner joins.
            if steps.iter().any(|s| s.kind != Kind::Comma) {
                for s in &mut steps {
                    if s.kind == Kind::Comma {
                        s.kind = Kind::Inner;
                    }
                }
            }
            Query { tables, steps, filters, spread, ids_only }
        })
}

/// One condition on table `t` of `n` tables, of kind `k`; the last is an OR over `t`
/// and the next table, whose branches each filter both (the optimizer filters each
/// table's rows by what the OR implies for them, but not a table an outer join NULLs:
/// there `IS NULL` would hold of the NULLs the join adds for the rows it filtered).
fn filter_text(q: &Query, t: usize, k: u8) -> String {
    let u = (t + 1) % q.tables.len();
    let two = q.stored_a(2);
    match k {
        0 => format!("t{t}.c > 3"),
        1 => format!("t{t}.b IS NULL"),
        2 => format!("t{t}.a <> {two}"),
        3 => format!("(t{t}.b = 'x' OR t{t}.c < 2)"),
        _ => format!("((t{t}.c > 3 AND t{u}.b IS NULL) OR (t{t}.a <> {two} AND t{u}.c < 2))"),
    }
}

impl Query {
    /// The query's text, with `hint` as its hint comment.
    fn sql(&self, hint: &str) -> String {
        self.text(hint, false)
    }

    /// The query in Oracle's old outer-join syntax: a FROM list, the outer-joined table's
    /// columns marked `(+)` in its conditions. `None` where that syntax cannot say it (a
    /// RIGHT or FULL join, an OR in an outer join's condition).
    fn oracle_outer_sql(&self) -> Option<String> {
        let expressible = self.outer()
            && self.steps.iter().all(|s| {
                matches!(s.kind, Kind::Comma | Kind::Inner) || (s.kind == Kind::Left && s.extra.is_none_or(|e| e < 2))
            });
        expressible.then(|| self.text("", true))
    }

    fn text(&self, hint: &str, oracle_outer: bool) -> String {
        let read: &[&str] = if self.ids_only { &["id"] } else { &["id", "a", "b", "c"] };
        let columns: Vec<String> =
            (0..self.tables.len()).flat_map(|t| read.iter().map(move |c| format!("t{t}.{c}"))).collect();
        let mut from = String::from("t0");
        let mut wheres: Vec<String> = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let t = i + 1;
            let column = if s.on_b { "b" } else { "a" };
            // Oracle's (+) marks the outer-joined table's columns.
            let m = if oracle_outer && s.kind == Kind::Left { "(+)" } else { "" };
            let mut on = format!("t{t}.{column}{m} = t{}.{column}", s.partner);
            match s.extra {
                Some(0) => on.push_str(&format!(" AND t{t}.c{m} >= t{}.c", s.partner)),
                Some(1) => on.push_str(&format!(" AND t{t}.c{m} < 6")),
                Some(_) => on = format!("({on} OR t{t}.c = t{}.id)", s.partner),
                None => {}
            }
            if oracle_outer {
                from.push_str(&format!(", t{t}"));
                wheres.push(on);
                continue;
            }
            match s.kind {
                Kind::Comma => {
                    from.push_str(&format!(", t{t}"));
                    wheres.push(on);
                }
                Kind::Inner => from.push_str(&format!(" JOIN t{t} ON {on}")),
                Kind::Left => from.push_str(&format!(" LEFT JOIN t{t} ON {on}")),
                Kind::Right => from.push_str(&format!(" RIGHT JOIN t{t} ON {on}")),
                Kind::Full => from.push_str(&format!(" FULL JOIN t{t} ON {on}")),
            }
        }
        wheres.extend(self.filters.iter().map(|&(t, k)| filter_text(self, t, k)));
        let where_clause = if wheres.is_empty() { String::new() } else { format!(" WHERE {}", wheres.join(" AND ")) };
        format!("SELECT {hint}{} FROM {from}{where_clause}", columns.join(", "))
    }

    fn outer(&self) -> bool {
        self.steps.iter().any(|s| matches!(s.kind, Kind::Left | Kind::Right | Kind::Full))
    }
}

/// A result row as text, NULL as `None`, for comparing two engines' rows.
type TextRow = Vec<Option<String>>;

fn lioscope_rows(s: &Session, sql: &str) -> Result<Vec<TextRow>, String> {
    let result = s.execute(sql).map_err(|e| format!("{sql}: {e}"))?;
    let mut out: Vec<TextRow> = result
        .rows
        .iter()
        .map(|r| r.iter().map(|v| if v.is_null() { None } else { Some(v.to_string()) }).collect())
        .collect();
    out.sort();
    Ok(out)
}

fn sqlite_rows(db: &rusqlite::Connection, sql: &str) -> Vec<TextRow> {
    let mut stmt = db.prepare(sql).unwrap_or_else(|e| panic!("SQLite refused {sql}: {e}"));
    let width = stmt.column_count();
    let mut out: Vec<TextRow> = stmt
        .query_map([], |row| {
            (0..width)
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => None,
                        rusqlite::types::ValueRef::Integer(v) => Some(v.to_string()),
                        rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                        other => panic!("unexpected SQLite value {other:?}"),
                    })
                })
                .collect::<rusqlite::Result<TextRow>>()
        })
        .expect("SQLite runs the query")
        .collect::<rusqlite::Result<_>>()
        .expect("SQLite's rows");
    out.sort();
    out
}

fn load(s: &Session, sqlite: &rusqlite::Connection, q: &Query) {
    for (t, table) in q.tables.iter().enumerate() {
        let ddl = format!("CREATE TABLE t{t} (id INTEGER, a INTEGER, b VARCHAR2(4), c INTEGER)");
        exec(s, &ddl);
        sqlite.execute(&ddl.replace("VARCHAR2(4)", "TEXT"), []).expect("SQLite table");
        for (id, a, b, c) in &table.rows {
            let lit = |v: Option<i64>| v.map_or("NULL".to_owned(), |v| v.to_string());
            let text = b.map_or("NULL".to_owned(), |b| format!("'{b}'"));
            let a = a.map(|a| q.stored_a(a));
            let insert = format!("INSERT INTO t{t} VALUES ({id}, {}, {text}, {})", lit(a), lit(*c));
            exec(s, &insert);
            sqlite.execute(&insert, []).expect("SQLite insert");
        }
        if table.index_on_a {
            exec(s, &format!("CREATE INDEX t{t}_a ON t{t} (a)"));
        }
        if table.analyzed {
            exec(s, &format!("ANALYZE TABLE t{t} COMPUTE STATISTICS"));
        }
    }
    exec(s, "COMMIT");
}

/// The hints that force each method on every join, with the operation the plan must
/// then show (for the joins that can take it).
fn forced_methods(q: &Query) -> Vec<(String, Option<&'static str>)> {
    let tables: Vec<String> = (1..q.tables.len()).map(|t| format!("t{t}")).collect();
    let all = tables.join(" ");
    let kinds: Vec<Kind> = q.steps.iter().map(|s| s.kind).collect();
    let nl_possible = kinds.iter().all(|k| matches!(k, Kind::Comma | Kind::Inner | Kind::Left));
    let merge_possible = kinds.iter().all(|k| *k != Kind::Right);
    // A join whose condition is an OR has no key: no hash or merge join can take it.
    let keyed = q.steps.iter().all(|s| s.extra.is_none_or(|e| e < 2));
    let mut out = vec![
        (format!("/*+ ORDERED USE_HASH({all}) */ "), keyed.then_some("HASH JOIN")),
        // A join filter on every probe side that can take one.
        (format!("/*+ ORDERED USE_HASH({all}) PX_JOIN_FILTER(t0 {all}) */ "), keyed.then_some("HASH JOIN")),
        (format!("/*+ ORDERED USE_NL({all}) */ "), nl_possible.then_some("NESTED LOOPS")),
        (format!("/*+ ORDERED USE_MERGE({all}) */ "), None),
        (String::new(), None),
    ];
    if merge_possible && keyed {
        out[3].1 = Some("MERGE JOIN");
    }
    if !q.outer() {
        // Another order: the last table first.
        let reversed: Vec<String> = (0..q.tables.len()).rev().map(|t| format!("t{t}")).collect();
        out.push((format!("/*+ LEADING({}) */ ", reversed.join(" ")), None));
        out.push((format!("/*+ LEADING({}) USE_NL({all} t0) */ ", reversed.join(" ")), None));
    }
    out
}

fn check(q: &Query) -> Result<(), TestCaseError> {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    load(&s, &sqlite, q);
    let expected = sqlite_rows(&sqlite, &q.sql(""));
    if let Some(sql) = q.oracle_outer_sql() {
        let got = lioscope_rows(&s, &sql).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&got, &expected, "{}\nplan:\n{}", sql, plan(&s, &sql));
    }
    for (hint, operation) in forced_methods(q) {
        let sql = q.sql(&hint);
        let got = lioscope_rows(&s, &sql).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&got, &expected, "{}\nplan:\n{}", sql, plan(&s, &sql));
        if let Some(op) = operation {
            let text = plan(&s, &sql);
            prop_assert!(text.contains(op), "{} should run as {}:\n{}", sql, op, text);
        }
    }
    // Hash joins again in a work area of 1K: every build input of more than a few rows
    // spills its partitions and is read back in more than one pass.
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 1K");
    for (hint, _) in &forced_methods(q)[..2] {
        let sql = q.sql(hint);
        let got = lioscope_rows(&s, &sql).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&got, &expected, "{} (hash_area_size 1K)\nplan:\n{}", sql, plan(&s, &sql));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(40), ..ProptestConfig::default() })]

    /// Every join method, in more than one order, gives SQLite's rows.
    #[test]
    fn joins_agree_with_sqlite(q in query()) {
        check(&q)?;
    }
}

fn emp_dept(s: &Session) {
    exec(s, "CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(20))");
    exec(s, "CREATE TABLE emp (empno INTEGER, ename VARCHAR2(20), deptno INTEGER)");
    exec(s, "INSERT INTO dept VALUES (10, 'ACCOUNTING')");
    exec(s, "INSERT INTO dept VALUES (20, 'RESEARCH')");
    exec(s, "INSERT INTO emp VALUES (1, 'KING', 10)");
    exec(s, "INSERT INTO emp VALUES (2, 'SMITH', 20)");
    exec(s, "INSERT INTO emp VALUES (3, 'NOBODY', NULL)");
}

#[test]
fn an_unqualified_name_of_two_tables_is_refused_naming_both() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    let e = fail(&s, "SELECT deptno FROM emp e, dept d WHERE e.deptno = d.deptno").to_string();
    assert!(e.contains("ORA-00918") && e.contains("DEPTNO") && e.contains("E and D"), "{e}");
    let e = fail(&s, "SELECT x.ename FROM emp e JOIN dept d ON e.deptno = d.deptno").to_string();
    assert!(e.contains('X'), "{e}");
    let e = fail(&s, "SELECT emp.ename FROM emp e JOIN dept d ON e.deptno = d.deptno").to_string();
    assert!(e.contains("EMP"), "an aliased table is named by its alias only: {e}");
    let e = fail(&s, "SELECT 1 FROM emp JOIN dept ON emp.deptno = nope.deptno").to_string();
    assert!(e.contains("NOPE"), "{e}");
    let e = fail(&s, "SELECT 1 FROM emp e JOIN dept d ON e.deptno = x.deptno JOIN dept x ON 1 = 1").to_string();
    assert!(e.contains("joined after it"), "{e}");
    let e = fail(&s, "SELECT 1 FROM emp, emp").to_string();
    assert!(e.contains("aliases"), "{e}");
}

#[test]
fn using_and_natural_joins_name_the_join_columns_once_and_first() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    let got = rows(&s, "SELECT deptno, ename, dname FROM emp JOIN dept USING (deptno) ORDER BY deptno");
    let text: Vec<String> = got.iter().map(|r| r.iter().map(Value::to_string).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(text, ["10 KING ACCOUNTING", "20 SMITH RESEARCH"]);
    let star = rows(&s, "SELECT * FROM emp JOIN dept USING (deptno) ORDER BY empno");
    let text = |rows: &[Vec<Value>]| -> Vec<String> {
        rows.iter().map(|r| r.iter().map(Value::to_string).collect::<Vec<_>>().join(" ")).collect()
    };
    // Oracle's order: the USING column once and first, then the other columns of each
    // item in the FROM clause's order.
    assert_eq!(text(&star), ["10 1 KING ACCOUNTING", "20 2 SMITH RESEARCH"]);
    let natural = rows(&s, "SELECT * FROM emp NATURAL JOIN dept ORDER BY empno");
    assert_eq!(text(&natural), text(&star), "NATURAL JOIN joins on the one common column, DEPTNO");
    let left = rows(&s, "SELECT deptno, ename, dname FROM emp NATURAL LEFT JOIN dept ORDER BY ename");
    assert_eq!(text(&left), ["10 KING ACCOUNTING", " NOBODY ", "20 SMITH RESEARCH"]);
    let right = rows(&s, "SELECT * FROM dept NATURAL RIGHT JOIN emp ORDER BY empno");
    assert_eq!(text(&right), ["10 ACCOUNTING 1 KING", "20 RESEARCH 2 SMITH", "  3 NOBODY"]);
    // No common column: a Cartesian product, as in Oracle.
    exec(&s, "CREATE TABLE other (x INTEGER)");
    exec(&s, "INSERT INTO other VALUES (7)");
    assert_eq!(rows(&s, "SELECT * FROM dept NATURAL JOIN other").len(), 2);
}

#[test]
fn the_first_query_a_dba_types_joins_two_fixed_views() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let got = rows(
        &s,
        "SELECT n.name, s.value FROM v$mystat s, v$statname n WHERE s.statistic# = n.statistic# AND n.name = 'user calls'",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0][0].to_string(), "user calls");
    assert!(matches!(got[0][1], Value::Int(v) if v > 0), "{got:?}");
}

#[test]
fn an_index_hint_on_a_nested_loops_inner_table_with_a_nullable_key_is_used_and_not_reported_unused() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    exec(&s, "CREATE TABLE bonus (deptno INTEGER, amount INTEGER)");
    exec(&s, "INSERT INTO bonus VALUES (10, 100)");
    exec(&s, "INSERT INTO bonus VALUES (NULL, 5)");
    exec(&s, "CREATE INDEX bonus_deptno ON bonus (deptno)");
    exec(&s, "COMMIT");
    let sql = "SELECT /*+ LEADING(e) USE_NL(b) INDEX(b bonus_deptno) */ e.ename, b.amount \
               FROM emp e JOIN bonus b ON b.deptno = e.deptno";
    let text = plan(&s, sql);
    assert!(text.contains("INDEX RANGE SCAN") && text.contains("BONUS_DEPTNO"), "{text}");
    assert!(!text.contains("hint not used"), "the probe takes the hint:\n{text}");
    let got = rows(&s, sql);
    assert_eq!(got.len(), 1, "{got:?}");
}

#[test]
fn a_join_on_a_whole_unique_key_estimates_one_row_of_that_table_a_key() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    // The key's columns are equal row by row: the product of their distinct values
    // (1,000 each) would make a pair of values one in a million.
    exec(&s, "CREATE TABLE p (a INTEGER, b INTEGER, n VARCHAR2(10), CONSTRAINT p_pk PRIMARY KEY (a, b))");
    exec(&s, "CREATE TABLE c (id INTEGER, a INTEGER, b INTEGER)");
    exec(&s, "INSERT INTO p SELECT level, level, 'p' FROM dual CONNECT BY level <= 1000");
    exec(
        &s,
        "INSERT INTO c SELECT level, MOD(level, 1000) + 1, MOD(level, 1000) + 1 FROM dual CONNECT BY level <= 3000",
    );
    exec(&s, "ANALYZE TABLE p COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE c COMPUTE STATISTICS");
    for order in ["LEADING(c p) USE_HASH(p)", "LEADING(p c) USE_HASH(c)"] {
        let sql = format!("SELECT /*+ {order} */ COUNT(p.n) FROM c JOIN p ON c.a = p.a AND c.b = p.b");
        let text = plan(&s, &sql);
        let join = text.lines().find(|l| l.contains("HASH JOIN")).expect("a hash join line");
        assert!(join.contains("| 3000 |"), "each of c's 3,000 rows finds one row of p ({order}):\n{text}");
        assert_eq!(rows(&s, &sql)[0][0].to_string(), "3000");
    }
}

/// Three tables sharing the join column `k` (first, so that `SELECT *` lists columns in
/// the same order in both engines), each with a column of its own; NULLs and duplicate
/// keys in each.
type KeyedRow = (Option<i64>, i64);

fn keyed_tables() -> impl Strategy<Value = [Vec<KeyedRow>; 3]> {
    let rows = || proptest::collection::vec((proptest::option::weighted(0.85, 0i64..5), 0i64..100), 0..8);
    [rows(), rows(), rows()]
}

/// Queries joining on `k` by USING or NATURAL, FULL joins among them and after them, and
/// the unqualified `k` read in the select list, WHERE, GROUP BY and ORDER BY.
const USING_QUERIES: &[&str] = &[
    "SELECT k, a, b FROM p FULL JOIN q USING (k)",
    "SELECT * FROM p FULL OUTER JOIN q USING (k)",
    "SELECT * FROM p NATURAL FULL JOIN q",
    "SELECT k, a, b FROM p NATURAL FULL OUTER JOIN q WHERE k > 1",
    "SELECT k, COUNT(*) FROM p FULL JOIN q USING (k) GROUP BY k",
    "SELECT k, a, b, c FROM p FULL JOIN q USING (k) FULL JOIN r USING (k)",
    "SELECT * FROM p FULL JOIN q USING (k) LEFT JOIN r USING (k)",
    "SELECT k, a, b, c FROM p FULL JOIN q USING (k) JOIN r USING (k)",
    "SELECT k, a, b, c FROM p FULL JOIN q USING (k) RIGHT JOIN r USING (k)",
    "SELECT k, a, b, c FROM p RIGHT JOIN q USING (k) FULL JOIN r USING (k)",
    "SELECT k, a, b, c FROM p LEFT JOIN q USING (k) FULL JOIN r USING (k)",
    "SELECT * FROM p JOIN q USING (k) JOIN r USING (k)",
    "SELECT * FROM p NATURAL JOIN q NATURAL LEFT JOIN r",
];

fn check_using(tables: &[Vec<KeyedRow>; 3]) -> Result<(), TestCaseError> {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    for (name, own, rows) in [("p", "a", &tables[0]), ("q", "b", &tables[1]), ("r", "c", &tables[2])] {
        let ddl = format!("CREATE TABLE {name} (k INTEGER, {own} INTEGER)");
        exec(&s, &ddl);
        sqlite.execute(&ddl, []).expect("SQLite table");
        for (k, v) in rows {
            let insert = format!("INSERT INTO {name} VALUES ({}, {v})", k.map_or("NULL".into(), |k| k.to_string()));
            exec(&s, &insert);
            sqlite.execute(&insert, []).expect("SQLite insert");
        }
    }
    exec(&s, "COMMIT");
    for query in USING_QUERIES {
        let expected = sqlite_rows(&sqlite, query);
        for hint in
            ["", "/*+ ORDERED USE_HASH(q r) */ ", "/*+ ORDERED USE_MERGE(q r) */ ", "/*+ ORDERED USE_NL(q r) */ "]
        {
            let sql = query.replacen("SELECT ", &format!("SELECT {hint}"), 1);
            let got = lioscope_rows(&s, &sql).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&got, &expected, "{}\nplan:\n{}", sql, plan(&s, &sql));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(12), ..ProptestConfig::default() })]

    /// USING and NATURAL joins, FULL ones among them, give SQLite's rows: the join
    /// column of a FULL join is the first non-NULL of its two copies.
    #[test]
    fn using_and_natural_full_joins_agree_with_sqlite(tables in keyed_tables()) {
        check_using(&tables)?;
    }
}

#[test]
fn a_full_join_using_shows_the_right_rows_key_and_lists_it_first() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    exec(&s, "INSERT INTO dept VALUES (40, 'OPERATIONS')");
    let text = |rows: &[Vec<Value>]| -> Vec<String> {
        rows.iter().map(|r| r.iter().map(Value::to_string).collect::<Vec<_>>().join(" ")).collect()
    };
    // The row only dept has shows dept's DEPTNO; the row only emp has, emp's (NULL).
    let star = rows(&s, "SELECT * FROM emp FULL JOIN dept USING (deptno) ORDER BY deptno, empno");
    assert_eq!(text(&star), ["10 1 KING ACCOUNTING", "20 2 SMITH RESEARCH", "40   OPERATIONS", " 3 NOBODY "]);
    let natural = rows(&s, "SELECT * FROM emp NATURAL FULL OUTER JOIN dept ORDER BY deptno, empno");
    assert_eq!(text(&natural), text(&star));
    let sql = "SELECT deptno FROM emp e FULL JOIN dept d USING (deptno) WHERE deptno = 40";
    assert_eq!(text(&rows(&s, sql)), ["40"]);
    // Either copy qualified is refused, for every kind of join, as Oracle refuses it.
    for join in ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"] {
        for column in ["e.deptno", "d.deptno"] {
            let e = fail(&s, &format!("SELECT {column} FROM emp e {join} dept d USING (deptno)")).to_string();
            assert!(e.contains("ORA-25154") && e.contains(&column.to_uppercase()), "{join} {column}: {e}");
        }
    }
    let e = fail(&s, "SELECT 1 FROM emp e NATURAL FULL JOIN dept d WHERE d.deptno = 10").to_string();
    assert!(e.contains("ORA-25155") && e.contains("D.DEPTNO"), "{e}");
    // A join after a FULL join USING joins on the COALESCE, by key.
    let sql = "SELECT deptno FROM emp e FULL JOIN dept d USING (deptno) FULL JOIN dept x USING (deptno)";
    let text = plan(&s, sql);
    assert!(text.contains("access(COALESCE(\"E\".\"DEPTNO\",\"D\".\"DEPTNO\")=\"X\".\"DEPTNO\")"), "{text}");
    assert_eq!(text.matches("HASH JOIN FULL OUTER").count(), 2, "{text}");
    // The other columns stay qualifiable; `d.*` is dept's own columns.
    assert_eq!(rows(&s, "SELECT d.* FROM emp e FULL JOIN dept d USING (deptno) WHERE e.ename = 'KING'")[0].len(), 2);
}

/// Runs each statement in lioscope and in SQLite (VARCHAR2 read as TEXT there).
fn both(s: &Session, sqlite: &rusqlite::Connection, statements: &[&str]) {
    for sql in statements {
        exec(s, sql);
        sqlite.execute(&sql.replace("VARCHAR2(20)", "TEXT"), []).expect("SQLite runs it");
    }
}

#[test]
fn the_outer_join_operator_in_an_or_or_an_in_is_oracles_error_naming_it() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    for (sql, operand) in [
        ("SELECT e.ename FROM emp e, dept d WHERE e.deptno = d.deptno(+) OR e.empno = 1", "OR e.empno = 1"),
        (
            "SELECT e.ename FROM emp e, dept d WHERE e.empno > 0 AND (e.deptno = d.deptno(+) OR d.dname(+) = 'X')",
            "OR d.dname (+) = 'X'",
        ),
        (
            "SELECT e.ename FROM emp e, dept d WHERE e.deptno = d.deptno(+) AND d.dname(+) IN ('A', 'B')",
            "IN ('A', 'B')",
        ),
        (
            "SELECT e.ename FROM emp e, dept d WHERE e.deptno = d.deptno(+) AND e.ename IN (d.dname(+))",
            "IN (d.dname (+))",
        ),
    ] {
        let e = fail(&s, sql).to_string();
        assert!(e.contains("ORA-01719") && e.contains(operand), "{sql}: {e}");
        assert!(e.contains("line 1, column"), "the error says where: {e}");
    }
    let e = fail(&s, "SELECT 1 FROM emp e, dept d WHERE e.deptno(+) = d.deptno AND d.deptno(+) = e.deptno");
    assert!(e.to_string().contains("ORA-01416"), "{e}");
    let e = fail(&s, "SELECT 1 FROM emp e, dept d WHERE e.deptno(+) = d.deptno(+)");
    assert!(e.to_string().contains("ORA-01468"), "{e}");
    let e = fail(&s, "SELECT 1 FROM emp e JOIN dept d ON 1 = 1 WHERE e.deptno(+) = d.deptno");
    assert!(e.to_string().contains("ORA-25156"), "{e}");
}

#[test]
fn the_outer_join_operator_joins_a_table_to_several_reads_functions_and_ignores_literals() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    both(
        &s,
        &sqlite,
        &[
            "CREATE TABLE emp (empno INTEGER, ename VARCHAR2(20), deptno INTEGER, grade INTEGER)",
            "CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(20))",
            "CREATE TABLE pay (deptno INTEGER, grade INTEGER, amount INTEGER, note VARCHAR2(20))",
            "INSERT INTO emp VALUES (1, 'KING', 10, 1)",
            "INSERT INTO emp VALUES (2, 'SMITH', 20, 2)",
            "INSERT INTO emp VALUES (3, 'ward', 10, 2)",
            "INSERT INTO emp VALUES (4, 'NOBODY', NULL, NULL)",
            "INSERT INTO dept VALUES (10, 'KING')",
            "INSERT INTO dept VALUES (20, 'RESEARCH')",
            "INSERT INTO pay VALUES (10, 1, 100, '(+)')",
            "INSERT INTO pay VALUES (10, 2, 200, 'x')",
            "INSERT INTO pay VALUES (20, 1, 300, '(+)')",
        ],
    );
    exec(&s, "COMMIT");
    for (oracle, ansi) in [
        // PAY outer-joined to EMP and DEPT at once (Oracle raised ORA-01417 for this
        // before 12c): joined after both, on both conditions.
        (
            "SELECT e.ename, d.dname, p.amount FROM emp e, dept d, pay p \
             WHERE p.grade(+) = e.grade AND p.deptno(+) = d.deptno",
            "SELECT e.ename, d.dname, p.amount FROM emp e CROSS JOIN dept d \
             LEFT JOIN pay p ON p.grade = e.grade AND p.deptno = d.deptno",
        ),
        // A marked column inside a function.
        (
            "SELECT e.ename, d.dname FROM emp e, dept d WHERE UPPER(d.dname(+)) = UPPER(e.ename)",
            "SELECT e.ename, d.dname FROM emp e LEFT JOIN dept d ON UPPER(d.dname) = UPPER(e.ename)",
        ),
        // A literal holding the text (+) is no mark.
        (
            "SELECT e.ename, p.amount FROM emp e, pay p WHERE p.deptno(+) = e.deptno AND p.note(+) = '(+)'",
            "SELECT e.ename, p.amount FROM emp e LEFT JOIN pay p ON p.deptno = e.deptno AND p.note = '(+)'",
        ),
        (
            "SELECT e.ename, p.amount FROM emp e, pay p WHERE p.deptno = e.deptno AND p.note <> '(+)'",
            "SELECT e.ename, p.amount FROM emp e JOIN pay p ON p.deptno = e.deptno AND p.note <> '(+)'",
        ),
    ] {
        let expected = sqlite_rows(&sqlite, ansi);
        assert_eq!(lioscope_rows(&s, oracle).expect("runs"), expected, "{oracle}\n{}", plan(&s, oracle));
    }
}

#[test]
fn parenthesized_joins_agree_with_sqlite_and_those_that_cannot_be_flattened_are_refused() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    both(
        &s,
        &sqlite,
        &[
            "CREATE TABLE t (a INTEGER, b INTEGER)",
            "CREATE TABLE u (a INTEGER, c INTEGER)",
            "CREATE TABLE w (c INTEGER, d INTEGER)",
            "INSERT INTO t VALUES (1, 10)",
            "INSERT INTO t VALUES (2, 20)",
            "INSERT INTO t VALUES (3, NULL)",
            "INSERT INTO u VALUES (1, 100)",
            "INSERT INTO u VALUES (2, 200)",
            "INSERT INTO u VALUES (2, 100)",
            "INSERT INTO w VALUES (100, 7)",
            "INSERT INTO w VALUES (300, 8)",
        ],
    );
    exec(&s, "COMMIT");
    for sql in [
        "SELECT COUNT(*) FROM (t CROSS JOIN u)",
        "SELECT t.a, u.c FROM (t CROSS JOIN u) WHERE t.a = u.a",
        "SELECT t.a, u.c, w.d FROM (t JOIN u ON t.a = u.a) LEFT JOIN w ON w.c = u.c",
        "SELECT t.a, u.c, w.d FROM ((t JOIN u ON t.a = u.a) JOIN w ON w.c = u.c)",
        "SELECT t.a, u.c, w.d FROM t JOIN (u JOIN w ON w.c = u.c) ON t.a = u.a",
        "SELECT t.a, u.c, w.d FROM t JOIN (u CROSS JOIN w) ON t.a = u.a AND w.c = u.c",
        "SELECT t.a, w.d FROM t CROSS JOIN (u JOIN w ON w.c = u.c AND u.a = 2)",
        "SELECT t.a, u.c FROM w, (t LEFT JOIN u ON t.a = u.a) WHERE w.d = 7",
    ] {
        let expected = sqlite_rows(&sqlite, sql);
        assert_eq!(lioscope_rows(&s, sql).expect("runs"), expected, "{sql}\n{}", plan(&s, sql));
    }
    // An outer join around or inside one on the right is not the flat list's rows.
    for (sql, why) in [
        ("SELECT 1 FROM t LEFT JOIN (u JOIN w ON w.c = u.c) ON t.a = u.a", "on the right of an outer"),
        ("SELECT 1 FROM t JOIN (u LEFT JOIN w ON w.c = u.c) ON t.a = u.a", "inside a parenthesized join"),
        ("SELECT 1 FROM t JOIN (u JOIN w USING (c)) ON t.a = u.a", "inside a parenthesized join"),
        // A bare name inside could be T's column once the joins are spelled out.
        ("SELECT 1 FROM t JOIN (u JOIN w ON u.c = d) ON t.a = u.a", "without the alias"),
    ] {
        let e = fail(&s, sql).to_string();
        assert!(e.contains(why) && e.contains("column"), "{sql}: {e}");
    }
}

/// Two tables for joins on expressions, in both engines: numbers with NULLs and
/// duplicates, names in mixed case.
fn expression_tables(s: &Session, sqlite: &rusqlite::Connection) {
    both(
        s,
        sqlite,
        &[
            "CREATE TABLE a (id INTEGER, x INTEGER, name VARCHAR2(20))",
            "CREATE TABLE b (id INTEGER, y INTEGER, name VARCHAR2(20))",
        ],
    );
    let names = ["ann", "BOB", "Cy", "DEE", "eve"];
    for i in 0..40i64 {
        let x = if i % 7 == 3 { "NULL".to_owned() } else { (i % 9).to_string() };
        let y = if i % 11 == 5 { "NULL".to_owned() } else { (i % 13).to_string() };
        let (na, nb) = (names[i as usize % 5], names[(i as usize * 3) % 5].to_uppercase());
        both(
            s,
            sqlite,
            &[&format!("INSERT INTO a VALUES ({i}, {x}, '{na}')"), &format!("INSERT INTO b VALUES ({i}, {y}, '{nb}')")],
        );
    }
    exec(s, "CREATE INDEX b_id ON b (id)");
    exec(s, "ANALYZE TABLE a COMPUTE STATISTICS");
    exec(s, "ANALYZE TABLE b COMPUTE STATISTICS");
    exec(s, "COMMIT");
}

#[test]
fn an_equality_of_an_expression_of_each_side_is_a_join_key_under_every_method() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    expression_tables(&s, &sqlite);
    for (query, kind) in [
        ("SELECT a.id, b.id FROM a JOIN b ON a.x + 1 = b.y", Kind::Inner),
        ("SELECT a.id, b.id FROM a LEFT JOIN b ON UPPER(a.name) = b.name", Kind::Left),
        ("SELECT a.id, b.id FROM a FULL JOIN b ON a.x * 2 = b.y - 1", Kind::Full),
        ("SELECT a.id, b.id FROM a RIGHT JOIN b ON b.y = a.x + a.id - 20", Kind::Right),
        ("SELECT a.id, b.id FROM a JOIN b ON a.x + 1 = b.y AND LOWER(b.name) = a.name", Kind::Inner),
        ("SELECT a.id, b.id FROM a LEFT JOIN b ON b.id = a.x + 1", Kind::Left),
    ] {
        let expected = sqlite_rows(&sqlite, query);
        for (hint, op) in [
            ("/*+ LEADING(a) USE_HASH(b) */ ", Some("HASH JOIN")),
            ("/*+ LEADING(a) USE_MERGE(b) */ ", (kind != Kind::Right).then_some("MERGE JOIN")),
            ("/*+ LEADING(a) USE_NL(b) */ ", matches!(kind, Kind::Inner | Kind::Left).then_some("NESTED LOOPS")),
            ("", None),
        ] {
            let sql = query.replacen("SELECT ", &format!("SELECT {hint}"), 1);
            let text = plan(&s, &sql);
            assert_eq!(lioscope_rows(&s, &sql).expect("runs"), expected, "{sql}\n{text}");
            if let Some(op) = op {
                assert!(text.contains(op), "{sql} runs as {op}:\n{text}");
                if op != "NESTED LOOPS" {
                    assert!(text.contains("access("), "{sql}: the equality is the join's key:\n{text}");
                }
            }
        }
    }
    // A FULL join on an expression key is a hash join with keys, not a comparison of
    // every pair.
    let text = plan(&s, "SELECT a.id, b.id FROM a FULL JOIN b ON a.x * 2 = b.y - 1");
    assert!(text.contains("HASH JOIN FULL OUTER"), "{text}");
    assert!(text.contains("access(\"A\".\"X\"*2=\"B\".\"Y\"-1)"), "{text}");
    // The nested loop probes the inner table's index with the outer row's expression.
    let sql = "SELECT /*+ LEADING(a) USE_NL(b) INDEX(b b_id) */ a.id, b.id FROM a JOIN b ON b.id = a.x + 1";
    let text = plan(&s, sql);
    assert!(text.contains("INDEX RANGE SCAN") && text.contains("access(\"B\".\"ID\"=\"A\".\"X\"+1)"), "{text}");
    let ansi = "SELECT a.id, b.id FROM a JOIN b ON b.id = a.x + 1";
    assert_eq!(lioscope_rows(&s, sql).expect("runs"), sqlite_rows(&sqlite, ansi), "{text}");
    // Sides of different families stay a condition on the joined pair, compared with
    // Oracle's conversions.
    let text = plan(&s, "SELECT /*+ USE_HASH(b) */ a.id FROM a JOIN b ON a.x || 'z' = b.y + 1");
    assert!(!text.contains("access(") && text.contains("filter("), "{text}");
}

#[test]
fn a_date_joins_the_truncated_time_of_another_table_by_key() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    exec(&s, "CREATE TABLE days (d DATE, n INTEGER)");
    exec(&s, "CREATE TABLE events (ts DATE, id INTEGER)");
    exec(&s, "INSERT INTO days VALUES (DATE '2020-01-01', 1)");
    exec(&s, "INSERT INTO days VALUES (DATE '2020-01-02', 2)");
    exec(&s, "INSERT INTO events VALUES (TO_DATE('2020-01-01 10:30', 'YYYY-MM-DD HH24:MI'), 1)");
    exec(&s, "INSERT INTO events VALUES (TO_DATE('2020-01-01 23:59', 'YYYY-MM-DD HH24:MI'), 2)");
    exec(&s, "INSERT INTO events VALUES (TO_DATE('2020-01-03 00:01', 'YYYY-MM-DD HH24:MI'), 3)");
    for method in ["USE_HASH", "USE_MERGE", "USE_NL"] {
        let sql = format!(
            "SELECT /*+ LEADING(d) {method}(e) */ d.n, e.id FROM days d FULL JOIN events e ON d.d = TRUNC(e.ts) ORDER BY 1, 2"
        );
        let got: Vec<String> =
            rows(&s, &sql).iter().map(|r| r.iter().map(Value::to_string).collect::<Vec<_>>().join(" ")).collect();
        assert_eq!(got, ["1 1", "1 2", "2 ", " 3"], "{sql}\n{}", plan(&s, &sql));
    }
    let text = plan(&s, "SELECT /*+ USE_HASH(e) */ COUNT(*) FROM days d JOIN events e ON d.d = TRUNC(e.ts)");
    assert!(text.contains("access(\"D\".\"D\"=TRUNC(\"E\".\"TS\"))"), "{text}");
}

#[test]
fn an_or_over_two_tables_filters_each_table_at_its_scan_by_what_it_implies() {
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    emp_dept(&s);
    exec(&s, "INSERT INTO dept VALUES (30, 'SALES')");
    exec(&s, "INSERT INTO emp VALUES (4, 'ALLEN', 30)");
    exec(&s, "INSERT INTO emp VALUES (5, 'WARD', 30)");
    // TPC-H Q7's shape: each branch names one row of each table.
    let sql = "SELECT e.ename, d.dname FROM emp e, dept d WHERE e.deptno = d.deptno \
               AND ((d.dname = 'SALES' AND e.ename = 'WARD') OR (d.dname = 'RESEARCH' AND e.ename = 'SMITH')) \
               ORDER BY e.ename";
    let text = plan(&s, sql);
    assert!(text.contains("filter(\"DNAME\"='SALES' OR \"DNAME\"='RESEARCH')"), "{text}");
    assert!(text.contains("filter(\"ENAME\"='WARD' OR \"ENAME\"='SMITH')"), "{text}");
    let got: Vec<String> = rows(&s, sql).iter().map(|r| format!("{} {}", r[0], r[1])).collect();
    assert_eq!(got, ["SMITH RESEARCH", "WARD SALES"], "{text}");
    // A branch without a condition of its own on a table implies nothing for it.
    let text = plan(
        &s,
        "SELECT e.ename FROM emp e, dept d WHERE e.deptno = d.deptno \
         AND ((d.dname = 'SALES' AND e.ename = 'WARD') OR e.empno = 2)",
    );
    assert!(!text.contains("filter(\"DNAME\""), "{text}");
    assert!(text.contains("filter(\"ENAME\"='WARD' OR \"EMPNO\"=2)"), "{text}");
}

#[test]
fn whole_number_keys_from_one_end_of_the_range_to_the_other_join_as_sqlite_joins_them() {
    // A hash join finds whole-number keys lying close together by number, from the
    // smallest; these lie close, then far apart, then at both ends of 64 bits, and the
    // probe side has keys below, inside and above the build side's.
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    both(&s, &sqlite, &["CREATE TABLE t (k INTEGER, v INTEGER)", "CREATE TABLE u (k INTEGER, w INTEGER)"]);
    let sets: [&[i64]; 3] =
        [&[-3, -2, -2, 0, 5, 7, 7, 7], &[-(1 << 50), 0, 1 << 40, 1 << 40], &[i64::MIN, i64::MIN, -1, 0, 1, i64::MAX]];
    let probes: &[i64] = &[i64::MIN, -(1 << 50), -4, -3, -2, 0, 1, 5, 6, 7, 8, 1 << 40, i64::MAX];
    let hash_joins = [
        "/*+ LEADING(t u) USE_HASH(u) SWAP_JOIN_INPUTS(u) */",
        "/*+ LEADING(t u) USE_HASH(u) NO_SWAP_JOIN_INPUTS(u) */",
    ];
    for build in sets {
        both(&s, &sqlite, &["DELETE FROM t", "DELETE FROM u"]);
        let rows = |table: &str, keys: &[i64]| -> Vec<String> {
            keys.iter().enumerate().map(|(i, k)| format!("INSERT INTO {table} VALUES ({k}, {i})")).collect()
        };
        let inserts: Vec<String> = rows("u", build).into_iter().chain(rows("t", probes)).collect();
        both(&s, &sqlite, &inserts.iter().map(String::as_str).collect::<Vec<_>>());
        exec(&s, "COMMIT");
        for hint in hash_joins {
            for (lioscope_join, sqlite_join) in
                [("JOIN", "JOIN"), ("LEFT JOIN", "LEFT JOIN"), ("RIGHT JOIN", "RIGHT JOIN"), ("FULL JOIN", "FULL JOIN")]
            {
                let text = |join: &str, hint: &str| {
                    format!("SELECT {hint} t.k, t.v, u.k, u.w FROM t {join} u ON t.k = u.k ORDER BY 1, 2, 3, 4")
                };
                let sql = text(lioscope_join, hint);
                let expected = sqlite_rows(&sqlite, &text(sqlite_join, ""));
                assert_eq!(lioscope_rows(&s, &sql).expect("runs"), expected, "{sql}\n{}", plan(&s, &sql));
                assert!(plan(&s, &sql).contains("HASH JOIN"), "{sql}\n{}", plan(&s, &sql));
            }
            for sql in [
                format!("SELECT {hint} t.k, t.v FROM t WHERE t.k IN (SELECT u.k FROM u) ORDER BY 1, 2"),
                format!("SELECT {hint} t.k, t.v FROM t WHERE t.k NOT IN (SELECT u.k FROM u) ORDER BY 1, 2"),
            ] {
                let expected = sqlite_rows(&sqlite, &sql.replace(hint, ""));
                assert_eq!(lioscope_rows(&s, &sql).expect("runs"), expected, "{sql}\n{}", plan(&s, &sql));
            }
        }
    }
}

#[test]
fn an_index_probe_checks_a_filter_on_columns_nothing_above_it_reads() {
    // The inner table's rows come from an index probe, which checks the filter on the
    // rows the input hands on: the filter's columns must be there, though the select
    // list reads none of them.
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    both(
        &s,
        &sqlite,
        &[
            "CREATE TABLE o (id INTEGER, k INTEGER)",
            "CREATE TABLE i (k INTEGER, note VARCHAR2(20), n INTEGER)",
            "INSERT INTO o VALUES (1, 1)",
            "INSERT INTO o VALUES (2, 2)",
            "INSERT INTO o VALUES (3, 3)",
            "INSERT INTO i VALUES (1, 'keep', 5)",
            "INSERT INTO i VALUES (1, 'drop', 9)",
            "INSERT INTO i VALUES (2, 'drop', 1)",
            "INSERT INTO i VALUES (3, 'keep', 7)",
        ],
    );
    exec(&s, "CREATE INDEX i_k ON i (k)");
    exec(&s, "COMMIT");
    for (sql, sqlite_sql) in [
        (
            "SELECT /*+ LEADING(o i) USE_NL(i) INDEX(i i_k) */ o.id FROM o JOIN i ON i.k = o.k \
             WHERE i.note = 'keep' AND i.n > 4 ORDER BY 1",
            "SELECT o.id FROM o JOIN i ON i.k = o.k WHERE i.note = 'keep' AND i.n > 4 ORDER BY 1",
        ),
        (
            "SELECT /*+ LEADING(o i) USE_NL(i) INDEX(i i_k) */ o.id, i.k FROM o LEFT JOIN i \
             ON i.k = o.k AND i.note = 'drop' ORDER BY 1, 2",
            "SELECT o.id, i.k FROM o LEFT JOIN i ON i.k = o.k AND i.note = 'drop' ORDER BY 1, 2",
        ),
    ] {
        let text = plan(&s, sql);
        assert!(text.contains("NESTED LOOPS") && text.contains("I_K"), "{sql}\n{text}");
        assert_eq!(lioscope_rows(&s, sql).expect("runs"), sqlite_rows(&sqlite, sqlite_sql), "{sql}\n{text}");
    }
}

#[test]
fn keys_of_two_whole_numbers_join_as_sqlite_joins_them_whatever_their_size() {
    // A key of two whole numbers that each fit 32 bits unsigned hashes as one number of
    // their bits side by side, and a hash join then compares such keys by hash alone;
    // pairs with a negative or wider number hash another way and are compared by value.
    let (_dir, _path, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let sqlite = rusqlite::Connection::open_in_memory().expect("SQLite in memory");
    both(
        &s,
        &sqlite,
        &["CREATE TABLE t (a INTEGER, b INTEGER, v INTEGER)", "CREATE TABLE u (a INTEGER, b INTEGER, w INTEGER)"],
    );
    let small: &[(i64, i64)] = &[(0, 0), (0, 1), (1, 0), (7, 7), (7, 7), (4_294_967_295, 4_294_967_295), (3, 9)];
    let mixed: &[(i64, i64)] = &[(0, 1), (-1, 0), (1, -1), (1 << 32, 0), (0, 1 << 32), (3, 9), (9, 3)];
    let probes: &[(i64, i64)] =
        &[(0, 1), (1, 0), (7, 7), (4_294_967_295, 4_294_967_295), (-1, 0), (1 << 32, 0), (0, 1 << 32), (9, 3), (5, 5)];
    for build in [small, mixed] {
        both(&s, &sqlite, &["DELETE FROM t", "DELETE FROM u"]);
        let rows = |table: &str, keys: &[(i64, i64)]| -> Vec<String> {
            keys.iter().enumerate().map(|(i, (a, b))| format!("INSERT INTO {table} VALUES ({a}, {b}, {i})")).collect()
        };
        let inserts: Vec<String> = rows("u", build).into_iter().chain(rows("t", probes)).collect();
        both(&s, &sqlite, &inserts.iter().map(String::as_str).collect::<Vec<_>>());
        exec(&s, "COMMIT");
        for hint in ["SWAP_JOIN_INPUTS(u)", "NO_SWAP_JOIN_INPUTS(u)"] {
            for join in ["JOIN", "LEFT JOIN", "FULL JOIN"] {
                let text = |hint: &str| {
                    format!(
                        "SELECT {hint} t.a, t.b, t.v, u.w FROM t {join} u ON t.a = u.a AND u.b = t.b \
                         ORDER BY 1, 2, 3, 4"
                    )
                };
                let sql = text(&format!("/*+ LEADING(t u) USE_HASH(u) {hint} */"));
                let expected = sqlite_rows(&sqlite, &text(""));
                let text_plan = plan(&s, &sql);
                assert!(text_plan.contains("HASH JOIN"), "{sql}\n{text_plan}");
                assert_eq!(lioscope_rows(&s, &sql).expect("runs"), expected, "{sql}\n{text_plan}");
            }
        }
    }
}

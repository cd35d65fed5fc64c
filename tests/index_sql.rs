//! B-tree indexes through SQL: every index access path answers exactly what a full scan
//! answers, after random changes made once the index exists (inserts, updates of indexed
//! and other columns, deletes, rollbacks), for the changing session and for another one
//! that sees only committed data; read consistency of index scans between sessions;
//! unique indexes (violations change nothing; keys moved among rows by one statement;
//! CREATE UNIQUE INDEX on duplicates leaves nothing behind); indexes across close and
//! reopen; DROP INDEX and DROP TABLE.

mod common;

use common::*;
use lioscope::Session;
use lioscope::stats::Stat;
use proptest::prelude::*;

/// The columns of the table under test: `id` unique, `a` small integers with duplicates
/// and NULLs, `s` padded strings with duplicates and NULLs, `u` unique or NULL, `pad`
/// never indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Id,
    A,
    S,
    U,
}

impl Col {
    fn name(self) -> &'static str {
        match self {
            Col::Id => "id",
            Col::A => "a",
            Col::S => "s",
            Col::U => "u",
        }
    }
}

/// The indexes a case may build: key columns and uniqueness. The data keeps each unique
/// key unique when the index is built; later changes may try to break it.
const INDEXES: &[(&[Col], bool)] = &[
    (&[Col::A], false),
    (&[Col::S], false),
    (&[Col::A, Col::S], false),
    (&[Col::S, Col::A], false),
    (&[Col::U], false),
    (&[Col::Id], true),
    (&[Col::A, Col::Id], true),
    (&[Col::U], true),
    (&[Col::S, Col::Id], true),
];

/// How the table is filled (deterministic given these figures).
#[derive(Debug, Clone)]
struct Layout {
    rows: u32,
    /// Length `s` values are padded to: long keys make few entries a leaf and deep trees.
    s_len: usize,
    seed: u32,
    /// Distinct values of `a` and of `s`.
    a_distinct: u32,
    s_distinct: u32,
    /// Every `null_every`-th row has `a` NULL; `s` and `u` are NULL on other rows.
    null_every: u32,
}

/// A comparison of one column with constants (`n` picks the constants in its domain).
#[derive(Debug, Clone)]
struct Pred {
    op: u8,
    n1: u32,
    n2: u32,
}

#[derive(Debug, Clone)]
enum Op {
    Insert { a: Option<u32>, s: Option<u32>, u: Option<u32> },
    InsertSelect { a: u32, u_shift: u32 },
    UpdateKey { col: usize, delta: i32, set_null: bool, col_pred: usize, pred: Pred },
    UpdatePad { grow: bool, col_pred: usize, pred: Pred },
    Delete { col_pred: usize, pred: Pred },
    Commit,
    Rollback,
}

#[derive(Debug, Clone)]
struct Query {
    lead: Pred,
    /// A condition on the second key column (or on `pad` for one-column indexes).
    second: Option<Pred>,
}

const COLS: [Col; 4] = [Col::Id, Col::A, Col::S, Col::U];

fn pred() -> impl Strategy<Value = Pred> {
    (0u8..7, any::<u32>(), any::<u32>()).prop_map(|(op, n1, n2)| Pred { op, n1, n2 })
}

fn layout() -> impl Strategy<Value = Layout> {
    (150u32..400, 4usize..150, any::<u32>(), 2u32..30, 2u32..30, 3u32..12).prop_map(
        |(rows, s_len, seed, a_distinct, s_distinct, null_every)| Layout {
            rows,
            s_len,
            seed: seed % 1000,
            a_distinct,
            s_distinct,
            null_every,
        },
    )
}

fn op() -> impl Strategy<Value = Op> {
    let opt = || proptest::option::weighted(0.85, any::<u32>());
    prop_oneof![
        3 => (opt(), opt(), opt()).prop_map(|(a, s, u)| Op::Insert { a, s, u }),
        1 => (any::<u32>(), 0u32..1200).prop_map(|(a, u_shift)| Op::InsertSelect { a, u_shift }),
        4 => (0usize..4, -3i32..4, proptest::bool::weighted(0.15), 0usize..4, pred()).prop_map(
            |(col, delta, set_null, col_pred, pred)| Op::UpdateKey { col, delta, set_null, col_pred, pred }
        ),
        2 => (any::<bool>(), 0usize..4, pred()).prop_map(|(grow, col_pred, pred)| Op::UpdatePad { grow, col_pred, pred }),
        2 => (0usize..4, pred()).prop_map(|(col_pred, pred)| Op::Delete { col_pred, pred }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
    ]
}

fn query() -> impl Strategy<Value = Query> {
    (pred(), proptest::option::of(pred())).prop_map(|(lead, second)| Query { lead, second })
}

impl Layout {
    /// A literal of column `c`'s domain (a little wider than the data, to reach past both
    /// ends); strings are sometimes shorter than the stored ones (a prefix of some).
    fn literal(&self, c: Col, n: u32) -> String {
        match c {
            Col::Id => ((n % (self.rows + 20)) as i64 - 5).to_string(),
            Col::A => ((n % (self.a_distinct + 6)) as i64 - 3).to_string(),
            Col::U => ((n % 1100) as i64 - 5).to_string(),
            Col::S => {
                let k = n % (self.s_distinct + 4);
                let len = if (n / 7).is_multiple_of(4) { 4 } else { self.s_len };
                format!("'{}'", s_value(k, len))
            }
        }
    }

    fn condition(&self, c: Col, p: &Pred) -> String {
        let (v1, v2) = (self.literal(c, p.n1), self.literal(c, p.n2));
        let name = c.name();
        match p.op {
            0 => format!("{name} = {v1}"),
            1 => format!("{name} < {v1}"),
            2 => format!("{name} <= {v1}"),
            3 => format!("{name} > {v1}"),
            4 => format!("{name} >= {v1}"),
            5 => format!("{name} BETWEEN {v1} AND {v2}"),
            _ => format!("{name} BETWEEN {v2} AND {v1}"),
        }
    }

    fn create_and_fill(&self, s: &Session) {
        exec(s, "CREATE TABLE t (id INTEGER NOT NULL, a INTEGER, s VARCHAR2(200), u INTEGER, pad VARCHAR2(400))");
        let Layout { rows, s_len, seed, a_distinct, s_distinct, null_every } = self;
        // u: LEVEL * 37 mod 1009 is one-to-one for LEVEL below 1009 (1009 is prime).
        exec(
            s,
            &format!(
                "INSERT INTO t SELECT LEVEL, \
                 CASE WHEN MOD(LEVEL, {null_every}) = 1 THEN NULL ELSE MOD(ORA_HASH(LEVEL, 9999, {seed}), {a_distinct}) END, \
                 CASE WHEN MOD(LEVEL, {null_every}) = 2 THEN NULL \
                      ELSE RPAD('k' || LPAD(MOD(ORA_HASH(LEVEL, 9999, {seed} + 1), {s_distinct}), 3, '0'), {s_len}, '.') END, \
                 CASE WHEN MOD(LEVEL, {null_every}) = 3 THEN NULL ELSE MOD(LEVEL * 37, 1009) END, \
                 'p' || LEVEL \
                 FROM dual CONNECT BY LEVEL <= {rows}"
            ),
        );
    }

    /// The statement of a change; `next_id` keeps inserted ids unique.
    fn statement(&self, op: &Op, next_id: &mut i64) -> String {
        let opt = |c: Col, v: &Option<u32>| v.map_or("NULL".to_owned(), |n| self.literal(c, n));
        match op {
            Op::Insert { a, s, u } => {
                *next_id += 1;
                format!(
                    "INSERT INTO t VALUES ({next_id}, {}, {}, {}, 'ins {next_id}')",
                    opt(Col::A, a),
                    opt(Col::S, s),
                    opt(Col::U, u)
                )
            }
            Op::InsertSelect { a, u_shift } => {
                *next_id += 100_000;
                format!(
                    "INSERT INTO t SELECT /*+ FULL(t) */ id + {next_id}, a, s, u + {u_shift}, SUBSTR(pad, 1, 390) || '+' FROM t WHERE a = {}",
                    self.literal(Col::A, *a)
                )
            }
            Op::UpdateKey { col, delta, set_null, col_pred, pred } => {
                let c = COLS[*col];
                let value = match (c, set_null) {
                    (Col::Id, _) => format!("id + {delta}"),
                    (_, true) => "NULL".to_owned(),
                    (Col::S, false) => format!(
                        "RPAD('k' || LPAD({}, 3, '0'), {}, '.')",
                        delta.unsigned_abs() * 3 % (self.s_distinct + 2),
                        self.s_len
                    ),
                    (c, false) => format!("{} + {delta}", c.name()),
                };
                format!("UPDATE t SET {} = {value} WHERE {}", c.name(), self.condition(COLS[*col_pred], pred))
            }
            Op::UpdatePad { grow, col_pred, pred } => {
                // Growing rows past their block's free space migrates them.
                let value = if *grow { "SUBSTR(pad || RPAD('m', 150, 'm'), 1, 400)" } else { "'q'" };
                format!("UPDATE t SET pad = {value} WHERE {}", self.condition(COLS[*col_pred], pred))
            }
            Op::Delete { col_pred, pred } => {
                format!("DELETE FROM t WHERE {}", self.condition(COLS[*col_pred], pred))
            }
            Op::Commit => "COMMIT".into(),
            Op::Rollback => "ROLLBACK".into(),
        }
    }
}

/// `k` + three digits, padded with dots to `len` bytes.
fn s_value(k: u32, len: usize) -> String {
    format!("{:.<len$}", format!("k{k:03}"))
}

fn key_list(key: &[Col]) -> String {
    key.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
}

/// The rows of a query as text, sorted.
fn sorted(s: &Session, sql: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> =
        rows(s, sql).into_iter().map(|r| r.iter().map(ToString::to_string).collect()).collect();
    out.sort();
    out
}

/// The plan of a query, as one text.
fn plan(s: &Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN PLAN FOR {sql}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n")
}

/// Runs `select` under `hint` and under FULL(t): same rows, and the hinted plan uses the
/// index the way `expect` says (a plan operation).
fn same_as_full(s: &Session, hint: &str, select: &str, expect: &str) -> Result<(), TestCaseError> {
    let hinted = format!("SELECT /*+ {hint} */ {select}");
    let shown = plan(s, &hinted);
    prop_assert!(shown.contains(expect), "{hinted}: expected {expect} in the plan:\n{shown}");
    let full = sorted(s, &format!("SELECT /*+ FULL(t) */ {select}"));
    let by_index = sorted(s, &hinted);
    prop_assert_eq!(by_index, full, "{} differs from the full scan", hinted);
    Ok(())
}

/// Every index variant of `q` against the full scan, in session `s`.
fn check_query(s: &Session, layout: &Layout, key: &[Col], q: &Query) -> Result<(), TestCaseError> {
    let mut cond = layout.condition(key[0], &q.lead);
    let mut covered = true;
    if let Some(p) = &q.second {
        match key.get(1) {
            Some(&c) => cond = format!("{cond} AND {}", layout.condition(c, p)),
            None => {
                cond = format!("{cond} AND pad LIKE '%{}%'", p.n1 % 10);
                covered = false;
            }
        }
    }
    let key_list = key_list(key);
    let with_table = format!("id, pad FROM t WHERE {cond}");
    same_as_full(s, "INDEX(t ix)", &with_table, "IX")?;
    same_as_full(s, "INDEX_DESC(t ix)", &with_table, "IX")?;
    same_as_full(s, &format!("INDEX_ASC(t ({key_list}))"), &with_table, "IX")?;
    let count = format!("COUNT(*) FROM t WHERE {cond}");
    let keys = format!("{key_list} FROM t WHERE {cond}");
    same_as_full(s, "INDEX(t ix)", &count, "IX")?;
    same_as_full(s, "INDEX_DESC(t ix)", &keys, "IX")?;
    if covered {
        same_as_full(s, "INDEX(t ix)", &keys, "IX")?;
        let only_index = plan(s, &format!("SELECT /*+ INDEX(t ix) */ {keys}"));
        prop_assert!(!only_index.contains("TABLE ACCESS"), "the index answers alone:\n{}", only_index);
        same_as_full(s, "INDEX_FFS(t ix)", &count, "INDEX FAST FULL SCAN")?;
        same_as_full(s, "INDEX_FFS(t ix)", &keys, "INDEX FAST FULL SCAN")?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(24), ..ProptestConfig::default() })]

    #[test]
    fn index_paths_answer_what_full_scans_answer(
        layout in layout(),
        index in 0..INDEXES.len(),
        ops in proptest::collection::vec(op(), 0..16),
        queries in proptest::collection::vec(query(), 1..8),
    ) {
        let (_t, _d, db) = temp_db(options(2048, "1M"));
        let (me, other) = (db.session(), db.session());
        layout.create_and_fill(&me);
        let (key, unique) = INDEXES[index];
        let key_list = key_list(key);
        let unique_word = if unique { "UNIQUE " } else { "" };
        exec(&me, &format!("CREATE {unique_word}INDEX ix ON t ({key_list})"));
        manual(&me);
        let mut next_id = 10_000;
        for op in &ops {
            let sql = layout.statement(op, &mut next_id);
            if let Err(e) = me.execute(&sql) {
                prop_assert!(unique && e.to_string().contains("unique constraint (LIOSCOPE.IX) violated"), "{sql}: {e}");
            }
        }
        for q in &queries {
            check_query(&me, &layout, key, q)?;
            check_query(&other, &layout, key, q)?;
        }
    }
}

/// The index scans session `s` has started (`index scans kdiixs1`, and `index fetch by
/// key` for a unique scan).
fn index_scans(s: &Session) -> u64 {
    s.stats().get(Stat::IndexScansKdiixs1) + s.stats().get(Stat::IndexFetchByKey)
}

/// `sql` with `hint` after its UPDATE or DELETE keyword (other statements as they are).
fn hinted(sql: &str, hint: &str) -> String {
    for verb in ["UPDATE ", "DELETE "] {
        if let Some(rest) = sql.strip_prefix(verb) {
            return format!("{verb}/*+ {hint} */ {rest}");
        }
    }
    sql.to_owned()
}

/// Every row of `t` in id order, as text.
fn whole_table(s: &Session) -> Vec<Vec<String>> {
    rows(s, "SELECT /*+ FULL(t) */ id, a, s, u, pad FROM t ORDER BY id, pad")
        .iter()
        .map(|r| r.iter().map(ToString::to_string).collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(24), ..ProptestConfig::default() })]

    /// The same changes made in two databases, UPDATE and DELETE finding their rows
    /// through the index in one (when its leading column is bounded) and by full scans in
    /// the other: the same statements succeed, report the same row counts, and leave the
    /// same rows, which the index still finds. The session's index scans say which path
    /// each took: one scan of the index where the leading column is bounded, none under
    /// FULL(t).
    #[test]
    fn updates_and_deletes_through_an_index_change_what_full_scans_change(
        layout in layout(),
        index in 0..INDEXES.len(),
        ops in proptest::collection::vec(op(), 1..16),
    ) {
        let (key, unique) = INDEXES[index];
        let unique_word = if unique { "UNIQUE " } else { "" };
        let (_t1, _d1, by_index) = temp_db(options(2048, "1M"));
        let (_t2, _d2, by_scan) = temp_db(options(2048, "1M"));
        let sessions = [by_index.session(), by_scan.session()];
        for s in &sessions {
            layout.create_and_fill(s);
            exec(s, &format!("CREATE {unique_word}INDEX ix ON t ({})", key_list(key)));
            manual(s);
        }
        let mut next_id = 10_000;
        for op in &ops {
            let sql = layout.statement(op, &mut next_id);
            let before = sessions.each_ref().map(index_scans);
            let index_path = sessions[0].execute(&hinted(&sql, "INDEX(t ix)"));
            let full_scan = sessions[1].execute(&hinted(&sql, "FULL(t)"));
            let [by_index_scans, by_scan_scans] = [0, 1].map(|i| index_scans(&sessions[i]) - before[i]);
            let bounded = matches!(
                op,
                Op::UpdateKey { col_pred, .. } | Op::UpdatePad { col_pred, .. } | Op::Delete { col_pred, .. }
                    if COLS[*col_pred] == key[0]
            );
            if bounded {
                prop_assert_eq!(by_index_scans, 1, "{}: the rows were not found by the index", sql);
            }
            prop_assert_eq!(by_scan_scans, 0, "{}: FULL(t) read the index", sql);
            match (&index_path, &full_scan) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a.rows_affected, b.rows_affected, "{}", sql),
                (Err(a), Err(b)) => prop_assert!(a.to_string().contains("unique constraint"), "{sql}: {a} / {b}"),
                _ => prop_assert!(false, "{sql}: by the index {:?}, by a full scan {:?}", index_path.err(), full_scan.err()),
            }
        }
        exec(&sessions[0], "COMMIT");
        exec(&sessions[1], "COMMIT");
        prop_assert_eq!(whole_table(&sessions[0]), whole_table(&sessions[1]));
        let q = Query { lead: Pred { op: 4, n1: 0, n2: 0 }, second: None };
        check_query(&sessions[0], &layout, key, &q)?;
    }
}

#[test]
fn an_update_or_delete_by_key_reads_the_index_not_the_table() {
    let (_t, _d, db) = temp_db(options(2048, "4M"));
    let s = db.session();
    keyed_table(&s, 3000, &["CREATE UNIQUE INDEX t_id ON t (id)", "CREATE INDEX t_k ON t (k)"]);
    let gets = |s: &Session, sql: &str| {
        let before = int(s, "SELECT value FROM v$mystat WHERE name = 'consistent gets'");
        let r = exec(s, sql);
        (int(s, "SELECT value FROM v$mystat WHERE name = 'consistent gets'") - before, r.rows_affected)
    };
    // EXPLAIN PLAN names the path each statement takes below, and changes nothing.
    let p = plan(&s, "UPDATE /*+ FULL(t) */ t SET v = v + 1 WHERE id = 1235");
    assert!(p.contains("UPDATE STATEMENT") && p.contains("TABLE ACCESS FULL") && !p.contains("INDEX"), "{p}");
    let p = plan(&s, "UPDATE t SET v = v + 1 WHERE id = 1234");
    assert!(p.contains("INDEX UNIQUE SCAN") && p.contains("T_ID") && p.contains("access(\"ID\"=1234)"), "{p}");
    let p = plan(&s, "DELETE /*+ INDEX(t t_k) */ FROM t WHERE k BETWEEN 10 AND 20");
    assert!(p.contains("DELETE STATEMENT") && p.contains("INDEX RANGE SCAN") && p.contains("T_K"), "{p}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE k BETWEEN 10 AND 20"), 33);
    let (full, _) = gets(&s, "UPDATE /*+ FULL(t) */ t SET v = v + 1 WHERE id = 1235");
    assert!(full > 60, "a FULL hint scans the table: {full} consistent gets");
    let (by_key, rows) = gets(&s, "UPDATE t SET v = v + 1 WHERE id = 1234");
    assert_eq!(rows, 1);
    assert!(by_key < 10, "UPDATE by a unique key: {by_key} consistent gets");
    // 33 rows scattered over the table: a full scan costs less, unless hinted.
    let (by_range, rows) = gets(&s, "DELETE /*+ INDEX(t t_k) */ FROM t WHERE k BETWEEN 10 AND 20");
    let (full_range, full_rows) = gets(&s, "DELETE /*+ FULL(t) */ FROM t WHERE k BETWEEN 30 AND 40");
    assert_eq!(rows, full_rows);
    // Both maintain both indexes for each row deleted; only the full scan reads every block.
    assert!(
        by_range + 60 < full_range,
        "DELETE of {rows} rows: {by_range} consistent gets by the index, {full_range} by a full scan"
    );
    let (no_index, _) = gets(&s, "UPDATE /*+ NO_INDEX(t t_id) */ t SET v = v + 1 WHERE id = 1236");
    assert!(no_index > full / 2, "NO_INDEX scans the table: {no_index} consistent gets");
    assert_eq!(int(&s, "SELECT SUM(v) FROM t WHERE id BETWEEN 1234 AND 1236"), (1234 % 10 + 1235 % 10 + 1236 % 10) + 3);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE k BETWEEN 10 AND 20 OR k BETWEEN 30 AND 40"), 0);
    by_index_and_full(&s, "t_k", "id, k FROM t WHERE k BETWEEN 0 AND 40");
}

/// A table `t` of `n` rows (`id` 1..n, `k` = id * 7 mod 1009, `v` a small group, `pad`),
/// with the indexes given, committed.
fn keyed_table(s: &Session, n: i64, indexes: &[&str]) {
    exec(s, "CREATE TABLE t (id INTEGER NOT NULL, k INTEGER, v INTEGER, pad VARCHAR2(100))");
    exec(
        s,
        &format!(
            "INSERT INTO t SELECT LEVEL, MOD(LEVEL * 7, 1009), MOD(LEVEL, 10), RPAD('r', 60, 'r') FROM dual CONNECT BY LEVEL <= {n}"
        ),
    );
    for ix in indexes {
        exec(s, ix);
    }
    exec(s, "COMMIT");
}

/// The sorted rows of `select` by the index `ix` and by a full scan, which must agree.
fn by_index_and_full(s: &Session, ix: &str, select: &str) -> Vec<Vec<String>> {
    let by_index = sorted(s, &format!("SELECT /*+ INDEX(t {ix}) */ {select}"));
    let full = sorted(s, &format!("SELECT /*+ FULL(t) */ {select}"));
    assert_eq!(by_index, full, "{select}: the index and the table disagree");
    full
}

#[test]
fn an_equality_on_a_whole_unique_key_of_a_table_never_analyzed_is_one_row_by_the_index() {
    let (_t, _d, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE big (id NUMBER PRIMARY KEY, k NUMBER, pad VARCHAR2(50))");
    exec(&s, "CREATE TABLE pair (a NUMBER, b NUMBER, CONSTRAINT pair_uk UNIQUE (a, b))");
    exec(&s, "INSERT INTO big SELECT LEVEL, MOD(LEVEL, 10), RPAD('x', 50, 'x') FROM dual CONNECT BY LEVEL <= 20000");
    exec(&s, "INSERT INTO pair SELECT MOD(LEVEL, 100), LEVEL FROM dual CONNECT BY LEVEL <= 20000");
    exec(&s, "COMMIT");
    // No statistics: the guessed selectivity of an equality would make it thousands of
    // rows and a full scan; a unique key's equality is one row, whatever the guess.
    for (sql, index) in [
        ("SELECT * FROM big WHERE id = 4242 AND k > 0", "INDEX UNIQUE SCAN"),
        ("SELECT * FROM pair WHERE a = 42 AND b = 4242", "INDEX UNIQUE SCAN"),
    ] {
        let p = plan(&s, sql);
        assert!(p.contains(index) && !p.contains("TABLE ACCESS FULL"), "{sql}\n{p}");
        let one_row =
            p.lines().any(|l| l.contains("SELECT STATEMENT") && l.split('|').nth(4).is_some_and(|r| r.trim() == "1"));
        assert!(one_row, "estimated one row:\n{p}");
    }
    // Part of the key is no unique scan.
    assert!(!plan(&s, "SELECT * FROM pair WHERE a = 42").contains("INDEX UNIQUE SCAN"));
}

#[test]
fn a_range_open_above_stops_before_null_keys() {
    let (_t, _d, db) = temp_db(options(2048, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (a INTEGER, b VARCHAR2(10))");
    exec(&s, "INSERT INTO t VALUES (1, 'k0'), (1, 'k1'), (1, NULL), (NULL, 'k0'), (2, 'k0')");
    exec(&s, "CREATE INDEX ix ON t (a, b)");
    // (1, NULL) and (NULL, 'k0') are in the index, after every non-NULL value.
    assert_eq!(by_index_and_full(&s, "ix", "a, b FROM t WHERE a = 1 AND b > 'k0'"), vec![vec!["1", "k1"]]);
    assert_eq!(by_index_and_full(&s, "ix", "a, b FROM t WHERE a = 1 AND b >= 'k1'"), vec![vec!["1", "k1"]]);
    assert_eq!(by_index_and_full(&s, "ix", "COUNT(*) FROM t WHERE a > 0 AND b < 'k1'"), vec![vec!["2"]]);
    assert_eq!(by_index_and_full(&s, "ix", "COUNT(*) FROM t WHERE a >= 1"), vec![vec!["4"]]);
    let desc = sorted(&s, "SELECT /*+ INDEX_DESC(t ix) */ a, b FROM t WHERE a = 1 AND b > 'k0'");
    assert_eq!(desc, vec![vec!["1", "k1"]]);
}

#[test]
fn long_keys_make_a_deep_tree_that_still_answers_exactly() {
    let (_t, _d, db) = temp_db(options(2048, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER NOT NULL, s VARCHAR2(200))");
    exec(
        &s,
        "INSERT INTO t SELECT LEVEL, RPAD('k' || LPAD(MOD(LEVEL * 37, 1009), 4, '0'), 180, '.') FROM dual CONNECT BY LEVEL <= 600",
    );
    exec(&s, "CREATE INDEX ix ON t (s)");
    assert!(int(&s, "SELECT blevel FROM user_indexes WHERE index_name = 'IX'") >= 2, "a tree of three levels at least");
    exec(&s, "DELETE FROM t WHERE MOD(id, 3) = 0");
    exec(&s, "INSERT INTO t SELECT id + 1000, s FROM t WHERE MOD(id, 5) = 0");
    for cond in ["s > 'k05'", "s BETWEEN 'k02' AND 'k0300'", "s <= 'k0999'", "s = (RPAD('k0037', 180, '.'))"] {
        by_index_and_full(&s, "ix", &format!("id FROM t WHERE {cond}"));
        by_index_and_full(&s, "ix", &format!("COUNT(*) FROM t WHERE {cond}"));
    }
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    assert_eq!(int(&s, "SELECT num_rows FROM user_indexes WHERE index_name = 'IX'"), count(&s, "t"));
}

#[test]
fn an_index_scan_sees_what_a_full_scan_sees_while_another_session_changes_keys() {
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let (a, b) = (db.session(), db.session());
    keyed_table(&a, 400, &["CREATE INDEX t_k ON t (k)", "CREATE UNIQUE INDEX t_id ON t (id)"]);
    let queries = [
        ("t_k", "id, k FROM t WHERE k BETWEEN 100 AND 600"),
        ("t_k", "COUNT(*) FROM t WHERE k >= 0"),
        ("t_k", "k FROM t WHERE k < 300"),
        ("t_id", "id, pad FROM t WHERE id > 150"),
        ("t_id", "COUNT(*) FROM t WHERE id <= 250"),
    ];
    let snapshot = |s: &Session| queries.iter().map(|(ix, q)| by_index_and_full(s, ix, q)).collect::<Vec<_>>();
    let committed = snapshot(&b);
    manual(&a);
    exec(&a, "UPDATE t SET k = k + 500 WHERE id BETWEEN 50 AND 120");
    exec(&a, "UPDATE t SET id = id + 1000, pad = 'moved' WHERE MOD(id, 7) = 0");
    exec(&a, "DELETE FROM t WHERE k BETWEEN 200 AND 260");
    exec(&a, "INSERT INTO t SELECT LEVEL + 5000, LEVEL * 3, 0, 'new' FROM dual CONNECT BY LEVEL <= 150");
    let changed = snapshot(&a);
    assert_ne!(changed, committed, "the changes show in the session that made them");
    assert_eq!(snapshot(&b), committed, "the other session sees the committed keys only");
    exec(&a, "COMMIT");
    assert_eq!(snapshot(&b), changed, "after the commit both see the new keys");
    exec(&a, "UPDATE t SET k = NULL WHERE k < 400");
    exec(&a, "DELETE FROM t WHERE id > 5100");
    exec(&a, "INSERT INTO t VALUES (9999, 1, 1, 'x')");
    exec(&a, "ROLLBACK");
    assert_eq!(snapshot(&a), changed, "after the rollback the index matches the table again");
    assert_eq!(snapshot(&b), changed);
}

#[test]
fn a_duplicate_key_fails_its_statement_and_changes_nothing() {
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    keyed_table(&s, 200, &["CREATE UNIQUE INDEX t_id ON t (id)"]);
    let counts = |s: &Session| {
        (
            int(s, "SELECT /*+ FULL(t) */ COUNT(*) FROM t"),
            int(s, "SELECT /*+ INDEX_FFS(t t_id) */ COUNT(*) FROM t"),
            int(s, "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 0"),
        )
    };
    let e = fail(&s, "INSERT INTO t VALUES (17, 1, 1, 'again')");
    assert!(e.to_string().contains("unique constraint (LIOSCOPE.T_ID) violated"), "{e}");
    assert_eq!(counts(&s), (200, 200, 200));
    // One duplicate among a hundred new rows: none of them goes in.
    let e = fail(&s, "INSERT INTO t SELECT /*+ FULL(t) */ id + 150, k, v, pad FROM t WHERE id <= 100");
    assert!(e.to_string().contains("unique constraint (LIOSCOPE.T_ID) violated"), "{e}");
    assert_eq!(counts(&s), (200, 200, 200));
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > 200"), 0);
    // Keys moved among the rows of one statement do not meet themselves.
    exec(&s, "UPDATE t SET id = id + 1");
    assert_eq!(
        by_index_and_full(&s, "t_id", "MIN(id), MAX(id), COUNT(*) FROM t WHERE id > 0"),
        vec![vec!["2", "201", "200"]]
    );
    exec(&s, "UPDATE t SET id = id - 1");
    let e = fail(&s, "UPDATE t SET id = 5 WHERE id = 6");
    assert!(e.to_string().contains("unique constraint (LIOSCOPE.T_ID) violated"), "{e}");
    assert_eq!(by_index_and_full(&s, "t_id", "id FROM t WHERE id BETWEEN 5 AND 6"), vec![vec!["5"], vec!["6"]]);
    // A key freed by a delete in the same transaction can be taken again.
    manual(&s);
    exec(&s, "DELETE FROM t WHERE id = 10");
    exec(&s, "INSERT INTO t VALUES (10, 0, 0, 'again')");
    assert_eq!(by_index_and_full(&s, "t_id", "pad FROM t WHERE id = 10"), vec![vec!["again"]]);
    exec(&s, "ROLLBACK");
    assert_eq!(by_index_and_full(&s, "t_id", "v FROM t WHERE id = 10"), vec![vec!["0"]]);
    assert_eq!(counts(&s), (200, 200, 200));
}

#[test]
fn create_unique_index_on_duplicates_fails_and_leaves_no_index() {
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    keyed_table(&s, 300, &[]);
    let e = fail(&s, "CREATE UNIQUE INDEX t_v ON t (v)");
    assert!(e.to_string().contains("cannot create a unique index: duplicate keys found"), "{e}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_ind_columns"), 0);
    // Its name is free and a non-unique index on the same column can be built.
    exec(&s, "CREATE INDEX t_v ON t (v)");
    assert_eq!(scalar(&s, "SELECT uniqueness FROM user_indexes WHERE index_name = 'T_V'"), "NONUNIQUE");
    assert_eq!(by_index_and_full(&s, "t_v", "COUNT(*) FROM t WHERE v = 3"), vec![vec!["30"]]);
}

#[test]
fn indexes_survive_close_and_reopen() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("db");
    let queries = [
        ("t_k", "id FROM t WHERE k BETWEEN 10 AND 400"),
        ("t_k", "COUNT(*) FROM t WHERE k > 500"),
        ("t_id", "id, k FROM t WHERE id < 100"),
    ];
    let before = {
        let db = create(&path, options(2048, "2M"));
        let s = db.session();
        keyed_table(&s, 700, &["CREATE INDEX t_k ON t (k)", "CREATE UNIQUE INDEX t_id ON t (id)"]);
        exec(&s, "DELETE FROM t WHERE MOD(id, 4) = 0");
        exec(&s, "UPDATE t SET k = k + 3 WHERE MOD(id, 5) = 0");
        let figures = queries.iter().map(|(ix, q)| by_index_and_full(&s, ix, q)).collect::<Vec<_>>();
        let stats = rows(&s, "SELECT index_name, blevel, leaf_blocks, clustering_factor FROM user_indexes ORDER BY 1");
        drop(s);
        db.close().expect("close");
        (figures, stats)
    };
    let db = open(&path, options(2048, "2M"));
    let s = db.session();
    let after = queries.iter().map(|(ix, q)| by_index_and_full(&s, ix, q)).collect::<Vec<_>>();
    assert_eq!(after, before.0);
    assert_eq!(
        rows(&s, "SELECT index_name, blevel, leaf_blocks, clustering_factor FROM user_indexes ORDER BY 1"),
        before.1
    );
    let e = fail(&s, "INSERT INTO t VALUES (1, 1, 1, 'dup')");
    assert!(e.to_string().contains("unique constraint (LIOSCOPE.T_ID) violated"), "{e}");
    exec(&s, "INSERT INTO t VALUES (4, 2000, 1, 'after reopen')");
    assert_eq!(by_index_and_full(&s, "t_k", "id FROM t WHERE k = 2000"), vec![vec!["4"]]);
}

#[test]
fn drop_index_and_drop_table() {
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    keyed_table(&s, 300, &["CREATE INDEX t_k ON t (k)", "CREATE INDEX t_v ON t (v, k)"]);
    assert!(plan(&s, "SELECT /*+ INDEX(t t_k) */ id FROM t WHERE k = 7").contains("INDEX RANGE SCAN"));
    exec(&s, "DROP INDEX t_k");
    let shown = plan(&s, "SELECT /*+ INDEX(t t_k) */ id FROM t WHERE k = 7");
    assert!(shown.contains("TABLE ACCESS FULL") && shown.contains("T has no such index"), "{shown}");
    assert_eq!(scalar(&s, "SELECT /*+ INDEX(t t_k) */ id FROM t WHERE k = 7"), "1");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 1);
    assert!(fail(&s, "DROP INDEX t_k").to_string().contains("T_K"));
    exec(&s, "DROP TABLE t");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_ind_columns"), 0);
    // The names are free again, and a new table of the same name has no index.
    keyed_table(&s, 10, &["CREATE INDEX t_v ON t (v)"]);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 1);
    assert_eq!(by_index_and_full(&s, "t_v", "COUNT(*) FROM t WHERE v >= 0"), vec![vec!["10"]]);
}

#[test]
fn insert_select_from_the_same_table_through_an_index_reads_before_it_writes() {
    let (_t, _d, db) = temp_db(options(2048, "1M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, a INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, MOD(LEVEL, 3) FROM dual CONNECT BY LEVEL <= 10");
    exec(&s, "CREATE INDEX ix ON t (a)");
    // The rows are gathered before the inserter takes the table's blocks: no self-wait.
    let inserted = exec(&s, "INSERT INTO t SELECT /*+ INDEX(t ix) */ id + 100, a FROM t WHERE a = 1");
    assert_eq!(inserted.rows_affected, 4);
    assert_eq!(int(&s, "SELECT /*+ INDEX(t ix) */ COUNT(*) FROM t WHERE a = 1"), 8);
}

#[test]
fn counts_through_an_index_follow_chained_and_migrated_rows_among_ordinary_ones() {
    // 2 KiB blocks: a row of two 1,500-byte columns is chained across blocks, and rows
    // that grow by an update migrate. The walk of a run of rows in one block hands such a
    // row back to the general fetch and goes on after it.
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER NOT NULL, v INTEGER, a VARCHAR2(1500), b VARCHAR2(1500))");
    exec(
        &s,
        "INSERT INTO t SELECT LEVEL, CASE WHEN MOD(LEVEL, 4) = 0 THEN NULL ELSE LEVEL END, \
         CASE WHEN MOD(LEVEL, 50) = 0 THEN RPAD('a', 1500, 'a') ELSE 'a' END, \
         CASE WHEN MOD(LEVEL, 50) = 0 THEN RPAD('b', 1500, 'b') ELSE 'b' END \
         FROM dual CONNECT BY LEVEL <= 2000",
    );
    exec(&s, "UPDATE t SET a = RPAD('m', 400, 'm') WHERE MOD(id, 37) = 0");
    exec(&s, "CREATE INDEX t_id ON t (id)");
    exec(&s, "COMMIT");
    let shown = plan(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(v) FROM t WHERE id > 0");
    assert!(shown.contains("TABLE ACCESS BY INDEX ROWID"), "{shown}");
    let continued = || s.stats().get(lioscope::stats::Stat::TableFetchContinuedRow);
    let before = continued();
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(v) FROM t WHERE id > 0"), 1500);
    // 40 rows chained over two pieces, and the rows that migrated when they grew.
    let followed = continued() - before;
    assert!(followed > 40, "chained and migrated rows were followed: {followed}");
    let counts = by_index_and_full(&s, "t_id", "COUNT(v), COUNT(*) FROM t WHERE id > 0");
    assert_eq!(counts, vec![vec!["1500".to_string(), "2000".to_string()]]);
    assert_eq!(by_index_and_full(&s, "t_id", "COUNT(v) FROM t WHERE id > 0 AND v > 1000"), vec![vec!["750"]]);
    // Index only: COUNT(*) of the entries in range, deleted ones left out.
    exec(&s, "DELETE FROM t WHERE id > 1900");
    assert_eq!(by_index_and_full(&s, "t_id", "COUNT(*) FROM t WHERE id > 100"), vec![vec!["1800"]]);
    assert_eq!(by_index_and_full(&s, "t_id", "COUNT(v) FROM t WHERE id > 100"), vec![vec!["1350"]]);
}

#[test]
fn a_read_only_transaction_keeps_deleted_entries_it_may_read_between_its_statements() {
    // Another session deletes and commits, then refills the same leaves: their deleted
    // entries' space is wanted. The read-only transaction's snapshot predates the delete,
    // so the entries stay until it ends and its index scans still count them.
    let (_t, _d, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    keyed_table(&s, 2000, &["CREATE INDEX t_v ON t (v, id)"]);
    let reader = db.session();
    exec(&reader, "SET TRANSACTION READ ONLY");
    let count = "SELECT /*+ INDEX(t t_v) */ COUNT(*) FROM t WHERE v >= 0";
    assert_eq!(int(&reader, count), 2000);
    exec(&s, "DELETE FROM t WHERE v = 3");
    exec(&s, "COMMIT");
    exec(&s, "INSERT INTO t SELECT 5000 + LEVEL, 1000, 3, 'x' FROM dual CONNECT BY LEVEL <= 2000");
    exec(&s, "COMMIT");
    assert_eq!(int(&reader, count), 2000, "the snapshot's entries are all there");
    exec(&reader, "COMMIT");
    assert_eq!(int(&reader, count), 3800);
}

/// Table access by rowid pins the blocks of rows a few entries ahead: whether the scan
/// ends, stops early or fails, no pin outlives the statement.
#[test]
fn access_by_rowid_leaves_no_block_pinned() {
    let (_dir, _path, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE one_a_block (id NUMBER NOT NULL, pad VARCHAR2(100)) PCTFREE 99");
    exec(&s, "INSERT INTO one_a_block SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 2000");
    exec(&s, "CREATE INDEX one_a_block_ix ON one_a_block (id)");
    let pinned = || db.cache_summary().pinned;
    let hint = "/*+ INDEX(t one_a_block_ix) */";
    assert_eq!(int(&s, &format!("SELECT {hint} COUNT(pad) FROM one_a_block t WHERE id > 0")), 2000);
    assert_eq!(pinned(), 0, "after a whole range");
    let rows = rows(&s, &format!("SELECT {hint} pad FROM one_a_block t WHERE id > 0 AND ROWNUM <= 10"));
    assert_eq!(rows.len(), 10);
    assert_eq!(pinned(), 0, "after COUNT STOPKEY stopped the scan");
    let e = fail(&s, &format!("SELECT {hint} 1 / (id - 500) FROM one_a_block t WHERE id > 0"));
    assert!(e.to_string().contains("divisor is equal to zero"), "{e}");
    assert_eq!(pinned(), 0, "after an error in the middle of the range");
    let mut cursor = s.prepare(&format!("SELECT {hint} COUNT(pad) FROM one_a_block t WHERE id > :lo")).unwrap();
    for lo in [0, 1000, 1990] {
        cursor.execute(&[lo.into()]).unwrap();
        assert_eq!(pinned(), 0, "after a kept plan's execution");
    }
}

/// A count through an index whose entries visit the table's blocks in runs of one row and
/// of two (two rows a block): each row is fetched once, a row in the block of the row
/// before it counts `buffer is pinned count` and no get, and the counts agree with a full
/// scan's.
#[test]
fn runs_of_one_and_two_rows_count_their_fetches_and_pins() {
    let (_dir, _path, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (k INTEGER, v INTEGER, pad VARCHAR2(3000))");
    // Rows 2b and 2b + 1 share block b. The index visits the blocks of even b as a run of
    // both rows, and those of odd b as two runs of one: the second row, then after every
    // other block the first.
    const BLOCKS: i64 = 100;
    let mut order = Vec::new();
    for b in 0..BLOCKS {
        order.extend(if b % 2 == 0 { vec![2 * b, 2 * b + 1] } else { vec![2 * b + 1] });
    }
    order.extend((0..BLOCKS).filter(|b| b % 2 == 1).map(|b| 2 * b));
    let mut key = vec![0; order.len()];
    for (position, &row) in order.iter().enumerate() {
        key[row as usize] = position as i64 + 1;
    }
    for (row, k) in key.iter().enumerate() {
        let v = if row % 7 == 3 { "NULL".to_string() } else { row.to_string() };
        exec(&s, &format!("INSERT INTO t VALUES ({k}, {v}, RPAD('p', 3000, 'p'))"));
    }
    exec(&s, "CREATE INDEX t_k ON t (k)");
    exec(&s, "COMMIT");
    let stat = |stat: Stat| s.stats().get(stat);
    let blocks = stat(Stat::TableScanBlocksGotten);
    assert_eq!(by_index_and_full(&s, "t_k", "COUNT(v), COUNT(*) FROM t WHERE k > 0"), vec![vec!["171", "200"]]);
    assert_eq!(stat(Stat::TableScanBlocksGotten) - blocks, BLOCKS as u64, "two rows a block");
    let (fetched, pinned) = (stat(Stat::TableFetchByRowid), stat(Stat::BufferIsPinned));
    assert_eq!(int(&s, "SELECT /*+ INDEX(t t_k) */ COUNT(v) FROM t WHERE k > 0"), 171);
    assert_eq!(stat(Stat::TableFetchByRowid) - fetched, 200, "each row fetched once");
    assert_eq!(stat(Stat::BufferIsPinned) - pinned, BLOCKS as u64 / 2, "the second row of each run of two");
}

//! Model-based test of transactions: random sequences of changes, savepoints, commits and
//! rollbacks in one session are checked, after every step, against a model of what that
//! session must see (its own changes) and what another session must see (the committed
//! state only).

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Update { key: i64, value: i64 },
    AddToAll(i64),
    Delete(i64),
    Insert { key: i64, value: i64 },
    Savepoint(u8),
    RollbackTo(u8),
    Commit,
    Rollback,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0i64..40, -1000i64..1000).prop_map(|(key, value)| Op::Update { key, value }),
        1 => (-5i64..5).prop_map(Op::AddToAll),
        2 => (0i64..40).prop_map(Op::Delete),
        2 => (0i64..40, -1000i64..1000).prop_map(|(key, value)| Op::Insert { key, value }),
        1 => (0u8..3).prop_map(Op::Savepoint),
        1 => (0u8..3).prop_map(Op::RollbackTo),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
    ]
}

type State = BTreeMap<i64, i64>;

fn contents(s: &Session) -> State {
    rows(s, "SELECT k, v FROM kv ORDER BY k")
        .into_iter()
        .map(|r| (r[0].to_string().parse().unwrap(), r[1].to_string().parse().unwrap()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(24), ..ProptestConfig::default() })]

    #[test]
    fn a_session_sees_its_changes_and_others_see_commits(ops in proptest::collection::vec(op(), 1..40)) {
        let (_t, _d, db) = temp_db(options(2048, "2M"));
        let (me, other) = (db.session(), db.session());
        exec(&me, "CREATE TABLE kv (k NUMBER NOT NULL, v NUMBER NOT NULL, pad VARCHAR2(100))");
        // Wide rows over 2 KiB blocks: changes spread over many blocks, and grown rows migrate.
        exec(&me, "INSERT INTO kv SELECT LEVEL * 2, LEVEL, RPAD('p', MOD(LEVEL, 7) * 10, 'p') FROM dual CONNECT BY LEVEL <= 20");
        me.set_autocommit(false);
        let mut committed: State = (1..=20).map(|i| (i * 2, i)).collect();
        let mut working = committed.clone();
        let mut savepoints: Vec<(u8, State)> = Vec::new();
        for op in &ops {
            match *op {
                Op::Update { key, value } => {
                    exec(&me, &format!("UPDATE kv SET v = {value}, pad = RPAD('u', MOD({value} + 1000, 90), 'u') WHERE k = {key}"));
                    if let Some(v) = working.get_mut(&key) { *v = value; }
                }
                Op::AddToAll(d) => {
                    exec(&me, &format!("UPDATE kv SET v = v + {d}"));
                    working.values_mut().for_each(|v| *v += d);
                }
                Op::Delete(key) => {
                    exec(&me, &format!("DELETE FROM kv WHERE k = {key}"));
                    working.remove(&key);
                }
                Op::Insert { key, value } => {
                    if working.contains_key(&key) { continue; }
                    exec(&me, &format!("INSERT INTO kv VALUES ({key}, {value}, NULL)"));
                    working.insert(key, value);
                }
                Op::Savepoint(n) => {
                    exec(&me, &format!("SAVEPOINT s{n}"));
                    savepoints.retain(|(m, _)| *m != n);
                    savepoints.push((n, working.clone()));
                }
                Op::RollbackTo(n) => match savepoints.iter().position(|(m, _)| *m == n) {
                    Some(at) => {
                        exec(&me, &format!("ROLLBACK TO SAVEPOINT s{n}"));
                        working = savepoints[at].1.clone();
                        savepoints.truncate(at + 1);
                    }
                    None => { fail(&me, &format!("ROLLBACK TO SAVEPOINT s{n}")); }
                },
                Op::Commit => {
                    exec(&me, "COMMIT");
                    committed = working.clone();
                    savepoints.clear();
                }
                Op::Rollback => {
                    exec(&me, "ROLLBACK");
                    working = committed.clone();
                    savepoints.clear();
                }
            }
            prop_assert_eq!(&contents(&me), &working, "the session's own view after {:?}", op);
            prop_assert_eq!(&contents(&other), &committed, "another session's view after {:?}", op);
        }
        exec(&me, "COMMIT");
        drop(me);
        prop_assert_eq!(contents(&other), working);
        prop_assert_eq!(db.cache_summary().pinned, 0);
    }
}

//! Damaged or hand-edited files read at open: `control.json` and `dictionary.json` with
//! numbers out of range, negative or huge numbers, missing fields, wrong types, entries
//! deleted or repeated. Opening such a database either works or is refused with an error
//! naming the file and the field; it never panics, in the opening thread or in any
//! thread the database starts.

mod common;

use common::bank::copy_dir;
use common::*;
use lioscope::{Database, DatabaseOptions, Error};
use proptest::prelude::*;
use serde_json::Value as Json;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock};

/// Small files, so each case copies little.
fn small_options() -> DatabaseOptions {
    let parameters = [
        ("db_cache_size", "1M"),
        ("undo_tablespace_size", "256K"),
        ("undo_tablespace_maxsize", "2M"),
        ("log_file_size", "1M"),
    ];
    DatabaseOptions {
        block_size: 2048,
        extent_size: 16 << 10,
        parameters: parameters.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(),
        ..DatabaseOptions::default()
    }
}

/// A closed database with two tables, an index on each, statistics and a table marked
/// INMEMORY: every kind of entry the two files hold. Made once for the whole file.
fn base() -> &'static Path {
    static BASE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &BASE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let db_dir = dir.path().join("db");
            let db = create(&db_dir, small_options());
            let s = db.session();
            exec(&s, "CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR2(20), c NUMBER(8,2), d DATE, e CHAR(3))");
            exec(&s, "INSERT INTO t SELECT LEVEL, 'row ' || LEVEL, LEVEL / 4, SYSDATE, 'x' FROM dual CONNECT BY LEVEL <= 300");
            exec(&s, "CREATE INDEX t_b ON t (b, a)");
            exec(&s, "CREATE TABLE u (k INTEGER, v VARCHAR2(10))");
            exec(&s, "INSERT INTO u SELECT LEVEL, 'v' || LEVEL FROM dual CONNECT BY LEVEL <= 50");
            exec(&s, "CREATE UNIQUE INDEX u_k ON u (k)");
            exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
            exec(&s, "ALTER TABLE u INMEMORY NO INMEMORY (v)");
            exec(&s, "ALTER SYSTEM SET db_file_multiblock_read_count = 16");
            drop(s);
            db.close().unwrap();
            (dir, db_dir)
        })
        .1
}

/// Panics in any thread since the hook was set: a database's background threads may
/// panic where no `catch_unwind` of the test sees it.
static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Held by each test of this file while it runs, so that the panics counted during a
/// case are that case's (a failing test beside it would add its own).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            default(info);
        }));
    });
}

/// Opens the database in `dir`; if it opens, runs statements that read every table and
/// use every index and the dictionary views, then closes it. Returns the open's result
/// as text; panics (counted by the hook) are what the caller checks.
fn open_and_use(dir: &Path) -> Result<(), String> {
    let db = Database::open(dir, small_options()).map_err(|e| e.to_string())?;
    let s = db.session();
    for sql in [
        "SELECT COUNT(*) FROM t",
        "SELECT a, b FROM t WHERE b = 'row 7' AND a = 7",
        "SELECT SUM(c) FROM t WHERE a BETWEEN 10 AND 20",
        "SELECT v FROM u WHERE k = 3",
        "SELECT COUNT(*) FROM u",
        "SELECT table_name, num_rows FROM user_tables",
        "SELECT index_name, column_name FROM user_ind_columns",
        "INSERT INTO t VALUES (1000, 'new', 1, SYSDATE, 'y')",
        "UPDATE u SET v = 'w' WHERE k = 4",
        "COMMIT",
    ] {
        let _ = s.execute(sql);
    }
    drop(s);
    let _ = db.close();
    Ok(())
}

/// One place in a JSON document: keys and array positions from the root.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    At(usize),
}

/// Every place in `value` (the root excluded), parents before children.
fn places(value: &Json, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let children: Vec<(Step, &Json)> = match value {
        Json::Object(map) => map.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
        Json::Array(items) => items.iter().enumerate().map(|(i, v)| (Step::At(i), v)).collect(),
        _ => return,
    };
    for (step, child) in children {
        prefix.push(step);
        out.push(prefix.clone());
        places(child, prefix, out);
        prefix.pop();
    }
}

fn parent_of<'a>(root: &'a mut Json, place: &[Step]) -> &'a mut Json {
    place[..place.len() - 1].iter().fold(root, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::At(i) => &mut v[*i],
    })
}

/// What a mutation puts in place of a value.
fn replacement(which: usize) -> Json {
    let numbers: [Json; 14] = [
        (-1).into(),
        0.into(),
        1.into(),
        2.into(),
        255.into(),
        1023.into(),
        1024.into(),
        65536.into(),
        4_194_304.into(),
        u32::MAX.into(),
        (u64::from(u32::MAX) + 1).into(),
        u64::MAX.into(),
        i64::MIN.into(),
        serde_json::json!(1.5e30),
    ];
    let others = [
        Json::Null,
        Json::Bool(true),
        "x".into(),
        "".into(),
        "../../etc/passwd".into(),
        serde_json::json!([]),
        serde_json::json!({}),
    ];
    match which % (numbers.len() + others.len()) {
        n if n < numbers.len() => numbers[n].clone(),
        n => others[n - numbers.len()].clone(),
    }
}

/// A mutation of one place: replace its value, delete it, or repeat it (array entries).
#[derive(Debug, Clone, Copy)]
enum Mutation {
    Replace(usize),
    Delete,
    Repeat,
}

fn mutate(root: &mut Json, place: &[Step], mutation: Mutation) {
    let last = place.last().expect("not the root").clone();
    let parent = parent_of(root, place);
    match (mutation, last, parent) {
        (Mutation::Replace(which), Step::Key(k), Json::Object(map)) => {
            map.insert(k, replacement(which));
        }
        (Mutation::Replace(which), Step::At(i), Json::Array(items)) => items[i] = replacement(which),
        (Mutation::Delete, Step::Key(k), Json::Object(map)) => {
            map.remove(&k);
        }
        (Mutation::Delete, Step::At(i), Json::Array(items)) => {
            items.remove(i);
        }
        (Mutation::Repeat, Step::At(i), Json::Array(items)) => {
            let copy = items[i].clone();
            items.insert(i, copy);
        }
        (Mutation::Repeat, Step::Key(k), Json::Object(map)) => {
            // An object's key cannot repeat: its value is put at a neighbouring key.
            if let Some(v) = map.get(&k).cloned()
                && let Some(other) = map.keys().find(|o| **o != k).cloned()
            {
                map.insert(other, v);
            }
        }
        (_, _, other) => panic!("place {place:?} does not fit {other}"),
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (0usize..64).prop_map(Mutation::Replace),
        2 => Just(Mutation::Delete),
        1 => Just(Mutation::Repeat),
    ]
}

/// Applies `mutations` (each a place, chosen by index among the places the document has
/// then, and what to do there) to the file `name` of a copy of the base database.
fn damaged_copy(name: &str, mutations: &[(prop::sample::Index, Mutation)]) -> (tempfile::TempDir, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_dir(base(), &dir);
    let path = dir.join(name);
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut done = Vec::new();
    for (index, mutation) in mutations {
        let mut all = Vec::new();
        places(&doc, &mut Vec::new(), &mut all);
        if all.is_empty() {
            break;
        }
        let place = all[index.index(all.len())].clone();
        done.push(format!("{mutation:?} at {place:?}"));
        mutate(&mut doc, &place, *mutation);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    (tmp, dir, done.join("; "))
}

fn check_no_panic(name: &str, mutations: &[(prop::sample::Index, Mutation)]) -> Result<(), TestCaseError> {
    count_panics();
    let _alone = one_at_a_time();
    let (_tmp, dir, done) = damaged_copy(name, mutations);
    let before = PANICS.load(Ordering::SeqCst);
    let opened = std::panic::catch_unwind(AssertUnwindSafe(|| open_and_use(&dir)));
    prop_assert!(opened.is_ok(), "{name} with {done}: the open panicked");
    prop_assert_eq!(PANICS.load(Ordering::SeqCst), before, "{} with {}: a thread panicked", name, done);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(48), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_control_file_is_refused_or_opens_but_never_panics(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), mutation()), 1..4)
    ) {
        check_no_panic("control.json", &mutations)?;
    }

    #[test]
    fn a_damaged_dictionary_is_refused_or_opens_but_never_panics(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), mutation()), 1..4)
    ) {
        check_no_panic("dictionary.json", &mutations)?;
    }
}

/// Edits the JSON file `name` of a copy of the base database with `edit`, opens it, and
/// returns the error, which must be `NotADatabase` naming the database.
fn refused(name: &str, edit: impl FnOnce(&mut Json)) -> String {
    let _alone = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_dir(base(), &dir);
    let path = dir.join(name);
    let mut doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut doc);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    match Database::open(&dir, small_options()) {
        Err(Error::NotADatabase { path, reason }) => {
            assert_eq!(path, dir);
            reason
        }
        Err(e) => panic!("expected NotADatabase, got {e}"),
        Ok(_) => panic!("{name} was accepted"),
    }
}

#[test]
fn a_datafile_number_beyond_block_addresses_names_the_field() {
    let reason = refused("control.json", |c| c["datafiles"][1]["number"] = 1024.into());
    assert!(reason.starts_with("control.json: datafiles[1].number 1024"), "{reason}");
    let reason = refused("control.json", |c| c["datafiles"][1]["number"] = 1.into());
    assert!(reason.starts_with("control.json: datafiles[1].number 1 names a datafile listed before"), "{reason}");
    let reason = refused("control.json", |c| c["datafiles"][0]["name"] = "../users01.dbf".into());
    assert!(reason.starts_with("control.json: datafiles[0].name"), "{reason}");
}

#[test]
fn a_log_file_size_beyond_a_redo_offset_names_the_field() {
    let reason = refused("control.json", |c| c["log_file_size"] = (5u64 << 30).into());
    assert!(reason.starts_with("control.json: log_file_size 5368709120"), "{reason}");
    let reason = refused("control.json", |c| c["log_groups"] = serde_json::json!([1, 2, 2]));
    assert!(reason.starts_with("control.json: log_groups[2] 2 is listed twice"), "{reason}");
    let reason = refused("control.json", |c| c["parameters"]["db_cache_size"] = "lots".into());
    assert!(reason.starts_with("control.json: parameters.db_cache_size"), "{reason}");
}

#[test]
fn an_index_column_out_of_range_names_the_field() {
    let reason = refused("dictionary.json", |d| d["indexes"]["T_B"]["columns"] = serde_json::json!([1, 9]));
    assert!(reason.starts_with("dictionary.json: indexes.T_B.columns[1]: column position 9"), "{reason}");
    let reason =
        refused("dictionary.json", |d| d["indexes"]["U_K"]["object_id"] = d["tables"]["T"]["object_id"].clone());
    assert!(reason.contains("is also the object id of tables.T"), "{reason}");
    let reason = refused("dictionary.json", |d| d["tables"]["U"]["inmemory"]["excluded"] = serde_json::json!([7]));
    assert!(reason.starts_with("dictionary.json: tables.U.inmemory.excluded[0]"), "{reason}");
}

#[test]
fn an_identity_column_that_is_not_a_number_names_the_field() {
    let identity =
        |column: usize| serde_json::json!({"column": column, "sequence": "ISEQ$$_1", "always": true, "on_null": false});
    // T.B is a VARCHAR2: it cannot take a sequence's values.
    let reason = refused("dictionary.json", |d| d["tables"]["T"]["identity"] = identity(1));
    assert!(reason.starts_with("dictionary.json: tables.T.identity.column: column B is not a number"), "{reason}");
    let reason = refused("dictionary.json", |d| d["tables"]["T"]["identity"] = identity(9));
    assert!(reason.contains("identity.column: column position 9"), "{reason}");
}

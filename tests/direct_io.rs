//! `filesystemio_options = directio`: datafiles opened with O_DIRECT read the same rows
//! through the aligned buffer cache, or, on a file system that refuses O_DIRECT, the open
//! fails with an error that says so.

mod common;

use common::{count, exec, open, temp_db};
use lioscope::{Database, DatabaseOptions, Error};

fn options(extra: &[(&str, &str)]) -> DatabaseOptions {
    let mut parameters = vec![("db_cache_size".to_owned(), "4M".to_owned())];
    parameters.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    DatabaseOptions { parameters, ..Default::default() }
}

#[test]
fn direct_io_reads_the_same_rows_or_refuses_clearly() {
    let (_dir, path, db) = temp_db(options(&[]));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('x', 200, 'y') FROM dual CONNECT BY LEVEL <= 5000");
    exec(&s, "ALTER SYSTEM SET filesystemio_options = directio");
    drop(s);
    drop(db);
    match Database::open(&path, options(&[])) {
        Ok(db) => {
            let s = db.session();
            let v = exec(&s, "SHOW PARAMETERS filesystemio");
            assert_eq!(v.rows[0][2].to_string(), "directio");
            exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
            let r = exec(&s, "SELECT COUNT(*), SUM(id), MAX(pad) FROM t");
            assert_eq!(r.rows[0][0].to_string(), "5000");
            assert_eq!(r.rows[0][1].to_string(), "12502500");
            assert_eq!(r.rows[0][2].to_string(), "x".to_owned() + &"y".repeat(199));
            assert!(s.stats().get(lioscope::Stat::PhysicalReads) > 0, "the scan read from the datafile");
        }
        Err(Error::Io { operation, .. }) => assert_eq!(operation, "open with O_DIRECT"),
        Err(other) => panic!("expected rows or an O_DIRECT open error, got {other}"),
    }
    // The option can be overridden for one open, and buffered reads see the same rows.
    let db = open(&path, options(&[("filesystemio_options", "none")]));
    assert_eq!(count(&db.session(), "t"), 5000);
}

//! `filesystemio_options = directio`: datafiles opened with O_DIRECT read the same rows
//! through the aligned buffer cache, or, on a file system that refuses O_DIRECT, the open
//! fails with an error that says so, and the test prints "skipped: ..." (the rows were not
//! read through O_DIRECT). Where the open succeeds, the datafiles' open flags (as the
//! kernel shows them) are checked to hold O_DIRECT.

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
            assert_datafiles_open_with_o_direct(&path);
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
        Err(Error::Io { operation, path: file, source }) => {
            assert_eq!(operation, "open with O_DIRECT");
            eprintln!(
                "skipped: the file system refuses O_DIRECT ({}: {source}), so reads through it were not tested here",
                file.display()
            );
        }
        Err(other) => panic!("expected rows or an O_DIRECT open error, got {other}"),
    }
    // The option can be overridden for one open, and buffered reads see the same rows.
    let db = open(&path, options(&[("filesystemio_options", "none")]));
    assert_eq!(count(&db.session(), "t"), 5000);
}

/// Fails unless every datafile of the database in `dir` this process holds open was
/// opened with O_DIRECT, and there is at least one (the flags as the kernel shows them in
/// /proc/self/fdinfo).
fn assert_datafiles_open_with_o_direct(dir: &std::path::Path) {
    let dir = dir.canonicalize().expect("the database directory exists");
    let mut datafiles = Vec::new();
    for fd in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd is readable").flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else { continue };
        if !target.starts_with(&dir) || target.extension().is_none_or(|e| e != "dbf") {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.file_name().to_string_lossy()))
            .expect("fdinfo is readable");
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .expect("fdinfo shows the flags in octal");
        datafiles.push((target, flags & libc::O_DIRECT as u32 != 0));
    }
    assert!(!datafiles.is_empty(), "no datafile of {} is open", dir.display());
    assert!(datafiles.iter().all(|(_, direct)| *direct), "datafiles and whether O_DIRECT: {datafiles:?}");
}

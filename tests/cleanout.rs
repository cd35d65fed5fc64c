//! Block cleanouts and the redo they cost. A commit stamps its commit SCN into the blocks
//! it changed that are still cached; a block the database writer wrote before the commit
//! is stamped in the cache only (logging the stamp would log the whole block again), and
//! whoever reads the block after it left the cache cleans it out then. Whatever crashes,
//! every committed row stays visible and the blocks stay changeable.

mod common;

use common::bank::copy_dir;
use common::{blocks_below_hwm, count, exec, manual, open, options, sysstat, temp_db};
use lioscope::Database;

const ROWS: i64 = 20_000;

/// A session that has inserted `ROWS` rows without committing, every block written by a
/// checkpoint since: a commit now finds none of its blocks with an image in the redo.
fn load_then_checkpoint(db: &Database) -> lioscope::Session {
    let s = db.session();
    manual(&s);
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100))");
    exec(&s, &format!("INSERT INTO t SELECT LEVEL, RPAD('p', 100, 'p') FROM dual CONNECT BY LEVEL <= {ROWS}"));
    exec(&s, "ALTER SYSTEM CHECKPOINT");
    s
}

/// Every row is there, every block can be changed again, and the sum is what the rows
/// were given.
fn check_rows(db: &Database) {
    let s = db.session();
    assert_eq!(count(&s, "t"), ROWS);
    exec(&s, "UPDATE t SET id = id + 1");
    exec(&s, "COMMIT");
    assert_eq!(common::int(&s, "SELECT SUM(id) FROM t"), ROWS * (ROWS + 1) / 2 + ROWS);
}

#[test]
fn commit_cleanout_of_written_blocks_logs_no_block_images() {
    let (_tmp, dir, db) = temp_db(options(8192, "64M"));
    let s = load_then_checkpoint(&db);
    let blocks = blocks_below_hwm(&s, "t");
    assert!(blocks > 200, "the load fills {blocks} blocks");
    let redo_before = sysstat(&s, "redo size");
    let stamped_before = sysstat(&s, "commit cleanouts successfully completed");
    exec(&s, "COMMIT");
    let commit_redo = sysstat(&s, "redo size") - redo_before;
    let stamped = sysstat(&s, "commit cleanouts successfully completed") - stamped_before;
    assert!(stamped >= blocks - 1, "the commit stamps the cached blocks it changed ({stamped} of {blocks})");
    // The transaction table's change (its block was written by the checkpoint too, so
    // that change logs it whole): about one block, where logging each stamp would log
    // each written block whole.
    assert!(commit_redo < 3 * 8192, "the commit logged {commit_redo} bytes for {blocks} written blocks");
    // Readers of the cached blocks find them stamped: no delayed cleanout, no redo.
    let reader = db.session();
    let (redo, cleanouts) = (sysstat(&s, "redo size"), sysstat(&s, "cleanouts only - consistent read gets"));
    assert_eq!(count(&reader, "t"), ROWS);
    assert_eq!(sysstat(&s, "cleanouts only - consistent read gets"), cleanouts, "the blocks are stamped");
    assert_eq!(sysstat(&s, "redo size"), redo, "a scan of stamped blocks logs nothing");
    // A crash now: the stamps never reached disk, the rows are committed all the same.
    let crashed = dir.with_extension("crashed");
    copy_dir(&dir, &crashed);
    drop((reader, s));
    db.close().unwrap();
    drop(db);
    check_rows(&open(&crashed, options(8192, "64M")));
    check_rows(&open(&dir, options(8192, "64M")));
}

#[test]
fn a_block_stamped_in_the_cache_only_is_cleaned_out_by_its_next_reader() {
    let (_tmp, dir, db) = temp_db(options(8192, "64M"));
    let s = load_then_checkpoint(&db);
    exec(&s, "COMMIT");
    // The stamped buffers were clean: flushing drops them unwritten.
    exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    let cleanouts = sysstat(&s, "cleanouts only - consistent read gets");
    assert_eq!(count(&s, "t"), ROWS);
    let blocks = blocks_below_hwm(&s, "t");
    let cleaned = sysstat(&s, "cleanouts only - consistent read gets") - cleanouts;
    assert!(cleaned >= blocks - 1, "the reader cleans out the blocks read back unstamped ({cleaned} of {blocks})");
    // The reader's cleanouts are logged and written: the next reader after a flush and a
    // crash finds them done.
    exec(&s, "ALTER SYSTEM CHECKPOINT");
    exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    let cleanouts = sysstat(&s, "cleanouts only - consistent read gets");
    assert_eq!(count(&s, "t"), ROWS);
    assert_eq!(sysstat(&s, "cleanouts only - consistent read gets"), cleanouts, "cleaned out once for good");
    let crashed = dir.with_extension("crashed");
    copy_dir(&dir, &crashed);
    drop(s);
    db.close().unwrap();
    check_rows(&open(&crashed, options(8192, "64M")));
}

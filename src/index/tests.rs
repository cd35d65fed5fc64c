//! Tests of the B-tree through the index API, on small blocks so that splits and several
//! levels come quickly: against a `BTreeSet` model, across transactions and sessions, on
//! the transactions' fixture (a cache, undo and sessions over a datafile, without a
//! database around them).

use super::*;
use crate::access::{Flow, fixture};
use crate::stats::Stat;
use crate::txn::files::Sizes;
use crate::txn::fixture::{FixtureSession, Options, TxnFixture};
use crate::types::{DataType, Datum};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};

type Entry = (Vec<u8>, RowId);
type Session<'f> = FixtureSession<'f>;

/// 2 KiB blocks, 64-block extents and an 8 MiB cache.
fn options() -> Options {
    let defaults = Options::default();
    Options {
        sizes: Sizes { block_size: 2048, extent_size: 64 * 2048, ..defaults.sizes },
        cache_size: 8 << 20,
        ..defaults
    }
}

/// A new fixture whose transactions roll back index entries (as the instance registers
/// them at start).
fn new_fixture(options: &Options) -> TxnFixture {
    crate::txn::foreign::register(&rollback::INDEX_UNDO);
    TxnFixture::new(options)
}

/// Object ids of the indexes made here (the dictionary hands them out in a database).
static NEXT_OBJECT_ID: AtomicU32 = AtomicU32::new(1000);

fn new_index(s: &Session, unique: bool) -> IndexDef {
    let ctx = fixture::context(s);
    let object_id = NEXT_OBJECT_ID.fetch_add(1, Ordering::Relaxed);
    let segment_header = create_segment(&ctx, object_id).unwrap();
    IndexDef {
        name: format!("I{object_id}"),
        table: "T".into(),
        table_object_id: 1,
        object_id,
        segment_header,
        columns: vec![0],
        unique,
        pctfree: 10,
        created: 0,
        stats: None,
    }
}

/// A bulk build of `index` from `entries`, with a sort area of `memory` bytes.
fn build_within(
    s: &Session,
    index: &IndexDef,
    entries: Vec<Entry>,
    memory: usize,
) -> crate::Result<crate::catalog::IndexStats> {
    let ctx = fixture::context(s);
    let area = sort::SortArea { memory, dir: s.fixture.dir(), io: &*s.fixture.io };
    let mut builder = Builder::new(index, ctx.space.block_size, area);
    for (k, r) in entries {
        builder.add(ctx.stats, r, |arena| {
            arena.extend_from_slice(&k);
            Ok(true)
        })?;
    }
    builder.finish(&ctx)
}

fn build(s: &Session, index: &IndexDef, entries: Vec<Entry>) -> crate::Result<crate::catalog::IndexStats> {
    build_within(s, index, entries, 64 << 20)
}

fn key(n: i64) -> Vec<u8> {
    let mut out = Vec::new();
    assert!(encode_key(&[Datum::Int(n)], &[DataType::Integer], &mut out).unwrap());
    out
}

fn rid(n: u32) -> RowId {
    RowId { rdba: 1000 + n / 50, slot: (n % 50) as u16 }
}

fn ins(s: &Session, index: &IndexDef, k: &[u8], r: RowId) -> crate::Result<()> {
    let ctx = fixture::context(s);
    let mut txn = s.txn.borrow_mut();
    insert(&ctx, &mut txn, s.sid(), index, k, r)
}

fn del(s: &Session, index: &IndexDef, k: &[u8], r: RowId) -> crate::Result<()> {
    let ctx = fixture::context(s);
    let mut txn = s.txn.borrow_mut();
    delete(&ctx, &mut txn, s.sid(), index, k, r)
}

fn commit(s: &Session) {
    let ctx = fixture::context(s);
    s.txn.borrow_mut().commit(&ctx).unwrap();
}

fn rollback(s: &Session) {
    let ctx = fixture::context(s);
    s.txn.borrow_mut().rollback(&ctx).unwrap();
}

fn scan(
    s: &Session,
    index: &IndexDef,
    lower: KeyBound,
    upper: KeyBound,
    descending: bool,
) -> crate::Result<Vec<Entry>> {
    let ctx = fixture::context(s);
    let mut scan = IndexScan::range(index, lower, upper, descending);
    let mut out = Vec::new();
    while let Some(leaf) = scan.next_leaf(&ctx)? {
        for i in 0..leaf.len() {
            out.push((leaf.key(i).to_vec(), leaf.rowid(i)));
        }
    }
    Ok(out)
}

fn all(s: &Session, index: &IndexDef) -> Vec<Entry> {
    scan(s, index, KeyBound::Unbounded, KeyBound::Unbounded, false).unwrap()
}

fn in_bounds(k: &[u8], lower: &KeyBound, upper: &KeyBound) -> bool {
    let lo = match lower {
        KeyBound::Unbounded => true,
        KeyBound::Included(p) => k >= &p[..] || k.starts_with(p),
        KeyBound::Excluded(p) => k > &p[..] && !k.starts_with(p),
    };
    let hi = match upper {
        KeyBound::Unbounded => true,
        KeyBound::Included(p) => k <= &p[..] || k.starts_with(p),
        KeyBound::Excluded(p) => k < &p[..],
    };
    lo && hi
}

fn check_against(s: &Session, index: &IndexDef, model: &BTreeSet<Entry>, bounds: &[(KeyBound, KeyBound)]) {
    let expected: Vec<Entry> = model.iter().cloned().collect();
    assert_eq!(all(s, index), expected, "full ascending scan");
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(scan(s, index, KeyBound::Unbounded, KeyBound::Unbounded, true).unwrap(), reversed, "descending");
    for (lower, upper) in bounds {
        let want: Vec<Entry> = expected.iter().filter(|(k, _)| in_bounds(k, lower, upper)).cloned().collect();
        assert_eq!(scan(s, index, lower.clone(), upper.clone(), false).unwrap(), want, "{lower:?}..{upper:?}");
        let mut want_desc = want;
        want_desc.reverse();
        assert_eq!(scan(s, index, lower.clone(), upper.clone(), true).unwrap(), want_desc, "desc {lower:?}..{upper:?}");
    }
    let stats = statistics(&fixture::context(s), index, 0).unwrap();
    assert_eq!(stats.num_rows, model.len() as u64);
    let mut n = 0;
    fast_full_scan(&fixture::context(s), index, |leaf| {
        n += leaf.len();
        Ok(Flow::Continue)
    })
    .unwrap();
    assert_eq!(n, model.len(), "fast full scan");
}

fn bound(kind: u8, n: i64) -> KeyBound {
    match kind % 3 {
        0 => KeyBound::Unbounded,
        1 => KeyBound::Included(key(n)),
        _ => KeyBound::Excluded(key(n)),
    }
}

mod model {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::txn::fixture::proptest_cases(12), ..ProptestConfig::default() })]
        #[test]
        fn btree_matches_a_model(ops in proptest::collection::vec((0u8..10, 0i64..400, 0u32..3), 200..1500),
                                 bounds in proptest::collection::vec((0u8..3, -5i64..405, 0u8..3, -5i64..405), 6)) {
            let bounds: Vec<(KeyBound, KeyBound)> = bounds.iter().map(|&(a, x, b, y)| (bound(a, x), bound(b, y))).collect();
            let mut model = BTreeSet::new();
            let f = new_fixture(&options());
            let index = {
                let s = f.session();
                let index = new_index(&s, false);
                for (i, &(op, k, dup)) in ops.iter().enumerate() {
                    let entry = (key(k), rid(k as u32 * 3 + dup));
                    if op < 7 {
                        if model.insert(entry.clone()) {
                            ins(&s, &index, &entry.0, entry.1).unwrap();
                        }
                    } else if let Some(e) = model.range(entry.clone()..).next().cloned() {
                        model.remove(&e);
                        del(&s, &index, &e.0, e.1).unwrap();
                    }
                    if i % 97 == 0 {
                        commit(&s);
                    }
                }
                commit(&s);
                check_against(&s, &index, &model, &bounds);
                index
            };
            let f = f.reopen(&options());
            let s = f.session();
            check_against(&s, &index, &model, &bounds);
        }
    }
}

#[test]
fn splits_grow_levels_and_are_counted() {
    let f = new_fixture(&options());
    let s = f.session();
    let index = new_index(&s, false);
    for n in 0..20_000 {
        ins(&s, &index, &key(n), rid(n as u32)).unwrap();
    }
    commit(&s);
    let stats = statistics(&fixture::context(&s), &index, 0).unwrap();
    assert!(stats.blevel >= 2, "{stats:?}");
    assert!(s.stats().get(Stat::LeafNode9010Splits) > 0, "sequential keys split 90-10");
    assert_eq!(s.stats().get(Stat::RootNodeSplits), u64::from(stats.blevel));
    assert!(s.stats().get(Stat::BranchNodeSplits) > 0);
    // Sequential inserts fill leaves: far fewer leaves than 50-50 splits would leave.
    assert!(stats.leaf_blocks < 20_000 / 80, "{stats:?}");
}

#[test]
fn clustering_factor_follows_its_definition() {
    let f = new_fixture(&options());
    let s = f.session();
    let n = 2000u32;
    let ordered: Vec<Entry> =
        (0..n).map(|i| (key(i64::from(i)), RowId { rdba: 100 + i / 20, slot: (i % 20) as u16 })).collect();
    let reversed: Vec<Entry> =
        (0..n).map(|i| (key(i64::from(n - i)), RowId { rdba: 100 + i / 20, slot: (i % 20) as u16 })).collect();
    let mut seed = 7u64;
    let random: Vec<Entry> = (0..n)
        .map(|i| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (key(i64::from(i)), RowId { rdba: 100 + (seed >> 33) as u32 % 100, slot: (i % 20) as u16 })
        })
        .collect();
    for entries in [ordered, reversed, random] {
        let mut sorted = entries.clone();
        sorted.sort();
        let expected = 1 + sorted.windows(2).filter(|w| w[0].1.rdba != w[1].1.rdba).count() as u64;
        let index = new_index(&s, false);
        let built = build(&s, &index, entries).unwrap();
        assert_eq!(built.clustering_factor, expected);
        let walked = statistics(&fixture::context(&s), &index, 0).unwrap();
        assert_eq!(
            (walked.clustering_factor, walked.num_rows, walked.distinct_keys),
            (expected, u64::from(n), u64::from(n))
        );
        assert_eq!((walked.leaf_blocks, walked.blevel), (built.leaf_blocks, built.blevel));
        assert_eq!(all(&s, &index), sorted);
    }
}

#[test]
fn a_spilled_build_gives_the_index_of_an_in_memory_one() {
    let f = new_fixture(&options());
    let s = f.session();
    let mut seed = 3u64;
    let entries: Vec<Entry> = (0..20_000u32)
        .map(|i| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (key((seed >> 40) as i64 % 3000), RowId { rdba: 100 + i / 20, slot: (i % 20) as u16 })
        })
        .collect();
    let (in_memory, spilled) = (new_index(&s, false), new_index(&s, false));
    let disk_sorts = || s.stats().get(Stat::SortsDisk);
    let before = disk_sorts();
    let a = build_within(&s, &in_memory, entries.clone(), 64 << 20).unwrap();
    assert_eq!(disk_sorts(), before);
    let b = build_within(&s, &spilled, entries.clone(), 64 << 10).unwrap();
    assert_eq!(disk_sorts(), before + 1);
    assert_eq!(a, b);
    let mut sorted = entries;
    sorted.sort();
    assert_eq!(all(&s, &in_memory), sorted);
    assert_eq!(all(&s, &spilled), sorted);
}

#[test]
fn built_index_takes_inserts_and_deletes() {
    let f = new_fixture(&options());
    let s = f.session();
    let index = new_index(&s, false);
    let mut model: BTreeSet<Entry> = (0..5000).map(|i| (key(i * 2), rid(i as u32))).collect();
    let stats = build(&s, &index, model.iter().cloned().collect()).unwrap();
    assert!(stats.blevel >= 1);
    for i in 0..3000 {
        let e = (key(i * 3 + 1), rid(9000 + i as u32));
        ins(&s, &index, &e.0, e.1).unwrap();
        model.insert(e);
    }
    for i in (0..5000).step_by(3) {
        let e = (key(i * 2), rid(i as u32));
        del(&s, &index, &e.0, e.1).unwrap();
        model.remove(&e);
    }
    commit(&s);
    check_against(&s, &index, &model, &[(bound(1, 100), bound(2, 2000)), (bound(2, 7), bound(0, 0))]);
}

#[test]
fn readers_see_their_snapshot_and_rollback_restores() {
    let f = new_fixture(&options());
    let (a, b) = (f.session(), f.session());
    let index = new_index(&a, false);
    let mut model: BTreeSet<Entry> = BTreeSet::new();
    for n in 0..500 {
        ins(&a, &index, &key(n * 10), rid(n as u32)).unwrap();
        model.insert((key(n * 10), rid(n as u32)));
    }
    commit(&a);
    let original: Vec<Entry> = model.iter().cloned().collect();
    // Uncommitted: many inserts in the middle (splits), and deletes.
    for n in 0..1500 {
        ins(&a, &index, &key(1000 + n), rid(5000 + n as u32)).unwrap();
    }
    for n in (0..500).step_by(2) {
        del(&a, &index, &key(n * 10), rid(n as u32)).unwrap();
    }
    let cr_before = b.stats().get(Stat::CrBlocksCreated);
    assert_eq!(all(&b, &index), original, "another session sees the committed entries only");
    assert!(b.stats().get(Stat::CrBlocksCreated) > cr_before);
    assert!(b.stats().get(Stat::CrUndoRecordsApplied) > 0);
    assert_eq!(all(&a, &index).len(), 500 - 250 + 1500, "a session sees its own changes");
    // Statement-level rollback: back to a mark.
    let mark = {
        let ctx = fixture::context(&a);
        a.txn.borrow().mark(&ctx).unwrap()
    };
    for n in 0..300 {
        ins(&a, &index, &key(-1 - n), rid(20000 + n as u32)).unwrap();
    }
    {
        let ctx = fixture::context(&a);
        a.txn.borrow_mut().rollback_to(&ctx, mark).unwrap();
    }
    assert_eq!(all(&a, &index).len(), 500 - 250 + 1500);
    rollback(&a);
    assert_eq!(all(&a, &index), original);
    assert_eq!(all(&b, &index), original);
}

#[test]
fn unique_index_refuses_duplicates_and_waits_for_uncommitted_ones() {
    let f = new_fixture(&options());
    let (a, b) = (f.session(), f.session());
    let index = new_index(&a, true);
    ins(&a, &index, &key(1), rid(1)).unwrap();
    commit(&a);
    let e = ins(&a, &index, &key(1), rid(2)).unwrap_err();
    assert_eq!(e.to_string(), format!("ORA-00001: unique constraint (LIOSCOPE.{}) violated", index.name));
    assert_eq!(all(&a, &index), vec![(key(1), rid(1))], "the failed insert changed nothing");
    // A deleted key may come back with another rowid.
    del(&a, &index, &key(1), rid(1)).unwrap();
    ins(&a, &index, &key(1), rid(3)).unwrap();
    commit(&a);
    assert_eq!(all(&a, &index), vec![(key(1), rid(3))]);

    // B waits for A's uncommitted duplicate: fails when A commits, goes on when A rolls back.
    for a_commits in [true, false] {
        let k = key(if a_commits { 10 } else { 11 });
        ins(&a, &index, &k, rid(10)).unwrap();
        let (r, waited) = std::thread::scope(|scope| {
            let (sid_tx, sid_rx) = std::sync::mpsc::channel();
            let (f, index, k) = (&f, &index, &k);
            let waiter = scope.spawn(move || {
                let b = f.session();
                sid_tx.send(b.sid()).expect("the test waits for the sid");
                let r = ins(&b, index, k, rid(11)).map_err(|e| e.to_string());
                let waited = b.stats().get(Stat::EnqueueWaits);
                commit(&b);
                (r, waited)
            });
            let b_sid = sid_rx.recv().expect("the waiting session sends its sid");
            let blocked = wait_until_blocked(f, b_sid, a.sid(), || waiter.is_finished());
            // A ends its transaction whatever happened, so that the waiter ends too.
            if a_commits && blocked.is_ok() {
                commit(&a)
            } else {
                rollback(&a)
            }
            let outcome = waiter.join().unwrap();
            blocked.unwrap_or_else(|e| panic!("{e}"));
            outcome
        });
        assert_eq!(waited, 1, "the second insert waited for the first transaction");
        if a_commits {
            assert!(r.unwrap_err().contains("unique constraint"));
        } else {
            r.unwrap();
        }
    }
    let keys: Vec<RowId> = all(&b, &index).into_iter().map(|(_, r)| r).collect();
    assert_eq!(keys, vec![rid(3), rid(10), rid(11)]);
}

/// Returns once session `waiter` waits for a transaction of session `holder` (the TX
/// enqueue's record of who waits for whom, which `v$session` shows); why not, if
/// `finished` says the waiter ended first, or after 30 seconds.
fn wait_until_blocked(
    f: &TxnFixture,
    waiter: u32,
    holder: u32,
    finished: impl Fn() -> bool,
) -> std::result::Result<(), String> {
    let started = std::time::Instant::now();
    while f.enqueues.blocking_session(waiter) != Some(holder) {
        if finished() {
            return Err(format!("session {waiter} went on without waiting for session {holder}"));
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            return Err(format!("session {waiter} did not wait for session {holder} within 30 seconds"));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Ok(())
}

#[test]
fn concurrent_writers_and_readers_end_with_the_committed_entries() {
    let f = new_fixture(&options());
    let index = new_index(&f.session(), false);
    let (f, index) = (&f, &index);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..3u32)
            .map(|w| {
                scope.spawn(move || {
                    let s = f.session();
                    let mut committed: BTreeSet<Entry> = BTreeSet::new();
                    let mut pending_ins = Vec::new();
                    let mut pending_del = Vec::new();
                    for round in 0..40u32 {
                        for i in 0..25u32 {
                            let n = (round * 25 + i) * 3 + w;
                            let e = (key(i64::from((n * 7919) % 5000)), rid(n));
                            ins(&s, index, &e.0, e.1).unwrap();
                            pending_ins.push(e);
                        }
                        if round % 3 == 1
                            && let Some(e) = committed.iter().next().cloned()
                        {
                            del(&s, index, &e.0, e.1).unwrap();
                            pending_del.push(e);
                        }
                        if round % 4 == 3 {
                            rollback(&s);
                        } else {
                            commit(&s);
                            for e in pending_del.drain(..) {
                                committed.remove(&e);
                            }
                            committed.extend(pending_ins.drain(..));
                        }
                        pending_ins.clear();
                        pending_del.clear();
                    }
                    committed
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|r| {
                scope.spawn(move || {
                    let s = f.session();
                    let mut scans = 0;
                    for _ in 0..30 {
                        match scan(&s, index, KeyBound::Unbounded, KeyBound::Unbounded, r == 1) {
                            Ok(entries) => {
                                let mut sorted = entries.clone();
                                sorted.sort();
                                if r == 1 {
                                    sorted.reverse();
                                }
                                assert_eq!(entries, sorted, "a scan returns entries in order");
                                let set: BTreeSet<_> = entries.iter().collect();
                                assert_eq!(set.len(), entries.len(), "no entry twice");
                                scans += 1;
                            }
                            Err(crate::Error::SnapshotTooOld { .. }) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                    scans
                })
            })
            .collect();
        let mut model = BTreeSet::new();
        for w in writers {
            model.extend(w.join().unwrap());
        }
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
        let s = f.session();
        let expected: Vec<Entry> = model.into_iter().collect();
        assert_eq!(all(&s, index), expected);
    });
}

#[test]
fn a_corrupted_index_block_is_an_error_naming_it() {
    let f = new_fixture(&options());
    let index = {
        let s = f.session();
        let index = new_index(&s, false);
        for n in 0..200 {
            ins(&s, &index, &key(n), rid(n as u32)).unwrap();
        }
        commit(&s);
        index
    };
    let closed = f.close();
    // Scribble over the root's entries on disk, checksum and all.
    let root = index.segment_header + 1;
    let file = closed.dir().join(crate::txn::files::FIRST_DATAFILE);
    let mut bytes = std::fs::read(&file).unwrap();
    let at = crate::storage::block::rdba_block(root) as usize * 2048;
    bytes[at + 60..at + 200].fill(0xEE);
    std::fs::write(&file, &bytes).unwrap();
    let f = closed.open(&options());
    let s = f.session();
    let e = scan(&s, &index, KeyBound::Unbounded, KeyBound::Unbounded, false).unwrap_err();
    let block = crate::storage::block::rdba_block(root);
    assert!(e.to_string().contains(&format!("block {block}")), "{e}");
    // A block whose checksum is right but whose contents are not.
    drop(s);
    let closed = f.close();
    let mut bytes = std::fs::read(&file).unwrap();
    let mut blk = bytes[at..at + 2048].to_vec();
    blk[26] = 0xFF;
    crate::storage::block::seal(&mut blk);
    bytes[at..at + 2048].copy_from_slice(&blk);
    std::fs::write(&file, &bytes).unwrap();
    let f = closed.open(&options());
    let s = f.session();
    let e = scan(&s, &index, KeyBound::Unbounded, KeyBound::Unbounded, false).unwrap_err();
    assert!(e.to_string().contains(&format!("block {block}")) && e.to_string().contains(&index.name), "{e}");
}

/// Bulk build speed: `cargo test --release -- --ignored build_speed --nocapture`.
#[test]
#[ignore]
fn build_speed() {
    let f = new_fixture(&Options { cache_size: 256 << 20, ..Options::default() });
    let s = f.session();
    let index = new_index(&s, false);
    let n = 2_000_000u32;
    let mut seed = 1u64;
    let entries: Vec<Entry> = (0..n)
        .map(|i| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (key((seed >> 20) as i64 % 100_000_000), RowId { rdba: 4096 + i / 100, slot: (i % 100) as u16 })
        })
        .collect();
    let started = std::time::Instant::now();
    let stats = build(&s, &index, entries).unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!("built {n} entries in {secs:.3} s: {:.2} M rows/s; {stats:?}", f64::from(n) / secs / 1e6);
}

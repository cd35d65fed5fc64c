//! The undo tablespace on the transactions' fixture (a cache and undo over the files of
//! a database, in a temporary directory, without a database around them): record round
//! trips and chains, transaction status and slot reuse, ring reuse and its errors,
//! growth and extent stealing, persistence across a clean close, the fixed layout's
//! conversion, and concurrent transactions.

use super::tablespace::UNDO_FILE_NAME;
use super::*;
use crate::stats::Stat;
use crate::txn::TxnContext;
use crate::txn::files::Sizes;
use crate::txn::fixture::{Options, TxnFixture};
use proptest::prelude::*;

/// The database's defaults (8 KiB blocks, a 64 MiB undo tablespace growing up to 32 GiB,
/// a retention of 900 s), with a 4 MiB cache and these undo sizes and retention.
fn undo_options(size: u64, max: u64, retention: u64) -> Options {
    let defaults = Options::default();
    Options { sizes: Sizes { undo_size: size, undo_max: max, ..defaults.sizes }, undo_retention: retention, ..defaults }
}

/// A fixture with the database's defaults.
fn fixture() -> TxnFixture {
    TxnFixture::new(&Options::default())
}

/// A fixture whose undo is one segment of one extent of six blocks, never growing.
fn tiny_undo(retention: u64) -> TxnFixture {
    TxnFixture::new(&undo_options(72 << 10, 72 << 10, retention))
}

fn undo<'a>(ctx: &TxnContext<'a>) -> &'a Undo {
    ctx.undo
}

/// Begins a transaction, appends `bodies`, and returns the xid and record addresses.
fn write(ctx: &TxnContext<'_>, bodies: &[Vec<u8>]) -> (Xid, Vec<Uba>) {
    let xid = undo(ctx).begin(ctx).unwrap();
    let ubas = bodies.iter().map(|b| undo(ctx).append(ctx, xid, b).unwrap()).collect();
    (xid, ubas)
}

fn commit(ctx: &TxnContext<'_>, xid: Xid) -> u64 {
    crate::txn::transaction::end(ctx, xid).unwrap()
}

/// The bodies of `xid`'s chain from its newest record back to its first.
fn chain(ctx: &TxnContext<'_>, mut uba: Uba) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !uba.is_none() {
        let record = undo(ctx).read(ctx, uba).unwrap();
        out.push(record.body);
        uba = record.prev;
    }
    out
}

fn body(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j) as u8).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::txn::fixture::proptest_cases(12), ..ProptestConfig::default() })]

    /// Records of any size up to a block come back, in order, across many blocks, and
    /// the prev chain walks them backwards.
    #[test]
    fn records_round_trip_across_blocks(sizes in proptest::collection::vec(0usize..3000, 1..120)) {
        let f = fixture();
        let session = f.session();
        let ctx = session.context();
        let bodies: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| body(i, n)).collect();
        let (xid, ubas) = write(&ctx, &bodies);
        for (uba, b) in ubas.iter().zip(&bodies) {
            let record = undo(&ctx).read(&ctx, *uba).unwrap();
            prop_assert_eq!(record.xid, xid);
            prop_assert_eq!(&record.body, b);
        }
        let last = undo(&ctx).last_record(&ctx, xid).unwrap();
        prop_assert_eq!(last, *ubas.last().unwrap());
        let mut backwards = chain(&ctx, last);
        backwards.reverse();
        prop_assert_eq!(backwards, bodies);
        let usage = undo(&ctx).transactions();
        prop_assert_eq!(usage.len(), 1);
        prop_assert_eq!(usage[0].used_urec, sizes.len() as u64);
        let blocks: std::collections::HashSet<u32> = ubas.iter().map(|u| u.rdba).collect();
        prop_assert_eq!(usage[0].used_ublk, blocks.len() as u64);
    }
}

#[test]
fn status_follows_the_transaction() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    let (xid, _) = write(&ctx, &[b"before image".to_vec()]);
    assert_eq!(undo(&ctx).status(&ctx, xid).unwrap(), TxnStatus::Active);
    let scn = commit(&ctx, xid);
    assert_eq!(undo(&ctx).status(&ctx, xid).unwrap(), TxnStatus::Committed { scn, upper_bound: false });
    assert!(matches!(undo(&ctx).append(&ctx, xid, b"late"), Err(Error::Transaction { .. })));
    assert!(matches!(undo(&ctx).commit(&ctx, xid, scn + 1), Err(Error::Transaction { .. })));
    assert!(undo(&ctx).transactions().is_empty());
}

#[test]
fn transactions_spread_across_segments() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    assert_eq!(undo(&ctx).segment_count(), 10);
    let xids: Vec<Xid> = (0..10).map(|_| undo(&ctx).begin(&ctx).unwrap()).collect();
    let mut usns: Vec<u16> = xids.iter().map(|x| x.usn).collect();
    usns.sort();
    assert_eq!(usns, (1..=10).collect::<Vec<_>>());
    assert_eq!(undo(&ctx).stats().max_concurrency, 10);
}

#[test]
fn a_reused_slot_is_rolled_back_to_the_old_commit() {
    // Room for every transaction's undo block, so no history is overwritten.
    let f = TxnFixture::new(&undo_options(16 << 20, 32 << 30, 900));
    let session = f.session();
    let ctx = session.context();
    let (first, _) = write(&ctx, &[b"x".to_vec()]);
    let first_scn = commit(&ctx, first);
    // Enough transactions to reuse every slot of every segment three times over.
    for _ in 0..3 * TXN_SLOTS * usize::from(undo(&ctx).segment_count()) {
        let (xid, _) = write(&ctx, &[b"y".to_vec()]);
        commit(&ctx, xid);
    }
    let applied = session.stats().get(Stat::TransactionTablesCrUndoRecordsApplied);
    assert_eq!(undo(&ctx).status(&ctx, first).unwrap(), TxnStatus::Committed { scn: first_scn, upper_bound: false });
    let hops = session.stats().get(Stat::TransactionTablesCrUndoRecordsApplied) - applied;
    assert!(hops >= 3, "the slot was rolled back through each later holder ({hops} records)");
}

#[test]
fn a_reused_slot_whose_history_is_overwritten_reports_an_upper_bound() {
    let f = tiny_undo(0);
    let session = f.session();
    let ctx = session.context();
    let (first, _) = write(&ctx, &[b"x".to_vec()]);
    let first_scn = commit(&ctx, first);
    let mut last_scn = first_scn;
    for _ in 0..4 * TXN_SLOTS {
        let (xid, _) = write(&ctx, &[vec![b'y'; 3000]]);
        last_scn = commit(&ctx, xid);
    }
    match undo(&ctx).status(&ctx, first).unwrap() {
        TxnStatus::Committed { scn, upper_bound: true } => assert!(scn >= first_scn && scn <= last_scn),
        other => panic!("an old xid whose slot history is gone should be committed with an upper bound, got {other:?}"),
    }
}

#[test]
fn the_slot_with_the_oldest_commit_is_reused_first() {
    let f = tiny_undo(0);
    let session = f.session();
    let ctx = session.context();
    let xids: Vec<Xid> = (0..TXN_SLOTS).map(|_| undo(&ctx).begin(&ctx).unwrap()).collect();
    assert!(matches!(undo(&ctx).begin(&ctx), Err(Error::UndoSpace { .. })), "every slot is active");
    for xid in xids.iter().rev() {
        commit(&ctx, *xid);
    }
    let next = undo(&ctx).begin(&ctx).unwrap();
    let newest = xids.last().unwrap();
    assert_eq!((next.slot, next.wrap), (newest.slot, newest.wrap + 1), "the first committed slot is reused");
}

#[test]
fn successive_transactions_of_a_segment_share_its_block_handed_out_last() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    let segments = usize::from(undo(&ctx).segment_count());
    // Begins go round the segments: three rounds of short transactions.
    let mut written = Vec::new();
    for i in 0..3 * segments {
        let (xid, ubas) = write(&ctx, &[body(i, 100)]);
        commit(&ctx, xid);
        written.push((xid, ubas[0]));
    }
    assert_eq!(undo(&ctx).stats().undo_blocks, segments as u64, "one block a segment, filled by turns");
    let (first, first_uba) = written[0];
    let (later, later_uba) = written[2 * segments];
    assert_eq!((later.usn, later_uba.rdba, later_uba.seq), (first.usn, first_uba.rdba, first_uba.seq));
    for (i, (xid, uba)) in written.iter().enumerate() {
        let record = undo(&ctx).read(&ctx, *uba).unwrap();
        assert_eq!((record.xid, record.body), (*xid, body(i, 100)), "each record keeps its writer");
    }

    // A block whose owner is active is not taken over; one whose room is spent is not.
    let (holder, held) = write(&ctx, &[b"held".to_vec()]);
    for _ in 1..segments {
        let (xid, _) = write(&ctx, &[b"elsewhere".to_vec()]);
        commit(&ctx, xid);
    }
    let (next, next_ubas) = write(&ctx, &[b"next".to_vec()]);
    assert_eq!(next.usn, holder.usn);
    assert_ne!(next_ubas[0].rdba, held[0].rdba, "the holder's block is its own while it is active");
    commit(&ctx, holder);
    commit(&ctx, next);
    let big = vec![9u8; undo(&ctx).max_body_len()];
    for _ in 0..segments {
        let (xid, ubas) = write(&ctx, std::slice::from_ref(&big));
        assert_ne!(ubas.last().unwrap().rdba, next_ubas[0].rdba, "a record that does not fit takes another block");
        commit(&ctx, xid);
    }
    let record = undo(&ctx).read(&ctx, held[0]).unwrap();
    assert_eq!((record.xid, record.body), (holder, b"held".to_vec()));
}

#[test]
fn a_shared_block_is_taken_over_again_after_reopen() {
    let f = fixture();
    let (xid, ubas) = {
        let session = f.session();
        let ctx = session.context();
        let (xid, ubas) = write(&ctx, &[b"before the close".to_vec()]);
        commit(&ctx, xid);
        (xid, ubas)
    };
    let f = f.reopen(&Options::default());
    let session = f.session();
    let ctx = session.context();
    let mut shared = None;
    for _ in 0..undo(&ctx).segment_count() {
        let (next, next_ubas) = write(&ctx, &[b"after the reopen".to_vec()]);
        commit(&ctx, next);
        if next.usn == xid.usn {
            shared = Some(next_ubas);
        }
    }
    let shared = shared.expect("a round of begins reaches every segment");
    assert_eq!((shared[0].rdba, shared[0].seq), (ubas[0].rdba, ubas[0].seq));
    let record = undo(&ctx).read(&ctx, ubas[0]).unwrap();
    assert_eq!((record.xid, record.body), (xid, b"before the close".to_vec()));
}

#[test]
fn reused_undo_blocks_give_snapshot_too_old() {
    let f = tiny_undo(0);
    let session = f.session();
    let ctx = session.context();
    let big = vec![7u8; 6000];
    let (old, old_ubas) = write(&ctx, std::slice::from_ref(&big));
    commit(&ctx, old);
    for _ in 0..6 {
        let (xid, _) = write(&ctx, std::slice::from_ref(&big));
        commit(&ctx, xid);
    }
    match undo(&ctx).read(&ctx, old_ubas[0]) {
        Err(Error::SnapshotTooOld { reason }) => assert!(reason.contains("_SYSSMU1$"), "{reason}"),
        other => panic!("reading overwritten undo should fail with snapshot too old, got {other:?}"),
    }
    let stats = undo(&ctx).stats();
    assert_eq!(stats.snapshot_too_old, 1);
    assert_eq!((stats.undo_blocks, stats.expired_reuse, stats.unexpired_reuse), (7, 1, 0));
}

#[test]
fn blocks_within_retention_are_stolen_only_when_nothing_else_is_left() {
    let f = tiny_undo(900);
    let session = f.session();
    let ctx = session.context();
    let big = vec![1u8; 6000];
    for _ in 0..8 {
        let (xid, _) = write(&ctx, std::slice::from_ref(&big));
        commit(&ctx, xid);
    }
    let stats = undo(&ctx).stats();
    assert_eq!((stats.undo_blocks, stats.unexpired_reuse, stats.expired_reuse), (8, 2, 0));
}

#[test]
fn active_transactions_fill_the_ring_then_undo_space_runs_out() {
    let f = tiny_undo(0);
    let session = f.session();
    let ctx = session.context();
    let big = vec![3u8; 6000];
    let (holder, held) = write(&ctx, &[big.clone(), big.clone(), big.clone()]);
    let (xid, _) = write(&ctx, &[big.clone(), big.clone(), big.clone()]);
    match undo(&ctx).append(&ctx, xid, &big) {
        Err(Error::UndoSpace { reason }) => {
            assert!(reason.contains("all 6 of its undo blocks") && reason.contains("maximum of 9 blocks"), "{reason}")
        }
        other => panic!("a ring owned by active transactions has no room, got {other:?}"),
    }
    assert_eq!(undo(&ctx).stats().no_space, 1);
    commit(&ctx, holder);
    undo(&ctx).append(&ctx, xid, &big).expect("the committed transaction's blocks are reusable");
    assert!(matches!(undo(&ctx).read(&ctx, held[0]), Err(Error::SnapshotTooOld { .. })));
}

#[test]
fn truncate_chain_rewinds_the_newest_record() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    let (xid, ubas) = write(&ctx, &[b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    undo(&ctx).truncate_chain(&ctx, xid, ubas[0]).unwrap();
    assert_eq!(undo(&ctx).last_record(&ctx, xid).unwrap(), ubas[0]);
    let d = undo(&ctx).append(&ctx, xid, b"d").unwrap();
    assert_eq!(chain(&ctx, d), vec![b"d".to_vec(), b"a".to_vec()]);
    undo(&ctx).truncate_chain(&ctx, xid, Uba::NONE).unwrap();
    assert_eq!(undo(&ctx).last_record(&ctx, xid).unwrap(), Uba::NONE);
}

#[test]
fn gets_are_counted_as_oracle_counts_them() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    let (xid, _) = write(&ctx, &[b"first".to_vec()]);
    let stats = session.stats();
    let (db_gets, cr_gets, cv) =
        (stats.get(Stat::DbBlockGets), stats.get(Stat::ConsistentGets), stats.get(Stat::UndoChangeVectorSize));
    let uba = undo(&ctx).append(&ctx, xid, b"second").unwrap();
    assert_eq!(stats.get(Stat::DbBlockGets) - db_gets, 1, "an append into the current block changes it alone");
    assert_eq!(stats.get(Stat::UndoChangeVectorSize) - cv, 24, "18 bytes of record header and the body");
    undo(&ctx).read(&ctx, uba).unwrap();
    undo(&ctx).status(&ctx, xid).unwrap();
    assert_eq!(stats.get(Stat::ConsistentGets) - cr_gets, 2, "a read and a status are one consistent get each");
}

#[test]
fn blocks_never_used_are_handed_out_unread_after_reopen() {
    let f = fixture().reopen(&Options::default());
    let session = f.session();
    let ctx = session.context();
    let before = session.stats().get(Stat::ConsistentGets);
    write(&ctx, &[vec![1; 6000], vec![2; 6000]]);
    assert_eq!(session.stats().get(Stat::ConsistentGets), before, "the first extents are known to be unformatted");
}

#[test]
fn oversized_bodies_are_refused() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    let xid = undo(&ctx).begin(&ctx).unwrap();
    let max = undo(&ctx).max_body_len();
    assert!(matches!(undo(&ctx).append(&ctx, xid, &vec![0; max + 1]), Err(Error::InvalidValue { .. })));
    undo(&ctx).append(&ctx, xid, &vec![0; max]).unwrap();
}

#[test]
fn status_and_records_survive_reopen() {
    let f = fixture();
    let (committed, scn, ubas) = {
        let session = f.session();
        let ctx = session.context();
        let (xid, ubas) = write(&ctx, &[b"one".to_vec(), vec![9; 5000], b"three".to_vec()]);
        let scn = commit(&ctx, xid);
        (xid, scn, ubas)
    };
    let f = f.reopen(&Options::default());
    let session = f.session();
    let ctx = session.context();
    assert_eq!(undo(&ctx).status(&ctx, committed).unwrap(), TxnStatus::Committed { scn, upper_bound: false });
    assert_eq!(chain(&ctx, ubas[2]), vec![b"three".to_vec(), vec![9; 5000], b"one".to_vec()]);
    assert!(undo(&ctx).transactions().is_empty());
    let (next, _) = write(&ctx, &[b"after reopen".to_vec()]);
    assert_ne!((next.usn, next.slot), (committed.usn, committed.slot), "free slots are used before committed ones");
}

#[test]
fn sessions_in_four_threads_write_and_commit_at_once() {
    let f = TxnFixture::new(&undo_options(4 << 20, 32 << 30, 900));
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                scope.spawn(move || {
                    let session = f.session();
                    let ctx = session.context();
                    for round in 0..50 {
                        let bodies: Vec<Vec<u8>> = (0..20).map(|i| body(t * 1000 + round + i, 100 + i * 37)).collect();
                        let (xid, ubas) = write(&ctx, &bodies);
                        let mut back = chain(&ctx, *ubas.last().unwrap());
                        back.reverse();
                        assert_eq!(back, bodies);
                        let scn = commit(&ctx, xid);
                        match undo(&ctx).status(&ctx, xid).unwrap() {
                            TxnStatus::Committed { scn: s, upper_bound: false } => assert_eq!(s, scn),
                            TxnStatus::Committed { scn: s, upper_bound: true } => assert!(s >= scn),
                            TxnStatus::Active => panic!("{xid} committed but reported active"),
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a writer thread panicked");
        }
    });
    let stats = f.undo.stats();
    assert_eq!((stats.transactions, stats.active, stats.snapshot_too_old), (200, 0, 0));
    assert!(stats.max_concurrency >= 1 && stats.max_concurrency <= 4);
}

#[test]
fn a_damaged_undo_header_is_reported_not_panicked_on() {
    use std::os::unix::fs::FileExt;
    let closed = fixture().close();
    let file = std::fs::OpenOptions::new().write(true).open(closed.dir().join(UNDO_FILE_NAME)).unwrap();
    file.write_all_at(&[0x5a; 64], 8192 + 100).unwrap();
    match closed.try_open(&Options::default()) {
        Err(Error::Corrupt { file, block: Some(1), .. }) => assert!(file.ends_with(UNDO_FILE_NAME)),
        Err(other) => panic!("a damaged undo header should be reported as corrupt, got {other}"),
        Ok(_) => panic!("a damaged undo header should be reported as corrupt, the undo opened"),
    }
}

#[test]
fn xids_and_addresses_naming_nothing_are_corrupt() {
    let f = fixture();
    let session = f.session();
    let ctx = session.context();
    for xid in [
        Xid::NONE,
        Xid { usn: 11, slot: 0, wrap: 1 },
        Xid { usn: 1, slot: 34, wrap: 1 },
        Xid { usn: 1, slot: 0, wrap: 9 },
    ] {
        assert!(matches!(undo(&ctx).status(&ctx, xid), Err(Error::Corrupt { .. })), "{xid}");
    }
    let outside = Uba { rdba: crate::storage::block::rdba(1, 5), seq: 1, record: 0 };
    assert!(matches!(undo(&ctx).read(&ctx, outside), Err(Error::Corrupt { .. })));
    let (_, ubas) = write(&ctx, &[b"only".to_vec()]);
    assert!(matches!(undo(&ctx).read(&ctx, Uba { record: 1, ..ubas[0] }), Err(Error::Corrupt { .. })));
}

#[test]
fn ring_owners_are_read_back_after_reopen() {
    let options = undo_options(72 << 10, 72 << 10, 0);
    let f = TxnFixture::new(&options);
    let big = vec![5u8; 6000];
    let first_ubas = {
        let session = f.session();
        let ctx = session.context();
        let (xid, first_ubas) = write(&ctx, std::slice::from_ref(&big));
        commit(&ctx, xid);
        let (active_xid, _) = write(&ctx, &vec![big.clone(); 5]);
        commit(&ctx, active_xid);
        first_ubas
    };
    let f = f.reopen(&options);
    let session = f.session();
    let ctx = session.context();
    let before = session.stats().get(Stat::ConsistentGets);
    write(&ctx, std::slice::from_ref(&big));
    assert!(session.stats().get(Stat::ConsistentGets) > before, "ring owners unknown since open are read");
    assert!(matches!(undo(&ctx).read(&ctx, first_ubas[0]), Err(Error::SnapshotTooOld { .. })));
    assert_eq!(undo(&ctx).stats().expired_reuse, 1);
}

#[test]
fn a_new_undo_retention_applies_at_once() {
    let f = tiny_undo(900);
    let session = f.session();
    let ctx = session.context();
    let big = vec![1u8; 6000];
    let cycle = |n| {
        for _ in 0..n {
            let (xid, _) = write(&ctx, std::slice::from_ref(&big));
            commit(&ctx, xid);
        }
    };
    cycle(7);
    assert_eq!((undo(&ctx).stats().unexpired_reuse, undo(&ctx).stats().expired_reuse), (1, 0));
    // What ALTER SYSTEM SET undo_retention = 0 does.
    f.undo.set_retention(0);
    cycle(2);
    assert_eq!((undo(&ctx).stats().unexpired_reuse, undo(&ctx).stats().expired_reuse), (1, 2));
}

/// A fixture whose undo starts at 1 MiB (ten segments of one 11-block extent each) and
/// grows up to `max` bytes, with no retention.
fn small_undo(max: u64) -> TxnFixture {
    TxnFixture::new(&undo_options(1 << 20, max, 0))
}

#[test]
fn one_transaction_steals_every_extent_then_grows_the_tablespace() {
    let f = small_undo(32 << 30);
    let session = f.session();
    let ctx = session.context();
    assert_eq!((undo(&ctx).size_bytes(), undo(&ctx).max_size_bytes()), (1 << 20, 32 << 30));
    let bodies: Vec<Vec<u8>> = (0..400).map(|i| body(i, 6000)).collect();
    let (xid, ubas) = write(&ctx, &bodies);
    let mut back = chain(&ctx, *ubas.last().unwrap());
    back.reverse();
    assert_eq!(back, bodies, "every record reads back through stolen and new extents");
    let stats = undo(&ctx).stats();
    assert_eq!(stats.expired_steals, 9, "the other nine segments' free extents were taken first");
    assert!(stats.extends >= 2, "then the tablespace grew ({} extends)", stats.extends);
    assert!(undo(&ctx).size_bytes() >= 400 * 8192 + (1 << 20) / 2, "{}", undo(&ctx).size_bytes());
    let usage = undo(&ctx).segment_usage();
    let mine = &usage[usize::from(xid.usn) - 1];
    assert_eq!((mine.extents, mine.extends, mine.active), (10 + stats.extends, stats.extends, 1));
    assert!(usage.iter().filter(|u| u.usn != xid.usn).all(|u| u.extents == 0));
    commit(&ctx, xid);
    let (next, _) = write(&ctx, &[vec![1; 6000]]);
    assert_ne!(next.usn, xid.usn);
    assert_eq!(undo(&ctx).stats().expired_steals, 10, "a segment left without extents steals one back");
}

#[test]
fn growth_stops_at_the_maximum_with_an_error_naming_it() {
    let f = small_undo(2 << 20);
    let session = f.session();
    let ctx = session.context();
    let xid = undo(&ctx).begin(&ctx).unwrap();
    let error = (0..1000).find_map(|i| undo(&ctx).append(&ctx, xid, &body(i, 6000)).err());
    match error {
        Some(Error::UndoSpace { reason }) => {
            assert!(reason.contains("maximum of 256 blocks (2097152 bytes, undo_tablespace_maxsize)"), "{reason}")
        }
        other => panic!("undo past the maximum should fail with UndoSpace, got {other:?}"),
    }
    assert_eq!(undo(&ctx).size_bytes(), 2 << 20);
    assert_eq!(undo(&ctx).stats().no_space, 1);
    let file_len = std::fs::metadata(f.dir().join(UNDO_FILE_NAME)).unwrap().len();
    assert_eq!(file_len, 2 << 20, "the file grew to the maximum and no further");
}

#[test]
fn a_block_of_a_stolen_extent_gives_snapshot_too_old_to_an_old_reader() {
    let f = small_undo(1 << 20);
    let session = f.session();
    let ctx = session.context();
    let (old, old_ubas) = write(&ctx, &[b"before".to_vec()]);
    let old_scn = commit(&ctx, old);
    let xid = undo(&ctx).begin(&ctx).unwrap();
    assert_ne!(xid.usn, old.usn);
    // Its own extent and the nine others, the old transaction's last.
    for i in 0..110 {
        undo(&ctx).append(&ctx, xid, &body(i, 6000)).unwrap();
    }
    match undo(&ctx).read(&ctx, old_ubas[0]) {
        Err(Error::SnapshotTooOld { reason }) => assert!(reason.contains(&segment_name(xid.usn)), "{reason}"),
        other => panic!("a block handed out again after a steal is too old for the old record, got {other:?}"),
    }
    assert_eq!(undo(&ctx).status(&ctx, old).unwrap(), TxnStatus::Committed { scn: old_scn, upper_bound: false });
    assert_eq!((undo(&ctx).stats().expired_steals, undo(&ctx).stats().extends), (9, 0));
}

#[test]
fn blocks_of_an_active_transaction_are_never_stolen() {
    let f = small_undo(1 << 20);
    let session = f.session();
    let ctx = session.context();
    let (holder, held) = write(&ctx, &[b"held".to_vec()]);
    let xid = undo(&ctx).begin(&ctx).unwrap();
    let error = (0..200).find_map(|i| undo(&ctx).append(&ctx, xid, &body(i, 6000)).err());
    assert!(matches!(error, Some(Error::UndoSpace { .. })), "{error:?}");
    assert_eq!(undo(&ctx).stats().expired_steals, 8, "every extent but the active holder's");
    assert_eq!(chain(&ctx, held[0]), vec![b"held".to_vec()]);
    commit(&ctx, holder);
    undo(&ctx).append(&ctx, xid, &body(0, 6000)).expect("the ended holder's extent can be stolen");
}

#[test]
fn a_grown_tablespace_keeps_its_extents_after_reopen() {
    let options = undo_options(1 << 20, 32 << 30, 0);
    let f = TxnFixture::new(&options);
    let bodies: Vec<Vec<u8>> = (0..300).map(|i| body(i, 5000)).collect();
    let (xid, scn, last, size, usage) = {
        let session = f.session();
        let ctx = session.context();
        let (xid, ubas) = write(&ctx, &bodies);
        let scn = commit(&ctx, xid);
        (xid, scn, *ubas.last().unwrap(), undo(&ctx).size_bytes(), undo(&ctx).segment_usage())
    };
    let f = f.reopen(&options);
    let session = f.session();
    let ctx = session.context();
    assert_eq!(undo(&ctx).size_bytes(), size);
    let reopened: Vec<(u64, u64)> = undo(&ctx).segment_usage().iter().map(|u| (u.extents, u.blocks)).collect();
    assert_eq!(reopened, usage.iter().map(|u| (u.extents, u.blocks)).collect::<Vec<_>>());
    assert_eq!(undo(&ctx).status(&ctx, xid).unwrap(), TxnStatus::Committed { scn, upper_bound: false });
    let mut back = chain(&ctx, last);
    back.reverse();
    assert_eq!(back, bodies);
    let (again, _) = write(&ctx, &bodies[..50]);
    commit(&ctx, again);
    assert_eq!(undo(&ctx).stats().extends, 0, "the grown extents are reused, not grown again");
}

#[test]
fn a_fixed_layout_tablespace_is_converted_at_open_and_then_grows() {
    let closed = fixture().close();
    // The fixed layout of a 1 MiB tablespace: ten segments of 12 blocks, header first.
    let file = closed.dir().join(UNDO_FILE_NAME);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate(128 * 8192);
    bytes[8192..].fill(0);
    for usn in 1..=10u16 {
        let at = (1 + usize::from(usn - 1) * 12) * 8192;
        let block = &mut bytes[at..at + 8192];
        let rdba = block::rdba(UNDO_FILE_NO, 1 + u32::from(usn - 1) * 12);
        header::format_fixed_layout(block, rdba, tablespace::object_id(usn), usn, 10, 12);
        block::seal(block);
    }
    std::fs::write(&file, &bytes).unwrap();
    let options = undo_options(1 << 20, 4 << 20, 0);
    let f = closed.open(&options);
    let (xid, scn, ubas) = {
        let session = f.session();
        let ctx = session.context();
        assert_eq!(undo(&ctx).segment_count(), 10);
        assert_eq!(undo(&ctx).max_size_bytes(), 4 << 20);
        let usage = undo(&ctx).segment_usage();
        assert!(usage.iter().all(|u| (u.extents, u.blocks) == (1, 11)), "{usage:?}");
        let bodies: Vec<Vec<u8>> = (0..200).map(|i| body(i, 6000)).collect();
        let (xid, ubas) = write(&ctx, &bodies);
        let scn = commit(&ctx, xid);
        assert!(undo(&ctx).stats().extends >= 1);
        (xid, scn, ubas)
    };
    let f = f.reopen(&options);
    let session = f.session();
    let ctx = session.context();
    assert_eq!(undo(&ctx).status(&ctx, xid).unwrap(), TxnStatus::Committed { scn, upper_bound: false });
    assert_eq!(chain(&ctx, ubas[199]).len(), 200);
}

/// One step of [`undo_never_hands_back_a_wrong_record`]: transaction `txn` (of three
/// interleaved) appends a record of `size` bytes, or ends.
#[derive(Debug, Clone)]
enum Step {
    Append { txn: usize, size: usize },
    End { txn: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0usize..3, 100usize..7000).prop_map(|(txn, size)| Step::Append { txn, size }),
        1 => (0usize..3).prop_map(|txn| Step::End { txn }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::txn::fixture::proptest_cases(16), ..ProptestConfig::default() })]

    /// Interleaved transactions in a small tablespace that steals and grows up to its
    /// maximum: an active transaction's records always read back; an ended one's read
    /// back or are too old, never another record.
    #[test]
    fn undo_never_hands_back_a_wrong_record(steps in proptest::collection::vec(step(), 1..400)) {
        let f = small_undo(2 << 20);
        let session = f.session();
        let ctx = session.context();
        let mut open: [Option<Xid>; 3] = [None; 3];
        let mut written: Vec<(Xid, Uba, Vec<u8>)> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Append { txn, size } => {
                    let xid = match open[txn] {
                        Some(xid) => xid,
                        None => *open[txn].insert(undo(&ctx).begin(&ctx).unwrap()),
                    };
                    let b = body(i, size);
                    match undo(&ctx).append(&ctx, xid, &b) {
                        Ok(uba) => written.push((xid, uba, b)),
                        Err(Error::UndoSpace { .. }) => {}
                        Err(e) => panic!("append: {e}"),
                    }
                }
                Step::End { txn } => {
                    if let Some(xid) = open[txn].take() {
                        commit(&ctx, xid);
                    }
                }
            }
        }
        prop_assert!(undo(&ctx).size_bytes() <= 2 << 20);
        for (xid, uba, b) in &written {
            match undo(&ctx).read(&ctx, *uba) {
                Ok(record) => {
                    prop_assert_eq!(record.xid, *xid);
                    prop_assert_eq!(&record.body, b);
                }
                Err(Error::SnapshotTooOld { .. }) => prop_assert!(!open.contains(&Some(*xid)), "{xid} is active"),
                Err(e) => panic!("read {uba:?}: {e}"),
            }
        }
    }
}

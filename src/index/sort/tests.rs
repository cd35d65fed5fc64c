//! The sort against the standard library's: in memory and spilled, for random keys with
//! duplicates, empty keys and long keys; the temporary file gone after every outcome.

use super::*;
use crate::error::Error;
use crate::storage::io::{Fault, FaultIo, FaultPlan};
use proptest::prelude::*;

type Entry = (Vec<u8>, RowId);

fn rowid(n: u32) -> RowId {
    RowId { rdba: n / 5, slot: (n % 5) as u16 }
}

/// Sorts `entries` with `memory` bytes of sort area in `dir`; returns the output and
/// whether it spilled.
fn sort(io: &dyn Io, dir: &Path, memory: usize, entries: &[Entry]) -> Result<(Vec<Entry>, bool)> {
    let stats = SessionStats::default();
    let mut sort = KeySort::new(SortArea { memory, dir, io });
    for (key, rowid) in entries {
        sort.push_with(&stats, *rowid, |arena| {
            arena.extend_from_slice(key);
            Ok(true)
        })?;
    }
    let mut sorted = sort.finish(&stats)?;
    let mut out = Vec::new();
    sorted.for_each(&stats, |k, r| {
        out.push((k.to_vec(), r));
        Ok(())
    })?;
    assert_eq!(stats.get(Stat::SortsRows), entries.len() as u64);
    assert_eq!(sorted.longest_key(), entries.iter().map(|(k, _)| k.len()).max().unwrap_or(0));
    let disk = stats.get(Stat::SortsDisk) == 1;
    assert_eq!(stats.get(Stat::SortsMemory) + stats.get(Stat::SortsDisk), 1, "one sort, counted once");
    Ok((out, disk))
}

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

fn keys() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8)], 0..10),
        prop::collection::vec(0u8..3, 0..4).prop_map(|tail| [b"a long common prefix".as_slice(), &tail].concat()),
        prop::collection::vec(any::<u8>(), 0..300),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::txn::fixture::proptest_cases(64)))]

    #[test]
    fn sorted_output_is_the_standard_sort_in_memory_and_spilled(
        raw in prop::collection::vec((keys(), 0u32..40), 0..1500),
        memory in prop_oneof![Just(1usize << 30), 4096usize..40_000],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Entry> = raw.into_iter().map(|(k, r)| (k, rowid(r))).collect();
        let mut expected = entries.clone();
        expected.sort();
        let (out, spilled) = sort(&*crate::storage::io::os(), dir.path(), memory, &entries).unwrap();
        prop_assert_eq!(out, expected);
        // A run spills when the next entry comes after it filled its area.
        let before_last = entries.len().saturating_sub(1);
        let bytes: usize = entries[..before_last].iter().map(|(k, _)| k.len() + entry::ENTRY_BYTES).sum();
        prop_assert_eq!(spilled, bytes >= memory);
        prop_assert!(files_in(dir.path()).is_empty(), "the temporary file is removed");
    }
}

#[test]
fn many_runs_merge_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> =
        (0..20_000u32).map(|i| ((i.wrapping_mul(2_654_435_761) % 997).to_be_bytes().to_vec(), rowid(i))).collect();
    let mut expected = entries.clone();
    expected.sort();
    let (out, spilled) = sort(&*crate::storage::io::os(), dir.path(), 64 << 10, &entries).unwrap();
    assert!(spilled);
    assert_eq!(out, expected);
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn a_failed_temporary_write_is_an_error_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let io = FaultIo::new(FaultPlan { at_write: Some((2, Fault::Errno(libc::ENOSPC))), ..Default::default() });
    let entries: Vec<Entry> = (0..200_000u32).map(|i| (i.to_le_bytes().to_vec(), rowid(i))).collect();
    let e = sort(&*io, dir.path(), 64 << 10, &entries).unwrap_err();
    assert!(matches!(e, Error::Io { .. }) && e.to_string().contains("No space left"), "{e}");
    assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));
}

#[test]
fn an_error_of_the_consumer_during_the_merge_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let stats = SessionStats::default();
    let io = crate::storage::io::os();
    let mut sort = KeySort::new(SortArea { memory: 64 << 10, dir: dir.path(), io: &*io });
    for i in 0..50_000u32 {
        sort.push_with(&stats, rowid(i), |a| {
            a.extend_from_slice(&(i % 100).to_be_bytes());
            Ok(true)
        })
        .unwrap();
    }
    let mut sorted = sort.finish(&stats).unwrap();
    assert_eq!(files_in(dir.path()).len(), 1);
    assert!(is_temp_file_name(&files_in(dir.path())[0]));
    let mut seen = 0;
    let e = sorted.for_each(&stats, |_, _| {
        seen += 1;
        if seen == 1000 { Err(Error::value("test", "stop")) } else { Ok(()) }
    });
    assert!(e.is_err());
    drop(sorted);
    assert!(files_in(dir.path()).is_empty());
    assert!(stats.event(crate::stats::WaitEvent::DirectPathWriteTemp).waits > 0);
    assert!(stats.event(crate::stats::WaitEvent::DirectPathReadTemp).waits > 0);
}

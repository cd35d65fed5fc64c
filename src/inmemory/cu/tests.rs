//! Tests of column units: every encoding at every packing decodes to its input and
//! filters as the row-by-row evaluation of the input does, for every ISA (property tests
//! over random columns and predicates, and sweeps of every code width); the choices
//! between encodings; units in the In-Memory Area against units on the heap.

use super::keys::{KeyList, sorted_order};
use super::*;
use crate::inmemory::bitmap::low_bits;
use crate::inmemory::simd::Isa;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

const PACKINGS: [Packing; 3] = [Packing::ByteAligned, Packing::Tight, Packing::Smallest];

/// A value of the column's own input, for comparing against what a unit decodes.
fn input_value<'a>(input: &ColumnInput<'a>, row: usize) -> Option<CuValue<'a>> {
    match input {
        ColumnInput::Ints(values) => values[row].map(CuValue::Int),
        ColumnInput::Keys(keys) => keys[row].map(CuValue::Key),
    }
}

/// Rows where `pred` holds, row by row on the input.
fn naive(input: &ColumnInput<'_>, pred: &CuPredicate) -> Bitmap {
    Bitmap::from_fn(input.len(), |row| match (pred, input_value(input, row)) {
        (CuPredicate::IsNull, value) => value.is_none(),
        (_, None) => false,
        (pred, Some(value)) => pred.holds_for(value),
    })
}

/// The unit decodes to its input, one value at a time and in batches, and reports its
/// NULLs and min/max.
fn check_round_trip(input: ColumnInput<'_>, packing: Packing) -> ColumnUnit {
    let area = InMemoryArea::new(64 << 20, false).unwrap();
    let unit = ColumnUnit::build(input, packing, Some(&area));
    assert_eq!(unit.rows(), input.len());
    let expected: Vec<_> = (0..input.len()).map(|row| input_value(&input, row)).collect();
    assert!((0..input.len()).all(|row| unit.value(row) == expected[row]), "{packing:?} {}", unit.encoding());
    let mut decoded = Vec::new();
    let middle = input.len() / 3..input.len() - input.len() / 4;
    unit.decode_range(0..middle.start, &mut decoded);
    unit.decode_range(middle.clone(), &mut decoded);
    unit.decode_range(middle.end..input.len(), &mut decoded);
    assert_eq!(decoded, expected);
    assert_eq!(unit.nulls(), expected.iter().filter(|v| v.is_none()).count());
    assert_eq!(unit.null_bitmap().is_some(), unit.nulls() > 0);
    let present: Vec<CuValue<'_>> = expected.iter().flatten().copied().collect();
    let min_max = present.iter().min().zip(present.iter().max()).map(|(lo, hi)| (*lo, *hi));
    assert_eq!(unit.min_max(), min_max);
    assert_eq!(unit.encoding() == Encoding::AllNull, present.is_empty());
    unit
}

/// `unit` written as bytes and read back: the same rows, values, encoding and NULLs.
fn through_bytes(unit: &ColumnUnit) -> ColumnUnit {
    let mut bytes = Vec::new();
    unit.write_to(&mut bytes);
    let read = ColumnUnit::read_reusing(&bytes, &mut UnitBuffers::default())
        .unwrap_or_else(|e| panic!("{}: {e}", unit.encoding()));
    assert_eq!((read.rows(), read.nulls(), read.encoding()), (unit.rows(), unit.nulls(), unit.encoding()));
    assert!((0..unit.rows()).all(|row| read.value(row) == unit.value(row)), "{}", unit.encoding());
    read
}

/// `filter` agrees with the row-by-row evaluation for every ISA, ANDs into what the
/// selection held, and `excludes` never rules out a unit with a matching row.
fn check_filter(unit: &ColumnUnit, input: &ColumnInput<'_>, pred: &CuPredicate) {
    let want = naive(input, pred);
    for isa in Isa::available() {
        let mut selection = Bitmap::all(unit.rows());
        unit.filter(pred, &mut selection, isa);
        assert_eq!(selection, want, "{pred:?} on {} with {isa}", unit.encoding());
        let mut striped = Bitmap::from_fn(unit.rows(), |row| row % 3 != 1);
        unit.filter(pred, &mut striped, isa);
        assert_eq!(striped, Bitmap::from_fn(unit.rows(), |row| row % 3 != 1 && want.get(row)));
    }
    if want.count_ones() > 0 {
        assert!(!unit.excludes(pred), "{pred:?} excluded {} though rows match", unit.encoding());
    }
}

/// A value near the one in row `pick` (or `fallback` when that row is NULL), so that
/// predicate bounds land on, just beside and between the column's values.
fn int_near(values: &[Option<i64>], pick: &Index, delta: i8, fallback: i64) -> i64 {
    let value = if values.is_empty() { fallback } else { values[pick.index(values.len())].unwrap_or(fallback) };
    value.saturating_add(i64::from(delta))
}

fn key_near(keys: &[Option<Vec<u8>>], pick: &Index, tweak: u8) -> Vec<u8> {
    let mut key = if keys.is_empty() { Vec::new() } else { keys[pick.index(keys.len())].clone().unwrap_or_default() };
    match tweak % 4 {
        0 => {}
        1 => key.push(tweak / 4 % 4),
        2 => {
            key.pop();
        }
        _ => key = vec![tweak / 4 % 5],
    }
    key
}

type Picks = (u8, (Index, i8), (Index, i8), Vec<(Index, i8)>, i64);

fn int_predicate(values: &[Option<i64>], (kind, a, b, list, fallback): &Picks) -> CuPredicate {
    let near = |(pick, delta): &(Index, i8)| int_near(values, pick, *delta, *fallback);
    match kind % 8 {
        0 | 1 => CuPredicate::IntRange { lo: near(a), hi: near(b) },
        2 => CuPredicate::IntRange { lo: i64::MIN, hi: near(b) },
        3 => CuPredicate::IntRange { lo: near(a), hi: i64::MAX },
        4 | 5 => CuPredicate::IntIn(list.iter().map(near).collect()),
        6 => CuPredicate::IsNull,
        _ => CuPredicate::IsNotNull,
    }
}

fn key_bound(keys: &[Option<Vec<u8>>], (pick, tweak): &(Index, i8)) -> Bound<Vec<u8>> {
    let key = key_near(keys, pick, *tweak as u8);
    match tweak.rem_euclid(3) {
        0 => Bound::Included(key),
        1 => Bound::Excluded(key),
        _ => Bound::Unbounded,
    }
}

fn key_predicate(keys: &[Option<Vec<u8>>], (kind, a, b, list, _): &Picks) -> CuPredicate {
    match kind % 8 {
        0..=2 => CuPredicate::KeyRange { lo: key_bound(keys, a), hi: key_bound(keys, b) },
        3 | 4 => CuPredicate::KeyIn(list.iter().map(|(pick, tweak)| key_near(keys, pick, *tweak as u8)).collect()),
        5 => [CuPredicate::IsNull, CuPredicate::IsNotNull][usize::from(*kind / 8 % 2)].clone(),
        // A pattern over the keys' alphabet (bytes 0 to 3), with `%` and `_`.
        negated => {
            let pattern: String = list
                .iter()
                .take(5)
                .map(|(_, tweak)| match tweak.rem_euclid(6) {
                    4 => '%',
                    5 => '_',
                    byte => char::from(byte as u8),
                })
                .collect();
            CuPredicate::Like { pattern: LikePattern::compile(Some(&pattern), None), negated: negated == 7 }
        }
    }
}

fn picks() -> impl Strategy<Value = Picks> {
    (any::<u8>(), any::<(Index, i8)>(), any::<(Index, i8)>(), vec(any::<(Index, i8)>(), 0..20), any::<i64>())
}

/// Integer columns: random, all equal, in runs, and scattered across `i64`.
fn int_column() -> impl Strategy<Value = Vec<Option<i64>>> {
    let scaled = (any::<i64>(), 0u32..=64).prop_flat_map(|(base, bits)| {
        vec(proptest::option::weighted(0.9, any::<u64>()), 0..1400).prop_map(move |raw| {
            raw.iter().map(|r| r.map(|r| base.wrapping_add((r & low_bits(bits as usize)) as i64))).collect()
        })
    });
    let extreme = prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), -3i64..3, any::<i64>()];
    let runs = vec((proptest::option::weighted(0.8, -50i64..50), 1usize..300), 1..12)
        .prop_map(|runs| runs.into_iter().flat_map(|(v, n)| std::iter::repeat_n(v, n)).collect());
    prop_oneof![
        scaled,
        vec(proptest::option::weighted(0.9, extreme.clone()), 0..300),
        (proptest::option::weighted(0.8, extreme), 0usize..700).prop_map(|(v, n)| vec![v; n]),
        runs,
    ]
}

/// Key columns over a small alphabet, so that keys repeat and prefix one another, and
/// mostly distinct ones (which units store plain).
fn key_column() -> impl Strategy<Value = Vec<Option<Vec<u8>>>> {
    let key = vec(0u8..4, 0..4);
    let runs = vec((proptest::option::weighted(0.8, key.clone()), 1usize..200), 1..10)
        .prop_map(|runs| runs.into_iter().flat_map(|(k, n)| std::iter::repeat_n(k, n)).collect());
    let distinct = vec(proptest::option::weighted(0.9, vec(0u8..4, 6..12)), 0..700);
    prop_oneof![vec(proptest::option::weighted(0.85, key), 0..1200), runs, distinct]
}

fn borrowed(keys: &[Option<Vec<u8>>]) -> Vec<Option<&[u8]>> {
    keys.iter().map(|k| k.as_deref()).collect()
}

proptest! {
    #[test]
    fn ints_round_trip_and_filter(values in int_column(), preds in vec(picks(), 1..8)) {
        for packing in PACKINGS {
            let input = ColumnInput::Ints(&values);
            let unit = check_round_trip(input, packing);
            let stored = through_bytes(&unit);
            for picks in &preds {
                check_filter(&unit, &input, &int_predicate(&values, picks));
                check_filter(&stored, &input, &int_predicate(&values, picks));
            }
        }
    }

    #[test]
    fn keys_round_trip_and_filter(keys in key_column(), preds in vec(picks(), 1..8)) {
        let refs = borrowed(&keys);
        for packing in PACKINGS {
            let input = ColumnInput::Keys(&refs);
            let unit = check_round_trip(input, packing);
            let stored = through_bytes(&unit);
            for picks in &preds {
                check_filter(&unit, &input, &key_predicate(&keys, picks));
                check_filter(&stored, &input, &key_predicate(&keys, picks));
            }
        }
    }

    /// A builder finished and filled again builds what a new one builds.
    #[test]
    fn a_reused_key_builder_builds_what_a_new_one_builds(columns in vec(key_column(), 1..4)) {
        let mut reused = KeyColumnBuilder::new();
        for (keys, packing) in columns.iter().zip(PACKINGS.iter().cycle()) {
            let refs = borrowed(keys);
            let unit = |builder: &mut KeyColumnBuilder| {
                refs.iter().for_each(|key| builder.push(*key));
                builder.finish(*packing, None)
            };
            let (again, new) = (unit(&mut reused), unit(&mut KeyColumnBuilder::new()));
            prop_assert_eq!(reused.rows(), 0);
            prop_assert_eq!((again.encoding(), again.bytes(), again.nulls()), (new.encoding(), new.bytes(), new.nulls()));
            prop_assert!((0..refs.len()).all(|row| again.value(row) == new.value(row)));
        }
    }

    #[test]
    fn folds_equal_what_the_decoded_values_give(values in int_column(), keys in key_column(), seed in any::<u64>()) {
        let chosen = |n: usize| Bitmap::from_fn(n, |r| (seed.rotate_left(r as u32 % 64) ^ r as u64) & 3 != 0);
        for packing in PACKINGS {
            let unit = ColumnUnit::build(ColumnInput::Ints(&values), packing, None);
            let selection = chosen(values.len());
            let kept: Vec<i64> = values.iter().enumerate().filter(|&(r, v)| selection.get(r) && v.is_some()).map(|(_, v)| v.unwrap()).collect();
            let folded = unit.fold(&selection);
            prop_assert_eq!(folded.count, kept.len() as u64);
            if !kept.is_empty() {
                prop_assert_eq!(folded.sum, Some(kept.iter().map(|&v| i128::from(v)).sum::<i128>()), "{:?}", packing);
            }
            prop_assert_eq!(folded.min, kept.iter().min().map(|&v| CuValue::Int(v)));
            prop_assert_eq!(folded.max, kept.iter().max().map(|&v| CuValue::Int(v)));

            let refs = borrowed(&keys);
            let unit = ColumnUnit::build(ColumnInput::Keys(&refs), packing, None);
            let selection = chosen(keys.len());
            let kept: Vec<&[u8]> = refs.iter().enumerate().filter(|&(r, k)| selection.get(r) && k.is_some()).map(|(_, k)| k.unwrap()).collect();
            let folded = unit.fold(&selection);
            prop_assert_eq!(folded.count, kept.len() as u64);
            prop_assert_eq!(folded.sum, None);
            prop_assert_eq!(folded.min, kept.iter().min().map(|&k| CuValue::Key(k)));
            prop_assert_eq!(folded.max, kept.iter().max().map(|&k| CuValue::Key(k)));
        }
    }

    #[test]
    fn tighter_packing_never_takes_more_room(values in int_column(), keys in key_column()) {
        let refs = borrowed(&keys);
        for input in [ColumnInput::Ints(&values), ColumnInput::Keys(&refs)] {
            let bytes = PACKINGS.map(|packing| ColumnUnit::build(input, packing, None).bytes());
            prop_assert!(bytes[2] <= bytes[1] && bytes[1] <= bytes[0], "{bytes:?}");
        }
    }

    #[test]
    fn sorted_order_sorts_keys_with_a_common_stem(
        stem in vec(0u8..3, 0..20),
        suffixes in vec(vec(0u8..3, 0..12), 1..200),
    ) {
        let mut list = KeyList::with_capacity(suffixes.len());
        let mut keys: Vec<Vec<u8>> = suffixes.iter().map(|s| [stem.as_slice(), s].concat()).collect();
        keys.sort();
        keys.dedup();
        keys.reverse();
        keys.iter().for_each(|k| list.push(k));
        let sorted: Vec<&[u8]> = sorted_order(&list).iter().map(|&i| list.key(i as usize)).collect();
        let mut expected: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        expected.sort();
        prop_assert_eq!(sorted, expected);
    }

    #[test]
    fn excludes_follows_min_max(values in int_column(), lo in any::<i64>(), hi in any::<i64>()) {
        let unit = ColumnUnit::build(ColumnInput::Ints(&values), Packing::Tight, None);
        let pred = CuPredicate::IntRange { lo, hi };
        let outside = match unit.min_max() {
            Some((CuValue::Int(min), CuValue::Int(max))) => hi < min || lo > max || lo > hi,
            _ => true,
        };
        prop_assert_eq!(unit.excludes(&pred), outside);
    }
}

use super::super::simd::tests::Rng;

/// Predicates with bounds on, beside and between values up to `max` above `base`.
fn int_predicates(rng: &mut Rng, base: i64, max: u64) -> Vec<CuPredicate> {
    let near = |rng: &mut Rng| {
        let spot = [0, max, rng.below(max.saturating_add(1)), max / 2][rng.below(4) as usize];
        base.wrapping_add(spot as i64).saturating_add(rng.below(3) as i64 - 1)
    };
    let mut preds = vec![CuPredicate::IsNull, CuPredicate::IsNotNull];
    preds.extend((0..6).map(|_| CuPredicate::IntRange { lo: near(rng), hi: near(rng) }));
    preds.push(CuPredicate::IntRange { lo: i64::MIN, hi: near(rng) });
    preds.push(CuPredicate::IntRange { lo: near(rng), hi: i64::MAX });
    for len in [0, 1, 3, 12, 40] {
        preds.push(CuPredicate::IntIn((0..len).map(|_| near(rng)).collect()));
    }
    preds
}

#[test]
fn every_frame_of_reference_width_filters_like_the_rows() {
    let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
    for bits in 1..=64u32 {
        let rows = [1024, 2523, 130][bits as usize % 3];
        let base = rng.next() as i64;
        let max = low_bits(bits as usize);
        let mut values: Vec<Option<i64>> =
            (0..rows).map(|_| (rng.below(10) > 0).then(|| base.wrapping_add((rng.next() & max) as i64))).collect();
        values[0] = Some(base);
        values[rows - 1] = Some(base.wrapping_add(max as i64));
        let input = ColumnInput::Ints(&values);
        for packing in [Packing::ByteAligned, Packing::Tight] {
            let unit = check_round_trip(input, packing);
            let Encoding::FrameOfReference { width } = unit.encoding() else { panic!("{}", unit.encoding()) };
            let lane = (bits as u8).next_power_of_two().max(8);
            let expected = match packing {
                Packing::Tight if bits <= 32 && rows >= 1024 => bits as u8,
                Packing::Tight if bits <= 32 => width,
                _ => lane,
            };
            assert_eq!(width, expected, "{bits}-bit values in {rows} rows at {packing:?}");
            for pred in int_predicates(&mut rng, base, max) {
                check_filter(&unit, &input, &pred);
            }
        }
    }
}

#[test]
fn every_dictionary_width_filters_like_the_rows() {
    let mut rng = Rng(0xFEED_FACE_CAFE_BEEF);
    for bits in 1..=16u32 {
        let entries = (1u64 << (bits - 1)) + 1 + rng.below(1 << (bits - 1));
        let rows = (entries as usize * 2).max(1100);
        let keys: Vec<Option<Vec<u8>>> = (0..rows)
            .map(|row| {
                let key = if (row as u64) < entries { row as u64 } else { rng.below(entries) };
                ((row as u64) < entries || rng.below(12) > 0).then(|| (key * 7).to_be_bytes()[5..].to_vec())
            })
            .collect();
        let refs = borrowed(&keys);
        let input = ColumnInput::Keys(&refs);
        for packing in PACKINGS {
            let unit = check_round_trip(input, packing);
            if let Encoding::Dictionary { width, .. } = unit.encoding() {
                assert!(width == bits as u8 || width.is_power_of_two(), "{bits}-bit codes stored at {width}");
            }
            for _ in 0..8 {
                let key = |rng: &mut Rng| (rng.below(entries * 7 + 2)).to_be_bytes()[5..].to_vec();
                let pred = match rng.below(4) {
                    0 => CuPredicate::KeyIn((0..rng.below(30)).map(|_| key(&mut rng)).collect()),
                    1 => CuPredicate::KeyRange { lo: Bound::Excluded(key(&mut rng)), hi: Bound::Unbounded },
                    _ => {
                        CuPredicate::KeyRange { lo: Bound::Included(key(&mut rng)), hi: Bound::Excluded(key(&mut rng)) }
                    }
                };
                check_filter(&unit, &input, &pred);
            }
            check_filter(&unit, &input, &CuPredicate::IsNull);
        }
    }
}

#[test]
fn smallest_picks_each_encoding_where_it_wins() {
    let runs: Vec<Option<i64>> = (0..5000).map(|row| Some(row / 1000 * 1_000_000_007)).collect();
    let unit = ColumnUnit::build(ColumnInput::Ints(&runs), Packing::Smallest, None);
    assert_eq!(unit.encoding(), Encoding::RunLength { runs: 5 });
    assert_eq!(unit.encoding().to_string(), "RLE 5 runs");

    let sparse: Vec<Option<i64>> = (0..5000).map(|row| Some((row * 7919 % 13) << 40)).collect();
    let unit = ColumnUnit::build(ColumnInput::Ints(&sparse), Packing::Smallest, None);
    assert_eq!(unit.encoding(), Encoding::Dictionary { entries: 13, width: 4 });
    assert_eq!(unit.encoding().to_string(), "DICT 13x4-bit");

    let dense: Vec<Option<i64>> = (0..5000).map(|row| Some(row * 7919 % 5000 - 2500)).collect();
    let unit = ColumnUnit::build(ColumnInput::Ints(&dense), Packing::Smallest, None);
    assert_eq!(unit.encoding(), Encoding::FrameOfReference { width: 13 });
    assert_eq!(unit.encoding().to_string(), "FOR 13-bit");
    assert_eq!(
        ColumnUnit::build(ColumnInput::Ints(&dense), Packing::ByteAligned, None).encoding().to_string(),
        "FOR 16-bit"
    );
}

#[test]
fn all_null_and_empty_units_select_only_nulls() {
    let nulls = vec![None; 70];
    for input in [ColumnInput::Ints(&nulls), ColumnInput::Ints(&[]), ColumnInput::Keys(&[None, None])] {
        let unit = check_round_trip(input, Packing::Smallest);
        assert_eq!(unit.encoding().to_string(), "ALL NULL");
        assert_eq!(unit.bytes(), unit.null_bitmap().map_or(0, |n| n.words().len() * 8));
        check_filter(&unit, &input, &CuPredicate::IsNull);
        check_filter(&unit, &input, &CuPredicate::IsNotNull);
        assert!(unit.excludes(&CuPredicate::IsNotNull));
        assert_eq!(unit.excludes(&CuPredicate::IsNull), input.is_empty());
    }
    let unit = ColumnUnit::build(ColumnInput::Ints(&nulls), Packing::Tight, None);
    let mut selection = Bitmap::all(70);
    unit.filter(&CuPredicate::IntRange { lo: i64::MIN, hi: i64::MAX }, &mut selection, Isa::best());
    assert!(selection.none_set());
}

#[test]
fn dictionary_pruning_sees_missing_values() {
    let keys: Vec<Option<&[u8]>> = vec![Some(b"apple"), Some(b"cherry"), None, Some(b"apple")];
    let unit = ColumnUnit::build(ColumnInput::Keys(&keys), Packing::ByteAligned, None);
    assert!(unit.excludes(&CuPredicate::KeyIn(vec![b"banana".to_vec()])));
    assert!(!unit.excludes(&CuPredicate::KeyIn(vec![b"banana".to_vec(), b"cherry".to_vec()])));
    let between =
        CuPredicate::KeyRange { lo: Bound::Excluded(b"apple".to_vec()), hi: Bound::Excluded(b"cherry".to_vec()) };
    assert!(unit.excludes(&between));
    assert_eq!(unit.min_max(), Some((CuValue::Key(b"apple"), CuValue::Key(b"cherry"))));
    assert_eq!(unit.key(1), Some(&b"cherry"[..]));
    assert_eq!(unit.int(1), None);
    assert_eq!(unit.encoding().to_string(), "DICT 2x8-bit");
}

#[test]
fn mostly_distinct_keys_are_stored_plain() {
    let emails: Vec<Vec<u8>> =
        (0..5000).map(|i| format!("first.last{}@company{}.example.com", i * 7919 % 5000, i % 100).into()).collect();
    let mut keys: Vec<Option<&[u8]>> = emails.iter().map(|k| Some(k.as_slice())).collect();
    keys[5] = None;
    for packing in PACKINGS {
        let unit = check_round_trip(ColumnInput::Keys(&keys), packing);
        assert_eq!(unit.encoding(), Encoding::Plain, "{packing:?}");
        assert_eq!(unit.encoding().to_string(), "PLAIN");
        let key_bytes: usize = keys.iter().flatten().map(|k| k.len()).sum();
        assert_eq!(unit.bytes(), key_bytes + (keys.len() + 1) * 4 + unit.null_bitmap().unwrap().words().len() * 8);
    }
    let unit = ColumnUnit::build(ColumnInput::Keys(&keys), Packing::ByteAligned, None);
    let Some((CuValue::Key(min), CuValue::Key(max))) = unit.min_max() else { panic!("keys") };
    assert!(min.starts_with(b"first.last0@") && max.starts_with(b"first.last9@"), "{min:?} {max:?}");
    let (min, max) = (min.to_vec(), max.to_vec());
    assert!(unit.excludes(&CuPredicate::KeyIn(vec![b"a".to_vec(), b"z".to_vec()])));
    assert!(unit.excludes(&CuPredicate::KeyRange { lo: Bound::Excluded(max.clone()), hi: Bound::Unbounded }));
    let everything = CuPredicate::KeyRange { lo: Bound::Included(min), hi: Bound::Included(max) };
    let mut selection = Bitmap::all(keys.len());
    unit.filter(&everything, &mut selection, Isa::Scalar);
    assert_eq!(selection.count_ones() as usize, keys.len() - 1);

    // A few hundred values repeated: the dictionary is smaller, and taken.
    let repeated: Vec<Option<&[u8]>> = (0..5000).map(|i| keys[i % 300]).collect();
    let unit = ColumnUnit::build(ColumnInput::Keys(&repeated), Packing::ByteAligned, None);
    assert_eq!(unit.encoding(), Encoding::Dictionary { entries: 299, width: 16 });
}

#[test]
fn plain_keys_where_a_dictionary_would_take_as_much_room() {
    let column = |distinct: u64| -> Vec<Vec<u8>> {
        (0..100_000u64).map(|i| format!("customer{}@example.com", i * 7919 % distinct).into()).collect()
    };
    // 97,000 distinct keys in 100,000 rows (a NULL among them): plain, at every packing.
    let keys = column(97_000);
    let mut refs: Vec<Option<&[u8]>> = keys.iter().map(|k| Some(k.as_slice())).collect();
    refs[100] = None;
    let input = ColumnInput::Keys(&refs);
    let unit = check_round_trip(input, Packing::Tight);
    assert_eq!(unit.encoding(), Encoding::Plain);
    for (lo, hi) in [(&b"customer1"[..], &b"customer2"[..]), (b"a", b"customer0@"), (b"customer96999", b"z")] {
        let pred = CuPredicate::KeyRange { lo: Bound::Included(lo.to_vec()), hi: Bound::Excluded(hi.to_vec()) };
        check_filter(&unit, &input, &pred);
    }
    check_filter(&unit, &input, &CuPredicate::KeyIn(vec![keys[7].clone(), b"nobody".to_vec()]));
    check_filter(&unit, &input, &CuPredicate::IsNull);
    for packing in [Packing::ByteAligned, Packing::Smallest] {
        assert_eq!(ColumnUnit::build(input, packing, None).encoding(), Encoding::Plain, "{packing:?}");
    }

    // 60,000 and 40,000 distinct keys in 100,000 rows: a dictionary takes less room.
    for distinct in [60_000, 40_000] {
        let keys = column(distinct);
        let refs: Vec<Option<&[u8]>> = keys.iter().map(|k| Some(k.as_slice())).collect();
        for packing in PACKINGS {
            let unit = check_round_trip(ColumnInput::Keys(&refs), packing);
            assert!(
                matches!(unit.encoding(), Encoding::Dictionary { entries, .. } if entries == distinct as usize),
                "{distinct} {packing:?}: {}",
                unit.encoding()
            );
        }
    }
}

#[test]
fn invalid_utf8_is_found_even_where_the_concatenation_is_valid() {
    let mut keys = KeyColumnBuilder::new();
    [Some(&b"ab"[..]), None, Some("é".as_bytes())].into_iter().for_each(|k| keys.push(k));
    assert_eq!(keys.first_invalid_utf8(), None);
    // "\xC3" then "\xA9x": "é" when joined, neither valid alone.
    [Some(&b"\xC3"[..]), Some(&b"\xA9x"[..])].into_iter().for_each(|k| keys.push(k));
    assert_eq!(keys.first_invalid_utf8(), Some(3));
}

#[test]
fn memcompress_levels_map_to_packings() {
    assert_eq!(Packing::for_memcompress("FOR DML"), Some(Packing::ByteAligned));
    assert_eq!(Packing::for_memcompress("memcompress for query  low"), Some(Packing::ByteAligned));
    assert_eq!(Packing::for_memcompress("FOR QUERY HIGH"), Some(Packing::Tight));
    assert_eq!(Packing::for_memcompress("CAPACITY HIGH"), Some(Packing::Smallest));
    assert_eq!(Packing::for_memcompress("FOR SPEED"), None);
}

/// Units large enough to keep their arrays in the In-Memory Area hold, decode and
/// filter exactly what the same units on the heap do, and give the area back when
/// dropped.
#[test]
fn units_in_the_area_equal_units_on_the_heap() {
    let area = InMemoryArea::new(64 << 20, false).unwrap();
    let rows = 60_000;
    let ints: Vec<Option<i64>> =
        (0..rows).map(|r| (r % 97 != 0).then_some((r as i64 * 7919) % 70_001 - 35_000)).collect();
    let runs: Vec<Option<i64>> = (0..rows).map(|r| Some(r as i64 / 500)).collect();
    let owned: Vec<Option<Vec<u8>>> = (0..rows)
        .map(|r| (r % 89 != 0).then(|| format!("customer{:07}@example.com", (r * 7919) % rows).into_bytes()))
        .collect();
    let few: Vec<Option<Vec<u8>>> = (0..rows).map(|r| Some(format!("city {}", r % 300).into_bytes())).collect();
    let (keys, few) = (borrowed(&owned), borrowed(&few));
    let inputs =
        [ColumnInput::Ints(&ints), ColumnInput::Ints(&runs), ColumnInput::Keys(&keys), ColumnInput::Keys(&few)];
    let predicates = [
        CuPredicate::IntRange { lo: -1000, hi: 19_999 },
        CuPredicate::IntIn(vec![3, 40, 119]),
        CuPredicate::KeyRange { lo: Bound::Included(b"customer0010".to_vec()), hi: Bound::Unbounded },
        CuPredicate::KeyIn(vec![b"city 7".to_vec(), b"city 250".to_vec()]),
        CuPredicate::Like { pattern: LikePattern::compile(Some("%er001%"), None), negated: false },
        CuPredicate::Like { pattern: LikePattern::compile(Some("city 1%"), None), negated: true },
        CuPredicate::IsNull,
    ];
    for packing in PACKINGS {
        for input in inputs {
            let (placed, heap) =
                (ColumnUnit::build(input, packing, Some(&area)), ColumnUnit::build(input, packing, None));
            // A unit of 64 KiB has an array (codes or keys) of at least the area's minimum.
            if heap.bytes() >= 64 << 10 {
                assert!(area.figures().used_bytes > 0, "{packing:?} {}: nothing in the area", heap.encoding());
            }
            assert_eq!(
                (placed.encoding(), placed.bytes(), placed.nulls()),
                (heap.encoding(), heap.bytes(), heap.nulls())
            );
            assert!((0..rows).all(|row| placed.value(row) == heap.value(row)), "{packing:?} {}", heap.encoding());
            // Each predicate on the units of its kind (a key predicate never meets integers).
            let of_kind = |pred: &&CuPredicate| match pred {
                CuPredicate::IntRange { .. } | CuPredicate::IntIn(_) => matches!(input, ColumnInput::Ints(_)),
                CuPredicate::KeyRange { .. } | CuPredicate::KeyIn(_) | CuPredicate::Like { .. } => {
                    matches!(input, ColumnInput::Keys(_))
                }
                _ => true,
            };
            for pred in predicates.iter().filter(of_kind) {
                let (mut a, mut b) = (Bitmap::all(rows), Bitmap::all(rows));
                placed.filter(pred, &mut a, Isa::best());
                heap.filter(pred, &mut b, Isa::best());
                assert_eq!(a, b, "{packing:?} {} {pred:?}", heap.encoding());
            }
            drop(placed);
            assert_eq!(area.figures().used_bytes, 0, "dropped, the unit gave its extents back");
        }
    }
}

#[test]
fn units_are_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<ColumnUnit>();
}

#[cfg(not(debug_assertions))]
#[test]
fn a_predicate_of_the_other_kind_selects_nothing() {
    let unit = ColumnUnit::build(ColumnInput::Ints(&[Some(1), Some(2)]), Packing::Tight, None);
    let mut selection = Bitmap::all(2);
    unit.filter(&CuPredicate::KeyIn(vec![vec![1]]), &mut selection, Isa::best());
    assert!(selection.none_set());
}

/// A unit of every encoding at every packing: integers with NULLs, runs, keys of a
/// dictionary, all NULL, and plain keys.
fn units_of_every_encoding() -> Vec<ColumnUnit> {
    let ints: Vec<Option<i64>> = (0..300).map(|i| (i % 7 != 0).then_some((i * 37) % 101)).collect();
    let runs: Vec<Option<i64>> = (0..300).map(|i| Some(i / 50)).collect();
    let keys: Vec<Vec<u8>> = (0..300).map(|i| format!("key {}", i % 13).into_bytes()).collect();
    let distinct: Vec<Vec<u8>> = (0..5000).map(|i| format!("distinct key number {i}").into_bytes()).collect();
    fn key_refs(keys: &[Vec<u8>]) -> Vec<Option<&[u8]>> {
        keys.iter().map(|k| Some(k.as_slice())).collect()
    }
    let (keys, distinct) = (key_refs(&keys), key_refs(&distinct));
    let nulls: Vec<Option<i64>> = vec![None; 10];
    let mut units = Vec::new();
    for packing in PACKINGS {
        for input in
            [ColumnInput::Ints(&ints), ColumnInput::Ints(&runs), ColumnInput::Keys(&keys), ColumnInput::Ints(&nulls)]
        {
            units.push(ColumnUnit::build(input, packing, None));
        }
    }
    units.push(ColumnUnit::build(ColumnInput::Keys(&distinct), Packing::ByteAligned, None));
    assert!(units.iter().any(|u| u.encoding() == Encoding::Plain));
    assert!(units.iter().any(|u| matches!(u.encoding(), Encoding::RunLength { .. })));
    assert!(units.iter().any(|u| u.encoding() == Encoding::AllNull));
    units
}

/// Units read one after another into the arrays of those read before (of every other
/// encoding and size, their old values left in them) are the units written.
#[test]
fn units_read_into_recycled_arrays_are_the_units_written() {
    let units = units_of_every_encoding();
    let mut spare = UnitBuffers::default();
    for unit in units.iter().chain(units.iter().rev()).chain(&units) {
        let mut bytes = Vec::new();
        unit.write_to(&mut bytes);
        let read = ColumnUnit::read_reusing(&bytes, &mut spare).unwrap_or_else(|e| panic!("{}: {e}", unit.encoding()));
        assert_eq!((read.rows(), read.nulls(), read.encoding()), (unit.rows(), unit.nulls(), unit.encoding()));
        assert!((0..unit.rows()).all(|row| read.value(row) == unit.value(row)), "{}", unit.encoding());
        assert_eq!(read.min_max(), unit.min_max());
        read.recycle(&mut spare);
    }
}

/// Bytes that are not a unit are refused or read as some unit, never a panic: every
/// unit of every encoding, each byte changed, and each prefix; read into arrays kept
/// from the units read before.
#[test]
fn damaged_unit_bytes_are_refused_not_panicked_on() {
    let mut spare = UnitBuffers::default();
    for unit in &units_of_every_encoding() {
        let mut bytes = Vec::new();
        unit.write_to(&mut bytes);
        for cut in (0..bytes.len()).step_by(7) {
            let read = ColumnUnit::read_reusing(&bytes[..cut], &mut spare);
            assert!(read.is_err(), "a prefix of {cut} bytes is not a unit");
        }
        let step = (bytes.len() / 400).max(1);
        for at in (0..bytes.len()).step_by(step) {
            for flip in [0x01u8, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                if let Ok(read) = ColumnUnit::read_reusing(&damaged, &mut spare) {
                    // Whatever it reads as, its values and filters stay in bounds.
                    (0..read.rows()).for_each(|row| assert!(read.value(row).is_some() || read.is_null(row)));
                    let mut all = Bitmap::all(read.rows());
                    read.filter_with(&CuPredicate::IsNotNull, &mut all, Isa::best(), true);
                    read.recycle(&mut spare);
                }
            }
        }
    }
}

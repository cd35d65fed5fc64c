//! HASH JOIN: the build input's rows in a hash table on the join keys, probed with each
//! row of the other input as it comes, within the statement's work area
//! ([`crate::exec::workarea`]):
//!
//! ```text
//!  optimal    build rows all fit ─► one table ─► probe rows stream through it
//!  spilled    the area filled: build rows hashed into partitions; while the area is
//!             over its limit the largest partition in memory goes to temp, and its
//!             later rows straight after it. Probe rows of a partition in memory join
//!             at once; those of a spilled one go to temp beside its build rows. Then,
//!             for each spilled pair, the build rows a work area's worth at a time
//!             (once when they fit: one pass; else a pass over the probe rows for
//!             each: multi-pass), their table probed with the pair's probe rows.
//! ```
//!
//! A build row keeps only the columns the join and the plan above it use (its input's
//! `used`), one row after another in one vector ([`KeptRows`]); the table holds, for
//! each key's hash, the chain of the rows with that key ([`Chain`], linked through
//! `Table::next` in the order they came), so a row costs no allocation beyond its
//! strings. A row's key is hashed once ([`crate::exec::join_key`]): a build row's hash
//! places it in the table as it comes (or in its partition), and goes into the join
//! filter; a probe row's hash, of its key borrowed from the probe row, chooses its
//! partition and its chain. Where every key is one whole number (or two small ones,
//! side by side in one: [`crate::exec::join_key::pair_as_int`]), a chain is found by
//! the hash alone: the hash of a whole number is one to one, so no row is read to
//! compare keys. Where those numbers also lie close together (a span of at most four
//! slots a chain, or 65,536), the ready table finds chains by number instead: one slot
//! of a dense array ([`DenseChains`]), a probe's one cache miss where the hash table
//! takes two.
//!
//! Invariants:
//! - every build row is in exactly one place: the table of the rows in memory, or one
//!   spilled partition; a probe row whose key's partition spilled is joined only when
//!   that partition is, so each pair is found once;
//! - build and probe rows of one key land in one partition (one fixed hash of the key's
//!   values, which the planner gives one type family per pair);
//! - a build row with a NULL key is never kept when the build input is not preserved;
//! - rows with a NULL key join nothing: a build one is kept only when the build input is
//!   preserved (an outer join) and is then given back with NULLs, in partition 0;
//! - the memory held (rows as estimated by [`row_bytes`], and the write buffers of
//!   spilled partitions) stays within the area's limit except for one segment's last
//!   row, or a partition whose write buffers alone pass it;
//! - with a join filter, every build row's key is in it before the first probe row is
//!   read, and the probe scan drops the rows it excludes ([`crate::exec::join_filter`]);
//! - what the work area did goes to `Join::workarea` and the session's
//!   `workarea executions - ...` statistics once per execution.

use super::{Join, JoinInput, JoinKind, NOT_KEPT, Pair, SideRow, run_filtered};
use crate::access::{Flow, RowAccess};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::downstream::ConsumeRow;
use crate::exec::join_filter::{JoinFilterFill, JoinFilterStage};
use crate::exec::join_key::{int_key_hash, int_of_key_hash, key_hash, pair_as_int, partition_of_hash};
use crate::exec::pipeline::Stage;
use crate::exec::temp_rows::{RowRun, TempRows};
use crate::exec::workarea::WorkArea;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::stats::SessionStats;
use crate::stats::workarea::WorkareaRun;
use crate::types::{Datum, Value};
use hashbrown::HashTable;
use smallvec::SmallVec;
use std::time::Instant;

/// Partitions a spilling join hashes its rows into: as many as write buffers of
/// [`MIN_CHUNK`] bytes fill half the work area, within these bounds (more partitions,
/// smaller ones: the more likely each fits when read back).
const MIN_PARTITIONS: usize = 4;
const MAX_PARTITIONS: usize = 64;
/// The write call of one partition's run: an eighth of the area over the partitions,
/// within these bounds.
const MIN_CHUNK: usize = 8 << 10;
const MAX_CHUNK: usize = 256 << 10;
/// Bytes a build row adds to the table beyond its values: its link to the next row of
/// its key (4), and a share of the slots (a 16-byte chain and its control byte, the
/// table at most seven eighths full).
const TABLE_BYTES_A_ROW: usize = 24;
/// The end of a chain.
const END: u32 = u32::MAX;

/// A key's values, borrowed from the row they were computed over.
type Key<'v> = SmallVec<[Datum<'v>; 4]>;

/// A row's join key: read in place where every key is a column of the row, else its
/// values computed.
enum RowKey<'x, 'v> {
    /// A key of one value, a column of the row.
    One(&'x Datum<'v>),
    /// Value `i` of the key is `values[slots[i]]`.
    InRow { values: &'x [Datum<'v>], slots: &'x [usize] },
    /// A key of expressions, computed (kept apart: a row key stays a few words).
    Computed(Vec<Value>),
}

impl RowKey<'_, '_> {
    /// The key's values, in order.
    fn values(&self) -> impl Iterator<Item = &Datum<'_>> {
        let (one, in_row, computed) = match self {
            RowKey::One(value) => (Some(*value), None, None),
            RowKey::InRow { values, slots } => (None, Some(slots.iter().map(|&s| &values[s])), None),
            RowKey::Computed(key) => (None, None, Some(key.iter())),
        };
        one.into_iter().chain(in_row.into_iter().flatten()).chain(computed.into_iter().flatten())
    }

    /// The key as one whole number, when it is one, or two that fit 32 bits unsigned
    /// ([`pair_as_int`]): its hash is then that number's, one to one ([`int_key_hash`]
    /// is a bijection), so equal hashes of two such keys of one join are equal keys.
    #[inline]
    fn as_int(&self) -> Option<i64> {
        let pair = |a: &Datum<'_>, b: &Datum<'_>| match (a, b) {
            (Datum::Int(a), Datum::Int(b)) => pair_as_int(*a, *b),
            _ => None,
        };
        match self {
            RowKey::One(Datum::Int(i)) => Some(*i),
            RowKey::One(_) => None,
            RowKey::InRow { values, slots: [a, b] } => pair(&values[*a], &values[*b]),
            RowKey::InRow { .. } => None,
            RowKey::Computed(key) => match key.as_slice() {
                [Datum::Int(i)] => Some(*i),
                [a, b] => pair(a, b),
                _ => None,
            },
        }
    }

    /// The key's hash ([`key_hash`] of its values).
    #[inline]
    fn hash(&self) -> u64 {
        match self.as_int() {
            Some(i) => int_key_hash(i),
            None => key_hash(self.values()),
        }
    }
}

/// The values of `keys` over `row`, or `None` when one is NULL (the row joins nothing).
fn key_of<'r, R: RowAccess + ?Sized>(keys: &'r [Expr], row: &'r R, f: &mut FunctionContext) -> Result<Option<Key<'r>>> {
    let mut key = Key::new();
    for k in keys {
        let v = k.eval(row, f)?;
        if v.is_null() {
            return Ok(None);
        }
        key.push(v);
    }
    Ok(Some(key))
}

/// Bytes a kept build row takes in memory, as the work area counts them: its values,
/// their strings, and its share of the table.
fn row_bytes(row: &[Datum<'_>]) -> usize {
    let strings: usize = row.iter().map(|v| if let Datum::Str(s) = v { s.len() } else { 0 }).sum();
    std::mem::size_of_val(row) + strings + TABLE_BYTES_A_ROW
}

/// The columns of one input's rows as the join holds them: only those the join and the
/// plan above it use, in order ([`RowSink::only`] hands them so), each row read through
/// `slots`.
///
/// [`RowSink::only`]: crate::exec::downstream::RowSink::only
struct Layout {
    /// The input's columns a row holds, in order.
    only: Vec<usize>,
    /// Where each input column is in a row ([`NOT_KEPT`] when it is not).
    slots: Vec<u32>,
    /// Where each key is in a row, when every one is a column.
    key_slots: Option<Vec<usize>>,
}

impl Layout {
    fn of(input: &JoinInput, keys: &[Expr]) -> Layout {
        let only: Vec<usize> = match &input.used {
            None => (0..input.read).collect(),
            Some(used) => (0..input.read).filter(|&c| used[c]).collect(),
        };
        let mut slots = vec![NOT_KEPT; input.read];
        for (i, &c) in only.iter().enumerate() {
            slots[c] = i as u32;
        }
        let key_slots = keys
            .iter()
            .map(|k| match k {
                Expr::Column(c) => slots.get(*c).filter(|&&s| s != NOT_KEPT).map(|&s| s as usize),
                _ => None,
            })
            .collect();
        Layout { only, slots, key_slots }
    }

    /// A row in this layout as the input's row.
    fn row<'x, 'v>(&'x self, values: &'x [Datum<'v>]) -> SideRow<'x, 'v> {
        SideRow { values, slots: Some(&self.slots) }
    }

    /// The key `keys` of row `values` and its hash; `None` for a NULL key.
    fn key<'x, 'v>(
        &'x self,
        keys: &[Expr],
        values: &'x [Datum<'v>],
        f: &mut FunctionContext,
    ) -> Result<Option<(RowKey<'x, 'v>, u64)>> {
        let key = match self.key_slots.as_deref() {
            Some(&[s]) => (!values[s].is_null()).then_some(RowKey::One(&values[s])),
            Some(slots) => (!slots.iter().any(|&s| values[s].is_null())).then_some(RowKey::InRow { values, slots }),
            None => key_of(keys, &self.row(values), f)?
                .map(|k| RowKey::Computed(k.into_iter().map(Datum::into_owned).collect())),
        };
        Ok(key.map(|k| {
            let hash = k.hash();
            (k, hash)
        }))
    }
}

/// Which input builds, and what each side keeps.
struct Sides<'j> {
    build: &'j JoinInput,
    probe: &'j JoinInput,
    build_keys: &'j [Expr],
    probe_keys: &'j [Expr],
    keep_build: bool,
    keep_probe: bool,
    /// A semi join probing with its left input: a probe row that joins is given once.
    semi_probe: bool,
    /// Whether the build rows are marked as they join: a preserved build input's (the
    /// unmatched ones are given at the end), or a semi join's left input building (each
    /// given once, when it first joins).
    mark_build: bool,
    /// The columns of a kept build row.
    kept: Layout,
    /// The columns of a probe row as the join is handed it.
    probing: Layout,
}

impl<'j> Sides<'j> {
    fn of(join: &'j Join, build_right: bool) -> Sides<'j> {
        let (build, probe, build_keys, probe_keys, keep_build, keep_probe) = if build_right {
            (
                &join.right,
                &join.left,
                &join.right_keys,
                &join.left_keys,
                join.kind.keeps_right(),
                join.kind.keeps_left(),
            )
        } else {
            (
                &join.left,
                &join.right,
                &join.left_keys,
                &join.right_keys,
                join.kind.keeps_left(),
                join.kind.keeps_right(),
            )
        };
        let (kept, probing) = (Layout::of(build, build_keys), Layout::of(probe, probe_keys));
        let semi = join.kind == JoinKind::Semi;
        Sides {
            build,
            probe,
            build_keys,
            probe_keys,
            keep_build,
            keep_probe,
            semi_probe: semi && build_right,
            mark_build: keep_build || (semi && !build_right),
            kept,
            probing,
        }
    }

    /// A kept build row as the build input's row.
    fn build_row<'x, 'v>(&'x self, kept: &'x [Datum<'v>]) -> SideRow<'x, 'v> {
        self.kept.row(kept)
    }

    /// The key of kept build row `kept` and its hash; `None` for a NULL key.
    fn build_key<'x, 'v>(
        &'x self,
        kept: &'x [Datum<'v>],
        f: &mut FunctionContext,
    ) -> Result<Option<(RowKey<'x, 'v>, u64)>> {
        self.kept.key(self.build_keys, kept, f)
    }

    /// The key of probe row `values` (in the probing layout) and its hash.
    fn probe_key<'x, 'v>(
        &'x self,
        values: &'x [Datum<'v>],
        f: &mut FunctionContext,
    ) -> Result<Option<(RowKey<'x, 'v>, u64)>> {
        self.probing.key(self.probe_keys, values, f)
    }

    /// Whether kept build row `kept` has the key `key`.
    fn build_key_is(&self, kept: &[Value], key: &RowKey<'_, '_>, f: &mut FunctionContext) -> Result<bool> {
        match (&self.kept.key_slots, key) {
            (Some(slots), RowKey::One(k)) if slots.len() == 1 => Ok(kept[slots[0]] == **k),
            (Some(slots), key) => Ok(slots.iter().zip(key.values()).all(|(&s, k)| kept[s] == *k)),
            (None, key) => {
                let row = self.build_row(kept);
                Ok(key_of(self.build_keys, &row, f)?.is_some_and(|own| own.iter().eq(key.values())))
            }
        }
    }
}

/// Build rows as a hash join keeps them: the kept columns of each, one after another in
/// one vector (no allocation a row beyond its strings').
#[derive(Default)]
struct KeptRows {
    /// Values a row holds.
    width: usize,
    values: Vec<Value>,
    rows: usize,
}

impl KeptRows {
    fn new(width: usize) -> KeptRows {
        KeptRows { width, values: Vec::new(), rows: 0 }
    }

    /// Keeps `row`, already in the kept layout; returns its bytes ([`row_bytes`]).
    fn push(&mut self, row: &[Datum<'_>]) -> usize {
        debug_assert_eq!(row.len(), self.width);
        self.values.extend(row.iter().map(|v| v.clone().into_owned()));
        self.rows += 1;
        row_bytes(row)
    }

    fn len(&self) -> usize {
        self.rows
    }

    fn row(&self, i: usize) -> &[Value] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    fn iter(&self) -> impl Iterator<Item = &[Value]> {
        (0..self.rows).map(|i| self.row(i))
    }
}
/// A chain of the build rows of one key: its first and last row (each row links to the
/// next of its key, in the order they were kept).
#[derive(Clone, Copy)]
struct Chain {
    hash: u64,
    first: u32,
    last: u32,
}

/// A chain's rows where the chains are found by number ([`DenseChains`]).
#[derive(Clone, Copy)]
struct Rows {
    first: u32,
    last: u32,
}

/// The chains of whole-number keys lying close together, found by number: slot `k -
/// low` holds the rows of key `k` (`first` is [`END`] when there are none). A probe
/// reads one slot of 8 bytes, where the hash table reads a control group and then a
/// 16-byte chain elsewhere: two cache misses become one, in an array half the size.
struct DenseChains {
    low: i64,
    slots: Vec<Rows>,
}

/// The most slots [`DenseChains`] takes over the chains it holds, whatever their
/// number ([`DENSE_FLOOR`]) and past that ([`DENSE_SPREAD`] a chain): the table it
/// replaces takes 18 to 36 bytes a chain, these 8 a slot.
const DENSE_FLOOR: u64 = 1 << 16;
const DENSE_SPREAD: u64 = 4;

/// The table of some build rows.
struct Table {
    rows: KeptRows,
    /// Each key's chain of rows, by the key's hash (emptied once `dense` holds them).
    chains: HashTable<Chain>,
    /// The chains by number, when every key is a whole number and the numbers lie
    /// close together (made when the table is ready).
    dense: Option<DenseChains>,
    /// The next row of each row's key, or [`END`].
    next: Vec<u32>,
    /// Which rows joined a probe row (only when the build input is preserved).
    matched: Vec<bool>,
    /// Whether every chain's key is a whole number ([`RowKey::as_int`]): a key that is
    /// one then finds its chain by the hash alone, never reading a row.
    int_keys: bool,
    /// The smallest and largest key while `int_keys`.
    int_range: Option<(i64, i64)>,
}

/// A key sought in a table's chains: a chain is its key's when their hashes are equal
/// and, unless equal hashes are equal keys (`by_hash`), the key of the chain's first row
/// is the key. An error comparing keys ends the search, kept in `failed`.
struct Sought<'k, 'x, 'v> {
    key: &'k RowKey<'x, 'v>,
    hash: u64,
    by_hash: bool,
    failed: Option<crate::error::Error>,
}

impl Sought<'_, '_, '_> {
    fn finds(&mut self, chain: &Chain, rows: &KeptRows, sides: &Sides<'_>, f: &mut FunctionContext) -> bool {
        chain.hash == self.hash
            && (self.by_hash
                || sides.build_key_is(rows.row(chain.first as usize), self.key, f).unwrap_or_else(|e| {
                    self.failed = Some(e);
                    false
                }))
    }

    fn done<T>(self, found: T) -> Result<T> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }
}

impl Table {
    /// An empty table of rows `width` values wide.
    fn new(width: usize) -> Table {
        Table::with_capacity(width, 0)
    }

    fn with_capacity(width: usize, rows: usize) -> Table {
        Table {
            rows: KeptRows::new(width),
            chains: HashTable::with_capacity(rows),
            dense: None,
            next: Vec::with_capacity(rows),
            matched: Vec::new(),
            int_keys: true,
            int_range: None,
        }
    }

    /// A table of `rows`, each keyed anew; a row with a NULL key is kept outside every
    /// chain.
    fn of(rows: KeptRows, sides: &Sides<'_>, f: &mut FunctionContext) -> Result<Table> {
        let mut table = Table::with_capacity(rows.width, rows.len());
        for kept in rows.iter() {
            let key = sides.build_key(kept, f)?;
            table.insert(kept, key.as_ref().map(|(k, h)| (k, *h)), sides, f)?;
        }
        Ok(table)
    }

    /// Keeps `row` (in the kept layout), whose key is `key` with its hash (`None`: a NULL
    /// key, joining nothing); returns its bytes ([`row_bytes`]).
    fn insert(
        &mut self,
        row: &[Datum<'_>],
        key: Option<(&RowKey<'_, '_>, u64)>,
        sides: &Sides<'_>,
        f: &mut FunctionContext,
    ) -> Result<usize> {
        let i = self.rows.len() as u32;
        let bytes = self.rows.push(row);
        self.next.push(END);
        let Some((key, hash)) = key else { return Ok(bytes) };
        match key.as_int().filter(|_| self.int_keys) {
            Some(k) => {
                let (low, high) = self.int_range.unwrap_or((k, k));
                self.int_range = Some((low.min(k), high.max(k)));
            }
            None => self.int_keys = false,
        }
        let mut sought = Sought { key, hash, by_hash: self.int_keys, failed: None };
        let rows = &self.rows;
        match self.chains.find_mut(hash, |c| sought.finds(c, rows, sides, f)) {
            Some(chain) => {
                self.next[chain.last as usize] = i;
                chain.last = i;
            }
            None => {
                self.chains.insert_unique(hash, Chain { hash, first: i, last: i }, |c| c.hash);
            }
        }
        sought.done(bytes)
    }

    /// Readies the table for probing: the marks of rows joined, when build rows are
    /// marked, and the chains by number when they lie close enough together.
    fn ready(mut self, sides: &Sides<'_>) -> Table {
        self.matched = vec![false; if sides.mark_build { self.rows.len() } else { 0 }];
        if let Some((low, high)) = self.int_range.filter(|_| self.int_keys) {
            let span = high.abs_diff(low).saturating_add(1);
            if span <= DENSE_FLOOR.max(DENSE_SPREAD * self.chains.len() as u64) {
                let mut slots = vec![Rows { first: END, last: END }; span as usize];
                for chain in self.chains.iter() {
                    let slot = int_of_key_hash(chain.hash).abs_diff(low) as usize;
                    slots[slot] = Rows { first: chain.first, last: chain.last };
                }
                self.dense = Some(DenseChains { low, slots });
                self.chains = HashTable::new();
            }
        }
        self
    }

    /// The rows of key `key`, whose hash is `hash`.
    fn chain_of(
        &self,
        key: &RowKey<'_, '_>,
        hash: u64,
        sides: &Sides<'_>,
        f: &mut FunctionContext,
    ) -> Result<Option<Rows>> {
        if let Some(dense) = &self.dense {
            // Every key held is a whole number: a key that is none is none of them.
            let slot = key.as_int().and_then(|k| k.checked_sub(dense.low)).and_then(|at| dense.slots.get(at as usize));
            return Ok(slot.copied().filter(|rows| rows.first != END));
        }
        let int = key.as_int().is_some();
        let mut sought = Sought { key, hash, by_hash: self.int_keys && int, failed: None };
        let found = self.chains.find(hash, |c| sought.finds(c, &self.rows, sides, f));
        let rows = found.map(|c| Rows { first: c.first, last: c.last });
        sought.done(rows)
    }
}

/// Where joined rows go: the stages above the join.
struct Emitter<'j, 'r, 'a> {
    join: &'j Join,
    build_right: bool,
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
    /// Where the joined rows' pushes are measured while the probe input runs (only when
    /// row-source statistics are gathered): the probe input's figures leave them out.
    meter: Option<&'r SessionStats>,
}

impl Emitter<'_, '_, '_> {
    /// The joined row of a probe row (or NULLs) and a build row's side (or NULLs).
    fn pair<'x, 'v>(&self, probe: Option<SideRow<'x, 'v>>, build: Option<SideRow<'x, 'v>>) -> Pair<'x, 'v> {
        let probe = probe.unwrap_or_default();
        let build = build.unwrap_or_default();
        let (left, right) = if self.build_right { (probe, build) } else { (build, probe) };
        Pair { left, right, left_width: self.join.left.width }
    }

    fn emit<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<()> {
        self.stopped = self.join.emit_metered(row, self.rest, &mut self.f, self.meter)? == Flow::Stop;
        Ok(())
    }

    /// Joins `probe` (whose key is `key`) to the rows of `table` with that key; returns
    /// whether any pair met the residual condition. A semi or anti join gives no pairs:
    /// building on the left input, it marks the build rows that join (a semi join gives
    /// each the first time), a row already marked needing no second look; building on
    /// the right, it stops at the first pair that joins, the probe row's answer known.
    fn probe(
        &mut self,
        table: &mut Table,
        sides: &Sides<'_>,
        probe: &[Datum<'_>],
        key: &RowKey<'_, '_>,
        hash: u64,
    ) -> Result<bool> {
        let Some(chain) = table.chain_of(key, hash, sides, &mut self.f)? else { return Ok(false) };
        let mut b = chain.first;
        let mut any = false;
        let pairs = self.join.kind.gives_pairs();
        loop {
            let marked = !pairs && table.matched.get(b as usize) == Some(&true);
            let build = sides.build_row(table.rows.row(b as usize));
            let out = self.pair(Some(sides.probing.row(probe)), Some(build));
            if !marked && self.join.residual_holds(&out, &mut self.f)? {
                any = true;
                if let Some(m) = table.matched.get_mut(b as usize) {
                    *m = true;
                }
                if pairs {
                    self.emit(&out)?;
                } else if sides.mark_build && !sides.keep_build {
                    let out = self.pair(None, Some(build));
                    self.emit(&out)?;
                } else if !sides.mark_build {
                    break;
                }
                if self.stopped {
                    break;
                }
            }
            // The chain's last row ends it: a key of one row never reads `next`.
            if b == chain.last {
                break;
            }
            b = table.next[b as usize];
        }
        Ok(any)
    }

    /// The build rows of a preserved build input that joined nothing, with NULLs.
    fn unmatched_build(&mut self, table: &Table, sides: &Sides<'_>) -> Result<()> {
        for (row, _) in table.rows.iter().zip(&table.matched).filter(|(_, m)| !**m) {
            if self.stopped {
                break;
            }
            let out = self.pair(None, Some(sides.build_row(row)));
            self.emit(&out)?;
        }
        Ok(())
    }
}

/// One partition of a spilling join.
struct Partition {
    /// Its build rows in memory (none once it spilled).
    rows: KeptRows,
    /// Bytes of `rows`.
    bytes: usize,
    /// Bytes of all its build rows, in memory or spilled.
    total: usize,
    /// Its spilled build rows: `Some` once it spilled.
    build: Option<RowRun>,
    /// Its spilled probe rows.
    probe: RowRun,
}

/// The temporary side of a join that spilled.
struct Spill<'a> {
    file: TempRows<'a>,
    /// Bytes of one write call of a partition's run.
    chunk: usize,
    parts: Vec<Partition>,
}

/// The build input's end: keeps its rows within the work area, spilling when it fills.
struct Build<'s, 'a> {
    sides: &'s Sides<'s>,
    area: WorkArea<'a>,
    stats: &'a SessionStats,
    f: FunctionContext,
    /// The rows, in their table as they come, while nothing spilled.
    table: Table,
    /// The join filter's keys, when the join has one.
    filter: Option<JoinFilterFill>,
    /// Bytes held now (rows in memory, write buffers of spilled partitions).
    held: usize,
    /// The most ever held.
    peak: usize,
    /// Bytes of every build row: what an optimal execution holds.
    total: usize,
    spill: Option<Spill<'a>>,
}

impl<'s, 'a> Build<'s, 'a> {
    fn hold(&mut self, bytes: usize) {
        self.held += bytes;
        self.peak = self.peak.max(self.held);
    }

    /// The area filled: the rows so far go into partitions, and partitions spill until
    /// the rest fits.
    fn start_spilling(&mut self) -> Result<()> {
        let Some(temp) = self.area.temp else { return Ok(()) };
        let count = (self.area.limit / (2 * MIN_CHUNK)).clamp(MIN_PARTITIONS, MAX_PARTITIONS);
        let chunk = (self.area.limit / (8 * count)).clamp(MIN_CHUNK, MAX_CHUNK);
        let file = TempRows::create(temp, "hash", self.stats)?;
        let width = self.sides.kept.only.len();
        let mut parts: Vec<Partition> = (0..count)
            .map(|_| Partition {
                rows: KeptRows::new(width),
                bytes: 0,
                total: 0,
                build: None,
                probe: RowRun::default(),
            })
            .collect();
        self.held = 0;
        let rows = std::mem::replace(&mut self.table, Table::new(width)).rows;
        for row in rows.iter() {
            let part = &mut parts[partition_of(self.sides, row, count, &mut self.f)?];
            let bytes = part.rows.push(row);
            part.bytes += bytes;
            part.total += bytes;
            self.held += bytes;
        }
        self.spill = Some(Spill { file, chunk, parts });
        self.spill_until_it_fits()
    }

    /// Spills the largest partitions in memory until what is held fits the area.
    fn spill_until_it_fits(&mut self) -> Result<()> {
        let spill = self.spill.as_mut().expect("spilling");
        while self.held > self.area.limit {
            let Some(part) =
                spill.parts.iter_mut().filter(|p| p.build.is_none() && p.bytes > 0).max_by_key(|p| p.bytes)
            else {
                break;
            };
            let mut run = RowRun::default();
            for row in part.rows.iter() {
                run.push(row, &mut spill.file, spill.chunk)?;
            }
            self.held = self.held - part.bytes + spill.chunk;
            part.rows = KeptRows::new(part.rows.width);
            part.bytes = 0;
            part.build = Some(run);
        }
        Ok(())
    }
}

/// The partition of kept build row `kept`: its key's, or 0 for a NULL key (a row kept
/// only when the build input is preserved).
fn partition_of(sides: &Sides<'_>, kept: &[Datum<'_>], count: usize, f: &mut FunctionContext) -> Result<usize> {
    Ok(sides.build_key(kept, f)?.map_or(0, |(_, hash)| partition_of_hash(hash, count)))
}

impl ConsumeRow for Build<'_, '_> {
    /// Takes a row of the build input, already in the kept layout (its sink hands over
    /// only the kept columns).
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.take(values)
    }
}

impl Build<'_, '_> {
    /// Keeps `row` (in the kept layout) in memory or in its spilled partition; a row
    /// with a NULL key only when the build input is preserved.
    fn take(&mut self, row: &[Datum<'_>]) -> Result<()> {
        let key = self.sides.build_key(row, &mut self.f)?;
        let hash = match &key {
            Some((_, hash)) => *hash,
            None if self.sides.keep_build => 0,
            None => return Ok(()),
        };
        if let (Some(filter), Some(_)) = (&mut self.filter, &key) {
            filter.add(hash);
        }
        let Some(count) = self.spill.as_ref().map(|s| s.parts.len()) else {
            let key = key.as_ref().map(|(k, h)| (k, *h));
            let bytes = self.table.insert(row, key, self.sides, &mut self.f)?;
            self.total += bytes;
            self.hold(bytes);
            if self.held > self.area.limit {
                self.start_spilling()?;
            }
            return Ok(());
        };
        let p = if key.is_some() { partition_of_hash(hash, count) } else { 0 };
        let bytes = row_bytes(row);
        self.total += bytes;
        let spill = self.spill.as_mut().expect("spilling");
        let part = &mut spill.parts[p];
        part.total += bytes;
        match &mut part.build {
            Some(run) => run.push(row, &mut spill.file, spill.chunk),
            None => {
                part.rows.push(row);
                part.bytes += bytes;
                self.hold(bytes);
                self.spill_until_it_fits()
            }
        }
    }
}

/// The probe input's end: each row joined to the table of the build rows in memory, or
/// spilled beside its partition's build rows.
struct Probe<'e, 'j, 'r, 'a, 't> {
    emitter: &'e mut Emitter<'j, 'r, 'a>,
    sides: &'e Sides<'e>,
    table: &'e mut Table,
    spill: Option<&'e mut Spill<'t>>,
}

impl ConsumeRow for Probe<'_, '_, '_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        if self.emitter.stopped {
            return Ok(());
        }
        let key = self.sides.probe_key(values, &mut self.emitter.f)?;
        if let (Some((_, hash)), Some(spill)) = (&key, self.spill.as_deref_mut()) {
            let hash = *hash;
            let p = partition_of_hash(hash, spill.parts.len());
            let part = &mut spill.parts[p];
            if part.build.is_some() {
                return part.probe.push(values, &mut spill.file, spill.chunk);
            }
        }
        let any = match &key {
            Some((key, hash)) => self.emitter.probe(self.table, self.sides, values, key, *hash)?,
            None => false,
        };
        if any && self.sides.semi_probe && !self.emitter.stopped {
            let out = self.emitter.pair(Some(self.sides.probing.row(values)), None);
            self.emitter.emit(&out)?;
        }
        if !any && self.sides.keep_probe && !self.emitter.stopped {
            let out = self.emitter.pair(Some(self.sides.probing.row(values)), None);
            self.emitter.emit(&out)?;
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.emitter.stopped
    }
}

/// Runs `join` as a hash join building on its right input when `build_right`, pushing
/// its rows into `stages`.
pub(super) fn run(join: &Join, build_right: bool, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
    let started = Instant::now();
    let sides = Sides::of(join, build_right);
    let stats = ctx.access.stats;
    let area = ctx.workarea;
    let mut build = Build {
        sides: &sides,
        area,
        stats,
        f: ctx.functions.clone(),
        table: Table::new(sides.kept.only.len()),
        filter: None,
        held: 0,
        peak: 0,
        total: 0,
        spill: None,
    };
    // A join filter drops probe rows that join nothing: never where those are kept.
    let filter_spec = join.join_filter.as_ref().filter(|_| !sides.keep_probe);
    build.filter = filter_spec.map(|_| JoinFilterFill::default());
    run_filtered(sides.build, Some(&sides.kept.only), None, &mut build, ctx)?;
    let Build { mut f, table, filter, mut spill, peak, total, .. } = build;
    let filter = filter.map(JoinFilterFill::finish);
    if let Some(spill) = &mut spill {
        for part in &mut spill.parts {
            if let Some(run) = &mut part.build {
                run.flush(&mut spill.file)?;
            }
        }
    }
    let table = match &mut spill {
        None => table,
        Some(spill) => {
            let mut kept = KeptRows::new(sides.kept.only.len());
            for part in &mut spill.parts {
                let part_rows = std::mem::take(&mut part.rows);
                part_rows.iter().for_each(|row| _ = kept.push(row));
            }
            Table::of(kept, &sides, &mut f)?
        }
    };
    let mut table = table.ready(&sides);
    let meter = ctx.row_source_statistics.then_some(stats);
    let mut emitter = Emitter { join, build_right, rest: stages, f, stopped: false, meter };
    let mut probe = Probe { emitter: &mut emitter, sides: &sides, table: &mut table, spill: spill.as_mut() };
    let filter_stage = filter_spec.zip(filter.as_ref()).map(|(s, f)| JoinFilterStage::new(f, &s.probe_columns));
    run_filtered(sides.probe, Some(&sides.probing.only), filter_stage, &mut probe, ctx)?;
    // What the joined rows do from here on is outside every input's run.
    emitter.meter = None;
    if sides.keep_build && !emitter.stopped {
        emitter.unmatched_build(&table, &sides)?;
    }
    drop(table);
    let mut figures = WorkareaRun {
        operation_type: "HASH-JOIN",
        policy: area.policy.name(),
        limit: area.limit as u64,
        estimated_optimal_size: total as u64,
        estimated_onepass_size: total as u64,
        memory_used: peak as u64,
        ..Default::default()
    };
    // A build input that passed the area only with rows it then dropped (NULL keys)
    // spilled nothing: its execution was optimal.
    let spilled = spill.as_mut().filter(|s| s.parts.iter().any(|p| p.build.is_some()));
    if let Some(spill) = spilled {
        let (passes, held) = join_spilled(spill, &sides, area.limit, &mut emitter)?;
        let largest = spill.parts.iter().filter(|p| p.build.is_some()).map(|p| p.total).max().unwrap_or(0);
        figures.passes = passes.max(1);
        figures.memory_used = figures.memory_used.max(held as u64);
        figures.estimated_onepass_size = (largest + spill.parts.len() * spill.chunk) as u64;
        figures.tempseg_size = spill.file.bytes_written();
    }
    ctx.functions.random = emitter.f.random.clone();
    figures.active_time_us = started.elapsed().as_micros() as u64;
    figures.count(stats);
    join.workarea.set(Some(figures));
    Ok(())
}

/// Joins each spilled partition's build and probe rows: the build rows a work area's
/// worth at a time, the probe rows read once for each. Returns the most times one
/// partition's probe rows were read, and the most bytes held.
fn join_spilled(
    spill: &mut Spill<'_>,
    sides: &Sides<'_>,
    limit: usize,
    emitter: &mut Emitter<'_, '_, '_>,
) -> Result<(u32, usize)> {
    let (mut passes, mut most_held) = (0u32, 0usize);
    let Spill { file, parts, .. } = spill;
    for part in parts.iter_mut() {
        let Some(build_run) = part.build.as_mut() else { continue };
        part.probe.flush(file)?;
        if emitter.stopped {
            break;
        }
        if part.probe.rows == 0 && !sides.keep_build {
            continue;
        }
        // Which probe rows joined, all segments together: a preserved probe input's
        // unmatched rows are given after the last segment, a semi join's probe row once.
        let marked = sides.keep_probe || sides.semi_probe;
        let mut probe_matched = vec![false; if marked { part.probe.rows as usize } else { 0 }];
        let chunks = build_run.chunk_count();
        let (mut next, mut reads) = (0, 0u32);
        while next < chunks && !emitter.stopped {
            // One segment: the build rows of as many chunks as fit, at least one.
            let (mut segment, mut held) = (KeptRows::new(sides.kept.only.len()), 0usize);
            while next < chunks && (segment.len() == 0 || held < limit) {
                build_run.for_each_in_chunk(file, next, |row| {
                    held += segment.push(row);
                    Ok(true)
                })?;
                next += 1;
            }
            most_held = most_held.max(held);
            let last = next == chunks;
            let mut table = Table::of(segment, sides, &mut emitter.f)?.ready(sides);
            let mut i = 0;
            reads += 1;
            part.probe.for_each(file, |row| {
                let given = sides.semi_probe && probe_matched[i];
                let any = match sides.probe_key(row, &mut emitter.f)? {
                    Some((key, hash)) if !given => emitter.probe(&mut table, sides, row, &key, hash)?,
                    _ => false,
                };
                if let Some(m) = probe_matched.get_mut(i) {
                    *m |= any;
                    let give = if sides.semi_probe { any } else { last && !*m };
                    if give && !emitter.stopped {
                        let out = emitter.pair(Some(sides.probing.row(row)), None);
                        emitter.emit(&out)?;
                    }
                }
                i += 1;
                Ok(!emitter.stopped)
            })?;
            if sides.keep_build && !emitter.stopped {
                emitter.unmatched_build(&table, sides)?;
            }
        }
        passes = passes.max(reads);
    }
    Ok((passes, most_held))
}

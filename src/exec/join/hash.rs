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
//! strings, and a probe hashes its key once, borrowed from the probe row.
//!
//! Invariants:
//! - every build row is in exactly one place: the table of the rows in memory, or one
//!   spilled partition; a probe row whose key's partition spilled is joined only when
//!   that partition is, so each pair is found once;
//! - build and probe rows of one key land in one partition (one fixed hash of the key's
//!   values, which the planner gives one type family per pair);
//! - rows with a NULL key join nothing: a build one is kept only when the build input is
//!   preserved (an outer join) and is then given back with NULLs, in partition 0;
//! - the memory held (rows as estimated by [`row_bytes`], and the write buffers of
//!   spilled partitions) stays within the area's limit except for one segment's last
//!   row, or a partition whose write buffers alone pass it;
//! - with a join filter, every build row's key is in it before the first probe row is
//!   read, and the probe scan drops the rows it excludes ([`crate::exec::join_filter`]);
//! - what the work area did goes to `Join::workarea` and the session's
//!   `workarea executions - ...` statistics once per execution.

use super::{Join, JoinInput, NOT_KEPT, Pair, SideRow, run_build, run_filtered};
use crate::access::{Flow, RowAccess};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::downstream::ConsumeRow;
use crate::exec::join_filter::JoinFilterStage;
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
use std::hash::BuildHasher;
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
/// The seeds of the partitioning hash and of the table's: fixed, and not one another's
/// (a partition's keys share their hash's high bits, which the table's slots must not).
const PARTITION_SEED: u64 = 0x243f_6a88_85a3_08d3;
const TABLE_SEED: u64 = 0x1319_8a2e_0370_7344;
/// Bytes a build row adds to the table beyond its values: its link to the next row of
/// its key (4), and a share of the slots (a 16-byte chain and its control byte, the
/// table at most seven eighths full).
const TABLE_BYTES_A_ROW: usize = 24;
/// The end of a chain.
const END: u32 = u32::MAX;

/// A key's values, borrowed from the row they were computed over.
type Key<'v> = SmallVec<[Datum<'v>; 4]>;

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

/// The hash of `key` with `seed`: the same for equal keys whoever holds their strings.
fn hash_key(key: &[Datum<'_>], seed: u64) -> u64 {
    foldhash::fast::FixedState::with_seed(seed).hash_one(key)
}

/// The partition of the rows whose key hashes to `hash` (with [`PARTITION_SEED`]).
fn partition(hash: u64, partitions: usize) -> usize {
    // The hash's high bits choose: the low bits of a folded multiply are its weakest.
    ((u128::from(hash) * partitions as u128) >> 64) as usize
}

/// Bytes a kept build row takes in memory, as the work area counts them: its values,
/// their strings, and its share of the table.
fn row_bytes(row: &[Datum<'_>]) -> usize {
    let strings: usize = row.iter().map(|v| if let Datum::Str(s) = v { s.len() } else { 0 }).sum();
    std::mem::size_of_val(row) + strings + TABLE_BYTES_A_ROW
}

/// Which input builds, and what each side keeps.
struct Sides<'j> {
    build: &'j JoinInput,
    probe: &'j JoinInput,
    build_keys: &'j [Expr],
    probe_keys: &'j [Expr],
    keep_build: bool,
    keep_probe: bool,
    /// The build input's columns a kept row holds, in order.
    kept: Vec<usize>,
    /// Where each build input column is in a kept row ([`NOT_KEPT`] when it is not).
    slots: Vec<u32>,
    /// Where each build key is in a kept row, when every one is a column.
    key_slots: Option<Vec<usize>>,
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
        let kept: Vec<usize> = match &build.used {
            None => (0..build.read).collect(),
            Some(used) => (0..build.read).filter(|&c| used[c]).collect(),
        };
        let mut slots = vec![NOT_KEPT; build.read];
        for (i, &c) in kept.iter().enumerate() {
            slots[c] = i as u32;
        }
        let key_slots = build_keys
            .iter()
            .map(|k| match k {
                Expr::Column(c) => slots.get(*c).filter(|&&s| s != NOT_KEPT).map(|&s| s as usize),
                _ => None,
            })
            .collect();
        Sides { build, probe, build_keys, probe_keys, keep_build, keep_probe, kept, slots, key_slots }
    }

    /// A kept build row as the build input's row.
    fn build_row<'x, 'v>(&'x self, kept: &'x [Datum<'v>]) -> SideRow<'x, 'v> {
        SideRow { values: kept, slots: Some(&self.slots) }
    }

    /// Whether kept build row `kept` has the key `key`.
    fn build_key_is(&self, kept: &[Value], key: &[Datum<'_>], f: &mut FunctionContext) -> Result<bool> {
        match &self.key_slots {
            Some(slots) => Ok(slots.iter().zip(key).all(|(&s, k)| kept[s] == *k)),
            None => {
                let row = self.build_row(kept);
                Ok(key_of(self.build_keys, &row, f)?.is_some_and(|own| own.as_slice() == key))
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

/// The table of some build rows.
struct Table {
    rows: KeptRows,
    /// Each key's chain of rows, by the key's hash.
    chains: HashTable<Chain>,
    /// The next row of each row's key, or [`END`].
    next: Vec<u32>,
    /// Which rows joined a probe row (only when the build input is preserved).
    matched: Vec<bool>,
}

impl Table {
    fn of(rows: KeptRows, sides: &Sides<'_>, f: &mut FunctionContext) -> Result<Table> {
        let mut chains: HashTable<Chain> = HashTable::with_capacity(rows.len());
        let mut next = vec![END; rows.len()];
        let mut failed = None;
        for (i, kept) in rows.iter().enumerate() {
            let i = i as u32;
            let row = sides.build_row(kept);
            let Some(key) = key_of(sides.build_keys, &row, f)? else { continue };
            let hash = hash_key(&key, TABLE_SEED);
            let same_key = |c: &Chain| {
                c.hash == hash
                    && sides.build_key_is(rows.row(c.first as usize), &key, f).unwrap_or_else(|e| {
                        failed = Some(e);
                        false
                    })
            };
            match chains.find_mut(hash, same_key) {
                Some(chain) => {
                    next[chain.last as usize] = i;
                    chain.last = i;
                }
                None => {
                    chains.insert_unique(hash, Chain { hash, first: i, last: i }, |c| c.hash);
                }
            }
            if let Some(e) = failed.take() {
                return Err(e);
            }
        }
        let matched = vec![false; if sides.keep_build { rows.len() } else { 0 }];
        Ok(Table { rows, chains, next, matched })
    }

    /// The first row of the chain of key `key`.
    fn first_of(&self, key: &[Datum<'_>], sides: &Sides<'_>, f: &mut FunctionContext) -> Result<Option<u32>> {
        let hash = hash_key(key, TABLE_SEED);
        let mut failed = None;
        let found = self.chains.find(hash, |c| {
            c.hash == hash
                && sides.build_key_is(self.rows.row(c.first as usize), key, f).unwrap_or_else(|e| {
                    failed = Some(e);
                    false
                })
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(found.map(|c| c.first)),
        }
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
    fn pair<'x, 'v>(&self, probe: Option<&'x [Datum<'v>]>, build: Option<SideRow<'x, 'v>>) -> Pair<'x, 'v> {
        let probe = probe.map(SideRow::whole).unwrap_or_default();
        let build = build.unwrap_or_default();
        let (left, right) = if self.build_right { (probe, build) } else { (build, probe) };
        Pair { left, right, left_width: self.join.left.width }
    }

    fn emit<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<()> {
        self.stopped = self.join.emit_metered(row, self.rest, &mut self.f, self.meter)? == Flow::Stop;
        Ok(())
    }

    /// Joins `probe` (whose key is `key`) to the rows of `table` with that key; returns
    /// whether any pair met the residual condition.
    fn probe(&mut self, table: &mut Table, sides: &Sides<'_>, probe: &[Datum<'_>], key: &[Datum<'_>]) -> Result<bool> {
        let Some(mut b) = table.first_of(key, sides, &mut self.f)? else { return Ok(false) };
        let mut any = false;
        loop {
            let out = self.pair(Some(probe), Some(sides.build_row(table.rows.row(b as usize))));
            if self.join.residual_holds(&out, &mut self.f)? {
                any = true;
                if let Some(m) = table.matched.get_mut(b as usize) {
                    *m = true;
                }
                self.emit(&out)?;
                if self.stopped {
                    break;
                }
            }
            b = table.next[b as usize];
            if b == END {
                break;
            }
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
    /// The rows, while nothing spilled.
    rows: KeptRows,
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
        let width = self.sides.kept.len();
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
        let rows = std::mem::take(&mut self.rows);
        for row in rows.iter() {
            let Some(p) = partition_of(self.sides, row, count, &mut self.f)? else { continue };
            let part = &mut parts[p];
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

/// The partition of kept build row `kept`: its key's, or 0 for a NULL key; `None` when
/// the row is not kept (a NULL key, of an input not preserved).
fn partition_of(sides: &Sides<'_>, kept: &[Datum<'_>], count: usize, f: &mut FunctionContext) -> Result<Option<usize>> {
    let row = sides.build_row(kept);
    Ok(match key_of(sides.build_keys, &row, f)? {
        Some(key) => Some(partition(hash_key(&key, PARTITION_SEED), count)),
        None => sides.keep_build.then_some(0),
    })
}

impl ConsumeRow for Build<'_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        let row: SmallVec<[Datum<'_>; 16]> =
            self.sides.kept.iter().map(|&c| values.get(c).map_or(Datum::Null, super::borrowed)).collect();
        self.take(&row)
    }
}

impl Build<'_, '_> {
    /// Keeps `row` (in the kept layout) in memory or in its spilled partition.
    fn take(&mut self, row: &[Datum<'_>]) -> Result<()> {
        let Some(count) = self.spill.as_ref().map(|s| s.parts.len()) else {
            let bytes = self.rows.push(row);
            self.total += bytes;
            self.hold(bytes);
            if self.held > self.area.limit {
                self.start_spilling()?;
            }
            return Ok(());
        };
        let Some(p) = partition_of(self.sides, row, count, &mut self.f)? else { return Ok(()) };
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
        let key = key_of(self.sides.probe_keys, values, &mut self.emitter.f)?;
        if let (Some(key), Some(spill)) = (&key, self.spill.as_deref_mut()) {
            let p = partition(hash_key(key, PARTITION_SEED), spill.parts.len());
            let part = &mut spill.parts[p];
            if part.build.is_some() {
                return part.probe.push(values, &mut spill.file, spill.chunk);
            }
        }
        let any = match &key {
            Some(key) => self.emitter.probe(self.table, self.sides, values, key)?,
            None => false,
        };
        if !any && self.sides.keep_probe && !self.emitter.stopped {
            let out = self.emitter.pair(Some(values), None);
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
        rows: KeptRows::new(sides.kept.len()),
        held: 0,
        peak: 0,
        total: 0,
        spill: None,
    };
    // A join filter drops probe rows that join nothing: never where those are kept.
    let filter_spec = join.join_filter.as_ref().filter(|_| !sides.keep_probe);
    let filter = run_build(filter_spec, sides.build, sides.build_keys, &mut build, ctx)?;
    let Build { mut f, rows, mut spill, peak, total, .. } = build;
    if let Some(spill) = &mut spill {
        for part in &mut spill.parts {
            if let Some(run) = &mut part.build {
                run.flush(&mut spill.file)?;
            }
        }
    }
    let in_memory = match &mut spill {
        None => rows,
        Some(spill) => {
            let mut kept = KeptRows::new(sides.kept.len());
            for part in &mut spill.parts {
                let part_rows = std::mem::take(&mut part.rows);
                part_rows.iter().for_each(|row| _ = kept.push(row));
            }
            kept
        }
    };
    let mut table = Table::of(in_memory, &sides, &mut f)?;
    let meter = ctx.row_source_statistics.then_some(stats);
    let mut emitter = Emitter { join, build_right, rest: stages, f, stopped: false, meter };
    let mut probe = Probe { emitter: &mut emitter, sides: &sides, table: &mut table, spill: spill.as_mut() };
    let filter_stage = filter_spec.zip(filter.as_ref()).map(|(s, f)| JoinFilterStage::new(f, &s.probe_columns));
    run_filtered(sides.probe, filter_stage, &mut probe, ctx)?;
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
        let mut probe_matched = vec![false; if sides.keep_probe { part.probe.rows as usize } else { 0 }];
        let chunks = build_run.chunk_count();
        let (mut next, mut reads) = (0, 0u32);
        while next < chunks && !emitter.stopped {
            // One segment: the build rows of as many chunks as fit, at least one.
            let (mut segment, mut held) = (KeptRows::new(sides.kept.len()), 0usize);
            while next < chunks && (segment.len() == 0 || held < limit) {
                build_run.for_each_in_chunk(file, next, |row| {
                    held += segment.push(row);
                    Ok(true)
                })?;
                next += 1;
            }
            most_held = most_held.max(held);
            let last = next == chunks;
            let mut table = Table::of(segment, sides, &mut emitter.f)?;
            let mut i = 0;
            reads += 1;
            part.probe.for_each(file, |row| {
                let any = match key_of(sides.probe_keys, row, &mut emitter.f)? {
                    Some(key) => emitter.probe(&mut table, sides, row, &key)?,
                    None => false,
                };
                if let Some(m) = probe_matched.get_mut(i) {
                    *m |= any;
                    if last && !*m && !emitter.stopped {
                        let out = emitter.pair(Some(row), None);
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

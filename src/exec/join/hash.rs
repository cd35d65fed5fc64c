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

use super::{Join, JoinInput, JoinedRow, joined, key_of, run_build, run_filtered};
use crate::access::Flow;
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
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::time::Instant;

/// A hash join's table: each key of the build rows and the rows that have it (by their
/// place in the rows kept). Hashed with foldhash: the keys are the query's own values,
/// and SipHash's defence against chosen keys would cost every row.
type KeyTable = HashMap<Vec<Value>, Vec<u32>, foldhash::fast::RandomState>;

/// Partitions a spilling join hashes its rows into: as many as write buffers of
/// [`MIN_CHUNK`] bytes fill half the work area, within these bounds (more partitions,
/// smaller ones: the more likely each fits when read back).
const MIN_PARTITIONS: usize = 4;
const MAX_PARTITIONS: usize = 64;
/// The write call of one partition's run: an eighth of the area over the partitions,
/// within these bounds.
const MIN_CHUNK: usize = 8 << 10;
const MAX_CHUNK: usize = 256 << 10;
/// The seed of the partitioning hash: fixed, and not the table's.
const PARTITION_SEED: u64 = 0x243f_6a88_85a3_08d3;

/// Bytes a build row takes in memory, as the work area counts them: the row's vector,
/// its values and their strings, and its share of the table (a copy of the key's values
/// and the row's place).
fn row_bytes(row: &[Value], keys: usize) -> usize {
    let values =
        std::mem::size_of_val(row) + row.iter().map(|v| if let Datum::Str(s) = v { s.len() } else { 0 }).sum::<usize>();
    let table = std::mem::size_of::<Vec<Value>>() + keys * std::mem::size_of::<Value>() + 16;
    std::mem::size_of::<Vec<Value>>() + values + table
}

/// The partition of the rows with key `key`.
fn partition(key: &[Value], partitions: usize) -> usize {
    let hash = foldhash::fast::FixedState::with_seed(PARTITION_SEED).hash_one(key);
    // The hash's high bits choose: the low bits of a folded multiply are its weakest.
    ((u128::from(hash) * partitions as u128) >> 64) as usize
}

/// Which input builds, and what each side keeps.
struct Sides<'j> {
    build: &'j JoinInput,
    probe: &'j JoinInput,
    build_keys: &'j [Expr],
    probe_keys: &'j [Expr],
    keep_build: bool,
    keep_probe: bool,
}

impl<'j> Sides<'j> {
    fn of(join: &'j Join, build_right: bool) -> Sides<'j> {
        if build_right {
            Sides {
                build: &join.right,
                probe: &join.left,
                build_keys: &join.right_keys,
                probe_keys: &join.left_keys,
                keep_build: join.kind.keeps_right(),
                keep_probe: join.kind.keeps_left(),
            }
        } else {
            Sides {
                build: &join.left,
                probe: &join.right,
                build_keys: &join.left_keys,
                probe_keys: &join.right_keys,
                keep_build: join.kind.keeps_left(),
                keep_probe: join.kind.keeps_right(),
            }
        }
    }
}

/// The table of some build rows.
struct Table {
    rows: Vec<Vec<Value>>,
    keys: KeyTable,
    /// Which rows joined a probe row (only when the build input is preserved).
    matched: Vec<bool>,
}

impl Table {
    fn of(rows: Vec<Vec<Value>>, sides: &Sides<'_>, f: &mut FunctionContext) -> Result<Table> {
        let mut keys: KeyTable = HashMap::default();
        let mut key = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if key_of(sides.build_keys, row, f, &mut key)? {
                keys.entry(std::mem::take(&mut key)).or_default().push(i as u32);
            }
        }
        let matched = vec![false; if sides.keep_build { rows.len() } else { 0 }];
        Ok(Table { rows, keys, matched })
    }
}

/// Where joined rows go: the stages above the join.
struct Emitter<'j, 'r, 'a> {
    join: &'j Join,
    build_right: bool,
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
}

impl Emitter<'_, '_, '_> {
    fn pair<'x>(&self, probe: Option<&'x [Datum<'_>]>, build: Option<&'x [Datum<'_>]>) -> JoinedRow<'x> {
        let (lw, rw) = (self.join.left.width, self.join.right.width);
        if self.build_right { joined(probe, lw, build, rw) } else { joined(build, lw, probe, rw) }
    }

    fn emit(&mut self, row: &[Datum<'_>]) -> Result<()> {
        self.stopped = self.join.emit(row, self.rest, &mut self.f)? == Flow::Stop;
        Ok(())
    }

    /// Joins `probe` (whose key is `key`) to the rows of `table` with that key; returns
    /// whether any pair met the residual condition.
    fn probe(&mut self, table: &mut Table, probe: &[Datum<'_>], key: &[Value]) -> Result<bool> {
        let Some(hits) = table.keys.get(key) else { return Ok(false) };
        let mut any = false;
        for &b in hits {
            let out = self.pair(Some(probe), Some(table.rows[b as usize].as_slice()));
            if !self.join.residual_holds(&out, &mut self.f)? {
                continue;
            }
            any = true;
            if let Some(m) = table.matched.get_mut(b as usize) {
                *m = true;
            }
            self.emit(&out)?;
            if self.stopped {
                break;
            }
        }
        Ok(any)
    }

    /// The build rows of a preserved build input that joined nothing, with NULLs.
    fn unmatched_build(&mut self, table: &Table) -> Result<()> {
        for (row, _) in table.rows.iter().zip(&table.matched).filter(|(_, m)| !**m) {
            if self.stopped {
                break;
            }
            let out = self.pair(None, Some(row));
            self.emit(&out)?;
        }
        Ok(())
    }
}

/// One partition of a spilling join.
#[derive(Default)]
struct Partition {
    /// Its build rows in memory (none once it spilled).
    rows: Vec<Vec<Value>>,
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
    key: Vec<Value>,
    /// The rows, while nothing spilled.
    rows: Vec<Vec<Value>>,
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
        let mut parts: Vec<Partition> = (0..count).map(|_| Partition::default()).collect();
        let keys = self.sides.build_keys.len();
        self.held = 0;
        for row in std::mem::take(&mut self.rows) {
            let Some(p) = self.partition_of(&row, count)? else { continue };
            let bytes = row_bytes(&row, keys);
            let part = &mut parts[p];
            part.rows.push(row);
            part.bytes += bytes;
            part.total += bytes;
            self.held += bytes;
        }
        self.spill = Some(Spill { file, chunk, parts });
        self.spill_until_it_fits()
    }

    /// The partition of build row `row`: its key's, or 0 for a NULL key; `None` when the
    /// row is not kept (a NULL key, of an input not preserved).
    fn partition_of(&mut self, row: &[Datum<'_>], count: usize) -> Result<Option<usize>> {
        if key_of(self.sides.build_keys, row, &mut self.f, &mut self.key)? {
            Ok(Some(partition(&self.key, count)))
        } else {
            Ok(self.sides.keep_build.then_some(0))
        }
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
            for row in &part.rows {
                run.push(row, &mut spill.file, spill.chunk)?;
            }
            self.held = self.held - part.bytes + spill.chunk;
            part.rows = Vec::new();
            part.bytes = 0;
            part.build = Some(run);
        }
        Ok(())
    }
}

impl ConsumeRow for Build<'_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        let row: Vec<Value> = values.iter().map(|v| v.clone().into_owned()).collect();
        let bytes = row_bytes(&row, self.sides.build_keys.len());
        let Some(count) = self.spill.as_ref().map(|s| s.parts.len()) else {
            self.total += bytes;
            self.rows.push(row);
            self.hold(bytes);
            if self.held > self.area.limit {
                self.start_spilling()?;
            }
            return Ok(());
        };
        let Some(p) = self.partition_of(&row, count)? else { return Ok(()) };
        self.total += bytes;
        let spill = self.spill.as_mut().expect("spilling");
        let part = &mut spill.parts[p];
        part.total += bytes;
        match &mut part.build {
            Some(run) => run.push(&row, &mut spill.file, spill.chunk),
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
    key: Vec<Value>,
}

impl ConsumeRow for Probe<'_, '_, '_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        if self.emitter.stopped {
            return Ok(());
        }
        let has_key = key_of(self.sides.probe_keys, values, &mut self.emitter.f, &mut self.key)?;
        if has_key && let Some(spill) = self.spill.as_deref_mut() {
            let p = partition(&self.key, spill.parts.len());
            let part = &mut spill.parts[p];
            if part.build.is_some() {
                return part.probe.push(values, &mut spill.file, spill.chunk);
            }
        }
        let any = has_key && self.emitter.probe(self.table, values, &self.key)?;
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
        key: Vec::new(),
        rows: Vec::new(),
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
        Some(spill) => spill.parts.iter_mut().flat_map(|p| std::mem::take(&mut p.rows)).collect(),
    };
    let mut table = Table::of(in_memory, &sides, &mut f)?;
    let mut emitter = Emitter { join, build_right, rest: stages, f, stopped: false };
    let mut probe =
        Probe { emitter: &mut emitter, sides: &sides, table: &mut table, spill: spill.as_mut(), key: Vec::new() };
    let filter_stage = filter_spec.zip(filter.as_ref()).map(|(s, f)| JoinFilterStage::new(f, &s.probe_columns));
    run_filtered(sides.probe, filter_stage, &mut probe, ctx)?;
    if sides.keep_build && !emitter.stopped {
        emitter.unmatched_build(&table)?;
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
    if let Some(spill) = &mut spill {
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
    let keys = sides.build_keys.len();
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
            let (mut segment, mut held) = (Vec::new(), 0usize);
            while next < chunks && (segment.is_empty() || held < limit) {
                build_run.for_each_in_chunk(file, next, |row| {
                    held += row_bytes(row, keys);
                    segment.push(row.to_vec());
                    Ok(true)
                })?;
                next += 1;
            }
            most_held = most_held.max(held);
            let last = next == chunks;
            let mut table = Table::of(segment, sides, &mut emitter.f)?;
            let mut key = Vec::new();
            let mut i = 0;
            reads += 1;
            part.probe.for_each(file, |row| {
                let has_key = key_of(sides.probe_keys, row, &mut emitter.f, &mut key)?;
                let any = has_key && emitter.probe(&mut table, row, &key)?;
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
                emitter.unmatched_build(&table)?;
            }
        }
        passes = passes.max(reads);
    }
    Ok((passes, most_held))
}

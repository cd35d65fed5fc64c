//! TABLE ACCESS INMEMORY FULL: a full scan that answers from the column store's units
//! what they hold for the statement's snapshot, and reads the rest from the buffer cache.
//!
//! ```text
//!  units usable at the snapshot ── rows not in journaled blocks ── predicates on the
//!       │                            (a bitmap per unit)          encoded columns (SIMD)
//!       │                                                                │
//!       │                              count-only plan: popcounts ◄──────┤
//!       │                              any other plan: rows decoded ◄────┘ → stages
//!  buffer cache: journaled blocks, units not usable, blocks no unit covers → full scan
//! ```
//!
//! Conjuncts of the WHERE clause that compare a column with a literal (`=`, `<`, `<=`,
//! `>`, `>=`, BETWEEN, IN, IS \[NOT\] NULL) are evaluated on the encoded values; min/max
//! of a unit's column prune the unit when they show no row can match, and skip the
//! codes of a column they show every row passes (unless the `NO_INMEMORY_PRUNING` hint:
//! then every conjunct reads its codes). A plan that only counts (COUNT(*), COUNT(column), no
//! GROUP BY) over conjuncts that all run on the encoded values never decodes a value;
//! any other plan gets the kept rows decoded and filtered again by the WHERE clause, so
//! results never depend on which conjuncts ran where.

use super::bitmap::Bitmap;
use super::cu::CuPredicate;
use super::imcu::{Imcu, ValueKind};
use super::simd::Isa;
use crate::access::full_scan::Flow;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::exec::aggregate::CountShape;
use crate::exec::{ExecContext, Stage};
use crate::sql::expr::{CmpOp, Expr};
use crate::stats::Stat;
use crate::storage::segment::ExtentRun;
use crate::types::{DataType, Datum, Value};
use std::ops::Bound;
use std::sync::Arc;

/// An in-memory full scan, ready to run.
#[derive(Debug)]
pub struct InMemoryAccess {
    pub table: Arc<TableDef>,
    /// Table columns the plan reads.
    pub columns_read: Vec<bool>,
    /// Whether min/max may skip units.
    pub prune: bool,
}

/// A conjunct that compares one column with literals.
#[derive(Debug, Clone)]
enum Term {
    /// `lo <= col <= hi` (each end open when `None`, strict when the flag says so).
    Range {
        column: usize,
        lo: Option<(Value, bool)>,
        hi: Option<(Value, bool)>,
    },
    In {
        column: usize,
        values: Vec<Value>,
    },
    Null {
        column: usize,
        negated: bool,
    },
}

impl Term {
    fn column(&self) -> usize {
        match self {
            Term::Range { column, .. } | Term::In { column, .. } | Term::Null { column, .. } => *column,
        }
    }
}

/// What a unit's columns need to run a term: the column's kind and type there.
fn predicate(term: &Term, kind: ValueKind, data_type: DataType) -> Option<CuPredicate> {
    match term {
        Term::Null { negated, .. } => Some(if *negated { CuPredicate::IsNotNull } else { CuPredicate::IsNull }),
        Term::Range { lo, hi, .. } => match kind {
            ValueKind::Int | ValueKind::Date => {
                let lo = match lo {
                    None => i64::MIN,
                    Some((v, strict)) => whole(v, kind)?.checked_add(i64::from(*strict))?,
                };
                let hi = match hi {
                    None => i64::MAX,
                    Some((v, strict)) => whole(v, kind)?.checked_sub(i64::from(*strict))?,
                };
                Some(CuPredicate::IntRange { lo, hi })
            }
            ValueKind::Text | ValueKind::NumberKey => {
                let bound = |end: &Option<(Value, bool)>| -> Option<Bound<Vec<u8>>> {
                    Some(match end {
                        None => Bound::Unbounded,
                        Some((v, true)) => Bound::Excluded(key(v, kind, data_type)?),
                        Some((v, false)) => Bound::Included(key(v, kind, data_type)?),
                    })
                };
                Some(CuPredicate::KeyRange { lo: bound(lo)?, hi: bound(hi)? })
            }
        },
        Term::In { values, .. } => match kind {
            ValueKind::Int | ValueKind::Date => {
                Some(CuPredicate::IntIn(values.iter().map(|v| whole(v, kind)).collect::<Option<_>>()?))
            }
            _ => Some(CuPredicate::KeyIn(values.iter().map(|v| key(v, kind, data_type)).collect::<Option<_>>()?)),
        },
    }
}

/// A literal as the whole number an Int or Date unit compares.
fn whole(v: &Value, kind: ValueKind) -> Option<i64> {
    match (kind, v) {
        (ValueKind::Int, Datum::Int(i)) | (ValueKind::Date, Datum::Date(i)) => Some(*i),
        _ => None,
    }
}

/// A literal as the bytes a Text or NumberKey unit compares.
fn key(v: &Value, kind: ValueKind, data_type: DataType) -> Option<Vec<u8>> {
    match (kind, v) {
        // CHAR compares blank-padded: left to the row path.
        (ValueKind::Text, Datum::Str(s)) if matches!(data_type, DataType::Varchar2 { .. }) && !s.is_empty() => {
            Some(s.as_bytes().to_vec())
        }
        (ValueKind::NumberKey, Datum::Int(_) | Datum::Num(_)) => {
            let mut out = Vec::new();
            crate::index::key::encode_value(v, data_type, &mut out).ok()?;
            Some(out)
        }
        _ => None,
    }
}

/// The conjuncts of `predicate` that are column-vs-literal terms, and whether every
/// conjunct is one.
fn terms(predicate: &Expr) -> (Vec<Term>, bool) {
    let mut conjuncts = Vec::new();
    split_and(predicate, &mut conjuncts);
    let mut out = Vec::new();
    let mut all = true;
    for c in conjuncts {
        match term(c) {
            Some(t) => out.push(t),
            None => all = false,
        }
    }
    (out, all)
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::And(l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        other => out.push(other),
    }
}

fn literal(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Literal(v) if !v.is_null() => Some(v),
        _ => None,
    }
}

fn term(e: &Expr) -> Option<Term> {
    Some(match e {
        Expr::Compare { op, left, right } => {
            let (column, value, op) = match (&**left, &**right) {
                (Expr::Column(c), r) => (*c, literal(r)?, *op),
                (l, Expr::Column(c)) => (*c, literal(l)?, op.flipped()),
                _ => return None,
            };
            let v = Some((value.clone(), false));
            let strict = Some((value.clone(), true));
            match op {
                CmpOp::Eq => Term::Range { column, lo: v.clone(), hi: v },
                CmpOp::Lt => Term::Range { column, lo: None, hi: strict },
                CmpOp::LtEq => Term::Range { column, lo: None, hi: v },
                CmpOp::Gt => Term::Range { column, lo: strict, hi: None },
                CmpOp::GtEq => Term::Range { column, lo: v, hi: None },
                _ => return None,
            }
        }
        Expr::Between { expr, low, high, negated: false } => match &**expr {
            Expr::Column(c) => Term::Range {
                column: *c,
                lo: Some((literal(low)?.clone(), false)),
                hi: Some((literal(high)?.clone(), false)),
            },
            _ => return None,
        },
        Expr::InList { expr, list, negated: false } => match &**expr {
            Expr::Column(c) => {
                Term::In { column: *c, values: list.iter().map(|e| literal(e).cloned()).collect::<Option<_>>()? }
            }
            _ => return None,
        },
        Expr::IsNull { expr, negated } => match &**expr {
            Expr::Column(c) => Term::Null { column: *c, negated: *negated },
            _ => return None,
        },
        _ => return None,
    })
}

/// The plan's shape as the scan sees it.
struct Shape {
    terms: Vec<Term>,
    /// Every conjunct of the WHERE clause is a term.
    all_terms: bool,
    /// The counts of a count-only aggregate after the filter, if the plan is one.
    counts: Option<Vec<CountShape>>,
}

impl Shape {
    fn of(stages: &[Stage<'_>]) -> Shape {
        let plain: Vec<&Stage<'_>> = stages.iter().filter(|s| !matches!(s, Stage::Probe(_))).collect();
        let (terms, all_terms, rest) = match plain.split_first() {
            Some((Stage::Filter(f), rest)) => {
                let (t, all) = terms(&f.predicate);
                (t, all, rest)
            }
            _ => (Vec::new(), true, &plain[..]),
        };
        let counts = match rest.first() {
            Some(Stage::Aggregate(a)) => a.count_shapes(),
            _ => None,
        };
        Shape { terms, all_terms, counts }
    }
}

/// A unit the scan uses, and the blocks of it the scan reads from the cache instead.
struct UsableUnit {
    imcu: Arc<Imcu>,
    journaled: Vec<u32>,
}

impl InMemoryAccess {
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let db = ctx.access.db;
        // DDL that frees the table's blocks waits for the whole scan (the cache part takes
        // the lock again, recursively).
        let locks = db.table_locks(self.table.object_id);
        let _visible = locks.visibility.read_recursive();
        // The table as it is now: a table no longer INMEMORY (or dropped) since planning
        // gets no segment.
        let current = db.catalog.table(&self.table.name).filter(|t| t.object_id == self.table.object_id);
        let Some(segment) = current.as_ref().and_then(|t| db.inmemory.segment_for(t)) else {
            return crate::exec::Source::scan_table(&self.table, &self.columns_read, None, stages, ctx);
        };
        let snapshot = ctx.access.reader.snapshot;
        let stats = ctx.access.stats;
        stats.add(Stat::ImScanSegments, 1);
        // What the units hold for this snapshot; the rest goes to the cache.
        let mut usable = Vec::new();
        let mut cache_blocks: Vec<u32> = Vec::new();
        let units: Vec<_> = segment.units.read().clone();
        let mut unpopulated = false;
        for unit in &units {
            let state = unit.state.lock();
            match &state.imcu {
                Some(imcu) if imcu.population_scn <= snapshot => {
                    let journaled: Vec<u32> = state.journal.blocks.iter().copied().collect();
                    cache_blocks.extend(journaled.iter().map(|&b| unit.blocks[b as usize]));
                    usable.push(UsableUnit { imcu: imcu.clone(), journaled });
                }
                other => {
                    unpopulated |= other.is_none() && !state.queued;
                    cache_blocks.extend_from_slice(&unit.blocks);
                }
            }
        }
        // Blocks no unit covers: the table grew since it was planned (or never was).
        let map = crate::access::segments::read_map(&ctx.access, &self.table)?;
        let all_runs = map.scan_runs(db.extent_blocks);
        // From the units this scan took: a unit planned since is read from the cache.
        let planned = units.last().map_or(0, |u| u.first_position as usize + u.blocks.len());
        let total: usize = all_runs.iter().map(|r| r.blocks as usize).sum();
        if total > planned || unpopulated {
            // Population on first access (PRIORITY NONE), or of what was added since.
            db.inmemory.queue_plan(&segment);
            super::populate::ensure_workers(db);
        }
        cache_blocks.extend(all_runs.iter().flat_map(|r| r.first..r.first + r.blocks).skip(planned));

        let shape = Shape::of(stages);
        let isa = Isa::best();
        let mut passed = 0u64;
        let mut counted = vec![0u64; shape.counts.as_ref().map_or(0, Vec::len)];
        let mut stopped = false;
        for unit in &usable {
            if stopped {
                break;
            }
            let imcu = &unit.imcu;
            stats.add(Stat::ImScanCus, 1);
            let predicates: Vec<(usize, Option<CuPredicate>)> = shape
                .terms
                .iter()
                .map(|t| {
                    let column = imcu.columns[t.column()].as_ref();
                    (t.column(), column.and_then(|c| predicate(t, c.kind, c.data_type)))
                })
                .collect();
            if self.prune
                && predicates.iter().any(|(c, p)| {
                    p.as_ref().is_some_and(|p| imcu.columns[*c].as_ref().is_some_and(|col| col.unit.excludes(p)))
                })
            {
                stats.add(Stat::ImScanCusPruned, 1);
                continue;
            }
            let mut keep = Bitmap::all(imcu.rows);
            let mut journal_rows = 0u64;
            for &b in &unit.journaled {
                let (from, to) = (imcu.block_rows[b as usize] as usize, imcu.block_rows[b as usize + 1] as usize);
                for row in from..to {
                    keep.clear(row);
                }
                journal_rows += (to - from) as u64;
            }
            stats.add(Stat::ImScanRows, imcu.rows as u64);
            stats.add(Stat::ImScanRowsValid, imcu.rows as u64 - journal_rows);
            stats.add(Stat::ImScanRowsJournal, journal_rows);
            for (c, p) in &predicates {
                if let (Some(p), Some(col)) = (p, imcu.columns[*c].as_ref()) {
                    col.unit.filter_with(p, &mut keep, isa, self.prune);
                }
            }
            let every_term_ran = shape.all_terms && predicates.iter().all(|(_, p)| p.is_some());
            match &shape.counts {
                Some(counts) if every_term_ran && counts_in_memory(imcu, counts) => {
                    let n = keep.count_ones();
                    passed += n;
                    for (total, shape) in counted.iter_mut().zip(counts) {
                        *total += match *shape {
                            CountShape::Rows => n,
                            CountShape::NotNull(c) => match imcu.columns[c].as_ref().and_then(|c| c.unit.null_bitmap())
                            {
                                None => n,
                                Some(nulls) => {
                                    let mut not_null = keep.clone();
                                    not_null.and_not_with(nulls);
                                    not_null.count_ones()
                                }
                            },
                        };
                    }
                }
                _ => stopped = self.push_rows(imcu, &keep, stages, ctx)?,
            }
        }
        if shape.counts.is_some() && passed > 0 {
            for stage in stages.iter_mut() {
                match stage {
                    Stage::Probe(p) => p.add_rows(passed),
                    Stage::Aggregate(a) => {
                        a.add_counts(&counted);
                        break;
                    }
                    _ => {}
                }
            }
        }
        if stopped {
            return Ok(());
        }
        stats.add(Stat::ImScanBlocksCache, cache_blocks.len() as u64);
        if cache_blocks.is_empty() {
            return Ok(());
        }
        // Units in order, each one's journal in block order, then the tail: scan order.
        let runs = adjacent(&cache_blocks);
        crate::exec::Source::scan_table(&self.table, &self.columns_read, Some(runs), stages, ctx)
    }

    /// Decodes the kept rows of `imcu` (the columns the plan reads) and pushes them
    /// through the stages; true when a stage stopped the scan.
    fn push_rows(
        &self,
        imcu: &Imcu,
        keep: &Bitmap,
        stages: &mut [Stage<'_>],
        ctx: &mut ExecContext<'_>,
    ) -> Result<bool> {
        let mut row: Vec<Value> = vec![Datum::Null; self.table.columns.len()];
        let read: Vec<usize> = self.columns_read.iter().enumerate().filter(|(_, r)| **r).map(|(c, _)| c).collect();
        for r in keep.iter_ones() {
            for &c in &read {
                row[c] = match imcu.columns[c].as_ref() {
                    Some(col) => col.datum(r)?,
                    None => unreachable!("a plan reading a column not in memory is not an in-memory scan"),
                };
            }
            if crate::exec::pipeline::push(stages, row.as_slice(), &mut ctx.functions)? == Flow::Stop {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Whether the counts can be taken from the unit (each counted column is in it).
fn counts_in_memory(imcu: &Imcu, counts: &[CountShape]) -> bool {
    counts.iter().all(|s| match *s {
        CountShape::Rows => true,
        CountShape::NotNull(c) => imcu.columns.get(c).is_some_and(Option::is_some),
    })
}

/// Blocks in scan order as runs of adjacent addresses.
fn adjacent(blocks: &[u32]) -> Vec<ExtentRun> {
    let mut runs: Vec<ExtentRun> = Vec::new();
    for &rdba in blocks {
        match runs.last_mut() {
            Some(r) if r.first + r.blocks == rdba => r.blocks += 1,
            _ => runs.push(ExtentRun { first: rdba, blocks: 1 }),
        }
    }
    runs
}

/// Whether every column `columns_read` marks is held in memory for `table` (a column
/// left out with NO INMEMORY makes the table's scans row-store scans).
pub fn columns_in_memory(table: &TableDef, columns_read: &[bool]) -> bool {
    table
        .inmemory
        .as_ref()
        .is_some_and(|spec| columns_read.iter().enumerate().all(|(c, &read)| !read || !spec.excluded.contains(&c)))
}

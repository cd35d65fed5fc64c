//! ANALYZE TABLE: the optimizer statistics of a table, its columns and its indexes.
//!
//! One full scan through the buffer cache reads every row: the row count and the blocks
//! below the high-water mark are always exact. COMPUTE gathers the column figures from
//! every row; ESTIMATE from a sample (`SAMPLE n PERCENT`: each row with that
//! probability; `SAMPLE n ROWS`: a uniform reservoir of n rows). From a sample, the
//! null count is scaled to the table's rows and the number of distinct values is
//! estimated with the Duj1 estimator of Haas and Stokes, `d / (1 - (1 - q) f1 / n)`
//! (d distinct values and f1 values seen once among n sampled rows, q = n / rows), the
//! estimator Oracle's ANALYZE is documented to approximate; low and high values are the
//! sample's. Distinct values are counted by 64-bit hashes of the values (equal values
//! hash equally, whatever their type's spelling); two different values colliding is
//! about as likely as n² / 2⁶⁵.
//!
//! Row lengths are the lengths the rows take in their blocks (flag, lock and column
//! count bytes, each column's length bytes and payload); a column's average length
//! counts its length byte, as Oracle's AVG_COL_LEN does.
//!
//! Indexes of the table are analyzed too, as Oracle's ANALYZE TABLE does: each index's
//! figures are read from its leaves ([`crate::index::statistics`]).

use super::front::AnalyzeSample;
use crate::catalog::{ColumnStats, StatValue, TableDef, TableStats};
use crate::error::{Error, Result};
use crate::exec::{RowSink, Source, Stage, run_pipeline};
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::types::{Datum, Value, encoding};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Runs ANALYZE TABLE `name`.
pub fn analyze_table(session: &Session, name: &str, sample: AnalyzeSample) -> Result<QueryResult> {
    let table =
        session.db.catalog.table(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })?;
    let ctx = session.access_context();
    let blocks = u64::from(crate::access::segments::read_map(&ctx, &table)?.hwm.saturating_sub(1));
    let mut gatherer = Gatherer::new(&table, sample);
    {
        let columns = table.columns.len();
        let sink = RowSink::new(columns, Box::new(|row: &[Datum<'_>]| gatherer.row(row)));
        let source = Source::TableScan { table: table.clone(), columns_read: vec![true; columns] };
        let mut exec = super::exec_context(session, super::function_context(session));
        run_pipeline(&source, vec![Stage::Sink(sink)], &mut exec)?;
    }
    let stats = gatherer.finish(blocks, crate::types::local_now());
    let index_stats = {
        // DROP INDEX and TRUNCATE wait for the walks of the indexes' leaves.
        let locks = session.db.locks.table(table.object_id);
        let _visible = locks.visibility.read_recursive();
        session
            .db
            .catalog
            .indexes_of(table.object_id)
            .into_iter()
            .map(|index| Ok((index.name.clone(), crate::index::statistics(&ctx, &index, stats.analyzed)?)))
            .collect::<Result<Vec<_>>>()?
    };
    session.db.catalog.set_statistics(&table.name, stats, index_stats)?;
    Ok(QueryResult::message(StatementKind::Ddl, "Table analyzed."))
}

/// A hasher for keys that are already 64-bit hashes.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type HashedSet = HashSet<u64, BuildHasherDefault<PassThrough>>;
type HashedCounts = HashMap<u64, u32, BuildHasherDefault<PassThrough>>;

/// The hash a value is counted by: the value's own hash (equal values, equal hashes).
fn value_hash(d: &Datum<'_>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    d.hash(&mut h);
    h.finish()
}

/// What one column's sampled values add up to.
#[derive(Default)]
struct ColumnFigures {
    /// Distinct hashes (COMPUTE).
    seen: HashedSet,
    /// Hashes with their counts (a sample: the estimator needs values seen once).
    counted: HashedCounts,
    nulls: u64,
    /// Bytes of the column in the sampled rows, length bytes included.
    bytes: u64,
    low: Option<Value>,
    high: Option<Value>,
}

impl ColumnFigures {
    fn add(&mut self, d: &Datum<'_>, exact: bool) {
        let payload = encoding::payload_len(d);
        self.bytes += (payload + if payload > 250 { 3 } else { 1 }) as u64;
        if matches!(d, Datum::Null) {
            self.nulls += 1;
            return;
        }
        let h = value_hash(d);
        if exact {
            self.seen.insert(h);
        } else {
            *self.counted.entry(h).or_insert(0) += 1;
        }
        let lower = self.low.as_ref().is_none_or(|l| matches!(d.sql_cmp(l), Ok(Some(std::cmp::Ordering::Less))));
        if lower {
            self.low = Some(d.clone().into_owned());
        }
        let higher = self.high.as_ref().is_none_or(|h| matches!(d.sql_cmp(h), Ok(Some(std::cmp::Ordering::Greater))));
        if higher {
            self.high = Some(d.clone().into_owned());
        }
    }
}

/// Which rows a gatherer takes.
enum Sampling {
    All,
    /// Each row with this probability.
    Bernoulli(f64),
    /// A uniform reservoir of this many rows.
    Reservoir(u64),
}

struct Gatherer {
    sampling: Sampling,
    /// Rows in the table (every row is seen, whichever are sampled).
    rows: u64,
    /// Stored length of all rows, for the average row length.
    row_bytes: u64,
    columns: Vec<ColumnFigures>,
    sampled: u64,
    reservoir: Vec<Vec<Value>>,
    random: u64,
}

impl Gatherer {
    fn new(table: &TableDef, sample: AnalyzeSample) -> Gatherer {
        let sampling = match sample {
            AnalyzeSample::Compute => Sampling::All,
            AnalyzeSample::Percent(p) if p >= 100.0 => Sampling::All,
            AnalyzeSample::Percent(p) => Sampling::Bernoulli(p / 100.0),
            AnalyzeSample::Rows(n) => Sampling::Reservoir(n),
        };
        Gatherer {
            sampling,
            rows: 0,
            row_bytes: 0,
            columns: (0..table.columns.len()).map(|_| ColumnFigures::default()).collect(),
            sampled: 0,
            reservoir: Vec::new(),
            random: 0x2545_F491_4F6C_DD1D,
        }
    }

    /// A uniform random number in [0, 1) (xorshift64*, fixed seed: ANALYZE repeats).
    fn next_random(&mut self) -> f64 {
        self.random ^= self.random >> 12;
        self.random ^= self.random << 25;
        self.random ^= self.random >> 27;
        (self.random.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn row(&mut self, row: &[Datum<'_>]) -> Result<()> {
        self.rows += 1;
        self.row_bytes += crate::storage::row::whole_row_len(row) as u64;
        match self.sampling {
            Sampling::All => self.take(row, true),
            Sampling::Bernoulli(p) => {
                if self.next_random() < p {
                    self.take(row, false);
                }
            }
            Sampling::Reservoir(n) => {
                if (self.reservoir.len() as u64) < n {
                    self.reservoir.push(row.iter().map(|d| d.clone().into_owned()).collect());
                } else {
                    let j = (self.next_random() * self.rows as f64) as u64;
                    if j < n {
                        self.reservoir[j as usize] = row.iter().map(|d| d.clone().into_owned()).collect();
                    }
                }
            }
        }
        Ok(())
    }

    fn take(&mut self, row: &[Datum<'_>], exact: bool) {
        self.sampled += 1;
        for (figures, d) in self.columns.iter_mut().zip(row) {
            figures.add(d, exact);
        }
    }

    fn finish(mut self, blocks: u64, now: i64) -> TableStats {
        let exact = matches!(self.sampling, Sampling::All);
        for row in std::mem::take(&mut self.reservoir) {
            self.take(&row, false);
        }
        let (rows, n) = (self.rows, self.sampled);
        let scale = if n == 0 { 0.0 } else { rows as f64 / n as f64 };
        let columns = self
            .columns
            .into_iter()
            .map(|c| {
                let num_distinct = if exact {
                    c.seen.len() as u64
                } else {
                    let non_null = n - c.nulls;
                    duj1(c.counted.len() as u64, c.counted.values().filter(|&&k| k == 1).count() as u64, non_null, {
                        // Non-null rows of the table, estimated from the sample.
                        (non_null as f64 * scale).round() as u64
                    })
                };
                ColumnStats {
                    num_distinct,
                    num_nulls: if exact { c.nulls } else { (c.nulls as f64 * scale).round() as u64 },
                    low_value: c.low.as_ref().and_then(StatValue::from_datum),
                    high_value: c.high.as_ref().and_then(StatValue::from_datum),
                    avg_col_len: if n == 0 { 0 } else { c.bytes.div_ceil(n) },
                }
            })
            .collect();
        TableStats {
            num_rows: rows,
            blocks,
            avg_row_len: if rows == 0 { 0 } else { self.row_bytes.div_ceil(rows) },
            sample_size: n,
            analyzed: now,
            columns,
        }
    }
}

/// The Duj1 estimate of the distinct values among `total` rows from a sample of `n`
/// rows holding `d` distinct values, `f1` of them seen once.
fn duj1(d: u64, f1: u64, n: u64, total: u64) -> u64 {
    if n == 0 || total == 0 {
        return 0;
    }
    let q = (n as f64 / total as f64).min(1.0);
    let denominator = 1.0 - (1.0 - q) * f1 as f64 / n as f64;
    let estimate = if denominator <= 0.0 { total as f64 } else { d as f64 / denominator };
    (estimate.round() as u64).clamp(d, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duj1_is_exact_for_a_full_sample_and_bounded_otherwise() {
        assert_eq!(duj1(10, 3, 100, 100), 10);
        // All values seen once in a 10% sample: they are (nearly) all distinct.
        assert_eq!(duj1(100, 100, 100, 1000), 1000);
        // Each value seen many times: few distinct values beyond those seen.
        assert_eq!(duj1(5, 0, 100, 1000), 5);
        assert_eq!(duj1(0, 0, 0, 0), 0);
    }

    #[test]
    fn equal_values_of_different_spellings_hash_alike() {
        let a = Datum::Int(5);
        let b = Datum::from_decimal(rust_decimal::Decimal::new(50, 1));
        assert_eq!(value_hash(&a), value_hash(&b));
        assert_ne!(value_hash(&Datum::Int(5)), value_hash(&Datum::Int(6)));
    }
}

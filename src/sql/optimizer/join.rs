//! Joins: how many rows a join gives, and what each join method costs, on the scale of
//! the access paths' costs (single-block reads, module `cost`).
//!
//! - Cardinality: the product of the inputs' rows times, for each equality between a
//!   column of each, `1 / max(NDV)` of the two columns (their distinct values, from
//!   ANALYZE; a column of a table never analyzed is taken as a key of its table, and a
//!   fixed view's as a key of its rows), and Oracle's 5% for any other condition on both.
//! - HASH JOIN: both inputs read once, plus the CPU of hashing every row of both
//!   ([`HASH_ROW_NS`]); the smaller input (by estimated rows) builds the table.
//! - A join filter on a hash join's probe side (a Bloom filter of the build keys,
//!   checked in the probe scan): the probe rows it passes are those whose key is among
//!   the build keys' distinct values, estimated as the share of the probe key's distinct
//!   values those cover ([`join_filter_pass`]), plus 1% false positives of the others;
//!   only they cost the hash join's CPU, and every build and probe row costs
//!   [`JOIN_FILTER_ROW_NS`] more ([`hash_with_filter`]). Without a hint, a join uses one
//!   when its probe side is estimated at [`JOIN_FILTER_MIN_PROBE_ROWS`] rows or more and
//!   it makes the join cheaper ([`join_filter_pays`]): roughly when the filter passes
//!   less than three quarters of the probe rows.
//! - MERGE JOIN: both inputs read once, plus sorting each.
//! - NESTED LOOPS: the outer input read once, plus for each of its rows the inner side:
//!   an index probe (the index's unique or range scan on the join keys, and the rows
//!   fetched by rowid, as `cost::CostModel::index_access` costs them with the keys'
//!   selectivity), or the inner input read whole again.
//!
//! [`HASH_ROW_NS`] is not yet measured on lioscope's own hash join: it is taken as twice
//! the row scan's CPU a row, so that the CPU terms stay small next to the I/O ones, as
//! they are for the access paths.

use super::cost::{CostModel, SCAN_ROW_NS};
use super::facts::{IndexFacts, TableFacts};
use crate::catalog::{IndexDef, TableDef};

/// CPU of putting one row into a hash table or probing it with one, in nanoseconds.
pub const HASH_ROW_NS: f64 = 2.0 * SCAN_ROW_NS;

/// CPU of checking one probe row against a join filter (hashing its key, testing its
/// bits), or of putting one build key into it, in nanoseconds: taken as half the row
/// scan's CPU a row, a quarter of a hash table's probe.
pub const JOIN_FILTER_ROW_NS: f64 = 0.5 * SCAN_ROW_NS;

/// The false-positive rate a join filter is sized for.
pub const JOIN_FILTER_FALSE_POSITIVES: f64 = 0.01;

/// The fewest estimated probe rows for which a join filter is used without a hint: below
/// them what it saves is too small to be worth a plan line.
pub const JOIN_FILTER_MIN_PROBE_ROWS: f64 = 10_000.0;

/// Oracle's selectivity of a join condition that is not an equality of two columns.
pub const OTHER_JOIN_SELECTIVITY: f64 = 0.05;

/// An input of a join as the optimizer sees it: the rows it gives and what reading them
/// costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input {
    pub rows: f64,
    pub cost: f64,
}

/// A hash join building on `build` and probing with `probe`.
pub fn hash(model: &CostModel, build: Input, probe: Input) -> f64 {
    build.cost + probe.cost + model.cpu((build.rows + probe.rows) * HASH_ROW_NS)
}

/// A hash join building on `build` and probing with `probe` through a join filter that
/// passes the share `pass` of the probe rows: only those reach the join's table, and
/// every build key goes into the filter and every probe row is checked against it.
pub fn hash_with_filter(model: &CostModel, build: Input, probe: Input, pass: f64) -> f64 {
    build.cost
        + probe.cost
        + model.cpu((build.rows + probe.rows * pass) * HASH_ROW_NS + (build.rows + probe.rows) * JOIN_FILTER_ROW_NS)
}

/// The share of probe rows a join filter passes: the share of the probe key's
/// `probe_keys` distinct values that the build side's `build_keys` distinct keys cover
/// (each build key taken to be one of the probe's), plus the filter's false positives
/// among the others.
pub fn join_filter_pass(build_keys: f64, probe_keys: f64) -> f64 {
    let covered = (build_keys / probe_keys.max(1.0)).clamp(0.0, 1.0);
    covered + (1.0 - covered) * JOIN_FILTER_FALSE_POSITIVES
}

/// Whether a hash join uses a join filter when no hint decides: its probe side is
/// estimated at [`JOIN_FILTER_MIN_PROBE_ROWS`] rows or more, and the join costs less with
/// the filter than without ([`hash_with_filter`] against [`hash`]).
pub fn join_filter_pays(model: &CostModel, build: Input, probe: Input, pass: f64) -> bool {
    probe.rows >= JOIN_FILTER_MIN_PROBE_ROWS && hash_with_filter(model, build, probe, pass) < hash(model, build, probe)
}

/// A sort-merge join of two inputs.
pub fn merge(model: &CostModel, left: Input, right: Input) -> f64 {
    left.cost + right.cost + model.sort(left.rows) + model.sort(right.rows)
}

/// A nested loop over `outer`, each of its rows costing `per_row` on the inner side.
pub fn nested_loops(outer: Input, per_row: f64) -> f64 {
    outer.cost + outer.rows.max(1.0) * per_row
}

/// The distinct values of column `c` of `table`: ANALYZE's, else the table's rows (a key).
pub fn table_column_ndv(table: &TableDef, c: usize, table_rows: f64) -> f64 {
    match table.stats.as_ref().and_then(|s| s.columns.get(c)) {
        Some(s) => (s.num_distinct as f64).max(1.0),
        None => table_rows.max(1.0),
    }
}

/// An index probe of `table` through `ix` whose leading `key_columns.len()` columns are
/// the join's keys (each equal to a value of the outer row): its cost for one outer row
/// and the rows it finds. `None` when the index does not lead with those columns.
pub fn index_probe(
    table: &TableDef,
    ix: &IndexDef,
    key_columns: &[usize],
    segment_blocks: u64,
    model: &CostModel,
) -> Option<(f64, f64)> {
    let k = key_columns.len();
    if k == 0 || ix.columns.len() < k || !ix.columns[..k].iter().all(|c| key_columns.contains(c)) {
        return None;
    }
    let facts = TableFacts::new(table, segment_blocks, model.block_size);
    let unique = ix.unique && k == ix.columns.len();
    let selectivity = if unique {
        1.0 / facts.rows.max(1.0)
    } else {
        key_columns.iter().map(|&c| 1.0 / table_column_ndv(table, c, facts.rows)).product::<f64>()
    };
    let entries = (facts.rows * selectivity).max(if unique { 1.0 } else { 0.0 });
    let stats = IndexFacts::new(ix, &facts, model.block_size);
    let cost = model.index_access(&stats, selectivity, entries, facts.cus.as_ref()).total(false);
    Some((cost, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> CostModel {
        CostModel { block_size: 8192, multiblock_read_count: 8 }
    }

    #[test]
    fn a_nested_loop_costs_its_outer_input_and_one_inner_side_a_row() {
        let outer = Input { rows: 10.0, cost: 5.0 };
        assert_eq!(nested_loops(outer, 3.0), 35.0);
        // No outer row expected still runs the inner side once.
        assert_eq!(nested_loops(Input { rows: 0.0, cost: 5.0 }, 3.0), 8.0);
    }

    #[test]
    fn a_join_filter_pays_on_a_large_probe_side_when_the_build_keys_cover_few_of_its_keys() {
        let m = model();
        let (build, probe) = (Input { rows: 200.0, cost: 10.0 }, Input { rows: 1e6, cost: 100.0 });
        // 200 keys of the probe's 2,000: a tenth of the probe rows pass, and 1% of the rest.
        let pass = join_filter_pass(200.0, 2000.0);
        assert!((pass - (0.1 + 0.9 * JOIN_FILTER_FALSE_POSITIVES)).abs() < 1e-12, "{pass}");
        assert!(join_filter_pays(&m, build, probe, pass));
        assert!(hash_with_filter(&m, build, probe, pass) < hash(&m, build, probe));
        // Keys covering the probe's: every row passes, and the check is pure cost.
        assert_eq!(join_filter_pass(5000.0, 2000.0), 1.0);
        assert!(!join_filter_pays(&m, build, probe, 1.0));
        // Too few probe rows, however selective.
        assert!(!join_filter_pays(&m, build, Input { rows: JOIN_FILTER_MIN_PROBE_ROWS - 1.0, cost: 1.0 }, pass));
    }

    #[test]
    fn hashing_and_sorting_add_cpu_to_reading_both_inputs_once() {
        let (a, b) = (Input { rows: 1e6, cost: 100.0 }, Input { rows: 1e3, cost: 10.0 });
        let m = model();
        // 110 for the reads, and (1,001,000 rows × 40 ns) / 12 ms a single-block read.
        let expected = 110.0 + 1_001_000.0 * HASH_ROW_NS / 12e6;
        assert!((hash(&m, b, a) - expected).abs() < 1e-9, "{} against {expected}", hash(&m, b, a));
        assert!(merge(&m, a, b) > hash(&m, b, a), "a million rows sorted cost more than hashed");
    }
}

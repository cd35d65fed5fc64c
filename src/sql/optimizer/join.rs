//! Joins: how many rows a join gives, and what each join method costs, on the scale of
//! the access paths' costs (single-block reads, module `cost`).
//!
//! - Cardinality: the product of the inputs' rows times, for each equality between a
//!   column of each, `1 / max(NDV)` of the two columns (their distinct values, from
//!   ANALYZE; a column of a table never analyzed is taken as a key of its table, and a
//!   fixed view's as a key of its rows), and Oracle's 5% for any other condition on both.
//! - HASH JOIN: both inputs read once, plus the CPU of hashing every row of both
//!   ([`HASH_ROW_NS`]); the smaller input (by estimated rows) builds the table.
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

/// A sort-merge join of two inputs.
pub fn merge(model: &CostModel, left: Input, right: Input) -> f64 {
    left.cost + right.cost + model.sort(left.rows) + model.sort(right.rows)
}

/// A nested loop over `outer`, each of its rows costing `per_row` on the inner side.
pub fn nested_loops(outer: Input, per_row: f64) -> f64 {
    outer.cost + outer.rows.max(1.0) * per_row
}

/// The distinct values of column `c` of `table`: the table's rows when the column is a
/// primary or unique key by itself (whatever ANALYZE counted before later inserts), else
/// ANALYZE's, else the table's rows.
pub fn table_column_ndv(table: &TableDef, c: usize, table_rows: f64) -> f64 {
    if table.is_unique_on(&[c]) {
        return table_rows.max(1.0);
    }
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
    fn hashing_and_sorting_add_cpu_to_reading_both_inputs_once() {
        let (a, b) = (Input { rows: 1e6, cost: 100.0 }, Input { rows: 1e3, cost: 10.0 });
        let m = model();
        // 110 for the reads, and (1,001,000 rows × 40 ns) / 12 ms a single-block read.
        let expected = 110.0 + 1_001_000.0 * HASH_ROW_NS / 12e6;
        assert!((hash(&m, b, a) - expected).abs() < 1e-9, "{} against {expected}", hash(&m, b, a));
        assert!(merge(&m, a, b) > hash(&m, b, a), "a million rows sorted cost more than hashed");
    }
}

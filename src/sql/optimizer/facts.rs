//! What the optimizer knows about a table and its indexes, the figures selectivity and
//! cost are computed from: a table's rows, blocks and column statistics ([`TableFacts`]),
//! the compression units a compressed table's rows are taken to lie in ([`CuShape`]), an
//! index's height, leaf blocks and clustering factor ([`IndexFacts`]). They come from
//! ANALYZE's statistics (an index's also from its build); without them, a table is
//! assumed to hold [`ASSUMED_ROW_BYTES`]-byte rows in its segment's blocks, and an index
//! the pessimistic figures [`IndexFacts::new`] gives.

use crate::catalog::{ColumnStats, IndexDef, TableDef};
use crate::storage::hcc::{HccLevel, max_cu_rows};

/// Row length assumed for a table without statistics.
pub const ASSUMED_ROW_BYTES: f64 = 100.0;

/// What the optimizer knows about a table.
pub struct TableFacts<'t> {
    pub rows: f64,
    pub blocks: f64,
    pub analyzed: bool,
    columns: Option<&'t [ColumnStats]>,
    /// For a compressed table, what its compression units are taken to be.
    pub cus: Option<CuShape>,
}

impl<'t> TableFacts<'t> {
    /// From the table's statistics, or (never analyzed) from its segment's size.
    pub fn new(table: &'t TableDef, segment_blocks: u64, block_size: u32) -> TableFacts<'t> {
        let mut facts = match &table.stats {
            Some(s) => TableFacts {
                rows: s.num_rows as f64,
                blocks: (s.blocks as f64).max(1.0),
                analyzed: true,
                columns: Some(&s.columns),
                cus: None,
            },
            None => TableFacts {
                rows: (segment_blocks as f64 * f64::from(block_size) / ASSUMED_ROW_BYTES).floor(),
                blocks: (segment_blocks as f64).max(1.0),
                analyzed: false,
                columns: None,
                cus: None,
            },
        };
        facts.cus = table.compression.map(|level| CuShape::estimate(level, facts.rows, facts.blocks, block_size));
        facts
    }

    /// A table nothing is known about: no rows, no statistics (every condition then
    /// gets Oracle's default selectivity).
    pub(super) fn unknown() -> TableFacts<'static> {
        TableFacts { rows: 0.0, blocks: 0.0, analyzed: false, columns: None, cus: None }
    }

    /// The statistics of column `c`, if the table was analyzed.
    pub(super) fn column(&self, c: usize) -> Option<&ColumnStats> {
        self.columns.and_then(|cs| cs.get(c))
    }

    /// Fraction of the rows where column `c` is not NULL.
    pub(super) fn non_null(&self, c: usize) -> f64 {
        match self.column(c) {
            Some(s) if self.rows > 0.0 => 1.0 - (s.num_nulls as f64 / self.rows).min(1.0),
            _ => 1.0,
        }
    }
}

/// What the optimizer knows about an index.
#[derive(Debug, Clone)]
pub struct IndexFacts {
    pub blevel: u32,
    pub leaf_blocks: f64,
    pub clustering_factor: f64,
    pub num_rows: f64,
    /// The table's rows (entries are at most these).
    table_rows: f64,
}

impl IndexFacts {
    /// From the index's statistics (gathered by its build and by ANALYZE), or, without
    /// them, pessimistic figures: 20-byte entries, every entry in a new table block.
    pub fn new(ix: &IndexDef, table: &TableFacts<'_>, block_size: u32) -> IndexFacts {
        match &ix.stats {
            Some(s) => IndexFacts {
                blevel: s.blevel,
                leaf_blocks: s.leaf_blocks as f64,
                clustering_factor: s.clustering_factor as f64,
                num_rows: s.num_rows as f64,
                table_rows: table.rows,
            },
            None => {
                let leaf_blocks = (table.rows * 20.0 / (f64::from(block_size) * 0.9)).ceil().max(1.0);
                IndexFacts {
                    blevel: u32::from(leaf_blocks > 1.0),
                    leaf_blocks,
                    clustering_factor: table.rows,
                    num_rows: table.rows,
                    table_rows: table.rows,
                }
            }
        }
    }

    /// The blocks of the index's segment, about: its leaf blocks and the branch blocks of
    /// one path from the root (what the cached share of the index is taken over).
    pub fn segment_blocks(&self) -> f64 {
        (self.leaf_blocks + f64::from(self.blevel)).max(1.0)
    }

    #[cfg(test)]
    /// Figures given directly (tests).
    pub fn fixed(blevel: u32, leaf_blocks: f64, clustering_factor: f64, num_rows: f64) -> IndexFacts {
        IndexFacts { blevel, leaf_blocks, clustering_factor, num_rows, table_rows: num_rows }
    }

    /// The fraction of table rows an unbounded scan finds in the index (1 for a bounded
    /// scan, whose selectivity already leaves the NULLs out).
    pub fn non_null_fraction(&self, bounded: bool) -> f64 {
        if bounded || self.table_rows <= 0.0 { 1.0 } else { (self.num_rows / self.table_rows).min(1.0) }
    }
}

/// What the cost model takes a compressed table's compression units to be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CuShape {
    pub level: HccLevel,
    /// Rows of a CU, and the blocks it takes (its head and pieces).
    pub rows_per_cu: f64,
    pub blocks_per_cu: f64,
}

impl CuShape {
    /// The CUs of a table at `level` whose `rows` rows take `blocks` blocks of
    /// `block_size` bytes: a CU takes its level's target of compressed bytes in
    /// blocks, plus its head, each holding the table's average rows a block, but holds no
    /// more rows than a CU can (nor than the table has).
    pub fn estimate(level: HccLevel, rows: f64, blocks: f64, block_size: u32) -> CuShape {
        let rows_per_block = (rows / blocks.max(1.0)).max(1.0);
        let target_blocks = (level.target_payload() as f64 / f64::from(block_size)).ceil() + 1.0;
        let most = max_cu_rows(block_size as usize) as f64;
        let rows_per_cu = (rows_per_block * target_blocks).min(most).min(rows.max(1.0));
        CuShape { level, rows_per_cu, blocks_per_cu: (rows_per_cu / rows_per_block).min(target_blocks).ceil().max(1.0) }
    }
}

//! The cost model: Oracle's, with its no-workload system statistics.
//!
//! Cost is in single-block reads. A single-block read takes `sreadtim = ioseektim +
//! block_size / iotfrspeed` and a multiblock read of `mbrc` blocks `mreadtim = ioseektim +
//! mbrc × block_size / iotfrspeed`, with Oracle's defaults `ioseektim` = 10 ms and
//! `iotfrspeed` = 4096 bytes/ms; the multiblock read count is the session's
//! `db_file_multiblock_read_count`. Then, as Oracle costs them:
//!
//! - full scan: `ceil(blocks / mbrc) × mreadtim / sreadtim`, plus one read of the
//!   segment header;
//! - index range or full scan: `blevel + ceil(leaf_blocks × selectivity)`, plus
//!   `ceil(clustering_factor × selectivity)` when each row is then fetched from the table
//!   (the clustering factor counts the table block changes along the index);
//! - index fast full scan: `ceil(leaf_blocks / mbrc) × mreadtim / sreadtim`.
//!
//! A path that does not deliver the ORDER BY's order adds the CPU of the sort
//! (`rows × log2(rows)` comparisons at [`SORT_COMPARE_NS`]).
//!
//! To each, CPU is added as time converted into single-block reads (`ns / sreadtim`), at
//! the per-row costs measured on lioscope's own paths ([`SCAN_ROW_NS`], ...): small next to
//! the I/O terms, it breaks ties between paths that read the same blocks.

/// CPU of visiting one row of a full scan (lioscope's cached scan runs at about 20 ns).
pub const SCAN_ROW_NS: f64 = 20.0;
/// CPU of reading one index entry.
pub const INDEX_ENTRY_NS: f64 = 10.0;
/// CPU of fetching one row by rowid (a get when the block changes, the row, its columns).
pub const ROWID_ROW_NS: f64 = 40.0;
/// CPU of one comparison of a sort (rows × log2(rows) of them).
pub const SORT_COMPARE_NS: f64 = 30.0;

const IOSEEKTIM_MS: f64 = 10.0;
const IOTFRSPEED_BYTES_PER_MS: f64 = 4096.0;

/// The cost of an index access path in its two parts.
#[derive(Debug, Clone, Copy)]
pub struct IndexAccessCost {
    /// Reading the index.
    pub index: f64,
    /// Fetching each row from the table by rowid.
    pub table: f64,
}

impl IndexAccessCost {
    /// The whole path: the index alone when it `covers` the query.
    pub fn total(&self, covers: bool) -> f64 {
        if covers { self.index } else { self.index + self.table }
    }
}

/// The figures costs are computed with.
#[derive(Debug, Clone, Copy)]
pub struct CostModel {
    pub block_size: u32,
    pub multiblock_read_count: u32,
}

impl CostModel {
    /// Milliseconds of one single-block read.
    pub fn sreadtim(&self) -> f64 {
        IOSEEKTIM_MS + f64::from(self.block_size) / IOTFRSPEED_BYTES_PER_MS
    }

    /// Milliseconds of one multiblock read.
    pub fn mreadtim(&self) -> f64 {
        IOSEEKTIM_MS
            + f64::from(self.multiblock_read_count.max(1)) * f64::from(self.block_size) / IOTFRSPEED_BYTES_PER_MS
    }

    /// `ns` of CPU in single-block reads.
    pub fn cpu(&self, ns: f64) -> f64 {
        ns / (self.sreadtim() * 1e6)
    }

    /// Reading `blocks` blocks with multiblock reads.
    fn multiblock(&self, blocks: f64) -> f64 {
        (blocks / f64::from(self.multiblock_read_count.max(1))).ceil() * self.mreadtim() / self.sreadtim()
    }

    pub fn full_scan(&self, blocks: f64, rows: f64) -> f64 {
        1.0 + self.multiblock(blocks) + self.cpu(rows * SCAN_ROW_NS)
    }

    /// An index range or full scan reading `selectivity` of the index, `entries` entries:
    /// the cost of the index part, and what fetching each row from the table adds.
    pub fn index_access(
        &self,
        index: &super::selectivity::IndexFacts,
        selectivity: f64,
        entries: f64,
    ) -> IndexAccessCost {
        IndexAccessCost {
            index: f64::from(index.blevel)
                + (index.leaf_blocks * selectivity).ceil()
                + self.cpu(entries * INDEX_ENTRY_NS),
            table: (index.clustering_factor * selectivity).ceil() + self.cpu(entries * ROWID_ROW_NS),
        }
    }

    /// Sorting `rows` rows in memory.
    pub fn sort(&self, rows: f64) -> f64 {
        self.cpu(rows * rows.max(2.0).log2() * SORT_COMPARE_NS)
    }

    pub fn fast_full_scan(&self, leaf_blocks: f64, entries: f64) -> f64 {
        1.0 + self.multiblock(leaf_blocks) + self.cpu(entries * INDEX_ENTRY_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracle_no_workload_figures() {
        let m = CostModel { block_size: 8192, multiblock_read_count: 8 };
        assert_eq!(m.sreadtim(), 12.0);
        assert_eq!(m.mreadtim(), 26.0);
        // 1000 blocks: 125 multiblock reads of 26/12 single-block reads each, plus the header.
        let io = m.full_scan(1000.0, 0.0);
        assert!((io - (1.0 + 125.0 * 26.0 / 12.0)).abs() < 1e-9);
    }

    #[test]
    fn clustering_factor_drives_index_cost() {
        let m = CostModel { block_size: 8192, multiblock_read_count: 8 };
        let good = super::super::selectivity::IndexFacts::fixed(2, 10_000.0, 100_000.0, 20_000.0);
        let bad = super::super::selectivity::IndexFacts::fixed(2, 10_000.0, 5_000_000.0, 5_000_000.0);
        let (g, b) =
            (m.index_access(&good, 0.01, 50_000.0).total(false), m.index_access(&bad, 0.01, 50_000.0).total(false));
        assert!(b > g * 10.0, "good {g}, bad {b}");
    }
}

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
//!
//! Cached blocks. Every read above is costed as a disk read, which a cached table's is
//! not: a cached probe of a nested loop costs its CPU (about 1 µs), not four 12 ms reads.
//! A block read expected in the buffer cache with probability `c` costs
//! `(1 − c) × io + c × cpu(gets × LOGICAL_READ_NS)` ([`CostModel::reads`]), where
//! [`LOGICAL_READ_NS`] is a consistent get's CPU measured on lioscope. `c` comes from:
//!
//! - `optimizer_cache_awareness = TRUE`: the share of the segment's blocks the buffer
//!   cache holds when the statement is planned (counted over the buffer headers,
//!   `BufferCache::cached_blocks_by_object`), for tables and indexes, every path (Oracle
//!   keeps this hidden: `_optimizer_cache_stats` costs with cached-block statistics that
//!   `DBMS_STATS` gathers with `stattype => 'CACHE'`; lioscope counts the cache itself).
//!   A plan reflects the cache when it was made: a kept cursor keeps its plan;
//! - `optimizer_index_caching` (Oracle's, 0 to 100): that percentage of the index blocks
//!   of a nested loop's index probes (module `join`), the larger of it and the counted
//!   share when both apply. lioscope has no IN-list iterator, the other path Oracle
//!   applies it to.
//!
//! `optimizer_index_cost_adj` (Oracle's, 1 to 10,000 %) scales the block reads of index
//! unique, range and full scans and of the rows they fetch by rowid (not the CPU of their
//! entries and rows, and not the fast full scan, costed as a full scan). With the
//! defaults (no caching assumed, 100 %, awareness off) every cost is what it was without
//! them, to the last bit.
//!
//! The CPU figures of cached reads and of the join methods (module `join`) are
//! instructions counted by callgrind converted at [`NS_PER_INSTRUCTION`], or times
//! measured directly:
//!
//! - [`NS_PER_INSTRUCTION`] = 0.093: `lab join` (200,000-row inner table, all cached,
//!   commit 6cdb4b9, the 2-CPU AMD EPYC VM; docs/performance/joins.md): a nested loop's
//!   median CPU grew 33.0 ms from N = 1,000 to 31,623 outer rows (good index), 1,078 ns
//!   an outer row, for 11,605 instructions an outer row;
//! - [`LOGICAL_READ_NS`] = 79: `lab lio`, commit f037762 (docs/performance/lio.md): one
//!   session made 10,204,591 logical reads a second on 0.810 s of CPU a second, 911
//!   instructions each (callgrind), a consistent get of a cached block with its share of
//!   the index, the row and the call (911 × 0.093 = 85 ns: the two measures agree).
//!
//! A table compressed with Hybrid Columnar Compression keeps most rows in compression
//! units (CUs), and its blocks (ANALYZE's, or the segment's) are fewer; its costs are:
//!
//! - full scan: `1 + ceil(blocks / mbrc) × mreadtim / sreadtim + cpu(rows ×
//!   hcc_row_ns(level))`, where [`hcc_row_ns`] is the CPU a row of the level's scan took
//!   in `lab scan` (decompressing the columns read and running the column kernels on
//!   them, 1 M rows, a quiet machine, docs/performance/scan.md): QUERY LOW 3.3 ns, QUERY
//!   HIGH 6.5, ARCHIVE LOW 5.5, ARCHIVE HIGH 67, against the row scan's [`SCAN_ROW_NS`]
//!   (22 ns in the same run);
//! - table access by index rowid: a rowid into a CU decompresses the whole CU, once for
//!   consecutive rowids into it, so each change of CU along the index (the clustering
//!   factor, whose "blocks" are a CU's head) costs the CU's blocks as single-block reads
//!   plus the CPU of decompressing its rows: `ceil(clustering_factor × selectivity) ×
//!   (blocks_per_cu + cpu(rows_per_cu × hcc_whole_row_ns(level)))`, plus
//!   [`ROWID_ROW_NS`] a row. [`hcc_whole_row_ns`] is the CPU a row of a CU read whole
//!   (every column decompressed) took, measured by 7 rounds of 40 index lookups each
//!   decompressing a CU of about 8,100 six-column rows (the integration tests'
//!   customers-like table, 200,000 rows, release build, a quiet machine, the median
//!   round; the statements' own work included, so the cheap levels' figures are upper
//!   bounds): QUERY LOW 7.9 ns, QUERY HIGH 44, ARCHIVE LOW 30, ARCHIVE HIGH 253.
//!   `rows_per_cu` and `blocks_per_cu` are estimated ([`CuShape`], module `facts`):
//!   a CU takes its level's target of compressed bytes in blocks, plus its head, holding
//!   the table's average rows a block, but no more rows than a CU holds. Rows inserted
//!   later into row blocks are costed as CU rows.

/// CPU of visiting one row of a full scan (lioscope's cached scan runs at about 20 ns).
pub const SCAN_ROW_NS: f64 = 20.0;
/// CPU of reading one index entry.
pub const INDEX_ENTRY_NS: f64 = 10.0;
/// CPU of fetching one row by rowid (a get when the block changes, the row, its columns).
pub const ROWID_ROW_NS: f64 = 40.0;
/// CPU of one comparison of a sort (rows × log2(rows) of them).
pub const SORT_COMPARE_NS: f64 = 30.0;
/// Time of one instruction, converting callgrind's counts into CPU (see the module doc).
pub const NS_PER_INSTRUCTION: f64 = 0.093;
/// CPU of one logical read (a consistent get of a cached block), what a read the
/// optimizer expects in the cache costs instead of its I/O (see the module doc).
pub const LOGICAL_READ_NS: f64 = 79.0;

/// CPU of a row of a full scan of a compressed table at `level`: decompressing the
/// columns the scan reads and running the column kernels on them, as `lab scan` measured
/// it (1 M rows of the customers table, two columns read; docs/performance/scan.md).
pub fn hcc_row_ns(level: HccLevel) -> f64 {
    match level {
        HccLevel::QueryLow => 3.3,
        HccLevel::QueryHigh => 6.5,
        HccLevel::ArchiveLow => 5.5,
        HccLevel::ArchiveHigh => 67.0,
    }
}

/// CPU of a row of a CU read whole for a fetch by rowid at `level` (every column
/// decompressed), as measured (see the module's doc).
pub fn hcc_whole_row_ns(level: HccLevel) -> f64 {
    match level {
        HccLevel::QueryLow => 7.9,
        HccLevel::QueryHigh => 44.0,
        HccLevel::ArchiveLow => 30.0,
        HccLevel::ArchiveHigh => 253.0,
    }
}

/// CPU of reading one CU of `cu`'s shape whole (every column decompressed), in ns.
fn decompress_ns(cu: &CuShape) -> f64 {
    cu.rows_per_cu * hcc_whole_row_ns(cu.level)
}

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
#[derive(Debug, Clone)]
pub struct CostModel {
    pub block_size: u32,
    pub multiblock_read_count: u32,
    /// `optimizer_index_caching` as a fraction (0 to 1): the share of a nested loop's
    /// index probes' index blocks taken to be cached.
    pub index_caching: f64,
    /// `optimizer_index_cost_adj` as a fraction (0.01 to 100; 1 leaves costs as they are):
    /// what the block reads of index access paths are scaled by.
    pub index_cost_adj: f64,
    /// With `optimizer_cache_awareness`, the blocks each segment had in the buffer cache
    /// when the statement was planned, by data object id; `None` costs every read as a
    /// disk read.
    pub cached_blocks: Option<Arc<HashMap<u32, u64>>>,
}

/// What share of the blocks an index access path reads is expected in the buffer cache,
/// for its index and for its table.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cached {
    pub index: f64,
    pub table: f64,
}

impl CostModel {
    /// Oracle's defaults for the rest: no index caching assumed, no adjustment, every read
    /// a disk read.
    pub fn new(block_size: u32, multiblock_read_count: u32) -> CostModel {
        CostModel { block_size, multiblock_read_count, index_caching: 0.0, index_cost_adj: 1.0, cached_blocks: None }
    }

    /// The share of the `blocks` blocks of segment `object_id` the buffer cache held when
    /// the statement was planned (0 unless `optimizer_cache_awareness` is on).
    pub fn cached_share(&self, object_id: u32, blocks: f64) -> f64 {
        match &self.cached_blocks {
            Some(counts) => {
                let cached = counts.get(&object_id).copied().unwrap_or(0) as f64;
                (cached / blocks.max(1.0)).min(1.0)
            }
            None => 0.0,
        }
    }

    /// Reads costing `io` as disk reads and making `gets` logical reads, a `cached` share
    /// of them finding their blocks in the cache: that share costs the gets' CPU
    /// ([`LOGICAL_READ_NS`] each) instead of its I/O.
    pub fn reads(&self, io: f64, gets: f64, cached: f64) -> f64 {
        if cached <= 0.0 { io } else { (1.0 - cached) * io + cached * self.cpu(gets * LOGICAL_READ_NS) }
    }

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

    /// A full scan of `blocks` blocks holding `rows` rows, as rows in blocks or, for a
    /// compressed table (`cus`), in compression units; a `cached` share of its blocks is
    /// expected in the buffer cache.
    pub fn full_scan(&self, blocks: f64, rows: f64, cus: Option<&CuShape>, cached: f64) -> f64 {
        let row_ns = cus.map_or(SCAN_ROW_NS, |cu| hcc_row_ns(cu.level));
        self.reads(1.0 + self.multiblock(blocks), blocks + 1.0, cached) + self.cpu(rows * row_ns)
    }

    /// An index range or full scan reading `selectivity` of the index, `entries` entries:
    /// the cost of the index part, and what fetching each row from the table adds.
    /// For a compressed table's index (`cus`), each table "block" visited is a CU read
    /// whole. `cached` says what share of the index's and the table's blocks is expected
    /// in the cache; the reads (not the CPU of entries and rows) are scaled by
    /// `optimizer_index_cost_adj`.
    pub fn index_access(
        &self,
        index: &IndexFacts,
        selectivity: f64,
        entries: f64,
        cus: Option<&CuShape>,
        cached: Cached,
    ) -> IndexAccessCost {
        let visits = (index.clustering_factor * selectivity).ceil();
        let index_reads = f64::from(index.blevel) + (index.leaf_blocks * selectivity).ceil();
        let table_blocks = visits * cus.map_or(1.0, |cu| cu.blocks_per_cu);
        let decompress = cus.map_or(0.0, |cu| visits * self.cpu(decompress_ns(cu)));
        let adj = self.index_cost_adj;
        IndexAccessCost {
            index: adj * self.reads(index_reads, index_reads, cached.index) + self.cpu(entries * INDEX_ENTRY_NS),
            table: adj * self.reads(table_blocks, table_blocks, cached.table)
                + decompress
                + self.cpu(entries * ROWID_ROW_NS),
        }
    }

    /// Sorting `rows` rows in memory.
    pub fn sort(&self, rows: f64) -> f64 {
        self.cpu(rows * rows.max(2.0).log2() * SORT_COMPARE_NS)
    }

    /// An index fast full scan: its leaf blocks with multiblock reads, a `cached` share
    /// of them expected in the cache. Costed as a full scan is (not adjusted by
    /// `optimizer_index_cost_adj`).
    pub fn fast_full_scan(&self, leaf_blocks: f64, entries: f64, cached: f64) -> f64 {
        self.reads(1.0 + self.multiblock(leaf_blocks), leaf_blocks + 1.0, cached) + self.cpu(entries * INDEX_ENTRY_NS)
    }
}

use super::facts::{CuShape, IndexFacts};
use crate::storage::hcc::HccLevel;
use std::collections::HashMap;
use std::sync::Arc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracle_no_workload_figures() {
        let m = CostModel::new(8192, 8);
        assert_eq!(m.sreadtim(), 12.0);
        assert_eq!(m.mreadtim(), 26.0);
        // 1000 blocks: 125 multiblock reads of 26/12 single-block reads each, plus the header.
        let io = m.full_scan(1000.0, 0.0, None, 0.0);
        assert!((io - (1.0 + 125.0 * 26.0 / 12.0)).abs() < 1e-9);
    }

    #[test]
    fn clustering_factor_drives_index_cost() {
        let m = CostModel::new(8192, 8);
        let good = IndexFacts::fixed(2, 10_000.0, 100_000.0, 20_000.0);
        let bad = IndexFacts::fixed(2, 10_000.0, 5_000_000.0, 5_000_000.0);
        let (g, b) = (
            m.index_access(&good, 0.01, 50_000.0, None, Cached::default()).total(false),
            m.index_access(&bad, 0.01, 50_000.0, None, Cached::default()).total(false),
        );
        assert!(b > g * 10.0, "good {g}, bad {b}");
    }

    #[test]
    fn a_compressed_table_scans_cheaper_and_fetches_by_rowid_dearer() {
        let m = CostModel::new(8192, 8);
        // The lab's customers: 1 M rows in 19,527 blocks, 7,344 at QUERY LOW.
        let rows = 1_000_000.0;
        let row_scan = m.full_scan(19_527.0, rows, None, 0.0);
        for level in HccLevel::ALL {
            let cu = CuShape::estimate(level, rows, 7_344.0, 8192);
            assert!(cu.rows_per_cu <= 8192.0 && cu.blocks_per_cu >= 2.0, "{level:?}: {cu:?}");
            let scan = m.full_scan(7_344.0, rows, Some(&cu), 0.0);
            assert!(scan < row_scan, "{level:?}: {scan} against {row_scan}");
            let index = IndexFacts::fixed(2, 2_000.0, 1_476.0, rows);
            let (plain, into_cus) = (
                m.index_access(&index, 0.01, 10_000.0, None, Cached::default()),
                m.index_access(&index, 0.01, 10_000.0, Some(&cu), Cached::default()),
            );
            assert_eq!(plain.index, into_cus.index);
            // 15 visits (1,476 × 0.01): each a CU's blocks instead of one block.
            let extra = into_cus.table - plain.table;
            assert!(extra >= 15.0 * (cu.blocks_per_cu - 1.0), "{level:?}: a CU's blocks a visit, {extra}");
        }
        // QUERY LOW at the lab's figures: about 680 rows and 5 blocks a CU.
        let ql = CuShape::estimate(HccLevel::QueryLow, rows, 7_344.0, 8192);
        assert_eq!(ql.blocks_per_cu, 5.0);
        assert!((ql.rows_per_cu - 680.8).abs() < 1.0, "{ql:?}");
        // ARCHIVE HIGH's CUs reach the most rows a CU holds.
        let ah = CuShape::estimate(HccLevel::ArchiveHigh, rows, 1_951.0, 8192);
        assert_eq!(ah.rows_per_cu, 8192.0);
        assert_eq!(ah.blocks_per_cu, 16.0);
    }
}

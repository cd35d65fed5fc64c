//! The lab: the source experiments reproduced on lioscope, their data sets, and the
//! measuring and statistics they share, and the benchmarks. Everything here uses the
//! engine's public API only.
//!
//! - [`bench`](mod@bench): the benchmarks of the engine's core, indexes, in-memory scans, commits,
//!   loads, joins, and TPC-H beside PostgreSQL, SQLite and DuckDB.
//! - [`customers`]: the SH.CUSTOMERS-shaped table of the engine benchmark.
//! - [`cpu`]: cores against threads: wall time of 1..N CPU-bound workers launched at once.
//! - [`cr`]: the cost of consistent reads (full scans beside uncommitted updates).
//! - [`lio`]: logical reads per second by sessions, SLOB-style.
//! - [`mbrc`]: CPU during multiblock reads: cold full scans by `db_file_multiblock_read_count`,
//!   and the CPU of a read call against a block's.
//! - [`populate`]: in-memory population by worker count and MEMCOMPRESS level, of plain
//!   and migrated rows, and where its time goes by phase.
//! - [`scan`]: the cost of a row by access path, with performance counters, or
//!   instructions, cache misses and mispredictions simulated by callgrind ([`callgrind`]),
//!   and each path's bytes a second against a one-core memory bandwidth probe
//!   ([`bandwidth`]).
//! - [`tpch`]: TPC-H's tables, data and 22 queries in each engine's dialect, and how
//!   answers compare.
//! - [`join`]: where the join methods cross by outer rows (NESTED LOOPS through a well or a
//!   badly clustered index, HASH JOIN, MERGE JOIN), measured and by the optimizer's costs.
//! - [`levels`]: what the load-level experiments share: load levels, seeded shuffled rounds, sessions started at once with
//!   /proc/stat read around them, a level's figures over its runs.
//! - [`history`]: the results history: every run stored in SQLite, `lab history`, `lab compare`.
//! - [`environment`], [`progress`]: the machine a report comes from; a progress bar.
//! - [`report`]: the terminal tables, the CSV files and the HTML page with SVG charts.
//! - [`sample`], [`stats`]: measuring a statement; medians, Kruskal-Wallis and
//!   Mann-Whitney tests, a least-squares fit through the origin.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod bandwidth;
pub mod bench;
pub mod callgrind;
pub mod cpu;
pub mod cr;
pub mod customers;
pub mod environment;
pub mod history;
pub mod join;
pub mod levels;
pub mod lio;
pub mod mbrc;
pub mod populate;
pub mod progress;
pub mod report;
pub mod sample;
pub mod scan;
pub mod scan_peers;
pub mod stats;
pub mod tpch;

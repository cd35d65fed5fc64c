//! TPC-H: the workload of `lioscope bench tpch` and of the TPC-H answer tests.
//!
//! - [`schema`]: the eight tables with their primary and foreign keys, in the types of
//!   each engine ([`Dialect`]).
//! - [`data`]: their rows at a scale factor, made in-process by the `tpchgen` crate (the
//!   Rust port of the specification's `dbgen`, row for row the same data) and written as
//!   `|`-separated `.tbl` files every engine loads.
//! - [`queries`]: the 22 queries, written here from the specification's definitions
//!   once, as templates rendered in Oracle's dialect for lioscope and in each peer's;
//!   each with the specification's validation parameters and a second set.
//! - [`answers`]: answers as the engines' agree or differ: whole numbers exactly, other
//!   numbers to a relative 1e-9 (1e-6 against SQLite's REAL sums), dates as
//!   `YYYY-MM-DD`, CHAR padding trimmed; and the stored expected answers.
//!
//! Invariant: every engine gets the same rows, the same keys and the same query, only
//! spelled in its own dialect; where a peer needs a text of its own to run, finish or
//! answer the same (SQLite's missing column-alias lists, its joins inside OR, its REAL
//! bounds), the query says so.

pub mod answers;
pub mod data;
pub mod queries;
pub mod schema;

/// The SQL spelling a text is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// lioscope's, which is Oracle's: `DATE '...' + INTERVAL '1' YEAR`, `FETCH FIRST`.
    Oracle,
    /// PostgreSQL's, which DuckDB reads as well.
    Postgres,
    /// DuckDB's: PostgreSQL's, with its own type names.
    DuckDb,
    /// SQLite's: dates as text, `date(..., '+1 year')`, `strftime`, `LIMIT`.
    Sqlite,
}

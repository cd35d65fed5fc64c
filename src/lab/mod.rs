//! The lab: the source experiments reproduced on lioscope, their data sets, and the
//! measuring and statistics they share. Everything here uses the public Session API only.
//!
//! - [`customers`]: the SH.CUSTOMERS-shaped table of the engine benchmark.
//! - [`cr`]: the cost of consistent reads (full scans beside uncommitted updates).
//! - [`sample`], [`stats`]: measuring a statement; medians and Kruskal-Wallis tests.

pub mod cr;
pub mod customers;
pub mod sample;
pub mod stats;

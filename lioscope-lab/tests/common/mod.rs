//! Helpers shared by the integration tests of the lab and the benchmarks: the
//! workspace's test helpers (`lioscope-testkit`).

pub use lioscope_testkit::*;

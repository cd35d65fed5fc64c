//! Helpers shared by the integration tests of the `lioscope` command: the workspace's test
//! helpers (`lioscope-testkit`).

pub use lioscope_testkit::*;

//! Helpers shared by the engine's integration tests: the workspace's test helpers
//! (`lioscope-testkit`) and the bank of the durability and fault tests.
#![allow(dead_code, reason = "every test file compiles this module and uses only part of it")]

pub mod bank;

pub use lioscope_testkit::*;

//! The lab's data sets and helpers shared by the benchmarks and experiments. Everything
//! here uses the public Session API only.

pub mod customers;

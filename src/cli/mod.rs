//! The `lioscope` command: `create`, `shell`, `sql` and `bench`. Everything here goes
//! through the public library API (`Database`, `Session`), as any embedding program would.

pub mod autotrace;
pub mod bench;
pub mod bench_commits;
pub mod bench_index;
pub mod bench_inmemory;
pub mod format;
pub mod script;
pub mod shell;

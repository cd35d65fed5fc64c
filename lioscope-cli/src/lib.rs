//! The `lioscope` command: `create`, `shell`, `sql` and `sqllogictest` (here), `lab` and
//! `bench` (from lioscope-lab). Everything here goes through the engine's public API (`Database`,
//! `Session`), as any embedding program would.
//!
//! The shell and `lioscope sql` share one runner: `script` splits text into statements,
//! `sqlplus` reads the SQL*Plus commands among them, `runner` runs both (with
//! `statement` for SQL, `variables` for bind variables, `autotrace` and `format` for what
//! is printed, `output` for where) in a `target`: an embedded session, or a session of a
//! `lioscope serve` reached over PostgreSQL's protocol (`--connect`). `snapper` is the SNAPPER command: what sessions did
//! over snapshots, read from the statistics views. `logic_test` runs files of SQLite's
//! sqllogictest corpus (`lioscope sqllogictest`).

pub mod autotrace;
pub mod format;
pub mod logic_test;
pub mod output;
pub mod runner;
pub mod script;
pub mod shell;
pub mod snapper;
pub mod sqlplus;
pub mod statement;
pub mod target;
pub mod variables;

//! The one error type of lioscope, grouped by what the caller must do about it.
//!
//! - bad input (`Parse`, `Unsupported`, `UnknownObject`, `UnknownName`, `ObjectExists`,
//!   `InvalidValue`, `Csv`, `InvalidParameter`): the statement was rejected; nothing stored
//!   changed.
//! - a database that cannot be used (`NotADatabase`, `DatabaseInUse`, `Corrupt`): the
//!   files are not what they should be, or are in use; the message names the file and,
//!   for a block, its address.
//! - `Io`: the operating system refused a read or write; the message names the file.
//! - a constraint (`UniqueViolation`, `NullInserted`, `NullUpdated`, `CheckViolation`,
//!   `ParentKeyNotFound`, `ChildRecordFound`): the statement was rejected; nothing stored
//!   changed. Their messages start with Oracle's error number and name the constraint
//!   (or the column) with its schema.
//! - constraint DDL refused (`CannotValidate`, `ConstraintNameUsed`, `SecondPrimaryKey`,
//!   `UnknownConstraint`, `NoReferencedKey`, `ForeignKeyMismatch`, `KeyReferenced`,
//!   `IndexEnforcesKey`, `CheckNotAllowed`): nothing changed.
//! - transactions (`SnapshotTooOld`, `UndoSpace`, `Deadlock`, `CannotSerialize`,
//!   `Cancelled`, `LockWaitTimeout`, `Transaction`): the statement failed as a whole and changed nothing;
//!   the transaction is still open.
//! - `InstanceFailed`: the redo log or a datafile sync failed; every statement and
//!   commit fails until the database is opened again, whose crash recovery restores
//!   every acknowledged commit.
//! - `UndoFailed`: a statement failed and removing what it had stored failed too; the
//!   table may hold part of the statement's rows. Both errors are kept.
//!
//! Broken internal invariants are not errors: they `assert!` with a message that states
//! the invariant.

use std::path::PathBuf;

/// The result type used across lioscope.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQL text that does not parse. `position` is "line L, column C" when known.
    #[error("syntax error{}: {message}", at(position))]
    Parse { message: String, position: Option<String> },

    /// A construct lioscope does not implement, named as the user wrote it.
    #[error("not supported{}: {construct}", at(position))]
    Unsupported { construct: String, position: Option<String> },

    /// A table, column, view, function or parameter that does not exist.
    #[error("{kind} {name} does not exist")]
    UnknownObject { kind: &'static str, name: String },

    /// A name in a statement that does not resolve, with where it stands.
    #[error("{kind} {name} does not exist{}", at(position))]
    UnknownName { kind: &'static str, name: String, position: Option<String> },

    /// CREATE of something that already exists.
    #[error("{kind} {name} already exists")]
    ObjectExists { kind: &'static str, name: String },

    /// A value that does not fit where it goes: type, length, precision, range, division
    /// by zero. `context` names the column or function.
    #[error("{context}: {message}")]
    InvalidValue { context: String, message: String },

    /// A CSV line that cannot be loaded. Lines and columns count from 1.
    #[error("{file}, line {line}, column {column}: {message}")]
    Csv { file: PathBuf, line: u64, column: usize, message: String },

    /// An unknown parameter, or a value a parameter does not accept.
    #[error("parameter {name}: {message}")]
    InvalidParameter { name: String, message: String },

    /// A directory that is not a lioscope database, or one whose files cannot be used.
    #[error("{path} is not a lioscope database: {reason}")]
    NotADatabase { path: PathBuf, reason: String },

    /// The database is already open (in this process or another): one opener at a time.
    #[error("{path} is already open; a database can be opened by one process (and one Database) at a time")]
    DatabaseInUse { path: PathBuf },

    /// Stored data that fails its checks (checksum, block address, format).
    #[error("corrupt data in {file}{}: {reason}", block_at(*block))]
    Corrupt { file: PathBuf, block: Option<u32>, reason: String },

    /// The operating system refused an operation on a file.
    #[error("{operation} {path}: {source}")]
    Io { operation: &'static str, path: PathBuf, source: std::io::Error },

    /// A consistent read needed undo that has been overwritten (Oracle's ORA-01555).
    #[error("snapshot too old: {reason}")]
    SnapshotTooOld { reason: String },

    /// The undo tablespace has no room for a transaction's undo (Oracle's ORA-30036).
    #[error("unable to extend undo: {reason}")]
    UndoSpace { reason: String },

    /// Waiting for a row lock would close a cycle of waiting transactions (ORA-00060);
    /// the statement that would have waited is rolled back, its transaction stays open.
    #[error("deadlock detected while waiting for a row lock: {cycle}")]
    Deadlock { cycle: String },

    /// A serializable transaction met a row changed by a transaction that committed
    /// after its snapshot (Oracle's ORA-08177); `why` says what it met. The statement
    /// failed as a whole; the transaction stays open, and retrying it anew may succeed.
    #[error("can't serialize access for this transaction: {why}")]
    CannotSerialize { why: String },

    /// The running call was asked to stop (a client's cancel request, a statement
    /// timeout): Oracle's ORA-01013. The statement failed as a whole; the transaction
    /// stays open.
    #[error("ORA-01013: user requested cancel of current operation")]
    Cancelled,

    /// A row lock wait lasted longer than the session allows (a client's `lock_timeout`):
    /// Oracle's ORA-30006. The statement failed as a whole; the transaction stays open.
    #[error("ORA-30006: resource busy; acquire with WAIT timeout expired (waited {waited_ms} ms for a row lock)")]
    LockWaitTimeout { waited_ms: u64 },

    /// The session's user lacks a privilege the statement needs (ORA-01031); `what`
    /// names it and the object. Nothing changed.
    #[error("ORA-01031: insufficient privileges: {what}")]
    InsufficientPrivileges { what: String },

    /// A log-in named a user that does not exist or gave the wrong password (ORA-01017;
    /// which of the two is not told).
    #[error("ORA-01017: invalid username/password; logon denied")]
    LogonDenied { user: String },

    /// COMMIT, ROLLBACK TO, SET TRANSACTION or a savepoint name that makes no sense in the
    /// session's transaction state.
    #[error("{message}")]
    Transaction { message: String },

    /// A row whose key a unique index already holds (Oracle's ORA-00001); the statement
    /// changed nothing. `index` is the index's (and its key constraint's) name, with
    /// its schema.
    #[error("ORA-00001: unique constraint ({index}) violated")]
    UniqueViolation { index: String },

    /// NULL for a NOT NULL column in a new row; `column` is `"SCHEMA"."TABLE"."COLUMN"`.
    #[error("ORA-01400: cannot insert NULL into ({column})")]
    NullInserted { column: String },

    /// An UPDATE that sets a NOT NULL column to NULL; `column` as for `NullInserted`.
    #[error("ORA-01407: cannot update ({column}) to NULL")]
    NullUpdated { column: String },

    /// A row whose CHECK condition is FALSE; `constraint` is `SCHEMA.NAME`.
    #[error("ORA-02290: check constraint ({constraint}) violated")]
    CheckViolation { constraint: String },

    /// A child row whose foreign key matches no parent row.
    #[error("ORA-02291: integrity constraint ({constraint}) violated - parent key not found")]
    ParentKeyNotFound { constraint: String },

    /// A parent row deleted, or its key changed, while child rows refer to it.
    #[error("ORA-02292: integrity constraint ({constraint}) violated - child record found")]
    ChildRecordFound { constraint: String },

    /// A constraint that existing rows violate, refused when it is added or enabled:
    /// `code` and `what` are Oracle's (ORA-02293 check constraint violated, ORA-02296
    /// null values found, ORA-02298 parent keys not found, ORA-02299 duplicate keys found).
    #[error("ORA-{code:05}: cannot validate ({constraint}) - {what}")]
    CannotValidate { code: u32, constraint: String, what: &'static str },

    /// A new constraint named as an existing one (ORA-02264).
    #[error("ORA-02264: name {name} already used by an existing constraint")]
    ConstraintNameUsed { name: String },

    /// A CHECK condition holding what Oracle refuses there: a subquery (ORA-02251), a
    /// function of the date, time or session (ORA-02436), ROWNUM or LEVEL (ORA-00976),
    /// a sequence (ORA-02287), a package's function (ORA-00904). `what` names it,
    /// `constraint` says which constraint.
    #[error("ORA-{code:05}: {text}: {what} in {constraint}")]
    CheckNotAllowed { code: u32, text: &'static str, what: String, constraint: String },

    /// A second primary key for a table (ORA-02260).
    #[error("ORA-02260: table {table} can have only one primary key")]
    SecondPrimaryKey { table: String },

    /// A constraint name that names no constraint of the table (ORA-02443 for DROP,
    /// ORA-02431 for ENABLE and DISABLE).
    #[error("ORA-{code:05}: constraint {name} of table {table} does not exist")]
    UnknownConstraint { code: u32, name: String, table: String },

    /// DROP INDEX of the index a primary or unique key is enforced with (ORA-02429).
    #[error("ORA-02429: cannot drop index {index} used for enforcement of unique/primary key {constraint}")]
    IndexEnforcesKey { index: String, constraint: String },

    /// A foreign key whose columns match no primary or unique key of the parent table
    /// (ORA-02270).
    #[error("ORA-02270: no matching unique or primary key for this column-list in {parent}")]
    NoReferencedKey { parent: String },

    /// A foreign key whose columns cannot refer to the parent's key: ORA-02256 (number of
    /// referencing columns must match referenced columns), ORA-02267 (column type
    /// incompatible with referenced column type), ORA-02268 (referenced table does not
    /// have a primary key).
    #[error("ORA-{code:05}: {what}")]
    ForeignKeyMismatch { code: u32, what: String },

    /// A key dropped or disabled, or its table dropped or truncated, while a foreign key
    /// refers to it: `code` and `what` are Oracle's (ORA-02273 for DROP CONSTRAINT,
    /// ORA-02297 for DISABLE, ORA-02449 for DROP TABLE, ORA-02266 for TRUNCATE);
    /// `foreign_key` names one that refers to it, with its schema.
    #[error("ORA-{code:05}: {what} (foreign key {foreign_key})")]
    KeyReferenced { code: u32, what: String, foreign_key: String },

    /// The instance cannot go on: its redo log cannot be written, or a datafile sync
    /// failed. Only ROLLBACK still runs; the database must be opened again.
    #[error("the instance must be restarted: {reason}")]
    InstanceFailed { reason: String },

    /// A failed statement whose rows could not all be removed again.
    #[error("{statement}; and undoing the statement failed: {undo}")]
    UndoFailed { statement: Box<Error>, undo: Box<Error> },
}

fn at(position: &Option<String>) -> String {
    position.as_ref().map(|p| format!(" at {p}")).unwrap_or_default()
}

fn block_at(block: Option<u32>) -> String {
    block.map(|b| format!(", block {b}")).unwrap_or_default()
}

impl Error {
    /// Oracle's error number for this error (ORA-nnnnn), where one says what happened;
    /// `None` for errors Oracle has no single number for (a value out of range, an
    /// I/O error, ...). A client protocol sends it beside its own codes.
    pub fn ora_code(&self) -> Option<u32> {
        Some(match self {
            Error::Parse { .. } => 900,
            Error::Unsupported { .. } => 3001,
            Error::UnknownObject { kind, .. } | Error::UnknownName { kind, .. } => match *kind {
                "table" | "view" | "table or view" => 942,
                "sequence" => 2289,
                "user" => 1918,
                "index" => 1418,
                "column" | "table or alias" | "function" => 904,
                _ => 4043,
            },
            Error::ObjectExists { .. } => 955,
            Error::InvalidParameter { .. } => 2065,
            Error::SnapshotTooOld { .. } => 1555,
            Error::UndoSpace { .. } => 30036,
            Error::Deadlock { .. } => 60,
            Error::CannotSerialize { .. } => 8177,
            Error::Cancelled => 1013,
            Error::InsufficientPrivileges { .. } => 1031,
            Error::LockWaitTimeout { .. } => 30006,
            Error::LogonDenied { .. } => 1017,
            Error::UniqueViolation { .. } => 1,
            Error::NullInserted { .. } => 1400,
            Error::NullUpdated { .. } => 1407,
            Error::CheckViolation { .. } => 2290,
            Error::ParentKeyNotFound { .. } => 2291,
            Error::ChildRecordFound { .. } => 2292,
            Error::CannotValidate { code, .. }
            | Error::CheckNotAllowed { code, .. }
            | Error::UnknownConstraint { code, .. }
            | Error::ForeignKeyMismatch { code, .. }
            | Error::KeyReferenced { code, .. } => *code,
            Error::ConstraintNameUsed { .. } => 2264,
            Error::SecondPrimaryKey { .. } => 2260,
            Error::IndexEnforcesKey { .. } => 2429,
            Error::NoReferencedKey { .. } => 2270,
            Error::UndoFailed { statement, .. } => return statement.ora_code(),
            _ => return None,
        })
    }

    /// A value error for `context` (a column, function or operator name).
    pub fn value(context: impl Into<String>, message: impl Into<String>) -> Error {
        Error::InvalidValue { context: context.into(), message: message.into() }
    }

    /// An unsupported construct without a known position.
    pub fn unsupported(construct: impl Into<String>) -> Error {
        Error::Unsupported { construct: construct.into(), position: None }
    }

    /// An I/O error on `path` during `operation` ("read", "write", "open", ...).
    pub fn io(operation: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { operation, path: path.into(), source }
    }
}

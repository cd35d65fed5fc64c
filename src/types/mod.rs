//! SQL data types and values: what a column may hold, how a value is compared, shown and
//! stored.
//!
//! - [`DataType`]: the declared type of a column (NUMBER(p,s), INTEGER, VARCHAR2(n),
//!   CHAR(n), DATE, TIMESTAMP(p), INTERVAL YEAR(p) TO MONTH, INTERVAL DAY(p) TO
//!   SECOND(s)) and the checks a value must pass to be stored in it.
//! - [`Datum`]: one value while a statement runs; strings may borrow from a pinned block
//!   so that a scan does not copy what it only compares. [`Value`] is the owned form.
//! - [`Fixed`]: an exact decimal with a 64-bit mantissa, the fast path of arithmetic on
//!   NUMBER(p,s) values, and [`ExactSum`], a sum of them in 128 bits.
//! - [`encoding`]: the bytes a value occupies inside a row (the payload after the column
//!   length byte).
//! - [`pg_types`]: each type as PostgreSQL's clients and catalog views see it.
//!
//! Invariants: a [`Datum::Num`] never holds a whole number that fits in `i64` (that is
//! always [`Datum::Int`]), so equal numbers have one representation and grouping and
//! hashing are exact. A zero-length string is NULL, as in Oracle.

mod datatype;
pub mod datetime;
pub mod encoding;
mod fixed;
pub mod pg_types;
mod value;

pub use datatype::{
    DEFAULT_FRACTION_DIGITS, DEFAULT_LEADING_DIGITS, DataType, MAX_NUMBER_DIGITS, MAX_STRING_BYTES,
    round_interval_micros, round_micros,
};
pub use fixed::{ExactSum, Fixed};
pub use value::{Datum, Value, format_date, local_now, local_now_micros, parse_date};

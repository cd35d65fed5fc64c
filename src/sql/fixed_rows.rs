//! The rows of a fixed view (`v$`, `USER_`, `DBA_` views), as `views` and
//! `security_views` build them: named columns and rows of values.

use crate::types::{Datum, Value};

/// A fixed view's columns and rows.
pub(super) type Rows = (Vec<String>, Vec<Vec<Value>>);

pub(super) fn cols(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) fn int(v: u64) -> Value {
    Datum::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

pub(super) fn text(s: impl Into<String>) -> Value {
    Datum::string(s.into())
}

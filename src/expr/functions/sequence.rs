//! NEXTVAL and CURRVAL of sequences, as a statement's expressions read them. The values
//! come from a [`SequenceSource`] the layer owning sequences gives the statement (its
//! session's); this module keeps Oracle's rule for one statement: every reference to a
//! sequence in one row reads the same value, NEXTVAL moving the sequence on once a row
//! whatever the number of references, where they stand (a CURRVAL before the NEXTVAL, a
//! branch of a CASE not taken).
//!
//! Invariant: [`FunctionContext::start_sequence_row`] starts each row, taking the next
//! value of every sequence the row's expressions read NEXTVAL of, before any of them is
//! evaluated; a row's references read those values.

use super::FunctionContext;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::types::{Datum, Value};
use rust_decimal::Decimal;
use std::sync::Arc;

/// Where a statement's NEXTVAL and CURRVAL come from.
pub trait SequenceSource: Send + Sync + std::fmt::Debug {
    /// Whether a sequence `name` exists.
    fn exists(&self, name: &str) -> bool;

    /// Refuses a session whose user may not read sequence `name` (ORA-01031): it owns
    /// it, was granted SELECT on it, or holds SELECT ANY SEQUENCE.
    fn may_read(&self, name: &str) -> Result<()>;

    /// The sequence's next value, now the session's current one.
    fn next_value(&self, name: &str) -> Result<i128>;

    /// The value the session's last NEXTVAL of the sequence gave (ORA-08002 if none).
    fn current_value(&self, name: &str) -> Result<i128>;
}

/// The value a sequence gave a row of the statement.
#[derive(Debug, Clone)]
pub struct RowSequenceValue {
    name: Arc<str>,
    row: u64,
    value: Value,
}

/// A sequence number as a value: `Datum::Int` when it fits.
pub fn sequence_value(n: i128) -> Value {
    match i64::try_from(n) {
        Ok(i) => Datum::Int(i),
        Err(_) => Datum::Num(Decimal::from_i128_with_scale(n, 0)),
    }
}

/// The sequences whose NEXTVAL `exprs` read, each once: what
/// [`FunctionContext::start_sequence_row`] takes for a row of them.
pub fn nextval_sequences<'e>(exprs: impl IntoIterator<Item = &'e Expr>) -> Vec<Arc<str>> {
    let mut names: Vec<Arc<str>> = Vec::new();
    for e in exprs {
        e.visit_nodes(&mut |n| {
            if let Expr::Sequence { name, next: true } = n
                && !names.contains(name)
            {
                names.push(name.clone());
            }
        });
    }
    names
}

impl FunctionContext {
    /// Starts the next row of a statement whose expressions read the NEXTVAL of the
    /// sequences `nexts` (see [`nextval_sequences`]): takes each one's next value.
    pub fn start_sequence_row(&mut self, nexts: &[Arc<str>]) -> Result<()> {
        self.sequence_row += 1;
        for name in nexts {
            self.sequence(name, true)?;
        }
        Ok(())
    }

    /// `name.NEXTVAL` (`next`) or `name.CURRVAL` for the row being made.
    pub fn sequence(&mut self, name: &Arc<str>, next: bool) -> Result<Value> {
        let row = self.sequence_row;
        if let Some(taken) = self.sequence_values.iter().find(|v| v.name == *name)
            && taken.row == row
        {
            return Ok(taken.value.clone());
        }
        let source = self.sequences.as_ref().ok_or_else(|| Error::InvalidValue {
            context: format!("{name}.{}", if next { "NEXTVAL" } else { "CURRVAL" }),
            message: "ORA-02287: sequence number not allowed here".into(),
        })?;
        if !next {
            return source.current_value(name).map(sequence_value);
        }
        let value = sequence_value(source.next_value(name)?);
        match self.sequence_values.iter_mut().find(|v| v.name == *name) {
            Some(taken) => (taken.row, taken.value) = (row, value.clone()),
            None => self.sequence_values.push(RowSequenceValue { name: name.clone(), row, value: value.clone() }),
        }
        Ok(value)
    }
}

//! Bind variables of a script, as SQL*Plus keeps them: `VARIABLE` declares one with its
//! type, `EXEC :name := expression` sets it, and a statement that mentions `:name` is
//! run through a cursor with the value bound by name.
//!
//! Invariants: names are kept as the session names binds (`:NAME`, see
//! [`normalized_bind_name`](lioscope::binds::normalized_bind_name)); a variable's
//! value always fits its declared type (NULL until set), because every value is coerced
//! on the way in.

use super::sqlplus::VariableType;
use lioscope::types::{DataType, Value};
use lioscope::{Error, Result};
use lioscope::{QueryResult, StatementKind};

/// A declared bind variable.
#[derive(Debug, Clone)]
pub struct Variable {
    pub kind: VariableType,
    /// Its value, of `kind`; NULL until set.
    pub value: Value,
}

/// The bind variables of a runner, in the order they were declared.
#[derive(Debug, Default)]
pub struct BindVariables {
    declared: Vec<(String, Variable)>,
}

impl BindVariables {
    /// Declares `name` (again, if it was: its value is NULL again).
    pub fn declare(&mut self, name: &str, kind: VariableType) {
        let variable = Variable { kind, value: Value::Null };
        match self.declared.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => *old = variable,
            None => self.declared.push((name.to_owned(), variable)),
        }
    }

    /// The variable called `name`, or an error naming it.
    pub fn get(&self, name: &str) -> Result<&Variable> {
        self.declared.iter().find(|(n, _)| n == name).map(|(_, v)| v).ok_or_else(|| undeclared(name))
    }

    /// Sets `name` to `value` coerced to its type.
    pub fn assign(&mut self, name: &str, value: Value) -> Result<()> {
        let kind = self.get(name)?.kind;
        let value = data_type(kind).coerce(value, name)?.into_owned();
        if let Some((_, variable)) = self.declared.iter_mut().find(|(n, _)| n == name) {
            variable.value = value;
        }
        Ok(())
    }

    /// The values for a cursor's bind names, in its slot order.
    pub fn values_for(&self, names: &[String]) -> Result<Vec<Value>> {
        names.iter().map(|name| self.get(name).map(|v| v.value.clone())).collect()
    }

    /// The declared names, in declaration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.declared.iter().map(|(n, _)| n.as_str())
    }

    /// `name`'s value as a one-row result headed by its name without the colon (what
    /// PRINT shows).
    pub fn as_result(&self, name: &str) -> Result<QueryResult> {
        let variable = self.get(name)?;
        Ok(QueryResult {
            kind: StatementKind::Query,
            columns: vec![name.trim_start_matches(':').to_owned()],
            rows: vec![vec![variable.value.clone()]],
            rows_affected: 0,
            message: None,
            plan_statistics: None,
        })
    }

    /// `name`'s declaration as SQL*Plus lists it.
    pub fn declaration(&self, name: &str) -> Result<String> {
        let variable = self.get(name)?;
        Ok(format!("variable   {}\ndatatype   {}\n", name.trim_start_matches(':'), variable.kind))
    }
}

fn undeclared(name: &str) -> Error {
    let bare = name.trim_start_matches(':');
    let message = if bare.starts_with(|c: char| c.is_ascii_digit()) {
        "not declared (VARIABLE declares named bind variables only: VARIABLE name NUMBER or VARCHAR2(n))".to_owned()
    } else {
        format!("not declared (VARIABLE {bare} NUMBER or VARIABLE {bare} VARCHAR2(n) declares it)")
    };
    Error::InvalidValue { context: format!("bind variable {name}"), message }
}

/// The column type whose coercion a variable of `kind` follows.
fn data_type(kind: VariableType) -> DataType {
    match kind {
        VariableType::Number => DataType::Number { precision: None, scale: None },
        VariableType::Varchar2 { max_bytes } => DataType::Varchar2 { max_bytes },
    }
}

/// Whether `sql` holds a bind variable (`:name` or `:1` outside quotes and comments), so
/// it must run through a cursor with values.
pub fn mentions_bind_variable(sql: &str) -> bool {
    // Text the tokenizer refuses has no binds to find: running it reports the error.
    lioscope::binds::bind_names(sql).is_ok_and(|names| !names.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_coerced_to_the_declared_type() {
        let mut v = BindVariables::default();
        v.declare(":N", VariableType::Number);
        v.declare(":S", VariableType::Varchar2 { max_bytes: 3 });
        assert_eq!(v.get(":N").unwrap().value, Value::Null);
        v.assign(":N", Value::string(" 42 ")).unwrap();
        assert_eq!(v.get(":N").unwrap().value, Value::Int(42));
        v.assign(":S", Value::Int(123)).unwrap();
        assert_eq!(v.get(":S").unwrap().value, Value::string("123"));
        let too_long = v.assign(":S", Value::string("abcd")).unwrap_err().to_string();
        assert!(too_long.contains(":S") && too_long.contains("maximum: 3"), "{too_long}");
        assert!(v.assign(":N", Value::string("abc")).unwrap_err().to_string().contains("invalid number"));
        assert_eq!(v.get(":S").unwrap().value, Value::string("123"), "a failed assignment keeps the value");
    }

    #[test]
    fn undeclared_names_are_errors_that_name_them() {
        let mut v = BindVariables::default();
        v.declare(":A", VariableType::Number);
        let e = v.values_for(&[":A".into(), ":B".into()]).unwrap_err().to_string();
        assert_eq!(e, "bind variable :B: not declared (VARIABLE B NUMBER or VARIABLE B VARCHAR2(n) declares it)");
        assert!(v.assign(":C", Value::Int(1)).is_err());
        let e = v.values_for(&[":1".into()]).unwrap_err().to_string();
        assert!(e.starts_with("bind variable :1: not declared (VARIABLE declares named"), "{e}");
    }

    #[test]
    fn declaring_again_keeps_the_order_and_resets_the_value() {
        let mut v = BindVariables::default();
        v.declare(":B", VariableType::Number);
        v.declare(":A", VariableType::Number);
        v.assign(":B", Value::Int(1)).unwrap();
        v.declare(":B", VariableType::Varchar2 { max_bytes: 5 });
        assert_eq!(v.names().collect::<Vec<_>>(), [":B", ":A"]);
        assert_eq!(v.get(":B").unwrap().value, Value::Null);
        assert_eq!(v.declaration(":B").unwrap(), "variable   B\ndatatype   VARCHAR2(5)\n");
        assert_eq!(v.values_for(&[":A".into(), ":B".into()]).unwrap(), [Value::Null, Value::Null]);
    }

    #[test]
    fn bind_variables_outside_quotes_and_comments() {
        assert!(mentions_bind_variable("SELECT * FROM t WHERE a = :lo"));
        assert!(mentions_bind_variable("SELECT :1 FROM dual"));
        assert!(!mentions_bind_variable("SELECT ':x', \"a:b\" FROM dual"));
        assert!(!mentions_bind_variable("SELECT 1 -- :x\nFROM dual /* :y */"));
        assert!(!mentions_bind_variable("SELECT TO_DATE('2024-01-01 10:00') FROM dual"));
        assert!(mentions_bind_variable("SELECT /* a */ :x FROM dual"));
    }
}

//! lioscope's errors as a PostgreSQL client reads them: the message with Oracle's error
//! number in front (`ORA-00942: table T does not exist`), and the SQLSTATE a driver's
//! retry and error handling acts on (40001 to retry a serialization failure, 23505 for a
//! duplicate key, 57014 for a cancelled statement, ...).

use lioscope::Error;
use pgwire::error::{ErrorInfo, PgWireError};

/// The SQLSTATE of `error`, PostgreSQL's code for the same condition.
pub fn sqlstate(error: &Error) -> &'static str {
    match error {
        Error::Parse { .. } => "42601",
        Error::Unsupported { .. } => "0A000",
        Error::UnknownObject { kind, .. } | Error::UnknownName { kind, .. } => match *kind {
            "table" | "view" | "table or view" | "index" | "sequence" => "42P01",
            "column" | "table or alias" => "42703",
            "function" => "42883",
            "parameter" => "42704",
            "database" => "3D000",
            _ => "42704",
        },
        Error::ObjectExists { kind, .. } => match *kind {
            "column" => "42701",
            "user" => "42710",
            _ => "42P07",
        },
        Error::InvalidValue { .. } | Error::Csv { .. } => "22023",
        Error::InvalidParameter { .. } => "22023",
        Error::NotADatabase { .. } | Error::Corrupt { .. } => "XX001",
        Error::DatabaseInUse { .. } => "55006",
        Error::Io { .. } => "58030",
        Error::SnapshotTooOld { .. } => "72000",
        Error::UndoSpace { .. } => "53100",
        Error::Deadlock { .. } => "40P01",
        Error::CannotSerialize { .. } => "40001",
        Error::Cancelled => "57014",
        Error::InsufficientPrivileges { .. } => "42501",
        Error::LockWaitTimeout { .. } => "55P03",
        Error::LogonDenied { .. } => "28P01",
        Error::Transaction { .. } => "25000",
        Error::UniqueViolation { .. } => "23505",
        Error::NullInserted { .. } | Error::NullUpdated { .. } => "23502",
        Error::CheckViolation { .. } => "23514",
        Error::ParentKeyNotFound { .. } | Error::ChildRecordFound { .. } | Error::KeyReferenced { .. } => "23503",
        Error::CannotValidate { .. } => "23000",
        Error::ConstraintNameUsed { .. } => "42710",
        Error::CheckNotAllowed { .. }
        | Error::SecondPrimaryKey { .. }
        | Error::UnknownConstraint { .. }
        | Error::IndexEnforcesKey { .. }
        | Error::NoReferencedKey { .. }
        | Error::ForeignKeyMismatch { .. } => "42P16",
        Error::InstanceFailed { .. } => "57P01",
        Error::UndoFailed { statement, .. } => sqlstate(statement),
    }
}

/// `error`'s message, its ORA- number in front where it has one and does not say it.
pub fn message(error: &Error) -> String {
    let text = error.to_string();
    match error.ora_code() {
        Some(code) if !text.starts_with("ORA-") => format!("ORA-{code:05}: {text}"),
        _ => text,
    }
}

/// `error` as an ERROR response.
pub fn error_info(error: &Error) -> ErrorInfo {
    ErrorInfo::new("ERROR".into(), sqlstate(error).into(), message(error))
}

/// An ERROR response with `code` and `message` (conditions the server itself raises).
pub fn user_error(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("ERROR".into(), code.into(), message.into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_oracle_number_and_a_sqlstate_drivers_act_on() {
        let missing = Error::UnknownObject { kind: "table", name: "T".into() };
        assert_eq!(message(&missing), "ORA-00942: table T does not exist");
        assert_eq!(sqlstate(&missing), "42P01");
        let duplicate = Error::UniqueViolation { index: "LIOSCOPE.T_PK".into() };
        assert_eq!(message(&duplicate), "ORA-00001: unique constraint (LIOSCOPE.T_PK) violated");
        assert_eq!(sqlstate(&duplicate), "23505");
        assert_eq!(sqlstate(&Error::CannotSerialize { why: "x".into() }), "40001");
        assert_eq!(sqlstate(&Error::Deadlock { cycle: "x".into() }), "40P01");
        assert_eq!(message(&Error::Cancelled), "ORA-01013: user requested cancel of current operation");
        assert_eq!(sqlstate(&Error::Parse { message: "x".into(), position: None }), "42601");
    }
}

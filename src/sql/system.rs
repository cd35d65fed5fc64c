//! ALTER SESSION, ALTER SYSTEM, SHOW PARAMETERS.

use crate::error::{Error, Result};
use crate::instance::{Modifiable, PARAMETERS, Session, lookup_parameter, validate_parameter};
use crate::sql::{QueryResult, StatementKind};
use crate::types::Datum;

pub fn alter_session(session: &Session, name: &str, value: &str) -> Result<QueryResult> {
    let def = lookup_parameter(name)?;
    if def.modifiable != Modifiable::SessionAndSystem {
        return Err(Error::InvalidParameter {
            name: def.name.into(),
            message: "cannot be changed with ALTER SESSION (use ALTER SYSTEM)".into(),
        });
    }
    let canonical = validate_parameter(def, value)?;
    let mut state = session.state.lock();
    state.overrides.retain(|(k, _)| k != def.name);
    state.overrides.push((def.name.to_owned(), canonical));
    session.db.parameter_changes.fetch_add(1, std::sync::atomic::Ordering::Release);
    Ok(QueryResult::message(StatementKind::Alter, "Session altered."))
}

/// Dynamic parameters change at once for every session; the others are stored in the
/// control file and take effect when the database is next opened.
pub fn alter_system(session: &Session, name: &str, value: &str) -> Result<QueryResult> {
    let def = lookup_parameter(name)?;
    let canonical = validate_parameter(def, value)?;
    match def.modifiable {
        Modifiable::Never => Err(Error::InvalidParameter {
            name: def.name.into(),
            message: "is fixed when the database is created".into(),
        }),
        Modifiable::SessionAndSystem | Modifiable::SystemImmediate => {
            if def.name == crate::instance::params::INMEMORY_SIZE {
                // The area is mapped first: a size the machine cannot back changes nothing.
                let pre_page = session.db.parameters.read().get_bool(crate::instance::params::PRE_PAGE_SGA);
                let bytes = crate::instance::params::parse_size(&canonical).unwrap_or_default(); // validated above
                session.db.inmemory.size_area(bytes, pre_page)?;
            }
            session.db.parameters.write().set(def.name, &canonical)?;
            session.db.apply_parameters();
            session.db.parameter_changes.fetch_add(1, std::sync::atomic::Ordering::Release);
            session.db.space.control.lock().parameters.insert(def.name.into(), canonical);
            if [crate::instance::params::INMEMORY_SIZE, crate::instance::params::INMEMORY_MAX_POPULATE_SERVERS]
                .contains(&def.name)
            {
                // More memory or workers: population goes on (or starts) at once.
                crate::inmemory::populate::on_open(&*session.db);
            }
            Ok(QueryResult::message(StatementKind::Alter, "System altered."))
        }
        Modifiable::SystemDeferredToOpen => {
            session.db.space.control.lock().parameters.insert(def.name.into(), canonical);
            Ok(QueryResult::message(
                StatementKind::Alter,
                format!("System altered. {} takes effect when the database is next opened.", def.name),
            ))
        }
    }
}

pub fn flush_buffer_cache(session: &Session) -> Result<QueryResult> {
    session.db.cache.flush(session.stats())?;
    Ok(QueryResult::message(StatementKind::Alter, "System altered."))
}

pub fn checkpoint(session: &Session) -> Result<QueryResult> {
    session.db.checkpoint()?;
    Ok(QueryResult::message(StatementKind::Alter, "System altered."))
}

/// ALTER SYSTEM SWITCH LOGFILE: the log writer moves to the next group.
pub fn switch_logfile(session: &Session) -> Result<QueryResult> {
    session.db.redo.switch_logfile()?;
    Ok(QueryResult::message(StatementKind::Alter, "System altered."))
}

/// SQL*Plus's SHOW PARAMETER [fragment]: NAME, TYPE, VALUE.
pub fn show_parameters(session: &Session, filter: Option<&str>) -> QueryResult {
    let values = session.parameters();
    let rows = PARAMETERS
        .iter()
        .filter(|p| filter.is_none_or(|f| p.name.contains(f)))
        .map(|p| {
            let ty = match p.kind {
                crate::instance::ParameterKind::Integer { .. } => "integer",
                crate::instance::ParameterKind::Size { .. } => "big integer",
                crate::instance::ParameterKind::Choice(_) => "string",
                crate::instance::ParameterKind::Boolean => "boolean",
            };
            let value = values.get(p.name).to_owned();
            vec![Datum::string(p.name), Datum::string(ty), Datum::string(value)]
        })
        .collect();
    QueryResult::rows(StatementKind::Describe, vec!["NAME".into(), "TYPE".into(), "VALUE".into()], rows)
}

//! A connection's client settings: the run-time parameters PostgreSQL clients set and
//! read (`client_encoding`, `DateStyle`, `application_name`, `statement_timeout`, ...),
//! their defaults, and the ones the server reports at startup.
//!
//! lioscope's own parameters are set with `ALTER SESSION` as in Oracle; these are the
//! protocol's. A name the server does not know is refused (42704), as PostgreSQL refuses
//! it, except a custom one (a name with a dot, `myapp.tenant`).

use lioscope::{ClientIdentity, Session};
use std::collections::BTreeMap;
use std::time::Duration;

/// The PostgreSQL version the server reports (clients choose their catalog queries by it).
pub const SERVER_VERSION: &str = "16.0";

/// What `SELECT version()` answers.
pub fn version() -> String {
    format!("PostgreSQL {SERVER_VERSION} (lioscope {}) on {}", env!("CARGO_PKG_VERSION"), std::env::consts::ARCH)
}

/// The settings and their defaults, by lower-case name (the case a client reads them
/// in is kept in `DISPLAY_NAMES`).
const DEFAULTS: &[(&str, &str)] = &[
    ("application_name", ""),
    ("client_encoding", "UTF8"),
    ("client_min_messages", "notice"),
    ("datestyle", "ISO, MDY"),
    ("default_transaction_isolation", "read committed"),
    ("default_transaction_read_only", "off"),
    ("extra_float_digits", "1"),
    ("integer_datetimes", "on"),
    ("intervalstyle", "postgres"),
    ("is_superuser", "on"),
    ("lock_timeout", "0"),
    ("max_identifier_length", "128"),
    ("search_path", "public"),
    ("server_encoding", "UTF8"),
    ("server_version", SERVER_VERSION),
    ("server_version_num", "160000"),
    ("standard_conforming_strings", "on"),
    ("statement_timeout", "0"),
    ("timezone", "UTC"),
    ("transaction_isolation", "read committed"),
];

/// How PostgreSQL spells the settings whose names are not all lower case.
const DISPLAY_NAMES: &[(&str, &str)] =
    &[("datestyle", "DateStyle"), ("intervalstyle", "IntervalStyle"), ("timezone", "TimeZone")];

/// Settings a client may read but not change.
const READ_ONLY: &[&str] = &[
    "integer_datetimes",
    "is_superuser",
    "max_identifier_length",
    "server_encoding",
    "server_version",
    "server_version_num",
];

/// One connection's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    values: BTreeMap<String, String>,
    /// Who the client is, for `v$session` (the program follows `application_name`).
    user: String,
    machine: String,
    /// `statement_timeout` as a duration, read each statement: parsed when set.
    timeout: Option<Duration>,
}

impl Settings {
    /// The settings of a client that connected as `user` from `machine`, with the
    /// startup parameters it sent (`application_name`, `client_encoding`, ...).
    pub fn new(user: &str, machine: &str, startup: &[(String, String)]) -> Settings {
        let mut settings = Settings {
            values: DEFAULTS.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            user: user.to_string(),
            machine: machine.to_string(),
            timeout: None,
        };
        for (name, value) in startup {
            let name = name.to_ascii_lowercase();
            if settings.values.contains_key(&name) && !READ_ONLY.contains(&name.as_str()) {
                settings.values.insert(name, value.clone());
            }
        }
        settings.timeout = settings.parsed_timeout();
        settings
    }

    /// Sets `name` to `value` (`None`: back to its default; `all` with `None`: every one).
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        let name = name.to_ascii_lowercase();
        if name == "all" && value.is_none() {
            for (n, v) in DEFAULTS {
                if !READ_ONLY.contains(n) && *n != "application_name" {
                    self.values.insert(n.to_string(), v.to_string());
                }
            }
            self.timeout = self.parsed_timeout();
            return Ok(());
        }
        if READ_ONLY.contains(&name.as_str()) {
            return Err(format!("parameter \"{name}\" cannot be changed"));
        }
        let default = DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        if default.is_none() && !name.contains('.') {
            return Err(format!("unrecognized configuration parameter \"{name}\""));
        }
        let value = match value {
            Some(v) => v.to_string(),
            None => default.unwrap_or("").to_string(),
        };
        if name == "statement_timeout" || name == "lock_timeout" {
            parse_duration(&value)?;
        }
        if name == "default_transaction_isolation" || name == "transaction_isolation" {
            isolation(&value)?;
        }
        self.values.insert(name, value);
        self.timeout = self.parsed_timeout();
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<String> {
        self.values.get(&name.to_ascii_lowercase()).cloned()
    }

    /// Every setting, by the name PostgreSQL shows.
    pub fn all(&self) -> Vec<(String, String)> {
        self.values.iter().map(|(n, v)| (display_name(n).to_string(), v.clone())).collect()
    }

    /// `statement_timeout`, when one is set.
    pub fn statement_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn parsed_timeout(&self) -> Option<Duration> {
        self.duration("statement_timeout")
    }

    /// `lock_timeout`, when one is set: how long a row lock wait may last.
    pub fn lock_timeout(&self) -> Option<Duration> {
        self.duration("lock_timeout")
    }

    /// The duration setting `name`, unless it is 0 (no limit).
    fn duration(&self, name: &str) -> Option<Duration> {
        self.values.get(name).and_then(|v| parse_duration(v).ok()).filter(|d| !d.is_zero())
    }

    /// The isolation level a transaction block starts in unless `BEGIN` says otherwise.
    pub fn default_isolation(&self) -> Option<crate::client_commands::Isolation> {
        self.get("default_transaction_isolation").and_then(|v| isolation(&v).ok())
    }

    /// The parameters the server reports when the client has logged in.
    pub fn reported(&self) -> Vec<(String, String)> {
        const REPORTED: &[&str] = &[
            "application_name",
            "client_encoding",
            "datestyle",
            "default_transaction_read_only",
            "integer_datetimes",
            "intervalstyle",
            "is_superuser",
            "server_encoding",
            "server_version",
            "standard_conforming_strings",
            "timezone",
        ];
        let mut out: Vec<(String, String)> =
            REPORTED.iter().map(|n| (display_name(n).to_string(), self.get(n).unwrap_or_default())).collect();
        out.push(("session_authorization".into(), self.user.clone()));
        out
    }

    /// Names the session's client in `v$session`: `application_name`, address.
    pub fn publish_client(&self, session: &Session) {
        session.set_client(ClientIdentity {
            program: self.get("application_name").unwrap_or_default(),
            machine: self.machine.clone(),
        });
    }
}

fn display_name(name: &str) -> &str {
    DISPLAY_NAMES.iter().find(|(n, _)| *n == name).map_or(name, |(_, d)| d)
}

fn isolation(value: &str) -> Result<crate::client_commands::Isolation, String> {
    use crate::client_commands::Isolation;
    match value.to_ascii_lowercase().as_str() {
        "read committed" | "read uncommitted" => Ok(Isolation::ReadCommitted),
        "repeatable read" | "serializable" => Ok(Isolation::Serializable),
        other => Err(format!("invalid value for parameter \"transaction_isolation\": \"{other}\"")),
    }
}

/// A timeout as PostgreSQL writes it: milliseconds (`5000`), or a number and a unit
/// (`5s`, `100ms`, `2min`, `1h`, `1d`, `500us`).
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    let v = value.trim();
    let digits = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (number, unit) = v.split_at(digits);
    let number: f64 = number.parse().map_err(|_| format!("invalid value for a timeout: \"{value}\""))?;
    let millis = match unit.trim() {
        "" | "ms" => number,
        "us" => number / 1000.0,
        "s" => number * 1000.0,
        "min" => number * 60_000.0,
        "h" => number * 3_600_000.0,
        "d" => number * 86_400_000.0,
        _ => return Err(format!("invalid value for a timeout: \"{value}\" (units: us, ms, s, min, h, d)")),
    };
    Ok(Duration::from_micros((millis * 1000.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_take_client_values_and_refuse_unknown_names() {
        let mut s = Settings::new("scott", "127.0.0.1", &[("application_name".into(), "psql".into())]);
        assert_eq!(s.get("application_name").as_deref(), Some("psql"));
        s.set("DateStyle", Some("ISO, DMY")).unwrap();
        assert_eq!(s.get("datestyle").as_deref(), Some("ISO, DMY"));
        s.set("datestyle", None).unwrap();
        assert_eq!(s.get("DateStyle").as_deref(), Some("ISO, MDY"));
        assert!(s.set("no_such_thing", Some("1")).unwrap_err().contains("unrecognized"));
        assert!(s.set("server_version", Some("1")).is_err());
        s.set("myapp.tenant", Some("7")).unwrap();
        assert!(s.set("statement_timeout", Some("soon")).is_err());
    }

    #[test]
    fn timeouts_read_in_postgresql_units() {
        assert_eq!(parse_duration("5000").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("100ms").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("1min").unwrap(), Duration::from_secs(60));
        assert!(parse_duration("1 fortnight").is_err());
    }
}

//! CREATE SEQUENCE, ALTER SEQUENCE and DROP SEQUENCE. sqlparser knows neither Oracle's
//! option words (NOCACHE, NOMAXVALUE, ORDER, ...) nor their free order, so the front end
//! hands the statement's words here ([`parse`]); the definition's rules are the
//! catalog's ([`crate::catalog::sequence`]).
//!
//! Invariant: ALTER and DROP change a sequence while holding its cache, which they empty:
//! an altered sequence goes on from the first value its cache had not handed out.

use super::result::{QueryResult, StatementKind};
use crate::catalog::SequenceDef;
use crate::catalog::sequence::SequenceOptions;
use crate::error::{Error, Result};
use crate::instance::Session;

/// How the names of identity columns' sequences start (`ISEQ$$_` and the table's object
/// id), which no CREATE SEQUENCE takes.
const IDENTITY_PREFIX: &str = "ISEQ$$_";

/// A CREATE or ALTER SEQUENCE statement.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceStatement {
    pub alter: bool,
    pub name: String,
    pub options: SequenceOptions,
}

/// One word of the statement as the front end read it: its text (upper case unless
/// quoted) and where it stands ("line L, column C").
pub type Word = (String, Option<String>);

fn parse_error(message: String, at: Option<&Word>) -> Error {
    Error::Parse { message, position: at.and_then(|w| w.1.clone()) }
}

/// Reads `CREATE | ALTER SEQUENCE name option...` from its words.
pub fn parse(words: &[Word]) -> Result<SequenceStatement> {
    let alter = words.first().is_some_and(|w| w.0 == "ALTER");
    let Some(name) = words.get(2).filter(|w| w.0.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')) else {
        return Err(parse_error("a sequence name is expected after SEQUENCE".into(), words.get(2).or(words.get(1))));
    };
    let statement = if alter { "ALTER SEQUENCE" } else { "CREATE SEQUENCE" };
    let options = parse_options(&words[3..], alter, statement)?;
    Ok(SequenceStatement { alter, name: name.0.clone(), options })
}

/// Reads sequence options (of `statement`, for errors; RESTART only when `alter`).
pub fn parse_options(words: &[Word], alter: bool, statement: &str) -> Result<SequenceOptions> {
    let mut options = SequenceOptions::default();
    let mut rest = words.iter().peekable();
    while let Some(word) = rest.next() {
        let duplicate = |set: bool| {
            if set {
                Err(parse_error(format!("duplicate or conflicting {} specifications", word.0), Some(word)))
            } else {
                Ok(())
            }
        };
        match word.0.as_str() {
            "INCREMENT" => {
                expect(&mut rest, "BY", word)?;
                duplicate(options.increment_by.is_some())?;
                options.increment_by = Some(read_number(&mut rest, "INCREMENT BY", word)?);
            }
            "START" => {
                expect(&mut rest, "WITH", word)?;
                duplicate(options.start_with.is_some())?;
                options.start_with = Some(read_number(&mut rest, "START WITH", word)?);
            }
            "RESTART" if alter => {
                duplicate(options.restart)?;
                options.restart = true;
            }
            "MAXVALUE" => {
                duplicate(options.max_value.is_some())?;
                options.max_value = Some(Some(read_number(&mut rest, "MAXVALUE", word)?));
            }
            "MINVALUE" => {
                duplicate(options.min_value.is_some())?;
                options.min_value = Some(Some(read_number(&mut rest, "MINVALUE", word)?));
            }
            "NOMAXVALUE" => {
                duplicate(options.max_value.is_some())?;
                options.max_value = Some(None);
            }
            "NOMINVALUE" => {
                duplicate(options.min_value.is_some())?;
                options.min_value = Some(None);
            }
            "CACHE" => {
                duplicate(options.cache.is_some())?;
                let n = read_number(&mut rest, "CACHE", word)?;
                options.cache = Some(u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    parse_error(
                        format!("CACHE {n}: the number of values to cache is a positive whole number"),
                        Some(word),
                    )
                })?);
            }
            "NOCACHE" => {
                duplicate(options.cache.is_some())?;
                options.cache = Some(0);
            }
            "CYCLE" | "NOCYCLE" => {
                duplicate(options.cycle.is_some())?;
                options.cycle = Some(word.0 == "CYCLE");
            }
            "ORDER" | "NOORDER" => {
                duplicate(options.order.is_some())?;
                options.order = Some(word.0 == "ORDER");
            }
            "KEEP" | "NOKEEP" | "SCALE" | "NOSCALE" | "EXTEND" | "NOEXTEND" | "SHARD" | "NOSHARD" | "SESSION"
            | "GLOBAL" | "SHARING" | "AS" | "OWNED" => {
                return Err(Error::Unsupported {
                    construct: format!("sequence option {}", word.0),
                    position: word.1.clone(),
                });
            }
            other => {
                return Err(parse_error(format!("{other} is not an option of {statement}"), Some(word)));
            }
        }
    }
    Ok(options)
}

fn expect<'a>(rest: &mut impl Iterator<Item = &'a Word>, what: &str, after: &Word) -> Result<()> {
    match rest.next() {
        Some(w) if w.0 == what => Ok(()),
        other => Err(parse_error(format!("{what} is expected after {}", after.0), other.or(Some(after)))),
    }
}

/// A whole number, with its sign, of at most 28 digits.
fn read_number<'a>(rest: &mut impl Iterator<Item = &'a Word>, what: &str, after: &Word) -> Result<i128> {
    let mut word = rest.next();
    let negative = word.is_some_and(|w| w.0 == "-");
    if negative || word.is_some_and(|w| w.0 == "+") {
        word = rest.next();
    }
    let Some(w) = word else {
        return Err(parse_error(format!("a number is expected after {what}"), Some(after)));
    };
    let digits = &w.0;
    if digits.is_empty() || digits.len() > 28 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(parse_error(format!("{what} {digits}: a whole number of at most 28 digits is expected"), Some(w)));
    }
    let n: i128 = digits.parse().map_err(|_| parse_error(format!("{what} {digits} is not a number"), Some(w)))?;
    Ok(if negative { -n } else { n })
}

/// Runs CREATE or ALTER SEQUENCE.
pub fn run(session: &Session, statement: &SequenceStatement) -> Result<QueryResult> {
    let catalog = &session.db.catalog;
    let name = &statement.name;
    if !statement.alter {
        if super::reserved_words::RESERVED_WORDS.contains(&name.as_str()) {
            return Err(Error::Parse {
                message: format!("invalid sequence name: {name} is a reserved word"),
                position: None,
            });
        }
        if name.starts_with(IDENTITY_PREFIX) {
            return Err(Error::InvalidValue {
                context: format!("sequence {name}"),
                message: format!("names starting {IDENTITY_PREFIX} are those of identity columns' sequences"),
            });
        }
        let def = SequenceDef::create(name.clone(), &statement.options, crate::types::local_now())?;
        catalog.create_sequence(def, &session.user())?;
        return Ok(QueryResult::message(StatementKind::Ddl, "Sequence created."));
    }
    refuse_system_generated(session, name, "ORA-32793: cannot alter a system-generated sequence")?;
    session.db.sequences.emptied(name, |next| {
        let def = catalog.sequence(name).ok_or_else(|| unknown(name))?;
        let altered = def.altered(&statement.options, next.unwrap_or(def.last_number))?;
        catalog.replace_sequence(altered)
    })?;
    Ok(QueryResult::message(StatementKind::Ddl, "Sequence altered."))
}

/// DROP SEQUENCE of each of `names`.
pub fn drop(session: &Session, names: &[String], if_exists: bool) -> Result<QueryResult> {
    for name in names {
        if session.db.catalog.sequence(name).is_none() {
            if if_exists {
                continue;
            }
            return Err(unknown(name));
        }
        refuse_system_generated(session, name, "ORA-32794: cannot drop a system-generated sequence")?;
        session.db.sequences.emptied(name, |_| session.db.catalog.remove_sequence(name))?;
    }
    Ok(QueryResult::message(StatementKind::Ddl, "Sequence dropped."))
}

/// Refuses a change of the sequence of a table's identity column (`message`): it goes
/// with its table.
fn refuse_system_generated(session: &Session, name: &str, message: &str) -> Result<()> {
    let tables = session.db.catalog.tables();
    match tables.iter().find(|t| t.identity.as_ref().is_some_and(|i| i.sequence == name)) {
        Some(t) => Err(Error::InvalidValue {
            context: format!("sequence {name}"),
            message: format!("{message} (the identity column's of table {})", t.name),
        }),
        None => Ok(()),
    }
}

fn unknown(name: &str) -> Error {
    Error::UnknownObject { kind: "sequence", name: format!("{name} (ORA-02289)") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace().map(|w| (w.to_owned(), None)).collect()
    }

    #[test]
    fn options_come_in_any_order_with_oracles_words() {
        let s =
            parse(&words("CREATE SEQUENCE S NOCACHE MAXVALUE 100 CYCLE INCREMENT BY - 5 START WITH 90 ORDER")).unwrap();
        assert!(!s.alter);
        assert_eq!(s.name, "S");
        let o = s.options;
        assert_eq!(
            (o.increment_by, o.start_with, o.max_value, o.cache),
            (Some(-5), Some(90), Some(Some(100)), Some(0))
        );
        assert_eq!((o.cycle, o.order, o.min_value), (Some(true), Some(true), None));
        let a = parse(&words("ALTER SEQUENCE S RESTART START WITH 7 NOMINVALUE")).unwrap();
        assert!(a.alter && a.options.restart);
        assert_eq!((a.options.start_with, a.options.min_value), (Some(7), Some(None)));
    }

    #[test]
    fn bad_options_are_named() {
        for (text, needle) in [
            ("CREATE SEQUENCE S CACHE 5 NOCACHE", "duplicate or conflicting NOCACHE"),
            ("CREATE SEQUENCE S INCREMENT 5", "BY is expected after INCREMENT"),
            ("CREATE SEQUENCE S START WITH 1.5", "whole number"),
            ("CREATE SEQUENCE S MAXVALUE", "a number is expected after MAXVALUE"),
            ("CREATE SEQUENCE S RESTART", "RESTART is not an option of CREATE SEQUENCE"),
            ("CREATE SEQUENCE S WIBBLE", "WIBBLE is not an option"),
            ("CREATE SEQUENCE S KEEP", "sequence option KEEP"),
            ("CREATE SEQUENCE", "a sequence name is expected"),
            ("CREATE SEQUENCE S CACHE 0", "positive whole number"),
        ] {
            let message = parse(&words(text)).expect_err(text).to_string();
            assert!(message.contains(needle), "{text}: {message}");
        }
    }
}

//! The text of CREATE USER, ALTER USER, DROP USER, GRANT and REVOKE, as Oracle spells
//! them, read from the statement's tokens ([`parse`]; the front end hands them over), and
//! [`redacted`], a statement's text with its password hidden. Running them is
//! `user_ddl`'s.
//!
//! A password is case-sensitive, written as a word, a double-quoted identifier or a
//! single-quoted string; a statement that sets one is never published with it (`v$sql`,
//! `v$session`, ASH show `IDENTIFIED BY *****`).

use crate::catalog::{ObjectPrivilege, Role, SystemPrivilege};
use crate::error::{Error, Result};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// A user or grant statement.
#[derive(Debug, Clone, PartialEq)]
pub enum UserStatement {
    CreateUser {
        name: String,
        password: Option<String>,
        locked: bool,
    },
    /// ALTER USER: a new password and/or a lock or unlock.
    AlterUser {
        name: String,
        password: Option<String>,
        locked: Option<bool>,
    },
    DropUser {
        name: String,
        cascade: bool,
    },
    Grant {
        what: Granted,
        grantees: Vec<String>,
        with_option: bool,
    },
    Revoke {
        what: Granted,
        grantees: Vec<String>,
    },
}

/// What a GRANT or REVOKE gives or takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Granted {
    /// System privileges and roles; `ALL PRIVILEGES` (`all`) is every system privilege,
    /// and a REVOKE of it takes whichever the user holds.
    System { privileges: Vec<SystemPrivilege>, roles: Vec<Role>, all: bool },
    /// Object privileges on one table, view or sequence; `ALL` (`all`) is every one, and
    /// a REVOKE of it takes whichever the grantee holds.
    Object { privileges: Vec<ObjectPrivilege>, object: String, all: bool },
}

/// The tokens of a statement, whitespace left out.
type Tokens<'a> = [&'a TokenWithSpan];

fn position(t: Option<&&TokenWithSpan>) -> Option<String> {
    t.map(|t| format!("line {}, column {}", t.span.start.line, t.span.start.column))
}

fn parse_error(message: impl Into<String>, at: Option<&&TokenWithSpan>) -> Error {
    Error::Parse { message: message.into(), position: position(at) }
}

/// A token as a name: unquoted words in upper case, quoted ones as written.
fn name_of(t: Option<&&TokenWithSpan>) -> Option<String> {
    match t.map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        Some(Token::Word(w)) => Some(w.value.clone()),
        _ => None,
    }
}

fn word(tokens: &Tokens<'_>, i: usize) -> String {
    match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        _ => String::new(),
    }
}

/// Reads a user or grant statement from its tokens (whitespace left out); `None` when
/// the statement is none of them.
pub fn parse(tokens: &Tokens<'_>) -> Option<Result<UserStatement>> {
    Some(match (word(tokens, 0).as_str(), word(tokens, 1).as_str()) {
        ("CREATE", "USER") => create_user(tokens),
        ("ALTER", "USER") => alter_user(tokens),
        ("DROP", "USER") => drop_user(tokens),
        ("GRANT", _) => grant_or_revoke(tokens, true),
        ("REVOKE", _) => grant_or_revoke(tokens, false),
        _ => return None,
    })
}

fn user_name(tokens: &Tokens<'_>, i: usize) -> Result<String> {
    name_of(tokens.get(i)).ok_or_else(|| parse_error("a user name is expected", tokens.get(i).or(tokens.last())))
}

/// A password after IDENTIFIED BY: a word or a quoted identifier as written (case
/// kept), or a single-quoted string.
fn password_at(tokens: &Tokens<'_>, i: usize) -> Result<String> {
    let password = match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) => w.value.clone(),
        Some(Token::SingleQuotedString(s)) => s.clone(),
        Some(Token::Number(n, _)) => n.clone(),
        _ => return Err(parse_error("a password is expected after IDENTIFIED BY", tokens.get(i).or(tokens.last()))),
    };
    if password.is_empty() {
        return Err(parse_error("a password cannot be empty", tokens.get(i)));
    }
    Ok(password)
}

/// The clauses after the user name: `IDENTIFIED BY pw`, `NO AUTHENTICATION`,
/// `ACCOUNT LOCK | UNLOCK`, in any order, each once.
fn user_clauses(tokens: &Tokens<'_>, mut i: usize) -> Result<(Option<Option<String>>, Option<bool>)> {
    let (mut password, mut locked) = (None, None);
    while i < tokens.len() {
        let twice = |set: bool| if set { Err(parse_error("the clause is given twice", tokens.get(i))) } else { Ok(()) };
        match (word(tokens, i).as_str(), word(tokens, i + 1).as_str()) {
            ("IDENTIFIED", "BY") => {
                twice(password.is_some())?;
                password = Some(Some(password_at(tokens, i + 2)?));
                i += 3;
            }
            ("NO", "AUTHENTICATION") => {
                twice(password.is_some())?;
                password = Some(None);
                i += 2;
            }
            ("ACCOUNT", "LOCK" | "UNLOCK") => {
                twice(locked.is_some())?;
                locked = Some(word(tokens, i + 1) == "LOCK");
                i += 2;
            }
            ("DEFAULT" | "TEMPORARY" | "QUOTA" | "PROFILE" | "PASSWORD", _) => {
                return Err(Error::Unsupported {
                    construct: format!(
                        "{} in a user's definition (lioscope has one tablespace and no profiles)",
                        word(tokens, i)
                    ),
                    position: position(tokens.get(i)),
                });
            }
            _ => {
                return Err(parse_error(
                    "expected IDENTIFIED BY password, NO AUTHENTICATION, ACCOUNT LOCK or ACCOUNT UNLOCK",
                    tokens.get(i),
                ));
            }
        }
    }
    Ok((password, locked))
}

fn create_user(tokens: &Tokens<'_>) -> Result<UserStatement> {
    let name = user_name(tokens, 2)?;
    let (password, locked) = user_clauses(tokens, 3)?;
    let Some(password) = password else {
        return Err(parse_error(
            "CREATE USER needs IDENTIFIED BY password or NO AUTHENTICATION",
            tokens.get(3).or(tokens.last()),
        ));
    };
    Ok(UserStatement::CreateUser { name, password, locked: locked.unwrap_or(false) })
}

fn alter_user(tokens: &Tokens<'_>) -> Result<UserStatement> {
    let name = user_name(tokens, 2)?;
    let (password, locked) = user_clauses(tokens, 3)?;
    if password.is_none() && locked.is_none() {
        return Err(parse_error("ALTER USER needs IDENTIFIED BY password or ACCOUNT LOCK | UNLOCK", tokens.last()));
    }
    if password == Some(None) {
        return Err(parse_error("NO AUTHENTICATION is for CREATE USER", tokens.get(3)));
    }
    Ok(UserStatement::AlterUser { name, password: password.flatten(), locked })
}

fn drop_user(tokens: &Tokens<'_>) -> Result<UserStatement> {
    let name = user_name(tokens, 2)?;
    let cascade = match (tokens.len(), word(tokens, 3).as_str()) {
        (3, _) => false,
        (4, "CASCADE") => true,
        _ => return Err(parse_error("only CASCADE may follow DROP USER name", tokens.get(3))),
    };
    Ok(UserStatement::DropUser { name, cascade })
}

/// `GRANT what TO grantees [WITH ADMIN | GRANT OPTION]` or `REVOKE what FROM grantees`.
fn grant_or_revoke(tokens: &Tokens<'_>, grant: bool) -> Result<UserStatement> {
    let statement = if grant { "GRANT" } else { "REVOKE" };
    let to = if grant { "TO" } else { "FROM" };
    let on = (1..tokens.len()).find(|&i| word(tokens, i) == "ON");
    let Some(to_at) = (1..tokens.len()).find(|&i| word(tokens, i) == to) else {
        return Err(parse_error(format!("{statement} needs {to} and the users"), tokens.last()));
    };
    let list_end = on.filter(|&o| o < to_at).unwrap_or(to_at);
    // The privileges: comma-separated lists of words.
    let mut entries: Vec<(String, usize)> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for i in 1..list_end {
        match &tokens[i].token {
            Token::Comma => entries.push((std::mem::take(&mut current).join(" "), i)),
            Token::Word(w) if w.quote_style.is_none() => current.push(w.value.to_ascii_uppercase()),
            _ => return Err(parse_error(format!("a privilege name is expected in {statement}"), tokens.get(i))),
        }
    }
    entries.push((current.join(" "), list_end));
    if let Some((_, at)) = entries.iter().find(|(e, _)| e.is_empty()) {
        return Err(parse_error(format!("a privilege name is expected in {statement}"), tokens.get(*at)));
    }
    // The grantees, then the option.
    let mut grantees = Vec::new();
    let mut i = to_at + 1;
    let mut with_option = false;
    loop {
        grantees.push(user_name(tokens, i)?);
        i += 1;
        match tokens.get(i).map(|t| &t.token) {
            Some(Token::Comma) => i += 1,
            None => break,
            Some(_) if grant && word(tokens, i) == "WITH" && word(tokens, i + 2) == "OPTION" => {
                let kind = word(tokens, i + 1);
                let wanted = if on.is_some() { "GRANT" } else { "ADMIN" };
                if kind != wanted || tokens.len() != i + 3 {
                    return Err(parse_error(format!("expected WITH {wanted} OPTION at the end"), tokens.get(i + 1)));
                }
                with_option = true;
                break;
            }
            Some(_) => {
                return Err(parse_error(format!("unexpected {} after the users", tokens[i].token), tokens.get(i)));
            }
        }
    }
    let what = match on {
        Some(on) if on < to_at => {
            let object = name_of(tokens.get(on + 1))
                .filter(|_| on + 2 == to_at)
                .ok_or_else(|| parse_error("one table or view name is expected after ON", tokens.get(on + 1)))?;
            let mut privileges = Vec::new();
            let all = entries.iter().any(|(e, _)| e == "ALL" || e == "ALL PRIVILEGES");
            for (entry, at) in &entries {
                match entry.as_str() {
                    "ALL" | "ALL PRIVILEGES" => privileges.extend(ObjectPrivilege::ALL),
                    other => privileges.push(ObjectPrivilege::named(other).ok_or_else(|| {
                        parse_error(
                            format!(
                                "{other} is not an object privilege (SELECT, INSERT, UPDATE, DELETE, REFERENCES, ALL)"
                            ),
                            tokens.get(*at - 1),
                        )
                    })?),
                }
            }
            privileges.sort();
            privileges.dedup();
            Granted::Object { privileges, object, all }
        }
        Some(on) => return Err(parse_error(format!("ON must come before {to}"), tokens.get(on))),
        None => {
            let (mut privileges, mut roles) = (Vec::new(), Vec::new());
            let all = entries.iter().any(|(e, _)| e == "ALL PRIVILEGES");
            for (entry, at) in &entries {
                if entry == "ALL PRIVILEGES" {
                    privileges.extend(SystemPrivilege::ALL);
                } else if let Some(role) = Role::named(entry) {
                    roles.push(role);
                } else {
                    privileges.push(SystemPrivilege::named(entry).ok_or_else(|| {
                        parse_error(
                            format!("ORA-00990: missing or invalid privilege: {entry} (or add ON object for SELECT, INSERT, UPDATE, DELETE)"),
                            tokens.get(*at - 1),
                        )
                    })?);
                }
            }
            privileges.sort();
            privileges.dedup();
            roles.sort();
            roles.dedup();
            Granted::System { privileges, roles, all }
        }
    };
    Ok(if grant {
        UserStatement::Grant { what, grantees, with_option }
    } else {
        UserStatement::Revoke { what, grantees }
    })
}

/// `text` as it may be published (`v$sql`, `v$session`, ASH): a CREATE or ALTER USER's
/// password replaced by `*****`. Other statements are returned as they are.
pub fn redacted(text: &str) -> std::borrow::Cow<'_, str> {
    let start = text.trim_start().as_bytes();
    let starts = |w: &str| start.len() >= w.len() && start[..w.len()].eq_ignore_ascii_case(w.as_bytes());
    if !(starts("CREATE") || starts("ALTER")) {
        return std::borrow::Cow::Borrowed(text);
    }
    let upper = text.to_ascii_uppercase();
    let Some(by) = upper.find("IDENTIFIED").and_then(|i| upper[i..].find("BY").map(|j| i + j + 2)) else {
        return std::borrow::Cow::Borrowed(text);
    };
    let rest = &text[by..];
    let skipped = rest.len() - rest.trim_start().len();
    let password_start = by + skipped;
    let password = &text[password_start..];
    let end = match password.chars().next() {
        Some(q @ ('"' | '\'')) => password[1..].find(q).map_or(password.len(), |e| e + 2),
        _ => password.find(|c: char| c.is_whitespace() || c == ';').unwrap_or(password.len()),
    };
    std::borrow::Cow::Owned(format!("{}*****{}", &text[..password_start], &password[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::OracleDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn parsed(sql: &str) -> Result<UserStatement> {
        let tokens = Tokenizer::new(&OracleDialect {}, sql).tokenize_with_location().unwrap();
        let words: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
        parse(&words).expect("a user statement")
    }

    #[test]
    fn reads_users_with_case_sensitive_passwords() {
        assert_eq!(
            parsed("CREATE USER scott IDENTIFIED BY Tiger").unwrap(),
            UserStatement::CreateUser { name: "SCOTT".into(), password: Some("Tiger".into()), locked: false }
        );
        assert_eq!(
            parsed("create user \"app\" identified by \"p w\" account lock").unwrap(),
            UserStatement::CreateUser { name: "app".into(), password: Some("p w".into()), locked: true }
        );
        assert_eq!(
            parsed("ALTER USER scott ACCOUNT UNLOCK").unwrap(),
            UserStatement::AlterUser { name: "SCOTT".into(), password: None, locked: Some(false) }
        );
        assert_eq!(
            parsed("DROP USER scott CASCADE").unwrap(),
            UserStatement::DropUser { name: "SCOTT".into(), cascade: true }
        );
        assert!(parsed("CREATE USER scott").is_err());
        assert!(parsed("CREATE USER scott IDENTIFIED BY").is_err());
        assert!(parsed("CREATE USER scott IDENTIFIED BY a IDENTIFIED BY b").is_err());
        assert!(matches!(
            parsed("CREATE USER s IDENTIFIED BY a DEFAULT TABLESPACE users"),
            Err(Error::Unsupported { .. })
        ));
    }

    #[test]
    fn reads_grants_of_system_and_object_privileges() {
        assert_eq!(
            parsed("GRANT create session, CREATE TABLE, dba TO scott, adams WITH ADMIN OPTION").unwrap(),
            UserStatement::Grant {
                what: Granted::System {
                    privileges: vec![SystemPrivilege::CreateSession, SystemPrivilege::CreateTable],
                    roles: vec![Role::Dba],
                    all: false,
                },
                grantees: vec!["SCOTT".into(), "ADAMS".into()],
                with_option: true,
            }
        );
        assert_eq!(
            parsed("GRANT SELECT, update ON emp TO public").unwrap(),
            UserStatement::Grant {
                what: Granted::Object {
                    privileges: vec![ObjectPrivilege::Select, ObjectPrivilege::Update],
                    object: "EMP".into(),
                    all: false,
                },
                grantees: vec!["PUBLIC".into()],
                with_option: false,
            }
        );
        let UserStatement::Grant { what: Granted::System { privileges, .. }, .. } =
            parsed("GRANT ALL PRIVILEGES TO x").unwrap()
        else {
            panic!("a system grant")
        };
        assert_eq!(privileges.len(), SystemPrivilege::ALL.len());
        assert_eq!(
            parsed("REVOKE ALL ON emp FROM scott").unwrap(),
            UserStatement::Revoke {
                what: Granted::Object { privileges: ObjectPrivilege::ALL.to_vec(), object: "EMP".into(), all: true },
                grantees: vec!["SCOTT".into()],
            }
        );
        assert!(parsed("GRANT FLY TO scott").is_err());
        assert!(parsed("GRANT SELECT ON emp TO scott WITH ADMIN OPTION").is_err());
        assert!(parsed("GRANT SELECT ON emp, dept TO scott").is_err());
        assert!(parsed("GRANT TO scott").is_err());
        assert!(parsed("GRANT SELECT ON emp").is_err());
    }

    #[test]
    fn passwords_are_never_published() {
        assert_eq!(redacted("CREATE USER s IDENTIFIED BY Tiger"), "CREATE USER s IDENTIFIED BY *****");
        assert_eq!(
            redacted("alter user s identified by \"a b\" account lock"),
            "alter user s identified by ***** account lock"
        );
        assert_eq!(redacted("ALTER USER s IDENTIFIED BY 'x y'"), "ALTER USER s IDENTIFIED BY *****");
        assert_eq!(redacted("SELECT 'IDENTIFIED BY x' FROM dual"), "SELECT 'IDENTIFIED BY x' FROM dual");
        assert_eq!(redacted("ALTER USER s ACCOUNT LOCK"), "ALTER USER s ACCOUNT LOCK");
    }
}

//! The statements a PostgreSQL client sends that the server answers itself rather than
//! the engine: transaction blocks (`BEGIN`, `START TRANSACTION`, `COMMIT`, `END`,
//! `ROLLBACK`, `ABORT`, `RELEASE SAVEPOINT`), the client's settings (`SET`, `RESET`,
//! `SHOW`, `SELECT current_setting(...)`), and `SELECT version()`.
//!
//! Everything else, `SAVEPOINT` and `ROLLBACK TO SAVEPOINT` among them, is lioscope's SQL
//! and goes to the engine. Words are matched case-insensitively, a trailing `;` ignored.

/// PostgreSQL's isolation levels as lioscope has them: READ UNCOMMITTED and READ
/// COMMITTED are read committed; REPEATABLE READ and SERIALIZABLE are lioscope's
/// serializable (a snapshot for the whole transaction, as Oracle's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    Serializable,
}

/// A transaction's modes as `BEGIN` or `SET TRANSACTION` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modes {
    pub isolation: Option<Isolation>,
    pub read_only: Option<bool>,
}

impl Modes {
    /// The lioscope statements that set these modes for the transaction starting now.
    pub fn statements(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        match self.isolation {
            Some(Isolation::Serializable) => out.push("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
            Some(Isolation::ReadCommitted) => out.push("SET TRANSACTION ISOLATION LEVEL READ COMMITTED"),
            None => {}
        }
        if self.read_only == Some(true) {
            out.push("SET TRANSACTION READ ONLY");
        }
        out
    }
}

/// A statement the server answers itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientCommand {
    Begin(Modes),
    Commit,
    Rollback,
    /// `RELEASE [SAVEPOINT] name`: lioscope keeps savepoints until the transaction ends.
    Release,
    /// `SET TRANSACTION ...` (or `SET SESSION CHARACTERISTICS AS TRANSACTION ...`).
    SetTransaction(Modes),
    /// `SET name = value` / `SET name TO value`; `None` for `DEFAULT` and `RESET name`.
    Set {
        name: String,
        value: Option<String>,
    },
    Show(String),
    ShowAll,
    /// `SELECT current_setting('name')`.
    CurrentSetting(String),
    /// `SELECT version()`.
    Version,
    /// `DEALLOCATE [PREPARE] name | ALL`: a prepared statement of the extended protocol
    /// dropped by name (`None`: all of them).
    Deallocate(Option<String>),
    /// `COPY table [(columns)] FROM STDIN [options]`: rows the client sends next.
    CopyFromStdin {
        target: String,
        options: CopyOptions,
    },
}

/// How the rows of a `COPY ... FROM STDIN` are written: PostgreSQL's text format (tab
/// between fields, `\N` for NULL) unless CSV is asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CopyOptions {
    pub csv: bool,
    pub header: bool,
    pub delimiter: Option<char>,
    pub null: Option<String>,
    pub quote: Option<char>,
}

impl CopyOptions {
    /// The text format's delimiter and NULL string, as its rows are read.
    pub fn text_format(&self) -> (char, String) {
        (self.delimiter.unwrap_or('\t'), self.null.clone().unwrap_or_else(|| "\\N".into()))
    }

    /// The options of lioscope's COPY that read these rows: CSV as the client sent it,
    /// or the CSV the text format's rows became (`copy_text`).
    pub fn lioscope_options(&self) -> String {
        let (delimiter, null, quote) = match self.csv {
            true => (self.delimiter.unwrap_or(','), self.null.clone().unwrap_or_default(), self.quote.unwrap_or('"')),
            false => (',', String::new(), '"'),
        };
        let literal = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let mut options = vec![
            format!("DELIMITER {}", literal(&delimiter.to_string())),
            format!("QUOTE {}", literal(&quote.to_string())),
        ];
        if !null.is_empty() {
            options.push(format!("NULL {}", literal(&null)));
        }
        if self.header {
            options.push("HEADER true".into());
        }
        format!("({})", options.join(", "))
    }
}

/// The command `sql` is, if the server answers it.
pub fn parse(sql: &str) -> Option<ClientCommand> {
    let text = sql.trim().trim_end_matches(';').trim();
    let words: Vec<String> = text.split_whitespace().map(|w| w.to_ascii_uppercase()).collect();
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["BEGIN"] | ["BEGIN", "WORK" | "TRANSACTION"] => Some(ClientCommand::Begin(Modes::default())),
        ["BEGIN", "WORK" | "TRANSACTION", rest @ ..] | ["BEGIN", rest @ ..] | ["START", "TRANSACTION", rest @ ..] => {
            modes(rest).map(ClientCommand::Begin)
        }
        ["COMMIT"] | ["COMMIT", "WORK" | "TRANSACTION"] | ["END"] | ["END", "WORK" | "TRANSACTION"] => {
            Some(ClientCommand::Commit)
        }
        ["COMMIT", "AND", "NO", "CHAIN"] => Some(ClientCommand::Commit),
        ["ROLLBACK"] | ["ROLLBACK", "WORK" | "TRANSACTION"] | ["ABORT"] | ["ABORT", "WORK" | "TRANSACTION"] => {
            Some(ClientCommand::Rollback)
        }
        ["RELEASE", ..] => Some(ClientCommand::Release),
        ["SET", "TRANSACTION", rest @ ..] | ["SET", "SESSION", "CHARACTERISTICS", "AS", "TRANSACTION", rest @ ..] => {
            modes(rest).map(ClientCommand::SetTransaction)
        }
        ["SET", ..] => set(text),
        ["RESET", "ALL"] => Some(ClientCommand::Set { name: "all".into(), value: None }),
        ["RESET", name] => Some(ClientCommand::Set { name: name.to_ascii_lowercase(), value: None }),
        ["SHOW", "ALL"] => Some(ClientCommand::ShowAll),
        ["SHOW", "TRANSACTION", "ISOLATION", "LEVEL"] => Some(ClientCommand::Show("transaction_isolation".into())),
        ["SHOW", name] => Some(ClientCommand::Show(name.to_ascii_lowercase())),
        ["COPY", ..] => copy_from_stdin(text),
        ["DEALLOCATE", "ALL"] | ["DEALLOCATE", "PREPARE", "ALL"] => Some(ClientCommand::Deallocate(None)),
        ["DEALLOCATE", _] | ["DEALLOCATE", "PREPARE", _] => {
            let name = text.split_whitespace().last().unwrap_or("").trim_matches('"');
            Some(ClientCommand::Deallocate(Some(name.to_string())))
        }
        _ => select_function(text),
    }
}

/// `COPY table [(columns)] FROM STDIN [[WITH] (FORMAT csv, HEADER, DELIMITER 'x', NULL
/// 'x', QUOTE 'x')]`, or the same options written without parentheses (`CSV HEADER`).
fn copy_from_stdin(text: &str) -> Option<ClientCommand> {
    let upper = text.to_ascii_uppercase();
    let at = upper.find(" FROM STDIN")?;
    let target = text[4..at].trim().to_string();
    let rest = &text[at + " FROM STDIN".len()..];
    let mut tokens = tokens(rest).into_iter().peekable();
    let mut options = CopyOptions::default();
    let quoted =
        |t: Option<String>| t.and_then(|t| t.strip_prefix('\'').map(|v| v.trim_end_matches('\'').replace("''", "'")));
    while let Some(token) = tokens.next() {
        match token.to_ascii_uppercase().as_str() {
            "WITH" | "(" | ")" | "," | "AS" | "TRUE" | "ON" => {}
            "CSV" => options.csv = true,
            "TEXT" => options.csv = false,
            "FORMAT" => {
                let format = tokens.next()?.to_ascii_uppercase();
                options.csv = match format.trim_matches('\'') {
                    "CSV" => true,
                    "TEXT" => false,
                    _ => return None,
                };
            }
            "HEADER" => {
                options.header =
                    !matches!(tokens.peek().map(|t| t.to_ascii_uppercase()).as_deref(), Some("FALSE" | "OFF"))
            }
            "FALSE" | "OFF" => {}
            "DELIMITER" | "NULL" | "QUOTE" => {
                let which = token.to_ascii_uppercase();
                let mut value = tokens.next();
                if value.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("AS")) {
                    value = tokens.next();
                }
                let value = quoted(value)?;
                match which.as_str() {
                    "DELIMITER" => options.delimiter = value.chars().next(),
                    "QUOTE" => options.quote = value.chars().next(),
                    _ => options.null = Some(value),
                }
            }
            _ => return None,
        }
    }
    Some(ClientCommand::CopyFromStdin { target, options })
}

/// Words, quoted strings (with their quotes) and punctuation.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '\'' {
            let mut literal = String::from(chars.next().expect("peeked"));
            while let Some(c) = chars.next() {
                literal.push(c);
                if c == '\'' {
                    if chars.peek() == Some(&'\'') {
                        literal.push(chars.next().expect("peeked"));
                    } else {
                        break;
                    }
                }
            }
            out.push(literal);
        } else if matches!(c, '(' | ')' | ',') {
            out.push(chars.next().expect("peeked").to_string());
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || matches!(c, '(' | ')' | ',' | '\'') {
                    break;
                }
                word.push(c);
                chars.next();
            }
            out.push(word);
        }
    }
    out
}

/// `SELECT version()` and `SELECT current_setting('name')`, alone in a select list.
fn select_function(text: &str) -> Option<ClientCommand> {
    let lower = text.to_ascii_lowercase();
    let call = lower.strip_prefix("select")?.trim();
    let compact: String = call.chars().filter(|c| !c.is_whitespace()).collect();
    if compact == "version()" || compact == "pg_catalog.version()" {
        return Some(ClientCommand::Version);
    }
    let argument = compact
        .strip_prefix("pg_catalog.current_setting(")
        .or_else(|| compact.strip_prefix("current_setting("))?
        .strip_suffix(')')?;
    let name = argument.strip_prefix('\'')?.strip_suffix('\'')?;
    Some(ClientCommand::CurrentSetting(name.to_string()))
}

/// `SET [SESSION | LOCAL] name { = | TO } value`, `SET TIME ZONE value`.
fn set(text: &str) -> Option<ClientCommand> {
    let rest = text[3..].trim_start();
    let rest = strip_word(rest, "SESSION").or_else(|| strip_word(rest, "LOCAL")).unwrap_or(rest);
    let (name, value) = if let Some(zone) = strip_word(rest, "TIME").and_then(|r| strip_word(r, "ZONE")) {
        ("timezone".to_string(), zone.trim())
    } else {
        let end = rest.find(|c: char| c.is_whitespace() || c == '=')?;
        let (name, after) = rest.split_at(end);
        let after = after.trim_start();
        let value = after.strip_prefix('=').or_else(|| strip_word(after, "TO"))?.trim();
        (name.to_ascii_lowercase(), value)
    };
    let value = match value {
        v if v.eq_ignore_ascii_case("DEFAULT") => None,
        v => Some(unquote(v)),
    };
    Some(ClientCommand::Set { name, value })
}

/// A setting's value as written: each item of a list (split at commas outside quotes)
/// without its quotes, the items joined by `, `.
fn unquote(value: &str) -> String {
    let mut items = vec![String::new()];
    let mut quoted = false;
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quoted && chars.peek() == Some(&'\'') => {
                chars.next();
                items.last_mut().expect("one item").push('\'');
            }
            '\'' => quoted = !quoted,
            ',' if !quoted => items.push(String::new()),
            c => items.last_mut().expect("one item").push(c),
        }
    }
    items.iter().map(|i| i.trim()).collect::<Vec<_>>().join(", ")
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let tail = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && (tail.is_empty() || tail.starts_with(char::is_whitespace)))
        .then(|| tail.trim_start())
}

/// Transaction modes: `ISOLATION LEVEL ...`, `READ ONLY`, `READ WRITE`, `[NOT] DEFERRABLE`,
/// separated by blanks or commas.
fn modes(words: &[&str]) -> Option<Modes> {
    let words: Vec<&str> = words.iter().flat_map(|w| w.split(',')).filter(|w| !w.is_empty()).collect();
    let mut modes = Modes::default();
    let mut i = 0;
    while i < words.len() {
        match &words[i..] {
            ["ISOLATION", "LEVEL", "SERIALIZABLE", ..] => {
                modes.isolation = Some(Isolation::Serializable);
                i += 3;
            }
            ["ISOLATION", "LEVEL", "REPEATABLE", "READ", ..] => {
                modes.isolation = Some(Isolation::Serializable);
                i += 4;
            }
            ["ISOLATION", "LEVEL", "READ", "COMMITTED" | "UNCOMMITTED", ..] => {
                modes.isolation = Some(Isolation::ReadCommitted);
                i += 4;
            }
            ["READ", "ONLY", ..] => {
                modes.read_only = Some(true);
                i += 2;
            }
            ["READ", "WRITE", ..] => {
                modes.read_only = Some(false);
                i += 2;
            }
            ["NOT", "DEFERRABLE", ..] => i += 2,
            ["DEFERRABLE", ..] => i += 1,
            _ => return None,
        }
    }
    Some(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_blocks_in_every_spelling() {
        assert_eq!(parse("begin;"), Some(ClientCommand::Begin(Modes::default())));
        assert_eq!(
            parse("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
            Some(ClientCommand::Begin(Modes { isolation: Some(Isolation::Serializable), read_only: Some(true) }))
        );
        assert_eq!(parse("END"), Some(ClientCommand::Commit));
        assert_eq!(parse("abort work"), Some(ClientCommand::Rollback));
        assert_eq!(parse("ROLLBACK TO SAVEPOINT a"), None);
        assert_eq!(parse("SAVEPOINT a"), None);
        assert_eq!(parse("BEGIN ISOLATION LEVEL SOMETHING"), None);
    }

    #[test]
    fn copy_from_stdin_in_both_spellings() {
        let Some(ClientCommand::CopyFromStdin { target, options }) =
            parse("COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER ';', NULL 'x')")
        else {
            panic!("not a COPY")
        };
        assert_eq!(target, "t (a, b)");
        assert_eq!(
            options,
            CopyOptions { csv: true, header: true, delimiter: Some(';'), null: Some("x".into()), quote: None }
        );
        let Some(ClientCommand::CopyFromStdin { options, .. }) = parse("copy t from stdin csv header") else {
            panic!()
        };
        assert!(options.csv && options.header);
        let Some(ClientCommand::CopyFromStdin { options, .. }) = parse("COPY t FROM STDIN") else { panic!() };
        assert_eq!(options.text_format(), ('\t', "\\N".to_string()));
        assert_eq!(options.lioscope_options(), "(DELIMITER ',', QUOTE '\"')", "the CSV the text became");
        assert_eq!(parse("COPY t FROM '/tmp/x.csv'"), None);
    }

    #[test]
    fn settings_are_set_shown_and_read() {
        assert_eq!(
            parse("SET application_name = 'psql'"),
            Some(ClientCommand::Set { name: "application_name".into(), value: Some("psql".into()) })
        );
        assert_eq!(
            parse("set search_path to public, \"$user\""),
            Some(ClientCommand::Set { name: "search_path".into(), value: Some("public, \"$user\"".into()) })
        );
        assert_eq!(
            parse("SET TIME ZONE 'UTC'"),
            Some(ClientCommand::Set { name: "timezone".into(), value: Some("UTC".into()) })
        );
        assert_eq!(
            parse("SET statement_timeout TO DEFAULT"),
            Some(ClientCommand::Set { name: "statement_timeout".into(), value: None })
        );
        assert_eq!(parse("SHOW DateStyle"), Some(ClientCommand::Show("datestyle".into())));
        assert_eq!(parse("select version()"), Some(ClientCommand::Version));
        assert_eq!(parse("SELECT current_setting('TimeZone')"), Some(ClientCommand::CurrentSetting("timezone".into())));
        assert_eq!(parse("SELECT versions FROM t"), None);
        assert_eq!(parse("DEALLOCATE _pg3_0"), Some(ClientCommand::Deallocate(Some("_pg3_0".into()))));
        assert_eq!(parse("DEALLOCATE ALL"), Some(ClientCommand::Deallocate(None)));
    }
}

//! The SQL*Plus commands lioscope's runner understands, read from their text into a
//! [`ClientCommand`]. Reading only: what each command does is the runner's business.
//!
//! A client command is known by its first word ([`is_client_command`]); it ends at its
//! first `;` outside quotes or at its line's end (see `script`). `SET TRANSACTION`,
//! `SET ROLE` and `SET CONSTRAINTS` are SQL; SHOW and EXEC of a procedure are read by
//! the session itself, so they come back as [`ClientCommand::Sql`].

use lioscope::binds::normalized_bind_name;
use lioscope::{Error, Result};

/// What `HELP` prints: every command the runner knows.
pub const HELP: &str = "\
Statements end with ';' (or '/' alone on a line) and may span lines; SQL*Plus commands end
at their first ';' or at their line's end.
  SET AUTOTRACE ON | OFF | TRACEONLY | STATISTICS [CPU]
                          statistics (and plan) after each statement
  SET TIMING ON | OFF     elapsed time after each statement
  SET AUTOCOMMIT ON | OFF commit after each change (off, as SQL*Plus)
  SET ECHO ON | OFF       show each statement of a script (@, -f, -c) before its output
  SET FEEDBACK ON | OFF   print 'n rows selected.', '1 row updated.', 'Table created.', ...
  PROMPT [text]           print text
  WHENEVER SQLERROR EXIT [SUCCESS | FAILURE | n] [COMMIT | ROLLBACK]
  WHENEVER SQLERROR CONTINUE
                          after an error: stop (rolling back unless COMMIT), or go on;
                          the shell CONTINUEs by default, `lioscope sql` EXITs FAILURE
  @file.sql, START file.sql
                          run a script, its path from the current directory
  @@file.sql              run a script, its path from the calling script's directory
  VARIABLE name NUMBER | VARCHAR2(n)
                          declare a bind variable (VARIABLE alone lists them)
  EXEC :name := expression
                          set it to SELECT expression FROM dual; later statements bind :name
  PRINT [name ...]        show bind variables
  SHOW PARAMETERS [name]  EXPLAIN PLAN FOR SELECT ...;  ALTER SYSTEM FLUSH BUFFER_CACHE;
  EXIT | QUIT [SUCCESS | FAILURE | n] [COMMIT | ROLLBACK]
                          leave, committing unless ROLLBACK (as SQL*Plus)
  SNAPPER stats|ash[=COL+COL]|ash,stats SECONDS SNAPSHOTS all | SID[,SID...] | program=PATTERN
          [sinclude=PATTERN[|...]]
                          what sessions did over snapshots: statistics, time model and
                          waits, with rates, %TIME and a bar, and their ASH samples
                          grouped by columns (after Tanel Poder's snapper)
  HELP                    this text
";

/// What SET AUTOTRACE asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autotrace {
    Off,
    /// Rows, plan and statistics.
    On,
    /// Plan and statistics, no rows.
    TraceOnly,
    /// Rows and statistics.
    Statistics,
}

/// A SET command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `SET AUTOTRACE ...`; `counters` when it ends with CPU (the performance counters).
    Autotrace {
        mode: Autotrace,
        counters: bool,
    },
    Timing(bool),
    Autocommit(bool),
    Echo(bool),
    Feedback(bool),
}

/// What a failed statement does (`WHENEVER SQLERROR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Report the error and go on with the next statement.
    Continue,
    /// Report the error, end the transaction, and stop with exit status `status`.
    Exit { status: u8, commit: bool },
}

impl OnError {
    /// What `lioscope sql` does unless told otherwise: stop with a failure status, rolling
    /// back what the script left uncommitted.
    pub const EXIT_FAILURE: OnError = OnError::Exit { status: 1, commit: false };
}

/// A bind variable's declared type (`VARIABLE name type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableType {
    Number,
    /// VARCHAR2(n): up to `max_bytes` bytes (1 when no length is given, as SQL*Plus).
    Varchar2 {
        max_bytes: u32,
    },
}

impl std::fmt::Display for VariableType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VariableType::Number => write!(f, "NUMBER"),
            VariableType::Varchar2 { max_bytes } => write!(f, "VARCHAR2({max_bytes})"),
        }
    }
}

/// The longest VARCHAR2 bind variable, as SQL*Plus allows.
pub const MAX_VARIABLE_BYTES: u32 = 32767;

/// A client command, read.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientCommand {
    Set(Setting),
    /// `PROMPT text`: the text to print.
    Prompt(String),
    Whenever(OnError),
    /// `@path`, `START path` or (`beside_caller`) `@@path`.
    RunScript {
        path: String,
        beside_caller: bool,
    },
    /// `VARIABLE name type`; `name` is the bind name (`:NAME`).
    Declare {
        name: String,
        kind: VariableType,
    },
    /// `VARIABLE` alone, or `VARIABLE name`: show declarations (all when `None`).
    ShowDeclarations(Option<String>),
    /// `EXEC :name := expression`.
    Assign {
        name: String,
        expression: String,
    },
    /// `PRINT [name ...]`: bind names, none for all.
    Print(Vec<String>),
    /// `EXIT` or `QUIT`.
    Exit {
        status: u8,
        commit: bool,
    },
    Help,
    /// `SNAPPER ...`: what chosen sessions did over snapshots.
    Snapper(super::snapper::Request),
    /// A command the session reads itself (SHOW, EXEC of a procedure): this text.
    Sql(String),
}

/// Whether `text` starts with a client command (rather than SQL for the session).
pub fn is_client_command(text: &str) -> bool {
    let text = text.trim_start();
    if text.starts_with('@') {
        return true;
    }
    let (first, rest) = leading_word(text);
    match first.to_ascii_uppercase().as_str() {
        "SET" => {
            let (second, _) = leading_word(rest.trim_start());
            !["TRANSACTION", "ROLE", "CONSTRAINT", "CONSTRAINTS"].iter().any(|w| w.eq_ignore_ascii_case(second))
        }
        "SHOW" | "PROMPT" | "WHENEVER" | "START" | "VARIABLE" | "VAR" | "EXEC" | "EXECUTE" | "PRINT" | "EXIT"
        | "QUIT" | "HELP" | "SNAPPER" => true,
        _ => false,
    }
}

/// The letters, digits and `_` `text` starts with, and what follows them.
fn leading_word(text: &str) -> (&str, &str) {
    text.split_at(text.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(text.len()))
}

/// Reads a client command (`text` without its `;`).
pub fn parse(text: &str) -> Result<ClientCommand> {
    let text = text.trim();
    if let Some(path) = text.strip_prefix("@@") {
        return run_script(path, true);
    }
    if let Some(path) = text.strip_prefix('@') {
        return run_script(path, false);
    }
    let (first, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim();
    let words: Vec<String> = rest.split_whitespace().map(str::to_ascii_uppercase).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match first.to_ascii_uppercase().as_str() {
        "SET" => set(text, &words).map(ClientCommand::Set),
        "PROMPT" => Ok(ClientCommand::Prompt(rest.to_owned())),
        "WHENEVER" => whenever(&words).map(ClientCommand::Whenever),
        "START" => run_script(rest, false),
        "VARIABLE" | "VAR" => variable(rest, &words),
        "EXEC" | "EXECUTE" => exec(text, rest),
        "PRINT" => words.iter().map(|w| bind_name(w)).collect::<Result<_>>().map(ClientCommand::Print),
        "EXIT" | "QUIT" => exit_options(&words, 0, true).map(|(status, commit)| ClientCommand::Exit { status, commit }),
        "HELP" => Ok(ClientCommand::Help),
        "SNAPPER" => super::snapper::parse(rest).map(ClientCommand::Snapper),
        _ => Ok(ClientCommand::Sql(text.to_owned())),
    }
}

fn syntax(message: impl Into<String>) -> Error {
    Error::Parse { message: message.into(), position: None }
}

fn run_script(path: &str, beside_caller: bool) -> Result<ClientCommand> {
    let path = path.trim();
    let path = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap_or(path);
    if path.is_empty() {
        return Err(syntax("@, @@ and START need the name of a script"));
    }
    Ok(ClientCommand::RunScript { path: path.to_owned(), beside_caller })
}

fn on_off(text: &str, value: &str) -> Result<bool> {
    match value {
        "ON" => Ok(true),
        "OFF" => Ok(false),
        _ => Err(unknown_setting(text)),
    }
}

fn unknown_setting(text: &str) -> Error {
    syntax(format!("unknown setting: {text}"))
}

/// `SET name value` (`words` after SET, upper case).
fn set(text: &str, words: &[&str]) -> Result<Setting> {
    match words {
        ["AUTOTRACE", ..] => autotrace(text, &words[1..]),
        ["TIMING", value] => on_off(text, value).map(Setting::Timing),
        ["ECHO", value] => on_off(text, value).map(Setting::Echo),
        ["FEEDBACK", value] => on_off(text, value).map(Setting::Feedback),
        ["AUTOCOMMIT", "IMMEDIATE"] => Ok(Setting::Autocommit(true)),
        ["AUTOCOMMIT", value] => on_off(text, value).map(Setting::Autocommit),
        _ => Err(unknown_setting(text)),
    }
}

/// `SET AUTOTRACE <setting> [CPU]` (`words` after AUTOTRACE).
fn autotrace(text: &str, words: &[&str]) -> Result<Setting> {
    let counters = words.len() > 1 && words.last() == Some(&"CPU");
    let words = if counters { &words[..words.len() - 1] } else { words };
    let mode = match words {
        ["OFF"] => Autotrace::Off,
        ["ON", "STATISTICS" | "STAT"] | ["STATISTICS" | "STAT"] => Autotrace::Statistics,
        ["ON"] | ["ON", "EXPLAIN" | "EXP"] => Autotrace::On,
        ["TRACEONLY" | "TRACE"] | ["TRACEONLY" | "TRACE", _] => Autotrace::TraceOnly,
        _ => return Err(unknown_setting(text)),
    };
    Ok(Setting::Autotrace { mode, counters: counters && mode != Autotrace::Off })
}

/// `WHENEVER SQLERROR EXIT [status] [COMMIT|ROLLBACK] | CONTINUE` (`words` after
/// WHENEVER). An exit stops with FAILURE and rolls back unless told otherwise.
fn whenever(words: &[&str]) -> Result<OnError> {
    match words {
        ["SQLERROR", "CONTINUE"] | ["SQLERROR", "CONTINUE", "NONE"] => Ok(OnError::Continue),
        ["SQLERROR", "EXIT", rest @ ..] => {
            exit_options(rest, 1, false).map(|(status, commit)| OnError::Exit { status, commit })
        }
        _ => Err(syntax(format!(
            "expected WHENEVER SQLERROR EXIT [SUCCESS | FAILURE | n] [COMMIT | ROLLBACK] or WHENEVER SQLERROR \
             CONTINUE, found WHENEVER {}",
            words.join(" ")
        ))),
    }
}

/// `[SUCCESS | FAILURE | n] [COMMIT | ROLLBACK]` after EXIT: the exit status and whether
/// to commit, `status` and `commit` where the words name neither.
fn exit_options(words: &[&str], status: u8, commit: bool) -> Result<(u8, bool)> {
    let (status, rest) = match words.first() {
        Some(&"SUCCESS") => (0, &words[1..]),
        Some(&"FAILURE") => (1, &words[1..]),
        Some(w) if w.chars().all(|c| c.is_ascii_digit()) => {
            let status = w.parse::<u8>().map_err(|_| syntax(format!("exit status {w} is not between 0 and 255")))?;
            (status, &words[1..])
        }
        _ => (status, words),
    };
    match rest {
        [] => Ok((status, commit)),
        ["COMMIT"] => Ok((status, true)),
        ["ROLLBACK"] => Ok((status, false)),
        _ => Err(syntax(format!(
            "expected [SUCCESS | FAILURE | n] [COMMIT | ROLLBACK] after EXIT, found {}",
            words.join(" ")
        ))),
    }
}

/// A bind variable's name as written in VARIABLE or PRINT (with or without its colon),
/// as the session names binds (`:NAME`).
fn bind_name(word: &str) -> Result<String> {
    let bare = word.strip_prefix(':').unwrap_or(word);
    let mut chars = bare.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#'));
    if !valid {
        return Err(syntax(format!("{word} is not a bind variable name (a letter, then letters, digits, _, $ or #)")));
    }
    Ok(normalized_bind_name(bare))
}

/// `VARIABLE [name [NUMBER | VARCHAR2[(n)]]]` (`rest` after VARIABLE, `words` upper case).
fn variable(rest: &str, words: &[&str]) -> Result<ClientCommand> {
    let Some(written) = words.first() else { return Ok(ClientCommand::ShowDeclarations(None)) };
    let name = bind_name(written)?;
    let kind: String = rest[words[0].len()..].chars().filter(|c| !c.is_whitespace()).collect();
    let kind = kind.to_ascii_uppercase();
    let kind = match kind.as_str() {
        "" => return Ok(ClientCommand::ShowDeclarations(Some(name))),
        "NUMBER" => VariableType::Number,
        "VARCHAR2" => VariableType::Varchar2 { max_bytes: 1 },
        other => varchar2_length(other).map(|max_bytes| VariableType::Varchar2 { max_bytes }).ok_or_else(|| {
            syntax(format!(
                "VARIABLE {written} {other}: the type is NUMBER or VARCHAR2(n), n from 1 to {MAX_VARIABLE_BYTES}"
            ))
        })?,
    };
    Ok(ClientCommand::Declare { name, kind })
}

/// n of `VARCHAR2(n)`, `VARCHAR2(n BYTE)` or `VARCHAR2(n CHAR)` (without blanks).
fn varchar2_length(kind: &str) -> Option<u32> {
    let inside = kind.strip_prefix("VARCHAR2(")?.strip_suffix(')')?;
    let digits = inside.strip_suffix("BYTE").or_else(|| inside.strip_suffix("CHAR")).unwrap_or(inside);
    digits.parse().ok().filter(|n| (1..=MAX_VARIABLE_BYTES).contains(n))
}

/// `EXEC :name := expression`, or any other EXEC for the session to read.
fn exec(text: &str, rest: &str) -> Result<ClientCommand> {
    let Some((name, expression)) = rest.strip_prefix(':').and_then(|r| r.split_once(":=")) else {
        return Ok(ClientCommand::Sql(text.to_owned()));
    };
    let name = bind_name(name.trim())?;
    let expression = expression.trim();
    if expression.is_empty() {
        return Err(syntax(format!("EXEC {name} := needs an expression")));
    }
    Ok(ClientCommand::Assign { name, expression: expression.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_commands_are_known_by_their_first_word() {
        for command in [
            "SET ECHO ON",
            "set timing off",
            "SHOW PARAMETERS",
            "PROMPT hello",
            "prompt",
            "WHENEVER SQLERROR EXIT",
            "@x.sql",
            "  @@x.sql",
            "START x.sql",
            "VARIABLE n NUMBER",
            "var n number",
            "EXEC :n := 1",
            "execute dbms_inmemory_admin.populate_wait",
            "PRINT n",
            "EXIT",
            "quit;",
            "HELP",
        ] {
            assert!(is_client_command(command), "{command}");
        }
        for sql in ["SELECT 1 FROM dual", "SET TRANSACTION READ ONLY", "set role all", "EXITS", "PRINTER", "STARTS", ""]
        {
            assert!(!is_client_command(sql), "{sql}");
        }
    }

    #[test]
    fn settings() {
        let set = |text| parse(text).map_err(|e| e.to_string());
        assert_eq!(set("set echo on"), Ok(ClientCommand::Set(Setting::Echo(true))));
        assert_eq!(set("SET FEEDBACK OFF"), Ok(ClientCommand::Set(Setting::Feedback(false))));
        assert_eq!(set("SET TIMING ON"), Ok(ClientCommand::Set(Setting::Timing(true))));
        assert_eq!(set("SET AUTOCOMMIT IMMEDIATE"), Ok(ClientCommand::Set(Setting::Autocommit(true))));
        assert_eq!(
            set("SET AUTOTRACE TRACEONLY STATISTICS CPU"),
            Ok(ClientCommand::Set(Setting::Autotrace { mode: Autotrace::TraceOnly, counters: true }))
        );
        assert_eq!(
            set("SET AUTOTRACE ON STAT"),
            Ok(ClientCommand::Set(Setting::Autotrace { mode: Autotrace::Statistics, counters: false }))
        );
        assert_eq!(set("SET ECHO MAYBE"), Err("syntax error: unknown setting: SET ECHO MAYBE".into()));
        assert_eq!(set("SET TIMING"), Err("syntax error: unknown setting: SET TIMING".into()));
        assert_eq!(set("SET PAGESIZE 50"), Err("syntax error: unknown setting: SET PAGESIZE 50".into()));
    }

    #[test]
    fn whenever_sqlerror() {
        let w = |text| parse(text).map_err(|e| e.to_string());
        assert_eq!(w("WHENEVER SQLERROR CONTINUE"), Ok(ClientCommand::Whenever(OnError::Continue)));
        assert_eq!(w("whenever sqlerror exit"), Ok(ClientCommand::Whenever(OnError::EXIT_FAILURE)));
        assert_eq!(
            w("WHENEVER SQLERROR EXIT SUCCESS"),
            Ok(ClientCommand::Whenever(OnError::Exit { status: 0, commit: false }))
        );
        assert_eq!(
            w("WHENEVER SQLERROR EXIT 7 COMMIT"),
            Ok(ClientCommand::Whenever(OnError::Exit { status: 7, commit: true }))
        );
        assert_eq!(w("WHENEVER SQLERROR EXIT ROLLBACK"), Ok(ClientCommand::Whenever(OnError::EXIT_FAILURE)));
        assert!(w("WHENEVER SQLERROR EXIT 300").unwrap_err().contains("between 0 and 255"));
        assert!(w("WHENEVER OSERROR EXIT").unwrap_err().contains("WHENEVER OSERROR EXIT"));
        assert!(w("WHENEVER SQLERROR EXIT NOW").is_err());
    }

    #[test]
    fn exit_commits_unless_told_otherwise() {
        assert!(matches!(parse("EXIT"), Ok(ClientCommand::Exit { status: 0, commit: true })));
        assert!(matches!(parse("quit 3"), Ok(ClientCommand::Exit { status: 3, commit: true })));
        assert!(matches!(parse("EXIT FAILURE ROLLBACK"), Ok(ClientCommand::Exit { status: 1, commit: false })));
        assert!(parse("EXIT -1").is_err());
    }

    #[test]
    fn scripts() {
        let run = |path: &str, beside_caller| Ok(ClientCommand::RunScript { path: path.into(), beside_caller });
        assert_eq!(parse("@x.sql").map_err(|e| e.to_string()), run("x.sql", false));
        assert_eq!(parse("@ dir/x.sql").map_err(|e| e.to_string()), run("dir/x.sql", false));
        assert_eq!(parse("@@x").map_err(|e| e.to_string()), run("x", true));
        assert_eq!(parse("start \"a b.sql\"").map_err(|e| e.to_string()), run("a b.sql", false));
        assert!(parse("@").unwrap_err().to_string().contains("need the name of a script"));
    }

    #[test]
    fn variables() {
        let p = |text| parse(text).map_err(|e| e.to_string());
        assert_eq!(
            p("VARIABLE n NUMBER"),
            Ok(ClientCommand::Declare { name: ":N".into(), kind: VariableType::Number })
        );
        assert_eq!(
            p("var Name varchar2 ( 20 )"),
            Ok(ClientCommand::Declare { name: ":NAME".into(), kind: VariableType::Varchar2 { max_bytes: 20 } })
        );
        assert_eq!(
            p("VARIABLE c VARCHAR2"),
            Ok(ClientCommand::Declare { name: ":C".into(), kind: VariableType::Varchar2 { max_bytes: 1 } })
        );
        assert_eq!(
            p("VARIABLE c VARCHAR2(10 CHAR)"),
            Ok(ClientCommand::Declare { name: ":C".into(), kind: VariableType::Varchar2 { max_bytes: 10 } })
        );
        assert_eq!(p("VARIABLE"), Ok(ClientCommand::ShowDeclarations(None)));
        assert_eq!(p("VARIABLE n"), Ok(ClientCommand::ShowDeclarations(Some(":N".into()))));
        assert!(p("VARIABLE n DATE").unwrap_err().contains("NUMBER or VARCHAR2(n)"));
        assert!(p("VARIABLE n VARCHAR2(0)").is_err());
        assert!(p("VARIABLE 1n NUMBER").unwrap_err().contains("not a bind variable name"));
        assert_eq!(p("PRINT"), Ok(ClientCommand::Print(vec![])));
        assert_eq!(p("PRINT :a b"), Ok(ClientCommand::Print(vec![":A".into(), ":B".into()])));
    }

    #[test]
    fn exec_assigns_a_bind_variable_or_goes_to_the_session() {
        let p = |text| parse(text).map_err(|e| e.to_string());
        assert_eq!(
            p("EXEC :n := 40 + 2"),
            Ok(ClientCommand::Assign { name: ":N".into(), expression: "40 + 2".into() })
        );
        assert_eq!(
            p("execute :name:='a:=b'"),
            Ok(ClientCommand::Assign { name: ":NAME".into(), expression: "'a:=b'".into() })
        );
        assert!(p("EXEC :n :=").unwrap_err().contains("needs an expression"));
        assert!(p("EXEC :1 := 2").unwrap_err().contains("not a bind variable name"));
        let call = "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH')";
        assert_eq!(p(call), Ok(ClientCommand::Sql(call.into())));
        assert_eq!(p("SHOW PARAMETERS"), Ok(ClientCommand::Sql("SHOW PARAMETERS".into())));
        assert_eq!(p("PROMPT  a; b "), Ok(ClientCommand::Prompt("a; b".into())));
    }
}

//! Statements sqlparser does not know, recognised from their first words with sqlparser's
//! tokenizer: ALTER SESSION / ALTER SYSTEM, SHOW PARAMETERS, EXPLAIN PLAN FOR, Oracle's
//! ANALYZE TABLE, ALTER TABLE ... \[NO\] INMEMORY, DROP TABLE ... CASCADE CONSTRAINTS,
//! EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT, CREATE and ALTER SEQUENCE (read by
//! `sequence_ddl`), and the
//! PCTFREE and \[NO\]COMPRESS clauses of CREATE TABLE (removed from the text before
//! sqlparser sees it, into [`Clauses`]).
//! Splitting a script into statements is the script runner's (`cli::script`).

use crate::catalog::{MemCompress, Priority};
use crate::error::{Error, Result};
use crate::storage::hcc::HccLevel;
use sqlparser::dialect::OracleDialect;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// What a statement is, as far as the front end can tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Front {
    AlterSession {
        name: String,
        value: String,
    },
    AlterSystemSet {
        name: String,
        value: String,
    },
    FlushBufferCache,
    Checkpoint,
    SwitchLogfile,
    /// COMMIT WRITE [IMMEDIATE | BATCH] [WAIT | NOWAIT].
    CommitWrite(super::transaction::CommitWrite),
    ShowParameters(Option<String>),
    /// EXPLAIN PLAN FOR followed by this statement text.
    ExplainPlan(String),
    /// ANALYZE TABLE name COMPUTE STATISTICS | ESTIMATE STATISTICS [SAMPLE n ROWS|PERCENT].
    Analyze {
        table: String,
        sample: AnalyzeSample,
    },
    /// ALTER TABLE name INMEMORY [MEMCOMPRESS FOR ...] [PRIORITY ...] [NO INMEMORY (cols)],
    /// or ALTER TABLE name NO INMEMORY (`spec` is `None`).
    AlterTableInMemory {
        table: String,
        spec: Option<InMemoryClause>,
    },
    /// ALTER TABLE name MOVE [[COLUMN STORE] COMPRESS FOR level | NOCOMPRESS]: `compress`
    /// as in [`Clauses`] (`None`: the table keeps its own).
    AlterTableMove {
        table: String,
        compress: Option<Option<HccLevel>>,
    },
    /// ALTER TABLE name ENABLE | DISABLE CONSTRAINT constraint.
    AlterTableConstraint {
        table: String,
        name: String,
        enable: bool,
    },
    /// DROP TABLE name CASCADE CONSTRAINTS [PURGE]: the foreign keys that refer to the
    /// table go with it.
    DropTableCascadeConstraints {
        table: String,
    },
    /// EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT(priority, percentage, timeout).
    PopulateWait {
        priority: Priority,
        percentage: f64,
        timeout_seconds: f64,
    },
    /// CREATE SEQUENCE or ALTER SEQUENCE, with Oracle's options in any order.
    Sequence(super::sequence_ddl::SequenceStatement),
    /// CREATE, ALTER or DROP USER, GRANT or REVOKE.
    User(super::user_statement::UserStatement),
    /// Anything else, for sqlparser; with the storage clauses of a CREATE TABLE removed.
    Standard {
        sql: String,
        clauses: Clauses,
    },
}

/// The clauses of CREATE TABLE (and PCTFREE of CREATE INDEX) that sqlparser does not
/// know, taken out of the statement's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clauses {
    /// `PCTFREE n`.
    pub pctfree: Option<u8>,
    /// `COMPRESS FOR ...` (`Some(Some(level))`) or `NOCOMPRESS` (`Some(None)`).
    pub compress: Option<Option<HccLevel>>,
    /// A column's `GENERATED [ALWAYS | BY DEFAULT [ON NULL]] AS IDENTITY [(options)]`.
    pub identity: Option<Box<IdentityClause>>,
}

/// The identity clause of a column of CREATE TABLE.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityClause {
    /// The column's name (upper case unless quoted).
    pub column: String,
    pub always: bool,
    pub on_null: bool,
    /// The options of its sequence, as CREATE SEQUENCE takes them.
    pub options: crate::catalog::sequence::SequenceOptions,
    /// Where the clause starts.
    pub position: Option<String>,
}

impl Clauses {
    /// Whether the statement had none.
    pub fn is_empty(&self) -> bool {
        *self == Clauses::default()
    }
}

/// The INMEMORY clause of ALTER TABLE, with column names not yet resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct InMemoryClause {
    pub compression: MemCompress,
    pub priority: Priority,
    /// `NO INMEMORY (col, ...)`: upper-case names.
    pub excluded: Vec<String>,
}

/// Which rows ANALYZE reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnalyzeSample {
    /// COMPUTE STATISTICS: every row.
    Compute,
    /// ESTIMATE STATISTICS SAMPLE n ROWS (Oracle's default is 1064 rows).
    Rows(u64),
    /// ESTIMATE STATISTICS SAMPLE n PERCENT.
    Percent(f64),
}

/// Classifies one statement (without its trailing semicolon).
pub fn classify(sql: &str) -> Result<Front> {
    // Every form this front handles starts with one of these words: a statement that
    // starts with another (SELECT, INSERT, ...) goes to sqlparser without being tokenized
    // twice.
    let start = sql.trim_start();
    let first = &start[..start.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(start.len())];
    let handled =
        ["ALTER", "SHOW", "EXPLAIN", "ANALYZE", "EXEC", "EXECUTE", "CREATE", "COMMIT", "DROP", "GRANT", "REVOKE"];
    if !first.is_empty() && !handled.iter().any(|w| w.eq_ignore_ascii_case(first)) {
        return Ok(Front::Standard { sql: sql.to_owned(), clauses: Clauses::default() });
    }
    let tokens = Tokenizer::new(&OracleDialect {}, sql).tokenize_with_location().map_err(|e| Error::Parse {
        message: e.message.clone(),
        position: Some(format!("line {}, column {}", e.location.line, e.location.column)),
    })?;
    let words: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    if let Some(statement) = super::user_statement::parse(&words) {
        return statement.map(Front::User);
    }
    let word = |i: usize| words.get(i).map(|t| token_word(&t.token)).unwrap_or_default();
    match (word(0).as_str(), word(1).as_str(), word(2).as_str()) {
        ("ALTER", "SESSION", "SET") => set_clause(&words[3..]).map(|(name, value)| Front::AlterSession { name, value }),
        ("ALTER", "SYSTEM", "SET") => {
            set_clause(&words[3..]).map(|(name, value)| Front::AlterSystemSet { name, value })
        }
        ("ALTER", "SYSTEM", "FLUSH") if word(3) == "BUFFER_CACHE" && words.len() == 4 => Ok(Front::FlushBufferCache),
        ("ALTER", "SYSTEM", "CHECKPOINT") if words.len() == 3 => Ok(Front::Checkpoint),
        ("ALTER", "SYSTEM", "SWITCH") if word(3) == "LOGFILE" && words.len() == 4 => Ok(Front::SwitchLogfile),
        ("COMMIT", "WRITE", _) => commit_write(&words[2..]),
        ("ALTER", "SYSTEM", _) => Err(Error::Unsupported {
            construct: format!("ALTER SYSTEM {}", word(2)),
            position: position_at(words.get(2)),
        }),
        ("SHOW", "PARAMETER" | "PARAMETERS", _) => {
            Ok(Front::ShowParameters(words.get(2).map(|t| token_word(&t.token).to_ascii_lowercase())))
        }
        ("EXPLAIN", "PLAN", "FOR") => {
            let Some(first) = words.get(3) else {
                return Err(Error::Parse {
                    message: "EXPLAIN PLAN FOR needs a statement".into(),
                    position: position_at(words.get(2)),
                });
            };
            let start = first.span.start;
            Ok(Front::ExplainPlan(text_from(sql, start.line, start.column).to_owned()))
        }
        ("EXPLAIN", "PLAN", _) => Err(Error::Parse {
            message: format!(
                "ORA-00905: missing keyword, found {}",
                words.get(2).map_or("the end of the statement".to_owned(), |t| t.token.to_string())
            ),
            position: position_at(words.get(2)),
        }),
        ("ANALYZE", "TABLE", _) => analyze(&words),
        ("ALTER", "TABLE", _) if words.iter().any(|t| token_word(&t.token) == "INMEMORY") => alter_inmemory(&words),
        ("ALTER", "TABLE", _) if word(3) == "MOVE" => alter_move(&tokens, &words),
        ("ALTER", "TABLE", _) if matches!(word(3).as_str(), "ENABLE" | "DISABLE") => alter_enable(&words),
        ("DROP", "TABLE", _)
            if matches!(words.get(2).map(|t| &t.token), Some(Token::Word(_)))
                && (word(3), word(4)) == ("CASCADE".into(), "CONSTRAINTS".into())
                && (words.len() == 5 || (words.len() == 6 && word(5) == "PURGE")) =>
        {
            Ok(Front::DropTableCascadeConstraints { table: word(2) })
        }
        ("EXEC" | "EXECUTE", _, _) => exec(&words),
        ("CREATE" | "ALTER", "SEQUENCE", _) => {
            let words: Vec<_> = words.iter().map(|t| (token_word(&t.token), position_at(Some(t)))).collect();
            super::sequence_ddl::parse(&words).map(Front::Sequence)
        }
        ("CREATE", "TABLE", _) => strip_clauses(&tokens, true),
        ("CREATE", "INDEX", _) | ("CREATE", "UNIQUE", "INDEX") => strip_clauses(&tokens, false),
        _ => Ok(Front::Standard { sql: sql.to_owned(), clauses: Clauses::default() }),
    }
}

/// The options after COMMIT WRITE: IMMEDIATE or BATCH, WAIT or NOWAIT, in any order.
fn commit_write(words: &[&TokenWithSpan]) -> Result<Front> {
    let mut write = super::transaction::CommitWrite::default();
    for w in words {
        match token_word(&w.token).as_str() {
            "IMMEDIATE" if write.batch.is_none() => write.batch = Some(false),
            "BATCH" if write.batch.is_none() => write.batch = Some(true),
            "WAIT" if write.nowait.is_none() => write.nowait = Some(false),
            "NOWAIT" if write.nowait.is_none() => write.nowait = Some(true),
            other => {
                return Err(Error::Parse {
                    message: format!("COMMIT WRITE takes IMMEDIATE or BATCH, then WAIT or NOWAIT; found {other}"),
                    position: position_at(Some(w)),
                });
            }
        }
    }
    Ok(Front::CommitWrite(write))
}

fn token_word(t: &Token) -> String {
    match t {
        Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
        Token::Word(w) => w.value.clone(),
        other => other.to_string(),
    }
}

fn position_at(t: Option<&&TokenWithSpan>) -> Option<String> {
    t.map(|t| format!("line {}, column {}", t.span.start.line, t.span.start.column))
}

/// `name = value` (value: a word, number or quoted string); anything after is an error.
fn set_clause(words: &[&TokenWithSpan]) -> Result<(String, String)> {
    let expected = |what: &str, at: Option<&&TokenWithSpan>| Error::Parse {
        message: format!("expected {what}"),
        position: position_at(at),
    };
    let name = match words.first().map(|t| &t.token) {
        Some(Token::Word(w)) => w.value.to_ascii_lowercase(),
        _ => return Err(expected("a parameter name", words.first())),
    };
    if !matches!(words.get(1).map(|t| &t.token), Some(Token::Eq)) {
        return Err(expected("=", words.get(1)));
    }
    let value = match words.get(2).map(|t| &t.token) {
        Some(Token::Number(n, _)) => n.clone(),
        Some(Token::SingleQuotedString(s)) => s.clone(),
        Some(Token::Word(w)) => w.value.clone(),
        _ => return Err(expected("a value", words.get(2))),
    };
    // "2G" tokenizes as a number then a word.
    let mut value = value;
    let mut rest = &words[3..];
    if let (Some(Token::Word(w)), true) = (rest.first().map(|t| &t.token), value.chars().all(|c| c.is_ascii_digit()))
        && ["K", "M", "G"].contains(&w.value.to_ascii_uppercase().as_str())
    {
        value.push_str(&w.value);
        rest = &rest[1..];
    }
    if let Some(extra) = rest.first() {
        return Err(Error::Parse {
            message: format!("unexpected {} after the value", extra.token),
            position: position_at(Some(extra)),
        });
    }
    Ok((name, value))
}

/// `ANALYZE TABLE name COMPUTE STATISTICS` or `... ESTIMATE STATISTICS [SAMPLE n ROWS |
/// PERCENT]`.
fn analyze(words: &[&TokenWithSpan]) -> Result<Front> {
    let expected = |what: &str, at: usize| Error::Parse {
        message: format!("expected {what} in ANALYZE TABLE"),
        position: position_at(words.get(at)),
    };
    let table = match words.get(2).map(|t| &t.token) {
        Some(Token::Word(_)) => token_word(&words[2].token),
        _ => return Err(expected("a table name", 2)),
    };
    let word = |i: usize| words.get(i).map(|t| token_word(&t.token)).unwrap_or_default();
    if word(4) != "STATISTICS" {
        return Err(expected("COMPUTE STATISTICS or ESTIMATE STATISTICS", 3));
    }
    let (sample, end) = match (word(3).as_str(), word(5).as_str()) {
        ("COMPUTE", _) => (AnalyzeSample::Compute, 5),
        ("ESTIMATE", "SAMPLE") => {
            let n: f64 = match words.get(6).map(|t| &t.token) {
                Some(Token::Number(n, _)) => n.parse().map_err(|_| expected("a sample size", 6))?,
                _ => return Err(expected("a sample size", 6)),
            };
            let sample = match word(7).as_str() {
                "ROWS" if n >= 1.0 && n.fract() == 0.0 => AnalyzeSample::Rows(n as u64),
                "PERCENT" if n > 0.0 && n <= 100.0 => AnalyzeSample::Percent(n),
                "ROWS" | "PERCENT" => return Err(expected("a whole number of rows, or a percent in (0, 100]", 6)),
                _ => return Err(expected("ROWS or PERCENT", 7)),
            };
            (sample, 8)
        }
        ("ESTIMATE", _) => (AnalyzeSample::Rows(1064), 5),
        _ => return Err(expected("COMPUTE STATISTICS or ESTIMATE STATISTICS", 3)),
    };
    if words.len() > end {
        return Err(Error::Parse {
            message: format!("unexpected {} at the end of ANALYZE TABLE", words[end].token),
            position: position_at(words.get(end)),
        });
    }
    Ok(Front::Analyze { table, sample })
}

/// `ALTER TABLE name INMEMORY [MEMCOMPRESS FOR DML | QUERY [LOW|HIGH] | CAPACITY
/// [LOW|HIGH]] [PRIORITY NONE|LOW|MEDIUM|HIGH|CRITICAL] [NO INMEMORY (col, ...)]`, or
/// `ALTER TABLE name NO INMEMORY`. The defaults are Oracle's: QUERY LOW, PRIORITY NONE.
fn alter_inmemory(words: &[&TokenWithSpan]) -> Result<Front> {
    let expected = |what: &str, at: usize| Error::Parse {
        message: format!("expected {what} in ALTER TABLE ... INMEMORY"),
        position: position_at(words.get(at).or(words.last())),
    };
    let word = |i: usize| words.get(i).map(|t| token_word(&t.token)).unwrap_or_default();
    let table = match words.get(2).map(|t| &t.token) {
        Some(Token::Word(_)) => token_word(&words[2].token),
        _ => return Err(expected("a table name", 2)),
    };
    if word(3) == "NO" && word(4) == "INMEMORY" && words.len() == 5 {
        return Ok(Front::AlterTableInMemory { table, spec: None });
    }
    if word(3) != "INMEMORY" {
        return Err(expected("INMEMORY or NO INMEMORY after the table name", 3));
    }
    let mut clause =
        InMemoryClause { compression: MemCompress::QueryLow, priority: Priority::None, excluded: Vec::new() };
    let mut i = 4;
    while i < words.len() {
        match word(i).as_str() {
            "MEMCOMPRESS" => {
                if word(i + 1) != "FOR" {
                    return Err(expected("FOR after MEMCOMPRESS", i + 1));
                }
                let level = word(i + 3);
                let (compression, used) = match (word(i + 2).as_str(), level.as_str()) {
                    ("DML", _) => (MemCompress::Dml, 3),
                    ("QUERY", "HIGH") => (MemCompress::QueryHigh, 4),
                    ("QUERY", "LOW") => (MemCompress::QueryLow, 4),
                    ("QUERY", _) => (MemCompress::QueryLow, 3),
                    ("CAPACITY", "HIGH") => (MemCompress::CapacityHigh, 4),
                    ("CAPACITY", "LOW") => (MemCompress::CapacityLow, 4),
                    ("CAPACITY", _) => (MemCompress::CapacityLow, 3),
                    _ => return Err(expected("DML, QUERY [LOW|HIGH] or CAPACITY [LOW|HIGH]", i + 2)),
                };
                clause.compression = compression;
                i += used;
            }
            "PRIORITY" => {
                clause.priority = priority_named(&word(i + 1))
                    .ok_or_else(|| expected("NONE, LOW, MEDIUM, HIGH or CRITICAL after PRIORITY", i + 1))?;
                i += 2;
            }
            "NO" if word(i + 1) == "INMEMORY" => {
                if !matches!(words.get(i + 2).map(|t| &t.token), Some(Token::LParen)) {
                    return Err(expected("a parenthesised column list after NO INMEMORY", i + 2));
                }
                i += 3;
                loop {
                    match words.get(i).map(|t| &t.token) {
                        Some(Token::Word(_)) => clause.excluded.push(token_word(&words[i].token)),
                        _ => return Err(expected("a column name", i)),
                    }
                    match words.get(i + 1).map(|t| &t.token) {
                        Some(Token::Comma) => i += 2,
                        Some(Token::RParen) => {
                            i += 2;
                            break;
                        }
                        _ => return Err(expected(", or )", i + 1)),
                    }
                }
            }
            _ => return Err(expected("MEMCOMPRESS, PRIORITY or NO INMEMORY (columns)", i)),
        }
    }
    Ok(Front::AlterTableInMemory { table, spec: Some(clause) })
}

/// `ALTER TABLE name ENABLE | DISABLE CONSTRAINT constraint`.
fn alter_enable(words: &[&TokenWithSpan]) -> Result<Front> {
    let word = |i: usize| words.get(i).map(|t| token_word(&t.token)).unwrap_or_default();
    let is_name = |i: usize| matches!(words.get(i).map(|t| &t.token), Some(Token::Word(_)));
    if !is_name(2) || word(4) != "CONSTRAINT" || !is_name(5) || words.len() != 6 {
        let at = if !is_name(2) {
            2
        } else if word(4) != "CONSTRAINT" {
            4
        } else {
            5
        };
        return Err(Error::Parse {
            message: format!("expected ALTER TABLE name {} CONSTRAINT name", word(3)),
            position: position_at(words.get(at).or(words.last())),
        });
    }
    Ok(Front::AlterTableConstraint { table: word(2), name: word(5), enable: word(3) == "ENABLE" })
}

/// `ALTER TABLE name MOVE [[COLUMN STORE] COMPRESS FOR level | NOCOMPRESS]`.
fn alter_move(tokens: &[TokenWithSpan], words: &[&TokenWithSpan]) -> Result<Front> {
    let table = match words.get(2).map(|t| &t.token) {
        Some(Token::Word(_)) => token_word(&words[2].token),
        _ => {
            return Err(Error::Parse {
                message: "expected a table name in ALTER TABLE ... MOVE".into(),
                position: position_at(words.get(2)),
            });
        }
    };
    let Front::Standard { sql, clauses } = strip_clauses(tokens, true)? else {
        unreachable!("strip_clauses gives a standard statement")
    };
    let rest: Vec<&str> = sql.split_whitespace().skip(4).collect();
    if clauses.pctfree.is_some() || !rest.is_empty() {
        return Err(Error::Unsupported {
            construct: format!(
                "ALTER TABLE {table} MOVE {} (MOVE takes COMPRESS FOR QUERY|ARCHIVE LOW|HIGH or NOCOMPRESS)",
                if rest.is_empty() { "PCTFREE".to_owned() } else { rest.join(" ") }
            ),
            position: position_at(words.get(4)),
        });
    }
    Ok(Front::AlterTableMove { table, compress: clauses.compress })
}

fn priority_named(word: &str) -> Option<Priority> {
    Some(match word {
        "NONE" => Priority::None,
        "LOW" => Priority::Low,
        "MEDIUM" => Priority::Medium,
        "HIGH" => Priority::High,
        "CRITICAL" => Priority::Critical,
        _ => return None,
    })
}

/// `EXEC[UTE] DBMS_INMEMORY_ADMIN.POPULATE_WAIT[(priority, percentage, timeout)]`, the
/// arguments positional or named (`priority => 'HIGH'`); Oracle's defaults: 'LOW', 100,
/// 99999 seconds. Nothing else is executable.
fn exec(words: &[&TokenWithSpan]) -> Result<Front> {
    let text: Vec<String> = words.iter().map(|t| token_word(&t.token)).collect();
    let call = text.get(1..4).map(|w| w.join(""));
    if call.as_deref() != Some("DBMS_INMEMORY_ADMIN.POPULATE_WAIT") {
        return Err(Error::Unsupported {
            construct: format!("EXEC of {} (only DBMS_INMEMORY_ADMIN.POPULATE_WAIT)", text[1..].join("")),
            position: position_at(words.get(1)),
        });
    }
    let bad =
        |message: String, at: usize| Error::Parse { message, position: position_at(words.get(at).or(words.last())) };
    let (mut priority, mut percentage, mut timeout_seconds) = (Priority::Low, 100.0, 99_999.0);
    let mut i = 4;
    if i < words.len() {
        if !matches!(words[i].token, Token::LParen) {
            return Err(bad(format!("unexpected {} after POPULATE_WAIT", words[i].token), i));
        }
        i += 1;
        let mut position = 0;
        while i < words.len() && !matches!(words[i].token, Token::RParen) {
            let name = if matches!(words.get(i + 1).map(|t| &t.token), Some(Token::RArrow)) {
                let n = text[i].clone();
                i += 2;
                n
            } else {
                ["PRIORITY", "PERCENTAGE", "TIMEOUT"].get(position).map_or(String::new(), |n| (*n).to_owned())
            };
            let value = match words.get(i).map(|t| &t.token) {
                Some(Token::SingleQuotedString(s)) => s.to_ascii_uppercase(),
                Some(Token::Number(n, _)) => n.clone(),
                _ => return Err(bad("expected a literal argument of POPULATE_WAIT".into(), i)),
            };
            let number = || value.parse::<f64>().map_err(|_| bad(format!("{name} must be a number"), i));
            match name.as_str() {
                "PRIORITY" => {
                    priority = priority_named(&value).ok_or_else(|| {
                        bad(format!("unknown priority '{value}' (NONE, LOW, MEDIUM, HIGH, CRITICAL)"), i)
                    })?
                }
                "PERCENTAGE" => percentage = number()?,
                "TIMEOUT" => timeout_seconds = number()?,
                "FORCE" => {}
                other => return Err(bad(format!("POPULATE_WAIT has no argument {other}"), i)),
            }
            i += 1;
            position += 1;
            match words.get(i).map(|t| &t.token) {
                Some(Token::Comma) => i += 1,
                Some(Token::RParen) => {}
                _ => return Err(bad("expected , or ) in the arguments of POPULATE_WAIT".into(), i)),
            }
        }
        if i + 1 != words.len() {
            return Err(bad("unbalanced parentheses after POPULATE_WAIT".into(), i));
        }
    }
    if !(0.0..=100.0).contains(&percentage) || timeout_seconds < 0.0 {
        return Err(bad("PERCENTAGE must be in 0..100 and TIMEOUT not negative".into(), 4));
    }
    Ok(Front::PopulateWait { priority, percentage, timeout_seconds })
}

/// The text of `sql` from a 1-based line and column.
fn text_from(sql: &str, line: u64, column: u64) -> &str {
    let mut offset = 0;
    for (i, l) in sql.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            let col = l.char_indices().nth(column.saturating_sub(1) as usize).map_or(l.len(), |(b, _)| b);
            return &sql[offset + col..];
        }
        offset += l.len();
    }
    ""
}

/// Removes `PCTFREE n` from a CREATE TABLE or CREATE INDEX, and from a CREATE TABLE
/// (`table`) its `[COLUMN STORE] COMPRESS FOR level` or `NOCOMPRESS` (outside parentheses,
/// before the AS of a query), and returns them.
fn strip_clauses(tokens: &[TokenWithSpan], table: bool) -> Result<Front> {
    let mut out = String::new();
    let mut clauses = Clauses::default();
    let mut depth = 0usize;
    let mut in_query = false;
    let next_word =
        |from: usize| tokens[from..].iter().position(|t| !matches!(t.token, Token::Whitespace(_))).map(|p| from + p);
    // The column whose definition is being read (the first word of each item of the
    // column list).
    let mut column: Option<String> = None;
    let mut item_start = false;
    let mut i = 0;
    while i < tokens.len() {
        let word = bare_word(&tokens[i].token);
        match &tokens[i].token {
            Token::LParen => {
                depth += 1;
                item_start = depth == 1;
            }
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Comma if depth == 1 => item_start = true,
            Token::Whitespace(_) => {}
            other => {
                if item_start {
                    column = Some(token_word(other));
                }
                item_start = false;
            }
        }
        if table && depth == 1 && !in_query && token_word(&tokens[i].token) == "GENERATED" {
            let clause = identity_clause(tokens, i, column.clone().unwrap_or_default())?;
            if let Some((clause, end)) = clause {
                if clauses.identity.is_some() {
                    return Err(Error::InvalidValue {
                        context: clause.column,
                        message: "ORA-30669: table can have only one identity column".into(),
                    });
                }
                clauses.identity = Some(Box::new(clause));
                i = end + 1;
                continue;
            }
        }
        in_query |= depth == 0 && word == Some("AS");
        if word == Some("PCTFREE") {
            let next = next_word(i + 1);
            let value = next.and_then(|n| match &tokens[n].token {
                Token::Number(v, _) => v.parse::<u8>().ok().filter(|v| *v <= 99),
                _ => None,
            });
            let Some(v) = value else {
                return Err(Error::Parse {
                    message: "PCTFREE takes a whole number from 0 to 99".into(),
                    position: position_at(Some(&&tokens[i])),
                });
            };
            clauses.pctfree = Some(v);
            i = next.expect("checked") + 1;
            continue;
        }
        let clause_here = table && depth == 0 && !in_query;
        if clause_here && word == Some("NOCOMPRESS") {
            clauses.compress = Some(None);
            i += 1;
            continue;
        }
        // COLUMN STORE COMPRESS FOR ..., Oracle's newer spelling, and COMPRESS FOR ....
        let column_store = clause_here
            && word == Some("COLUMN")
            && next_word(i + 1).is_some_and(|n| bare_word(&tokens[n].token) == Some("STORE"));
        let compress_at = if column_store {
            next_word(i + 1).and_then(|store| next_word(store + 1))
        } else {
            clause_here.then_some(i)
        };
        if let Some(at) = compress_at.filter(|&at| bare_word(&tokens[at].token) == Some("COMPRESS")) {
            let mut words = Vec::new();
            let mut end = at;
            while let Some(n) = next_word(end + 1) {
                match bare_word(&tokens[n].token) {
                    Some(
                        w @ ("FOR" | "QUERY" | "ARCHIVE" | "LOW" | "HIGH" | "OLTP" | "BASIC" | "ALL" | "DIRECT_LOAD"
                        | "OPERATIONS"),
                    ) => {
                        words.push(w);
                        end = n;
                    }
                    _ => break,
                }
            }
            // A word the level does not know (QUERY MEDIUM) belongs to the clause too.
            if let Some(n) = next_word(end + 1)
                && let Token::Word(w) = &tokens[n].token
                && words.first() == Some(&"FOR")
                && !["AS", "PCTFREE"].iter().any(|k| w.value.eq_ignore_ascii_case(k))
            {
                let clause = format!("COMPRESS {} {}", words.join(" "), w.value.to_ascii_uppercase());
                return Err(Error::Unsupported {
                    construct: format!("{clause} (the levels are QUERY LOW, QUERY HIGH, ARCHIVE LOW and ARCHIVE HIGH)"),
                    position: position_at(Some(&&tokens[n])),
                });
            }
            let level = match words.split_first() {
                Some((&"FOR", level)) => HccLevel::from_words(level),
                _ => None,
            };
            let Some(level) = level else {
                let clause = std::iter::once("COMPRESS").chain(words).collect::<Vec<_>>().join(" ");
                return Err(Error::Unsupported {
                    construct: format!(
                        "{clause} (tables are compressed with Hybrid Columnar Compression: COMPRESS FOR QUERY LOW, \
                         QUERY HIGH, ARCHIVE LOW or ARCHIVE HIGH)"
                    ),
                    position: position_at(Some(&&tokens[at])),
                });
            };
            clauses.compress = Some(Some(level));
            i = end + 1;
            continue;
        }
        out.push_str(&tokens[i].token.to_string());
        i += 1;
    }
    Ok(Front::Standard { sql: out, clauses })
}

/// The identity clause starting at `tokens[at]` (GENERATED) of the definition of
/// `column`, and the index of its last token; `None` for a GENERATED that is no identity
/// clause (a virtual column's, left to sqlparser).
fn identity_clause(tokens: &[TokenWithSpan], at: usize, column: String) -> Result<Option<(IdentityClause, usize)>> {
    let words: Vec<usize> = (at..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let word = |k: usize| words.get(k).map(|&i| token_word(&tokens[i].token)).unwrap_or_default();
    let (always, on_null, mut k) = match (word(1).as_str(), word(2).as_str(), word(3).as_str(), word(4).as_str()) {
        ("ALWAYS", ..) => (true, false, 2),
        ("BY", "DEFAULT", "ON", "NULL") => (false, true, 5),
        ("BY", "DEFAULT", ..) => (false, false, 3),
        _ => (true, false, 1),
    };
    if (word(k).as_str(), word(k + 1).as_str()) != ("AS", "IDENTITY") {
        return Ok(None);
    }
    k += 2;
    let mut options = crate::catalog::sequence::SequenceOptions::default();
    if word(k) == "(" {
        let close = (k + 1..words.len()).find(|&j| word(j) == ")").ok_or_else(|| Error::Parse {
            message: "the identity options' ) is missing".into(),
            position: position_at(words.get(k).map(|&i| &tokens[i]).as_ref()),
        })?;
        let option_words: Vec<_> = words[k + 1..close]
            .iter()
            .map(|&i| (token_word(&tokens[i].token), position_at(Some(&&tokens[i]))))
            .collect();
        options = super::sequence_ddl::parse_options(&option_words, false, "an identity column")?;
        k = close + 1;
    }
    let clause = IdentityClause { column, always, on_null, options, position: position_at(Some(&&tokens[at])) };
    Ok(Some((clause, words[k - 1])))
}

/// The upper-case text of an unquoted word token.
fn bare_word(t: &Token) -> Option<&'static str> {
    const WORDS: [&str; 16] = [
        "PCTFREE",
        "NOCOMPRESS",
        "COMPRESS",
        "COLUMN",
        "STORE",
        "AS",
        "FOR",
        "QUERY",
        "ARCHIVE",
        "LOW",
        "HIGH",
        "OLTP",
        "BASIC",
        "ALL",
        "DIRECT_LOAD",
        "OPERATIONS",
    ];
    match t {
        Token::Word(w) if w.quote_style.is_none() => WORDS.into_iter().find(|k| w.value.eq_ignore_ascii_case(k)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_clause_is_taken_out_of_its_column() {
        let Front::Standard { sql, clauses } = classify(
            "CREATE TABLE t (a NUMBER, id NUMBER GENERATED BY DEFAULT ON NULL AS IDENTITY (START WITH 5 NOCACHE), \
             b DATE)",
        )
        .unwrap() else {
            panic!("a CREATE TABLE is standard")
        };
        assert_eq!(sql, "CREATE TABLE t (a NUMBER, id NUMBER , b DATE)");
        let identity = clauses.identity.expect("the identity clause");
        assert_eq!((identity.column.as_str(), identity.always, identity.on_null), ("ID", false, true));
        assert_eq!((identity.options.start_with, identity.options.cache), (Some(5), Some(0)));
        let Front::Standard { clauses, .. } =
            classify("CREATE TABLE t (\"Id\" INTEGER GENERATED AS IDENTITY)").unwrap()
        else {
            panic!("a CREATE TABLE is standard")
        };
        let identity = clauses.identity.expect("the identity clause");
        assert_eq!((identity.column.as_str(), identity.always), ("Id", true));
        // A virtual column's GENERATED ALWAYS AS (expr) is left to sqlparser.
        let Front::Standard { clauses, .. } = classify("CREATE TABLE t (a NUMBER GENERATED ALWAYS AS (1))").unwrap()
        else {
            panic!("a CREATE TABLE is standard")
        };
        assert_eq!(clauses.identity, None);
    }

    #[test]
    fn compress_clauses_are_taken_out_of_create_table() {
        let standard = |sql: &str| match classify(sql).unwrap() {
            Front::Standard { sql, clauses } => (sql, clauses),
            other => panic!("{other:?}"),
        };
        let (sql, clauses) = standard("CREATE TABLE t COMPRESS FOR QUERY LOW PCTFREE 0 AS SELECT * FROM s");
        assert_eq!(sql, "CREATE TABLE t   AS SELECT * FROM s");
        assert_eq!(clauses, Clauses { pctfree: Some(0), compress: Some(Some(HccLevel::QueryLow)), identity: None });
        let (_, clauses) = standard("create table t column store compress for archive as select 1 as n from dual");
        assert_eq!(clauses.compress, Some(Some(HccLevel::ArchiveLow)));
        let (_, clauses) = standard("CREATE TABLE t (a INT) NOCOMPRESS");
        assert_eq!(clauses.compress, Some(None));
        // Inside the column list or the query, COMPRESS is a name like any other.
        let (sql, clauses) = standard("CREATE TABLE t AS SELECT compress FROM s");
        assert_eq!((sql.as_str(), clauses), ("CREATE TABLE t AS SELECT compress FROM s", Clauses::default()));
        for (bad, says) in [
            ("CREATE TABLE t COMPRESS FOR QUERY MEDIUM AS SELECT 1 AS n FROM dual", "QUERY MEDIUM"),
            ("CREATE TABLE t COMPRESS BASIC AS SELECT 1 AS n FROM dual", "COMPRESS BASIC"),
            ("CREATE TABLE t COMPRESS AS SELECT 1 AS n FROM dual", "COMPRESS ("),
        ] {
            let e = classify(bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("QUERY LOW"), "{bad}: {e}");
        }
    }

    #[test]
    fn recognises_front_statements() {
        assert_eq!(
            classify("ALTER SESSION SET db_file_multiblock_read_count = 8").unwrap(),
            Front::AlterSession { name: "db_file_multiblock_read_count".into(), value: "8".into() }
        );
        assert_eq!(
            classify("alter system set db_cache_size = 2G").unwrap(),
            Front::AlterSystemSet { name: "db_cache_size".into(), value: "2G".into() }
        );
        assert_eq!(classify("ALTER SYSTEM FLUSH BUFFER_CACHE").unwrap(), Front::FlushBufferCache);
        assert_eq!(
            classify("explain plan for select 1 from dual").unwrap(),
            Front::ExplainPlan("select 1 from dual".into())
        );
        assert_eq!(
            classify("CREATE TABLE t (a INT) PCTFREE 20").unwrap(),
            Front::Standard {
                sql: "CREATE TABLE t (a INT) ".into(),
                clauses: Clauses { pctfree: Some(20), ..Clauses::default() }
            }
        );
        assert!(classify("ALTER SESSION SET x").is_err());
        assert_eq!(
            classify("drop table dept cascade constraints purge").unwrap(),
            Front::DropTableCascadeConstraints { table: "DEPT".into() }
        );
        // Any other DROP is sqlparser's.
        for other in ["DROP TABLE dept", "DROP TABLE dept CASCADE", "DROP INDEX dept_pk"] {
            assert!(matches!(classify(other).unwrap(), Front::Standard { .. }), "{other}");
        }
    }
}

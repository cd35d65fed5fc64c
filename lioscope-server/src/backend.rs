//! One client's work in the engine: its lioscope session, the statements it prepared,
//! its transaction block, its settings and a COPY's rows on their way. Everything here
//! runs one call at a time (the connection holds the backend's lock for the call), on
//! the connection's thread or a blocking thread of its runtime.
//!
//! Transactions as PostgreSQL clients expect them: outside a block each statement is its
//! own transaction (committed when it succeeds, nothing left open when it fails); `BEGIN`
//! opens a block that `COMMIT` or `ROLLBACK` ends. A statement that fails inside a block
//! aborts it, as in PostgreSQL: every later statement fails with 25P02 until the block
//! ends (`COMMIT` then rolls back) or `ROLLBACK TO SAVEPOINT` goes back before the error.
//! (lioscope itself, as Oracle, rolls back only the failed statement; the block's rule is
//! the server's, for the clients that rely on it.)
//!
//! A client's query about the catalogs is written in lioscope's dialect first
//! (`catalog_queries`), or answered with no rows when it joins a catalog that has none;
//! its boolean columns are marked for the connection to send as `bool`.

use crate::catalog_queries::Translated;
use crate::client_commands::{ClientCommand, Isolation, Modes};
use crate::settings::Settings;
use foldhash::HashMap;
use lioscope::types::{DataType, Value};
use lioscope::{PreparedStatement, QueryResult, Session, StatementKind};
use std::sync::Arc;

/// The type of a setting's value.
const SETTING: DataType = DataType::Varchar2 { max_bytes: 4000 };

/// The most statements a connection keeps prepared; past it the oldest are parsed again
/// when next used.
const MAX_PREPARED: usize = 512;

/// Where a connection's transaction block stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// No block: each statement commits on its own.
    None,
    /// Inside `BEGIN` ... `COMMIT`.
    Open,
    /// Inside a block a statement failed in: only its end (or a return to a savepoint) runs.
    Failed,
}

/// What a statement does to the client's transaction status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    Started,
    Ended,
    /// The client sends a COPY's rows next.
    CopyIn,
}

/// A warning or notice for the client (a NoticeResponse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub severity: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// What a statement gave back.
#[derive(Debug)]
pub struct Reply {
    /// The command tag ("SELECT 3", "INSERT 0 1", "BEGIN").
    pub tag: String,
    /// A query's columns and rows.
    pub rows: Option<(Vec<String>, Vec<Vec<Value>>)>,
    pub effect: Effect,
    pub notices: Vec<Notice>,
    /// Which of the query's columns are booleans (`t`/`f`) of the catalog views.
    pub booleans: Vec<bool>,
}

impl Reply {
    /// A reply of a statement that gives no rows: its tag and effect.
    fn new(tag: &str, effect: Effect) -> Reply {
        Reply { tag: tag.into(), rows: None, effect, notices: Vec::new(), booleans: Vec::new() }
    }

    /// A query's reply of `columns` and no rows.
    fn no_rows(columns: Vec<String>) -> Reply {
        Reply { rows: Some((columns, Vec::new())), ..Reply::new("SELECT 0", Effect::None) }
    }
}

/// Why a statement failed: an engine error, or a rule of the server.
#[derive(Debug)]
pub enum Failure {
    Engine(lioscope::Error),
    Server { code: &'static str, message: String },
}

impl From<lioscope::Error> for Failure {
    fn from(e: lioscope::Error) -> Failure {
        Failure::Engine(e)
    }
}

/// A statement as the engine got it: its text with bind variables, what it takes and
/// gives. Shared by the protocol's stored statements and portals.
#[derive(Debug)]
pub struct Described {
    /// lioscope's text (placeholders written as bind variables).
    pub sql: Arc<str>,
    pub command: Option<ClientCommand>,
    /// Bind variables by slot, and the type each is known to have.
    pub bind_types: Vec<Option<DataType>>,
    /// A query's result columns (name, type); `None` for a statement that gives none.
    pub columns: Option<Vec<(String, Option<DataType>)>>,
    /// Which of the columns are booleans (`t`/`f`) of the catalog views.
    pub booleans: Vec<bool>,
    /// A catalog query answered with no rows, without the engine (`catalog_queries`).
    pub empty: bool,
    /// The result's fields as the protocol describes them, all in text and all in
    /// binary, each made the first time it is asked for (`connection`).
    pub fields: [std::sync::OnceLock<Arc<Vec<pgwire::api::results::FieldInfo>>>; 2],
}

pub struct Backend {
    pub session: Session,
    prepared: Prepared,
    pub block: Block,
    pub settings: Settings,
    /// A `COPY ... FROM STDIN` whose rows are coming.
    copy: Option<PendingCopy>,
}

/// The rows of a `COPY ... FROM STDIN` so far, kept in a file until the client is done;
/// lioscope's COPY then loads them as one statement.
struct PendingCopy {
    target: String,
    options: crate::client_commands::CopyOptions,
    file: std::io::BufWriter<tempfile::NamedTempFile>,
}

/// The statements a connection keeps parsed, by text, with when each was last used.
#[derive(Default)]
struct Prepared {
    /// Keyed by the statement's text, hashed at every execution: by `foldhash`
    /// (randomly seeded), which costs fewer instructions than SipHash.
    statements: HashMap<Arc<str>, (u64, PreparedStatement)>,
    uses: u64,
}

impl Prepared {
    /// The prepared statement of `sql`, parsed now in `session` if not kept. A kept one
    /// costs one hash of the text.
    fn get(&mut self, session: &Session, sql: &Arc<str>) -> Result<&mut PreparedStatement, Failure> {
        self.uses += 1;
        let uses = self.uses;
        if self.statements.len() >= MAX_PREPARED
            && !self.statements.contains_key(sql)
            && let Some(oldest) = self.statements.iter().min_by_key(|(_, (used, _))| *used).map(|(k, _)| k.clone())
        {
            self.statements.remove(&oldest);
        }
        let (used, statement) = match self.statements.entry(sql.clone()) {
            std::collections::hash_map::Entry::Occupied(kept) => kept.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => new.insert((uses, session.prepare_statement(sql)?)),
        };
        *used = uses;
        Ok(statement)
    }
}

impl Backend {
    pub fn new(session: Session, settings: Settings) -> Backend {
        session.set_autocommit(true);
        Backend { session, prepared: Prepared::default(), block: Block::None, settings, copy: None }
    }

    /// Parses `sql` (lioscope's text) once for this connection and says what it takes and
    /// gives; `binds` is the number of parameters the client's text numbers.
    /// `translated`: the booleans among the select list of a catalog query written again.
    pub fn describe(
        &mut self,
        sql: Arc<str>,
        binds: usize,
        translated: Option<Vec<bool>>,
    ) -> Result<Described, Failure> {
        if let Some(command) = crate::client_commands::parse(&sql) {
            let text = |names: &[&str]| Some(names.iter().map(|n| (n.to_string(), Some(SETTING))).collect());
            let columns = match &command {
                ClientCommand::Show(name) => text(&[name.as_str()]),
                ClientCommand::ShowAll => text(&["name", "setting"]),
                ClientCommand::CurrentSetting(_) => text(&["current_setting"]),
                ClientCommand::Version => text(&["version"]),
                _ => None,
            };
            return Ok(Described {
                sql,
                command: Some(command),
                bind_types: Vec::new(),
                columns,
                booleans: Vec::new(),
                empty: false,
                fields: Default::default(),
            });
        }
        let statement = self.prepared.get(&self.session, &sql)?;
        let description = statement.describe(&self.session)?;
        let mut bind_types = description.binds;
        bind_types.resize(binds.max(bind_types.len()), None);
        let is_query = !description.columns.is_empty();
        let columns: Option<Vec<(String, Option<DataType>)>> =
            is_query.then(|| description.columns.into_iter().map(|c| (c.name, c.data_type)).collect());
        let booleans = match (&translated, &columns) {
            (Some(flags), Some(columns)) => boolean_columns(flags, columns.iter().map(|(name, _)| name.as_str())),
            _ => Vec::new(),
        };
        Ok(Described { sql, command: None, bind_types, columns, booleans, empty: false, fields: Default::default() })
    }

    /// A client's catalog query written in lioscope's dialect (`catalog_queries`):
    /// `None` when it needs nothing.
    pub fn translate(&self, sql: &str) -> Result<Option<Translated>, Failure> {
        match crate::catalog_queries::translate(sql, &self.session.user()) {
            None => Ok(None),
            Some(Ok(translated)) => Ok(Some(translated)),
            Some(Err(message)) => Err(Failure::Server { code: "0A000", message }),
        }
    }

    /// The description of a catalog query answered with no rows.
    pub fn describe_empty(sql: Arc<str>, columns: Vec<String>, binds: usize) -> Described {
        Described {
            sql,
            command: None,
            bind_types: vec![None; binds],
            columns: Some(columns.into_iter().map(|c| (c, None)).collect()),
            booleans: Vec::new(),
            empty: true,
            fields: Default::default(),
        }
    }

    /// Runs a described statement with `binds`.
    pub fn run(&mut self, described: &Described, binds: &[Value]) -> Result<Reply, Failure> {
        if let Some(command) = &described.command {
            return self.command(command);
        }
        if described.empty {
            return Ok(Reply::no_rows(described.columns.iter().flatten().map(|(name, _)| name.clone()).collect()));
        }
        let booleans = described.booleans.clone();
        let sql = described.sql.clone();
        let reply = self.guarded(
            |backend| Ok(backend.prepared.get(&backend.session, &sql)?.execute(&backend.session, binds)?),
            &described.sql,
        )?;
        Ok(Reply { booleans, ..reply })
    }

    /// Runs one statement of a simple query's text, `command` when the server answers
    /// it itself (`client_commands::parse` of the text, read once by the caller); the
    /// session's cursor cache keeps a query's plan when it is run again.
    pub fn run_text(&mut self, sql: &str, command: Option<ClientCommand>) -> Result<Reply, Failure> {
        if let Some(command) = command {
            return self.command(&command);
        }
        match self.translate(sql)? {
            None => self.guarded(|backend| Ok(backend.session.execute(sql)?), sql),
            Some(Translated::Empty { columns }) => Ok(Reply::no_rows(columns)),
            Some(Translated::Query { sql: text, booleans }) => {
                let reply = self.guarded(|backend| Ok(backend.session.execute(&text)?), &text)?;
                let booleans = match &reply.rows {
                    Some((names, _)) => boolean_columns(&booleans, names.iter().map(String::as_str)),
                    None => Vec::new(),
                };
                Ok(Reply { booleans, ..reply })
            }
        }
    }

    /// Runs a statement under the block's rules: refused in a failed block, committed
    /// on its own outside one, the block failed when it fails inside one.
    fn guarded(
        &mut self,
        run: impl FnOnce(&mut Backend) -> Result<QueryResult, Failure>,
        sql: &str,
    ) -> Result<Reply, Failure> {
        if self.block == Block::Failed && !is_rollback_to_savepoint(sql) {
            return Err(aborted());
        }
        match run(self) {
            Ok(result) => {
                if self.block == Block::None && self.session.in_transaction() {
                    // A query that locked rows (FOR UPDATE) leaves a transaction open.
                    self.session.execute("COMMIT")?;
                }
                if self.block == Block::Failed {
                    self.block = Block::Open;
                }
                Ok(Reply { tag: tag(sql, &result), rows: rows(result), ..Reply::new("", Effect::None) })
            }
            Err(failure) => {
                if self.block == Block::None && self.session.in_transaction() {
                    self.session.execute("ROLLBACK")?;
                }
                if self.block == Block::Open {
                    self.block = Block::Failed;
                }
                Err(failure)
            }
        }
    }

    /// Starts taking a `COPY ... FROM STDIN`'s rows.
    fn start_copy(&mut self, target: &str, options: &crate::client_commands::CopyOptions) -> Result<Reply, Failure> {
        if self.block == Block::Failed {
            return Err(aborted());
        }
        let file = tempfile::NamedTempFile::new().map_err(|e| Failure::Server {
            code: "58030",
            message: format!("COPY FROM STDIN: a file for the rows: {e}"),
        })?;
        self.copy = Some(PendingCopy {
            target: target.to_string(),
            options: options.clone(),
            file: std::io::BufWriter::new(file),
        });
        Ok(Reply::new("COPY", Effect::CopyIn))
    }

    /// Takes a chunk of a `COPY ... FROM STDIN`'s rows.
    pub fn copy_data(&mut self, data: &[u8]) -> Result<(), Failure> {
        use std::io::Write;
        let Some(copy) = &mut self.copy else {
            return Err(Failure::Server { code: "08P01", message: "COPY data without a COPY FROM STDIN".into() });
        };
        copy.file
            .write_all(data)
            .map_err(|e| Failure::Server { code: "58030", message: format!("COPY FROM STDIN: {e}") })
    }

    /// Loads the rows of the `COPY ... FROM STDIN` the client has finished sending.
    pub fn finish_copy(&mut self) -> Result<Reply, Failure> {
        let Some(copy) = self.copy.take() else {
            return Err(Failure::Server { code: "08P01", message: "COPY done without a COPY FROM STDIN".into() });
        };
        let io = |e: std::io::Error| Failure::Server { code: "58030", message: format!("COPY FROM STDIN: {e}") };
        let file = copy.file.into_inner().map_err(|e| io(e.into_error()))?;
        let rows = match copy.options.csv {
            true => {
                strip_end_of_data(file.path()).map_err(io)?;
                file.reopen().map_err(io)?
            }
            false => {
                let (delimiter, null) = copy.options.text_format();
                let delimiter = u8::try_from(delimiter).map_err(|_| Failure::Server {
                    code: "22023",
                    message: format!("COPY delimiter {delimiter:?} is not a single-byte character"),
                })?;
                let mut csv = tempfile::tempfile().map_err(io)?;
                let text = std::io::BufReader::new(file.reopen().map_err(io)?);
                crate::copy_text::to_csv(text, std::io::BufWriter::new(&mut csv), delimiter, &null).map_err(io)?;
                std::io::Seek::rewind(&mut csv).map_err(io)?;
                csv
            }
        };
        let sql = format!("COPY {} FROM STDIN {}", copy.target, copy.options.lioscope_options());
        let rows = std::io::BufReader::new(rows);
        let reply = self.guarded(move |backend| Ok(backend.session.copy_from_reader(&sql, rows)?), "COPY")?;
        Ok(Reply { tag: reply.tag.replace("INSERT 0", "COPY"), ..reply })
    }

    /// Drops a `COPY ... FROM STDIN` the client gave up; inside a block the block fails.
    pub fn fail_copy(&mut self) {
        self.copy = None;
        if self.block == Block::Open {
            self.block = Block::Failed;
        }
    }

    fn command(&mut self, command: &ClientCommand) -> Result<Reply, Failure> {
        let reply = Reply::new;
        let warning = |code, message: &str| Notice { severity: "WARNING", code, message: message.into() };
        Ok(match command {
            ClientCommand::Begin(modes) => {
                if self.block != Block::None {
                    let mut r = reply("BEGIN", Effect::Started);
                    r.notices.push(warning("25001", "there is already a transaction in progress"));
                    return Ok(r);
                }
                self.session.set_autocommit(false);
                let mut modes = Modes { isolation: modes.isolation.or(self.settings.default_isolation()), ..*modes };
                if modes.isolation == Some(Isolation::ReadCommitted) && self.session.next_transaction_reads_committed()
                {
                    // Where every transaction starts: a call less at each BEGIN.
                    modes.isolation = None;
                }
                for statement in modes.statements() {
                    if let Err(e) = self.session.execute(statement) {
                        self.session.set_autocommit(true);
                        return Err(e.into());
                    }
                }
                self.block = Block::Open;
                reply("BEGIN", Effect::Started)
            }
            ClientCommand::Commit => {
                let (statement, tag) =
                    if self.block == Block::Failed { ("ROLLBACK", "ROLLBACK") } else { ("COMMIT", "COMMIT") };
                let was = self.block;
                self.block = Block::None;
                self.session.set_autocommit(true);
                let outcome = self.session.execute(statement);
                if let Err(e) = outcome {
                    // The transaction is gone either way: a failed commit rolls back.
                    let _ = self.session.execute("ROLLBACK");
                    return Err(e.into());
                }
                let mut r = reply(tag, Effect::Ended);
                if was == Block::None {
                    r.notices.push(warning("25P01", "there is no transaction in progress"));
                }
                r
            }
            ClientCommand::Rollback => {
                let was = self.block;
                self.block = Block::None;
                self.session.set_autocommit(true);
                self.session.execute("ROLLBACK")?;
                let mut r = reply("ROLLBACK", Effect::Ended);
                if was == Block::None {
                    r.notices.push(warning("25P01", "there is no transaction in progress"));
                }
                r
            }
            ClientCommand::CopyFromStdin { target, options } => return self.start_copy(target, options),
            // The protocol's store drops the statement (the connection does that); what
            // lioscope keeps parsed for the text stays for the next statement of it.
            ClientCommand::Deallocate(name) => {
                reply(if name.is_some() { "DEALLOCATE" } else { "DEALLOCATE ALL" }, Effect::None)
            }
            ClientCommand::Release => {
                if self.block == Block::Failed {
                    return Err(aborted());
                }
                reply("RELEASE", Effect::None)
            }
            ClientCommand::SetTransaction(modes) => {
                for statement in modes.statements() {
                    self.session.execute(statement)?;
                }
                reply("SET", Effect::None)
            }
            ClientCommand::Set { name, value } => {
                self.settings
                    .set(name, value.as_deref())
                    .map_err(|message| Failure::Server { code: "42704", message })?;
                match name.to_ascii_lowercase().as_str() {
                    "application_name" => self.settings.publish_client(&self.session),
                    "lock_timeout" | "all" => self.session.set_lock_timeout(self.settings.lock_timeout()),
                    _ => {}
                }
                reply(if value.is_none() && !name.is_empty() { "RESET" } else { "SET" }, Effect::None)
            }
            ClientCommand::Show(name) => {
                let value = self.show(name)?;
                Reply {
                    rows: Some((vec![name.clone()], vec![vec![Value::from(value)]])),
                    ..Reply::new("SHOW", Effect::None)
                }
            }
            ClientCommand::CurrentSetting(name) => {
                let value = self.show(&name.to_ascii_lowercase())?;
                Reply {
                    rows: Some((vec!["current_setting".into()], vec![vec![Value::from(value)]])),
                    ..Reply::new("SELECT 1", Effect::None)
                }
            }
            ClientCommand::ShowAll => {
                let rows = self.settings.all().into_iter().map(|(n, v)| vec![Value::from(n), Value::from(v)]).collect();
                Reply { rows: Some((vec!["name".into(), "setting".into()], rows)), ..Reply::new("SHOW", Effect::None) }
            }
            ClientCommand::Version => Reply {
                rows: Some((vec!["version".into()], vec![vec![Value::from(crate::settings::version())]])),
                ..Reply::new("SELECT 1", Effect::None)
            },
        })
    }

    fn show(&self, name: &str) -> Result<String, Failure> {
        if name == "transaction_isolation" && self.block != Block::None {
            return Ok(self.settings.get("default_transaction_isolation").unwrap_or_default());
        }
        self.settings.get(name).ok_or_else(|| Failure::Server {
            code: "42704",
            message: format!("unrecognized configuration parameter \"{name}\""),
        })
    }
}

/// The error of a statement in a failed block.
/// Which result columns are booleans: as the select list says (`flags`), or, for a `*`
/// (no flags), by the columns' names.
fn boolean_columns<'a>(flags: &[bool], names: impl Iterator<Item = &'a str>) -> Vec<bool> {
    if flags.is_empty() { names.map(crate::catalog_queries::is_boolean_column).collect() } else { flags.to_vec() }
}

fn aborted() -> Failure {
    Failure::Server {
        code: "25P02",
        message: "current transaction is aborted, commands ignored until end of transaction block".into(),
    }
}

/// Takes off the `\.` line that may end the rows of PostgreSQL's text format.
fn strip_end_of_data(path: &std::path::Path) -> std::io::Result<()> {
    let bytes = std::fs::read(path)?;
    let trimmed =
        bytes.strip_suffix(b"\\.\n").or_else(|| bytes.strip_suffix(b"\\.\r\n")).or_else(|| bytes.strip_suffix(b"\\."));
    match trimmed {
        Some(rows) if rows.is_empty() || rows.ends_with(b"\n") => std::fs::write(path, rows),
        _ => Ok(()),
    }
}

/// `ROLLBACK TO [SAVEPOINT] name`: the one statement a failed block runs.
fn is_rollback_to_savepoint(sql: &str) -> bool {
    let words: Vec<String> = sql.split_whitespace().take(2).map(|w| w.to_ascii_uppercase()).collect();
    words.len() == 2 && words[0] == "ROLLBACK" && words[1] == "TO"
}

/// A command tag with its count ("SELECT 3", "INSERT 0 1"), the number written by
/// `itoa`: every statement's answer carries one, and `format!` costs hundreds of
/// instructions.
pub(crate) fn counted_tag(command: &str, count: u64) -> String {
    let mut tag = String::with_capacity(command.len() + 21);
    tag.push_str(command);
    tag.push(' ');
    tag.push_str(itoa::Buffer::new().format(count));
    tag
}

/// PostgreSQL's command tag for `sql`, which gave `result`.
fn tag(sql: &str, result: &QueryResult) -> String {
    // A query's tag, the commonest, needs none of the text's words.
    if result.kind == StatementKind::Query {
        return counted_tag("SELECT", result.rows.len() as u64);
    }
    let mut words = sql.split_whitespace().map(|w| w.trim_end_matches(';').to_ascii_uppercase());
    let first = words.next().unwrap_or_default();
    match result.kind {
        StatementKind::Insert if first == "COPY" => counted_tag("COPY", result.rows_affected),
        StatementKind::Insert => counted_tag("INSERT 0", result.rows_affected),
        StatementKind::Change => counted_tag(&first, result.rows_affected),
        _ => match (first.as_str(), words.next()) {
            ("CREATE" | "DROP" | "ALTER" | "TRUNCATE", Some(second)) => format!("{first} {second}"),
            _ => first,
        },
    }
}

fn rows(result: QueryResult) -> Option<(Vec<String>, Vec<Vec<Value>>)> {
    matches!(result.kind, StatementKind::Query | StatementKind::Describe).then_some((result.columns, result.rows))
}

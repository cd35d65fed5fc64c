//! The script runner: the one place SQL and SQL*Plus commands run, for the interactive
//! shell, `lioscope sql -c/-f`, scripts run with `@`, `@@` or START, and the golden
//! tests, so that every command behaves the same in all of them.
//!
//! ```text
//!  shell line ─┐                 ┌─ SQL ──────────► statement::run (binds, autotrace, ...)
//!  -c text ────┼─► split_script ─┤
//!  -f file ────┘   (script.rs)   └─ client command ─► sqlplus::parse ─► SET, PROMPT, @, ...
//!                                                                        │
//!                        @file.sql: split and run the same way ◄─────────┘
//! ```
//!
//! Statements typed at a prompt (the shell, [`ScriptRunner::run_typed`]) are not echoed
//! and their errors read `ERROR: message`. Statements of a script (`-c` text, a `-f`
//! file, an `@` script) are echoed under SET ECHO ON, and an error names the script and
//! the line of the failed statement, then the statement's first line:
//!
//! ```text
//! ERROR at line 12 of t.sql: table NOSUCH does not exist
//!     SELECT * FROM nosuch
//! ```
//!
//! After an error, WHENEVER SQLERROR decides: CONTINUE goes on with the next statement;
//! EXIT ends the transaction and stops every running script with its exit status. The
//! shell starts with CONTINUE, `lioscope sql` with EXIT FAILURE (rolling back).
//!
//! Invariant: `scripts` holds the scripts now running, outermost first; no file is in it
//! twice, which is how a script that would run itself without end is refused.

use super::format::{OutputFormat, render};
use super::output::Output;
use super::script::{ScriptStatement, split_script};
use super::sqlplus::{self, ClientCommand, HELP, OnError, Setting};
use super::statement::{self, Settings};
use super::target::Target;
use super::variables::BindVariables;
use lioscope::{Error, Result};
use std::path::{Path, PathBuf};

/// Whether to go on after a statement, or stop with an exit status (EXIT, or WHENEVER
/// SQLERROR EXIT after an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Exit(u8),
}

/// A script being run.
struct RunningScript {
    /// How error reports name it: its path as resolved, or `-c` for command text.
    name: String,
    /// Its file, canonical, to tell when a script would run itself; `None` for `-c` text.
    file: Option<PathBuf>,
    /// Where the paths of its `@@` commands start.
    dir: PathBuf,
}

/// Runs statements in one session with SQL*Plus's settings and commands.
pub struct ScriptRunner<'s> {
    session: &'s dyn Target,
    pub settings: Settings,
    /// What a failed statement does (WHENEVER SQLERROR).
    on_error: OnError,
    variables: BindVariables,
    /// The scripts now running, outermost first.
    scripts: Vec<RunningScript>,
    output: Output,
}

impl<'s> ScriptRunner<'s> {
    /// A runner over `session`, which it sets to autocommit off, as SQL*Plus starts;
    /// `on_error` is what a failed statement does until WHENEVER SQLERROR says otherwise.
    pub fn new(session: &'s dyn Target, format: OutputFormat, output: Output, on_error: OnError) -> ScriptRunner<'s> {
        session.set_autocommit(false);
        ScriptRunner {
            session,
            settings: Settings::new(format),
            on_error,
            variables: BindVariables::default(),
            scripts: Vec::new(),
            output,
        }
    }

    /// Runs statements typed at a prompt: not echoed, errors reported as `ERROR: message`.
    pub fn run_typed(&mut self, text: &str) -> Flow {
        self.run_statements(&split_script(text))
    }

    /// Runs a script file (`lioscope sql -f`); an error reading it is returned.
    pub fn run_file(&mut self, path: &Path) -> Result<Flow> {
        let (script, text) = self.open_script(path)?;
        Ok(self.run_script(script, &text))
    }

    /// Runs command text (`lioscope sql -c`) as a script named `-c`, its lines counted
    /// from the text's first.
    pub fn run_command_text(&mut self, text: &str) -> Flow {
        let script = RunningScript { name: "-c".into(), file: None, dir: PathBuf::new() };
        self.run_script(script, text)
    }

    /// Ends a run that did not EXIT, as SQL*Plus does at the end of its input: an open
    /// transaction is committed.
    pub fn finish(&mut self) -> Result<()> {
        if self.session.in_transaction() {
            self.session.execute("COMMIT")?;
        }
        Ok(())
    }

    fn run_script(&mut self, script: RunningScript, text: &str) -> Flow {
        self.scripts.push(script);
        let flow = self.run_statements(&split_script(text));
        self.scripts.pop();
        flow
    }

    fn run_statements(&mut self, statements: &[ScriptStatement]) -> Flow {
        for statement in statements {
            if self.settings.echo && !self.scripts.is_empty() {
                self.output.result(&format!("SQL> {}\n", statement.source));
            }
            match self.run_statement(statement) {
                Ok(Flow::Continue) => {}
                Ok(exit) => return exit,
                Err(error) => {
                    self.report(statement, &error);
                    if let OnError::Exit { status, commit } = self.on_error {
                        return self.exit(status, commit);
                    }
                }
            }
        }
        Flow::Continue
    }

    fn run_statement(&mut self, statement: &ScriptStatement) -> Result<Flow> {
        if !statement.client {
            self.run_sql(&statement.text)?;
            return Ok(Flow::Continue);
        }
        self.run_command(sqlplus::parse(&statement.text)?)
    }

    fn run_command(&mut self, command: ClientCommand) -> Result<Flow> {
        match command {
            ClientCommand::Set(setting) => self.apply(setting),
            ClientCommand::Prompt(text) => self.output.result(&format!("{text}\n")),
            ClientCommand::Whenever(on_error) => self.on_error = on_error,
            ClientCommand::RunScript { path, beside_caller } => return self.run_nested(&path, beside_caller),
            ClientCommand::Declare { name, kind } => self.variables.declare(&name, kind),
            ClientCommand::ShowDeclarations(name) => self.show_declarations(name)?,
            ClientCommand::Assign { name, expression } => self.assign(&name, &expression)?,
            ClientCommand::Print(names) => self.print(names)?,
            ClientCommand::Exit { status, commit } => return Ok(self.exit(status, commit)),
            ClientCommand::Help => self.output.result(HELP),
            ClientCommand::Snapper(request) => self.snapper(&request)?,
            ClientCommand::Sql(text) => self.run_sql(&text)?,
        }
        Ok(Flow::Continue)
    }

    /// `SNAPPER ...`: each snapshot's table printed as it ends, in the runner's format.
    fn snapper(&mut self, request: &super::snapper::Request) -> Result<()> {
        let (output, format, feedback) = (&mut self.output, self.settings.format, self.settings.feedback);
        super::snapper::run(self.session, request, &mut |heading, table| {
            if format == OutputFormat::Table {
                output.result(&format!("{heading}\n"));
            }
            output.result(&render(table, format, feedback));
        })
    }

    fn run_sql(&mut self, text: &str) -> Result<()> {
        let out = statement::run(self.session, &self.settings, &self.variables, text)?;
        self.output.result(&out);
        Ok(())
    }

    fn apply(&mut self, setting: Setting) {
        match setting {
            Setting::Autotrace { mode, counters } => {
                self.settings.autotrace = mode;
                self.settings.counters = counters;
                if let Err(error) = self.session.set_hardware_counters(counters) {
                    self.settings.counters = false;
                    self.output.error(&format!("ERROR: {error}\n"));
                }
            }
            Setting::Timing(on) => self.settings.timing = on,
            Setting::Autocommit(on) => self.session.set_autocommit(on),
            Setting::Echo(on) => self.settings.echo = on,
            Setting::Feedback(on) => self.settings.feedback = on,
        }
    }

    /// Reports a failed statement: where it stands when it is a script's.
    fn report(&mut self, statement: &ScriptStatement, error: &Error) {
        let report = match self.scripts.last() {
            None => format!("ERROR: {error}\n"),
            Some(script) => format!(
                "ERROR at line {} of {}: {error}\n    {}\n",
                statement.line,
                script.name,
                statement.text.lines().next().unwrap_or_default()
            ),
        };
        self.output.error(&report);
    }

    /// Ends the transaction (committing or rolling back) and stops with `status`; a
    /// transaction that cannot end is reported, and the status is then a failure.
    fn exit(&mut self, status: u8, commit: bool) -> Flow {
        let ended = if commit {
            self.finish()
        } else if self.session.in_transaction() {
            self.session.execute("ROLLBACK").map(drop)
        } else {
            Ok(())
        };
        match ended {
            Ok(()) => Flow::Exit(status),
            Err(error) => {
                self.output.error(&format!("ERROR: {error}\n"));
                Flow::Exit(status.max(1))
            }
        }
    }

    /// `@path` (from the current directory) or `@@path` (from the calling script's).
    fn run_nested(&mut self, path: &str, beside_caller: bool) -> Result<Flow> {
        let base = if beside_caller { self.scripts.last().map(|s| s.dir.as_path()) } else { None };
        let path = script_path(path, base);
        let (script, text) = self.open_script(&path)?;
        Ok(self.run_script(script, &text))
    }

    /// Reads the script at `path`, unless it is running already.
    fn open_script(&self, path: &Path) -> Result<(RunningScript, String)> {
        let name = path.display().to_string();
        let file = path.canonicalize().map_err(|e| Error::io("open", path, e))?;
        if let Some(first) = self.scripts.iter().position(|s| s.file.as_ref() == Some(&file)) {
            let chain: Vec<&str> =
                self.scripts[first..].iter().map(|s| s.name.as_str()).chain([name.as_str()]).collect();
            return Err(Error::InvalidValue {
                context: format!("@{name}"),
                message: format!(
                    "{} is already running ({}); a script that runs itself would never end",
                    self.scripts[first].name,
                    chain.join(" -> ")
                ),
            });
        }
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io("read", path, e))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok((RunningScript { name, file: Some(file), dir }, text))
    }

    /// `EXEC :name := expression`: the value of `SELECT expression FROM dual` in the
    /// session (bind variables allowed), coerced to the variable's type.
    fn assign(&mut self, name: &str, expression: &str) -> Result<()> {
        self.variables.get(name)?;
        let query = format!("SELECT {expression} FROM dual");
        let result = statement::execute(self.session, &self.variables, &query)?;
        let [row] = result.rows.as_slice() else {
            return Err(one_value_expected(name, expression, &format!("{} rows", result.rows.len())));
        };
        let [value] = row.as_slice() else {
            return Err(one_value_expected(name, expression, &format!("{} columns", row.len())));
        };
        self.variables.assign(name, value.clone())?;
        if self.settings.feedback {
            self.output.result("PL/SQL procedure successfully completed.\n");
        }
        Ok(())
    }

    /// PRINT: each variable named (all when none) as a one-row table.
    fn print(&mut self, names: Vec<String>) -> Result<()> {
        let names = if names.is_empty() { self.variables.names().map(str::to_owned).collect() } else { names };
        if names.is_empty() {
            self.output.result("No bind variables declared.\n");
        }
        let tables = names
            .iter()
            .map(|name| Ok(render(&self.variables.as_result(name)?, self.settings.format, false)))
            .collect::<Result<Vec<_>>>()?;
        self.output.result(&tables.join("\n"));
        Ok(())
    }

    /// VARIABLE alone (every declaration) or VARIABLE name (its declaration).
    fn show_declarations(&mut self, name: Option<String>) -> Result<()> {
        let names = match name {
            Some(name) => vec![name],
            None => self.variables.names().map(str::to_owned).collect(),
        };
        if names.is_empty() {
            self.output.result("No bind variables declared.\n");
        }
        let declarations = names.iter().map(|name| self.variables.declaration(name)).collect::<Result<Vec<_>>>()?;
        self.output.result(&declarations.join("\n"));
        Ok(())
    }
}

fn one_value_expected(name: &str, expression: &str, found: &str) -> Error {
    Error::InvalidValue {
        context: format!("EXEC {name} := {expression}"),
        message: format!("the expression must give one value, it gave {found}"),
    }
}

/// The file `@path` names, from `base` when given (`@@`): as written, or with `.sql`
/// added when it has no extension and no such file exists, as SQL*Plus does.
fn script_path(path: &str, base: Option<&Path>) -> PathBuf {
    let mut path = match base {
        Some(dir) => dir.join(path),
        None => PathBuf::from(path),
    };
    if path.extension().is_none() && !path.exists() {
        path.set_extension("sql");
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_paths_from_the_caller_and_with_sql_added() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.sql"), "").unwrap();
        std::fs::write(dir.path().join("b"), "").unwrap();
        assert_eq!(script_path("a", Some(dir.path())), dir.path().join("a.sql"));
        assert_eq!(script_path("b", Some(dir.path())), dir.path().join("b"), "an existing file as written");
        assert_eq!(script_path("x.txt", Some(dir.path())), dir.path().join("x.txt"));
        assert_eq!(script_path("sub/c", None), PathBuf::from("sub/c.sql"));
    }
}

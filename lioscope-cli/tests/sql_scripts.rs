//! `lioscope sql -f/-c` end to end, through the built binary: SQL*Plus commands (SET ECHO,
//! SET FEEDBACK, SET TIMING, PROMPT, WHENEVER SQLERROR, EXIT, @, @@, START, VARIABLE,
//! EXEC, PRINT, HELP), what an error reports (the script, the line, the statement) and
//! the exit status, and what the database holds afterwards.
//!
//! Every database here is created and read by the binary too, never opened in this
//! process: a child another test thread forks holds copies of this process's files
//! until it execs, the lock of an open database among them, and could keep a directory
//! locked after its `Database` closed.

use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A database directory and a directory for scripts, both temporary.
struct Fixture {
    _root: TempDir,
    db: PathBuf,
    scripts: PathBuf,
}

/// What one run of the binary did.
#[derive(Debug)]
struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().expect("create a temporary directory");
        let db = root.path().join("db");
        let created = Command::new(env!("CARGO_BIN_EXE_lioscope")).arg("create").arg(&db).output().expect("run create");
        assert!(created.status.success(), "{created:?}");
        let scripts = root.path().join("scripts");
        std::fs::create_dir_all(&scripts).expect("create the scripts directory");
        Fixture { _root: root, db, scripts }
    }

    /// Writes `text` to `name` under the scripts directory; returns its path.
    fn script(&self, name: &str, text: &str) -> PathBuf {
        let path = self.scripts.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).expect("write a script");
        path
    }

    /// `lioscope sql DB ARGS...` run in directory `cwd`.
    fn sql_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_lioscope"))
            .arg("sql")
            .arg(&self.db)
            .args(args)
            .current_dir(cwd)
            .output()
            .expect("run lioscope sql");
        Run {
            status: output.status.code().expect("lioscope exits with a status"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `lioscope sql DB -f NAME` run in the scripts directory.
    fn run_file(&self, name: &str) -> Run {
        self.sql_in(&self.scripts, &["-f", name])
    }

    /// Writes script `name` and runs it with `-f`.
    fn run_script(&self, name: &str, text: &str) -> Run {
        self.script(name, text);
        self.run_file(name)
    }

    /// The single value of `query` (CSV output's second line).
    fn value(&self, query: &str) -> String {
        let run = self.sql_in(&self.scripts, &["--format", "csv", "-c", query]);
        succeeded(&run);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{query}: one column heading and one value: {run:#?}");
        lines[1].to_owned()
    }
}

/// Asserts a run succeeded, showing what it printed when not.
fn succeeded(run: &Run) {
    assert_eq!(run.status, 0, "{run:#?}");
    assert!(run.stderr.is_empty(), "{run:#?}");
}

#[test]
fn a_client_command_and_sql_share_a_line() {
    let f = Fixture::new();
    let run = f.run_script("t.sql", "SET TIMING ON; SELECT 41 + 1 AS answer FROM dual;\n");
    succeeded(&run);
    assert!(run.stdout.contains("|     42 |"), "{}", run.stdout);
    assert!(run.stdout.contains("Elapsed: "), "SET TIMING ON ran: {}", run.stdout);
    let run = f.sql_in(&f.scripts, &["-c", "SET FEEDBACK OFF; SELECT 1 FROM dual; PROMPT done"]);
    succeeded(&run);
    assert_eq!(run.stdout, "| 1 |\n|---|\n| 1 |\ndone\n");
}

#[test]
fn echo_shows_each_statement_of_a_script_as_written() {
    let f = Fixture::new();
    let run = f.run_script(
        "echo.sql",
        "SELECT 1 AS one FROM dual;\nSET ECHO ON\nSELECT 2 AS two -- a comment\n  FROM dual;\nPROMPT hi\nSET ECHO OFF\nSELECT 3 AS three FROM dual;\n",
    );
    succeeded(&run);
    assert!(!run.stdout.contains("SQL> SELECT 1"), "not echoed before SET ECHO ON: {}", run.stdout);
    assert!(!run.stdout.contains("SQL> SET ECHO ON"), "{}", run.stdout);
    assert!(run.stdout.contains("SQL> SELECT 2 AS two -- a comment\n  FROM dual;\n| TWO |"), "{}", run.stdout);
    assert!(run.stdout.contains("SQL> PROMPT hi\nhi\n"), "{}", run.stdout);
    assert!(run.stdout.contains("SQL> SET ECHO OFF\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("SQL> SELECT 3"), "{}", run.stdout);
}

#[test]
fn feedback_off_hides_row_counts_and_messages() {
    let f = Fixture::new();
    let run = f.run_script(
        "feedback.sql",
        "SET FEEDBACK OFF\nCREATE TABLE t (id NUMBER);\nINSERT INTO t VALUES (1);\nUPDATE t SET id = 2;\n\
         SELECT id FROM t;\nCOMMIT;\nSET FEEDBACK ON\nUPDATE t SET id = 3;\nSELECT id FROM t;\n",
    );
    succeeded(&run);
    assert_eq!(run.stdout, "| ID |\n|----|\n|  2 |\n1 row updated.\n| ID |\n|----|\n|  3 |\n1 row selected.\n");
}

#[test]
fn prompt_prints_its_text() {
    let f = Fixture::new();
    let run = f.run_script("prompt.sql", "PROMPT Loading   the table\nPROMPT\nprompt it's done\n");
    succeeded(&run);
    assert_eq!(run.stdout, "Loading   the table\n\nit's done\n");
}

#[test]
fn by_default_a_script_stops_at_its_first_error_and_rolls_back() {
    let f = Fixture::new();
    f.run_script("setup.sql", "CREATE TABLE t (id NUMBER);\n");
    let run = f.run_script(
        "fail.sql",
        "INSERT INTO t VALUES (1);\nPROMPT before\nSELECT * FROM nosuch;\nPROMPT after\nINSERT INTO t VALUES (2);\n",
    );
    assert_eq!(run.status, 1, "{run:#?}");
    assert_eq!(run.stdout, "1 row created.\nbefore\n");
    assert_eq!(
        run.stderr,
        "ERROR at line 3 of fail.sql: table or view NOSUCH does not exist at line 1, column 15\n    SELECT * FROM nosuch\n"
    );
    assert_eq!(f.value("SELECT COUNT(*) FROM t"), "0", "the open transaction was rolled back");
}

#[test]
fn whenever_sqlerror_exit_sets_the_status_and_what_happens_to_the_transaction() {
    let f = Fixture::new();
    f.run_script("setup.sql", "CREATE TABLE t (id NUMBER);\n");
    let run = f.run_script(
        "seven.sql",
        "WHENEVER SQLERROR EXIT 7 COMMIT\nINSERT INTO t VALUES (1);\nSELECT 1/0 FROM dual;\nINSERT INTO t VALUES (2);\n",
    );
    assert_eq!(run.status, 7, "{run:#?}");
    assert!(run.stderr.starts_with("ERROR at line 3 of seven.sql: "), "{}", run.stderr);
    assert_eq!(f.value("SELECT SUM(id) FROM t"), "1", "committed up to the error, nothing after");
    let run = f.run_script(
        "success.sql",
        "WHENEVER SQLERROR EXIT SUCCESS\nINSERT INTO t VALUES (10);\nSELECT * FROM nosuch;\nPROMPT not reached\n",
    );
    assert_eq!(run.status, 0, "{run:#?}");
    assert!(!run.stdout.contains("not reached"), "{}", run.stdout);
    assert_eq!(f.value("SELECT SUM(id) FROM t"), "1", "EXIT without COMMIT rolls back");
    let run = f.run_script("failure.sql", "WHENEVER SQLERROR EXIT FAILURE\nSELECT * FROM nosuch;\n");
    assert_eq!(run.status, 1, "{run:#?}");
}

#[test]
fn whenever_sqlerror_continue_reports_errors_and_goes_on() {
    let f = Fixture::new();
    let run = f.run_script(
        "continue.sql",
        "WHENEVER SQLERROR CONTINUE\nCREATE TABLE t (id NUMBER);\nSELECT * FROM nosuch;\nSET ECHO MAYBE\n\
         INSERT INTO t VALUES (1);\nPROMPT end\n",
    );
    assert_eq!(run.status, 0, "{run:#?}");
    assert!(run.stdout.ends_with("1 row created.\nend\n"), "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "ERROR at line 3 of continue.sql: table or view NOSUCH does not exist at line 1, column 15\n    SELECT * FROM nosuch\n\
         ERROR at line 4 of continue.sql: syntax error: unknown setting: SET ECHO MAYBE\n    SET ECHO MAYBE\n"
    );
    assert_eq!(f.value("SELECT COUNT(*) FROM t"), "1", "committed at the end");
    let run = f.run_script("back.sql", "WHENEVER SQLERROR CONTINUE\nSELECT * FROM nosuch;\nWHENEVER SQLERROR EXIT 3\nSELECT * FROM nosuch;\nPROMPT no\n");
    assert_eq!(run.status, 3, "{run:#?}");
    assert_eq!(run.stderr.matches("ERROR at line").count(), 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn exit_commits_and_stops_every_script() {
    let f = Fixture::new();
    f.run_script("setup.sql", "CREATE TABLE t (id NUMBER);\n");
    f.script("inner.sql", "INSERT INTO t VALUES (2);\nEXIT 4\nINSERT INTO t VALUES (3);\n");
    let run = f.run_script("outer.sql", "INSERT INTO t VALUES (1);\n@@inner.sql\nINSERT INTO t VALUES (4);\n");
    assert_eq!(run.status, 4, "{run:#?}");
    assert_eq!(f.value("SELECT SUM(id) FROM t"), "3", "rows 1 and 2 committed, 3 and 4 never inserted");
    let run = f.run_script("rollback.sql", "INSERT INTO t VALUES (100);\nQUIT FAILURE ROLLBACK\n");
    assert_eq!(run.status, 1, "{run:#?}");
    assert_eq!(f.value("SELECT SUM(id) FROM t"), "3");
    let run = f.run_script("plain.sql", "INSERT INTO t VALUES (100);\nexit;\n");
    succeeded(&run);
    assert_eq!(f.value("SELECT SUM(id) FROM t"), "103");
}

#[test]
fn at_runs_from_the_current_directory_and_double_at_from_the_callers() {
    let f = Fixture::new();
    f.script("lib/a.sql", "PROMPT a\n@@sub/b.sql\nPROMPT a again\n");
    f.script("lib/sub/b.sql", "PROMPT b\n@@c\nSTART lib/d.sql\n");
    f.script("lib/sub/c.sql", "PROMPT c\n");
    f.script("lib/d.sql", "PROMPT d from the current directory\n");
    let run = f.run_script("main.sql", "PROMPT main\n@lib/a.sql\n@ lib/d\nPROMPT main again\n");
    succeeded(&run);
    assert_eq!(
        run.stdout,
        "main\na\nb\nc\nd from the current directory\na again\nd from the current directory\nmain again\n"
    );
    // Run from elsewhere: @ paths start at the current directory, @@ at the script's.
    let elsewhere = f.scripts.parent().unwrap();
    let run = f.sql_in(elsewhere, &["-f", "scripts/lib/sub/b.sql"]);
    assert_eq!(run.status, 1, "{run:#?}");
    assert_eq!(run.stdout, "b\nc\n");
    assert!(run.stderr.starts_with("ERROR at line 3 of scripts/lib/sub/b.sql: open lib/d.sql: "), "{}", run.stderr);
}

#[test]
fn a_script_that_would_run_itself_is_refused() {
    let f = Fixture::new();
    f.script("a.sql", "PROMPT a\n@@b.sql\nPROMPT a after b\n");
    f.script("b.sql", "PROMPT b\n\n@@a.sql\nPROMPT b after a\n");
    let run = f.run_file("a.sql");
    assert_eq!(run.status, 1, "{run:#?}");
    assert_eq!(run.stdout, "a\nb\n");
    assert_eq!(
        run.stderr,
        "ERROR at line 3 of b.sql: @a.sql: a.sql is already running (a.sql -> b.sql -> a.sql); a script that \
         runs itself would never end\n    @@a.sql\n"
    );
    let run = f.run_script("self.sql", "WHENEVER SQLERROR CONTINUE\n@self.sql\nPROMPT went on\n");
    assert_eq!(run.status, 0, "{run:#?}");
    assert_eq!(run.stdout, "went on\n");
    assert!(run.stderr.contains("self.sql is already running (self.sql -> self.sql)"), "{}", run.stderr);
}

#[test]
fn errors_name_the_script_the_line_and_the_statement() {
    let f = Fixture::new();
    f.script("inner.sql", "PROMPT inner\n\n-- a comment\nSELECT nosuch\n  FROM dual;\n");
    let run =
        f.run_script("outer.sql", "WHENEVER SQLERROR CONTINUE\nSELECT 1 FROM dual; SELEC 2\n FROM dual;\n@inner.sql\n");
    assert_eq!(run.status, 0, "{run:#?}");
    let errors: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(errors.len(), 4, "{}", run.stderr);
    assert!(errors[0].starts_with("ERROR at line 2 of outer.sql: syntax error"), "{}", run.stderr);
    assert_eq!(errors[1], "    SELEC 2");
    assert_eq!(errors[2], "ERROR at line 4 of inner.sql: column NOSUCH does not exist at line 1, column 8");
    assert_eq!(errors[3], "    SELECT nosuch");
    let run = f.sql_in(&f.scripts, &["-c", "SELECT 1 FROM dual;\n\nSELECT * FROM nosuch;\nPROMPT no"]);
    assert_eq!(run.status, 1, "{run:#?}");
    assert_eq!(
        run.stderr,
        "ERROR at line 3 of -c: table or view NOSUCH does not exist at line 1, column 15\n    SELECT * FROM nosuch\n"
    );
}

#[test]
fn bind_variables_are_declared_set_printed_and_bound_by_name() {
    let f = Fixture::new();
    let run = f.run_script(
        "binds.sql",
        "CREATE TABLE t (id NUMBER, name VARCHAR2(10));\nCREATE INDEX t_id ON t (id);\n\
         INSERT INTO t SELECT LEVEL, 'n' || LEVEL FROM dual CONNECT BY LEVEL <= 100;\n\
         VARIABLE lo NUMBER\nVARIABLE hi NUMBER\nVAR name VARCHAR2(10)\n\
         EXEC :lo := 10\nEXECUTE :hi := :lo * 2 + 0.5\nEXEC :name := 'n' || TO_CHAR(:lo + 5)\n\
         SET FEEDBACK OFF\nPRINT lo :HI\nSELECT COUNT(*) AS n FROM t WHERE id > :lo AND id <= :hi;\n\
         SELECT id FROM t WHERE name = :name;\nINSERT INTO t VALUES (:hi, :name);\nUPDATE t SET name = :name WHERE id = :lo;\n\
         SELECT COUNT(*) AS same FROM t WHERE name = :NAME;\nEXEC :lo := NULL\nPRINT\n",
    );
    succeeded(&run);
    assert!(run.stdout.starts_with("Table created.\nIndex created.\n100 rows created.\n"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("PL/SQL procedure successfully completed.").count(), 3, "{}", run.stdout);
    let after = &run.stdout[run.stdout.rfind("completed.\n").unwrap() + "completed.\n".len()..];
    assert!(!after.contains("completed"), "{after}");
    assert_eq!(
        after,
        "| LO |\n|----|\n| 10 |\n\n| HI   |\n|------|\n| 20.5 |\n\
         | N  |\n|----|\n| 10 |\n\
         | ID |\n|----|\n| 15 |\n\
         | SAME |\n|------|\n|    3 |\n\
         | LO |\n|----|\n|    |\n\n| HI   |\n|------|\n| 20.5 |\n\n| NAME |\n|------|\n| n15  |\n"
    );
    assert_eq!(f.value("SELECT name FROM t WHERE id = 20.5"), "n15");
}

#[test]
fn bind_variable_values_are_coerced_and_undeclared_ones_are_errors() {
    let f = Fixture::new();
    let run = f.run_script(
        "bad_binds.sql",
        "WHENEVER SQLERROR CONTINUE\nVARIABLE s VARCHAR2(3)\nVARIABLE n NUMBER\nEXEC :s := 'abcd'\nEXEC :n := 'x1'\n\
         EXEC :s := 12\nEXEC :n := '  7 '\nEXEC :nope := 1\nSELECT :n + :other FROM dual;\nEXEC :n := 1, 2\nPRINT s n\nPRINT zz\n",
    );
    assert_eq!(run.status, 0, "{run:#?}");
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert_eq!(errors.len(), 6, "{}", run.stderr);
    assert!(errors[0].starts_with("ERROR at line 4 of bad_binds.sql: :S: value too large"), "{}", errors[0]);
    assert!(errors[1].starts_with("ERROR at line 5 of bad_binds.sql: :N: invalid number"), "{}", errors[1]);
    assert!(errors[2].contains("line 8") && errors[2].contains("bind variable :NOPE: not declared"), "{}", errors[2]);
    assert!(errors[3].contains("line 9") && errors[3].contains("bind variable :OTHER: not declared"), "{}", errors[3]);
    assert!(
        errors[4].contains("line 10") && errors[4].contains("must give one value, it gave 2 columns"),
        "{}",
        errors[4]
    );
    assert!(errors[5].contains("line 12") && errors[5].contains("bind variable :ZZ: not declared"), "{}", errors[5]);
    assert!(run.stdout.ends_with("| S  |\n|----|\n| 12 |\n\n| N |\n|---|\n| 7 |\n"), "{}", run.stdout);
}

#[test]
fn help_lists_every_command_with_the_error_defaults() {
    let f = Fixture::new();
    let run = f.sql_in(&f.scripts, &["-c", "HELP"]);
    succeeded(&run);
    for command in [
        "SET AUTOTRACE",
        "SET TIMING",
        "SET AUTOCOMMIT",
        "SET ECHO",
        "SET FEEDBACK",
        "PROMPT",
        "WHENEVER SQLERROR",
        "@file.sql",
        "@@file.sql",
        "START",
        "VARIABLE",
        "EXEC :name",
        "PRINT",
        "EXIT",
        "QUIT",
        "the shell CONTINUEs by",
        "`lioscope sql` EXITs FAILURE",
    ] {
        assert!(run.stdout.contains(command), "HELP mentions {command}: {}", run.stdout);
    }
}

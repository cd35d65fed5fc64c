//! The interactive shell: line editing and history (rustyline), statements that may span
//! lines and end with `;` (or a `/` alone on a line), a progress bar for COPY.

use super::format::OutputFormat;
use super::script::{ScriptRunner, is_client_command, split_script, statement_complete};
use crate::db::{Database, Session};
use indicatif::{ProgressBar, ProgressStyle};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

const HELP: &str = "\
Statements end with ';' (or '/' alone on a line) and may span lines.
  SET AUTOTRACE ON | OFF | TRACEONLY | STATISTICS   statistics (and plan) after each statement
  SET TIMING ON | OFF                               elapsed time after each statement
  SET AUTOCOMMIT ON | OFF                           commit after each change (off, as SQL*Plus;
                                                    EXIT commits, as SQL*Plus does)
  SELECT name, value FROM v$mystat WHERE name LIKE '%consistent%';
  EXPLAIN PLAN FOR SELECT ...;   SHOW PARAMETERS [name];   ALTER SYSTEM FLUSH BUFFER_CACHE;
  HELP    this text           EXIT | QUIT    leave
";

/// Runs the shell on `db` until EXIT or end of input.
pub fn run(db: &Database) -> crate::Result<()> {
    let session = db.session();
    attach_progress_bar(&session);
    let mut runner = ScriptRunner::new(&session, OutputFormat::Table);
    let mut editor = DefaultEditor::new()
        .map_err(|e| crate::Error::io("start line editor", "terminal", std::io::Error::other(e)))?;
    let history = db.dir().join(".lioscope_history");
    let _ = editor.load_history(&history);
    println!(
        "lioscope {} on {} (block size {}). Type HELP for help.",
        env!("CARGO_PKG_VERSION"),
        db.dir().display(),
        session.parameters().get(crate::db::DB_BLOCK_SIZE_PARAMETER)
    );
    if let Some(recovery) = db.recovery().summary() {
        println!("{recovery}");
    }
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() { "lioscope> " } else { "       -> " };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error reading input: {e}");
                break;
            }
        };
        if buffer.is_empty() {
            match line.trim().trim_end_matches(';').to_ascii_uppercase().as_str() {
                "EXIT" | "QUIT" => break,
                "HELP" => {
                    print!("{HELP}");
                    continue;
                }
                "" => continue,
                _ => {}
            }
        }
        let _ = editor.add_history_entry(line.as_str());
        let slash = line.trim() == "/";
        let client_command = buffer.is_empty() && is_client_command(&line);
        if !slash {
            buffer.push_str(&line);
            buffer.push('\n');
        }
        if slash || client_command || statement_complete(&buffer) {
            for statement in split_script(&buffer) {
                match runner.run(&statement) {
                    Ok(out) => print!("{out}"),
                    Err(e) => eprintln!("ERROR: {e}"),
                }
            }
            buffer.clear();
        }
    }
    let _ = editor.save_history(&history);
    // As SQL*Plus exits: an open transaction is committed.
    runner.finish()
}

/// Shows a progress bar while COPY loads a file.
fn attach_progress_bar(session: &Session) {
    let mut bar: Option<ProgressBar> = None;
    session.set_progress(Some(Box::new(move |done, total| {
        let b = bar.get_or_insert_with(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        b.set_position(done);
        if done >= total {
            b.finish_and_clear();
            bar = None;
        }
    })));
}

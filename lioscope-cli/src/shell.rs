//! The interactive shell: line editing and history (rustyline), statements that may span
//! lines (read on until `;`, a `/` alone on a line, or a SQL*Plus command's line end),
//! run by the same runner as `lioscope sql`, in an embedded session or a server's
//! (`--connect`); a progress bar for an embedded COPY.
//!
//! A failed statement is reported and the shell goes on (WHENEVER SQLERROR CONTINUE)
//! unless the user says otherwise. EXIT, QUIT or the end of input leave; the end of
//! input commits an open transaction, as EXIT does.

use super::format::OutputFormat;
use super::output::Output;
use super::runner::{Flow, ScriptRunner};
use super::script::ends_inside_statement;
use super::sqlplus::OnError;
use super::target::Target;
use indicatif::{ProgressBar, ProgressStyle};
use lioscope::Session;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::path::PathBuf;

/// Runs the shell in `session` (an embedded session or a server's) until EXIT or end of
/// input, after printing `banner`; `history` is where the typed lines are kept. Returns
/// the exit status (EXIT's, or WHENEVER SQLERROR EXIT's).
pub fn run(session: &dyn Target, banner: &str, history: Option<PathBuf>) -> lioscope::Result<u8> {
    let mut runner = ScriptRunner::new(session, OutputFormat::Table, Output::terminal(), OnError::Continue);
    let mut editor = DefaultEditor::new()
        .map_err(|e| lioscope::Error::io("start line editor", "terminal", std::io::Error::other(e)))?;
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    println!("{banner}");
    let mut buffer = String::new();
    let status = loop {
        let prompt = if buffer.is_empty() { "lioscope> " } else { "       -> " };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break None,
            Err(e) => {
                eprintln!("error reading input: {e}");
                break None;
            }
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        buffer.push_str(&line);
        buffer.push('\n');
        if !ends_inside_statement(&buffer)
            && let Flow::Exit(status) = runner.run_typed(&std::mem::take(&mut buffer))
        {
            break Some(status);
        }
    };
    if let Some(history) = &history {
        let _ = editor.save_history(history);
    }
    match status {
        Some(status) => Ok(status),
        None => runner.finish().map(|()| 0),
    }
}

/// Shows a progress bar while COPY loads a file.
pub fn attach_progress_bar(session: &Session) {
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

//! Golden SQL scripts: each `tests/golden/NAME.sql` runs on a fresh database and its
//! output must equal `tests/golden/NAME.out`. Regenerate with `UPDATE_GOLDEN=1 cargo test
//! --test golden -- --nocapture` (it lists the outputs it changed) and review the diff; any
//! other value of `UPDATE_GOLDEN` fails the test. A script without its `.out` fails (it is
//! not read as empty), and so does a `.out` without its script.
//!
//! A script may start with `-- block_size: N`, `-- db_cache_size: SIZE` or
//! `-- parameter NAME: VALUE` lines to choose how its database is created. Output shows
//! each statement after `SQL> ` and then what the shell prints, or `ERROR: ` and the
//! message: statements run as if typed at the shell's prompt, so only the statements of
//! scripts they run with `@` are echoed under SET ECHO ON. CPU and elapsed times are
//! left out.
//!
//! Scripts may use several sessions, each with its own shell settings. Comment lines
//! before a statement direct it:
//! - `-- session N`: this statement and the following ones run in session N (sessions
//!   start at 1 and are opened on first use); output is shown after `SQL[N]> `.
//! - `-- background`: the statement starts and the script goes on without waiting (a
//!   statement that will wait for a row lock); its output is shown at `-- await N`.
//! - `-- blocked N`: first wait until session N waits for a row lock.
//! - `-- await N`: first wait for session N's background statement and show its output.

mod common;

use lioscope::{Database, DatabaseOptions};
use lioscope_cli::format::OutputFormat;
use lioscope_cli::output::Output;
use lioscope_cli::runner::ScriptRunner;
use lioscope_cli::script::split_script;
use lioscope_cli::sqlplus::OnError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

fn options(script: &str) -> DatabaseOptions {
    let mut opts = DatabaseOptions::default();
    for line in script.lines().take_while(|l| l.starts_with("--")) {
        if let Some(v) = line.strip_prefix("-- block_size:") {
            opts.block_size = v.trim().parse().expect("block_size is a number");
        }
        if let Some(v) = line.strip_prefix("-- db_cache_size:") {
            opts.parameters.push(("db_cache_size".into(), v.trim().into()));
        }
        if let Some((name, value)) = line.strip_prefix("-- parameter ").and_then(|p| p.split_once(':')) {
            opts.parameters.push((name.trim().into(), value.trim().into()));
        }
    }
    opts
}

/// A session of a script, running its statements on its own thread.
struct Worker {
    sid: u32,
    jobs: Sender<(String, Sender<String>)>,
    /// The output of the statement running in the background, when there is one.
    pending: Option<Receiver<String>>,
    thread: std::thread::JoinHandle<()>,
}

impl Worker {
    fn start(db: &Database) -> Worker {
        let (jobs, inbox) = channel::<(String, Sender<String>)>();
        let (sid_tx, sid_rx) = channel();
        let db = db.clone();
        let thread = std::thread::spawn(move || {
            let session = db.session();
            sid_tx.send(session.sid()).expect("the script waits for the sid");
            let (output, transcript) = Output::transcript();
            let mut runner = ScriptRunner::new(&session, OutputFormat::Table, output, OnError::Continue);
            runner.settings.show_times = false;
            for (statement, reply) in inbox {
                runner.run_typed(&statement);
                let _ = reply.send(transcript.take());
            }
        });
        Worker { sid: sid_rx.recv().expect("the session opens"), jobs, pending: None, thread }
    }

    /// Closes the session (rolling back what it left uncommitted) and ends its thread.
    fn close(self) {
        drop(self.jobs);
        self.thread.join().expect("the session thread ends cleanly");
    }

    fn submit(&self, statement: &str) -> Receiver<String> {
        let (reply, output) = channel();
        self.jobs.send((statement.to_owned(), reply)).expect("the session thread runs");
        output
    }
}

/// Waits until session `sid` waits for a row lock (seen through `v$session` from `db`).
fn wait_until_blocked(db: &Database, sid: u32) {
    let probe = db.session();
    let started = Instant::now();
    loop {
        let r = probe
            .execute(&format!(
                "SELECT COUNT(*) FROM v$session WHERE sid = {sid} AND event = 'enq: TX - row lock contention'"
            ))
            .expect("v$session is queryable");
        if r.rows[0][0].to_string() == "1" {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "session with sid {sid} never blocked");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A statement of a script, or a directive about the statements after it.
enum Item {
    Statement(String),
    Session(u32),
    Background,
    Blocked(u32),
    Await(u32),
}

/// The script's statements and directives, in order.
fn items(script: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut text = String::new();
    for line in script.lines() {
        let directive = line.trim().strip_prefix("--").map(str::trim).and_then(|d| {
            let number = |rest: &str| rest.trim().parse::<u32>().ok();
            if let Some(n) = d.strip_prefix("session ") {
                number(n).map(Item::Session)
            } else if let Some(n) = d.strip_prefix("blocked ") {
                number(n).map(Item::Blocked)
            } else if let Some(n) = d.strip_prefix("await ") {
                number(n).map(Item::Await)
            } else {
                (d == "background").then_some(Item::Background)
            }
        });
        match directive {
            Some(d) => {
                items.extend(statements(&std::mem::take(&mut text)));
                items.push(d);
            }
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    items.extend(statements(&text));
    items
}

fn statements(text: &str) -> impl Iterator<Item = Item> {
    split_script(text).into_iter().map(|s| Item::Statement(s.text))
}

fn run_script(path: &Path) -> String {
    let script = std::fs::read_to_string(path).expect("script is readable");
    // Scripts refer to files next to them as 'golden/...'; run from the tests directory.
    let (_dir, _, db) = common::temp_db(options(&script));
    let mut workers: HashMap<u32, Worker> = HashMap::new();
    let mut current = 1u32;
    let mut background = false;
    let mut out = String::new();
    for item in items(&script) {
        let statement = match item {
            Item::Session(n) => {
                current = n;
                continue;
            }
            Item::Background => {
                background = true;
                continue;
            }
            Item::Blocked(n) => {
                wait_until_blocked(&db, workers[&n].sid);
                continue;
            }
            Item::Await(n) => {
                let pending = workers.get_mut(&n).and_then(|w| w.pending.take()).expect("a background statement");
                out.push_str(&format!("(session {n} continues)\n{}\n", pending.recv().expect("it ends")));
                continue;
            }
            Item::Statement(statement) => statement,
        };
        let shown: String =
            statement.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n");
        if shown.trim().is_empty() {
            continue;
        }
        let prompt = if current == 1 { "SQL> ".to_owned() } else { format!("SQL[{current}]> ") };
        out.push_str(&format!("{prompt}{shown}\n"));
        let worker = workers.entry(current).or_insert_with(|| Worker::start(&db));
        let output = worker.submit(&statement);
        if std::mem::take(&mut background) {
            worker.pending = Some(output);
            out.push_str("(waits)\n\n");
            continue;
        }
        out.push_str(&output.recv().expect("the statement ends"));
        out.push('\n');
    }
    let mut sessions: Vec<(u32, Worker)> = workers.into_iter().collect();
    sessions.sort_by_key(|(n, _)| *n);
    sessions.into_iter().for_each(|(_, w)| w.close());
    out
}

/// Whether this run rewrites the expected outputs: only `UPDATE_GOLDEN=1` does; any other
/// value is refused, so that a stray `UPDATE_GOLDEN=0` cannot silently rewrite them.
fn updating() -> bool {
    match std::env::var("UPDATE_GOLDEN") {
        Ok(v) if v == "1" => true,
        Ok(v) => panic!("UPDATE_GOLDEN={v:?}: only UPDATE_GOLDEN=1 rewrites the golden outputs"),
        Err(std::env::VarError::NotPresent) => false,
        Err(e) => panic!("UPDATE_GOLDEN: {e}"),
    }
}

/// The files of `dir` with extension `ext`, sorted.
fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// Why `actual` is not the expected output of `script` (None when it is).
fn difference(script: &Path, expected_path: &Path, expected: &str, actual: &str) -> Option<String> {
    if actual == expected {
        return None;
    }
    let first_diff = actual
        .lines()
        .zip(expected.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(actual.lines().count().min(expected.lines().count()));
    Some(format!(
        "{}: output differs from {} at line {}:\n  expected: {:?}\n  actual:   {:?}",
        script.display(),
        expected_path.display(),
        first_diff + 1,
        expected.lines().nth(first_diff).unwrap_or("<end>"),
        actual.lines().nth(first_diff).unwrap_or("<end>")
    ))
}

#[test]
fn golden_scripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::env::set_current_dir(&root).expect("tests directory exists");
    let update = updating();
    let golden = root.join("golden");
    let scripts = files_with_extension(&golden, "sql");
    assert!(!scripts.is_empty(), "there are golden scripts");
    let mut failures = Vec::new();
    let mut rewritten = Vec::new();
    for script in &scripts {
        let actual = run_script(script);
        let expected_path = script.with_extension("out");
        let expected = match std::fs::read_to_string(&expected_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => panic!("{}: {e}", expected_path.display()),
        };
        if update {
            if expected.as_deref() != Some(actual.as_str()) {
                std::fs::write(&expected_path, &actual).expect("write golden output");
                rewritten.push(expected_path.display().to_string());
            }
            continue;
        }
        match expected {
            None => failures.push(format!(
                "{}: no expected output {} (UPDATE_GOLDEN=1 writes it)",
                script.display(),
                expected_path.display()
            )),
            Some(expected) => failures.extend(difference(script, &expected_path, &expected, &actual)),
        }
    }
    if update {
        println!("UPDATE_GOLDEN=1: {} golden output(s) changed:", rewritten.len());
        rewritten.iter().for_each(|path| println!("  {path}"));
    }
    let orphans: Vec<_> = files_with_extension(&golden, "out")
        .into_iter()
        .filter(|out| !out.with_extension("sql").exists())
        .map(|out| format!("{}: an expected output with no script beside it", out.display()))
        .collect();
    failures.extend(orphans);
    assert!(
        failures.is_empty(),
        "{} golden failure(s) (UPDATE_GOLDEN=1 regenerates the outputs; review the diff):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
